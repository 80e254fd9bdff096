"""A store in a person's notes (issue 11): an existing folder, an Obsidian-style vault, a git
repository that already exists, at its root or under ``--prefix``.

Real git repositories, no mocks. The person's files, staged and unstaged changes must come
through every command byte for byte, and the engine's commits must hold only the store's
paths. Every test runs with no global git identity (conftest); the person commits with
``git -c user.name=...``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner
from test_history import topic_memories
from test_offline_readable import DRIFT, KNEES

from scene_engine.cli import app

runner = CheckedRunner()
PERSON = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"]


def sh(folder: Path, *args: str) -> str:
    """Run git in ``folder`` as the person; return its stdout."""
    done = subprocess.run(["git", *PERSON, *args], cwd=folder, capture_output=True,
                          text=True, check=True)
    return done.stdout


def scenes(*args: str, stdin: str | None = None):
    return runner.invoke(app, list(args), input=stdin)


def ok(*args: str, stdin: str | None = None):
    result = scenes(*args, stdin=stdin)
    assert result.exit_code == 0, result.output
    return result


def make_vault(folder: Path) -> Path:
    """An Obsidian-style vault in git: notes in subfolders, ``.obsidian/``, the person's own
    commits, then a staged change, a staged new file, unstaged changes (one on top of a
    staged one) and an untracked note."""
    (folder / ".obsidian").mkdir(parents=True)
    (folder / ".obsidian" / "app.json").write_text('{"theme": "dark"}\n')
    (folder / "daily").mkdir()
    (folder / "daily" / "2024-01-01.md").write_text("# Monday\nWalked to the river.\n")
    (folder / "README.md").write_text("My vault.\n")
    sh(folder, "init", "-q", "-b", "main")
    sh(folder, "add", "-A")
    sh(folder, "commit", "-q", "-m", "my notes")
    (folder / "README.md").write_text("My vault, staged.\n")
    (folder / "ideas.md").write_text("- a staged idea\n")
    sh(folder, "add", "README.md", "ideas.md")
    (folder / "README.md").write_text("My vault, staged, then edited again.\n")
    (folder / "daily" / "2024-01-01.md").write_text("# Monday\nWalked to the river. Unsaved.\n")
    (folder / "todo.md").write_text("untracked\n")
    return folder


def foreign(vault: Path, store: str) -> dict:
    """Everything of the person's, outside the store's paths ``store`` (a pathspec): the
    staged and unstaged diffs, the status and each file's bytes."""
    outside = ["--", ".", f":(exclude){store}"] if store else ["--", "."]
    files = {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(vault).parts}
    if store:
        files = {k: v for k, v in files.items() if not _in_store(k, store)}
    return {"diff": sh(vault, "diff", *outside), "cached": sh(vault, "diff", "--cached", *outside),
            "status": sh(vault, "status", "--porcelain", "--untracked-files=all", *outside),
            "files": files}


def _in_store(path: str, store: str) -> bool:
    names = [store] if store != ROOT_STORE else ROOT_NAMES
    return any(path == n or path.startswith(n.rstrip("/") + "/") for n in names)


ROOT_NAMES = ["scenes", "persona.md", "memories", ".scene-engine"]
ROOT_STORE = ":(glob){scenes/**,persona.md,memories/**,.scene-engine/**}"


def engine_commit_paths(vault: Path, since: str) -> set[str]:
    """Every path changed by the commits after ``since``."""
    out = sh(vault, "log", "--format=", "--name-only", f"{since}..HEAD")
    return {line for line in out.splitlines() if line}


# ---------------------------------------------------------------- the vault, under a prefix

