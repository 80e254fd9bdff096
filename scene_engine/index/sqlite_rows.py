"""One ``SELECT ... IN (...)`` over any number of values, a chunk of them a query
(docs/DESIGN.md "Index and watcher"): SQLite bounds the variables of a query (32,766 since
3.32, 999 before), and the index's files and the jieba dictionary are asked about thousands
of values at once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

CHUNK = 500     # values a query


def rows_in(conn: sqlite3.Connection, select: str, values: Sequence) -> Iterator[tuple]:
    """The rows of ``select``, a query ending in the column to match (``SELECT hash, vector
    FROM vectors WHERE hash``), ``IN`` ``values``, ``CHUNK`` values a query, in the order
    SQLite gives them chunk by chunk. Raises ``sqlite3.Error``."""
    for start in range(0, len(values), CHUNK):
        chunk = values[start:start + CHUNK]
        yield from conn.execute(f"{select} IN ({','.join('?' * len(chunk))})", chunk)
