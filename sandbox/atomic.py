"""Write a checked change set into the root: temp file + fsync + rename, rolled back on failure.

Rollback rewrites the previous content the caller verified just before (``Planned.old``), so it
works on file systems without hard links. Everything is relative to the root descriptor.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from .errors import ApplyError, ConflictError
from .model import DELETED, Content

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


@dataclass(frozen=True)
class Planned:
    """One file to change. ``old``: verified current content (None: absent); ``mode``: its bits."""

    name: str
    new: Content
    old: str | None
    mode: int | None


def _temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` (hidden, so it is never a legal sandbox name)."""
    return f".{name}.{secrets.token_hex(4)}.tmp"


def _write_temp(dir_fd: int, name: str, text: str, mode: int | None) -> str:
    """Write ``text`` (UTF-8) to a new temp file in ``dir_fd``, fsync it, return its name."""
    temp = _temp_name(name)
    fd = os.open(temp, _TEMP_FLAGS, 0o644 if mode is None else mode, dir_fd=dir_fd)
    try:
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None:
            os.fchmod(fd, mode)  # keep the old file's bits exactly, whatever the umask
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(dir_fd, temp)
        raise
    os.close(fd)
    return temp


def _unlink_quietly(dir_fd: int, name: str) -> None:
    """Remove ``name`` if present; cleanup must not mask the original error."""
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def _put(dir_fd: int, name: str, text: str, mode: int | None) -> None:
    """Atomically make ``name`` hold ``text``."""
    temp = _write_temp(dir_fd, name, text, mode)
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_quietly(dir_fd, temp)
        raise


def write_all(dir_fd: int, plans: list[Planned],
              recheck: Callable[[], object] | None = None) -> None:
    """Apply ``plans`` in order; on any failure restore every touched file and raise ApplyError.

    Phase 1 writes and fsyncs all temp files (nothing visible changes); then ``recheck()``, if
    given, may raise ConflictError to give up with nothing written (the caller checks that no
    file changed while the temp files were written: their fsyncs take the longest, and an
    edit made then would be replaced); phase 2 renames them into place or unlinks deleted
    files, then fsyncs the directory. ``ApplyError.unrestored`` names files whose restore
    failed too.
    """
    temps: dict[str, str] = {}
    touched: list[Planned] = []
    try:
        for plan in plans:
            if plan.new is not DELETED:
                assert isinstance(plan.new, str)
                temps[plan.name] = _write_temp(dir_fd, plan.name, plan.new, plan.mode)
        if recheck is not None:
            recheck()
        for plan in plans:
            touched.append(plan)  # before the step: a half-done step is restored too
            if plan.new is DELETED:
                os.unlink(plan.name, dir_fd=dir_fd)
            else:
                os.replace(temps[plan.name], plan.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                del temps[plan.name]  # only once renamed: a failed rename leaves it to clean up
        os.fsync(dir_fd)
    except Exception as exc:
        for temp in temps.values():
            _unlink_quietly(dir_fd, temp)
        if isinstance(exc, ConflictError):   # the recheck gave up: nothing was renamed
            raise
        unrestored = _rollback(dir_fd, touched)
        raise ApplyError(f"writing changes failed ({exc}); nothing was changed", unrestored) from exc


def _rollback(dir_fd: int, touched: list[Planned]) -> list[str]:
    """Put each touched file back to ``old``; return the names that could not be restored."""
    failed: list[str] = []
    for plan in reversed(touched):
        try:
            if plan.old is None:
                os.unlink(plan.name, dir_fd=dir_fd)
            else:
                _put(dir_fd, plan.name, plan.old, plan.mode)
        except FileNotFoundError:
            if plan.old is not None:  # a new file that never got renamed in is fine
                failed.append(plan.name)
        except Exception:
            failed.append(plan.name)
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)
    return failed
