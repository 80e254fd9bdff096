"""A transcript's date line: a line that is only a date, in the forms people write one.

Pasted and exported chats mark their days in many ways: ``2023-05-08``, ``[8 May 2023]``,
``--- 8 May 2023 ---``, ``# 8 May 2023``, ``**Monday, May 8th, 2023**``, ``8 May 2023,
2:05 pm``, ``1:56 pm on 8 May, 2023`` (LoCoMo's), ``2023年5月8日``, ``Date: 2023/05/08``. Day and month in numbers only (``8/5/2023``) are
not read: which is the day depends on the writer's country.
``date_line`` reads every such line the same way: the decoration around it (brackets,
heading marks, rules, emphasis, a ``Date:`` label), a weekday, ordinal endings and a time of
day are taken off, then what is left must be a whole date, year included (a bare ``8 May``
could be a message's own words). ``conversation`` uses it both to split sessions and to tell a
transcript that starts with a date line from JSON.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time

# Around the date: heading marks, rules, brackets, emphasis, quote marks.
_DECORATION = re.compile(r"^[\s#\-=*_>\[(~|—–【]*(.*?)[\s\])=*_\-~|:.—–】]*$")
_LABEL = re.compile(r"^(?:date|day|session(?: date)?|日期)\s*[:：]\s*", re.I)
_WEEKDAY = re.compile(r"^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|"
                      r"urday|sday|rsday)?\.?,?\s+|^星期[一二三四五六日天]\s*|^周[一二三四五六日天]\s*",
                      re.I)
_WEEKDAY_AFTER = re.compile(r"[,\s]*[(（]?\s*(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                            r"星期[一二三四五六日天]|周[一二三四五六日天])\s*[)）]?$", re.I)
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.I)
_TIME = r"(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))?\s*([ap])?\.?\s*(m)?\.?"
_TIME_FIRST = re.compile(rf"^{_TIME}\s+on\s+(.+)$", re.I)
_TIME_AFTER = re.compile(rf"^(.+?)(?:,|\s+at|\s*@)?\s+{_TIME}$", re.I)
_FORMS = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y", "%Y %B %d", "%Y %b %d")
_SLASHED = re.compile(r"^(\d{4})[/.\-](\d{1,2})[/.\-](\d{1,2})$")
_CHINESE = re.compile(r"^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]$")


def date_line(line: str) -> datetime | None:
    """The instant a transcript line that is only a date names (UTC when it gives no zone),
    else None."""
    inner = _DECORATION.match(line.strip())
    if inner is None:
        return None
    text = _LABEL.sub("", inner.group(1).strip().strip("*_").strip())
    if not text or len(text) > 80 or not any(c.isdigit() for c in text):
        return None
    iso = _iso(text)
    if iso is not None:
        return iso
    text = _ORDINAL.sub(r"\1", _WEEKDAY_AFTER.sub("", _WEEKDAY.sub("", text)))
    text = re.sub(r"\bSept\b", "Sep", text, flags=re.I)    # strptime knows only "Sep"
    day, clock = _split_time(text)
    found = _day(day)
    if found is None or isinstance(clock, bool):     # False: a time that is no time
        return None
    return datetime.combine(found, clock or time(), tzinfo=UTC)


def _iso(text: str) -> datetime | None:
    """``2023-05-08``, ``2023-05-08 14:05``, ``2023-05-08T14:05:00+02:00``."""
    if not re.match(r"^\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _split_time(text: str) -> tuple[str, time | None | bool]:
    """(the date part, the time of day: None when none is given, False when one is given
    that is no time)."""
    for pattern, day_group, first in ((_TIME_FIRST, 6, 1), (_TIME_AFTER, 1, 2)):
        found = pattern.match(text)
        if found is None:
            continue
        hour, minute, second, half, m = found.groups()[first - 1:first + 4]
        if minute is None and not (half and m):    # a bare number: part of the date
            continue
        return found.group(day_group).strip(" ,"), _clock(hour, minute, second, half)
    return text, None


def _clock(hour: str, minute: str | None, second: str | None, half: str | None
           ) -> time | bool:
    """The time of day, 12-hour when ``half`` is "a" or "p"; False when out of range."""
    h, mi, s = int(hour), int(minute or 0), int(second or 0)
    if half:
        if not 1 <= h <= 12:
            return False
        h = h % 12 + (12 if half.lower() == "p" else 0)
    if h > 23 or mi > 59 or s > 59:
        return False
    return time(h, mi, s)


def _day(text: str) -> date | None:
    """The calendar day ``text`` names in full (day, month and year), or None."""
    for pattern in (_SLASHED, _CHINESE):
        found = pattern.match(text)
        if found:
            year, month, day = map(int, found.groups())
            try:
                return date(year, month, day)
            except ValueError:
                return None
    plain = " ".join(text.replace(",", " ").split())
    for form in _FORMS:
        try:
            return datetime.strptime(plain, form).date()
        except ValueError:
            continue
    return None
