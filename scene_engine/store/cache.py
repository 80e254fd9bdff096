"""Derived facts a write unit keeps for the next one, so a batch reads what it touches, not
the whole journal or history (docs/DESIGN.md "A store on disk", ``.scene-engine/cache/``).

Each file under ``.scene-engine/cache/`` holds facts derived from something git names by
its content (a blob's sha, a commit's sha): the same name always means the same facts, so a
fact can never go stale, only unused. The folder has its own ``.gitignore`` (``*``): never
committed, in an old store too. Deleting it costs one full read the next time, nothing
else. Steps:

 1. ``load(root, name)``: the JSON object kept under that name, {} when there is none or it
    cannot be read (torn, another shape, a folder that cannot be read);
 2. ``save(root, name, data)``: written atomically beside it; a store that cannot be written
    (read-only, full disk) just keeps no cache.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from scene_engine.core.fs import atomic_write_text
from scene_engine.store.layout import META_DIR

FOLDER = "cache"


def folder(root: Path) -> Path:
    """``.scene-engine/cache/`` of the store at ``root``."""
    return Path(root) / META_DIR / FOLDER


def load(root: Path, name: str) -> dict[str, Any]:
    """The object saved under ``name`` (a file name such as ``segments.json``), or {}."""
    try:
        data = json.loads((folder(root) / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(root: Path, name: str, data: dict[str, Any]) -> None:
    """Keep ``data`` (JSON-able) under ``name``; any failure to write is ignored (the cache
    only saves time)."""
    place = folder(root)
    with contextlib.suppress(OSError):
        place.mkdir(parents=True, exist_ok=True)
        if not (place / ".gitignore").exists():
            atomic_write_text(place / ".gitignore", "*\n")
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A person's line of a file that is not UTF-8 (read with surrogate escapes):
            # escaped in the JSON, so it reads back as the same string.
            text = json.dumps(data, separators=(",", ":"))
        atomic_write_text(place / name, text)
