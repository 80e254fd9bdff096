"""The cross-process store lock (filelock) around batches, undo, add and reindex.

filelock's Unix lock is an ``fcntl`` lock: the kernel drops it when its holder dies, so a lock
left by a killed process is simply taken over. The holder's pid goes to a side file so a
waiting process can say who holds the lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

DEFAULT_TIMEOUT = 60.0


class LockBusyError(RuntimeError):
    """The store lock was not free within the timeout; the message names the holder's pid."""


@contextlib.contextmanager
def store_lock(lock_path: Path, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the store's lock for the ``with`` body.

    ``timeout`` in seconds (negative waits forever). Raises ``LockBusyError`` on timeout. The
    lock is re-entrant within one process (filelock counts nested acquisitions).
    """
    lock = FileLock(str(lock_path), timeout=timeout)
    info = Path(f"{lock_path}.pid")
    try:
        lock.acquire()
    except Timeout as exc:
        holder = _holder(info)
        raise LockBusyError(
            f"the store is busy: another scene-engine process{holder} holds {lock_path}; "
            f"waited {timeout:g} s. Try again when it finishes.") from exc
    try:
        if lock.lock_counter == 1:
            info.write_text(str(os.getpid()), encoding="utf-8")
        yield
    finally:
        lock.release()


def _holder(info: Path) -> str:
    try:
        return f" (pid {int(info.read_text(encoding='utf-8').strip())})"
    except (OSError, ValueError):
        return ""
