"""The ``scenes`` command line (Typer + Rich); contract in DESIGN.md "Command line".

Exit codes: 0 success, 1 the operation failed, 2 bad usage or bad input. Heavy modules (git,
litellm, sqlite index) are imported inside the commands that need them, so quick commands such
as ``list`` start fast.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated

import typer

from scene_engine.core.plural import count

# Plain help (no Rich panels): paragraphs are re-wrapped to the terminal, flags show no type,
# and every value shows its own metavar (FILE, N, SECONDS), not Typer's "<int range>".
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Readable long-term memory for LLM agents: Markdown scenes in git.")
_DIR: dict[str, Path | None] = {"dir": None}

def _plain_help() -> None:
    """Help text as a person expects it from a command-line tool: an argument is ``NAME`` (or
    ``[NAME]`` when optional) in the usage line, with no Python type beside it (Typer writes
    ``{query}`` and ``query <str>``), and a line is never broken inside a word such as
    ``--batch-size`` or ``OpenAI-compatible`` (click's wrapper breaks at hyphens). Both are
    the libraries' own formatting hooks, replaced here for this process; a version without
    them keeps its own formatting."""
    import importlib

    from typer.core import TyperArgument

    def usage_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    if hasattr(TyperArgument, "_usage_display_name"):
        TyperArgument._usage_display_name = usage_name
        TyperArgument.display_type_rich = lambda self, ctx: None
    for name in ("typer._click._textwrap", "click._textwrap"):   # Typer 0.2x has its own click
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        wrapper = getattr(module, "TextWrapper", None)
        if wrapper is not None and not getattr(wrapper, "keeps_hyphenated_words", False):
            module.TextWrapper = type("WholeWords", (wrapper,), {
                "keeps_hyphenated_words": True, "__init__": _whole_words_init(wrapper)})


def _whole_words_init(wrapper):
    """``wrapper.__init__`` with ``break_on_hyphens`` off unless asked for."""
    def init(self, *args, **kwargs):
        kwargs.setdefault("break_on_hyphens", False)
        wrapper.__init__(self, *args, **kwargs)
    return init


_plain_help()

_INTERRUPT = {"reported": False}   # one `interrupted` line per invocation, however many signals


def _echo_json(data) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _fail(message: str, code: int) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _interrupted(exc: BaseException, detail: str = "") -> None:
    """Report Ctrl-C (exit 130) or SIGTERM (exit 143) as one ``interrupted`` line on stderr
    (``detail`` after a colon), never a traceback; raises ``typer.Exit``."""
    from scene_engine.core.interrupts import exit_code

    if not _INTERRUPT["reported"]:
        _INTERRUPT["reported"] = True
        typer.echo(f"interrupted: {detail}" if detail else "interrupted", err=True)
    raise typer.Exit(exit_code(exc))


def _pending_note(store) -> str:
    """``"; N memories pending"``, or "" when the state cannot be read (after an interrupt
    nothing more may go wrong)."""
    try:
        return f"; {count(store.load_state().pending, 'memory')} pending"
    except Exception:
        return ""


def _stdout_gone() -> bool:
    """True when stdout is a pipe whose reader has gone (``scenes log | head -1``): poll
    reports an error on such a pipe. A broken pipe elsewhere (a git helper process that
    died) is a failure to report, not a reader that had enough."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _reader_gone() -> None:
    """End quietly with exit 0 after the reader of stdout went away; Python's final flush
    of stdout is pointed at devnull so it cannot fail in its turn."""
    import os

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
    raise typer.Exit(0)


def handled(func: Callable) -> Callable:
    """Turn the engine's errors into a message on stderr and the contract's exit code: the one
    place the command line translates them (``core.errors.SceneEngineError`` carries the
    code; git's own failures, the disk's and a schema's are said in one line too)."""

    @wraps(func)
    def wrapper(*args, **kwargs):
        from scene_engine.core.errors import SceneEngineError
        from scene_engine.core.interrupts import Terminated, received, reset_received

        reset_received()           # one command, one verdict (tests run many in one process)
        try:
            return func(*args, **kwargs)
        except (KeyboardInterrupt, Terminated) as exc:   # the `with` blocks have unwound
            _interrupted(exc)
        except typer.Exit:
            raise                  # the command's own verdict (an exit code, said already)
        except BrokenPipeError as exc:
            if _stdout_gone():     # the reader went away (`| head`): not an error
                _reader_gone()
            _fail(f"a pipe to a helper process broke: {exc}", 1)
        except SceneEngineError as exc:
            if exc.exit_code == 1 and received() is not None:
                _interrupted(received())   # a git child died of the same signal first
            _fail(str(exc), exc.exit_code)
        except OSError as exc:     # a disk problem: say which file, no traceback
            _fail(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1)
        except Exception as exc:
            from scene_engine.services.faults import describe

            said = describe(exc)   # git's refusals, a schema's complaint; None: a bug
            if said is None:
                raise
            if received() is not None:
                _interrupted(received())
            _fail(said, 1)

    return wrapper


def _store():
    from scene_engine.store.store import open_store

    return open_store(_DIR["dir"])


def _read_store():
    """The store for a read-only command, with an interrupted batch rolled back first (or a
    warning that it could not be), so nothing shown comes from a batch that never finished."""
    from scene_engine.store.recovery import ensure_recovered

    store = _store()
    ensure_recovered(store)
    return store


def _version(asked: bool) -> None:
    """``--version``: the installed package's version, then exit 0."""
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"scenes (scene-engine) {version('scene-engine')}")
        except PackageNotFoundError:   # run from a source tree that was never installed
            typer.echo("scenes (scene-engine), version unknown (not installed)")
        raise typer.Exit(0)


