"""The MCP server: one store's tools and scenes for agents, through the official MCP SDK.

``build_server`` registers the tools of ``tools`` (each a thin wrapper: the SDK derives the
JSON schema from the signature and the description from the docstring) and the scenes as
resources (``scene://{name}``). ``serve`` runs it over stdio (desktop and coding agents start
it as a child process) or streamable HTTP (bound to 127.0.0.1 unless told otherwise), with a
``folding.FoldWorker`` folding remembered memories in the background and an
``inbox.InboxJoiner`` joining memories queued while the store was busy as soon as it is free.

Arguments are checked as the command line checks its input (``SceneServer``): an argument a
tool does not take is refused by name, ``remember``'s record passes ``scenes add``'s
validation before the SDK's type checks, and what those refuse is one plain line
(``scene_server_class``).

Over HTTP on any address but the loopback names the SDK guards with its Host/Origin checks, a
bearer token is required (the SDK's ``TokenVerifier`` and auth middleware: 401 without it):
docs/DESIGN.md "Command line" (`scenes mcp`), docs/guides/agents.md.

Tool calls run in the SDK's worker threads; a ``threading.Lock`` lets one write (remember,
undo) run at a time in this process, and the store lock keeps out other processes (a `scenes
run` in a terminal) exactly as between two commands.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import logging
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any, Protocol

from pydantic import Field, ValidationError

from scene_engine.core import interrupts
from scene_engine.core.errors import (
    InputError,
    SceneEngineError,
    UnavailableError,
    plain_error,
    plain_problems,
)
from scene_engine.mcpserver import tools
from scene_engine.services.backends import store_backend
from scene_engine.services.folding import FoldWorker, InboxJoiner
from scene_engine.services.host_fold import HostFolds
from scene_engine.store.config import ConfigError
from scene_engine.store.store import Store

TOKEN_ENV = "SCENE_ENGINE_MCP_TOKEN"
# The addresses the SDK guards with its Host/Origin checks (DNS rebinding): only this machine
# reaches them. Any other address (0.0.0.0, a LAN address, even 127.0.0.2) needs a token.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# Printable ASCII without spaces (it travels in an HTTP header), long enough not to be guessed.
_TOKEN_FORM = re.compile(r"[!-~]{16,1024}")

INSTRUCTIONS = (
    "Long-term memory kept as readable Markdown scenes in git. Call `remember` with one fact, "
    "preference, decision or event at a time (in the user's own words, with created_at when "
    "known); call `recall` with the question before answering from memory: it returns the "
    "persona, a map of the scenes and the best passages, each with its source. Memories are "
    "folded into scenes in the background.")

log = logging.getLogger(__name__)


class HostedStores(Protocol):
    """Many stores behind one server (``serving.front.Front``): a token opens one store."""

    def store_of_token(self, token: str) -> str | None:
        """The store ``token`` opens, or None."""

    def reader(self, store: str) -> Store:
        """``store`` as the git server holds it, its waiting memories included."""

    def remember(self, store: str, data: bytes) -> dict:
        """Put memories (JSONL) in ``store``'s inbox: ``{"ids", "added", "known", ...}``."""

    def status(self, store: str) -> dict:
        """``scenes status --json`` of ``store`` with ``inbox`` and ``commit``."""


