"""Serving many stores: remembers through one front-end, folds with 1, 2 and 4 workers, and the
cost a single-store user pays (issue 24's benchmark; docs/DESIGN.md "Serving many stores").

    python bench/bench_serving.py [--quick] [--before COMMIT]

Real pieces, started here on 127.0.0.1 and stopped by pid (tests/servers.py): Postgres, ``git
daemon``, one ``scenes serve`` and ``scenes worker`` processes.

1. **Remember.** 8 client threads (keep-alive) post to ``/v1/stores/NAME/remember`` of 10
   stores: one memory a call, then 40 a call. Baselines in the same run: ``GET /healthz``
   (the HTTP floor: uvicorn, Starlette, a client) and ``services.add.add_memories`` of one
   memory in process on a local store (what ``scenes add`` does after Python starts).
   Figures: calls and memories per second, p50 and p95 milliseconds a call.
2. **Fold.** 50 stores (``--quick``: 12) with 6 memories each in their inbox (the offline
   backend makes four batches of them: a new scene a batch while a store is young) and
   one fold job each, then 1, 2 and 4 worker processes whose backend is the offline one
   behind a scripted model's latency (a sleep of 0.5-1 s a batch, drawn from the batch's
   texts: the same batch sleeps as long in every run). Timed from the
   first job taken to the last inbox row dropped and the queue empty. Baseline in the same
   run: the same batches, same sleeps, run by ``run_pending`` on local stores in one process
   (no Postgres, no clone, no push). Each store is checked at the end as the git server holds
   it: its 6 memories, each in exactly one live batch. Targets: 4 workers fold at least 2.5x as
   fast as 1; one worker within 1.5x of the local run.
3. **A single store's cost.** ``scenes add`` of one memory, ``scenes run`` (one offline
   batch) and ``scenes status`` on a local store at this commit and at ``--before`` (the
   commit before the serving package, by default), alternating, median of 7 each; and which
   serving modules (``scene_engine.serving``, psycopg, procrastinate, starlette, uvicorn)
   each local command imports. Targets: none imported; each median within 10 % of before.

Prints a Markdown block; exits 1 when a target is missed. Skips (exit 0, a message) when
Postgres, ``git daemon`` or the serving extra is missing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers import GitDaemon, Postgres, free_port, missing  # noqa: E402

SCENES = str(Path(sys.executable).with_name("scenes"))
BEFORE = "2026818"            # the last commit before scene_engine.serving (bb02dc5)
PER_STORE = 40               # memories a batched remember call
FOLD_PER_STORE = 6           # memories each store of the fold runs holds
SERVING_MODULES = ("scene_engine.serving", "psycopg", "procrastinate", "starlette", "uvicorn")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def topic_lines() -> list[str]:
    """The hand-written memories of bench/topics (texts only)."""
    path = ROOT / "bench" / "topics" / "memories.jsonl"
    return [json.loads(line)["content"] for line in path.read_text("utf-8").splitlines()
            if line.strip()]


def memories(prefix: str, n: int, texts: list[str]) -> list[dict]:
    return [{"id": f"{prefix}-{i}", "content": texts[i % len(texts)],
             "created_at": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"}
            for i in range(n)]


# ------------------------------------------------------------------ the worker with latency

def worker_main(argv: list[str]) -> None:
    """``--worker LOW HIGH options...``: ``scenes worker`` whose backend waits LOW-HIGH
    seconds a batch before the offline backend folds it (a scripted model's latency)."""
    low, high, *options = argv
    from scene_engine.services import backends

    real = backends.store_backend

    def store_backend(store):
        make = real(store)
        return lambda: Latency(make(), float(low), float(high))

    backends.store_backend = store_backend      # type: ignore[assignment]
    sys.argv = ["scenes", "worker", *options]
    from scene_engine.cli.commands import main

    main()


class Latency:
    """A backend that waits like a model before another backend folds the batch. The wait
    is drawn from the batch's memories (their texts), so the same batch waits as long in
    every run, served or local."""

    def __init__(self, inner, low: float, high: float):
        self.inner, self.low, self.high = inner, low, high
        self.name = inner.name

    def wait(self, job) -> float:
        key = "\n".join(m.content for m in job.memories).encode("utf-8")
        return self.low + (self.high - self.low) * (zlib.crc32(key) / 0xFFFFFFFF)

    def run(self, job):
        time.sleep(self.wait(job))
        return self.inner.run(job)


# ------------------------------------------------------------------ the pieces

def provision(database: str, daemon: GitDaemon, names: list[str]) -> dict[str, str]:
    """store -> token, made in this process (admin.provision, as ``scenes provision``)."""
    from scene_engine.serving.admin import provision as make

    return {n: make(database, daemon.base, daemon.repos, n)["token"] for n in names}


class Serve:
    """``scenes serve`` in a process of its own."""

    def __init__(self, database: str, daemon: GitDaemon, folder: Path):
        self.port = free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "serve.log"
        self.proc = subprocess.Popen(
            [SCENES, "serve", "--database", database, "--git", daemon.base, "--port",
             str(self.port), "--cache", str(folder / "readers")],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "a"))  # noqa: SIM115
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text())
            try:
                if Client(self.port).call("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("scenes serve did not start")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, token: str | None = None, body=None) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None if body is None else json.dumps(body).encode("utf-8")
        if data is not None:
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        answer = self.conn.getresponse()
        return answer.status, answer.read()


def hammer(port: int, calls: list[tuple[str, str, str | None, object]], threads: int = 8
           ) -> tuple[float, list[float]]:
    """Run ``calls`` (method, path, token, body) over ``threads`` connections; returns (wall
    seconds, milliseconds of each call). Raises RuntimeError on an answer that is not 200."""
    times: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    shares = [calls[i::threads] for i in range(threads)]

    def run(share):
        client = Client(port)
        for method, path, token, body in share:
            started = time.perf_counter()
            status, data = client.call(method, path, token, body)
            took = (time.perf_counter() - started) * 1000
            with lock:
                times.append(took)
                if status != 200:
                    failures.append(f"{status} {data[:200]!r}")

    workers = [threading.Thread(target=run, args=(s,)) for s in shares]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{len(failures)} calls failed, first: {failures[0]}")
    return wall, times


# ------------------------------------------------------------------ 1. remember

def bench_remember(database: str, daemon: GitDaemon, folder: Path, texts: list[str],
                   quick: bool) -> dict:
    stores = provision(database, daemon, [f"r{i}" for i in range(10)])
    single_n, batch_n = (400, 40) if quick else (2000, 100)
    serve = Serve(database, daemon, folder)
    try:
        names = sorted(stores)
        floor = hammer(serve.port, [("GET", "/healthz", None, None)] * single_n)
        single = hammer(serve.port, [
            ("POST", f"/v1/stores/{names[i % 10]}/remember", stores[names[i % 10]],
             memories(f"one{i}", 1, texts[i % len(texts):]))
            for i in range(single_n)])
        batched = hammer(serve.port, [
            ("POST", f"/v1/stores/{names[i % 10]}/remember", stores[names[i % 10]],
             memories(f"many{i}", PER_STORE, texts))
            for i in range(batch_n)])
        status, data = Client(serve.port).call("GET", f"/v1/stores/{names[0]}/status",
                                               stores[names[0]])
        inbox = json.loads(data)["inbox"]
    finally:
        serve.close()
    expected = single_n // 10 + batch_n // 10 * PER_STORE
    if inbox != expected:
        raise RuntimeError(f"store {names[0]} holds {inbox} inbox memories, not {expected}")
    return {"floor": floor, "single": single, "batched": batched, "single_n": single_n,
            "batch_n": batch_n, "local_add_ms": local_add(folder / "local-add", texts)}


def local_add(folder: Path, texts: list[str], n: int = 200) -> float:
    """Median milliseconds of ``add_memories`` of one memory on a local store."""
    from scene_engine.services.add import add_memories
    from scene_engine.store.store import init_store

    store = init_store(folder)
    times = []
    for i, record in enumerate(memories("local", n, texts)):
        started = time.perf_counter()
        add_memories(store, (json.dumps(record) + "\n").encode("utf-8"))
        times.append((time.perf_counter() - started) * 1000)
        if i == 0:
            times.clear()            # the first opens the index
    return statistics.median(times)


# ------------------------------------------------------------------ 2. fold

def fill(database: str, daemon: GitDaemon, folder: Path, prefix: str, count: int,
         texts: list[str]) -> list[str]:
    """``count`` new stores with FOLD_PER_STORE memories each in their inbox and a fold job
    each queued (``scenes queue --fold``); returns their names."""
    from scene_engine.serving.admin import fold_now

    stores = provision(database, daemon, [f"{prefix}{i:02d}" for i in range(count)])
    serve = Serve(database, daemon, folder / prefix)
    try:
        hammer(serve.port, [("POST", f"/v1/stores/{n}/remember", t,
                             memories(n, FOLD_PER_STORE, texts)) for n, t in stores.items()])
    finally:
        serve.close()
    for name in stores:
        fold_now(database, name)
    return sorted(stores)


def queue_state(database: str, stores: list[str]) -> tuple[int, int, int, int]:
    """(inbox rows, jobs waiting, running, failed) over ``stores``."""
    from scene_engine.serving import admin

    rows = [r for r in admin.queue(database) if r["store"] in stores]
    return (sum(r["inbox"] for r in rows), sum(r["waiting"] for r in rows),
            sum(r["running"] for r in rows), sum(r["failed"] for r in rows))


def bench_fold(database: str, daemon: GitDaemon, folder: Path, stores: list[str],
               workers: int) -> dict:
    """Seconds for ``workers`` processes to fold ``stores``' inboxes, and what they did."""
    procs = []
    for w in range(workers):
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--worker", "0.5", "1.0", "--database",
             database, "--git", daemon.base, "--cache", str(folder / f"cache-{workers}-{w}"),
             "--fold-idle", "600", "--name", f"bench-{workers}-{w}"],
            stdout=subprocess.DEVNULL, stderr=open(folder / f"worker-{workers}-{w}.log", "w")))  # noqa: SIM115
    try:
        first = None
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            inbox, waiting, running, failed = queue_state(database, stores)
            now = time.monotonic()
            if first is None and (running or inbox < len(stores) * FOLD_PER_STORE):
                first = now
            if first is not None and inbox == waiting == running == 0:
                break
            if failed:
                raise RuntimeError(f"{failed} fold jobs failed (logs in {folder})")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"the workers did not finish in 900 s (logs in {folder})")
        seconds = now - first
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
    batches = sum(check_store(daemon, s) for s in stores)
    return {"seconds": seconds, "batches": batches}


