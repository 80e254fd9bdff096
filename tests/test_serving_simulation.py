"""The serving simulation with faults (issue 24, "Prove it"): M stores, N worker processes, a
producer remembering over HTTP throughout, and faults at seeded moments:

- a worker killed (SIGKILL) in the middle of a job, after its commit (nothing pushed), and
  after its push (inbox rows not dropped, job not marked done);
- a worker stopped (SIGSTOP) past its lease and resumed;
- a person pushing a hand edit, and an undo made in their own clone;
- the git server down for a few seconds; Postgres restarted.

At the end, on every store as the git server holds it: every remembered memory is in exactly
one live batch, no inbox row is left, batch numbers run 1..N once each, first-parent history
has no merge, and ``doctor`` is clean. Seeded by ``SCENE_ENGINE_SIM_SEED``; the seed and the
events so far are in every failure message.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from servers import GitDaemon, Postgres, missing
from test_serving import PERSON, SCENES, Http, provision

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=missing() or "")]

SEED = int(os.environ.get("SCENE_ENGINE_SIM_SEED", "20261202"))
STORES, WORKERS, MEMORIES = 4, 3, 240
STALLED_AFTER = 6.0
FAULT_WORKER = str(Path(__file__).with_name("fault_worker.py"))


class Workers:
    """The worker processes, each with a clone cache of its own."""

    def __init__(self, database: str, daemon: GitDaemon, folder: Path, events: list[str]):
        self.database, self.daemon, self.folder, self.events = database, daemon, folder, events
        self.procs: dict[str, subprocess.Popen] = {}
        self.points: dict[str, str] = {}      # worker -> its fault point
        self.signalled: set[str] = set()      # killed or stopped by the test
        self.ended: dict[str, int] = {}       # worker -> exit code, as seen
        self.made = 0

    def start(self, point: str = "none", nth: int = 1) -> str:
        self.made += 1
        name = f"w{self.made}"
        self.procs[name] = subprocess.Popen(
            [sys.executable, FAULT_WORKER, point, str(nth), "--database", self.database,
             "--git", self.daemon.base, "--cache", str(self.folder / name), "--batches", "3",
             "--fold-idle", "2", "--stalled-after", str(STALLED_AFTER), "--name", name],
            stdout=subprocess.DEVNULL, stderr=open(self.folder / f"{name}.log", "w"))  # noqa: SIM115
        self.points[name] = point
        self.events.append(f"start {name} ({point} {nth})")
        return name

    def busy(self) -> list[str]:
        """Workers holding a store's clone now (in a job): their lock files are held."""
        from filelock import FileLock, Timeout

        found = []
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                continue
            for lock in (self.folder / name).glob("*.lock"):
                probe = FileLock(str(lock))
                try:
                    probe.acquire(timeout=0)
                    probe.release()
                except Timeout:
                    found.append(name)
                    break
        return found

    def alive(self) -> list[str]:
        for name, proc in self.procs.items():
            if proc.poll() is not None and name not in self.ended:
                self.ended[name] = proc.returncode
                self.events.append(f"{name} ended ({proc.returncode})")
        return [n for n, p in self.procs.items() if p.poll() is None]

    def plain(self) -> list[str]:
        """Live workers without a fault point of their own (the test kills these)."""
        return [n for n in self.alive() if self.points[n] == "none"]

    def self_killed(self) -> set[str]:
        """The fault points at which a worker killed itself."""
        self.alive()
        return {self.points[n] for n, code in self.ended.items()
                if code == -signal.SIGKILL and n not in self.signalled}

    def signal(self, name: str, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.procs[name].pid, sig)
        self.signalled.add(name)
        self.events.append(f"{signal.Signals(sig).name} {name}")

    def stop_all(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Producer(threading.Thread):
    """Remembers ``MEMORIES`` memories over HTTP into random stores, 1-4 at a call, retrying
    a call that failed (Postgres restarting) with the same ids until it is taken."""

    def __init__(self, http: Http, tokens: dict[str, str], rng: random.Random):
        super().__init__(daemon=True)
        self.http, self.tokens, self.rng = http, tokens, rng
        self.taken: dict[str, list[str]] = {s: [] for s in tokens}
        self.retries = 0
        self.error: str | None = None

    def run(self) -> None:
        stores = sorted(self.tokens)
        n = 0
        try:
            while n < MEMORIES:
                store = self.rng.choice(stores)
                size = min(self.rng.randint(1, 4), MEMORIES - n)
                rows = [{"id": f"{store}-m{n + k}",
                         "content": f"{TOPICS[(n + k) % len(TOPICS)]} (note {n + k}).",
                         "created_at": f"2026-{1 + (n + k) // 28 % 12:02d}-"
                                       f"{1 + (n + k) % 28:02d}T09:00:00Z"}
                        for k in range(size)]
                self._send(store, rows)
                self.taken[store] += [r["id"] for r in rows]
                n += size
                time.sleep(self.rng.uniform(0.02, 0.2))
        except Exception as exc:          # the test fails with it
            self.error = repr(exc)

    def _send(self, store: str, rows: list[dict]) -> None:
        import httpx

        deadline = time.monotonic() + 60
        while True:
            try:
                got = self.http.call("POST", f"/v1/stores/{store}/remember",
                                     self.tokens[store], rows)
            except httpx.TransportError:
                got = None
            if got is not None and got.status_code == 200:
                return
            if got is not None and got.status_code != 503:     # only "unavailable" is retried
                raise AssertionError(f"remember refused: {got.status_code} {got.text}")
            self.retries += 1
            assert time.monotonic() < deadline, "remember kept failing for 60 s"
            time.sleep(0.5)


TOPICS = ["Went hiking in the hills with Maya", "Cooked a lentil curry for dinner",
          "Fixed the bike's rear brake", "Read a chapter of the Dune novel",
          "Practised the cello scales", "Planned the trip to Lisbon in May",
          "Swam forty lengths at the pool", "Repotted the basil on the balcony"]


def person_pushes(daemon: GitDaemon, store: str, folder: Path, what: str, events: list) -> None:
    """A person's clone, an edit (``what``: "edit" or "undo"), a push; again from a fresh
    clone when the push is refused (a worker pushed first)."""
    for attempt in range(8):
        clone = folder / f"{store}-{what}-{attempt}"
        subprocess.run(["git", "clone", "-q", f"{daemon.base}{store}.git", str(clone)],
                       check=True, timeout=60)
        if what == "edit":
            (clone / "scenes" / "by-hand.md").write_text(
                "---\nsummary: Notes I keep by hand.\n---\nThe spare key is under the pot.\n",
                "utf-8")
            subprocess.run(["git", *PERSON, "add", "-A"], cwd=clone, check=True)
            subprocess.run(["git", *PERSON, "commit", "-qm", "a note by hand"], cwd=clone,
                           check=True)
        else:
            done = subprocess.run([SCENES, "--dir", str(clone), "undo"], capture_output=True,
                                  text=True, timeout=120)
            if done.returncode != 0:
                events.append(f"person undo on {store} refused: {done.stderr.strip()[:80]}")
                time.sleep(1)
                continue
        pushed = subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=clone,
                                capture_output=True, text=True, timeout=60)
        if pushed.returncode == 0:
            events.append(f"person {what} pushed to {store} (try {attempt + 1})")
            return
        time.sleep(0.5)
    events.append(f"person {what} on {store}: every push refused")


