"""The model path as a person runs it (issue 14): set-up mistakes fail at once with one line,
a server at --api-base needs no key, every request carries max_tokens, a cut-off reply is never
an answer, timeouts are settings and their message says what happened, tool calls written as
text run through the same sandbox, and every batch leaves a transcript.

litellm talks HTTP to tests/fakellm.py; nothing reaches the internet. Times are not measured
here: a test counts requests and the pauses the retry policy asked for.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time as time_module

import pytest
from clirunner import CheckedRunner
from fakellm import call, delay, error, reply
from test_batch_llm import (
    MODEL,
    assert_committed_batch,
    assert_nothing_written,
    backend,
    snapshot,
    texts,
    tool_result,
    user_messages,
    work_update,
)

import scene_engine.llm.loop as llm
from scene_engine.batch.contract import BatchError
from scene_engine.batch.transaction import run_batch
from scene_engine.batch.transcript import read_events, render, rotate, transcript_path
from scene_engine.cli import app
from scene_engine.llm.loop import Budget, ModelError, run_tool_loop
from scene_engine.llm.text_calls import parse_text_calls
from scene_engine.store import history

TOOLS = {"read_file", "write_to_file", "replace_in_file"}


@pytest.fixture
def store(tmp_path):
    from test_batch_llm import FAMILY, HOBBIES, NIGHT_SHIFT, WORK, make_store

    return make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1)}, [NIGHT_SHIFT],
                      persona="# Persona\nAlice, a nurse.\n")


_HELD: list[socket.socket] = []


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens. The port stays bound (never listening)
    until the tests end, so no server started beside this test can take it meanwhile."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def cli(store, *args, env=None):
    return CheckedRunner().invoke(app, ["--dir", str(store.root), *args], env=env or {})


@pytest.fixture
def no_client(monkeypatch):
    """Fail loudly if litellm would be loaded: a set-up check must come before it."""
    def refuse():
        raise AssertionError("litellm was loaded before the set-up was checked")
    monkeypatch.setattr(llm, "_litellm", refuse)


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The pauses the retry policy asks for (not slept)."""
    asked: list[float] = []
    monkeypatch.setattr(llm.time, "sleep", asked.append)
    return asked


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


# ------------------------------------------------------------------ 1. fail fast

def test_missing_key_fails_before_loading_litellm_with_one_line(store, monkeypatch, no_client):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = snapshot(store)
    done = cli(store, "run", "--model", "gpt-4o-mini")
    assert done.exit_code == 1
    line = one_error_line(done.stderr)
    assert "'gpt-4o-mini' needs an API key: set OPENAI_API_KEY" in line
    assert "nothing written, 1 memory pending" in line
    assert_nothing_written(store, before)


@pytest.mark.parametrize("how", ["api-base", "ollama"])
def test_nothing_listening_fails_before_loading_litellm(store, monkeypatch, no_client, how):
    url = closed_port_url()
    if how == "ollama":   # a local Ollama address (its default, moved to a free port)
        monkeypatch.setenv("OLLAMA_API_BASE", url.removesuffix("/v1"))
        args = ["--model", "ollama/llama3.1"]
    else:
        args = ["--model", MODEL, "--api-base", url]
    before = snapshot(store)
    done = cli(store, "run", *args)
    assert done.exit_code == 1
    line = one_error_line(done.stderr)
    assert "cannot reach" in line and "nothing is listening there" in line
    assert url.split("//")[1].split("/")[0] in line
    assert_nothing_written(store, before)


def test_a_refused_connection_is_retried_once_and_without_long_pauses(sleeps):
    with pytest.raises(ModelError) as caught:
        run_tool_loop([{"role": "user", "content": "hi"}], [], lambda n, a: "",
                      model=MODEL, api_base=closed_port_url(), api_key="sk-test",
                      budget=Budget(retries=4, backoff=1.0))
    assert sleeps == [1.0]                     # one retry, not 1 + 2 + 4 + 8 s
    assert "could not connect" in str(caught.value)
    assert "gave up after 1 retries" in str(caught.value)


