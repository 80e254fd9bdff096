"""What the page draws from the services' data (docs/DESIGN.md "The page"): a scene's
Markdown as safe HTML, a diff as lines with a kind, a scene's timeline as dated entries, and
the two pictures (heat over batches, memories per day) as inline SVG, so that they show
with JavaScript off and need no file from anywhere.

Scene text is a person's or a model's: raw HTML in it is shown as text, never run
(markdown-it with ``html`` off; its link check refuses ``javascript:`` links), and every
text put into SVG is escaped.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from html import escape

from markdown_it import MarkdownIt

from scene_engine.core.periods import PERIOD

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
# A day, a month, quarter, year or span of years (``core.periods``: the rollup's digests,
# ``- 2025-Q3 (digest): ...``, are entries too), then the text.
_DATED = re.compile(rf"^\s*[-*]\s+(?:(\d{{4}}-\d{{2}}-\d{{2}})(?:[ T][\d:]+)?:?|"
                    rf"({PERIOD}(?: \(digest\))?):)\s*(.*)$")
_TIMELINE = re.compile(r"^#+\s+Timeline\b")
# Eight colours that stay apart for most kinds of colour blindness (Okabe and Ito, 2008).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")


def markdown(text: str) -> str:
    """``text`` (CommonMark, tables) as HTML; raw HTML in it escaped."""
    return _MARKDOWN.render(text)


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """``[(kind, line)]`` of a unified diff: kind "add", "del", "hunk", "file" or "same"."""
    rows = []
    for line in diff.splitlines():
        if line.startswith(("diff --git", "index ", "--- ", "+++ ", "new file", "deleted file",
                            "similarity", "rename ")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        rows.append((kind, line))
    return rows


_TICKS = re.compile(r"`([^`]+)`")


def local(text: str | None, tz: tzinfo, minutes: bool = True) -> str:
    """An ISO timestamp (a memory's ``created_at``, a commit's time) in the store's time
    zone ``tz``, as ``YYYY-MM-DD HH:MM`` (``minutes`` off: the day), as the timelines, the
    pictures and ``scenes trace`` say it; a text that is no timestamp is cut as it is."""
    text = text or ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text[:16 if minutes else 10].replace("T", " ")
    if moment.tzinfo is not None:
        moment = moment.astimezone(tz)
    return moment.strftime("%Y-%m-%d %H:%M" if minutes else "%Y-%m-%d")


def said(text: str) -> str:
    """A service's message as HTML: escaped, its ```command``` spans as ``<code>`` (the
    command line's messages name commands that way)."""
    return _TICKS.sub(r"<code>\1</code>", escape(text or ""))


def timeline(body: str) -> list[tuple[str, str]]:
    """The dated entries of a scene's timeline section(s) (``## Timeline``), in file order:
    ``[(YYYY-MM-DD, text)]``; a scene with no such section gives its dated bullets
    anywhere."""
    lines = body.splitlines()
    inside, found = False, []
    for line in lines:
        if line.startswith("#"):
            inside = bool(_TIMELINE.match(line))
            continue
        match = _DATED.match(line)
        if inside and match:
            found.append(_entry(match))
    if found:
        return found
    return [_entry(m) for m in map(_DATED.match, lines) if m]


def _entry(match: re.Match) -> tuple[str, str]:
    """(when, text) of a ``_DATED`` line: the day, or the period with "(digest)"."""
    return match.group(1) or match.group(2), match.group(3)


