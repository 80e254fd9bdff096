"""Store-level operations that combine the pieces: add memories, status, backend choice.

The CLI is a thin layer over these functions, and integrations can call them directly.
"""

from __future__ import annotations

from . import history, interrupts, recovery
from .lock import store_lock
from .memories import AddReport, Journal, parse_input
from .store import Store


def add_memories(store: Store, data: bytes) -> AddReport:
    """Validate ``data`` (JSON list or JSONL) whole, append the new memories, commit.

    The new memories are indexed for search and recall before it returns (a failure there
    only costs freshness: the next search catches up). Raises ``MemoryInputError`` (nothing
    added) for any bad record, ``JournalError`` for a torn journal. Known ids are skipped; the same content at the same instant as a memory
    already known (or earlier in the input) becomes an alias of it (the counts say how many).
    """
    memories = parse_input(data)
    with store_lock(store.lock_path):
        repo = history.open_repo(store.root)
        recovery.recover(store, repo)
        state = store.load_state()
        journal = Journal(store.memories_dir)
        fresh, report, writes = journal.plan_append(memories, state.next_seq)
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
                history.commit(repo, f"add: {len(fresh)} memories\n\nMemories-Added: "
                                     f"{shown}\n",
                               paths=("memories", ".scene-engine/state.json"))
            recovery.end(store)
    if report.added:
        from .batch import refresh_index

        refresh_index(store)     # the new memories are searchable now (one segment re-read)
    return report


def make_backend(name: str, model: str = "", api_base: str = ""):
    """``offline`` (default) or ``llm`` with a litellm model name; raises ``ValueError``."""
    if name == "offline" and not model:
        from .offline import OfflineBackend

        return OfflineBackend()
    if name in ("llm", "offline"):
        from .llm_backend import LLMBackend

        return LLMBackend(model=model, api_base=api_base or None)
    raise ValueError(f"unknown backend {name!r}: use offline or llm")


def status(store: Store) -> dict:
    """``{"pending", "scenes", "batches", "last_batch", "memories", "forgotten", "persona",
    "root"}`` for the store (counts; ``last_batch`` is a number or None)."""
    state = store.load_state()
    return {"pending": state.pending, "scenes": len(store.scene_names()),
            "batches": state.batch, "last_batch": state.batch or None,
            "memories": state.next_seq, "forgotten": len(state.forgotten),
            "persona": store.persona_path.exists(),
            "root": str(store.root)}
