"""The model tool loop: a chat model works through file tools until it answers in plain text.

Any litellm model name works (``gpt-4o-mini``, ``anthropic/claude-...``, or ``openai/<name>`` plus
``api_base`` for a custom OpenAI-compatible server); provider keys come from the environment, which
litellm reads itself.

litellm is imported lazily (see ``_litellm``): importing it costs seconds and ~200 MB, and most CLI
commands never talk to a model.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scene_engine.core.errors import SceneEngineError
from scene_engine.core.plural import count

__all__ = ["Budget", "LoopResult", "ModelError", "run_tool_loop", "complete_text",
           "complete_message", "count_tokens", "describe_stop", "load_client"]

_LITELLM: Any = None

# observe(kind, data): told of every request, reply, error, retry and tool call as it happens
# (transcripts, progress display, ``run -v``). Kinds and their data are listed in transcript.py.
Observer = Callable[[str, dict], None]

TRUNCATED_NOTE = ("Your last reply was cut off at the output limit of {limit} tokens, so it was "
                  "not used (any tool call in it was dropped). Send shorter steps: one tool call "
                  "at a time, and a short final answer.")


@dataclass
class Budget:
    """Limits for one loop (docs/DESIGN.md, "A batch", step 4).

    max_steps: model calls per loop; max_tokens: prompt+completion tokens summed over the loop;
    max_seconds: wall time for the whole loop (the backend gives each loop what is left of the
    batch's ``batch_timeout``); call_timeout: seconds per model call; retries: extra attempts per
    call for 429 / 5xx / timeouts; connect_retries: extra attempts when the connection itself
    fails (nothing listening: waiting longer rarely helps); backoff: first retry delay in
    seconds, doubled on each further retry; max_output_tokens: ``max_tokens`` sent with every
    request, so an abandoned request cannot keep a server generating for minutes; truncations:
    replies cut off at that limit that the model is told about and asked again, per loop;
    timeout_retries: extra attempts after a call was cut off at ``call_timeout`` (None: none
    for a server at ``api_base``, ``retries`` for a hosted provider; see ``timeout_retries``).
    """

    max_steps: int = 20
    max_tokens: int = 200_000
    max_seconds: float = 300.0
    call_timeout: float = 60.0
    retries: int = 4
    connect_retries: int = 1
    backoff: float = 1.0
    max_output_tokens: int = 4096
    truncations: int = 1
    timeout_retries: int | None = None


# Why a timed-out request to a server of one's own is not retried by default: llama.cpp's and
# llama-cpp-python's servers answer one request at a time and go on generating the reply the
# client gave up on, so a retry waits in line behind it and one runaway reply spends the whole
# batch_timeout. A hosted provider serves many requests at once: there a retry helps.
LOCAL_TIMEOUT_NOTE = ("not retried: a server at --api-base often answers one request at a "
                      "time and goes on with the abandoned reply, so a retry would wait behind "
                      "it; raise call_timeout, or set timeout_retries in config.toml for a "
                      "server that serves requests side by side")


def timeout_retries(budget: Budget, api_base: str | None) -> int:
    """Extra attempts after a call timed out: ``budget.timeout_retries`` when set, else 0 for
    a server at ``api_base`` (``LOCAL_TIMEOUT_NOTE``), ``budget.retries`` for a hosted one."""
    if budget.timeout_retries is not None:
        return budget.timeout_retries
    return 0 if api_base else budget.retries


@dataclass
class LoopResult:
    """What a loop did.

    final_text: the model's last text (its answer when ``stopped == "done"``, possibly empty);
    steps: model calls that returned; prompt_tokens / completion_tokens: summed usage;
    cost: USD summed over calls, or None if litellm does not know the model's price;
    stopped: "done" | "steps" | "tokens" | "time" | "truncated" (cut off at max_output_tokens
    more often than ``Budget.truncations``); messages: the whole conversation (input plus
    assistant and tool messages); tool_calls: tool calls executed; retries: failed attempts
    retried; attempts: requests sent (retried and timed-out ones included); timed_out: numbers
    (1-based, among ``attempts``) of the requests cut off at ``call_timeout``; text_calls: tool
    calls the model wrote as plain text and the loop ran (see ``text_calls``); truncated: replies
    cut off at ``max_output_tokens``.
    """

    final_text: str
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    stopped: str
    messages: list[dict]
    tool_calls: int
    retries: int = 0
    attempts: int = 0
    timed_out: list[int] = field(default_factory=list)
    text_calls: int = 0
    truncated: int = 0


class ModelError(SceneEngineError, RuntimeError):
    """The model could not be used: retries exhausted, auth error, bad request, or a bad response."""


class _OutOfTime(SceneEngineError, RuntimeError):
    """Internal: the loop's time budget ran out while waiting for / retrying a call (the loop
    turns it into a "time" stop, ``complete_text`` into a ``ModelError``)."""


def _litellm() -> Any:
    """Import litellm once, offline-safe and quiet."""
    global _LITELLM
    if _LITELLM is None:
        # Use the bundled price list: a machine without internet must not wait on a download.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on errors
        litellm.set_verbose = False
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:  # respect a level the user set on purpose
                logger.setLevel(logging.ERROR)
        _LITELLM = litellm
    return _LITELLM


def load_client() -> None:
    """Import litellm now (seconds on a slow machine), so a caller can say it is doing so."""
    _litellm()


def count_tokens(model: str, messages: list[dict], tools: list[dict] | None = None) -> int:
    """Estimate the prompt tokens of ``messages`` (+ ``tools``) for ``model`` via litellm.token_counter.

    Uses the model's tokenizer where litellm has one, else a tiktoken default; works offline.
    """
    return int(_litellm().token_counter(model=model, messages=messages, tools=tools or None))


@dataclass
class _Usage:
    prompt: int = 0
    completion: int = 0
    cost: float | None = 0.0
    retries: int = 0
    steps: int = 0
    tool_calls: int = 0
    attempts: int = 0
    timed_out: list[int] = field(default_factory=list)
    text_calls: int = 0
    truncated: int = 0

    def add(self, prompt: int, completion: int, cost: float | None) -> None:
        self.prompt += prompt
        self.completion += completion
        # One unpriced call makes the total unknown rather than understated.
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    @property
    def total(self) -> int:
        return self.prompt + self.completion


# Failures that are the caller's set-up, not the provider's weather: retrying cannot help.
_SETUP_PROBLEMS = ("missing credentials", "api_key client option must be set", "api key",
                   "llm provider not provided", "authentication")


def _is_retryable(exc: Exception) -> bool:
    """429, 5xx, timeouts and connection errors are transient; other 4xx and set-up problems
    (no API key, unknown provider), which litellm may report as a 500, are not."""
    if any(marker in str(exc).lower() for marker in _SETUP_PROBLEMS):
        return False
    lm = _litellm()
    transient = (lm.RateLimitError, lm.InternalServerError, lm.ServiceUnavailableError,
                 lm.BadGatewayError, lm.Timeout, lm.APIConnectionError)
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 429) or status >= 500)


def _clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with "…" if cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:") + "…"


def _is_connect_failure(exc: Exception) -> bool:
    """The connection itself failed (refused, reset, no route): not a timeout, not an answer.
    litellm reports it as a 500 whose message says "Connection error"."""
    lm = _litellm()
    if isinstance(exc, lm.Timeout):
        return False
    import openai  # litellm's Timeout and APIConnectionError share openai's base class

    lowered = str(exc).lower()
    return ("connection error" in lowered or "connection refused" in lowered
            or isinstance(exc, lm.APIConnectionError | openai.APIConnectionError))


def _describe(exc: Exception, model: str, api_base: str | None) -> str:
    """One readable line: which model and server, the HTTP status when a server answered, and
    the first line of litellm's message (its later lines are provider-list boilerplate), cut at
    a word boundary."""
    where = f" at {api_base}" if api_base else ""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = text.lower()
    if any(marker in lowered for marker in _SETUP_PROBLEMS[:3]):
        return (f"model {model!r}{where}: no API key; set the provider's key in the "
                f"environment (e.g. OPENAI_API_KEY) [{_clip(text, 200)}]")
    if "llm provider not provided" in lowered:
        return (f"model {model!r} names no provider litellm knows; use a litellm model name "
                "such as gpt-4o-mini, anthropic/<model> or openai/<model> with --api-base")
    connection = _is_connect_failure(exc)
    status = getattr(exc, "status_code", None)
    code = f" (HTTP {status})" if isinstance(status, int) and not connection else ""
    kind = "could not connect" if connection else "failed"
    return f"model {model!r}{where} {kind}{code}: {type(exc).__name__}: {_clip(text, 300)}"


def _timeout_note(usage: _Usage, budget: Budget) -> str:
    """How many requests were made, which were cut off at the per-call limit, and the limits."""
    cut = usage.timed_out
    which = (f"request {cut[0]}" if len(cut) == 1 else
             f"requests {', '.join(map(str, cut))}") if cut else "none"
    return (f"{count(usage.attempts, 'request')} made, {which} cut off at the {budget.call_timeout:g} s "
            f"per-call limit (call_timeout); time limit {budget.max_seconds:g} s (batch_timeout)")


def describe_stop(result: LoopResult, budget: Budget, model: str, api_base: str | None) -> str:
    """One line saying why a loop stopped before the model finished (``result.stopped`` is not
    "done"): the limit hit, with the requests made, the timed-out ones, the model and server."""
    where = f" at {api_base}" if api_base else ""
    usage = _Usage(attempts=result.attempts, timed_out=list(result.timed_out))
    if result.stopped == "time":
        return f"model {model!r}{where} ran out of time: {_timeout_note(usage, budget)}"
    if result.stopped == "truncated":
        return (f"model {model!r}{where}: {result.truncated} replies were cut off at "
                f"max_output_tokens ({budget.max_output_tokens}); raise max_output_tokens in "
                "config.toml or use a model that answers in shorter steps")
    limit = {"steps": f"{budget.max_steps} model calls",
             "tokens": f"{budget.max_tokens} tokens"}.get(result.stopped, result.stopped)
    return (f"the model stopped at its {result.stopped} budget ({limit}) after {result.steps} "
            f"calls without finishing")


def _emit(observe: Observer | None, kind: str, **data: Any) -> None:
    if observe is not None:
        observe(kind, data)


def _call(kwargs: dict, budget: Budget, deadline: float, usage: _Usage,
          observe: Observer | None = None) -> tuple[Any, float]:
    """One completion with our retry policy; returns (response, seconds it took).

    429 / 5xx / timeouts are retried ``budget.retries`` times with doubling backoff; a failed
    connection at most ``budget.connect_retries`` times. Raises ModelError or _OutOfTime.
    """
    lm = _litellm()
    attempt = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        usage.attempts += 1
        number = usage.attempts
        _emit(observe, "request", call=number, messages=len(kwargs["messages"]))
        started = time.monotonic()
        try:
            # num_retries/max_retries=0: litellm's and the OpenAI SDK's own retries are off,
            # so the budget and backoff here are the only policy.
            resp = lm.completion(**kwargs, timeout=min(budget.call_timeout, left),
                                 num_retries=0, max_retries=0)
            return resp, time.monotonic() - started
        except Exception as exc:  # litellm maps provider errors onto its exception classes
            if _refuses_tool_choice(exc, kwargs):
                # vLLM without tool parsing answers 400 to tool_choice: ask again without it
                # (and never send it to that server again); not a retry of the budget.
                _NO_TOOL_CHOICE.add((kwargs["model"], kwargs.get("api_base")))
                kwargs.pop("tool_choice")
                _emit(observe, "error", call=number, seconds=round(time.monotonic() - started,
                                                                   3),
                      error=_describe(exc, kwargs["model"], kwargs.get("api_base")),
                      timeout=False)
                continue
            if isinstance(exc, _litellm().Timeout):
                _drop_connections()
            _retry_or_raise(exc, kwargs, budget, deadline, usage, observe,
                            attempt, number, time.monotonic() - started)
            attempt += 1


def _refuses_tool_choice(exc: Exception, kwargs: dict) -> bool:
    """True when a server answered 400 to the ``tool_choice`` this request carried."""
    return ("tool_choice" in kwargs and getattr(exc, "status_code", None) == 400
            and "tool_choice" in str(exc).lower().replace("-", "_"))


def _drop_connections() -> None:
    """Close the connections litellm keeps for reuse: the one a timed-out request was on is
    not used again (its server may still be writing the abandoned reply into it), and the
    next request opens a fresh one."""
    cache = getattr(_litellm(), "in_memory_llm_clients_cache", None)
    flush = getattr(cache, "flush_cache", None)
    if callable(flush):
        flush()


def _retry_or_raise(exc: Exception, kwargs: dict, budget: Budget, deadline: float,
                    usage: _Usage, observe: Observer | None, attempt: int, number: int,
                    seconds: float) -> None:
    """After a failed request: record it, then sleep before the next try, or raise ModelError
    (not retryable, or retries used up) / _OutOfTime (no time left for the pause)."""
    lm = _litellm()
    timed_out = isinstance(exc, lm.Timeout)
    if timed_out:
        usage.timed_out.append(number)
    msg = _describe(exc, kwargs["model"], kwargs.get("api_base"))
    _emit(observe, "error", call=number, seconds=round(seconds, 3), error=msg,
          timeout=timed_out)
    if not _is_retryable(exc):
        raise ModelError(msg) from exc
    if _is_connect_failure(exc):
        limit = min(budget.retries, budget.connect_retries)
    elif timed_out:
        limit = timeout_retries(budget, kwargs.get("api_base"))
    else:
        limit = budget.retries
    if attempt >= limit:
        if deadline - time.monotonic() <= 0:
            raise _OutOfTime from exc
        note = f"; {_timeout_note(usage, budget)}" if usage.timed_out else ""
        if timed_out and limit == 0 and kwargs.get("api_base"):
            note += f"; {LOCAL_TIMEOUT_NOTE}"
        raise ModelError(f"{msg} (gave up after {attempt} retries{note})") from exc
    pause = budget.backoff * (2 ** attempt)
    usage.retries += 1
    if time.monotonic() + pause >= deadline:
        raise _OutOfTime from exc
    status = getattr(exc, "status_code", None)
    reason = "timeout" if timed_out else (f"HTTP {status}" if isinstance(status, int)
                                          and not _is_connect_failure(exc) else "no connection")
    _emit(observe, "retry", retry=attempt + 1, of=limit, pause=pause, reason=reason)
    time.sleep(pause)


def _cost(resp: Any) -> float | None:
    try:
        cost = _litellm().completion_cost(completion_response=resp)
    except Exception:  # unknown model or price: cost is simply unknown
        return None
    return float(cost) if cost else None


def _record(resp: Any, kwargs: dict, usage: _Usage) -> tuple[dict, str | None, int, int]:
    """Add the response's usage and cost; return (its assistant message as a plain dict,
    finish_reason, prompt tokens, completion tokens)."""
    try:
        choice = resp.choices[0]
        msg = choice.message
    except (AttributeError, IndexError, TypeError) as exc:
        raise ModelError(f"model {kwargs['model']!r} sent a response without a message: "
                         f"{resp!r:.300}") from exc
    u = getattr(resp, "usage", None)
    prompt = getattr(u, "prompt_tokens", None)
    completion = getattr(u, "completion_tokens", None)
    if prompt is None:  # provider gave no usage: estimate, so the token budget still holds
        prompt = count_tokens(kwargs["model"], kwargs["messages"], kwargs.get("tools"))
    usage.add(int(prompt), int(completion or 0), _cost(resp))
    usage.steps += 1
    # Always a text, "" beside tool calls: a chat template that reads message.content (the
    # llama-cpp-python server's) fails on an assistant message without one.
    out: dict = {"role": "assistant", "content": msg.content or ""}
    calls = [
        {"id": tc.id, "type": "function",
         "function": {"name": tc.function.name, "arguments": tc.function.arguments or ""}}
        for tc in (getattr(msg, "tool_calls", None) or [])
    ]
    if calls:
        out["tool_calls"] = calls
    return out, getattr(choice, "finish_reason", None), int(prompt), int(completion or 0)


def _run_tool(execute: Callable[[str, str | dict], str], name: str, arguments: str) -> str:
    try:
        result = execute(name, arguments)
    except Exception as exc:  # the executor should never raise; if it does, tell the model
        from scene_engine.core.errors import plain_error

        return f"Error: tool {name!r} failed: {type(exc).__name__}: {plain_error(exc)}"
    return result if isinstance(result, str) else str(result)


def _supports_tool_choice(model: str) -> bool:
    """Whether litellm says ``model``'s provider takes ``tool_choice`` (False when unknown)."""
    lm = _litellm()
    try:
        name, provider, _, _ = lm.get_llm_provider(model)
        return "tool_choice" in (lm.get_supported_openai_params(
            model=name, custom_llm_provider=provider) or ())
    except Exception:  # an unknown model: send nothing it might reject
        return False


