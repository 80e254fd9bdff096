"""The root directory and link-safe reads inside it.

Every access goes through a descriptor of the root opened with O_NOFOLLOW|O_DIRECTORY and
checked against the directory seen at construction, and every name is opened relative to that
descriptor with O_NOFOLLOW, so no symbolic link is followed and nothing outside the root is
resolved (issue: "Symbolic links are never followed").
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import RootError
from .names import NameRefused, name_key, validate_name

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
# O_NONBLOCK: opening a FIFO planted in the root must not hang; O_NOCTTY: nor grab a terminal.
_READ_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
)


class DiskProblem(Exception):
    """A file on disk cannot be used; ``str(exc)`` is the explanation for the model."""


def _check_platform() -> None:
    """Refuse to run where descriptor-relative calls or O_NOFOLLOW are missing (e.g. Windows)."""
    needed = {os.open, os.unlink, os.rename}  # os.replace shares os.rename's support
    if not _NOFOLLOW or not needed <= os.supports_dir_fd:
        raise RootError("this platform lacks O_NOFOLLOW or dir_fd support; the sandbox cannot run")


def _refuse_links(path: Path) -> None:
    """Raise RootError if ``path`` is a link, or a parent owned by this user is one.

    Parents owned by someone else (system links such as macOS ``/tmp``) are accepted: this user
    cannot re-point them.
    """
    uid = os.getuid()
    for current in [*reversed(path.parents), path]:
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            raise RootError(f"sandbox root does not exist: {path}") from None
        if stat.S_ISLNK(st.st_mode) and (current == path or st.st_uid == uid):
            raise RootError(f"sandbox root is reached through a symbolic link: {current}")


class Root:
    """A directory the sandbox may change, pinned by device and inode at construction.

    ``path``: str or PathLike of an existing directory. Raises ``RootError`` when it does not
    exist, is not a directory, is a symbolic link or lies under a link this user owns.
    """

    def __init__(self, path: str | os.PathLike[str]):
        _check_platform()
        self.path = Path(os.path.abspath(os.fspath(path)))
        _refuse_links(self.path)
        fd, st = self._open_dir()
        os.close(fd)
        self._identity = (st.st_dev, st.st_ino)

    def _open_dir(self) -> tuple[int, os.stat_result]:
        """A no-follow descriptor of the root and its stat; RootError if it cannot be opened."""
        try:
            fd = os.open(self.path, _DIR_FLAGS)
        except OSError as exc:
            raise RootError(f"cannot open sandbox root {self.path}: {exc.strerror}") from None
        try:
            return fd, os.fstat(fd)
        except OSError:
            os.close(fd)
            raise

    @contextmanager
    def open(self) -> Iterator[int]:
        """Yield a descriptor of the root; RootError if the path now names another directory."""
        fd, st = self._open_dir()
        try:
            if (st.st_dev, st.st_ino) != self._identity:
                raise RootError(f"sandbox root {self.path} was replaced after the sandbox started")
            yield fd
        finally:
            os.close(fd)


def list_names(fd: int, suffixes: tuple[str, ...]) -> dict[str, list[str]]:
    """Legal names present in the directory ``fd``, grouped by ``name_key``.

    Returns ``{key: [on-disk spelling, ...]}``; more than one spelling means files that differ
    only by case or normalisation exist side by side. Illegal names (hidden, other suffixes) are
    left out: the model can never reach them.
    """
    grouped: dict[str, list[str]] = {}
    for entry in os.listdir(fd):
        key = _legal_key(entry, suffixes)
        if key is not None:
            grouped.setdefault(key, []).append(entry)
    return grouped


@functools.lru_cache(maxsize=4096)
def _legal_key(entry: str, suffixes: tuple[str, ...]) -> str | None:
    """``name_key(entry)`` for a legal name, None for one the model can never reach. Cached:
    every tool call lists the folder, whose names rarely change (issue 39: validating each
    entry again was a tenth of the sandbox's time)."""
    try:
        validate_name(entry, suffixes)
    except NameRefused:
        return None
    return name_key(entry)


def read_text(fd: int, name: str, max_bytes: int) -> tuple[str, int]:
    """Read a regular file ``name`` in directory ``fd`` as UTF-8 without following links.

    Returns ``(text, mode)`` where ``mode`` is the permission bits. Raises ``FileNotFoundError``
    when absent and ``DiskProblem`` for a link, directory, device, FIFO, hard-linked file (it may
    expose a file outside the root), a file over ``max_bytes`` or one that is not UTF-8.
    """
    try:
        file_fd = os.open(name, _READ_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(name) from None
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise DiskProblem(f"{name} is a symbolic link; links are never followed.") from None
        raise DiskProblem(f"{name} cannot be opened ({exc.strerror}).") from None
    try:
        st = os.fstat(file_fd)
        if not stat.S_ISREG(st.st_mode):
            raise DiskProblem(f"{name} is not a regular file (it is a directory or device).")
        if st.st_nlink > 1:
            raise DiskProblem(f"{name} has other hard links and may be a file outside this folder.")
        if st.st_size > max_bytes:
            raise DiskProblem(f"{name} is {st.st_size} bytes; files over {max_bytes} bytes cannot be used.")
        data = _read_all(file_fd, max_bytes + 1)
    finally:
        os.close(file_fd)
    if len(data) > max_bytes:
        raise DiskProblem(f"{name} is over {max_bytes} bytes; it cannot be used.")
    try:
        return data.decode("utf-8"), stat.S_IMODE(st.st_mode)
    except UnicodeDecodeError:
        raise DiskProblem(f"{name} is not UTF-8 text; it cannot be used with these tools.") from None


def _read_all(fd: int, limit: int) -> bytes:
    """Read from ``fd`` until EOF or ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
