"""The memory journal (L1) in the search index, beside the scenes (docs/DESIGN.md "Index and watcher").

Recall searches the atomic memories as well as the scene narratives, so the journal is indexed
in the same SQLite database with the same analyser (``analysis``). The journal is append-only
JSONL segments of 1,000 records (``memories.Journal``); a segment is re-read only when its size
or modification time changed, and a memory's row only rewritten when its text changed, so
keeping in step costs one ``stat`` a segment. Memories an ``undo --forget`` dropped (``forgotten``
in ``state.json``) stay indexed but are never returned. A line that is not a whole record (a
half-written line, bytes that are not UTF-8, JSON that is not an object) costs only itself:
every other line of its segment is indexed, and the index keeps the line's message
(``memories.bad_line``, with its line in the file) for every read to repeat (``problems``)
until the segment changes.

Functions here work on a ``SceneIndex``'s connection inside its transactions; ``SceneIndex``
calls them when it was given the journal's folder.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scene_engine.core.fs import numbered_files, read_regular
from scene_engine.index.analysis import FTS_TOKENIZER, index_text
from scene_engine.index.sqlite_rows import rows_in

SCHEMA = f"""
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    content TEXT NOT NULL,
    segment INTEGER NOT NULL,
    line INTEGER NOT NULL,
    fact INTEGER NOT NULL,
    scope TEXT,
    role TEXT,
    forgotten INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_by_segment ON memories (segment);
