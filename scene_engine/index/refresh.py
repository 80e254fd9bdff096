"""Bring the derived index up to date after the files changed (docs/DESIGN.md "Index and
watcher"): after a batch, an add, a persona refresh, an undo or a repair.

The files are the truth: a failure here only costs freshness (a warning), and the next
search or ``scenes reindex`` catches up.
"""

from __future__ import annotations

from scene_engine.store.store import Store


def refresh_index(store: Store) -> None:
    """Bring the derived index (scenes and memories) up to date (incremental; a failure
    only costs freshness)."""
    from scene_engine.index.scenes import for_store

    try:
        with for_store(store) as index:
            index.sync()
    except Exception as exc:  # the files are the truth; `scenes reindex` repairs the index
        import warnings

        warnings.warn(f"search index not updated: {exc}", stacklevel=2)
