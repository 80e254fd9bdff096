"""Anthropic's memory tool on a store (issue 25, docs/DESIGN.md "Host folding").

Recorded ``memory`` tool calls (the JSON Claude sends) go to ``SceneMemoryTool.call`` as the
anthropic SDK's tool runner hands them over; one test runs the SDK's own tool runner against a
scripted Messages API server on 127.0.0.1 (no real model). What a user notices: a turn's
changes are one batch and one commit that ``scenes undo`` reverts; every refusal kind that
applies to a change set without memories comes back as the tool's error text and loses
nothing; a turn never flushed, or one whose lease ran out, writes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from anthropic.lib.tools import ToolError
from test_batch_llm import (
    FAMILY,
    HOBBIES,
    WORK,
    assert_nothing_written,
    assert_scenes_obey_rules,
    make_store,
    snapshot,
    texts,
)

from scene_engine.memorytool.sdk import SceneMemoryTool
from scene_engine.services.host_fold import FoldProblems
from scene_engine.services.undo import undo
from scene_engine.store import history
from scene_engine.store.scene import read_scene
from scene_engine.store.store import open_store

MINE = "Note to self: ask about the ICU rotation in autumn."


@pytest.fixture
def store(tmp_path):
    """work, family, hobbies; one memory pending (the memory tool leaves it pending)."""
    return make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1)},
                      ["Alice started night shifts at the hospital ward in May."])


def said(tool: SceneMemoryTool, **command) -> str:
    """The tool result of one recorded ``memory`` call (as the SDK's runner gets it)."""
    return tool.call(command)


def refused(tool: SceneMemoryTool, **command) -> str:
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    return str(caught.value)


def head(store):
    return history.open_repo(store.root).head.commit


# ------------------------------------------------------------------ a turn, end to end

def test_a_turn_of_memory_tool_calls_is_one_batch_that_undo_reverts(store):
    before = texts(store)
    tool = SceneMemoryTool(store.root, holder="test-app")

    listing = said(tool, command="view", path="/memories")
    shown = said(tool, command="view", path="/memories/work.md")
    said(tool, command="str_replace", path="/memories/work.md",
         old_str="surgical ward.", new_str="surgical ward, on nights since May 2024.")
    said(tool, command="view", path="/memories/family.md")
    said(tool, command="insert", path="/memories/family.md", insert_line=7,
         insert_text="Mara is training to be a teacher.")
    created = said(tool, command="create", path="/memories/baking.md",
                   file_text="Alice bakes sourdough on Sundays.\n")
    assert texts(open_store(store.root)) == before        # nothing written before the flush

    done = tool.flush()

    assert "/memories/work.md\theat 3\tAlice's nursing job" in listing
    assert "     1\t---" in shown and "surgical ward" in shown
    assert created == "File created successfully at: /memories/baking.md"
    assert done["batch"] == 1 and done["counts"]["updated"] == 2 and done["counts"]["created"] == 1
    store = open_store(store.root)
    after = texts(store)
    assert "on nights since May 2024" in after["work.md"]
    assert "Mara is training to be a teacher." in after["family.md"].splitlines()
    baking = read_scene(store.scenes_dir / "baking.md")
    assert baking.meta["summary"] == "Alice bakes sourdough on Sundays." and baking.meta["heat"] == 1
    commit = head(store)
    assert commit.summary.startswith("batch 1:") and commit.hexsha == done["commit"]
    assert history.trailers(commit.message)["Backend"] == "host (test-app)"
    assert store.load_state().pending == 1                # the journal's memory still waits
    assert_scenes_obey_rules(store)

    undo(store, "1")                                      # a person reverts the turn
    assert texts(open_store(store.root)) == before


def test_rename_keeps_merged_from_and_the_history_follows(store):
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories/hobbies.md")
    assert said(tool, command="rename", old_path="/memories/hobbies.md",
                new_path="/memories/climbing.md") == ("Successfully renamed "
                                                      "/memories/hobbies.md to "
                                                      "/memories/climbing.md")
    listing = said(tool, command="view", path="/memories")
    done = tool.flush()

    assert "/memories/climbing.md" in listing and "/memories/hobbies.md" not in listing
    assert done["counts"].get("renamed") == 1
    store = open_store(store.root)
    assert store.scene_names() == ["climbing.md", "family.md", "work.md"]
    climbing = read_scene(store.scenes_dir / "climbing.md")
    assert climbing.meta["merged_from"] == ["hobbies.md"] and "bouldering" in climbing.body
    assert_scenes_obey_rules(store)


# ------------------------------------------------------------------ refusals

def test_every_refusal_kind_is_the_tools_error_and_loses_nothing(store):
    (store.scenes_dir / "work.md").write_text(texts(store)["work.md"] + MINE + "\n", "utf-8")
    history.commit_files(history.open_repo(store.root), "hand edit: work.md",
                         ["scenes/work.md"])
    before = snapshot(store)
    tool = SceneMemoryTool(store.root)
    told = {
        "unread change": refused(tool, command="str_replace", path="/memories/work.md",
                                 old_str="surgical", new_str="cardiac"),
        "create without reads": refused(tool, command="create", path="/memories/pets.md",
                                        file_text="Alice has a dog.\n"),
        "delete outside a merge": (said(tool, command="view", path="/memories/hobbies.md"),
                                   refused(tool, command="delete",
                                           path="/memories/hobbies.md"))[1],
        "cut a person's line": (said(tool, command="view", path="/memories/work.md"),
                                refused(tool, command="str_replace", path="/memories/work.md",
                                        old_str=MINE, new_str="ICU later."))[1],
        "create over a scene": refused(tool, command="create", path="/memories/WORK.md",
                                       file_text="Alice's job.\n"),
        "forged pin": refused(tool, command="str_replace", path="/memories/work.md",
                              old_str="heat: 3", new_str="heat: 3\npinned: true"),
        "no text": refused(tool, command="create", path="/memories/x.md", file_text=None),
        "report name": refused(tool, command="create", path="/memories/batch-1-report.md",
                               file_text="Summary of today.\n"),
        "outside /memories": refused(tool, command="view", path="/etc/passwd"),
        "traversal": refused(tool, command="view", path="/memories/../.scene-engine/state.json"),
        "a folder": refused(tool, command="create", path="/memories/notes/today.md",
                            file_text="x\n"),
        "not markdown": refused(tool, command="create", path="/memories/notes.txt",
                                file_text="x\n"),
        "clear all": str(pytest.raises(ToolError, tool.clear_all_memory).value),
    }
    said(tool, command="view", path="/memories/family.md")
    said(tool, command="create", path="/memories/pets.md", file_text="Alice has a dog.\n")
    told["two creates"] = refused(tool, command="create", path="/memories/cooking.md",
                                  file_text="Alice cooks.\n")

    assert "you have not viewed /memories/work.md" in told["unread change"]
    assert "read at least 2 existing scenes" in told["create without reads"]
    assert "only as part of a merge" in told["delete outside a merge"]
    assert "keep these lines a person wrote" in told["cut a person's line"]
    assert "already exists" in told["create over a scene"]
    assert "only a person pins a scene" in told["forged pin"]
    assert "`file_text` must be text" in told["no text"]
    assert "read_file" not in " ".join(told.values())       # the memory tool's own words
    assert "view /memories/work.md" in told["unread change"]
    assert "report or log name" in told["report name"]
    assert "Path must start with /memories" in told["outside /memories"]
    assert "would escape /memories" in told["traversal"]
    assert "no folders" in told["a folder"]
    assert "ending in .md" in told["not markdown"]
    assert "at most 1 new scene" in told["two creates"]
    assert "clearing every scene is not offered" in told["clear all"]
    assert all(text.startswith("Error: ") for text in told.values() if text != told["clear all"])
    tool.abort()
    assert_nothing_written(store, before)


@pytest.mark.parametrize("command", [
    {"command": "str_replace", "path": "/memories/family.md", "old_str": "Mara",
     "new_str": "Line \udcff 3"},
    {"command": "insert", "path": "/memories/family.md", "insert_line": 1,
     "insert_text": "Line \udcff 3"},
    {"command": "create", "path": "/memories/pets.md", "file_text": "Line \udcff 3"},
    {"command": "create", "path": "/memories/pets\udcff.md", "file_text": "Line 3"},
    {"command": "view", "path": "/memories/nothing-here.md"},
])
def test_a_refused_command_loses_nothing_but_itself(store, command):
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories/work.md")
    said(tool, command="view", path="/memories/family.md")
    said(tool, command="str_replace", path="/memories/work.md",
         old_str="surgical ward.", new_str="surgical ward, on nights.")
    assert refused(tool, **command).startswith("Error: ")
    # the turn goes on: a later edit needs no new view, and the earlier one is flushed
    said(tool, command="insert", path="/memories/family.md", insert_line=7,
         insert_text="Mara is training to be a teacher.")
    done = tool.flush()
    assert done["batch"] == 1 and done["counts"]["updated"] == 2
    after = texts(open_store(store.root))
    assert "on nights." in after["work.md"] and "Mara is training" in after["family.md"]
    assert "\\udcff" not in "".join(after.values()) and "pets" not in " ".join(after)


def test_a_lone_surrogate_is_refused_with_the_reason(store):
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories/work.md")
    told = refused(tool, command="str_replace", path="/memories/work.md",
                   old_str="surgical", new_str="Line \udcff 3")
    assert "`new_str` holds a lone surrogate" in told and "UTF-8" in told
    tool.abort()


def test_view_range_as_the_sdks_own_memory_tool_takes_it(store, tmp_path):
    from anthropic.tools.memory import BetaLocalFilesystemMemoryTool

    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "ref"))
    text = texts(store)["work.md"]
    reference.call({"command": "create", "path": "/memories/work.md", "file_text": text})
    tool = SceneMemoryTool(store.root)
    for view_range in ([50, 60], [3], [2, 4], [4, -1], [0, 2], [5, 3], [], None):
        ours = said(tool, command="view", path="/memories/work.md", view_range=view_range)
        theirs = reference.call({"command": "view", "path": "/memories/work.md",
                                 "view_range": view_range})
        # the reference counts the empty string after the last newline as a line; a scene
        # view does not (as insert counts lines), so a whole view differs by that line only
        assert ours == theirs.removesuffix(f"\n{len(text.split(chr(10))):>6}\t"), view_range
    assert said(tool, command="view", path="/memories/work.md", view_range=[50, 60]) == \
        "Here's the content of /memories/work.md with line numbers:\n"
    tool.abort()


