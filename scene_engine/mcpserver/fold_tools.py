"""The fold tools: the host's own model folds a batch over MCP (docs/DESIGN.md "Host folding").

Thin faces over ``services.host_fold.HostFolds``: ``fold_begin``, the sandbox's three file
tools (``read_file``, ``write_to_file``, ``replace_in_file``, each with the batch's token),
``fold_commit`` and ``fold_abort``. A sandbox refusal or a rule the batch breaks is a tool
error (``isError``) with the sandbox's or the rules' own text, so the host's model repairs it
as a litellm model does. Registered only with ``scenes mcp --fold-tools``.

This module imports the SDK at the top (the tools take its ``Context`` to name the client that
holds a batch); ``server.build_server`` imports it only when the fold tools are on.
"""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from scene_engine.services.host_fold import FoldProblems, HostFolds

Batch = Annotated[str, Field(description="The batch token fold_begin gave.")]
Path = Annotated[str, Field(description="A scene file name ending in .md (no folders), "
                                        "e.g. 'running.md'.")]


def register(server, folds: HostFolds, error) -> None:
    """Add the fold tools to ``server`` (a ``SceneServer``); ``error(exc)`` is the one-line
    text of a failure (``server.tool_error``)."""

    def run(function, *args):
        try:
            return function(*args)
        except FoldProblems as exc:         # every problem, for the model to repair
            raise ToolError(str(exc)) from None
        except Exception as exc:
            raise ToolError(error(exc)) from None

    def tool_result(text: str) -> str:
        if text.startswith("Error:"):       # the sandbox refused: the model reads why
            raise ToolError(text)
        return text

    @server.tool()
    def fold_begin(ctx: Context) -> dict:
        """Start a batch that you fold yourself: takes the store for a lease and returns the
        next pending memories, the scene map, the rules (`instructions`, follow them) and a
        `batch` token for the file tools and fold_commit. `{"batch": null}` when nothing is
        pending. A store another agent is folding is refused with who holds it."""
        described = run(folds.begin, _client_name(ctx))
        if described is None:
            return {"batch": None, "note": "nothing is pending: every memory is folded"}
        return described

    @server.tool()
    def read_file(batch: Batch, path: Path) -> str:
        """The full text of a scene, with your staged changes. Read a scene before you change
        it."""
        return tool_result(run(folds.call, batch, "read_file", {"path": path}))

    @server.tool()
    def write_to_file(batch: Batch, path: Path, content: Annotated[str, Field(description=(
            "The complete new file text (YAML header and narrative), or [DELETED] to delete "
            "a scene merged into another."))]) -> str:
        """Create a scene or replace its whole text; staged until fold_commit."""
        return tool_result(run(folds.call, batch, "write_to_file",
                               {"path": path, "content": content}))

    @server.tool()
    def replace_in_file(batch: Batch, path: Path,
                        old: Annotated[str, Field(description=(
                            "The exact text to find, copied from the file; it must occur "
                            "once."))],
                        new: Annotated[str, Field(description="The text to put in its "
                                                              "place.")]) -> str:
        """Replace one exact piece of a scene's text; staged until fold_commit."""
        return tool_result(run(folds.call, batch, "replace_in_file",
                               {"path": path, "old": old, "new": new}))

    @server.tool()
    def fold_commit(batch: Batch, answer: Annotated[str, Field(description=(
            "Your final answer as the instructions ask: a short summary of what changed, a "
            "NO_CHANGE or SKIP line for each memory no scene takes, a persona request if "
            "one is due."))]) -> dict:
        """Check the batch against the scene rules and commit it: one git commit with its
        ledger. A rule it breaks comes back as an error listing each problem; the batch stays
        open, so fix and call fold_commit again."""
        return run(folds.commit, batch, answer)

    @server.tool()
    def fold_abort(batch: Batch) -> dict:
        """End the batch with nothing written; its memories stay pending."""
        return run(folds.abort, batch)


def _client_name(ctx: Context) -> str:
    """The MCP client's name and version as it introduced itself, else "an MCP client"."""
    try:
        info = ctx.session.client_params.client_info
        return f"{info.name} {info.version}".strip() if info.name else "an MCP client"
    except AttributeError:
        return "an MCP client"