@pytest.mark.slow
def test_a_vault_keeps_every_foreign_change_through_init_add_run_edit_undo_redo(tmp_path,
                                                                                 monkeypatch):
    vault = make_vault(tmp_path / "vault")
    start = sh(vault, "rev-parse", "HEAD").strip()
    before = foreign(vault, "memory")

    made = ok("init", str(vault), "--prefix", "memory/")
    store = vault / "memory"
    assert str(store.resolve()) in made.output
    assert not (store / ".git").exists()                     # no nested repository
    assert foreign(vault, "memory") == before
    init_stat = sh(vault, "show", "--stat", "--format=", "HEAD")
    assert "memory/.scene-engine/state.json" in init_stat
    assert all(p.startswith("memory/") for p in engine_commit_paths(vault, start))

    # Found from the vault, from any folder in it, and by --dir pointing at the vault.
    monkeypatch.chdir(vault / "daily")
    assert json.loads(ok("status", "--json").stdout)["root"] == str(store.resolve())
    monkeypatch.chdir(tmp_path)
    ok("--dir", str(vault), "add", "-", stdin=topic_memories("garden", 0, 5, 1))
    ok("--dir", str(vault), "add", "-", stdin=topic_memories("chess", 0, 5, 2))
    ok("--dir", str(vault), "run", "--batch-size", "5")
    assert foreign(vault, "memory") == before
    assert sh(vault, "diff", "--cached", "--", "memory") == ""

    # A hand edit of a scene (and editors' leftovers beside it), then more memories.
    scene = sorted((store / "scenes").glob("garden*.md"))[0]
    scene.write_text(scene.read_text() + "\nMy own line about the garden.\n")
    (store / "scenes" / f".{scene.name}.swp").write_bytes(b"swap")
    (store / "scenes" / f"{scene.name}~").write_text("backup")
    ok("--dir", str(vault), "add", "-", stdin=topic_memories("cooking", 0, 5, 3))
    ok("--dir", str(vault), "run", "--batch-size", "5")
    assert foreign(vault, "memory") == before
    kinds = [e["kind"] for e in json.loads(ok("--dir", str(vault), "log", "--json").stdout)]
    assert kinds[:2] == ["batch", "hand edit"]
    tracked = sh(vault, "ls-files", "memory/scenes").splitlines()
    assert not [t for t in tracked if t.endswith("~") or t.endswith(".swp")]

    # Undo the newest batch, then redo it: the scenes come and go, the vault stays.
    cooking = sorted((store / "scenes").glob("cooking*.md"))
    assert cooking
    ok("--dir", str(vault), "undo")
    assert not any(p.exists() for p in cooking)
    assert foreign(vault, "memory") == before
    batch = json.loads(ok("--dir", str(vault), "log", "--json").stdout)[1]["batch"]
    ok("--dir", str(vault), "undo", str(batch))                 # redo
    assert all(p.exists() for p in cooking)
    assert "My own line about the garden." in scene.read_text()
    assert foreign(vault, "memory") == before
    assert sh(vault, "diff", "--cached", "--", "memory") == ""

    ok("--dir", str(vault), "persona", "--force")
    assert (store / "persona.md").is_file()
    assert foreign(vault, "memory") == before

    # Every commit since the person's last one holds only the store's paths.
    changed = engine_commit_paths(vault, start)
    assert changed and all(p.startswith("memory/") for p in changed), changed
    assert ".obsidian/app.json" not in changed
    blame = ok("--dir", str(vault), "blame", scene.stem)
    assert "My own line about the garden." in blame.output
    ok("--dir", str(vault), "trace", "garden-0")
    doctor = scenes("--dir", str(vault), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output


@pytest.mark.slow
def test_the_root_layout_in_a_repository_and_a_person_committing_the_whole_tree(tmp_path):
    vault = make_vault(tmp_path / "vault")
    before = foreign(vault, ROOT_STORE)
    ok("init", str(vault))
    assert (vault / ".scene-engine" / "state.json").is_file()
    assert foreign(vault, ROOT_STORE) == before
    assert not (vault / ".gitignore").exists()                # the vault's files untouched

    ok("--dir", str(vault), "add", "-", stdin=topic_memories("garden", 0, 5, 1))
    ok("--dir", str(vault), "run", "--batch-size", "5")
    ok("--dir", str(vault), "add", "-", stdin=topic_memories("chess", 0, 5, 2))
    ok("--dir", str(vault), "run", "--batch-size", "5")
    assert foreign(vault, ROOT_STORE) == before
    assert "README" not in scenes("--dir", str(vault), "search", "vault").output   # not indexed

    # An auto-commit plugin commits the whole vault, scene edits and index included.
    chess = sorted((vault / "scenes").glob("chess*.md"))[0]
    garden = sorted((vault / "scenes").glob("garden*.md"))[0]
    garden.write_text(garden.read_text() + "\nThe roses need shade.\n")
    sh(vault, "add", "-A")
    sh(vault, "commit", "-q", "-m", "vault backup")
    committed = sh(vault, "ls-files").splitlines()
    assert ".scene-engine/index.sqlite" not in committed        # ignored by the store itself
    assert not [c for c in committed if c.startswith(".scene-engine/transcripts")]

    log = json.loads(ok("--dir", str(vault), "log", "--json").stdout)
    batches = [e for e in log if e["kind"] == "batch"]
    assert [e["batch"] for e in batches] == [2, 1]               # the backup is not a batch
    ok("--dir", str(vault), "undo")                             # across the person's commit
    assert not chess.exists()
    assert sh(vault, "log", "-1", "--format=%s", "HEAD~1").strip() == "vault backup"
    assert "The roses need shade." in garden.read_text()
    ok("--dir", str(vault), "undo", "2")                        # redo
    assert chess.exists()
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 5, 5, 3))
    assert "The roses need shade." in garden.read_text()        # the person's line stays
    doctor = scenes("--dir", str(vault), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output


def test_a_fresh_clone_of_the_vault_holds_the_store_and_doctor_is_clean(tmp_path):
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "notes/memory")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(vault), str(clone)], check=True)
    assert sorted((clone / "notes" / "memory" / "scenes").glob("*.md"))
    doctor = scenes("--dir", str(clone), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output
    assert json.loads(scenes("--dir", str(clone), "status", "--json").stdout)["batches"] == 1


# ---------------------------------------------------------------- init's choices and refusals

def test_init_in_a_new_folder_inside_a_repository_uses_that_repository(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "code.py").write_text("print('hi')\n")
    sh(repo, "init", "-q", "-b", "main")
    sh(repo, "add", "code.py")          # staged, never committed: no HEAD yet
    ok("init", str(repo / "agent" / "memory"))
    assert not (repo / "agent" / "memory" / ".git").exists()
    shown = sh(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert shown and all(p.startswith("agent/memory/") for p in shown)
    assert "A  code.py" in sh(repo, "status", "--porcelain")   # still staged, still theirs


def test_init_outside_a_repository_makes_one_and_commits_only_the_store(tmp_path, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.md").write_text("dear diary\n")
    monkeypatch.setenv("SCENE_ENGINE_DIR", str(notes))
    ok("init", "--prefix", "memory/")
    assert (notes / ".git").is_dir()
    assert "diary.md" not in git.Repo(notes).git.ls_files()
    assert (notes / "diary.md").read_text() == "dear diary\n"
    assert json.loads(ok("status", "--json").stdout)["root"] == str((notes / "memory").resolve())


def test_init_refusals_exit_2_with_one_line_and_write_nothing(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scenes").mkdir()                       # the person's own folder of that name
    (vault / "file.md").write_text("x")
    cases = [[str(vault)],                           # scenes/ is taken
             [str(vault / "file.md")],               # a file, not a folder
             [str(vault), "--prefix", "../outside"],
             [str(vault), "--prefix", "/abs"],
             [str(vault), "--prefix", "file.md"]]    # a file on the way
    for args in cases:
        result = scenes("init", *args)
        assert result.exit_code == 2, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert sorted(p.name for p in vault.iterdir()) == ["file.md", "scenes"]
    assert not (tmp_path / "outside").exists()
    ok("init", str(vault), "--prefix", "memory/")
    again = scenes("init", str(vault), "--prefix", "other/")
    assert again.exit_code == 2 and "already" in again.output
    inside = scenes("init", str(vault / "memory" / "scenes" / "nested"))
    assert inside.exit_code == 2 and "inside the scene store" in inside.output
    assert not (vault / "memory" / "scenes" / "nested").exists()


def test_a_store_made_by_the_earlier_init_keeps_working(tmp_path):
    """The earlier layout: its own repository with a ``.gitignore`` at the top."""
    root = tmp_path / "old"
    ok("init", str(root))
    (root / ".scene-engine" / ".gitignore").unlink()
    (root / ".gitignore").write_text("/.scene-engine/index.sqlite*\n/.scene-engine/lock*\n"
                                     "/.scene-engine/*.tmp\n/.scene-engine/run/\n"
                                     "/.scene-engine/inbox/\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "init: new scene store")
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("chess", 0, 5, 2))
    ok("--dir", str(root), "undo")
    assert not list((root / "scenes").glob("chess*.md"))
    assert sh(root, "status", "--porcelain") == ""
    doctor = scenes("--dir", str(root), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output


def test_a_merge_in_progress_is_never_ended_by_the_engine(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("base\n")
    sh(vault, "init", "-q", "-b", "main")
    sh(vault, "add", "-A")
    sh(vault, "commit", "-q", "-m", "base")
    ok("init", str(vault), "--prefix", "memory/")
    sh(vault, "checkout", "-q", "-b", "other")
    (vault / "note.md").write_text("theirs\n")
    sh(vault, "commit", "-q", "-am", "theirs")
    sh(vault, "checkout", "-q", "main")
    (vault / "note.md").write_text("mine\n")
    sh(vault, "commit", "-q", "-am", "mine")
    merging = subprocess.run(["git", *PERSON, "merge", "-q", "other"], cwd=vault,
                             capture_output=True)
    assert merging.returncode != 0                          # a conflict: the person is merging
    before = foreign(vault, "memory"), sh(vault, "rev-parse", "HEAD")
    refused = scenes("--dir", str(vault), "add", "-", stdin=topic_memories("garden", 0, 5, 1))
    assert refused.exit_code == 1
    assert "merge" in refused.output
    again = scenes("init", str(vault / "sub"))
    assert again.exit_code == 1 and not (vault / "sub").exists()
    assert (vault / ".git" / "MERGE_HEAD").exists()
    assert (foreign(vault, "memory"), sh(vault, "rev-parse", "HEAD")) == before
    assert sh(vault, "status", "--porcelain", "--", "memory") == ""   # nothing written


@pytest.mark.slow
def test_the_newest_batch_undone_with_plain_git_revert(tmp_path):
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory/")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("chess", 0, 5, 2))
    newest = json.loads(ok("--dir", str(vault), "log", "--json").stdout)[0]
    assert newest["kind"] == "batch" and newest["commit"] == sh(vault, "rev-parse", "HEAD").strip()
    sh(vault, "stash", "-q")                  # git revert wants a clean tree: the person's way
    sh(vault, "revert", "--no-edit", newest["commit"])
    sh(vault, "stash", "pop", "-q")
    assert not list((vault / "memory" / "scenes").glob("chess*.md"))
    assert json.loads(ok("--dir", str(vault), "status", "--json").stdout)["pending"] == 5
    assert json.loads(ok("--dir", str(vault), "log", "--json").stdout)[0]["kind"] == "undo"
    doctor = scenes("--dir", str(vault), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output
    ok("--dir", str(vault), "run")
    assert list((vault / "memory" / "scenes").glob("chess*.md"))
    doctor = scenes("--dir", str(vault), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output


def test_init_refuses_a_place_the_repository_ignores(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / ".gitignore").write_text("private/\n")
    sh(vault, "init", "-q", "-b", "main")
    result = scenes("init", str(vault), "--prefix", "private/memory/")
    assert result.exit_code == 2
    assert "ignores private/memory/.scene-engine/state.json" in result.output
    assert not (vault / "private").exists()


def test_a_rule_that_ignores_one_kind_of_store_file_is_refused_or_flagged(tmp_path):
    # A vault ignoring "*.jsonl" would keep the journal out of git without a word.
    vault = tmp_path / "vault"
    vault.mkdir()
    sh(vault, "init", "-q", "-b", "main")
    (vault / ".gitignore").write_text("*.jsonl\n")
    refused = scenes("init", str(vault), "--prefix", "memory/")
    assert refused.exit_code == 2 and "ignores memory/memories/00000.jsonl" in refused.output
    assert not (vault / "memory").exists()
    (vault / ".gitignore").write_text("")
    ok("init", str(vault), "--prefix", "memory/")
    (vault / ".gitignore").write_text("*.jsonl\n")          # the rule comes later
    doctor = scenes("--dir", str(vault), "doctor")
    assert doctor.exit_code == 1 and "ignores memory/memories/00000.jsonl" in doctor.output


# ---------------------------------------------------------------- who wrote what; Obsidian

OBSIDIAN_DATETIME = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?"   # what its Date & time takes


def test_hand_edits_are_authored_by_the_person_and_batches_by_the_engine(tmp_path):
    vault = make_vault(tmp_path / "vault")
    sh(vault, "config", "user.name", "Ada Lovelace")       # the vault's own identity
    sh(vault, "config", "user.email", "ada@example.org")
    ok("init", str(vault), "--prefix", "memory")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    scene = sorted((vault / "memory" / "scenes").glob("*.md"))[0]
    scene.write_text(scene.read_text() + "\nPlanted tulips by the wall.\n")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 5, 5, 2))

    out = sh(vault, "log", "--format=%an|%ae|%cn|%s", "--", "memory").splitlines()
    by_subject = {line.split("|")[3]: line.split("|")[:3] for line in out}
    hand = [s for s in by_subject if s.startswith("hand edit:")]
    assert hand, out
    assert by_subject[hand[0]] == ["Ada Lovelace", "ada@example.org", "Ada Lovelace"]
    batches = [s for s in by_subject if s.startswith("batch ")]
    assert len(batches) == 2
    for subject in batches:   # the engine wrote these; the person ran them
        assert by_subject[subject] == ["scene-engine", "scene-engine@localhost", "Ada Lovelace"]
    message = sh(vault, "log", "-1", "--format=%B", "--grep=^batch 2")
    assert "Written-By: scene-engine" in message


def test_a_vault_auto_commit_of_scene_edits_is_a_hand_edit_in_the_log_and_keeps_the_persona(
        tmp_path):
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    persona = vault / "memory" / "persona.md"
    assert persona.is_file()
    persona.write_text("# Me\nI garden on Sundays, in my own words.\n")
    scene = sorted((vault / "memory" / "scenes").glob("*.md"))[0]
    scene.write_text(scene.read_text() + "\nThe roses need shade.\n")
    sh(vault, "add", "-A")
    sh(vault, "commit", "-q", "-m", "vault backup: 2024-06-01 10:00")   # an auto-commit plugin

    log = json.loads(ok("--dir", str(vault), "log", "--json").stdout)
    assert log[0]["kind"] == "hand edit"
    assert log[0]["subject"] == "vault backup: 2024-06-01 10:00"
    # An automatic persona refresh never overwrites words a person committed.
    (vault / "memory" / ".scene-engine" / "config.toml").write_text(
        (vault / "memory" / ".scene-engine" / "config.toml").read_text()
        .replace("persona_every = 50", "persona_every = 1"))
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 5, 5, 2))
    assert persona.read_text() == "# Me\nI garden on Sundays, in my own words.\n"
    assert "The roses need shade." in scene.read_text()


@pytest.mark.slow
def test_in_an_obsidian_vault_scenes_have_obsidian_properties_and_the_persona_links_them(
        tmp_path):
    import re

    import yaml

    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    config = (vault / "memory" / ".scene-engine" / "config.toml").read_text()
    assert "wiki_links = true" in config and 'header_times = "obsidian"' in config
    for topic, start, day in (("garden", 0, 1), ("chess", 0, 2), ("garden", 5, 3)):
        ok("--dir", str(vault), "ingest", "-", stdin=topic_memories(topic, start, 5, day))
    files = sorted((vault / "memory" / "scenes").glob("*.md"))
    assert len(files) >= 2
    for path in files:
        text = path.read_text()
        header = text.split("---\n")[1]
        for key in ("created", "updated"):
            value = re.search(rf"^{key}: (.*)$", header, re.MULTILINE).group(1)
            assert re.fullmatch(OBSIDIAN_DATETIME, value), (path.name, value)
        meta = yaml.safe_load(header)
        assert isinstance(meta["summary"], str) and meta["summary"]
        assert isinstance(meta["heat"], int) and not isinstance(meta["heat"], bool)
    # Read back: the engine sees the same instants (no drift from batch to batch).
    before = {p.name: p.read_text().split("---\n")[1] for p in files}
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("chess", 5, 5, 4))
    for path in files:
        created = re.search(r"^created: (.*)$", path.read_text(), re.MULTILINE).group(1)
        assert f"created: {created}" in before[path.name]
    doctor = scenes("--dir", str(vault), "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output

    ok("--dir", str(vault), "persona", "--force")
    persona = (vault / "memory" / "persona.md").read_text()
    links = re.findall(r"\[\[([^\]|]+)\]\]", persona)
    assert sorted(links) == sorted(p.stem for p in files)   # every scene, each one resolves


def test_outside_a_vault_times_keep_their_offset_and_the_persona_has_no_wiki_links(tmp_path):
    import re

    ok("init", str(tmp_path / "plain"))
    ok("--dir", str(tmp_path / "plain"), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    scene = sorted((tmp_path / "plain" / "scenes").glob("*.md"))[0]
    assert re.search(r"^updated: \S+\+00:00$", scene.read_text(), re.MULTILINE)
    persona = (tmp_path / "plain" / "persona.md").read_text()
    assert "[[" not in persona and f"**{scene.stem}**" in persona


def test_a_batch_killed_in_a_vault_is_rolled_back_and_the_persons_work_survives(
        tmp_path, monkeypatch):
    from scene_engine.batch.transaction import run_batch
    from scene_engine.services.add import add_memories
    from scene_engine.services.backends import make_backend
    from scene_engine.services.doctor import check_store
    from scene_engine.store import recovery
    from scene_engine.store.store import Store, open_store

    class Died(Exception):
        pass

    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    before = foreign(vault, "memory")
    store = open_store(vault / "memory")
    add_memories(store, topic_memories("garden", 0, 8, 1).encode())
    run_batch(store, make_backend("offline"), size=4)
    head = git.Repo(vault).head.commit.hexsha

    def die(*args, **kwargs):
        raise Died

    monkeypatch.setattr(Store, "save_state", die)     # scenes applied; state and commit not
    with pytest.raises(Died):
        run_batch(store, make_backend("offline"), size=4)
    monkeypatch.undo()
    assert recovery.pending_intent(store)["head"] == head
    # A killed git leaves its lock in the vault's own .git folder. A fresh one may be the
    # person's git at work, so it is left alone with a clear word; a stale one is cleared.
    lock = vault / ".git" / "index.lock"
    lock.write_text("")
    busy = scenes("--dir", str(vault), "run", "--batch-size", "4")
    assert busy.exit_code == 1 and "index.lock" in busy.output, busy.output
    assert "Traceback" not in busy.output
    busy = scenes("--dir", str(vault), "add", "-", stdin=topic_memories("chess", 0, 2, 3))
    assert busy.exit_code == 1 and "index.lock" in busy.output, busy.output
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    ok("--dir", str(vault), "run", "--batch-size", "4")
    assert foreign(vault, "memory") == before                  # staged, unstaged, untracked
    assert check_store(open_store(vault / "memory")) == []
    status = json.loads(ok("--dir", str(vault), "status", "--json").stdout)
    assert status["pending"] == 0 and status["batches"] == 2   # the refused add wrote nothing
    assert status["memories"] == 8


def _memory(mid: str, content: str, day: int) -> str:
    return json.dumps({"id": mid, "content": content,
                       "created_at": f"2026-02-{day:02d}T09:00:00Z"}) + "\n"


@pytest.mark.slow
def test_two_copies_of_a_vault_merged_by_git_refuse_writes_until_repaired(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    sh(one, "init", "-q", "-b", "main")
    ok("init", str(one))
    ok("--dir", str(one), "ingest", "-", stdin=_memory("a", "Has a cat named Miso.", 1))
    two = tmp_path / "two"
    subprocess.run(["git", "clone", "-q", str(one), str(two)], check=True)
    ok("--dir", str(two), "ingest", "-", stdin=_memory("b", "Bought a kayak.", 2))
    ok("--dir", str(one), "ingest", "-", stdin=_memory("c", "Ordered a standing desk.", 3))
    # Synced as a person (or a vault's git plugin) would: keep both sides of the journal.
    subprocess.run(["git", *PERSON, "pull", "-q", "--no-rebase", "--no-edit", str(two), "main"],
                   cwd=one, capture_output=True)
    journal = one / "memories" / "00000.jsonl"
    journal.write_text("".join(line + "\n" for line in journal.read_text().splitlines()
                               if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))))
    for path in sh(one, "diff", "--name-only", "--diff-filter=U").split():
        if path != "memories/00000.jsonl":
            sh(one, "checkout", "--ours", "--", path)
    sh(one, "add", "-A")
    sh(one, "commit", "-q", "-m", "vault backup: merge")
    commits = sh(one, "rev-list", "--count", "HEAD")

    refused = scenes("--dir", str(one), "ingest", "-", stdin=_memory("d", "Kayak trip.", 4))
    assert refused.exit_code == 1 and "scenes repair" in refused.output, refused.output
    assert sh(one, "rev-list", "--count", "HEAD") == commits      # no batch, no loop
    assert scenes("--dir", str(one), "run").exit_code == 1
    assert "scenes repair" in scenes("--dir", str(one), "doctor").output

    repaired = json.loads(ok("--dir", str(one), "repair", "--json").stdout)
    assert repaired["repaired"] and repaired["memories"] == 3
    assert json.loads(ok("--dir", str(one), "repair", "--json").stdout)["repaired"] is False
    ok("--dir", str(one), "ingest", "-", stdin=_memory("d", "Kayak trip.", 4))
    assert scenes("--dir", str(one), "doctor").exit_code == 0
    status = json.loads(ok("--dir", str(one), "status", "--json").stdout)
    assert status["memories"] == 4 and status["pending"] == 0
    found = ok("--dir", str(one), "search", "--memories", "kayak").output
    assert "Bought a kayak." in found and "Kayak trip." in found
    scenes_text = "".join(p.read_text() for p in (one / "scenes").glob("*.md"))
    for words in ("Miso", "kayak", "standing desk", "Kayak trip"):
        assert words in scenes_text                                # every memory folded


def test_a_persons_commit_named_like_the_engines_is_still_theirs(tmp_path):
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    config = vault / "memory" / ".scene-engine" / "config.toml"
    config.write_text(config.read_text().replace("persona_every = 50", "persona_every = 1"))
    sh(vault, "add", str(config))
    sh(vault, "commit", "-q", "-m", "settings")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    persona = vault / "memory" / "persona.md"
    scene = sorted((vault / "memory" / "scenes").glob("*.md"))[0]
    persona.write_text("# Me\nMy own portrait.\n")
    scene.write_text(scene.read_text() + "\nMy line about the compost heap.\n")
    sh(vault, "commit", "-q", "-am", "add: my own persona")       # "add:" like the engine's
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 5, 5, 2))
    assert persona.read_text() == "# Me\nMy own portrait.\n"
    assert "My line about the compost heap." in scene.read_text()
    blame = json.loads(ok("--dir", str(vault), "blame", scene.stem, "--json").stdout)
    mine = [row for row in blame if "compost heap" in row["text"]]
    assert mine and mine[0]["kind"] == "hand edit"                 # not "other", not "add"


def test_writes_on_a_detached_head_are_refused(tmp_path):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 0, 3, 1))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 3, 3, 2))
    sh(root, "checkout", "-q", "--detach", "HEAD~1")
    head = sh(root, "rev-parse", "HEAD")
    refused = scenes("--dir", str(root), "ingest", "-", stdin=topic_memories("chess", 0, 2, 3))
    assert refused.exit_code == 1 and "detached" in refused.output, refused.output
    assert sh(root, "rev-parse", "HEAD") == head
    assert scenes("--dir", str(root), "search", "garden").exit_code == 0   # reads still work


