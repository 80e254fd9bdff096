"""``scenes trace MEMORY_ID``: where a memory went (docs/DESIGN.md "A batch", step 7).

From the journal (the memory), the state (pending, processed or forgotten), the batch ledgers
in git (which batch took it and what it did with it), the later history (merges that moved
its scene, hand renames and deletions, undos and redos) and ``git blame`` (the lines that
carry it now). The other way round, ``blame_scene`` (``scenes blame``, docs/DESIGN.md "History"):
each line of a scene with the commit that last changed it and the memories behind that line.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Set
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from scene_engine.batch.accounting import LEDGER_DIR, Ledger
from scene_engine.batch.conservation import content_terms, coverage
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.fs import read_regular_text
from scene_engine.core.periods import PERIOD, covers
from scene_engine.offline.rollup import digest_ids
from scene_engine.store import history
from scene_engine.store.history import expand_seqs
from scene_engine.store.layout import StateUnreadable
from scene_engine.store.memories import Journal, Memory
from scene_engine.store.scene import SceneHeaderWarning, parse_scene
from scene_engine.store.store import Store, StoreError

if TYPE_CHECKING:
    from git import Commit, Repo

    from scene_engine.index.scenes import SceneIndex

LINE_EVIDENCE = 0.8   # a sentence states the memory if it holds this share of its words


class TraceError(SceneEngineError, LookupError):
    """No memory has this id (``exit_code`` 2: bad input)."""

    exit_code = 2


@dataclass
class Trace:
    """What ``trace_memory`` found. ``asked``: the id asked for (an alias, maybe); ``status``:
    "pending" | "processed" | "forgotten";
    ``events``: oldest first, each ``{"kind", "time", "commit", ...}`` (a person's change not
    committed yet: ``time`` and ``commit`` "", ``"uncommitted": True``; "line removed by
    hand": the line stating it is gone from the scene ``from``); ``scenes``: the scenes
    that hold it now (``uncommitted``: those of them whose name is not committed yet); ``lines``: ``{"scene", "line", "text", "batch", "kind", "how"}`` carrying
    it now ("how": "whole"; "cut": its beginning, a memory longer than a scene's room; or
    "condensed" into a digest); ``fact``: an extracted memory's
    standing in the extraction ledger ("active", "superseded", "merged", "retracted"; "" for
    a memory added as it is)."""

    memory: Memory
    status: str
    asked: str = ""
    fact: str = ""
    events: list[dict] = field(default_factory=list)
    scenes: list[str] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """A JSON-ready dict (the memory as its journal record)."""
        data = asdict(self)
        data["memory"] = self.memory.to_record()
        return data


def trace_memory(store: Store, memory_id: str) -> Trace:
    """Follow ``memory_id`` (an id or an alias) through the history; raises ``TraceError``."""
    memory = Journal(store.memories_dir).find(memory_id)
    if memory is None:
        raise TraceError(f"no memory has the id {memory_id!r}; `scenes log` lists batches "
                         "with their memory ids")
    try:
        state = store.load_state()
        status = ("forgotten" if memory.seq in state.forgotten else
                  "pending" if memory.seq in state.requeued or memory.seq >= state.cursor
                  else "processed")
    except StateUnreadable:      # the history still says where it went (open_store warned)
        status = "unknown"
    repo = history.open_repo(store.root)
    trace = Trace(memory=memory, status=status, asked=memory_id, fact=_fact(store, memory))
    tracked: set[str] = set()
    batches: dict[int, set[str]] = {}    # batch that took it -> the scenes it went to
    merges: dict[int, dict[str, list[str]]] = {}   # batch -> its merges (survivor -> sources)
    reverts: dict[str, tuple[int, bool]] = {}   # sha -> (batch, True if it made it live)
    commits = history.engine_commits(repo)
    released = history.released_batches(commits)   # batch commits a repair gave up
    took: dict[str, int] = {}            # sha of a batch commit that took it -> its number
    for commit in commits:
        found = history.trailers(history.message_of(commit))
        kind = history.commit_kind(history.message_of(commit), commit.author.email)
        base = {"time": commit.committed_datetime.isoformat(), "commit": commit.hexsha}
        plain = history.plain_revert(reverts, commit)
        if plain is not None:        # a plain `git revert`: an undo, or a redo of one
            number, now_live = plain
            kind, found = ("redo", {"Redo-Batch": str(number)}) if now_live else \
                ("undo", {"Undo-Batch": str(number)})
        if kind == "batch":
            ledger = _ledger(repo, commit, found)
            number = int(found["Batch"])
            reverts[commit.hexsha] = (number, True)
            merges[number] = ledger.merges if ledger else {}
            entry = _taken(ledger, found, memory)
            if entry is not None:
                tracked = set(entry.get("scenes", []))
                batches[number] = set(tracked)
                took[commit.hexsha] = number
                trace.events.append(base | {"kind": "batch", "batch": number} | entry)
            elif ledger and tracked:
                tracked = _follow_merges(trace, base, number, ledger.merges, tracked,
                                         new=_new_names(repo, commit, ledger.merges))
        elif kind in ("undo", "redo", "forget"):
            named = (found.get("Undo-Batch") or found.get("Redo-Batch")
                     or found.get("Forget-Batch"))
            if named and int(named) in batches:
                trace.events.append(base | {"kind": kind, "batch": int(named)})
                tracked = set(batches[int(named)]) if kind == "redo" else set()
            elif named and tracked and merges.get(int(named)):
                # An undone merge puts the scenes back apart; a redo merges them again.
                reverse = kind == "undo"
                tracked = _follow_merges(trace, base, int(named), merges[int(named)],
                                         tracked, reverse)
        elif kind == "repair" and took:
            tracked = _follow_release(trace, base, found, released, took, batches, tracked)
        elif tracked and history.is_person_commit(history.message_of(commit), commit.author.email):
            tracked = _follow_hand_edit(trace, base, repo, commit, tracked,
                                        memory, store.config.tz)   # theirs, any way
    on_disk = set(store.scene_names())
    folded = status in ("processed", "unknown")
    moved: dict[str, str] = {}
    if folded and tracked:
        tracked, moved = _follow_uncommitted(trace, repo, store, memory, tracked)
    trace.scenes = sorted(tracked & on_disk) if folded else []
    trace.uncommitted = [name for name in trace.scenes if name in moved]
    trace.lines = _current_lines(repo, store, memory, trace.scenes, moved)
    if folded and not trace.lines:
        # Its scene went where history cannot follow (moved and rewritten by hand in one
        # step, so git sees a delete and an add): the scenes that state it now, by its words.
        stating = _current_lines(repo, store, memory, _mentioning(store, memory, on_disk))
        if stating:
            trace.lines = stating
            trace.scenes = sorted({row["scene"] for row in stating})
    return trace


def _fact(store: Store, memory: Memory) -> str:
    """The memory's standing in the extraction ledger ("" if it was not extracted)."""
    if not memory.status:
        return ""
    from scene_engine.extraction.events import read_events, statuses

    try:
        return statuses([memory], read_events(store)).get(memory.id, memory.status)
    except StoreError:        # a torn ledger: doctor names it
        return memory.status


def _ledger(repo: Repo, commit: Commit, found: dict) -> Ledger | None:
    """The ledger ``commit`` names in its trailers (``found``), or None when it names none, or
    names one its tree lacks or that does not parse (doctor reports those). A git that cannot
    read the commit's objects raises (``HistoryError``): that is no missing ledger."""
    path = found.get("Ledger")
    if not path:
        return None
    try:
        blob = commit.tree / history.tree_path(repo, path)
    except KeyError:
        return None
    try:
        data = blob.data_stream.read()
    except (ValueError, OSError) as exc:   # GitPython's reader: an object git cannot give
        raise history.HistoryError(f"cannot read {path} of {commit.hexsha[:8]}: {exc}") from exc
    try:
        return Ledger.parse(data.decode("utf-8"))
    except ValueError:
        return None


def _taken(ledger: Ledger | None, found: dict, memory: Memory) -> dict | None:
    """What a batch did with ``memory`` (``{"outcome", "scenes", "reason"}``), or None when
    it did not take it. A ledger names its memories by id: after a merge of two copies and
    ``scenes repair`` a number may have been another memory's on the copy that made the
    batch. A batch made before ledgers were kept names them only by number."""
    if ledger is None:
        if memory.seq not in expand_seqs(found.get("Memory-Seqs", "")):
            return None
        return {"outcome": "unknown (batch made before ledgers were kept)", "scenes": []}
    ids = {memory.id, *memory.aliases}
    match = next((e for e in ledger.entries if e.id in ids), None)
    return {"outcome": match.outcome, "scenes": match.scenes, "reason": match.reason} \
        if match else None


def _follow_release(trace: Trace, base: dict, found: dict, released: set[str],
                    took: dict[str, int], batches: dict[int, set[str]], tracked: set[str]
                    ) -> set[str]:
    """A repair that released a batch which took the memory (its ``Released-Batches``
    trailer, the repair not reverted): the memory is pending again, in no scene until a later
    batch takes it."""
    for item in found.get(history.RELEASED, "").split():
        sha = item.partition("@")[2]
        if sha in released and sha in took:
            number = took.pop(sha)
            if batches.get(number) is not None:
                batches.pop(number)
                tracked = set()
            trace.events.append(base | {"kind": "released", "batch": number})
    return tracked


def _new_names(repo: Repo, commit: Commit, merges: dict[str, list[str]]) -> set[str]:
    """The survivors of ``merges`` that did not exist before ``commit``: new names."""
    if not commit.parents:
        return set(merges)
    parent = commit.parents[0].tree
    new = set()
    for survivor in merges:
        try:
            parent / history.tree_path(repo, f"scenes/{survivor}")
        except KeyError:
            new.add(survivor)
    return new


def _follow_merges(trace: Trace, base: dict, batch: int, merges: dict[str, list[str]],
                   tracked: set[str], reverse: bool = False, new: Set[str] = frozenset()
                   ) -> set[str]:
    """Move ``tracked`` along a batch's merges (back again when ``reverse``: an undo); a
    survivor in ``new`` that took in one scene is that scene renamed."""
    for survivor, sources in merges.items():
        if reverse:
            if survivor in tracked:
                tracked = (tracked - {survivor}) | set(sources) | {survivor}
                trace.events.append({**base, "kind": "merge undone", "batch": batch,
                                     "from": survivor, "into": ", ".join(sources)})
            continue
        moved = tracked & set(sources)
        renamed = survivor in new and len(sources) == 1
        for source in sorted(moved):
            trace.events.append({**base, "kind": "rename" if renamed else "merge",
                                 "batch": batch, "from": source, "into": survivor})
        if moved:
            tracked = (tracked - moved) | {survivor}
    return tracked


def _follow_hand_edit(trace: Trace, base: dict, repo: Repo, commit: Commit, tracked: set[str],
                      memory: Memory, tz) -> set[str]:
    """Renames and deletions of tracked scenes a person made, and their edits that took out
    the line stating ``memory``."""
    if not commit.parents:
        return tracked
    parent = commit.parents[0]
    for status, old, new in history.changed_paths(repo, parent.hexsha, commit.hexsha, "scenes"):
        old, new = old.removeprefix("scenes/"), new.removeprefix("scenes/")
        if old not in tracked:
            continue
        if status == "R":
            tracked = (tracked - {old}) | {new}
            trace.events.append(base | {"kind": "renamed by hand", "from": old, "into": new})
        elif status == "D":
            tracked = tracked - {old}
            trace.events.append(base | {"kind": "deleted by hand", "from": old})
        if status in ("R", "M") and _line_taken_out(
                memory, tz, _blob_text(repo, parent, f"scenes/{old}"),
                _blob_text(repo, commit, f"scenes/{new}")):
            tracked = tracked - {new}
            trace.events.append(base | {"kind": "line removed by hand", "from": new})
    return tracked


def _follow_uncommitted(trace: Trace, repo: Repo, store: Store, memory: Memory,
                        tracked: set[str]) -> tuple[set[str], dict[str, str]]:
    """``_follow_hand_edit`` for what a person changed and has not committed yet (a scene
    renamed with ``mv``, deleted, or its line taken out): (the scenes tracked now, {new name:
    name in HEAD} of the scenes renamed)."""
    base = {"time": "", "commit": "", "uncommitted": True}
    moved: dict[str, str] = {}
    head = repo.commit(history.head_sha(repo))
    for status, old, new in history.uncommitted_changes(repo, "scenes"):
        old, new = old.removeprefix("scenes/"), new.removeprefix("scenes/")
        if old not in tracked:
            continue
        if status == "R":
            tracked = (tracked - {old}) | {new}
            moved[new] = old
            trace.events.append(base | {"kind": "renamed by hand", "from": old, "into": new})
        elif status == "D":
            tracked = tracked - {old}
            trace.events.append(base | {"kind": "deleted by hand", "from": old})
        if status in ("R", "M"):
            try:
                now = read_regular_text(store.scenes_dir / new, errors="replace")
            except OSError:
                continue
            if _line_taken_out(memory, store.config.tz,
                               _blob_text(repo, head, f"scenes/{old}"), now):
                tracked = tracked - {new}
                trace.events.append(base | {"kind": "line removed by hand", "from": new})
    return tracked, moved


def _blob_text(repo: Repo, commit: Commit, path: str) -> str:
    """The text of ``path`` in ``commit`` ("" when it has no such file)."""
    try:
        blob = commit.tree / history.tree_path(repo, path)
    except KeyError:
        return ""
    return blob.data_stream.read().decode("utf-8", "replace")


def _line_taken_out(memory: Memory, tz, before: str, after: str) -> bool:
    """True when a line of the scene text ``before`` states ``memory`` and no line of
    ``after`` does (a person deleted or rewrote it). Texts from the history: a header that
    cannot be read there is not this command's news (the file as it is now is named by the
    reads that use it), so its warning is not shown."""
    def stated(text: str) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SceneHeaderWarning)
            body = parse_scene(text, name="scene.md").body
        return any(_states(memory, line, tz) for line in body.split("\n"))
    return bool(before) and stated(before) and not stated(after)


