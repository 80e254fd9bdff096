"""Reading a large JSON array one element at a time, in bounded memory (issue 38: a 500 MB
``conversations.json`` is read as a stream).

``elements`` decodes the bytes incrementally and hands each top-level element to
``json.JSONDecoder.raw_decode`` as soon as it is whole, so what is held is one element and at
most a chunk or two of text, never the file. No third-party parser is needed for this; the
standard decoder does the work, this module only feeds it.

Bytes that are not UTF-8 are kept (as ``surrogateescape`` code points) so the element around
them still parses; that element is then marked broken (``Element.error``) rather than read
with a character guessed. A file cut off (an export whose download stopped) ends with one
broken element: everything before it was read.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

CHUNK = 1 << 20                     # bytes read at a time
_BAD_BYTE = re.compile("[\udc80-\udcff]")
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Element:
    """One top-level element. ``index``: 1-based; ``offset``: the character where it starts
    in the file; ``value``: the parsed value (None when it could not be parsed);
    ``error``: why it is broken (None when whole)."""

    index: int
    offset: int
    value: Any = None
    error: str | None = None


class _Buffer:
    """Decoded text of a byte stream, filled on demand; ``base``: characters dropped from
    the front (so ``base + pos`` is a position in the whole file)."""

    def __init__(self, stream: IO[bytes], progress: Callable[[int], None] | None):
        self.stream = stream
        self.progress = progress
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.text = ""
        self.base = 0
        self.eof = False

    def fill(self, at_least: int = CHUNK) -> None:
        """Read until ``at_least`` more characters are held, or the end of the stream."""
        wanted = len(self.text) + at_least
        while len(self.text) < wanted and not self.eof:
            chunk = self.stream.read(CHUNK)
            if self.progress is not None and chunk:
                self.progress(len(chunk))
            if not chunk:
                self.eof = True
                self.text += self.decoder.decode(b"", final=True)
            else:
                self.text += self.decoder.decode(chunk)

    def skip_ws(self, pos: int) -> int:
        """The first position at or after ``pos`` that is not whitespace (filling as
        needed); ``len(text)`` at the end of the stream."""
        while True:
            pos = _WS.match(self.text, pos).end()   # type: ignore[union-attr]
            if pos < len(self.text) or self.eof:
                return pos
            self.fill()

    def drop(self, pos: int) -> int:
        """Forget the text before ``pos``; returns the same place in the shorter text."""
        self.text = self.text[pos:]
        self.base += pos
        return 0


def elements(stream: IO[bytes], progress: Callable[[int], None] | None = None
             ) -> Iterator[Element]:
    """The elements of the JSON array in ``stream``, in order; a top-level object is one
    element. ``progress(n)``: called with the bytes of each chunk read. A syntax error (a
    cut-off file) yields one ``Element`` with its ``error`` and ends the stream: the text
    after it cannot be told apart into elements. Never raises for bad input."""
    buf = _Buffer(stream, progress)
    pos = buf.skip_ws(0)
    if pos < len(buf.text) and buf.text[pos] == "\ufeff":
        pos = buf.skip_ws(pos + 1)
    if pos >= len(buf.text):
        return
    if buf.text[pos] != "[":
        yield _one(buf, pos, 1)[0]
        return
    pos, index = pos + 1, 0
    while True:
        pos = buf.skip_ws(pos)
        if pos < len(buf.text) and buf.text[pos] == "]":
            return
        if index and pos < len(buf.text) and buf.text[pos] == ",":
            pos = buf.skip_ws(pos + 1)
        if pos >= len(buf.text):
            yield Element(index + 1, buf.base + pos, error="the file ends before the list "
                                                            "closes (cut off?)")
            return
        index += 1
        element, pos = _one(buf, pos, index)
        yield element
        if element.error is not None and element.value is None:
            return
        if pos > CHUNK:
            pos = buf.drop(pos)


def _one(buf: _Buffer, pos: int, index: int) -> tuple[Element, int]:
    """Parse the element starting at ``pos``, reading more text while it is incomplete.
    Returns it and the position after it (in ``buf.text`` as it is now)."""
    while True:
        try:
            value, end = _DECODER.raw_decode(buf.text, pos)
        except json.JSONDecodeError as exc:
            incomplete = exc.msg.startswith("Unterminated string") or \
                exc.pos >= len(buf.text) - 1
            if incomplete and not buf.eof:
                buf.fill(max(CHUNK, len(buf.text) - pos))   # doubling: linear overall
                continue
            where = "the file ends inside it (cut off?)" if incomplete else \
                f"{exc.msg} at character {buf.base + exc.pos}"
            return Element(index, buf.base + pos, error=f"not valid JSON: {where}"), pos
        # A number may stop at a chunk's end; anything else ends at its own bracket or quote.
        if end >= len(buf.text) and not buf.eof and isinstance(value, int | float):
            buf.fill()
            continue
        bad = _BAD_BYTE.search(buf.text, pos, end)
        if bad is not None:
            return Element(index, buf.base + pos, value, "a byte that is not UTF-8 at "
                                                         f"character {buf.base + bad.start()}"), end
        return Element(index, buf.base + pos, value), end
