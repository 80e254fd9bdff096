"""Cost per batch independent of history and queue (issue 23, item 2): do the checks a batch
makes cost the same on a small store as on one with a long journal and a long history?

    python bench/bench_history_cost.py [--small 1000] [--large 50000] [--commits 10,500]
                                       [--scenes 10000] [--repeat 7]

Two stores are built in the same run, one small (``--small`` journal lines, the first of
``--commits`` commits) and one large (``--large`` lines, the second count of commits, one in
ten a person's hand edit of a scene). On each, medians over ``--repeat`` tries of:

1. the write unit's checks (``store.unit.locked``: lock, recovery, the journal-rewrite and
   numbering checks), the cost every batch, add and undo pays first;
2. the person-text read a batch makes (``history.person_texts``), each try after one more
   engine commit, as between two batches;
3. taking the next pending memories (``transaction.select_batch``, 20, by cursor);
4. one whole offline batch of 20 memories (``services.run.run_pending``, one batch).

Each is printed as small, large and the ratio large / small. Then:

5. persona commits for batches over a fold of 400 everyday memories (``bench_volume``'s);
6. ``scenes list`` at ``--scenes`` committed scenes: reading the rows (the first time, and
   again), and drawing them on a terminal (120 columns) and to a pipe.

Targets: each ratio at most 1.5, the persona committed on its own for at most one batch in
ten, and ``scenes list`` (read again, drawn on a terminal) within 2 s. Prints a Markdown block; exits 1 when one is
missed. Runs offline; no network.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_batch import quiet_git_env  # noqa: E402
from bench_volume import everyday  # noqa: E402

from scene_engine.batch.transaction import select_batch  # noqa: E402
from scene_engine.index.refresh import refresh_index  # noqa: E402
from scene_engine.offline.backend import OfflineBackend  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.services.run import run_pending  # noqa: E402
from scene_engine.store import history  # noqa: E402
from scene_engine.store.store import Store, init_store, open_store, render_state  # noqa: E402
from scene_engine.store.unit import locked  # noqa: E402

BATCH = 20
ENV = {"GIT_AUTHOR_NAME": "scene-engine", "GIT_AUTHOR_EMAIL": history.ENGINE_EMAIL,
       "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
PERSON = {"GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.org",
          "GIT_COMMITTER_NAME": "Pat", "GIT_COMMITTER_EMAIL": "pat@example.org"}


def git(root: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout


def build(workdir: Path, lines: int, commits: int) -> Store:
    """A store with ``lines`` memories in its journal (all but ``BATCH`` taken: the cursor is
    near the end, as on a store that has folded for years), four scenes, and ``commits``
    more commits: engine batches, every tenth a person's hand edit adding a line."""
    store = init_store(workdir / f"store-{lines}-{commits}")
    memories = [{"id": f"m{i}", "content": f"Day {i}: notes on topic {i % 37} and more {i}.",
                 "created_at": 1_600_000_000 + i * 600} for i in range(lines)]
    add_memories(store, json.dumps(memories).encode())
    for k in range(4):
        (store.scenes_dir / f"area-{k}.md").write_text(
            f"---\ncreated: 2024-01-01T00:00:00+00:00\nupdated: 2024-01-01T00:00:00+00:00\n"
            f"summary: Area {k}.\nheat: 1\n---\n## Timeline\n- 2024-01-01: started area {k}.\n",
            "utf-8")
    state = store.load_state().model_copy(update={"cursor": lines - BATCH})
    (store.meta_dir / "state.json").write_text(render_state(state), "utf-8")
    git(store.root, "add", "-A")
    git(store.root, "commit", "-q", "-m", "batch 1: setup\n\nBatch: 1\n", env=ENV)
    for c in range(commits):
        scene = store.scenes_dir / f"area-{c % 4}.md"
        with scene.open("a", encoding="utf-8") as out:
            out.write(f"- 2024-02-{c % 28 + 1:02d}: line {c} of the history.\n")
        person = c % 10 == 9
        git(store.root, "add", "-A", "scenes")
        git(store.root, "commit", "-q", "-m", "hand edit: area\n" if person else
            f"batch {c + 2}: 1 updated\n\nBatch: {c + 2}\n", env=PERSON if person else ENV)
    return open_store(store.root)


def median_ms(action, repeat: int, between=None) -> float:
    spent = []
    for _ in range(repeat):
        if between:
            between()
        start = time.perf_counter()
        action()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


def engine_commit(store: Store) -> None:
    """One more engine commit (as a batch makes) touching a scene."""
    scene = store.scenes_dir / "area-0.md"
    with scene.open("a", encoding="utf-8") as out:
        out.write(f"- 2024-03-01: engine line {time.perf_counter_ns()}.\n")
    git(store.root, "add", "-A", "scenes")
    git(store.root, "commit", "-q", "-m", "batch 0: 1 updated\n\nBatch: 0\n", env=ENV)


def checks(store: Store, repeat: int) -> dict[str, float]:
    def unit() -> None:
        with locked(store):
            pass

    def person() -> None:
        with contextlib.closing(history.open_repo(store.root)) as repo:
            history.person_texts(repo)

    with locked(store):            # a first write unit: whatever it derives is there after
        pass
    person()
    state = store.load_state()
    return {"write checks": median_ms(unit, repeat),
            "person texts": median_ms(person, repeat, lambda: engine_commit(store)),
            "next pending": median_ms(lambda: select_batch(store, state, BATCH), repeat)}


