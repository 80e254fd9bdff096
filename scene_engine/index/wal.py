"""Put an SQLite file of the index in WAL mode, also while another process opens it
(docs/DESIGN.md "Index and watcher": the index and the vectors are shared by processes).

Why this is not one ``PRAGMA``: switching the journal mode needs the file to itself, and
SQLite answers "database is locked" at once, without calling its busy handler, while
another connection opens or writes the file (seen in CI: two processes syncing a new
vectors file together). So the switch is tried again until a deadline. A file already in
WAL answers at once, so the usual open costs one statement.
"""

from __future__ import annotations

import sqlite3
import time

RETRY_SECONDS = 0.02


def is_busy(err: sqlite3.Error) -> bool:
    """True when ``err`` is SQLite's "locked" or "busy" (another connection holds the file)."""
    text = str(err).lower()
    return isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def use_wal(conn: sqlite3.Connection, busy_seconds: float) -> None:
    """Set ``journal_mode=WAL`` and ``synchronous=NORMAL`` (derived data: enough) on ``conn``.

    ``busy_seconds``: how long to go on trying while another connection holds the file.
    Raises ``sqlite3.OperationalError`` when it is still locked then, and any other
    ``sqlite3.Error`` at once (a file this user cannot write, a corrupt file).
    """
    deadline = time.monotonic() + busy_seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as err:
            if not is_busy(err) or time.monotonic() >= deadline:
                raise
            time.sleep(RETRY_SECONDS)
    conn.execute("PRAGMA synchronous=NORMAL")
