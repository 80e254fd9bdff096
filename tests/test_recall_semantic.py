"""Recall by meaning with the optional semantic extra, and exactly as before without it
(issue 26)."""

from __future__ import annotations

import json

import pytest

from scene_engine.index import dense
from scene_engine.recall.assemble import recall
from scene_engine.services.add import add_memories
from scene_engine.store.store import init_store

ROWS = [
    ("a1", "2024-01-03", "I spent my whole childhood in Norway, near Bergen."),
    ("a2", "2024-02-11", "Bought new running shoes, the old ones had holes."),
    ("a3", "2024-03-09", "Baked sourdough again, the crust cracked nicely."),
    ("a4", "2024-04-21", "The quarterly report is due on Friday."),
    ("a5", "2024-05-30", "小时候在挪威长大，冬天特别长。"),
]
# No word of the question is in the memory that answers it (a1): only meaning finds it.
QUESTION = "Which country did I grow up in?"

needs_extra = pytest.mark.skipif(
    not dense.available(),
    reason='the semantic extra is not installed (pip install -e ".[semantic]"): '
           "recall by meaning is not tested")


def _store(tmp_path):
    store = init_store(tmp_path / "store")
    add_memories(store, "\n".join(json.dumps(
        {"id": i, "created_at": f"{day}T10:00:00Z", "content": text})
        for i, day, text in ROWS).encode())
    return store


def test_without_the_extra_recall_uses_words_only_and_writes_no_vectors(tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(dense, "available", lambda: False)
    store = _store(tmp_path)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" not in found.text
    assert found.warning is None
    assert not (store.meta_dir / "vectors" / dense.FILE_NAME).exists()


def test_turned_off_by_the_environment_it_is_words_only(tmp_path, monkeypatch):
    monkeypatch.setenv("SCENE_ENGINE_SEMANTIC", "off")
    store = _store(tmp_path)
    assert "Norway" not in recall(store, QUESTION, budget=1000).text
    assert not (store.meta_dir / "vectors" / dense.FILE_NAME).exists()


@needs_extra
def test_with_the_extra_a_memory_is_found_by_meaning(tmp_path):
    store = _store(tmp_path)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" in found.text and found.warning is None
    assert any(p.memory == "a1" for p in found.passages)
    zh = recall(store, "我是在哪个国家长大的？", budget=1000)
    assert "挪威" in zh.text


@needs_extra
def test_with_the_extra_scenes_add_writes_the_vectors_and_git_never_sees_them(tmp_path):
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    from scene_engine.store.store import init_store as init

    store = init(tmp_path / "store")
    source = tmp_path / "m.jsonl"
    source.write_text(json.dumps({"id": "x1", "content": ROWS[0][2]}) + "\n", "utf-8")
    assert CheckedRunner().invoke(app, ["--dir", str(store.root), "add", str(source)]
                                  ).exit_code == 0
    assert (store.meta_dir / "vectors" / dense.FILE_NAME).exists()
    import subprocess
    status = subprocess.run(["git", "-C", str(store.root), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert "vectors" not in status


@needs_extra
def test_with_the_extra_the_same_question_gives_the_same_answer(tmp_path):
    store = _store(tmp_path)
    first = recall(store, QUESTION, budget=1000).text
    assert recall(store, QUESTION, budget=1000).text == first


@needs_extra
def test_with_the_extra_a_corrupt_vectors_file_costs_nothing(tmp_path):
    store = _store(tmp_path)
    path = store.meta_dir / "vectors" / dense.FILE_NAME
    for extra in path.parent.glob(dense.FILE_NAME + "-*"):
        extra.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database" * 100)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" in found.text          # made again from the journal


@needs_extra
def test_with_the_extra_a_scoped_recall_never_shows_another_scopes_memory(tmp_path):
    store = init_store(tmp_path / "store")
    add_memories(store, "\n".join(json.dumps(row) for row in [
        {"id": "s1", "content": "I grew up in Norway.", "scope": "agent-a",
         "created_at": "2024-01-01T00:00:00Z"},
        {"id": "s2", "content": "Childhood summers were in Portugal.", "scope": "agent-b",
         "created_at": "2024-01-02T00:00:00Z"}]).encode())
    found = recall(store, QUESTION, budget=1000, scope="agent-a")
    assert "Portugal" not in found.text
