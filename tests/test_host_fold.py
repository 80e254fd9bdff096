"""The host's own model folds a batch over MCP (issue 25, docs/DESIGN.md "Host folding").

The official MCP SDK's client drives ``scenes mcp --fold-tools`` (a real child process over
stdio) as a scripted agent would: fold_begin, the three file tools with the batch token,
fold_commit. Every refusal kind of the litellm path comes back as a tool error with the
rules' own text, is repaired and committed; a lease that runs out, an abort and an agent that
vanishes write nothing and leave the memory pending; two agents racing for one store: the
second is told who holds it. No model anywhere: the "agent" is the test.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation
from test_batch_llm import (
    FAMILY,
    HOBBIES,
    NIGHT_SHIFT,
    WORK,
    assert_committed_batch,
    assert_nothing_written,
    make_store,
    model_scene,
    snapshot,
    texts,
)

from scene_engine.batch.transcript import read_events, transcript_path
from scene_engine.services.host_fold import FoldBusy, FoldClosed, FoldProblems, HostFolds
from scene_engine.store import history
from scene_engine.store.store import open_store

ENTRY = "from scene_engine.cli.entry import main; main()"
GARDEN = ("Tomatoes and basil on the balcony.", "Tomatoes on the balcony grow slowly.\n")
MINE = "Note to self: ask about the ICU rotation in autumn."
WORK_NIGHTS = model_scene("Alice's nursing job at the city hospital, now on night shifts.",
                          WORK[1] + "In May 2024 she started night shifts.\n")


@pytest.fixture
def store(tmp_path):
    """work, family, hobbies (shown in the prompt) and garden (not shown), one memory m0."""
    return make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1), "garden.md": (*GARDEN, 1)},
                      [NIGHT_SHIFT])


def params(root: Path, *options: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[
        "-c", ENTRY, "--dir", str(root), "mcp", "--fold-tools", *options])


class Agent:
    """A scripted agent's MCP session: each step a tool call, results and errors kept."""

    def __init__(self, client):
        self.client = client
        self.batch: str | None = None
        self.errors: list[str] = []

    async def begin(self) -> dict:
        begun = await self.ok("fold_begin", {})
        self.batch = begun["batch"]
        return begun

    async def tool(self, name: str, **arguments) -> tuple[bool, str]:
        """(is_error, text) of one call with the batch token."""
        result = await self.client.call_tool(name, {"batch": self.batch, **arguments})
        text = result.content[0].text if result.content else ""
        if result.is_error:
            self.errors.append(text)
        return result.is_error, text

    async def ok(self, name: str, arguments: dict):
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content.get("result", result.structured_content) \
            if result.structured_content else json.loads(result.content[0].text)

    async def commit(self, answer: str) -> tuple[bool, str]:
        return await self.tool("fold_commit", answer=answer)


def drive(root: Path, body, *options: str, name: str = "scripted-agent"):
    """Run ``await body(agent)`` in a fresh ``scenes mcp --fold-tools`` session."""
    async def main():
        async with Client(params(root, *options), read_timeout_seconds=60,
                          client_info=Implementation(name=name, version="1.0")) as client:
            return await body(Agent(client))
    return anyio.run(main)


# ------------------------------------------------------------------ a good batch end to end

