"""History (DESIGN.md "History", "A batch" step 1): commits, log, undo/redo, blame.

Every test runs with no git identity (empty HOME, no system or global git config) and the
deterministic offline backend. Memories come in topics with no shared words, so the offline
backend gives each topic its own scene and a clean undo really is clean.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import git
from clirunner import CheckedRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from scene_engine.cli import app
from scene_engine.store import history
from scene_engine.store.history import expand_seqs, trailers

runner = CheckedRunner()

TOPICS = {
    "garden": "tomatoes basil compost seedlings greenhouse mulch trellis watering pruning "
              "harvest beans squash",
    "chess": "openings endgame blitz tournament rating gambit castling sicilian rook bishop "
             "checkmate pawns",
    "cooking": "sourdough risotto kitchen spices oven dough simmer saffron braise knead "
               "skillet broth",
}


def scenes(root: Path, *args: str, stdin: str | None = None):
    """Run the CLI in-process on the store at ``root``; return the click Result."""
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def ok(root: Path, *args: str, stdin: str | None = None):
    result = scenes(root, *args, stdin=stdin)
    assert result.exit_code == 0, result.output
    return result


def topic_memories(topic: str, start: int, count: int, month: int) -> str:
    """JSONL: ``count`` memories of ``topic`` (ids ``topic-N``), one a day in ``month``."""
    words = TOPICS[topic].split()
    rows = []
    for i in range(start, start + count):
        picked = " ".join(words[(i + k) % len(words)] for k in range(3))
        rows.append({"id": f"{topic}-{i}", "content": f"{topic} {picked} {topic}",
                     "created_at": f"2024-{month:02d}-{i + 1:02d}T09:00:00Z"})
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def new_store(tmp_path: Path, *chunks: str, batch_size: int = 5) -> Path:
    """A store with each chunk of memories folded by its own run (batches of ``batch_size``)."""
    root = tmp_path / "store"
    ok(tmp_path, "init", str(root))
    for chunk in chunks:
        ok(root, "add", "-", stdin=chunk)
        ok(root, "run", "--batch-size", str(batch_size))
    return root


def scene_for(root: Path, topic: str) -> Path:
    """The one scene file whose name starts with ``topic``."""
    found = sorted((root / "scenes").glob(f"{topic}*.md"))
    assert len(found) == 1, [p.name for p in (root / "scenes").glob("*.md")]
    return found[0]


def head_message(root: Path, rev: str = "HEAD") -> str:
    return git.Repo(root).commit(rev).message


def changed_files(root: Path, rev: str) -> set[str]:
    repo = git.Repo(root)
    return set(repo.git.diff("--name-only", f"{rev}~1", rev).splitlines())


def live_seqs(root: Path) -> list[int]:
    """Memory numbers of every live batch (made and not undone), one entry per batch."""
    from scene_engine.store.history import live_batches

    seqs = []
    for commit in live_batches(git.Repo(root)).values():
        seqs += expand_seqs(trailers(commit.message).get("Memory-Seqs", ""))
    return seqs


def status(root: Path) -> dict:
    return json.loads(ok(root, "status", "--json").stdout)


def log_json(root: Path) -> list[dict]:
    return json.loads(ok(root, "log", "--json").stdout)


def doctor_clean(root: Path) -> None:
    result = scenes(root, "doctor", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"ok": True, "problems": []}


def snapshot(root: Path) -> dict:
    """Everything an undo could change: HEAD, index entries, status, and each file's hash."""
    repo = git.Repo(root)
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".git/") and "/lock" not in rel:
            files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {"head": repo.head.commit.hexsha, "index": repo.git.ls_files("-s"),
            "status": repo.git.status("--porcelain", "--untracked-files=all"), "files": files}


# ---------------------------------------------------------------- identity and hand edits