def test_a_git_identity_from_the_environment_authors_hand_edits(tmp_path, monkeypatch):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 0, 3, 1))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Grace Hopper")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "grace@example.org")
    scene = sorted((root / "scenes").glob("*.md"))[0]
    scene.write_text(scene.read_text() + "\nBasil by the window.\n")
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 3, 3, 2))
    lines = sh(root, "log", "-2", "--format=%an|%cn|%s").splitlines()
    assert lines[0].startswith("scene-engine|Grace Hopper|batch"), lines
    assert lines[1].startswith("Grace Hopper|Grace Hopper|hand edit:"), lines


def test_an_editor_saving_crlf_does_not_make_the_scene_the_persons(tmp_path):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 0, 3, 1))
    scene = sorted((root / "scenes").glob("*.md"))[0]
    scene.write_bytes(scene.read_bytes().replace(b"\n", b"\r\n"))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 3, 3, 2))
    blame = json.loads(ok("--dir", str(root), "blame", scene.stem, "--json").stdout)
    assert not [row for row in blame if row["kind"] == "hand edit"], blame
    assert b"\r\n" in scene.read_bytes()                           # saved as the person saves


def test_a_gitignore_added_later_fails_a_run_in_one_line_and_loses_nothing(tmp_path):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=topic_memories("garden", 0, 3, 1))
    (root / ".gitignore").write_text("scenes/*.md\n")
    result = scenes("--dir", str(root), "ingest", "-", stdin=topic_memories("chess", 0, 3, 2))
    assert result.exit_code == 1
    said = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(said) == 1 and "scenes doctor" in said[0], result.output
    assert "hint:" not in result.output and "stderr" not in result.output, result.output
    assert json.loads(ok("--dir", str(root), "status", "--json").stdout)["pending"] == 3