CREATE INDEX memories_by_fact ON memories (fact);
CREATE TABLE memory_ids (id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX memory_ids_by_seq ON memory_ids (seq);
CREATE TABLE memory_segments (number INTEGER PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, content='', tokenize='{FTS_TOKENIZER}'
);
CREATE VIRTUAL TABLE memory_vocab USING fts5vocab(memory_fts, 'row');
"""
COMMON = 0.1     # a word in more than this share of the memories does not widen a search
BROAD = 3000     # a query matching more memories than this takes the newest, not BM25's best
RACY_NS = 2_000_000_000     # as for scenes: a file this fresh may change again unseen


@dataclass(frozen=True)
class MemoryHit:
    """A memory found by a search: journal number ``seq``, its ``id``, ``created_at`` (ISO
    8601 text as stored), ``content``, ``score`` (negated BM25: higher is better) and
    ``fallback`` (no memory held every word of the query; this one holds some)."""

    seq: int
    id: str
    created_at: str
    content: str
    score: float
    fallback: bool = False


def sync(conn, memories_dir: Path, state_path: Path | None, report) -> None:
    """Bring the indexed journal in step with ``memories_dir`` (inside the caller's
    transaction); ``report``: the caller's ``SyncReport`` (``memories_added`` and
    ``memories_removed`` are counted, unreadable segments go to its warnings)."""
    on_disk = numbered_files(memories_dir, "jsonl")
    known = {n: (size, mtime) for n, size, mtime in
             conn.execute("SELECT number, size, mtime_ns FROM memory_segments")}
    for number, st in on_disk.items():
        if known.get(number) == (st.st_size, st.st_mtime_ns):
            continue
        path = memories_dir / f"{number:05d}.jsonl"
        try:
            records, bad = _records(read_regular(path), f"memories/{path.name}")
        except OSError as err:    # unreadable: keep what was indexed
            report.warnings.append(f"memories/{path.name}: cannot index ({err})")
            continue
        _apply_segment(conn, number, records, report)
        _keep_problems(conn, number, bad)
        report.warnings.extend(bad)
        mtime = st.st_mtime_ns if time.time_ns() - st.st_mtime_ns > RACY_NS else -1
        conn.execute("INSERT OR REPLACE INTO memory_segments VALUES (?, ?, ?)",
                     (number, st.st_size, mtime))
    for number in known.keys() - on_disk.keys():
        _apply_segment(conn, number, [], report)
        _keep_problems(conn, number, [])
        conn.execute("DELETE FROM memory_segments WHERE number = ?", (number,))
    if state_path is not None:
        _sync_forgotten(conn, state_path)


def fact_key(content: str, created_at: datetime) -> int:
    """A 64-bit key of (content, instant): two records with the same key state, after a check
    of both, the same fact (one memory when their scope, role and type agree too:
    ``memories.Journal.plan_append``)."""
    instant = created_at.astimezone(UTC).isoformat() if created_at.tzinfo else \
        created_at.isoformat()
    digest = hashlib.blake2b(f"{content}\0{instant}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _records(data: bytes, rel: str) -> tuple[list[tuple], list[str]]:
    """(rows, problems) of a segment's bytes (``rel``: its path for messages). Rows: (seq,
    id, created_at, content, scope, aliases, line, role) of each whole record (``line``
    counts non-blank lines from 0, as ``memories.Journal`` does, bad ones included; ``scope``
    and ``role`` text or None). Problems: a ``memories.bad_line`` message for each line that is not a whole
    record (``memories.parse_record``, the journal's own rule)."""
    from scene_engine.store.memories import bad_line, journal_rows, parse_record

    rows, problems = [], []
    first: dict[int, int] = {}           # seq -> the line that holds it
    for offset, (number, line) in enumerate(journal_rows(data)):
        try:
            record = parse_record(line)
        except ValueError as exc:
            problems.append(bad_line(rel, number, str(exc)))
            continue
        seq = record["seq"]
        if seq in first:   # two copies merged: the index holds one memory a number
            problems.append(f"{rel} line {number} holds memory #{seq} as line {first[seq]} "
                            "does (two copies of this store merged): only one of them is "
                            "searched until `scenes repair` numbers the journal anew")
            continue
        first[seq] = number
        scope, role = record.get("scope"), record.get("role")
        rows.append((record["seq"], record["id"], record["created_at"], record["content"],
                     None if scope is None else str(scope),
                     tuple(map(str, record.get("aliases") or ())), offset,
                     None if role is None else str(role)))
    return rows, problems


def _keep_problems(conn, number: int, problems: list[str]) -> None:
    """Remember the bad lines of segment ``number`` (none: forget them)."""
    if problems:
        conn.execute("INSERT OR REPLACE INTO memory_meta VALUES (?, ?)",
                     (f"bad:{number:05d}", json.dumps(problems)))
    else:
        conn.execute("DELETE FROM memory_meta WHERE key = ?", (f"bad:{number:05d}",))


def problems(conn) -> list[str]:
    """The message of every journal line the last sync could not index (``_records``), in
    journal order: a memory there is missing from every search until the line is fixed."""
    rows = conn.execute("SELECT value FROM memory_meta WHERE key LIKE 'bad:%' ORDER BY key")
    return [text for (value,) in rows for text in json.loads(value)]


def problem_summary(found: list[str]) -> str | None:
    """One line for a reader's warning: the first bad line's message and how many more
    (``scenes doctor`` lists them all); None when there is none."""
    if not found:
        return None
    rest = len(found) - 1
    more = (f" (and {rest} more such {'line' if rest == 1 else 'lines'}: `scenes doctor` "
            "lists them)") if rest else ""
    return f"{found[0]}{more}"


def _apply_segment(conn, number: int, records, report) -> None:
    """Make the indexed memories of segment ``number`` those of ``records``."""
    old = {}
    for seq, mid, created, content, scope, line, role in conn.execute(
            "SELECT seq, id, created_at, content, scope, line, role FROM memories"
            " WHERE segment = ?", (number,)):
        old[seq] = (mid, created, content, scope, line, role)
    new = {seq: rest for seq, *rest in records}
    for seq in old.keys() - new.keys():
        _delete(conn, seq, old[seq][2])
        report.memories_removed += 1
    known = _aliases(conn, old)
    fresh = []
    for seq, (mid, created, content, scope, aliases, line, role) in new.items():
        if old.get(seq) == (mid, created, content, scope, line, role) and \
                known.get(seq, set()) == set(aliases):
            continue
        if seq in old:
            _delete(conn, seq, old[seq][2])
        fresh.append((seq, mid, created, content, scope, aliases, line, role))
        report.memories_added += seq not in old
    conn.executemany(
        "INSERT INTO memories (seq, id, created_at, content, segment, line, fact, scope, role)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(seq, mid, created, content, number, line, _fact(content, created), scope, role)
         for seq, mid, created, content, scope, _, line, role in fresh])
    conn.executemany("INSERT INTO memory_fts (rowid, content) VALUES (?, ?)",
                     [(row[0], index_text(row[3])) for row in fresh])
    conn.executemany("INSERT OR REPLACE INTO memory_ids VALUES (?, ?)",
                     [(i, row[0]) for row in fresh for i in (row[1], *row[5])])


def _aliases(conn, old: dict[int, tuple]) -> dict[int, set[str]]:
    """The indexed aliases of the memories ``old`` (seq -> row, the id first), in one query
    per segment: a segment re-read unchanged (written moments ago) costs no query a record."""
    if not old:
        return {}
    found: dict[int, set[str]] = {}
    for seq, alias in conn.execute("SELECT seq, id FROM memory_ids WHERE seq BETWEEN ? AND ?",
                                   (min(old), max(old))):
        if seq in old and alias != old[seq][0]:
            found.setdefault(seq, set()).add(alias)
    return found


def _fact(content: str, created_at: str) -> int:
    try:
        return fact_key(content, datetime.fromisoformat(created_at))
    except ValueError:       # not a time: never the same fact as a valid record
        return 0