def _mentioning(store: Store, memory: Memory, names: set[str]) -> list[str]:
    """Those of ``names`` whose text holds the memory's words (cheap, before any blame)."""
    wanted = " ".join(memory.content.split()).casefold()[:80]
    found = []
    for name in sorted(names):
        try:
            text = read_regular_text(store.scenes_dir / name, errors="replace")
        except OSError:
            continue
        if wanted and wanted in " ".join(text.split()).casefold():
            found.append(name)
    return found


def _current_lines(repo: Repo, store: Store, memory: Memory, scenes: list[str],
                   moved: dict[str, str] | None = None) -> list[dict]:
    """Lines of ``scenes`` now that state the memory (a sentence holding nearly all of its
    words, numbers included), or a digest fact condensed from it, with the batch that last
    wrote them. ``moved``: {name: name in HEAD} of scenes renamed and not committed yet."""
    rows = []
    for scene in scenes:
        try:
            if moved and scene in moved:   # blamed under its committed name
                blame = history.blame_lines(repo, f"scenes/{moved[scene]}",
                                            contents=store.scenes_dir / scene)
            else:
                blame = history.blame_lines(repo, f"scenes/{scene}")
        except history.NotCommitted:   # a scene not committed yet carries no batch's line
            continue
        body = parse_scene(read_regular_text(store.scenes_dir / scene, errors="replace"),
                           name=scene)
        first = len(blame) - len(body.body.rstrip("\n").split("\n")) if body.header else 0
        for row in blame[first:]:          # the body only: a summary is not a place
            how = _states(memory, row["text"], store.config.tz)
            if how:
                rows.append({"scene": scene, "line": row["line"], "text": row["text"],
                             "batch": row["batch"], "kind": row["kind"], "how": how})
    # A line of its own day that states it whole is where it is; a digest of its period
    # then only stands for it.
    day = f"{memory.created_at.astimezone(store.config.tz):%Y-%m-%d}"
    own = [row for row in rows if row["how"] == "whole" and day in row["text"]]
    return own or rows


