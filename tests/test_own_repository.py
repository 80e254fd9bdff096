"""A store writes only into its own git repository (issue 37, part 2).

``git init parent; scenes demo parent/inner; rm -rf parent/inner/.git``: git then finds
``parent`` for the store. Every command that writes refuses in one line saying what to do,
and nothing lands in ``parent``; ``status`` and ``log`` say so with exit 1. A store made
inside a repository (with ``--prefix``, or in a folder of it) is that repository's own and
works as before; the advice given brings the store back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from clirunner import CheckedRunner
from mcp import Client

from scene_engine.cli import app
from scene_engine.mcpserver.server import build_server
from scene_engine.services.demo import build_demo
from scene_engine.store.store import open_store

runner = CheckedRunner()
PERSON = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
          "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org"}
MEMORY = '{"id": "bike-1", "content": "Bought a road bike in Lisbon."}\n'
CONVERSATION = "2023-05-08\nAna: I moved to Porto last week and I love the river.\n"


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                          text=True, env={**os.environ, **PERSON}).stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """The demo store, its own repository, made once per module."""
    root = tmp_path_factory.mktemp("own") / "inner"
    build_demo(root)
    return root


@pytest.fixture
def orphan(made, tmp_path) -> tuple[Path, Path]:
    """(parent, store): a repository ``parent`` with no commit, and the demo store in it
    whose own ``.git`` is gone."""
    parent = tmp_path / "parent"
    parent.mkdir()
    git(parent, "init", "-q")
    store = parent / "inner"
    shutil.copytree(made, store, symlinks=True)
    shutil.rmtree(store / ".git")
    return parent, store


def scenes(store: Path, *args: str, stdin: str | None = None):
    return runner.invoke(app, ["--dir", str(store), *args], input=stdin)


def refused_in_one_line(result, parent: Path) -> None:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"inside the git repository {parent}, which never committed it" in lines[0]
    assert "git init" in lines[0] and "Nothing was changed" in lines[0]


def untouched(parent: Path) -> None:
    """``parent`` has no commit and nothing staged: nothing of the store went into it."""
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=parent,
                          capture_output=True, text=True)
    assert done.returncode != 0, done.stdout
    assert "A " not in git(parent, "status", "--porcelain").splitlines()


def test_status_and_log_say_the_repository_is_not_the_stores(orphan):
    parent, store = orphan
    for args in (["status"], ["log"]):
        refused_in_one_line(scenes(store, *args), parent)
    as_json = scenes(store, "status", "--json")
    assert as_json.exit_code == 1
    assert "never committed it" in json.loads(as_json.stdout)["error"]


@pytest.mark.parametrize("args,stdin", [
    (["add", "-"], MEMORY),
    (["ingest", "-"], MEMORY),
    (["run"], None),
    (["undo"], None),
    (["persona", "--force"], None),
    (["extract", "-"], CONVERSATION),
    (["repair"], None),
])
def test_every_write_refuses_and_nothing_lands_in_the_parent(orphan, args, stdin):
    parent, store = orphan
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()
              and ".scene-engine/index" not in str(p) and "/cache/" not in str(p)}
    refused_in_one_line(scenes(store, *args, stdin=stdin), parent)
    untouched(parent)
    for path, data in before.items():
        assert path.read_bytes() == data, path


def test_the_mcp_server_refuses_remember_and_status(orphan):
    parent, store = orphan

    async def main():
        async with Client(build_server(open_store(store))) as client:
            return (await client.call_tool("remember", {"content": "Bought a road bike."}),
                    await client.call_tool("status", {}))
    for answer in anyio.run(main):
        assert answer.is_error and "never committed it" in answer.content[0].text
    untouched(parent)


def test_the_advice_given_brings_the_store_back(orphan):
    parent, store = orphan
    git(store, "init", "-q")              # a repository of its own again, as the line says
    git(store, "add", "-A")
    git(store, "commit", "-qm", "scene store")
    assert scenes(store, "ingest", "-", stdin=MEMORY).exit_code == 0
    assert scenes(store, "status").exit_code == 0
    untouched(parent)


def test_committed_into_the_parent_it_is_the_parents_store(orphan):
    parent, store = orphan
    git(parent, "add", "inner")           # the other way the line offers
    git(parent, "commit", "-qm", "the store lives here")
    result = scenes(store, "add", "-", stdin=MEMORY)
    assert result.exit_code == 0, result.output
    assert git(parent, "log", "-1", "--format=%s").startswith("add: 1 memory")


def test_outside_any_repository_status_says_so(made, tmp_path):
    store = tmp_path / "alone"
    shutil.copytree(made, store, symlinks=True)
    shutil.rmtree(store / ".git")
    result = scenes(store, "status")
    assert result.exit_code == 1 and "is not in a git repository" in result.stderr


@pytest.mark.parametrize("prefix", ["", "memory/"])
def test_a_store_made_inside_a_repository_is_its_own(tmp_path, prefix):
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    git(vault, "init", "-q")
    (vault / "notes" / "todo.md").write_text("- call Ana\n", "utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "my notes")
    folder = vault / "notes"                 # a folder of the repository, not its top
    args = ["init", str(folder)] + (["--prefix", prefix] if prefix else [])
    assert runner.invoke(app, args).exit_code == 0
    store = folder / prefix
    for args, stdin in ((["ingest", "-"], MEMORY), (["status"], None), (["log"], None)):
        result = scenes(store, *args, stdin=stdin)
        assert result.exit_code == 0, (args, result.output)
    assert git(vault, "log", "-1", "--format=%s").startswith("batch 1")
