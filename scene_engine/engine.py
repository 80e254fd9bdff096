"""Store-level operations that combine the pieces: add memories, status, backend choice.

The CLI is a thin layer over these functions, and integrations can call them directly.
"""

from __future__ import annotations

from . import history, inbox, interrupts, recovery
from .lock import store_lock
from .memories import AddReport, Journal, MemoryInputError, parse_lines
from .numbering import check_numbering
from .plural import count
from .store import Store


def add_memories(store: Store, data: bytes | None,
                 lock_timeout: float | None = None) -> AddReport:
    """Validate ``data`` (JSON list or JSONL) whole, append the new memories, commit.

    Memories waiting in the inbox (``inbox``) are appended first, each file its own commit;
    ``data`` None appends just those. The new memories are indexed for search and recall
    before it returns (a failure there only costs freshness: the next search catches up).
    ``lock_timeout``: seconds to wait for the store (None: ``lock.lock_timeout()``).

    Raises ``MemoryInputError`` (nothing added) for any bad record, and for a known id sent
    with another memory (another content, scope, role or type: a memory is never rewritten),
    ``JournalError`` for a torn journal, ``LockBusyError`` when the store stays busy. Known ids
    sent with the same memory are skipped; the same memory (content, instant, scope, role and
    type) as one already known (or earlier in the input) becomes an alias of it (the counts
    and ``same_as`` say which). The report is of ``data`` alone.
    """
    memories = parse_lines(data) if data is not None else []
    report = AddReport(added=0, known=0, duplicates=0)
    with store_lock(store.lock_path, timeout=lock_timeout):
        repo = history.open_repo(store.root)
        recovery.recover(store, repo)
        check_numbering(store)
        journal = Journal(store.memories_dir)
        index = _synced_index(store)
        try:
            added = _drain_inbox(store, repo, journal, index)
            if memories:
                _, report = _append(store, repo, journal, memories, store.load_state(), index)
                added += report.added
        finally:
            if index is not None:
                index.close()
    if added and index is None:
        from .batch import refresh_index

        refresh_index(store)     # the new memories are searchable now (one segment re-read)
    return report


def drain_inbox(store: Store, lock_timeout: float | None = None) -> int:
    """Append the memories waiting in the inbox to the journal (``add_memories`` with no new
    data). Returns how many files were drained. Raises as ``add_memories``."""
    before = len(inbox.waiting(store))
    if before:
        add_memories(store, None, lock_timeout=lock_timeout)
    return before - len(inbox.waiting(store))


def _drain_inbox(store: Store, repo, journal: Journal, index) -> int:
    """Append each inbox file (under the store lock), oldest first; returns memories added.
    A file that no longer validates is set aside as ``.bad`` (said once, never retried)."""
    import warnings

    added = 0
    for path in inbox.waiting(store):
        try:   # a known id with another memory is refused here as by `scenes add`
            memories = parse_lines(path.read_bytes())
            _, report = _append(store, repo, journal, memories, store.load_state(), index)
        except (MemoryInputError, OSError) as exc:
            warnings.warn(f"{path}: set aside, not added ({exc})", stacklevel=3)
            path.replace(path.with_suffix(".bad"))
            continue
        added += report.added
        path.unlink()          # a crash before this re-adds the file: its ids are known then
    return added


def _synced_index(store: Store):
    """The store's index in step with the journal (to look ids up in), or None when it cannot
    be (no index, unreadable, a journal segment it could not read): the journal is read then."""
    from .index import for_store

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


