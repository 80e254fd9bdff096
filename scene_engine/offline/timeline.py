"""A scene as the offline backend edits it: free text, open threads, a dated timeline.

``parse_draft`` splits a scene into a ``Draft`` (header, text before the timeline, the
``## Open threads`` section, the timeline's ``Entry`` lines, sections after it);
``render_body`` puts it back. Lines a person wrote (``conservation.Authorship``) are kept
word for word and in place. Timeline lines: ``- 2026-05-07: fact.`` (one bullet per fact:
same-day facts each on their own; a scene written before that may hold ``- 2026-05-07:
fact. fact.``, read as one entry until it is condensed), ``- 2026-05 (digest): ...`` (a
rolled-up month), ``- 2026-Q2 (digest): ...``, ``- 2026 (digest): ...``, ``- 2001–2027
(digest): ...`` (``rollup``; periods: ``core.periods``). An
indented line under an entry continues it (a wrapped line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from scene_engine.batch.conservation import Authorship, is_pinned
from scene_engine.core.periods import PERIOD, sort_key
from scene_engine.offline import threads as threads_mod
from scene_engine.offline.threads import Thread
from scene_engine.store.scene import parse_scene

TIMELINE = "Timeline"
_HEADING = re.compile(rf"^## {TIMELINE}(?: \([^)]*\))?\s*$", re.M)
_LINE = re.compile(rf"^- ({PERIOD})( \(digest\))?: (.*)$")


@dataclass(frozen=True)
class Entry:
    """One timeline line. ``day``: ``YYYY-MM-DD`` (``YYYY-MM`` for a digest); ``text``: the
    facts, or for a person's line the line as written; ``person``: written by a person (kept
    word for word, never joined or condensed); ``digest``: a condensed month; ``fresh``: added
    by this batch (never condensed)."""

    day: str
    text: str
    person: bool = False
    digest: bool = False
    fresh: bool = False
    ids: tuple[str, ...] = ()     # memories it holds, when known (this batch's entries)


@dataclass
class Draft:
    """A scene while the batch works on it: header, free text around the timeline, entries."""

    name: str
    meta: dict
    head: str                     # body text before the timeline section (kept as written)
    entries: list[Entry]          # the timeline, in file order then added order
    tail: str = ""                # sections after the timeline (kept as written)
    heading: str = ""             # a person's own timeline heading, kept as written
    raw: dict = field(default_factory=dict)   # header source texts (scene.Scene.raw)
    merged_from: list[str] = field(default_factory=list)
    changed: bool = False
    keep_summary: bool = False    # pinned, or a summary a person wrote
    threads: list[Thread] = field(default_factory=list)   # open threads (``threads``)
    own_threads: list[str] = field(default_factory=list)  # a person's lines in that section

    def text_for_similarity(self) -> str:
        """Name, summary and text of the draft, as one string to compare memories against."""
        # Lines apart: the analyser caches line by line (``words.analyzer``).
        return "\n".join([self.name.replace("-", " "), str(self.meta.get("summary", "")),
                          self.head, *(e.text for e in self.entries), self.tail,
                          *(t.text for t in self.threads)])


def parse_draft(name: str, text: str, author: Authorship | None = None) -> Draft:
    """Split a scene into the parts the offline backend edits (see ``Draft``); lines in
    ``author.lines`` are a person's and stay as written."""
    author = author or Authorship()
    scene = parse_scene(text, name=name)
    mine = set(author.lines)
    keep = is_pinned(scene.meta) or author.summary
    body, threads, own = _take_threads(scene.body, mine)
    match = _HEADING.search(body)
    if not match:
        return Draft(name, dict(scene.meta), body.rstrip(), [], raw=scene.raw, keep_summary=keep,
                     threads=threads, own_threads=own)
    head, rest = body[: match.start()].rstrip(), body[match.end():]
    heading = match.group(0).strip()
    nxt = re.search(r"^## ", rest, flags=re.M)
    section, tail = (rest[: nxt.start()], rest[nxt.start():]) if nxt else (rest, "")
    entries: list[Entry] = []
    pinned = is_pinned(scene.meta)
    for raw_line in section.splitlines():
        line = raw_line.strip()
        found = _LINE.match(line)
        day = entries[-1].day if entries else ""
        if not line:
            continue
        if found and line not in mine:   # a pinned scene's entries are never condensed
            entries.append(Entry(found.group(1), found.group(3), digest=bool(found.group(2)),
                                 fresh=pinned))
        elif (raw_line[:1].isspace() and line not in mine and entries
              and not entries[-1].person):     # a wrapped entry continues
            entries[-1] = replace(entries[-1], text=f"{entries[-1].text} {line}")
        else:   # a person's own line: kept as written (spaces too), in place, never trimmed
            entries.append(Entry(found.group(1) if found else day, raw_line.rstrip("\r"),
                                 person=True))
    return Draft(name, dict(scene.meta), head, entries, tail.strip(),
                 heading=heading if heading in mine else "", raw=scene.raw, keep_summary=keep,
                 threads=threads, own_threads=own)


def _take_threads(body: str, mine: set[str]) -> tuple[str, list[Thread], list[str]]:
    """(the body without its ``## Open threads`` section, the threads, a person's lines of
    that section)."""
    match = threads_mod.HEADING_RE.search(body)
    if not match:
        return body, [], []
    rest = body[match.end():]
    nxt = re.search(r"^## ", rest, flags=re.M)
    section, after = (rest[: nxt.start()], rest[nxt.start():]) if nxt else (rest, "")
    threads, own = threads_mod.parse_section(section, mine)
    return body[: match.start()].rstrip() + ("\n\n" + after if after else "\n"), threads, own


def ordered(entries: list[Entry]) -> list[Entry]:
    """By day or period start; a day's lines keep their order."""
    return sorted(entries, key=lambda e: sort_key(e.day))


def _timeline_lines(entries: list[Entry]) -> list[str]:
    """One bullet per fact (issue 23 item 6): each engine entry on its own
    ``- YYYY-MM-DD: ...`` line, same-day ones included (two facts of one day glued into one
    bullet read as one fact, and the next batch could not tell them apart); a person's lines
    as written; one line per digest."""
    lines: list[str] = []
    for entry in ordered(entries):
        if entry.person:
            lines.append(entry.text)
        elif entry.digest:
            lines.append(f"- {entry.day} (digest): {entry.text}")
        else:
            lines.append(f"- {entry.day}: {sentence(entry.text)}")
    return lines


def sentence(text: str) -> str:
    """``text`` on one line, ending with a sentence mark."""
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "。", "！", "？", "…")) else text + "."


def render_body(draft: Draft, zone: str) -> str:
    """The scene body: free text, the open threads, the timeline (heading names the time
    zone), later sections."""
    parts = [draft.head] if draft.head else []
    section = threads_mod.render_section(draft.threads, draft.own_threads)
    if section:
        parts.append(section)
    heading = draft.heading or f"## {TIMELINE} ({zone})"
    parts.append("\n".join([heading, *_timeline_lines(draft.entries)]))
    if draft.tail:
        parts.append(draft.tail)
    return "\n\n".join(parts) + "\n"


def size(draft: Draft, zone: str) -> int:
    """Characters of the rendered body (what ``max_scene_chars`` limits)."""
    return len(render_body(draft, zone).strip())