@app.callback()
def main_options(
    directory: Annotated[Path | None, typer.Option(
        "--dir", metavar="DIR",
        help="The store (default: $SCENE_ENGINE_DIR, then the current folder).")] = None,
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version,
        help="Print the version and exit.")] = False,
) -> None:
    """Readable long-term memory for LLM agents."""
    import warnings

    _DIR["dir"] = directory
    _INTERRUPT["reported"] = False
    warnings.showwarning = _show_warning


@app.command()
@handled
def init(directory: Annotated[Path | None, typer.Argument(
        metavar="DIR",
        help="Folder for the store: new, empty or not (a notes folder, an Obsidian vault, a "
             "repository). Default: --dir, then $SCENE_ENGINE_DIR.")] = None,
         prefix: Annotated[str, typer.Option(
             "--prefix", metavar="FOLDER",
             help="Put the store's files in this subfolder (e.g. memory/) "
                  "instead of the folder's root.")] = "") -> None:
    """Make a new store in a folder: scenes/, memories/, persona and settings, and a first
    commit of only those, in the git repository the folder is in (else a new one)."""
    import os

    from scene_engine.store.store import init_store

    directory = directory or _DIR["dir"] or (
        Path(os.environ["SCENE_ENGINE_DIR"]) if os.environ.get("SCENE_ENGINE_DIR") else None)
    if directory is None:
        _fail("say where: `scenes init DIR` (or `scenes --dir DIR init`, or set "
              "SCENE_ENGINE_DIR)", 2)
    store = init_store(directory, prefix=prefix)
    typer.echo(f"new scene store at {store.root}")


def _read_input(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    path = Path(source)
    if path.is_dir():
        _fail(f"{source}: a folder, not a file", 2)
    try:   # a pipe or a device (/dev/stdin, /dev/null) is as good as a file
        return path.read_bytes()
    except FileNotFoundError:
        _fail(f"{source}: no such file", 2)


JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")]


@app.command()
@handled
def add(source: Annotated[str, typer.Argument(
            metavar="FILE", help="JSON list or JSONL file, or - for stdin.")],
        as_json: JsonOpt = False) -> None:
    """Add memories; the whole input is checked first and refused whole if any record is bad."""
    store = _store()
    report, interrupt, added = _add(store, _read_input(source))
    if interrupt is None:
        if as_json:
            _echo_json(_add_json(report) | {"pending": store.load_state().pending})
        else:
            _report_add(report, err=False)
    elif added is None:
        _interrupted(interrupt, "nothing was added")
    elif as_json:   # committed before the signal landed: it succeeded
        _echo_json({"added": added, "pending": store.load_state().pending,
                    "interrupted": "the add was committed before the interrupt"})
    else:   # the add was committed before the signal landed: it succeeded; say so plainly
        typer.echo(f"added {count(added, 'memory')} (the add was committed before the "
                   "interrupt)")


def _add(store, data: bytes):
    """``add_memories`` that reports an interrupt instead of raising it: (report or None,
    the interrupt or None, memories committed before it or None)."""
    from scene_engine.core.interrupts import Terminated
    from scene_engine.services.add import add_memories

    before = store.load_state().next_seq
    try:
        return add_memories(store, data), None, None
    except (KeyboardInterrupt, Terminated) as exc:
        try:
            now = store.load_state().next_seq
        except Exception:   # cannot tell: report the interrupt as it is
            return None, exc, None
        return None, exc, (now - before if now > before else None)


def _report_add(report, err: bool) -> None:
    typer.echo(f"added {count(report.added, 'memory')} ({count(report.known, 'known id')} "
               f"skipped, {count(report.duplicates, 'duplicate')} collapsed)", err=err)


def _add_json(report) -> dict:
    """An ``AddReport`` as ``add --json`` gives it."""
    return {"added": report.added, "known": report.known, "duplicates": report.duplicates}


BackendOpt = Annotated[str | None, typer.Option(
    "--backend", metavar="NAME", help="offline (default) or llm.")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="MODEL", help="Any litellm model name.")]
ApiBaseOpt = Annotated[str | None, typer.Option(
    "--api-base", metavar="URL", help="OpenAI-compatible server URL (no API key needed for it).")]
SizeOpt = Annotated[int | None, typer.Option(
    "--batch-size", min=1, metavar="N", help="Memories per batch.")]
MaxOpt = Annotated[int | None, typer.Option(
    "--max-batches", min=1, metavar="N", help="Stop after N batches.")]