def _append(store: Store, repo, journal: Journal, lined, state, index):
    """Plan, write and commit the new memories (``[(line, Memory)]``, under the store lock);
    index them when ``index`` is given. Returns (fresh memories, ``AddReport``). Raises
    ``MemoryInputError`` naming the line of each known id sent with another memory (nothing
    written)."""
    fresh, report, writes = journal.plan_append([m for _, m in lined], state.next_seq,
                                                catalog=index)
    if report.conflicts:
        raise MemoryInputError([(lined[position][0], message)
                                for position, message in report.conflicts])
    # Engine files only, restored whatever they hold: their text is not needed.
    planned = dict.fromkeys([*(str(p.relative_to(store.root)) for p in writes),
                             ".scene-engine/state.json"])
    with interrupts.critical(repo):   # Ctrl-C waits until the add is committed
        recovery.begin(store, planned, repo)
        journal.write(writes)
        if writes:
            store.save_state(state.model_copy(
                update={"next_seq": state.next_seq + len(fresh)}))
            # Only the journal and state: a hand edit waiting under scenes/ gets its own
            # "hand edit" commit from the next batch, not a place in this one.
            shown = (f"{fresh[0].id} .. {fresh[-1].id} ({len(fresh)})" if fresh
                     else "none (known ids added as aliases)")
            history.commit(repo, f"add: {count(len(fresh), 'memory')}\n\nMemories-Added: "
                                 f"{shown}\n",
                           paths=("memories", ".scene-engine/state.json"))
        recovery.end(store)
    if writes and index is not None:
        try:                     # the new memories are searchable now (one segment re-read)
            index.sync()
        except Exception as exc:  # the files are the truth; the next search catches up
            import warnings

            warnings.warn(f"search index not updated: {exc}", stacklevel=3)
    return fresh, report


def make_backend(name: str, model: str = "", api_base: str = ""):
    """``offline`` (default) or ``llm`` with a litellm model name; raises ``ValueError``."""
    if name == "offline" and not model:
        from .offline import OfflineBackend

        return OfflineBackend()
    if name in ("llm", "offline"):
        from .llm_backend import LLMBackend

        return LLMBackend(model=model, api_base=api_base or None)
    raise ValueError(f"unknown backend {name!r}: use offline or llm")


def configured_backend(config, backend_name: str | None = None, model: str | None = None,
                       api_base: str | None = None, call_timeout: float | None = None,
                       batch_timeout: float | None = None):
    """The backend the options name, else the one ``config`` (``config.Config``) names, with
    the config's limits (``max_output_tokens``, ``call_timeout``, ``batch_timeout``; an option
    given wins) on a model backend. Raises ``ValueError`` for an unknown backend."""
    from dataclasses import replace

    model = model if model is not None else config.model
    name = backend_name or ("llm" if model else config.backend)
    backend = make_backend(name, model or "", api_base if api_base is not None
                           else config.api_base)
    if hasattr(backend, "budget"):
        backend.budget = replace(
            backend.budget, max_output_tokens=config.max_output_tokens,
            call_timeout=call_timeout or config.call_timeout,
            max_seconds=batch_timeout or config.batch_timeout)
    return backend


def status(store: Store) -> dict:
    """``{"pending", "scenes", "batches", "last_batch", "memories", "forgotten", "persona",
    "queued", "review", "root", "warnings"}`` for the store (counts; ``last_batch`` is a
    number or None; ``queued``: memories waiting in the inbox for the store; ``review``:
    candidate pairs waiting in ``scenes review``, from the ledger's readable lines;
    ``warnings``: each line of the journal or the extraction ledger that cannot be read,
    by file and line: what it holds is missing from searches, recall and the counts)."""
    from .extraction.events import read_intact
    from .extraction.review import open_pairs

    state = store.load_state()
    events, unread = read_intact(store)
    return {"pending": state.pending, "scenes": len(store.scene_names()),
            "batches": state.batch, "last_batch": state.batch or None,
            "memories": state.next_seq, "forgotten": len(state.forgotten),
            "persona": store.persona_path.exists(), "queued": inbox.queued(store),
            "review": len(open_pairs(events)), "root": str(store.root),
            "warnings": journal_problems(store) + unread}


def journal_problems(store: Store) -> list[str]:
    """A message for each journal line that is not a whole memory record (file and line in
    it), from the search index, which keeps them (one ``stat`` a segment when nothing
    changed); read from the journal itself when no index can be opened."""
    from .index import IndexUnavailable, read_index

    try:
        index, _ = read_index(store)
    except IndexUnavailable:
        return Journal(store.memories_dir).intact()[1]
    try:
        return index.journal_problems()
    finally:
        index.close()