def build_server(store: Store | None = None, *, hosted: HostedStores | None = None,
                 allow_undo: bool = False, worker: FoldWorker | None = None,
                 joiner: InboxJoiner | None = None, token: str | None = None,
                 url: str = "http://127.0.0.1", folds: HostFolds | None = None):
    """A ``SceneServer`` (``scene_server_class``: the SDK's ``MCPServer``) for ``store``, or
    for the many stores of ``hosted`` (docs/DESIGN.md "Serving many stores": every call's
    bearer token names its store, checked on every call; ``remember`` puts the memory in
    the store's inbox; no ``undo``). ``allow_undo``: also offer the ``undo`` tool.
    ``worker``: told of each remembered memory (folds sooner). ``joiner``: woken when a
    memory is queued in the inbox. ``token``: a bearer token every HTTP request must carry
    (the SDK answers 401 without it); ``url``: where the server is served (its own address,
    named as the issuer of the token). ``folds``: also offer the fold tools, the host's
    model folding batches itself (``fold_tools``, docs/DESIGN.md "Host folding")."""
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    if (store is None) == (hosted is None):
        raise ValueError("build_server serves one store or hosted stores: give one")
    verifier = StoreTokens(hosted) if hosted is not None else \
        BearerToken(token) if token is not None else None
    auth = {} if verifier is None else {
        "token_verifier": verifier, "auth": AuthSettings(issuer_url=url, resource_server_url=None)}
    server = scene_server_class()("scene-engine", instructions=INSTRUCTIONS, version=_version(),
                                  **auth)
    writing = threading.Lock()

    def target() -> Store:
        return hosted.reader(_caller()) if hosted is not None else store  # type: ignore[return-value]

    def call(function, *args, **kwargs):
        try:
            return function(target(), *args, **kwargs)
        except Exception as exc:     # one line for the agent, as the command line says it
            raise ToolError(tool_error(exc)) from None

    @server.tool(check=tools.check_remember)
    def remember(
            content: Annotated[str, Field(description="The memory: one fact, preference, "
                                                      "decision or event, in plain words.")],
            created_at: Annotated[str | float | None, Field(description=(
                "When it happened or was said: ISO 8601 text (2024-05-08T14:00:00+02:00; "
                "give the offset, a time without one is UTC) or epoch seconds; default "
                "now."))] = None,
            role: Annotated[str | None, Field(description="Who said it: user, assistant, "
                                                          "tool ...")] = None,
            scope: Annotated[str | None, Field(description=(
                "The agent or project it belongs to; recall with the same scope sees it, "
                "another scope does not. Default: every scope sees it."))] = None,
            metadata: Annotated[dict[str, Any] | None,
                                Field(description="Any JSON object kept with it.")] = None,
            id: Annotated[str | None, Field(description=(
                "A stable id; sending the same id with the same memory again adds nothing, "
                "with another memory is refused. Default: derived from content, time, scope, "
                "role and type."))] = None,
            type: Annotated[str | None, Field(description=(
                "What kind of memory: fact, preference, event ... (free text)."))] = None
    ) -> dict:
        """Remember one memory. It is searchable at once and folded into the scenes in the
        background. Returns its id, whether it was new (when not, `same_as` and `note` say
        which memory it is), and how many memories wait to be folded."""
        if hosted is not None:
            try:
                return tools.remember_hosted(hosted, _caller(), content, created_at, role,
                                             scope, metadata, id, type)
            except Exception as exc:
                raise ToolError(tool_error(exc)) from None
        with writing:
            result = call(tools.remember, content, created_at, role, scope, metadata, id, type)
        if result.get("queued") and joiner is not None:
            joiner.wake()
        if worker is not None:
            worker.added()
        return result

    @server.tool(check=tools.check_recall)
    def recall(
            query: Annotated[str, Field(description="The question or topic, in any "
                                                    "language.")],
            budget: Annotated[int, Field(description="Characters at most (100-10000000).")
                              ] = 4000,
            scope: Annotated[str | None, Field(description=(
                "Only memories of this scope (and unscoped ones); scenes and persona, which "
                "mix every scope, are left out."))] = None,
            persona: Annotated[bool, Field(description=(
                "Ask for the persona: when it does not fit the budget, `warning` says so "
                "and with what budget it would."))] = False) -> dict:
        """What to put in context to answer QUERY: persona, a map of the scenes and the best
        passages (scene sentences and memories, with readable dates), never over budget.
        `text` is ready to use; `passages` give each one's source (scene, memory id);
        `empty` is true, and `note` says so, when nothing in memory answers QUERY."""
        return call(tools.recall, query, budget, scope, persona)

    @server.tool(check=tools.check_search)
    def search(
            query: Annotated[str, Field(description="Words to look for.")],
            k: Annotated[int, Field(description="Hits at most (1-10000).")] = 10,
            memories: Annotated[bool, Field(description=(
                "Search the memory journal instead of the scenes."))] = False,
            scope: Annotated[str | None, Field(description=(
                "Only memories of this scope and unscoped ones (implies memories)."))] = None
    ) -> dict:
        """Full-text search (BM25) over the scenes, or over the memories: `{"hits": [...]}`,
        best first; `warning` names a journal line that could not be searched."""
        return call(tools.search, query, k, memories, scope)

    @server.tool()
    def list_scenes() -> dict:
        """Every scene with heat, last update and summary, hottest first: `{"scenes":
        [...]}`, with `"warning"` naming a scene whose header cannot be read."""
        return call(tools.list_scenes)

    @server.tool(check=tools.check_read_scene)
    def read_scene(name: Annotated[str, Field(description="Scene name, with or without "
                                                          ".md (see list_scenes).")]) -> str:
        """One scene file as it is on disk: YAML header and Markdown narrative."""
        return call(tools.read_scene, name)

    @server.tool()
    def status() -> dict:
        """Memories pending and in all, scenes, batches, whether a persona exists (served
        for many stores: also `inbox`, the memories waiting for a worker)."""
        if hosted is not None:
            try:
                return hosted.status(_caller())
            except Exception as exc:
                raise ToolError(tool_error(exc)) from None
        return call(tools.status)

    @server.tool(check=tools.check_log)
    def log(limit: Annotated[int, Field(description="Entries at most (1-1000).")] = 20
            ) -> dict:
        """The history, newest first: batches (what each folded), hand edits, undos:
        `{"entries": [...]}`."""
        return {"entries": call(tools.log, limit)}

    if folds is not None and hosted is None:
        from scene_engine.mcpserver import fold_tools

        fold_tools.register(server, folds, tool_error)

    if allow_undo and hosted is None:
        @server.tool(check=tools.check_undo)
        def undo(batch: Annotated[int | str | None, Field(description=(
                    "Batch number (3) or commit sha; default the newest batch not yet "
                    "undone."))] = None,
                 forget: Annotated[bool, Field(description=(
                     "Never fold the batch's memories again."))] = False,
                 redo: Annotated[bool, Field(description=(
                     "Redo a batch that was undone instead."))] = False) -> dict:
            """Revert one batch with a new commit; its memories become pending again. A batch
            undone already is refused (a retried call never redoes it): redo=true redoes."""
            with writing:
                return call(tools.undo, None if batch is None else str(batch), forget, redo)

    @server.resource("scene://{name}", mime_type="text/markdown",
                     description="A scene file: YAML header and Markdown narrative.")
    def scene(name: str) -> str:
        try:
            return tools.read_scene(target(), name)
        except SceneEngineError as exc:     # said to the client, no traceback here
            raise ResourceError(str(exc).splitlines()[0]) from None

    return server


