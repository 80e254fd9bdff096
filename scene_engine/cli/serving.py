"""``scenes provision``, ``serve``, ``worker`` and ``queue``: many stores past one machine
(docs/DESIGN.md "Serving many stores"). Each reads its options, calls one service of
``scene_engine.serving``, prints. A single-machine user never needs them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from scene_engine.cli.base import app, echo_json, fail, handled

DATABASE_ENV = "SCENE_ENGINE_DATABASE"
GIT_ENV = "SCENE_ENGINE_GIT"

Database = Annotated[str, typer.Option(
    "--database", metavar="URL", envvar=DATABASE_ENV,
    help=f"Postgres address, postgresql://USER@HOST:PORT/DB (or ${DATABASE_ENV}).")]
Git = Annotated[str, typer.Option(
    "--git", metavar="URL", envvar=GIT_ENV,
    help=f"The git server's base address: git://HOST:PORT/, ssh://... or a folder (or "
         f"${GIT_ENV}); store NAME is NAME.git under it.")]
Json = Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")]


def _serving() -> None:
    """Refuse (exit 1) with what to install when the serving extra is missing."""
    import importlib.util

    if any(importlib.util.find_spec(name) is None
           for name in ("procrastinate", "psycopg", "psycopg_pool")):
        fail('serving many stores needs its extra: pip install "scene-engine[server]"', 1)


def _need(value: str, option: str, env: str) -> str:
    if not value.strip():
        fail(f"{option} is required (or set ${env})", 2)
    if option == "--database":
        from scene_engine.serving.database import check_url

        return check_url(value)       # InputError: exit 2 with the address's form
    return value


def _logging() -> None:
    """Warnings and errors on stderr, each one line: a library's traceback (procrastinate's
    when Postgres goes away) is cut to its exception's first line."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="scene-engine: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_one_line)


def _one_line(record) -> bool:
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        said = [line for line in str(exc).splitlines() if line.strip()]
        record.msg = f"{record.getMessage()}: {type(exc).__name__}" + (
            f": {said[0].strip()}" if said else "")
        record.args = None
        record.exc_info = record.exc_text = None
    return True


@app.command()
@handled
def provision(name: Annotated[str, typer.Argument(metavar="NAME", help="The store's name.")],
              repos: Annotated[Path | None, typer.Option(
                  "--repos", metavar="DIR",
                  help="The git server's base folder, where NAME.git is made.")] = None,
              new_token: Annotated[bool, typer.Option(
                  "--new-token", help="Give the registered store NAME a new token (the old "
                                      "one stops working).")] = False,
              database: Database = "", git: Git = "", json: Json = False) -> None:
    """Make a store on the git server and register it; prints its token once."""
    _serving()
    from scene_engine.serving.admin import new_token as renew
    from scene_engine.serving.admin import provision as make

    url = _need(database, "--database", DATABASE_ENV)
    if new_token:
        if repos is not None:
            fail("--new-token changes only the token: leave --repos out", 2)
        made = renew(url, name)
    elif repos is None:
        fail("--repos DIR is required: the git server's base folder, where NAME.git is made",
             2)
    else:
        made = make(url, _need(git, "--git", GIT_ENV), repos, name)
    if json:
        echo_json(made)
        return
    if not new_token:
        typer.echo(f"store {made['store']} at {made['url']} (commit {made['commit'][:12]})")
    typer.echo(f"token: {made['token']}")
    typer.echo("(shown this once; clients send `Authorization: Bearer <token>`)", err=True)


@app.command()
@handled
def serve(database: Database = "", git: Git = "",
          host: Annotated[str, typer.Option(metavar="ADDRESS", help="Address to listen on.")
                          ] = "127.0.0.1",
          port: Annotated[int, typer.Option(min=1, max=65535, metavar="PORT",
                                            help="Port to listen on.")] = 8765,
          cache: Annotated[Path | None, typer.Option(
              metavar="DIR", help="Folder of the readers' clones (default: a folder under "
                                  "~/.cache/scene-engine).")] = None) -> None:
    """Serve many stores over HTTP and MCP (/mcp): remember, recall, search, status, a
    token per store."""
    _serving()
    from scene_engine.mcpserver.server import hosted_app, http_url
    from scene_engine.serving.front import Front
    from scene_engine.serving.http import serve as run
    from scene_engine.serving.jobs import migrate

    _logging()
    url = _need(database, "--database", DATABASE_ENV)
    migrate(url)
    front = Front(url, _need(git, "--git", GIT_ENV), cache or _cache("readers"))
    url_base = http_url(host, port)
    typer.echo(f"serving stores at {url_base}/v1/stores/NAME/ and MCP at {url_base}/mcp "
               "(a store's token in `Authorization: Bearer`; Ctrl-C to stop)", err=True)
    try:
        run(front, host, port, base=hosted_app(front, url_base))
    finally:
        front.close()