def one_batch(origin: Store, workdir: Path, repeat: int) -> float:
    """Median milliseconds of one offline batch of ``BATCH`` memories, each on a fresh clone
    of ``origin`` whose derived files (the index, the caches) a first write unit and an index
    refresh made, as a previous batch of the same store would have."""
    spent = []
    workdir.mkdir(parents=True, exist_ok=True)
    for k in range(max(3, repeat // 2)):
        copy = workdir / f"copy-{k}"
        git(workdir, "clone", "-q", "--local", str(origin.root), str(copy))
        store = open_store(copy)
        old = time.time() - 3600          # files a clone just wrote are as old as the store's
        for path in (*store.memories_dir.glob("*.jsonl"), *store.scenes_dir.glob("*.md")):
            os.utime(path, (old, old))
        git(copy, "update-index", "-q", "--refresh")
        refresh_index(store)
        with locked(store):
            pass
        start = time.perf_counter()
        run_pending(store, OfflineBackend(), max_batches=1)
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


def persona_commits(workdir: Path, total: int = 400) -> tuple[int, int]:
    """(batches, persona commits of their own) over a fold of ``total`` everyday memories."""
    store = init_store(workdir / "persona")
    add_memories(store, json.dumps(everyday(total), ensure_ascii=False).encode())
    results = []
    with contextlib.suppress(Exception):   # a fold that stops early still counts its batches
        run_pending(store, OfflineBackend(), on_batch=results.append)
    subjects = git(store.root, "log", "--format=%s").splitlines()
    return len(results), sum(s.startswith("persona:") for s in subjects)


def listing(workdir: Path, scenes: int) -> dict[str, float]:
    """Seconds to read the rows of ``scenes`` committed scenes (``first`` and ``again``), and
    to draw them on a terminal and to a pipe (``cli.display.print_scene_rows``)."""
    from scene_engine.cli import display
    from scene_engine.services.listing import scene_rows

    store = init_store(workdir / "listing")
    for k in range(scenes):
        (store.scenes_dir / f"scene-{k:05d}.md").write_text(
            f"---\ncreated: 2024-01-01T00:00:00+00:00\nupdated: 2024-01-0{k % 9 + 1}T08:00:00"
            f"+00:00\nsummary: Scene {k} about topic {k % 97}, with a summary of a few dozen "
            f"words that wraps on a narrow terminal.\nheat: {k % 13}\n---\n## Timeline\n"
            f"- 2024-01-01: entry of scene {k}.\n", "utf-8")
    git(store.root, "add", "-A", "scenes")
    git(store.root, "commit", "-q", "-m", "hand edit: scenes", env=PERSON)
    read = {}
    for when in ("first", "again"):   # the first list derives each scene's row once
        start = time.perf_counter()
        rows = scene_rows(store)
        read[when] = time.perf_counter() - start
    drawn = {}
    for name, terminal in (("terminal", True), ("pipe", False)):
        sink = io.StringIO()
        original = display.Console

        def console(*args, _terminal=terminal, _sink=sink, _make=original, **kwargs):
            return _make(*args, file=_sink, force_terminal=_terminal, width=120, **kwargs)

        display.Console = console
        try:
            with contextlib.redirect_stdout(sink):
                start = time.perf_counter()
                display.print_scene_rows(rows)
                drawn[name] = time.perf_counter() - start
        finally:
            display.Console = original
    return {**read, **drawn}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=50_000)
    parser.add_argument("--commits", default="10,500")
    parser.add_argument("--scenes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    few, many = (int(n) for n in args.commits.split(","))
    quiet_git_env()
    missed = []
    print(f"## History cost (bench/bench_history_cost.py, small {args.small} lines / {few} "
          f"commits, large {args.large} lines / {many} commits)\n")
    print("| per batch | small (ms) | large (ms) | large / small |\n| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        stores = {"small": build(work / "small", args.small, few),
                  "large": build(work / "large", args.large, many)}
        batches = {size: one_batch(store, work / f"batch-{size}", args.repeat)
                   for size, store in stores.items()}
        small, large = (checks(stores[size], args.repeat) | {"whole batch": batches[size]}
                        for size in ("small", "large"))
        for what in small:
            ratio = large[what] / small[what] if small[what] else float("inf")
            print(f"| {what} | {small[what]:.1f} | {large[what]:.1f} | {ratio:.2f}x |")
            if ratio > 1.5:
                missed.append(f"{what} grows with the store ({ratio:.2f}x)")
        batches, personas = persona_commits(work)
        print(f"\n- persona commits of their own: {personas} for {batches} batches "
              f"(400 everyday memories, offline)")
        if personas * 10 > max(batches, 1):
            missed.append("the persona is committed on its own too often")
        shown = listing(work, args.scenes)
        print(f"- scenes list at {args.scenes} scenes (committed): rows read in "
              f"{shown['first']:.2f} s the first time, {shown['again']:.2f} s after; drawn on "
              f"a terminal in {shown['terminal']:.2f} s, to a pipe in {shown['pipe']:.2f} s")
        if shown["again"] + shown["terminal"] > 2:
            missed.append("scenes list on a terminal over 2 s")
    print("\n" + ("targets missed: " + "; ".join(missed) if missed else "all targets met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
