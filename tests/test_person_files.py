"""A person's own files never block a batch, and doctor says what the next batch will do:
scene files under names the engine would never choose (Windows device names, too long, a
character some system refuses), scenes holding git conflict markers, a store over its scene
cap by a person's scenes, and a hand-copied scene merged into another."""

from __future__ import annotations

import json

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.store import history

runner = CheckedRunner()


def cli(root, *args, stdin=None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def new_store(tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    return root


def commit_by_hand(root, message="hand edit: import") -> None:
    files = [f"scenes/{p.name}" for p in (root / "scenes").glob("*.md")]
    history.commit_files(git.Repo(root), message, files, by_person=True)


def write_scene(root, name, summary, body) -> None:
    (root / "scenes" / name).write_text(f"---\nsummary: {summary}\n---\n{body}\n", "utf-8")


def ingest(root, content):
    return cli(root, "ingest", "-", stdin=json.dumps({"content": content}))


def pending(root) -> int:
    status = cli(root, "status", "--json")
    return json.loads(status.stdout)["pending"]


# ---------------------------------------------------------------- item 1: names

@pytest.mark.parametrize("name", ["nul.md", "CON.md", "Aux.notes.md", "prn.md", "com1.md",
                                  "LPT9.md", "a:b.md", "-dash.md", "x..y.md",
                                  "n" * 205 + ".md"])
def test_a_persons_file_under_a_name_the_engine_never_gives_does_not_block(tmp_path, name):
    root = new_store(tmp_path)
    write_scene(root, name, "Garden notes", "Notes about the garden and its tomatoes.")
    commit_by_hand(root)
    before = (root / "scenes" / name).read_bytes()
    doctor = cli(root, "doctor")
    assert name in doctor.output and "rename it" in doctor.output
    result = ingest(root, "Picked the first ripe tomatoes in the garden.")
    assert result.exit_code == 0, result.output
    assert pending(root) == 0
    assert (root / "scenes" / name).read_bytes() == before     # left alone, not lost
    assert f"leaves scenes/{name} alone" in result.output
    assert len(list((root / "scenes").glob("*.md"))) == 2
    again = ingest(root, "Watered the tomatoes in the garden.")
    assert again.exit_code == 0, again.output


# ---------------------------------------------------------------- item 3: conflict markers

MARKED_BODY = ("Tomatoes in the garden.\n<<<<<<< HEAD\nPlanted basil next to the tomatoes.\n"
               "=======\nWatered the tomatoes every day.\n>>>>>>> other-device\n")


@pytest.mark.parametrize("where", ["body", "header"])
def test_a_scene_with_conflict_markers_is_left_alone_and_named(tmp_path, where):
    root = new_store(tmp_path)
    if where == "body":
        text = f"---\nsummary: Garden notes about tomatoes\n---\n{MARKED_BODY}"
        lines = "5, 7, 9"
    else:
        text = ("---\n<<<<<<< HEAD\nsummary: Garden notes about tomatoes\n=======\n"
                "summary: Garden and tomatoes\n>>>>>>> other-device\n---\nTomatoes.\n")
        lines = "2, 4, 6"
    (root / "scenes" / "garden.md").write_text(text, "utf-8")
    write_scene(root, "work.md", "Work at the office", "Meetings at the office.")
    commit_by_hand(root)
    doctor = cli(root, "doctor")
    assert doctor.exit_code != 0
    assert "garden.md" in doctor.output and f"conflict markers at lines {lines}" in doctor.output
    assert "invalid YAML" not in doctor.output
    result = ingest(root, "Picked the first ripe tomatoes in the garden.")
    assert result.exit_code == 0, result.output
    assert (root / "scenes" / "garden.md").read_text("utf-8") == text
    assert result.output.count(f"conflict markers at lines {lines}") == 1
    assert "garden.md" in result.output