def _cut(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters, an ellipsis where it was cut (a CJK
    character counted twice: it is drawn about twice as wide)."""
    width, out = 0, list[str]()
    for char in text:
        width += 2 if ord(char) > 0x2E80 else 1
        if width > chars:
            return "".join(out) + "…"
        out.append(char)
    return text


def heat_svg(data: dict, width: int = 720, height: int = 220) -> str:
    """Lines of heat per scene over batches (``services.pages.heat_over_batches``) with a
    legend, as an ``<svg>`` element; "" when there is no batch."""
    batches, heat = data["batches"], data["heat"]
    values = [v for series in heat.values() for v in series if v is not None]
    if not batches or not values:
        return ""
    left, right, top, bottom = 36, 190, 12, 34
    top_value = max(max(values), 1)
    span = max(len(batches) - 1, 1)

    def x(i: int) -> float:
        return left + (width - left - right) * i / span

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - v / top_value)

    parts = [_axes(width, height, left, right, top, bottom, top_value, "heat")]
    for i, number in enumerate(batches):
        if len(batches) <= 12 or i % max(1, len(batches) // 10) == 0 or i == len(batches) - 1:
            parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 14}" class="tick" '
                         f'text-anchor="middle">{number}</text>')
    parts.append(f'<text x="{(width - right + left) / 2:.0f}" y="{height - 3}" class="axis" '
                 'text-anchor="middle">batch</text>')
    for n, (name, series) in enumerate(heat.items()):
        colour = PALETTE[n % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(series) if v is not None)
        if points:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                         f'points="{points}"><title>{escape(name)}</title></polyline>')
        label = escape(name[:-3] if name.endswith(".md") else name)
        parts.append(f'<rect x="{width - right + 12}" y="{top + 16 * n}" width="10" '
                     f'height="10" fill="{colour}"/><text x="{width - right + 27}" '
                     f'y="{top + 16 * n + 9}" class="legend">{_cut(label, 24)}'
                     f'<title>{escape(name)}</title></text>')
    return _svg(width, height, "Heat of the hottest scenes after each batch", parts)


def days_svg(rows: list[dict], width: int = 720, height: int = 180) -> str:
    """Bars of memories per day, folded and pending stacked
    (``services.pages.memories_per_day``), as an ``<svg>`` element; "" when there is none."""
    if not rows:
        return ""
    left, right, top, bottom = 36, 110, 12, 28
    most = max(max(r["folded"] + r["pending"] for r in rows), 1)
    step = (width - left - right) / len(rows)
    bar = max(step * 0.8, 1.0)
    parts = [_axes(width, height, left, right, top, bottom, most, "memories")]
    scale = (height - top - bottom) / most
    for i, row in enumerate(rows):
        x = left + i * step
        base = height - bottom
        for kind, colour in (("folded", PALETTE[0]), ("pending", PALETTE[1])):
            tall = row[kind] * scale
            if tall:
                parts.append(f'<rect x="{x:.1f}" y="{base - tall:.1f}" width="{bar:.1f}" '
                             f'height="{tall:.1f}" fill="{colour}"><title>{row["day"]}: '
                             f'{row[kind]} {kind}</title></rect>')
                base -= tall
    for i in (0, len(rows) - 1):
        parts.append(f'<text x="{left + i * step + bar / 2:.1f}" y="{height - 10}" '
                     f'class="tick" text-anchor="middle">{rows[i]["day"]}</text>')
    for n, (kind, colour) in enumerate((("folded", PALETTE[0]), ("pending", PALETTE[1]))):
        parts.append(f'<rect x="{width - right + 12}" y="{top + 16 * n}" width="10" '
                     f'height="10" fill="{colour}"/><text x="{width - right + 27}" '
                     f'y="{top + 16 * n + 9}" class="legend">{kind}</text>')
    return _svg(width, height, "Memories per day, folded and pending", parts)


def _axes(width: int, height: int, left: int, right: int, top: int, bottom: int,
          most: float, name: str) -> str:
    """The two axes, the top value and the y axis name."""
    return (f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
            f'y2="{height - bottom}" class="axisline"/><line x1="{left}" y1="{top}" '
            f'x2="{left}" y2="{height - bottom}" class="axisline"/>'
            f'<text x="{left - 6}" y="{top + 8}" class="tick" text-anchor="end">'
            f'{most:g}</text><text x="{left - 6}" y="{height - bottom}" class="tick" '
            f'text-anchor="end">0</text><text x="10" y="{(height - bottom + top) / 2:.0f}" '
            f'class="axis" transform="rotate(-90 10 {(height - bottom + top) / 2:.0f})" '
            f'text-anchor="middle">{name}</text>')


def _svg(width: int, height: int, title: str, parts: list[str]) -> str:
    return (f'<svg class="picture" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>{escape(title)}</title>{"".join(parts)}</svg>')
