"""``scenes recall``, the MCP ``recall`` tool and the quick door's recall: one set of rules
over ``recall.assemble`` (docs/DESIGN.md "Index and watcher", recall).

A query with nothing to look for is a usage error; the budget is a whole number of
characters within ``MIN_BUDGET..MAX_BUDGET``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scene_engine.core.checks import MAX_BUDGET, MIN_BUDGET  # noqa: F401  (faces import them here)
from scene_engine.core.errors import InputError
from scene_engine.services.search import check_number, check_query, check_scope

if TYPE_CHECKING:
    from scene_engine.recall.assemble import Recall
    from scene_engine.store.store import Store

RECALL_BUDGET = 4000     # characters by default


def recall(store: Store | Path | None, query: str, budget: int = RECALL_BUDGET,
           scope: str | None = None, persona: bool = False) -> Recall:
    """What an agent puts in its context for ``query`` (``recall.assemble.recall``: persona,
    scene map, the best passages, each with its source; with ``scope`` only that scope's
    memories and unscoped ones, no scenes; ``persona``: the caller asks for the persona, so a
    persona left out for want of room is always said). ``store``: an open store, or its folder (None:
    as ``open_store`` finds it; an interrupted batch is rolled back first). Raises
    ``InputError`` for an empty query or a budget out of range, ``StoreError``,
    ``ConfigError`` and ``OSError``."""
    from scene_engine.recall.assemble import recall as assemble
    from scene_engine.store.store import Store, open_store

    check_query(query)
    check_number(budget, "budget", MIN_BUDGET, MAX_BUDGET)
    check_scope(scope)
    opened = store if isinstance(store, Store) else open_store(store)
    if not isinstance(persona, bool):
        raise InputError(f"persona must be true or false, not {persona!r}")
    return assemble(opened, query, budget=budget, scope=scope, persona=persona)
