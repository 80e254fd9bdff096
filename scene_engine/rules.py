"""The scene rules, enforced in code (DESIGN.md "A batch", step 5).

Two places use them: ``ScenePolicy`` is a sandbox policy hook that refuses a bad write while the
model works (its refusal text teaches the model the fix), and ``validate_batch`` checks the whole
change set once the model stops (problems go back to the model for a bounded number of repair
rounds). Elsewhere these limits live only in a prompt; here the model cannot break them.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass, field

from sandbox import DELETED, Change

from .scene import Scene, SceneHeaderWarning, parse_scene

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
    """

    existing: set[str]
    max_scenes: int
    max_scene_chars: int
    shown: set[str] = field(default_factory=set)
    frozen: set[str] = field(default_factory=set)


def is_report_like(name: str) -> bool:
    """True for names such as ``BATCH-3.md`` or ``summary_2024.md`` (see REPORT_PREFIXES)."""
    stem = unicodedata.normalize("NFKC", name).casefold().removesuffix(".md").lstrip("_- ")
    return stem.startswith(REPORT_PREFIXES)


def parse_checked(name: str, content: str) -> tuple[Scene | None, str | None]:
    """Parse a scene the model wrote; return ``(scene, None)`` or ``(None, problem)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SceneHeaderWarning)
        try:
            scene = parse_scene(content, name=name)
        except Exception as exc:  # a parser bug must still give the model a usable refusal
            return None, (f"the header of {name} cannot be read ({type(exc).__name__}). Start "
                          "the file with a YAML front matter block: a line `---`, then "
                          "`summary: ...`, then `---`.")
    if scene.header is None:
        where = next((str(w.message) for w in caught), "no header found")
        return None, (f"the header of {name} cannot be read ({where}). Start the file with a "
                      "YAML front matter block: a line `---`, then `summary: ...`, then `---`.")
    return scene, None


def content_problems(name: str, content: str, max_chars: int) -> list[str]:
    """Problems of one scene's text: unreadable header, missing summary, body too long."""
    scene, problem = parse_checked(name, content)
    if problem:
        return [problem]
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
    Refuses: a new scene when ``max_scenes - 1`` already exist; a second new scene in a batch;
    a new scene before two existing scenes (or all, if fewer) were read or shown; a report-like
    name; a body over ``max_scene_chars``; a missing summary.
    """

    def __init__(self, box, context: RuleContext):
        self.box = box
        self.context = context

    def __call__(self, change: Change) -> str | None:
        if change.name.casefold() in {n.casefold() for n in self.context.frozen}:
            return (f"{change.name} has a header that cannot be read; it is left as it is for "
                    "a person to fix. Do not write, replace or delete it: put these facts in "
                    "another scene.")
        if change.op == "delete":
            return None
        if change.created:
            refusal = self._creation_refusal(change.name)
            if refusal:
                return refusal
        problems = content_problems(change.name, change.new, self.context.max_scene_chars)
        return " ".join(problems) or None

    def _creation_refusal(self, name: str) -> str | None:
        ctx = self.context
        if is_report_like(name):
            return (f"{name} looks like a report or log name. Name a scene after an area of "
                    "the person's life or work (e.g. `career-and-projects.md`), and fold the "
                    "new facts into it as narrative.")
        created = created_names(self.box.pending(), ctx.existing)
        if created - {name}:
            return (f"this batch already created {', '.join(sorted(created))}; only one new "
                    "scene per batch. Put these facts into an existing scene instead.")
        live = live_count(self.box.pending(), ctx.existing)
        if live >= ctx.max_scenes - 1:
            return (f"there are already {live} scenes and the limit is {ctx.max_scenes - 1}. "
                    "Update an existing scene, or merge two related scenes first (write the "
                    "merged text into one, then write `[DELETED]` to the other).")
        needed = min(2, len(ctx.existing))
        seen = {n.casefold() for n in (self.box.read_names | ctx.shown)}
        read = [n for n in ctx.existing if n.casefold() in seen]
        if len(read) < needed:
            return (f"read at least {needed} existing scenes before creating a new one "
                    f"(read so far: {', '.join(read) or 'none'}); the facts may belong in one "
                    "of them. Use read_file on the most related scenes first.")
        return None


def created_names(pending: dict, existing: set[str]) -> set[str]:
    """Names staged as written that did not exist when the batch started."""
    folded = {n.casefold() for n in existing}
    return {n for n, c in pending.items() if c is not DELETED and n.casefold() not in folded}


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


def validate_batch(pending: dict, context: RuleContext) -> list[str]:
    """Check the whole change set once the model stopped; return the problems (empty = valid).

    Checks: fewer than ``max_scenes`` scenes afterwards; at most one new scene; every written
    scene readable with a summary and a body within the limit; no report-like new names; a
    scene made by merging others names them in ``merged_from`` and they no longer exist.
    """
    problems = []
    count = live_count(pending, context.existing)
    if count >= context.max_scenes:
        problems.append(f"there will be {count} scenes; the limit is {context.max_scenes - 1}. "
                        "Merge related scenes: write the merged text into one and `[DELETED]` "
                        "into the others.")
    created = created_names(pending, context.existing)
    if len(created) > 1:
        problems.append(f"{len(created)} new scenes ({', '.join(sorted(created))}); at most one "
                        "per batch. Fold the others into existing scenes and delete them.")
    remaining = {n.casefold() for n in context.existing
                 if pending.get(n) is not DELETED} | {n.casefold() for n in created}
    for name, content in sorted(pending.items()):
        if content is DELETED:
            continue
        problems += content_problems(name, content, context.max_scene_chars)
        if name in created and is_report_like(name):
            problems.append(f"{name} is a report-like name; rename it after an area of life.")
        scene, _ = parse_checked(name, content)
        alive = [m for m in merged_from(scene) if m.casefold() in remaining
                 and m.casefold() != name.casefold()] if scene else []
        if alive:
            problems.append(f"{name} was merged from {', '.join(alive)}, which still exist: "
                            "write `[DELETED]` to each merged-away scene.")
    return problems
