"""``scenes demo``: a ready example — about 60 memories of one person's year, in English and
Chinese, with repeats and contradictions, folded by the offline backend into scenes.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_QUERIES = ("When did I get promoted at Northwind?", "李伟 咖啡")


def demo_memories() -> bytes:
    """The demo's JSONL memories (shipped with the package)."""
    return files("scene_engine.services").joinpath("demo_memories.jsonl").read_bytes()


def build_demo(directory: Path, on_batch=None):
    """Make a store at ``directory``, add the demo memories and fold them offline.

    Returns ``(store, add_report, batch_results)``. Raises ``store.InitRefused`` (exit 2) if ``directory``
    is not new or empty.
    """
    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.services.add import add_memories
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import InitRefused, init_store

    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InitRefused(f"{directory} exists and is not empty; choose a new or empty folder")
    store = init_store(directory, own_repo=True)
    report = add_memories(store, demo_memories())
    results = run_pending(store, OfflineBackend(), on_batch=on_batch)
    if store.load_state().since_persona:
        # The persona is refreshed every so many memories; a new user reads it right away,
        # so the demo ends with one made from the scenes as they are now.
        from scene_engine.services.persona import regenerate

        regenerate(store, OfflineBackend(), "the demo's memories are all in")
    return store, report, results
