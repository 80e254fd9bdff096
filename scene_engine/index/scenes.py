"""Derived search index of the scene files: SQLite + FTS5 (docs/DESIGN.md "Index and watcher").

The files are the truth; this database can be deleted and rebuilt at any time, and is rebuilt
automatically when it is corrupt or was written with another schema version.

Text goes through ``analysis`` before FTS5 sees it (English stemmed, stop words out, Chinese as
character pairs; questions segmented by jieba), so a question typed as people type it finds the
scene that holds its words.

Keeping in step, safely for every reader and writer:

- ``rebuild`` builds a whole new index in memory and copies it into the database file in one
  write transaction (SQLite's backup API), only once every file was read: a failed rebuild
  leaves the old index as it was, and every open connection (a watcher's too) sees the new one.
- Every write first checks that the database file is still the one this object opened (a
  person may delete it): if not, it reopens, so nothing is written into a deleted file.
- ``open_for_reading`` answers queries without ever needing write access: a busy writer or a
  read-only store gives results from the index as it is (or from a copy in memory brought up
  to date) with a one-line warning, never a traceback.
- Files are read with ``fsutil.read_regular``: a symbolic link in ``scenes/`` is never followed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from scene_engine.core.fs import NotRegularFile, read_regular
from scene_engine.core.text import one_line
from scene_engine.index import memories as memory_index
from scene_engine.index import places
from scene_engine.index.analysis import (
    CJK_RUN,
    FTS_TOKENIZER,
    QueryTerm,
    index_text,
    literal_query,
    query_terms,
)
from scene_engine.index.sqlite_rows import rows_in
from scene_engine.index.wal import use_wal
from scene_engine.store.layout import StoreError, StorePaths, is_utf8_name

SCHEMA_VERSION = 13  # 3: analysed text, bodies apart; 4: accents off, NFKC; 5: memories; 6: scan digest; 7: memory ids, facts; 8: scopes; 9: words_zh.txt; 10: conflict markers and repeated numbers named; 11: combining marks in words, letter pairs of Thai and other spaceless scripts; 12: ledgers (where batches put memories); 13: memory roles
# A file modified this close to the moment it was indexed may change again within the clock's
# granularity with the same size; don't trust size+mtime for it next time (git's "racy clean").
RACY_NS = 2_000_000_000
# bm25 column weights: name, summary, body.
WEIGHTS = (4.0, 2.0, 1.0)
SNIPPET_CHARS = 160
# Extra candidates fetched by BM25 alone so equal scores can still be ordered by heat.
TIE_SLACK = 20

BUSY_SECONDS = 5.0   # a writer waits this long for another writer
READ_BUSY_SECONDS = 1.0   # a query waits this long to bring the index up to date, then answers

_SCHEMA = f"""
CREATE TABLE scenes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL DEFAULT -1,
    checksum TEXT NOT NULL,
    summary TEXT NOT NULL,
    heat INTEGER NOT NULL,
    created TEXT,
    updated TEXT,
    header_ok INTEGER NOT NULL
);
-- Bodies apart: a rescan reads every row of ``scenes`` and should not page through the text.
CREATE TABLE bodies (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
-- recall's scene map lists the hottest scenes: an index, not a scan of every row.
CREATE INDEX scenes_by_heat ON scenes (heat DESC, name);
CREATE VIRTUAL TABLE scene_fts USING fts5(
    name, summary, body, content='', tokenize='{FTS_TOKENIZER}'
);
{memory_index.SCHEMA}
{places.SCHEMA}
CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT);
PRAGMA user_version = {SCHEMA_VERSION};
"""


@dataclass(frozen=True)
class Entry:
    """One indexed scene: file ``name``, sha256 hex ``checksum`` of its bytes, ``heat`` (0 when
    absent), ``summary`` ('' when absent), ``created``/``updated`` (aware datetime or None),
    ``size`` in bytes."""

    name: str
    checksum: str
    heat: int
    summary: str
    created: datetime | None
    updated: datetime | None
    size: int


@dataclass(frozen=True)
class Hit:
    """A search result: scene ``name``, its ``summary`` and ``heat``, a ``snippet`` of the body
    around the first matching term, ``score`` (negated BM25: higher is better) and
    ``fallback``: True when no scene held every word of the query and this one holds some."""

    name: str
    summary: str
    heat: int
    snippet: str
    score: float
    fallback: bool = False


@dataclass
class SyncReport:
    """What a ``sync``/``rebuild`` did: scene names ``added``, ``updated`` (content changed),
    ``removed``; ``unchanged`` count; ``warnings`` (unreadable headers, undecodable files) as
    text; ``seconds`` spent; ``memories_added``/``memories_removed``: journal records."""

    added: list[str]
    updated: list[str]
    removed: list[str]
    unchanged: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    memories_added: int = 0
    memories_removed: int = 0

    @property
    def changed(self) -> bool:
        """True if the index content changed (scenes or memories)."""
        return bool(self.added or self.updated or self.removed or self.memories_added
                    or self.memories_removed)


def fts_query(query: str, any_term: bool = False) -> str | None:
    """User text -> a safe FTS5 query string, or None if it holds no searchable term
    (see ``analysis.query_terms``). Terms are ANDed, or ORed with ``any_term``."""
    terms = query_terms(query)
    if not terms:
        return None
    return (" OR " if any_term else " AND ").join(t.fts for t in terms)


class IndexUnavailable(StoreError):
    """The index can be neither read nor rebuilt here; the message is one line for a person
    (exit code 1)."""


class SceneIndex:
    """The search index of one store's scene folder.

    ``db_path``: the SQLite file (e.g. ``ROOT/.scene-engine/index.sqlite``; its folder is
    created), or ``":memory:"``. ``scenes_dir``: the folder of ``*.md`` scene files (flat).
    ``busy_seconds``: how long a write waits for another writer. ``memories_dir`` and
    ``state_path``: the store's journal and ``state.json``, to index the memories too (see
    ``memory_index``; without them only scenes are kept). A connection belongs to the
    thread that made the index (sqlite3 rule): make one ``SceneIndex`` per thread.
    Raises ``sqlite3.OperationalError`` if the database stays locked by another writer for longer
    than ``busy_seconds``, or cannot be opened (e.g. a folder the user cannot write).
    """

    def __init__(self, db_path: Path | str, scenes_dir: Path, busy_seconds: float = BUSY_SECONDS,
                 *, memories_dir: Path | None = None, state_path: Path | None = None,
                 _conn: sqlite3.Connection | None = None):
        self.in_memory = str(db_path) == ":memory:"
        self.db_path = Path(db_path)
        self.scenes_dir = Path(scenes_dir)
        self.memories_dir = Path(memories_dir) if memories_dir else None
        self.state_path = Path(state_path) if state_path else None
        self.busy_seconds = busy_seconds
        self._identity: tuple[int, int] | None = None
        if _conn is not None:             # a connection made elsewhere (read-only, in memory)
            self.conn = _conn
            self._identity = None if self.in_memory else _identity(self.db_path)
            return
        if not self.in_memory:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = self._open()

    # -- database lifecycle -------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """Open the db; recreate it when corrupt or of another schema version."""
        conn = None
        try:
            conn = self._connect()
            if _schema_ok(conn):
                return conn
        except sqlite3.DatabaseError as err:
            if not _is_corruption(err) and "no such table" not in str(err):
                if conn is not None:
                    conn.close()
                raise
        if conn is not None:
            conn.close()
        return self._recreate()

    def _connect(self) -> sqlite3.Connection:
        target = ":memory:" if self.in_memory else self.db_path
        conn = sqlite3.connect(target, timeout=self.busy_seconds, isolation_level=None)
        if not self.in_memory:
            try:
                use_wal(conn, self.busy_seconds)   # another process may be opening it too
            except sqlite3.Error:
                conn.close()          # e.g. a folder this user cannot write: no open file left
                raise
            self._identity = _identity(self.db_path)
        return conn

    def _recreate(self) -> sqlite3.Connection:
        if not self.in_memory:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.db_path}{suffix}")
        conn = self._connect()
        conn.executescript(_SCHEMA)
        return conn

    def _reopen_if_replaced(self) -> None:
        """The database file was deleted or replaced since we opened it: open the one at the
        path now, so nothing is written into a file no one else will read."""
        if self.in_memory or _identity(self.db_path) == self._identity:
            return
        if not self.db_path.parent.is_dir():      # the store itself was moved or deleted
            raise IndexUnavailable(f"{self.db_path.parent} is gone (the store was moved or "
                                   "deleted); nothing was written")
        self.conn.close()
        self.conn = self._open()
        with contextlib.suppress(OSError):   # scenes/ unreadable now: the next sync fills it
            self._sync()   # a new, empty database: fill it, not only with what changes next

    def close(self) -> None:
        """Close the connection; the object is unusable afterwards."""
        self.conn.close()

    def __enter__(self) -> SceneIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- keeping in step with the files -------------------------------------------------

    def sync(self) -> SyncReport:
        """Bring the index in step with the folder, incrementally, in one transaction.

        A file whose size, mtime and ctime match the index is skipped without reading (ctime
        too: ``touch -r`` or a restore can give new text its old mtime); otherwise it
        is read and hashed (sha256) and re-parsed only if the checksum changed. Rows of files no
        longer present are removed. Returns a ``SyncReport``. A corrupt database is rebuilt.
        Raises ``OSError`` if ``scenes/`` exists but cannot be listed (nothing is changed).
        """
        return self._guarded(self._sync)

    def rebuild(self) -> SyncReport:
        """Index every scene file again, aside, and swap the result in.

        The new index is built in memory; only when every file was listed and read is it copied
        into the database file in one write transaction (open connections see it at once).
        Returns the ``SyncReport`` of the build (every scene in ``added``). Raises ``OSError``
        if ``scenes/`` or one of its files cannot be read: the old index is then left as it
        was.
        """
        fresh = SceneIndex(":memory:", self.scenes_dir, memories_dir=self.memories_dir,
                           state_path=self.state_path)
        try:
            report = fresh._sync(strict=True)
            self._install(fresh.conn)
        finally:
            fresh.close()
        return report

    def _install(self, source: sqlite3.Connection) -> None:
        """Copy the database ``source`` over ours in one transaction, or, when ours is
        unusable, write a new file beside it and rename it into place."""
        if self.in_memory:
            source.backup(self.conn)
            return
        self._reopen_if_replaced()
        try:
            source.backup(self.conn)
            return
        except sqlite3.DatabaseError as err:
            if not _is_corruption(err):
                raise
        self.conn.close()
        partial = self.db_path.with_name(f".{self.db_path.name}.{os.getpid()}.new")
        try:
            target = sqlite3.connect(partial)
            source.backup(target)
            target.close()
            for suffix in ("-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.db_path}{suffix}")
            os.replace(partial, self.db_path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)
        self.conn = self._open()

    def index_file(self, name: str) -> bool:
        """(Re)index the scene file ``name`` (e.g. ``"travel.md"``), or drop it if it is gone
        (or is not a regular file).

        Returns True if the index changed. Raises ``OSError`` if the file exists but cannot be
        read (the caller may retry).
        """
        if not _is_scene_name(name) or "/" in name or os.sep in name:
            return False        # not a scene (a name not UTF-8 cannot even be looked up)

        def run() -> bool:
            with self._transaction():
                known = self._known_row(name)
                return self._update_one(name, known, self._stat(name), [])
        return self._guarded(run)

    def _guarded(self, action):
        self._reopen_if_replaced()
        try:
            return action()
        except sqlite3.DatabaseError as err:
            if "readonly database" in str(err) and not self.in_memory \
                    and _identity(self.db_path) != self._identity:
                self._reopen_if_replaced()       # replaced while we wrote (SQLite noticed)
                return action()
            if not _is_corruption(err):
                raise
            self.conn.close()
            self.conn = self._recreate()
            self._sync()       # refill the new database before acting on it
            return action()

    def _sync(self, strict: bool = False) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport(added=[], updated=[], removed=[], warnings=[])
        on_disk = self._scan()
        signature = _signature(on_disk)
        with self._transaction():
            if self._meta("scan") == signature:   # no file added, removed, touched or edited
                report.unchanged = len(on_disk)
            else:
                self._sync_scenes(on_disk, report, strict)
                settled = not self.conn.execute(
                    "SELECT 1 FROM scenes WHERE mtime_ns = -1 LIMIT 1").fetchone()
                self._set_meta("scan", signature if settled else "")
            if self.memories_dir is not None:
                memory_index.sync(self.conn, self.memories_dir, self.state_path, report)
                if self.state_path is not None:
                    places.sync(self.conn, Path(self.state_path).parent / "ledger")
        report.seconds = time.perf_counter() - started
        return report

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO index_meta VALUES (?, ?)", (key, value))

    def _sync_scenes(self, on_disk: dict[str, os.stat_result], report: SyncReport,
                     strict: bool) -> None:
        """Index what changed among ``on_disk`` (name -> lstat), drop rows of files gone."""
        known = {row[0]: row[1:] for row in
                 self.conn.execute("SELECT name, id, size, mtime_ns, ctime_ns FROM scenes")}
        for name, st in on_disk.items():
            row = known.get(name)
            if row and row[1:] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns):
                report.unchanged += 1
                continue
            try:
                changed = self._update_one(name, row, st, report.warnings)
            except OSError as err:  # unreadable now: keep the old row, say so
                if strict:
                    raise OSError(err.errno, f"cannot read {name}: {err.strerror or err}",
                                  str(self.scenes_dir / name)) from err
                report.warnings.append(f"{name}: cannot read ({err.strerror or err})")
                continue
            if changed:
                (report.updated if row else report.added).append(name)
            else:
                report.unchanged += 1
        for name in known.keys() - on_disk.keys():
            self._delete(name, known[name][0])
            report.removed.append(name)

    def _scan(self) -> dict[str, os.stat_result]:
        """``{name: lstat}`` of the regular ``*.md`` files in ``scenes/`` ({} if it is
        missing). Raises ``OSError`` if it exists but cannot be listed (an unreadable folder
        is not an empty one) or is a symbolic link."""
        found: dict[str, os.stat_result] = {}
        if self.scenes_dir.is_symlink():   # its files are elsewhere: never read them
            raise NotRegularFile(0, "a symbolic link, not a folder in the store",
                                 str(self.scenes_dir))
        try:
            it = os.scandir(self.scenes_dir)
        except FileNotFoundError:
            return found
        with it:    # a plain loop: it runs once per scene file on every search
            for item in it:
                name = item.name
                if not name.endswith(".md") or name.startswith("."):
                    continue
                try:
                    st = item.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISREG(st.st_mode) and (name.isascii() or is_utf8_name(name)):
                    found[name] = st
        return found

    def _stat(self, name: str) -> os.stat_result | None:
        """lstat of ``scenes/name`` if it is a regular scene file, else None."""
        if not _is_scene_name(name) or "/" in name or os.sep in name:
            return None
        try:
            st = os.lstat(self.scenes_dir / name)
        except FileNotFoundError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _known_row(self, name: str) -> tuple | None:
        return self.conn.execute(
            "SELECT id, size, mtime_ns FROM scenes WHERE name = ?", (name,)).fetchone()

    def _update_one(self, name: str, row: tuple | None, st: os.stat_result | None,
                    notes: list[str]) -> bool:
        """Index one file given its known row (id, size, mtime_ns) and lstat."""
        data = None
        if st is not None:
            try:
                data = read_regular(self.scenes_dir / name)
            except (FileNotFoundError, NotRegularFile):  # gone, or swapped for a link
                data = None
        if st is None or data is None:   # data is None whenever st is
            if row:
                self._delete(name, row[0])
            return row is not None
        checksum = hashlib.sha256(data).hexdigest()
        settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS
        mtime_ns = st.st_mtime_ns if settled else -1
        if row and self.conn.execute("SELECT checksum FROM scenes WHERE id = ?",
                                     (row[0],)).fetchone()[0] == checksum:
            self.conn.execute("UPDATE scenes SET size = ?, mtime_ns = ?, ctime_ns = ?"
                              " WHERE id = ?", (st.st_size, mtime_ns, st.st_ctime_ns, row[0]))
            return False
        if row:
            self._delete(name, row[0])
        self._insert(name, data, checksum, st, mtime_ns, notes)
        return True

    def _insert(self, name: str, data: bytes, checksum: str, st: os.stat_result,
                mtime_ns: int, notes: list[str]) -> None:
        # Imported here: YAML parsing is only needed when a file changed, not for a search.
        from scene_engine.store.scene import MAX_HEAT, SceneHeaderWarning, parse_scene

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SceneHeaderWarning)
            text = _decode(data)
            scene = parse_scene(text, name=name)
        notes.extend(str(w.message) for w in caught)
        meta = scene.meta
        summary = meta.get("summary", "") or ""
        summary = summary if isinstance(summary, str) else str(summary)
        heat = meta.get("heat", 0)
        heat = heat if isinstance(heat, int) and 0 <= heat <= MAX_HEAT else 0
        cur = self.conn.execute(
            "INSERT INTO scenes (name, size, mtime_ns, ctime_ns, checksum, summary, heat,"
            " created, updated, header_ok) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, st.st_size, mtime_ns, st.st_ctime_ns, checksum, summary, heat,
             _iso(meta.get("created")), _iso(meta.get("updated")), scene.header_error is None))
        self.conn.execute("INSERT INTO bodies (id, body) VALUES (?, ?)",
                          (cur.lastrowid, scene.body))
        self.conn.execute(
            "INSERT INTO scene_fts (rowid, name, summary, body) VALUES (?, ?, ?, ?)",
            (cur.lastrowid, *_fts_values(name, summary, scene.body)))

    def _delete(self, name: str, row_id: int) -> None:
        # Contentless FTS5: a delete must repeat the exact tokens that were inserted.
        summary, body = self.conn.execute(
            "SELECT s.summary, b.body FROM scenes s JOIN bodies b ON b.id = s.id"
            " WHERE s.id = ?", (row_id,)).fetchone()
        self.conn.execute(
            "INSERT INTO scene_fts (scene_fts, rowid, name, summary, body)"
            " VALUES ('delete', ?, ?, ?, ?)", (row_id, *_fts_values(name, summary, body)))
        self.conn.execute("DELETE FROM scenes WHERE id = ?", (row_id,))
        self.conn.execute("DELETE FROM bodies WHERE id = ?", (row_id,))

    @contextlib.contextmanager
    def _transaction(self):
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- reading ------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, any_term: bool = False) -> list[Hit]:
        """Best ``k`` scenes for ``query`` (free text, any language; FTS syntax is not
        interpreted; stop words and question particles never decide a match). All words must
        match; if no scene has them all, any word may match and the hits say ``fallback``
        (``any_term=True`` skips straight to that, as recall wants for questions).
        Ranked by BM25 (name, summary, body weighted 4:2:1), then by heat. Returns ``[]`` for a
        query without searchable words."""
        terms = query_terms(query)
        if k <= 0 or not terms:
            return []
        for fallback, expr in _tiers(query, terms, any_term):
            # Rank inside FTS first (cheap), join the few best rows, then break ties by heat.
            rows = self._guarded(lambda e=expr: self.conn.execute(
                "SELECT s.name, s.summary, s.heat, b.body, m.rank FROM ("
                "  SELECT rowid, bm25(scene_fts, ?, ?, ?) AS rank FROM scene_fts"
                "  WHERE scene_fts MATCH ? ORDER BY rank LIMIT ?) m"
                " JOIN scenes s ON s.id = m.rowid JOIN bodies b ON b.id = m.rowid"
                " ORDER BY m.rank, s.heat DESC, s.name LIMIT ?",
                (*WEIGHTS, e, k + TIE_SLACK, k)).fetchall())
            if rows:
                return [Hit(name, summary, heat, make_snippet(body, _needles(terms)), -rank,
                            fallback)
                        for name, summary, heat, body, rank in rows]
        return []

    def search_memories(self, query: str, k: int = 10, any_term: bool = False,
                        scope: str | None = None) -> list[memory_index.MemoryHit]:
        """Best ``k`` memories of the journal for ``query``, as ``search`` finds scenes (same
        analyser and tiers; a forgotten memory never; with ``scope``, only memories of that
        scope or of none). Returns ``[]`` for a query without searchable words, or when this
        index was not given the journal."""
        terms = query_terms(query)
        if k <= 0 or not terms:
            return []

        def run():
            if not any_term:
                return memory_index.search(self.conn, _tiers(query, terms, False), k,
                                           scope=scope)
            # Recall: all words first, then any of the words that can still tell memories
            # apart (a word most memories hold would score every one of them).
            wide = memory_index.widening_terms(self.conn, terms)
            tiers = [(False, " AND ".join(t.fts for t in terms))]
            # The words as typed first: when they alone fill k, the looser forms (a Chinese
            # word jieba made up, matched by its characters: prefix scans over every pair
            # that starts with one) are never run.
            literal = literal_query(query)
            if literal and literal != tiers[0][1]:
                tiers.insert(0, (False, literal))
            if len(terms) > 1:
                tiers.append((False, " OR ".join(t.fts for t in wide)))
            return memory_index.search(self.conn, tiers, k, gather=True, scope=scope)
        return self._guarded(run)

    def newest_memories(self, query: str, k: int = 10, scope: str | None = None
                        ) -> list[memory_index.MemoryHit]:
        """The newest ``k`` memories holding any word of ``query`` (newest first, score 0;
        scope as ``search_memories``): the latest statements of a fact, whatever BM25 would
        make of them. ``[]`` for a query without searchable words."""
        terms = query_terms(query)
        if k <= 0 or not terms:
            return []
        expr = " OR ".join(dict.fromkeys(t.fts for t in terms))
        return self._guarded(lambda: memory_index.newest(self.conn, expr, k, scope=scope))

    def memory_scenes(self, memory_id: str) -> list[str]:
        """The scenes the batch ledgers say hold ``memory_id`` now (``places.scenes_of``);
        [] when no ledger names it or this index was not given the journal."""
        if self.memories_dir is None:
            return []
        return self._guarded(lambda: places.scenes_of(self.conn, memory_id))

    def journal_problems(self) -> list[str]:
        """The journal lines that are not whole records, one message each (the file and its
        line; ``memory_index.problems``): the memories there are in no search or recall
        until the line is fixed. [] when this index was not given the journal."""
        if self.memories_dir is None:
            return []
        return self._guarded(lambda: memory_index.problems(self.conn))

    def header_warning(self) -> str | None:
        """One line naming the scenes whose header could not be read (``header_ok`` 0: their
        heat, summary and dates are missing from what the index answers), or None."""
        names = self._guarded(lambda: [row[0] for row in self.conn.execute(
            "SELECT name FROM scenes WHERE header_ok = 0 ORDER BY name")])
        return header_warning(names)

    def journal_warning(self) -> str | None:
        """``journal_problems`` as one line for a reader's warning (None when there is
        none)."""
        return memory_index.problem_summary(self.journal_problems())

    def known_memory_places(self, ids: list[str]) -> dict[str, tuple[int, int]]:
        """``{id: (segment, line)}`` for those of ``ids`` the indexed journal holds (ids and
        aliases); for ``memories.Journal.plan_append`` after a ``sync``."""
        return self._guarded(lambda: memory_index.known_places(self.conn, ids))

    def memory_places(self, facts: list[tuple[str, datetime]]) -> dict:
        """``{(content, instant): [(segment, line), ...]}`` for those of ``facts`` the
        indexed journal states (one record each scope, role or type may state it); for
        ``memories.Journal.plan_append`` after a ``sync``."""
        return self._guarded(lambda: memory_index.places(self.conn, facts))

    def memory_count(self) -> int:
        """How many memories the journal has (the N of recall's word weights)."""
        return self._guarded(lambda: memory_index.count(self.conn))

    def memory_document_counts(self, terms: set[str]) -> dict[str, int]:
        """``{term: memories holding it}`` for index terms (``analysis.text_terms``)."""
        return self._guarded(lambda: memory_index.document_counts(self.conn, terms))

    def memories_by_id(self, ids: list[str]) -> list[memory_index.MemoryHit]:
        """The memories ``ids`` name (``memory_index.by_ids``: never a forgotten one); ``[]``
        when this index was not given the journal."""
        return self._guarded(lambda: memory_index.by_ids(self.conn, ids)) if ids else []

    def memory_roles(self, seqs: list[int]) -> dict[int, str]:
        """``{journal number: role}`` of those of ``seqs`` whose memory has a role
        (``memory_index.roles``); ``{}`` when this index was not given the journal."""
        return self._guarded(lambda: memory_index.roles(self.conn, seqs)) if seqs else {}

    def memory_texts(self, since: int = 0) -> list[tuple[int, str]]:
        """``(journal number, content)`` of every indexed memory numbered ``since`` or later
        (``memory_index.texts``)."""
        return self._guarded(lambda: memory_index.texts(self.conn, since))

    def memories_by_seq(self, seqs: list[int]) -> list[memory_index.MemoryHit]:
        """The memories of the journal numbers ``seqs``, in that order (never a forgotten
        one)."""
        return self._guarded(lambda: memory_index.by_seqs(self.conn, seqs)) if seqs else []

    def bodies(self, names: list[str]) -> dict[str, str]:
        """``{name: body}`` for the given scene names (unknown names are left out)."""
        return dict(rows_in(self.conn, "SELECT s.name, b.body FROM scenes s JOIN bodies b"
                                       " ON b.id = s.id WHERE s.name", names))

    def hottest(self, n: int) -> list[Hit]:
        """The ``n`` hottest scenes (ties by name) as hits without snippet or score."""
        rows = self.conn.execute(
            "SELECT name, summary, heat FROM scenes ORDER BY heat DESC, name LIMIT ?", (n,))
        return [Hit(name, summary, heat, "", 0.0) for name, summary, heat in rows]

    def entries(self) -> dict[str, Entry]:
        """Every indexed scene: ``{name: Entry}``."""
        rows = self.conn.execute(
            "SELECT name, checksum, heat, summary, created, updated, size FROM scenes")
        return {r[0]: Entry(r[0], r[1], r[2], r[3], _dt(r[4]), _dt(r[5]), r[6]) for r in rows}


def _tiers(query: str, terms: list[QueryTerm], any_term: bool) -> list[tuple[bool, str]]:
    """``(fallback, FTS5 expression)`` to try in order: the text as typed (a Chinese run as
    one phrase: exact, as grep finds it), then every word of it, then any word (a fallback);
    only the last with ``any_term``."""
    tries = [(False, " AND ".join(t.fts for t in terms))]
    literal = literal_query(query)
    if literal and literal != tries[0][1]:
        tries.insert(0, (False, literal))
    if len(terms) > 1:
        tries.append((not any_term, " OR ".join(t.fts for t in terms)))
    return tries[-1:] if any_term else tries


def for_store(store: StorePaths, **options: Any) -> SceneIndex:
    """The index of a store (``layout.StorePaths`` or ``store.Store``): its scenes and its
    memory journal. ``options`` as for ``SceneIndex``."""
    return SceneIndex(store.index_path, store.scenes_dir, memories_dir=store.memories_dir,
                      state_path=store.state_path, **options)


def header_warning(names: list[str]) -> str | None:
    """The warning for scenes whose header cannot be read, naming them, or None."""
    if not names:
        return None
    one = len(names) == 1
    return (f"{', '.join(map(one_line, names))} {'has a header' if one else 'have headers'} "
            "that cannot be "
            f"read, so {'its' if one else 'their'} heat, summary and dates are missing here "
            "(read as heat 0, no summary): `scenes doctor` says what is wrong")


def read_index(store: StorePaths) -> tuple[SceneIndex, str | None]:
    """``open_for_reading`` for a store (``layout.StorePaths`` or ``store.Store``): its
    scenes and its memory journal."""
    return open_for_reading(store.index_path, store.scenes_dir,
                            memories_dir=store.memories_dir, state_path=store.state_path)


class _Journal(TypedDict):
    """Where an index finds the memory journal (``SceneIndex``'s keyword arguments)."""

    memories_dir: Path | None
    state_path: Path | None


def open_for_reading(db_path: Path, scenes_dir: Path, *, memories_dir: Path | None = None,
                     state_path: Path | None = None) -> tuple[SceneIndex, str | None]:
    """An index to answer a query from, brought up to date where it can be, and a one-line
    warning when the answer may be stale (None when it is current).

    Never needs write access and never waits long: another process writing the index (busy
    for ``READ_BUSY_SECONDS``) gives the index as it is, with a warning; a store this user
    cannot write gets the index read-only, copied to memory and brought up to date there (or
    built in memory when there is none). Raises ``IndexUnavailable`` (a one-line message) when
    not even that works, e.g. ``scenes/`` cannot be listed.
    """
    journal: _Journal = {"memories_dir": memories_dir, "state_path": state_path}
    try:
        index = SceneIndex(db_path, scenes_dir, busy_seconds=READ_BUSY_SECONDS, **journal)
    except (sqlite3.OperationalError, PermissionError) as err:
        if _is_busy(err):
            return _stale_reader(db_path, scenes_dir, journal)
        return _private_copy(db_path, scenes_dir, journal), None
    try:
        index.sync()
    except sqlite3.OperationalError as err:
        if _is_busy(err):
            return index, "search index busy (another process is writing it); results may be stale"
        if "readonly" not in str(err):
            index.close()
            raise
        index.close()
        return _private_copy(db_path, scenes_dir, journal), None
    except OSError as err:
        return index, (f"cannot read {err.filename or scenes_dir} ({err.strerror or err}); "
                       "results may be stale")
    return index, None


def _stale_reader(db_path: Path, scenes_dir: Path, journal: _Journal) -> tuple[SceneIndex, str]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=READ_BUSY_SECONDS,
                           isolation_level=None)
    return (SceneIndex(db_path, scenes_dir, _conn=conn, **journal),
            "search index busy (another process is writing it); results may be stale")


