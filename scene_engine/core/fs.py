"""Small file-system helpers the store shares: atomic text writes, reads that never follow a link.

The sandbox has its own, stricter writer (dir-fd relative, no-follow); this one is for the
engine's own bookkeeping files (state, config, journal segments), whose paths the engine chose.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path


def atomic_write_text(path: Path, text: str, durable: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` so a crash leaves either the old or the new file.

    Temp file in the same folder + fsync + ``os.replace`` + fsync of the folder (the
    temp-file-then-rename habit). ``durable`` False leaves out both fsyncs, for derived data
    that is made again when it is lost (a reader never sees a half-written file; after a
    power cut the old file, the new one or an empty one may be there). Raises ``OSError``
    from the file system; the temp file is removed on failure.
    """
    import tempfile

    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)   # keep the mode a person gave the file
    except FileNotFoundError:
        mode = 0o666 & ~_umask()                    # what an editor would have made
    fd = tmp = None
    try:      # mkstemp inside: a Ctrl-C right after it must not leave the temp file behind
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, mode)                         # mkstemp makes 0600 files
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            fd = None                               # the handle closes it now
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0o022)   # reading the umask means setting it; put it straight back
    os.umask(current)
    return current


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename is durable only once its folder is synced)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class NotRegularFile(OSError):
    """A path the engine would read is a symbolic link, a folder or a device, not a regular
    file. The engine never follows a link out of the store (a link in ``scenes/`` to a file
    elsewhere would put that file's text into the index)."""

    def __str__(self) -> str:          # "PATH: not a regular file", without "[Errno 0]"
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file, read without following a symbolic link
    (``O_NOFOLLOW``, then ``fstat``: no window between check and read).

    Raises ``NotRegularFile`` for a link, folder, FIFO or device; ``FileNotFoundError`` and
    other ``OSError`` as the file system reports them."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        if os.path.islink(path):     # ELOOP (Linux) / EMLINK (BSD) for a link under O_NOFOLLOW
            raise NotRegularFile(err.errno, "not a regular file (a symbolic link)",
                                 str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(0, "not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def read_regular_text(path: Path, errors: str = "strict") -> str:
    """``read_regular(path)`` decoded as UTF-8 (``errors`` as for ``bytes.decode``).
    Raises what ``read_regular`` raises, and with ``errors="strict"``
    ``core.errors.NotUtf8Error`` (a ``UnicodeDecodeError``) naming the file and the byte.

    Every strict read of a file a person may edit goes through here (or ``decode_utf8``),
    so each face says a bad byte the same way, in one line."""
    data = read_regular(path)
    if errors != "strict":
        return data.decode("utf-8", errors)
    return decode_utf8(data, shown_path(Path(path)))


def decode_utf8(data: bytes, where: str) -> str:
    """``data`` as UTF-8; ``NotUtf8Error`` naming ``where`` (a file, or a file as of a
    commit) and the first byte that is not."""
    from scene_engine.core.errors import NotUtf8Error

    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(where, exc) from None


_UNDECODED = re.compile("[\ud800-\udfff]")


def escape_undecodable(text: str, in_json: bool = False) -> str:
    """``text`` with each byte that was not UTF-8 as ``\\xNN`` (git's output reaches us
    decoded with ``surrogateescape``: a person's stray byte in a diff or a blame line) and
    any other lone surrogate as ``\\udNNN``: text a page can carry. ``in_json``: ``text``
    is a JSON document, whose strings then hold those escapes as text."""
    slash = "\\\\" if in_json else "\\"

    def shown(found: re.Match) -> str:
        code = ord(found.group())
        return f"{slash}x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else \
            f"{slash}u{code:04x}"
    return _UNDECODED.sub(shown, text)


def shown_path(path: Path) -> str:
    """``path`` as a person finds it: relative to the store it is in (the nearest folder
    above holding ``.scene-engine``, three levels up at most: ``scenes/a.md``,
    ``persona.md``, ``.scene-engine/ledger/000003.json``), else as given."""
    for folder in list(path.parents)[:3]:
        if (folder / ".scene-engine").is_dir():
            return str(path.relative_to(folder))
    return str(path)


def numbered_files(folder: Path, suffix: str) -> dict[int, os.stat_result]:
    """``{number: stat}`` of the regular files ``NNN.<suffix>`` directly in ``folder`` (a
    journal segment, a batch ledger), links and other names left out; {} when ``folder`` is
    missing. A file removed while the folder is read is left out."""
    found = {}
    with contextlib.suppress(FileNotFoundError, NotADirectoryError), os.scandir(folder) as it:
        for item in it:
            stem, _, rest = item.name.partition(".")
            if rest == suffix and stem.isdigit() and item.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    found[int(stem)] = item.stat(follow_symlinks=False)
    return found