@pytest.mark.slow
def test_a_host_model_folds_a_whole_batch_over_mcp(store):
    calls: list[str] = []

    async def body(agent: Agent):
        listed = {t.name for t in (await agent.client.list_tools()).tools}
        begun = await agent.begin()
        calls.append("fold_begin")
        for name, arguments in (
                ("read_file", {"path": "work.md"}),
                ("read_file", {"path": "garden.md"}),
                ("write_to_file", {"path": "work.md", "content": WORK_NIGHTS}),
                ("write_to_file", {"path": "shifts.md", "content": model_scene(
                    "Alice's shift pattern.", "Alice works nights from May 2024.\n")})):
            refused, text = await agent.tool(name, **arguments)
            assert not refused, text
            calls.append(f"{name}({arguments['path']})")
        refused, text = await agent.commit("Night shifts added to work.md; shifts.md opened.")
        calls.append("fold_commit")
        return listed, begun, refused, text

    listed, begun, refused, text = drive(store.root, body)

    assert {"fold_begin", "read_file", "write_to_file", "replace_in_file", "fold_commit",
            "fold_abort", "remember", "recall"} <= listed
    assert [m["id"] for m in begun["memories"]] == ["m0"]
    assert begun["memories"][0]["content"] == NIGHT_SHIFT
    assert {s["name"] for s in begun["scenes"]} == {"work.md", "family.md", "hobbies.md",
                                                    "garden.md"}
    assert "NO_CHANGE" in begun["instructions"] and "fold_commit" in begun["instructions"]
    assert begun["new_scenes_allowed"] == 1
    assert not refused, text
    done = json.loads(text)
    assert done["batch"] == 1 and done["memories"] == ["m0"]
    assert done["counts"]["updated"] == 1 and done["counts"]["created"] == 1
    store = open_store(store.root)
    assert_committed_batch(store)
    assert "night shifts" in texts(store)["work.md"]
    head = history.open_repo(store.root).head.commit
    assert head.hexsha == done["commit"]
    assert history.trailers(head.message)["Backend"] == "host (scripted-agent 1.0)"
    assert not store.meta_dir.joinpath("lock.lease").exists()
    # The transcript holds the exchange as for a litellm batch: prompt, each call, the end.
    events = read_events(transcript_path(store.meta_dir, 1))
    kinds = [e["kind"] for e in events]
    assert kinds[:2] == ["start", "prompt"] and kinds[-1] == "end"
    assert [e["name"] for e in events if e["kind"] == "tool"] == [
        "read_file", "read_file", "write_to_file", "write_to_file"]
    assert events[-1]["outcome"] == "committed"
    assert calls == ["fold_begin", "read_file(work.md)", "read_file(garden.md)",
                     "write_to_file(work.md)", "write_to_file(shifts.md)", "fold_commit"]


# ------------------------------------------------------------------ every refusal, repaired

def _write(path: str, content: str) -> tuple[str, dict]:
    return "write_to_file", {"path": path, "content": content}


def _read(path: str) -> tuple[str, dict]:
    return "read_file", {"path": path}


# kind: (setup, bad steps, the answer of a bad commit or None, what the error says, fix steps)
REFUSALS = {
    "unread write": (None, [_write("garden.md", model_scene("Alice's nights.", "Nights.\n"))],
                     None, "you have not read garden.md", [_write("work.md", WORK_NIGHTS)]),
    "create without reads": (
        "unrelated", [_write("baking.md", model_scene("Alice bakes.", "A starter named "
                                                                       "Bubbles.\n"))],
        None, "read at least 2 existing scenes",
        [_read("work.md"), _read("family.md"),
         _write("baking.md", model_scene("Alice bakes.", "A sourdough starter named "
                                                          "Bubbles.\n"))]),
    "two creates": (
        None, [_read("garden.md"), _write("shifts.md", model_scene(
            "Alice's shifts.", "Alice works nights from May 2024.\n")),
            _write("rota.md", model_scene("Alice's rota.", "Nights in May.\n"))],
        None, "at most 1 new scene this batch", [_write("work.md", WORK_NIGHTS)]),
    "report name": (None, [_write("BATCH-1-report.md", model_scene("Batch one.", "Nights.\n"))],
                    None, "report or log name", [_write("work.md", WORK_NIGHTS)]),
    "cut a person's line": (
        "mine", [_read("work.md"), _write("work.md", WORK_NIGHTS)], None,
        "keep these lines a person wrote",
        [_write("work.md", model_scene("Alice's job, now nights.",
                                       WORK[1] + MINE + "\nIn May 2024 she started night "
                                                        "shifts.\n"))]),
    "delete outside a merge": (None, [_write("hobbies.md", "[DELETED]")], None,
                               "only as part of a merge", [_write("work.md", WORK_NIGHTS)]),
    "unaccounted memory": (None, [], "Done.", "no scene changed, and your answer does not say",
                           [_write("work.md", WORK_NIGHTS)]),
    "false claim": (None, [], "NO_CHANGE: m0 already in hobbies.md", "hobbies.md does not hold",
                    [_write("work.md", WORK_NIGHTS)]),
}


