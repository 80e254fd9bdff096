"""store: a store on disk and its history: the files are the truth (docs/DESIGN.md "A store
on disk").

``layout`` (where a store's files are, finding one, its format), ``config`` (config.toml),
``store`` (``Store``, ``init_store``, ``open_store``, the state checkpoint), ``schemas``
(the pydantic schemas of both, for the values the plain checks leave to them), ``scene`` (the
scene file format), ``memories`` (memory input and the append-only journal), ``numbering``
(the journal's numbering and its check), ``inbox`` (memories waiting for a busy store),
``lock`` (the cross-process lock), ``history`` (git through GitPython: commits, log, blame,
trailers), ``recovery`` (the write-ahead marker that rolls an interrupted change back) and
``unit`` (the one write unit of work every change of the store goes through).

May import: ``core``. ``open_store``, ``init_store`` and ``Store`` are importable from here.
"""

from __future__ import annotations

_NAMES = ("open_store", "init_store", "Store")


def __getattr__(name: str):
    # Loaded on first use: a search reads ``store.layout`` without the settings.
    if name in _NAMES:
        from scene_engine.store import store

        return getattr(store, name)
    raise AttributeError(f"module 'scene_engine.store' has no attribute {name!r}")
