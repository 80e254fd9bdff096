"""The scene rules, enforced in code (docs/DESIGN.md "A batch", step 5).

Two places use them: ``ScenePolicy`` is a sandbox policy hook that refuses a bad write while the
model works (its refusal text teaches the model the fix), and ``validate_batch`` checks the whole
change set once the model stops (problems go back to the model for a bounded number of repair
rounds). Elsewhere these limits live only in a prompt; here the model cannot break them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from sandbox import DELETED, Change, NameRefused, Sandbox, validate_name
from scene_engine.batch.conservation import (
    DIGEST_KEEP,
    KEEP_COVERAGE,
    MERGE_COVERAGE,
    Authorship,
    content_terms,
    dropped_facts,
    held,
    is_pinned,
    lost_lines,
    quote,
)
from scene_engine.core.plural import count
from scene_engine.store.scene import Scene, SceneHeaderWarning, parse_scene

# Names that describe a process rather than an area of a life: a scene is a narrative, not a log.
REPORT_PREFIXES = ("batch", "report", "consolidation", "integration", "archive", "summary",
                   "报告", "汇总", "归档", "总结", "批次", "整合")


@dataclass
class RuleContext:
    """What the rules need to know about one batch.

    ``existing``: scene names on disk when the batch started (canonical spelling).
    ``shown``: names whose full text the prompt showed the model (count as read).
    ``frozen``: existing scenes whose header cannot be read; a person must fix them, so the
    batch may not touch them (DESIGN: such a file is never rewritten). They still count.
    ``max_scenes``/``max_scene_chars``: from the store's config.
    ``read``: names read through the sandbox so far (the sandbox's live ``read_names`` set).
    ``old_texts``: name -> text of every existing scene the batch may touch.
    ``pinned``: existing scenes with ``pinned: true``. ``authorship(name)``: what a person
    wrote in an existing scene (``conservation.Authorship``). ``new_scenes``: the store's
    ``new_scenes_per_batch`` setting (1, the seed's rule; see ``new_scene_allowance``).
    """

    existing: set[str]
    max_scenes: int
    max_scene_chars: int
    shown: set[str] = field(default_factory=set)
    frozen: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    old_texts: dict[str, str] = field(default_factory=dict)
    pinned: set[str] = field(default_factory=set)
    authorship: Callable[[str], Authorship] = field(default=lambda name: Authorship())
    new_scenes: int = 1
    # Names of gone scenes the persona still names: a new scene that took one would be where
    # a person's click on the persona's link lands (a hand rename freed the name).
    reserved: set[str] = field(default_factory=set)
    # Live scenes a persona a person wrote links to: never renamed or merged away by choice
    # (an active merge, a rename for drift), only when the cap leaves no other way.
    person_links: set[str] = field(default_factory=set)
    # Set by a backend that found the store over its cap and no two scenes it may merge
    # (``offline.backend``): the batch may then leave the count as it is, adding no scene.
    cap_stuck: bool = False

    def allowance(self) -> int:
        """New scenes this batch may add (``new_scene_allowance`` for this store)."""
        return new_scene_allowance(len(self.existing), self.max_scenes, self.new_scenes)

    def seen(self, name: str) -> bool:
        """True when the batch showed or read the full text of ``name``."""
        folded = name.casefold()
        return any(n.casefold() == folded for n in (*self.read, *self.shown))

    def canonical(self, name: str) -> str | None:
        """The existing scene's spelling of ``name`` (case-insensitive), or None if new."""
        folded = name.casefold()
        return next((n for n in self.existing if n.casefold() == folded), None)


def name_problem(name: str) -> str | None:
    """Why the engine would never give a scene the name ``name`` (``sandbox.validate_name``: a
    Windows device name, too long, a character some system refuses), for a person; None when
    the name is fine. Such a file a person already has is left alone by batches, never a
    reason for one to fail (doctor says what to do)."""
    try:
        validate_name(name, (".md",))
    except NameRefused as exc:
        rule = str(exc).split(". ")[0].rstrip(".")
        return (f"{rule}, so no batch writes it; it stays as it is (recall "
                "still reads it): rename it, e.g. `git mv`, for batches to add to it")
    return None


def is_report_like(name: str) -> bool:
    """True for names such as ``BATCH-3.md`` or ``summary_2024.md`` (see REPORT_PREFIXES)."""
    stem = unicodedata.normalize("NFKC", name).casefold().removesuffix(".md").lstrip("_- ")
    return stem.startswith(REPORT_PREFIXES)


def header_read(name: str, content: str) -> tuple[Scene | None, str | None]:
    """Parse a scene; ``(scene, None)``, or ``(None, where)`` when its header cannot be read,
    ``where`` saying why in a few words (the parser's warning with its line, ``no header
    found``, or the parser's exception name)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SceneHeaderWarning)
        try:
            scene = parse_scene(content, name=name)
        except Exception as exc:  # a parser bug must still give the model a usable refusal
            return None, type(exc).__name__
    if scene.header is None:
        return None, next((str(w.message) for w in caught), "no header found")
    return scene, None


def parse_checked(name: str, content: str) -> tuple[Scene | None, str | None]:
    """Parse a scene the model wrote; return ``(scene, None)`` or ``(None, problem)``."""
    scene, where = header_read(name, content)
    if scene is None:
        return None, (f"the header of {name} cannot be read ({where}). Start the file with a "
                      "YAML front matter block: a line `---`, then `summary: ...`, then `---`.")
    return scene, None


def content_problems(name: str, content: str, max_chars: int) -> list[str]:
    """Problems of one scene's text: unreadable header, missing summary, body too long."""
    scene, problem = parse_checked(name, content)
    if problem:
        return [problem]
    assert scene is not None, "parse_checked gives a scene or a problem"
    problems = []
    summary = scene.meta.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        problems.append(f"{name} has no summary: add `summary: <one or two sentences>` to its "
                        "header.")
    size = len(scene.body.strip())
    if size > max_chars:
        problems.append(f"the body of {name} has {size} characters; the limit is {max_chars}. "
                        "Condense it: merge repeated points, keep the narrative, drop the "
                        "least important old detail.")
    return problems


class ScenePolicy:
    """Sandbox policy hook: ``policy(change) -> refusal text | None``.

    Needs the sandbox (for what was read and what is staged) and a ``RuleContext``.
    Refuses: a new scene when ``max_scenes - 1`` already exist; more new scenes in a batch than
    ``new_scene_allowance`` (a successor, ``successor_of``, is not a new scene);
    a new scene before two existing scenes (or all, if fewer) were read or shown; a report-like
    name; a body over ``max_scene_chars``; a missing summary.
    """

    def __init__(self, box: Sandbox, context: RuleContext):
        self.box = box
        self.context = context

    def __call__(self, change: Change) -> str | None:
        ctx = self.context
        if change.name.casefold() in {n.casefold() for n in ctx.frozen}:
            return (f"{change.name} cannot be read as a scene (its header, or git conflict "
                    "markers in it); it is left as it is for a person to fix. Do not write, "
                    "replace or delete it: put these facts in "
                    "another scene.")
        existing = None if change.created else ctx.canonical(change.name)
        if existing and not ctx.seen(existing):
            return (f"you have not read {existing} in this batch, so changing it could erase "
                    f"what it holds. Read it first with read_file(path=\"{existing}\"), then "
                    "write the whole text back with your changes woven in.")
        if change.op == "delete":
            pending = dict(self.box.pending())
            pending[change.name] = DELETED
            found = deletion_problems(existing or change.name, pending, ctx)
            return " ".join(found) or None
        new = change.new
        assert new is not None, "only a delete has no new content (sandbox.Change)"
        if change.created:
            staged = dict(self.box.pending())
            staged[change.name] = new
            refusal = self._creation_refusal(change.name, staged)
            if refusal:
                return refusal
        problems = content_problems(change.name, new, ctx.max_scene_chars)
        problems += forged_pin_problems(existing or change.name, new, ctx)
        if existing and not problems:
            pending = dict(self.box.pending())
            pending[existing] = new
            problems = (pinned_problems(existing, new, ctx)
                        + person_line_problems(existing, pending, ctx)
                        + shrink_problems(existing, pending, ctx))
        return " ".join(problems) or None

    def _creation_refusal(self, name: str, staged: dict) -> str | None:
        """Why writing the new name ``name`` is refused (None: allowed); ``staged``: the change
        set with this write in it. The count, the cap and the rule to read two scenes first
        apply to a write that adds a new scene (``new_names``): a successor (a rename or a
        merge into a new name, ``successor_of``) adds none, but a second name that claims the
        same old scene first turns the other into a new scene, and so adds one."""
        ctx = self.context
        if is_report_like(name):
            return (f"{name} looks like a report or log name. Name a scene after an area of "
                    "the person's life or work (e.g. `career-and-projects.md`), and fold the "
                    "new facts into it as narrative.")
        before = new_names(self.box.pending(), ctx.existing)
        added = new_names(staged, ctx.existing)
        if len(added) <= len(before):   # nothing new: it continues scenes it had to read
            return None
        allowed = ctx.allowance()
        if len(added) > allowed:
            return (f"this batch already created {', '.join(sorted(added - {name}))}; at most "
                    f"{count(allowed, 'new scene')} this batch. Put these facts into an existing scene "
                    "instead.")
        live = live_count(self.box.pending(), ctx.existing)
        if live >= ctx.max_scenes - 1:
            return (f"there are already {live} scenes and the limit is {ctx.max_scenes - 1}. "
                    "Update an existing scene, or merge two related scenes first (write the "
                    "merged text into one, then write `[DELETED]` to the other).")
        return unread_problem(ctx, self.box.read_names | ctx.shown)


def unread_problem(context: RuleContext, seen: set[str]) -> str | None:
    """Why a new scene may not be made yet (None: it may): docs/DESIGN.md "A batch" step 5, read
    at least two existing scenes (all, if fewer; a frozen one cannot be read) before creating
    one, since the facts may belong in one of them. ``seen``: names read or shown so far."""
    readable = [n for n in context.existing if n not in context.frozen]
    needed = min(2, len(readable))
    folded = {n.casefold() for n in seen}
    read = sorted(n for n in context.existing if n.casefold() in folded)
    if len(read) >= needed:
        return None
    return (f"read at least {needed} existing scenes before creating a new one "
            f"(read so far: {', '.join(read) or 'none'}); the facts may belong in one "
            "of them. Use read_file on the most related scenes first.")


def new_scene_allowance(existing: int, max_scenes: int, per_batch: int = 1) -> int:
    """How many new scenes one batch may create in a store of ``existing`` scenes.

    One by default: the seed's rule and docs/DESIGN.md "A batch" step 5 ("at most one new scene per
    batch"), for every backend. ``per_batch`` is the store's ``new_scenes_per_batch`` setting:
    above 1 it lets a young store open up to that many, a quarter of the room left for scene
    files (``max_scenes - 1 - existing``) at most, so a store near its cap still gets one (the
    issue 13 allowance, at 3, is the setting a person may choose: fewer batches in a young
    store, bench/RESULTS.md "Offline scenes" has the figures of both). Returns at least 1."""
    return max(1, min(per_batch, (max_scenes - 1 - existing) // 4))


def created_names(pending: dict, existing: set[str]) -> set[str]:
    """Names staged as written that did not exist when the batch started."""
    folded = {n.casefold() for n in existing}
    return {n for n, c in pending.items() if c is not DELETED and n.casefold() not in folded}


def successor_of(name: str, content, existing: set[str]) -> list[str]:
    """The existing scenes a newly written scene ``name`` takes over: those its
    ``merged_from`` names (a rename, or a merge into a new name). Such a scene replaces
    them rather than adds one: it is not a new scene for ``new_scene_allowance`` nor for the
    count while the old ones wait to be deleted (``validate_batch`` refuses the batch if they
    still exist at its end, and ``deletion_problems`` if their words are not held)."""
    if content is DELETED or not isinstance(content, str):
        return []
    folded = {n.casefold(): n for n in existing}
    return [folded[m.casefold()] for m in _merged_from_text(name, content)
            if m.casefold() in folded and m.casefold() != name.casefold()]


def successors(pending: dict, existing: set[str]) -> dict[str, list[str]]:
    """Created name -> the existing scenes it takes over (``successor_of``), one successor an
    old scene: when several new names claim one old scene (a split), the first by name is
    its successor and the others are new scenes."""
    claimed: set[str] = set()
    found: dict[str, list[str]] = {}
    for name in sorted(created_names(pending, existing)):
        olds = [o for o in successor_of(name, pending[name], existing) if o not in claimed]
        if olds:
            claimed.update(olds)
            found[name] = olds
    return found


def new_names(pending: dict, existing: set[str]) -> set[str]:
    """``created_names`` that are not successors (``successors``): the scenes a batch adds."""
    return created_names(pending, existing) - set(successors(pending, existing))


def live_count(pending: dict, existing: set[str]) -> int:
    """Number of scenes there will be once the staged changes are applied."""
    folded = {n.casefold() for n in existing}
    deleted = {n.casefold() for n, c in pending.items() if c is DELETED}
    return len(folded - deleted) + len(created_names(pending, existing))


def merged_from(scene: Scene) -> list[str]:
    """The ``merged_from`` header value as a list of scene names (text or list accepted)."""
    value = scene.meta.get("merged_from")
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list):
        return []
    return [str(v) if str(v).lower().endswith(".md") else f"{v}.md" for v in value]


def after_batch(pending: dict, context: RuleContext) -> dict[str, str]:
    """name -> text of every touchable scene once ``pending`` is applied."""
    texts = {n: t for n, t in context.old_texts.items()
             if not any(p.casefold() == n.casefold() for p in pending)}
    texts.update((n, c) for n, c in pending.items() if c is not DELETED)
    return texts


def deletion_problems(name: str, pending: dict, context: RuleContext) -> list[str]:
    """Why deleting the existing scene ``name`` would lose something (empty when it may go).

    A scene is deleted only as part of a merge: a scene written in this batch names it in
    ``merged_from``, holds at least ``MERGE_COVERAGE`` of its words, and every line a person
    wrote in it survives somewhere. A pinned scene is never deleted.
    """
    if name in context.pinned:
        return [f"{name} is pinned by a person (`pinned: true`): it is never deleted, merged "
                "away or renamed. Leave it in place; add to it or to another scene instead."]
    survivors = {n: c for n, c in pending.items() if c is not DELETED
                 and any(m.casefold() == name.casefold() for m in _merged_from_text(n, c))}
    if not survivors:
        return [f"{name} may be deleted only as part of a merge, or its facts are lost: first "
                f"write its content into the scene that absorbs it, with `merged_from: "
                f"[{name}]` in that scene's header, then write [DELETED] to {name}."]
    old_body = _body(name, context.old_texts.get(name, ""))
    kept = max(held(old_body, [_body(n, c)])[0] for n, c in survivors.items())
    summary = _summary(name, context.old_texts.get(name, ""))
    if context.authorship(name).summary and not any(
            summary in c for c in survivors.values()):
        return [f"{name} has a summary a person wrote (\"{summary[:120]}\"): keep it word for "
                f"word in the scene that absorbs {name} (as a line of its body)."]
    if kept < MERGE_COVERAGE:
        return [f"{', '.join(sorted(survivors))} names {name} in merged_from but holds only "
                f"{kept:.0%} of its words (at least {MERGE_COVERAGE:.0%} needed): write "
                f"{name}'s facts into it before deleting {name}."]
    home = min(survivors, key=lambda n: len(_body(n, survivors[n])))
    return (_dropped_fact_problems(name, home, pending, context)
            + person_line_problems(name, pending, context))


def shrink_problems(name: str, pending: dict, context: RuleContext) -> list[str]:
    """A rewrite of ``name`` must keep its facts: at least ``KEEP_COVERAGE`` of the words it
    held are still in it or in another scene this batch writes (moved, not dropped)."""
    old = _body(name, context.old_texts.get(name, ""))
    if not content_terms(old):
        return []
    bodies = [_body(other, text) for other, text in pending.items() if text is not DELETED]
    mine = pending.get(name)
    share, rolled = held(old, bodies, own=_body(name, mine) if isinstance(mine, str) else "")
    if share < KEEP_COVERAGE:
        return [f"{name} would keep only {share:.0%} of the words it held (at least "
                f"{KEEP_COVERAGE:.0%}): keep its facts — condense the wording, or move them "
                "into another scene — rather than dropping them."]
    if rolled < DIGEST_KEEP:
        return [f"{name}'s digest lines keep only {rolled:.0%} of the words of the dated "
                f"lines they took in (at least {DIGEST_KEEP:.0%}): a digest says each theme "
                "of its period in a sentence, with its dates."]
    return _dropped_fact_problems(name, name, pending, context)


def room_demand(old_home: str, new_home: str, absorbed: str = "") -> int:
    """Characters of everything that had to go into a scene (``conservation.dropped_facts``'s
    ``demand``): its old body ``old_home``, the body of a scene it ``absorbed`` in a merge,
    and the lines its new body ``new_home`` adds."""
    from scene_engine.batch.accounting import added_text

    return len(old_home.strip()) + len(absorbed.strip()) \
        + len(added_text(old_home, new_home).strip())


def _dropped_fact_problems(name: str, home: str, pending: dict, context: RuleContext
                           ) -> list[str]:
    """Facts of ``name`` dropped although ``home`` (where they live now) had room for all it
    had to hold: its old text, ``name``'s, and what the batch added."""
    new = pending.get(home)
    if not isinstance(new, str):
        return []
    if home in context.old_texts:
        old_home = _body(home, context.old_texts[home])
    else:   # a new name (a rename): what it held under its old names had to go in too
        old_home = "\n".join(_body(m, context.old_texts[m]) for m in _merged_from_text(home, new)
                              if m in context.old_texts and m != name)
    old_name = _body(name, context.old_texts.get(name, ""))
    demand = room_demand(old_home, _body(home, new), old_name if name != home else "")
    bodies = [_body(n, t) for n, t in pending.items() if t is not DELETED]
    lost = dropped_facts(old_name, bodies, demand, context.max_scene_chars)
    if not lost:
        return []
    return [f"{home} has room, yet these facts of {name} are gone: {quote(lost, 3)}. Keep "
            "every fact while the scene has room (condense only a full scene)."]


def pinned_problems(name: str, content: str, context: RuleContext) -> list[str]:
    """A pinned scene keeps the summary its person gave it."""
    if name not in context.pinned:
        return []
    old = _summary(name, context.old_texts.get(name, ""))
    new = _summary(name, content)
    if old != new:
        return [f"{name} is pinned by a person: keep its summary exactly as it is "
                f"(summary: {old}); you may add facts to its body."]
    return []


def forged_pin_problems(name: str, content: str, context: RuleContext) -> list[str]:
    """``pinned`` is a person's mark (docs/DESIGN.md "Scene file"): a batch may not set it on
    a scene a person did not pin (a pinned scene is never merged away nor its summary
    changed, so a model that pinned its own scene would lock it against every later batch).
    Taking it away needs nothing here: the engine keeps a header's keys as they were."""
    if name in context.pinned:
        return []
    scene, _ = parse_checked(name, content)
    if scene is not None and is_pinned(scene.meta):
        return [f"`pinned` is a person's mark: only a person pins a scene. Write {name} "
                "without it."]
    return []


def person_line_problems(name: str, pending: dict, context: RuleContext) -> list[str]:
    """Lines a person wrote in ``name`` that would be in no scene once ``pending`` applies."""
    lost = lost_lines(context.authorship(name).lines, after_batch(pending, context).values())
    if not lost:
        return []
    return [f"{name}: keep these lines a person wrote, word for word (in {name} or, when "
            f"merging, in the scene that absorbs it): {quote(lost)}."]


def _merged_from_text(name: str, content: str) -> list[str]:
    return list(_parts(name, content)[2])


def _body(name: str, text: str) -> str:
    return _parts(name, text)[0]


def _summary(name: str, text: str) -> str:
    return _parts(name, text)[1]


@functools.lru_cache(maxsize=1024)
def _parts(name: str, text: str) -> tuple[str, str, tuple[str, ...]]:
    """(body, summary, merged_from) of a scene text, parsed once: the checks of one batch
    ask for them of every scene it writes, for every scene it changes. A text whose header
    cannot be read is all body."""
    scene, _ = parse_checked(name, text)
    if not scene:
        return text, "", ()
    return (scene.body, str(scene.meta.get("summary") or "").strip(),
            tuple(merged_from(scene)))


def validate_batch(pending: dict, context: RuleContext) -> list[str]:
    """Check the whole change set once the model stopped; return the problems (empty = valid).

    Checks: fewer than ``max_scenes`` scenes afterwards; at most ``new_scene_allowance`` new
    scenes, made after two existing scenes were read (``unread_problem``); every written
    scene readable with a summary and a body within the limit; no report-like new names; a
    scene made by merging others names them in ``merged_from`` and they no longer exist.
    Conservation: every existing scene changed was shown or read first; a scene is deleted
    only as part of a merge that holds its content; a rewrite keeps most of a scene's words;
    pinned scenes keep their summary and are never deleted; every line a person wrote is
    still in some scene.
    """
    problems = []
    for name, content in sorted(pending.items()):
        existing = context.canonical(name)
        if existing is None:
            continue
        if not context.seen(existing):
            problems.append(f"{existing} was changed without being read first: read it, then "
                            "write it again with its facts kept.")
        elif content is DELETED:
            problems += deletion_problems(existing, pending, context)
        else:
            problems += (pinned_problems(existing, content, context)
                         + person_line_problems(existing, pending, context)
                         + shrink_problems(existing, pending, context))
    live = live_count(pending, context.existing)
    # A store a person's own scenes put over the cap, with no two scenes that may merge
    # without losing what they hold (``cap_stuck``), may stay there while a batch adds no
    # scene: it never blocks the batch.
    if live >= context.max_scenes and not (context.cap_stuck and live <= len(context.existing)
                                            and not new_names(pending, context.existing)):
        problems.append(f"there will be {live} scenes; the limit is {context.max_scenes - 1}. "
                        "Merge related scenes: write the merged text into one and `[DELETED]` "
                        "into the others.")
    created = created_names(pending, context.existing)
    added = new_names(pending, context.existing)
    allowed = context.allowance()
    if len(added) > allowed:
        problems.append(f"{count(len(added), 'new scene')} ({', '.join(sorted(added))}); at most "
                        f"{allowed} this batch. Fold the others into existing scenes and delete "
                        "them.")
    unread = unread_problem(context, context.read | context.shown) if added else None
    if unread:      # the refusal at write time, once more for a scene that slipped past it
        problems.append(f"{', '.join(sorted(added))}: {unread}")
    remaining = {n.casefold() for n in context.existing
                 if pending.get(n) is not DELETED} | {n.casefold() for n in created}
    listed: dict[str, list[str]] = {}     # a name -> the scenes after the batch listing it
    if created:
        for holder, text in sorted(after_batch(pending, context).items()):
            for m in _merged_from_text(holder, text):
                listed.setdefault(m.casefold(), []).append(holder)
    for name, content in sorted(pending.items()):
        if content is DELETED:
            continue
        problems += content_problems(name, content, context.max_scene_chars)
        if name in created and is_report_like(name):
            problems.append(f"{name} is a report-like name; rename it after an area of life.")
        lister = next((h for h in listed.get(name.casefold(), []) if h != name), None)
        if name in created and lister:
            problems.append(f"{name} is a name {lister} lists in merged_from (a scene it took "
                            "in): choose another name.")
        scene, _ = parse_checked(name, content)
        # Names merged in by earlier batches may have been given to new scenes since.
        earlier = {m.casefold() for m in _merged_from_text(name, context.old_texts.get(
            context.canonical(name) or "", ""))} if context.canonical(name) else set()
        alive = [m for m in merged_from(scene) if m.casefold() in remaining
                 and m.casefold() != name.casefold() and m.casefold() not in earlier] \
            if scene else []
        if alive:
            problems.append(f"{name} was merged from {', '.join(alive)}, which still exist: "
                            "write `[DELETED]` to each merged-away scene.")
    return problems


_PERSONA_LISTED = re.compile(r"^- \*\*([^*\n]+)\*\* \((?:heat|热度) \d+\)", re.MULTILINE)
_WIKI_LINK = re.compile(r"\[\[([^\]]+)\]\]")


def persona_names(text: str, wiki_links: bool = False) -> set[str]:
    """The scene names a persona's text names (without ``.md``): its scene list
    (``- **name** (heat N)``), and its ``[[wiki-links]]`` when ``wiki_links`` is on."""
    names = set(_PERSONA_LISTED.findall(text))
    if wiki_links:
        names |= {m.split("|", 1)[0] for m in _WIKI_LINK.findall(text)}
    return {name.strip() for name in names if name.strip()}
