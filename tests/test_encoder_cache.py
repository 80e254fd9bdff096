"""The sentence encoder's prepared copy in the user's cache (scene_engine.index.encoder_cache):
the second process loads it several times faster and embeds to the very same numbers; a
damaged copy, one of another layout, a cache that cannot be written or one turned off all
give the package's own load, never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EMBED = """
import json, time
t = time.perf_counter()
from scene_engine.index.dense import Use
vectors = Use().passage(["Moved to Porto last month.", "我上个月搬到苏州了。"])
print(json.dumps({"seconds": time.perf_counter() - t, "vectors": vectors.tolist()}))
"""


def embed(cache: str) -> dict:
    env = {**os.environ, "SCENE_ENGINE_CACHE": cache}
    done = subprocess.run([sys.executable, "-c", EMBED], capture_output=True, text=True,
                          check=True, cwd=ROOT, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(cache folder, the first load's result: the package's own, writing the copy)."""
    cache = tmp_path_factory.mktemp("cache")
    return cache, embed(str(cache))


def test_the_second_load_reads_the_prepared_copy_faster_and_embeds_the_same(fresh):
    cache, first = fresh
    (folder,) = [p for p in cache.iterdir() if p.name.startswith("usem3-")]
    assert (folder / "manifest.json").exists() and (folder / "table.npy").exists()
    second = embed(str(cache))
    assert second["vectors"] == first["vectors"]
    assert second["seconds"] < first["seconds"]


@pytest.mark.parametrize("damage", ["truncated table", "wrong probe", "broken manifest",
                                    "missing prefixes"])
def test_a_damaged_copy_loads_the_package_s_own_way(fresh, tmp_path, damage):
    import shutil

    cache, first = fresh
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    (folder,) = [p for p in copy.iterdir() if p.name.startswith("usem3-")]
    if damage == "truncated table":
        data = (folder / "table.npy").read_bytes()
        (folder / "table.npy").write_bytes(data[: len(data) // 2])
    elif damage == "wrong probe":
        import numpy as np

        probe = np.load(folder / "probe.npy")
        np.save(folder / "probe.npy", probe + 0.5)
    elif damage == "broken manifest":
        (folder / "manifest.json").write_text("{not json", "utf-8")
    else:
        (folder / "prefixes.txt").unlink()
    assert embed(str(copy))["vectors"] == first["vectors"]


def test_turned_off_or_unwritable_the_cache_costs_nothing(fresh, tmp_path):
    _, first = fresh
    assert embed("off")["vectors"] == first["vectors"]
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", "utf-8")
    assert embed(str(blocked / "cache"))["vectors"] == first["vectors"]
    assert blocked.read_text("utf-8") == "not a folder"