def test_commits_work_with_no_git_identity_and_the_engine_is_author(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    repo = git.Repo(root)
    batch = next(c for c in repo.iter_commits() if "Batch" in trailers(c.message))
    assert (batch.author.name, batch.author.email) == ("scene-engine", "scene-engine@localhost")
    assert batch.committer.name == "scene-engine"


def test_a_configured_user_becomes_the_committer(tmp_path):
    root = tmp_path / "store"
    ok(tmp_path, "init", str(root))
    with git.Repo(root).config_writer() as config:   # repo-local: HOME has no config at all
        config.set_value("user", "name", "Ada Lovelace")
        config.set_value("user", "email", "ada@example.org")
    ok(root, "add", "-", stdin=topic_memories("garden", 0, 5, 1))
    ok(root, "run")
    repo = git.Repo(root)
    batch = next(c for c in repo.iter_commits() if "Batch" in trailers(c.message))
    assert (batch.committer.name, batch.committer.email) == ("Ada Lovelace", "ada@example.org")
    assert batch.author.name == "scene-engine"


def test_hand_edits_are_committed_on_their_own_before_a_batch(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2))
    chess = scene_for(root, "chess")
    chess.write_text(chess.read_text(encoding="utf-8") + "\nMy own note on chess.\n",
                     encoding="utf-8")
    (root / "persona.md").write_text("# Persona\n\nWritten by hand.\n", encoding="utf-8")
    ok(root, "add", "-", stdin=topic_memories("garden", 5, 5, 1))
    ok(root, "run")

    repo = git.Repo(root)
    batch, edit = list(repo.iter_commits(max_count=2))
    assert edit.message.startswith("hand edit: ")
    assert changed_files(root, edit.hexsha) == {f"scenes/{chess.name}", "persona.md"}
    assert "Batch" in trailers(batch.message)
    touched = changed_files(root, batch.hexsha)
    assert f"scenes/{chess.name}" not in touched and "persona.md" not in touched
    assert f"scenes/{scene_for(root, 'garden').name}" in touched
    assert "My own note on chess." in chess.read_text(encoding="utf-8")
    doctor_clean(root)


# ---------------------------------------------------------------- log

