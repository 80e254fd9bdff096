"""Bring the derived index up to date after the files changed (docs/DESIGN.md "Index and
watcher"): after a batch, an add, a persona refresh, an undo or a repair.

The files are the truth: a failure here only costs freshness (a warning), and the next
search or ``scenes reindex`` catches up. The journal's dense vectors (``dense``, with the
store's ``embedding``) are brought in step too (``sync_vectors``), so a recall after an add
does not wait for the embedding.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from scene_engine.core.fs import atomic_write_text
from scene_engine.store.store import Store

if TYPE_CHECKING:
    from scene_engine.index.scenes import SceneIndex


def refresh_index(store: Store) -> None:
    """Bring the derived index (scenes and memories) up to date (incremental; a failure
    only costs freshness)."""
    from scene_engine.index.scenes import for_store

    try:
        with for_store(store) as index:
            index.sync()
            if vectors_enabled():
                sync_vectors(store, index)
    except Exception as exc:  # the files are the truth; `scenes reindex` repairs the index
        import warnings

        warnings.warn(f"search index not updated: {exc}", stacklevel=2)


def refresh_vectors(store: Store, since: int | None = None) -> None:
    """``sync_vectors`` for a store whose index is in step already (after an add: ``since``,
    the first new memory's number); nothing when meaning is turned off (``vectors_enabled``);
    a failure only costs freshness (a warning), the next recall catches up."""
    if not vectors_enabled():
        return
    from scene_engine.index.scenes import for_store

    try:
        with for_store(store) as index:
            sync_vectors(store, index, since=since)
    except Exception as exc:  # derived data: recall syncs again before it searches
        import warnings

        warnings.warn(f"dense vectors not updated: {exc}", stacklevel=2)


def vectors_enabled() -> bool:
    """Whether recall keeps and uses dense vectors: the sentence encoder is installed (as in
    every install; nothing is imported) and ``SCENE_ENGINE_SEMANTIC`` is not
    ``0``/``off``/``no`` (to compare, or to spare the embedding's time)."""
    from scene_engine.index.dense import available

    if os.environ.get("SCENE_ENGINE_SEMANTIC", "").strip().lower() in ("0", "off", "no"):
        return False
    return available()


def store_embedder(store: Store):
    """The ``dense.Embedder`` the store's config key ``embedding`` names (``"use"`` by
    default). Raises ``dense.SemanticUnavailable`` for ``"e5"`` without the extra."""
    from scene_engine.index.dense import embedder_for

    return embedder_for(store.config.embedding)


VECTORS_FOLDER = "vectors"


def vectors_folder(store: Store) -> Path:
    """``.scene-engine/vectors/``, where the vectors files live: a folder with its own
    ``.gitignore`` (``*``, as ``store.cache``), so a store made before the extra existed,
    whose ignore rules name only the index, never shows the vectors to git."""
    place = store.meta_dir / VECTORS_FOLDER
    if not (place / ".gitignore").exists():
        place.mkdir(parents=True, exist_ok=True)
        atomic_write_text(place / ".gitignore", "*\n")
    return place


def sync_vectors(store: Store, index: SceneIndex, busy_seconds: float | None = None,
                 since: int | None = None) -> int:
    """Bring the store's vectors file (``vectors/<embedder>.sqlite``, ``store_embedder``) in
    step with the journal ``index`` holds, one key ``m:<journal number>`` a memory (forgotten
    ones too: recall never returns them). Only when the counts differ; only texts never
    embedded are embedded. Returns how many were. ``busy_seconds``: how long to wait for
    another writer of the file (a read passes the index's short read bound). Raises
    ``dense.VectorsUnavailable`` when the file cannot be used, ``dense.SemanticUnavailable``
    when the configured embedder is not installed. ``since``: the memories numbered from it
    on are new (an add's): their keys are written first, and when the file then has a key
    for every memory, it held every earlier one and nothing else is read (adding one memory
    to 100,000 read and hashed them all again: 2 s, issue 39)."""
    from scene_engine.index.dense import BUSY_SECONDS, DenseIndex

    with DenseIndex(vectors_folder(store), embedder=store_embedder(store),
                    busy_seconds=busy_seconds or BUSY_SECONDS) as vectors:
        total = index.memory_count()
        if len(vectors) == total:
            return 0
        done = 0
        if since is not None and since > 0:
            done = vectors.sync(((f"m:{seq}", text) for seq, text
                                 in index.memory_texts(since)), prune=False)
            if len(vectors) == total:
                return done
        return done + vectors.sync(((f"m:{seq}", text) for seq, text in index.memory_texts()),
                                   prune=True)


_GROUPING: dict[str, object] = {}


def grouping_embed(store: Store):
    """The sentence encoder the offline backend groups with (``dense.Use``, whatever the
    config's ``embedding``: grouping must be fast), cached in the store's vectors folder:
    ``texts -> float32 (len(texts), 512)``. One per store and process, so a run of many
    batches keeps its memo (``dense.CachedEmbed``)."""
    from scene_engine.index.dense import CachedEmbed

    key = str(store.root)
    embed = _GROUPING.get(key)
    if embed is None:
        while len(_GROUPING) >= 4:         # a server of many stores keeps a few
            _GROUPING.pop(next(iter(_GROUPING)))
        embed = _GROUPING[key] = CachedEmbed(vectors_folder(store))
    return embed