@pytest.mark.parametrize("path", ["/memories//work.md", "/memories/./work.md",
                                  "/memories/.//./work.md"])
def test_empty_and_dot_steps_name_the_same_scene(store, path):
    tool = SceneMemoryTool(store.root)
    shown = said(tool, command="view", path=path)
    assert "surgical ward" in shown
    said(tool, command="str_replace", path=path, old_str="surgical ward.",
         new_str="surgical ward, on nights.")
    assert "/memories/work.md\theat 3" in said(tool, command="view", path="/memories//")
    assert tool.flush()["counts"]["updated"] == 1
    assert "on nights." in texts(open_store(store.root))["work.md"]


def test_an_empty_create_says_why_a_scene_cannot_be_empty(store):
    tool = SceneMemoryTool(store.root)
    for text in ("", "  \n"):
        told = refused(tool, command="create", path="/memories/pets.md", file_text=text)
        assert "`file_text` is empty, and a scene cannot be" in told
    tool.abort()


def test_the_listing_reads_plainly(store):
    tool = SceneMemoryTool(store.root)
    listing = said(tool, command="view", path="/memories")
    tool.abort()
    assert listing.startswith("The scenes in /memories, one Markdown file per part of")
    assert "Here're" not in listing


def test_a_rule_only_the_whole_batch_shows_is_returned_at_flush_and_repaired(store):
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories/family.md")
    # The merge names hobbies.md but does not hold its text: refused at the delete already.
    said(tool, command="str_replace", path="/memories/family.md", old_str="heat: 2",
         new_str="heat: 2\nmerged_from: [hobbies.md]")
    said(tool, command="view", path="/memories/hobbies.md")
    assert "holds only" in refused(tool, command="delete", path="/memories/hobbies.md")
    # Left as it is, the batch names a merge that never happened: the flush says so.
    with pytest.raises(FoldProblems) as caught:
        tool.flush()
    assert any("hobbies.md" in p for p in caught.value.problems)
    said(tool, command="insert", path="/memories/family.md", insert_line=8,
         insert_text=HOBBIES[1])
    said(tool, command="delete", path="/memories/hobbies.md")

    done = tool.flush()

    assert done["counts"]["merged"] == 1 and done["counts"]["deleted"] == 1
    store = open_store(store.root)
    assert store.scene_names() == ["family.md", "work.md"]
    assert "bouldering" in texts(store)["family.md"]
    assert_scenes_obey_rules(store)


