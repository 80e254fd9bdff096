"""A person's bytes never crash a reader (issue 37, part 1).

One byte that is not UTF-8 appended to a scene (an old editor's Latin-1 ``café``), to the
persona or to the config: every face that reads the file (the command line, the page, the MCP
tool and resource, undo, the memory tool) says so in one line naming the file and the byte and
pointing at ``scenes doctor``, or shows the bytes escaped; none answers with a traceback, a
500 or a Python class name. ``core.fs.read_regular_text`` and ``decode_utf8`` are the one place
a strict read fails (``core.errors.NotUtf8Error``); each face renders that error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import git
import pytest
from anthropic.lib.tools import ToolError
from clirunner import CheckedRunner
from mcp import Client
from mcp.shared.exceptions import MCPError
from test_page import Served, ask

from scene_engine.cli import app
from scene_engine.mcpserver.server import build_server
from scene_engine.memorytool.sdk import SceneMemoryTool
from scene_engine.services.demo import build_demo
from scene_engine.store.store import open_store

runner = CheckedRunner()
PERSON = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
          "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org"}
BAD = b"caf\xe9\n"                      # Latin-1 "café": 0xe9 starts no UTF-8 sequence


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bytes") / "store"
    build_demo(root)
    return root


def holding(root: Path, words: str) -> str:
    """The demo's scene file whose text holds ``words`` (names follow the grouping)."""
    return next(p.name for p in sorted((root / "scenes").glob("*.md"))
                if words in p.read_text("utf-8", "replace"))


@pytest.fixture
def spoilt(made, tmp_path) -> tuple[Path, str, int]:
    """A copy of the demo with ``BAD`` appended to the work scene: (root, its file name, the
    offset of the bad byte)."""
    root = tmp_path / "store"
    shutil.copytree(made, root, symlinks=True)
    name = holding(root, "Northwind")
    path = root / "scenes" / name
    offset = path.stat().st_size + BAD.index(b"\xe9")
    with path.open("ab") as handle:
        handle.write(BAD)
    return root, name, offset


def scenes(root: Path, *args: str):
    return runner.invoke(app, ["--dir", str(root), *args])


