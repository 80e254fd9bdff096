"""The litellm tool loop against the scripted fake server, over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fakellm import call, delay, error, reply

from scene_engine.llm.loop import Budget, ModelError, complete_text, count_tokens, run_tool_loop

MODEL = "openai/test-model"
PROMPT = [{"role": "system", "content": "You keep scenes."}, {"role": "user", "content": "Go."}]
TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]


def fast(**kw) -> Budget:
    """A budget that keeps tests quick: tiny backoff, short per-call timeout."""
    return Budget(**{"backoff": 0.01, "call_timeout": 0.5, "retries": 2, **kw})


class Recorder:
    """An executor that records what it was asked and answers predictably."""

    def __init__(self, fail_on: str | None = None):
        self.calls: list[tuple[str, str]] = []
        self.fail_on = fail_on

    def __call__(self, name, arguments):
        self.calls.append((name, arguments))
        if name == self.fail_on:
            raise RuntimeError("disk on fire")
        return f"result of {name} #{len(self.calls)}"


def run(server, execute=None, budget=None, tools=TOOLS, model=MODEL, observe=None):
    return run_tool_loop(PROMPT, tools, execute or Recorder(), model=model,
                         api_base=server.api_base, api_key="sk-test", budget=budget or fast(),
                         observe=observe)


class Events:
    """An ``observe`` callback that keeps what the loop reported: (kind, data) in order."""

    def __init__(self):
        self.seen: list[tuple[str, dict]] = []

    def __call__(self, kind, data):
        self.seen.append((kind, data))

    def of(self, kind: str) -> list[dict]:
        return [data for k, data in self.seen if k == kind]


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def test_tool_calls_then_final_text(fake_llm):
    first = call("read_file", {"path": "work.md"})
    a, b = call("read_file", {"path": "home.md"}), call("read_file", {"path": "health.md"})
    fake_llm.script([
        reply(tool_calls=[first], prompt_tokens=100, completion_tokens=7),
        reply(content="Looking at two more.", tool_calls=[a, b], prompt_tokens=150,
              completion_tokens=11),
        reply(content="Merged two memories into work.md.", prompt_tokens=200, completion_tokens=13),
    ])
    rec = Recorder()
    prompt_copy = json.loads(json.dumps(PROMPT))
    res = run(fake_llm, rec)

    assert res.stopped == "done"
    assert res.final_text == "Merged two memories into work.md."
    assert (res.steps, res.tool_calls) == (3, 3)
    assert (res.prompt_tokens, res.completion_tokens) == (450, 31)
    assert res.retries == 0
    # The executor got each call in order, with the raw argument string the model sent.
    assert rec.calls == [(c["function"]["name"], c["function"]["arguments"]) for c in (first, a, b)]
    # What the model was sent: the prompt and tools first, then its own turns and the tool results.
    assert len(fake_llm.requests) == 3
    assert fake_llm.requests[0]["messages"] == PROMPT
    assert fake_llm.requests[0]["model"] == "test-model"
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "read_file"
    assert fake_llm.requests[0].get("stream") in (None, False)
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages(fake_llm.requests[1])] == [
        (first["id"], "result of read_file #1")]
    last = fake_llm.requests[2]["messages"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages(fake_llm.requests[2])] == [
        (first["id"], "result of read_file #1"), (a["id"], "result of read_file #2"),
        (b["id"], "result of read_file #3")]
    # Both parallel calls sit in one assistant turn, answered right after it.
    assert [tc["id"] for tc in last[-3]["tool_calls"]] == [a["id"], b["id"]]
    assert res.messages[:2] == PROMPT and res.messages[-1]["content"] == res.final_text
    assert prompt_copy == PROMPT  # the caller's list is not mutated


def test_transient_errors_are_retried(fake_llm):
    fake_llm.script([error(429), error(500), reply(content="ok")])
    res = run(fake_llm, budget=fast(retries=2))
    assert (res.stopped, res.final_text, res.retries, res.steps) == ("done", "ok", 2, 1)
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize("status", [429, 502, 503])
def test_transient_error_forever_gives_up_after_retries(fake_llm, status):
    fake_llm.repeat(error(status))
    seen = Events()
    with pytest.raises(ModelError) as info:
        run(fake_llm, budget=fast(retries=3, backoff=0.05), observe=seen)
    # 1 try + 3 retries, with backoff 0.05 + 0.1 + 0.2 in between (the pauses the loop took,
    # not the wall time, which a loaded machine stretches).
    assert len(fake_llm.requests) == 4
    assert [e["pause"] for e in seen.of("retry")] == [0.05, 0.1, 0.2]
    assert {e["reason"] for e in seen.of("retry")} == {f"HTTP {status}"}
    assert "test-model" in str(info.value) and fake_llm.api_base in str(info.value)


def test_slow_reply_times_out_then_fast_retry_succeeds(fake_llm):
    fake_llm.script([delay(3.0, reply(content="too late")), reply(content="on time")])
    seen = Events()
    # timeout_retries: this server answers requests side by side (none by default for a
    # server at api_base: test_model_path's llama-cpp-like server)
    res = run(fake_llm, budget=fast(call_timeout=0.5, timeout_retries=1), observe=seen)
    assert (res.final_text, res.retries) == ("on time", 1)
    # The first request was cut off at the per-call limit, not waited out.
    assert [(e["call"], e["timeout"]) for e in seen.of("error")] == [(1, True)]
    assert [e["reason"] for e in seen.of("retry")] == ["timeout"]
    assert [e["call"] for e in seen.of("reply")] == [2]


def test_slow_reply_forever_is_a_model_error(fake_llm):
    fake_llm.repeat(delay(3.0, reply(content="too late")))
    seen = Events()
    with pytest.raises(ModelError) as info:
        run(fake_llm, budget=fast(call_timeout=0.3, retries=1, timeout_retries=1), observe=seen)
    assert len(fake_llm.requests) == 2
    assert [(e["call"], e["timeout"]) for e in seen.of("error")] == [(1, True), (2, True)]
    assert seen.of("reply") == []
    assert "requests 1, 2 cut off at the 0.3 s per-call limit" in str(info.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_fail_at_once(fake_llm, status):
    fake_llm.repeat(error(status))
    with pytest.raises(ModelError) as info:
        run(fake_llm, budget=fast(retries=4))
    assert len(fake_llm.requests) == 1
    assert "test-model" in str(info.value) and fake_llm.api_base in str(info.value)


@pytest.mark.parametrize("body", [
    b"<html>this is not json</html>",
    {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
])
def test_unparseable_response_is_a_model_error(fake_llm, body):
    # litellm reports a body it cannot parse as a 500 (retried); an empty choice list fails at once.
    fake_llm.repeat(error(200, body=body))
    with pytest.raises(ModelError) as info:
        run(fake_llm, budget=fast(retries=1))
    assert "test-model" in str(info.value)
    assert len(fake_llm.requests) == (2 if isinstance(body, bytes) else 1)


def test_endless_tool_calls_stop_at_step_budget(fake_llm):
    fake_llm.repeat(lambda req: reply(tool_calls=[call("read_file", {"path": "a.md"})]))
    res = run(fake_llm, budget=fast(max_steps=5))
    assert (res.stopped, res.steps, res.tool_calls) == ("steps", 5, 5)
    assert len(fake_llm.requests) == 5
    # Every tool call in the returned conversation has its answer, so it can be continued.
    asked = [tc["id"] for m in res.messages if m["role"] == "assistant"
             for tc in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in res.messages if m["role"] == "tool"]
    assert asked == answered and len(set(asked)) == 5


def test_token_budget_stops_the_loop(fake_llm):
    fake_llm.repeat(lambda req: reply(tool_calls=[call("read_file", {"path": "a.md"})],
                                      prompt_tokens=100, completion_tokens=10))
    res = run(fake_llm, budget=fast(max_tokens=250))
    # 110 and 220 are under budget, 330 is not: the third call is the last.
    assert (res.stopped, res.steps) == ("tokens", 3)
    assert res.prompt_tokens + res.completion_tokens == 330


def test_time_budget_stops_the_loop(fake_llm):
    fake_llm.repeat(lambda req: delay(0.15, reply(tool_calls=[call("read_file", {"path": "a"})])))
    res = run(fake_llm, budget=fast(max_seconds=0.6, call_timeout=5.0, max_steps=100))
    # Each reply takes at least 0.15 s, so 0.6 s hold four at most (a loaded machine: fewer).
    assert res.stopped == "time"
    assert 1 <= res.steps <= 4


def test_empty_reply_is_done_with_empty_text(fake_llm):
    fake_llm.script([reply()])
    res = run(fake_llm)
    assert (res.stopped, res.final_text, res.steps, res.tool_calls) == ("done", "", 1, 0)


def test_bad_arguments_unknown_tools_and_executor_errors_reach_the_model(fake_llm):
    calls = [call("write_to_file", '{"path": bad json'), call("delete_everything", {}),
             call("explode", {"x": 1})]
    fake_llm.script([reply(tool_calls=calls), reply(content="sorry, fixed")])
    rec = Recorder(fail_on="explode")
    res = run(fake_llm, rec)
    assert rec.calls == [("write_to_file", '{"path": bad json'), ("delete_everything", "{}"),
                         ("explode", '{"x": 1}')]
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(fake_llm.requests[1])}
    assert results[calls[0]["id"]] == "result of write_to_file #1"
    assert results[calls[1]["id"]] == "result of delete_everything #2"
    assert results[calls[2]["id"]].startswith("Error:") and "disk on fire" in results[
        calls[2]["id"]]
    assert (res.stopped, res.final_text, res.tool_calls) == ("done", "sorry, fixed", 3)


def test_cost_known_for_priced_model_and_none_otherwise(fake_llm):
    import litellm  # already imported by the loop by now; only for the expected price

    fake_llm.script([reply(content="a", prompt_tokens=1000, completion_tokens=500),
                     reply(content="b")])
    priced = run(fake_llm, model="openai/gpt-4o-mini")
    price = litellm.model_cost["gpt-4o-mini"]
    expected = 1000 * price["input_cost_per_token"] + 500 * price["output_cost_per_token"]
    assert priced.cost == pytest.approx(expected)
    assert run(fake_llm).cost is None


def test_complete_text_is_one_plain_call(fake_llm):
    fake_llm.script([error(503), reply(content="A short portrait.", prompt_tokens=42,
                                       completion_tokens=6)])
    text, usage = complete_text(PROMPT, model=MODEL, api_base=fake_llm.api_base,
                                api_key="sk-test", budget=fast())
    assert text == "A short portrait."
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["retries"]) == (42, 6, 1)
    assert "tools" not in fake_llm.requests[-1]


def test_count_tokens_grows_with_text():
    short = count_tokens(MODEL, [{"role": "user", "content": "hello"}])
    long = count_tokens(MODEL, [{"role": "user", "content": "hello " * 200}])
    assert 0 < short < long
    assert count_tokens(MODEL, [{"role": "user", "content": "hello"}], TOOLS) > short


def test_importing_the_module_does_not_import_litellm():
    code = "import sys, scene_engine.llm; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
