"""`scenes search`, `recall`, `status` and `list` printed, and a quick door to them.

Agents call these all day, each time as a new process. Typer builds its whole command tree
before it runs any command, and its option parsing loads pydantic (together 0.15-0.3 s, more
than the search itself), so the console script (``entry.main``) first offers the arguments
to ``run``: it accepts exactly the forms these commands document (``[--dir D] search QUERY
[-k N] [--json] [--memories]``, ``[--dir D] recall QUERY [--budget N] [--json]``, ``[--dir
D] status [--json]``, ``[--dir D] list [--json]``) and returns None for anything else (help,
a bad value, another command), which then goes to the full command line, errors included.
The Typer commands print with the same functions below, both call the same services, and
``handled`` says an error as ``cli.base.handled`` does (one ``error:`` line; with ``--json``
also one JSON document on stdout), so both doors answer alike. ``scenes hook EVENT`` has a
door of its own, lighter still (``hookdoor``).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from scene_engine.services.recall import MAX_BUDGET, MIN_BUDGET, RECALL_BUDGET
from scene_engine.services.search import MAX_HITS, MIN_HITS, SEARCH_K


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a person as one ``warning:`` line on stderr, not a source location."""
    _said("warning", str(message))


def _said(kind: str, message: str) -> None:
    """``kind: message`` on stderr, a control character in it (a file's name) written as
    an escape (``core.text.shown_text``)."""
    from scene_engine.core.text import shown_text

    print(f"{kind}: {shown_text(message)}", file=sys.stderr)


def echo_json(data) -> None:
    """One JSON document on stdout (UTF-8 text as it is, two-space indent; a byte that is
    not UTF-8 as ``\\xNN``), as ``cli.base.echo_json`` writes it."""
    from scene_engine.core.fs import escape_undecodable

    print(escape_undecodable(json.dumps(data, ensure_ascii=False, indent=2, default=str),
                             in_json=True))


def search(directory: Path | None, query: str, k: int = SEARCH_K, as_json: bool = False,
           memories: bool = False, scope: str | None = None) -> None:
    """Print what ``services.search.search`` finds: a line each with heat and summary and a
    snippet under it, or ``--json`` (a list of hits, each with ``fallback``); memories as
    id, date, text. The heading says when nothing held every word and when only common words
    were asked; each warning (a journal line it could not search, by file and line) goes to
    stderr, with or without ``--json``. Raises as the service."""
    from scene_engine.services.search import search as find

    result = find(directory, query, k, memories, scope)
    for said in result.warnings:       # stderr, so --json stays one document
        _said("warning", said)
    if as_json:
        echo_json(result.as_json())
        return
    from scene_engine.core.text import one_line  # a hit is its lines, whatever a name holds

    if result.heading:
        print(result.heading)
    for hit in result.hits:
        if result.kind == "memory":
            print(f"{hit.id} ({hit.created_at[:10]}): {' '.join(hit.content.split())}")
        else:
            print(f"{one_line(hit.name)} (heat {hit.heat}): {one_line(hit.summary)}\n"
                  f"    {one_line(hit.snippet)}")


def recall(directory: Path | None, query: str, budget: int = RECALL_BUDGET,
           as_json: bool = False, scope: str | None = None, persona: bool = False) -> None:
    """Print what an agent would put in its context for ``query`` (``services.recall``, for
    one ``scope`` if given; ``persona``: asked for), or ``--json``; its warning and, when no
    passage answers, its note on stderr. Raises as the service."""
    from scene_engine.services.recall import recall as build

    result = build(directory, query, budget=budget, scope=scope,   # rolls back a dead batch
                   persona=persona)
    if result.warning:
        _said("warning", result.warning)
    if result.note:
        _said("note", result.note)
    if as_json:
        echo_json(result.to_json())
    else:
        from scene_engine.core.text import shown_text

        sys.stdout.write(shown_text(result.text))


def status(directory: Path | None, as_json: bool = False) -> None:
    """Print ``services.status.status`` of the store (rolled back first if a batch was
    interrupted): ``key: value`` lines (None as ``none``), or ``--json``; each warning (a line
    that cannot be read: named, not counted) on stderr after them. Raises as the service."""
    from scene_engine.services.status import status as store_status

    data = store_status(read_store(directory))
    if as_json:
        echo_json(data)
        return
    for key, value in data.items():
        if key != "warnings":
            print(f"{key}: {'none' if value is None else value}")
    for warning in data["warnings"]:
        _said("warning", warning)


def list_scenes(directory: Path | None, as_json: bool = False) -> None:
    """Print the scenes' rows (``services.listing.scene_rows``), or ``--json``: whole values
    with a tab between, a line each as it is made, in a pipe or a file; on a terminal the
    table of ``cli.display.print_scene_rows`` (plain columns for more rows than a screen)."""
    from scene_engine.services.listing import scene_rows

    rows = scene_rows(read_store(directory))
    if as_json:
        echo_json(rows)
    elif _terminal():
        from scene_engine.cli.display import print_scene_rows

        print_scene_rows(rows)
    else:
        from scene_engine.services.listing import row_cells

        write = sys.stdout.write
        write("name\theat\tupdated\tsummary\n")
        for row in rows:
            write("\t".join(row_cells(row)) + "\n")


