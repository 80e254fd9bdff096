"""Recall speed and command start-up.

    python bench/bench_recall.py [--quick]

1. ``recall`` p95 (default budget 4,000) on the demo store (15 scenes at most) and on a store of
   10,000 generated scenes (``--quick``: 1,000), English and Chinese queries, the index open as
   an agent would keep it. Target: p95 under 20 ms on both.
2. ``scenes list`` wall time on the demo store, Python start included (subprocess, best and
   median of 7). Target: under 0.5 s.
3. A fresh ``scenes search`` (a new process, as an agent's tool call is) on the 10,000-scene
   store, English and Chinese queries, against a bare ``python -c pass`` in the same run,
   alternating: median ratio at most 6x.

Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_index import Corpus, generate, percentile  # noqa: E402

from scene_engine.index.scenes import SceneIndex  # noqa: E402
from scene_engine.recall.assemble import recall  # noqa: E402
from scene_engine.services.demo import build_demo  # noqa: E402
from scene_engine.store.store import init_store  # noqa: E402

QUERIES = ["When did I get promoted?", "running knee pain", "Where does my sister live?",
           "李伟 咖啡", "上海 红烧肉", "flat renovation savings", "Japanese trip Kyoto",
           "guitar fado", "mother hip surgery", "What do I cook?"]


def recall_p95(store, queries: list[str], rounds: int = 10) -> float:
    """p95 milliseconds of ``recall`` over ``rounds`` passes of ``queries`` (index kept open)."""
    times = []
    with SceneIndex(store.index_path, store.scenes_dir) as index:
        index.sync()
        for _ in range(rounds):
            for query in queries:
                started = time.perf_counter()
                recall(store, query, index=index)
                times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 95)


def list_startup(store_root: Path, runs: int = 7) -> tuple[float, float]:
    """(best, median) seconds of ``scenes list`` as a new process."""
    scenes = Path(sys.executable).with_name("scenes")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([str(scenes), "--dir", str(store_root), "list"], check=True,
                       capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def search_startup(store_root: Path, queries: list[str], runs: int = 9) -> tuple[float, float]:
    """(median seconds of a fresh ``scenes search``, median seconds of ``python -c pass``),
    measured alternately so both see the same machine load. The package's bytecode is
    compiled first, as an installed package's is (pip compiles it; an editable install under
    PYTHONDONTWRITEBYTECODE would recompile every module on every start)."""
    import compileall

    compileall.compile_dir(str(ROOT / "scene_engine"), quiet=1)
    scenes = Path(sys.executable).with_name("scenes")
    searches, bare = [], []
    for i in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([str(scenes), "--dir", str(store_root), "search", queries[i % len(queries)]],
                       check=True, capture_output=True)
        searches.append(time.perf_counter() - started)
    return statistics.median(searches), statistics.median(bare)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-recall-"))
    demo, _, _ = build_demo(work / "demo")
    small = recall_p95(demo, QUERIES)

    count = 1000 if args.quick else 10_000
    big = init_store(work / "big")
    rng = random.Random(7)
    corpus = Corpus(rng)
    generate(big.scenes_dir, count, corpus)
    queries = [corpus.english[i] + " " + corpus.english[i + 40] for i in range(0, 20, 2)]
    queries += [corpus.chinese[i] for i in range(10)]
    started = time.perf_counter()
    with SceneIndex(big.index_path, big.scenes_dir) as index:
        index.sync()
    indexed = time.perf_counter() - started
    large = recall_p95(big, queries, rounds=5)
    best, median = list_startup(demo.root)
    search_s, bare_s = search_startup(big.root, queries)

    rows = [(f"recall p95, demo store ({len(demo.scene_names())} scenes)", small, 20.0, "ms"),
            (f"recall p95, {count} scenes", large, 20.0, "ms"),
            ("`scenes list` wall time, median of 7", median, 0.5, "s"),
            (f"fresh `scenes search`, {count} scenes, over `python -c pass` "
             f"({search_s * 1000:.0f} / {bare_s * 1000:.0f} ms, medians of 9)",
             search_s / bare_s, 6.0, "x")]
    print(f"bench_recall {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"index of {count} scenes built in {indexed:.1f} s; `scenes list` best {best:.3f} s")
    print("| figure | measured | target | met |\n| --- | --- | --- | --- |")
    missed = False
    for name, value, target, unit in rows:
        met = value <= target if unit == "x" else value < target
        missed |= not met
        bound = "<=" if unit == "x" else "<"
        print(f"| {name} | {value:.3g} {unit} | {bound} {target:g} {unit} | "
              f"{'yes' if met else 'NO'} |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
