"""`scenes search` and `scenes recall`: their work, and a quick door to them.

Agents call these two all day, each time as a new process. Typer builds its whole command
tree before it runs any command (0.15-0.3 s, more than the search itself), so the console
script (``entry.main``) first offers the arguments to ``run``: it accepts exactly the forms
these two commands document (``[--dir D] search QUERY [-k N] [--json] [--memories]``,
``[--dir D] recall QUERY [--budget N] [--json]``) and returns None for anything else (help,
a bad value, another command), which then goes to the full command line, errors included.
The Typer commands call the same ``search`` and ``recall`` below, so both doors answer alike.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

SEARCH_K = 10            # hits by default (the Typer option says the same)
RECALL_BUDGET = 4000     # characters by default


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a person as one ``warning:`` line on stderr, not a source location."""
    print(f"warning: {message}", file=sys.stderr)


def echo_json(data) -> None:
    """One JSON document on stdout (UTF-8 text as it is, two-space indent)."""
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def search(directory: Path | None, query: str, k: int = SEARCH_K, as_json: bool = False,
           memories: bool = False, scope: str | None = None) -> None:
    """Print the best ``k`` scenes for ``query`` (see ``SceneIndex.search``): a line each
    with heat and summary and a snippet under it, or ``--json`` (a list of hits, each with
    ``fallback``); with ``memories`` (or a ``scope``: only its memories and unscoped ones)
    the best memories of the journal instead (id, date, text). Says when nothing held every
    word and when only common words were asked, and warns (on stderr, with or without
    ``--json``) of each journal line it could not search, by file and line.
    Raises ``StoreError`` (not a store, no readable index) and ``OSError``."""
    from scene_engine.index.scenes import read_index

    store = _read_store(directory)
    index, warning = read_index(store)
    try:
        memories = memories or scope is not None      # a scope is the journal's
        hits = index.search_memories(query, k=k, scope=scope) if memories \
            else index.search(query, k=k)
        unread = index.journal_warning() if memories else None   # a line it cannot search
    finally:
        index.close()
    for said in filter(None, (warning, unread)):      # stderr, so --json stays one document
        print(f"warning: {said}", file=sys.stderr)
    if memories:
        _print_memories(query, hits, as_json)
        return
    if as_json:
        echo_json([scene_hit_json(h) for h in hits])
        return
    _say_how_found(query, hits, "scene")
    for hit in hits:
        print(f"{hit.name} (heat {hit.heat}): {hit.summary}\n    {hit.snippet}")


def scene_hit_json(hit) -> dict:
    """A scene hit (``index.Hit``) as ``search --json`` (and the MCP ``search`` tool) gives it."""
    return {"name": hit.name, "summary": hit.summary, "heat": hit.heat,
            "snippet": hit.snippet, "score": hit.score, "fallback": hit.fallback}


def memory_hit_json(hit) -> dict:
    """A memory hit (``memory_index.MemoryHit``) as ``search --memories --json`` gives it."""
    return {"id": hit.id, "seq": hit.seq, "created_at": hit.created_at,
            "content": hit.content, "score": hit.score, "fallback": hit.fallback}


def _print_memories(query: str, hits, as_json: bool) -> None:
    if as_json:
        echo_json([memory_hit_json(h) for h in hits])
        return
    _say_how_found(query, hits, "memory")
    for hit in hits:
        print(f"{hit.id} ({hit.created_at[:10]}): {' '.join(hit.content.split())}")


def _say_how_found(query: str, hits: list, kind: str) -> None:
    """The line above the hits: none found (and why, when only common words were asked),
    or found by some of the words only (``kind``: "scene" or "memory")."""
    from scene_engine.index.analysis import only_stop_words, query_terms

    if not hits:
        print("no match: only common words in the query" if only_stop_words(query)
              else "no match")
    elif hits[0].fallback:
        words = ", ".join(t.text for t in query_terms(query))
        plural = "memories" if kind == "memory" else f"{kind}s"
        print(f"no {kind} holds all of: {words}; showing {plural} that hold some")


def recall(directory: Path | None, query: str, budget: int = RECALL_BUDGET,
           as_json: bool = False, scope: str | None = None) -> None:
    """Print what an agent would put in its context for ``query`` (``recall.recall``, for
    one ``scope`` if given), or ``--json``. Raises ``StoreError`` and ``OSError``."""
    from scene_engine.recall.assemble import recall as build
    from scene_engine.store.store import open_store

    result = build(open_store(directory), query, budget=budget,   # rolls back a dead batch
                   scope=scope)
    if result.warning:
        print(f"warning: {result.warning}", file=sys.stderr)
    if as_json:
        echo_json(result.to_json())
    else:
        sys.stdout.write(result.text)


def _read_store(directory: Path | None):
    # The paths only (``layout.locate``): settings and state are not needed to search.
    from scene_engine.store.layout import locate
    from scene_engine.store.recovery import ensure_recovered

    store = locate(directory)
    ensure_recovered(store)
    return store


def run(argv: list[str]) -> int | None:
    """Run ``argv`` (without the program name) if it is a plain search or recall; return
    its exit code, or None to leave it to the full command line. Errors the commands know
    are one ``error:`` line (exit 2 for bad usage, 1 otherwise), as on the full door."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    command, directory, query, number, as_json, memories = parsed
    if query_problem(query):
        return _error(query_problem(query), 2)
    from scene_engine.store.layout import StoreError

    warnings.showwarning = show_warning
    try:
        if command == "search":
            search(directory, query, number, as_json, memories)
        else:
            recall(directory, query, number, as_json)
    except StoreError as exc:
        return _error(str(exc), exc.exit_code)
    except ValueError as exc:     # bad settings (a recall reads them; a search does not)
        config = sys.modules.get(f"{__package__}.config")
        if config is None or not isinstance(exc, config.ConfigError):
            raise
        return _error(str(exc), 2)
    except BrokenPipeError:
        raise
    except OSError as exc:        # a disk problem: say which file, no traceback
        return _error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1)
    return 0


def query_problem(query: str) -> str:
    """Why ``query`` cannot be searched for or recalled (a usage error, exit 2), or "": an
    empty or blank query asks for nothing (it is not "no match")."""
    if not query.strip():
        return "the query is empty: give the words to look for"
    return ""


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
    lowest = 1 if command == "search" else 100
    highest = 10_000 if command == "search" else 10_000_000   # as the Typer options say
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
