"""What the page (``scenes ui``) reads that no one command prints whole: one batch with its
memories, ledger and diff; the history of one scene; heat over batches; memories per day
(docs/DESIGN.md "The page").

Every function reads only: the writes of the page are ``undo.undo_batch`` and
``review.decide`` / ``review.undo_merge``, the command line's own. Each read fails with
git's reason in one line when git cannot read the store (``store.history``), and with
``InputError`` for a batch or scene that does not exist.

Steps of ``batch_detail``: find the batch's commit in the log (``history.log``), read the
ledger it committed (where each memory went), read the memories' texts from the journal,
and the diff of its scenes and persona.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any

from scene_engine.core.errors import InputError

if TYPE_CHECKING:
    from git import Commit, Repo

    from scene_engine.store.store import Store

# A diff bigger than this is cut (a batch that rewrote a thousand scenes): the page says so.
DIFF_CHARS = 200_000
HEAT_BATCHES = 30        # the picture of heat covers the newest this many batches
HEAT_SCENES = 8          # ... and the hottest this many scenes now
DAYS = 60                # memories per day: the newest this many days that have any
SCENE_PATHS = ("scenes", "persona.md")


def batch_detail(store: Store, number: int) -> dict:
    """Batch ``number``: its log entry (``history.log``) and ``memories`` (``[{seq, id,
    text, outcome, scenes, reason}]`` from its committed ledger; text "" for a memory no
    longer in the journal), ``merges`` (scene merges the ledger records), ``diff`` (git's
    unified diff of scenes and persona, cut at ``DIFF_CHARS``) and ``cut`` (bool). Raises
    ``InputError`` for a batch that never ran, ``HistoryError`` when git cannot read."""
    from scene_engine.services.history import log
    from scene_engine.store.history import open_repo

    entry = next((e for e in log(store) if e["kind"] == "batch" and e["batch"] == number),
                 None)
    if entry is None:
        raise InputError(f"there is no batch {number}; the history lists them")
    repo = open_repo(store.root)
    try:
        commit = repo.commit(entry["commit"])
        ledger = _committed_ledger(repo, commit, number)
        diff = commit_diff(repo, commit)
    finally:
        repo.close()
    rows = ledger.get("memories") or []
    texts = _memory_texts(store, [r.get("seq") for r in rows if isinstance(r.get("seq"), int)])
    memories = [{"seq": r.get("seq"), "id": r.get("id", ""),
                 "text": texts.get(r["seq"], "") if isinstance(r.get("seq"), int) else "",
                 "outcome": r.get("outcome", ""), "scenes": list(r.get("scenes") or []),
                 "reason": r.get("reason", "")} for r in rows if isinstance(r, dict)]
    return entry | {"memories": memories, "merges": ledger.get("merges") or {},
                    "diff": diff[:DIFF_CHARS], "cut": len(diff) > DIFF_CHARS}


def _committed_ledger(repo: Repo, commit: Commit, number: int) -> dict:
    """The ledger file batch ``number`` committed (``batch.accounting.ledger_path``), or {}
    for a batch made before ledgers were kept, or one whose file is not JSON."""
    from scene_engine.batch.accounting import ledger_path
    from scene_engine.store.history import store_prefix

    try:
        blob = commit.tree / (store_prefix(repo) + ledger_path(number))
        data = json.loads(blob.data_stream.read().decode("utf-8"))
    except (KeyError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _memory_texts(store: Store, seqs: list[int]) -> dict[int, str]:
    from scene_engine.store.memories import Journal

    return {m.seq: m.content for m in Journal(store.memories_dir).read(sorted(set(seqs)))}


def commit_diff(repo: Repo, commit: Commit, *paths: str) -> str:
    """Git's unified diff of ``commit`` against its parent, limited to ``paths`` (default the
    scenes and the persona; relative to the store root), renames found, no colour."""
    return repo.git.show(commit.hexsha, "--format=", "--no-color", "--relative", "-M",
                         "--", *(paths or SCENE_PATHS))


def scene_history(store: Store, name: str, limit: int = 50) -> list[dict]:
    """The commits that changed scene ``name`` (``listing.find_scene``: a path never
    matches), newest first, renames followed, at most ``limit``: ``[{commit, time, kind,
    subject, batch, diff}]`` (``batch`` None for a hand edit or an undo; ``diff`` that
    commit's diff of the scene). Raises ``InputError`` for no such scene."""
    from scene_engine.services.listing import find_scene
    from scene_engine.store.history import commit_kind, message_of, open_repo, trailers

    found = find_scene(store, name, "the scenes list")
    repo = open_repo(store.root)
    try:
        # One git call: each commit's header after a NUL, then its diff of this scene only
        # (under the name it had then: --follow finds renames).
        out = repo.git.log("--follow", "-p", "--no-color", "--relative", "-M", f"-n{limit}",
                           "--format=%x00%H", "--", f"scenes/{found}")
        rows = []
        for part in out.split("\x00")[1:]:
            sha, _, diff = part.partition("\n")
            commit = repo.commit(sha.strip())
            message = message_of(commit)
            batch = trailers(message).get("Batch")
            rows.append({"commit": commit.hexsha, "time": commit.committed_datetime.isoformat(),
                         "kind": commit_kind(message, commit.author.email),
                         "subject": message.strip().splitlines()[0] if message.strip() else "",
                         "batch": int(batch) if batch and batch.isdigit() else None,
                         "diff": diff.strip("\n")[:DIFF_CHARS]})
    finally:
        repo.close()
    return rows


def heat_over_batches(store: Store, batches: int = HEAT_BATCHES,
                      scenes: int = HEAT_SCENES) -> dict:
    """The heat of the ``scenes`` hottest scenes now after each of the newest ``batches``
    live batches: ``{"batches": [n, ...] (oldest first), "heat": {scene: [heat or None per
    batch]}}`` (None: the scene was not there yet, or its header was unreadable). Each
    scene file version (a git blob) is parsed once."""
    from scene_engine.services.history import log
    from scene_engine.services.listing import scene_rows
    from scene_engine.store.history import open_repo, store_prefix

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the list page says a broken header itself
        wanted = [r["name"] for r in scene_rows(store)[:scenes]]
    entries = [e for e in log(store) if e["kind"] == "batch" and not e["undone"]][:batches]
    entries.reverse()
    heat: dict[str, list[Any]] = {name: [] for name in wanted}
    parsed: dict[str, Any] = {}
    repo = open_repo(store.root)
    try:
        folder = store_prefix(repo) + "scenes"
        for entry in entries:
            tree = _subtree(repo.commit(entry["commit"]), folder)
            for name in wanted:
                heat[name].append(_blob_heat(tree, name, parsed))
    finally:
        repo.close()
    return {"batches": [e["batch"] for e in entries], "heat": heat}


def _subtree(commit: Commit, folder: str):
    try:
        return commit.tree / folder
    except KeyError:
        return None


def _blob_heat(tree, name: str, parsed: dict[str, Any]) -> float | None:
    from scene_engine.store.scene import parse_scene

    if tree is None:
        return None
    try:
        blob = tree / name
    except KeyError:
        return None
    if blob.hexsha not in parsed:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scene = parse_scene(blob.data_stream.read().decode("utf-8"), name)
            heat = scene.meta.get("heat")
            parsed[blob.hexsha] = heat if isinstance(heat, int | float) else None
        except (ValueError, UnicodeDecodeError):
            parsed[blob.hexsha] = None
    return parsed[blob.hexsha]


def memories_per_day(store: Store, days: int = DAYS) -> list[dict]:
    """Memories by the day they were written (the store's timezone), the newest ``days``
    days that have any, oldest first: ``[{"day": "YYYY-MM-DD", "folded": n, "pending": n}]``
    (pending: not yet taken by a batch, or given back by an undo). Reads the journal."""
    from scene_engine.store.memories import Journal

    state = store.load_state()
    waiting = set(state.requeued)
    zone = store.config.tz
    folded: Counter[str] = Counter()
    pending: Counter[str] = Counter()
    for memory in Journal(store.memories_dir).all():
        day = memory.created_at.astimezone(zone).date().isoformat()
        is_pending = memory.seq >= state.cursor or memory.seq in waiting
        (pending if is_pending else folded)[day] += 1
    shown = sorted(set(folded) | set(pending))[-days:]
    return [{"day": d, "folded": folded[d], "pending": pending[d]} for d in shown]
