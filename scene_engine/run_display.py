"""What ``scenes run`` shows while it works: one progress line that says what is happening
(loading the model client, waiting for the model, retry N of M in S s, repair round) on a
terminal, and with ``-v`` every tool call as it happens.

Lines for a person (a committed batch, ``-v`` events) are printed above the progress line, never
on it; the caller prints errors after the display is closed, so they stand on their own line.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .transcript import describe_event

__all__ = ["RunDisplay", "status_of"]


def status_of(kind: str, data: dict, batch: int | None) -> str | None:
    """The progress line's text after an event of the model exchange, or None to keep it.

    ``kind``/``data``: as in ``transcript``; ``batch``: the batch number shown, if known.
    """
    prefix = f"batch {batch}: " if batch else ""
    if kind == "request":
        return f"{prefix}waiting for the model (request {data['call']})"
    if kind == "retry":
        return (f"{prefix}retry {data['retry']} of {data['of']} in {data['pause']:g} s "
                f"({data['reason']})")
    if kind == "repair":
        return f"{prefix}repair round {data['round']}"
    if kind == "tool":
        return f"{prefix}model working: {data['name']}"
    if kind == "truncated":
        return f"{prefix}reply cut off; asking again"
    return None


class RunDisplay:
    """The display of one ``run``: ``status(text)``, ``note(line)``, ``advance(result)`` and
    ``listener(kind, data)`` (give it to the backend). Use as a context manager.

    ``total``: batches expected; ``memories``: memories pending; ``verbose``: print every tool
    call; ``console``: where to draw (default: stderr). With no terminal there is no progress
    line: notes are plain lines on stderr.
    """

    def __init__(self, total: int, memories: int, verbose: bool = False,
                 console: Console | None = None):
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self.total, self.memories, self.verbose = total, memories, verbose
        self.batch: int | None = None
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> RunDisplay:
        if self.console.is_terminal and self.total:
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(bar_width=20),
                MofNCompleteColumn(), TextColumn("batches"), TimeElapsedColumn(),
                console=self.console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task("starting", total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()   # transient: the line is gone before any error is printed
            self._progress = None

    def status(self, text: str) -> None:
        """Say what is happening now (the progress line; nothing without a terminal)."""
        if self._progress is not None:
            self._progress.update(self._task, description=text)

    def note(self, line: str) -> None:
        """A line for the person, above the progress line (plain, never wrapped mid-word)."""
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def advance(self, result) -> None:
        """A batch was committed: count it and say what it did."""
        if self._progress is not None:
            self._progress.advance(self._task)
        self.note(f"batch {result.number}: {len(result.memory_ids)} memories, "
                  + ", ".join(f"{v} {k}" for k, v in result.counts.items()))
        self.batch = result.number + 1

    def listener(self, kind: str, data: dict) -> None:
        """For ``LLMBackend.listener``: update the status; with ``verbose``, print the events a
        person follows (tool calls, errors, retries, repair rounds)."""
        text = status_of(kind, data, self.batch)
        if text:
            self.status(text)
        if self.verbose and kind in ("tool", "error", "retry", "truncated", "repair"):
            line = describe_event(kind, data)
            if line:
                self.note(f"  {line}")

    @contextlib.contextmanager
    def step(self, text: str) -> Iterator[None]:
        """Show ``text`` while the block runs (e.g. loading the model client)."""
        self.status(text)
        yield
