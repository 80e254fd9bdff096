"""Postgres for many stores: the inbox, the store registry, the counters (docs/DESIGN.md
"Serving many stores").

procrastinate keeps its own tables (its jobs, locks, events, workers); ours sit beside them:

- ``scene_stores``: each store's name and the sha256 of its token (the token itself is never
  kept), when it was made;
- ``scene_inbox``: memories remembered and not yet in the store's journal on the git server,
  keyed by ``(store, memory_id)`` so a retried ``remember`` adds nothing twice; ``record`` is
  the memory as ``scenes add`` validated it (its time and id fixed when it came), ``arrival``
  the order they came in;
- ``scene_store_counts``: per store, the pushes the git server refused and the fold jobs
  that pushed, for the queue view.

Every function takes an open psycopg connection and leaves the transaction to its caller,
so a front-end's insert and its job are one transaction.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from scene_engine.core.errors import InputError, UnavailableError
from scene_engine.store.memories import differs, kind

# A store's name is a path segment on the git server and in URLs: lowercase letters, digits
# and . _ -, starting with a letter or digit, no "..": never a path of its own.
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS scene_stores (
    name text PRIMARY KEY,
    token_sha256 text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS scene_inbox (
    store text NOT NULL REFERENCES scene_stores(name) ON DELETE CASCADE,
    memory_id text NOT NULL,
    record jsonb NOT NULL,
    arrival bigint GENERATED ALWAYS AS IDENTITY,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store, memory_id)
);
CREATE INDEX IF NOT EXISTS scene_inbox_arrival ON scene_inbox (store, arrival);
CREATE TABLE IF NOT EXISTS scene_store_counts (
    store text PRIMARY KEY REFERENCES scene_stores(name) ON DELETE CASCADE,
    rejected_pushes bigint NOT NULL DEFAULT 0,
    pushes bigint NOT NULL DEFAULT 0,
    last_push_at timestamptz,
    last_commit text
);
ALTER TABLE scene_store_counts ADD COLUMN IF NOT EXISTS head_checked_at timestamptz;
"""


class ServingError(UnavailableError):
    """Postgres or the git server could not do what was asked (exit 1); one line, with the
    address but never a password."""


def check_name(name: Any) -> str:
    """``name`` when it can name a store (``_NAME``: lowercase letters, digits, ``. _ -``, at
    most 63, no ``..``), else ``InputError``: a store name is a path on the git server, so a
    name with ``/``, ``..`` or anything else is refused, never cleaned."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name \
            or name.endswith((".", ".git", ".lock")):
        raise InputError(f"{name!r} is not a store name: 1 to 63 lowercase letters, digits, "
                         "'.', '_' and '-', starting with a letter or digit, with no '..' and "
                         "not ending in '.', '.git' or '.lock'")
    return name


def token_hash(token: str) -> str:
    """The sha256 of ``token`` in hex: what ``scene_stores`` keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def shown(url: str) -> str:
    """``url`` with any password hidden, for messages."""
    return re.sub(r"(://[^/:@]*:)[^/@]*@", r"\1***@", url)


def check_url(url: Any) -> str:
    """``url`` when it is a Postgres address (``postgresql://`` or ``postgres://``), else
    ``InputError`` saying the form."""
    if not isinstance(url, str) or not re.match(r"postgres(ql)?://", url.strip()):
        raise InputError(f"the database is a postgresql://USER@HOST:PORT/DATABASE address, "
                         f"not {shown(str(url))[:200]!r}")
    return url.strip()


def connect(url: str):
    """An open psycopg connection to ``url`` (a ``postgresql://`` address), autocommit off.
    Raises ``InputError`` for another kind of text, ``ServingError`` with the address
    (password hidden) and Postgres's reason."""
    import psycopg

    url = check_url(url)
    try:
        return psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as exc:
        raise ServingError(f"cannot reach Postgres at {shown(url)}: "
                           f"{first_line(exc)}") from exc


