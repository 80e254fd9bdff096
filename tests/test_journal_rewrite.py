"""A committed journal line changed by hand (a tester's `sed -i` on memories/00000.jsonl):
the journal is append-only, so no command may commit the rewrite under the engine's name;
each write refuses, names the file and line, and says the way back; doctor names it too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app

runner = CheckedRunner()
ROWS = [("m1", "Bought new hiking boots for the Alps."), ("m2", "Has a cat named Miso."),
        ("m3", "Joined a rowing club on Sundays.")]


def scenes(root: Path, *args: str, stdin: str | None = None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def make_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    rows = [{"id": i, "content": c, "created_at": f"2026-01-0{n + 1}T09:00:00Z"}
            for n, (i, c) in enumerate(ROWS)]
    assert scenes(root, "ingest", "-", stdin="".join(json.dumps(r) + "\n" for r in rows)
                  ).exit_code == 0
    return root


def reworded(path: Path) -> int:
    path.write_text(path.read_text("utf-8").replace("Bought new", "Sold old"), "utf-8")
    return 1


def dropped(path: Path) -> int:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + lines[2], "utf-8")
    return 2


def emptied(path: Path) -> int:
    path.write_text("", "utf-8")
    return 1


def deleted(path: Path) -> int:
    path.unlink()
    return 1


@pytest.mark.parametrize("damage", [reworded, dropped, emptied, deleted])
def test_a_rewritten_journal_line_is_never_committed_and_every_write_says_so(tmp_path, damage):
    root = make_store(tmp_path)
    segment = root / "memories" / "00000.jsonl"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout
    line = damage(segment)
    after_damage = segment.read_bytes() if segment.exists() else None
    for args, stdin in ((["add", "-"], '{"content": "Planted tomatoes on the balcony."}\n'),
                        (["run"], None), (["undo", "1"], None)):
        done = scenes(root, *args, stdin=stdin)
        assert done.exit_code == 1, (args, done.output)
        assert f"memories/00000.jsonl line {line}" in done.stderr, done.stderr
        assert "git checkout -- memories/00000.jsonl" in done.stderr
        assert "nothing was written" in done.stderr
    # Nothing was committed and the person's edit is still there, as they left it.
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout == head
    assert (segment.read_bytes() if segment.exists() else None) == after_damage
    status = scenes(root, "status")
    assert status.exit_code == 0 and f"memories/00000.jsonl line {line}" in status.stderr
    assert "scenes repair" not in status.stderr          # not a merge: repair is no way out
    doctor = scenes(root, "doctor")
    assert doctor.exit_code == 1 and f"memories/00000.jsonl line {line}" in doctor.output
    # The way back the message gives works.
    subprocess.run(["git", "checkout", "--", "memories/00000.jsonl"], cwd=root, check=True)
    assert scenes(root, "add", "-", stdin='{"content": "Planted tomatoes."}\n').exit_code == 0
    assert scenes(root, "doctor").exit_code == 0


def test_a_rewrite_the_person_committed_is_theirs_and_adds_go_on(tmp_path):
    # Committed by the person (their own `git commit`): history shows it as theirs, so a
    # later add commits only its own lines.
    root = make_store(tmp_path)
    reworded(root / "memories" / "00000.jsonl")
    subprocess.run(["git", "-c", "user.name=P", "-c", "user.email=p@x", "commit", "-qam",
                    "fix a memory"], cwd=root, check=True)
    assert scenes(root, "add", "-", stdin='{"content": "Planted tomatoes."}\n').exit_code == 0
    shown = subprocess.run(["git", "show", "--stat", "--format=%s", "HEAD"], cwd=root,
                           capture_output=True, text=True, check=True).stdout
    assert shown.startswith("add: 1 memory"), shown
