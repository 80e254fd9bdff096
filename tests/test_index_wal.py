"""An index file opened while another process writes it (the CI fault of stop 34: two
processes syncing a new vectors file at once; one answered "database is locked" at once).

SQLite does not wait on its busy handler to switch a file to WAL: a write lock held by
another connection makes ``PRAGMA journal_mode=WAL`` fail at once. Both the full-text index
and the vectors file must wait for it like any other write, and still say so clearly when
the lock outlives the wait.
"""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from scene_engine.index import dense
from scene_engine.index.scenes import SceneIndex


class NoModel:
    """An ``Embedder`` that never embeds: opening a vectors file needs no model."""

    name = "none"
    key = "none"
    dim = 4

    def passage(self, texts):
        raise AssertionError("nothing is embedded by opening")

    def query(self, text):
        raise AssertionError("nothing is embedded by opening")


def _held(path, seconds):
    """A new file in rollback-journal mode, write-locked by another connection; released
    after ``seconds`` (None: never, the caller rolls back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE IF NOT EXISTS other_writer(x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO other_writer VALUES (1)")
    if seconds is not None:
        threading.Timer(seconds, holder.execute, ("ROLLBACK",)).start()
    return holder


def _journal_mode(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA journal_mode").fetchone()[0]


def _open_scene_index(tmp_path, busy_seconds):
    db = tmp_path / ".scene-engine" / "index.sqlite"
    (tmp_path / "scenes").mkdir(exist_ok=True)
    return db, lambda: SceneIndex(db, tmp_path / "scenes", busy_seconds=busy_seconds)


def _open_vectors(tmp_path, busy_seconds):
    folder = tmp_path / ".scene-engine"
    return folder / dense.file_name(NoModel()), lambda: dense.DenseIndex(
        folder, embedder=NoModel(), busy_seconds=busy_seconds)


OPENERS = pytest.mark.parametrize("opener", [_open_scene_index, _open_vectors],
                                  ids=["full-text index", "vectors"])
# what each documents it raises when the lock outlives the wait
STILL_LOCKED = {_open_scene_index: sqlite3.OperationalError, _open_vectors: dense.VectorsUnavailable}


@OPENERS
def test_an_index_file_locked_by_another_writer_is_opened_once_it_is_free(tmp_path, opener):
    path, open_index = opener(tmp_path, busy_seconds=5.0)
    holder = _held(path, seconds=0.3)
    started = time.monotonic()
    with open_index():
        waited = time.monotonic() - started
    holder.close()
    assert waited >= 0.25             # it waited for the other writer, then opened
    assert _journal_mode(path) == "wal"


@OPENERS
def test_a_lock_that_outlives_the_wait_is_a_clear_error(tmp_path, opener):
    path, open_index = opener(tmp_path, busy_seconds=0.2)
    holder = _held(path, seconds=None)
    try:
        with pytest.raises(STILL_LOCKED[opener], match="locked"):
            open_index()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _journal_mode(path) == "delete"          # nothing half-switched was left