def wait_quiet(database: str, http: Http, tokens: dict[str, str], seconds: float) -> dict:
    """Until no store has inbox rows, waiting or running jobs, or pending memories."""
    from scene_engine.serving import database as db

    deadline = time.monotonic() + seconds
    last: dict = {}
    while time.monotonic() < deadline:
        with db.connect(database) as conn:
            rows = {r["store"]: r for r in db.queue_view(conn, "scenes:fold")}
        busy = [s for s, r in rows.items() if r["inbox"] or r["waiting"] or r["running"]]
        if not busy:
            pending = {s: http.call("GET", f"/v1/stores/{s}/status", t).json()["pending"]
                       for s, t in tokens.items()}
            if not any(pending.values()):
                return rows
            last = {"pending": pending}
        else:
            last = {s: rows[s] for s in busy}
        time.sleep(1)
    raise AssertionError(f"not quiet after {seconds:g} s: {last}")


def check_store(daemon: GitDaemon, store: str, taken: list[str], folder: Path) -> dict:
    """The end checks on ``store`` as the server holds it; returns its figures."""
    import git

    from scene_engine.services.doctor import check_store as doctor
    from scene_engine.store.history import expand_seqs, live_batches, trailers
    from scene_engine.store.memories import Journal
    from scene_engine.store.store import open_store

    clone = folder / f"final-{store}"
    subprocess.run(["git", "clone", "-q", f"{daemon.base}{store}.git", str(clone)], check=True)
    repo = git.Repo(clone)
    by_seq = {m.seq: m.id for m in Journal(clone / "memories").intact()[0]}
    live = live_batches(repo)
    folded = Counter(by_seq[s] for c in live.values()
                     for s in expand_seqs(trailers(c.message).get("Memory-Seqs", "")))
    assert sorted(folded) == sorted(taken), "a memory is missing or was never remembered"
    assert max(folded.values()) == 1, [i for i, n in folded.items() if n > 1]
    numbers = [int(trailers(c.message)["Batch"]) for c in repo.iter_commits(first_parent=True)
               if "Batch" in trailers(c.message)]
    assert sorted(numbers) == list(range(1, len(numbers) + 1)), sorted(numbers)
    assert not list(repo.iter_commits(merges=True))
    problems = doctor(open_store(clone))
    assert problems == [], problems
    return {"memories": len(taken), "batches": len(numbers), "live": len(live)}


