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
from dataclasses import dataclass
from typing import Any

__all__ = ["Budget", "LoopResult", "ModelError", "run_tool_loop", "complete_text", "count_tokens"]

_LITELLM: Any = None


@dataclass
class Budget:
    """Limits for one loop (DESIGN.md, "A batch", step 4).

    max_steps: model calls per loop; max_tokens: prompt+completion tokens summed over the loop;
    max_seconds: wall time for the whole loop; call_timeout: seconds per model call; retries: extra
    attempts per call for 429 / 5xx / timeout / connection errors; backoff: first retry delay in
    seconds, doubled on each further retry.
    """

    max_steps: int = 20
    max_tokens: int = 200_000
    max_seconds: float = 300.0
    call_timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0


@dataclass
class LoopResult:
    """What a loop did.

    final_text: the model's last text (its answer when ``stopped == "done"``, possibly empty);
    steps: model calls that returned; prompt_tokens / completion_tokens: summed usage;
    cost: USD summed over calls, or None if litellm does not know the model's price;
    stopped: "done" | "steps" | "tokens" | "time"; messages: the whole conversation (input plus
    assistant and tool messages); tool_calls: tool calls executed; retries: failed attempts retried.
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


class ModelError(RuntimeError):
    """The model could not be used: retries exhausted, auth error, bad request, or a bad response."""


class _OutOfTime(Exception):
    """Internal: the loop's time budget ran out while waiting for / retrying a call."""


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


def _describe(exc: Exception, model: str, api_base: str | None) -> str:
    """One readable line: which model and server, the HTTP status when a server answered, and
    the first line of litellm's message (its later lines are provider-list boilerplate)."""
    where = f" at {api_base}" if api_base else ""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = text.lower()
    if any(marker in lowered for marker in _SETUP_PROBLEMS[:3]):
        return (f"model {model!r}{where}: no API key; set the provider's key in the "
                f"environment (e.g. OPENAI_API_KEY) [{text[:200]}]")
    if "llm provider not provided" in lowered:
        return (f"model {model!r} names no provider litellm knows; use a litellm model name "
                "such as gpt-4o-mini, anthropic/<model> or openai/<model> with --api-base")
    connection = isinstance(exc, _litellm().APIConnectionError) or "connection error" in lowered
    status = getattr(exc, "status_code", None)
    code = f" (HTTP {status})" if isinstance(status, int) and not connection else ""
    kind = "could not connect" if connection else "failed"
    return f"model {model!r}{where} {kind}{code}: {type(exc).__name__}: {text[:300]}"


def _call(kwargs: dict, budget: Budget, deadline: float, usage: _Usage) -> Any:
    """One completion with our retry policy; raises ModelError or _OutOfTime."""
    lm = _litellm()
    attempt = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime
        try:
            # num_retries/max_retries=0: litellm's and the OpenAI SDK's own retries are off,
            # so the budget and backoff here are the only policy.
            return lm.completion(**kwargs, timeout=min(budget.call_timeout, left),
                                 num_retries=0, max_retries=0)
        except Exception as exc:  # litellm maps provider errors onto its exception classes
            if not _is_retryable(exc):
                raise ModelError(_describe(exc, kwargs["model"], kwargs.get("api_base"))) from exc
            if attempt >= budget.retries:
                if deadline - time.monotonic() <= 0:
                    raise _OutOfTime from exc
                msg = _describe(exc, kwargs["model"], kwargs.get("api_base"))
                raise ModelError(f"{msg} (gave up after {attempt} retries)") from exc
            pause = budget.backoff * (2 ** attempt)
            attempt += 1
            usage.retries += 1
            if time.monotonic() + pause >= deadline:
                raise _OutOfTime from exc
            time.sleep(pause)


def _cost(resp: Any) -> float | None:
    try:
        cost = _litellm().completion_cost(completion_response=resp)
    except Exception:  # unknown model or price: cost is simply unknown
        return None
    return float(cost) if cost else None


