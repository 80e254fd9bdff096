"""What a person reads of a store's history: ``scenes log`` (and the MCP ``log`` tool), a
batch's transcript (docs/DESIGN.md "History").

Every read fails with git's reason in one line when git cannot read the store
(``store.history``): an empty log is never said for a history that could not be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scene_engine.batch.transcript import (
    KEEP_BYTES,
    describe_event,
    read_events,
    render,
    transcript_path,
)
from scene_engine.core.errors import InputError, SceneEngineError
from scene_engine.store.history import log_entries, open_repo

if TYPE_CHECKING:
    from pathlib import Path

    from scene_engine.store.store import Store

__all__ = ["log", "transcript", "render_transcript", "describe_event"]


def log(store: Store, include_adds: bool = False, limit: int | None = None) -> list[dict]:
    """Batches newest first, with hand edits, undos and persona commits between them (``add``
    commits too with ``include_adds``), at most ``limit`` (``store.history.log_entries``: a
    dict each with ``commit``, ``time``, ``kind``, ``subject``, ...). Raises
    ``HistoryError`` when git cannot read the store."""
    repo = open_repo(store.root)
    try:
        entries = log_entries(repo, include_adds=include_adds)
    finally:
        repo.close()
    return entries[:limit] if limit is not None else entries


def transcript(store: Store, batch: int) -> tuple[Path, list[dict]]:
    """(path, events) of batch ``batch``'s model exchange, committed or failed. Raises
    ``InputError`` (exit 2) for a batch that does not exist, ``SceneEngineError`` for one
    that has no transcript here, saying why: it ran on the offline backend (only model
    batches write one), or the file is not on this machine (transcripts are not in git, and
    the oldest are pruned)."""
    path = transcript_path(store.meta_dir, batch)
    try:
        return path, read_events(path)
    except FileNotFoundError:
        pass
    entry = next((e for e in log(store) if e["kind"] == "batch" and e.get("batch") == batch),
                 None)
    if entry is None:
        newest = store.load_state().batch
        raise InputError(f"there is no batch {batch}" + (
            f" (the newest is batch {newest}); `scenes log` lists them" if newest
            else "; no batch has run yet"))
    if entry.get("model") == "offline":
        raise SceneEngineError(f"batch {batch} has no transcript: it ran on the offline "
                               "backend, and only model batches write one")
    raise SceneEngineError(f"batch {batch} ({entry.get('model')}) has no transcript on this "
                           "machine: transcripts are not in git (a copy made elsewhere has "
                           f"none), and the oldest are pruned beyond {KEEP_BYTES >> 20} MB")


def render_transcript(events: list[dict], batch: int) -> str:
    """A transcript as text for a person (``batch.transcript.render``)."""
    return render(events, batch)
