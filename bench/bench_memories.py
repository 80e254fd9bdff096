"""The memory journal in the index: adding, recalling and rebuilding at scale.

    python bench/bench_memories.py [--quick]

1. Adding 10,000 memories to a store that holds 100,000 (``add``: validation, journal,
   commit, and indexing them): target under 2 s (the recall issue).
2. ``recall`` p95 on a store of 14 scenes and 100,000 memories, the index open as an agent
   keeps it, English and Chinese queries: target 20 ms (the recall issue).
3. A full ``reindex`` of 10,000 scenes and 100,000 memories: target under 30 s (the index
   issue).

Memories and scenes are generated (``bench_index.Corpus``: Zipf-weighted English pseudo-words
and Chinese two-character words). ``--quick``: a tenth of every size. Prints a Markdown block;
exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_index import Corpus, generate, percentile  # noqa: E402

from scene_engine.index.scenes import for_store  # noqa: E402
from scene_engine.recall.assemble import recall  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.store.store import init_store  # noqa: E402


def memory_lines(corpus: Corpus, start: int, count: int) -> bytes:
    """``count`` JSONL memories numbered from ``start``, a sentence or two each, an hour
    apart."""
    moment = datetime(2024, 1, 1, tzinfo=UTC)
    return "\n".join(json.dumps({
        "id": f"g{n}", "content": corpus.sentence() + " " + corpus.sentence(),
        "created_at": (moment + timedelta(hours=n)).isoformat()}, ensure_ascii=False)
        for n in range(start, start + count)).encode()


def add_in_chunks(store, corpus: Corpus, total: int, chunk: int = 20_000) -> None:
    for start in range(0, total, chunk):
        add_memories(store, memory_lines(corpus, start, min(chunk, total - start)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    memories, added, scenes = 100_000 // scale, 10_000 // scale, 10_000 // scale
    rng = random.Random(20261201)
    corpus = Corpus(rng)
    work = Path(tempfile.mkdtemp(prefix="bench-memories-"))

    small = init_store(work / "small")
    generate(small.scenes_dir, 14, corpus)
    add_in_chunks(small, corpus, memories)
    data = memory_lines(corpus, memories, added)      # generated before the clock starts
    started = time.perf_counter()
    add_memories(small, data)
    add_s = time.perf_counter() - started

    queries = [corpus.english[i] + " " + corpus.english[i + 30] for i in range(0, 20, 2)]
    queries += [corpus.chinese[i] for i in range(10)]
    times = []
    with for_store(small) as index:
        index.sync()
        for _ in range(5):
            for query in queries:
                t0 = time.perf_counter()
                recall(small, query, index=index)
                times.append((time.perf_counter() - t0) * 1000)
    recall_p95 = percentile(times, 95)

    big = init_store(work / "big")
    generate(big.scenes_dir, scenes, corpus)
    add_in_chunks(big, corpus, memories)
    with for_store(big) as index:
        report = index.rebuild()
    rebuild_s = report.seconds

    rows = [(f"add {added} memories to a store of {memories} (add + index)", add_s,
             2.0, "s"),
            (f"recall p95, 14 scenes + {memories} memories", recall_p95, 20.0, "ms"),
            (f"full reindex, {scenes} scenes + {memories} memories "
             f"({len(report.added)} + {report.memories_added} indexed)", rebuild_s,
             30.0, "s")]
    print(f"`python bench/bench_memories.py{' --quick' if args.quick else ''}` — "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print("| figure | measured | target | met |\n| --- | --- | --- | --- |")
    missed = False
    for name, value, target, unit in rows:
        met = value < target
        missed |= not met
        print(f"| {name} | {value:.3g} {unit} | < {target:g} {unit} | "
              f"{'yes' if met else 'NO'} |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