def _states(memory: Memory, line: str, tz) -> str:
    """"whole" when a sentence of ``line`` (or the line, for a memory of several sentences)
    states the memory, "cut" when the line holds its beginning and "…" (the offline backend
    keeps that much of a memory longer than a scene's room), "condensed" when a fact of a
    month digest was cut from it (its words, on the memory's own day), else ""."""
    text, content = line.strip(), memory.content
    if not text or text.startswith("#"):      # a heading states no memory
        return ""
    if not content_terms(content, numbers=True):
        # No word to compare (only emoji, only marks): the memory's text itself is the fact.
        return "whole" if " ".join(content.split()) in " ".join(text.split()) else ""
    digest = _DIGEST.match(text)
    if digest:
        # A digest stands for its period in its scene (offline ``rollup``: ids are in the
        # ledgers, not the text); an older digest cites its memories' ids.
        if memory.id in digest_ids(digest.group(2)) or any(
                a in digest_ids(digest.group(2)) for a in memory.aliases):
            return "condensed"
        return "condensed" if covers(digest.group(1), f"{memory.created_at.astimezone(tz):%Y-%m-%d}") else ""
    if _is_cut(content, text):
        return "cut"
    numbers = set(re.findall(r"\d+", content))    # a fact's numbers are the fact
    # ... and not the line's dates (the "10" of "2026-10-04" stated no memory's "a10").
    said = set(re.findall(r"\d+", _ISO_DAY.sub(" ", text)))
    pieces = _SENTENCES.split(text)
    if len(_SENTENCES.split(content.strip())) > 1:
        # A memory of several sentences is one fact on one bullet (offline ``timeline``):
        # no single sentence holds it, the line does.
        pieces.append(text)
    for sentence in pieces:
        if coverage(content, sentence, numbers=True) >= LINE_EVIDENCE and numbers <= said:
            return "whole"
    return ""