CallTimeoutOpt = Annotated[float | None, typer.Option(
    "--call-timeout", min=0.1, metavar="SECONDS",
    help="Seconds one model request may take (config: call_timeout).")]
BatchTimeoutOpt = Annotated[float | None, typer.Option(
    "--batch-timeout", min=0.1, metavar="SECONDS",
    help="Seconds one model batch may take (config: batch_timeout).")]
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose",
                                          help="Print the model's tool calls as they happen.")]
RunJsonOpt = Annotated[bool, typer.Option(
    "--json", help="One JSON document on stdout: the batches committed, what is pending, "
                   "the failure if one.")]


def _backend(config, backend_name, model, api_base, call_timeout=None, batch_timeout=None):
    """The backend chosen by the options, else config.toml (``engine.configured_backend``).
    Exits 2 on an unknown backend or a missing model."""
    from scene_engine.services.backends import configured_backend

    try:
        return configured_backend(config, backend_name, model, api_base, call_timeout,
                                  batch_timeout)
    except ValueError as exc:
        _fail(str(exc), 2)


def _prepare(backend, display) -> str | None:
    """Check a model backend's set-up and load its client before any batch starts; returns
    the set-up problem (one line; nothing is written then), else None."""
    if not hasattr(backend, "prepare"):
        return None
    from scene_engine.llm.loop import ModelError, load_client

    try:
        with display.step("checking the model set-up"):
            backend.prepare()
    except ModelError as exc:
        return str(exc)
    with display.step("loading the model client (litellm)"):
        load_client()
    return None


def _run(store, backend_name, model, api_base, batch_size, max_batches, call_timeout=None,
         batch_timeout=None, verbose=False, as_json=False, head: dict | None = None) -> None:
    """Run the pending batches and say what they did: one line, or with ``as_json`` one JSON
    document (``head``: what came in first, for ``ingest``; then ``committed``, ``pending``,
    ``scenes``, ``failed``). Exit 1 when a batch failed, 130/143 when interrupted."""
    from scene_engine.core.interrupts import Terminated
    from scene_engine.services.add import drain_inbox

    backend = _backend(store.config, backend_name, model, api_base, call_timeout,
                       batch_timeout)
    drain_inbox(store)          # memories an agent remembered while the store was busy
    before = store.load_state()
    results: list = []
    try:
        failure, at_setup = _fold(store, backend, before.pending, before.batch,
                                  batch_size or store.config.batch_size, max_batches, verbose,
                                  results)
    except (KeyboardInterrupt, Terminated) as exc:   # the progress bar is closed by now
        detail = _run_interrupted(store, before.batch, len(results))
        if as_json:
            with contextlib.suppress(Exception):   # after an interrupt nothing more may fail
                _echo_json(_run_json(store, results, head, None) | {"interrupted": detail})
        _interrupted(exc, detail)
    if as_json:
        _echo_json(_run_json(store, results, head, failure))
        if failure is not None:
            _fail(failure, 1)
        return
    pending = count(store.load_state().pending, "memory")
    if at_setup:              # one line: nothing ran
        _fail(failure, 1)
    if failure is not None:   # printed after the progress line is gone: a line of its own
        _fail(f"{failure}\n{count(len(results), 'batch')} committed before the failure; "
              f"{pending} still pending", 1)
    typer.echo(f"{count(len(results), 'batch')} committed; {pending} pending; "
               f"{count(len(store.scene_names()), 'scene')}")


