"""The HTTP face of ``front`` for scripts and services: a store per token (docs/DESIGN.md
"Serving many stores", docs/guides/serving.md).

Routes (JSON in and out; ``STORE`` is the store's name):

    POST /v1/stores/STORE/remember   memories as ``scenes add`` reads them (a JSON list,
                                     JSONL, or one object)
    POST /v1/stores/STORE/recall     {"query", "budget"?, "scope"?, "persona"?}
    POST /v1/stores/STORE/search     {"query", "k"?, "memories"?, "scope"?}
    GET  /v1/stores/STORE/status
    GET  /healthz                    no token: "ok" when Postgres answers
    /mcp                             the MCP server over streamable HTTP, the same tools as
                                     ``scenes mcp`` for the token's store (``scenes serve``
                                     mounts it here: ``mcpserver.server.hosted_app``)

Every call but ``/healthz`` carries ``Authorization: Bearer TOKEN``; the token is looked up on
every call and opens exactly one store: a missing or unknown token is 401, a token of another
store (or a name that is not a store's, ``..`` and ``%2F`` included) is 403, before anything
is read. Errors are ``{"error", "exit_code"}`` in one line, never a traceback: 400 for bad
input (the message ``scenes add`` gives for the same bytes), 413 for a body over 16 MiB,
404 and 405 for a route or method that is not one, 503 when Postgres or the git
server cannot be reached (``/mcp``'s token check included: "bad token" would be untrue).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from scene_engine.core.errors import InputError, SceneEngineError, UnavailableError
from scene_engine.serving.database import first_line
from scene_engine.serving.front import Front

MAX_BODY = 16 * 1024 * 1024      # bytes a request may carry
log = logging.getLogger(__name__)


def _error(message: str, status: int, exit_code: int = 1) -> JSONResponse:
    return JSONResponse({"error": message, "exit_code": exit_code}, status_code=status)


def _authorized(front: Front, request: Request) -> str | JSONResponse:
    """The store the call may touch, or the refusal (401 / 403)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _error("a bearer token is required (Authorization: Bearer TOKEN)", 401)
    # Served beside /mcp, the MCP SDK's auth middleware has looked the token up already: its
    # user names the store (no second lookup); served alone, it is looked up here.
    user = request.scope.get("user")
    checked = getattr(user, "access_token", None)
    store = checked.client_id if checked is not None and checked.token == token.strip() \
        else front.store_of_token(token.strip())
    if store is None:
        return _error("this token opens no store", 401)
    asked = request.path_params.get("store")
    if asked != store:
        return _error("this token does not open that store", 403)
    return store


class TooLarge(InputError):
    """A request body over ``MAX_BODY`` bytes: HTTP 413, read no further than the limit."""


async def _body(request: Request) -> bytes:
    """The request's body, refused (``TooLarge``) as soon as it is known to pass ``MAX_BODY``:
    from its ``Content-Length`` before a byte is read, else while it streams in."""
    too_large = TooLarge(f"the request is larger than {MAX_BODY:,} bytes ({MAX_BODY // 2**20} "
                         "MiB); send the memories in smaller calls")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _arguments(data: bytes, allowed: tuple[str, ...]) -> dict[str, Any]:
    """The call's JSON object, each key one the call takes (``InputError`` otherwise)."""
    try:
        given = json.loads(data.decode("utf-8") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"the request body is not JSON: {exc}") from exc
    except RecursionError:
        raise InputError("the request body is nested too deeply: give one JSON object of "
                         "plain arguments") from None
    if not isinstance(given, dict):
        raise InputError("the request body must be a JSON object")
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise InputError(f"unknown argument {unknown[0]!r}; this call takes "
                         + ", ".join(allowed))
    return given


UNAVAILABLE = (UnavailableError, psycopg.OperationalError, PoolTimeout)


def _unavailable(exc: BaseException) -> JSONResponse:
    if isinstance(exc, UnavailableError):
        return _error(str(exc), 503)
    return _error(f"Postgres is not available: {first_line(exc)}; try again", 503)