def test_simulation_with_faults_loses_no_memory_and_folds_none_twice(tmp_path):
    rng = random.Random(SEED)
    events: list[str] = [f"seed {SEED}"]
    started = time.monotonic()
    with Postgres() as pg, GitDaemon(tmp_path / "git") as daemon:
        database = pg.create("sim")
        stores = [f"sim-{i}" for i in range(STORES)]
        tokens = {s: provision(database, daemon, s) for s in stores}
        http = Http(database, daemon, tmp_path / "readers")
        workers = Workers(database, daemon, tmp_path, events)
        try:
            workers.start("after-commit", 2)
            workers.start("after-push", 2)
            workers.start()
            producer = Producer(http, tokens, rng)
            producer.start()
            _faults(rng, workers, daemon, pg, tmp_path, stores, events)
            producer.join(timeout=180)
            assert producer.error is None, (producer.error, events)
            while len(workers.alive()) < WORKERS:
                workers.start()
            rows = wait_quiet(database, http, tokens, 240)
            assert workers.self_killed() == {"after-commit", "after-push"}, \
                "a worker's own fault point was never reached"
            figures = {s: check_store(daemon, s, producer.taken[s], tmp_path) for s in stores}
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nevents: {events}") from exc
        finally:
            workers.stop_all()
            http.close()
    rejected = sum(r["rejected_pushes"] or 0 for r in rows.values())
    summary = {"seconds": round(time.monotonic() - started, 1),
               "memories": sum(f["memories"] for f in figures.values()),
               "batches": sum(f["batches"] for f in figures.values()),
               "rejected_pushes": rejected, "remember_retries": producer.retries,
               "workers_started": workers.made, "events": events}
    print(json.dumps(summary))
    report = os.environ.get("SCENE_ENGINE_SIM_REPORT")
    if report:
        Path(report).write_text(json.dumps(summary, indent=2), "utf-8")
    assert summary["memories"] == MEMORIES


def _faults(rng, workers: Workers, daemon: GitDaemon, pg: Postgres, folder: Path,
            stores: list[str], events: list[str]) -> None:
    """The faults, in a seeded order, a few seconds apart, workers replaced as they die."""
    def keep_workers() -> None:
        while len(workers.alive()) < WORKERS:
            workers.start()

    def kill_busy() -> None:
        for _ in range(40):                  # a worker in the middle of a job
            busy = sorted(set(workers.busy()) & set(workers.plain()))
            if busy:
                workers.signal(rng.choice(busy), signal.SIGKILL)
                return
            time.sleep(0.1)
        workers.signal(rng.choice(workers.plain()), signal.SIGKILL)

    def stop_busy() -> None:
        busy = sorted(set(workers.busy()) & set(workers.plain())) or workers.plain()
        name = rng.choice(busy)
        workers.signal(name, signal.SIGSTOP)
        keep_workers()
        time.sleep(STALLED_AFTER + 5)
        workers.signal(name, signal.SIGCONT)

    def git_down() -> None:
        daemon.stop()
        events.append("git daemon down")
        time.sleep(3)
        daemon.start()
        events.append("git daemon up")

    def postgres_restart() -> None:
        pg.restart()
        events.append("postgres restarted")

    def person_edit() -> None:
        person_pushes(daemon, rng.choice(stores), folder / "person", "edit", events)

    def person_undo() -> None:
        person_pushes(daemon, rng.choice(stores), folder / "person", "undo", events)

    faults = [kill_busy, stop_busy, git_down, postgres_restart, person_edit, person_undo,
              kill_busy]
    rng.shuffle(faults)
    for fault in faults:
        time.sleep(rng.uniform(2, 4))
        events.append(f"fault {fault.__name__} at {time.strftime('%X')}")
        fault()
        keep_workers()