def test_log_lists_batches_newest_first_with_hand_edits_and_undos_between(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2))
    chess = scene_for(root, "chess")
    chess.write_text(chess.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    ok(root, "add", "-", stdin=topic_memories("cooking", 0, 5, 3))
    ok(root, "run")
    ok(root, "undo", "3")

    entries = log_json(root)
    kinds = [e["kind"] for e in entries]
    assert kinds[:3] == ["undo", "batch", "hand edit"]
    batches = [e for e in entries if e["kind"] == "batch"]
    assert [e["batch"] for e in batches] == [3, 2, 1]
    assert [e["undone"] for e in batches] == [True, False, False]
    times = [e["time"] for e in entries]
    assert times == sorted(times, reverse=True)
    first = batches[-1]
    assert "1 created" in first["subject"]
    assert first["memories"] == ", ".join(f"garden-{i}" for i in range(5))
    assert first["model"] == "offline" and first["tokens"] == 0
    assert "garden" in first["summary"]
    # Batch 1 made the first persona in its own commit: no persona commit of its own.
    assert first["persona"] and "persona" not in kinds

    text = ok(root, "log").stdout
    assert text.index("undo batch 3") < text.index("batch 3:") < text.index("hand edit")
    batch3 = next(line for line in text.splitlines() if "batch 3:" in line and "undo batch" not in line)
    assert batch3.endswith("(undone)")
    assert "memories: garden-0, garden-1" in text and "model: offline; tokens: 0" in text


# ---------------------------------------------------------------- undo

def test_undo_first_batch_keeps_hand_edit_and_requeues_its_memories(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    garden, chess = scene_for(root, "garden"), scene_for(root, "chess")
    edited = chess.read_text(encoding="utf-8") + "\nMy own note on chess.\n"
    chess.write_text(edited, encoding="utf-8")

    result = ok(root, "undo", "1")
    assert "5 memories pending again" in result.stdout
    repo = git.Repo(root)
    # The persona named the garden scene the undo took away: it is made anew in the undo's
    # own commit (issue 37: no "persona: regenerated" commit after it).
    assert trailers(head_message(root))["Undo-Batch"] == "1"
    assert "Persona-Refreshed" in trailers(head_message(root))
    assert head_message(root, "HEAD~1").startswith("hand edit: ")
    assert changed_files(root, "HEAD") == {f"scenes/{garden.name}", ".scene-engine/state.json",
                                           "persona.md"}
    assert not garden.exists()
    assert chess.read_text(encoding="utf-8") == edited
    assert scene_for(root, "cooking").exists()
    assert repo.git.status("--porcelain") == ""
    assert status(root)["pending"] == 5
    doctor_clean(root)

    ok(root, "run")
    assert status(root)["pending"] == 0
    assert trailers(head_message(root))["Memories"].startswith("garden-0")
    assert "2024-01-01: garden tomatoes" in scene_for(root, "garden").read_text(encoding="utf-8")
    seqs = live_seqs(root)
    assert sorted(seqs) == list(range(15))                   # each memory in exactly one batch
    doctor_clean(root)


def test_conflicting_undo_refuses_names_the_later_commit_and_changes_nothing(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("garden", 5, 5, 1))
    later = git.Repo(root).head.commit
    assert "Batch" in trailers(later.message)            # batch 2 changed batch 1's scene
    before = snapshot(root)

    result = scenes(root, "undo", "1")
    assert result.exit_code == 1
    assert later.hexsha[:7] in result.output and "batch 2" in result.output
    assert "<<<<<<<" not in result.output
    assert snapshot(root) == before


def test_conflicting_undo_leaves_an_uncommitted_hand_edit_uncommitted(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2),
                     topic_memories("garden", 5, 5, 1))
    chess = scene_for(root, "chess")
    chess.write_text(chess.read_text(encoding="utf-8") + "\nNot yet committed.\n",
                     encoding="utf-8")
    before = snapshot(root)
    assert scenes(root, "undo", "1").exit_code == 1
    assert snapshot(root) == before


def test_undo_forget_keeps_memories_from_coming_back(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    ok(root, "undo", "3", "--forget")
    assert status(root)["pending"] == 0
    assert "0 batches committed" in ok(root, "run").stdout
    doctor_clean(root)

    ok(root, "add", "-", stdin=topic_memories("chess", 5, 5, 2))
    ok(root, "run")
    assert trailers(head_message(root))["Memories"] == ", ".join(f"chess-{i}" for i in range(5, 10))
    assert sorted(live_seqs(root)) == list(range(10)) + list(range(15, 20))
    doctor_clean(root)


def test_undoing_an_undone_batch_redoes_it(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    cooking = scene_for(root, "cooking")
    text = cooking.read_text(encoding="utf-8")
    ok(root, "undo", "3")
    assert not cooking.exists()
    result = ok(root, "undo", "3")
    assert result.stdout.startswith("redo batch 3")
    assert cooking.read_text(encoding="utf-8") == text
    assert status(root)["pending"] == 0
    assert [e["undone"] for e in log_json(root) if e["kind"] == "batch"] == [False] * 3
    doctor_clean(root)
    assert "0 batches committed" in ok(root, "run").stdout


def test_redo_refuses_when_a_later_batch_took_the_memories_again(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2))
    ok(root, "undo", "2")
    ok(root, "run")                                     # batch 3 folds chess-0..4 again
    before = snapshot(root)
    result = scenes(root, "undo", "2")
    assert result.exit_code == 1 and "folded 5 of its memories again" in result.output
    assert snapshot(root) == before
    doctor_clean(root)


def test_undo_of_a_persona_commit_restores_the_previous_persona(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    first = (root / "persona.md").read_text(encoding="utf-8")
    ok(root, "persona", "--force")
    assert (root / "persona.md").read_text(encoding="utf-8") != first
    sha = next(e["commit"] for e in log_json(root) if e["kind"] == "persona")
    ok(root, "undo", sha[:10])
    assert (root / "persona.md").read_text(encoding="utf-8") == first
    assert trailers(head_message(root))["Undo-Commit"] == sha
    doctor_clean(root)


def test_undo_with_nothing_to_undo_or_an_unknown_batch_fails(tmp_path):
    root = tmp_path / "store"
    ok(tmp_path, "init", str(root))
    assert scenes(root, "undo").exit_code == 1
    assert scenes(root, "undo", "7").exit_code == 2


# ---------------------------------------------------------------- blame

def test_blame_maps_lines_to_batches_hand_edits_and_memory_ids(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("garden", 5, 5, 1))
    garden = scene_for(root, "garden")
    garden.write_text(garden.read_text(encoding="utf-8") + "\nA line typed by hand.\n",
                      encoding="utf-8")
    ok(root, "add", "-", stdin=topic_memories("chess", 0, 5, 2))
    ok(root, "run")                                     # commits the hand edit first

    rows = json.loads(ok(root, "blame", garden.stem, "--json").stdout)
    assert [r["text"] for r in rows] == garden.read_text(encoding="utf-8").splitlines()

    def row(fragment: str) -> dict:
        return next(r for r in rows if fragment in r["text"])

    first = row("2024-01-01:")                            # garden-0, folded by batch 1
    assert (first["kind"], first["batch"]) == ("batch", 1)
    assert first["memories"] == ["garden-0"]
    sixth = row("2024-01-06:")                            # garden-5, folded by batch 2
    assert (sixth["kind"], sixth["batch"]) == ("batch", 2)
    assert sixth["memories"] == ["garden-5"]
    assert row("heat: 2")["batch"] == 2
    assert row("A line typed by hand.")["kind"] == "hand edit"

    text = ok(root, "blame", garden.stem).stdout.splitlines()
    line = next(t for t in text if "2024-01-01:" in t)
    assert "batch 1" in line and "garden-0" in line
    assert "hand edit" in next(t for t in text if "A line typed by hand." in t)


def test_add_and_persona_commits_leave_hand_edits_to_their_own_commit(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2))
    chess = scene_for(root, "chess")
    chess.write_text(chess.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    ok(root, "add", "-", stdin=topic_memories("cooking", 0, 5, 3))
    assert changed_files(root, "HEAD") == {"memories/00000.jsonl", ".scene-engine/state.json"}
    ok(root, "persona", "--force")
    assert head_message(root, "HEAD~1").startswith("hand edit: ")
    assert changed_files(root, "HEAD~1") == {f"scenes/{chess.name}"}
    assert changed_files(root, "HEAD") <= {"persona.md", ".scene-engine/state.json"}
    ok(root, "undo", git.Repo(root).head.commit.hexsha)   # undoing the persona keeps the edit
    assert chess.read_text(encoding="utf-8").endswith("\nEdited.\n")
    doctor_clean(root)


def test_the_watcher_keeps_running_through_a_batch_and_indexes_its_result_once(tmp_path):
    """DESIGN "Index and watcher": the engine's own writes are not looped, and a batch's
    result is in the index once the watcher settles (the batch refreshes it itself, so the
    watcher has at most one run of its own to do)."""
    import time

    from scene_engine.batch.transaction import run_batch
    from scene_engine.index.scenes import SceneIndex
    from scene_engine.index.watcher import SceneWatcher
    from scene_engine.services.add import add_memories
    from scene_engine.services.backends import make_backend
    from scene_engine.store.store import init_store

    store = init_store(tmp_path / "w")
    add_memories(store, b'{"content": "Walked the dog along the canal every morning."}\n'
                        b'{"content": "The dog is a spaniel named Biscuit."}\n')
    # A debounce long beside the batch's own writes (its renames land within it on a loaded
    # machine too); the watcher's run is waited for as an event, not by a sleep.
    with SceneWatcher(store.root, debounce=1.0) as watcher:
        assert watcher.wait_idle(10)
        runs_before = watcher.stats.reindex_runs
        assert run_batch(store, make_backend("offline")) is not None
        deadline = time.monotonic() + 30
        while watcher.stats.reindex_runs == runs_before and time.monotonic() < deadline:
            time.sleep(0.05)                  # until the observer saw the batch's renames
        assert watcher.wait_idle(10)
        assert watcher.stats.errors == 0
        assert watcher.stats.reindex_runs - runs_before <= 1
    with SceneIndex(store.index_path, store.scenes_dir) as index:
        assert set(index.entries()) == set(store.scene_names())
        assert index.search("Biscuit")


def test_undoing_a_redo_commit_by_its_id_undoes_the_batch_and_stays_consistent(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    ok(root, "undo", "3")
    ok(root, "undo", "3")                                   # redo
    redo = git.Repo(root).head.commit.hexsha
    assert ok(root, "undo", redo[:10]).stdout.startswith("undo batch 3")
    assert status(root)["pending"] == 5
    doctor_clean(root)
    again = scenes(root, "undo", redo[:10])                 # batch 3 is undone by now
    assert again.exit_code == 1 and "already undone" in again.output
    ok(root, "run")
    doctor_clean(root)
    assert sorted(live_seqs(root)) == list(range(15))       # each memory in one live batch


def test_forget_on_an_undone_batch_forgets_its_pending_memories(tmp_path):
    root = new_store(tmp_path, *(topic_memories(t, 0, 5, m + 1) for m, t in enumerate(TOPICS)))
    ok(root, "undo", "3")
    assert status(root)["pending"] == 5
    result = ok(root, "undo", "3", "--forget")
    assert result.stdout.startswith("forget batch 3") and "5 memories forgotten" in result.stdout
    assert status(root)["pending"] == 0
    assert "0 batches committed" in ok(root, "run").stdout
    doctor_clean(root)


def test_add_and_init_commits_cannot_be_undone(tmp_path):
    root = new_store(tmp_path, topic_memories("cooking", 0, 3, 1))
    repo = git.Repo(root)
    for commit in repo.iter_commits():
        if commit.message.startswith(("add:", "init:")):
            before = snapshot(root)
            result = scenes(root, "undo", commit.hexsha[:10])
            assert result.exit_code == 2, result.output
            assert "cannot be undone" in result.output or "changes no scene" in result.output
            assert snapshot(root) == before


def test_undoing_a_hand_rename_brings_the_old_name_back(tmp_path):
    root = new_store(tmp_path, topic_memories("cooking", 0, 5, 1))
    old = scene_for(root, "cooking")
    text = old.read_text(encoding="utf-8")
    old.rename(root / "scenes" / "kitchen.md")
    ok(root, "run")                                         # commits the rename as a hand edit
    # ... and refreshes the persona, which named the old scene.
    rename = next(c for c in git.Repo(root).iter_commits(max_count=2)
                  if c.message.startswith("hand edit"))
    assert "kitchen" in (root / "persona.md").read_text(encoding="utf-8")
    ok(root, "undo", rename.hexsha[:10])
    assert old.read_text(encoding="utf-8") == text
    assert not (root / "scenes" / "kitchen.md").exists()
    doctor_clean(root)


def test_run_with_nothing_pending_commits_hand_edits_and_keeps_doctor_clean(tmp_path):
    root = new_store(tmp_path, topic_memories("cooking", 0, 5, 1))
    scene = scene_for(root, "cooking")
    scene.write_text(scene.read_text(encoding="utf-8") + "\nA note of my own.\n", "utf-8")
    assert "0 batches committed" in ok(root, "run").stdout
    assert head_message(root).startswith("hand edit")
    doctor_clean(root)
    assert "A note of my own" in ok(root, "search", "note of my own").stdout


def test_a_hand_edited_persona_is_kept_until_forced(tmp_path):
    root = new_store(tmp_path, topic_memories("cooking", 0, 5, 1))
    persona = root / "persona.md"
    persona.write_text("# Persona\nWritten by me, not the engine.\n", encoding="utf-8")
    (root / ".scene-engine" / "config.toml").write_text(
        (root / ".scene-engine" / "config.toml").read_text("utf-8").replace(
            "persona_every = 50", "persona_every = 1"), "utf-8")
    ok(root, "add", "-", stdin=topic_memories("cooking", 5, 5, 2))
    result = ok(root, "run")
    assert "was not regenerated" in result.output           # one warning line, no traceback
    assert "Written by me" in persona.read_text("utf-8")
    ok(root, "persona", "--force")
    assert "Written by me" not in persona.read_text("utf-8")
    doctor_clean(root)


def test_blame_names_the_memory_behind_each_line_not_the_whole_batch(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))   # one batch of five
    garden = scene_for(root, "garden")
    rows = json.loads(ok(root, "blame", garden.stem, "--json").stdout)
    for day in range(5):
        line = next(r for r in rows if f"2024-01-{day + 1:02d}:" in r["text"])
        assert line["batch"] == 1
        assert line["memories"] == [f"garden-{day}"], line
        assert line["found_by"] == "words"
    heat = next(r for r in rows if r["text"].startswith("heat:"))
    assert heat["memories"] == []                 # bookkeeping: no memory is behind it
    text = ok(root, "blame", garden.stem).stdout.splitlines()
    third = next(t for t in text if "2024-01-03:" in t)
    assert "garden-2" in third and "garden-0" not in third and "garden-4" not in third


def test_blame_of_a_digest_names_the_memories_of_its_period_in_that_scene(tmp_path):
    from test_conservation_offline import add, fold
    from test_conservation_offline import new_store as settings_store

    from scene_engine.core.periods import covers

    store = settings_store(tmp_path / "s", max_scene_chars=700, max_scenes=3)
    rows = [(f"r{i:02d}", f"Ran {5 + i % 7} km along the river in the park, run number {i}.",
             f"2025-{1 + i // 6:02d}-{1 + (i * 5) % 27:02d}T07:00:00Z") for i in range(30)]
    for start in range(0, 30, 10):
        add(store, *rows[start:start + 10])
        fold(store)
    add(store, ("w1", "Started a new job at Northwind in Lisbon.", "2025-01-02T09:00:00Z"))
    fold(store)
    from scene_engine.services.trace import trace_memory

    found = []
    for name in store.scene_names():
        blamed = json.loads(ok(store.root, "blame", name, "--json").stdout)
        found += [(name, r) for r in blamed if "(digest)" in r["text"]]
    assert found, "the scene should have rolled up"
    day = {r[0]: r[2][:10] for r in rows}
    held = {i: trace_memory(store, i).scenes for i in day}
    for name, row in found:
        period = row["text"].split("- ", 1)[1].split(" ", 1)[0]
        # (a run of the period that a second scene of runs took is that scene's)
        wanted = sorted(i for i, d in day.items() if covers(period, d) and name in held[i])
        # the runs of its period, in no id list in the text; not the job in the other scene
        assert sorted(row["memories"]) == wanted and row["found_by"] == "period"
        assert "w1" not in row["memories"] and not any(i in row["text"] for i in wanted)


# ---------------------------------------------------------------- a git that refuses the store

def _git_refuses(root: Path) -> bool:
    import subprocess

    done = subprocess.run(["git", "-C", str(root), "log", "-1"], capture_output=True, text=True)
    return done.returncode != 0


READERS = [("log",), ("log", "--json"), ("log", "--adds"), ("trace", "garden-1"),
           ("trace", "garden-1", "--json"), ("undo",), ("undo", "1"), ("blame", "{scene}"),
           ("blame", "{scene}", "--json"), ("run",)]


def test_every_command_that_reads_history_says_why_git_refuses_the_store(tmp_path, monkeypatch):
    import pytest

    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    ok(root, "add", "-", stdin=topic_memories("garden", 5, 2, 2))   # pending, for `run`
    scene = scene_for(root, "garden").stem
    head = git.Repo(root).head.commit.hexsha
    # Another user's store: git 2.36+ refuses it ("dubious ownership"); git's test switch
    # makes it believe the owner differs, as a non-root test cannot chown.
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
    if not _git_refuses(root):
        pytest.skip("this git does not honour GIT_TEST_ASSUME_DIFFERENT_OWNER")
    for args in READERS:
        result = scenes(root, *(a.format(scene=scene) for a in args))
        assert result.exit_code == 1, (args, result.output)
        if "--json" in args:     # the failure as one JSON document, never an empty "[]"
            said = json.loads(result.stdout)
            assert said["exit_code"] == 1 and "dubious ownership" in said["error"], said
        else:
            assert result.stdout == "", (args, result.stdout)      # no empty log
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "dubious ownership" in lines[0], (args, result.stderr)
    monkeypatch.delenv("GIT_TEST_ASSUME_DIFFERENT_OWNER")
    assert git.Repo(root).head.commit.hexsha == head               # nothing was written
    assert ok(root, "status", "--json") and json.loads(
        ok(root, "status", "--json").stdout)["pending"] == 2


def test_a_head_naming_a_missing_commit_is_an_error_not_an_empty_history(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    scene = scene_for(root, "garden").stem
    repo = git.Repo(root)
    branch = repo.active_branch.name
    repo.close()
    ref = root / ".git" / "refs" / "heads" / branch
    ref.write_text("0123456789abcdef0123456789abcdef01234567\n")   # an object that is not there
    for args in READERS[:-1]:
        result = scenes(root, *(a.format(scene=scene) for a in args))
        assert result.exit_code == 1, (args, result.output)
        assert "0123456789ab" in result.stderr, (args, result.output)
        if "--json" in args:     # the failure as one JSON document, never an empty "[]"
            assert "0123456789ab" in json.loads(result.stdout)["error"], result.stdout
        else:
            assert result.stdout == "", (args, result.output)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_blame_of_a_model_batch_names_each_line_s_own_memory(fake_llm, tmp_path):
    from fakellm import call, reply
    from test_batch_llm import FAMILY, WORK, backend, make_store, model_scene

    from scene_engine.batch.transaction import run_batch

    juno = "Mara adopted a second cat, a black kitten named Juno."
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2)},
                       ["Alice started night shifts at the hospital ward in May.", juno])
    paraphrase = "Since May she works nights on the ward."       # the model's own words
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "work.md"}),
                          call("read_file", {"path": "family.md"})]),
        reply(tool_calls=[
            call("write_to_file", {"path": "work.md", "content": model_scene(
                "Alice's nursing job, now at night.", WORK[1] + paraphrase + "\n")}),
            call("write_to_file", {"path": "family.md", "content": model_scene(
                "Alice's home with Mara and two cats.", FAMILY[1] + juno + "\n")})]),
        reply(content="PLACED: m0 -> work.md\nPLACED: m1 -> family.md"),
    ])
    assert run_batch(store, backend(fake_llm)) is not None
    work = json.loads(ok(store.root, "blame", "work", "--json").stdout)
    family = json.loads(ok(store.root, "blame", "family", "--json").stdout)
    said = next(r for r in work if r["text"] == paraphrase)
    assert (said["batch"], said["memories"], said["found_by"]) == (1, ["m0"], "ledger")
    cat = next(r for r in family if r["text"] == juno)
    assert (cat["batch"], cat["memories"], cat["found_by"]) == (1, ["m1"], "words")
    seeded = next(r for r in family if r["text"] == FAMILY[1].strip())
    assert seeded["memories"] == []                 # written before this batch, by no memory