def _fold(store, backend, pending: int, last_batch: int, size: int, max_batches, verbose,
          results: list) -> tuple[str | None, bool]:
    """The batches of ``_run`` under the progress line; each committed one is appended to
    ``results``. Returns (why it stopped early, or None; True when that was the model's
    set-up, before any batch)."""
    from scene_engine.batch.contract import BatchError
    from scene_engine.cli.display import RunDisplay
    from scene_engine.core.interrupts import received
    from scene_engine.services.run import run_pending

    total = -(-pending // size) if pending else 0
    if max_batches:
        total = min(total, max_batches)
    with RunDisplay(total, pending, verbose=verbose, size=size) as display:
        display.batch = last_batch + 1
        problem = _prepare(backend, display) if pending else None
        if problem is not None:
            return f"{problem}; nothing written, {count(pending, 'memory')} pending", True
        if hasattr(backend, "listener"):
            backend.listener = display.listener
        display.starting()

        def on_batch(result):
            results.append(result)
            display.advance(result)
        try:
            run_pending(store, backend, max_batches=max_batches, size=size, on_batch=on_batch)
        except BatchError as exc:
            if received() is not None:   # git died of the same Ctrl-C: say it was that
                raise received() from exc
            return str(exc), False
    return None, False


def _run_json(store, results: list, head: dict | None, failure: str | None) -> dict:
    """``run --json`` (and ``ingest --json``): ``head``, then each committed batch (number,
    commit, memory ids, counts, tokens, cost), what is pending, the scenes, the failure."""
    state = store.load_state()
    batches = [{"batch": r.number, "commit": r.commit, "memories": r.memory_ids,
                "counts": r.counts, "tokens": r.tokens, "cost": r.cost} for r in results]
    return (head or {}) | {"committed": batches, "pending": state.pending,
                           "scenes": len(store.scene_names()), "failed": failure}


def _run_interrupted(store, batch_before: int, reported: int) -> str:
    """What an interrupted run leaves: the batch in progress wrote nothing (it was never
    applied, or it was rolled back), the batches committed before stay. The count comes from
    the state (a batch can commit just before the interrupt is delivered), else from the
    batches reported."""
    try:
        committed = store.load_state().batch - batch_before
    except Exception:
        committed = reported
    kept = (f"{count(committed, 'batch')} committed before the interrupt stay committed"
            if committed else "no batch was committed before it")
    return (f"the batch in progress was rolled back (nothing of it was written); {kept}"
            f"{_pending_note(store)}")


@app.command()
@handled
def run(backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
        batch_size: SizeOpt = None, max_batches: MaxOpt = None,
        call_timeout: CallTimeoutOpt = None, batch_timeout: BatchTimeoutOpt = None,
        verbose: VerboseOpt = False, as_json: RunJsonOpt = False) -> None:
    """Fold pending memories into scenes, one git commit per batch."""
    _run(_store(), backend, model, api_base, batch_size, max_batches, call_timeout,
         batch_timeout, verbose, as_json)


@app.command()
@handled
def ingest(source: Annotated[str | None, typer.Argument(
               metavar="FILE", help="JSON list or JSONL file of memories, or -.")] = None,
           conversation: Annotated[str | None, typer.Option(
               "--conversation", metavar="FILE",
               help="A conversation file (chat messages, LoCoMo or a "
                    "transcript): extract its memories first.")] = None,
           backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
           batch_size: SizeOpt = None, max_batches: MaxOpt = None,
           call_timeout: CallTimeoutOpt = None, batch_timeout: BatchTimeoutOpt = None,
           verbose: VerboseOpt = False, as_json: RunJsonOpt = False) -> None:
    """Add memories (or extract them from a conversation), then run (add + run)."""
    if (source is None) == (conversation is None):
        _fail("give a memories FILE or --conversation FILE (one of them)", 2)
    store = _store()
    if conversation is not None:
        report = _extract(store, conversation, backend, model, api_base)
        head = {"extracted": report.as_dict() | {"ids": report.added_ids}}
        if not as_json:
            typer.echo(_extract_line(report), err=True)
    else:
        report, interrupt, added = _add(store, _read_input(source))
        if interrupt is not None:
            done = f"{count(added, 'memory')} were added" if added else "nothing was added"
            _interrupted(interrupt, f"{done}; no batch ran{_pending_note(store)}")
        head = {"added": _add_json(report)} if as_json else None
        if not as_json:
            _report_add(report, err=True)
    _run(store, backend, model, api_base, batch_size, max_batches, call_timeout, batch_timeout,
         verbose, as_json, head)


def _extract(store, source: str, backend, model, api_base):
    """Run the extractor on the file ``source`` (``extraction.pipeline.extract_file``) with
    the model the options or config name (none: offline). Exit 2 for a bad file, 1 when the
    model cannot be used or a block fails; nothing is written then."""
    from scene_engine.extraction.model import ExtractionError, ModelSettings
    from scene_engine.extraction.pipeline import extract_file

    config = store.config
    chosen = model if model is not None else config.model
    name = backend or ("llm" if chosen else config.backend)
    if name not in ("offline", "llm"):
        _fail(f"unknown backend {name!r}: use offline or llm", 2)
    settings = None
    if name == "llm":
        if not chosen:
            _fail("--backend llm needs --model (or model in config.toml)", 2)
        from scene_engine.llm.preflight import SetupError, check_model

        base = api_base if api_base is not None else (config.api_base or None)
        try:
            key = check_model(chosen, base, None)
        except SetupError as exc:
            _fail(f"{exc}; nothing extracted", 1)
        settings = ModelSettings(model=chosen, api_base=base, api_key=key)
    data = _read_input(source)
    try:
        return extract_file(store, data, Path(source).name if source != "-" else "stdin",
                            settings)
    except ExtractionError as exc:
        _fail(f"{exc}; nothing written", 1)


def _extract_line(report) -> str:
    return (f"extracted {count(report.added, 'memory')} from "
            f"{count(report.messages, 'message')} ({report.extractor}; {report.known} known, "
            f"{report.superseded} superseded, {report.merged} merged, "
            f"{count(report.queued, 'pair')} queued for review)")


@app.command()
@handled
def extract(source: Annotated[str, typer.Argument(
                metavar="FILE", help="Conversation file (chat messages JSON/JSONL, LoCoMo JSON, transcript) "
                     "or -.")],
            backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
            as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False
            ) -> None:
    """Extract memories from a conversation into the journal (no batch runs)."""
    report = _extract(_store(), source, backend, model, api_base)
    if as_json:
        _echo_json(report.as_dict() | {"ids": report.added_ids})
    else:
        typer.echo(_extract_line(report))


@app.command()
@handled
def review(pair: Annotated[str | None, typer.Argument(
               metavar="PAIR", help="The pair to decide (its id or the start of it).")] = None,
           keep: Annotated[str | None, typer.Option(
               "--keep", metavar="SIDE", help="left, right or both.")] = None,
           merge: Annotated[bool, typer.Option(
               "--merge", help="Merge into one memory with --title and --summary.")] = False,
           title: Annotated[str | None, typer.Option(
               "--title", metavar="TEXT", help="The merged memory's title.")] = None,
           summary: Annotated[str | None, typer.Option(
               "--summary", metavar="TEXT", help="The merged memory's summary.")] = None,
           undo_merge: Annotated[str | None, typer.Option(
               "--undo", metavar="MERGE", help="Undo the merge with this id.")] = None,
           list_merges: Annotated[bool, typer.Option(
               "--merges", help="List the merges instead of the queue.")] = False,
           as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False
           ) -> None:
    """The de-duplication review queue: list it, decide a pair, or undo a merge."""
    from scene_engine.extraction import review as queue

    store = _store()
    if undo_merge is not None:
        event = queue.undo(store, undo_merge)
        return _echo_json(event) if as_json else typer.echo(f"undone merge {event['merge']}")
    if pair is not None:
        if merge and not (title and summary):
            _fail("--merge needs --title and --summary", 2)
        if keep is None and not merge:
            _fail("say --keep left|right|both or --merge --title T --summary S", 2)
        if keep not in (None, "left", "right", "both") or (merge and keep == "both"):
            _fail("--keep takes left, right or both (a merge keeps left or right)", 2)
        event = queue.decide(store, pair, keep or "left", title if merge else None,
                             summary if merge else None)
        if as_json:
            return _echo_json(event)
        return typer.echo(f"{event['pair']}: kept both" if event["event"] == "kept_both"
                          else f"{event['pair']}: merge {event['merge']} (undo with "
                               f"`scenes review --undo {event['merge']}`)")
    rows = queue.merges(store) if list_merges else queue.queue(store)
    if as_json:
        return _echo_json(rows)
    if not rows:
        return typer.echo("no merges" if list_merges else "the review queue is empty")
    for row in rows:
        typer.echo(_merge_row(row) if list_merges else _pair_text(row))


def _pair_text(row: dict) -> str:
    lines = [f"{row['pair']}  ({row['reason']}; similarity {row['similarity']})"]
    for side in ("left", "right"):
        m = row[side]
        lines.append(f"  {side}: {m['id']}  [{m['scope']}, {m['status']}, {m['created_at']}]")
        lines.append(f"    {m['title']}")
        lines.append(f"    {m['summary']}")
        for source in m["sources"]:
            lines.append(f"    source {source['id']}" + (f": {source['text']}"
                                                         if source["text"] else ""))
    return "\n".join(lines)


def _merge_row(row: dict) -> str:
    state = "undone" if row["undone"] else "applied"
    return (f"{row['merge']}  {state}  by {row['by']}  keep {row['keep']}  retired "
            f"{', '.join(row['retired'])}" + (f"  created {row['created']}"
                                              if row["created"] else ""))


ScopeOpt = Annotated[str | None, typer.Option(
    "--scope", metavar="SCOPE", help="Only the memories of this scope (and unscoped ones); no scenes.")]


@app.command()
@handled
def status(as_json: JsonOpt = False) -> None:
    """Pending memories, scenes, batches."""
    from scene_engine.services.status import status as store_status

    data = store_status(_read_store())
    if as_json:
        _echo_json(data)
        return
    for key, value in data.items():
        if key != "warnings":
            typer.echo(f"{key}: {value}")
    for warning in data["warnings"]:     # a line that cannot be read: named, not counted
        typer.echo(f"warning: {warning}", err=True)


def _scene_rows(store) -> list[dict]:
    from scene_engine.services.listing import scene_rows

    return scene_rows(store)


@app.command("list")
@handled
def list_scenes(as_json: JsonOpt = False) -> None:
    """Scenes with heat, last update and summary, hottest first."""
    rows = _scene_rows(_read_store())
    if as_json:
        _echo_json(rows)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    cells = [(row["name"], str(row["heat"]), str(row["updated"] or "")[:16],
              " ".join(row["summary"].split())) for row in rows]
    if not console.is_terminal:   # a pipe or a file: whole values, a tab between, no frame
        for line in [("name", "heat", "updated", "summary"), *cells]:
            typer.echo("\t".join(line))
        return
    table = Table(show_lines=False)
    # A name is never cut: the summary wraps to leave room for it.
    table.add_column("name", no_wrap=True, min_width=max((len(c[0]) for c in cells), default=4))
    table.add_column("heat", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("summary", ratio=1)
    for cell in cells:
        table.add_row(*cell)
    console.print(table)


@app.command()
@handled
def show(name: Annotated[str, typer.Argument(
        metavar="NAME", help="Scene name (with or without .md).")]) -> None:
    """Print one scene file as it is on disk."""
    store = _read_store()
    from scene_engine.core.fs import read_regular_text

    path = store.scenes_dir / _scene_match(store, name)
    typer.echo(read_regular_text(path), nl=False)


def _index(store):
    from scene_engine.index.scenes import for_store

    return for_store(store)


@app.command()
@handled
def search(query: Annotated[str, typer.Argument(metavar="QUERY", help="The words to find.")],
           k: Annotated[int, typer.Option("-k", min=1, max=10_000, metavar="N",
                                          help="Hits.")] = 10,
           as_json: JsonOpt = False,
           memories: Annotated[bool, typer.Option(
               "--memories", help="Search the memory journal instead of the scenes.")] = False,
           scope: ScopeOpt = None) -> None:
    """Full-text search over scene names, summaries and bodies (BM25, heat as tie-break).

    Every word must match; when no scene holds them all, scenes holding some are shown and
    the output says so. Stop words and question particles never decide a match."""
    from scene_engine.cli import quick

    _check_query(query)
    quick.search(_DIR["dir"], query, k, as_json, memories, scope)


def _check_query(query: str) -> None:
    """Exit 2 for a query with nothing to look for (``quick.query_problem``)."""
    from scene_engine.cli.quick import query_problem

    problem = query_problem(query)
    if problem:
        _fail(problem, 2)


@app.command()
@handled
def reindex() -> None:
    """Rebuild the search index from the files."""
    from scene_engine.store.lock import store_lock

    store = _store()
    with store_lock(store.lock_path):
        index = _index(store)
        try:
            report = index.rebuild()
        except OSError as exc:   # built aside: nothing was swapped in
            _fail(f"reindex failed: {exc.strerror or exc}: {exc.filename or ''}; "
                  "the index was left as it was", 1)
        finally:
            index.close()
    typer.echo(f"reindexed {count(len(report.added) + len(report.updated), 'scene')} and "
               f"{count(report.memories_added, 'memory')} in {report.seconds:.2f} s")
    for warning in report.warnings or []:
        typer.echo(f"warning: {warning}", err=True)


@app.command()
@handled
def repair(as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False
           ) -> None:
    """Number the memory journal anew after a git merge of two copies of the store.

    Every record is kept once; a memory a batch in effect folded keeps the number that batch
    gave it (by id, from its ledger), every other memory is pending. A batch that cannot keep
    its numbers (both copies folded) is released and its memories are pending again. One
    commit; `scenes undo` does not undo it, `git revert` does. Does nothing when the journal,
    the batches and state.json agree.
    """
    from scene_engine.index.refresh import refresh_index
    from scene_engine.services.repair import repair_numbering

    store = _store()
    report = repair_numbering(store)
    if report["repaired"]:
        refresh_index(store)
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
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
    import contextlib
    import sqlite3

    from scene_engine.index.scenes import for_store
    from scene_engine.index.watcher import watch_forever

    store = _store()
    typer.echo(f"watching {store.root} (Ctrl-C to stop)", err=True)

    def report(names: set[str]) -> None:
        typer.echo(f"reindexed: {', '.join(sorted(names))}", err=True)

    folding, joining = contextlib.nullcontext(), contextlib.nullcontext()
    if fold:
        from scene_engine.mcpserver.server import configured_backend
        from scene_engine.services.folding import FoldWorker, InboxJoiner

        config = store.config
        typer.echo(f"folding when {count(config.fold_every, 'memory')} are pending or after "
                   f"{config.fold_idle:g} s without a new one", err=True)
        folding = FoldWorker(store, configured_backend(store),
                             on_event=lambda text: typer.echo(text, err=True))
        # Memories an agent queued while the store was busy join as soon as it is free,
        # not at the next fold trigger.
        joining = InboxJoiner(store, on_event=lambda text: typer.echo(text, err=True))
    try:
        with folding, joining:   # the journal too: a line it cannot index is logged by its number
            stats = watch_forever(store.root, lambda: for_store(store), debounce=debounce,
                                  on_reindex=report)
    except sqlite3.Error as exc:       # e.g. a store this user cannot write
        _fail(f"cannot keep the search index here: {exc}", 1)
    if stats.lost:
        _fail(stats.lost, 1)
    typer.echo(f"stopped after {count(stats.reindex_runs, 'reindex run')}", err=True)


@app.command()
@handled
def doctor(as_json: JsonOpt = False) -> None:
    """Check every invariant of the store; exit 1 if any is broken."""
    from scene_engine.services.doctor import check_store

    problems = check_store(_store())
    if as_json:
        _echo_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            typer.echo(f"problem: {problem}")
        typer.echo("doctor: ok" if not problems else f"doctor: {count(len(problems), 'problem')}")
    if problems:
        raise typer.Exit(1)


@app.command()
@handled
def persona(force: Annotated[bool, typer.Option("--force", help="Regenerate now.")] = False,
            backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None
            ) -> None:
    """Show the persona, or regenerate it with --force."""
    store = _store() if force else _read_store()
    if force:
        from scene_engine.services.persona import regenerate

        chosen = _backend(store.config, backend, model, api_base)
        if not regenerate(store, chosen, "asked for with --force", force=True) \
                and not store.scene_names():       # "" also when the persona was current
            _fail("no scenes yet: run a batch first", 1)
    if not store.persona_path.exists():
        _fail("no persona: it is written after a batch when scenes exist; "
              "`scenes persona --force` writes one now", 1)
    from scene_engine.core.fs import read_regular_text

    typer.echo(read_regular_text(store.persona_path), nl=False)


@app.command()
@handled
def log(as_json: JsonOpt = False,
        adds: Annotated[bool, typer.Option("--adds", help="Also list `add` commits.")] = False,
        transcript: Annotated[int | None, typer.Option(
            "--transcript", min=1, metavar="BATCH",
            help="Show the model exchange of one batch (committed or failed).")] = None
        ) -> None:
    """Batches newest first, with hand edits, undos and persona commits between them."""
    from scene_engine.store.history import log_entries, open_repo

    if transcript is not None:
        _show_transcript(_store(), transcript, as_json)
        return
    entries = log_entries(open_repo(_read_store().root), include_adds=adds)
    if as_json:
        _echo_json(entries)
        return
    for e in entries:
        flag = " (undone)" if e.get("undone") else ""
        if e["kind"] == "hand edit" and not e["subject"].startswith("hand edit:"):
            flag = " (hand edit)"   # a person's own commit of scenes: theirs, not the engine's
        typer.echo(f"{e['commit'][:8]} {e['time'][:19]} {e['subject']}{flag}")
        if e["kind"] == "batch":
            typer.echo(f"    {e['summary']}\n    memories: {e['memories']}; "
                       f"model: {e['model']}; tokens: {e['tokens']}")


def _show_transcript(store, batch: int, as_json: bool) -> None:
    """Print batch ``batch``'s transcript (its events as JSON with --json); exit 1 if none."""
    from scene_engine.batch.transcript import read_events, render, transcript_path

    path = transcript_path(store.meta_dir, batch)
    try:
        events = read_events(path)
    except FileNotFoundError:
        _fail(f"no transcript for batch {batch} (only model batches have one, and old ones "
              f"are pruned); see {path.parent}", 1)
    if as_json:
        _echo_json(events)
    else:
        typer.echo(f"# {path}")
        typer.echo(render(events, batch), nl=False)


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
    from scene_engine.services.persona import relink
    from scene_engine.services.undo import UndoError
    from scene_engine.services.undo import undo as do_undo

    store = _store()
    try:
        result = do_undo(store, target, forget=forget)
    except UndoError as exc:
        _fail(str(exc), exc.exit_code)
    fate = {"undo": "forgotten" if forget else "pending again", "redo": "folded again",
            "forget": "forgotten"}[result.action]
    # An undone rename or merge: the persona is made to name the scenes there are.
    relinked = bool(relink(_store()))
    if as_json:
        _echo_json({"action": result.action, "batch": result.batch, "target": result.target,
                    "commit": result.commit, "memories": result.memories, "fate": fate,
                    "pending": store.load_state().pending, "persona_regenerated": relinked})
        return
    what = f"batch {result.batch}" if result.batch is not None else result.target[:8]
    typer.echo(f"{result.action} {what}: commit {result.commit[:8]}; "
               f"{count(result.memories, 'memory')} {fate}")
    if relinked:
        typer.echo("persona: regenerated (it named scenes that are gone)")


@app.command()
@handled
def blame(name: Annotated[str, typer.Argument(metavar="NAME", help="Scene name.")],
          as_json: JsonOpt = False) -> None:
    """Each line of a scene with the batch (or hand edit) that last changed it and the
    memories behind that line."""
    from scene_engine.services.trace import blame_scene

    store = _read_store()
    rows = blame_scene(store, _scene_match(store, name))
    if as_json:
        _echo_json(rows)
        return
    width = min(40, max((len(_memory_cell(r["memories"])) for r in rows), default=0))
    for row in rows:
        who = (f"batch {row['batch']}" if row["kind"] == "batch"
               else row["kind"] + (f" {row['batch']}" if row["batch"] else ""))
        typer.echo(f"{row['line']:>4} {who:<14} {_memory_cell(row['memories']):<{width}} | "
                   f"{row['text']}")


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
    from scene_engine.services.trace import TraceError, render, trace_memory

    try:
        found = trace_memory(_read_store(), memory_id)
    except TraceError as exc:
        _fail(str(exc), exc.exit_code)
    if as_json:
        _echo_json(found.to_json())
    else:
        typer.echo(render(found), nl=False)


def _scene_match(store, name: str) -> str:
    from scene_engine.services.listing import match_scene, missing_scene

    found = match_scene(store, name)
    if found is None:
        _fail(missing_scene(store, name, "`scenes list`"), 2)
    return found


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
            "--fold/--no-fold", help="Fold remembered memories in the background.")] = True
        ) -> None:
    """Serve this store to agents over MCP (stdio by default): remember, recall, search,
    list_scenes, read_scene, status, log; scenes as scene://NAME resources."""
    import logging

    from scene_engine.mcpserver.server import TOKEN_ENV, free_port, http_token, http_url, serve

    store = _store()
    # stdout is the protocol's: everything said goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="scene-engine: %(message)s")
    token = None
    if http:
        token, made = http_token(host)
        port = port or free_port(host)      # named before serving, so the line below is true
        typer.echo(f"serving {store.root} at {http_url(host, port)}/mcp (Ctrl-C to stop)",
                   err=True)
        if made:     # shown this once, never stored: set $SCENE_ENGINE_MCP_TOKEN to keep one
            typer.echo(f"bearer token: {token}", err=True)
            typer.echo(f"(clients send the header `Authorization: Bearer <token>`; set "
                       f"{TOKEN_ENV} to choose the token)", err=True)
        elif token:
            typer.echo(f"requests must carry the bearer token in ${TOKEN_ENV}", err=True)
    serve(store, http=http, host=host, port=port, allow_undo=allow_undo, fold=fold,
          token=token)