def test_a_prefix_with_a_space_or_a_dot_at_the_end_is_refused(tmp_path):
    for prefix in ("memory /", " memory", "memory."):
        result = scenes("init", str(tmp_path / "v"), "--prefix", prefix)
        assert result.exit_code == 2, (prefix, result.output)
    assert not (tmp_path / "v").exists() or not any((tmp_path / "v").iterdir())


def test_persona_links_follow_a_renamed_scene_and_doctor_names_a_dangling_one(tmp_path):
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 0, 5, 1))
    scene = sorted((vault / "memory" / "scenes").glob("*.md"))[0]
    renamed = scene.with_name("my-garden.md")
    scene.rename(renamed)
    doctor = scenes("--dir", str(vault), "doctor")
    assert doctor.exit_code == 1 and f"[[{scene.stem}]]" in doctor.output, doctor.output
    ok("--dir", str(vault), "ingest", "-", stdin=topic_memories("garden", 5, 5, 2))
    persona = (vault / "memory" / "persona.md").read_text()
    assert "[[my-garden]]" in persona and f"[[{scene.stem}]]" not in persona
    assert scenes("--dir", str(vault), "doctor").exit_code == 0


@pytest.mark.slow
def test_a_scene_the_engine_renames_in_a_vault_keeps_its_old_name_as_an_alias(tmp_path):
    # A person's note that links [[old name]] still resolves in Obsidian (aliases property).
    vault = make_vault(tmp_path / "vault")
    ok("init", str(vault), "--prefix", "memory")
    # The name drifts (test_offline_readable.KNEES, then DRIFT), so the engine renames it.
    first = None
    for i, (mid, text, when) in enumerate([*KNEES, *DRIFT]):
        line = json.dumps({"id": mid, "content": text, "created_at": when})
        ok("--dir", str(vault), "ingest", "-", stdin=line + "\n")
        if i == 0:
            (first,) = [p.stem for p in (vault / "memory" / "scenes").glob("*.md")]
    (renamed,) = list((vault / "memory" / "scenes").glob("*.md"))
    assert renamed.stem != first
    header = renamed.read_text().split("---")[1]
    assert f"aliases:\n- {first}" in header or f"aliases: [{first}]" in header, header


