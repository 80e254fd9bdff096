"""``scenes add`` and the MCP ``remember`` tool: memories validated whole, appended to the
journal, one commit (docs/DESIGN.md "Command line", memory input).

Order, under the store lock: recover an interrupted change, check the journal's numbering,
bring the index in step (to look ids up in), append what waits in the inbox (each file its
own commit), then the new memories (one commit), and index them, so they are searchable and
recallable before the add returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scene_engine.core.errors import InputError
from scene_engine.core.interrupts import Terminated
from scene_engine.core.plural import count
from scene_engine.store import history, inbox
from scene_engine.store.memories import (
    AddReport,
    Journal,
    Memory,
    MemoryInputError,
    Place,
    parse_lines,
)
from scene_engine.store.store import State, Store
from scene_engine.store.unit import StoreUnit, locked

if TYPE_CHECKING:
    from scene_engine.index.scenes import SceneIndex


def add_memories(store: Store, data: bytes | str,
                 lock_timeout: float | None = None) -> AddReport:
    """Validate ``data`` (JSON list or JSONL, as UTF-8 bytes or as text) whole, append the
    new memories, commit.

    Memories waiting in the inbox (``inbox``) are appended first, each file its own commit.
    Anything but bytes or text (None, a list or dict of records, a number) and a ``store``
    that is not an open store are refused with ``InputError`` (exit 2's words, nothing
    added): records in Python go through ``json.dumps`` first. The new memories are indexed for search and recall
    before it returns (a failure there only costs freshness: the next search catches up).
    ``lock_timeout``: seconds to wait for the store (None: ``lock.lock_timeout()``).

    Raises ``MemoryInputError`` (nothing added) for any bad record, and for a known id sent
    with another memory (another content, scope, role or type: a memory is never rewritten),
    ``JournalError`` for a torn journal, ``LockBusyError`` when the store stays busy. Known ids
    sent with the same memory are skipped; the same memory (content, instant, scope, role and
    type) as one already known (or earlier in the input) becomes an alias of it (the counts
    and ``same_as`` say which). The report is of ``data`` alone.
    """
    if not isinstance(store, Store):
        raise InputError(f"add_memories needs an open store (scene_engine.open_store(DIR)), "
                         f"not {store!r}")
    if isinstance(data, str):
        text = data
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:   # a lone surrogate: no UTF-8 can carry it
            raise MemoryInputError([(text.count("\n", 0, exc.start) + 1, (
                f"text contains a lone surrogate (invalid Unicode) "
                f"{exc.object[exc.start:exc.end]!r}"))]) from exc
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InputError(f"add_memories takes the memories as JSON list or JSONL text (str or "
                         f"UTF-8 bytes), not {type(data).__name__}"
                         + (": json.dumps(records) makes that text of a list or dict"
                            if isinstance(data, list | dict | tuple) else ""))
    return _add(store, bytes(data), lock_timeout)


def plan_add(store: Store, memories: list[tuple[Place, Memory]], sync: bool = True
             ) -> AddReport:
    """What ``add_memories`` would make of ``memories`` (``parse_lines``'s ``[(place,
    Memory)]``) on ``store`` as it is now, written nowhere and without the store lock (for a
    copy no one else writes: a serving front-end's reading clone). ``sync``: bring the
    index in step first (False: the caller knows nothing changed since it last did).
    ``known_ids``: the ids the journal knows with the same memory. Raises
    ``MemoryInputError`` naming the record of each known id sent with another memory, as
    ``add_memories`` would."""
    index = _synced_index(store) if sync else _open_index(store)
    try:
        _, report, _ = Journal(store.memories_dir).plan_append(
            [m for _, m in memories], store.load_state().next_seq, catalog=index)
    finally:
        if index is not None:
            index.close()
    if report.conflicts:
        raise MemoryInputError([(memories[position][0], message)
                                for position, message in report.conflicts])
    return report


def check_waiting(store: Store, data: bytes) -> None:
    """Refuse, before ``data`` is kept in the inbox of a store a batch holds, what the add
    would refuse once the store is free: a known id (in the journal or an inbox file
    waiting) sent with another memory. Read without the store lock (the journal is only
    appended to, and not during a batch); when it cannot be read now, the add that drains
    the inbox judges it. Raises ``MemoryInputError``."""
    from scene_engine.store.memories import differs, kind

    lined = parse_lines(data, private=store.config.redactor())
    try:
        plan_add(store, lined)
    except MemoryInputError:
        raise
    except Exception:            # the journal or index mid-change: the drain judges it
        return
    waiting: dict[str, tuple] = {}
    for path in inbox.waiting(store):
        try:
            waiting.update((m.id, kind(m)) for _, m in parse_lines(path.read_bytes()))
        except (MemoryInputError, OSError):
            continue
    problems = [(line, f"id {m.id!r} is already known with {difference}; a memory is never "
                       "rewritten: give this one a new id")
                for line, m in lined
                if m.id in waiting and (difference := differs(waiting[m.id], kind(m)))]
    if problems:
        raise MemoryInputError(problems)


def _add(store: Store, data: bytes | None, lock_timeout: float | None = None) -> AddReport:
    """``add_memories`` after its checks; ``data`` None appends just the inbox's memories."""
    memories = parse_lines(data, private=store.config.redactor()) if data is not None else []
    report = AddReport(added=0, known=0, duplicates=0)
    with locked(store, timeout=lock_timeout) as unit:
        journal = Journal(store.memories_dir)
        index = _synced_index(store)
        try:
            added = _drain_inbox(unit, journal, index)
            if memories:
                _, report = _append(unit, journal, memories, store.load_state(), index)
                added += report.added
        finally:
            if index is not None:
                index.close()
    if added and index is None:
        from scene_engine.index.refresh import refresh_index

        refresh_index(store)     # the new memories are searchable now (one segment re-read)
    return report


def drain_inbox(store: Store, lock_timeout: float | None = None) -> int:
    """Append the memories waiting in the inbox to the journal (``add_memories`` with no new
    data). Returns how many files were drained. Raises as ``add_memories``."""
    before = len(inbox.waiting(store))
    if before:
        _add(store, None, lock_timeout=lock_timeout)
    return before - len(inbox.waiting(store))


def _drain_inbox(unit: StoreUnit, journal: Journal, index: SceneIndex | None) -> int:
    """Append each inbox file (under the store lock), oldest first; returns memories added.
    A file that no longer validates is set aside as ``.bad`` (said once, never retried)."""
    import warnings

    added = 0
    for path in inbox.waiting(unit.store):
        try:   # a known id with another memory is refused here as by `scenes add`
            memories = parse_lines(path.read_bytes(), private=unit.store.config.redactor())
            _, report = _append(unit, journal, memories, unit.store.load_state(), index)
        except (MemoryInputError, OSError) as exc:
            warnings.warn(f"{path}: set aside, not added ({exc})", stacklevel=3)
            path.replace(path.with_suffix(".bad"))
            continue
        added += report.added
        path.unlink()          # a crash before this re-adds the file: its ids are known then
    return added


def _open_index(store: Store) -> SceneIndex | None:
    """The store's index as it is (no sync), or None when it cannot be opened."""
    from scene_engine.index.scenes import for_store

    try:
        return for_store(store)
    except Exception:           # the index is derived: any failure just means "read the files"
        return None


def _synced_index(store: Store) -> SceneIndex | None:
    """The store's index in step with the journal (to look ids up in), or None when it cannot
    be (no index, unreadable, a journal segment it could not read): the journal is read then."""
    from scene_engine.index.scenes import for_store

    try:
        index = for_store(store)
    except Exception:           # the index is derived: any failure just means "read the files"
        return None
    try:
        report = index.sync()
        if not any(w.startswith("memories/") for w in report.warnings or ()):
            return index
    except Exception:
        pass
    index.close()
    return None


def _append(unit: StoreUnit, journal: Journal, lined: list[tuple[Place, Memory]], state: State,
            index: SceneIndex | None) -> tuple[list[Memory], AddReport]:
    """Plan, write and commit the new memories (``[(place, Memory)]``, under the store lock);
    index them when ``index`` is given. Returns (fresh memories, ``AddReport``). Raises
    ``MemoryInputError`` naming the record of each known id sent with another memory (nothing
    written)."""
    store = unit.store
    fresh, report, writes = journal.plan_append([m for _, m in lined], state.next_seq,
                                                catalog=index, own=True)
    if report.conflicts:
        raise MemoryInputError([(lined[position][0], message)
                                for position, message in report.conflicts])
    # Engine files only, restored whatever they hold: their text is not needed.
    planned = dict.fromkeys([*(p.relative_to(store.root).as_posix() for p in writes),
                             ".scene-engine/state.json"])
    with unit.change(planned):   # Ctrl-C waits until the add is committed
        journal.write(writes)
        if writes:
            store.save_state(state.model_copy(
                update={"next_seq": state.next_seq + len(fresh)}))
            # Only the journal and state: a hand edit waiting under scenes/ gets its own
            # "hand edit" commit from the next batch, not a place in this one.
            shown = (f"{fresh[0].id} .. {fresh[-1].id} ({len(fresh)})" if fresh
                     else "none (known ids added as aliases)")
            # The segments written and the state only: ``git add`` of the whole journal
            # folder hashed every segment again (a fresh temporary index knows no file).
            sha = history.commit(unit.repo, f"add: {count(len(fresh), 'memory')}\n\n"
                                            f"Memories-Added: {shown}\n",
                                 paths=tuple(planned))
            report = replace(report, commit=sha)
    report = replace(report, ids=tuple(m.id for m in fresh))
    if writes and index is not None:
        try:                     # the new memories are searchable now (one segment re-read)
            index.sync()
        except Exception as exc:  # the files are the truth; the next search catches up
            import warnings

            warnings.warn(f"search index not updated: {exc}", stacklevel=3)
    return fresh, report



@dataclass
class AddOutcome:
    """What one ``add`` did, interrupted or not: the ``report`` (None when interrupted), the
    ``interrupt`` (the ``KeyboardInterrupt`` or ``Terminated`` that cut it short, else None)
    and ``added``: memories committed before the interrupt (None: none, or it cannot be
    told)."""

    report: AddReport | None
    interrupt: BaseException | None = None
    added: int | None = None


def add_until_interrupted(store: Store, data: bytes,
                          before_vectors: Callable[[int], None] | None = None) -> AddOutcome:
    """``add_memories`` that reports a Ctrl-C or SIGTERM instead of raising it, with what the
    add had committed before it landed (an add commits once: all of it or nothing). Raises
    as ``add_memories`` otherwise. With the semantic extra, the new memories' vectors are
    written after the add (``index.refresh.refresh_vectors``: a person's ``scenes add``, so a
    recall after it does not wait for them; a serving worker's add path writes none, no
    recall runs there, and any recall syncs before it searches). ``before_vectors(added)``
    is called when the add is committed and its vectors are next (a face says what takes
    the time: 10,000 new texts take minutes)."""
    before = store.load_state().next_seq
    try:
        report = add_memories(store, data)
        if report.added:
            from scene_engine.index.refresh import refresh_vectors

            if before_vectors is not None:
                before_vectors(report.added)
            refresh_vectors(store, since=before)   # the new memories' vectors
        return AddOutcome(report)
    except (KeyboardInterrupt, Terminated) as exc:
        try:
            now = store.load_state().next_seq
        except Exception:   # cannot tell: report the interrupt as it is
            return AddOutcome(None, exc)
        return AddOutcome(None, exc, now - before if now > before else None)


def add_json(report: AddReport) -> dict:
    """An ``AddReport`` as ``add --json`` gives it."""
    return {"added": report.added, "ids": list(report.ids), "known": report.known,
            "duplicates": report.duplicates, "commit": report.commit or None}