def _delete(conn, seq: int, content: str) -> None:
    # Contentless FTS5: a delete repeats the tokens that were inserted.
    conn.execute("INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', ?, ?)",
                 (seq, index_text(content)))
    conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
    conn.execute("DELETE FROM memory_ids WHERE seq = ?", (seq,))


def known_places(conn, ids: list[str]) -> dict[str, tuple[int, int]]:
    """``{id: (segment, line)}`` for those of ``ids`` the journal holds (as an id or an
    alias): where the memory's record is."""
    return {memory_id: (segment, line) for memory_id, segment, line in rows_in(
        conn, "SELECT i.id, m.segment, m.line FROM memory_ids i JOIN memories m ON m.seq = i.seq"
              " WHERE i.id", ids)}


def places(conn, facts: list[tuple[str, datetime]]) -> dict[tuple[str, datetime], list]:
    """``{(content, instant): [(segment, line), ...]}`` for those of ``facts`` journal
    records state (the same content at the same instant; several records when their scopes,
    roles or types differ), in journal order."""
    keyed = {fact_key(c, t): (c, t) for c, t in facts}
    found: dict[tuple[str, datetime], list] = {}
    listed = list(keyed)
    for start in range(0, len(listed), 500):
        chunk = listed[start:start + 500]
        for fact, content, created, segment, line in conn.execute(
                "SELECT fact, content, created_at, segment, line FROM memories"
                f" WHERE fact IN ({','.join('?' * len(chunk))}) ORDER BY seq", chunk):
            want = keyed[fact]
            if content == want[0] and datetime.fromisoformat(created) == want[1]:
                found.setdefault(want, []).append((segment, line))
    return found


def _sync_forgotten(conn, state_path: Path) -> None:
    """Mark the memories ``state.json`` lists as forgotten (only when that list changed)."""
    try:
        forgotten = sorted(int(s) for s in json.loads(
            read_regular(state_path).decode("utf-8")).get("forgotten", []))
    except (OSError, ValueError, TypeError, AttributeError):
        return                        # no readable state: leave the marks as they are
    stamp = json.dumps(forgotten)
    row = conn.execute("SELECT value FROM memory_meta WHERE key = 'forgotten'").fetchone()
    if row and row[0] == stamp:
        return
    conn.execute("UPDATE memories SET forgotten = 0 WHERE forgotten = 1")
    for start in range(0, len(forgotten), 500):
        chunk = forgotten[start:start + 500]
        conn.execute(f"UPDATE memories SET forgotten = 1 WHERE seq IN "
                     f"({','.join('?' * len(chunk))})", chunk)
    conn.execute("INSERT OR REPLACE INTO memory_meta VALUES ('forgotten', ?)", (stamp,))


def count(conn) -> int:
    """How many memories the journal has (forgotten ones too): journal numbers run 0, 1, 2...,
    so the largest is the count, found without a scan."""
    return (conn.execute("SELECT max(seq) FROM memories").fetchone()[0] or -1) + 1


def document_counts(conn, terms: set[str]) -> dict[str, int]:
    """``{term: how many memories hold it}`` for the index ``terms`` (stems, character
    pairs) that any memory holds; a word weight for recall's BM25."""
    return dict(rows_in(conn, "SELECT term, doc FROM memory_vocab WHERE term", sorted(terms)))


def widening_terms(conn, terms: list) -> list:
    """Of a query's ``terms`` (``analysis.QueryTerm``), those worth an any-word search: a
    one-token term found in more than ``COMMON`` of the memories would match a large part
    of the journal and barely move the ranking (BM25 weighs it near zero), yet costs a score
    for every row it matches. All words still count in the all-words tier."""
    total = count(conn)
    if total < 1000:
        return terms
    kept = []
    for term in terms:
        token = term.fts.strip('"')
        if " " in token or token.endswith("*") or '"' in token:   # a phrase or a prefix
            kept.append(term)
            continue
        row = conn.execute("SELECT doc FROM memory_vocab WHERE term = ?", (token,)).fetchone()
        if not row or row[0] <= COMMON * total:
            kept.append(term)
    return kept or terms


def search(conn, tiers: list[tuple[bool, str]], k: int,
           gather: bool = False, scope: str | None = None) -> list[MemoryHit]:
    """The best ``k`` memories (never a forgotten one) for the first of ``tiers`` —
    ``(fallback, FTS5 expression)`` pairs from ``SceneIndex`` — that finds any; with
    ``gather``, the hits of each tier in turn until ``k`` (all-words matches first).
    ``scope``: only memories of that scope or of none."""
    found: dict[int, MemoryHit] = {}
    for hit in _tier_hits(conn, tiers, k, gather, scope):
        found.setdefault(hit.seq, hit)
        if len(found) >= k:
            break
    return list(found.values())


