"""At most one new scene a batch, after two existing scenes were read (seed 001: 每次批处理最多
新增 1 个场景; DESIGN.md "A batch" step 5; issue 21 item 8), for every backend; the young-store
allowance only when a person sets ``new_scenes_per_batch`` above 1.

The oracle is the rule itself, read from git: the scene files a batch commit adds, less those
that continue a scene the same commit deleted (a rename, a merge into a new name), are its new
scenes. litellm talks HTTP to tests/fakellm.py for the model backend.
"""

from __future__ import annotations

import json

import git
import pytest
import yaml
from fakellm import call, reply
from test_batch_llm import (
    FAMILY,
    HOBBIES,
    WORK,
    assert_committed_batch,
    assert_nothing_written,
    backend,
    last_commit,
    make_store,
    model_scene,
    snapshot,
    tool_result,
    user_messages,
    with_settings,
)
from test_offline import make_memories

from scene_engine.batch.contract import BatchError
from scene_engine.batch.transaction import build_job, run_batch
from scene_engine.offline.backend import OfflineBackend
from scene_engine.services.add import add_memories
from scene_engine.services.run import run_pending
from scene_engine.store.config import ConfigError, load_config
from scene_engine.store.store import init_store

TOPICS = [("cooking", "Alice began baking sourdough bread in May 2024."),
          ("garden", "Alice planted tomatoes and basil on her balcony."),
          ("travel", "Alice spent a week walking around Porto in June 2024.")]
STARTER = "Bought a sourdough starter named Bubbles."


def new_scenes_in(repo: git.Repo, commit) -> list[str]:
    """Scene files ``commit`` adds that continue no scene file it deletes (its new scenes)."""
    status = repo.git.diff_tree("-z", "--no-renames", "--name-status", "-r",
                                commit.parents[0].hexsha, commit.hexsha, "--", "scenes")
    fields = status.split("\0")
    rows = list(zip(fields[0::2], fields[1::2], strict=False))      # (A|M|D, path)
    deleted = {path.removeprefix("scenes/") for flag, path in rows if flag == "D"}
    new = []
    for flag, path in rows:
        if flag != "A":
            continue
        text = (commit.tree / path).data_stream.read().decode("utf-8")
        header = yaml.safe_load(text.split("---\n")[1]) or {}
        if not set(header.get("merged_from") or []) & deleted:
            new.append(path.removeprefix("scenes/"))
    return sorted(new)


def batch_commits(repo: git.Repo) -> list:
    return [c for c in repo.iter_commits() if c.summary.startswith("batch ")]


def young_store(root, count: int):
    """Two scenes about Alice (both shown to the model) and ``count`` memories of new areas."""
    return make_store(root, {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2)},
                      [text for _, text in TOPICS[:count]])


def creations(count: int) -> list[dict]:
    """A model's calls: read both scenes, then one new scene for each of ``count`` areas."""
    return [call("read_file", {"path": "work.md"}), call("read_file", {"path": "family.md"})] + [
        call("write_to_file", {"path": f"{name}.md", "content": model_scene(
            f"Alice's {name}.", text + "\n")}) for name, text in TOPICS[:count]]


# ------------------------------------------------------------------ a model backend

@pytest.mark.parametrize("count", [2, 3])
def test_a_model_writing_several_new_scenes_in_one_batch_is_refused_and_nothing_is_written(
        fake_llm, tmp_path, count):
    # A young store (2 scenes of 14): the old allowance let it open three in a batch.
    store = young_store(tmp_path / "mem", count)
    calls = creations(count)
    fake_llm.script([reply(tool_calls=calls), reply(content="New scenes for each area.")] * 3)
    before = snapshot(store)

    with pytest.raises(BatchError, match="nothing written, memories still pending"):
        run_batch(store, backend(fake_llm), attempts=1)

    assert tool_result(fake_llm, calls[2]).startswith("OK")          # the first new scene
    for extra in calls[3:]:
        told = tool_result(fake_llm, extra)
        assert told.startswith("Error:") and "at most 1 new scene" in told, told
    repair = user_messages(fake_llm)[-1]                               # a repair round ran
    assert "Fold each into a scene" in repair and TOPICS[1][1][:30] in repair
    assert_nothing_written(store, before)
    assert store.load_state().pending == count


def test_a_model_that_writes_one_new_scene_and_folds_the_rest_is_committed(fake_llm, tmp_path):
    store = young_store(tmp_path / "mem", 2)
    fold = call("replace_in_file", {"path": "family.md", "old": "Pixel.\n",
                                    "new": "Pixel.\nAlice planted tomatoes and basil on her "
                                           "balcony.\n"})
    fake_llm.script([reply(tool_calls=creations(1) + [fold]),
                     reply(content="Baking scene made; the balcony folded into family.")])
    run_batch(store, backend(fake_llm))
    repo = git.Repo(store.root)
    assert new_scenes_in(repo, last_commit(store)) == ["cooking.md"]
    assert_committed_batch(store)


