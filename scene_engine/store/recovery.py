"""Crash safety: a write-ahead marker around every multi-file write of the engine.

Before a batch (or an ``add``, a persona refresh, an undo) writes anything it records, in
``.scene-engine/run/intent.json``, the HEAD commit, the paths it is about to change and, for
each, the sha256 of the exact text it will write there (null for a deletion). The marker is
removed after the commit. If a process dies in between, the next command under the lock finds
the marker. If the commit landed, only the marker goes. If HEAD has not moved, each listed path
is put back as HEAD has it (files the change created are removed) when it holds what the change
planned or what HEAD has. A scene or ``persona.md`` holding anything else was edited by a
person after the interruption: it is kept, committed as a hand edit, and a warning names it.
Engine files (``state.json``, the journal, ledgers) are always put back. Paths not listed —
hand edits that predate the change — are never touched. So a crash at any instant leaves the
store as it was before the change or after it, and never costs a person's edit.

Markers written before the planned hashes existed (``paths`` only) are rolled back as before.
Read-only commands call ``ensure_recovered`` so they never show an unfinished batch as real.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scene_engine.core import interrupts
from scene_engine.core.fs import atomic_write_text
from scene_engine.store import history
from scene_engine.store.layout import StorePaths

if TYPE_CHECKING:
    from git import Repo

RECOVER_TIMEOUT = 3.0      # seconds a read-only command waits for the lock to recover
_TORN: dict[str, Any] = {"head": None, "paths": []}
_UNKNOWN = object()        # a listed path without a planned hash: only HEAD's version matches


class RecoveryWarning(UserWarning):
    """A person's edit was kept after an interrupted change, or an unfinished change could
    not be rolled back (so what a command shows may include part of it)."""


def _marker(store: StorePaths) -> Path:
    return store.meta_dir / "run" / "intent.json"


def begin(store: StorePaths, planned: Mapping[str, str | None], repo: Repo | None = None) -> None:
    """Record the intent to write ``planned`` before writing any of it.

    ``planned``: path relative to the store root -> the exact text about to be written there,
    or None for a deletion. Recovery keeps a scene or ``persona.md`` that holds neither this
    text nor HEAD's; engine files are put back whatever they hold, so a caller that cannot know
    an engine file's text in advance (``add``: the journal decides what it appends) gives
    None for it. ``repo``: the store's ``git.Repo`` (opened if None). Raises ``TypeError``
    for a list of paths (the old form), ``HistoryError`` when no commit can follow (a merge
    or rebase of the person's in progress: nothing is written then) and ``OSError`` if the
    marker cannot be written.
    """
    if not isinstance(planned, Mapping):
        raise TypeError("recovery.begin takes {path: text to write, or None for a deletion}")
    repo = repo or history.open_repo(store.root)
    history.ensure_committable(repo)
    hashes = {path: None if text is None else _sha256(text.encode("utf-8"))
              for path, text in planned.items()}
    marker = _marker(store)
    marker.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, json.dumps({"head": _head(repo), "paths": sorted(hashes),
                                          "planned": hashes, "pid": os.getpid()}))


def end(store: StorePaths) -> None:
    """The change is committed: drop the marker."""
    with contextlib.suppress(FileNotFoundError):
        _marker(store).unlink()


def pending_intent(store: StorePaths) -> dict | None:
    """The marker of an interrupted change, or None when there is none.

    A dict with ``head`` (sha; "" before the first commit), ``paths`` (list of paths relative
    to the store root) and, in markers of this version, ``planned`` (path -> sha256 of the text
    to be written, or None for a deletion). A marker that cannot be read as one (torn, not
    JSON, another shape) is ``{"head": None, "paths": []}``: it was written atomically before
    anything else, so nothing of its change can be on disk. Raises ``OSError`` if the marker
    exists but cannot be read.
    """
    try:
        raw = json.loads(_marker(store).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return dict(_TORN)
    if not isinstance(raw, dict) or not _strings(raw.get("paths")):
        return dict(_TORN)
    planned = raw.get("planned")
    if planned is not None and not (isinstance(planned, dict) and all(
            v is None or isinstance(v, str) for v in planned.values())):
        return dict(_TORN)
    return raw


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def recover(store: StorePaths, repo: Repo) -> list[str]:
    """Finish an interrupted change (see the module docstring); return the paths put back.

    Call it with the store lock held. Runs in ``interrupts.critical()``, so Ctrl-C cannot stop
    it half-way (it is idempotent anyway). Also clears the lock files a git process killed
    mid-commit leaves (``index.lock``, ``HEAD.lock``, ``refs/**/*.lock``: until they go, every
    later commit fails; no other engine process can be in git while we hold the lock) and the
    orphan temp files of atomic writes. Warns (``RecoveryWarning``) once per person's file
    kept. Raises ``HistoryError`` or ``git.GitCommandError`` if git fails; the marker then
    stays and the next command tries again.
    """
    with interrupts.critical(repo):
        _remove_git_locks(Path(repo.git_dir), shared=_shared(repo))
        intent = pending_intent(store)
        if intent is None:
            _remove_temp_files(store, only_marker=True)   # a kill while writing the marker
            return []
        restored: list[str] = []
        head = _head(repo)
        if intent.get("head") == head or not _landed(repo, str(intent.get("head") or ""),
                                                      head):
            restored, kept = _roll_back(repo, store.root, intent, head)
            _keep_hand_edits(repo, store.root, kept)
        else:   # the commit landed; the index may not have been brought in line with it
            history.sync_index(repo, tuple(intent.get("paths") or ()))
        _remove_temp_files(store)
        end(store)
        return restored


def ensure_recovered(store: StorePaths, timeout: float | None = None) -> bool:
    """For read-only commands: roll back an interrupted change before anything is shown.

    Costs one ``stat`` when there is no marker. Otherwise waits up to ``timeout`` seconds
    (default ``RECOVER_TIMEOUT``) for the store lock and calls ``recover``; if a live process
    finishes its change meanwhile, there is nothing to do. Returns True when no unfinished
    change is left. Never raises for a busy, read-only or broken store: it warns
    (``RecoveryWarning``, one line) that results may include an unfinished batch and returns
    False.
    """
    marker = _marker(store)
    if not marker.exists():
        return True
    from scene_engine.store.lock import LockBusyError, store_lock

    deadline = time.monotonic() + (RECOVER_TIMEOUT if timeout is None else timeout)
    while True:
        try:
            with store_lock(store.lock_path, timeout=0.1):
                if marker.exists():
                    recover(store, history.open_repo(store.root))
            return True
        except LockBusyError:
            if not marker.exists():
                return True           # the live change committed (or rolled back) meanwhile
            if time.monotonic() < deadline:
                continue
            why = "another scene-engine process holds the store"
        except Exception as exc:  # read-only store, git failure: show what is there, say so
            why = f"{type(exc).__name__}: {exc}".splitlines()[0]
        warnings.warn(f"an interrupted batch could not be rolled back ({why}); results may "
                      "include part of it", RecoveryWarning, stacklevel=2)
        return False


def _head(repo: Repo) -> str:
    """HEAD's commit id, "" before the first commit. A fresh ``git rev-parse``, not
    GitPython's long-lived helper process, which a Ctrl-C to the process group may have
    killed (``repo.head.is_valid()`` would then say False, and a marker be dropped)."""
    try:
        return repo.git.rev_parse("--verify", "--quiet", "HEAD")
    except history._git().GitCommandError as exc:
        if exc.status == 1:           # --verify --quiet: no such commit (an unborn branch)
            return ""
        raise


def _landed(repo: Repo, before: str, head: str) -> bool:
    """True when HEAD's move from ``before`` (the HEAD the change began at) is the change's
    own commit: the commit on HEAD's first-parent line whose parent is ``before`` is the
    engine's. A commit made beside the engine (a person's, in a terminal) makes the engine's
    ``update-ref`` fail (``history._commit_index``): HEAD moved, the change did not land, and
    it is rolled back on top of that commit. True when it cannot be told (the first commit,
    or ``before`` not among HEAD's last ``LANDED_DEPTH`` first parents: a reset), as
    before."""
    if not before or not head:
        return True
    out = repo.git.log("--first-parent", f"-{LANDED_DEPTH}", "--format=%ae%x01%P", head)
    for line in out.splitlines():
        email, _, parents = line.partition("\x01")
        if parents.split(" ")[0] == before:
            return email == history.ENGINE_EMAIL
    return True


LANDED_DEPTH = 100


def _roll_back(repo: Repo, root: Path, intent: dict, head: str) -> tuple[list[str], list[str]]:
    """Put the marker's paths back as HEAD has them, except a person's file edited since the
    interruption; return (paths put back, person's paths kept)."""
    planned = intent.get("planned")           # None: a marker from before planned hashes
    restored, kept = [], []
    for path in intent["paths"]:
        if not _inside(root, path):
            continue                          # not one the engine writes: never touch it
        blob = _head_blob(repo, path) if head else None
        if (planned is not None and _person_file(path)
                and _edited(root / path, planned.get(path, _UNKNOWN), blob)):
            kept.append(path)
            continue
        _restore(repo, root, path, blob)
        restored.append(path)
    return restored, kept


def _inside(root: Path, path: str) -> bool:
    parts = Path(path).parts
    return bool(parts) and not Path(path).is_absolute() and ".." not in parts and parts[0] != ".git"


def _person_file(path: str) -> bool:
    """Files a person may edit: ``persona.md`` and flat, not hidden ``scenes/*.md``."""
    parts = Path(path).parts
    return path == "persona.md" or (len(parts) == 2 and parts[0] == "scenes"
                                    and parts[1].lower().endswith(".md")
                                    and not parts[1].startswith("."))


def _edited(file: Path, planned, blob: str | None) -> bool:
    """True when ``file`` holds neither the planned text (sha256 or None for "deleted") nor
    HEAD's blob (git object id, or None when HEAD has no such file)."""
    if file.is_symlink() or file.is_dir():
        return True                           # not what the engine writes: someone's
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        return planned is not None and blob is not None
    if isinstance(planned, str) and _sha256(data) == planned:
        return False
    return blob is None or _git_blob_id(data, len(blob)) != blob


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git_blob_id(data: bytes, width: int) -> str:
    """Git's object id of a blob holding ``data`` (sha1, or sha256 in a sha256 repository)."""
    digest = hashlib.sha256() if width == 64 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data) + data)
    return digest.hexdigest()


