"""``scenes mcp`` (the store served to agents), ``scenes ui`` (the page for people) and
``scenes demo`` (docs/DESIGN.md "Command
line"). Each reads its options, calls one service, prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from scene_engine.cli.base import app, handled, only_with, open_cli_store
from scene_engine.core.plural import count


@app.command()
@handled
def mcp(http: Annotated[bool, typer.Option(
            "--http", help="Serve streamable HTTP instead of stdio.")] = False,
        host: Annotated[str, typer.Option(
            metavar="ADDRESS",
            help="Address for --http. Any but 127.0.0.1, localhost or ::1 requires a bearer "
                 "token: $SCENE_ENGINE_MCP_TOKEN, else one made and printed now.")
        ] = "127.0.0.1",
        port: Annotated[int, typer.Option(
            min=0, max=65535, metavar="PORT", help="Port for --http (0: any free one).")] = 8765,
        allow_undo: Annotated[bool, typer.Option(
            "--allow-undo", help="Offer the undo tool too.")] = False,
        fold: Annotated[bool, typer.Option(
            "--fold/--no-fold", help="Fold remembered memories in the background.")] = True,
        fold_tools: Annotated[bool, typer.Option(
            "--fold-tools", help="Offer fold_begin, read_file, write_to_file, "
                                 "replace_in_file, fold_commit and fold_abort: the agent's "
                                 "own model folds the batches (no background folding then).")
        ] = False,
        fold_lease: Annotated[float, typer.Option(
            min=5.0, max=86400.0, metavar="SECONDS",
            help="With --fold-tools: seconds a batch waits for the agent's next call before "
                 "it is rolled back.")] = 600.0
        ) -> None:
    """Serve this store to agents over MCP (stdio by default): remember, recall, search,
    list_scenes, read_scene, status, log; scenes as scene://NAME resources."""
    import logging

    from scene_engine.mcpserver.server import (
        TOKEN_ENV,
        check_address,
        free_port,
        http_token,
        http_url,
        serve,
    )

    only_with("--http", http, "host", "port")
    only_with("--fold-tools", fold_tools, "fold_lease")
    store = open_cli_store()
    # stdout is the protocol's: everything said goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="scene-engine: %(message)s")
    token = None
    if http:
        token, made = http_token(host)
        port = port or free_port(host)      # named before serving, so the line below is true
        check_address(host, port)           # in use, or not an address of this machine: say so
        typer.echo(f"serving {store.root} at {http_url(host, port)}/mcp (Ctrl-C to stop)",
                   err=True)
        if made:     # shown this once, never stored: set $SCENE_ENGINE_MCP_TOKEN to keep one
            typer.echo(f"bearer token: {token}", err=True)
            typer.echo(f"(clients send the header `Authorization: Bearer <token>`; set "
                       f"{TOKEN_ENV} to choose the token)", err=True)
        elif token:
            typer.echo(f"requests must carry the bearer token in ${TOKEN_ENV}", err=True)
    serve(store, http=http, host=host, port=port, allow_undo=allow_undo, fold=fold,
          token=token, fold_tools=fold_tools, fold_lease=fold_lease)


@app.command()
@handled
def ui(port: Annotated[int, typer.Option(
           min=0, max=65535, metavar="PORT", help="Port on 127.0.0.1 (0: any free one).")
       ] = 8766) -> None:
    """Serve a page for people on 127.0.0.1: scenes, history with undo, where a memory
    went, and the review queue. The address printed carries a token; open it whole."""
    from scene_engine.web.server import serve as serve_page

    store = open_cli_store()

    def ready(address: str) -> None:
        typer.echo(f"the page of {store.root} is at (Ctrl-C to stop):\n{address}")
        sys.stdout.flush()

    serve_page(store.root, port, ready)


@app.command()
@handled
def demo(directory: Annotated[Path | None, typer.Argument(
        metavar="DIR", help="Folder for the demo store (default: ./scene-demo).")] = None
         ) -> None:
    """Make a demo store from ~60 sample memories with the offline backend and show it."""
    from scene_engine.cli.display import print_scene_rows
    from scene_engine.services.demo import DEMO_QUERIES, build_demo
    from scene_engine.services.listing import scene_rows, scene_text
    from scene_engine.services.recall import recall

    directory = directory or Path("scene-demo")
    typer.echo(f"making a demo store at {directory} ...", err=True)
    store, report, results = build_demo(directory)
    typer.echo(f"added {count(report.added, 'memory')} "
               f"({count(report.duplicates, 'repeated one')} collapsed); "
               f"{count(len(results), 'batch')}, one git commit each\n")
    rows = scene_rows(store)
    print_scene_rows(rows)
    typer.echo(f"\n=== scenes show {rows[0]['name']} ===")
    typer.echo(scene_text(store, rows[0]["name"]))
    for query in DEMO_QUERIES:
        typer.echo(f"=== scenes recall {query!r} --budget 1200 ===")
        typer.echo(recall(store, query, budget=1200).text)
    typer.echo(f"Try: cd {directory} && scenes log && scenes undo && scenes status")