def test_a_name_a_person_renamed_away_is_not_given_to_a_new_scene_the_persona_links(tmp_path):
    vault = tmp_path / "v"
    (vault / ".obsidian").mkdir(parents=True)
    sh(vault, "init", "-q", "-b", "main")
    ok("init", str(vault))
    rows = [{"id": f"w{i}", "content": f"Cello practice session {i} with teacher Ana in Porto.",
             "created_at": f"2026-02-{i + 1:02d}T10:00:00Z"} for i in range(12)]
    rows += [{"id": f"r{i}", "content": f"Ran {5 + i} km along the river in Porto training for "
              "the marathon.", "created_at": f"2026-02-{i + 1:02d}T18:00:00Z"} for i in range(12)]
    ok("--dir", str(vault), "ingest", "-", stdin="\n".join(json.dumps(r) for r in rows))
    cello = next(p for p in (vault / "scenes").glob("*.md") if "Cello" in p.read_text("utf-8"))
    old = cello.stem
    assert f"[[{old}]]" in (vault / "persona.md").read_text("utf-8")
    sh(vault, "mv", f"scenes/{cello.name}", "scenes/cello.md")     # the person's own rename
    sh(vault, "commit", "-q", "-m", "vault backup")
    ok("--dir", str(vault), "ingest", "-", stdin=json.dumps(
        {"id": "w99", "content": "Cello practice session with teacher Ana on scales.",
         "created_at": "2026-03-01T10:00:00Z"}))
    persona = (vault / "persona.md").read_text("utf-8")
    links = set(re.findall(r"\[\[([^\]|]+)", persona))
    names = {p.stem for p in (vault / "scenes").glob("*.md")}
    assert links <= names, (links, names)              # no link lands on a missing scene
    assert not (vault / "scenes" / cello.name).exists(), "the freed name was given again"
    assert "cello" in links and old not in links


