"""Where a store's files are: the layout, finding a store, its format version, its errors.

Standard library only, so a command that only reads (a search, started as a new process for
every question an agent asks) can find the store without reading its state and settings.
``store.Store`` adds those (checked in plain Python; pydantic only for a value it must judge,
``store.schemas``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from scene_engine.core.errors import SceneEngineError

# 2: journal records may carry title, sources, relations, status and extractor_version
# (memories extracted from conversations); a format-1 store is upgraded by its first write.
FORMAT_VERSION = 2
META_DIR = ".scene-engine"


class StoreError(SceneEngineError):
    """A store cannot be used as asked. ``exit_code`` is 2 for bad usage, 1 otherwise."""

    exit_code = 1


class NotAStoreError(StoreError):
    """The folder is not a scene store (no ``.scene-engine/state.json``). ``what``: the
    fault alone, without the way forward the message ends with (``todo``), for a face that
    says its own (an agent's hook has no ``--dir``)."""

    exit_code = 2

    def __init__(self, what: str, todo: str = "") -> None:
        super().__init__(f"{what}; {todo}" if todo else what)
        self.what = what


class StoreVersionError(StoreError):
    """The store was written by a newer engine; the message names both format versions."""

    exit_code = 2


@dataclass(frozen=True)
class StorePaths:
    """The paths of the store at ``root`` (an absolute folder), docs/DESIGN.md "A store on disk"."""

    root: Path

    @property
    def scenes_dir(self) -> Path:
        """``ROOT/scenes``: the scene files (L2)."""
        return self.root / "scenes"

    @property
    def persona_path(self) -> Path:
        """``ROOT/persona.md`` (L3)."""
        return self.root / "persona.md"

    @property
    def memories_dir(self) -> Path:
        """``ROOT/memories``: the memory journal (L1)."""
        return self.root / "memories"

    @property
    def meta_dir(self) -> Path:
        """``ROOT/.scene-engine``."""
        return self.root / META_DIR

    @property
    def state_path(self) -> Path:
        """The checkpoint ``state.json``."""
        return self.meta_dir / "state.json"

    @property
    def config_path(self) -> Path:
        """The settings ``config.toml``."""
        return self.meta_dir / "config.toml"

    @property
    def index_path(self) -> Path:
        """The derived search index ``index.sqlite``."""
        return self.meta_dir / "index.sqlite"

    @property
    def lock_path(self) -> Path:
        """The cross-process lock file."""
        return self.meta_dir / "lock"

    def scene_names(self) -> list[str]:
        """Names of the scene files (``*.md``, not hidden), sorted."""
        if not self.scenes_dir.is_dir():
            return []
        return sorted(
            entry.name
            for entry in os.scandir(self.scenes_dir)
            if entry.name.lower().endswith(".md")
            and not entry.name.startswith(".")
            and entry.is_file(follow_symlinks=False)
            and is_utf8_name(entry.name)
        )


def is_utf8_name(name: str) -> bool:
    """False for a file name that is not UTF-8 (Python hands it over with surrogates; no
    git path, database or Markdown link holds it): ``doctor`` names it, the rest skip it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_root(root: Path | None = None) -> Path:
    """The folder of the store meant by ``root``: ``root`` itself, else ``$SCENE_ENGINE_DIR``,
    else the current folder or the nearest folder above it that is a store (like git).

    A store made with ``scenes init --prefix P`` lives in ``FOLDER/P``; naming ``FOLDER`` (or,
    from the current folder, any folder inside ``FOLDER``) finds it too (``prefixed_store``).
    Raises ``NotAStoreError`` (exit 2) when no store is meant.
    """
    if root is not None and (not isinstance(root, str | os.PathLike) or not os.fspath(root)
                             or (isinstance(root, str) and not root.strip())):
        raise NotAStoreError(f"a store is named by its folder (a path or text), not {root!r}")
    named = "given" if root is not None else ""
    if root is None and os.environ.get("SCENE_ENGINE_DIR"):
        root = Path(os.environ["SCENE_ENGINE_DIR"])
        named = "SCENE_ENGINE_DIR"
    if root is None:
        here = Path.cwd()
        found = next((p for p in (here, *here.parents) if _is_store(p)), None)
        if found is None:   # a prefixed store: its folder is in the same git work tree
            top = next((p for p in (here, *here.parents) if _exists(p / ".git")), None)
            for p in (here, *here.parents) if top is not None else ():
                found = prefixed_store(p)
                if found is not None or p == top:
                    break
        root = found or here
    root = Path(root)
    if not _is_store(root):
        root = prefixed_store(root) or root
    if not _is_store(root):
        raise NotAStoreError(*_not_a_store(root, named))
    return root


def _not_a_store(root: Path, named: str) -> tuple[str, str]:
    """(Why ``root`` is no store, what to do) for the way it was named (``named``: "given"
    as an argument or ``--dir``, ``SCENE_ENGINE_DIR``, "" found from the current folder)."""
    where = {"SCENE_ENGINE_DIR": " (from SCENE_ENGINE_DIR)"}.get(named, "")
    what = ("does not exist" if not _exists(root)
            else f"is not a scene store (no {META_DIR}/state.json)")
    todo = ("make one with `scenes init DIR`, or name the store's folder with --dir"
            if not named else "check the folder named (--dir or DIR), or make a store there "
            "with `scenes init DIR`")
    if named == "SCENE_ENGINE_DIR":
        todo += " (or unset SCENE_ENGINE_DIR)"
    return f"{root}{where} {what}", todo


MAX_PREFIX_DEPTH = 3   # folders in a ``--prefix`` (``memory/``, ``notes/agent/memory/``)


def _is_store(folder: Path) -> bool:
    """True when ``folder`` holds a store; a folder that cannot be read holds none (the
    lookup scans folders it was not asked about: ``/proc``, another user's home)."""
    try:
        return (folder / META_DIR / "state.json").is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def prefixed_store(folder: Path) -> Path | None:
    """The store that ``scenes init FOLDER --prefix P`` made inside ``folder``, or None.

    A store below ``folder`` (at most ``MAX_PREFIX_DEPTH`` folders down, hidden folders
    skipped) counts only if its ``config.toml`` records exactly that path as its ``prefix``,
    so a store that merely sits in a subfolder is not adopted. The nearest one wins.
    """
    level = [Path(folder)]
    for _ in range(MAX_PREFIX_DEPTH):
        below = []
        for parent in level:
            try:
                entries = sorted(os.scandir(parent), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:   # unreadable: not a store, and nothing to scan below it
                    continue
                candidate = Path(entry.path)
                if _is_store(candidate) and _recorded_prefix(candidate) == \
                        candidate.relative_to(folder).as_posix() + "/":
                    return candidate
                below.append(candidate)
        level = below
    return None


def _recorded_prefix(store_root: Path) -> str:
    """The ``prefix`` in the store's ``config.toml`` ("" if none or unreadable)."""
    import tomllib

    try:
        raw = tomllib.loads((store_root / META_DIR / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    value = raw.get("prefix", "")
    return value if isinstance(value, str) else ""


# What git leaves in its folder while a person's merge, rebase, cherry-pick or revert is under
# way (``history.IN_PROGRESS`` refuses every commit then), and what finishes each.
_GIT_IN_PROGRESS = (
    ("MERGE_HEAD", "merge", "`git add` the conflicted files as they are, then `git commit`"),
    ("rebase-merge", "rebase", "`git rebase --continue`"),
    ("rebase-apply", "rebase", "`git rebase --continue`"),
    ("CHERRY_PICK_HEAD", "cherry-pick", "`git cherry-pick --continue`"),
    ("REVERT_HEAD", "revert", "`git revert --continue`"),
)


def _git_dir(root: Path) -> Path | None:
    """The git folder of the repository ``root`` is in (a worktree's own), or None."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        try:
            if dot.is_dir():
                return dot
            if dot.is_file():
                text = dot.read_text(encoding="utf-8").strip()
                if text.startswith("gitdir:"):
                    found = Path(text.removeprefix("gitdir:").strip())
                    return found if found.is_absolute() else folder / found
        except OSError:
            return None
    return None


def git_in_progress(root: Path) -> tuple[str, str] | None:
    """(what, how to finish it) for a git merge, rebase, cherry-pick or revert under way in
    the repository of the store at ``root``, or None."""
    git_dir = _git_dir(Path(root).absolute())
    if git_dir is None:
        return None
    for marker, what, finish in _GIT_IN_PROGRESS:
        try:
            if (git_dir / marker).exists():
                return what, finish
        except OSError:
            continue
    return None


def repair_advice(root: Path, does: str = "numbers the journal anew") -> str:
    """"`scenes repair` DOES", or, while a git merge (rebase, ...) is under way, which repair
    refuses, the step before it: finish the merge (commit it), then repair."""
    busy = git_in_progress(root)
    if busy is None:
        return f"`scenes repair` {does}"
    what, finish = busy
    return (f"finish the git {what} in progress first ({finish}; `scenes repair` refuses "
            f"to run in the middle of it), then `scenes repair` {does}")


def repair_order(root: Path, messages: list[str]) -> list[str]:
    """``messages`` and, when one of them sends the person to ``scenes repair`` while a git
    merge (rebase, ...) is under way, one more saying to finish that first: repair refuses
    to run in the middle of it."""
    busy = git_in_progress(root)
    if busy is None or not any("`scenes repair`" in m and "finish the git" not in m
                               for m in messages):
        return messages
    what, finish = busy
    return [*messages, f"git: a {what} is in progress; finish it first ({finish}), then "
                       f"`scenes repair` (it refuses to run in the middle of the {what})"]


class StateUnreadable(StoreError):
    """``state.json`` is not a JSON object (torn, or edited by hand); the message says how to
    bring the committed one back."""


# A line git writes into a file both sides of a merge changed.
_MARKER = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?: |$)", re.MULTILINE)


def state_problem(path: Path, what: str, text: str = "") -> str:
    """The message for a state file at ``path`` that is ``what`` ("not valid JSON: ..."):
    holding git's conflict markers (``text``), ``scenes repair`` takes both sides; else it is
    in git, so the last committed version can come back."""
    if _MARKER.search(text):
        return (f"{path} holds git conflict markers left by a merge of two copies of this "
                "store; " + repair_advice(path.parent.parent,
                                          "numbers the journal anew and takes both sides"))
    return (f"{path}: {what}; it is in git: `git checkout -- {path}` brings back the last "
            "committed version (then `scenes doctor`)")


def check_format(path: Path, strict: bool = True) -> dict:
    """The JSON object in the state file at ``path``, refused if a newer engine wrote it.

    Raises ``NotAStoreError`` (no file), ``StateUnreadable`` (not a JSON object) and
    ``StoreVersionError`` (a newer format) before anything else is read. With ``strict``
    False (a command that only reads the scenes, the journal and the index), an unreadable
    state is a warning and {} comes back: the files still answer."""
    text = ""
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text)
        problem = "" if isinstance(raw, dict) else "expected a JSON object"
    except FileNotFoundError as exc:
        raise NotAStoreError(f"{path.parent.parent} is not a scene store "
                             f"(no {META_DIR}/state.json)",
                             "make one with `scenes init DIR`") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"not valid JSON ({exc})"
    if problem and strict:
        raise StateUnreadable(state_problem(path, problem, text))
    if problem:
        import warnings

        warnings.warn(state_problem(path, problem, text), stacklevel=2)
        return {}
    found = raw.get("format")
    if isinstance(found, int) and found > FORMAT_VERSION:
        raise StoreVersionError(
            f"{path.parent.parent} has store format {found}, but this scene-engine reads format "
            f"{FORMAT_VERSION} and older; upgrade scene-engine to open it")
    return raw


def locate(root: Path | None = None) -> StorePaths:
    """The paths of the store meant by ``root`` (see ``find_root``), its format checked
    (``check_format``): enough for a command that only reads the scenes and the index."""
    root = find_root(root)
    check_format(root / META_DIR / "state.json", strict=False)
    return StorePaths(root.resolve())