def test_with_no_git_program_every_command_that_needs_git_says_so_in_one_line(tmp_path):
    import subprocess
    import sys

    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    scenes_bin = Path(sys.executable).with_name("scenes")
    env = {**os.environ, "PATH": str(scenes_bin.parent)}          # no git on it
    env.pop("GIT_PYTHON_GIT_EXECUTABLE", None)
    for args in (["init", str(tmp_path / "new")], ["--dir", str(root), "log"],
                 ["--dir", str(root), "add", "-"], ["--dir", str(root), "run"],
                 ["--dir", str(root), "trace", "garden-1"], ["--dir", str(root), "undo"]):
        done = subprocess.run([str(scenes_bin), *args], env=env, capture_output=True,
                              text=True, timeout=60, input='{"content": "x"}')
        assert done.returncode == 1, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "git is not installed" in lines[0], (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_blame_names_the_memory_a_hand_edited_line_still_states(tmp_path):
    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    garden = scene_for(root, "garden")
    text = garden.read_text("utf-8")
    line = next(t for t in text.splitlines() if "2024-01-03:" in t)
    # A person fixes a word of the line (a spelling, a detail): the line still states it.
    edited = line.replace("2024-01-03:", "2024-01-03: (checked)")
    garden.write_text(text.replace(line, edited), "utf-8")
    ok(root, "run")                                     # commits the hand edit on its own
    rows = json.loads(ok(root, "blame", garden.stem, "--json").stdout)
    row = next(r for r in rows if r["text"] == edited)
    assert row["kind"] == "hand edit", row
    assert row["memories"] == ["garden-2"] and row["found_by"] == "words", row
    traced = json.loads(ok(root, "trace", "garden-2", "--json").stdout)
    assert any(found["text"] == edited for found in traced["lines"]), traced   # trace agrees
    mine = "- 2024-02-01: A line of my own about nothing folded."
    garden.write_text(garden.read_text("utf-8") + mine + "\n", "utf-8")
    ok(root, "run")
    rows = json.loads(ok(root, "blame", garden.stem, "--json").stdout)
    assert next(r for r in rows if r["text"] == mine)["memories"] == []


def test_blame_names_a_file_with_chinese_an_emoji_or_a_tab_in_its_name_as_it_is(tmp_path):
    import pytest

    from scene_engine.store import history

    repo = git.Repo.init(tmp_path)
    with repo.config_writer() as config:
        config.set_value("user", "name", "Ana")
        config.set_value("user", "email", "ana@example.org")
    (tmp_path / "scenes").mkdir()
    for name in ("家人.md", "cat 🐱.md", 'tab\tand "quote".md'):
        (tmp_path / "scenes" / name).write_text("one\ntwo\n", "utf-8")
        repo.git.add("--", f"scenes/{name}")
        repo.git.commit("-qm", f"add {name}")
        rows = history.blame_lines(repo, f"scenes/{name}")
        assert [r["path"] for r in rows] == [f"scenes/{name}"] * 2, name
    with pytest.raises(history.NotCommitted):
        history.blame_lines(repo, "scenes/nowhere.md")


def test_head_is_read_again_after_any_commit_git_makes_outside_the_engine(tmp_path):
    """Within a batch, HEAD is taken from its files when git already named that commit
    (issue 39): a commit, a reset back and a ref naming no commit, all made by git beside
    the engine meanwhile, are each seen."""
    import pytest

    from scene_engine.store.history import HistoryError, head_sha, heads_remembered, open_repo

    identity = {"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.org",
                "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@example.org"}
    repo_dir = tmp_path / "r"
    repo = git.Repo.init(repo_dir)
    (repo_dir / "a.md").write_text("one\n")
    repo.git.add("a.md")
    repo.git.commit("-m", "one", "--no-verify", env={**os.environ, **identity})
    ours = open_repo(repo_dir)
    with heads_remembered():     # as a batch reads HEAD
        first = head_sha(ours)
        assert first == head_sha(ours) == repo.head.commit.hexsha
        (repo_dir / "a.md").write_text("two\n")
        repo.git.commit("-am", "two", "--no-verify", env={**os.environ, **identity})
        second = head_sha(ours)
        assert second != first and second == repo.head.commit.hexsha
        repo.git.reset("--hard", first)
        assert head_sha(ours) == first
        branch = Path(repo.git_dir) / Path(repo.head.ref.path)
        branch.write_text("0" * 40 + "\n")
        with pytest.raises(HistoryError):
            head_sha(ours)


def test_the_lines_a_person_wrote_stay_theirs_across_batches_read_from_no_history(tmp_path):
    """A batch's own commit adds no line of a person's: the cache of their lines moves on
    with it (issue 39), and a line a person commits by hand after it is still theirs."""
    from scene_engine.store import cache
    from scene_engine.store.history import PERSON_TEXTS, open_repo, person_texts

    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1), topic_memories("chess", 0, 5, 2))
    chess = scene_for(root, "chess")
    chess.write_text(chess.read_text(encoding="utf-8") + "\nMy own note on chess.\n",
                     encoding="utf-8")
    ok(root, "add", "-", stdin=topic_memories("garden", 5, 5, 1))
    ok(root, "run")
    repo = git.Repo(root)
    assert cache.load(root, PERSON_TEXTS)["commit"] == repo.head.commit.hexsha
    assert "My own note on chess." in person_texts(open_repo(root))
    chess.write_text(chess.read_text(encoding="utf-8") + "\nA second note, committed by me.\n",
                     encoding="utf-8")
    repo.git.commit("-am", "my notes", env={**os.environ, "GIT_AUTHOR_NAME": "P",
                                             "GIT_AUTHOR_EMAIL": "p@example.org",
                                             "GIT_COMMITTER_NAME": "P",
                                             "GIT_COMMITTER_EMAIL": "p@example.org"})
    lines = person_texts(open_repo(root))
    assert {"My own note on chess.", "A second note, committed by me."} <= lines