def test_rate_limits_and_5xx_keep_their_backoff(fake_llm, sleeps):
    fake_llm.script([error(429), error(503), error(500), reply(content="ok")])
    res = run_tool_loop([{"role": "user", "content": "hi"}], [], lambda n, a: "",
                        model=MODEL, api_base=fake_llm.api_base, api_key="sk-test",
                        budget=Budget(retries=4, backoff=1.0))
    assert res.final_text == "ok" and sleeps == [1.0, 2.0, 4.0]


# ------------------------------------------------------------------ 2. no key for a local server

def test_cli_run_against_a_local_server_needs_no_key(fake_llm, store, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    done = cli(store, "run", "--model", MODEL, "--api-base", fake_llm.api_base)
    assert done.exit_code == 0, done.output
    assert fake_llm.headers[0]["authorization"] == "Bearer sk-no-key-needed"
    assert_committed_batch(store)


# ------------------------------------------------------------------ 3. max_tokens, tool_choice, length

def test_every_request_carries_max_tokens(fake_llm, store):
    (store.root / ".scene-engine/config.toml").write_text("max_output_tokens = 777\n")
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    done = cli(store, "run", "--model", MODEL, "--api-base", fake_llm.api_base)
    assert done.exit_code == 0, done.output
    assert [r["max_tokens"] for r in fake_llm.requests] == [777, 777]
    # a server of one's own is asked for tool_choice "auto" (llama-cpp-python's server leaves
    # the tools out of the prompt without it) ...
    assert all(r["tool_choice"] == "auto" for r in fake_llm.requests)


def test_a_server_that_refuses_tool_choice_is_asked_again_without_it(fake_llm):
    # ... and one that refuses it (vLLM started without tool parsing) is asked again without
    # it, once: later requests to it leave it out.
    refusal = {"error": {"message": "\"auto\" tool choice requires --enable-auto-tool-choice "
                                    "and --tool-call-parser to be set", "type": "BadRequestError",
                         "param": "tool_choice", "code": 400}}
    fake_llm.script([error(400, refusal), reply(tool_calls=[call("read_file", {"path": "a"})]),
                     reply(content="done")])
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    res = run_tool_loop([{"role": "user", "content": "hi"}], tools, lambda n, a: "text",
                        model="openai/vllm-like", api_base=fake_llm.api_base, api_key="k")
    assert res.final_text == "done" and res.retries == 0
    assert ["tool_choice" in r for r in fake_llm.requests] == [True, False, False]


def test_tool_choice_goes_to_hosted_providers_that_take_it():
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    hosted = llm._request("gpt-4o-mini", [], tools, None, None, Budget(max_output_tokens=99))
    assert (hosted["tool_choice"], hosted["max_tokens"]) == ("auto", 99)
    assert "tool_choice" not in llm._request("gpt-4o-mini", [], [], None, None, Budget())


def test_a_cut_off_reply_is_never_run_and_the_model_is_asked_again(fake_llm, store):
    cut = work_update("In May 2024 she started night")
    fake_llm.script([reply(tool_calls=[cut], finish_reason="length"),
                     reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    run_batch(store, backend(fake_llm))
    assert "cut off at the output limit of 4096 tokens" in user_messages(fake_llm)[-1]
    with pytest.raises(AssertionError):
        tool_result(fake_llm, cut)             # the cut-off call never ran
    assert "night shifts." in texts(store)["work.md"]
    assert_committed_batch(store)


def test_a_cut_off_final_answer_is_not_an_answer(fake_llm, store):
    fake_llm.script([reply(tool_calls=[work_update()])])
    fake_llm.repeat(reply(content="Night shifts added to work.md and also", finish_reason="length"))
    before = snapshot(store)
    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm))
    assert "cut off at max_output_tokens (4096)" in str(caught.value)
    assert len(fake_llm.requests) == 3         # the first cut-off answer got one more chance
    assert_nothing_written(store, before)


# ------------------------------------------------------------------ 4. timeouts as settings

@pytest.mark.slow
def test_timeouts_are_settings_and_the_message_says_what_timed_out(fake_llm, store, monkeypatch):
    fake_llm.repeat(delay(2.0, reply(content="too late")))
    monkeypatch.setattr(llm.time, "sleep", lambda s: None)   # no real backoff pauses
    set_config(store, timeout_retries=4)    # a server that serves requests side by side
    before = snapshot(store)
    done = cli(store, "run", "--model", MODEL, "--api-base", fake_llm.api_base,
               "--call-timeout", "0.3", "--batch-timeout", "30", env={"OPENAI_API_KEY": "k"})
    assert done.exit_code == 1
    message = done.stderr
    assert "5 requests made, requests 1, 2, 3, 4, 5 cut off at the 0.3 s per-call limit" \
        in message
    assert "time limit 30 s (batch_timeout)" in message
    assert "test-model" in message and fake_llm.api_base in message
    assert_nothing_written(store, before)


def test_the_batch_timeout_covers_the_whole_batch(fake_llm, store):
    fake_llm.repeat(delay(0.4, reply(tool_calls=[call("read_file", {"path": "work.md"})])))
    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm, max_seconds=1.0, call_timeout=5.0, max_steps=50))
    assert "ran out of time" in str(caught.value)
    assert "time limit 1 s (batch_timeout)" in str(caught.value)
    assert len(fake_llm.requests) <= 4


