"""The names ``scene_engine.engine`` held before the code went into layers (the README's
Python example imported ``add_memories`` and ``make_backend`` from here), kept for callers.
New code imports them from ``scene_engine`` or ``scene_engine.services``."""

from __future__ import annotations

_NAMES = {
    "add_memories": "scene_engine.services.add",
    "drain_inbox": "scene_engine.services.add",
    "make_backend": "scene_engine.services.backends",
    "configured_backend": "scene_engine.services.backends",
    "status": "scene_engine.services.status",
}


def __getattr__(name: str):
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'scene_engine.engine' has no attribute {name!r}")
