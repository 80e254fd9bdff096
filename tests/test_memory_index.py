"""The memory journal in the search index: found as people ask, kept in step incrementally,
rebuilt by reindex, and a forgotten memory never returned."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.index.scenes import for_store
from scene_engine.services.add import add_memories
from scene_engine.store.store import init_store, open_store

runner = CheckedRunner()


def memories(*texts: str, day: int = 1) -> bytes:
    return "\n".join(json.dumps({"id": f"d{day}-{i}", "content": text,
                                 "created_at": f"2024-03-{day:02d}T10:00:00Z"})
                     for i, text in enumerate(texts)).encode()


def search(root: Path, query: str, *more: str) -> list[dict]:
    result = runner.invoke(app, ["--dir", str(root), "search", query, "--memories", "--json",
                                 *more])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def root(tmp_path) -> Path:
    store = init_store(tmp_path / "store")
    add_memories(store, memories(
        "Lena recommended the oat flat white at a café on Wukang Road.",
        "我妈妈住在杭州，每周日视频。",
        "The Kafka migration shipped in March after two delays.",
        "Adopted a cat named 年糕 from the shelter."))
    return store.root


def test_memories_are_found_as_people_ask(root):
    hits = search(root, "coffee with Lena")        # only Lena matches; "with" never decides
    assert [h["id"] for h in hits] == ["d1-0"] and hits[0]["fallback"]
    assert [h["id"] for h in search(root, "Lena cafe")] == ["d1-0"]
    assert [h["id"] for h in search(root, "我妈妈住在哪里？")] == ["d1-1"]
    hit = search(root, "migrating")[0]
    assert hit["id"] == "d1-2" and hit["created_at"].startswith("2024-03-01")
    assert hit["content"].startswith("The Kafka migration") and hit["seq"] == 2
    text = runner.invoke(app, ["--dir", str(root), "search", "年糕", "--memories"]).output
    assert text.startswith("d1-3 (2024-03-01): Adopted a cat named 年糕")


def test_added_memories_are_indexed_incrementally(root):
    store = open_store(root)
    with for_store(store) as index:
        assert not index.sync().changed                  # add indexed them already
    add_memories(store, memories("Bought a used Brompton bike.", day=2))
    with for_store(store) as index:
        report = index.sync()
        assert (report.memories_added, report.memories_removed) == (0, 0)   # add did it
        assert [h.id for h in index.search_memories("brompton")] == ["d2-0"]


def test_a_forgotten_memory_is_never_returned(root):
    assert runner.invoke(app, ["--dir", str(root), "run"]).exit_code == 0
    assert [h["id"] for h in search(root, "Kafka")] == ["d1-2"]
    trace = json.loads(runner.invoke(app, ["--dir", str(root), "trace", "d1-2",
                                           "--json"]).output)
    batch = next(e["batch"] for e in trace["events"] if e["kind"] == "batch")
    result = runner.invoke(app, ["--dir", str(root), "undo", str(batch), "--forget"])
    assert result.exit_code == 0, result.output
    assert search(root, "Kafka") == []
    assert search(root, "年糕 OR Kafka OR 杭州 OR Lena")   # the others are still there


def test_reindex_rebuilds_the_journal_and_a_deleted_index_comes_back_whole(root):
    result = runner.invoke(app, ["--dir", str(root), "reindex"])
    assert result.exit_code == 0 and "and 4 memories" in result.output
    for path in (root / ".scene-engine").glob("index.sqlite*"):
        path.unlink()
    assert [h["id"] for h in search(root, "Brompton OR Kafka")] == ["d1-2"]


def test_a_torn_segment_is_reported_and_the_rest_still_found(root):
    segment = root / "memories" / "00000.jsonl"
    for path in (root / ".scene-engine").glob("index.sqlite*"):
        path.unlink()
    segment.write_text(segment.read_text() + '{"seq": 4, "id": "torn", "con\n')
    result = runner.invoke(app, ["--dir", str(root), "reindex"])
    assert "memories/00000.jsonl line 5 is not a whole memory record" in result.output
    assert "reindexed 0 scenes and 4 memories" in result.output      # the rest still found
    assert "Traceback" not in result.output


def test_the_quick_door_searches_memories_like_the_full_command_line(root):
    argv = ["--dir", str(root), "search", "杭州", "--memories"]
    full = runner.invoke(app, argv)
    fresh = subprocess.run([str(Path(sys.executable).with_name("scenes")), *argv],
                           capture_output=True, text=True, timeout=60)
    assert fresh.returncode == full.exit_code == 0 and fresh.stdout == full.stdout
    assert fresh.stdout.startswith("d1-1")


def test_the_index_knows_which_memories_the_assistant_said(tmp_path):
    store = init_store(tmp_path / "store")
    add_memories(store, "\n".join(json.dumps(r) for r in [
        {"id": "u", "content": "I live in Porto.", "role": "user"},
        {"id": "a", "content": "As an AI I live nowhere.", "role": "assistant"},
        {"id": "n", "content": "No role given."}]).encode())
    with for_store(store) as index:
        index.sync()
        found = {m.id: m.seq for m in index.memories_by_id(["u", "a", "n"])}
        roles = index.memory_roles(list(found.values()))
    assert {i: roles.get(seq) for i, seq in found.items()} == {
        "u": "user", "a": "assistant", "n": None}