def set_config(store, **values) -> None:
    """Set keys of the store's config.toml, committed as a person's change."""
    config = store.root / ".scene-engine" / "config.toml"
    text = config.read_text("utf-8")
    for key, value in values.items():
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {json.dumps(value)}", text)
    config.write_text(text, "utf-8")
    history.commit_files(history.open_repo(store.root), "config", [".scene-engine/config.toml"])


# ------------------------------------------------------------------ 4b. llama-cpp-python's server

class LlamaCppLike:
    """A fakellm step that answers as llama-cpp-python's OpenAI-compatible server (0.3.x,
    ``--chat_format chatml-function-calling``) does, from ``replies`` in order:

    - the tools reach the model only when the request says ``tool_choice``: without it the
      model never sees them and answers in words;
    - its chat template reads ``message.content``: an assistant message with tool calls and
      no text content fails it (HTTP 500 "'dict object' has no attribute 'content'");
    - it serves one request at a time, and goes on generating a reply its client gave up
      on: a request waits for the one before it (``seconds``: how long each reply takes).
    """

    def __init__(self, replies: list, seconds: list[float] | None = None):
        self.replies, self.seconds = list(replies), list(seconds or [])
        self.one_at_a_time = threading.Lock()
        self.served: list[float] = []          # when each reply was finished (monotonic)

    def __call__(self, body: dict):
        with self.one_at_a_time:
            time_module.sleep(self.seconds.pop(0) if self.seconds else 0.0)
            self.served.append(time_module.monotonic())
            for message in body["messages"]:
                if message["role"] == "assistant" and message.get("tool_calls") and \
                        not isinstance(message.get("content"), str):
                    return error(500, {"error": {"message": "'dict object' has no attribute "
                                                            "'content'", "code": 500}})
            if body.get("tools") and "tool_choice" not in body:
                return reply(content="I would update work.md, but I have no tools.")
            return self.replies.pop(0) if self.replies else reply(content="Done.")


def test_llama_cpp_sees_the_tools_because_tool_choice_is_sent(fake_llm, store):
    fake_llm.repeat(LlamaCppLike([reply(tool_calls=[call("read_file", {"path": "work.md"})]),
                                  reply(tool_calls=[work_update()]), reply(content="Done.")]))
    run_batch(store, backend(fake_llm))
    assert_committed_batch(store)
    assert all(r["tool_choice"] == "auto" for r in fake_llm.requests if r.get("tools"))


