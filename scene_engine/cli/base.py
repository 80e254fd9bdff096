"""The Typer app of ``scenes``: global options, the one translation of errors into exit
codes, and what every command shares (docs/DESIGN.md "Command line").

Exit codes: 0 success, 1 the operation failed, 2 bad usage or bad input (an
``InputError``), 130 / 143 interrupted. The commands themselves are in ``store_commands``,
``memories``, ``scenes``, ``history`` and ``serve``; ``main`` registers them. Heavy modules
(git, litellm, the sqlite index) are imported inside the commands that need them, so quick
commands start fast.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from scene_engine.cli.help import plain_help
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.text import shown_text

plain_help()
# Plain help (no Rich panels): paragraphs are re-wrapped to the terminal, flags show no type,
# and every value shows its own metavar (FILE, N, SECONDS), not Typer's "<int range>".
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Readable long-term memory for LLM agents: Markdown scenes in git.")
OPTIONS: dict[str, Path | None] = {"dir": None}
_INTERRUPT = {"reported": False}   # one `interrupted` line per invocation, however many signals


def echo_json(data: Any) -> None:
    """One JSON document on stdout (UTF-8 as it is, two-space indent; a byte that is not
    UTF-8, as git hands over a person's stray one, as ``\\xNN``: the document stays UTF-8)."""
    from scene_engine.core.fs import escape_undecodable

    typer.echo(escape_undecodable(json.dumps(data, ensure_ascii=False, indent=2, default=str),
                                  in_json=True))


def fail(message: str, code: int) -> NoReturn:
    """Refuse the command: ``error: message`` on stderr (and with ``--json`` one JSON
    document on stdout) and exit ``code``, as ``handled`` says every error."""
    raise SceneEngineError(message, exit_code=code)


def given(name: str) -> bool:
    """True when the option with parameter name ``name`` was given on the command line (or
    by its environment variable), not left at its default."""
    # Typer carries its own copy of click (typer._click, pinned by constraints.txt).
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    source = get_current_context().get_parameter_source(name)
    return source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def only_with(needed: str, present: bool, *names: str) -> None:
    """Refuse (exit 2) the options ``names`` (parameter names) when they were given but mean
    something only with ``needed`` (an option, or a phrase such as "a PAIR"), which is not
    ``present``: an option is never silently ignored."""
    if present:
        return
    shown = [f"--{name.replace('_', '-')}" for name in names if given(name)]
    if shown:
        what = " and ".join(shown)
        verb = "mean" if len(shown) > 1 else "means"
        fail(f"{what} {verb} something only with {needed}: add {needed} or leave {what} out", 2)


def interrupted(exc: BaseException, detail: str = "") -> NoReturn:
    """Report Ctrl-C (exit 130) or SIGTERM (exit 143) as one ``interrupted`` line on stderr
    (``detail`` after a colon), never a traceback; raises ``typer.Exit``."""
    from scene_engine.core.interrupts import exit_code

    if not _INTERRUPT["reported"]:
        _INTERRUPT["reported"] = True
        typer.echo(f"interrupted: {detail}" if detail else "interrupted", err=True)
    raise typer.Exit(exit_code(exc))


def _stdout_gone() -> bool:
    """True when stdout is a pipe whose reader has gone (``quick.stdout_gone``)."""
    from scene_engine.cli.quick import stdout_gone

    return stdout_gone()


def _reader_gone() -> NoReturn:
    """End quietly with exit 0 after the reader of stdout went away; Python's final flush
    of stdout is pointed at devnull so it cannot fail in its turn."""
    import os

    with contextlib.suppress(OSError, ValueError):
        if sys.__stdout__ is not None:   # else there is no final flush to fail
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
    raise typer.Exit(0)


def handled(func: Callable) -> Callable:
    """Turn the engine's errors into a message on stderr and the contract's exit code: the one
    place the command line translates them (``core.errors.SceneEngineError`` carries the
    code; git's own failures, the disk's and a schema's are said in one line too). With
    ``--json`` the failure is also one JSON document on stdout, ``{"error", "exit_code"}``."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        from scene_engine.core.interrupts import Terminated, reset_received

        reset_received()           # one command, one verdict (tests run many in one process)
        as_json = bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except (KeyboardInterrupt, Terminated) as exc:   # the `with` blocks have unwound
            interrupted(exc)
        except typer.Exit:
            raise                  # the command's own verdict (an exit code, said already)
        except BrokenPipeError as exc:
            if _stdout_gone():     # the reader went away (`| head`): not an error
                _reader_gone()
            _refuse(f"a pipe to a helper process broke: {exc}", 1, as_json)
        except Exception as exc:
            from scene_engine.services.faults import refusal

            said = refusal(exc)
            if said is None:
                raise              # a bug goes up as itself
            message, code, interrupt = said
            if interrupt is not None:
                interrupted(interrupt)   # a git child died of the same signal first
            _refuse(message, code, as_json)

    return wrapper


def _refuse(message: str, code: int, as_json: bool) -> NoReturn:
    """``error: message`` on stderr, with ``--json`` one JSON document on stdout first, and
    exit ``code``."""
    if as_json:
        echo_json({"error": message, "exit_code": code})
    typer.echo(f"error: {shown_text(message)}", err=True)
    raise typer.Exit(code)


def open_cli_store():
    """The store ``--dir`` names (else ``$SCENE_ENGINE_DIR``, else the folder we are in)."""
    from scene_engine.store.store import open_store

    return open_store(OPTIONS["dir"])


def read_cli_store():
    """The store for a read-only command, with an interrupted batch rolled back first (or a
    warning that it could not be), so nothing shown comes from a batch that never finished
    (``quick.read_store``, which the quick door's commands use)."""
    from scene_engine.cli.quick import read_store

    return read_store(OPTIONS["dir"])


# The most `scenes add` / `ingest` read at once (about 1.6 million everyday memories): the add
# holds its input, so an endless or huge one (/dev/urandom, a wrong file) is refused at this
# size instead of filling the memory (it reached 24 GB), and read in pieces so that Ctrl-C
# and SIGTERM stop it (one read of a device ran past every signal).
MAX_INPUT_MB = 256
_PIECE = 1 << 20


def read_input(source: str) -> bytes:
    """The bytes of ``source``: a file, or ``-`` for stdin, at most ``MAX_INPUT_MB``. Exit 2
    for an empty name, a folder, a file that is not there or cannot be read, and a larger
    input."""
    if source == "-":
        return _bounded(sys.stdin.buffer, "stdin")
    if not source.strip():
        fail("FILE is empty: name a file, or - for stdin", 2)
    path = Path(source)
    if path.is_dir():
        fail(f"{source}: a folder, not a file", 2)
    try:   # a pipe or a device (/dev/stdin, /dev/null) is as good as a file
        with path.open("rb") as stream:
            return _bounded(stream, source)
    except FileNotFoundError:
        fail(f"{source}: no such file", 2)
    except OSError as exc:
        fail(f"{source}: cannot be read ({exc.strerror or exc})", 2)


def _bounded(stream, name: str) -> bytes:
    """All of ``stream``, read a piece at a time; exit 2 past ``MAX_INPUT_MB``."""
    pieces, size = [], 0
    while piece := stream.read(_PIECE):
        size += len(piece)
        if size > MAX_INPUT_MB * _PIECE:
            fail(f"{name}: more than {MAX_INPUT_MB} MB, more than one add takes at once; "
                 "split it into smaller files (nothing was added)", 2)
        pieces.append(piece)
    return b"".join(pieces)


def _version(asked: bool) -> None:
    """``--version``: the installed package's version, then exit 0."""
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"scenes (scene-engine) {version('scene-engine')}")
        except PackageNotFoundError:   # run from a source tree that was never installed
            typer.echo("scenes (scene-engine), version unknown (not installed)")
        raise typer.Exit(0)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a user as one ``warning:`` line, not as a source location."""
    typer.echo(f"warning: {shown_text(str(message))}", err=True)


def _store_dir(value: str | None) -> Path | None:
    """``--dir``'s value as a folder; an empty one is a usage error (Path("") would be the
    current folder, a store the user did not name)."""
    if value is not None and not value.strip():
        raise typer.BadParameter("must name a folder (it is empty)", param_hint="'--dir'")
    return Path(value) if value is not None else None


@app.callback()
def main_options(
    directory: Annotated[str | None, typer.Option(
        "--dir", metavar="DIR", callback=_store_dir,
        help="The store (default: $SCENE_ENGINE_DIR, then the current folder).")] = None,
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version,
        help="Print the version and exit.")] = False,
) -> None:
    """Readable long-term memory for LLM agents."""
    import warnings

    OPTIONS["dir"] = Path(directory) if directory is not None else None
    _INTERRUPT["reported"] = False
    warnings.showwarning = show_warning
    # Every command says its warnings (Python says one only once a process, and tests and
    # the MCP server run many commands in one).
    warnings.simplefilter("always", UserWarning)


# Options several commands share.
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")]
BackendOpt = Annotated[str | None, typer.Option(
    "--backend", metavar="NAME", help="offline (default) or llm.")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="MODEL", help="Any litellm model name.")]
ApiBaseOpt = Annotated[str | None, typer.Option(
    "--api-base", metavar="URL", help="OpenAI-compatible server URL (no API key needed for it).")]
ScopeOpt = Annotated[str | None, typer.Option(
    "--scope", metavar="SCOPE",
    help="Only the memories of this scope (and unscoped ones); no scenes.")]
