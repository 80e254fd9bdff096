"""The memory journal's numbering: a memory's number (``seq``) is its place in the journal.

``select_batch``, undo's re-queue and ``trace`` find a memory by its number alone (its segment
and line, ``memories.py``), and ``state.json`` counts the memories the journal holds. A git
merge of two copies of one store (two devices that each added memories, then synced) breaks
that: the journal has two records with one number and more lines than the state counts, so
every batch would take the wrong memory or none at all, and a run could commit empty batches
for ever. Every write checks the numbering first (``check_numbering``, cheap: it counts lines
and reads the numbers of the last segment) and refuses with the way out: ``scenes repair``
(``repair_numbering``), which keeps every record, numbers the records after the first
mismatch anew and makes them pending again.
"""

from __future__ import annotations

import json
from pathlib import Path

from .memories import SEGMENT, Journal, _lines, _record
from .store import State, Store, StoreError, render_state


class NumberingError(StoreError):
    """The journal's numbers disagree with their places or with ``state.json`` (a merge of two
    copies of the store); nothing was written. ``scenes repair`` renumbers the journal."""

    exit_code = 1


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
        lines = _lines(path.read_text(encoding="utf-8"))
        last = place == len(paths) - 1
        if not last and len(lines) != SEGMENT:
            return f"{rel} holds {len(lines)} records, not {SEGMENT}"
        checked = range(len(lines)) if last else sorted({0, len(lines) - 1})
        for offset in checked:
            seq = _record(path, offset, lines[offset])["seq"]   # a torn line: JournalError
            if seq != place * SEGMENT + offset:
                return (f"{rel} line {offset + 1} holds memory #{seq} where "
                        f"#{place * SEGMENT + offset} belongs")
        total += len(lines)
    if total != next_seq:
        return f"the journal holds {total} memories but state.json counts {next_seq}"
    return ""


def check_numbering(store: Store, state: State | None = None) -> None:
    """Raise ``NumberingError`` (nothing written) when the journal's numbering is broken;
    else nothing. Call it under the store lock, after recovery, before a write."""
    state = state or store.load_state()
    problem = numbering_problem(store.memories_dir, state.next_seq)
    if problem:
        raise NumberingError(
            f"the memory journal's numbers are out of step ({problem}), as after a git merge "
            "of two copies of this store; nothing was written. `scenes repair` numbers the "
            "journal anew and makes the memories past the first mismatch pending again")


def renumbered(store: Store, state: State) -> tuple[list[dict], State, int]:
    """(every journal record numbered by its place, the repaired state, the first renumbered
    place)
    for a journal ``numbering_problem`` finds fault with. Records keep their text; a record
    whose id an earlier one already has (both copies added it) is kept only once. The state
    counts them all; the cursor goes back to the first renumbered place, so those memories are
    pending again (a memory the other copy already folded is folded once more: nothing is
    lost, a scene may repeat it); re-queued and forgotten numbers past it are dropped."""
    # Records as stored (every field kept, whatever this engine knows of them).
    records = [record for _, _, record in Journal(store.memories_dir)._records()]
    kept: list[dict] = []
    seen: set[str] = set()
    first = None
    for place, record in enumerate(records):
        if first is None and (record.get("seq") != place or record["id"] in seen):
            first = place
        if record["id"] in seen:
            continue
        seen.add(record["id"])
        kept.append({**record, "seq": len(kept)})
    first = len(kept) if first is None else min(first, len(kept))
    fixed = state.model_copy(update={
        "next_seq": len(kept), "cursor": min(state.cursor, first),
        "requeued": [s for s in state.requeued if s < first],
        "forgotten": [s for s in state.forgotten if s < first]})
    return kept, fixed, first


def repair_numbering(store: Store) -> dict:
    """Number the journal anew (``renumbered``), write it and ``state.json`` in one commit,
    under the store lock. Returns ``{"repaired": bool, "memories": n, "pending_again": n,
    "problem": text}``. Raises ``HistoryError`` if git refuses (a merge still in progress)."""
    from . import history, interrupts, recovery
    from .fsutil import atomic_write_text
    from .lock import store_lock

    with store_lock(store.lock_path):
        repo = history.open_repo(store.root)
        try:
            recovery.recover(store, repo)
            state = store.load_state()
            problem = numbering_problem(store.memories_dir, state.next_seq)
            if not problem:
                return {"repaired": False, "memories": state.next_seq, "pending_again": 0,
                        "problem": ""}
            kept, fixed, first = renumbered(store, state)
            texts = _segment_texts(kept)
            old = sorted(store.memories_dir.glob("*.jsonl"))
            planned = {f"memories/{name}": text for name, text in texts.items()}
            planned |= {f"memories/{p.name}": None for p in old if p.name not in texts}
            planned[".scene-engine/state.json"] = render_state(fixed)
            with interrupts.critical(repo):
                recovery.begin(store, planned, repo)
                for path in old:
                    if path.name not in texts:
                        path.unlink()
                for name, text in texts.items():
                    atomic_write_text(store.memories_dir / name, text)
                store.save_state(fixed)
                history.commit(repo, f"repair: journal numbered anew, {len(kept) - first} "
                                     f"memories pending again\n\nProblem: {problem}.\n",
                               paths=("memories", ".scene-engine/state.json"))
                recovery.end(store)
        finally:
            repo.close()
    return {"repaired": True, "memories": len(kept), "pending_again": len(kept) - first,
            "problem": problem}


def _segment_texts(records: list[dict]) -> dict[str, str]:
    texts: dict[str, list[str]] = {}
    for record in records:
        texts.setdefault(f"{record['seq'] // SEGMENT:05d}.jsonl", []).append(
            json.dumps(record, ensure_ascii=False))
    return {name: "\n".join(lines) + "\n" for name, lines in texts.items()}
