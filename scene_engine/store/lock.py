"""The cross-process store lock (filelock) around batches, undo, add and reindex.

filelock's Unix lock is an ``fcntl`` lock: the kernel drops it when its holder dies, so a lock
left by a killed process is simply taken over. The holder's pid goes to a side file so a
waiting process can say who holds the lock. The wait is ``DEFAULT_TIMEOUT`` seconds unless the
environment sets ``SCENE_ENGINE_LOCK_TIMEOUT`` (seconds; negative waits forever).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from scene_engine.core.errors import SceneEngineError

DEFAULT_TIMEOUT = 60.0
TIMEOUT_ENV = "SCENE_ENGINE_LOCK_TIMEOUT"


class LockBusyError(SceneEngineError, RuntimeError):
    """The store lock was not free within the timeout; the message names the holder's pid."""


@contextlib.contextmanager
def store_lock(lock_path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the store's lock for the ``with`` body.

    ``timeout`` in seconds (negative waits forever; None: ``lock_timeout()``). Raises
    ``LockBusyError`` on timeout. The lock is re-entrant within one process: one filelock
    instance per path (``is_singleton``) counts nested acquisitions, where a second instance
    would wait on its own process's lock.
    """
    timeout = lock_timeout() if timeout is None else timeout
    lock = FileLock(str(lock_path), is_singleton=True)
    info = Path(f"{lock_path}.pid")
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        holder = _holder(info)
        who = ("a batch in this process" if holder == f" (pid {os.getpid()})"
               else f"another scene-engine process{holder}")
        raise LockBusyError(
            f"the store is busy: {who} holds {lock_path}{_leased(lock_path, holder)}; "
            f"waited {timeout:g} s. Try again when it finishes.") from exc
    try:
        if lock.lock_counter == 1:
            info.write_text(str(os.getpid()), encoding="utf-8")
        yield
    finally:
        lock.release()


def lock_timeout() -> float:
    """Seconds to wait for the lock: ``$SCENE_ENGINE_LOCK_TIMEOUT``, else ``DEFAULT_TIMEOUT``.

    Raises ``ConfigError`` (exit 2 on the command line) if the variable is not a number.
    """
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        return float(raw)
    except ValueError:
        from scene_engine.store.config import ConfigError

        raise ConfigError(f"{TIMEOUT_ENV} must be a number of seconds, not {raw!r}") from None


def _leased(lock_path: Path, holder: str) -> str:
    """What the lease file beside the lock says of its holder (an agent folding a batch
    itself, ``services.host_fold``), when it is the lock's holder's: ", for BATCH of HOLDER
    until TIME", else ""."""
    import json

    try:
        data = json.loads(Path(f"{lock_path}.lease").read_text(encoding="utf-8"))
        if f" (pid {int(data['pid'])})" != holder:
            return ""
        return (f", for batch {data['batch']} folded by {data['holder']} (its lease runs to "
                f"{data['expires']} unless the agent ends it sooner)")
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _holder(info: Path) -> str:
    try:
        return f" (pid {int(info.read_text(encoding='utf-8').strip())})"
    except (OSError, ValueError):
        return ""
