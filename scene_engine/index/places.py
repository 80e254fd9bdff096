"""Where the batches put each memory, from their ledgers, in the search index (docs/DESIGN.md
"Index and watcher"; issue 23).

A digest line says its period's facts by theme and cites no memory id (``offline.rollup``):
the ids are in the batch ledgers (``.scene-engine/ledger/NNNNNN.json``). Recall tags a memory
with the scene that holds it, so the index keeps, per ledger file, the scenes each memory went
to and the merges of that batch; a file is re-read only when its size or modification time
changed, and a ledger an undo removed takes its rows with it. ``scenes_of`` follows later
merges (and renames, which are merges of one scene) to the names that hold a memory now.

Functions here work on a ``SceneIndex``'s connection inside its transactions.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from scene_engine.core.fs import numbered_files, read_regular

SCHEMA = """
CREATE TABLE ledger_files (number INTEGER PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE TABLE placed (batch INTEGER NOT NULL, id TEXT NOT NULL, scene TEXT NOT NULL);
CREATE INDEX placed_by_id ON placed (id);
CREATE INDEX placed_by_batch ON placed (batch);
CREATE TABLE merged (batch INTEGER NOT NULL, survivor TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX merged_by_source ON merged (source);
CREATE INDEX merged_by_batch ON merged (batch);
"""
RACY_NS = 2_000_000_000     # a file this fresh may change again unseen (as for the journal)


def sync(conn, ledger_dir: Path) -> None:
    """Bring the ledger rows in step with ``ledger_dir`` (inside the caller's transaction).
    A ledger that cannot be read or parsed keeps no rows (``doctor`` names it)."""
    on_disk = numbered_files(ledger_dir, "json")
    known = {n: (size, mtime) for n, size, mtime in
             conn.execute("SELECT number, size, mtime_ns FROM ledger_files")}
    for number, st in on_disk.items():
        if known.get(number) == (st.st_size, st.st_mtime_ns):
            continue
        _forget(conn, number)
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            _apply(conn, number, json.loads(read_regular(ledger_dir / f"{number:06d}.json")))
        mtime = st.st_mtime_ns if time.time_ns() - st.st_mtime_ns > RACY_NS else -1
        conn.execute("INSERT OR REPLACE INTO ledger_files VALUES (?, ?, ?)",
                     (number, st.st_size, mtime))
    for number in known.keys() - on_disk.keys():
        _forget(conn, number)
        conn.execute("DELETE FROM ledger_files WHERE number = ?", (number,))


def _forget(conn, number: int) -> None:
    conn.execute("DELETE FROM placed WHERE batch = ?", (number,))
    conn.execute("DELETE FROM merged WHERE batch = ?", (number,))


def _apply(conn, number: int, data: dict) -> None:
    """The rows of one parsed ledger (``accounting.Ledger.render``'s shape)."""
    conn.executemany("INSERT INTO placed VALUES (?, ?, ?)", [
        (number, str(entry["id"]), str(scene)) for entry in data.get("memories", [])
        for scene in entry.get("scenes", [])])
    conn.executemany("INSERT INTO merged VALUES (?, ?, ?)", [
        (number, str(survivor), str(source))
        for survivor, sources in dict(data.get("merges", {})).items() for source in sources])


def scenes_of(conn, memory_id: str) -> list[str]:
    """The scenes that hold ``memory_id`` now by the ledgers: those its latest batch put it
    in, moved along every later batch's merges; [] when no ledger names it."""
    rows = conn.execute("SELECT batch, scene FROM placed WHERE id = ? ORDER BY batch DESC",
                        (memory_id,)).fetchall()
    if not rows:
        return []
    batch = rows[0][0]
    held = {scene for b, scene in rows if b == batch}
    for _, survivor, source in conn.execute(
            "SELECT batch, survivor, source FROM merged WHERE batch > ? ORDER BY batch",
            (batch,)):
        if source in held:
            held = (held - {source}) | {survivor}
    return sorted(held)