def _is_cut(content: str, text: str) -> bool:
    """``text`` (a dated bullet) is the first ``CUT_CHARS`` or more characters of
    ``content``, spaces aside, then "…" (offline ``backend._fitting``)."""
    said = _DAY_BULLET.sub("", text).removesuffix("…").strip()
    return (text.endswith("…") and len(said) >= CUT_CHARS
            and " ".join(content.split()).startswith(" ".join(said.split())))


CUT_CHARS = 50      # a cut memory's line holds at least this much of it (a scene is >= 200)
_DAY_BULLET = re.compile(r"^[-*]\s*\d{4}-\d{2}-\d{2}:\s*")
_ISO_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s+")
_DIGEST = re.compile(rf"^- ({PERIOD}) \(digest\): (.*)$")


# ---------------------------------------------------------------- blame: line -> memories

HEADER_KEYS_OF_NO_MEMORY = ("created:", "updated:", "heat:", "pinned:", "merged_from:",
                            "aliases:", "- ")   # engine bookkeeping (and list items under it)
_DATED = re.compile(r"^\s*[-*]?\s*(\d{4}-\d{2}-\d{2})\b")


def blame_scene(store: Store, name: str) -> list[dict]:
    """``scenes blame``: each line of scene ``name`` (a file name in ``scenes/``) with the
    commit that last changed it and the memories behind that line (docs/DESIGN.md "History";
    the README's tour promises "the batch and memory ids behind it").

    Rows are ``history.blame_lines``'s (``line``, ``text``, ``commit``, ``kind``, ``batch``)
    with ``memories``: a list of memory ids, and ``found_by``: how they were found —
    "words" (the line states them: ``_states``, the memory's own day preferred when the line
    is dated), "period" (a digest line stands for the memories the batch ledgers put into
    this scene, or a scene it took in, whose day falls in its period; an older digest cites
    their ids), "ledger"
    (the batch's ledger put them in this scene and no line of it states one word for word: a
    model that paraphrased), or "" with no memories (a heading, the engine's header keys, a
    person's line stating no memory, an undo that brought an older line back). A line a
    person wrote or changed (a hand edit) names the memories it still states, by its words.
    Raises ``HistoryError`` if git cannot blame the file."""
    repo = history.open_repo(store.root)
    rows = history.blame_lines(repo, f"scenes/{name}")
    header = _header_length(rows)
    journal = Journal(store.memories_dir)
    candidates = _Candidates(store)
    try:
        return _blamed(store, repo, rows, header, journal, candidates,
                       _lineage(store, name))
    finally:
        candidates.close()


