"""The queue: procrastinate on Postgres (docs/DESIGN.md "Serving many stores", queue).

- ``fold`` (task ``scenes:fold``): one fold job of a store (``fold.fold_store``), deferred
  with ``lock=store`` (one running at a time per store, in order) and ``queueing_lock=store``
  (at most one waiting); retried with exponential backoff; a job that used up its attempts
  stays ``failed`` in procrastinate's table, the dead-letter record (``scenes queue`` lists
  it, ``scenes queue --retry`` queues it again). A job that leaves memories pending or inbox
  rows unread queues the next one itself.
- ``sweep`` (periodic): queues every store whose inbox waited past ``fold_idle``.
- ``recover`` (periodic): procrastinate's documented stalled-job recovery: jobs of workers
  whose heartbeat stopped (killed, stopped past their lease) are retried, or, when the
  store already has a job waiting, given up as ``aborted`` (the waiting one does the work).

``defer_fold`` queues a store's job on the caller's connection, inside its transaction (a
savepoint absorbs "already waiting"), so a front-end's inbox rows and the job that will
fold them commit together.
"""

from __future__ import annotations

import logging
from typing import Any

from procrastinate import App, JobContext, RetryStrategy
from procrastinate.exceptions import AlreadyEnqueued, UniqueViolation
from procrastinate.jobs import Status

from scene_engine.serving import database
from scene_engine.serving.fold import FoldOutcome, WorkerSettings, fold_store

NAMESPACE = "scenes"
FOLD_TASK = f"{NAMESPACE}:fold"
QUEUE = "scenes"
SWEEP_EVERY = 5          # seconds between sweeps and between stalled-job recoveries
STALLED_AFTER = 15.0     # seconds without a worker heartbeat before its job is retried
RETRY = RetryStrategy(max_attempts=8, exponential_wait=2)
# Stores whose head on the git server one sweep compares (the longest unchecked first): a
# person's push to one of N stores is noticed within N / HEADS_PER_SWEEP sweeps.
HEADS_PER_SWEEP = 20
log = logging.getLogger(__name__)

def fold(context: JobContext, store: str) -> dict:
    """The fold job of ``store`` (``fold.fold_store``); returns its outcome as JSON."""
    settings: WorkerSettings = context.additional_context["settings"]
    job = context.job
    try:
        outcome: FoldOutcome = fold_store(settings, store, job.id, job.attempts + 1)
    except Exception as exc:     # said here in one line: procrastinate retries it quietly
        log.warning("store %s: fold job %s failed (try %d; retried with backoff): %s", store,
                    job.id, job.attempts + 1, database.first_line(exc))
        raise
    if outcome.pending or outcome.more_inbox:
        _defer_again(context.app, store)
    return outcome.as_json()


def sweep(context: JobContext, timestamp: int) -> int:
    """Queue the fold job of every store whose inbox has waited past ``fold_idle`` seconds
    (the worker's ``additional_context``), and of each store whose ``main`` on the git
    server is not the commit its last job left (a person pushed: an edit, an undo that made
    memories pending again), looking at the ``HEADS_PER_SWEEP`` heads checked longest ago;
    returns how many were queued."""
    from scene_engine.serving.remote import server_head, store_url

    settings: WorkerSettings = context.additional_context["settings"]
    idle = float(context.additional_context.get("fold_idle", 300.0))
    with database.connect(settings.database) as conn:
        due = set(database.idle_stores(conn, idle))
        known = database.last_commits(conn, HEADS_PER_SWEEP)
    looked = []
    for store, commit in known.items():
        looked.append(store)
        if store in due:
            continue
        try:
            if server_head(store_url(settings.git, store)) != commit:
                due.add(store)
        except database.ServingError as exc:      # the server is down: the next sweep
            log.warning("sweep: %s", exc)
            looked.pop()
            break
    with database.connect(settings.database) as conn:
        database.heads_checked(conn, looked)
    return sum(_defer_again(context.app, store) for store in sorted(due))


async def recover(context: JobContext, timestamp: int) -> int:
    """procrastinate's stalled-job recovery: retry the running jobs of workers whose
    heartbeat is older than ``stalled_after`` seconds (the worker's ``additional_context``,
    default ``STALLED_AFTER``); returns how many."""
    manager = context.app.job_manager
    after = float(context.additional_context.get("stalled_after", STALLED_AFTER))
    stalled = list(await manager.get_stalled_jobs(seconds_since_heartbeat=after))
    for job in stalled:
        try:
            await manager.retry_job(job)
            log.warning("job %s (%s) stalled: its worker stopped; retried", job.id,
                        job.task_kwargs)
        except UniqueViolation:
            # Another job of the store already waits (its queueing lock): that one does the
            # same work, from the server's head, so the stalled one is given up.
            await manager.finish_job(job, Status.ABORTED, delete_job=False)
            log.warning("job %s (%s) stalled: its worker stopped; the job waiting for the "
                        "store takes over", job.id, job.task_kwargs)
    return len(stalled)


def make_app(database_url: str, sync: bool = False) -> App:
    """The procrastinate app over ``database_url``: ``sync`` for a front-end that only
    defers (psycopg's sync connector), else the async one a worker runs on."""
    from procrastinate import PsycopgConnector, SyncPsycopgConnector

    connector: Any = (SyncPsycopgConnector(conninfo=database_url) if sync
                      else PsycopgConnector(conninfo=database_url))
    app = App(connector=connector)
    # Registered on each app under their full names (a blueprint's namespacing renames its
    # tasks in place, so a second app in one process, a worker started again, found none).
    app.task(name=FOLD_TASK, queue=QUEUE, pass_context=True, retry=RETRY)(fold)
    every = f"* * * * * */{SWEEP_EVERY}"
    for name, work in (("sweep", sweep), ("recover", recover)):
        task = app.task(name=f"{NAMESPACE}:{name}", queue=QUEUE, pass_context=True,
                        queueing_lock=f"{NAMESPACE}:{name}")(work)
        app.periodic(cron=every, periodic_id=name)(task)
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
