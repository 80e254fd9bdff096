"""Periods of a scene's timeline: the day or stretch of time a timeline line stands for.

A timeline line is led by a day or a period (docs/DESIGN.md "Scene files"; seed 000's
hierarchical rollups): ``2026-05-07`` (a day), ``2026-05`` (a month digest), ``2026-Q2`` (a
quarter), ``2026`` (a year), ``2026–2030`` (a span of years: what years of digests roll into
once a scene is full of them; an ASCII ``-`` between the years is read too). One grammar for
every layer that reads these lines: the rollup that writes them, the coverage rule that judges
them, ``trace`` and ``blame`` that find a digest's memories by its period, and recall.
"""

from __future__ import annotations

import calendar
import re

from scene_engine.core.when import MONTH_ABBREVIATIONS

# Months 01–12 and days 01–31 only: ``2026-13`` or ``2026-05-40`` is no period (a person's
# typo stays text, not a date the rollup or recall would trust).
PERIOD = r"\d{4}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?|-Q[1-4]|[–-]\d{4})?"
SPAN_DASH = "–"
_SPAN = re.compile(r"^(\d{4})[–-](\d{4})$")


def span(first: str, last: str) -> str:
    """The period of the years ``first`` to ``last`` (``YYYY`` each): ``2026–2030``, or the
    year itself when they are one."""
    return first if first == last else f"{first}{SPAN_DASH}{last}"


def years(period: str) -> tuple[int, int] | None:
    """(first year, last year) of a span of years (``2026–2030``), else None (a reversed
    span, ``2030–2026``, is none)."""
    found = _SPAN.match(period)
    if not found or int(found.group(1)) > int(found.group(2)):
        return None
    return int(found.group(1)), int(found.group(2))


def is_span(period: str) -> bool:
    return years(period) is not None