@app.command()
@handled
def worker(database: Database = "", git: Git = "",
           cache: Annotated[Path | None, typer.Option(
               metavar="DIR", help="Folder of the worker's clones (default: a folder under "
                                   "~/.cache/scene-engine).")] = None,
           batches: Annotated[int, typer.Option(
               "--batches", min=1, max=1000, metavar="N",
               help="Batches a job runs before it hands the store on.")] = 5,
           fold_idle: Annotated[float, typer.Option(
               "--fold-idle", min=1.0, max=604_800.0, metavar="SECONDS",
               help="Fold a store whose inbox waited this long.")] = 300.0,
           stalled_after: Annotated[float, typer.Option(
               "--stalled-after", min=2.0, max=86_400.0, metavar="SECONDS",
               help="Retry the job of a worker silent this long (killed or stopped).")
                           ] = 15.0,
           name: Annotated[str | None, typer.Option(metavar="NAME",
                                                    help="The worker's name in the logs.")
                           ] = None,
           once: Annotated[bool, typer.Option(
               "--once", help="Stop when the queue is empty.")] = False) -> None:
    """Fold stores from the queue: fetch, fold, push without force, until Ctrl-C."""
    _serving()
    from scene_engine.serving.admin import run_worker
    from scene_engine.serving.fold import WorkerSettings

    _logging()
    settings = WorkerSettings(_need(database, "--database", DATABASE_ENV),
                              _need(git, "--git", GIT_ENV), cache or _cache(f"worker-{os.getpid()}"),
                              batches_per_job=batches)
    from scene_engine.serving.database import shown

    typer.echo(f"worker {name or os.getpid()}: folding stores of {shown(settings.database)} "
               f"from {settings.git}" + (" until the queue is empty" if once
                                         else " (Ctrl-C to stop)"), err=True)
    run_worker(settings, name=name, fold_idle=fold_idle, once=once, stalled_after=stalled_after)


@app.command()
@handled
def queue(database: Database = "",
          retry: Annotated[bool, typer.Option(
              "--retry", help="Queue the failed jobs again (of --store, else of every store).")
                           ] = False,
          fold: Annotated[bool, typer.Option(
              "--fold", help="Queue --store's fold job now (after a push by hand).")] = False,
          store: Annotated[str | None, typer.Option(
              metavar="NAME", help="The store (with --retry or --fold).")] = None,
          json: Json = False) -> None:
    """Per store: memories waiting, oldest age, jobs waiting, running, failed, pushes."""
    _serving()
    from scene_engine.cli.base import only_with
    from scene_engine.serving.admin import fold_now, retry_failed
    from scene_engine.serving.admin import queue as rows

    only_with("--retry or --fold", retry or fold, "store")
    if retry and fold:
        fail("--retry and --fold are two things: give one", 2)
    url = _need(database, "--database", DATABASE_ENV)
    if fold:
        if store is None:
            fail("--fold needs --store NAME", 2)
        queued = fold_now(url, store)
        if json:
            echo_json({"queued": queued})
        else:
            typer.echo(f"{store}: fold job queued" if queued
                       else f"{store}: a fold job already waits")
        return
    if retry:
        queued = retry_failed(url, store)
        if json:
            echo_json({"queued": queued})
        elif queued:
            typer.echo(f"{queued} store(s) with failed jobs: a fold job waits for each now")
        else:
            typer.echo("no failed job" + (f" of {store}" if store else "")
                       + " (scenes queue shows each store's jobs)")
        return
    found = rows(url)
    if json:
        echo_json({"stores": found})
        return
    _print_queue(found)


def _print_queue(found: list[dict]) -> None:
    if not found:
        typer.echo("no store is registered (scenes provision NAME)")
        return
    heads = ("store", "inbox", "oldest", "waiting", "running", "failed", "tries", "pushes",
             "refused")
    table = [heads] + [(r["store"], str(r["inbox"]),
                        "-" if r["oldest_seconds"] is None else f"{r['oldest_seconds']:g}s",
                        str(r["waiting"]), str(r["running"]), str(r["failed"]),
                        str(r["attempts"]), str(r["pushes"] or 0),
                        str(r["rejected_pushes"] or 0)) for r in found]
    widths = [max(len(row[i]) for row in table) for i in range(len(heads))]
    for row in table:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _cache(what: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "scene-engine" / what
