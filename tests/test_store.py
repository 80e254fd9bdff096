"""The store on disk (DESIGN.md "A store on disk", "Command line"): init, open, status, list, show.

Every test runs with no git identity at all (empty HOME, no system or global git config), as on
a fresh machine or in CI: `scenes init` and batches must still commit.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.store.store import FORMAT_VERSION, init_store, open_store

runner = CheckedRunner()


def scenes(*args: str, stdin: str | None = None):
    """Run the CLI in-process; return the click Result (exit_code, stdout, stderr)."""
    return runner.invoke(app, list(args), input=stdin)


def write_scene(store_dir: Path, name: str, heat: int, summary: str, body: str = "Text.\n"):
    (store_dir / "scenes" / name).write_text(
        f"---\ncreated: 2024-01-01T00:00:00+00:00\nupdated: 2024-01-02T00:00:00+00:00\n"
        f"summary: {summary}\nheat: {heat}\n---\n{body}", encoding="utf-8")


# ---------------------------------------------------------------- init

def test_init_makes_the_layout_with_a_first_commit_and_no_git_identity(tmp_path):
    root = tmp_path / "store"
    result = scenes("init", str(root))
    assert result.exit_code == 0, result.output
    for folder in ("scenes", "memories", ".scene-engine"):
        assert (root / folder).is_dir()
    assert (root / ".scene-engine" / "config.toml").is_file()
    assert (root / ".scene-engine" / "state.json").is_file()

    repo = git.Repo(root)
    commits = list(repo.iter_commits())
    assert len(commits) == 1
    tracked = set(repo.git.ls_files().splitlines())
    assert {".scene-engine/config.toml", ".scene-engine/state.json"} <= tracked
    assert not repo.is_dirty(untracked_files=True)
    # Derived files stay out of git (DESIGN.md: index.sqlite and lock are ignored).
    for derived in (".scene-engine/index.sqlite", ".scene-engine/lock"):
        assert repo.ignored(derived) == [derived]


def test_init_writes_the_default_settings_and_a_format_version(tmp_path):
    init_store(tmp_path / "s")
    config = tomllib.loads((tmp_path / "s/.scene-engine/config.toml").read_text("utf-8"))
    assert config["max_scenes"] == 15
    assert config["max_scene_chars"] == 1500
    assert config["batch_size"] == 20
    assert config["persona_every"] == 50
    assert config["language"] == "auto"
    assert config["meta_style"] == "yaml"
    state = json.loads((tmp_path / "s/.scene-engine/state.json").read_text("utf-8"))
    assert state["format"] == FORMAT_VERSION


def test_init_refuses_an_existing_store_and_a_file_but_takes_a_folder_with_notes(tmp_path):
    init_store(tmp_path / "s")
    again = scenes("init", str(tmp_path / "s"))
    assert again.exit_code == 2
    assert "already" in again.output
    (tmp_path / "note.md").write_text("a file")
    assert scenes("init", str(tmp_path / "note.md")).exit_code == 2
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    made = scenes("init", str(other))
    assert made.exit_code == 0, made.output
    assert (other / "mine.txt").read_text() == "keep me"
    assert (other / ".scene-engine" / "state.json").is_file()
    assert "mine.txt" not in git.Repo(other).git.ls_files()   # never committed for them


# ---------------------------------------------------------------- opening

@pytest.mark.parametrize("command", [["status"], ["list"], ["add", "-"], ["run"], ["doctor"]])
def test_a_folder_that_is_not_a_store_is_refused_with_exit_2(tmp_path, command):
    result = scenes("--dir", str(tmp_path), *command, stdin='[{"content": "x"}]')
    assert result.exit_code == 2
    assert "not a scene store" in result.output
    assert list(tmp_path.iterdir()) == []       # nothing written into the wrong folder


def test_a_store_of_a_newer_format_is_refused_naming_both_versions(tmp_path):
    root = tmp_path / "s"
    init_store(root)
    state_path = root / ".scene-engine" / "state.json"
    state = json.loads(state_path.read_text("utf-8"))
    state["format"] = FORMAT_VERSION + 7
    state_path.write_text(json.dumps(state), encoding="utf-8")
    result = scenes("--dir", str(root), "status", "--json")
    assert result.exit_code == 2
    assert str(FORMAT_VERSION + 7) in result.output
    assert str(FORMAT_VERSION) in result.output.replace(str(FORMAT_VERSION + 7), "")


def test_dir_defaults_to_the_environment_variable(tmp_path, monkeypatch):
    root = tmp_path / "s"
    init_store(root)
    monkeypatch.setenv("SCENE_ENGINE_DIR", str(root))
    assert open_store().root == root.resolve()
    result = scenes("status", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["root"] == str(root.resolve())


# ---------------------------------------------------------------- status, list, show

def test_status_json_counts_pending_scenes_and_batches(tmp_path):
    root = tmp_path / "s"
    init_store(root)
    empty = json.loads(scenes("--dir", str(root), "status", "--json").stdout)
    assert (empty["pending"], empty["scenes"], empty["batches"]) == (0, 0, 0)
    assert "last_batch" in empty and empty["last_batch"] is None

    memories = [{"id": f"m{i}", "content": f"walked the dog on morning {i}"} for i in range(25)]
    added = scenes("--dir", str(root), "add", "-", stdin=json.dumps(memories))
    assert added.exit_code == 0, added.output
    assert json.loads(scenes("--dir", str(root), "status", "--json").stdout)["pending"] == 25

    ran = scenes("--dir", str(root), "run", "--max-batches", "1")
    assert ran.exit_code == 0, ran.output
    after = json.loads(scenes("--dir", str(root), "status", "--json").stdout)
    assert after["pending"] == 5
    assert after["batches"] == 1
    assert after["last_batch"] == 1
    assert after["scenes"] == len(list((root / "scenes").glob("*.md"))) >= 1


def test_list_sorts_by_heat_then_name_and_json_has_the_fields(tmp_path):
    root = tmp_path / "s"
    init_store(root)
    write_scene(root, "cooking.md", 2, "Pasta and bread.")
    write_scene(root, "travel.md", 5, "Trips abroad.")
    write_scene(root, "books.md", 2, "Novels read.")
    write_scene(root, "work.md", 9, "The job.")

    result = scenes("--dir", str(root), "list", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows] == ["work.md", "travel.md", "books.md", "cooking.md"]
    assert [r["heat"] for r in rows] == [9, 5, 2, 2]
    assert rows[1]["summary"] == "Trips abroad."
    assert rows[0]["updated"].startswith("2024-01-02")

    table = scenes("--dir", str(root), "list")
    assert table.exit_code == 0
    positions = [table.stdout.index(n) for n in ("work", "travel", "books", "cooking")]
    assert positions == sorted(positions)


def _fresh(*args: str, env: dict | None = None):
    """``scenes ARGS`` as a new process (the console script: the quick door)."""
    import os
    import subprocess
    import sys

    return subprocess.run([str(Path(sys.executable).with_name("scenes")), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_list_of_many_scenes_prints_every_row_in_a_pipe_and_on_a_terminal(tmp_path):
    """Hundreds of scenes (more than a screen): every row, hottest first, whole values with
    a tab between in a pipe; on a terminal the same rows as plain columns, each name whole;
    the quick door and the full command line say the same."""
    root = tmp_path / "s"
    init_store(root)
    count = 600
    for k in range(count):
        write_scene(root, f"scene-{k:04d}.md", k % 7, f"Scene {k},  a summary  with   spaces.")
    expected = sorted(((k % 7, f"scene-{k:04d}.md") for k in range(count)),
                      key=lambda r: (-r[0], r[1]))
    fresh = _fresh("--dir", str(root), "list")
    assert fresh.returncode == 0, fresh.stderr
    lines = fresh.stdout.splitlines()
    assert lines[0] == "name\theat\tupdated\tsummary" and len(lines) == count + 1
    assert [tuple(line.split("\t")[:2]) for line in lines[1:]] == [
        (name, str(heat)) for heat, name in expected]
    assert lines[1].split("\t")[2:] == ["2024-01-02T00:00", "Scene 6, a summary with spaces."]
    assert scenes("--dir", str(root), "list").stdout == fresh.stdout
    drawn = _fresh("--dir", str(root), "list",
                   env={"TTY_COMPATIBLE": "1", "COLUMNS": "100", "LINES": "40"})
    assert drawn.returncode == 0, drawn.stderr
    names = [line.split()[0] for line in drawn.stdout.splitlines()[1:] if line[:1] != " "]
    assert names == [name for _, name in expected]
    assert max(map(len, drawn.stdout.splitlines())) <= 100
    json_rows = json.loads(_fresh("--dir", str(root), "list", "--json").stdout)
    assert [(r["heat"], r["name"]) for r in json_rows] == expected


@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["list", "--json"],
                                  ["search", "x", "--json"], ["recall", "x", "--json"]])
def test_the_quick_door_says_status_list_and_their_errors_as_the_full_command_line(
        tmp_path, argv):
    """``status`` and ``list`` take the quick door too; a failure with ``--json`` is one JSON
    document on stdout on both doors, and the same line on stderr."""
    from scene_engine.cli import quick

    root = tmp_path / "s"
    init_store(root)
    write_scene(root, "work.md", 3, "The job.")
    for where in (root, tmp_path / "not-a-store"):
        assert quick._parse(["--dir", str(where), *argv]) is not None
        fresh = _fresh("--dir", str(where), *argv)
        full = scenes("--dir", str(where), *argv)
        assert (fresh.returncode, fresh.stdout, fresh.stderr) == (
            full.exit_code, full.stdout, full.stderr)
    assert fresh.returncode == 2 and "not-a-store does not exist" in fresh.stderr
    if "--json" in argv:
        assert json.loads(fresh.stdout)["exit_code"] == 2


def test_show_prints_the_file_as_on_disk_and_unknown_names_exit_2(tmp_path):
    root = tmp_path / "s"
    init_store(root)
    write_scene(root, "travel.md", 1, "Trips.", body="## 旅行\nWent to Kyoto.\n")
    on_disk = (root / "scenes" / "travel.md").read_text("utf-8")
    for name in ("travel", "travel.md", "TRAVEL.md"):
        result = scenes("--dir", str(root), "show", name)
        assert result.exit_code == 0
        assert result.stdout == on_disk
    missing = scenes("--dir", str(root), "show", "nowhere")
    assert missing.exit_code == 2
    assert "nowhere" in missing.stderr


def test_commands_find_the_store_from_a_subfolder_and_init_takes_dir(tmp_path, monkeypatch):
    root = tmp_path / "mem"
    assert runner.invoke(app, ["--dir", str(root), "init"]).exit_code == 0
    monkeypatch.chdir(root / "scenes")
    result = runner.invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["root"] == str(root.resolve())
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["status"]).exit_code == 2       # no store here or above


@pytest.mark.parametrize("torn", ['{\n  "batch": 1,\n  "cur', "[1, 2]", "\udcff"])
def test_a_torn_state_file_leaves_the_reads_answering_and_says_how_to_bring_it_back(
        tmp_path, torn):
    root = tmp_path / "store"
    scenes("init", str(root))
    assert scenes("--dir", str(root), "ingest", "-",
                  stdin='{"id": "k1", "content": "Booked a week in Kyoto."}\n').exit_code == 0
    state = root / ".scene-engine" / "state.json"
    state.write_text(torn, encoding="utf-8", errors="surrogateescape")
    hint = "git checkout -- "
    for args in (["search", "Kyoto"], ["search", "Kyoto", "--memories"], ["list"],
                 ["recall", "Kyoto"], ["log"], ["trace", "k1"]):
        done = scenes("--dir", str(root), *args)
        assert done.exit_code == 0 and done.exception is None, (args, done.output)
        assert "Kyoto" in done.stdout or "k1" in done.stdout, (args, done.stdout)
        assert hint in done.stderr, (args, done.stderr)          # named, with the way back
    for args in (["status"], ["run"], ["doctor"]):
        done = scenes("--dir", str(root), *args)
        assert done.exit_code == 1 and hint in done.output, (args, done.output)
    added = scenes("--dir", str(root), "add", "-", stdin='{"content": "More."}\n')
    assert added.exit_code == 1 and hint in added.stderr, added.output
    git.Repo(root).git.checkout("--", str(state))                   # the way back works
    assert scenes("--dir", str(root), "doctor").exit_code == 0


# ---------------------------------------------------------------- settings and state checked

CONFIG_VALUES = {
    "max_scenes": [3, 15, 100_000, 2, 100_001, 5.0, 5.5, "7", True, None, [1]],
    "max_scene_chars": [200, 199, 1_000_000, 1_000_001],
    "batch_size": [1, 0, 10_000, 10_001, -1],
    "persona_every": [1, 0, 10**30, "x"],
    "language": ["auto", "en", "zh", "fr", "EN", 1],
    "meta_style": ["yaml", "block", "toml"],
    "backend": ["offline", "llm", "model", None],
    "model": ["", "gpt-4o-mini", 5, b"x", None],
    "api_base": ["http://localhost:8080/v1", 1.5],
    "call_timeout": [60, 60.0, 0, 0.001, 86_400, 86_400.5, -1, float("inf"), float("nan"),
                     "60", True, 10**400],
    "batch_timeout": [1, 604_800, 604_801.0],
    "fold_idle": [1, 1.0, 0.99, 604_800.0, 604_800.01],
    "max_output_tokens": [16, 15, 1_000_000, 1_000_001],
    "timeout_retries": ["auto", 0, 20, 21, -1, "AUTO", "5", True, 3.0],
    "timezone": ["UTC", "Europe/Lisbon", "utc", "europe/lisbon", "Mars/Base", "", 0,
                 "../etc/passwd"],
    "fold_every": [1, 100_000, 100_001],
    "prefix": ["", "memory/"],
    "wiki_links": [True, False, 1, 0, "true", "yes", 2],
    "header_times": ["iso", "obsidian", "unix"],
    "new_scenes_per_batch": [1, 1000, 1001, 0],
    "embedding": ["use", "e5", "bge"],
    "secret_patterns": [[], ["sk-[a-z]+"], ["("], ("a",), [1], "abc", ["a"] * 1000,
                        ["a"] * 1001, [None]],
    "no_such_key": [1],
}


def _outcome(make, values):
    """What constructing with ``values`` gives: the fields, or the refusal's wording."""
    from pydantic import ValidationError

    try:
        return ("ok", make(**values).model_dump())
    except ValidationError as exc:
        return ("refused", str(exc).split("For further information")[0],
                exc.errors(include_url=False))


