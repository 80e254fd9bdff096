"""The queue: procrastinate on Postgres (docs/DESIGN.md "Serving many stores", queue).

- ``fold`` (task ``scenes:fold``): one fold job of a store (``fold.fold_store``), deferred
  with ``lock=store`` (one running at a time per store, in order) and ``queueing_lock=store``
  (at most one waiting); retried with exponential backoff; a job that used up its attempts
  stays ``failed`` in procrastinate's table, the dead-letter record (``scenes queue`` lists
  it, ``scenes queue --retry`` queues it again). A job that leaves memories pending or inbox
  rows unread queues the next one itself.
- ``sweep`` (periodic): queues every store whose inbox waited past ``fold_idle``.
- ``recover`` (periodic): procrastinate's documented stalled-job recovery: jobs of workers
  whose heartbeat stopped (killed, stopped past their lease) are retried.

``defer_fold`` queues a store's job on the caller's connection, inside its transaction (a
savepoint absorbs "already waiting"), so a front-end's inbox rows and the job that will
fold them commit together.
"""

from __future__ import annotations

import logging
from typing import Any

from procrastinate import App, Blueprint, JobContext, RetryStrategy
from procrastinate.exceptions import AlreadyEnqueued

from scene_engine.serving import database
from scene_engine.serving.fold import FoldOutcome, WorkerSettings, fold_store

NAMESPACE = "scenes"
FOLD_TASK = f"{NAMESPACE}:fold"
QUEUE = "scenes"
SWEEP_EVERY = 5          # seconds between sweeps and between stalled-job recoveries
STALLED_AFTER = 15.0     # seconds without a worker heartbeat before its job is retried
RETRY = RetryStrategy(max_attempts=8, exponential_wait=2)
log = logging.getLogger(__name__)

tasks = Blueprint()


@tasks.task(name="fold", queue=QUEUE, pass_context=True, retry=RETRY)
def fold(context: JobContext, store: str) -> dict:
    """The fold job of ``store`` (``fold.fold_store``); returns its outcome as JSON."""
    settings: WorkerSettings = context.additional_context["settings"]
    job = context.job
    outcome: FoldOutcome = fold_store(settings, store, job.id, job.attempts + 1)
    if outcome.pending or outcome.more_inbox:
        _defer_again(context.app, store)
    return outcome.as_json()


@tasks.periodic(cron=f"* * * * * */{SWEEP_EVERY}", periodic_id="sweep")
@tasks.task(name="sweep", queue=QUEUE, queueing_lock="scenes:sweep", pass_context=True)
def sweep(context: JobContext, timestamp: int) -> int:
    """Queue the fold job of every store whose inbox has waited past ``fold_idle`` seconds
    (the worker's ``additional_context``); returns how many were queued."""
    settings: WorkerSettings = context.additional_context["settings"]
    idle = float(context.additional_context.get("fold_idle", 300.0))
    with database.connect(settings.database) as conn:
        idle_stores = database.idle_stores(conn, idle)
    return sum(_defer_again(context.app, store) for store in idle_stores)


@tasks.periodic(cron=f"* * * * * */{SWEEP_EVERY}", periodic_id="recover")
@tasks.task(name="recover", queue=QUEUE, queueing_lock="scenes:recover", pass_context=True)
async def recover(context: JobContext, timestamp: int) -> int:
    """procrastinate's stalled-job recovery: retry the running jobs of workers whose
    heartbeat is older than ``stalled_after`` seconds (the worker's ``additional_context``,
    default ``STALLED_AFTER``); returns how many."""
    manager = context.app.job_manager
    after = float(context.additional_context.get("stalled_after", STALLED_AFTER))
    stalled = list(await manager.get_stalled_jobs(seconds_since_heartbeat=after))
    for job in stalled:
        log.warning("job %s (%s) stalled: its worker stopped; retrying it", job.id,
                    job.task_kwargs)
        await manager.retry_job(job)
    return len(stalled)


def make_app(database_url: str, sync: bool = False) -> App:
    """The procrastinate app over ``database_url``: ``sync`` for a front-end that only
    defers (psycopg's sync connector), else the async one a worker runs on."""
    from procrastinate import PsycopgConnector, SyncPsycopgConnector

    connector: Any = (SyncPsycopgConnector(conninfo=database_url) if sync
                      else PsycopgConnector(conninfo=database_url))
    app = App(connector=connector)
    app.add_tasks_from(tasks, namespace=NAMESPACE)
    return app


def migrate(database_url: str) -> None:
    """procrastinate's schema (when absent) and ours (``database.migrate``)."""
    with database.connect(database_url) as conn:
        present = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0]
        if present is None:
            app = make_app(database_url, sync=True)
            with app.open():
                app.schema_manager.apply_schema()
        database.migrate(conn)


def defer_fold(app: App, conn, store: str) -> int:
    """Queue ``store``'s fold job on ``conn`` (the caller commits); 1 when queued, 0 when one
    already waits (``queueing_lock``)."""
    try:
        with conn.transaction():     # a savepoint: "already waiting" leaves the rest intact
            app.configure_task(FOLD_TASK, queue=QUEUE, lock=store, queueing_lock=store,
                               connection=conn).defer(store=store)
        return 1
    except AlreadyEnqueued:
        return 0


def _defer_again(app: App, store: str) -> int:
    """Queue a job of ``store`` from inside a running job (procrastinate's own pool); 1 when
    queued, 0 when one already waits."""
    try:
        app.configure_task(FOLD_TASK, queue=QUEUE, lock=store, queueing_lock=store).defer(store=store)
        return 1
    except AlreadyEnqueued:
        return 0