def test_llama_cpp_templates_get_content_beside_every_tool_call(fake_llm, store):
    fake_llm.repeat(LlamaCppLike([reply(tool_calls=[call("read_file", {"path": "work.md"})]),
                                  reply(tool_calls=[work_update()]), reply(content="Done.")]))
    run_batch(store, backend(fake_llm))
    assert_committed_batch(store)
    sent = [m for r in fake_llm.requests for m in r["messages"]
            if m["role"] == "assistant" and m.get("tool_calls")]
    assert sent and all(m["content"] == "" for m in sent)
    assert len(fake_llm.requests) == 3                # no 500 retried


def test_after_a_timeout_no_retry_waits_behind_the_abandoned_reply(fake_llm, store):
    slow = LlamaCppLike([reply(tool_calls=[call("read_file", {"path": "work.md"})])],
                        seconds=[3.0])
    fake_llm.repeat(slow)
    before = snapshot(store)
    started = time_module.monotonic()
    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm, call_timeout=0.5, max_seconds=30.0))
    failed_after = time_module.monotonic() - started
    assert len(fake_llm.requests) == 1                # nothing queued behind the runaway reply
    assert failed_after < 3.0                         # failed at the call timeout, not later
    said = str(caught.value)
    assert "request 1 cut off at the 0.5 s per-call limit" in said
    assert "timeout_retries" in said and "call_timeout" in said
    assert_nothing_written(store, before)
    # A server that serves requests side by side may be given retries after a timeout: the
    # setting, in config.toml, is what the batch's budget takes.
    from scene_engine.services.backends import configured_backend
    from scene_engine.store.store import open_store

    set_config(store, timeout_retries=2)
    chosen = configured_backend(open_store(store.root).config, None, MODEL, fake_llm.api_base)
    assert chosen.budget.timeout_retries == 2
    assert llm.timeout_retries(Budget(retries=4), fake_llm.api_base) == 0      # auto, local
    assert llm.timeout_retries(Budget(retries=4), None) == 4                   # auto, hosted


def test_config_holds_the_timeouts(store):
    (store.root / ".scene-engine/config.toml").write_text(
        "call_timeout = 240\nbatch_timeout = 1800\n")
    from scene_engine.services.backends import configured_backend as _backend
    from scene_engine.store.store import open_store

    chosen = _backend(open_store(store.root).config, None, MODEL, "http://x")
    assert (chosen.budget.call_timeout, chosen.budget.max_seconds) == (240, 1800)
    chosen = _backend(open_store(store.root).config, None, MODEL, "http://x", 5, 50)
    assert (chosen.budget.call_timeout, chosen.budget.max_seconds) == (5, 50)


# ------------------------------------------------------------------ 5. tool calls written as text

WRITE = {"path": "work.md", "content": "---\nsummary: x\n---\nbody\n"}


@pytest.mark.parametrize("text", [
    json.dumps({"name": "write_to_file", "arguments": WRITE}),
    "```json\n" + json.dumps({"name": "write_to_file", "arguments": WRITE}) + "\n```",
    "I will write it now.\n```json\n" + json.dumps({"name": "write_to_file",
                                                    "parameters": WRITE}) + "\n```",
    "functions.write_to_file:" + json.dumps(WRITE),
    "<tool_call>\n" + json.dumps({"name": "write_to_file",
                                  "arguments": json.dumps(WRITE)}) + "\n</tool_call>",
    json.dumps([{"function": {"name": "write_to_file", "arguments": WRITE}}]),
])
def test_a_call_written_as_text_is_recognised(text):
    found = parse_text_calls(text, TOOLS)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in found] == [
        ("write_to_file", WRITE)]


