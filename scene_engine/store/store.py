"""A store on disk: layout, `scenes init`, opening, settings and the state checkpoint.

Layout (docs/DESIGN.md "A store on disk"): ``scenes/`` (L2), ``persona.md`` (L3), ``memories/`` (L1
journal), ``.scene-engine/`` with ``config.toml`` and ``state.json`` (in git) and the derived
``index.sqlite`` and ``lock`` (ignored by git).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scene_engine.core.fs import atomic_write_text
from scene_engine.store.config import Config, PlainRecord, load_config, render_config
from scene_engine.store.layout import (
    FORMAT_VERSION,
    META_DIR,
    StoreError,
    StorePaths,
    check_format,
    find_root,
)

# ``.scene-engine/.gitignore``: kept in the store's own folder, so a store in a person's
# repository changes none of their files, and a `git add -A` of theirs leaves these out too.
GITIGNORE = """# derived or machine-local: rebuilt from the files
/index.sqlite*
/vectors.sqlite*
/lock*
/*.tmp
/run/
/inbox/
/transcripts/
"""


# One file of each kind the store commits, as paths under its root (for ignore-rule checks).
STORE_FILES = (f"{META_DIR}/state.json", f"{META_DIR}/config.toml", "memories/00000.jsonl",
               "scenes/a-scene.md", "persona.md", f"{META_DIR}/ledger/000001.json")


@dataclass(init=False)
class State(PlainRecord):
    """The checkpoint in ``state.json``, committed with the scenes it describes.

    ``cursor``: sequence number of the first memory never taken by a batch (memories are
    numbered 0, 1, ... in the journal; the cursor only moves forward). ``next_seq``: number the
    next added memory gets. ``batch``: number of the last batch made (never reused).
    ``requeued``: memories pending again after an undo, taken before new ones. ``forgotten``:
    memories an undo --forget dropped. ``since_persona``: memories folded since the persona was
    last written.

    ``State(**values)`` checks them as ``Config`` does its values: whole numbers (the counters
    not below 0) and lists of them in plain Python, anything else by the pydantic schema
    ``schemas.State`` (which converts or refuses it, and leaves out keys it does not know, as
    before). ``model_dump()`` and ``model_copy(update=...)`` are as pydantic's.
    """

    format: int = FORMAT_VERSION
    cursor: int = 0
    next_seq: int = 0
    batch: int = 0
    requeued: list[int] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)
    since_persona: int = 0

    def __init__(self, **values: Any) -> None:
        checked = _checked_state(values)
        if checked is None:          # pydantic converts it or refuses it, in its words
            from scene_engine.store import schemas

            checked = schemas.State(**values).model_dump()
        for name in _STATE_FIELDS:
            setattr(self, name, checked[name] if name in checked else
                    [] if name in _STATE_LISTS else getattr(State, name))

    @property
    def pending(self) -> int:
        """Memories waiting for a batch."""
        return max(0, self.next_seq - self.cursor) + len(self.requeued)


_STATE_FIELDS = tuple(f.name for f in fields(State))
_STATE_LISTS = ("requeued", "forgotten")


def _checked_state(values: dict[str, Any]) -> dict[str, Any] | None:
    """``values`` when each is a whole number (a counter not below 0) or a list of them, as
    its field takes; None when pydantic must decide (another type, a negative counter, a
    key no field has)."""
    for name, value in values.items():
        if name in _STATE_LISTS:
            if type(value) is not list or any(type(n) is not int for n in value):
                return None
        elif name in _STATE_FIELDS:
            if type(value) is not int or (name != "format" and value < 0):
                return None
        else:
            return None
    return {name: list(value) if name in _STATE_LISTS else value
            for name, value in values.items()}


@dataclass(frozen=True)
class Store(StorePaths):
    """An opened store: its paths (``StorePaths``) and ``config``, read once at open."""

    config: Config

    def load_state(self) -> State:
        """Read ``state.json``; raises ``StoreError`` if it is unreadable or invalid."""
        return read_state(self.state_path)

    def save_state(self, state: State) -> None:
        """Write ``state.json`` atomically (temp file + rename)."""
        atomic_write_text(self.state_path, render_state(state))


def render_state(state: State) -> str:
    """The JSON text of ``state`` as stored (sorted keys, one per line, for readable diffs).

    Always this engine's ``FORMAT_VERSION``: the first write to an older store upgrades it
    (its journal records stay as they are; every field format 2 added is optional), and from
    then on an older engine refuses it (``layout.check_format``)."""
    data = state.model_dump()
    data["format"] = max(data["format"], FORMAT_VERSION)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def read_state(path: Path) -> State:
    """Parse and check a state file. Raises ``NotAStoreError`` (no file),
    ``StoreVersionError`` (a newer format, checked first) and ``StoreError`` (not valid)."""
    raw = check_format(path)
    try:
        return State(**raw)             # checked once; pydantic loaded only if it refuses
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        raise StoreError(f"{path}: invalid state: {exc.errors()[0]['msg']} "
                         f"at {exc.errors()[0]['loc']}") from exc


class InitRefused(StoreError):
    """``scenes init`` was asked for something it will not do; nothing was written (exit 2)."""

    exit_code = 2


# The store's own names in its folder; anything else there belongs to the person.
OWN_NAMES = ("scenes", "persona.md", "memories", META_DIR)


def init_store(folder: Path, prefix: str = "", own_repo: bool = False) -> Store:
    """Make a new store in ``folder`` (created if missing; empty or not) with a first commit.

    Arguments: ``folder``, the folder to use (a notes folder, an Obsidian vault, a repository's
    work tree or a new folder); ``prefix``, a relative path inside it for the store's own
    paths (``"memory/"``; "" = at the folder's root), recorded in the config so commands find
    the store from ``folder`` and any folder inside it; ``own_repo``, always ``git init`` at
    ``folder`` even inside another repository (the demo, which must not commit into the
    repository it happens to be run from).

    Only the store's own paths (``OWN_NAMES`` under the prefix) are written. If ``folder`` (or
    a folder above it) is a git work tree, that repository is used and the first commit holds
    only the store's paths, made through a temporary index so whatever the person has staged
    or changed stays as it was; otherwise ``git init`` makes one at ``folder``.

    Returns the opened ``Store``. Raises ``InitRefused`` (exit 2) when ``folder`` is a file,
    the prefix is absolute, leaves the folder or is too deep, a store already exists there
    (or the folder is inside one), one of the store's names is already taken by the person's
    files, or the repository's ``.gitignore`` ignores the store's place; ``HistoryError`` if
    git fails, the repository is bare or a merge or rebase of the person's is in progress
    (nothing is written then).
    """
    from scene_engine.store import history
    from scene_engine.store.layout import MAX_PREFIX_DEPTH, prefixed_store

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InitRefused(f"{folder} is a file, not a folder")
    parts = clean_prefix(prefix)
    if len(parts) > MAX_PREFIX_DEPTH:
        raise InitRefused(f"--prefix {prefix!r} is more than {MAX_PREFIX_DEPTH} folders deep")
    root = folder.joinpath(*parts)
    for step in (folder.joinpath(*parts[:i + 1]) for i in range(len(parts))):
        if step.is_symlink() or (step.exists() and not step.is_dir()):
            raise InitRefused(f"{step} is not a folder; choose another --prefix")
    for existing in (root, folder, prefixed_store(folder) if folder.is_dir() else None):
        if existing is not None and (existing / META_DIR / "state.json").exists():
            raise InitRefused(f"{existing} is already a scene store")
    outer = next((p for p in root.absolute().parents if (p / META_DIR / "state.json").exists()),
                 None)
    if outer is not None:
        raise InitRefused(f"{root} is inside the scene store {outer}; choose a folder outside it")
    taken = [name for name in OWN_NAMES if os.path.lexists(root / name)]
    if taken:
        hint = "; choose another folder" + ("" if parts else " or a --prefix such as memory/")
        raise InitRefused(f"{root / taken[0]} already exists and is not a scene store's{hint}")
    repo = None if own_repo else history.find_repo(folder)
    if repo is not None:
        history.ensure_committable(repo)   # before anything is written
        # Every kind of file the store commits (a rule such as "*.jsonl" or "*.md" may
        # leave out one kind only, and the journal would silently never reach git).
        ignored = next(filter(None, (history.ignored_path(repo, root.absolute() / part)
                                     for part in STORE_FILES)), "")
        if ignored:
            raise InitRefused(f"the repository ignores {ignored} (a .gitignore), so the store "
                              "could not be committed; choose another folder or --prefix")
    for sub in (root / "scenes", root / "memories", root / META_DIR):
        sub.mkdir(parents=True, exist_ok=True)
    (root / "scenes" / ".gitkeep").touch()
    (root / "memories" / ".gitkeep").touch()
    atomic_write_text(root / META_DIR / ".gitignore", GITIGNORE)
    vault = in_vault(root)
    store = Store(root=root.resolve(),
                  config=Config(prefix="/".join(parts) + "/" if parts else "",
                                wiki_links=vault, header_times="obsidian" if vault else "iso"))
    atomic_write_text(store.config_path, render_config(store.config))
    store.save_state(State())
    if repo is None:
        history.init_repo(folder).close()
    repo = history.open_repo(root, new=True)
    try:
        history.commit(repo, "init: new scene store",
                       paths=("scenes/.gitkeep", "memories/.gitkeep", f"{META_DIR}/.gitignore",
                              f"{META_DIR}/config.toml", f"{META_DIR}/state.json"))
    finally:
        repo.close()
    return store


def in_vault(folder: Path) -> bool:
    """True when ``folder`` or a folder above it holds ``.obsidian/``: an Obsidian vault, whose
    person expects wiki-links and Obsidian's date-time properties (``Config``)."""
    here = Path(folder).absolute()
    return any((p / ".obsidian").is_dir() for p in (here, *here.parents))


def clean_prefix(prefix: str) -> list[str]:
    """The folders of ``--prefix`` (``"memory/"`` -> ``["memory"]``; "" -> []). Raises
    ``InitRefused`` for an absolute path, ``..``, a hidden folder or a control character."""
    text = (prefix or "").replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise InitRefused(f"--prefix {prefix!r} must be a relative path inside the folder")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    for part in parts:
        if part == ".." or part.startswith(".") or any(ord(c) < 32 for c in part):
            raise InitRefused(f"--prefix {prefix!r} must stay inside the folder "
                              "(no '..', no hidden folders)")
        if part != part.strip() or part.endswith("."):   # breaks Windows and cloud sync
            raise InitRefused(f"--prefix {prefix!r}: a folder name may not start or end with "
                              "a space or end with a dot")
    return parts


def open_store(root: Path | None = None) -> Store:
    """Open the store at ``root`` (default ``$SCENE_ENGINE_DIR``, then the current folder or
    the nearest folder above it that is a store).

    Raises ``NotAStoreError`` (exit 2) if there is none, ``StoreVersionError`` for a newer
    format, ``ConfigError`` for bad settings. A state file that cannot be read is a warning
    here (the scenes, the journal and the index still answer a read) and a
    ``StateUnreadable`` error at the first ``load_state`` (every write, ``status``).
    """
    root = find_root(root)
    check_format(root / META_DIR / "state.json", strict=False)   # a newer format: refused
    return Store(root=root.resolve(), config=load_config(root / META_DIR / "config.toml"))