def _head_blob(repo: Repo, path: str) -> str | None:
    """The object id of ``path`` in HEAD, or None when HEAD has no such file."""
    out = repo.git.ls_tree("HEAD", "--", path)
    return out.split()[2] if out else None


def _restore(repo: Repo, root: Path, path: str, blob: str | None) -> None:
    """Put ``path`` back as HEAD has it: checkout if tracked (``blob``), unlink if new."""
    if blob:
        repo.git.checkout("HEAD", "--", path)
    else:
        with contextlib.suppress(FileNotFoundError):
            (root / path).unlink()
        with contextlib.suppress(Exception):
            repo.git.rm("--cached", "--quiet", "--ignore-unmatch", "--", path)


def _keep_hand_edits(repo: Repo, root: Path, kept: list[str]) -> None:
    """Commit the person's files found after an interruption as a hand edit, and say so.
    Links and folders are left where they are, uncommitted (they are never scenes)."""
    if not kept:
        return
    files = tuple(p for p in kept if not (root / p).is_symlink() and not (root / p).is_dir())
    if files:
        names = ", ".join(Path(p).name for p in files)
        history.commit(repo, f"hand edit: {names} (kept after an interrupted batch)\n\n"
                             "Changed outside scene-engine after a batch was interrupted "
                             "before its commit; kept as it was found.\n", paths=files)
    for path in kept:
        warnings.warn(f"{path} was changed by hand after an interrupted batch: kept as you left "
                      "it and committed as a hand edit (it may still hold text of that batch, "
                      "whose memories are pending again)", RecoveryWarning, stacklevel=3)


