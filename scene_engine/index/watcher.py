"""Keep the search index in step with edits made in any editor (docs/DESIGN.md "Index and watcher").

A watchdog observer watches the store root and ``scenes/`` (not recursively, so ``.git/`` and
``.scene-engine/`` get no watches and a commit or an index write cannot start a loop). Events only
name files that *may* have changed; after a quiet period (the debounce) each named scene is
reconciled with the disk by ``SceneIndex.index_file``, which compares checksums. So every save
pattern comes out right without knowing editors: a plain write, vim's rename-to-backup + new file,
the temp-file + rename of VS Code, JetBrains and the engine itself, deletes and renames. A file
whose indexing fails is retried with exponential backoff, without waiting for another change.

The observer starts before the first sync, so an edit made while the watcher starts is queued,
not lost. A watch belongs to a folder, not to a path: when ``scenes/`` is deleted and made
again (``rm -rf scenes && git checkout -- scenes``, a folder moved in, a branch switch) the old
watch is dead. The worker notices (an event on the root, or the folder's inode changing, checked
every ``REARM_CHECK`` seconds), watches the new folder, then syncs everything.
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from scene_engine.index.scenes import IndexUnavailable, SceneIndex
from scene_engine.store.layout import is_utf8_name

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

log = logging.getLogger(__name__)

SCENES_DIR = "scenes"
PERSONA = "persona.md"
INDEX_PATH = ".scene-engine/index.sqlite"
# Editor droppings: vim swap/backup and its write test file, emacs lock/autosave, temp files.
IGNORED_PATTERNS = ("*.swp", "*.swx", "*.swo", "*~", "#*#", ".#*", "*.tmp", "4913", ".*")
# Opening/reading a file (including our own reads) must not count as a change.
CHANGE_EVENTS = {"created", "modified", "deleted", "moved", "closed"}
RETRY_FIRST = 0.1   # seconds before the first retry of a failed file; doubles each time
RETRY_MAX = 5.0     # longest wait between retries
MAX_DELAY_FACTOR = 10  # under a never-ending burst, index at least every 10 debounce periods
REARM_CHECK = 1.0   # seconds between checks that the watched scenes/ is still the folder there


def is_ignored(name: str) -> bool:
    """True for names the watcher never indexes: hidden, swap, backup and temp files."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in IGNORED_PATTERNS)


@dataclass
class WatchStats:
    """Counters since ``start``: ``reindex_runs`` (debounced batches that touched scenes),
    ``files_indexed`` (index changes: added, updated or removed scenes), ``errors`` (failed
    attempts; each is retried), ``persona_changes`` (batches in which persona.md changed;
    noted, not indexed), ``lost``: why watching stopped by itself (the store was moved or
    deleted), else None."""

    reindex_runs: int = 0
    files_indexed: int = 0
    errors: int = 0
    persona_changes: int = 0
    lost: str | None = None


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: SceneWatcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGE_EVENTS:
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        # watchdog also reports the parent folder as modified on every create/delete: only a
        # created, deleted or moved folder is news.
        if event.is_directory and event.event_type not in {"created", "deleted", "moved"}:
            return
        self.watcher._note(
            [Path(p.decode() if isinstance(p, bytes) else p) for p in paths if p],
            event.is_directory)


