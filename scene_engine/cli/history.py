"""``scenes log``, ``undo``, ``blame`` and ``trace``: what happened, and taking a batch back
(docs/DESIGN.md "History"). Each reads its options, calls one service, prints.
"""

from __future__ import annotations

from typing import Annotated

import typer

from scene_engine.cli.base import (
    JsonOpt,
    app,
    echo_json,
    fail,
    handled,
    open_cli_store,
    read_cli_store,
)
from scene_engine.core.plural import count
from scene_engine.core.text import one_line


@app.command()
@handled
def log(as_json: JsonOpt = False,
        adds: Annotated[bool, typer.Option("--adds", help="Also list `add` commits.")] = False,
        transcript: Annotated[int | None, typer.Option(
            "--transcript", min=1, metavar="BATCH",
            help="Show the model exchange of one batch (committed or failed).")] = None
        ) -> None:
    """Batches newest first, with hand edits, undos and persona commits between them."""
    from scene_engine.services import history

    if transcript is not None:
        if adds:
            fail("--adds lists `add` commits in the batch list; --transcript shows one "
                 "batch's exchange instead: leave one of them out", 2)
        path, events = history.transcript(open_cli_store(), transcript)
        if as_json:
            echo_json(events)
        else:
            typer.echo(f"# {path}")
            typer.echo(history.render_transcript(events, transcript), nl=False)
        return
    entries = history.log(read_cli_store(), include_adds=adds)
    if as_json:
        echo_json(entries)
        return
    for e in entries:
        flag = " (undone)" if e.get("undone") else ""
        if e["kind"] == "hand edit" and not e["subject"].startswith("hand edit:"):
            flag = " (hand edit)"   # a person's own commit of scenes: theirs, not the engine's
        typer.echo(f"{e['commit'][:8]} {e['time'][:19]} {e['subject']}{flag}")
        if e["kind"] == "batch":
            typer.echo(f"    {e['summary']}\n    memories: {e['memories']}; "
                       f"model: {e['model']}; tokens: {e['tokens']}"
                       + ("; persona refreshed" if e.get("persona") else ""))


@app.command()
@handled
def undo(target: Annotated[str | None, typer.Argument(
            metavar="BATCH|COMMIT",
            help="Batch number or commit; default the newest batch not yet undone. "
                 "Naming an undone batch redoes it.")] = None,
         forget: Annotated[bool, typer.Option(
             "--forget", help="Never process the batch's memories again.")] = False,
         as_json: JsonOpt = False) -> None:
    """Revert one batch with a new commit; its memories become pending again."""
    from scene_engine.services.undo import undo_batch

    done = undo_batch(open_cli_store(), target, forget=forget)
    if as_json:
        echo_json(done)
        return
    what = f"batch {done['batch']}" if done["batch"] is not None else done["target"][:8]
    typer.echo(f"{done['action']} {what}: commit {done['commit'][:8]}; "
               f"{count(done['memories'], 'memory')} {done['fate']}")
    if done["persona_regenerated"]:
        typer.echo("persona: made anew in the same commit, for the scenes there are now")


@app.command()
@handled
def blame(name: Annotated[str, typer.Argument(metavar="NAME", help="Scene name.")],
          as_json: JsonOpt = False) -> None:
    """Each line of a scene with the batch (or hand edit) that last changed it and the
    memories behind that line."""
    from scene_engine.services.listing import find_scene
    from scene_engine.services.trace import blame_scene

    store = read_cli_store()
    rows = blame_scene(store, find_scene(store, name))
    if as_json:
        echo_json(rows)
        return
    width = min(40, max((len(_memory_cell(r["memories"])) for r in rows), default=0))
    for row in rows:
        who = (f"batch {row['batch']}" if row["kind"] == "batch"
               else row["kind"] + (f" {row['batch']}" if row["batch"] else ""))
        typer.echo(f"{row['line']:>4} {who:<14} {_memory_cell(row['memories']):<{width}} | "
                   f"{one_line(row['text'])}")


def _memory_cell(ids: list[str], width: int = 40) -> str:
    """``ids`` joined with ", " in at most ``width`` characters: as many whole ids as fit,
    then "+N" for the rest."""
    shown = ", ".join(ids)
    for keep in range(len(ids) - 1, 0, -1):
        if len(shown) <= width:
            break
        shown = ", ".join(ids[:keep]) + f" +{len(ids) - keep}"
    return shown


@app.command()
@handled
def trace(memory_id: Annotated[str, typer.Argument(
              metavar="ID", help="A memory id (or an alias).")],
          as_json: JsonOpt = False) -> None:
    """Where a memory went: the batch that took it, the scenes, the lines, later merges and
    undos."""
    from scene_engine.services.trace import render, trace_memory

    found = trace_memory(read_cli_store(), memory_id)
    if as_json:
        echo_json(found.to_json())
    else:
        typer.echo(render(found), nl=False)
