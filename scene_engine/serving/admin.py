"""Running the pieces: a store provisioned, a worker run, the queue shown, a failed job queued
again (docs/DESIGN.md "Serving many stores"; the commands ``scenes provision``, ``worker``,
``queue`` and ``serve`` are faces over these).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scene_engine.core.interrupts import SIGNALS
from scene_engine.serving import database, jobs
from scene_engine.serving.fold import WorkerSettings
from scene_engine.serving.remote import create_bare, seed, store_url

log = logging.getLogger(__name__)
RESTART_WAIT = 2.0       # seconds before a worker whose database went away starts again


def provision(database_url: str, git: str, repos: Path, name: str) -> dict:
    """Make store ``name``: its bare repository under ``repos`` (the git server's base path),
    a new empty store pushed to it at ``git``, its token registered in Postgres (the schema
    made first when missing). Returns ``{"store", "url", "token", "commit"}``; the token is
    shown this once and kept only as its sha256. Raises ``InputError`` (a bad or taken
    name), ``ServingError`` (Postgres or git)."""
    import shutil

    database.check_name(name)
    jobs.migrate(database_url)
    with database.connect(database_url) as conn:
        if name in database.stores(conn):
            from scene_engine.core.errors import InputError

            raise InputError(f"a store named {name!r} is already registered (a new token: "
                             f"scenes provision {name} --new-token)")
    bare = create_bare(repos, name)
    try:
        url = store_url(git, name)
        with tempfile.TemporaryDirectory(prefix="scene-provision-") as work:
            commit = seed(url, Path(work) / name)
        token = secrets.token_urlsafe(32)
        with database.connect(database_url) as conn:
            database.add_store(conn, name, token)
    except BaseException:      # nothing half made: the same command may simply run again
        shutil.rmtree(bare, ignore_errors=True)
        raise
    return {"store": name, "url": url, "token": token, "commit": commit}


def new_token(database_url: str, name: str) -> dict:
    """A new token for registered store ``name`` (the old one stops working at once):
    ``{"store", "token"}``, the token shown this once. Raises ``InputError`` for a store that
    is not registered, ``ServingError``."""
    token = secrets.token_urlsafe(32)
    with database.connect(database_url) as conn:
        database.new_token(conn, name, token)
    return {"store": name, "token": token}


def queue(database_url: str) -> list[dict]:
    """``database.queue_view`` of every store (the schema made first when missing)."""
    jobs.migrate(database_url)
    with database.connect(database_url) as conn:
        return database.queue_view(conn, jobs.FOLD_TASK)


def retry_failed(database_url: str, store: str | None = None) -> int:
    """Queue again the failed fold jobs (of ``store``, or of every store): each failed job is
    marked cancelled and one new job queued per store (or the one already waiting kept: the
    sweeper may have queued it). Returns how many stores had failed jobs, each with a job
    waiting now. Raises ``InputError`` for a store that is not registered."""
    with database.connect(database_url) as conn:
        if store is not None and database.check_name(store) not in database.stores(conn):
            from scene_engine.core.errors import InputError

            raise InputError(f"no store named {store!r} is registered")
        rows = conn.execute(
            "UPDATE procrastinate_jobs SET status = 'cancelled' WHERE task_name = %s AND "
            "status = 'failed' AND (%s::text IS NULL OR args->>'store' = %s) "
            "RETURNING args->>'store'", (jobs.FOLD_TASK, store, store)).fetchall()
        names = sorted({r[0] for r in rows})
        app = jobs.make_app(database_url, sync=True)
        with app.open():
            for each in names:
                jobs.defer_fold(app, conn, each)
    return len(names)


def fold_now(database_url: str, store: str) -> int:
    """Queue ``store``'s fold job now (after a push by hand, say); 1 when queued, 0 when one
    already waits. Raises ``InputError`` for a store that is not registered."""
    from scene_engine.core.errors import InputError

    database.check_name(store)
    with database.connect(database_url) as conn:
        if store not in database.stores(conn):
            raise InputError(f"no store named {store!r} is registered")
        app = jobs.make_app(database_url, sync=True)
        with app.open():
            return jobs.defer_fold(app, conn, store)


def run_worker(settings: WorkerSettings, name: str | None = None, fold_idle: float = 300.0,
               once: bool = False, stalled_after: float = jobs.STALLED_AFTER) -> None:
    """Run a procrastinate worker of the fold queue until SIGINT or SIGTERM (``once``: until
    the queue is empty). ``fold_idle``: seconds an inbox may wait before the sweeper queues
    its store; ``stalled_after``: seconds without a worker's heartbeat before the recovery
    retries its job (it beats four times in that span). A stop for any other reason (a lost
    database: Postgres restarted; procrastinate then stops its worker) starts it again after
    ``RESTART_WAIT`` seconds, its running job retried by the stalled-job recovery.

    Signals (``WorkerStop``, main thread): the first lets the running job finish
    (procrastinate's graceful shutdown), then returns, whatever that stop raised and
    wherever it came (starting, between restarts); a second exits the process at once with
    130 (SIGINT) or 143 (SIGTERM). Raises ``ServingError`` when ``once`` and the worker
    failed."""
    import asyncio

    jobs.migrate(settings.database)
    settings.cache.mkdir(parents=True, exist_ok=True)
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    options = {"queues": [jobs.QUEUE], "name": name,
               "concurrency": 1, "wait": not once, "delete_jobs": "successful",
               "additional_context": {"settings": settings, "fold_idle": fold_idle,
                                      "stalled_after": stalled_after},
               "update_heartbeat_interval": stalled_after / 4,
               "stalled_worker_timeout": stalled_after, "install_signal_handlers": False}
    stop = WorkerStop(name)
    with stop.installed():
        while not stop.requested:
            try:
                asyncio.run(_one_run(jobs.make_app(settings.database), options, stop))
                if stop.requested or once:
                    return
                why = "procrastinate stopped it (its database went away)"
            except Exception as exc:
                if stop.requested:      # asked to stop: an error while stopping ends it too
                    log.warning("worker %s: its stop ended with an error: %s", name,
                                database.first_line(exc))
                    return
                if once:
                    raise database.ServingError(f"the worker stopped: {exc}") from exc
                why = database.first_line(exc)
            log.warning("worker %s stopped: %s; starting again in %g s", name, why, RESTART_WAIT)
            stop.sleep(RESTART_WAIT)


class WorkerStop:
    """A worker's SIGINT and SIGTERM handler, for the whole of ``run_worker`` (its restarts
    included), so a stop once asked for is never lost: not to an error raised while stopping
    (a query cancelled half-way reports a database error), not to a signal landing between
    two runs (procrastinate's own handlers exist only while its worker runs).

    The first signal sets ``requested`` and cancels the running ``_one_run`` task (the
    cancellation procrastinate documents as its graceful stop); the second logs one line and
    exits the process at once (``os._exit``: the fold job's batch transaction leaves its
    store as before or after the batch, and the stalled-job recovery retries it)."""

    def __init__(self, name: str):
        self.name = name
        self.requested = False
        self._loop: Any = None
        self._task: Any = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Install the handler for SIGINT and SIGTERM (main thread; elsewhere a no-op) and
        put the previous ones back on leaving."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
        for sig in SIGNALS:
            signal.signal(sig, self.handle)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                if handler is not None:
                    signal.signal(sig, handler)

    def handle(self, signum: int, frame: object) -> None:
        """The signal handler (Python runs it in the main thread, between two bytecodes)."""
        if self.requested:
            log.warning("worker %s: stopping at once (a second signal); its job, if any, is "
                        "retried by the stalled-job recovery", self.name)
            logging.shutdown()               # the line is out before the process goes
            os._exit(130 if signum == signal.SIGINT else 143)
        self.requested = True
        log.warning("worker %s: stopping after its running job, if any (a second signal "
                    "stops it at once)", self.name)
        self._cancel()

    def watch(self, loop: Any, task: Any) -> None:
        """The event loop and task a signal cancels from now on (None, None: none); a stop
        already asked for cancels it at once."""
        self._loop, self._task = loop, task
        if self.requested:
            self._cancel()

    def _cancel(self) -> None:
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)   # wakes the loop from its select()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less when a stop is asked for meanwhile."""
        deadline = time.monotonic() + seconds
        while not self.requested and time.monotonic() < deadline:
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


async def _one_run(app, options: dict, stop: WorkerStop) -> None:
    """Open ``app`` and run procrastinate's worker in it once, until it stops by itself
    (it raises, or returns when its database went away or, with ``wait`` off, the queue is
    empty) or ``stop`` cancels it (then it returns)."""
    import asyncio

    stop.watch(asyncio.get_running_loop(), asyncio.current_task())
    try:
        async with app.open_async():
            await app.run_worker_async(**options)
    except asyncio.CancelledError:
        if not stop.requested:
            raise
    finally:
        stop.watch(None, None)