def check_store(daemon: GitDaemon, store: str) -> int:
    """The store as the git server holds it: every memory in exactly one live batch. Returns
    its batches. Raises RuntimeError otherwise."""
    import git

    from scene_engine.store.history import expand_seqs, live_batches, trailers

    repo = git.Repo(daemon.repos / f"{store}.git")
    live = live_batches(repo)
    seqs = [s for c in live.values()
            for s in expand_seqs(trailers(c.message).get("Memory-Seqs", ""))]
    if sorted(seqs) != list(range(FOLD_PER_STORE)):
        raise RuntimeError(f"{store}: folded memory seqs {sorted(seqs)}")
    return len(live)


def bench_local_fold(folder: Path, count: int, texts: list[str]) -> dict:
    """The same batches run in one process on local stores, with the same latency."""
    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.services.add import add_memories
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import init_store

    stores = []
    for i in range(count):
        store = init_store(folder / f"local-{i:02d}")
        add_memories(store, "".join(json.dumps(m) + "\n" for m in
                                    memories(f"l{i}", FOLD_PER_STORE, texts)).encode("utf-8"))
        stores.append(store)
    started = time.monotonic()
    batches = sum(len(run_pending(s, Latency(OfflineBackend(), 0.5, 1.0)))
                  for s in stores)
    return {"seconds": time.monotonic() - started, "batches": batches}