@pytest.mark.parametrize("name", sorted(CONFIG_VALUES))
def test_settings_are_accepted_converted_and_refused_as_pydantic_does(name):
    """``Config`` checks plain values itself and leaves the rest to pydantic: every value
    comes out as the pydantic model made it, or is refused in its words."""
    from scene_engine.store import schemas
    from scene_engine.store.config import Config

    for value in CONFIG_VALUES[name]:
        ours, theirs = _outcome(Config, {name: value}), _outcome(schemas.Config, {name: value})
        assert repr(ours) == repr(theirs), (name, value)
    assert Config().model_dump() == schemas.Config().model_dump()


def test_state_is_accepted_converted_and_refused_as_pydantic_does():
    from scene_engine.store import schemas
    from scene_engine.store.store import State

    cases = [{}, {"cursor": 3, "next_seq": 5, "batch": 1, "requeued": [1, 2], "forgotten": [],
                  "since_persona": 4, "format": 2},
             {"cursor": -1}, {"cursor": "3"}, {"cursor": 3.0}, {"cursor": 3.5}, {"batch": True},
             {"requeued": [1, "2"]}, {"requeued": [True]}, {"requeued": (1,)},
             {"forgotten": None}, {"format": -7}, {"format": "2"}, {"unknown": 1},
             {"next_seq": 10**30}]
    for values in cases:
        assert repr(_outcome(State, values)) == repr(_outcome(schemas.State, values)), values
    state = State(cursor=2, next_seq=5, requeued=[0])
    assert state.pending == 4
    moved = state.model_copy(update={"cursor": 5})
    assert (moved.cursor, state.cursor, moved.requeued) == (5, 2, [0])


def test_reading_a_store_loads_no_pydantic_for_settings_that_are_right(tmp_path):
    """A command that only reads (an agent's search, recall, status) opens the store without
    pydantic when its settings and state are as the engine writes them."""
    import subprocess
    import sys

    store = init_store(tmp_path / "s")
    code = ("import sys; from scene_engine.store.store import open_store; "
            f"s = open_store(__import__('pathlib').Path({str(store.root)!r})); "
            "s.load_state(); print('pydantic' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
