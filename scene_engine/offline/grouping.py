"""Which scene each memory of a batch belongs to, decided over the whole store at once
(docs/DESIGN.md "Grouping"; issue 36).

One memory at a time, first come first served, a batch spends its one new scene on whatever
came first and pushes later topics into scenes of other topics. Instead, every batch groups
its memories together with the scenes there are and the memories pending after it
(``AHEAD``), by meaning (``meaning.Space``):

1. ``cluster``: agglomerative clustering by centroid cosine. Each scene starts as a fixed
   group (two scenes never join here: that is a merge, step 3), each memory as a group of
   one; the two most alike groups join while they are alike enough: ``JOIN`` when one of
   them is a scene, ``GROUP`` when both are memories (a new topic must be clearer than a
   memory's likeness to a topic that has a scene).
2. ``plan``: a batch memory in a scene's group goes to that scene. Of the groups no scene
   holds, the one with most memories (the pending ones after the batch count too: a topic
   the person keeps coming back to) opens the batch's new scene with its batch memories,
   when it has at least ``NEW_TOPIC`` memories in all. A memory alone in its group joins
   its nearest scene at least ``ORPHAN`` near; the others wait for a later batch while the
   store has room for more scenes (``offline.backend``: the fold).
3. Two scenes are one topic when more than ``SAME_TOPIC`` of one's lines are nearer the other
   scene than the rest of their own (and ``JOIN`` near it): merged at once (seed 001's
   active merge); at the cap, a new topic may merge two scenes ``CAP_MERGE`` alike to make
   room (``offline.backend``).

The thresholds were set on bench/topics' three labelled sets (five batch sizes and
look-aheads each: bench/bench_topics.py) and checked on two sets written later without
reading this code (bench/RESULTS.md "Grouping by meaning").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scene_engine.index.dense import Matrix

__all__ = ["AHEAD", "CAP_MERGE", "GROUP", "ATTACH", "JOIN", "MUTUAL", "NEW_TOPIC", "ORPHAN", "SCENES_PER_STEP", "SAME_TOPIC", "Group",
           "Plan", "cluster", "plan"]

JOIN = 0.2          # centroid cosine for a memory (or a group) to join a scene's group
GROUP = 0.2         # ... for memories to form a topic of their own together
MUTUAL = 0.15       # ... for two groups each other's nearest (``_mutual_pair``)
ATTACH = 0.05       # ... for a memory alone to join the nearest new topic it came with
SAME_TOPIC = 0.5    # share of a scene's lines nearer another scene: one topic, merged at once
CAP_MERGE = 0.1    # at the cap, two scenes this alike may merge to make room for a new topic
NEW_TOPIC = 2       # memories (pending ones after the batch included) a new scene needs
ORPHAN = 0.15       # a memory alone in its topic joins a scene at least this near, else waits
SCENES_PER_STEP = 8  # each this many scenes, a new topic needs one memory more to open one
AHEAD = 100         # pending memories after the batch that the grouping sees


@dataclass
class Group:
    """One group of ``cluster``: ``scene`` (index of the scene it grew from, or None) and its
    ``members`` (row numbers of the memories in it, the scene's own lines not listed)."""

    scene: int | None
    members: list[int] = field(default_factory=list)


@dataclass
class Plan:
    """What ``plan`` found for a batch, in batch row numbers: ``joins`` (row -> the index of
    the scene whose group it is in), ``topics`` (each group of pending memories no scene
    holds that has a batch row, largest first: its batch rows, and its ``support``, the
    memories in it, those pending after the batch included: a topic the person keeps
    coming back to), ``company`` (for each row in such a group, its support: one alone is a
    memory no other pending memory shares a topic with) and ``loose`` (the rows no scene
    takes)."""

    joins: dict[int, int]
    topics: list[tuple[list[int], int]] = field(default_factory=list)
    company: dict[int, int] = field(default_factory=dict)
    loose: list[int] = field(default_factory=list)


def _np() -> Any:
    import numpy

    return numpy


def cluster(scenes: Sequence[Matrix], rows: Matrix, join: float = JOIN,
            group: float = GROUP) -> list[Group]:
    """Agglomerative clustering of ``rows`` (one memory each) around ``scenes`` (each the sum
    of its lines' vectors): centroid cosine, the most alike pair of groups first; two scene
    groups never join; a pair with a scene joins at ``join``, two memory groups at ``group``.
    Deterministic: ties go to the lower index. Returns the groups left, scenes first."""
    np = _np()
    n_scenes = len(scenes)
    width = rows.shape[1] if len(rows) else (len(scenes[0]) if n_scenes else 1)
    sums = np.zeros((n_scenes + len(rows), width), dtype=np.float64)
    for i, total in enumerate(scenes):
        sums[i] = total
    if len(rows):
        sums[n_scenes:] = rows
    groups = [Group(i) for i in range(n_scenes)] + [Group(None, [r]) for r in range(len(rows))]
    if len(groups) < 2:
        return groups
    is_scene = np.array([g.scene is not None for g in groups])
    alive = np.ones(len(groups), dtype=bool)
    units = _units(sums)
    # One threshold for the loop: a pair with a scene is lifted by the difference.
    lift = np.where(is_scene[:, None] | is_scene[None, :], group - join, 0.0)
    blocked = (is_scene[:, None] & is_scene[None, :]) | np.eye(len(groups), dtype=bool)
    # Kept up to date merge by merge (a merge changes one row and column): rebuilding it
    # every merge cost most of a batch's grouping.
    score = np.where(blocked, -np.inf, units @ units.T + lift)
    while True:
        a, b = np.unravel_index(int(np.argmax(score)), score.shape)
        if not score[a, b] >= group:
            a, b = _mutual_pair(score, MUTUAL + group - join)
            if a < 0:
                break
        if is_scene[b] or (not is_scene[a] and b < a):
            a, b = b, a                    # the scene (or the older group) takes the other
        groups[a].members += groups[b].members
        sums[a] += sums[b]
        alive[b] = False
        score[b, :] = score[:, b] = -np.inf
        units[a] = _units(sums[a:a + 1])[0]
        if is_scene[a]:
            blocked[a, is_scene] = True
            blocked[is_scene, a] = True
            lift[a, :] = lift[:, a] = group - join
        blocked[a, a] = True
        row = np.where(blocked[a] | ~alive, -np.inf, units @ units[a] + lift[a])
        score[a, :] = row
        score[:, a] = row
    return [g for g, keep in zip(groups, alive, strict=True) if keep]


def _mutual_pair(score: Any, least: float) -> tuple[int, int]:
    """The most alike pair of groups that are each other's nearest and at least ``least``
    alike (``score`` as in ``cluster``), or (-1, -1): two halves of one topic said in other
    words ("palak paneer for friends" and "vegetarian, Indian food at home") are nearer each
    other than anything else, though not as near as memories that say one thing."""
    np = _np()
    nearest = np.argmax(score, axis=1)
    best = (-1, -1)
    top = -np.inf
    for a, b in enumerate(nearest):
        if a < b and nearest[b] == a and score[a, b] >= least and score[a, b] > top:
            best, top = (a, int(b)), score[a, b]
    return best


def plan(scenes: Sequence[Matrix], batch: Matrix, ahead: Matrix) -> Plan:
    """Decide the batch: ``scenes`` (sums of their lines' vectors), ``batch`` (the batch's
    memories, one row each) and ``ahead`` (memories pending after it). See the module
    docstring; a ``Plan`` in batch row numbers."""
    np = _np()
    rows = batch if not len(ahead) else np.concatenate([batch, ahead])
    n = len(batch)
    groups = _attach(cluster(scenes, rows, JOIN, GROUP), rows)
    joins = {r: g.scene for g in groups if g.scene is not None for r in g.members if r < n}
    open_ = [g for g in groups if g.scene is None and any(r < n for r in g.members)]
    open_.sort(key=lambda g: (-len(g.members), min(g.members)))
    return Plan(joins=joins,
                topics=[(sorted(r for r in g.members if r < n), len(g.members)) for g in open_],
                company={r: len(g.members) for g in open_ for r in g.members if r < n},
                loose=[r for r in range(n) if r not in joins])


def _attach(groups: list[Group], rows: Any) -> list[Group]:
    """``groups`` with each memory left alone in its group moved into the nearest group of
    pending memories (no scene's) at least ``ATTACH`` alike: memories that came together
    with a topic, about it in other words ("grilled sardines" beside "palak paneer" and
    "dosas"). A memory alone in a batch of its own has no such group, and stays alone."""
    np = _np()
    pending = [g for g in groups if g.scene is None and len(g.members) >= NEW_TOPIC]
    if not pending:
        return groups
    centres = _units(np.stack([rows[g.members].sum(axis=0) for g in pending]))
    out = []
    for g in groups:
        if g.scene is None and len(g.members) == 1:
            alike = centres @ _units(rows[g.members[0]:g.members[0] + 1])[0]
            best = int(np.argmax(alike))
            if alike[best] >= ATTACH:
                pending[best].members.append(g.members[0])
                continue
        out.append(g)
    return out


def _units(matrix: Any) -> Any:
    np = _np()
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)