@app.command("recall")
@handled
def recall_cmd(query: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
               budget: Annotated[int, typer.Option("--budget", min=100, max=10_000_000,
                                                   metavar="CHARS",
                                                   help="Characters at most.")] = 4000,
               as_json: JsonOpt = False, scope: ScopeOpt = None) -> None:
    """What an agent would put in its context for QUERY: persona, scene map, best passages."""
    from scene_engine.cli import quick

    _check_query(query)
    quick.recall(_DIR["dir"], query, budget, as_json, scope)


@app.command()
@handled
def demo(directory: Annotated[Path | None, typer.Argument(
        metavar="DIR", help="Folder for the demo store (default: ./scene-demo).")] = None
         ) -> None:
    """Make a demo store from ~60 sample memories with the offline backend and show it."""
    from scene_engine.recall.assemble import recall
    from scene_engine.services.demo import DEMO_QUERIES, build_demo

    directory = directory or Path("scene-demo")
    typer.echo(f"making a demo store at {directory} ...", err=True)
    store, report, results = build_demo(directory)
    typer.echo(f"added {count(report.added, 'memory')} ({count(report.duplicates, 'repeated one')} "
               f"collapsed); {count(len(results), 'batch')}, one git commit each\n")
    _DIR["dir"] = store.root
    list_scenes(as_json=False)
    rows = _scene_rows(store)
    typer.echo(f"\n=== scenes show {rows[0]['name']} ===")
    typer.echo((store.scenes_dir / rows[0]["name"]).read_text(encoding="utf-8"))
    for query in DEMO_QUERIES:
        typer.echo(f"=== scenes recall {query!r} --budget 1200 ===")
        typer.echo(recall(store, query, budget=1200).text)
    typer.echo(f"Try: cd {directory} && scenes log && scenes undo && scenes status")