def first_line(exc: BaseException) -> str:
    """An exception's first non-blank line, or its kind's name when it says nothing."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def migrate(conn) -> None:
    """Our tables (``SCHEMA``), made when missing; procrastinate's schema is applied by
    ``jobs.migrate``. Commits."""
    with conn.transaction():
        conn.execute(SCHEMA)


# ---------------------------------------------------------------- stores and tokens

def add_store(conn, name: str, token: str) -> None:
    """Register store ``name`` with ``token`` (kept as its sha256). Raises ``InputError`` when
    the name is taken."""
    import psycopg

    check_name(name)
    try:
        with conn.transaction():
            conn.execute("INSERT INTO scene_stores (name, token_sha256) VALUES (%s, %s)",
                         (name, token_hash(token)))
            conn.execute("INSERT INTO scene_store_counts (store) VALUES (%s)", (name,))
    except psycopg.errors.UniqueViolation as exc:
        raise InputError(f"a store named {name!r} is already registered") from exc


def new_token(conn, name: str, token: str) -> None:
    """Give registered store ``name`` the token ``token`` (its old token stops working).
    Raises ``InputError`` when no such store is registered."""
    with conn.transaction():
        row = conn.execute("UPDATE scene_stores SET token_sha256 = %s WHERE name = %s "
                           "RETURNING name", (token_hash(token), check_name(name))).fetchone()
    if row is None:
        raise InputError(f"no store named {name!r} is registered")


def store_of_token(conn, token: str) -> str | None:
    """The store ``token`` opens, or None. The lookup is by the token's sha256, so no
    comparison of the token itself can leak its prefix through timing."""
    row = conn.execute("SELECT name FROM scene_stores WHERE token_sha256 = %s",
                       (token_hash(token),)).fetchone()
    return row[0] if row else None


def stores(conn) -> list[str]:
    """Every registered store's name, sorted."""
    return [r[0] for r in conn.execute("SELECT name FROM scene_stores ORDER BY name")]


# ---------------------------------------------------------------- the inbox

def put_inbox(conn, store: str, records: list[dict]) -> tuple[int, int]:
    """Add ``records`` (memories as ``Memory.to_record`` gives them, ``id`` set) to the
    store's inbox; returns (added, already there). A record whose id waits with another
    memory is refused whole (``InputError``, nothing added: a memory is never rewritten);
    the caller's transaction holds the insert."""
    from psycopg.types.json import Jsonb

    added = known = 0
    with conn.transaction():
        for record in records:
            row = conn.execute(
                "INSERT INTO scene_inbox (store, memory_id, record) VALUES (%s, %s, %s) "
                "ON CONFLICT (store, memory_id) DO NOTHING RETURNING memory_id",
                (store, record["id"], Jsonb(record))).fetchone()
            if row:
                added += 1
                continue
            there = conn.execute("SELECT record FROM scene_inbox WHERE store = %s AND "
                                 "memory_id = %s", (store, record["id"])).fetchone()
            # As `scenes add` judges a known id: the same content, scope, role and type is
            # the same memory (a retry without created_at is stamped anew: still the same).
            difference = there and differs(kind(there[0]), kind(record))
            if difference:
                raise InputError(f"id {record['id']!r} is already known with {difference}; "
                                 "a memory is never rewritten: give this one a new id")
            known += 1
    return added, known


def inbox(conn, store: str, limit: int | None = None) -> list[dict]:
    """The store's inbox records in the order they came (oldest first), at most ``limit``."""
    sql = "SELECT record FROM scene_inbox WHERE store = %s ORDER BY arrival"
    args: tuple = (store,)
    if limit is not None:
        sql += " LIMIT %s"
        args = (store, limit)
    return [r[0] for r in conn.execute(sql, args)]


def inbox_stamp(conn, store: str) -> tuple[int, int]:
    """(rows, last arrival) of the store's inbox: what a reader's index is stamped with."""
    row = conn.execute("SELECT count(*), coalesce(max(arrival), 0) FROM scene_inbox "
                       "WHERE store = %s", (store,)).fetchone()
    return int(row[0]), int(row[1])


def drop_inbox(conn, store: str, ids: Iterable[str]) -> int:
    """Remove the store's inbox rows ``ids`` (they are in the journal the git server holds);
    returns how many went. Commits."""
    ids = list(ids)
    if not ids:
        return 0
    with conn.transaction():
        cur = conn.execute("DELETE FROM scene_inbox WHERE store = %s AND memory_id = ANY(%s)",
                           (store, ids))
    return cur.rowcount


def idle_stores(conn, seconds: float) -> list[str]:
    """Stores whose newest inbox row came more than ``seconds`` ago (the sweeper's list)."""
    rows = conn.execute(
        "SELECT store FROM scene_inbox GROUP BY store "
        "HAVING max(received_at) < now() - make_interval(secs => %s) ORDER BY store",
        (float(seconds),))
    return [r[0] for r in rows]


