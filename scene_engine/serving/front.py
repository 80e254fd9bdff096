"""What a front-end serves for many stores: remember, recall, search, status (docs/DESIGN.md
"Serving many stores", front-ends).

A front-end keeps no state of its own that matters: Postgres holds the inbox and the queue,
the git server holds the stores. Any number can run.

- ``remember`` validates the input with ``scenes add``'s parser (one set of messages), puts
  the memories in the store's inbox (keyed by ``(store, memory id)``: a retried call adds
  nothing) and, in the same transaction, queues the store's fold job once the inbox holds
  ``fold_every`` memories (the store's own setting); the sweeper queues the rest after
  ``fold_idle``.
- ``recall``, ``search`` and ``status`` read a ``Reader``: a clone of the store reset to the
  server's ``main`` with the inbox rows appended locally (never pushed), so a memory is
  searchable as soon as ``remember`` returns. A reader is stamped with the commit and the
  inbox (rows, last arrival) it was built from and is rebuilt only when either moved; the
  server is asked for its head at most every ``refresh`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from scene_engine.serving import database, jobs
from scene_engine.serving.remote import Clone, server_head, store_url

log = logging.getLogger(__name__)


@dataclass
class Reader:
    """One store's reading clone: ``clone``, the ``stamp`` (server commit, inbox rows, last
    arrival) its files and index were built from, when the server was last ``checked``."""

    clone: Clone
    stamp: tuple = ()
    checked: float = 0.0
    head: str = ""
    planned: tuple = ()          # the stamp remember's journal check last synced the index at
    lock: threading.Lock = field(default_factory=threading.Lock)


class Front:
    """The front-end's services over ``database`` (postgresql:// address) and ``git`` (the git
    server's base address), reading clones kept under ``cache``. ``refresh``: seconds between
    asks of the git server's head for one store. ``close()`` when done."""

    def __init__(self, database_url: str, git: str, cache: Path, refresh: float = 1.0):
        from psycopg_pool import ConnectionPool

        database_url = database.check_url(database_url)
        self.git, self.cache, self.refresh = git, Path(cache), refresh
        # Each connection is checked as it is handed out: after a Postgres restart the pool's
        # old connections are dropped, not given to a request.
        self.pool = ConnectionPool(database_url, min_size=1, max_size=8, open=False,
                                   kwargs={"connect_timeout": 10}, timeout=10,
                                   check=ConnectionPool.check_connection)
        try:
            self.pool.open(wait=True, timeout=15)
        except Exception as exc:
            raise database.ServingError(f"cannot reach Postgres at "
                                        f"{database.shown(database_url)}: {exc}") from exc
        self.app = jobs.make_app(database_url, sync=True)
        self._readers: dict[str, Reader] = {}
        self._guard = threading.Lock()

    def close(self) -> None:
        """Close the connection pool."""
        self.pool.close()

    # ------------------------------------------------------------ who is asking

    def store_of_token(self, token: str) -> str | None:
        """The store ``token`` opens, or None (asked of Postgres on every call: a token
        removed there stops working at once)."""
        with self.pool.connection() as conn:
            return database.store_of_token(conn, token)

    # ------------------------------------------------------------ writes

    def remember(self, store: str, data: bytes) -> dict:
        """Validate ``data`` (a JSON list or JSONL of memories, as ``scenes add`` reads it;
        one JSON object is taken as a list of one), check it against what the store's
        journal knows (``_journal_known``) and put the new memories in ``store``'s inbox.
        Returns ``{"ids", "added", "known", "fold_queued"}`` (``known``: ids the journal or
        the inbox holds with the same memory; ``fold_queued``: a fold job was queued by this
        call). Raises ``MemoryInputError`` or ``InputError`` (nothing kept), a known id sent
        with another memory included, as ``scenes add`` does."""
        from scene_engine.store.memories import parse_lines

        lined = parse_lines(data)             # time and id fixed now, as `scenes add` does
        in_journal = self._journal_known(store, lined)
        records = []
        for _, memory in lined:
            if memory.id in in_journal:
                continue
            record = memory.to_record()
            record.pop("seq", None)
            record.pop("aliases", None)
            records.append(record)
        every = self._fold_every(store)
        with self.pool.connection() as conn:
            added, known = database.put_inbox(conn, store, records) if records else (0, 0)
            waiting, _ = database.inbox_stamp(conn, store)
            queued = bool(added) and waiting >= every and jobs.defer_fold(self.app, conn, store)
        return {"ids": [m.id for _, m in lined], "added": added,
                "known": known + len(in_journal), "fold_queued": bool(queued)}

    def _journal_known(self, store: str, lined: list) -> set[str]:
        """The ids of ``lined`` (``parse_lines``'s) the store's journal knows with the same
        memory, checked on the reading clone as it stands, brought in step when a worker's
        push moved the store (the commit Postgres says its last push left, asked on every
        call: no git round trip; the inbox is checked by ``put_inbox``). Raises
        ``MemoryInputError`` for a known id sent with another memory. With the git server
        away and no clone yet, nothing is known here: the worker's add path refuses such a
        memory then (and says so in its log)."""
        from scene_engine.services.add import plan_add
        from scene_engine.store.store import open_store

        database.check_name(store)
        with self._guard:
            reader = self._readers.setdefault(store, Reader(
                Clone(self.cache / "readers" / store, store_url(self.git, store))))
        with self.pool.connection() as conn:     # the head the last worker's push left
            folded = database.last_commit(conn, store)
        with reader.lock:
            try:
                if not reader.stamp or (folded and folded != reader.head):
                    reader.checked = 0.0         # ask the server: a worker pushed since
                    self._bring_in_step(store, reader)
            except database.ServingError as exc:
                if not reader.stamp:
                    log.warning("store %s: remembered without the journal check (%s)", store,
                                exc)
                    return set()
            fresh = reader.planned != reader.stamp      # the index was synced for this one
            known = plan_add(open_store(reader.clone.path), lined, sync=fresh).known_ids
            reader.planned = reader.stamp
            return set(known)

    def _fold_every(self, store: str) -> int:
        """The store's ``fold_every`` as its reader last saw the config (default 20)."""
        reader = self._readers.get(store)
        if reader is None or not (reader.clone.path / ".scene-engine").is_dir():
            return 20
        try:
            from scene_engine.store.store import open_store

            return open_store(reader.clone.path).config.fold_every
        except Exception:
            return 20

    # ------------------------------------------------------------ reads

    def reader(self, store: str):
        """``store``'s reading clone brought in step (``Reader``) and opened as a ``Store``.
        Raises ``ServingError`` when the git server cannot be reached and no reader exists."""
        from scene_engine.store.store import open_store

        database.check_name(store)
        with self._guard:
            reader = self._readers.setdefault(store, Reader(
                Clone(self.cache / "readers" / store, store_url(self.git, store))))
        with reader.lock:
            self._bring_in_step(store, reader)
            return open_store(reader.clone.path)

    def _bring_in_step(self, store: str, reader: Reader) -> None:
        now = time.monotonic()
        if not reader.head or now - reader.checked >= self.refresh:
            reader.head = server_head(reader.clone.url)
            reader.checked = now
        with self.pool.connection() as conn:
            rows, last = database.inbox_stamp(conn, store)
            stamp = (reader.head, rows, last)
            if stamp == reader.stamp:
                return
            waiting = database.inbox(conn, store) if rows else []
        reader.clone.sync()
        if waiting:
            from scene_engine.services.add import add_memories
            from scene_engine.store.memories import MemoryInputError
            from scene_engine.store.store import open_store

            data = "".join(database.as_json(r) + "\n" for r in waiting).encode("utf-8")
            try:
                add_memories(open_store(reader.clone.path), data)
            except MemoryInputError as exc:   # the worker refuses it too, and says why
                log.warning("store %s: an inbox memory cannot be read yet: %s", store, exc)
        reader.stamp = stamp

    def recall(self, store: str, query: str, budget: int = 4000,
               scope: str | None = None, persona: bool = False) -> dict:
        """``scenes recall --json`` over the store's reader (inbox included; ``empty`` and
        ``note`` when nothing answers; ``persona``: asked for)."""
        from scene_engine.services.recall import recall

        return recall(self.reader(store), query, budget=budget, scope=scope,
                      persona=persona).to_json()

    def search(self, store: str, query: str, k: int = 10, memories: bool = False,
               scope: str | None = None) -> dict:
        """``scenes search --json`` over the store's reader: ``{"hits": [...]}``."""
        from scene_engine.services.search import search

        found = search(self.reader(store), query, k, memories, scope)
        return {"hits": found.as_json()} | (
            {"warning": "; ".join(found.warnings)} if found.warnings else {})

    def status(self, store: str) -> dict:
        """``scenes status --json`` of the store as the server holds it, plus ``inbox``
        (memories waiting in Postgres) and ``commit`` (the server's head)."""
        from scene_engine.services.status import status

        opened = self.reader(store)
        with self.pool.connection() as conn:
            waiting, _ = database.inbox_stamp(conn, store)
        said = status(opened)
        said.pop("root", None)                  # a reader's folder is no one's business
        return said | {"inbox": waiting, "commit": self._readers[store].head}
