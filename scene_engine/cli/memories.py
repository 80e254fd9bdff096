"""``scenes add``, ``run``, ``ingest``, ``extract`` and ``review``: memories in and folded
(docs/DESIGN.md "Command line"). Each reads its options, calls the services, prints.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated

import typer

from scene_engine.cli.base import (
    ApiBaseOpt,
    BackendOpt,
    JsonOpt,
    ModelOpt,
    app,
    echo_json,
    fail,
    handled,
    interrupted,
    only_with,
    open_cli_store,
    read_input,
)
from scene_engine.core.plural import count

if TYPE_CHECKING:
    from scene_engine.services.extract import ExtractReport
    from scene_engine.store.memories import AddReport
    from scene_engine.store.store import Store

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
FormatOpt = Annotated[str | None, typer.Option(
    "--format", metavar="NAME",
    help="chatgpt, claude, claude-code, codex, messages, locomo or transcript (default: "
         "told from the content).")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Refuse the whole input when a conversation in it cannot be read "
                     "(default: say which and import the rest).")]
RunJsonOpt = Annotated[bool, typer.Option(
    "--json", help="One JSON document on stdout: the batches committed, what is pending, "
                   "the failure if one.")]


@app.command()
@handled
def add(source: Annotated[str, typer.Argument(
            metavar="FILE", help="JSON list or JSONL file, or - for stdin.")],
        as_json: JsonOpt = False) -> None:
    """Add memories; the whole input is checked first and refused whole if any record is bad."""
    from scene_engine.services.add import add_json, add_until_interrupted
    from scene_engine.services.run import pending_note

    store = open_cli_store()
    outcome = add_until_interrupted(store, read_input(source), _say_vectors)
    if outcome.interrupt is None:
        assert outcome.report is not None, "an add not interrupted has its report"
        if as_json:
            echo_json(add_json(outcome.report) | {"pending": store.load_state().pending})
        else:
            _say_added(outcome.report, err=False)
    elif outcome.added is None:
        interrupted(outcome.interrupt, "nothing was added")
    elif as_json:   # committed before the signal landed: it succeeded
        echo_json({"added": outcome.added, "pending": store.load_state().pending,
                   "interrupted": "the add was committed before the interrupt"})
    else:   # the add was committed before the signal landed: it succeeded; say so plainly
        typer.echo(f"added {count(outcome.added, 'memory')} (the add was committed before "
                   f"the interrupt){pending_note(store)}")


# From this many new memories an add says, on stderr, that their vectors come next: about
# 10 ms a new text on these machines, so 10,000 took a silent 99 s after the commit.
SAY_VECTORS_FROM = 1000


def _say_vectors(added: int) -> None:
    if added >= SAY_VECTORS_FROM:
        typer.echo(f"added {count(added, 'memory')}; now their vectors for recall by meaning "
                   "(Ctrl-C is safe: the add is committed, a recall makes the rest)", err=True)


def _say_added(report: AddReport, err: bool) -> None:
    typer.echo(f"added {count(report.added, 'memory')} ({count(report.known, 'known id')} "
               f"skipped, {count(report.duplicates, 'duplicate')} collapsed)", err=err)


def _run(store: Store, backend_name: str | None, model: str | None, api_base: str | None,
         batch_size: int | None, max_batches: int | None, call_timeout: float | None = None,
         batch_timeout: float | None = None, verbose: bool = False, as_json: bool = False,
         head: dict | None = None) -> None:
    """Run the pending batches (``services.run.FoldRun``) under the progress line and say
    what they did: one line, or with ``as_json`` one JSON document (``head``: what came in
    first, for ``ingest``). Exit 1 when a batch failed, 130/143 when interrupted."""
    from scene_engine.cli.display import RunDisplay
    from scene_engine.core.interrupts import Terminated
    from scene_engine.services.backends import configured_backend
    from scene_engine.services.run import FoldRun

    backend = configured_backend(store.config, backend_name, model, api_base, call_timeout,
                                 batch_timeout)
    fold = FoldRun(store, backend, size=batch_size, max_batches=max_batches)
    failure, at_setup = None, False
    try:
        with RunDisplay(fold.total, fold.pending, verbose=verbose, size=fold.size) as display:
            display.batch = fold.first_batch
            failure = fold.prepare(display.step)
            at_setup = failure is not None
            if failure is None:
                display.starting()
                failure = fold.run(on_batch=display.advance, listener=display.listener)
    except (KeyboardInterrupt, Terminated) as exc:   # the progress bar is closed by now
        detail = fold.interrupted()
        if as_json:
            with contextlib.suppress(Exception):   # after an interrupt nothing more may fail
                echo_json(fold.report(None, head) | {"interrupted": detail})
        interrupted(exc, detail)
    if as_json:
        echo_json(fold.report(failure, head))
        if failure is not None:
            typer.echo(f"error: {failure}", err=True)
            raise typer.Exit(1)
        return
    if failure is not None:   # printed after the progress line is gone: a line of its own
        fail(failure if at_setup else fold.failed(failure), 1)
    typer.echo(fold.summary())


@app.command()
@handled
def run(backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
        batch_size: SizeOpt = None, max_batches: MaxOpt = None,
        call_timeout: CallTimeoutOpt = None, batch_timeout: BatchTimeoutOpt = None,
        verbose: VerboseOpt = False, as_json: RunJsonOpt = False) -> None:
    """Fold pending memories into scenes, one git commit per batch."""
    _run(open_cli_store(), backend, model, api_base, batch_size, max_batches, call_timeout,
         batch_timeout, verbose, as_json)


@app.command()
@handled
def ingest(source: Annotated[str | None, typer.Argument(
               metavar="FILE", help="JSON list or JSONL file of memories, or -.")] = None,
           conversation: Annotated[str | None, typer.Option(
               "--conversation", metavar="FILE",
               help="A conversation: an assistant export (ChatGPT, Claude), an agent's "
                    "sessions (a Claude Code or Codex .jsonl file or folder), chat "
                    "messages, LoCoMo or a transcript: extract its memories first.")] = None,
           fmt: FormatOpt = None, strict: StrictOpt = False,
           backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
           batch_size: SizeOpt = None, max_batches: MaxOpt = None,
           call_timeout: CallTimeoutOpt = None, batch_timeout: BatchTimeoutOpt = None,
           verbose: VerboseOpt = False, as_json: RunJsonOpt = False) -> None:
    """Add memories (or extract them from a conversation), then run (add + run)."""
    from scene_engine.services.add import add_json, add_until_interrupted
    from scene_engine.services.run import pending_note

    if (source is None) == (conversation is None):
        fail("give a memories FILE or --conversation FILE (one of them)", 2)
    if conversation is None and (fmt is not None or strict):
        fail("--format and --strict mean something only with --conversation: add "
             "--conversation or leave them out", 2)
    store = open_cli_store()
    from scene_engine.services.backends import configured_backend

    # The options are checked before anything is added: a usage error adds nothing.
    configured_backend(store.config, backend, model, api_base, call_timeout, batch_timeout)
    if conversation is not None:
        report = _extract(store, conversation, backend, model, api_base, fmt, strict)
        head = {"extracted": report.as_dict() | {"ids": report.added_ids}}
        if not as_json:
            _say_extracted(report, err=True)
    else:
        assert source is not None, "one of FILE and --conversation, checked above"
        outcome = add_until_interrupted(store, read_input(source), _say_vectors)
        if outcome.interrupt is not None:
            done = (f"{count(outcome.added, 'memory')} were added" if outcome.added
                    else "nothing was added")
            interrupted(outcome.interrupt, f"{done}; no batch ran{pending_note(store)}")
        assert outcome.report is not None, "an add not interrupted has its report"
        head = {"added": add_json(outcome.report)}
        if not as_json:
            _say_added(outcome.report, err=True)
    _run(store, backend, model, api_base, batch_size, max_batches, call_timeout, batch_timeout,
         verbose, as_json, head)


def _extract(store: Store, source: str, backend: str | None, model: str | None,
             api_base: str | None, fmt: str | None = None, strict: bool = False,
             dry_run: bool = False) -> ExtractReport:
    """``services.extract.import_source`` on ``source`` (a file, a folder or stdin), with a
    progress bar on a terminal."""
    from scene_engine.cli.display import ByteProgress
    from scene_engine.services.extract import import_source

    with ByteProgress("reading") as bar:
        return import_source(store, source, fmt, strict, dry_run, backend, model, api_base,
                             progress=bar.update)


def _extract_line(report) -> str:
    line = (f"extracted {count(report.added, 'memory')} from "
            f"{count(report.messages, 'message')} ({report.extractor}; {report.known} known, "
            f"{report.superseded} superseded, {report.merged} merged, "
            f"{count(report.queued, 'pair')} queued for review)")
    if report.conversations > 1 or report.broken:
        line += f" in {count(report.conversations, 'conversation')}"
    if report.private:
        line += f"; {report.private}"
    return line


def _say_extracted(report, err: bool = False) -> None:
    """The extraction's line, then one line per conversation that could not be read and
    per note (on stderr: the import went on without them)."""
    typer.echo(_extract_line(report), err=err)
    for broken in report.broken:
        typer.echo(f"warning: skipped {broken['where']}: {broken['reason']}", err=True)
    _say_notes(report)


def _say_notes(report) -> None:
    """A line on stderr per note of the import (at most 20, then how many more)."""
    for note in report.notes[:20]:
        typer.echo(f"note: {note}", err=True)
    if len(report.notes) > 20:
        typer.echo(f"note: ... and {len(report.notes) - 20} more", err=True)


@app.command()
@handled
def extract(source: Annotated[str, typer.Argument(
                metavar="FILE", help="A ChatGPT or Claude export (conversations.json or its "
                                     "folder), Claude Code or Codex sessions (a .jsonl file "
                                     "or a folder of them), chat messages JSON/JSONL, LoCoMo "
                                     "JSON, a transcript, or -.")],
            fmt: FormatOpt = None, strict: StrictOpt = False,
            dry_run: Annotated[bool, typer.Option(
                "--dry-run", help="Show the memories that would be taken; write "
                                  "nothing.")] = False,
            backend: BackendOpt = None, model: ModelOpt = None, api_base: ApiBaseOpt = None,
            as_json: JsonOpt = False) -> None:
    """Extract memories from a conversation, an export or agent sessions into the journal
    (no batch runs)."""
    report = _extract(open_cli_store(), source, backend, model, api_base, fmt, strict,
                      dry_run)
    if dry_run:
        return _say_dry_run(report, as_json)
    if as_json:
        echo_json(report.as_dict() | {"ids": report.added_ids})
    else:
        _say_extracted(report)


def _say_dry_run(report, as_json: bool) -> None:
    """What ``extract --dry-run`` would take: each memory with its day and source."""
    rows = [{"id": m.id, "created_at": m.created_at.isoformat(), "content": m.content,
             "role": m.role, "scope": m.scope, "sources": list(m.sources),
             "source": (m.metadata or {}).get("source")} for m in report.would_add]
    if as_json:
        return echo_json(report.as_dict() | {"would_add": rows})
    for row in rows:
        where = row["source"] or {}
        cited = f"  [{where.get('format')}: {where.get('title') or where.get('conversation')}]" \
            if where else ""
        typer.echo(f"{row['created_at'][:10]}  {' '.join(row['content'].split())}{cited}")
    typer.echo(f"would add {count(len(rows), 'memory')} from "
               f"{count(report.messages, 'message')} ({report.known} known already"
               + (f"; {report.private}" if report.private else "") + "); nothing was written",
               err=True)
    for broken in report.broken:
        typer.echo(f"warning: would skip {broken['where']}: {broken['reason']}", err=True)
    _say_notes(report)


@app.command()
@handled
def review(pair: Annotated[str | None, typer.Argument(
               metavar="PAIR", help="The pair to decide (its id or the start of it).")] = None,
           keep: Annotated[str | None, typer.Option(
               "--keep", metavar="SIDE", help="left, right or both.")] = None,
           merge: Annotated[bool, typer.Option(
               "--merge", help="Merge into one memory with --title and --summary.")] = False,
           title: Annotated[str | None, typer.Option("--title", metavar="TEXT",
                                                     help="The merged memory's title.")] = None,
           summary: Annotated[str | None, typer.Option(
               "--summary", metavar="TEXT", help="The merged memory's text.")] = None,
           undo_merge: Annotated[str | None, typer.Option(
               "--undo", metavar="MERGE", help="Undo the merge with this id.")] = None,
           list_merges: Annotated[bool, typer.Option(
               "--merges", help="List the merges instead of the queue.")] = False,
           dry_run: Annotated[bool, typer.Option(
               "--dry-run", help="Say what the decision would archive and keep; write "
                                 "nothing.")] = False,
           as_json: JsonOpt = False) -> None:
    """The de-duplication review queue: list it, decide a pair, or undo a merge."""
    from scene_engine.services import review as queue

    only_with("--merge", merge, "title", "summary")
    only_with("a PAIR", pair is not None, "keep", "merge", "dry_run")
    asked = [name for name, on in (("PAIR", pair is not None), ("--undo", undo_merge is not None),
                                   ("--merges", list_merges)) if on]
    if len(asked) > 1:
        fail(f"{' and '.join(asked)} ask for different things (decide a pair, undo a merge, "
             "list the merges): give one of them", 2)
    store = open_cli_store()
    if undo_merge is not None:
        event = queue.undo_merge(store, undo_merge)
        return echo_json(event) if as_json else typer.echo(f"undone merge {event['merge']}")
    if pair is not None and dry_run:
        plan = queue.preview(store, pair, keep, merge, title, summary)
        return echo_json(plan) if as_json else typer.echo(_preview_text(plan))
    if pair is not None:
        event = queue.decide(store, pair, keep, merge, title, summary)
        if as_json:
            return echo_json(event)
        return typer.echo(f"{event['pair']}: kept both" if event["event"] == "kept_both"
                          else f"{event['pair']}: merge {event['merge']} (undo with "
                               f"`scenes review --undo {event['merge']}`)")
    rows = queue.merges(store) if list_merges else queue.pending_pairs(store)
    if as_json:
        return echo_json(rows)
    if not rows:
        return typer.echo("no merges" if list_merges else "the review queue is empty")
    for row in rows:
        typer.echo(_merge_row(row) if list_merges else _pair_text(row))


def _preview_text(plan: dict) -> str:
    if plan["event"] == "kept_both":
        return f"{plan['pair']}: would keep both; nothing is archived (nothing was written)"
    made = plan["created"]
    lines = [f"{plan['pair']}: would archive {', '.join(plan['retired'])}"]
    lines.append(f"  new memory {made['id']}: {made['title']}" if made
                 else f"  keeps {plan['kept']} as it is")
    lines.append(f"  the sources go to {plan['evidence_to']} (nothing was written)")
    return "\n".join(lines)


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