def one_line_naming(text: str, where: str, offset: int) -> None:
    """``text`` is one line that names ``where``, the byte and ``scenes doctor``."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert f"{where} is not UTF-8 (byte {offset})" in lines[0], text
    assert "`scenes doctor`" in lines[0] and "Traceback" not in text, text
    assert "UnicodeDecodeError" not in text and "codec" not in text, text


# ---------------------------------------------------------------- the command line

def test_show_says_the_file_and_the_byte_in_one_line(spoilt):
    root, name, offset = spoilt
    result = scenes(root, "show", name.removesuffix(".md"))
    assert result.exit_code == 1 and result.stdout == ""
    one_line_naming(result.stderr, f"scenes/{name}", offset)


def test_the_other_readers_answer_around_it(spoilt):
    root, name, _ = spoilt
    for args in (["list"], ["status"], ["search", "Marta"], ["recall", "Marta"],
                 ["trace", "demo-001"], ["log"]):
        result = scenes(root, *args)
        assert result.exit_code == 0, (args, result.output)
    blamed = scenes(root, "blame", name.removesuffix(".md"), "--json")
    assert blamed.exit_code == 0, blamed.output
    rows = json.loads(blamed.stdout)          # still UTF-8 JSON: the byte said as \xe9
    assert rows[-1]["text"] == "caf\\xe9"
    doctor = scenes(root, "doctor")
    assert doctor.exit_code == 1 and f"scene {name} is not UTF-8 (byte" in doctor.stdout


@pytest.mark.parametrize("args", [["recall"], ["recall", "--json"], ["search"], ["trace"],
                                  ["show"], ["blame"]])
def test_a_question_typed_in_another_encoding_gets_an_answer_not_a_traceback(made, args):
    # The shell hands Python undecodable bytes as lone surrogates ("caf\udce9"); the
    # sentence encoder could not take them (a newcomer's `scenes recall`).
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    done = subprocess.run([*command, "--dir", str(made), *args, b"caf\xe9"],
                          capture_output=True, timeout=120)
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode in (0, 1, 2), said
    assert "Traceback" not in said and "UnicodeEncodeError" not in said, said
    assert len([line for line in done.stderr.decode("utf-8", "replace").splitlines()
                if line.strip()]) <= 1, said


def test_status_names_each_file_that_is_not_utf8_as_doctor_does(spoilt):
    root, name, offset = spoilt
    warnings = json.loads(scenes(root, "status", "--json").stdout)["warnings"]
    assert any(f"scenes/{name} is not UTF-8 (byte {offset})" in w for w in warnings), warnings
    persona = root / "persona.md"
    at = persona.stat().st_size
    with persona.open("ab") as handle:
        handle.write(b"\xff\n")
    warnings = json.loads(scenes(root, "status", "--json").stdout)["warnings"]
    assert any(f"persona.md is not UTF-8 (byte {at})" in w for w in warnings), warnings


def test_a_persona_that_is_not_utf8_is_said_by_persona_and_named_by_doctor(spoilt):
    root, _, _ = spoilt
    persona = root / "persona.md"
    offset = persona.stat().st_size
    with persona.open("ab") as handle:
        handle.write(b"\xff\n")
    result = scenes(root, "persona")
    assert result.exit_code == 1
    one_line_naming(result.stderr, "persona.md", offset)
    recalled = scenes(root, "recall", "Marta", "--json")
    assert recalled.exit_code == 0
    answer = json.loads(recalled.stdout)      # left out, as a batch leaves it, and said
    assert answer["persona"] == "" and "\ufffd" not in answer["text"]
    assert f"persona.md is not UTF-8 (byte {offset})" in answer["warning"]
    assert f"persona.md is not UTF-8 (byte {offset})" in scenes(root, "doctor").stdout


def test_a_config_that_is_not_utf8_is_one_line_with_the_byte(spoilt):
    root, _, _ = spoilt
    config = root / ".scene-engine" / "config.toml"
    offset = config.stat().st_size
    with config.open("ab") as handle:
        handle.write(b"# caf\xe9\n")
    for args in (["status"], ["list"]):
        result = scenes(root, *args)
        assert result.exit_code == 2, result.output       # bad input, as any bad config
        assert f"config.toml: not UTF-8 (byte {offset + 5})" in result.stderr, result.output
        assert "codec" not in result.output and len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------- undo

def test_undo_of_a_batch_that_touched_it_refuses_in_one_line_and_changes_nothing(spoilt):
    root, name, offset = spoilt
    repo = git.Repo(root)
    touched = next(c for c in repo.iter_commits(paths=f"scenes/{name}")
                   if c.message.startswith("batch "))
    number = touched.message.split(":")[0].removeprefix("batch ")
    before, text = repo.head.commit.hexsha, (root / "scenes" / name).read_bytes()
    result = scenes(root, "undo", number)
    assert result.exit_code == 1, result.output
    one_line_naming(result.stderr, f"scenes/{name}", offset)
    assert f"cannot undo {touched.hexsha[:8]}" in result.stderr
    assert "Nothing was changed" in result.stderr
    assert repo.head.commit.hexsha == before
    assert (root / "scenes" / name).read_bytes() == text


def test_undo_of_a_batch_that_left_it_alone_still_works(spoilt):
    root, name, _ = spoilt
    repo = git.Repo(root)
    touched = {c.hexsha for c in repo.iter_commits(paths=f"scenes/{name}")}
    other = next(c for c in repo.iter_commits()
                 if c.message.startswith("batch ") and c.hexsha not in touched)
    number = other.message.split(":")[0].removeprefix("batch ")
    result = scenes(root, "undo", number)
    assert result.exit_code == 0, result.output
    assert (root / "scenes" / name).read_bytes().endswith(BAD)


# ---------------------------------------------------------------- the page

def test_the_page_shows_the_scene_escaped_with_a_notice_in_every_view(spoilt):
    root, name, offset = spoilt
    subprocess.run(["git", "commit", "-qm", "café", f"scenes/{name}"], cwd=root, check=True,
                   env={**os.environ, **PERSON})  # the person commits it: a diff holds it
    served = Served(root)
    try:
        for view in ("", "/timeline", "/history", "/blame"):
            status, _, body = ask(served, "GET", f"/scene/{name.removesuffix('.md')}{view}")
            assert status == 200, (view, body)
            assert f"scenes/{name} is not UTF-8 (byte {offset})" in body, view
            if view != "/timeline":            # the line itself, its byte written out
                assert "caf\\xe9" in body, view
    finally:
        said = served.stop()
    assert "Traceback" not in said and "Error" not in said, said


# ---------------------------------------------------------------- MCP

def test_the_read_scene_tool_says_the_file_and_the_byte(spoilt):
    root, name, offset = spoilt

    async def main():
        async with Client(build_server(open_store(root))) as client:
            bad = await client.call_tool("read_scene", {"name": name})
            other = await client.call_tool("read_scene", {"name": holding(root, "红烧肉")})
            listed = await client.call_tool("list_scenes", {})
            return bad, other, listed
    bad, other, listed = anyio.run(main)
    assert bad.is_error
    one_line_naming(bad.content[0].text, f"scenes/{name}", offset)
    assert not other.is_error and not listed.is_error


def test_the_scene_resource_says_the_file_and_the_byte(spoilt):
    root, name, offset = spoilt

    async def main():
        async with Client(build_server(open_store(root))) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(f"scene://{name.removesuffix('.md')}")
            return str(caught.value)
    one_line_naming(anyio.run(main), f"scenes/{name}", offset)


# ---------------------------------------------------------------- the memory tool

def test_the_memory_tool_names_it_left_alone_and_the_turn_goes_on(spoilt):
    root, name, offset = spoilt
    tool = SceneMemoryTool(open_store(root))
    listing = tool.call({"command": "view", "path": "/memories"})
    assert f"/memories/{name}: it is not UTF-8 text (byte {offset})" in listing
    for command in ({"command": "view", "path": f"/memories/{name}"},
                    {"command": "str_replace", "path": f"/memories/{name}",
                     "old_str": "Marta", "new_str": "M."},
                    {"command": "insert", "path": f"/memories/{name}", "insert_line": 1,
                     "insert_text": "x"},
                    {"command": "delete", "path": f"/memories/{name}"}):
        with pytest.raises(ToolError) as caught:
            tool.call(command)
        said = str(caught.value)
        assert f"not UTF-8 text (byte {offset})" in said and "`scenes doctor`" in said, said
        assert "does not exist" not in said
    other = holding(root, "红烧肉")
    tool.call({"command": "view", "path": f"/memories/{other}"})
    tool.call({"command": "str_replace", "path": f"/memories/{other}", "old_str": "李伟邀请我",
               "new_str": "李伟约我"})
    done = tool.flush()
    assert done["commit"] and "李伟约我" in (root / "scenes" / other).read_text("utf-8")
    assert (root / "scenes" / name).read_bytes().endswith(BAD)
