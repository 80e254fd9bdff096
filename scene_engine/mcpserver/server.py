"""The MCP server: one store's tools and scenes for agents, through the official MCP SDK.

``build_server`` registers the tools of ``tools`` (each a thin wrapper: the SDK derives the
JSON schema from the signature and the description from the docstring) and the scenes as
resources (``scene://{name}``). ``serve`` runs it over stdio (desktop and coding agents start
it as a child process) or streamable HTTP (bound to 127.0.0.1 unless told otherwise), with a
``folding.FoldWorker`` folding remembered memories in the background.

Tool calls run in the SDK's worker threads; a ``threading.Lock`` lets one write (remember,
undo) run at a time in this process, and the store lock keeps out other processes (a `scenes
run` in a terminal) exactly as between two commands.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Annotated, Any

from pydantic import Field

from ..folding import FoldWorker
from ..store import Store
from . import tools

INSTRUCTIONS = (
    "Long-term memory kept as readable Markdown scenes in git. Call `remember` with one fact, "
    "preference, decision or event at a time (in the user's own words, with created_at when "
    "known); call `recall` with the question before answering from memory: it returns the "
    "persona, a map of the scenes and the best passages, each with its source. Memories are "
    "folded into scenes in the background.")

log = logging.getLogger(__name__)


def build_server(store: Store, *, allow_undo: bool = False, worker: FoldWorker | None = None):
    """An ``mcp.server.mcpserver.MCPServer`` for ``store``. ``allow_undo``: also offer the
    ``undo`` tool. ``worker``: told of each remembered memory (folds sooner)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    server = MCPServer("scene-engine", instructions=INSTRUCTIONS, version=_version())
    writing = threading.Lock()

    def call(function, *args, **kwargs):
        try:
            return function(store, *args, **kwargs)
        except tools.ToolInputError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:     # the engine's own errors: one line for the agent
            raise ToolError(f"{type(exc).__name__}: {exc}".splitlines()[0]) from None

    @server.tool()
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
                "A stable id; sending the same id again adds nothing. Default: derived from "
                "content and time."))] = None) -> dict:
        """Remember one memory. It is searchable at once and folded into the scenes in the
        background. Returns its id, whether it was new, and how many memories wait to be
        folded."""
        with writing:
            result = call(tools.remember, content, created_at, role, scope, metadata, id)
        if worker is not None:
            worker.added()
        return result

    @server.tool()
    def recall(
            query: Annotated[str, Field(description="The question or topic, in any "
                                                    "language.")],
            budget: Annotated[int, Field(description="Characters at most (100-100000).")
                              ] = 4000,
            scope: Annotated[str | None, Field(description=(
                "Only memories of this scope (and unscoped ones); scenes and persona, which "
                "mix every scope, are left out."))] = None) -> dict:
        """What to put in context to answer QUERY: persona, a map of the scenes and the best
        passages (scene sentences and memories, with readable dates), never over budget.
        `text` is ready to use; `passages` give each one's source (scene, memory id)."""
        return call(tools.recall, query, budget, scope)

    @server.tool()
    def search(
            query: Annotated[str, Field(description="Words to look for.")],
            k: Annotated[int, Field(description="Hits at most (1-100).")] = 10,
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
        [...]}`."""
        return {"scenes": call(tools.list_scenes)}

    @server.tool()
    def read_scene(name: Annotated[str, Field(description="Scene name, with or without "
                                                          ".md (see list_scenes).")]) -> str:
        """One scene file as it is on disk: YAML header and Markdown narrative."""
        return call(tools.read_scene, name)

    @server.tool()
    def status() -> dict:
        """Memories pending and in all, scenes, batches, whether a persona exists."""
        return call(tools.status)

    @server.tool()
    def log(limit: Annotated[int, Field(description="Entries at most (1-1000).")] = 20
            ) -> dict:
        """The history, newest first: batches (what each folded), hand edits, undos:
        `{"entries": [...]}`."""
        return {"entries": call(tools.log, limit)}

    if allow_undo:
        @server.tool()
        def undo(batch: Annotated[int | str | None, Field(description=(
                    "Batch number (3) or commit sha; default the newest batch not yet "
                    "undone."))] = None,
                 forget: Annotated[bool, Field(description=(
                     "Never fold the batch's memories again."))] = False) -> dict:
            """Revert one batch with a new commit; its memories become pending again."""
            with writing:
                return call(tools.undo, None if batch is None else str(batch), forget)

    @server.resource("scene://{name}", mime_type="text/markdown",
                     description="A scene file: YAML header and Markdown narrative.")
    def scene(name: str) -> str:
        try:
            return tools.read_scene(store, name)
        except tools.ToolInputError as exc:     # said to the client, no traceback here
            raise ResourceError(str(exc)) from None

    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scene-engine")
    except PackageNotFoundError:      # run from a source tree that was never installed
        return "0+unknown"


def serve(store: Store, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765,
          allow_undo: bool = False, fold: bool = True, backend=None) -> None:
    """Serve ``store`` until the client goes away (stdio) or Ctrl-C (HTTP). ``fold``: run a
    ``FoldWorker`` with ``backend`` (a callable giving the backend; default the store's
    configured one). Blocks."""
    worker = None
    if fold:
        worker = FoldWorker(store, backend or configured_backend(store),
                            on_event=lambda text: log.warning("%s", text))
        worker.start()
    server = build_server(store, allow_undo=allow_undo, worker=worker)
    try:
        if http:
            server.run("streamable-http", host=host, port=port)
        else:
            _exit_with_parent(worker)
            server.run("stdio")
    finally:
        if worker is not None:
            worker.stop()


def _exit_with_parent(worker: FoldWorker | None, every: float = 1.0) -> None:
    """A stdio server lives for its client: when the process that started it dies while
    something else still holds the pipe open, stdin never closes, so watch the parent and
    leave (after the batch in progress) when it is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        log.warning("the client that started this server is gone; stopping")
        if worker is not None:
            worker.stop()
        os._exit(0)         # the SDK's reader is blocked on stdin: nothing else would end it

    threading.Thread(target=watch, name="scene-engine-parent", daemon=True).start()


def configured_backend(store: Store):
    """A callable giving the store's configured backend (``engine.configured_backend``: model,
    api_base, limits from ``config.toml``), made afresh at each call so an edited config is
    honoured."""
    def make():
        from ..engine import configured_backend as from_config

        return from_config(store.config)
    return make
