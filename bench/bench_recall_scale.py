"""Recall at volume: p50/p95 at 100,000 memories, words only and with the semantic extra
(issue 26: p95 at most 30 ms without the extra, 60 ms with it).

    python bench/bench_recall_scale.py [--memories 100000] [--quick]

1. One store: the knowledge-update set's 465 memories (``bench/knowledge``) after N - 465
   others made of its and ``bench/topics``' sentences, two at a time, dated before them
   (their words are those of everyday memories, so an attribute's stating words match
   thousands of rows, as they would in a real journal).
2. The 117 questions of the set, plus 40 questions in the third person (no current-facts
   block), each asked 3 times with the index open as an agent keeps it; words only
   (``SCENE_ENGINE_SEMANTIC=off``): p50 and p95.
3. With the extra installed: the vectors written for every memory (timed: the cost of
   turning it on for a journal of this size), then the same questions: p50 and p95.
   ``--stand-in-vectors``: the journal's vectors are random unit vectors (seeded by each
   text) written under the real model's name, so a 100,000-memory journal need not be
   embedded for 80 minutes on one thread; each question is still embedded by the model, and
   the search is the same size, so the latency is the real one (the answers are not).

``--quick``: 10,000 memories. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from scene_engine.index.scenes import for_store  # noqa: E402
from scene_engine.recall.assemble import recall  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.store.store import init_store  # noqa: E402

THIRD_PERSON = ["When did Maya move to Cascais?", "Where does Joana live?",
                "What did Dan cook on Sunday?", "Which trail did Rosa hike?",
                "林晓雨什么时候去的日本？", "陈静的爸爸住在哪里？", "张伟周末做了什么？",
                "What did Priya say at the wedding?"] * 5


def _sentences() -> list[str]:
    found = []
    for name in ("knowledge/memories.jsonl", "topics/memories.jsonl"):
        for line in (ROOT / "bench" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                found += [s.strip() for s in json.loads(line)["content"].split(". ")
                          if s.strip()]
    return found


def build(path: Path, total: int) -> tuple[object, list[dict]]:
    """The store (see module docstring) and the set's questions."""
    rng = random.Random(20261203)
    pool = _sentences()
    store = init_store(path)
    own = [json.loads(line) for line in
           (ROOT / "bench/knowledge/memories.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
    start = datetime(2010, 1, 1, tzinfo=UTC)
    others = total - len(own)
    for chunk in range(0, others, 20_000):
        lines = [json.dumps({"id": f"n{n}", "content": f"{rng.choice(pool)}. "
                             f"{rng.choice(pool)}",
                             "created_at": (start + timedelta(minutes=40 * n)).isoformat()},
                            ensure_ascii=False)
                 for n in range(chunk, min(chunk + 20_000, others))]
        add_memories(store, "\n".join(lines).encode())
    add_memories(store, "\n".join(json.dumps({k: m[k] for k in ("id", "content",
                                                                "created_at")})
                                  for m in own).encode())
    questions = [json.loads(line) for line in
                 (ROOT / "bench/knowledge/questions.jsonl").read_text(encoding="utf-8")
                 .splitlines() if line.strip()]
    return store, questions


def timed(store, queries: list[str]) -> list[float]:
    """Milliseconds of each recall (default budget), three rounds, the index kept open."""
    times = []
    with for_store(store) as index:
        index.sync()
        recall(store, queries[0], index=index)          # warm: model, caches
        for _ in range(3):
            for query in queries:
                t0 = time.perf_counter()
                recall(store, query, index=index)
                times.append((time.perf_counter() - t0) * 1000)
    return times


class StandIn:
    """An embedder of random unit vectors seeded by each text, under the default model's
    name, key and width (``dense.Use``; see ``--stand-in-vectors``)."""

    def __init__(self):
        from scene_engine.index.dense import Use

        self.name, self.key, self.dim = Use.name, Use.key, Use.dim

    def passage(self, texts):
        import hashlib

        import numpy as np
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            rows.append(row / np.linalg.norm(row))
        return np.stack(rows)

    def query(self, text):
        return self.passage([text])[0]


def _p(times: list[float], q: int) -> float:
    return statistics.quantiles(times, n=100)[q - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stand-in-vectors", action="store_true",
                        help="random vectors for the journal (latency only; see above)")
    args = parser.parse_args()
    total = 10_000 if args.quick else args.memories
    work = Path(tempfile.mkdtemp(prefix="bench-recall-scale-"))
    os.environ["SCENE_ENGINE_SEMANTIC"] = "off"
    started = time.perf_counter()
    store, questions = build(work / "store", total)
    build_s = time.perf_counter() - started
    queries = [q["question"] for q in questions] + THIRD_PERSON
    rows = [("words only", timed(store, queries))]
    del os.environ["SCENE_ENGINE_SEMANTIC"]
    from scene_engine.index.refresh import sync_vectors, vectors_enabled

    embed_s = None
    if vectors_enabled():
        started = time.perf_counter()
        with for_store(store) as index:
            index.sync()
            if args.stand_in_vectors:
                from scene_engine.index.dense import DenseIndex
                from scene_engine.index.refresh import vectors_folder

                with DenseIndex(vectors_folder(store), embedder=StandIn()) as vectors:
                    embedded = vectors.sync(((f"m:{seq}", text) for seq, text
                                             in index.memory_texts()), prune=True)
            else:
                embedded = sync_vectors(store, index)
        embed_s = time.perf_counter() - started
        rows.append(("with meaning (USE)" + (" (stand-in journal vectors)"
                                             if args.stand_in_vectors else ""),
                     timed(store, queries)))
    print(f"`python bench/bench_recall_scale.py{' --quick' if args.quick else ''}` — "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {total} memories (built in "
          f"{build_s:.0f} s), {len(queries)} questions x 3\n")
    print("| recall | p50 ms | p95 ms | target p95 |\n|---|---|---|---|")
    for (name, times), target in zip(rows, (30, 60), strict=False):
        print(f"| {name} | {_p(times, 50):.1f} | {_p(times, 95):.1f} | <= {target} ms |")
    if embed_s is not None:
        from scene_engine.index.dense import Use, file_name

        size = (store.meta_dir / "vectors" / file_name(Use())).stat().st_size / 2**20
        print(f"\n{'stand-in ' if args.stand_in_vectors else ''}vectors for {embedded} "
              f"memories written in {embed_s:.0f} s "
              f"({embedded / embed_s:.0f} a second); {file_name(Use())} {size:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