def prepare(store, setup: str | None):
    if setup == "unrelated":     # no scene is like the memory: none is shown in the prompt
        return make_store(store.root.parent / "other", {"work.md": (*WORK, 1),
                                                        "family.md": (*FAMILY, 1),
                                                        "hobbies.md": (*HOBBIES, 1)},
                          ["Bought sourdough starter named Bubbles."])
    if setup == "mine":          # a line a person wrote in work.md
        (store.scenes_dir / "work.md").write_text(texts(store)["work.md"] + MINE + "\n",
                                                  encoding="utf-8")
        history.commit_files(history.open_repo(store.root), "hand edit: work.md",
                             ["scenes/work.md"])
    return store


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(REFUSALS))
def test_every_refusal_comes_back_as_a_tool_error_and_the_batch_is_repaired(store, kind):
    setup, bad, bad_answer, said, fix = REFUSALS[kind]
    store = prepare(store, setup)

    async def body(agent: Agent):
        await agent.begin()
        refusals = []
        for name, arguments in bad:
            refusals.append(await agent.tool(name, **arguments))
        if bad_answer is not None:
            refusals.append(await agent.commit(bad_answer))
        for name, arguments in fix:
            refused, text = await agent.tool(name, **arguments)
            assert not refused, text
        return refusals, await agent.commit("Folded the batch's memory.")

    refusals, (refused, text) = drive(store.root, body)

    errors = [text for is_error, text in refusals if is_error]
    assert errors and said in errors[-1], refusals
    assert not refused, text
    store = open_store(store.root)
    assert_committed_batch(store)
    if setup == "mine":
        assert MINE in texts(store)["work.md"].splitlines()
    assert "BATCH-1-report.md" not in store.scene_names()
    assert "hobbies.md" in store.scene_names() or setup == "unrelated"


# ------------------------------------------------------------------ leases, aborts, races

@pytest.mark.slow
def test_a_lease_that_runs_out_writes_nothing_and_leaves_the_memory_pending(store):
    before = snapshot(store)

    async def body(agent: Agent):
        begun = await agent.begin()
        await agent.tool("write_to_file", path="work.md", content=WORK_NIGHTS)
        await anyio.sleep(begun["lease_seconds"] + 1.5)
        late = await agent.tool("read_file", path="work.md")
        commit = await agent.commit("Night shifts added.")
        again = await agent.begin()
        await agent.tool("fold_abort")
        return begun, late, commit, again

    begun, late, commit, again = drive(store.root, body, "--fold-lease", "5")

    assert begun["lease_seconds"] == 5
    for refused, text in (late, commit):
        assert refused and "lease ran out" in text and "pending" in text, text
    assert again["memories"][0]["id"] == "m0"      # the same memory, offered again
    assert_nothing_written(store, before)
    ends = [e for e in read_events(transcript_path(store.meta_dir, 1)) if e["kind"] == "end"]
    assert [e["outcome"] for e in ends] == ["failed", "failed"]     # two attempts, one file
    assert "lease ran out" in ends[0]["error"] and "aborted" in ends[1]["error"]


@pytest.mark.slow
def test_an_agent_that_vanishes_mid_batch_leaves_the_store_as_it_was(store):
    before = snapshot(store)

    async def vanish(agent: Agent):
        await agent.begin()
        await agent.tool("read_file", path="garden.md")
        await agent.tool("write_to_file", path="work.md", content=WORK_NIGHTS)
        # The session ends here: the host is gone and the server with it.

    drive(store.root, vanish)
    assert_nothing_written(store, before)

    async def next_agent(agent: Agent):
        begun = await agent.begin()
        await agent.tool("write_to_file", path="work.md", content=WORK_NIGHTS)
        return begun, await agent.commit("Night shifts added.")

    begun, (refused, text) = drive(store.root, next_agent)
    assert begun["memories"][0]["id"] == "m0" and not refused, text
    assert_committed_batch(open_store(store.root))


@pytest.mark.slow
def test_two_agents_racing_for_one_store_the_second_is_told_who_holds_it(store):
    async def race():
        first = Client(params(store.root), read_timeout_seconds=60,
                       client_info=Implementation(name="agent-one", version="1"))
        second = Client(params(store.root), read_timeout_seconds=60,
                        client_info=Implementation(name="agent-two", version="1"))
        async with first as one, second as two:
            a, b = Agent(one), Agent(two)
            await a.begin()
            refused = await two.call_tool("fold_begin", {})
            await a.tool("write_to_file", path="work.md", content=WORK_NIGHTS)
            committed = await a.commit("Night shifts added.")
            after = await b.ok("fold_begin", {})
            return refused, committed, after

    refused, committed, after = anyio.run(race)

    text = refused.content[0].text
    assert refused.is_error and "agent-one 1" in text and "batch 1" in text, text
    assert "lease runs" in text
    assert not committed[0], committed[1]
    assert after["batch"] is None            # the first agent folded it: nothing pending
    assert_committed_batch(open_store(store.root))


