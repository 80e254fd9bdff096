"""``scenes hook EVENT``: the hooks a coding agent runs (``services.hooks``; the Claude Code
plugin in ``integrations/claude-code/``). The console script answers a hook through the quick
door (``cli.hookdoor``) without Typer's start-up; this command is the same for ``scenes
hook -h`` and for callers of the Typer app."""

from __future__ import annotations

from typing import Annotated

import typer

from scene_engine.cli.base import OPTIONS, app


@app.command()
def hook(event: Annotated[str, typer.Argument(
        metavar="EVENT",
        help="session-start (print the recall for the project as the hook's context), "
             "stop, session-end or pre-compact (take the session's new turns into the "
             "inbox and fold them in the background), fold (what those start).")]) -> None:
    """Run an agent's hook: the hook's JSON on stdin, its answer on stdout; always exit 0
    (a missing or busy store is one notice line on stderr)."""
    from scene_engine.cli.hookdoor import hook as run

    raise typer.Exit(run(OPTIONS["dir"], event))
