"""scene-engine: long-term memory for LLM agents as Markdown scenes in git (docs/DESIGN.md).

The public Python API, importable from here (loaded on first use, so ``import scene_engine``
costs nothing)::

    from scene_engine import open_store, add_memories, make_backend, run_pending
    from scene_engine.recall import recall      # (``scene_engine.recall`` is its layer)

The code is in layers, each a subpackage that imports only from the layers below it
(docs/DESIGN.md "Layers of the code"; ``tests/test_architecture.py`` holds it to that):
``core`` < ``store`` and ``llm`` < ``index`` < ``extraction`` < ``batch`` < ``offline`` and
``recall`` < ``services`` < ``mcpserver`` < ``cli``. ``sandbox`` (a sibling package) imports
nothing of scene_engine.
"""

from __future__ import annotations

# name -> module: the API a caller imports from the package itself.
API = {
    "open_store": "scene_engine.store.store",
    "init_store": "scene_engine.store.store",
    "add_memories": "scene_engine.services.add",
    "make_backend": "scene_engine.services.backends",
    "run_pending": "scene_engine.services.run",
}
__all__ = sorted(API)


def __getattr__(name: str):
    if name in API:
        import importlib

        return getattr(importlib.import_module(API[name]), name)
    raise AttributeError(f"module 'scene_engine' has no attribute {name!r}")