# ------------------------------------------------------------------ 3. a single store

PROBE = """
import atexit, sys
PREFIXES = SERVING_MODULES
def said():
    found = sorted({m for m in sys.modules
                    if any(m == p or m.startswith(p + ".") for p in PREFIXES)})
    sys.stderr.write("SERVING-MODULES " + ",".join(found) + "\\n")
atexit.register(said)
sys.argv = ["scenes"] + sys.argv[1:]
from scene_engine.cli.entry import main
main()
""".replace("SERVING_MODULES", repr(SERVING_MODULES))


def single_store(folder: Path, before: str, texts: list[str], runs: int) -> dict:
    """Medians (seconds) of local commands now and at ``before``, and serving modules each
    imported now."""
    old = folder / "before"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", "--detach", str(old),
                    before], check=True, capture_output=True)
    try:
        trees = {"now": ROOT, "before": old}
        stores = {}
        for key in trees:
            root = folder / f"store-{key}"
            run_cli(trees[key], ["--dir", str(root), "init"])
            stores[key] = root
        times = {(k, c): [] for k in trees for c in ("add", "run", "status")}
        imported: dict[str, str] = {}
        for i in range(runs):
            for key in (("now", "before") if i % 2 == 0 else ("before", "now")):
                record = json.dumps(memories(f"s{key}{i}", 1, texts[i:])[0])
                for command, args, stdin in (
                        ("add", ["add", "-"], record),
                        ("run", ["run"], None),
                        ("status", ["status"], None)):
                    took, err = run_cli(trees[key], ["--dir", str(stores[key]), *args], stdin)
                    times[(key, command)].append(took)
                    if key == "now":
                        imported[command] = err
        return {"medians": {k: statistics.median(v) for k, v in times.items()},
                "imported": imported}
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                       capture_output=True)


