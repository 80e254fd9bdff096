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
    shown = cli(root, "show", "garden.md")
    assert shown.stdout == text and f"conflict markers at lines {lines}" in shown.stderr
    listed = cli(root, "list")
    assert f"conflict markers at lines {lines}" in listed.stdout


@pytest.mark.parametrize("size", [250_000, 1_000_000])    # over the writes' and the reads' limit
def test_a_scene_too_long_for_a_batch_is_left_alone_not_a_failure_of_every_batch(tmp_path,
                                                                                size):
    """A person pastes a whole journal into one scene: before, every batch failed on it
    ("files over 800000 bytes cannot be used") and doctor said ok."""
    root = new_store(tmp_path)
    write_scene(root, "work.md", "Work at the office", "Meetings at the office.")
    line = "- 2019-03-02: Walked to the bakery on Rua Direita and bought bread for the week.\n"
    text = "---\nsummary: My old journal\n---\n" + line * (size // len(line) + 1)
    path = root / "scenes" / "journal.md"
    path.write_text(text, "utf-8")
    commit_by_hand(root)
    doctor = cli(root, "doctor")
    assert doctor.exit_code != 0 and "journal.md holds" in doctor.output
    assert "split it into scenes by hand" in doctor.output
    result = ingest(root, "Walked to the bakery on Rua Direita again and bought bread.")
    assert result.exit_code == 0, result.output
    assert "leaves scenes/journal.md alone" in result.output
    assert path.read_text("utf-8") == text                    # not a character changed
    assert json.loads(cli(root, "status", "--json").output)["pending"] == 0


@pytest.mark.parametrize("kind", ["yaml", "latin-1", "case"])
def test_a_batch_says_once_which_unreadable_scene_it_leaves_alone_and_why(tmp_path, kind):
    root = new_store(tmp_path)
    write_scene(root, "work.md", "Work at the office", "Meetings at the office.")
    path = root / "scenes" / "garden.md"
    if kind == "yaml":
        path.write_text("---\nsummary: [unclosed\n---\nTomatoes.\n", "utf-8")
        why = "cannot be read"
    elif kind == "latin-1":
        path.write_bytes("---\nsummary: Jardim\n---\nTomates e manjericão.\n".encode("latin-1"))
        why = "not UTF-8"
    else:
        write_scene(root, "garden.md", "Garden", "Tomatoes.")
        write_scene(root, "Garden.md", "Garden too", "Basil.")
        why = "only by case"
    commit_by_hand(root)
    before = path.read_bytes()
    result = ingest(root, "Picked the first ripe tomatoes in the garden.")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == before
    said = [line for line in result.output.splitlines() if "leaves scenes/garden.md alone" in line]
    assert len(said) == 1 and why in said[0], result.output


# ---------------------------------------------------------------- item 2: over the cap

def all_lines(root) -> set[str]:
    return {line.strip() for p in (root / "scenes").glob("*.md")
            for line in p.read_text("utf-8").split("\n") if line.strip()}


@pytest.mark.parametrize("scenes", [15, 17])
def test_a_store_over_its_cap_by_a_persons_scenes_merges_down_keeping_their_words(
        tmp_path, scenes):
    root = new_store(tmp_path)
    for i in range(1, scenes + 1):
        write_scene(root, f"n{i}.md", f"About topic{i}", f"Some notes about topic{i}.")
    commit_by_hand(root)
    doctor = cli(root, "doctor")
    assert f"merges {scenes - 14} scene" in doctor.output, doctor.output
    result = ingest(root, "Picked the first ripe tomatoes.")
    assert result.exit_code == 0, result.output
    assert len(list((root / "scenes").glob("*.md"))) == 14
    lines = all_lines(root)
    for i in range(1, scenes + 1):          # every word a person wrote, summaries too
        assert f"Some notes about topic{i}." in lines
        assert any(line.endswith(f"About topic{i}") for line in lines)
    assert cli(root, "doctor").exit_code == 0
    assert ingest(root, "Watered the tomatoes.").exit_code == 0


def test_a_store_over_its_cap_that_cannot_merge_still_folds_and_doctor_says_so(tmp_path):
    root = new_store(tmp_path)
    for i in range(1, 16):
        (root / "scenes" / f"n{i}.md").write_text(
            f"---\nsummary: About topic{i}\npinned: true\n---\nSome notes about topic{i}.\n",
            "utf-8")
    commit_by_hand(root)
    before = all_lines(root)
    doctor = cli(root, "doctor")
    assert "open no new scene" in doctor.output and "merges them down" not in doctor.output
    for content in ("Picked the first ripe tomatoes.", "More notes about topic3 today."):
        result = ingest(root, content)
        assert result.exit_code == 0, result.output
        assert "0 created" in result.output
        assert pending(root) == 0
    assert len(list((root / "scenes").glob("*.md"))) == 15
    assert before <= all_lines(root)
    assert "open no new scene" in cli(root, "doctor").output


@pytest.mark.parametrize("scenes", [14, 15])
def test_scenes_a_person_must_fix_filling_the_cap_doctor_and_batch_agree(tmp_path, scenes):
    root = new_store(tmp_path)
    for i in range(1, scenes + 1):
        (root / "scenes" / f"n{i}.md").write_text(
            f"---\nsummary: About topic{i}\n---\nNotes {i}.\n{MARKED_BODY}", "utf-8")
    commit_by_hand(root)
    assert "every batch fails" in cli(root, "doctor").output
    result = ingest(root, "Picked the first ripe tomatoes.")
    assert result.exit_code != 0
    assert "n1.md" in result.output and "scenes doctor" in result.output
    assert pending(root) == 1


# ---------------------------------------------------------------- item 4: one timeline

@pytest.mark.parametrize("holding", ["Marvila", "heavy rain"])
def test_a_merge_after_a_hand_copied_scene_keeps_one_timeline_heading(tmp_path, holding):
    root = tmp_path / "d"
    assert runner.invoke(app, ["demo", str(root)]).exit_code == 0
    scenes = root / "scenes"
    copied = next(p for p in sorted(scenes.glob("*.md")) if holding in p.read_text("utf-8"))
    (scenes / "my-notes-copy.md").write_text(copied.read_text("utf-8"), "utf-8")
    write_scene(root, "knitting.md", "Knitting notes", "I knit scarves in winter.")
    # A cap the store is now over: the next batch must merge (the copy with its original).
    config = root / ".scene-engine" / "config.toml"
    count = len(list(scenes.glob("*.md")))
    config.write_text(config.read_text("utf-8").replace("max_scenes = 15", f"max_scenes = "
                                                        f"{count}"), "utf-8")
    commit_by_hand(root, "hand edit: copy")
    result = ingest(root, "Ran a 10 km run in the rain again.")
    assert result.exit_code == 0, result.output
    assert "merged" in result.output and "0 merged" not in result.output
    for path in scenes.glob("*.md"):
        headings = [line for line in path.read_text("utf-8").split("\n")
                    if line.startswith("## Timeline")]
        assert len(headings) <= 1, (path.name, headings)
    assert cli(root, "doctor").exit_code == 0


def test_doctor_names_a_timeline_heading_written_twice(tmp_path):
    root = new_store(tmp_path)
    (root / "scenes" / "runs.md").write_text(
        "---\nsummary: Runs\n---\n## Timeline (UTC)\n## Timeline (UTC)\n- 2026-01-01: Ran.\n",
        "utf-8")
    commit_by_hand(root)
    doctor = cli(root, "doctor")
    assert doctor.exit_code != 0
    assert 'runs.md: the heading "## Timeline (UTC)" is there 2 times (lines 4, 5)' \
        in doctor.output
