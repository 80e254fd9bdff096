"""``scenes init``, ``status``, ``doctor``, ``reindex``, ``repair``, ``watch``: the store
itself (docs/DESIGN.md "Command line"). Each reads its options, calls one service, prints.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from scene_engine.cli.base import (
    OPTIONS,
    JsonOpt,
    app,
    echo_json,
    fail,
    handled,
    open_cli_store,
)
from scene_engine.core.plural import count
from scene_engine.core.text import one_line, shown_text


@app.command()
@handled
def init(directory: Annotated[Path | None, typer.Argument(
        metavar="DIR",
        help="Folder for the store: new, empty or not (a notes folder, an Obsidian vault, a "
             "repository). Default: --dir, then $SCENE_ENGINE_DIR.")] = None,
         prefix: Annotated[str, typer.Option(
             "--prefix", metavar="FOLDER",
             help="Put the store's files in this subfolder (e.g. memory/) "
                  "instead of the folder's root.")] = "",
         own_repo: Annotated[bool, typer.Option(
             "--own-repo",
             help="A git repository of the store's own even inside another repository "
                  "(as `scenes demo` makes).")] = False) -> None:
    """Make a new store in a folder: scenes/, memories/, persona and settings, and a first
    commit of only those, in the git repository the folder is in (else a new one; always a
    new one with --own-repo). Says which repository its commits go to."""
    from scene_engine.store import history
    from scene_engine.store.store import init_store

    directory = directory or OPTIONS["dir"] or (
        Path(os.environ["SCENE_ENGINE_DIR"]) if os.environ.get("SCENE_ENGINE_DIR") else None)
    if directory is None:
        fail("say where: `scenes init DIR` (or `scenes --dir DIR init`, or set "
             "SCENE_ENGINE_DIR)", 2)
    store = init_store(directory, prefix=prefix, own_repo=own_repo)
    typer.echo(f"new scene store at {store.root}")
    with history.open_repo(store.root) as repo:
        top = history.work_tree(repo).resolve()
    if top != store.root.resolve():
        # Inside a repository of the person's: say so, since every batch commits there.
        typer.echo(f"its commits go to the git repository at {top} (only the store's paths, "
                   "beside yours); for a repository of its own: `scenes init --own-repo DIR`")


@app.command()
@handled
def status(as_json: JsonOpt = False) -> None:
    """Pending memories, scenes, batches."""
    from scene_engine.cli import quick

    quick.status(OPTIONS["dir"], as_json)   # printed as the quick door prints it


@app.command()
@handled
def doctor(as_json: JsonOpt = False) -> None:
    """Check every invariant of the store; exit 1 if any is broken."""
    from scene_engine.services.doctor import check_store

    problems = check_store(open_cli_store())
    if as_json:
        echo_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            typer.echo(f"problem: {one_line(problem)}")     # one line a problem
        typer.echo("doctor: ok" if not problems else f"doctor: {count(len(problems), 'problem')}")
    if problems:
        raise typer.Exit(1)


@app.command()
@handled
def reindex() -> None:
    """Rebuild the search index from the files."""
    from scene_engine.services.indexing import reindex as rebuild

    report = rebuild(open_cli_store())
    typer.echo(f"reindexed {count(len(report.added) + len(report.updated), 'scene')} and "
               f"{count(report.memories_added, 'memory')} in {report.seconds:.2f} s")
    for warning in report.warnings or []:
        typer.echo(f"warning: {shown_text(warning)}", err=True)


@app.command()
@handled
def repair(as_json: JsonOpt = False) -> None:
    """Number the memory journal anew after a git merge of two copies of the store.

    Every record is kept once; a memory a batch in effect folded keeps the number that batch
    gave it (by id, from its ledger), every other memory is pending. A batch that cannot keep
    its numbers (both copies folded) is released and its memories are pending again. One
    commit; `scenes undo` does not undo it, `git revert` does. Does nothing when the journal,
    the batches and state.json agree.
    """
    from scene_engine.services.repair import repair_store

    report = repair_store(open_cli_store())
    if as_json:
        echo_json(report)
    elif report["repaired"]:
        released = report["released_batches"]
        gave_up = (f"; {'batches' if len(released) > 1 else 'batch'} "
                   f"{', '.join(map(str, released))} released") if released else ""
        typer.echo(f"journal numbered anew: {count(report['memories'], 'memory')}, "
                   f"{report['pending_again']} pending ({report['problem']}{gave_up}); "
                   "`scenes run` folds them")
    else:
        typer.echo("the journal's numbering is whole; nothing to repair")


@app.command()
@handled
def watch(debounce: Annotated[float, typer.Option(
              metavar="SECONDS", help="Seconds to wait for quiet.")] = 0.2,
          fold: Annotated[bool, typer.Option(
              "--fold", help="Also fold pending memories in the background (fold_every / "
                             "fold_idle in config.toml).")] = False) -> None:
    """Keep the search index in step with the files until Ctrl-C."""
    from scene_engine.services.indexing import watch as keep_in_step

    store = open_cli_store()
    typer.echo(f"watching {store.root} (Ctrl-C to stop)", err=True)
    if fold:
        config = store.config
        typer.echo(f"folding when {count(config.fold_every, 'memory')} are pending or after "
                   f"{config.fold_idle:g} s without a new one", err=True)
    stats = keep_in_step(
        store, debounce=debounce, fold=fold,
        on_reindex=lambda names: typer.echo(f"reindexed: {', '.join(sorted(names))}", err=True),
        on_event=lambda text: typer.echo(text, err=True))
    typer.echo(f"stopped after {count(stats.reindex_runs, 'reindex run')}", err=True)
