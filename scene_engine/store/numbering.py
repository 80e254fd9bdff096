"""The memory journal's numbering: a memory's number (``seq``) is its place in the journal.

``select_batch``, undo's re-queue and ``trace`` find a memory by its number alone (its segment
and line, ``memories.py``), and ``state.json`` counts the memories the journal holds. A git
merge of two copies of one store (two devices that each added memories, then synced) breaks
that: the journal has two records with one number and more lines than the state counts, so
every batch would take the wrong memory or none at all, and a run could commit empty batches
for ever. Every write checks the numbering first (``check_numbering``) and refuses with the
way out: ``scenes repair`` (``repair_numbering``). The check's cost follows what changed,
not the journal's size: the last segment (at most ``SEGMENT`` lines) is read every time;
a full segment git says is HEAD's (``history.journal_blobs``) is known by the facts derived
once from its blob (``cache``: ``segments.json``, blob sha -> its count of records and its
first and last record's number), and only a changed or new one is read again.

The repair keeps every record once and decides what is processed from what the batches in
effect actually folded, by id (their ledgers, docs/DESIGN.md "A batch" step 7, or for an old batch
its ``Memory-Seqs`` and the journal of its own commit), never from a cursor: whichever side's
``state.json`` and whichever order of journal lines the person kept, each memory a live batch
took keeps the number that batch gave it, the others fill the free numbers in journal order
and are pending. Two batches that cannot both keep their numbers (both devices folded: two
commits with one batch number, or two batches that gave one number to two memories) cannot
both stay in effect: the repair releases one (the one whose ledger file the person did not
keep, else the later) in its commit's ``Released-Batches`` trailer (``history.live_batches``
reads it) and its memories are pending again: a scene may repeat one, none is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from scene_engine.core.plural import count
from scene_engine.store import cache
from scene_engine.store.history import journal_blobs, journal_changes, rewritten_journal_lines
from scene_engine.store.layout import repair_advice
from scene_engine.store.memories import SEGMENT, JournalError, bad_line, journal_rows, parse_record
from scene_engine.store.store import State, Store, StoreError

if TYPE_CHECKING:
    from git import Repo

STATE_PATH = ".scene-engine/state.json"
FACTS = "segments.json"      # the cache: blob sha -> [records, first row, last row]


class NumberingError(StoreError):
    """The journal's numbers disagree with their places or with ``state.json`` (a merge of two
    copies of the store); nothing was written. ``scenes repair`` renumbers the journal."""

    exit_code = 1


class JournalEditedError(StoreError):
    """A committed journal line was changed or removed in the work tree (the journal is
    append-only: a memory is never rewritten); nothing was written. The message names the
    file and line and the way back."""

    exit_code = 1


def journal_edits(repo: Repo, changes: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """One sentence for each journal segment whose committed lines were changed by hand
    (``history.rewritten_journal_lines``; ``changes``: its ``journal_changes`` when the
    caller has them); [] when none."""
    return [f"{path} line {line} "
            + ("is not a whole memory record (a half-written or damaged line; its committed "
               f"text was whole): `git checkout -- {path}` brings it back" if torn else
               "differs from its committed text (the journal is append-only: "
               f"`git checkout -- {path}` brings it back; to correct a memory, add one that "
               "says what is true now)")
            for path, line, torn in rewritten_journal_lines(repo, changes)]


def check_journal_appended(repo: Repo, changes: dict[str, tuple[str, str]] | None = None
                           ) -> None:
    """Raise ``JournalEditedError`` when a committed journal line was changed or removed
    (a commit of the store would take the rewrite in with it, under the engine's name, and
    folded scenes would no longer match their memories); else nothing. ``changes``: the
    ``history.journal_changes`` the caller has (else asked of git here)."""
    edits = journal_edits(repo, changes)
    if edits:
        raise JournalEditedError(
            f"{edits[0]}; nothing was written" + (f" ({len(edits) - 1} more such files)"
                                                  if len(edits) > 1 else ""))


def numbering_problem(folder: Path, next_seq: int, known: Mapping[str, str] | None = None,
                      root: Path | None = None) -> str:
    """What is wrong with the numbering of the journal in ``folder`` given ``state.json``'s
    ``next_seq`` ("" when nothing is): segments named 00000, 00001, ... in turn, every one
    but the last full (``SEGMENT`` records), each record's ``seq`` its place (all of the last
    segment checked, the first and last record of the others), as many records as the state
    counts. Raises ``JournalError`` for a torn line it checks (naming the way back).

    ``known``: ``memories/NNNNN.jsonl`` -> blob sha of the segments whose file is that blob
    (``history.journal_blobs``), and ``root`` the store whose cache keeps their facts
    (``_Facts``): such a segment is read once, ever; without them every segment is read."""
    paths = sorted(Path(folder).glob("*.jsonl"))
    facts = _Facts(known or {}, root)
    total = 0
    for place, path in enumerate(paths):
        rel = f"{path.parent.name}/{path.name}"
        if path.stem != f"{place:05d}":
            return f"{rel} is not the journal segment expected next ({place:05d}.jsonl)"
        last = place == len(paths) - 1
        rows, first, final, step = facts.of(rel, path, whole=last)
        if not last and rows != SEGMENT:
            return f"{rel} holds {count(rows, 'record')}, not {SEGMENT}"
        problem = _misplaced(rel, place, rows, [first] + ([step] if last else [final]))
        if problem:
            return problem
        total += rows
    facts.keep()
    if total != next_seq:
        return f"the journal holds {count(total, 'memory')} but state.json counts {next_seq}"
    return ""


def _misplaced(rel: str, place: int, rows: int, checked: list) -> str:
    """The first of ``checked`` (``[offset, line number, seq or why it is torn]`` rows, None
    for none) whose number is not its place, as a problem ("" when none). Raises
    ``JournalError`` for a torn one."""
    for row in checked:
        if not rows or row is None:
            continue
        offset, number, seq = row
        if isinstance(seq, str):            # a torn line, and why
            raise JournalError(bad_line(rel, number, seq))
        if seq != place * SEGMENT + offset:
            return (f"{rel} line {offset + 1} holds memory #{seq} where "
                    f"#{place * SEGMENT + offset} belongs")
    return ""


class _Facts:
    """What the numbering check needs of each segment, read from the file or, for a segment
    whose file is a blob ``known`` names, from the cache (``cache``: ``segments.json``, blob
    sha -> ``[rows, first, last, step]``; ``step`` is the first row out of step with the first
    one, None when every row follows it, "?" when not worked out yet: only the last segment
    needs it)."""

    def __init__(self, known: Mapping[str, str], root: Path | None):
        self.known, self.root = known, root
        self.cached = cache.load(root, FACTS) if root is not None and known else {}
        self.found: dict[str, list] = {}

    def of(self, rel: str, path: Path, whole: bool
           ) -> tuple[int, list | None, list | None, list | None]:
        """(records, first row, last row, step) of segment ``rel`` (``path``); ``whole``:
        ``step`` is needed (the segment is read whole unless its cached facts have it)."""
        blob = self.known.get(rel)
        entry: list | None = self.cached.get(blob) if blob else None
        if entry is None or not _well_formed(entry) or (whole and entry[3] == "?"):
            entry = _segment_facts(path, whole)
            if blob:
                self.found[blob] = entry
        rows, first, final, step = entry
        return rows, first, final, None if step == "?" else step

    def keep(self) -> None:
        """Save what was read from blobs for next time (the blobs no segment is now dropped)."""
        if self.root is None or not self.found:
            return
        merged = {**self.cached, **self.found}
        cache.save(self.root, FACTS, {blob: merged[blob] for blob in self.known.values()
                                      if blob in merged})


def _well_formed(entry) -> bool:
    """True for a cache entry as ``_segment_facts`` makes them (anything else is read
    again from the file)."""
    def row(value) -> bool:
        return value is None or (isinstance(value, list) and len(value) == 3
                                 and all(isinstance(v, int) for v in value[:2])
                                 and isinstance(value[2], int | str))
    return (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], int)
            and row(entry[1]) and row(entry[2]) and (entry[3] == "?" or row(entry[3])))


def _row(offset: int, number: int, line: str) -> list:
    """``[offset, line number in the file, seq]`` of a journal line, or ``[offset, number,
    why it is not a whole record]``."""
    try:
        return [offset, number, parse_record(line)["seq"]]
    except ValueError as exc:
        return [offset, number, str(exc)]


def _segment_facts(path: Path, whole: bool) -> list:
    """``[records, first row, last row, step]`` of one segment (``_Facts``); ``step`` only
    when ``whole`` (every line parsed), else "?" (two lines parsed)."""
    lines = journal_rows(path.read_bytes())
    if not lines:
        return [0, None, None, None]
    first, final = _row(0, *lines[0]), _row(len(lines) - 1, *lines[-1])
    if not whole:
        return [len(lines), first, final, "?"]
    step = None
    if not isinstance(first[2], str):
        for offset, (number, line) in enumerate(lines):
            row = _row(offset, number, line)
            if isinstance(row[2], str) or row[2] != first[2] + offset:
                step = row
                break
    return [len(lines), first, final, step]


def check_numbering(store: Store, state: State | None = None, repo: Repo | None = None,
                    changes: dict[str, tuple[str, str]] | None = None) -> None:
    """Raise ``NumberingError`` (nothing written) when the journal's numbering is broken;
    else nothing. Call it under the store lock, after recovery, before a write. ``repo``
    (with its ``history.journal_changes``, else asked here): the segments git says are
    HEAD's are known by their cached facts (``numbering_problem``)."""
    state = state or store.load_state()
    known = None
    if repo is not None:
        known = journal_blobs(repo, journal_changes(repo) if changes is None else changes)
    problem = numbering_problem(store.memories_dir, state.next_seq, known, store.root)
    if problem:
        raise NumberingError(
            f"the memory journal's numbers are out of step ({problem}), as after a git merge "
            "of two copies of this store; nothing was written. "
            + repair_advice(store.root) + ": what the batches in effect took stays folded (by id), every other "
            "memory is pending again")


