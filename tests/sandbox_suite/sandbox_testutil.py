"""Helpers for the sandbox tests: a hostile little world on disk and exact tree snapshots."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

SECRET = "TOP SECRET outside the root\n"

# Files inside the root at the start of every hostile-corpus case: on-disk name -> text.
ROOT_FILES = {
    "a.md": "alpha\n",
    "b.md": "beta one\nbeta two\n",
    "aaaa.md": "aaaa",
    "pattern.md": "price $& and \\1 and a.*b\n",
    "café.md": "coffee\n",  # NFC spelling on disk
    "private.md": "not shown to the model\n",
    ".hidden.md": "hidden\n",
    "notes.txt": "not markdown\n",
}
SHOWN = ["a.md", "b.md", "aaaa.md", "pattern.md", "café.md", "link.md", "dir.md", "hard.md", "fifo.md"]


@dataclass
class World:
    """``base``: the tmp dir; ``root``: the sandbox root; ``outside``: a sibling tree to protect."""

    base: Path
    root: Path
    outside: Path


def make_world(base: Path) -> World:
    """Build root + outside with links, a directory, a FIFO and a hard link planted in the root."""
    root, outside = base / "root", base / "outside"
    root.mkdir()
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.md").write_text(SECRET)
    (outside / "deep" / "x.md").write_text("deep\n")
    for name, text in ROOT_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "link.md").symlink_to(outside / "secret.md")
    (root / "dangling.md").symlink_to(outside / "created-through-link.md")
    (root / "linkdir.md").symlink_to(outside)
    (root / "dir.md").mkdir()
    os.mkfifo(root / "fifo.md")
    os.link(outside / "secret.md", root / "hard.md")
    return World(base, root, outside)


def snapshot(path: Path) -> dict[str, object]:
    """Exact picture of a tree without following links: name -> bytes / ("link", target) / ..."""
    result: dict[str, object] = {}
    for entry in sorted(os.listdir(path)):
        full = path / entry
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            result[entry] = ("link", os.readlink(full))
        elif stat.S_ISDIR(st.st_mode):
            result[entry] = ("dir", snapshot(full))
        elif stat.S_ISREG(st.st_mode):
            result[entry] = ("file", full.read_bytes(), stat.S_IMODE(st.st_mode))
        else:
            result[entry] = ("other", stat.S_IFMT(st.st_mode))
    return result
