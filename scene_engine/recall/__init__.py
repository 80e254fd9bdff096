"""recall: what an agent puts in its context for a query, within a budget (docs/DESIGN.md
"Index and watcher", recall).

``assemble`` (persona, scene map and the best passages, each with its source). ``recall`` and
the ``Recall`` it gives are importable from here.

May import: ``core``, ``store``, ``index``, ``extraction`` (which memories are current).
"""

from __future__ import annotations


def __getattr__(name: str):
    if name in ("recall", "Recall"):
        from scene_engine.recall import assemble

        return getattr(assemble, name)
    raise AttributeError(f"module 'scene_engine.recall' has no attribute {name!r}")
