"""Relative time made absolute: "last week", said on 9 June 2023, is the week before 9 June 2023.

A memory is written on its own day; read months later, "yesterday" or "last Friday" means
nothing unless the reader works it out. ``resolve(text, day)`` adds the absolute time after each
relative expression it can pin down, in brackets, and changes nothing else:

    "Melanie painted a lake sunrise last year."  (said 8 May 2023)
    -> "Melanie painted a lake sunrise last year (2022)."

Only expressions with one meaning are resolved: a day ("yesterday", "three days ago"), a month
("last month", "next month"), a year ("last year", "two years ago"), or a span named by the day it
was said from ("last week" -> "the week before 9 June 2023", "last Friday" -> "the Friday before
25 May 2023": said on a Saturday it may mean yesterday or eight days ago, so no single date is
claimed). "Recently" and "a few weeks ago" are left alone. English only; the rule follows how
LoCoMo's annotators wrote such answers (Maharana et al., 2024).
"""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_COUNT = r"(\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_EXPRESSION = re.compile(
    r"\b(?:(yesterday|today|tonight|tomorrow|last night|this morning)"
    rf"|(last|next|this) (week|weekend|month|year|{'|'.join(_WEEKDAYS)})"
    rf"|{_COUNT} (day|week|month|year)s? ago)\b(?! \()", re.I)


def readable(day: date) -> str:
    """``date(2023, 5, 8)`` -> ``"8 May 2023"``."""
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


@functools.lru_cache(maxsize=32768)
def resolve(text: str, day: date) -> str:
    """``text`` with each relative time expression it holds followed by its absolute time in
    brackets, taking ``day`` (the day it was said) as today. An expression already followed by a
    bracket is left alone, so resolving twice changes nothing. Cached (recall resolves the same
    scene sentences for every question)."""
    return _EXPRESSION.sub(lambda m: f"{m.group(0)} ({_absolute(m, day)})"
                           if _absolute(m, day) else m.group(0), text)


def _absolute(m: re.Match, day: date) -> str | None:
    word, way, unit, count, ago_unit = (g.lower() if g else g for g in m.groups())
    if word:
        shift = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
        return readable(day + timedelta(days=shift))
    if ago_unit:
        return _ago(_NUMBERS.get(count) or int(count), ago_unit, day)
    if unit in _WEEKDAYS:
        if way == "this":
            return None                 # "this Friday": past or coming, unknowable
        side = "before" if way == "last" else "after"
        return f"the {unit.capitalize()} {side} {readable(day)}"
    if unit in ("week", "weekend"):
        side = {"last": "before", "next": "after", "this": "of"}[way]
        return f"the {unit} {side} {readable(day)}"
    step = {"last": -1, "next": 1, "this": 0}[way]
    if unit == "month":
        month = day.year * 12 + day.month - 1 + step
        return f"{_MONTHS[month % 12]} {month // 12}"
    return str(day.year + step)


def _ago(count: int, unit: str, day: date) -> str:
    if unit == "day":
        return readable(day - timedelta(days=count))
    if unit == "week":
        return f"{count} week{'s' * (count > 1)} before {readable(day)}"
    if unit == "month":
        month = day.year * 12 + day.month - 1 - count
        return f"{_MONTHS[month % 12]} {month // 12}"
    return str(day.year - count)
