"""Rules for the tests themselves (issue 22 item 11): what keeps a test able to see what it
claims."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from clirunner import CheckedRunner, CommandCrashed

from scene_engine.cli import app

TESTS = Path(__file__).resolve().parent


def test_every_in_process_command_run_goes_through_the_checked_runner():
    # A bare CliRunner hides a crash as exit 1 (see tests/clirunner.py).
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "clirunner.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in ("typer.testing",
                                                                     "click.testing"):
                names = {alias.name for alias in node.names}
                if names & {"CliRunner", "*"}:
                    bare.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not bare, f"use clirunner.CheckedRunner instead of CliRunner: {bare}"


def test_the_checked_runner_fails_on_a_crash_and_passes_an_exit_code(tmp_path, monkeypatch):
    from scene_engine.store.store import init_store

    root = tmp_path / "store"
    init_store(root)
    refused = CheckedRunner().invoke(app, ["--dir", str(tmp_path / "none"), "status"])
    assert refused.exit_code == 2 and isinstance(refused.exception, SystemExit)

    def crash(*args, **kwargs):
        raise ZeroDivisionError("a planted bug")

    monkeypatch.setattr("scene_engine.services.status.status", crash)
    with pytest.raises(CommandCrashed, match="ZeroDivisionError: a planted bug"):
        CheckedRunner().invoke(app, ["--dir", str(root), "status"])
