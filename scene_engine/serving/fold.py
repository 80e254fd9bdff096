"""One fold job: a store's inbox into its journal, a few batches, one push without force
(docs/DESIGN.md "Serving many stores", workers).

Steps, each round (at most ``ROUNDS``):

1. sync the worker's clone of the store to the server's ``main`` (``remote.Clone.sync``: the
   index kept, whatever a killed job left dropped);
2. read the store's inbox rows (oldest first, at most ``inbox_per_job``) and append them with
   the add path (``services.add.add_memories``: a memory already in the journal adds nothing,
   so a job run twice appends nothing twice);
3. run the batch code (``services.run.run_pending``) for at most ``batches_per_job`` batches,
   every commit carrying the job's ``Job`` and ``Attempt`` trailers;
4. push without force. Taken: the inbox rows appended are dropped, and the job is done.
   Refused (the server's ``main`` moved on: another worker's batch, a person's push, an
   undo): the next round starts again from the new head, so the batch is run on it and
   can never land beside a batch built on the same state. After ``ROUNDS`` refusals the job
   fails (``FoldRefused``) and procrastinate retries it with backoff.

A Postgres connection is held only to read the inbox and to drop rows, never across a batch:
a Postgres restart during a batch costs that job nothing but a retry of its last step.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from scene_engine.core.errors import SceneEngineError
from scene_engine.serving import database
from scene_engine.serving.remote import Clone, store_url

ROUNDS = 3
log = logging.getLogger(__name__)


class FoldRefused(SceneEngineError, RuntimeError):
    """The git server refused the job's push ``ROUNDS`` times (its ``main`` kept moving):
    the job fails and is retried with backoff; nothing of it counts."""


class CloneBusy(SceneEngineError, RuntimeError):
    """Another job of this machine holds the store's clone (a worker stopped mid-job)."""


@dataclass
class WorkerSettings:
    """What a worker needs: ``database`` (postgresql:// address), ``git`` (the git server's
    base address, ``git://host:port/`` or a folder), ``cache`` (the folder of its clones),
    ``batches_per_job`` and ``inbox_per_job`` (at most that many batches and inbox rows a
    job), ``backend`` (None: each store's own config chooses, offline by default)."""

    database: str
    git: str
    cache: Path
    batches_per_job: int = 5
    inbox_per_job: int = 2000
    backend: object | None = None


@dataclass
class FoldOutcome:
    """What one job did: ``rounds`` run, inbox rows ``added`` to the journal, ``batches``
    committed and pushed, the ``commit`` the server holds after it, memories still
    ``pending`` (then the job queues another), ``refused`` (inbox rows the add path refused,
    with the reason: kept out of the journal and dropped)."""

    store: str
    rounds: int = 0
    added: int = 0
    batches: int = 0
    commit: str = ""
    pending: int = 0
    more_inbox: bool = False
    refused: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        """The outcome as procrastinate keeps a job's result (plain JSON)."""
        return {"store": self.store, "rounds": self.rounds, "added": self.added,
                "batches": self.batches, "commit": self.commit, "pending": self.pending,
                "refused": self.refused}


def fold_store(settings: WorkerSettings, store: str, job: int | None = None,
               attempt: int = 1) -> FoldOutcome:
    """Run one fold job for ``store`` (the steps above); ``job`` and ``attempt`` go into
    every commit's trailers. Returns the ``FoldOutcome``. Raises ``FoldRefused`` after
    ``ROUNDS`` refused pushes, ``CloneBusy`` when the clone is held, ``ServingError`` when
    Postgres or the git server cannot be reached, ``BatchError`` when a batch fails
    (nothing of it pushed)."""
    database.check_name(store)
    path = Path(settings.cache) / store
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + ".lock")
    try:
        lock.acquire(timeout=0)
    except Timeout as exc:
        raise CloneBusy(f"the clone of {store} in {path} is held by another job") from exc
    try:
        clone = Clone(path, store_url(settings.git, store))
        outcome = FoldOutcome(store)
        for round_ in range(1, ROUNDS + 1):
            outcome.rounds = round_
            if _round(settings, clone, store, outcome, job, attempt):
                return outcome
        raise FoldRefused(f"the git server refused the push of {store} {ROUNDS} times "
                          "(its main kept moving); the job will be retried")
    finally:
        lock.release()


def _round(settings: WorkerSettings, clone: Clone, store: str, outcome: FoldOutcome,
           job: int | None, attempt: int) -> bool:
    """One round; True when it is done (pushed, or nothing to push)."""
    from scene_engine.store import history
    from scene_engine.store.store import open_store

    clone.sync()
    rows = _inbox(settings, store)
    trailers = [f"Job: {job}"] if job is not None else []
    with history.extra_trailers([*trailers, f"Attempt: {attempt}"]):
        opened = open_store(clone.path)
        taken, outcome.refused = _append(opened, rows)
        outcome.added = taken
        outcome.batches = _fold(settings, opened)
        outcome.pending = opened.load_state().pending
    outcome.more_inbox = len(rows) >= settings.inbox_per_job
    ids = [r["id"] for r in rows]
    if clone.ahead() == 0:          # nothing new: the server has all of it already
        outcome.commit = clone.head()
        with _connected(settings) as conn:
            database.note_head(conn, store, outcome.commit)
            database.drop_inbox(conn, store, ids)
        return True
    if clone.push():
        outcome.commit = clone.head()
        with _connected(settings) as conn:
            database.count_push(conn, store, True, outcome.commit)
            database.drop_inbox(conn, store, ids)
        return True
    log.info("push of %s refused (round %d): the server's main moved on", store,
             outcome.rounds)
    with _connected(settings) as conn:
        database.count_push(conn, store, False)
    return False


def _inbox(settings: WorkerSettings, store: str) -> list[dict]:
    with _connected(settings) as conn:
        rows = database.inbox(conn, store, settings.inbox_per_job)
        conn.rollback()
    return rows


def _connected(settings: WorkerSettings):
    return database.connect(settings.database)


def _append(store, rows: list[dict]) -> tuple[int, list[str]]:
    """Append ``rows`` with the add path: all at once, or (when the add path refuses the
    whole input, as for an id the journal knows with another memory) one at a time, the
    refused ones said and left out. Returns (added, refused reasons)."""
    from scene_engine.services.add import add_memories
    from scene_engine.store.memories import MemoryInputError

    if not rows:
        return 0, []
    try:
        return add_memories(store, _jsonl(rows)).added, []
    except MemoryInputError:
        pass
    added, refused = 0, []
    for row in rows:
        try:
            added += add_memories(store, _jsonl([row])).added
        except MemoryInputError as exc:
            refused.append(f"{row.get('id')}: {exc}")
            log.warning("inbox memory %s refused by the add path: %s", row.get("id"), exc)
    return added, refused


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(database.as_json(r) + "\n" for r in rows).encode("utf-8")


def _fold(settings: WorkerSettings, store) -> int:
    """At most ``batches_per_job`` batches; returns how many committed."""
    from scene_engine.services.backends import store_backend
    from scene_engine.services.run import run_pending

    backend = settings.backend if settings.backend is not None else store_backend(store)()
    return len(run_pending(store, backend, max_batches=settings.batches_per_job))  # type: ignore[arg-type]
