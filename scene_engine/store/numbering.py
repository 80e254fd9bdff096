"""The memory journal's numbering: a memory's number (``seq``) is its place in the journal.

``select_batch``, undo's re-queue and ``trace`` find a memory by its number alone (its segment
and line, ``memories.py``), and ``state.json`` counts the memories the journal holds. A git
merge of two copies of one store (two devices that each added memories, then synced) breaks
that: the journal has two records with one number and more lines than the state counts, so
every batch would take the wrong memory or none at all, and a run could commit empty batches
for ever. Every write checks the numbering first (``check_numbering``, cheap: it counts lines
and reads the numbers of the last segment) and refuses with the way out: ``scenes repair``
(``repair_numbering``).

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

from pathlib import Path
from typing import TYPE_CHECKING

from scene_engine.core.plural import count
from scene_engine.store.history import rewritten_journal_lines
from scene_engine.store.layout import repair_advice
from scene_engine.store.memories import SEGMENT, _record, journal_rows
from scene_engine.store.store import State, Store, StoreError

if TYPE_CHECKING:
    from git import Repo

STATE_PATH = ".scene-engine/state.json"


class NumberingError(StoreError):
    """The journal's numbers disagree with their places or with ``state.json`` (a merge of two
    copies of the store); nothing was written. ``scenes repair`` renumbers the journal."""

    exit_code = 1


class JournalEditedError(StoreError):
    """A committed journal line was changed or removed in the work tree (the journal is
    append-only: a memory is never rewritten); nothing was written. The message names the
    file and line and the way back."""

    exit_code = 1


def journal_edits(repo: Repo) -> list[str]:
    """One sentence for each journal segment whose committed lines were changed by hand
    (``history.rewritten_journal_lines``); [] when none."""
    return [f"{path} line {line} "
            + ("is not a whole memory record (a half-written or damaged line; its committed "
               f"text was whole): `git checkout -- {path}` brings it back" if torn else
               "differs from its committed text (the journal is append-only: "
               f"`git checkout -- {path}` brings it back; to correct a memory, add one that "
               "says what is true now)")
            for path, line, torn in rewritten_journal_lines(repo)]


def check_journal_appended(repo: Repo) -> None:
    """Raise ``JournalEditedError`` when a committed journal line was changed or removed
    (a commit of the store would take the rewrite in with it, under the engine's name, and
    folded scenes would no longer match their memories); else nothing."""
    edits = journal_edits(repo)
    if edits:
        raise JournalEditedError(
            f"{edits[0]}; nothing was written" + (f" ({len(edits) - 1} more such files)"
                                                  if len(edits) > 1 else ""))


def numbering_problem(folder: Path, next_seq: int) -> str:
    """What is wrong with the numbering of the journal in ``folder`` given ``state.json``'s
    ``next_seq`` ("" when nothing is): segments named 00000, 00001, ... in turn, every one
    but the last full (``SEGMENT`` records), each record's ``seq`` its place (all of the last
    segment checked, the first and last record of the others), as many records as the state
    counts. Reads every segment's bytes once and parses about ``SEGMENT`` lines. Raises
    ``JournalError`` for a torn line it reads (naming the way back)."""
    paths = sorted(Path(folder).glob("*.jsonl"))
    total = 0
    for place, path in enumerate(paths):
        rel = f"{path.parent.name}/{path.name}"
        if path.stem != f"{place:05d}":
            return f"{rel} is not the journal segment expected next ({place:05d}.jsonl)"
        lines = journal_rows(path.read_bytes())
        last = place == len(paths) - 1
        if not last and len(lines) != SEGMENT:
            return f"{rel} holds {count(len(lines), 'record')}, not {SEGMENT}"
        checked = range(len(lines)) if last else sorted({0, len(lines) - 1})
        for offset in checked:
            number, line = lines[offset]
            seq = _record(path, offset, line, number)["seq"]   # a torn line: JournalError
            if seq != place * SEGMENT + offset:
                return (f"{rel} line {offset + 1} holds memory #{seq} where "
                        f"#{place * SEGMENT + offset} belongs")
        total += len(lines)
    if total != next_seq:
        return f"the journal holds {count(total, 'memory')} but state.json counts {next_seq}"
    return ""


def check_numbering(store: Store, state: State | None = None) -> None:
    """Raise ``NumberingError`` (nothing written) when the journal's numbering is broken;
    else nothing. Call it under the store lock, after recovery, before a write."""
    state = state or store.load_state()
    problem = numbering_problem(store.memories_dir, state.next_seq)
    if problem:
        raise NumberingError(
            f"the memory journal's numbers are out of step ({problem}), as after a git merge "
            "of two copies of this store; nothing was written. "
            + repair_advice(store.root) + ": what the batches in effect took stays folded (by id), every other "
            "memory is pending again")


