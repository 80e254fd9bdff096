"""The MCP tools as plain functions over a store: what each does, checked, without the protocol.

Each function takes the store and the tool's arguments and returns JSON-ready data; bad
arguments raise ``ToolInputError`` (the server turns it into a tool error the agent reads).
Writes go through the same code as the command line (``engine.add_memories``, ``undo.undo``:
validation, the store lock, one commit each), so nothing here bypasses a rule.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scene_engine.core.errors import InputError
from scene_engine.store.store import Store

REMEMBER_WAIT = 2.0        # seconds remember waits for the store before using the inbox
_EPOCH = re.compile(r"\d{1,12}(\.\d+)?")


class ToolInputError(InputError):
    """A tool was called with arguments it cannot use; the message says which and why."""


def remember(store: Store, content: str, created_at: str | float | None = None,
             role: str | None = None, scope: str | None = None,
             metadata: dict[str, Any] | None = None, id: str | None = None,
             type: str | None = None) -> dict:
    """Add one memory, validated as ``scenes add`` validates it (``engine.add_memories``).

    Returns ``{"id", "added": bool, "pending": int}``; when nothing was added (``added``
    False: the id was known with this same memory, or the same memory, that is the same
    content at the same instant in the same scope, role and type, is kept under another id)
    also ``same_as`` (the id of the memory kept) and ``note`` saying which. When the store
    stays busy for ``REMEMBER_WAIT`` seconds the memory goes to the inbox instead (``{"id",
    "added": False, "queued": True, "note"}``: not in the journal yet): the server's ``inbox.InboxJoiner`` appends it
    as soon as the store is free. Raises ``ToolInputError`` for a memory ``scenes add`` would
    refuse, a known id sent with another memory included (the same message)."""
    from scene_engine.services.add import add_memories, check_waiting
    from scene_engine.store import inbox
    from scene_engine.store.lock import LockBusyError
    from scene_engine.store.memories import MemoryInputError, parse_input

    data = remember_record(content=content, created_at=created_at, role=role, scope=scope,
                           metadata=metadata, id=id, type=type)
    try:
        memory_id = parse_input(data, private=store.config.redactor())[0].id   # its id
        try:
            report = add_memories(store, data, lock_timeout=REMEMBER_WAIT)
        except LockBusyError:    # a batch holds the store (a slow model): keep it waiting
            check_waiting(store, data)
            inbox.put(store, data)
            return {"id": memory_id, "added": False, "queued": True,
                    "note": "the store is busy (a batch holds it): the memory is kept safe in "
                            "the inbox and joins the journal as soon as the store is free "
                            "(searchable then)"}
    except MemoryInputError as exc:
        raise ToolInputError(input_message(exc)) from None
    result = {"id": memory_id, "added": report.added == 1,
              "pending": store.load_state().pending}
    if report.same_as:
        kept = report.same_as[0][1]
        result["same_as"] = kept
        result["note"] = (f"nothing added: memory {kept!r} is this same memory (the same "
                          "content at the same instant, in the same scope, role and type)"
                          if kept != memory_id else
                          "nothing added: this id is already known with this same memory")
    return result


def remember_hosted(hosted: Any, store: str, content: str, created_at: str | float | None = None,
                    role: str | None = None, scope: str | None = None,
                    metadata: dict[str, Any] | None = None, id: str | None = None,
                    type: str | None = None) -> dict:
    """``remember`` for a hosted store (docs/DESIGN.md "Serving many stores"): the memory
    into the store's inbox (``hosted.remember``), validated as ``scenes add`` validates it.
    Returns ``{"id", "added": bool, "queued": True, "note"}``: searchable at once, folded
    by a worker. Raises ``InputError`` for a memory ``scenes add`` would refuse."""
    from scene_engine.store.memories import MemoryInputError

    try:
        said = hosted.remember(store, remember_record(
            content=content, created_at=created_at, role=role, scope=scope,
            metadata=metadata, id=id, type=type))
    except MemoryInputError as exc:
        raise ToolInputError(input_message(exc)) from None
    added = bool(said["added"])
    return {"id": said["ids"][0], "added": added, "queued": True,
            "note": "waiting to be folded by a worker; searchable now" if added else
            "nothing added: the store already knows this id with this same memory"}


def remember_record(**arguments: Any) -> bytes:
    """The one-line JSONL record ``remember``'s arguments make, as ``scenes add`` reads it:
    absent and None arguments left out, "now" fixed once (so the id worked out from it is
    the one the add gives), epoch seconds as a number even when sent as digits."""
    from datetime import UTC, datetime

    record = {key: value for key, value in arguments.items() if value is not None}
    when = record.get("created_at", datetime.now(UTC).isoformat())
    if isinstance(when, str) and _EPOCH.fullmatch(when.strip()):
        when = float(when)
    record["created_at"] = when
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def check_remember(arguments: dict[str, Any]) -> None:
    """Validate ``remember``'s raw arguments as ``scenes add`` validates a record, before the
    SDK's own type checks, so both faces give one set of messages. Raises
    ``ToolInputError``."""
    from scene_engine.store.memories import MemoryInputError, parse_input

    metadata = arguments.get("metadata")
    if isinstance(metadata, str):   # an object sent as its JSON text (the SDK reads it so too)
        try:
            parsed = json.loads(metadata)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            arguments = {**arguments, "metadata": parsed}
    try:
        parse_input(remember_record(**arguments))
    except MemoryInputError as exc:
        raise ToolInputError(input_message(exc)) from None


def input_message(exc) -> str:
    """A ``memories.MemoryInputError`` for one record, without the line number (an agent
    sent one memory, not a file)."""
    return str(exc).replace("line 1: ", "")


def recall(store: Store, query: str, budget: int = 4000, scope: str | None = None,
           persona: bool = False) -> dict:
    """``scenes recall --json``: ``{"text", "chars", "budget", "passages": [...], "empty",
    ...}`` (each passage with its source; ``note`` when no passage answers). ``scope``: only
    that scope's memories (and unscoped ones), no scenes; ``persona``: asked for (a persona
    left out for want of room is said in ``warning``). Raises ``InputError``
    (``services.recall``: an empty query, a budget outside its range), as the command line
    does."""
    from scene_engine.services.recall import recall as build

    return build(store, query, budget=budget, scope=scope, persona=persona).to_json()


def search(store: Store, query: str, k: int = 10, memories: bool = False,
           scope: str | None = None) -> dict:
    """``{"hits": [...]}``: the best ``k`` scenes for ``query``, or with ``memories`` (or a
    ``scope``) the best memories of the journal, each as ``scenes search --json`` gives it
    (``services.search``); with ``"warning"`` naming each journal line that could not be
    searched (file and line). Raises ``InputError`` as the command line does."""
    from scene_engine.services.search import search as find

    found = find(store, query, k, memories, scope)
    return {"hits": found.as_json()} | (
        {"warning": "; ".join(found.warnings)} if found.warnings else {})


def list_scenes(store: Store) -> dict:
    """``scenes list --json`` as ``{"scenes": [{"name", "heat", "updated", "summary"}]}``,
    hottest first, with ``"warning"`` naming each scene whose header cannot be read (the
    command line prints it on stderr; an agent would otherwise see heat 0 and no summary)."""
    import warnings

    from scene_engine.services.listing import scene_rows

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = scene_rows(store)
    said = [str(w.message) for w in caught]
    return {"scenes": rows, **({"warning": "; ".join(said)} if said else {})}


def read_scene(store: Store, name: str) -> str:
    """The scene file ``name`` (with or without ``.md``) as it is on disk. Raises
    ``InputError`` when no scene has that name (a path never names one)."""
    from scene_engine.services.listing import scene_text

    _need_text(name, "name")
    return scene_text(store, name, "list_scenes")


def status(store: Store) -> dict:
    """``scenes status --json``: pending, scenes, batches, memories, forgotten, persona."""
    from scene_engine.services.status import status as store_status

    return store_status(store)


def log(store: Store, limit: int = 20) -> list[dict]:
    """``scenes log --json``, newest first, at most ``limit`` entries."""
    from scene_engine.services.history import log as entries
    from scene_engine.services.search import check_number

    return entries(store, limit=check_number(limit, "limit", 1, 1000))


def undo(store: Store, batch: str | None = None, forget: bool = False,
         redo: bool = False) -> dict:
    """``scenes undo [BATCH] [--forget]``: revert one batch with a new commit
    (``services.undo.undo_batch``), or with ``redo`` do an undone one again. Unlike the
    command line's toggle, the tool does only what it was asked (``expect``): an agent that
    retries a call it thinks was lost must not turn its undo into a redo. Returns
    ``{"action", "batch", "commit", "memories", "fate", "pending", "persona_regenerated",
    "target"}``. Raises ``UndoError`` for a batch that cannot be undone (the reason), or is
    undone already (live already, with ``redo``)."""
    from scene_engine.services.undo import undo_batch

    return undo_batch(store, batch, forget=forget, expect="redo" if redo else "undo")


def check_recall(arguments: dict[str, Any]) -> None:
    """``recall``'s raw arguments, checked as ``scenes recall`` checks them (the services'
    words: an empty query, a budget that is not a whole number in range, a bool included;
    an empty scope) before the SDK's type checks. Raises ``InputError``."""
    from scene_engine.services.recall import MAX_BUDGET, MIN_BUDGET
    from scene_engine.services.search import check_number, check_query, check_scope

    check_query(arguments.get("query"))
    if "budget" in arguments:
        check_number(arguments["budget"], "budget", MIN_BUDGET, MAX_BUDGET)
    check_scope(arguments.get("scope"))
    if not isinstance(arguments.get("persona", False), bool):
        raise ToolInputError(f"persona must be true or false, not {arguments['persona']!r}")