def _blamed(store: Store, repo, rows: list[dict], header: int, journal: Journal,
            candidates: _Candidates, names: set[str]) -> list[dict]:
    """``blame_scene``'s rows, each given its ``memories`` and ``found_by``."""
    folded: dict[tuple[int, ...], list[Memory]] = {}   # a commit's seqs -> its memories
    by_id: dict[str, Memory] = {}                      # every id and alias, read once
    taken: list[str] = []             # ids the ledgers put into this scene (or its sources)
    tz = store.config.tz
    for row in rows:
        seqs, path = tuple(row.pop("seqs")), row.pop("path")
        if seqs not in folded:
            folded[seqs] = _read_memories(journal, seqs)
        digest = _DIGEST.match(row["text"].strip())
        if digest:
            if not by_id:
                by_id = {key: m for m in reversed(journal.all()) for key in (m.id, *m.aliases)}
                taken = _taken_by(store, names)
            cited_ids = digest_ids(digest.group(2))
            if not cited_ids:      # a digest by theme: the scene's memories of its period
                cited_ids = [i for i in taken if i in by_id and covers(
                    digest.group(1), f"{by_id[i].created_at.astimezone(tz):%Y-%m-%d}")]
            found = list({by_id[i].id: by_id[i] for i in cited_ids if i in by_id}.values())
            how = "period"
        else:
            found, how = _behind(store, repo, row, folded[seqs], path, row["line"] <= header)
            if not found and not seqs and row["line"] > header:
                # A line a person wrote or changed (a hand edit): the memories it still
                # states, by its words, whichever batch folded them.
                found, how = _stated_anywhere(store, journal, row["text"], candidates), "words"
        row["memories"], row["found_by"] = [m.id for m in found], how if found else ""
    return rows


