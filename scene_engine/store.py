"""A store on disk: layout, `scenes init`, opening, settings and the state checkpoint.

Layout (DESIGN.md "A store on disk"): ``scenes/`` (L2), ``persona.md`` (L3), ``memories/`` (L1
journal), ``.scene-engine/`` with ``config.toml`` and ``state.json`` (in git) and the derived
``index.sqlite`` and ``lock`` (ignored by git).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from .config import Config, load_config, render_config
from .fsutil import atomic_write_text
from .layout import (  # noqa: F401  (the store's errors are imported from here too)
    FORMAT_VERSION,
    META_DIR,
    NotAStoreError,
    StoreError,
    StorePaths,
    StoreVersionError,
    check_format,
    find_root,
)

GITIGNORE = f"""# derived or machine-local: rebuilt from the files
/{META_DIR}/index.sqlite*
/{META_DIR}/lock*
/{META_DIR}/*.tmp
/{META_DIR}/run/
/{META_DIR}/inbox/
"""


class State(BaseModel):
    """The checkpoint in ``state.json``, committed with the scenes it describes.

    ``cursor``: sequence number of the first memory never taken by a batch (memories are
    numbered 0, 1, ... in the journal; the cursor only moves forward). ``next_seq``: number the
    next added memory gets. ``batch``: number of the last batch made (never reused).
    ``requeued``: memories pending again after an undo, taken before new ones. ``forgotten``:
    memories an undo --forget dropped. ``since_persona``: memories folded since the persona was
    last written.
    """

    format: int = FORMAT_VERSION
    cursor: int = Field(0, ge=0)
    next_seq: int = Field(0, ge=0)
    batch: int = Field(0, ge=0)
    requeued: list[int] = Field(default_factory=list)
    forgotten: list[int] = Field(default_factory=list)
    since_persona: int = Field(0, ge=0)

    @property
    def pending(self) -> int:
        """Memories waiting for a batch."""
        return max(0, self.next_seq - self.cursor) + len(self.requeued)


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
    """The JSON text of ``state`` as stored (sorted keys, one per line, for readable diffs)."""
    return json.dumps(state.model_dump(), indent=2, sort_keys=True) + "\n"


def read_state(path: Path) -> State:
    """Parse and check a state file. Raises ``NotAStoreError`` (no file),
    ``StoreVersionError`` (a newer format, checked first) and ``StoreError`` (not valid)."""
    raw = check_format(path)
    try:
        return State(**raw)
    except ValidationError as exc:
        raise StoreError(f"{path}: invalid state: {exc.errors()[0]['msg']} "
                         f"at {exc.errors()[0]['loc']}") from exc


def init_store(root: Path) -> Store:
    """Make a new store at ``root`` (created if missing) with an initial git commit.

    Raises ``StoreError`` if ``root`` already holds a store or is a non-empty folder that
    is not one (so nobody's files are adopted by surprise).
    """
    from . import history

    root = Path(root)
    if (root / META_DIR / "state.json").exists():
        raise StoreError(f"{root} is already a scene store")
    if root.exists() and any(p.name != ".git" for p in root.iterdir()):
        raise StoreError(f"{root} exists and is not empty; choose a new or empty folder")
    for folder in (root / "scenes", root / "memories", root / META_DIR):
        folder.mkdir(parents=True, exist_ok=True)
    (root / "scenes" / ".gitkeep").touch()
    (root / "memories" / ".gitkeep").touch()
    atomic_write_text(root / ".gitignore", GITIGNORE)
    store = Store(root=root.resolve(), config=Config())
    atomic_write_text(store.config_path, render_config(store.config))
    store.save_state(State())
    repo = history.init_repo(root)
    history.commit(repo, "init: new scene store",
                   paths=history.TRACKED + ("scenes/.gitkeep", "memories/.gitkeep"))
    return store


def open_store(root: Path | None = None) -> Store:
    """Open the store at ``root`` (default ``$SCENE_ENGINE_DIR``, then the current folder or
    the nearest folder above it that is a store).

    Raises ``NotAStoreError`` (exit 2) if there is none, ``StoreVersionError`` for a newer
    format, ``StoreError`` for a broken state file, ``ConfigError`` for bad settings.
    """
    root = find_root(root)
    read_state(root / META_DIR / "state.json")  # refuses a newer format before anything else
    return Store(root=root.resolve(), config=load_config(root / META_DIR / "config.toml"))
