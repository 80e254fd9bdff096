"""Fold what is pending: batches until nothing is left, the persona kept fresh
(docs/DESIGN.md "A batch", step 8).

Order: let a model backend check its set-up before any batch takes the lock (a set-up
mistake writes nothing); then one ``batch.transaction.run_batch`` after another, each its
own commit; after each, regenerate the persona when it is due; when nothing is left, look
once more for a persona naming scenes another run renamed or merged away.
"""

from __future__ import annotations

from scene_engine.batch.contract import BatchError, BatchResult
from scene_engine.batch.transaction import run_batch
from scene_engine.store.store import Store


def _prepare(store: Store, backend) -> None:
    """Let a model backend check its set-up (``prepare()``: key, address) before the first
    batch takes the lock, so a set-up mistake writes nothing at all; raises ``BatchError``."""
    prepare = getattr(backend, "prepare", None)
    if prepare is None or not store.load_state().pending:
        return
    try:
        prepare()
    except Exception as exc:   # ModelError: one line for a person, already
        raise BatchError(f"{exc}; nothing written") from exc



def run_pending(store: Store, backend, max_batches: int | None = None,
                size: int | None = None, on_batch=None) -> list[BatchResult]:
    """Run batches until nothing is pending (or ``max_batches``); regenerate the persona when due.

    ``on_batch(result)`` is called after each committed batch (progress bars). Raises
    ``BatchError`` on the first failed batch; the batches before it stay committed.
    """
    from scene_engine.services.persona import GONE, persona_reason, regenerate

    _prepare(store, backend)
    results, persona_kept = [], False
    while max_batches is None or len(results) < max_batches:
        result = run_batch(store, backend, size=size)
        if result is None:
            # Nothing left, maybe because another run took it: that run's last batch may
            # have renamed or merged a scene this persona names, and its own refresh may
            # have found the store busy with this one. Look once more.
            reason = persona_reason(store, False) if not persona_kept else None
            if reason == GONE:
                regenerate(store, backend, reason)
            break
        results.append(result)
        reason = persona_reason(store, result.persona_requested)
        if reason and not persona_kept:
            # "" = kept a hand-edited persona (it warned once); don't ask again this run.
            persona_kept = not regenerate(store, backend, reason)
        if on_batch:
            on_batch(result)
    return results
