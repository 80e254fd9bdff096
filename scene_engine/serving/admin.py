"""Running the pieces: a store provisioned, a worker run, the queue shown, a failed job queued
again (docs/DESIGN.md "Serving many stores"; the commands ``scenes provision``, ``worker``,
``queue`` and ``serve`` are faces over these).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import tempfile
import time
from pathlib import Path

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
    ``RESTART_WAIT`` seconds, its running job retried by the stalled-job recovery. A signal
    lets the running job finish (procrastinate's graceful shutdown), then returns."""
    import asyncio

    jobs.migrate(settings.database)
    settings.cache.mkdir(parents=True, exist_ok=True)
    options = {"queues": [jobs.QUEUE], "name": name or f"{socket.gethostname()}-{os.getpid()}",
               "concurrency": 1, "wait": not once, "delete_jobs": "successful",
               "additional_context": {"settings": settings, "fold_idle": fold_idle,
                                      "stalled_after": stalled_after},
               "update_heartbeat_interval": stalled_after / 4,
               "stalled_worker_timeout": stalled_after, "install_signal_handlers": False}
    while True:
        try:
            if asyncio.run(_one_run(jobs.make_app(settings.database), options)) or once:
                return
            why = "procrastinate stopped it (its database went away)"
        except Exception as exc:
            if once:
                raise database.ServingError(f"the worker stopped: {exc}") from exc
            why = database.first_line(exc)
        log.warning("worker %s stopped: %s; starting again in %g s", options["name"], why,
                    RESTART_WAIT)
        time.sleep(RESTART_WAIT)


async def _one_run(app, options: dict) -> bool:
    """Run procrastinate's worker once; True when a signal stopped it (the caller returns),
    False when it stopped by itself."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    signalled = False
    async with app.open_async():
        task = asyncio.create_task(app.run_worker_async(**options))

        def stop() -> None:
            nonlocal signalled
            signalled = True
            task.cancel()          # procrastinate's graceful stop: the running job finishes
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        try:
            await task
        except asyncio.CancelledError:
            pass
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
    return signalled