def _tier_hits(conn, tiers, k: int, gather: bool, scope: str | None = None):
    # FTS5 ranks its best rows first, then the few are joined; enough extra rows are asked
    # for that forgotten ones can be left out and k still remain. BM25 costs a score for
    # every matching row: when a query matches more than BROAD memories (a name most of them
    # hold), their scores barely differ and the newest matches are taken instead.
    stamp = conn.execute("SELECT value FROM memory_meta WHERE key = 'forgotten'").fetchone()
    slack = min(len(json.loads(stamp[0])) if stamp else 0, 1000)   # no scan of the flags
    # Another scope's memories may fill any number of the best rows: then no inner limit.
    where, params = ("AND (m.scope IS NULL OR m.scope = ?)", (scope,)) if scope is not None \
        else ("", ())
    for fallback, expr in tiers:
        broad = conn.execute("SELECT count(*) FROM (SELECT rowid FROM memory_fts"
                             " WHERE memory_fts MATCH ? LIMIT ?)", (expr, BROAD + 1)
                             ).fetchone()[0] > BROAD
        order = "ORDER BY rowid DESC" if broad else "ORDER BY rank"
        rows = conn.execute(
            "SELECT m.seq, m.id, m.created_at, m.content, f.rank FROM ("
            f"  SELECT rowid, {'0.0 AS rank' if broad else 'rank'} FROM memory_fts"
            f"  WHERE memory_fts MATCH ? {order} LIMIT ?) f JOIN memories m ON m.seq = f.rowid"
            f" WHERE m.forgotten = 0 {where}"
            f" ORDER BY {'m.seq DESC' if broad else 'f.rank, m.seq'}"
            " LIMIT ?", (expr, -1 if scope is not None else k + slack, *params, k)).fetchall()
        yield from (MemoryHit(seq, mid, created, content, -rank, fallback)
                    for seq, mid, created, content, rank in rows)
        if rows and not gather:
            return


def newest(conn, expr: str, k: int, scope: str | None = None) -> list[MemoryHit]:
    """The newest ``k`` memories (journal order, newest first; never a forgotten one) that
    match the FTS5 expression ``expr``, score 0: what is true now is in the latest of them
    (recall's current facts), and FTS5 walks its rowids backwards without scoring a row."""
    where, params = ("AND (m.scope IS NULL OR m.scope = ?)", (scope,)) if scope is not None \
        else ("", ())
    rows = conn.execute(
        "SELECT m.seq, m.id, m.created_at, m.content FROM ("
        "  SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
        f") f JOIN memories m ON m.seq = f.rowid WHERE m.forgotten = 0 {where}"
        " ORDER BY m.seq DESC LIMIT ?", (expr, -1 if scope is not None else 4 * k, *params, k)
    ).fetchall()
    return [MemoryHit(seq, mid, created, content, 0.0) for seq, mid, created, content in rows]


def roles(conn, seqs: list[int]) -> dict[int, str]:
    """``{journal number: role}`` of the memories ``seqs`` that have a role (``"user"``,
    ``"assistant"``, ...): recall's current facts take no assistant's words for the
    person's own."""
    return dict(rows_in(conn, "SELECT seq, role FROM memories WHERE role IS NOT NULL AND seq",
                        seqs))


def texts(conn, since: int = 0) -> list[tuple[int, str]]:
    """``(journal number, content)`` of every memory numbered ``since`` or later, forgotten
    ones too, in journal order: what the dense vectors are kept in step with
    (``recall.semantic``)."""
    return conn.execute("SELECT seq, content FROM memories WHERE seq >= ? ORDER BY seq",
                        (since,)).fetchall()


def by_seqs(conn, seqs: list[int]) -> list[MemoryHit]:
    """The memories (never a forgotten one) of the journal numbers ``seqs``, in that order,
    score 0."""
    found = {seq: MemoryHit(seq, mid, created, content, 0.0)
             for seq, mid, created, content in rows_in(
                 conn, "SELECT seq, id, created_at, content FROM memories WHERE forgotten = 0"
                       " AND seq", seqs)}
    return [found[s] for s in seqs if s in found]


def by_ids(conn, ids: list[str]) -> list[MemoryHit]:
    """The memories (never a forgotten one) that ``ids`` name (ids or aliases), in journal
    order, score 0: the memories a scene's digest cites, for recall to quote whole."""
    found = {seq: MemoryHit(seq, mid, created, content, 0.0)
             for seq, mid, created, content in rows_in(
                 conn, "SELECT m.seq, m.id, m.created_at, m.content FROM memory_ids i"
                       " JOIN memories m ON m.seq = i.seq WHERE m.forgotten = 0 AND i.id", ids)}
    return [found[seq] for seq in sorted(found)]
