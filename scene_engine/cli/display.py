"""What ``scenes run`` shows while it works: one progress line that says what is happening
(the batch being folded, loading the model client, waiting for the model, retry N of M in
S s, repair round) on a terminal, and with ``-v`` every tool call as it happens.

The line is drawn when what it says changes, once, not redrawn ten times a second: a terminal
recorded to a file (``script``, a CI log) holds each state once. Lines for a person (a
committed batch, ``-v`` events) are printed above the progress line, never on it; the caller
prints errors after the display is closed, so they stand on their own line.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console

from scene_engine.core.plural import count
from scene_engine.services.listing import row_cells

if TYPE_CHECKING:   # loaded where a progress line or a table is drawn, not for `list`
    from rich.progress import Progress, TaskID

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

    ``total``: batches expected; ``memories``: memories pending; ``size``: memories per
    batch; ``verbose``: print every tool call; ``console``: where to draw (default: stderr).
    With no terminal there is no progress line: notes are plain lines on stderr.
    """

    def __init__(self, total: int, memories: int, verbose: bool = False,
                 console: Console | None = None, size: int | None = None):
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self.total, self.memories, self.verbose = total, memories, verbose
        self.size = size or memories
        self.batch: int | None = None
        self._left = memories          # memories not folded yet, as far as the display knows
        self._done = 0                 # batches committed
        self._shown = ""
        self._progress: Progress | None = None
        self._started = False          # the line is first drawn by the first ``status``
        self._task: TaskID | None = None   # the progress line's one task

    def __enter__(self) -> RunDisplay:
        if self.console.is_terminal and self.total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            # No auto-refresh: the line is drawn when it changes (``_draw``), not 10 times a
            # second with the same words; no clock column, which only a redraw would move.
            progress = self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(bar_width=20),
                MofNCompleteColumn(), TextColumn("batches"),
                console=self.console, transient=True, auto_refresh=False)
            self._task = progress.add_task("", total=self.total)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            if self._started:       # transient: the line is gone before any error is printed
                # Hidden first: stopping draws the line a last time, and it was drawn already.
                self._update(visible=False)
                self._progress.stop()
            self._progress = None

    def status(self, text: str, draw: bool = True) -> None:
        """Say what is happening now (the progress line; nothing without a terminal). The
        line is drawn again only when ``text`` differs from what it says (and ``draw``: else
        the next line printed above it draws it)."""
        if self._progress is not None and text != self._shown:
            self._shown = text
            self._update(description=text, refresh=draw and self._started)
            if not self._started:
                self._started = True
                self._progress.start()   # draws it, saying what is happening from the start

    def starting(self, draw: bool = True) -> None:
        """A batch starts: "batch N: folding K memories" (a model's events then say more)."""
        if self._left > 0:
            prefix = f"batch {self.batch}: " if self.batch else ""
            self.status(f"{prefix}folding {count(min(self.size, self._left), 'memory')}", draw)
        else:
            self.status("all pending memories folded", draw)

    def note(self, line: str) -> None:
        """A line for the person, above the progress line (plain, never wrapped mid-word);
        printing it draws the progress line below it once, as it is now."""
        if self._progress is not None and self._started:
            self._sync(self._progress)
            self._progress.console.print(line, markup=False, highlight=False)
        elif self._progress is not None:
            self.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def _update(self, **changes: Any) -> None:
        """``Progress.update`` of the progress line's task (nothing without the line)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, **changes)

    @staticmethod
    def _sync(progress: Progress) -> None:
        """Give Rich's live area the progress line as it is now without drawing it: a line
        printed above redraws what the last draw showed (a stale count and text)."""
        render = getattr(getattr(progress, "live", None), "_live_render", None)
        if render is not None and hasattr(render, "set_renderable"):
            render.set_renderable(progress.get_renderable())
        else:                    # another Rich: draw it now, the print draws it once more
            progress.refresh()

    def advance(self, result) -> None:
        """A batch was committed: count it, say what it did and what comes next (the line
        printed above the progress line draws it once, with all three)."""
        if self._progress is not None:
            self._update(advance=1)   # drawn by the note below
        self.batch = result.number + 1
        self._left -= len(result.memory_ids)
        self._done += 1
        if self.total and self._done >= self.total:   # the last planned batch (--max-batches)
            self.status(f"{count(self._done, 'batch')} committed", draw=False)
        else:
            self.starting(draw=False)
        self.note(f"batch {result.number}: {count(len(result.memory_ids), 'memory')}, "
                  + ", ".join(f"{v} {k}" for k, v in result.counts.items()))

    def listener(self, kind: str, data: dict) -> None:
        """For ``LLMBackend.listener``: update the status; with ``verbose``, print the events a
        person follows (tool calls, errors, retries, repair rounds)."""
        text = status_of(kind, data, self.batch)
        if text:
            self.status(text)
        if self.verbose and kind in ("tool", "error", "retry", "truncated", "repair"):
            from scene_engine.services.history import describe_event

            line = describe_event(kind, data)
            if line:
                self.note(f"  {line}")

    @contextlib.contextmanager
    def step(self, text: str) -> Iterator[None]:
        """Show ``text`` while the block runs (e.g. loading the model client)."""
        self.status(text)
        yield


def print_scene_rows(rows: list[dict]) -> None:
    """``scenes list`` for a person: a table on a terminal (a name is never cut: the summary
    wraps to leave room for it), whole values with a tab between in a pipe or a file. More
    rows than a screen holds are drawn as plain aligned columns (``scene_columns``): the same
    cells, without the frame, since Rich measures every cell of every row first (18 s for
    10,000 scenes on a small machine, issue 23)."""
    console = Console()
    cells = [row_cells(row) for row in rows]
    if not console.is_terminal:   # a pipe or a file: whole values, a tab between, no frame
        for line in [("name", "heat", "updated", "summary"), *cells]:
            print("\t".join(line))
        return
    if len(cells) > console.height:   # written as it is made: the first screen at once
        lines = scene_column_lines(cells, console.width)
        while chunk := list(itertools.islice(lines, 500)):
            console.file.write("".join(line + "\n" for line in chunk))
            console.file.flush()
        return
    from rich.table import Table

    table = Table(show_lines=False)
    table.add_column("name", no_wrap=True, min_width=max((len(c[0]) for c in cells), default=4))
    table.add_column("heat", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("summary", ratio=1)
    for cell in cells:
        table.add_row(*cell)
    console.print(table)


SUMMARY_MIN = 20     # columns the summary keeps however long the names are


def scene_columns(cells: list[tuple[str, str, str, str]], width: int) -> str:
    """``cells`` (name, heat, updated, summary) as text for a terminal ``width`` columns wide:
    a heading, then one row each, columns two spaces apart and as wide as their widest cell
    (wide characters counted as two), the summary wrapped at spaces (a word wider than its
    column at characters) with its further lines under it. Control characters show as
    U+FFFD (a file name could hold a terminal escape)."""
    return "".join(line + "\n" for line in scene_column_lines(cells, width))


def scene_column_lines(cells: list[tuple[str, str, str, str]], width: int) -> Iterator[str]:
    """The lines of ``scene_columns`` (without their line breaks), each made when asked for
    (the column widths first: they need every row's first three cells)."""
    rows = [(_printable(a), _printable(b), _printable(c), _printable(d))
            for a, b, c, d in [("name", "heat", "updated", "summary"), *cells]]
    sizes = [(_cells(a), _cells(b), _cells(c)) for a, b, c, _ in rows]
    widths = [max(size[k] for size in sizes) for k in range(3)]
    room = max(SUMMARY_MIN, width - sum(widths) - 2 * 3 - 1)
    indent = " " * (sum(widths) + 2 * 3)
    name_w, heat_w, updated_w = widths
    for (name, heat, updated, summary), (name_c, heat_c, updated_c) in zip(rows, sizes,
                                                                           strict=True):
        lead = (f"{name}{' ' * (name_w - name_c)}  {' ' * (heat_w - heat_c)}{heat}  "
                f"{updated}{' ' * (updated_w - updated_c)}")   # heat to the right
        wrapped = _wrap(summary, room) or [""]
        yield f"{lead}  {wrapped[0]}".rstrip()
        for line in wrapped[1:]:
            yield f"{indent}{line}"


class _Widths(dict):
    """Terminal cells of each character met (``rich.cells.get_character_cell_size``), read
    once a process."""

    def __missing__(self, character: str) -> int:
        width = self[character] = get_character_cell_size(character)
        return width


_WIDTHS = _Widths()


def _cells(text: str) -> int:
    """Terminal cells of ``text``, as ``rich.cells.cell_len`` counts them: printable ASCII
    one cell a character; a text without a zero-width joiner or variation selector 16 the
    sum of its characters' (what Rich sums too, here without a Python call a character:
    10,000 rows have a quarter of a million words, half of them CJK); else Rich's own."""
    if text.isascii() and text.isprintable():
        return len(text)
    if "\u200d" in text or "\ufe0f" in text:
        return cell_len(text)
    return sum(map(_WIDTHS.__getitem__, text))


def _each_cells(word: str) -> list[int]:
    """The cells of each character of ``word`` (``rich.cells.cell_len`` of each)."""
    if "\u200d" in word or "\ufe0f" in word:
        return [cell_len(ch) for ch in word]
    return list(map(_WIDTHS.__getitem__, word))


def _printable(text: str) -> str:
    return "".join("\ufffd" if unicodedata.category(ch)[0] == "C" else ch for ch in text) \
        if not text.isprintable() else text


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken at spaces, a longer word at
    characters (CJK text has no spaces)."""
    measure = len if text.isascii() and text.isprintable() else _cells
    if text[:1] not in ("", " ") and measure(text) <= width:
        return [text]                 # what the loop below gives a line that fits
    lines: list[str] = []
    line, used = "", 0
    for word in text.split(" "):
        size = measure(word)
        if line and used + 1 + size <= width:
            line, used = f"{line} {word}", used + 1 + size
            continue
        if line:
            lines.append(line)
        line, used = "", 0
        if size > width:              # a word wider than the column: cut it where it fits
            each = [1] * len(word) if measure is len else _each_cells(word)
            start = 0
            while size > width:
                cut, taken = start, 0
                while cut < len(word) and taken + each[cut] <= width:
                    taken += each[cut]
                    cut += 1
                cut = max(cut, start + 1)
                lines.append(word[start:cut])
                start = cut
                size = measure(word[start:])
            word = word[start:]
        line, used = word, size
    if line:
        lines.append(line)
    return lines


class ByteProgress:
    """A progress bar over the bytes of an input being read (``scenes extract`` of a large
    export), drawn on stderr only when it is a terminal and only once reading takes a
    moment; ``update(done, total)`` is the services' progress callback."""

    def __init__(self, label: str, console: Console | None = None):
        self.label = label
        self.console = console or Console(stderr=True, highlight=False)
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> ByteProgress:
        return self

    def update(self, done: int, total: int) -> None:
        """Draw ``done`` of ``total`` bytes (the bar starts at the first call past 1 MB)."""
        if not self.console.is_terminal or total < (1 << 20):
            return
        if self.progress is None:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(TextColumn(self.label), BarColumn(), DownloadColumn(),
                                     TimeRemainingColumn(), console=self.console,
                                     transient=True)
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=total)
        assert self.task is not None, "the task is made with the bar"
        self.progress.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