def test_a_second_name_for_a_renamed_scene_cannot_smuggle_in_a_new_scene(fake_llm, tmp_path):
    # gym.md continues hobbies.md, then cooking.md is the batch's one new scene; climbing.md
    # also claims hobbies.md and sorts first, which would turn gym.md into a second new scene.
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1)}, [STARTER])
    renamed = model_scene("Alice's climbing at the gym.", HOBBIES[1], merged_from=["hobbies.md"])
    climbing = call("write_to_file", {"path": "climbing.md", "content": renamed})
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": n}) for n in ("hobbies.md", "work.md")]
              + [call("write_to_file", {"path": "gym.md", "content": renamed}),
                 call("write_to_file", {"path": "cooking.md", "content": model_scene(
                     "Alice bakes.", "Alice bought a sourdough starter named Bubbles.\n")}),
                 climbing, call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})]),
        reply(content="Renamed hobbies, new baking scene.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, climbing)
    assert told.startswith("Error:") and "at most 1 new scene" in told, told
    assert new_scenes_in(git.Repo(store.root), last_commit(store)) == ["cooking.md"]
    assert sorted(store.scene_names()) == ["cooking.md", "family.md", "gym.md", "work.md"]


# ------------------------------------------------------------------ read two scenes first

def test_a_model_that_never_reads_a_scene_cannot_create_one(fake_llm, tmp_path):
    # None of the scenes is about the starter, so none is shown: the model must read two.
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 1), "family.md": (*FAMILY, 1),
                                          "hobbies.md": (*HOBBIES, 1)}, [STARTER])
    create = call("write_to_file", {"path": "baking.md", "content": model_scene(
        "Alice bakes.", "Alice bought a sourdough starter named Bubbles.\n")})
    fake_llm.script([reply(tool_calls=[create]), reply(content="New baking scene.")] * 3)
    before = snapshot(store)

    with pytest.raises(BatchError):
        run_batch(store, backend(fake_llm), attempts=1)

    told = tool_result(fake_llm, create)
    assert "read at least 2 existing scenes before creating a new one" in told, told
    assert_nothing_written(store, before)


def test_a_new_scene_made_as_a_second_copy_of_a_renamed_scene_needs_two_scenes_read(
        fake_llm, tmp_path):
    # Only hobbies.md is read. gym.md continues it (a rename needs no further reading); then
    # climbing.md claims hobbies.md too and sorts first, so gym.md would be a new scene made
    # after one scene was read.
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 1), "family.md": (*FAMILY, 1),
                                          "hobbies.md": (*HOBBIES, 1)}, [STARTER])
    text = model_scene("Alice's climbing, and her sourdough starter.",
                       HOBBIES[1] + "She bought a sourdough starter named Bubbles.\n",
                       merged_from=["hobbies.md"])
    climbing = call("write_to_file", {"path": "climbing.md", "content": text})
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "hobbies.md"}),
                          call("write_to_file", {"path": "gym.md", "content": text}), climbing,
                          call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})]),
        reply(content="Split hobbies into gym and climbing.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, climbing)
    assert "read at least 2 existing scenes before creating a new one" in told, told
    assert new_scenes_in(git.Repo(store.root), last_commit(store)) == []     # a rename only
    assert sorted(store.scene_names()) == ["family.md", "gym.md", "work.md"]


# ------------------------------------------------------------------ the offline backend

def fold_offline(root, **settings):
    store = init_store(root)
    if settings:
        store = with_settings(store, **settings)
    add_memories(store, json.dumps(make_memories(80), ensure_ascii=False).encode())
    run_pending(store, OfflineBackend())
    repo = git.Repo(store.root)
    return store, [len(new_scenes_in(repo, c)) for c in batch_commits(repo)]


def test_the_offline_backend_opens_at_most_one_scene_a_batch(tmp_path):
    store, created = fold_offline(tmp_path / "s")
    assert created and max(created) == 1, created
    # every area got its scene in time (two of one topic may have merged since)
    assert sum(created) >= len(store.scene_names()) >= 3
    assert store.load_state().pending == 0


@pytest.mark.slow
def test_new_scenes_per_batch_3_keeps_the_young_store_allowance(tmp_path):
    store, created = fold_offline(tmp_path / "s", new_scenes_per_batch=3)
    assert max(created) > 1 and max(created) <= 3, created
    assert store.load_state().pending == 0


def test_a_model_may_write_three_new_scenes_when_the_setting_allows_three(fake_llm, tmp_path):
    store = with_settings(young_store(tmp_path / "mem", 3), new_scenes_per_batch=3)
    system = build_job(store, 1, []).messages[0]["content"]
    assert "At most 3 new scenes" in system
    fake_llm.script([reply(tool_calls=creations(3)), reply(content="Three new areas.")])
    result = run_batch(store, backend(fake_llm))
    assert result.counts["created"] == 3
    assert new_scenes_in(git.Repo(store.root), last_commit(store)) == [
        "cooking.md", "garden.md", "travel.md"]
    assert_committed_batch(store)


def test_the_prompt_says_one_new_scene_by_default(tmp_path):
    store = young_store(tmp_path / "mem", 1)
    system = build_job(store, 1, []).messages[0]["content"]
    assert "At most one new scene" in system


def test_new_scenes_per_batch_must_be_at_least_one(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("new_scenes_per_batch = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="new_scenes_per_batch"):
        load_config(path)