def _private_copy(db_path: Path, scenes_dir: Path, journal: _Journal) -> SceneIndex:
    """The index in memory: a copy of the file at ``db_path`` when it can be read (read-only,
    WAL included where possible), brought up to date with ``scenes/``; else built afresh."""
    memory = SceneIndex(":memory:", scenes_dir, **journal)
    for mode in ("ro", "ro&immutable=1"):   # immutable: the -shm file cannot be made here
        try:
            source = sqlite3.connect(f"file:{db_path}?mode={mode}", uri=True)
            try:
                if _schema_ok(source):
                    source.backup(memory.conn)
                    break
            finally:
                source.close()
        except sqlite3.DatabaseError:
            continue
    try:
        memory.sync()
    except OSError as err:
        memory.close()
        raise IndexUnavailable(f"cannot read {err.filename or scenes_dir}: "
                               f"{err.strerror or err}") from err
    return memory


def _schema_ok(conn: sqlite3.Connection) -> bool:
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return False
    for table in ("scenes", "bodies", "scene_fts", "memories", "memory_fts", "index_meta"):
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()   # there, not counted
    return True


def _decode(data: bytes) -> str:
    """A scene's text for the index: UTF-8; else what an old editor may have saved (batches
    leave such a file alone and ``doctor`` names it, but its words stay findable): UTF-16
    with a byte-order mark, GBK/GB18030 when that reads as Chinese, else Windows-1252."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        with contextlib.suppress(UnicodeDecodeError):
            return data.decode("utf-16")
    with contextlib.suppress(UnicodeDecodeError):
        text = data.decode("gb18030")
        wide = [c for c in text if ord(c) > 0x7F]
        if len(wide) >= 2 and all(CJK_RUN.fullmatch(c) or "\u3000" <= c <= "\u303f"
                                  or "\uff00" <= c <= "\uffef" for c in wide):
            return text
    return data.decode("cp1252", errors="replace")


def _is_busy(err: BaseException) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _needles(terms: list[QueryTerm]) -> list[str]:
    return [t.needle for t in terms]


def make_snippet(body: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``body`` around the first of ``terms`` found
    (case-insensitive), whitespace collapsed, ``…`` where cut; the body's start if none is
    found."""
    text = " ".join(body.split())
    folded = text.casefold()
    hits = [p for p in (folded.find(t.casefold()) for t in terms) if p >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    piece = text[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def _fts_values(name: str, summary: str, body: str) -> tuple[str, str, str]:
    return index_text(name.removesuffix(".md")), index_text(summary), index_text(body)


def _is_scene_name(name: str) -> bool:
    return (name.endswith(".md") and not name.startswith(".")
            and (name.isascii() or is_utf8_name(name)))


def _signature(on_disk: dict[str, os.stat_result]) -> str:
    """A fingerprint of every scene file's name, size, mtime and ctime: equal to the last
    sync's, nothing changed and no row need be read (a rescan of 10,000 scenes reads
    10,000 rows otherwise). The names are hashed; the numbers are summed, each weighted by
    its file's place, so any one file's change moves the sum (cheap: no text per file)."""
    names = sorted(on_disk)
    sums = [0, 0, 0]
    for place, name in enumerate(names, start=1):
        st = on_disk[name]
        sums[0] += place * st.st_size
        sums[1] += place * st.st_mtime_ns
        sums[2] += place * st.st_ctime_ns
    named = hashlib.blake2b("\0".join(names).encode("utf-8", "surrogateescape"),
                            digest_size=16).hexdigest()
    return f"{len(names)}:{named}:{sums[0]}:{sums[1]}:{sums[2]}"


def _is_corruption(err: sqlite3.DatabaseError) -> bool:
    text = str(err).lower()
    if any(word in text for word in ("malformed", "not a database", "corrupt")):
        return True
    return type(err) is sqlite3.DatabaseError


def _iso(value) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
