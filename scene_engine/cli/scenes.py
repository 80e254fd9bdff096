"""``scenes list``, ``show``, ``search``, ``recall`` and ``persona``: what is in the scenes
(docs/DESIGN.md "Command line"). Each reads its options, calls one service, prints.
"""

from __future__ import annotations

from typing import Annotated

import typer

from scene_engine.cli.base import (
    OPTIONS,
    ApiBaseOpt,
    BackendOpt,
    JsonOpt,
    ModelOpt,
    ScopeOpt,
    app,
    handled,
    only_with,
    open_cli_store,
    read_cli_store,
)
from scene_engine.services.recall import MAX_BUDGET, MIN_BUDGET, RECALL_BUDGET
from scene_engine.services.search import MAX_HITS, MIN_HITS, SEARCH_K


@app.command("list")
@handled
def list_scenes(as_json: JsonOpt = False) -> None:
    """Scenes with heat, last update and summary, hottest first."""
    from scene_engine.cli import quick

    quick.list_scenes(OPTIONS["dir"], as_json)   # printed as the quick door prints it


@app.command()
@handled
def show(name: Annotated[str, typer.Argument(
        metavar="NAME", help="Scene name (with or without .md).")]) -> None:
    """Print one scene file as it is on disk.

    A control character a terminal would obey (a carriage return, a bell, an escape
    sequence) is written as an escape."""
    from scene_engine.core.text import shown_text
    from scene_engine.services.listing import scene_text

    typer.echo(shown_text(scene_text(read_cli_store(), name)), nl=False)


@app.command()
@handled
def search(query: Annotated[str, typer.Argument(metavar="QUERY", help="The words to find.")],
           k: Annotated[int, typer.Option("-k", min=MIN_HITS, max=MAX_HITS, metavar="N",
                                          help="Hits.")] = SEARCH_K,
           as_json: JsonOpt = False,
           memories: Annotated[bool, typer.Option(
               "--memories", help="Search the memory journal instead of the scenes.")] = False,
           scope: ScopeOpt = None) -> None:
    """Full-text search over scene names, summaries and bodies (BM25, heat as tie-break).

    Every word must match; when no scene holds them all, scenes holding some are shown and
    the output says so. Stop words and question particles never decide a match."""
    from scene_engine.cli import quick

    quick.search(OPTIONS["dir"], query, k, as_json, memories, scope)


@app.command("recall")
@handled
def recall_cmd(query: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
               budget: Annotated[int, typer.Option("--budget", min=MIN_BUDGET, max=MAX_BUDGET,
                                                   metavar="CHARS",
                                                   help="Characters at most.")] = RECALL_BUDGET,
               as_json: JsonOpt = False, scope: ScopeOpt = None,
               persona: Annotated[bool, typer.Option(
                   "--persona", help="Ask for the persona: when it does not fit the budget, "
                                     "say so and with what budget it would.")] = False
               ) -> None:
    """What an agent would put in its context for QUERY: persona, scene map, best passages.

    When no passage answers QUERY, a `note:` line on stderr says so."""
    from scene_engine.cli import quick

    quick.recall(OPTIONS["dir"], query, budget, as_json, scope, persona)


@app.command()
@handled
def persona(force: Annotated[bool, typer.Option("--force", help="Regenerate now.")] = False,
            backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None
            ) -> None:
    """Show the persona, or regenerate it with --force."""
    from scene_engine.services import persona as portrait
    from scene_engine.services.backends import configured_backend

    only_with("--force", force, "backend", "model", "api_base")
    store = open_cli_store() if force else read_cli_store()
    if force:
        portrait.regenerate_now(store, configured_backend(store.config, backend, model,
                                                          api_base))
    typer.echo(portrait.read_persona(store), nl=False)
