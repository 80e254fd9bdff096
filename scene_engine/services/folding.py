"""Folding in the background: batches run without anyone waiting for them.

An agent that remembers through the MCP server, or a person who runs ``scenes add`` now and
then, should not have to run ``scenes run``. ``FoldWorker`` watches the store's pending count
and runs batches (``services.run.run_pending``, which holds the store lock per batch, like ``scenes
run``) when either trigger fires:

- ``fold_every`` memories are pending (config, default 20), or
- memories are pending and none was added for ``fold_idle`` seconds (default 300).

"Added" is seen in the files (the newest journal segment's modification time), so memories
added by another process count as well as those this process adds (``added()`` only wakes
the worker sooner). A failed batch writes nothing and leaves its memories pending (the batch
transaction); the worker logs it and tries again at the next trigger: when another memory is
added, or after ``fold_idle`` seconds (doubled for each failure in a row, up to an hour). It
never spins on a failure.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Self

from scene_engine.core.errors import plain_error
from scene_engine.core.plural import count
from scene_engine.store.inbox import queued, waiting
from scene_engine.store.store import Store

if TYPE_CHECKING:
    from scene_engine.batch.contract import Backend, BatchResult

log = logging.getLogger(__name__)
POLL_SECONDS = 1.0       # how often the pending count is looked at (one small JSON read)
MAX_RETRY_SECONDS = 3600  # a failing fold is tried at least this often
MAX_REASON = 600          # characters of a failure's reason in its log line


@dataclass
class FoldStats:
    """What the worker did: ``batches`` committed, ``failures`` (one line each, newest last),
    ``runs`` (times a trigger fired)."""

    batches: int = 0
    runs: int = 0
    failures: list[str] = field(default_factory=list)


class _DaemonLoop:
    """A daemon thread running ``_loop`` until ``stop()``: the life cycle ``FoldWorker`` and
    ``InboxJoiner`` share. ``_wake`` cuts a wait short; ``_stop`` ends the loop after the
    step in progress. Use ``start()``/``stop()`` or ``with``."""

    THREAD_NAME = "scene-engine"

    def __init__(self) -> None:
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.THREAD_NAME,
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the thread to stop after the step it is in, and wait ``timeout`` seconds."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        raise NotImplementedError


class FoldWorker(_DaemonLoop):
    """A daemon thread that folds pending memories of ``store`` when a trigger fires.

    ``backend``: a callable giving the backend to fold with (``engine.make_backend``; called at
    each run so a changed config is honoured). ``fold_every``/``fold_idle``: the triggers
    (None: the store's config). ``on_event(text)``: told of each batch and failure (a log
    line). Use ``start()``/``stop()`` or ``with``.
    """

    THREAD_NAME = "scene-engine-fold"

    def __init__(self, store: Store, backend: Callable[[], Backend], *,
                 fold_every: int | None = None, fold_idle: float | None = None,
                 on_event: Callable[[str], None] | None = None):
        config = store.config
        self.store = store
        self.backend = backend
        self.fold_every = fold_every or config.fold_every
        self.fold_idle = fold_idle if fold_idle is not None else config.fold_idle
        self.on_event = on_event or (lambda text: log.info("%s", text))
        self.stats = FoldStats()
        super().__init__()
        self._failed_at: tuple[float, float] | None = None   # (newest add, when) of a failure
        self._failures_in_row = 0

    def added(self) -> None:
        """Memories were just added: look at the triggers now rather than within a second."""
        self._wake.set()

    def due(self, now: float | None = None) -> bool:
        """True when a trigger fires: enough memories pending, or pending ones idle long
        enough (``now``: wall-clock seconds, for tests). A run that failed is tried again only
        after another memory is added or another ``fold_idle`` passes."""
        pending = self.store.load_state().pending + queued(self.store)
        if not pending:
            return False
        now = time.time() if now is None else now
        newest = self._newest_add()
        failed = self._failed_at
        if failed and newest <= failed[0] and now - failed[1] < self._retry_after():
            return False            # failed, and nothing new since: wait
        return pending >= self.fold_every or now - newest >= self.fold_idle

    def run_once(self) -> int:
        """Fold everything pending now (the trigger is not checked). Returns the batches
        committed; a failure is reported through ``on_event`` and kept in ``stats``."""
        from scene_engine.services.add import drain_inbox
        from scene_engine.services.run import run_pending

        self.stats.runs += 1
        done: list[BatchResult] = []
        try:
            drain_inbox(self.store)      # memories remembered while a batch held the store
            run_pending(self.store, self.backend(), on_batch=done.append)
            self._failed_at = None
            self._failures_in_row = 0
        except Exception as exc:     # a batch failed (or the lock was busy): retried later
            self._failed_at = (self._newest_add(), time.time())
            self._failures_in_row += 1
            reason = " ".join(plain_error(exc).split())   # the whole reason, on one line
            line = f"folding failed after {count(len(done), 'batch')}: {reason[:MAX_REASON]}"
            self.stats.failures.append(line)
            self.on_event(f"{line}; the memories stay pending; next try when a memory is "
                          f"added or in {self._retry_after():g} s")

        for result in done:
            self.on_event(f"batch {result.number}: {count(len(result.memory_ids), 'memory')} "
                          "folded")
        self.stats.batches += len(done)
        return len(done)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.due():
                    self.run_once()
            except Exception as exc:   # an unreadable state.json: say so, keep watching
                self.on_event(f"folding paused: {exc}")
            self._wake.wait(POLL_SECONDS)
            self._wake.clear()

    def _retry_after(self) -> float:
        """Seconds to wait after a failure with nothing new added: ``fold_idle``, doubled for
        each failure in a row (a model that is down is not asked every few seconds), at most
        ``MAX_RETRY_SECONDS``."""
        return min(self.fold_idle * 2 ** max(self._failures_in_row - 1, 0), MAX_RETRY_SECONDS)

    def _newest_add(self) -> float:
        """Modification time (s) of the newest journal segment: when memories were last
        added, by any process (0 when there is none)."""
        newest = 0.0
        with contextlib.suppress(OSError), os.scandir(self.store.memories_dir) as it:
            for entry in it:
                if entry.name.endswith(".jsonl"):
                    with contextlib.suppress(OSError):
                        newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
        return newest


JOIN_POLL = 1.0        # seconds between looks at the inbox, and the wait for the lock each time



MAX_JOIN_RETRY = 300   # seconds at most between tries after a join failed (not a busy store)



class InboxJoiner(_DaemonLoop):
    """A daemon thread that appends the inbox to the journal as soon as the store is free.

    A memory put in the inbox while a batch held the store must not wait for the next fold
    trigger (``fold_idle`` is minutes): each ``JOIN_POLL`` seconds, or at once after
    ``wake()``, waiting files are drained (``engine.drain_inbox``) with a lock wait of
    ``JOIN_POLL`` seconds, so the join follows the batch's end within about a second. A busy
    store is simply tried again; any other failure is told to ``on_event(text)`` once and
    retried after a pause that doubles up to ``MAX_JOIN_RETRY`` (a torn journal is not hammered).
    Use ``start()``/``stop()`` or ``with``.
    """

    THREAD_NAME = "scene-engine-inbox"

    def __init__(self, store: Store, on_event: Callable[[str], None] | None = None):
        self.store = store
        self.on_event = on_event or (lambda text: log.warning("%s", text))
        self.joined = 0                    # inbox files appended so far
        super().__init__()
        self._retry_at = 0.0               # monotonic time before which a failed join waits
        self._failures = 0

    def wake(self) -> None:
        """A memory was just put in the inbox: try to join it now."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if waiting(self.store) and time.monotonic() >= self._retry_at:
                self.join_once()
            self._wake.wait(JOIN_POLL)
            self._wake.clear()

    def join_once(self) -> int:
        """Drain the inbox if the store frees within ``JOIN_POLL`` seconds. Returns the files
        appended (0 when the store stayed busy or the join failed)."""
        from scene_engine.services.add import drain_inbox
        from scene_engine.store.lock import LockBusyError

        try:
            done = drain_inbox(self.store, lock_timeout=JOIN_POLL)
        except LockBusyError:
            return 0                       # a batch still holds the store: next turn
        except Exception as exc:           # e.g. a torn journal: say so, wait, try again
            self._failures += 1
            pause = min(JOIN_POLL * 2 ** self._failures, MAX_JOIN_RETRY)
            self._retry_at = time.monotonic() + pause
            if self._failures == 1:
                from scene_engine.core.errors import plain_error

                self.on_event(f"the inbox cannot join the journal: "
                              f"{' '.join(plain_error(exc).split())}; its memories wait there "
                              f"safely and it is tried again (at least every "
                              f"{MAX_JOIN_RETRY} s)")
            return 0
        self._failures, self._retry_at = 0, 0.0
        self.joined += done
        return done
