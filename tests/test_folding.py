"""Folding in the background (``folding.FoldWorker``, ``scenes watch --fold``): the triggers,
a failed batch kept pending and retried at the next trigger only, and the command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from scene_engine.offline.backend import OfflineBackend
from scene_engine.services.add import add_memories
from scene_engine.services.folding import FoldWorker
from scene_engine.store.store import init_store, open_store

ENTRY = "from scene_engine.cli.entry import main; main()"


def memories(n: int, start: int = 0) -> bytes:
    return "\n".join(json.dumps({"id": f"m{i}", "content": f"Swam {i} lengths at the pool.",
                                 "created_at": f"2024-02-{i % 28 + 1:02d}T08:00:00Z"})
                     for i in range(start, start + n)).encode()


class Broken:
    """A backend whose every batch fails (a model that is down)."""

    name = "broken"

    def run(self, job):
        raise RuntimeError("model endpoint refused the connection")


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def newest(store) -> float:
    return max(p.stat().st_mtime for p in store.memories_dir.glob("*.jsonl"))


def test_triggers_count_and_idle_time(store):
    worker = FoldWorker(store, OfflineBackend, fold_every=5, fold_idle=60)
    assert not worker.due()                               # nothing pending
    add_memories(store, memories(3))
    added = newest(store)
    assert not worker.due(now=added + 1)                  # 3 of 5, and just added
    assert worker.due(now=added + 61)                     # idle long enough
    add_memories(store, memories(2, start=3))
    assert worker.due(now=newest(store))                  # 5 pending: at once
    assert worker.run_once() == 1 and store.load_state().pending == 0
    assert not worker.due(now=newest(store) + 1000)


def test_a_failed_fold_keeps_its_memories_and_waits_for_the_next_trigger(store):
    events = []
    worker = FoldWorker(store, Broken, fold_every=2, fold_idle=60, on_event=events.append)
    add_memories(store, memories(2))
    head = subprocess.run(["git", "-C", str(store.root), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout
    assert worker.due() and worker.run_once() == 0
    assert store.load_state().pending == 2                # nothing lost, nothing written
    assert subprocess.run(["git", "-C", str(store.root), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout == head
    assert "refused the connection" in worker.stats.failures[0]
    assert any("stay pending" in e for e in events)
    assert not worker.due()                               # no spinning on the failure
    assert worker.due(now=time.time() + 61)               # ... but tried again when idle
    worker.run_once()                                     # failing again: waits longer
    assert not worker.due(now=time.time() + 61) and worker.due(now=time.time() + 121)
    assert "next try when a memory is added or in 120 s" in events[-1]
    time.sleep(0.01)
    add_memories(store, memories(1, start=2))             # or when something new comes
    os.utime(sorted(store.memories_dir.glob("*.jsonl"))[-1],
             (time.time() + 1, time.time() + 1))
    assert worker.due()
    worker.backend = OfflineBackend
    assert worker.run_once() == 1 and store.load_state().pending == 0


def test_the_worker_thread_folds_what_another_process_adds(store):
    with FoldWorker(store, OfflineBackend, fold_every=3, fold_idle=600) as worker:
        subprocess.run([sys.executable, "-c", ENTRY, "--dir", str(store.root), "add", "-"],
                       input=memories(3), check=True, capture_output=True)
        deadline = time.monotonic() + 20
        while store.load_state().pending and time.monotonic() < deadline:
            time.sleep(0.05)
    assert store.load_state().pending == 0 and worker.stats.batches == 1


@pytest.mark.slow
def test_watch_fold_folds_in_the_background_until_ctrl_c(store):
    store.config_path.write_text(store.config_path.read_text("utf-8")
                                 .replace("fold_idle = 300.0", "fold_idle = 1.0"), "utf-8")
    watch = subprocess.Popen([sys.executable, "-c", ENTRY, "--dir", str(store.root), "watch",
                              "--fold"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        add_memories(store, memories(2))
        deadline = time.monotonic() + 30
        while open_store(store.root).load_state().pending and time.monotonic() < deadline:
            time.sleep(0.1)
        assert open_store(store.root).load_state().pending == 0
    finally:
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=30)
    assert "folding when 20 memories are pending or after 1 s" in err
    assert "batch 1: 2 memories folded" in err


def test_watch_fold_joins_a_queued_memory_as_soon_as_the_store_is_free(store):
    # An agent's memory queued while a batch held the store; a memory was added moments ago, so
    # no fold trigger fires for minutes (fold_idle 300 s): the join must not wait for one.
    from scene_engine.store import inbox
    from scene_engine.store.lock import store_lock

    add_memories(store, memories(1))
    watch = subprocess.Popen([sys.executable, "-c", ENTRY, "--dir", str(store.root), "watch",
                              "--fold"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        with store_lock(store.lock_path):          # busy: the memory waits in the inbox
            inbox.put(store, b'{"id": "late-1", "content": "Booked the dentist for 3 March."}')
        deadline = time.monotonic() + 60
        while inbox.queued(store) and time.monotonic() < deadline:
            time.sleep(0.1)
        found = subprocess.run([sys.executable, "-c", ENTRY, "--dir", str(store.root), "search",
                                "dentist", "--memories", "--json"], capture_output=True,
                               text=True, timeout=60)
    finally:
        watch.send_signal(signal.SIGINT)
        watch.communicate(timeout=30)
    assert inbox.queued(store) == 0, "the queued memory never joined the journal"
    assert [hit["id"] for hit in json.loads(found.stdout)] == ["late-1"]
    assert open_store(store.root).load_state().pending == 2       # joined, not folded early