class Unavailable503:
    """ASGI middleware: Postgres or the git server failing before a response began (the
    token check of ``/mcp``, in the MCP SDK's auth middleware) is a 503 JSON, not a 500."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)
        try:
            await self.app(scope, receive, tracked)
        except UNAVAILABLE as exc:
            if started:
                raise
            await _unavailable(exc)(scope, receive, send)


def build_app(front: Front, base: Starlette | None = None) -> Starlette:
    """The Starlette app serving ``front``: its routes added to ``base`` when given (the MCP
    server's streamable-HTTP app, which keeps ``/mcp`` and its lifespan), else a new app;
    404 and 405 as JSON, no redirect of a trailing slash, ``Unavailable503`` outermost."""
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException

    def guarded(work):
        async def endpoint(request: Request):
            try:
                store = await run_in_threadpool(_authorized, front, request)
                if isinstance(store, JSONResponse):
                    return store
                data = await _body(request) if request.method == "POST" else b""
                return JSONResponse(await run_in_threadpool(work, store, data))
            except TooLarge as exc:
                return _error(str(exc), 413, 2)
            except InputError as exc:
                return _error(str(exc), 400, 2)
            except UNAVAILABLE as exc:             # Postgres restarting, git server away
                return _unavailable(exc)
            except SceneEngineError as exc:
                return _error(str(exc), 500)
            except Exception:
                log.exception("request failed")
                return _error("internal error; the server's log has the details", 500)
        return endpoint

    async def http_error(request: Request, exc: Exception):
        code = getattr(exc, "status_code", 500)
        said = {404: f"no route {request.url.path}; the routes are /v1/stores/STORE/remember, "
                     "recall, search (POST), status (GET), /healthz and /mcp",
                405: f"{request.method} is not allowed on {request.url.path}"}
        return _error(said.get(code, getattr(exc, "detail", "") or "refused"), code)

    def remember(store: str, data: bytes) -> dict:
        # As `scenes add` reads it, one object included (one line of JSONL, or one object
        # pretty-printed), so a refusal names the same place and column as the command line.
        return front.remember(store, data)

    def recall(store: str, data: bytes) -> dict:
        given = _arguments(data, ("query", "budget", "scope", "persona"))
        return front.recall(store, given.get("query", ""), given.get("budget", 4000),
                            given.get("scope"), given.get("persona", False))

    def search(store: str, data: bytes) -> dict:
        given = _arguments(data, ("query", "k", "memories", "scope"))
        memories = given.get("memories", False)
        if not isinstance(memories, bool):      # "false" is a true string: refuse, not guess
            raise InputError(f"memories must be true or false, not {memories!r}")
        return front.search(store, given.get("query", ""), given.get("k", 10), memories,
                            given.get("scope"))

    def status(store: str, data: bytes) -> dict:
        return front.status(store)

    async def health(request: Request):
        from starlette.concurrency import run_in_threadpool

        def ping() -> bool:
            with front.pool.connection() as conn:
                conn.execute("SELECT 1")
            return True
        try:
            await run_in_threadpool(ping)
        except Exception as exc:
            return _error(f"Postgres does not answer: {exc}", 503)
        return JSONResponse({"ok": True})

    prefix = "/v1/stores/{store}"
    routes = [
        Route(f"{prefix}/remember", guarded(remember), methods=["POST"]),
        Route(f"{prefix}/recall", guarded(recall), methods=["POST"]),
        Route(f"{prefix}/search", guarded(search), methods=["POST"]),
        Route(f"{prefix}/status", guarded(status), methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
    ]
    app = Starlette(routes=routes) if base is None else base
    if base is not None:
        base.router.routes.extend(routes)
    app.router.redirect_slashes = False
    app.add_exception_handler(HTTPException, http_error)
    app.add_middleware(Unavailable503)
    return app


def serve(front: Front, host: str = "127.0.0.1", port: int = 8765,
          base: Starlette | None = None) -> None:
    """Serve ``front`` (on ``base``, see ``build_app``) over HTTP with uvicorn until
    interrupted."""
    import uvicorn

    from scene_engine.core.weblog import hide_query_strings

    hide_query_strings()        # a token misplaced in a URL stays out of any access line
    uvicorn.run(build_app(front, base), host=host, port=port, log_level="warning")
