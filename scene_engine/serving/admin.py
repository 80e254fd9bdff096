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
    database.check_name(name)
    jobs.migrate(database_url)
    with database.connect(database_url) as conn:
        if name in database.stores(conn):
            from scene_engine.core.errors import InputError

            raise InputError(f"a store named {name!r} is already registered")
    create_bare(repos, name)
    url = store_url(git, name)
    with tempfile.TemporaryDirectory(prefix="scene-provision-") as work:
        commit = seed(url, Path(work) / name)
    token = secrets.token_urlsafe(32)
    with database.connect(database_url) as conn:
        database.add_store(conn, name, token)
    return {"store": name, "url": url, "token": token, "commit": commit}


def queue(database_url: str) -> list[dict]:
    """``database.queue_view`` of every store (the schema made first when missing)."""
    jobs.migrate(database_url)
    with database.connect(database_url) as conn:
        return database.queue_view(conn, jobs.FOLD_TASK)


def retry_failed(database_url: str, store: str | None = None) -> int:
    """Queue again the failed fold jobs (of ``store``, or of every store): each failed job is
    marked cancelled and one new job queued per store. Returns how many stores were queued."""
    if store is not None:
        database.check_name(store)
    with database.connect(database_url) as conn:
        rows = conn.execute(
            "UPDATE procrastinate_jobs SET status = 'cancelled' WHERE task_name = %s AND "
            "status = 'failed' AND (%s::text IS NULL OR args->>'store' = %s) "
            "RETURNING args->>'store'", (jobs.FOLD_TASK, store, store)).fetchall()
        names = sorted({r[0] for r in rows})
        app = jobs.make_app(database_url, sync=True)
        with app.open():
            queued = sum(jobs.defer_fold(app, conn, n) for n in names)
    return queued


def run_worker(settings: WorkerSettings, name: str | None = None, fold_idle: float = 300.0,
               once: bool = False, stalled_after: float = jobs.STALLED_AFTER) -> None:
    """Run a procrastinate worker of the fold queue until SIGINT or SIGTERM (``once``: until
    the queue is empty). ``fold_idle``: seconds an inbox may wait before the sweeper queues
    its store; ``stalled_after``: seconds without a worker's heartbeat before the recovery
    retries its job (it beats four times in that span). A lost database (Postgres
    restarted) ends procrastinate's worker; it is started again after ``RESTART_WAIT``
    seconds, its running job retried by the stalled-job recovery."""
    jobs.migrate(settings.database)
    settings.cache.mkdir(parents=True, exist_ok=True)
    name = name or f"{socket.gethostname()}-{os.getpid()}"
    while True:
        app = jobs.make_app(settings.database)
        try:
            app.run_worker(queues=[jobs.QUEUE], name=name, concurrency=1, wait=not once,
                           additional_context={"settings": settings, "fold_idle": fold_idle,
                                               "stalled_after": stalled_after},
                           update_heartbeat_interval=stalled_after / 4,
                           stalled_worker_timeout=stalled_after,
                           delete_jobs="successful")
            return
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            if once:
                raise database.ServingError(f"the worker stopped: {exc}") from exc
            log.warning("worker %s lost its database (%s); starting again in %g s", name,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                        RESTART_WAIT)
            time.sleep(RESTART_WAIT)