@pytest.mark.parametrize("text", [
    "Night shifts added to work.md.",
    json.dumps({"name": "delete_everything", "arguments": {}}),          # not one of our tools
    json.dumps({"name": "write_to_file", "arguments": "not json"}),       # arguments not an object
    '{"name": "write_to_file", "arguments": {"path": "work.md"',          # cut off
    json.dumps({"summary": "a JSON answer", "changes": 2}),
    "functions.format_disk:{}",
    "Done.\n```markdown\n# work\n```",
    "```json\n" + json.dumps({"name": "read_file", "arguments": {"path": "a.md"}})
    + "\n```\n```json\n{\"not\": \"a call\"}\n```",                         # one block is no call
])
def test_anything_else_stays_a_plain_reply(text):
    assert parse_text_calls(text, TOOLS) == []


def test_a_text_call_runs_through_the_sandbox_and_the_transcript_says_so(fake_llm, store):
    args = json.loads(work_update()["function"]["arguments"])
    report = {"path": "SUMMARY.md", "content": "---\nsummary: g\n---\nx\n"}
    fake_llm.script([
        reply(content="```json\n" + json.dumps({"name": "write_to_file", "arguments": report})
              + "\n```"),
        reply(content="functions.write_to_file:" + json.dumps(args)),
        reply(content="Night shifts added."),
    ])
    run_batch(store, backend(fake_llm))
    assert "night shifts" in texts(store)["work.md"]
    assert "SUMMARY.md" not in texts(store)                # the same rules refused it
    events = read_events(transcript_path(store.meta_dir, 1))
    tools = [e for e in events if e["kind"] == "tool"]
    assert [(e["name"], e["refused"], e["text_fallback"]) for e in tools] == [
        ("write_to_file", True, True), ("write_to_file", False, True)]
    assert events[-1]["totals"]["text_calls"] == 2
    assert "Night shifts added." in history.open_repo(store.root).head.commit.message
    assert_committed_batch(store)


# ------------------------------------------------------------------ 6. transcripts

def test_a_committed_batch_has_a_transcript_outside_git(fake_llm, store):
    fake_llm.script([error(429), reply(tool_calls=[work_update()], prompt_tokens=100,
                                       completion_tokens=20),
                     reply(content="Night shifts added.", prompt_tokens=150,
                           completion_tokens=5)])
    run_batch(store, backend(fake_llm))
    events = read_events(transcript_path(store.meta_dir, 1))
    kinds = [e["kind"] for e in events]
    assert kinds[:4] == ["start", "prompt", "request", "error"]
    assert kinds[-1] == "end" and "retry" in kinds and "tool" in kinds
    end = events[-1]
    assert end["outcome"] == "committed"
    assert end["commit"] == history.open_repo(store.root).head.commit.hexsha
    assert (end["totals"]["requests"], end["totals"]["prompt_tokens"],
            end["totals"]["completion_tokens"], end["totals"]["retries"]) == (3, 250, 25, 1)
    assert events[1]["messages"][0]["role"] == "system"
    assert history.open_repo(store.root).is_dirty(untracked_files=True) is False