def tool_error(exc: BaseException) -> str:
    """What an agent reads for a tool that failed: bad arguments (``InputError``) as the
    command line says them, every problem; else one line: the engine's own message
    (``SceneEngineError``: a busy store, a refused undo, git's reason), a
    library's failure as ``services.faults.describe`` says it, else the exception's kind and
    its first line (a bug: the server goes on)."""
    from scene_engine.services.faults import describe

    if isinstance(exc, InputError):     # every problem of the arguments, as the CLI says them
        return str(exc)
    if isinstance(exc, SceneEngineError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    said = describe(exc) or f"{type(exc).__name__}: {plain_error(exc)}"
    return said.splitlines()[0]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scene-engine")
    except PackageNotFoundError:      # run from a source tree that was never installed
        return "0+unknown"


@functools.cache
def scene_server_class():
    """``SceneServer``: the SDK's ``MCPServer`` whose tools check their arguments as the
    command line checks its input (made on first use: `scenes watch` imports this module and
    should not pay for the SDK)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    class SceneServer(MCPServer):
        """``MCPServer`` with ``tool(check=...)``: each tool registered so refuses arguments
        it does not take (by name), runs ``check(arguments)`` (raising
        ``tools.ToolInputError``) before the SDK's type checks, and says what those refuse
        in one plain line (``config.plain_problems``: no pydantic help URL)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._takes: dict[str, tuple[str, ...]] = {}
            self._checks: dict[str, Callable[[dict], None]] = {}

        def tool(self, *args, check: Callable[[dict], None] | None = None, **kwargs):
            """The SDK's ``tool()`` decorator, noting the tool's parameters and ``check``."""
            register = super().tool(*args, **kwargs)

            def checked(fn):
                from mcp.server.mcpserver.utilities.context_injection import (
                    find_context_parameter,
                )

                name = kwargs.get("name") or fn.__name__      # as the SDK names the tool
                context = find_context_parameter(fn)          # the SDK's, not an argument
                self._takes[name] = tuple(p for p in inspect.signature(fn).parameters
                                          if p != context)
                if check is not None:
                    self._checks[name] = check
                return register(fn)
            return checked

        async def call_tool(self, name, arguments, context=None):
            """The SDK's ``call_tool`` once the names and the tool's ``check`` pass; raises
            the SDK's ``ToolError`` (the agent reads its one-line message)."""
            if name in self._takes:
                try:
                    _refuse_unknown(name, arguments, self._takes[name])
                    if name in self._checks:
                        self._checks[name](arguments)
                except InputError as exc:
                    raise ToolError(f"Error executing tool {name}: {exc}") from None
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    problems = plain_problems(exc.__cause__, arguments=True)
                    raise ToolError(f"Error executing tool {name}: {problems}") from None
                raise

    return SceneServer


def _refuse_unknown(name: str, arguments: dict, takes: tuple[str, ...]) -> None:
    """``tools.ToolInputError`` naming the arguments tool ``name`` does not take (the SDK
    would drop them silently: a misspelt `scope` would widen a recall to every scope)."""
    unknown = sorted(set(arguments) - set(takes))
    if unknown:
        raise tools.ToolInputError(
            f"unknown {'argument' if len(unknown) == 1 else 'arguments'} "
            f"{', '.join(unknown)}; allowed: "
            f"{', '.join(takes) if takes else 'none'}")


def _caller() -> str:
    """The store the current call's bearer token opened (``StoreTokens``)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    access = get_access_token()
    if access is None:        # the SDK's auth middleware lets no call through without one
        raise SceneEngineError("this call carries no bearer token")
    return access.client_id


class StoreTokens:
    """The SDK's ``TokenVerifier`` for hosted stores: the token is looked up (by its sha256,
    ``serving.database``) on every call; the ``AccessToken``'s ``client_id`` is the store."""

    def __init__(self, hosted: HostedStores):
        self._hosted = hosted

    async def verify_token(self, token: str):
        """An ``AccessToken`` naming the store ``token`` opens, else None (401)."""
        import anyio
        from mcp.server.auth.provider import AccessToken

        try:
            store = await anyio.to_thread.run_sync(self._hosted.store_of_token, token)
        except Exception as exc:     # Postgres away: a 503 (serving.http), not "bad token"
            log.warning("a token could not be checked: the database did not answer")
            raise UnavailableError(f"the token cannot be checked now: the database does not "
                                   f"answer ({plain_error(exc)}); try again") from None
        return AccessToken(token=token, client_id=store, scopes=[]) if store else None