def run_cli(tree: Path, args: list[str], stdin: str | None = None) -> tuple[float, str]:
    """(seconds, serving modules imported) of one ``scenes`` command run from ``tree``'s code."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=tree)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"scenes {' '.join(args)} at {tree}: {done.stderr[-500:]}")
    line = [x for x in done.stderr.splitlines() if x.startswith("SERVING-MODULES")]
    return took, (line[-1].split(" ", 1)[1] if line and " " in line[-1] else "")


# ------------------------------------------------------------------ report

STARTED = time.monotonic()


def note(what: str) -> None:
    """A progress line on stderr (the report is stdout)."""
    print(f"[{time.monotonic() - STARTED:6.1f} s] {what}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args()
    if missing():
        print(f"## Serving many stores\n\nskipped: {missing()}")
        return 0
    texts = topic_lines()
    count = 12 if args.quick else 50
    missed = []
    folder = Path(tempfile.mkdtemp(prefix="bench-serving-"))
    try:
        with Postgres() as pg, GitDaemon(folder / "git") as daemon:
            remember = bench_remember(pg.create("remember"), daemon, folder, texts,
                                      args.quick)
            note("remember done")
            folds = {}
            for n in (1, 2, 4):          # a database each: a run sees only its own jobs
                database = pg.create(f"fold{n}")
                stores = fill(database, daemon, folder, f"f{n}-", count, texts)
                folds[n] = bench_fold(database, daemon, folder, stores, n)
                note(f"fold with {n} workers: {folds[n]['seconds']:.1f} s")
        local = bench_local_fold(folder, count, texts)
        note(f"local fold: {local['seconds']:.1f} s")
        single = single_store(folder, args.before, texts, 3 if args.quick else 7)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"`python bench/bench_serving.py{' --quick' if args.quick else ''}` — "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, "
          f"{os.cpu_count()} CPUs\n")
    print("| remember (8 clients, one front-end) | calls/s | memories/s | p50 ms | p95 ms |")
    print("| --- | --- | --- | --- | --- |")
    for key, label, per in (("floor", "GET /healthz (HTTP floor)", 0),
                            ("single", "remember, 1 memory a call", 1),
                            ("batched", f"remember, {PER_STORE} memories a call", PER_STORE)):
        wall, times = remember[key]
        rate = len(times) / wall
        print(f"| {label} | {rate:.0f} | {rate * per:.0f} | {percentile(times, 50):.1f} | "
              f"{percentile(times, 95):.1f} |" if per else
              f"| {label} | {rate:.0f} | - | {percentile(times, 50):.1f} | "
              f"{percentile(times, 95):.1f} |")
    print(f"\nBaseline: `add_memories` of one memory in process on a local store, median "
          f"{remember['local_add_ms']:.1f} ms.\n")

    print(f"| fold, {count} stores x {FOLD_PER_STORE} memories, 0.5-1 s a batch | seconds | "
          "batches | batches/s | vs 1 worker |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| local run_pending, one process (baseline) | {local['seconds']:.1f} | "
          f"{local['batches']} | {local['batches'] / local['seconds']:.2f} | - |")
    for n in (1, 2, 4):
        f = folds[n]
        print(f"| {n} worker{'s' if n > 1 else ''} | {f['seconds']:.1f} | {f['batches']} | "
              f"{f['batches'] / f['seconds']:.2f} | {folds[1]['seconds'] / f['seconds']:.2f}x |")
    speedup = folds[1]["seconds"] / folds[4]["seconds"]
    overhead = folds[1]["seconds"] / local["seconds"]
    if speedup < 2.5:
        missed.append(f"4 workers {speedup:.2f}x one (target 2.5x)")
    if overhead > 1.5:
        missed.append(f"one worker {overhead:.2f}x the local run (target 1.5x)")
    print(f"\nOne worker takes {overhead:.2f}x the local run (target at most 1.5x); four fold "
          f"{speedup:.2f}x as fast as one (target at least 2.5x). Every store checked on the "
          "git server: each memory in exactly one live batch.\n")

    print(f"| single store, local command | now (s) | before {args.before} (s) | ratio | "
          "serving modules imported |")
    print("| --- | --- | --- | --- | --- |")
    for command in ("add", "run", "status"):
        now = single["medians"][("now", command)]
        old = single["medians"][("before", command)]
        imported = single["imported"].get(command) or "none"
        print(f"| scenes {command} | {now:.3f} | {old:.3f} | {now / old:.2f} | {imported} |")
        if imported != "none":
            missed.append(f"scenes {command} imports {imported}")
        if now / old > 1.10:
            missed.append(f"scenes {command} {now / old:.2f}x before (target 1.10x)")
    print("\n" + ("targets missed: " + "; ".join(missed) if missed else "all targets met"))
    return 1 if missed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
    else:
        sys.exit(main())