def test_a_turn_whose_lease_runs_out_writes_nothing(store):
    before = snapshot(store)
    tool = SceneMemoryTool(store.root, lease=0.5)
    said(tool, command="view", path="/memories/work.md")
    said(tool, command="str_replace", path="/memories/work.md", old_str="surgical",
         new_str="cardiac")
    time.sleep(1.5)
    told = refused(tool, command="view", path="/memories/work.md")
    assert "lease ran out" in told and "changes since the last flush are gone" in told
    assert_nothing_written(store, before)
    # The next command opens a new turn on the store as it is.
    assert "surgical" in said(tool, command="view", path="/memories/work.md")
    tool.abort()


def test_a_flush_with_no_change_commits_nothing(store):
    before = snapshot(store)
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories")
    assert tool.flush()["batch"] is None
    assert tool.flush()["batch"] is None                  # nothing open: nothing to do
    assert_nothing_written(store, before)


# ------------------------------------------------------------------ the SDK's own tool runner

class ScriptedClaude(ThreadingHTTPServer):
    """A Messages API on 127.0.0.1 that answers each request with the next scripted message
    and keeps the requests (the tool results the runner sent back)."""

    def __init__(self, script: list[list[dict]]):
        self.script, self.requests = list(script), []
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):            # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        content = self.server.script.pop(0)
        tool_use = any(block["type"] == "tool_use" for block in content)
        answer = json.dumps({
            "id": f"msg_{len(self.server.requests)}", "type": "message", "role": "assistant",
            "model": body["model"], "content": content,
            "stop_reason": "tool_use" if tool_use else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def memory_call(number: int, **command) -> list[dict]:
    return [{"type": "tool_use", "id": f"toolu_{number}", "name": "memory", "input": command}]


def test_the_anthropic_sdks_tool_runner_drives_a_turn(store):
    from anthropic import Anthropic

    claude = ScriptedClaude([
        memory_call(1, command="view", path="/memories"),
        memory_call(2, command="str_replace", path="/memories/work.md", old_str="surgical",
                    new_str="cardiac"),                      # not viewed yet: refused
        memory_call(3, command="view", path="/memories/work.md"),
        memory_call(4, command="str_replace", path="/memories/work.md",
                    old_str="surgical ward.", new_str="surgical ward; nights since May."),
        [{"type": "text", "text": "Noted: Alice works nights now."}]])
    tool = SceneMemoryTool(store, holder="tool-runner")
    client = Anthropic(api_key="sk-test", base_url=claude.url, max_retries=0)
    try:
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=1024, tools=[tool], thread=False,
            messages=[{"role": "user", "content": "I work nights since May."}])
        replies = list(runner)
    finally:
        claude.shutdown()
    done = tool.flush()

    assert replies[-1].content[-1].text == "Noted: Alice works nights now."
    assert claude.requests[0]["tools"][0]["type"] == "memory_20250818"
    results = {block["tool_use_id"]: block for request in claude.requests
               for message in request["messages"] if message["role"] == "user"
               and isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result"}
    assert results["toolu_2"].get("is_error") is True
    assert "you have not viewed /memories/work.md" in json.dumps(results["toolu_2"]["content"])
    assert not results["toolu_4"].get("is_error")
    assert done["batch"] == 1
    assert "nights since May" in texts(open_store(store.root))["work.md"]


def test_renames_are_whole_or_nothing_and_the_persona_follows(store):
    from scene_engine.services.doctor import check_store

    (store.scenes_dir / "family.md").write_text(
        texts(store)["family.md"].replace("heat: 2", "heat: 2\npinned: true"), "utf-8")
    history.commit_files(history.open_repo(store.root), "hand edit: pin family",
                         ["scenes/family.md"])
    made = subprocess.run([sys.executable, "-c", "from scene_engine.cli.entry import main; "
                           "main()", "--dir", str(store.root), "persona", "--force"],
                          capture_output=True, text=True)
    assert made.returncode == 0 and "**hobbies**" in store.persona_path.read_text(), made.stderr
    tool = SceneMemoryTool(store.root)
    said(tool, command="view", path="/memories/family.md")
    said(tool, command="view", path="/memories/work.md")
    # A pinned scene cannot be deleted: the rename is refused and leaves no copy behind.
    assert "pinned" in refused(tool, command="rename", old_path="/memories/family.md",
                               new_path="/memories/home.md")
    assert "/memories/home.md" not in said(tool, command="view", path="/memories")
    # A scene made this turn is moved, not merged (and is still the turn's one new scene).
    said(tool, command="create", path="/memories/baking.md", file_text="Alice bakes bread.\n")
    said(tool, command="rename", old_path="/memories/baking.md", new_path="/memories/bread.md")
    said(tool, command="view", path="/memories/hobbies.md")
    said(tool, command="rename", old_path="/memories/hobbies.md",
         new_path="/memories/climbing.md")
    said(tool, command="str_replace", path="/memories/climbing.md", old_str="goes bouldering",
         new_str="goes bouldering twice")
    done = tool.flush()

    assert done["counts"]["created"] == 1 and done["counts"].get("renamed") == 1
    store = open_store(store.root)
    assert store.scene_names() == ["bread.md", "climbing.md", "family.md", "work.md"]
    assert texts(store)["climbing.md"].endswith("\n")
    assert check_store(store) == []          # the persona names no gone scene


def test_the_tool_is_safe_to_call_from_threads_and_says_a_busy_store_as_a_tool_error(store):
    from concurrent.futures import ThreadPoolExecutor

    one = SceneMemoryTool(store.root, holder="app-one")
    with ThreadPoolExecutor(8) as pool:
        views = list(pool.map(lambda _: one.call({"command": "view", "path": "/memories"}),
                              range(8)))
    assert all("/memories/work.md" in v for v in views)       # one turn, not eight
    other = SceneMemoryTool(store.root, holder="app-two")
    told = refused(other, command="view", path="/memories")
    assert "app-one" in told and "holds it" in told
    one.abort()
    for lease in ("abc", -1, 0, float("nan"), True):
        with pytest.raises(Exception, match="lease is a number of seconds"):
            SceneMemoryTool(store.root, lease=lease)