def test_the_cache_of_a_persons_lines_waits_when_their_commit_came_between(tmp_path):
    """The engine's commit carries the cache forward only from its own parent: a person's
    commit that landed between the engine reading HEAD and committing is read, not skipped."""
    from scene_engine.store import cache
    from scene_engine.store.history import (
        PERSON_TEXTS,
        _person_texts_past,
        head_sha,
        open_repo,
        person_texts,
    )

    root = new_store(tmp_path, topic_memories("garden", 0, 5, 1))
    repo = git.Repo(root)
    before = head_sha(open_repo(root))
    person_texts(open_repo(root))                      # the cache, as of ``before``
    scene = scene_for(root, "garden")
    scene.write_text(scene.read_text(encoding="utf-8") + "\nMy line, committed in between.\n",
                     encoding="utf-8")
    person = {**os.environ, "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.org",
              "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@example.org"}
    repo.git.commit("-am", "my line", env=person)
    repo.git.commit("--allow-empty", "-m", "batch 9: engine\n\nBatch: 9\n",
                    env={**person, "GIT_AUTHOR_EMAIL": "scene-engine@localhost"})
    made = repo.head.commit.hexsha
    _person_texts_past(open_repo(root), root, before, made)
    assert cache.load(root, PERSON_TEXTS)["commit"] == before     # not carried past theirs
    assert "My line, committed in between." in person_texts(open_repo(root))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", " ", "\t", "\u00a0", "a", "b c", "# note", "\r",
                                 "Memory-Seqs: 1-3", "\u3000x"]), max_size=8))