def _lineage(store: Store, name: str) -> set[str]:
    """``name`` and every scene its header says it took in (``merged_from``, renames too)."""
    from scene_engine.batch.rules import merged_from

    try:
        text = read_regular_text(store.scenes_dir / name, errors="replace")
    except OSError:
        return {name}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SceneHeaderWarning)
        return {name, *merged_from(parse_scene(text, name=name))}


def _taken_by(store: Store, names: set[str]) -> list[str]:
    """Ids of the memories the batch ledgers in the store put into any of ``names`` (a
    ledger that cannot be read is doctor's news, and is passed over here)."""
    folder = store.root / LEDGER_DIR
    ids: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            ledger = Ledger.parse(read_regular_text(path))
        except (OSError, ValueError):
            continue
        ids += [e.id for e in ledger.entries if names & set(e.scenes)]
    return list(dict.fromkeys(ids))


class _Candidates:
    """The memories a line might state, found by its words in the search index (opened once
    for a whole blame, on first use; none when there is no readable index)."""

    def __init__(self, store: Store):
        self.store = store
        self.index: SceneIndex | None = None
        self.opened = False

    def __call__(self, text: str) -> list[int]:
        if not self.opened:
            from scene_engine.index.scenes import read_index

            self.opened = True
            with contextlib.suppress(Exception):      # derived: no index, no candidates
                self.index, _ = read_index(self.store)
        if self.index is None:
            return []
        return [hit.seq for hit in self.index.search_memories(text, k=8, any_term=True)]

    def close(self) -> None:
        if self.index is not None:
            self.index.close()


def _stated_anywhere(store: Store, journal: Journal, text: str, candidates: _Candidates
                     ) -> list[Memory]:
    """The memories ``text`` (a person's line) states, among those its words find."""
    line = text.strip()
    if not line or line.startswith("#") or line == "---":
        return []
    seqs = candidates(line)
    if not seqs:
        return []
    tz = store.config.tz
    return [m for m in _read_memories(journal, tuple(seqs)) if _states(m, text, tz)]


def _header_length(rows: list[dict]) -> int:
    """Lines of the YAML header (both ``---`` lines included), 0 without one."""
    if not rows or rows[0]["text"].strip() != "---":
        return 0
    closing = next((r["line"] for r in rows[1:] if r["text"].strip() == "---"), 0)
    return closing


def _read_memories(journal: Journal, seqs: tuple[int, ...]) -> list[Memory]:
    """The journal's memories of ``seqs`` (a number the journal lacks is left out)."""
    try:
        return journal.read(list(seqs))
    except KeyError:       # renumbered since (``scenes repair``): one at a time
        found = []
        for seq in seqs:
            try:
                found += journal.read([seq])
            except KeyError:
                continue
        return found