def _remove_git_locks(git_dir: Path, shared: bool = False) -> None:
    """Unlink the lock files git takes during a commit (index, HEAD, refs, packed-refs) and
    the temporary indexes the engine commits through (``history.commit``).

    A lock some process holds open (``_held_open``: a git at work, in the store's own
    repository too) is never removed: the engine's commit then fails and the command refuses
    in one line. ``shared``: the repository also holds a person's files, whose own git (or an
    editor's git plugin) may be about to take one; then only locks older than
    ``STALE_LOCK_SECONDS`` go.
    """
    stale = [git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "packed-refs.lock"]
    stale += (git_dir / "refs").rglob("*.lock")
    stale = [p for p in stale if p.exists()]
    if stale:
        held = _held_open(stale)   # a live git (a commit in a terminal) has its lock open
        now = time.time()
        stale = [p for p in stale if p not in held
                 and (not shared or _age(p, now) > STALE_LOCK_SECONDS)]
    stale += git_dir.glob(f"{history.TEMP_INDEX}*")
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


STALE_LOCK_SECONDS = 120


def _held_open(paths: list[Path]) -> set[Path]:
    """Those of ``paths`` some process has open now (Linux: ``/proc/*/fd``): the lock of a git
    that is still at work, never to be removed. Elsewhere, or when ``/proc`` cannot be read,
    the empty set (the age rule alone decides)."""
    wanted = {str(p.resolve()): p for p in paths}
    held: set[Path] = set()
    proc = Path("/proc")
    if not proc.is_dir():
        return held
    for fd_dir in proc.glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target in wanted:
                        held.add(wanted[target])
        except OSError:          # another user's process, or gone meanwhile
            continue
    return held


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return 0.0


def _shared(repo: Repo) -> bool:
    """True when the store shares its repository with other files: it sits below the top of
    the work tree, or the top holds committed names that are not the store's."""
    if history.store_prefix(repo):
        return True
    try:
        names = repo.git.ls_tree("--name-only", "HEAD").splitlines()
    except history._git().GitCommandError:
        return False    # no commit yet
    return not set(names) <= {*history.STORE_PATHS, ".gitignore"}


def _remove_temp_files(store: StorePaths, only_marker: bool = False) -> None:
    """Unlink the hidden ``.NAME.*.tmp`` files the sandbox and ``atomic_write_text`` write
    before renaming; a crash can orphan them, and ``git add`` of ``memories/`` would commit
    one. Folders: scenes, memories, ``.scene-engine`` and those under it (ledgers, the
    marker's); at the root only persona temp files. ``only_marker``: just the marker's folder
    (no marker: nothing else was being written)."""
    folders = [(_marker(store).parent, ".")]
    if not only_marker:
        folders += [(store.scenes_dir, "."), (store.memories_dir, "."),
                    (store.root, ".persona.md.")]
    if store.meta_dir.is_dir() and not only_marker:
        folders += [(store.meta_dir, ".")]
        folders += [(d, ".") for d in store.meta_dir.rglob("*") if d.is_dir() and not d.is_symlink()]
    for folder, prefix in folders:
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        entry.unlink()
