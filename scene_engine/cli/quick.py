"""`scenes search` and `scenes recall` printed, and a quick door to them.

Agents call these two all day, each time as a new process. Typer builds its whole command
tree before it runs any command (0.15-0.3 s, more than the search itself), so the console
script (``entry.main``) first offers the arguments to ``run``: it accepts exactly the forms
these two commands document (``[--dir D] search QUERY [-k N] [--json] [--memories]``,
``[--dir D] recall QUERY [--budget N] [--json]``) and returns None for anything else (help,
a bad value, another command), which then goes to the full command line, errors included.
The Typer commands print with the same ``search`` and ``recall`` below, and both call the
same services (``services.search``, ``services.recall``), so both doors answer alike.
``scenes hook EVENT`` has a door of its own, lighter still (``hookdoor``).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

from scene_engine.services.recall import MAX_BUDGET, MIN_BUDGET, RECALL_BUDGET
from scene_engine.services.search import MAX_HITS, MIN_HITS, SEARCH_K


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a person as one ``warning:`` line on stderr, not a source location."""
    print(f"warning: {message}", file=sys.stderr)


def echo_json(data) -> None:
    """One JSON document on stdout (UTF-8 text as it is, two-space indent)."""
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


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
        print(f"warning: {said}", file=sys.stderr)
    if as_json:
        echo_json(result.as_json())
        return
    if result.heading:
        print(result.heading)
    for hit in result.hits:
        if result.kind == "memory":
            print(f"{hit.id} ({hit.created_at[:10]}): {' '.join(hit.content.split())}")
        else:
            print(f"{hit.name} (heat {hit.heat}): {hit.summary}\n    {hit.snippet}")


def recall(directory: Path | None, query: str, budget: int = RECALL_BUDGET,
           as_json: bool = False, scope: str | None = None, persona: bool = False) -> None:
    """Print what an agent would put in its context for ``query`` (``services.recall``, for
    one ``scope`` if given; ``persona``: asked for), or ``--json``; its warning and, when no
    passage answers, its note on stderr. Raises as the service."""
    from scene_engine.services.recall import recall as build

    result = build(directory, query, budget=budget, scope=scope,   # rolls back a dead batch
                   persona=persona)
    if result.warning:
        print(f"warning: {result.warning}", file=sys.stderr)
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    if as_json:
        echo_json(result.to_json())
    else:
        sys.stdout.write(result.text)


def run(argv: list[str]) -> int | None:
    """Run ``argv`` (without the program name) if it is a plain search or recall; return
    its exit code, or None to leave it to the full command line. The engine's errors are one
    ``error:`` line (its exit code: 2 for bad usage, 1 otherwise), as on the full door."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    command, directory, query, number, as_json, memories = parsed
    from scene_engine.core.errors import SceneEngineError

    warnings.showwarning = show_warning
    try:
        if command == "search":
            search(directory, query, number, as_json, memories)
        else:
            recall(directory, query, number, as_json)
    except SceneEngineError as exc:
        return _error(str(exc), exc.exit_code)
    except BrokenPipeError:
        raise
    except OSError as exc:        # a disk problem: say which file, no traceback
        return _error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1)
    return 0


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _parse(argv: list[str]) -> tuple[str, Path | None, str, int, bool, bool] | None:
    """(command, --dir, QUERY, k or budget, --json, --memories) for the accepted forms,
    else None."""
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
