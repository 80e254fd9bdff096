"""``scenes search``, the MCP ``search`` tool and the quick door's search: one set of rules
(docs/DESIGN.md "Index and watcher").

A query with nothing to look for is a usage error, never "no match"; ``k`` is a whole
number within ``MIN_HITS..MAX_HITS`` (not a bool); a memory search (``memories`` or a
``scope``) searches the journal and names every line of it that cannot be searched. The
result says how it was found (every word, or some only) in one heading line, for a face to
print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scene_engine.core.checks import check_number, check_query, query_problem  # noqa: F401
from scene_engine.core.errors import InputError

if TYPE_CHECKING:
    from scene_engine.store.layout import StorePaths

SEARCH_K = 10            # hits by default
MIN_HITS, MAX_HITS = 1, 10_000


def check_scope(scope: Any) -> str | None:
    """``scope`` when it can name a scope (``memories.label_problem``: text, not empty, no
    spaces at its ends), or None; raises ``InputError``."""
    if scope is None:               # every scope: nothing to check (nor the journal to load)
        return None
    from scene_engine.store.memories import label_problem

    problem = label_problem(scope, "scope").replace("`scope`", "the scope")
    if problem:
        raise InputError(problem.replace("leave it out for a memory every scope sees",
                                         "leave it out to search every scope"))
    return scope


@dataclass
class SearchResult:
    """What a search found: ``kind`` ("scene" or "memory"), the ``hits`` (``index.scenes.Hit``
    or ``index.memories.MemoryHit``), the ``warnings`` (an index that could not be opened for
    writing, each journal line that could not be searched), and ``heading``: the line above
    the hits ("no match", "no match: only common words in the query", "no scene holds all
    of: ...; showing scenes that hold some"), or None when every word matched."""

    kind: str
    hits: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    heading: str | None = None

    def as_json(self) -> list[dict]:
        """The hits as ``search --json`` gives them."""
        as_json = memory_hit_json if self.kind == "memory" else scene_hit_json
        return [as_json(h) for h in self.hits]


def read_paths(directory: Path | StorePaths | None) -> StorePaths:
    """The store's paths (``layout.locate``: settings and state are not needed to search),
    an interrupted batch rolled back first. Raises ``StoreError``."""
    from scene_engine.store.layout import StorePaths, locate
    from scene_engine.store.recovery import ensure_recovered

    store = directory if isinstance(directory, StorePaths) else locate(directory)
    ensure_recovered(store)
    return store


def search(directory: Path | StorePaths | None, query: str, k: int = SEARCH_K,
           memories: bool = False, scope: str | None = None) -> SearchResult:
    """The best ``k`` scenes for ``query`` (``SceneIndex.search``: every word must match,
    else the scenes holding some); with ``memories`` or a ``scope`` (only its memories and
    unscoped ones) the best memories of the journal instead. ``directory``: the store's
    folder (None: as ``locate`` finds it) or its paths. Raises ``InputError`` for a query
    with nothing to look for or ``k`` out of range, ``StoreError`` (not a store, no
    readable index) and ``OSError``."""
    from scene_engine.index.scenes import read_index

    check_query(query)
    check_number(k, "k", MIN_HITS, MAX_HITS)
    check_scope(scope)
    store = read_paths(directory)
    index, warning = read_index(store)
    memories = memories or scope is not None      # a scope is the journal's
    try:
        hits = index.search_memories(query, k=k, scope=scope) if memories \
            else index.search(query, k=k)
        unread = index.journal_warning() if memories else index.header_warning()
    finally:
        index.close()
    kind = "memory" if memories else "scene"
    return SearchResult(kind, hits, [w for w in (warning, unread) if w],
                        heading(query, hits, kind))


def heading(query: str, hits: list, kind: str) -> str | None:
    """The line above the hits: none found (and why, when only common words were asked),
    or found by some of the words only (``kind``: "scene" or "memory"); None when every word
    matched."""
    from scene_engine.core.plural import plural_of
    from scene_engine.index.analysis import only_stop_words, query_terms

    if not hits:
        return ("no match: only common words in the query" if only_stop_words(query)
                else "no match")
    if hits[0].fallback:
        words = ", ".join(t.text for t in query_terms(query))
        return f"no {kind} holds all of: {words}; showing {plural_of(kind)} that hold some"
    return None


def scene_hit_json(hit: Any) -> dict:
    """A scene hit (``index.scenes.Hit``) as ``search --json`` and the MCP ``search`` give it."""
    return {"name": hit.name, "summary": hit.summary, "heat": hit.heat,
            "snippet": hit.snippet, "score": hit.score, "fallback": hit.fallback}


def memory_hit_json(hit: Any) -> dict:
    """A memory hit (``index.memories.MemoryHit``) as ``search --memories --json`` gives it."""
    return {"id": hit.id, "seq": hit.seq, "created_at": hit.created_at,
            "content": hit.content, "score": hit.score, "fallback": hit.fallback}
