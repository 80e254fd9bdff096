"""A life's worth of memories (issue 23): does the default run fold any volume, and does a
batch cost the same at batch 500 as at batch 5?

    python bench/bench_volume.py [--memories N] [--no-locomo]

1. LoCoMo: all ten conversations of /work/shared/data/locomo10.json ingested into one store
   with default settings (``scenes ingest --conversation``, offline extractor and backend):
   does it complete, how many batches, how many memories still pending, ``doctor``'s verdict.
2. Everyday memories: ``--memories`` (default 10,000) generated from the three hand-written
   labelled sets of bench/topics (English and Chinese, about 1.3 a day), one year of them
   after another, added in one ``add`` and folded by ``run_pending`` with default settings (the
   offline backend, persona included, as ``scenes run`` does). Reported: batches committed, the
   batch that failed and why, throughput in memories per second, the cost of batches 5, 50
   and 500 (median of the nine batches around each) against a bare ``git add`` + ``git
   commit`` of the same files in a clone made at that batch's parent (same run, same
   machine), and peak memory (ru_maxrss).

Targets (issue 23): the run completes; batch 500 costs at most 1.5x batch 5; at least 100
memories/s; peak memory below 200 MB at 100,000 memories. Prints a Markdown block; exits 1
when a target is missed. Runs offline; no network.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_batch import git_commit_time, quiet_git_env  # noqa: E402

from scene_engine.core.errors import SceneEngineError  # noqa: E402
from scene_engine.offline.backend import OfflineBackend  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.services.run import run_pending  # noqa: E402
from scene_engine.store.store import init_store  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
SETS = [ROOT / "bench" / "topics" / n for n in ("memories.jsonl", "heldout.jsonl", "third.jsonl")]
SCENES = ROOT / ".venv" / "bin" / "scenes"
SAMPLES = (5, 50, 500)
WINDOW = 4            # batches either side of a sample whose median is its cost


def everyday(total: int) -> list[dict]:
    """``total`` memories: the labelled sets' texts, year after year (each set's dates moved
    on by a year per round), in time order; ids say the round."""
    rows = [json.loads(line) for path in SETS for line in path.read_text("utf-8").splitlines()
            if line.strip()]
    out: list[dict] = []
    year = 0
    while len(out) < total:
        for row in rows:
            when = datetime.fromisoformat(row["created_at"]) + timedelta(days=365 * year)
            out.append({"id": f"y{year:02d}-{row['id']}", "content": row["content"],
                        "created_at": when.isoformat()})
        year += 1
    out = sorted(out[:total], key=lambda r: r["created_at"])
    return out


def fold_everyday(workdir: Path, total: int) -> dict:
    store = init_store(workdir / "everyday")
    add_memories(store, json.dumps(everyday(total), ensure_ascii=False).encode())
    times: list[float] = []
    folded = [0]
    last = [time.perf_counter()]

    def on_batch(result) -> None:
        now = time.perf_counter()
        times.append(now - last[0])
        folded[0] += len(result.memory_ids)
        last[0] = now

    start = time.perf_counter()
    failure = ""
    try:
        run_pending(store, OfflineBackend(), on_batch=on_batch)
    except SceneEngineError as error:
        failure = f"batch {len(times) + 1}: {error}"
    seconds = time.perf_counter() - start
    pending = store.load_state().pending
    costs = {}
    for n in SAMPLES:
        if len(times) >= n + WINDOW:
            engine = statistics.median(times[n - 1 - WINDOW: n + WINDOW])
            costs[n] = (engine, bare_git(store.root, n, workdir))
    return {"memories": total, "batches": len(times), "folded": folded[0], "pending": pending,
            "seconds": seconds, "per_second": folded[0] / seconds if seconds else 0.0,
            "failure": failure, "costs": costs,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def bare_git(root: Path, batch: int, workdir: Path) -> float:
    """Median seconds of a bare git add + commit of batch ``batch``'s files (three clones)."""
    commit = subprocess.run(["git", "log", "--format=%H", f"--grep=^Batch: {batch}$", "-1"],
                            cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    names = subprocess.run(["git", "diff", "-z", "--name-only", f"{commit}~1", commit],
                           cwd=root, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    names = [n for n in names if n]
    changed = {}
    for name in names:
        shown = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=root,
                               capture_output=True)
        changed[name] = shown.stdout if shown.returncode == 0 else None
    spent = []
    for k in range(3):
        copy = workdir / f"bare-{batch}-{k}"
        subprocess.run(["git", "clone", "-q", "--local", str(root), str(copy)], check=True)
        subprocess.run(["git", "checkout", "-q", f"{commit}~1"], cwd=copy, check=True)
        spent.append(git_commit_time(copy, changed))
    return statistics.median(spent)


def ingest_locomo(workdir: Path) -> dict:
    root = workdir / "locomo"
    subprocess.run([str(SCENES), "init", str(root)], check=True, capture_output=True)
    start = time.perf_counter()
    done = subprocess.run([str(SCENES), "--dir", str(root), "ingest", "--conversation",
                           str(LOCOMO)], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    status = json.loads(subprocess.run([str(SCENES), "--dir", str(root), "status", "--json"],
                                       capture_output=True, text=True).stdout)
    doctor = subprocess.run([str(SCENES), "--dir", str(root), "doctor"], capture_output=True,
                            text=True)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return {"exit": done.returncode, "seconds": seconds, "pending": status.get("pending"),
            "batches": status.get("batches", status.get("last_batch")),
            "doctor": doctor.returncode, "last": lines[-2:] if done.returncode else lines[-1:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args()
    quiet_git_env()
    missed = []
    print(f"## Volume (bench/bench_volume.py --memories {args.memories}, "
          f"{datetime.now():%Y-%m-%d})\n")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if not args.no_locomo and LOCOMO.exists():
            lo = ingest_locomo(work)
            print(f"- LoCoMo, ten conversations, one store, default settings: exit {lo['exit']} "
                  f"after {lo['seconds']:.0f} s, {lo['pending']} memories pending, doctor exit "
                  f"{lo['doctor']}; last lines: {' / '.join(lo['last'])}")
            if lo["exit"] or lo["pending"]:
                missed.append("LoCoMo does not fold completely")
        ev = fold_everyday(work, args.memories)
        print(f"- Everyday, {ev['memories']} memories: {ev['batches']} batches, {ev['folded']} "
              f"folded, {ev['pending']} pending, {ev['seconds']:.0f} s, "
              f"{ev['per_second']:.1f} memories/s, peak {ev['peak_mb']:.0f} MB"
              + (f"; stopped at {ev['failure']}" if ev["failure"] else ""))
        for n, (engine, bare) in ev["costs"].items():
            print(f"  - batch {n}: {engine * 1000:.0f} ms, bare git {bare * 1000:.0f} ms "
                  f"({engine / bare:.1f}x)")
        if ev["failure"] or ev["pending"]:
            missed.append("the everyday run does not fold completely")
        if 5 in ev["costs"] and 500 in ev["costs"]:
            growth = ev["costs"][500][0] / ev["costs"][5][0]
            print(f"  - batch 500 / batch 5: {growth:.2f}x (target at most 1.5x)")
            if growth > 1.5:
                missed.append("batch cost grows with history")
        if ev["per_second"] < 100:
            missed.append("under 100 memories/s")
    print("\n" + ("targets missed: " + "; ".join(missed) if missed else "all targets met"))
    return 1 if missed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