def _record(resp: Any, kwargs: dict, usage: _Usage) -> dict:
    """Add the response's usage and cost; return its assistant message as a plain dict."""
    try:
        msg = resp.choices[0].message
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
    out: dict = {"role": "assistant", "content": msg.content}
    calls = [
        {"id": tc.id, "type": "function",
         "function": {"name": tc.function.name, "arguments": tc.function.arguments or ""}}
        for tc in (getattr(msg, "tool_calls", None) or [])
    ]
    if calls:
        out["tool_calls"] = calls
    return out


def _run_tool(execute: Callable[[str, str | dict], str], name: str, arguments: str) -> str:
    try:
        result = execute(name, arguments)
    except Exception as exc:  # the executor should never raise; if it does, tell the model
        return f"Error: tool {name!r} failed: {type(exc).__name__}: {exc}"
    return result if isinstance(result, str) else str(result)


def run_tool_loop(messages: list[dict], tools: list[dict],
                  execute: Callable[[str, str | dict], str], *, model: str,
                  api_base: str | None = None, api_key: str | None = None,
                  budget: Budget | None = None) -> LoopResult:
    """Let ``model`` call ``tools`` until it answers without tool calls or a budget ends.

    messages: OpenAI chat messages (system + user); not mutated, the grown copy is returned.
    tools: OpenAI function specs (e.g. ``Sandbox.tool_specs()``).
    execute(name, raw_arguments) -> str runs one call; it gets the argument string exactly as the
    model sent it (possibly invalid JSON, possibly an unknown tool name) and should never raise;
    an exception becomes an "Error: ..." tool result and the loop goes on.
    Parallel tool calls are executed in order, one ``tool`` message each. The calls of the last
    turn are always executed, so the returned conversation is well-formed even on a budget stop.

    Budgets are checked before each model call; each call's timeout is min(call_timeout, time
    left). Returns a LoopResult; raises ModelError on non-retryable provider errors (401, 400, 404)
    or when retries for 429 / 5xx / timeouts / connection errors are exhausted.
    """
    budget = budget or Budget()
    convo = list(messages)
    usage = _Usage()
    deadline = time.monotonic() + budget.max_seconds
    final_text = ""

    def result(stopped: str) -> LoopResult:
        return LoopResult(final_text, usage.steps, usage.prompt, usage.completion,
                          usage.cost, stopped, convo, usage.tool_calls, usage.retries)

    while True:
        if usage.steps >= budget.max_steps:
            return result("steps")
        if usage.total >= budget.max_tokens:
            return result("tokens")
        kwargs = {"model": model, "messages": convo, "api_base": api_base, "api_key": api_key}
        if tools:
            kwargs["tools"] = tools
        try:
            resp = _call(kwargs, budget, deadline, usage)
        except _OutOfTime:
            return result("time")
        assistant = _record(resp, kwargs, usage)
        convo.append(assistant)
        final_text = assistant["content"] or ""
        calls = assistant.get("tool_calls")
        if not calls:
            return result("done")
        for tc in calls:
            fn = tc["function"]
            output = _run_tool(execute, fn["name"], fn["arguments"])
            usage.tool_calls += 1
            convo.append({"role": "tool", "tool_call_id": tc["id"], "content": output})


def complete_text(messages: list[dict], *, model: str, api_base: str | None = None,
                  api_key: str | None = None, budget: Budget | None = None) -> tuple[str, dict]:
    """One plain completion without tools (used for the persona), with the same retry policy.

    Returns (text, usage) where usage is ``{"prompt_tokens", "completion_tokens", "cost",
    "retries"}`` (cost in USD or None). Raises ModelError on failure, including running out of
    ``budget.max_seconds``.
    """
    budget = budget or Budget()
    usage = _Usage()
    kwargs = {"model": model, "messages": list(messages), "api_base": api_base,
              "api_key": api_key}
    try:
        resp = _call(kwargs, budget, time.monotonic() + budget.max_seconds, usage)
    except _OutOfTime as exc:
        raise ModelError(f"model {model!r} did not answer within {budget.max_seconds} s") from exc
    text = _record(resp, kwargs, usage)["content"] or ""
    return text, {"prompt_tokens": usage.prompt, "completion_tokens": usage.completion,
                  "cost": usage.cost, "retries": usage.retries}