# ---------------------------------------------------------------- counters and the view

def count_push(conn, store: str, accepted: bool, commit: str = "") -> None:
    """Count a push of ``store``: accepted (with the commit the server now holds) or refused
    by the git server. Commits."""
    with conn.transaction():
        if accepted:
            conn.execute("UPDATE scene_store_counts SET pushes = pushes + 1, "
                         "last_push_at = now(), last_commit = %s WHERE store = %s",
                         (commit, store))
        else:
            conn.execute("UPDATE scene_store_counts SET rejected_pushes = rejected_pushes + 1 "
                         "WHERE store = %s", (store,))


def note_head(conn, store: str, commit: str) -> None:
    """Record ``commit`` as the server's head a job of ``store`` left (no push needed).
    Commits."""
    with conn.transaction():
        conn.execute("UPDATE scene_store_counts SET last_commit = %s WHERE store = %s",
                     (commit, store))


def last_commit(conn, store: str) -> str | None:
    """The server's head ``store``'s last job left (None before any job, or no such store)."""
    row = conn.execute("SELECT last_commit FROM scene_store_counts WHERE store = %s",
                       (store,)).fetchone()
    return row[0] if row else None


def last_commits(conn, limit: int | None = None) -> dict[str, str | None]:
    """Store -> the server's head its last job left (None before any job): every store, or
    the ``limit`` whose head was checked longest ago (``heads_checked`` marks them), so the
    sweeper's asks of the git server stay bounded however many stores there are."""
    if limit is None:
        return dict(conn.execute("SELECT store, last_commit FROM scene_store_counts")
                    .fetchall())
    return dict(conn.execute(
        "SELECT store, last_commit FROM scene_store_counts "
        "ORDER BY head_checked_at NULLS FIRST, store LIMIT %s", (int(limit),)).fetchall())


def heads_checked(conn, stores: Iterable[str]) -> None:
    """Note that the server's head of each of ``stores`` was just looked at. Commits."""
    with conn.transaction():
        conn.execute("UPDATE scene_store_counts SET head_checked_at = now() "
                     "WHERE store = ANY(%s)", (list(stores),))


def queue_view(conn, task_name: str) -> list[dict]:
    """Per store: ``inbox`` (memories waiting), ``oldest_seconds`` (age of the oldest, or
    None), the fold jobs ``waiting``, ``running``, ``failed`` (procrastinate's table for
    ``task_name``), ``attempts`` (the most tries a waiting or running job has had: one
    that keeps failing shows here before it is failed), ``pushes``, ``rejected_pushes``,
    ``last_commit``."""
    rows = conn.execute("""
        SELECT s.name,
               (SELECT count(*) FROM scene_inbox i WHERE i.store = s.name),
               (SELECT extract(epoch FROM now() - min(i.received_at)) FROM scene_inbox i
                 WHERE i.store = s.name),
               (SELECT count(*) FROM procrastinate_jobs j WHERE j.task_name = %(task)s
                 AND j.args->>'store' = s.name AND j.status = 'todo'),
               (SELECT count(*) FROM procrastinate_jobs j WHERE j.task_name = %(task)s
                 AND j.args->>'store' = s.name AND j.status = 'doing'),
               (SELECT count(*) FROM procrastinate_jobs j WHERE j.task_name = %(task)s
                 AND j.args->>'store' = s.name AND j.status = 'failed'),
               (SELECT coalesce(max(j.attempts), 0) FROM procrastinate_jobs j
                 WHERE j.task_name = %(task)s AND j.args->>'store' = s.name
                   AND j.status IN ('todo', 'doing')),
               c.pushes, c.rejected_pushes, c.last_commit
          FROM scene_stores s LEFT JOIN scene_store_counts c ON c.store = s.name
         ORDER BY s.name""", {"task": task_name})
    keys = ("store", "inbox", "oldest_seconds", "waiting", "running", "failed", "attempts",
            "pushes", "rejected_pushes", "last_commit")
    out = []
    for row in rows:
        item = dict(zip(keys, row, strict=True))
        if item["oldest_seconds"] is not None:
            item["oldest_seconds"] = round(float(item["oldest_seconds"]), 1)
        out.append(item)
    return out


def as_json(record: Any) -> str:
    """A record as one JSONL line, as ``scenes add`` reads it."""
    return json.dumps(record, ensure_ascii=False)
