"""Does a batch cost more when more memories wait? (issue 39 part 1: five batches cost the same
with 20,000 memories pending as with 2,000, within 1.2x.)

    python bench/bench_queue.py [--small 2000] [--large 20000] [--batches 5] [--rounds 3]

Two stores get the same oldest ``--small`` everyday memories (bench_volume's generator: the
labelled sets of bench/topics, year after year); the second also gets the next ones up to
``--large``, all pending. Each store folds one batch (the encoder loaded, the first scenes
made), then, ``--rounds`` times in turn on a fresh copy of each, ``--batches`` batches are
timed (``run_pending`` with the offline backend, as ``scenes run`` does). The batches fold
the same oldest memories in both stores, so only the queue behind them differs (each copy's
git index refreshed first, as a store's own is). Reported:
the median seconds of each, and their ratio. Exits 1 when the ratio is above 1.2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_batch import quiet_git_env  # noqa: E402
from bench_volume import everyday  # noqa: E402

from scene_engine.index.memories import RACY_NS  # noqa: E402
from scene_engine.index.refresh import refresh_index  # noqa: E402
from scene_engine.offline.backend import OfflineBackend  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.services.run import run_pending  # noqa: E402
from scene_engine.store.store import init_store, open_store  # noqa: E402

TARGET = 1.2


def made(root: Path, rows: list[dict]) -> Path:
    """A store at ``root`` holding ``rows`` (added in one add), one batch folded."""
    store = init_store(root)
    add_memories(store, json.dumps(rows, ensure_ascii=False).encode())
    run_pending(store, OfflineBackend(), max_batches=1)
    # The index trusts a file's time only once it is older than RACY_NS (it may still change
    # unseen within the same clock tick); a journal written less than that ago is read again
    # at every sync. A store's journal is older than that when its queue is long, so the
    # index is brought in step once the files have settled: the copies then time batches,
    # not a fresh add's re-reads (with a faster fold, the first batch came within 2 s of the
    # add and every timed batch re-read all 20 segments of the large store).
    time.sleep(RACY_NS / 1e9 + 0.2)
    refresh_index(store)
    return root


def timed(base: Path, copy: Path, batches: int) -> float:
    """Seconds ``batches`` batches take on a fresh copy of the store at ``base``."""
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(base, copy, symlinks=True)
    # A copied file has a new inode and times: git's index would see every file as maybe
    # changed and hash the whole journal again in the first batch. Refreshed, the copy is
    # as the store was (a store's own index knows its files).
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=copy, check=False)
    store = open_store(copy)
    start = time.perf_counter()
    results = run_pending(store, OfflineBackend(), max_batches=batches)
    spent = time.perf_counter() - start
    assert len(results) == batches, f"{len(results)} batches folded, not {batches}"
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--large", type=int, default=20_000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    quiet_git_env()
    rows = everyday(args.large)
    when = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        small = made(work / "small", rows[: args.small])
        large = made(work / "large", rows)
        waiting = {name: open_store(root).load_state().pending
                   for name, root in (("small", small), ("large", large))}
        spent: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(args.rounds):
            spent["small"].append(timed(small, work / "copy-small", args.batches))
            spent["large"].append(timed(large, work / "copy-large", args.batches))
    a, b = statistics.median(spent["small"]), statistics.median(spent["large"])
    ratio = b / a
    print(f"`python bench/bench_queue.py --small {args.small} --large {args.large}` — "
          f"{when:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} after\n")
    print(f"- {args.batches} batches with {waiting['small']:,} pending: {a:.2f} s "
          f"(rounds: {', '.join(f'{s:.2f}' for s in spent['small'])})")
    print(f"- {args.batches} batches with {waiting['large']:,} pending: {b:.2f} s "
          f"(rounds: {', '.join(f'{s:.2f}' for s in spent['large'])})")
    print(f"- ratio {ratio:.2f}x (target at most {TARGET}x): "
          + ("met" if ratio <= TARGET else "missed"))
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
