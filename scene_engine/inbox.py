"""Memories that cannot wait for the store: kept safe until the batch in progress ends.

A batch holds the store lock for as long as its model takes, minutes with a slow one. An agent
that remembers something meanwhile must neither wait that long nor lose the memory when the
wait runs out. ``put`` writes the memory, validated as ``scenes add`` validates it (its time
and id fixed now), to ``.scene-engine/inbox/``: one file each, temp-file-then-rename and
fsynced, so once ``put`` returns the memory survives a crash. ``InboxJoiner`` (run by ``scenes
mcp`` and ``scenes watch --fold``) appends the waiting files to the journal as soon as the store
is free, and any add, run or background fold that holds the lock does it first too
(``engine.add_memories``): in arrival order, each as its own commit, then removes them. Until
then the memory is not searchable; ``status`` counts it as queued. The inbox is not in git (it
is a waiting room; the journal is the record).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .fsutil import atomic_write_text
from .memories import parse_input
from .store import META_DIR, Store

FOLDER = "inbox"
JOIN_POLL = 1.0        # seconds between looks at the inbox, and the wait for the lock each time
MAX_JOIN_RETRY = 300   # seconds at most between tries after a join failed (not a busy store)
log = logging.getLogger(__name__)


def folder(store: Store) -> Path:
    """``.scene-engine/inbox/`` of ``store``."""
    return store.root / META_DIR / FOLDER


def put(store: Store, data: bytes) -> list[str]:
    """Validate ``data`` (a JSON list or JSONL of memories, as for ``scenes add``) and keep
    it in the inbox. Returns the memories' ids. Raises ``memories.MemoryInputError`` (nothing
    kept) or ``OSError``."""
    memories = parse_input(data)
    records = []
    for memory in memories:     # time and id as parsed now, not when the file is drained
        record = memory.to_record()
        record.pop("seq", None)
        record.pop("aliases", None)
        records.append(json.dumps(record, ensure_ascii=False))
    place = folder(store)
    place.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
    atomic_write_text(place / name, "\n".join(records) + "\n")
    return [m.id for m in memories]


def waiting(store: Store) -> list[Path]:
    """The inbox files, oldest first (their names start with the time they came)."""
    try:
        return sorted(p for p in folder(store).iterdir()
                      if p.suffix == ".jsonl" and not p.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


def queued(store: Store) -> int:
    """How many memories wait in the inbox (unreadable files count as none)."""
    count = 0
    for path in waiting(store):
        try:
            count += sum(1 for line in path.read_text("utf-8").split("\n") if line.strip())
        except (OSError, UnicodeDecodeError):
            continue
    return count


class InboxJoiner:
    """A daemon thread that appends the inbox to the journal as soon as the store is free.

    A memory put in the inbox while a batch held the store must not wait for the next fold
    trigger (``fold_idle`` is minutes): each ``JOIN_POLL`` seconds, or at once after
    ``wake()``, waiting files are drained (``engine.drain_inbox``) with a lock wait of
    ``JOIN_POLL`` seconds, so the join follows the batch's end within about a second. A busy
    store is simply tried again; any other failure is told to ``on_event(text)`` once and
    retried after a pause that doubles up to ``MAX_JOIN_RETRY`` (a torn journal is not hammered).
    Use ``start()``/``stop()`` or ``with``.
    """

    def __init__(self, store: Store, on_event: Callable[[str], None] | None = None):
        self.store = store
        self.on_event = on_event or (lambda text: log.warning("%s", text))
        self.joined = 0                    # inbox files appended so far
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_at = 0.0               # monotonic time before which a failed join waits
        self._failures = 0

    def __enter__(self) -> InboxJoiner:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="scene-engine-inbox",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the thread to stop (after the join in progress) and wait ``timeout`` seconds."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        """A memory was just put in the inbox: try to join it now."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if waiting(self.store) and time.monotonic() >= self._retry_at:
                self.join_once()
            self._wake.wait(JOIN_POLL)
            self._wake.clear()

    def join_once(self) -> int:
        """Drain the inbox if the store frees within ``JOIN_POLL`` seconds. Returns the files
        appended (0 when the store stayed busy or the join failed)."""
        from .engine import drain_inbox
        from .lock import LockBusyError

        try:
            done = drain_inbox(self.store, lock_timeout=JOIN_POLL)
        except LockBusyError:
            return 0                       # a batch still holds the store: next turn
        except Exception as exc:           # e.g. a torn journal: say so, wait, try again
            self._failures += 1
            pause = min(JOIN_POLL * 2 ** self._failures, MAX_JOIN_RETRY)
            self._retry_at = time.monotonic() + pause
            if self._failures == 1:
                from .config import plain_error

                self.on_event(f"the inbox cannot join the journal: "
                              f"{' '.join(plain_error(exc).split())}; its memories wait there "
                              f"safely and it is tried again (at least every "
                              f"{MAX_JOIN_RETRY} s)")
            return 0
        self._failures, self._retry_at = 0, 0.0
        self.joined += done
        return done