def test_fold_tools_are_offered_only_when_asked(store):
    async def tools(client):
        return {t.name for t in (await client.list_tools()).tools}

    async def main(*options):
        async with Client(StdioServerParameters(command=sys.executable, args=[
                "-c", ENTRY, "--dir", str(store.root), "mcp", "--no-fold", *options]),
                read_timeout_seconds=60) as client:
            return await tools(client)

    assert "fold_begin" not in anyio.run(main)
    assert {"fold_begin", "fold_commit"} <= anyio.run(main, "--fold-tools")


# ------------------------------------------------------------------ the service, in process

def test_in_process_problems_keep_the_batch_open_until_repaired(store):
    folds = HostFolds(store, lease=30)
    begun = folds.begin("test")
    with pytest.raises(FoldProblems) as caught:
        folds.commit(begun["batch"], "NO_CHANGE: m0 already in hobbies.md")
    assert any("hobbies.md does not hold" in p for p in caught.value.problems)
    assert folds.call(begun["batch"], "write_to_file",
                      {"path": "work.md", "content": WORK_NIGHTS}).startswith("OK")
    done = folds.commit(begun["batch"], "Night shifts added.")
    assert done["batch"] == 1
    with pytest.raises(FoldClosed, match="is committed"):
        folds.call(begun["batch"], "read_file", {"path": "work.md"})
    assert folds.begin("test") is None        # nothing pending any more


def test_in_process_a_second_begin_is_busy_and_an_abort_writes_nothing(store):
    before = snapshot(store)
    folds = HostFolds(store, lease=30)
    begun = folds.begin("first agent")
    folds.call(begun["batch"], "write_to_file", {"path": "work.md", "content": WORK_NIGHTS})
    with pytest.raises(FoldBusy, match="first agent"):
        folds.begin("second agent")
    other = HostFolds(open_store(store.root))       # as another process would see it
    with pytest.raises(FoldBusy, match=r"first agent \(pid \d+\) holds it for batch 1"):
        other.begin("second agent")
    assert folds.abort(begun["batch"]) == {"batch": 1, "pending": 1}
    assert_nothing_written(store, before)
    with pytest.raises(FoldClosed, match="aborted"):
        folds.commit(begun["batch"], "Done.")
    with pytest.raises(FoldClosed, match="no batch has the token"):
        folds.commit("not-a-token", "Done.")


def test_in_process_a_lease_runs_out_without_calls(store):
    before = snapshot(store)
    folds = HostFolds(store, lease=0.5)
    begun = folds.begin("slow agent")
    time.sleep(1.5)
    with pytest.raises(FoldClosed, match="lease ran out"):
        folds.call(begun["batch"], "read_file", {"path": "work.md"})
    assert_nothing_written(store, before)
    assert folds.begin("slow agent")["memories"][0]["id"] == "m0"


@pytest.mark.slow
def test_while_a_host_batch_is_open_remember_refuses_what_the_add_would(store):
    async def body(agent: Agent):
        hidden = await agent.client.call_tool("fold_begin", {"ctx": "x"})
        await agent.begin()
        kept = await agent.ok("remember", {"id": "r1", "content": "Alice bought a bike."})
        clash = await agent.client.call_tool("remember", {"id": "r1", "content": "Other."})
        known = await agent.client.call_tool("remember", {"id": "m0", "content": "Not it."})
        await agent.tool("fold_abort")
        return hidden, kept, clash, known

    hidden, kept, clash, known = drive(store.root, body)

    assert hidden.is_error and "unknown argument ctx" in hidden.content[0].text
    assert kept["queued"] is True
    for refused in (clash, known):
        assert refused.is_error and "already known with a different content" in \
            refused.content[0].text, refused.content[0].text
    assert store.load_state().pending == 2        # m0 and the bike, nothing else


def test_in_process_a_command_that_waits_for_the_store_is_told_whose_batch_it_is(store):
    from scene_engine.services.add import add_memories
    from scene_engine.store.lock import LockBusyError

    folds = HostFolds(store, lease=30)
    begun = folds.begin("agent-x")
    try:
        with pytest.raises(LockBusyError, match="for batch 1 folded by agent-x"):
            add_memories(open_store(store.root), b'{"content": "Later."}\n', lock_timeout=0.3)
    finally:
        folds.abort(begun["batch"])