# (model, api_base) of servers that answered 400 to tool_choice (vLLM without tool parsing).
_NO_TOOL_CHOICE: set[tuple[str, str | None]] = set()


def _request(model: str, convo: list[dict], tools: list[dict], api_base: str | None,
             api_key: str | None, budget: Budget) -> dict:
    """The keyword arguments of one completion request: always ``max_tokens``; ``tools`` with
    ``tool_choice="auto"`` for a server at ``api_base`` (llama-cpp-python's server leaves the
    tools out of the prompt without it) and for a hosted provider that takes it; not for a
    server that refused it once (``_NO_TOOL_CHOICE``). "required" would forbid the answer."""
    kwargs = {"model": model, "messages": convo, "api_base": api_base, "api_key": api_key,
              "max_tokens": budget.max_output_tokens}
    if tools:
        kwargs["tools"] = tools
        if (model, api_base) not in _NO_TOOL_CHOICE and (
                api_base is not None or _supports_tool_choice(model)):
            kwargs["tool_choice"] = "auto"
    return kwargs


def run_tool_loop(messages: list[dict], tools: list[dict],
                  execute: Callable[[str, str | dict], str], *, model: str,
                  api_base: str | None = None, api_key: str | None = None,
                  budget: Budget | None = None, observe: Observer | None = None,
                  deadline: float | None = None) -> LoopResult:
    """Let ``model`` call ``tools`` until it answers without tool calls or a budget ends.

    messages: OpenAI chat messages (system + user); not mutated, the grown copy is returned.
    tools: OpenAI function specs (e.g. ``Sandbox.tool_specs()``).
    execute(name, raw_arguments) -> str runs one call; it gets the argument string exactly as the
    model sent it (possibly invalid JSON, possibly an unknown tool name) and should never raise;
    an exception becomes an "Error: ..." tool result and the loop goes on.
    Parallel tool calls are executed in order, one ``tool`` message each. The calls of the last
    turn are always executed, so the returned conversation is well-formed even on a budget stop.
    A reply without structured tool calls that consists of calls written as text naming one of
    ``tools`` is run the same way (``text_calls.parse_text_calls``). A reply cut off at
    ``budget.max_output_tokens`` (finish_reason "length") is never an answer: its tool calls
    are dropped and the model is told, ``budget.truncations`` times; then the loop stops.
    observe(kind, data), if given, hears of every request, reply, error, retry and tool call.
    deadline: a ``time.monotonic()`` instant the loop must end by even if ``budget.max_seconds``
    is not over (a batch's repair rounds share one limit).

    Budgets are checked before each model call; each call's timeout is min(call_timeout, time
    left). Returns a LoopResult; raises ModelError on non-retryable provider errors (401, 400, 404)
    or when retries for 429 / 5xx / timeouts / connection errors are exhausted.
    """
    from scene_engine.llm.text_calls import parse_text_calls

    budget = budget or Budget()
    convo = list(messages)
    usage = _Usage()
    own = time.monotonic() + budget.max_seconds
    deadline = own if deadline is None else min(own, deadline)
    final_text = ""
    names = {t["function"]["name"] for t in tools or () if "function" in t}

    def result(stopped: str) -> LoopResult:
        return LoopResult(final_text, usage.steps, usage.prompt, usage.completion,
                          usage.cost, stopped, convo, usage.tool_calls, usage.retries,
                          usage.attempts, usage.timed_out, usage.text_calls, usage.truncated)

    while True:
        if usage.steps >= budget.max_steps:
            return result("steps")
        if usage.total >= budget.max_tokens:
            return result("tokens")
        kwargs = _request(model, convo, tools, api_base, api_key, budget)
        try:
            resp, seconds = _call(kwargs, budget, deadline, usage, observe)
        except _OutOfTime:
            return result("time")
        assistant, finish, prompt, completion = _record(resp, kwargs, usage)
        fallback = False
        if finish != "length" and not assistant.get("tool_calls") and names:
            found = parse_text_calls(assistant["content"] or "", names)
            if found:
                assistant["tool_calls"], fallback = found, True
                usage.text_calls += len(found)
        _emit(observe, "reply", call=usage.attempts, seconds=round(seconds, 3),
              content=assistant["content"], tool_calls=assistant.get("tool_calls", []),
              finish_reason=finish, prompt_tokens=prompt, completion_tokens=completion,
              text_fallback=fallback)
        if finish == "length":
            usage.truncated += 1
            # Cut-off arguments must not run, and unanswered tool calls would be malformed.
            convo.append({"role": "assistant", "content": assistant["content"] or ""})
            _emit(observe, "truncated", call=usage.attempts, limit=budget.max_output_tokens,
                  dropped_calls=len(assistant.get("tool_calls", [])))
            if usage.truncated > budget.truncations:
                return result("truncated")
            convo.append({"role": "user", "content": TRUNCATED_NOTE.format(
                limit=budget.max_output_tokens)})
            continue
        convo.append(assistant)
        final_text = assistant["content"] or ""
        calls = assistant.get("tool_calls")
        if not calls:
            return result("done")
        if fallback:
            final_text = ""   # the text was the calls, not an answer
        for tc in calls:
            fn = tc["function"]
            output = _run_tool(execute, fn["name"], fn["arguments"])
            usage.tool_calls += 1
            _emit(observe, "tool", id=tc["id"], name=fn["name"], arguments=fn["arguments"],
                  result=output, refused=output.startswith("Error:"), text_fallback=fallback)
            convo.append({"role": "tool", "tool_call_id": tc["id"], "content": output})


