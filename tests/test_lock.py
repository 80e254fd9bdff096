"""The store lock (DESIGN.md "A batch" step 1): waits, names the holder, survives a kill.

Commands run as real subprocesses, because the lock is between processes. The wait is set with
``SCENE_ENGINE_LOCK_TIMEOUT`` so a busy store fails in about a second, not a minute.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import git
import pytest

from scene_engine.services.add import add_memories
from scene_engine.store.config import ConfigError
from scene_engine.store.history import expand_seqs, live_batches, trailers
from scene_engine.store.lock import LockBusyError, lock_timeout, store_lock
from scene_engine.store.store import init_store, open_store

CLI = [sys.executable, "-c", "from scene_engine.cli import main; main()"]
HOLDER = ("import sys, time\n"
          "from scene_engine.store.lock import store_lock\n"
          "with store_lock(sys.argv[1]):\n"
          "    print('held', flush=True)\n"
          "    time.sleep(120)\n")
WORDS = ("garden chess cooking travel music running reading coding painting sailing finance "
         "family health movies").split()


@pytest.fixture(autouse=True)
def default_lock_timeout(monkeypatch):
    """These tests set the lock timeout themselves; none comes from the environment."""
    monkeypatch.delenv("SCENE_ENGINE_LOCK_TIMEOUT", raising=False)


def make_store(tmp_path: Path, count: int) -> Path:
    """A store with ``count`` pending memories on a handful of topics."""
    root = tmp_path / "store"
    store = init_store(root)
    rows = [{"id": f"m{i:04d}", "content": f"{WORDS[i % len(WORDS)]} {WORDS[i * 7 % 13]} note {i}",
             "created_at": 1_700_000_000 + 3600 * i} for i in range(count)]
    add_memories(store, "\n".join(json.dumps(r) for r in rows).encode())
    return root


def scenes(root: Path, *args: str, timeout: float | None = None, **popen):
    """Start ``scenes --dir root ARGS`` as a subprocess (lock wait ``timeout`` seconds)."""
    env = dict(os.environ)
    if timeout is not None:
        env["SCENE_ENGINE_LOCK_TIMEOUT"] = str(timeout)
    return subprocess.Popen([*CLI, "--dir", str(root), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def hold_lock(root: Path) -> subprocess.Popen:
    """A subprocess holding the store lock until it is killed."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root / ".scene-engine" / "lock")],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def live_seqs(root: Path) -> list[int]:
    seqs = []
    for commit in live_batches(git.Repo(root)).values():
        seqs += expand_seqs(trailers(commit.message).get("Memory-Seqs", ""))
    return seqs


def doctor_problems(root: Path) -> list[str]:
    from scene_engine.services.doctor import check_store

    return check_store(open_store(root))


@pytest.mark.slow
def test_a_second_run_waits_then_names_the_holder(tmp_path):
    root = make_store(tmp_path, 10)
    holder = hold_lock(root)
    try:
        started = time.monotonic()
        out, err = scenes(root, "run", timeout=1.5).communicate(timeout=60)
        assert time.monotonic() - started >= 1.5, "the run gave up without waiting"
        busy = scenes(root, "run", timeout=1.5)
        assert busy.wait(timeout=60) == 1
    finally:
        holder.kill()
        holder.wait()
    assert f"pid {holder.pid}" in err and "busy" in err, err
    assert "waited 1.5 s" in err, err            # the wait it was given, not a wall clock
    assert open_store(root).load_state().pending == 10          # nothing was processed


@pytest.mark.slow
def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    root = make_store(tmp_path, 10)
    holder = hold_lock(root)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    run = scenes(root, "run", timeout=2)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert open_store(root).load_state().pending == 0
    assert doctor_problems(root) == []


@pytest.mark.slow
def test_two_runs_at_once_never_process_a_memory_twice(tmp_path):
    root = make_store(tmp_path, 300)
    runs = [scenes(root, "run", "--batch-size", "4") for _ in range(2)]
    outcomes = [(run.wait(timeout=120), run.stdout.read(), run.stderr.read()) for run in runs]
    for code, _, err in outcomes:
        assert code == 0 or (code == 1 and "busy" in err), err
    assert sorted(live_seqs(root)) == list(range(300))
    assert doctor_problems(root) == []
    # Every committed batch was reported by exactly one of the two runs.
    made = [line.split(":")[0] for _, _, err in outcomes for line in err.splitlines()
            if line.startswith("batch ")]
    assert len(made) == len(set(made)) == len(live_batches(git.Repo(root)))


