"""Small file-system helpers the store shares: atomic text writes.

The sandbox has its own, stricter writer (dir-fd relative, no-follow); this one is for the
engine's own bookkeeping files (state, config, journal segments), whose paths the engine chose.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so a crash leaves either the old or the new file.

    Temp file in the same folder + fsync + ``os.replace`` + fsync of the folder (the
    temp-file-then-rename habit). Raises ``OSError`` from the file system; the temp file is
    removed on failure.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename is durable only once its folder is synced)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