def test_a_batch_message_is_cleaned_as_git_commit_cleans_it(lines):
    # The batch commit is git's plumbing (commit-tree), which cleans nothing: the engine
    # cleans the message itself, as `git commit -m` did (git stripspace is the oracle).
    message = "\n".join(lines)
    said = subprocess.run(["git", "stripspace"], input=message.encode(), capture_output=True,
                          check=True).stdout.decode()
    assert history.stripspace(message) == said


def test_a_store_with_many_loose_objects_is_packed_as_git_commit_would(tmp_path):
    # The batch commit is git's plumbing, which never runs `git gc --auto` as `git commit`
    # did: without it every batch's objects stayed loose. (gc.autoDetach off: the packing
    # is then done before the batch returns, as a test needs.)
    from scene_engine.services.add import add_memories
    from scene_engine.store.store import init_store

    store = init_store(tmp_path / "store")
    repo = git.Repo(store.root)
    repo.git.config("gc.autoDetach", "false")
    (tmp_path / "many").mkdir()
    paths = []
    for i in range(8000):
        path = tmp_path / "many" / f"{i}.txt"
        path.write_text(f"loose object {i}\n", encoding="utf-8")
        paths.append(str(path))
    shas = subprocess.run(["git", "hash-object", "-w", "--stdin-paths"], cwd=store.root,
                          check=True, input="\n".join(paths) + "\n", text=True,
                          capture_output=True).stdout.split()
    # Reachable (a ref holds them), as a store's own objects are: gc packs those.
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "side-index")}
    subprocess.run(["git", "update-index", "--add", "--index-info"], cwd=store.root, env=env,
                   check=True, text=True,
                   input="".join(f"100644 {sha}\tside/{i}.txt\n" for i, sha in enumerate(shas)))
    tree = subprocess.run(["git", "write-tree"], cwd=store.root, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    side = subprocess.run(["git", "commit-tree", tree, "-m", "side"], cwd=store.root,
                          env={**env, "GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "p@x",
                               "GIT_COMMITTER_NAME": "Pat", "GIT_COMMITTER_EMAIL": "p@x"},
                          check=True, capture_output=True, text=True).stdout.strip()
    repo.git.update_ref("refs/side/keep", side)

    def loose() -> int:
        counts = dict(line.split(": ") for line in repo.git.count_objects("-v").splitlines())
        return int(counts["count"])

    assert loose() > 7000
    add_memories(store, b'{"content": "Planted tomatoes in the greenhouse."}')
    assert loose() < 100
    assert scenes(store.root, "doctor").exit_code == 0