def hosted_app(hosted: HostedStores, url: str):
    """The streamable-HTTP MCP app (at ``/mcp``) of ``build_server(hosted=...)``, a Starlette
    app other routes may be added to."""
    return build_server(hosted=hosted, url=url).streamable_http_app()


class BearerToken:
    """The SDK's ``TokenVerifier`` for one shared bearer token, compared in constant time."""

    def __init__(self, token: str):
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str):
        """An ``AccessToken`` for the right token, else None (the SDK then answers 401)."""
        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token=token, client_id="scene-engine-client", scopes=[])
        return None


def http_token(host: str) -> tuple[str | None, bool]:
    """The bearer token an HTTP server on ``host`` requires, and whether it was made now:
    ``$SCENE_ENGINE_MCP_TOKEN`` when set (on any address), else a new random one on an
    address other than ``LOCAL_HOSTS`` (to be shown once, never stored), else ``(None,
    False)``. Raises ``ConfigError`` for a variable that is not 16 or more printable
    characters without spaces."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        if not _TOKEN_FORM.fullmatch(given):
            raise ConfigError(f"{TOKEN_ENV} must be 16 to 1024 printable ASCII characters "
                              "without spaces (it is sent in an HTTP header)")
        return given, False
    if host in LOCAL_HOSTS:
        return None, False
    return secrets.token_urlsafe(32), True


def free_port(host: str) -> int:
    """A port free on ``host`` now (asked of the system, then let go) for ``--port 0``: the
    server binds it a moment later, and the address said at start is the one served. Raises
    ``SceneEngineError`` for an address this machine cannot serve."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, 0,
                                                             type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.bind(address)
            return probe.getsockname()[1]
    except OSError as exc:
        raise SceneEngineError(f"cannot serve at {host}: {exc.strerror or exc}") from None