def complete_text(messages: list[dict], *, model: str, api_base: str | None = None,
                  api_key: str | None = None, budget: Budget | None = None) -> tuple[str, dict]:
    """One plain completion without tools (used for the persona), with the same retry policy.

    Returns (text, usage) where usage is ``{"prompt_tokens", "completion_tokens", "cost",
    "retries"}`` (cost in USD or None). Raises ModelError on failure, including running out of
    ``budget.max_seconds`` and a reply cut off at ``budget.max_output_tokens``.
    """
    usage = _Usage()
    reply = _complete_once(messages, [], model, api_base, api_key, budget or Budget(), usage)
    return reply["content"] or "", {"prompt_tokens": usage.prompt,
                                    "completion_tokens": usage.completion,
                                    "cost": usage.cost, "retries": usage.retries}


def complete_message(messages: list[dict], tools: list[dict], *, model: str,
                     api_base: str | None = None, api_key: str | None = None,
                     budget: Budget | None = None) -> dict:
    """One completion offering ``tools`` (the extractor's and adjudicator's structured
    answers), with the same retry policy; the tools are not run.

    Returns the assistant message as a plain dict (``content`` and, when the model called a
    tool, ``tool_calls`` in OpenAI wire form). Raises ModelError as ``complete_text``.
    """
    return _complete_once(messages, tools, model, api_base, api_key, budget or Budget(),
                          _Usage())


def _complete_once(messages: list[dict], tools: list[dict], model: str, api_base: str | None,
                   api_key: str | None, budget: Budget, usage: _Usage) -> dict:
    """One request with the retry policy; the assistant message as a dict, ``usage`` filled.
    Raises ModelError when time runs out or the reply is cut off at max_output_tokens."""
    kwargs = _request(model, list(messages), tools, api_base, api_key, budget)
    try:
        resp, _ = _call(kwargs, budget, time.monotonic() + budget.max_seconds, usage)
    except _OutOfTime as exc:
        raise ModelError(f"model {model!r} did not answer within {budget.max_seconds} s") from exc
    reply, finish, _, _ = _record(resp, kwargs, usage)
    if finish == "length":
        raise ModelError(f"model {model!r}: the reply was cut off at max_output_tokens "
                         f"({budget.max_output_tokens})")
    return reply