def test_init_inside_a_repository_says_where_its_commits_go_or_makes_its_own(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "code.py").write_text("print('hi')\n")
    sh(project, "init", "-q", "-b", "main")
    sh(project, "add", "code.py")
    sh(project, "commit", "-q", "-m", "code")
    said = ok("init", str(project / "memory")).output
    assert f"its commits go to the git repository at {project.resolve()}" in said
    assert "--own-repo" in said
    mine = ok("init", "--own-repo", str(project / "mine")).output
    assert "its commits go to" not in mine
    assert (project / "mine" / ".git").is_dir()
    ok("--dir", str(project / "mine"), "ingest", "-", stdin=topic_memories("garden", 0, 3, 1))
    # The project's history holds the first store's init only; the second's are its own.
    assert sh(project, "log", "--format=%s").split("\n")[:2] == ["init: new scene store",
                                                                  "code"]
    assert "batch 1" in git.Repo(project / "mine").git.log("--format=%s")


def test_two_stores_in_one_repository_each_number_their_own_batches(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    sh(vault, "init", "-q", "-b", "main")
    ok("init", str(vault), "--prefix", "work/")
    ok("init", str(vault / "home"))
    work, home = vault / "work", vault / "home"
    ok("--dir", str(work), "ingest", "-", "--batch-size", "2",
       stdin=topic_memories("garden", 0, 6, 1))
    folded = ok("--dir", str(home), "ingest", "-", stdin=topic_memories("chess", 0, 2, 2))
    assert "batch 1:" in folded.output, folded.output
    status = json.loads(ok("--dir", str(home), "status", "--json").stdout)
    assert status["batches"] == 1 and status["last_batch"] == 1
    ok("--dir", str(home), "undo", "1")
    assert json.loads(ok("--dir", str(home), "status", "--json").stdout)["pending"] == 2
    # The first store's numbers go on from its own last batch.
    more = ok("--dir", str(work), "ingest", "-", stdin=topic_memories("garden", 6, 1, 1))
    assert "batch 4:" in more.output, more.output
