"""The extraction ledger: status changes, the review queue and merges as append-only events.

The journal's lines are never rewritten for a status change (a memory's line is its number),
so what happens to an extracted memory later is recorded in ``.scene-engine/dedupe.jsonl``
(in git), one JSON event a line, numbered ``n`` in order:

- ``status``: ``{memory, status: "superseded", by}`` (a newer memory supersedes it);
- ``queued``: ``{pair, left, right, reason, similarity}`` (a candidate pair for a person);
- ``merge``: ``{merge, pair, keep, created, retired, by, confidence}`` (``retired`` memories
  become ``merged``; ``created`` is a new journal record holding the merged text, or None when
  one of the two was kept as it was);
- ``kept_both``: ``{pair, by}``; ``undo``: ``{merge}`` (the merge never happened: its retired
  memories get their status back, its created record is ``retracted``, its pair is queued again).

A memory's status is its record's ``status`` (``active``) replayed through these events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from scene_engine.core.fs import atomic_write_text
from scene_engine.store.memories import Journal, Memory
from scene_engine.store.store import Store, StoreError

LOG_NAME = "dedupe.jsonl"
LOG_PATH = f".scene-engine/{LOG_NAME}"


def log_path(store: Store) -> Path:
    """``ROOT/.scene-engine/dedupe.jsonl``."""
    return store.meta_dir / LOG_NAME


class LedgerError(StoreError):
    """A ledger line cannot be read; the message names the line and the way back."""


def read_events(store: Store, skip_markers: bool = False) -> list[dict]:
    """Every event in order (an absent log is empty). Raises ``LedgerError`` for a line that
    is not a JSON event (for a writer, which must not append after it); ``skip_markers``: a
    git conflict marker line is passed over (``scenes repair`` keeps both sides)."""

    events, problems = read_intact(store)
    if skip_markers:
        problems = [p for p in problems if not p.endswith(MARKER_NOTE)]
    if problems:
        raise LedgerError(problems[0])
    return events


def read_intact(store: Store) -> tuple[list[dict], list[str]]:
    """(every readable event in order, a message for each line that is not one: a torn line,
    bytes that are not UTF-8, JSON that is not an event object, each named by its line in the
    file): for a reader that can go on without it and must say so."""
    from scene_engine.store.memories import journal_rows

    path = log_path(store)
    if not path.exists():
        return [], []
    found, problems = [], []
    for number, line in journal_rows(path.read_bytes()):
        event = _event(line)
        if event is None:
            problems.append(bad_event(number, line))
        else:
            found.append(event)
    return found, problems


MARKER_NOTE = "`scenes repair` keeps both sides' events and drops the markers"


def bad_event(number: int, line: str = "") -> str:
    """The one message for line ``number`` of the ledger that is not an event (``line``: its
    text; a git conflict marker says how to keep both sides)."""
    from scene_engine.store.memories import CONFLICT_MARKER

    if CONFLICT_MARKER.match(line):
        return (f"{LOG_PATH} line {number} is a git conflict marker left by a merge of two "
                f"copies of this store; {MARKER_NOTE}")
    return (f"{LOG_PATH} line {number} is not an event; the file is in git: "
            f"`git checkout -- {LOG_PATH}` brings back the last commit")


def _event(line: str) -> dict | None:
    """A ledger line as its event, or None when it is not one."""
    from scene_engine.store.memories import _NOT_UTF8

    if _NOT_UTF8.search(line):
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("event"), str) else None


def undone_merges(events: list[dict]) -> set[str]:
    """Ids of merges an ``undo`` event took back."""
    return {e["merge"] for e in events if e["event"] == "undo"}


def merged_into(events: list[dict]) -> dict[str, str]:
    """Retired memory id -> the id of the memory its merge kept or made (merges not undone)."""
    undone = undone_merges(events)
    into: dict[str, str] = {}
    for event in events:
        if event["event"] == "merge" and event["merge"] not in undone:
            survivor = event.get("created") or event["keep"]
            into.update((i, survivor) for i in event["retired"] if i != survivor)
    return into


def folded_as(events: list[dict]) -> dict[str, str]:
    """Memory id -> the memory a batch accounts it as a duplicate of, instead of folding it:
    a memory a merge retired (``merged_into``), and the record an undone merge created (it
    says again what the two memories of the pair, active again, say on their own) -> the
    memory that merge kept."""
    undone = undone_merges(events)
    found = merged_into(events)
    for event in events:
        if event["event"] == "merge" and event["merge"] in undone and event.get("created"):
            found[event["created"]] = event["keep"]
    return found


def statuses(memories: list[Memory], events: list[dict]) -> dict[str, str]:
    """Memory id -> status now: ``active``, ``superseded``, ``merged`` or ``retracted``
    (the record an undone merge created). Memories added without extraction have none."""
    found = {m.id: m.status for m in memories if m.status}
    undone = undone_merges(events)
    for event in events:
        if event["event"] == "status":
            found[event["memory"]] = event["status"]
        elif event["event"] == "merge":
            if event["merge"] in undone:
                if event.get("created"):
                    found[event["created"]] = "retracted"
                continue
            for memory_id in event["retired"]:
                found[memory_id] = "merged"
    return found


def problems(store: Store, memories: list[Memory]) -> list[str]:
    """What ``scenes doctor`` reports about the ledger: a line that is not a JSON event,
    numbers out of order, a memory id no journal record has, an undo of no merge."""
    path = log_path(store)
    if not path.exists():
        return []
    from scene_engine.store.memories import journal_rows

    known = {i for m in memories for i in (m.id, *m.aliases)}
    found, merges = [], set()
    for place, (number, line) in enumerate(journal_rows(path.read_bytes()), start=1):
        event = _event(line)
        if event is None:
            found.append(f"dedupe.jsonl: {bad_event(number, line)}")
            continue
        kind = event["event"]
        if event.get("n") != place:
            found.append(f"dedupe.jsonl: line {number} is numbered {event.get('n')}")
        named = [event.get(k) for k in ("memory", "left", "right", "keep", "created")]
        for memory_id in [*named, *(event.get("retired") or ())]:
            if memory_id is not None and memory_id not in known:
                found.append(f"dedupe.jsonl: line {number} ({kind}) names memory {memory_id}, "
                             "which is not in the journal")
        if kind == "merge":
            merges.add(event.get("merge"))
        elif kind == "undo" and event.get("merge") not in merges:
            found.append(f"dedupe.jsonl: line {number} undoes merge {event.get('merge')}, which "
                         "comes before it nowhere")
    return found


def new_event(kind: str, **data) -> dict:
    """An event of ``kind`` stamped with the time now (``n`` is set when it is written)."""
    return {"event": kind, "at": datetime.now(UTC).isoformat(timespec="seconds"), **data}


def write(store: Store, memories: list[Memory], events: list[dict], message: str
          ) -> list[Memory]:
    """Append ``memories`` to the journal and ``events`` to the ledger in one commit, under the
    store lock (as ``add``: recovery marker first, so a crash leaves neither half). Returns the
    memories actually added (with their numbers). Raises as ``engine.add_memories``."""
    return write_planned(store, lambda: (memories, events, message))


def write_planned(store: Store, plan: Callable[[], tuple[list[Memory], list[dict], str]]
                  ) -> list[Memory]:
    """``write`` of what ``plan()`` returns, ``(memories, events, commit message)``; ``plan``
    runs under the store lock, after recovery, so what it checked (a pair still open, a
    merge not undone yet) still holds when the commit is made: two people (two tabs, two
    commands) deciding one pair at once get one decision and one refusal. Raises what
    ``plan`` raises (nothing written) and as ``write``."""
    from scene_engine.index.refresh import refresh_index
    from scene_engine.store import history
    from scene_engine.store.unit import locked

    with locked(store) as unit:         # a merged journal: `scenes repair` first
        memories, events, message = plan()
        state = store.load_state()
        journal = Journal(store.memories_dir)
        fresh, _, writes = journal.plan_append(memories, state.next_seq)
        old = read_events(store)
        lines = [json.dumps({**e, "n": len(old) + i + 1}, ensure_ascii=False)
                 for i, e in enumerate(events)]
        path = log_path(store)
        text = (path.read_text(encoding="utf-8") if path.exists() else "") + \
            "".join(line + "\n" for line in lines)
        planned = {**{p.relative_to(store.root).as_posix(): None for p in writes},
                   ".scene-engine/state.json": None, LOG_PATH: text}
        with unit.change(planned):
            journal.write(writes)
            if lines:
                atomic_write_text(path, text)
            store.save_state(state.model_copy(update={"next_seq": state.next_seq + len(fresh)}))
            history.commit(unit.repo, message, paths=tuple(planned))   # what it wrote
    if fresh:
        refresh_index(store)
    return fresh
