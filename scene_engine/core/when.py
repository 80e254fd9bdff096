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
claimed). "Recently" and "a few weeks ago" are left alone. The English forms follow how
LoCoMo's annotators wrote such answers (Maharana et al., 2024); Chinese day, week, month and
year words (昨天, 上周, 上个月, 去年 ...) are resolved the same way and written the Chinese
way: "昨天（2024年5月6日）".
"""

from __future__ import annotations

import functools
import re
from datetime import date, timedelta

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
MONTH_ABBREVIATIONS = tuple(m[:3] for m in MONTHS)   # "7 May" in the offline month digests
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
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


@functools.lru_cache(maxsize=32768)
def resolve(text: str, day: date) -> str:
    """``text`` with each relative time expression it holds followed by its absolute time in
    brackets, taking ``day`` (the day it was said) as today. An expression already followed by a
    bracket is left alone, so resolving twice changes nothing. Cached (recall resolves the same
    scene sentences for every question)."""
    text = _EXPRESSION.sub(lambda m: f"{m.group(0)} ({_absolute(m, day)})"
                           if _absolute(m, day) else m.group(0), text)
    if text.isascii():
        return text
    return _ZH_EXPRESSION.sub(lambda m: f"{m.group(0)}（{_zh_absolute(m.group(0), day)}）",
                              text)


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
        return f"{MONTHS[month % 12]} {month // 12}"
    return str(day.year + step)


# Chinese: the day words and the "last/next week, month, year" words; written the Chinese way
# ("昨天（2024年5月6日）"), in full-width brackets.
_ZH_DAYS = {"前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0, "明天": 1, "明日": 1,
            "后天": 2}
_ZH_WEEKS = {"上周": "之前", "上个星期": "之前", "上星期": "之前", "上个礼拜": "之前",
             "下周": "之后", "下个星期": "之后", "下星期": "之后", "本周": "所在", "这周": "所在"}
_ZH_MONTHS = {"上个月": -1, "上月": -1, "下个月": 1, "下月": 1, "这个月": 0, "本月": 0}
_ZH_YEARS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_ZH_EXPRESSION = re.compile(
    "(" + "|".join(sorted({*_ZH_DAYS, *_ZH_WEEKS, *_ZH_MONTHS, *_ZH_YEARS}, key=len,
                          reverse=True)) + ")(?![（(])")


def _zh_day(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


def _zh_absolute(word: str, day: date) -> str:
    if word in _ZH_DAYS:
        return _zh_day(day + timedelta(days=_ZH_DAYS[word]))
    if word in _ZH_WEEKS:
        return f"{_zh_day(day)}{_ZH_WEEKS[word]}的一周"
    if word in _ZH_MONTHS:
        month = day.year * 12 + day.month - 1 + _ZH_MONTHS[word]
        return f"{month // 12}年{month % 12 + 1}月"
    return f"{day.year + _ZH_YEARS[word]}年"


def _ago(count: int, unit: str, day: date) -> str:
    if unit == "day":
        return readable(day - timedelta(days=count))
    if unit == "week":
        return f"{count} week{'s' * (count > 1)} before {readable(day)}"
    if unit == "month":
        month = day.year * 12 + day.month - 1 - count
        return f"{MONTHS[month % 12]} {month // 12}"
    return str(day.year - count)
