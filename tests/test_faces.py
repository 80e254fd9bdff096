"""Messages that say the truth, options that are never silently ignored, and the three faces
(command line, MCP server, Python API) refusing bad input in the same words, never with a
raw Python error (issue: messages and faces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app

runner = CheckedRunner()
COMMAND = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]


def memories(n: int, start: int = 0) -> str:
    topics = ("walked the dog in the park", "cooked curry for dinner", "我在图书馆看书")
    return "\n".join(json.dumps({"id": f"m{i}", "content": f"{topics[i % 3]} ({i})",
                                 "created_at": 1_700_000_000 + 3600 * i}, ensure_ascii=False)
                     for i in range(start, start + n))


@pytest.fixture
def root(tmp_path) -> Path:
    path = tmp_path / "store"
    assert runner.invoke(app, ["init", str(path)]).exit_code == 0
    return path


def scenes(root: Path | None, *args: str, stdin: str | None = None):
    prefix = ["--dir", str(root)] if root is not None else []
    return runner.invoke(app, [*prefix, *args], input=stdin)


# ---------------------------------------------------------------- 1. finding the store

@pytest.mark.parametrize("args", [["status"], ["list"], ["search", "x"]])
def test_outside_a_store_from_the_root_folder_is_not_a_store_exit_2(args):
    env = {k: v for k, v in os.environ.items() if k != "SCENE_ENGINE_DIR"}
    done = subprocess.run(COMMAND + args, cwd="/", env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done
    assert "/ is not a scene store" in done.stderr and "Permission denied" not in done.stderr


def test_an_unreadable_folder_below_is_skipped_by_the_lookup(tmp_path, monkeypatch):
    (tmp_path / "a" / "locked").mkdir(parents=True)
    real_is_file = Path.is_file

    def is_file(self):
        if "locked" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    monkeypatch.chdir(tmp_path)
    result = scenes(None, "status")
    assert result.exit_code == 2 and "is not a scene store" in result.stderr, result.output
    assert "Permission denied" not in result.output


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_dir_is_a_usage_error(root, value, monkeypatch):
    monkeypatch.chdir(root)                    # the current folder is a store: not taken
    for args in (["status"], ["list"], ["add", "-"]):
        result = runner.invoke(app, ["--dir", value, *args], input=memories(1))
        assert result.exit_code == 2 and "--dir" in result.output, result.output
    done = subprocess.run([*COMMAND, "--dir", value, "search", "x"], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--dir" in done.stderr, done
