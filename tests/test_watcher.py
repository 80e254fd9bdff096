"""Watcher with a real watchdog observer on a temporary store: editor save patterns, deletes,
renames, bursts, git commits and retries all leave the index equal to the files."""

from __future__ import annotations

import hashlib
import os
import time

import git
import pytest

from scene_engine.index.scenes import SceneIndex
from scene_engine.index.watcher import SceneWatcher, is_ignored

DEBOUNCE = 0.1
SETTLE = 4 * DEBOUNCE  # quiet time after which no further run may start


def scene_text(summary: str, body: str) -> str:
    return f"---\nsummary: {summary}\nheat: 1\n---\n{body}\n"


def disk_checksums(root):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (root / "scenes").glob("*.md") if not p.name.startswith(".")}


def index_checksums(root):
    with SceneIndex(root / ".scene-engine" / "index.sqlite", root / "scenes") as index:
        return {n: e.checksum for n, e in index.entries().items()}


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def settled(watcher, root, runs=None):
    """Wait until the index equals the files (and ``runs`` runs happened), then stay quiet."""
    assert wait_for(lambda: index_checksums(root) == disk_checksums(root)
                    and (runs is None or watcher.stats.reindex_runs >= runs))
    assert watcher.wait_idle()
    time.sleep(SETTLE)
    assert watcher.wait_idle()
    assert index_checksums(root) == disk_checksums(root)
    return watcher.stats.reindex_runs


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "store"
    (root / "scenes").mkdir(parents=True)
    (root / ".scene-engine").mkdir()
    (root / ".gitignore").write_text("/.scene-engine/index.sqlite*\n")
    (root / "scenes" / "travel.md").write_text(scene_text("Trips", "去了杭州。"))
    (root / "scenes" / "work.md").write_text(scene_text("Work", "Backend engineer."))
    return root


@pytest.fixture
def watcher(store):
    with SceneWatcher(store, debounce=DEBOUNCE) as running:
        yield running


def test_start_indexes_existing_files(store, watcher):
    assert index_checksums(store) == disk_checksums(store)
    assert watcher.stats.reindex_runs == 0


def test_plain_save(store, watcher):
    (store / "scenes" / "work.md").write_text(scene_text("Work", "Now a data engineer."))
    assert settled(watcher, store, runs=1) == 1
    assert watcher.stats.files_indexed == 1


def test_new_file(store, watcher):
    (store / "scenes" / "family.md").write_text(scene_text("Family", "两个孩子。"))
    assert settled(watcher, store, runs=1) == 1
    assert "family.md" in index_checksums(store)


def test_vim_style_save(store, watcher):
    scenes = store / "scenes"
    (scenes / ".work.md.swp").write_bytes(b"\0swap")
    (scenes / "4913").write_text("")           # vim's can-I-write test file
    (scenes / "4913").unlink()
    (scenes / "work.md").rename(scenes / "work.md~")
    (scenes / "work.md").write_text(scene_text("Work", "Edited in vim."))
    (scenes / "work.md~").unlink()
    (scenes / ".work.md.swp").unlink()
    assert settled(watcher, store, runs=1) == 1
    assert watcher.stats.files_indexed == 1


def test_vscode_style_save(store, watcher):
    scenes = store / "scenes"
    tmp = scenes / ".work.md.tmp-8231"
    tmp.write_text(scene_text("Work", "Edited in VS Code."))
    os.replace(tmp, scenes / "work.md")
    assert settled(watcher, store, runs=1) == 1


def test_jetbrains_style_save(store, watcher):
    scenes = store / "scenes"
    (scenes / "work.md___jb_tmp___").write_text(scene_text("Work", "Edited in PyCharm."))
    (scenes / "work.md").rename(scenes / "work.md___jb_old___")
    (scenes / "work.md___jb_tmp___").rename(scenes / "work.md")
    (scenes / "work.md___jb_old___").unlink()
    assert settled(watcher, store, runs=1) == 1


def test_delete(store, watcher):
    (store / "scenes" / "travel.md").unlink()
    assert settled(watcher, store, runs=1) == 1
    assert "travel.md" not in index_checksums(store)


def test_rename(store, watcher):
    (store / "scenes" / "travel.md").rename(store / "scenes" / "trips-and-places.md")
    assert settled(watcher, store, runs=1) == 1
    assert set(index_checksums(store)) == {"trips-and-places.md", "work.md"}
    assert watcher.stats.files_indexed == 2  # one removed, one added


def test_burst_of_saves_is_one_run(store, watcher):
    path = store / "scenes" / "work.md"
    for i in range(50):
        path.write_text(scene_text("Work", f"revision {i:02d}"))
    assert settled(watcher, store, runs=1) <= 2
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        assert [h.name for h in index.search("49")] == ["work.md"]


def test_git_commit_does_not_reindex(store, watcher):
    repo = git.Repo.init(store)
    repo.index.add(["scenes/travel.md", "scenes/work.md", ".gitignore"])
    actor = git.Actor("Test", "test@example.com")
    repo.index.commit("scenes", author=actor, committer=actor)
    repo.git.commit("--allow-empty", "-m", "second", author="Test <test@example.com>",
                    env={"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com"})
    assert len(list(repo.iter_commits())) == 2
    assert settled(watcher, store) == 0


def test_ignored_files_start_nothing(store, watcher):
    scenes = store / "scenes"
    for name in ("notes.swp", "notes.swx", "work.md~", "#work.md#", ".#work.md", "x.tmp",
                 ".hidden.md", "notes.txt"):
        (scenes / name).write_text("scratch")
    (store / ".scene-engine" / "state.json").write_text("{}")
    assert settled(watcher, store) == 0
    assert set(index_checksums(store)) == {"travel.md", "work.md"}


def test_persona_change_is_noted_not_indexed(store, watcher):
    (store / "persona.md").write_text("A patient engineer.")
    assert wait_for(lambda: watcher.stats.persona_changes == 1)
    assert settled(watcher, store) == 0


def test_failed_indexing_is_retried_without_another_change(store):
    failures = {"left": 2}

    class Flaky(SceneIndex):
        def index_file(self, name):
            if failures["left"]:
                failures["left"] -= 1
                raise OSError("transient: file busy")
            return super().index_file(name)

    def factory():
        return Flaky(store / ".scene-engine" / "index.sqlite", store / "scenes")

    with SceneWatcher(store, factory, debounce=DEBOUNCE) as watcher:
        (store / "scenes" / "work.md").write_text(scene_text("Work", "Retried."))
        runs = settled(watcher, store, runs=3)
        assert watcher.stats.errors == 2 and failures["left"] == 0
        assert runs == 3  # first try + two retries, no further change needed


def test_on_reindex_reports_changed_names(store):
    seen = []
    with SceneWatcher(store, debounce=DEBOUNCE, on_reindex=seen.append) as watcher:
        (store / "scenes" / "new.md").write_text(scene_text("New", "x"))
        settled(watcher, store, runs=1)
    assert seen == [{"new.md"}]


@pytest.mark.parametrize("name, ignored", [
    ("work.md", False), ("家庭.md", False), (".work.md.swp", True), ("work.md~", True),
    ("4913", True), ("#work.md#", True), (".#work.md", True), ("a.tmp", True), ("x.swx", True)])
def test_ignore_rules(name, ignored):
    assert is_ignored(name) is ignored