def _behind(store: Store, repo: Repo, row: dict, memories: list[Memory], path: str,
            in_header: bool) -> tuple[list[Memory], str]:
    """(the memories behind one blamed line that is no digest, how they were found): see
    ``blame_scene``."""
    text = row["text"].strip()
    if not text or text == "---" or text.startswith("#"):
        return [], ""
    if not memories or (in_header and text.startswith(HEADER_KEYS_OF_NO_MEMORY)):
        return [], ""
    tz = store.config.tz
    stated = [m for m in memories if _states(m, row["text"], tz)]
    dated = _DATED.match(text)
    if dated and len(stated) > 1:     # the same words on two days: the line's own day
        same_day = [m for m in stated if f"{m.created_at.astimezone(tz):%Y-%m-%d}"
                    == dated.group(1)]
        stated = same_day or stated
    if stated or in_header:
        return stated, "words" if stated else ""
    return _placed_in(repo, row, memories, path), "ledger"


def _placed_in(repo: Repo, row: dict, memories: list[Memory], path: str) -> list[Memory]:
    """Those of ``memories`` the ledger of ``row``'s batch put into the scene at ``path``
    (its name in that commit)."""
    commit = repo.commit(row["commit"])
    ledger = _ledger(repo, commit, history.trailers(history.message_of(commit)))
    if ledger is None:
        return []
    scene = path.removeprefix("scenes/")
    placed = {e.seq for e in ledger.entries if scene in e.scenes and e.outcome == "placed"}
    return [m for m in memories if m.seq in placed]


def _why_nowhere(trace: Trace) -> str:
    """Why a traced memory is in no scene, when the last thing that happened to it says:
    a person took its line out or deleted its scene (``" (its line was removed by hand from
    x.md, in 1a2b3c4d)"``); else ""."""
    last = trace.events[-1] if trace.events and trace.status != "pending" else {}
    if last.get("kind") not in ("line removed by hand", "deleted by hand"):
        return ""
    when = f"in {last['commit'][:8]}" if last["commit"] else "not committed yet"
    if last["kind"] == "deleted by hand":
        return f" ({last['from']} was deleted by hand, {when})"
    return f" (its line was removed by hand from {last['from']}, {when})"


def describe_event(e: dict) -> str:
    """One event of a trace (``Trace.events``) as a person reads it, without its time:
    "batch 3: placed -> run-rain.md", "batch 7: a.md merged into b.md", ... (``render``
    and the page's memory view)."""
    if e["kind"] == "batch":
        where = ", ".join(e.get("scenes") or []) or "no scene"
        reason = f" ({e['reason']})" if e.get("reason") else ""
        return f"batch {e['batch']}: {e['outcome']} -> {where}{reason}"
    if e["kind"] == "merge":
        return f"batch {e['batch']}: {e['from']} merged into {e['into']}"
    if e["kind"] == "rename":
        return f"batch {e['batch']}: {e['from']} renamed {e['into']}"
    if e["kind"] == "merge undone":
        return f"undo of batch {e['batch']}: {e['from']} split back into {e['into']}"
    if "from" in e:
        return f"{e['kind']}: {e['from']}" + (f" -> {e['into']}" if e.get("into") else "")
    if e["kind"] == "released":
        return f"repair: batch {e['batch']} released, pending again"
    return f"{e['kind']} of batch {e['batch']}"


def render(trace: Trace) -> str:
    """The trace as lines a person reads."""
    m = trace.memory
    alias = f", asked for as its alias {trace.asked}" if trace.asked != m.id else ""
    lines = [f"memory {m.id} (#{m.seq}, {m.created_at.isoformat()}{alias})",
             f"  {m.content[:300]}",
             f"status: {trace.status}"]
    if trace.fact:
        sources = ", ".join(m.sources) or "none"
        lines.append(f"extracted: {trace.fact}; scope {m.scope}; from messages {sources}")
    lines.append("history:")
    for e in trace.events:
        when = f"  {e['time'][:19]} {e['commit'][:8]}" if e["commit"] else "  (uncommitted)"
        lines.append(f"{when} {describe_event(e)}")
    if not trace.events:
        lines.append("  (no batch has taken it yet)")
    lines.append("now in: " + (", ".join(name + (" (uncommitted)" if name in trace.uncommitted
                                                  else "") for name in trace.scenes)
                               or "no scene" + _why_nowhere(trace)))
    for row in trace.lines:
        who = f"batch {row['batch']}" if row["batch"] else row["kind"]
        how = f", {row['how']}" if row.get("how") in ("condensed", "cut") else ""
        lines.append(f"  {row['scene']}:{row['line']} ({who}{how}) {row['text']}")
    return "\n".join(lines) + "\n"
