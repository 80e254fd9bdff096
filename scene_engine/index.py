"""Derived search index of the scene files: SQLite + FTS5 (DESIGN.md "Index and watcher").

The files are the truth; this database can be deleted and rebuilt at any time, and is rebuilt
automatically when it is corrupt or was written with another schema version.

Chinese/Japanese/Korean text: the stock ``unicode61`` tokenizer keeps a run of CJK characters as
one token and the ``trigram`` tokenizer cannot match two-character words, so text is
pre-tokenised in Python: every CJK run becomes its overlapping character bigrams plus its last
character alone (``咖啡馆`` -> ``咖啡 啡馆 馆``). A query run of two or more characters becomes a
phrase of bigrams; a single character becomes a prefix query (it starts a bigram or ends a run).
Everything else is left to ``unicode61`` (case and diacritics folded).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import time
import warnings
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .scene import SceneHeaderWarning, parse_scene

SCHEMA_VERSION = 2
# A file modified this close to the moment it was indexed may change again within the clock's
# granularity with the same size; don't trust size+mtime for it next time (git's "racy clean").
RACY_NS = 2_000_000_000
# bm25 column weights: name, summary, body.
WEIGHTS = (4.0, 2.0, 1.0)
SNIPPET_CHARS = 160
# Extra candidates fetched by BM25 alone so equal scores can still be ordered by heat.
TIE_SLACK = 20

_CJK = (r"\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u31a0-\u31bf"
        r"\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A query term: a CJK run, or a run of word characters that are not CJK.
_QUERY_TERM = re.compile(f"[{_CJK}]+|(?:(?![{_CJK}])\\w)+")

_SCHEMA = f"""
CREATE TABLE scenes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    checksum TEXT NOT NULL,
    summary TEXT NOT NULL,
    heat INTEGER NOT NULL,
    created TEXT,
    updated TEXT,
    header_ok INTEGER NOT NULL,
    body TEXT NOT NULL
);
-- recall's scene map lists the hottest scenes: an index, not a scan of every row.
CREATE INDEX scenes_by_heat ON scenes (heat DESC, name);
CREATE VIRTUAL TABLE scene_fts USING fts5(
    name, summary, body, content='', tokenize='unicode61 remove_diacritics 2'
);
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
    around the first matching term, and ``score`` (negated BM25: higher is better)."""

    name: str
    summary: str
    heat: int
    snippet: str
    score: float


@dataclass
class SyncReport:
    """What a ``sync``/``rebuild`` did: names ``added``, ``updated`` (content changed),
    ``removed``; ``unchanged`` count; ``warnings`` (unreadable headers, undecodable files) as
    text; ``seconds`` spent."""

    added: list[str]
    updated: list[str]
    removed: list[str]
    unchanged: int = 0
    warnings: list[str] | None = None
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        """True if the index content changed."""
        return bool(self.added or self.updated or self.removed)


def tokenize(text: str) -> str:
    """Text for FTS5: each CJK run replaced by its bigrams and last character, space separated.

    ``"I like 咖啡馆"`` -> ``"I like  咖啡 啡馆 馆 "``. Non-CJK text is returned unchanged.
    """
    return _CJK_RUN.sub(_expand_run, text)


def _expand_run(match: re.Match) -> str:
    run = match.group()
    return " " + " ".join(map(str.__add__, run, run[1:])) + " " + run[-1] + " "


def fts_query(query: str, any_term: bool = False) -> str | None:
    """User text -> a safe FTS5 query string, or None if it holds no searchable term.

    Every term is quoted, so FTS syntax in the input (quotes, ``AND``/``OR``/``NEAR``, ``*``,
    ``:``, ``^``, parentheses) is searched as plain words. Terms are ANDed, or ORed with
    ``any_term``. A CJK run of 2+ characters becomes a bigram phrase, one CJK character a prefix.
    """
    parts = []
    for term in _QUERY_TERM.findall(query):
        if _CJK_RUN.fullmatch(term):
            if len(term) == 1:
                parts.append(f'"{term}"*')
            else:
                parts.append('"' + " ".join(term[i:i + 2] for i in range(len(term) - 1)) + '"')
        else:
            parts.append('"' + term.replace('"', '""') + '"')
    if not parts:
        return None
    return (" OR " if any_term else " AND ").join(parts)


class SceneIndex:
    """The search index of one store's scene folder.

    ``db_path``: the SQLite file (e.g. ``ROOT/.scene-engine/index.sqlite``; its folder is
    created). ``scenes_dir``: the folder of ``*.md`` scene files (flat). A connection belongs to
    the thread that made the index (sqlite3 rule): make one ``SceneIndex`` per thread.
    Raises ``sqlite3.OperationalError`` if the database stays locked by another writer for longer
    than the busy timeout (5 s).
    """

    def __init__(self, db_path: Path, scenes_dir: Path):
        self.db_path = Path(db_path)
        self.scenes_dir = Path(scenes_dir)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = self._open()

    # -- database lifecycle -------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """Open the db; recreate it when corrupt or of another schema version."""
        conn = None
        try:
            conn = self._connect()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == SCHEMA_VERSION:
                conn.execute("SELECT count(*) FROM scenes").fetchone()
                conn.execute("SELECT count(*) FROM scene_fts").fetchone()
                return conn
        except sqlite3.DatabaseError as err:
            if not _is_corruption(err) and "no such table" not in str(err):
                raise
        if conn is not None:
            conn.close()
        return self._recreate()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=5.0, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # derived data: WAL+NORMAL is safe enough
        return conn

    def _recreate(self) -> sqlite3.Connection:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.db_path}{suffix}")
        conn = self._connect()
        conn.executescript(_SCHEMA)
        return conn

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

        A file whose size and mtime_ns match the index is skipped without reading; otherwise it
        is read and hashed (sha256) and re-parsed only if the checksum changed. Rows of files no
        longer present are removed. Returns a ``SyncReport``. A corrupt database is rebuilt.
        """
        return self._guarded(self._sync)

    def rebuild(self) -> SyncReport:
        """Drop the database and index every scene file again. Returns a ``SyncReport``."""
        self.conn.close()
        self.conn = self._recreate()
        return self._sync()

    def index_file(self, name: str) -> bool:
        """(Re)index the scene file ``name`` (e.g. ``"travel.md"``), or drop it if it is gone.

        Returns True if the index changed. Raises ``OSError`` if the file exists but cannot be
        read (the caller may retry).
        """
        def run() -> bool:
            with self._transaction():
                known = self._known_row(name)
                return self._update_one(name, known, self._stat(name), [])
        return self._guarded(run)

    def _guarded(self, action):
        try:
            return action()
        except sqlite3.DatabaseError as err:
            if not _is_corruption(err):
                raise
            self.conn.close()
            self.conn = self._recreate()
            return action()

    def _sync(self) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport(added=[], updated=[], removed=[], warnings=[])
        on_disk = self._scan()
        with self._transaction():
            known = {row[0]: row[1:] for row in
                     self.conn.execute("SELECT name, id, size, mtime_ns, checksum FROM scenes")}
            for name, st in on_disk.items():
                row = known.get(name)
                if row and (row[1], row[2]) == (st.st_size, st.st_mtime_ns):
                    report.unchanged += 1
                    continue
                try:
                    changed = self._update_one(name, row, st, report.warnings)
                except OSError as err:  # unreadable now: keep the old row, say so
                    report.warnings.append(f"{name}: cannot read ({err})")
                    continue
                if changed:
                    (report.updated if row else report.added).append(name)
                else:
                    report.unchanged += 1
            for name in known.keys() - on_disk.keys():
                self._delete(name, known[name][0])
                report.removed.append(name)
        report.seconds = time.perf_counter() - started
        return report

    def _scan(self) -> dict[str, os.stat_result]:
        found = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self.scenes_dir) as it:
            for item in it:
                if _is_scene_name(item.name) and item.is_file(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        found[item.name] = item.stat(follow_symlinks=False)
        return found

    def _stat(self, name: str) -> os.stat_result | None:
        if not _is_scene_name(name) or "/" in name or os.sep in name:
            return None
        try:
            st = os.stat(self.scenes_dir / name, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return st if os.path.isfile(self.scenes_dir / name) else None

    def _known_row(self, name: str) -> tuple | None:
        return self.conn.execute(
            "SELECT id, size, mtime_ns, checksum FROM scenes WHERE name = ?", (name,)).fetchone()

    def _update_one(self, name: str, row: tuple | None, st: os.stat_result | None,
                    notes: list[str]) -> bool:
        """Index one file given its known row (id, size, mtime_ns, checksum) and stat."""
        if st is None:
            if row:
                self._delete(name, row[0])
            return row is not None
        try:
            data = (self.scenes_dir / name).read_bytes()
        except FileNotFoundError:  # deleted between scan and read
            if row:
                self._delete(name, row[0])
            return row is not None
        checksum = hashlib.sha256(data).hexdigest()
        mtime_ns = st.st_mtime_ns if time.time_ns() - st.st_mtime_ns > RACY_NS else -1
        if row and row[3] == checksum:
            self.conn.execute("UPDATE scenes SET size = ?, mtime_ns = ? WHERE id = ?",
                              (st.st_size, mtime_ns, row[0]))
            return False
        if row:
            self._delete(name, row[0])
        self._insert(name, data, checksum, st.st_size, mtime_ns, notes)
        return True

    def _insert(self, name: str, data: bytes, checksum: str, size: int, mtime_ns: int,
                notes: list[str]) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SceneHeaderWarning)
            text = data.decode("utf-8", errors="replace")
            scene = parse_scene(text, name=name)
        notes.extend(str(w.message) for w in caught)
        meta = scene.meta
        summary = meta.get("summary", "") or ""
        heat = meta.get("heat", 0)
        cur = self.conn.execute(
            "INSERT INTO scenes (name, size, mtime_ns, checksum, summary, heat, created, updated,"
            " header_ok, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, size, mtime_ns, checksum, summary, heat, _iso(meta.get("created")),
             _iso(meta.get("updated")), scene.header_error is None, scene.body))
        self.conn.execute(
            "INSERT INTO scene_fts (rowid, name, summary, body) VALUES (?, ?, ?, ?)",
            (cur.lastrowid, *_fts_values(name, summary, scene.body)))

    def _delete(self, name: str, row_id: int) -> None:
        # Contentless FTS5: a delete must repeat the exact tokens that were inserted.
        summary, body = self.conn.execute(
            "SELECT summary, body FROM scenes WHERE id = ?", (row_id,)).fetchone()
        self.conn.execute(
            "INSERT INTO scene_fts (scene_fts, rowid, name, summary, body)"
            " VALUES ('delete', ?, ?, ?, ?)", (row_id, *_fts_values(name, summary, body)))
        self.conn.execute("DELETE FROM scenes WHERE id = ?", (row_id,))

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
        interpreted). All terms must match; if no scene has them all, any term may match
        (``any_term=True`` skips straight to that, as recall wants for questions).
        Ranked by BM25 (name, summary, body weighted 4:2:1), then by heat. Returns ``[]`` for a
        query without words."""
        if k <= 0:
            return []
        for either in ((True,) if any_term else (False, True)):
            expr = fts_query(query, either)
            if expr is None:
                return []
            # Rank inside FTS first (cheap), join the few best rows, then break ties by heat.
            rows = self._guarded(lambda e=expr: self.conn.execute(
                "SELECT s.name, s.summary, s.heat, s.body, m.rank FROM ("
                "  SELECT rowid, bm25(scene_fts, ?, ?, ?) AS rank FROM scene_fts"
                "  WHERE scene_fts MATCH ? ORDER BY rank LIMIT ?) m"
                " JOIN scenes s ON s.id = m.rowid ORDER BY m.rank, s.heat DESC, s.name LIMIT ?",
                (*WEIGHTS, e, k + TIE_SLACK, k)).fetchall())
            if rows:
                terms = _QUERY_TERM.findall(query)
                return [Hit(name, summary, heat, make_snippet(body, terms), -rank)
                        for name, summary, heat, body, rank in rows]
        return []

    def bodies(self, names: list[str]) -> dict[str, str]:
        """``{name: body}`` for the given scene names (unknown names are left out)."""
        found = {}
        for start in range(0, len(names), 500):   # stay under SQLite's bound-parameter limit
            chunk = names[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.conn.execute(
                f"SELECT name, body FROM scenes WHERE name IN ({marks})", chunk).fetchall())
        return found

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
    return tokenize(name.removesuffix(".md")), tokenize(summary), tokenize(body)


def _is_scene_name(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


def _is_corruption(err: sqlite3.DatabaseError) -> bool:
    text = str(err).lower()
    if any(word in text for word in ("malformed", "not a database", "corrupt")):
        return True
    return type(err) is sqlite3.DatabaseError


def _iso(value) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
