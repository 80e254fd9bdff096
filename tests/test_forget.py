"""`scenes undo N --forget` is for a memory that must go (a secret said by mistake): after it,
no file the engine wrote still says it. The persona, made from the scenes while the memory was
in them, is made anew (or removed when no scene is left), and a two-device merge that keeps
the other side's state.json cannot bring it back (trials: persona.md kept "My bank PIN hint
is the zebra crossing" and recall answered with it; repair made it pending again)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app

runner = CheckedRunner()
SECRET = "My bank PIN hint is the zebra crossing."


def scenes(root: Path, *args: str, stdin: str | None = None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def ingest(root: Path, *rows: tuple[str, str, str]):
    lines = "".join(json.dumps({"id": i, "content": c, "created_at": t}) + "\n"
                    for i, c, t in rows)
    done = scenes(root, "ingest", "-", stdin=lines)
    assert done.exit_code == 0, done.output
    return done


def engine_files(root: Path) -> str:
    """Every scene and the persona as they are on disk."""
    paths = [*sorted((root / "scenes").glob("*.md")), root / "persona.md"]
    return "\n".join(p.read_text("utf-8") for p in paths if p.exists())


def test_forgetting_the_only_batch_removes_the_persona_made_from_it(tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    ingest(root, ("secret", SECRET, "2026-01-03T10:00:00Z"))
    assert "zebra" in (root / "persona.md").read_text("utf-8")
    assert scenes(root, "undo", "1", "--forget").exit_code == 0
    assert "zebra" not in engine_files(root)
    assert not (root / "persona.md").exists()
    recalled = json.loads(scenes(root, "recall", "zebra crossing", "--json").stdout)
    assert "zebra" not in recalled["text"]
    assert scenes(root, "doctor").exit_code == 0


@pytest.mark.parametrize("forced", [True, False], ids=["persona-forced", "persona-as-due"])
def test_a_forgotten_memory_is_gone_from_a_persona_made_after_its_batch(tmp_path, forced):
    root = tmp_path / "d"
    assert runner.invoke(app, ["demo", str(root)]).exit_code == 0
    done = ingest(root, ("r-new", "Ran a 21 km long run in the rain along the zebra bridge.",
                         "2026-11-28T07:00:00Z"))
    if forced:
        assert scenes(root, "persona", "--force").exit_code == 0
    else:    # whatever the persona holds now, after the forget it says nothing of the batch
        (root / "persona.md").write_text((root / "persona.md").read_text("utf-8"), "utf-8")
    log = json.loads(scenes(root, "log", "--json").stdout)
    batch = max(e["batch"] for e in log if e.get("batch"))
    forgot = scenes(root, "undo", str(batch), "--forget", "--json")
    assert forgot.exit_code == 0, forgot.output
    assert "21 km" not in engine_files(root), done.output
    assert "21 km" not in scenes(root, "persona").stdout
    assert scenes(root, "doctor").exit_code == 0


def test_a_persona_a_person_wrote_is_kept_and_the_forget_says_it_may_hold_the_memory(
        tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    ingest(root, ("a", "Adopted a cat named Miso from the shelter.", "2026-01-02T10:00:00Z"))
    ingest(root, ("secret", SECRET, "2026-01-03T10:00:00Z"))
    mine = "# Me\n\nI keep my PIN hint (the zebra crossing) here on purpose.\n"
    (root / "persona.md").write_text(mine, "utf-8")
    forgot = scenes(root, "undo", "2", "--forget")
    assert forgot.exit_code == 0, forgot.output
    assert (root / "persona.md").read_text("utf-8") == mine
    assert "persona.md was edited by hand" in forgot.stderr


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.name=P", "-c", "user.email=p@x", *args],
                          cwd=root, capture_output=True, text=True)


@pytest.mark.parametrize("kept", ["theirs", "ours", "markers"])
@pytest.mark.parametrize("how", ["undo", "undo-then-forget"])
def test_a_forget_survives_a_two_device_merge_whichever_state_json_is_kept(tmp_path, kept,
                                                                           how):
    a = tmp_path / "A"
    assert runner.invoke(app, ["init", str(a)]).exit_code == 0
    ingest(a, ("base1", "Adopted a cat named Miso from the shelter.", "2026-01-02T10:00:00Z"))
    ingest(a, ("secret1", SECRET, "2026-01-03T10:00:00Z"))
    b = tmp_path / "B"
    assert git(tmp_path, "clone", "-q", str(a), str(b)).returncode == 0
    ingest(b, ("b1", "Started learning Portuguese with a tutor.", "2026-02-01T10:00:00Z"))
    if how == "undo":
        assert scenes(a, "undo", "2", "--forget").exit_code == 0
    else:                                 # undone first, its pending memory forgotten later
        assert scenes(a, "undo", "2").exit_code == 0
        assert scenes(a, "undo", "2", "--forget").exit_code == 0
    git(a, "pull", "-q", "--no-rebase", str(b), "HEAD")
    if kept != "markers":
        assert git(a, "checkout", f"--{kept}", ".scene-engine/state.json").returncode == 0
    assert git(a, "add", "-A").returncode == 0
    assert git(a, "commit", "-qm", "merge").returncode == 0, git(a, "status").stdout
    repaired = scenes(a, "repair")
    assert repaired.exit_code == 0, repaired.output
    assert scenes(a, "run").exit_code == 0
    assert "zebra" not in engine_files(a)
    status = json.loads(scenes(a, "status", "--json").stdout)
    assert status["forgotten"] == 1 and status["pending"] == 0, status
    assert "Portuguese" in engine_files(a)            # the other device's memory is folded
    assert scenes(a, "doctor").exit_code == 0
