"""Memories that cannot wait for the store: kept safe until the batch in progress ends.

A batch holds the store lock for as long as its model takes, minutes with a slow one. An agent
that remembers something meanwhile must neither wait that long nor lose the memory when the
wait runs out. ``put`` writes the memory, validated as ``scenes add`` validates it (its time
and id fixed now), to ``.scene-engine/inbox/``: one file each, temp-file-then-rename and
fsynced, so once ``put`` returns the memory survives a crash. ``InboxJoiner`` (run by ``scenes
mcp`` and ``scenes watch --fold``) appends the waiting files to the journal as soon as the store
is free, and any add, run or background fold that holds the lock does it first too
(``engine.add_memories``): in arrival order, each as its own commit, then removes them. Until
then the memory is not searchable; ``status`` counts it as queued. The inbox is not in git (it
is a waiting room; the journal is the record).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from pathlib import Path

from scene_engine.core.fs import atomic_write_text
from scene_engine.store.memories import parse_input
from scene_engine.store.store import META_DIR, Store

FOLDER = "inbox"
log = logging.getLogger(__name__)


def folder(store: Store) -> Path:
    """``.scene-engine/inbox/`` of ``store``."""
    return store.root / META_DIR / FOLDER


def put(store: Store, data: bytes) -> list[str]:
    """Validate ``data`` (a JSON list or JSONL of memories, as for ``scenes add``) and keep
    it in the inbox. Returns the memories' ids. Raises ``memories.MemoryInputError`` (nothing
    kept) or ``OSError``."""
    memories = parse_input(data, private=store.config.redactor())
    records = []
    for memory in memories:     # time and id as parsed now, not when the file is drained
        record = memory.to_record()
        record.pop("seq", None)
        record.pop("aliases", None)
        records.append(json.dumps(record, ensure_ascii=False))
    place = folder(store)
    place.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
    atomic_write_text(place / name, "\n".join(records) + "\n")
    return [m.id for m in memories]


def waiting(store: Store) -> list[Path]:
    """The inbox files, oldest first (their names start with the time they came)."""
    try:
        return sorted(p for p in folder(store).iterdir()
                      if p.suffix == ".jsonl" and not p.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


def queued(store: Store) -> int:
    """How many memories wait in the inbox (unreadable files count as none)."""
    count = 0
    for path in waiting(store):
        try:
            count += sum(1 for line in path.read_text("utf-8").split("\n") if line.strip())
        except (OSError, UnicodeDecodeError):
            continue
    return count