def check_search(arguments: dict[str, Any]) -> None:
    """``search``'s raw arguments, checked as ``scenes search`` checks them (``k`` a whole
    number in range, ``memories`` true or false). Raises ``InputError``."""
    from scene_engine.services.search import (
        MAX_HITS,
        MIN_HITS,
        check_number,
        check_query,
        check_scope,
    )

    check_query(arguments.get("query"))
    if "k" in arguments:
        check_number(arguments["k"], "k", MIN_HITS, MAX_HITS)
    if not isinstance(arguments.get("memories", False), bool):
        raise ToolInputError(f"memories must be true or false, not {arguments['memories']!r}")
    check_scope(arguments.get("scope"))


def check_read_scene(arguments: dict[str, Any]) -> None:
    """``read_scene``'s name must be non-empty text. Raises ``ToolInputError``."""
    _need_text(arguments.get("name"), "name")


def check_log(arguments: dict[str, Any]) -> None:
    """``log``'s ``limit`` a whole number from 1 to 1000. Raises ``InputError``."""
    from scene_engine.services.search import check_number

    if "limit" in arguments:
        check_number(arguments["limit"], "limit", 1, 1000)


def check_undo(arguments: dict[str, Any]) -> None:
    """``undo``'s ``batch`` a batch number or commit text, ``forget`` true or false. Raises
    ``ToolInputError``."""
    batch = arguments.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int | str)
                              or (isinstance(batch, str) and not batch.strip())):
        raise ToolInputError(f"batch must be a batch number or a commit, not {batch!r}")
    if not isinstance(arguments.get("forget", False), bool):
        raise ToolInputError(f"forget must be true or false, not {arguments['forget']!r}")


def _need_text(value: Any, name: str) -> None:
    if value is None:
        raise ToolInputError(f"{name} is missing: it must be non-empty text")
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be text, not {value!r}")
    if not value.strip():
        raise ToolInputError(f"{name} must be non-empty text")
