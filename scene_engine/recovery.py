"""Crash safety: a write-ahead marker around every multi-file write of the engine.

Before a batch (or an ``add``) writes anything it records, in ``.scene-engine/run/intent.json``,
the HEAD commit and the paths it is about to change. The marker is removed after the commit. If
a process dies in between, the next command under the lock finds the marker: if HEAD has not
moved, the listed paths are put back as HEAD has them (files the batch created are removed); if
the commit landed, only the marker goes. Paths not listed — hand edits that predate the batch —
are never touched. So a crash at any instant leaves the store as it was before the batch or
after it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from . import history
from .fsutil import atomic_write_text


def _marker(store) -> Path:
    return store.meta_dir / "run" / "intent.json"


def begin(store, paths: list[str], repo=None) -> None:
    """Record the intent to change ``paths`` (relative to the store root) before writing."""
    repo = repo or history.open_repo(store.root)
    head = repo.head.commit.hexsha if repo.head.is_valid() else ""
    marker = _marker(store)
    marker.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, json.dumps({"head": head, "paths": sorted(set(paths)),
                                          "pid": os.getpid()}))


def end(store) -> None:
    """The change is committed: drop the marker."""
    with contextlib.suppress(FileNotFoundError):
        _marker(store).unlink()


def pending_intent(store) -> dict | None:
    """The marker of an interrupted change, or None."""
    try:
        return json.loads(_marker(store).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"head": None, "paths": []}   # torn marker: nothing was written after it


def recover(store, repo) -> list[str]:
    """Undo an interrupted change (see module docstring); return the paths restored.

    Call it with the store lock held. Also clears the lock files a git process killed
    mid-commit leaves (``index.lock``, ``HEAD.lock``, ``refs/**/*.lock``: until they go, every
    later commit fails; no other engine process can be in git while we hold the lock) and the
    sandbox's orphan temp files.
    """
    _remove_git_locks(Path(repo.git_dir))
    intent = pending_intent(store)
    if intent is None:
        return []
    restored = []
    head = repo.head.commit.hexsha if repo.head.is_valid() else ""
    if intent.get("head") == head:
        for path in intent.get("paths", []):
            _restore(repo, store.root, path)
            restored.append(path)
    _remove_temp_files(store)
    end(store)
    return restored


def _remove_git_locks(git_dir: Path) -> None:
    """Unlink the lock files git takes during a commit (index, HEAD, refs, packed-refs)."""
    stale = [git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "packed-refs.lock"]
    stale += (git_dir / "refs").rglob("*.lock")
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _restore(repo, root: Path, path: str) -> None:
    """Put ``path`` back as HEAD has it: checkout if tracked, unlink if new."""
    if repo.git.ls_tree("HEAD", "--", path):
        repo.git.checkout("HEAD", "--", path)
    else:
        with contextlib.suppress(FileNotFoundError):
            (root / path).unlink()
        with contextlib.suppress(Exception):
            repo.git.rm("--cached", "--quiet", "--ignore-unmatch", "--", path)


def _remove_temp_files(store) -> None:
    """Unlink the hidden ``.NAME.*.tmp`` files the sandbox and ``atomic_write_text`` write
    before renaming; a crash can orphan them, and ``git add`` of ``memories/`` would commit
    one. Folders: scenes, memories, ``.scene-engine``; at the root only persona temp files."""
    folders = ((store.scenes_dir, "."), (store.memories_dir, "."), (store.meta_dir, "."),
               (store.root, ".persona.md."))
    for folder, prefix in folders:
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        entry.unlink()