def test_the_lock_is_reentrant_within_one_process(tmp_path):
    path = tmp_path / "lock"
    with store_lock(path, timeout=0.5), store_lock(path, timeout=0.5):
        assert (tmp_path / "lock.pid").read_text(encoding="utf-8") == str(os.getpid())
    with store_lock(path, timeout=0.5):      # and free again afterwards
        pass


def test_an_in_process_wait_raises_lock_busy_with_the_pid(tmp_path):
    root = make_store(tmp_path, 1)
    holder = hold_lock(root)
    try:
        with pytest.raises(LockBusyError, match=f"pid {holder.pid}"), \
                store_lock(root / ".scene-engine" / "lock", timeout=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_busy_lock_is_waited_for_as_long_as_asked(tmp_path):
    # What a person notices is the wait itself, not its wording: a lock given up at once
    # (acquire(timeout=0)) fails here however its message reads.
    root = make_store(tmp_path, 1)
    holder = hold_lock(root)
    try:
        started = time.monotonic()
        with pytest.raises(LockBusyError), \
                store_lock(root / ".scene-engine" / "lock", timeout=1.0):
            pass
        assert time.monotonic() - started >= 1.0
    finally:
        holder.kill()
        holder.wait()


def test_a_waiting_run_goes_on_once_the_holder_lets_go(tmp_path):
    root = make_store(tmp_path, 1)
    holder = hold_lock(root)
    got: list[float] = []

    def wait_for_it() -> None:
        with store_lock(root / ".scene-engine" / "lock", timeout=60):
            got.append(time.monotonic())
    waiter = threading.Thread(target=wait_for_it)
    started = time.monotonic()
    waiter.start()
    time.sleep(1.0)                  # the thread is at the lock now, waiting for it
    assert not got, "the lock was taken while another process held it"
    holder.kill()
    holder.wait()
    waiter.join(timeout=60)
    assert got and got[0] - started >= 1.0


def test_lock_timeout_comes_from_the_environment(monkeypatch, tmp_path):
    root = make_store(tmp_path, 1)
    monkeypatch.setenv("SCENE_ENGINE_LOCK_TIMEOUT", "2.5")
    assert lock_timeout() == 2.5
    monkeypatch.setenv("SCENE_ENGINE_LOCK_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="SCENE_ENGINE_LOCK_TIMEOUT"):
        lock_timeout()
    run = scenes(root, "run")
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and "SCENE_ENGINE_LOCK_TIMEOUT" in err


@pytest.mark.parametrize("lock", ["index.lock", "HEAD.lock"])
def test_a_lock_a_live_git_holds_open_is_never_removed_even_in_the_stores_own_repo(
        tmp_path, lock):
    root = make_store(tmp_path, 2)
    path = root / ".git" / lock
    holder = subprocess.Popen([sys.executable, "-c",
                               f"import sys, time\nf = open({str(path)!r}, 'w')\n"
                               "print('held', flush=True)\ntime.sleep(60)\n"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = run_cli(root, "add", "-", stdin='{"content": "Parked on level 3."}\n')
        assert busy.returncode == 1, busy.stderr
        assert lock in busy.stderr and "Traceback" not in busy.stderr
        assert path.exists()                        # the other git's lock is still its own
        assert json.loads(run_cli(root, "status", "--json").stdout)["memories"] == 2
    finally:
        holder.kill()
        holder.wait()
    # A lock no process holds (a git that died) is cleared by the next write.
    done = run_cli(root, "add", "-", stdin='{"content": "Parked on level 3."}\n')
    assert done.returncode == 0, done.stderr
    assert not path.exists()


def run_cli(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """``scenes --dir root ARGS`` to its end."""
    return subprocess.run([*CLI, "--dir", str(root), *args], input=stdin, text=True,
                          capture_output=True, timeout=120)
