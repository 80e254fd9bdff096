"""Fold what is pending: batches until nothing is left, the persona kept fresh
(docs/DESIGN.md "A batch", step 8).

``run_pending`` is the loop: let a model backend check its set-up before any batch takes the
lock (a set-up mistake writes nothing); then one ``batch.transaction.run_batch`` after
another, each its own commit; the persona regenerated when it is due: by the batch itself, in
its commit, for a backend that is not a model (``persona.in_batch``), else after it in a
commit of its own; when nothing is left, look once more for a persona naming scenes another
run renamed or merged away.

``FoldRun`` is one ``scenes run`` (or ``ingest``) around that loop, for a face that shows
progress: the inbox drained first, the batches planned, the set-up checked under a display
step, the model's events handed to a listener, the failure or the interrupt said as what
stays committed and what is pending.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scene_engine.batch.contract import Backend, BatchError, BatchResult, ModelBackend
from scene_engine.batch.transaction import run_batch
from scene_engine.core.interrupts import received
from scene_engine.core.plural import count
from scene_engine.services import persona
from scene_engine.services.add import drain_inbox

if TYPE_CHECKING:
    from scene_engine.store.store import Store


def _prepare(store: Store, backend: Backend) -> None:
    """Let a model backend check its set-up (``prepare()``: key, address) before the first
    batch takes the lock, so a set-up mistake writes nothing at all; raises ``BatchError``."""
    if not isinstance(backend, ModelBackend) or not store.load_state().pending:
        return
    try:
        backend.prepare()
    except Exception as exc:   # ModelError: one line for a person, already
        raise BatchError(f"{exc}; nothing written") from exc


def _check_arguments(store, backend, max_batches, size, on_batch) -> None:
    """``run_pending``'s arguments in the Python API's words (``InputError``, exit 2)."""
    from scene_engine.core.checks import check_number
    from scene_engine.core.errors import InputError
    from scene_engine.store.store import Store

    if not isinstance(store, Store):
        raise InputError(f"run_pending needs an open store (scene_engine.open_store(DIR)), "
                         f"not {store!r}")
    if not isinstance(backend, Backend):
        raise InputError(f"run_pending needs a backend (scene_engine.make_backend(...)), "
                         f"not {backend!r}")
    for value, what in ((max_batches, "max_batches"), (size, "size")):
        if value is not None:
            check_number(value, what, 1, 1_000_000)
    if on_batch is not None and not callable(on_batch):
        raise InputError(f"on_batch must be a function of one batch result, not {on_batch!r}")


def run_pending(store: Store, backend: Backend, max_batches: int | None = None,
                size: int | None = None,
                on_batch: Callable[[BatchResult], None] | None = None) -> list[BatchResult]:
    """Run batches until nothing is pending (or ``max_batches``); regenerate the persona when due.

    ``on_batch(result)`` is called after each committed batch (progress bars). Raises
    ``BatchError`` on the first failed batch; the batches before it stay committed, and
    ``InputError`` (nothing run) for arguments of the wrong kind: a store that is not open,
    a backend that is not one (``make_backend``), a count that is not a whole number.
    """
    _check_arguments(store, backend, max_batches, size, on_batch)
    _prepare(store, backend)
    results: list[BatchResult] = []
    persona_kept = False
    while max_batches is None or len(results) < max_batches:
        # A backend that is not a model writes the extractive persona in the batch's own
        # commit when it is due (issue 23: no second commit for most batches).
        refresh = None if persona_kept or isinstance(backend, ModelBackend) \
            else persona.in_batch(store)
        result = run_batch(store, backend, size=size, persona=refresh)
        if result is None:
            # Nothing left, maybe because another run took it: that run's last batch may
            # have renamed or merged a scene this persona names, and its own refresh may
            # have found the store busy with this one. Look once more.
            reason = persona.persona_reason(store, False) if not persona_kept else None
            if reason == persona.GONE:
                persona.regenerate(store, backend, reason)
            break
        if on_batch:     # said at once: an interrupt in the persona below finds it said
            on_batch(result)
        # Kept without its ledger (it is in the batch's commit): a run of 100,000 memories
        # does not hold every memory's fate in memory.
        results.append(replace(result, ledger=None))
        reason = persona.persona_reason(store, result.persona_requested)
        if reason and not persona_kept:
            # "" = kept a hand-edited persona (it warned once); don't ask again this run.
            persona_kept = not persona.regenerate(store, backend, reason)
    return results


class FoldRun:
    """One ``scenes run``: the pending memories folded batch by batch, for a face to show.

    Made with the store, the backend (``services.backends``), the batch ``size`` (None: the
    config's) and ``max_batches``; the inbox is drained at once (memories an agent queued
    while the store was busy). Then ``prepare(step)``, ``run(on_batch, listener)`` and
    ``report(failure)``; after an interrupt, ``interrupted()`` says what stays.
    """

    def __init__(self, store: Store, backend: Backend, size: int | None = None,
                 max_batches: int | None = None):
        self.store, self.backend, self.max_batches = store, backend, max_batches
        drain_inbox(store)
        self.before = store.load_state()
        self.size = size or store.config.batch_size
        self.pending = self.before.pending
        self.first_batch = self.before.batch + 1
        total = -(-self.pending // self.size) if self.pending else 0
        self.total = min(total, max_batches) if max_batches else total   # batches planned
        self.committed: list[BatchResult] = []

    def prepare(self, step: Callable[[str], AbstractContextManager[Any]] = (
                lambda _: contextlib.nullcontext())) -> str | None:
        """Check a model backend's set-up and load its client before any batch starts, each
        under ``step(what)`` (a display's "checking the model set-up"); returns the problem
        as one line (nothing is written then), else None."""
        if not self.pending or not isinstance(self.backend, ModelBackend):
            return None
        from scene_engine.llm.loop import ModelError, load_client

        try:
            with step("checking the model set-up"):
                self.backend.prepare()
        except ModelError as exc:
            return f"{exc}; nothing written, {count(self.pending, 'memory')} pending"
        with step("loading the model client (litellm)"):
            load_client()
        return None

    def run(self, on_batch: Callable[[BatchResult], None] | None = None,
            listener: Callable[[str, dict], None] | None = None) -> str | None:
        """Fold until nothing is pending or ``max_batches`` ran; ``on_batch(result)`` after
        each commit, ``listener(kind, data)`` for a model backend's events. Returns why it
        stopped early (a failed batch: one message, nothing of that batch written), else
        None. A batch that failed because git died of the same Ctrl-C raises the interrupt."""
        if listener is not None and isinstance(self.backend, ModelBackend):
            self.backend.listener = listener

        def committed(result: BatchResult) -> None:
            self.committed.append(replace(result, ledger=None))   # its commit keeps it
            if on_batch:
                on_batch(result)
        try:
            run_pending(self.store, self.backend, max_batches=self.max_batches, size=self.size,
                        on_batch=committed)
        except BatchError as exc:
            interrupt = received()
            if interrupt is not None:   # git died of the same Ctrl-C: say it was that
                raise interrupt from exc
            return str(exc)
        return None

    def report(self, failure: str | None = None, head: dict | None = None) -> dict:
        """``run --json`` (and ``ingest --json``): ``head`` (what came in first), then each
        committed batch (number, commit, memory ids, counts, tokens, cost), what is pending,
        the scenes, the failure."""
        state = self.store.load_state()
        batches = [{"batch": r.number, "commit": r.commit, "memories": r.memory_ids,
                    "counts": r.counts, "tokens": r.tokens, "cost": r.cost}
                   for r in self.committed]
        return (head or {}) | {"committed": batches, "pending": state.pending,
                               "scenes": len(self.store.scene_names()), "failed": failure}

    def summary(self) -> str:
        """One line: batches committed, memories pending, scenes."""
        return (f"{count(len(self.committed), 'batch')} committed; "
                f"{count(self.store.load_state().pending, 'memory')} pending; "
                f"{count(len(self.store.scene_names()), 'scene')}")

    def failed(self, failure: str) -> str:
        """``failure`` with what stays: the batches committed before it, what is pending."""
        return (f"{failure}\n{count(len(self.committed), 'batch')} committed before the "
                f"failure; {count(self.store.load_state().pending, 'memory')} still pending")

    def interrupted(self) -> str:
        """What an interrupted run leaves: the batch in progress wrote nothing (it was never
        applied, or it was rolled back), the batches committed before stay. The count comes
        from the state (a batch can commit just before the interrupt is delivered), else
        from the batches reported; a batch committed as the interrupt came, before its line
        was printed, is named apart, so the count agrees with the lines shown."""
        shown = len(self.committed)
        try:
            done = max(self.store.load_state().batch - self.before.batch, shown)
        except Exception:
            done = shown
        kept = (f"{count(done, 'batch')} committed before the interrupt stay committed"
                if done else "no batch was committed before it")
        if done > shown:
            unlisted = [str(self.before.batch + n) for n in range(shown + 1, done + 1)]
            one = len(unlisted) == 1
            late = (f"{'batch' if one else 'batches'} {' and '.join(unlisted)}, committed as "
                    f"the interrupt came (`scenes log` shows {'it' if one else 'them'}),")
            kept = (f"{count(shown, 'batch')} listed above and {late}" if shown else late) + \
                " stay committed"
        return (f"the batch in progress was rolled back (nothing of it was written); {kept}"
                f"{pending_note(self.store)}")


def pending_note(store: Store) -> str:
    """``"; N memories pending"``, or "" when the state cannot be read (after an interrupt
    nothing more may go wrong)."""
    try:
        return f"; {count(store.load_state().pending, 'memory')} pending"
    except Exception:
        return ""