def covers(period: str, day: str) -> bool:
    """True when ``day`` (``YYYY-MM-DD``, or a period's first day) lies in ``period``
    (a span of years, ``YYYY``, ``YYYY-Qn``, ``YYYY-MM`` or a day): the lines a digest of
    ``period`` may stand for."""
    if (stretch := years(period)) is not None:
        return day[:4].isdigit() and stretch[0] <= int(day[:4]) <= stretch[1]
    if "-Q" in period:
        return (day[:4] == period[:4] and len(day) >= 7
                and (int(day[5:7]) - 1) // 3 + 1 == int(period[-1]))
    return day.startswith(period)


def first_day(period: str) -> str:
    """The first day of a period as ``YYYY-MM-DD`` (``2024-Q2`` -> ``2024-04-01``, ``2024``
    and ``2024–2027`` -> ``2024-01-01``, ``2024-03`` -> ``2024-03-01``), or the day itself."""
    if "-Q" in period:
        return f"{period[:4]}-{3 * int(period[-1]) - 2:02d}-01"
    if is_span(period):
        return f"{period[:4]}-01-01"
    return {4: f"{period}-01-01", 7: f"{period}-01"}.get(len(period), period)


def last_day(period: str) -> str:
    """The last day of a period as ``YYYY-MM-DD`` (``2024-Q2`` -> ``2024-06-30``, ``2024``
    -> ``2024-12-31``, ``2024–2027`` -> ``2027-12-31``, ``2024-02`` -> ``2024-02-29``), or
    the day itself: where a summary's span ends and which line is the latest."""
    if (stretch := years(period)) is not None:
        return f"{stretch[1]}-12-31"
    if "-Q" in period:
        return _month_end(int(period[:4]), 3 * int(period[-1]))
    if len(period) == 4:
        return f"{period}-12-31"
    if len(period) == 7:
        return _month_end(int(period[:4]), int(period[5:7]))
    return period


def _month_end(year: int, month: int) -> str:
    return f"{year}-{month:02d}-{calendar.monthrange(year, month)[1]:02d}"


def sort_key(period: str) -> str:
    """Sort key of a day or period: ``2024-Q2`` starts at ``2024-04``, ``2024`` and a span
    from 2024 at ``2024-00`` (so a digest comes before the days it came from)."""
    if "-Q" in period:
        year, quarter = period.split("-Q")
        return f"{year}-{3 * int(quarter) - 2:02d}"
    if is_span(period):
        return f"{period[:4]}-00"
    return period if len(period) != 4 else f"{period}-00"


# A digest fact's dates: "4 Mar: ", "4–29 Mar ×6: ", "4 Jan–29 Mar ×9: " (in a digest of one
# year or less: the digest's year), "4 Mar 2026: ", "4–29 Mar 2026 ×6: ", "4 Mar 2026–29 Jan
# 2027 ×9: " (in a span of years).
_M = "|".join(MONTH_ABBREVIATIONS)
_MONTH = {m: i + 1 for i, m in enumerate(MONTH_ABBREVIATIONS)}
_IN_YEAR = re.compile(rf"^(\d{{1,2}})(?:–(\d{{1,2}}))? ({_M})(?:–(\d{{1,2}}) ({_M}))?(?: (\d{{4}}))?"
                      rf"(?: ×(\d+))?: (.*)$", re.S)
_ACROSS = re.compile(rf"^(\d{{1,2}}) ({_M}) (\d{{4}})–(\d{{1,2}}) ({_M}) (\d{{4}})(?: ×(\d+))?: (.*)$",
                     re.S)


def parse_fact(said: str, period: str) -> tuple[str, str, int, str] | None:
    """(first day, last day as ``YYYY-MM-DD``, times, text) of one fact of a digest of
    ``period`` (``say_fact``'s form), or None when it is not led by its dates."""
    if (found := _ACROSS.match(said)) is not None:
        d1, m1, y1, d2, m2, y2, times, text = found.groups()
        return (f"{y1}-{_MONTH[m1]:02d}-{int(d1):02d}", f"{y2}-{_MONTH[m2]:02d}-{int(d2):02d}",
                int(times or 1), text)
    if (found := _IN_YEAR.match(said)) is not None:
        d1, d2, m1, d3, m3, year, times, text = found.groups()
        year = year or period[:4]
        start = f"{year}-{_MONTH[m1]:02d}-{int(d1):02d}"
        end = f"{year}-{_MONTH[m3 or m1]:02d}-{int(d3 or d2 or d1):02d}"
        return start, end, int(times or 1), text
    return None


def say_fact(start: str, end: str, times: int, text: str, in_span: bool = False) -> str:
    """``4 Mar: text``, ``4–29 Mar ×6: text``, ``4 Jan–29 Mar ×9: text`` for a fact of a digest
    of one year or less (the digest's year); in a span of years (``in_span``) with its year or
    years: ``4–29 Mar 2026 ×6: text``, ``4 Mar 2026–29 Jan 2027 ×9: text``."""
    def day(d: str) -> tuple[int, str, str]:
        return int(d[8:10]), MONTH_ABBREVIATIONS[int(d[5:7]) - 1], d[:4]

    (d1, m1, y1), (d2, m2, y2) = day(start), day(end)
    count = f" ×{times}" if times > 1 else ""
    if y1 != y2:
        return f"{d1} {m1} {y1}–{d2} {m2} {y2}{count}: {text}"
    if start == end:
        when = f"{d1} {m1}"
    else:
        when = f"{d1}–{d2} {m1}" if m1 == m2 else f"{d1} {m1}–{d2} {m2}"
    return f"{when}{' ' + y1 if in_span else ''}{count}: {text}"


# A digest line: "- 2026-03 (digest): 4–29 Mar ×6: fact; 15 Mar: fact" (the rollup joins its
# facts with "; ", ``offline.rollup.SEPARATOR``).
_DIGEST_LINE = re.compile(rf"^\s*[-*+]\s*({PERIOD}) \(digest\)\s*:\s*(.*)$", re.S)
FACT_SEPARATOR = "; "


def digest_facts(line: str) -> list[str] | None:
    """What a digest line states, fact by fact, each without its dates (``parse_fact``; a
    part not led by its dates whole), or None for a line that is no digest. A digest holds
    facts of different days side by side: a reader that judges what a line says (the
    coverage of a memory, a "not" in it) judges each fact on its own."""
    found = _DIGEST_LINE.match(line)
    if found is None:
        return None
    out = []
    for part in found.group(2).split(FACT_SEPARATOR):
        parsed = parse_fact(part.strip(), found.group(1))
        text = (parsed[3] if parsed else part).strip()
        if text:
            out.append(text)
    return out
