"""A scripted OpenAI-compatible chat server for tests: litellm talks to it over real HTTP.

Each POST to ``/v1/chat/completions`` (or ``/chat/completions``) consumes one scripted step:

    server.script([reply(tool_calls=[call("read_file", {"path": "a.md"})]), reply(content="done")])
    server.repeat(reply(tool_calls=[...]))   # answer forever once the script is used up
    server.requests                          # every received request body (parsed JSON), in order
    server.headers                           # their HTTP headers (lower-case names), in order
    server.api_base                          # "http://127.0.0.1:PORT/v1"

Steps are ``reply(...)``, ``error(status)``, ``delay(seconds, then=step)`` or a callable that gets
the request JSON and returns a step. An exhausted script answers 500 with a message saying so, so a
test that under-scripts fails loudly instead of hanging.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
_sleep = time.sleep   # bound now: a test that patches time.sleep must not make delays vanish


@dataclass
class Reply:
    """A successful chat.completion; ``tool_calls`` are already in OpenAI wire form."""

    content: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str | None = None


@dataclass
class Error:
    """An HTTP error status with an OpenAI-style ``{"error": {...}}`` body (or ``body`` verbatim)."""

    status: int
    body: Any = None


@dataclass
class Delay:
    """Sleep ``seconds`` before answering with ``then`` (for timeout tests)."""

    seconds: float
    then: Any


def call(name: str, arguments: dict | str, id: str | None = None) -> dict:
    """One tool call; a dict is JSON-encoded, a str is sent raw (to simulate broken JSON)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": id or f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": args},
    }


def reply(content: str | None = None, tool_calls: list[dict] | None = None, *,
          prompt_tokens: int = 10, completion_tokens: int = 5,
          finish_reason: str | None = None) -> Reply:
    """A reply step: final text when ``tool_calls`` is empty, else a tool-calling turn."""
    return Reply(content, list(tool_calls or []), prompt_tokens, completion_tokens, finish_reason)


def error(status: int, body: Any = None) -> Error:
    """An error step answering HTTP ``status``."""
    return Error(status, body)


def delay(seconds: float, then: Any = None) -> Delay:
    """A step that sleeps ``seconds`` and then answers ``then`` (default: a short final reply)."""
    return Delay(seconds, then if then is not None else reply(content="late"))


_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}


class FakeLLM:
    """The server; use as a context manager or via the ``fake_llm`` pytest fixture."""

    def __init__(self) -> None:
        self._steps: deque = deque()
        self._forever: Any = None
        self._lock = threading.Lock()
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # delayed handlers must not hold up shutdown
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, steps: list) -> FakeLLM:
        """Append ``steps`` to the queue; each request consumes one."""
        with self._lock:
            self._steps.extend(steps)
        return self

    def repeat(self, step: Any) -> FakeLLM:
        """Answer with ``step`` forever once the queued steps are used up."""
        self._forever = step
        return self

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next_step(self, body: dict) -> Any:
        with self._lock:
            self.requests.append(body)
            if self._steps:
                return self._steps.popleft()
            return self._forever

    def respond(self, body: dict) -> tuple[int, dict]:
        """Resolve the next step for ``body`` into (HTTP status, JSON payload)."""
        step = self._next_step(body)
        while True:
            if step is None:
                return 500, _error_body(500, f"fakellm: script exhausted at request "
                                             f"#{len(self.requests)}")
            if isinstance(step, Delay):
                _sleep(step.seconds)
                step = step.then
            elif isinstance(step, Error):
                return step.status, step.body if step.body is not None else _error_body(step.status)
            elif isinstance(step, Reply):
                return 200, _completion(step, body.get("model", "test-model"))
            elif callable(step):
                step = step(body)
            else:
                raise TypeError(f"fakellm: not a step: {step!r}")


def _error_body(status: int, message: str | None = None) -> dict:
    return {"error": {"message": message or f"fakellm scripted error {status}",
                      "type": _ERROR_TYPES.get(status, "server_error"),
                      "param": None, "code": None}}


def _completion(step: Reply, model: str) -> dict:
    message: dict = {"role": "assistant", "content": step.content}
    if step.tool_calls:
        message["tool_calls"] = step.tool_calls
    finish = step.finish_reason or ("tool_calls" if step.tool_calls else "stop")
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": step.prompt_tokens,
                  "completion_tokens": step.completion_tokens,
                  "total_tokens": step.prompt_tokens + step.completion_tokens},
    }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, _error_body(404, f"fakellm: no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error_body(400, "fakellm: request body is not JSON"))
            return
        if body.get("stream"):
            self._send(400, _error_body(400, "fakellm: stream=true is not supported"))
            return
        with self.fake._lock:
            self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        status, payload = self.fake.respond(body)
        self._send(status, payload)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test); nothing to tell it

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass


ScriptStep = Reply | Error | Delay | Callable[[dict], Any]