def _terminal() -> bool:
    """Whether Rich would draw for a terminal on stdout (``rich.console.Console.is_terminal``:
    ``TTY_COMPATIBLE``, then ``FORCE_COLOR``, then ``isatty``), without loading Rich."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    if os.environ.get("FORCE_COLOR") is not None:
        return os.environ["FORCE_COLOR"] != ""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def read_store(directory: Path | None):
    """The store ``directory`` names (else as ``open_store`` finds it), an interrupted batch
    rolled back first (or a warning that it could not be), as ``cli.base.read_cli_store``."""
    from scene_engine.store.recovery import ensure_recovered
    from scene_engine.store.store import open_store

    store = open_store(directory)
    ensure_recovered(store)
    return store


def run(argv: list[str]) -> int | None:
    """Run ``argv`` (without the program name) if it is one of the forms this door takes
    (module docstring); return its exit code, or None to leave it to the full command line.
    Errors as ``handled`` says them."""
    asked = _parse(argv)
    if asked is None:
        return None
    command, directory, query, number, as_json, memories = asked
    warnings.showwarning = show_warning
    warnings.simplefilter("always", UserWarning)    # as the full command line's options do
    if command == "search":
        return handled(lambda: search(directory, query, number, as_json, memories), as_json)
    if command == "recall":
        return handled(lambda: recall(directory, query, number, as_json), as_json)
    if command == "status":
        return handled(lambda: status(directory, as_json), as_json)
    return handled(lambda: list_scenes(directory, as_json), as_json)


def handled(call: Callable[[], None], as_json: bool) -> int:
    """Run ``call`` and return its exit code, saying an error as ``cli.base.handled`` says
    it: the engine's errors, the disk's, git's and a schema's as one ``error:`` line on
    stderr (with ``as_json`` after one JSON document ``{"error", "exit_code"}`` on stdout),
    a failure made by a signal as ``interrupted``. Ctrl-C, SIGTERM and a reader of stdout
    that went away go up to ``entry.main``; a bug goes up as itself."""
    from scene_engine.core.interrupts import exit_code, reset_received

    reset_received()
    try:
        call()
        return 0
    except BrokenPipeError as exc:
        if stdout_gone():
            raise                     # the reader went away (`| head`): entry ends quietly
        return _refuse(f"a pipe to a helper process broke: {exc}", 1, as_json)
    except Exception as exc:
        from scene_engine.services.faults import refusal

        said = refusal(exc)
        if said is None:
            raise                     # a bug goes up as itself
        message, code, interrupt = said
        if interrupt is not None:
            return _interrupted(exit_code(interrupt))   # a git child died of it first
        return _refuse(message, code, as_json)


def _refuse(message: str, code: int, as_json: bool) -> int:
    if as_json:
        echo_json({"error": message, "exit_code": code})
    _said("error", message)
    return code


def _interrupted(code: int) -> int:
    print("interrupted", file=sys.stderr)
    return code


def stdout_gone() -> bool:
    """True when stdout is a pipe whose reader has gone (``scenes log | head -1``): poll
    reports an error on such a pipe. A broken pipe elsewhere (a git helper process that
    died) is a failure to report, not a reader that had enough."""
    import select

    if sys.__stdout__ is None:   # started with no stdout at all
        return False
    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _parse(argv: list[str]) -> tuple[str, Path | None, str, int, bool, bool] | None:
    """(command, --dir, QUERY, k or budget, --json, --memories) for the accepted forms
    (QUERY "" and the number 0 for ``status`` and ``list``), else None."""
    args = list(argv)
    directory = None
    if args and args[0].startswith("--dir"):
        if args[0].startswith("--dir="):
            directory, args = args[0][len("--dir="):], args[1:]
        elif args[0] == "--dir" and len(args) > 1:
            directory, args = args[1], args[2:]
        else:
            return None
        if not directory:
            return None
    if args and args[0] in ("status", "list") and args[1:] in ([], ["--json"]):
        return args[0], Path(directory) if directory else None, "", 0, len(args) == 2, False
    if not args or args[0] not in ("search", "recall"):
        return None
    command, rest = args[0], args[1:]
    option = "-k" if command == "search" else "--budget"
    number = SEARCH_K if command == "search" else RECALL_BUDGET
    lowest, highest = (MIN_HITS, MAX_HITS) if command == "search" else (MIN_BUDGET, MAX_BUDGET)
    query, as_json, memories = None, False, False
    while rest:
        arg = rest.pop(0)
        if arg == "--json" and not as_json:
            as_json = True
        elif arg == "--memories" and command == "search" and not memories:
            memories = True
        elif arg == option and rest and rest[0].isdigit():
            number = int(rest.pop(0))
        elif arg.startswith(f"{option}=") and arg[len(option) + 1:].isdigit():
            number = int(arg[len(option) + 1:])
        elif query is None and not arg.startswith("-"):
            query = arg
        else:
            return None               # anything else: the full command line decides
    if query is None or not lowest <= number <= highest:
        return None
    return command, Path(directory) if directory else None, query, number, as_json, memories
