"""``scenes reindex`` and ``scenes watch``: the derived index rebuilt, or kept in step with
any editor, with background folding if asked (docs/DESIGN.md "Index and watcher").
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from scene_engine.core.errors import SceneEngineError
from scene_engine.index.scenes import for_store
from scene_engine.store.lock import store_lock

if TYPE_CHECKING:
    from scene_engine.index.scenes import SyncReport
    from scene_engine.index.watcher import WatchStats
    from scene_engine.store.store import Store


def reindex(store: Store) -> SyncReport:
    """Rebuild the index from the files, aside, and swap it in, under the store lock.
    Returns the build's report (scenes in ``added``, ``memories_added``, ``warnings`` naming
    each line it could not read). Raises ``SceneEngineError`` when the build failed (the
    index is left as it was) and ``LockBusyError``."""
    with store_lock(store.lock_path):
        index = for_store(store)
        try:
            return index.rebuild()
        except OSError as exc:   # built aside: nothing was swapped in
            raise SceneEngineError(f"reindex failed: {exc.strerror or exc}: "
                                   f"{exc.filename or ''}; the index was left as it was"
                                   ) from exc
        finally:
            index.close()


def watch(store: Store, debounce: float = 0.2, fold: bool = False,
          on_reindex: Callable[[set[str]], None] | None = None,
          on_event: Callable[[str], None] | None = None) -> WatchStats:
    """Keep the index in step with the files until Ctrl-C (``index.watcher.watch_forever``:
    ``debounce`` seconds of quiet; ``on_reindex(names)`` after each run). With ``fold``,
    pending memories are folded in the background as the settings say (``fold_every``,
    ``fold_idle``) and memories an agent queued join the journal as soon as the store is
    free; ``on_event(line)`` hears both. Returns the watch's stats. Raises
    ``SceneEngineError`` when the index cannot be kept here (a store this user cannot write)
    or the watch lost track of the files."""
    from scene_engine.index.watcher import watch_forever
    from scene_engine.services.backends import store_backend
    from scene_engine.services.folding import FoldWorker, InboxJoiner

    say = on_event or (lambda _line: None)
    folding: contextlib.AbstractContextManager = contextlib.nullcontext()
    joining: contextlib.AbstractContextManager = contextlib.nullcontext()
    if fold:
        folding = FoldWorker(store, store_backend(store), on_event=say)
        # Memories an agent queued while the store was busy join as soon as it is free,
        # not at the next fold trigger.
        joining = InboxJoiner(store, on_event=say)
    try:
        with folding, joining:   # the journal too: a line it cannot index is logged by its number
            stats = watch_forever(store.root, lambda: for_store(store), debounce=debounce,
                                  on_reindex=on_reindex)
    except sqlite3.Error as exc:       # e.g. a store this user cannot write
        raise SceneEngineError(f"cannot keep the search index here: {exc}") from exc
    if stats.lost:
        raise SceneEngineError(stats.lost)
    return stats