def test_log_transcript_prints_it_readably(fake_llm, store):
    fake_llm.script([reply(tool_calls=[call("write_to_file", {"path": "garden.md",
                                                              "content": "x"})]),
                     reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    run_batch(store, backend(fake_llm))
    done = cli(store, "log", "--transcript", "1")
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "batch 1, attempt 1" in out and "model openai/test-model" in out
    assert "tool write_to_file" in out and "-> refused:" in out and "-> ok" in out
    assert "| Night shifts added." in out
    assert "end: committed" in out and "3 requests" in out
    missing = cli(store, "log", "--transcript", "7")
    assert missing.exit_code == 2 and "there is no batch 7" in missing.stderr


def test_run_verbose_prints_tool_calls_as_they_happen(fake_llm, store):
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    done = cli(store, "run", "-v", "--model", MODEL, "--api-base", fake_llm.api_base)
    assert done.exit_code == 0, done.output
    assert "tool write_to_file" in done.stderr and '"path": "work.md"' in done.stderr
    assert "-> ok" in done.stderr


def test_transcripts_are_rotated_by_size(tmp_path):
    import os

    for i in range(5):
        path = tmp_path / f"{i:06d}.jsonl"
        path.write_text("x" * 1000)
        os.utime(path, (1000 + i, 1000 + i))
    newest = tmp_path / "000004.jsonl"
    deleted = rotate(tmp_path, 2500, keep=newest)
    assert sorted(p.name for p in deleted) == ["000000.jsonl", "000001.jsonl", "000002.jsonl"]
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["000003.jsonl", "000004.jsonl"]


def test_render_shows_a_failed_attempt_with_its_tokens():
    events = [
        {"t": 0, "kind": "start", "model": "m", "api_base": None, "memories": ["m1"],
         "limits": {"call_timeout": 60}},
        {"t": 0.1, "kind": "request", "call": 1, "messages": 2},
        {"t": 2.0, "kind": "reply", "call": 1, "seconds": 1.9, "content": "I did it",
         "tool_calls": [], "finish_reason": "stop", "prompt_tokens": 900,
         "completion_tokens": 40, "text_fallback": False},
        {"t": 2.0, "kind": "end", "outcome": "failed", "error": "batch 1 failed: empty",
         "totals": {"requests": 1, "prompt_tokens": 900, "completion_tokens": 40}},
    ]
    text = render(events, 1)
    assert "end: failed: batch 1 failed: empty" in text
    assert "900 prompt + 40 completion tokens" in text


# ------------------------------------------------------------------ 7. what the display says

def test_status_line_says_what_is_happening():
    from scene_engine.cli.display import status_of

    assert status_of("request", {"call": 2}, 3) == "batch 3: waiting for the model (request 2)"
    assert status_of("retry", {"retry": 1, "of": 4, "pause": 2.0, "reason": "HTTP 429"},
                     3) == "batch 3: retry 1 of 4 in 2 s (HTTP 429)"
    assert status_of("repair", {"round": 1}, 3) == "batch 3: repair round 1"


def test_notes_print_whole_lines_above_the_progress_line():
    import io

    from rich.console import Console

    from scene_engine.cli.display import RunDisplay

    out = io.StringIO()
    refusal = ("Error: refused by policy: garden.md was never read in this batch; read it "
               "first with read_file, then change it")
    screen = Console(file=out, force_terminal=True, width=40, soft_wrap=True)
    with RunDisplay(2, 5, verbose=True, console=screen) as display:
        display.batch = 1
        display.listener("request", {"call": 1, "messages": 2})
        display.listener("tool", {"name": "write_to_file", "arguments": '{"path": "garden.md"}',
                                  "result": refusal, "refused": True, "text_fallback": False})
    text = out.getvalue()
    assert "batch 1: model working: write_to" in text      # the status at the last refresh
    # the refusal is one whole line (cleared progress line before it, newline after it)
    assert ('\x1b[2K  tool write_to_file {"path": "garden.md"} -> refused: refused by policy: '
            "garden.md was never read in this batch; read it first with read_file, then "
            "change it\n") in text


@pytest.mark.slow
def test_a_timeout_in_a_repair_round_is_told_in_the_batch_request_numbers(fake_llm, store):
    fake_llm.script([reply(content="I have updated work.md.")])      # nothing done: repair
    fake_llm.repeat(delay(2.0, reply(content="too late")))
    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm, call_timeout=0.3, retries=10, timeout_retries=10,
                                 max_seconds=1.5))
    message = str(caught.value)
    assert "ran out of time" in message
    made = len(fake_llm.requests)
    cut = ", ".join(str(n) for n in range(2, made + 1))
    assert f"{made} requests made, requests {cut} cut off at the 0.3 s" in message