def check_address(host: str, port: int) -> None:
    """Bind ``host``:``port`` as the HTTP server will (IPv6 sockets v6-only, the address
    reusable) and let it go, so a port in use or an address this machine cannot serve is one
    line before anything is said to be served. Raises ``SceneEngineError``."""
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM):
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind(address)
    except OSError as exc:
        raise SceneEngineError(f"cannot serve at {http_url(host, port)}: "
                               f"{exc.strerror or exc}") from None


def http_url(host: str, port: int) -> str:
    """``http://HOST:PORT`` (an IPv6 address in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(store: Store, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765,
          allow_undo: bool = False, fold: bool = True, backend=None,
          token: str | None = None, fold_tools: bool = False,
          fold_lease: float | None = None) -> None:
    """Serve ``store`` until the client goes away (stdio) or Ctrl-C (HTTP). ``fold``: run a
    ``FoldWorker`` with ``backend`` (a callable giving the backend; default the store's
    configured one). An ``InboxJoiner`` runs always. ``token``: the bearer token HTTP requests
    must carry (``http_token``); required on an address other than ``LOCAL_HOSTS``, else
    ``ValueError``. ``fold_tools``: offer the fold tools (the host's model folds; no
    background folding then), each batch waiting ``fold_lease`` seconds for its next call
    (default ``host_fold.LEASE``). Blocks."""
    if http and token is None and host not in LOCAL_HOSTS:
        raise ValueError(f"serving {host} needs a bearer token: this store would be open to "
                         "anyone who reaches it")
    worker = None
    joiner = InboxJoiner(store)
    joiner.start()
    folds = HostFolds(store, **({} if fold_lease is None else {"lease": fold_lease})) \
        if fold_tools else None
    if fold and not fold_tools:     # the host's model folds: nothing else may take the batch
        worker = FoldWorker(store, backend or store_backend(store),
                            on_event=lambda text: log.warning("%s", text))
        worker.start()
    server = build_server(store, allow_undo=allow_undo, worker=worker, joiner=joiner,
                          token=token, url=http_url(host, port), folds=folds)
    try:
        if http:
            from scene_engine.core.weblog import hide_query_strings

            hide_query_strings()    # the SDK's uvicorn logs each request's URL at INFO
            try:
                server.run("streamable-http", host=host, port=port)
            except SystemExit as exc:    # uvicorn's own "could not start" (exit 3)
                if exc.code in (0, None):
                    raise
                raise SceneEngineError(f"could not serve at {http_url(host, port)} (the line "
                                       "above says why)") from None
        else:
            _exit_with_parent(worker, joiner)
            server.run("stdio")
    finally:
        joiner.stop()
        if worker is not None:
            worker.stop()


def _exit_with_parent(worker: FoldWorker | None, joiner: InboxJoiner | None = None,
                      every: float = 1.0) -> None:
    """A stdio server lives for its client: when the process that started it dies while
    something else still holds the pipe open, stdin never closes, so watch the parent and
    leave (after the batch or join in progress) when it is gone."""
    parent = interrupts.STARTED_BY

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        log.warning("the client that started this server is gone; stopping")
        if joiner is not None:
            joiner.stop()
        if worker is not None:
            worker.stop()
        os._exit(0)         # the SDK's reader is blocked on stdin: nothing else would end it

    threading.Thread(target=watch, name="scene-engine-parent", daemon=True).start()