class SceneWatcher:
    """Watch a store and reindex changed scenes.

    ``root``: the store folder (holds ``scenes/``). ``index_factory``: ``() -> SceneIndex``,
    called on the worker thread (SQLite connections are per thread); default opens
    ``ROOT/.scene-engine/index.sqlite``. ``debounce``: seconds of quiet after the last event
    before indexing (default 0.2). ``on_reindex``: optional ``callable(changed: set[str])``
    called on the worker thread after each run with the names whose index entry changed.
    Use as a context manager or call ``start``/``stop``. ``stats`` holds ``WatchStats``.
    """

    def __init__(self, root: Path, index_factory: Callable[[], SceneIndex] | None = None,
                 debounce: float = 0.2,
                 on_reindex: Callable[[set[str]], None] | None = None):
        self.root = Path(root).resolve()
        self.scenes_dir = self.root / SCENES_DIR
        self.index_factory = index_factory or (
            lambda: SceneIndex(self.root / INDEX_PATH, self.scenes_dir))
        self.debounce = debounce
        self.on_reindex = on_reindex
        self.stats = WatchStats()
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._persona = False
        self._full_sync = False
        self._last_event = 0.0
        self._first_event = 0.0
        self._retry: dict[str, tuple[float, float]] = {}  # name -> (due time, current delay)
        self._busy = False
        self._stopping = False
        self._ready = threading.Event()
        self._observer: BaseObserver | None = None
        self._worker: threading.Thread | None = None
        self._startup_error: BaseException | None = None
        self._handler = _Handler(self)
        self._scenes_watch: ObservedWatch | None = None   # of scenes/, when armed
        self._scenes_identity: tuple[int, int] | None = None
        self._next_check = 0.0
        self._rearm = False             # scenes/ itself was created, deleted or moved
        self._full_due: float | None = None   # a failed full sync is retried then
        self._full_delay = 0.0
        self._full_error = ""           # the last failure said (said once, not per retry)
        self._root_identity = _identity(self.root)
        self.lost: str | None = None    # why watching stopped by itself (the store is gone)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> SceneWatcher:
        """Start watching, then sync the index once (an edit made meanwhile is queued, not
        lost). Returns self. Raises what the initial sync raises (e.g.
        ``sqlite3.OperationalError``)."""
        self.scenes_dir.mkdir(parents=True, exist_ok=True)
        observer = self._observer = Observer()
        observer.schedule(self._handler, str(self.root), recursive=False)
        self._arm()
        observer.start()
        self._worker = threading.Thread(target=self._run, name="scene-watcher", daemon=True)
        self._worker.start()
        self._ready.wait()
        if self._startup_error:
            observer.stop()
            observer.join()
            raise self._startup_error
        return self

    def _arm(self, force: bool = False) -> bool:
        """Watch the folder now at ``scenes/`` if it is not the one watched (or always, with
        ``force``: a new folder may get the inode number of the one just deleted). Returns
        True when the watch changed (the caller then syncs everything)."""
        observer = self._observer
        assert observer is not None, "armed only once start() made the observer"
        identity = _identity(self.scenes_dir)
        if identity == self._scenes_identity and self._scenes_watch is not None and not force:
            return False
        if self._scenes_watch is not None:
            with contextlib.suppress(Exception):    # its folder may be gone already
                observer.unschedule(self._scenes_watch)
            self._scenes_watch = None
        self._scenes_identity = identity
        if identity is not None:
            try:
                self._scenes_watch = observer.schedule(
                    self._handler, str(self.scenes_dir), recursive=False)
            except OSError as err:   # vanished again, or not a folder: the root watch stays
                log.warning("cannot watch %s (%s)", self.scenes_dir, err)
                self._scenes_identity = None
        return True

    def stop(self) -> None:
        """Stop watching and finish the worker (pending changes are indexed first)."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join()
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join()

    def __enter__(self) -> SceneWatcher:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until no change is pending, queued for retry or being indexed. Returns False if
        ``timeout`` seconds passed first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (self._pending or self._retry or self._busy or self._full_sync
                   or self._full_due is not None):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- observer thread ----------------------------------------------------------------

    def _note(self, paths: list[Path], is_directory: bool) -> None:
        names, persona, full = set(), False, False
        for path in paths:
            if is_directory:
                # The scenes folder itself appeared, vanished or moved: look at everything.
                full = full or path == self.scenes_dir
            elif path.parent == self.scenes_dir and path.suffix == ".md" and \
                    not is_ignored(path.name) and is_utf8_name(path.name):
                names.add(path.name)
            elif path == self.root / PERSONA:
                persona = True
        if not (names or persona or full):
            return
        with self._cond:
            now = time.monotonic()
            if not (self._pending or self._persona or self._full_sync):
                self._first_event = now
            self._pending |= names
            self._persona |= persona
            self._full_sync |= full
            self._rearm |= full
            self._last_event = now
            self._cond.notify_all()

    # -- worker thread ------------------------------------------------------------------

    def _run(self) -> None:
        try:
            index = self.index_factory()
            _say_warnings(index.sync())
        except BaseException as err:  # reported to start()
            self._startup_error = err
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                batch = self._next_batch()
                if batch is None:
                    break
                self._process(index, *batch)
        finally:
            index.close()

    def _next_batch(self) -> tuple[set[str], bool, bool] | None:
        """Wait for a quiet period after events, or a due retry; None when stopping."""
        with self._cond:
            while True:
                now = time.monotonic()
                has_events = self._pending or self._persona or self._full_sync
                if has_events:
                    quiet_at = self._last_event + self.debounce
                    cap_at = self._first_event + self.debounce * MAX_DELAY_FACTOR
                    ready_at = min(quiet_at, cap_at)
                else:
                    ready_at = float("inf")
                due = [n for n, (at, _) in self._retry.items() if at <= now]
                full_due = self._full_due is not None and self._full_due <= now
                if (has_events and (ready_at <= now or self._stopping)) or due or full_due:
                    names = set(self._pending) | set(due)
                    persona, full = self._persona, self._full_sync or full_due
                    self._pending.clear()
                    self._persona = self._full_sync = False
                    self._full_due = None
                    self._busy = True
                    return names, persona, full
                if self._stopping:
                    return None
                if now >= self._next_check:       # is scenes/ still the folder we watch?
                    self._next_check = now + REARM_CHECK
                    if _identity(self.root) != self._root_identity:
                        self._lose(f"{self.root} was moved or deleted; stopped watching it")
                        return None
                    if _identity(self.scenes_dir) != self._scenes_identity:
                        self._full_sync = True
                        self._last_event = self._first_event = now - self.debounce
                        continue
                next_retry = min([at for at, _ in self._retry.values()]
                                 + [self._full_due or float("inf")])
                wake = min(ready_at, next_retry, self._next_check)
                self._cond.wait(max(0.0, wake - now))

    def _full_failed(self, err: Exception) -> None:
        """A full sync failed (``scenes/`` unreadable, replaced by a file...): say so once,
        retry with a growing delay, not in a loop of tracebacks."""
        said = f"{type(err).__name__}: {err}"
        if said != self._full_error:
            log.warning("cannot sync the search index (%s); will retry", err)
        self._full_error = said
        with self._cond:
            self.stats.errors += 1
            self._full_delay = min(max(self._full_delay * 2, RETRY_FIRST), RETRY_MAX)
            self._full_due = time.monotonic() + self._full_delay

    def _lose(self, why: str) -> None:
        """Stop by ourselves: the store is gone. ``lost`` says why (the caller reports it);
        nothing is written."""
        log.info("%s", why)
        with self._cond:
            self.lost = self.stats.lost = why
            self._stopping = True
            self._busy = False
            self._cond.notify_all()

    def _process(self, index: SceneIndex, names: set[str], persona: bool, full: bool) -> None:
        changed: set[str] = set()
        failed: list[str] = []
        if full:
            with self._cond:
                force, self._rearm = self._rearm, False
            self._arm(force)      # a new scenes/ folder: watch it before reading it
            try:
                report = index.sync()
                changed |= set(report.added + report.updated + report.removed)
                self._full_delay, self._full_error = 0.0, ""
                _say_warnings(report)
            except IndexUnavailable as err:    # the store itself is gone
                self._lose(str(err))
                return
            except Exception as err:
                self._full_failed(err)
        for name in sorted(names):
            try:
                if index.index_file(name):
                    changed.add(name)
            except IndexUnavailable as err:
                self._lose(str(err))
                return
            except Exception as err:
                log.warning("indexing %s failed (%s); will retry", name, err)
                failed.append(name)
        with self._cond:
            if names or full:
                self.stats.reindex_runs += 1
            self.stats.persona_changes += persona
            self.stats.files_indexed += len(changed)
            self.stats.errors += len(failed)
            for name in names - set(failed):
                self._retry.pop(name, None)
            for name in failed:
                delay = min(self._retry.get(name, (0.0, RETRY_FIRST / 2))[1] * 2, RETRY_MAX)
                self._retry[name] = (time.monotonic() + delay, delay)
            self._busy = False
            self._cond.notify_all()
        if self.on_reindex and changed:
            with contextlib.suppress(Exception):
                self.on_reindex(changed)


def _say_warnings(report) -> None:
    """Log what a sync could not index whole (a journal line by its number, a scene header):
    only files read by this sync, so once a change, not once a run."""
    for warning in report.warnings or ():
        log.warning("%s", warning)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the folder at ``path``, None if there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def watch_forever(root: Path, index_factory: Callable[[], SceneIndex] | None = None,
                  debounce: float = 0.2,
                  on_reindex: Callable[[set[str]], None] | None = None) -> WatchStats:
    """Watch ``root`` (a store folder) until KeyboardInterrupt, or until the store is moved
    or deleted (``WatchStats.lost`` says so); return the final ``WatchStats``.

    Arguments as for ``SceneWatcher``. This is what ``scenes watch`` runs.
    """
    watcher = SceneWatcher(root, index_factory, debounce=debounce, on_reindex=on_reindex)
    with watcher, contextlib.suppress(KeyboardInterrupt):
        while watcher.lost is None:
            time.sleep(0.5)
    return watcher.stats
