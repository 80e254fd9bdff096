"""Noise a person learns to ignore, gone (issue 37, part 4).

- a recall at a budget chosen smaller than the default does not warn about the persona
  unless the caller asked for it, or the budget is below what the persona takes at its
  default share;
- an undo or redo that makes the persona anew does it in its own commit, not in a second
  "persona: regenerated" one, and its subject names the batch once;
- the page shows ``merged_from`` as links, not a Python list;
- a recall that finds nothing says so: a ``note:`` line, ``empty`` and ``note`` in the JSON
  and from the MCP tool (over HTTP: ``test_serving``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import git
import pytest
from clirunner import CheckedRunner
from mcp import Client
from test_page import Served, ask

from scene_engine.cli import app
from scene_engine.mcpserver.server import build_server
from scene_engine.services.demo import build_demo
from scene_engine.store.store import open_store

runner = CheckedRunner()
PERSON = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
          "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org"}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("quiet") / "store"
    build_demo(root)
    return root


@pytest.fixture
def demo(made, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(made, root, symlinks=True)
    return root


def scenes(root: Path, *args: str):
    return runner.invoke(app, ["--dir", str(root), *args])


def subjects(root: Path) -> list[str]:
    return [c.message.splitlines()[0] for c in git.Repo(root).iter_commits()]


# ---------------------------------------------------------------- the persona warning

@pytest.mark.parametrize("budget", ["1500", "1000", "600"])
def test_a_smaller_budget_chosen_on_purpose_says_nothing_of_the_persona(demo, budget):
    result = scenes(demo, "recall", "When did I move?", "--budget", budget)
    assert result.exit_code == 0 and result.stdout.strip()
    assert "persona" not in result.stderr, result.stderr


def test_asked_for_the_persona_a_recall_says_when_it_does_not_fit(demo):
    result = scenes(demo, "recall", "When did I move?", "--budget", "1500", "--persona")
    assert result.exit_code == 0
    assert "the persona does not fit in 1500 characters" in result.stderr
    need = int(result.stderr.split("--budget ")[1].split()[0])
    fits = scenes(demo, "recall", "When did I move?", "--budget", str(need), "--persona")
    assert "## Persona" in fits.stdout and "persona does not fit" not in fits.stderr


def test_a_budget_below_what_the_persona_takes_by_default_says_so_unasked(demo):
    result = scenes(demo, "recall", "When did I move?", "--budget", "100")
    assert "the persona does not fit in 100 characters" in result.stderr, result.stderr


def test_the_mcp_recall_takes_persona_too(demo):
    async def main():
        async with Client(build_server(open_store(demo))) as client:
            return [await client.call_tool("recall", {"query": "When did I move?",
                                                      "budget": 1500, **extra})
                    for extra in ({}, {"persona": True}, {"persona": "yes"})]
    plain, asked, wrong = anyio.run(main)
    assert "persona" not in json.loads(plain.content[0].text).get("warning", "")
    assert "persona does not fit" in json.loads(asked.content[0].text)["warning"]
    assert wrong.is_error and "persona must be true or false" in wrong.content[0].text


# ---------------------------------------------------------------- undo and the persona

def test_an_undo_makes_the_persona_anew_in_its_own_commit(demo):
    before = len(subjects(demo))
    persona = (demo / "persona.md").read_text("utf-8")
    result = scenes(demo, "undo", "--json")
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert done["persona_regenerated"] is True
    after = subjects(demo)
    assert len(after) == before + 1, after[:3]            # one commit, no persona commit
    assert not after[0].startswith("persona")
    number = done["batch"]
    assert after[0].startswith(f"undo batch {number}: ") and after[0].count("batch ") == 1
    head = git.Repo(demo).head.commit
    assert "persona.md" in head.stats.files and "Persona-Refreshed: " in head.message
    assert (demo / "persona.md").read_text("utf-8") != persona
    redone = scenes(demo, "undo", str(number))
    assert redone.exit_code == 0, redone.output
    assert not subjects(demo)[0].startswith("persona")
    assert subjects(demo)[0] == f"redo batch {number}"


def test_an_undo_with_forget_makes_the_persona_anew_in_its_own_commit(demo):
    before = len(subjects(demo))
    result = scenes(demo, "undo", "--forget")
    assert result.exit_code == 0, result.output
    assert len(subjects(demo)) == before + 1
    head = git.Repo(demo).head.commit
    assert "persona.md" in head.stats.files
    assert "Persona-Refreshed: an undo forgot memories" in head.message


def test_log_names_the_batch_once_for_an_undo(demo):
    scenes(demo, "undo")
    line = scenes(demo, "log").stdout.splitlines()[0]
    assert "undo batch" in line and line.count("batch ") == 1, line


# ---------------------------------------------------------------- merged_from on the page

def test_the_page_shows_merged_from_as_links(demo):
    name = sorted((demo / "scenes").glob("*.md"))[0]
    text = name.read_text("utf-8")
    text = text.replace("\nheat:", "\nmerged_from:\n- old-flat.md\n- rent-notes.md\nheat:", 1)
    name.write_text(text, "utf-8")
    subprocess.run(["git", "commit", "-qam", "merged by hand"], cwd=demo, check=True,
                   env={**os.environ, **PERSON})
    served = Served(demo)
    try:
        status, _, body = ask(served, "GET", f"/scene/{name.stem}")
    finally:
        said = served.stop()
    assert status == 200 and "Traceback" not in said
    assert '<a href="/scene/old-flat">old-flat</a>, <a href="/scene/rent-notes">rent-notes</a>' \
        in body, body
    assert "[&#39;" not in body and "['" not in body


# ---------------------------------------------------------------- a recall that finds nothing

def test_an_empty_store_recall_says_nothing_was_found(tmp_path):
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    result = scenes(root, "recall", "Where did I park?")
    assert result.exit_code == 0 and result.stdout == ""
    assert "note: nothing in memory answers the query: the answer is empty" in result.stderr
    said = json.loads(scenes(root, "recall", "Where did I park?", "--json").stdout)
    assert said["empty"] is True and said["chars"] == 0 and "nothing" in said["note"]


def test_a_recall_no_passage_answers_says_so_beside_the_persona_and_map(demo):
    result = scenes(demo, "recall", "zyzzyva quokka", "--json")
    said = json.loads(result.stdout)
    assert said["empty"] is True and said["passages"] == []
    assert "only the persona and the scene map" in said["note"]
    assert "note: nothing in memory answers" in scenes(demo, "recall", "zyzzyva quokka").stderr
    found = json.loads(scenes(demo, "recall", "When did I move?", "--json").stdout)
    assert found["empty"] is False and "note" not in found


def test_the_mcp_recall_says_nothing_was_found(tmp_path):
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0

    async def main():
        async with Client(build_server(open_store(root))) as client:
            return await client.call_tool("recall", {"query": "Where did I park?"})
    said = json.loads(anyio.run(main).content[0].text)
    assert said["empty"] is True and "nothing in memory answers" in said["note"]