# The commands list of `scenes -h`: one line each, whole (a docstring's first sentence is
# often longer than the room click leaves, and it cut them with "...").
SHORT_HELP = {
    "init": "Make a new store in a folder.",
    "add": "Add memories; bad input is refused whole.",
    "run": "Fold pending memories into scenes, a commit per batch.",
    "ingest": "Add memories (or a conversation's), then run.",
    "extract": "Extract memories from a conversation.",
    "review": "The review queue of possible duplicates.",
    "search": "Full-text search over the scenes or the memories.",
    "repair": "Number the journal anew after a git merge.",
    "watch": "Keep the search index in step until Ctrl-C.",
    "doctor": "Check every invariant; exit 1 if one is broken.",
    "log": "Batches newest first, hand edits and undos between.",
    "undo": "Revert one batch; its memories are pending again.",
    "blame": "Each line of a scene, its batch and its memories.",
    "trace": "Where a memory went: batch, scenes, lines.",
    "mcp": "Serve this store to agents over MCP.",
    "recall": "What an agent puts in its context for QUERY.",
    "demo": "Make and show a demo store of ~60 memories.",
}
for _command in app.registered_commands:
    _name = _command.name or _command.callback.__name__
    _command.short_help = _command.short_help or SHORT_HELP.get(_name)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a user as one ``warning:`` line, not as a source location."""
    typer.echo(f"warning: {message}", err=True)


def main() -> None:
    """Console-script entry point. A closed pipe (``scenes log | head``) ends quietly.

    SIGTERM unwinds like Ctrl-C (``interrupts.install_handlers``); an interrupt anywhere is
    one ``interrupted`` line and exit 130 (SIGINT) or 143 (SIGTERM), never a traceback. Once
    the outcome is decided, further signals are held back so they cannot turn it into one.
    """
    import os

    from scene_engine.core import interrupts

    interrupts.install_handlers()
    try:
        app()
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at devnull so that cannot fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except (KeyboardInterrupt, interrupts.Terminated) as exc:   # outside a command's body
        with contextlib.suppress(typer.Exit):
            _interrupted(exc)
        sys.exit(interrupts.exit_code(exc))
    except SystemExit as exc:
        if exc.code == 130 and not _INTERRUPT["reported"]:   # Typer's quiet Ctrl-C exit
            _INTERRUPT["reported"] = True
            typer.echo("interrupted", err=True)
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            # Typer's own answer to a closed pipe outside a command (`scenes -h | head -1`):
            # it wraps stdout so and exits 1; a reader that had enough is no failure.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
            sys.exit(0)
        raise
    finally:
        interrupts.hold_for_exit()
