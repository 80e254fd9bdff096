"""Relative times made absolute against the day they were said (recall's readable dates)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scene_engine.core.when import resolve

SAID = date(2023, 5, 25)        # a Thursday


@pytest.mark.parametrize(("text", "expected"), [
    ("I went there yesterday.", "I went there yesterday (24 May 2023)."),
    ("Tomorrow we fly.", "Tomorrow (26 May 2023) we fly."),
    ("She ran a race last Saturday.", "She ran a race last Saturday (the Saturday before "
                                      "25 May 2023)."),
    ("Camping next month", "Camping next month (June 2023)"),
    ("painted last year", "painted last year (2022)"),
    ("met them last week", "met them last week (the week before 25 May 2023)"),
    ("a party last weekend", "a party last weekend (the weekend before 25 May 2023)"),
    ("moved three years ago", "moved three years ago (2020)"),
    ("started 3 days ago", "started 3 days ago (22 May 2023)"),
    ("sold it two months ago", "sold it two months ago (March 2023)"),
    ("joined two weeks ago", "joined two weeks ago (2 weeks before 25 May 2023)"),
    ("LAST YEAR was hard", "LAST YEAR (2022) was hard"),
])
def test_each_kind_of_relative_time_gets_its_absolute_time(text, expected):
    assert resolve(text, SAID) == expected


def test_month_and_year_boundaries():
    assert resolve("last month", date(2024, 1, 3)) == "last month (December 2023)"
    assert resolve("next month", date(2023, 12, 31)) == "next month (January 2024)"
    assert resolve("five months ago", date(2024, 2, 1)) == "five months ago (September 2023)"
    assert resolve("yesterday", date(2024, 3, 1)) == "yesterday (29 February 2024)"


@pytest.mark.parametrize("text", [
    "I moved here recently.", "a few weeks ago", "this Friday we meet",   # no single meaning
    "the last game", "next steps", "yesterdays", "lastyear", "最近去了上海", "昨天（5月24日）",
])
def test_what_has_no_single_meaning_is_left_alone(text):
    assert resolve(text, SAID) == text


def test_resolving_twice_changes_nothing():
    once = resolve("painted last year and swam yesterday", SAID)
    assert resolve(once, SAID) == once


@given(st.text(alphabet=st.sampled_from(list("abc yesterday last week year next month ago "
                                             "two 3 .,")), max_size=80))
def test_only_brackets_are_added(text):
    # Whatever the text (it holds no brackets), taking out what was added gives it back.
    assert re.sub(r" \([^()]*\)", "", resolve(text, SAID)) == text


# ------------------------------------------------------------------ the rule, as an oracle
# Written from the rule in scene_engine/core/when.py's docstring, not from its code: each
# phrase drawn below knows what it must become on the day it was said.

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]
COUNT_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "eleven", "twelve"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# Words between the phrases: none is a relative time, none ends in a count or starts with a
# unit, and none holds a Chinese time word.
FILLERS = ["we met Ana", "and then", "she said", "I moved", "the garden was green", "on foot",
           "我们见面", "然后", "去了杭州", "妈妈说", "in Porto", "。", ",", "!"]


def said_day(day: date) -> str:
    return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


def months_back(day: date, count: int) -> tuple[int, int]:
    """(year, month) ``count`` months before ``day``'s month (negative: after), one month at
    a time."""
    year, month = day.year, day.month
    for _ in range(abs(count)):
        month += -1 if count > 0 else 1
        if month == 0:
            year, month = year - 1, 12
        elif month == 13:
            year, month = year + 1, 1
    return year, month


def spelled(word: str, case: int) -> str:
    return [word.lower(), word.capitalize(), word.upper()][case]


@st.composite
def english_phrase(draw, day: date) -> tuple[str, str]:
    """(phrase, what it must read after resolving) for an English relative time."""
    from datetime import timedelta

    case = draw(st.integers(0, 2))
    kind = draw(st.sampled_from(["day word", "way unit", "weekday", "ago"]))
    if kind == "day word":
        word = draw(st.sampled_from(["yesterday", "today", "tonight", "tomorrow",
                                     "last night", "this morning"]))
        shift = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
        phrase = spelled(word, case)
        return phrase, f"{phrase} ({said_day(day + timedelta(days=shift))})"
    if kind == "weekday":
        way, weekday = draw(st.sampled_from(["last", "next", "this"])), draw(
            st.sampled_from(WEEKDAYS))
        phrase = spelled(f"{way} {weekday}", case)
        if way == "this":
            return phrase, phrase          # this Friday: past or coming, no single meaning
        side = "before" if way == "last" else "after"
        return phrase, f"{phrase} (the {weekday} {side} {said_day(day)})"
    if kind == "way unit":
        way, unit = draw(st.sampled_from(["last", "next", "this"])), draw(
            st.sampled_from(["week", "weekend", "month", "year"]))
        phrase = spelled(f"{way} {unit}", case)
        step = {"last": 1, "next": -1, "this": 0}[way]
        if unit in ("week", "weekend"):
            side = {"last": "before", "next": "after", "this": "of"}[way]
            return phrase, f"{phrase} (the {unit} {side} {said_day(day)})"
        if unit == "month":
            year, month = months_back(day, step)
            return phrase, f"{phrase} ({MONTH_NAMES[month - 1]} {year})"
        return phrase, f"{phrase} ({day.year - step})"
    # One (singular, "a", "an") as often as the other small counts and the two-digit ones.
    number = draw(st.one_of(st.just(1), st.integers(2, 12), st.integers(13, 99)))
    said = str(number) if number > 12 or draw(st.booleans()) else COUNT_WORDS[number - 1]
    if number == 1 and draw(st.booleans()):
        said = draw(st.sampled_from(["a", "an"]))
    unit = draw(st.sampled_from(["day", "week", "month", "year"]))
    phrase = spelled(f"{said} {unit}{'s' * (number > 1)} ago", case)
    if unit == "day":
        return phrase, f"{phrase} ({said_day(day - timedelta(days=number))})"
    if unit == "week":
        return phrase, f"{phrase} ({number} week{'s' * (number > 1)} before {said_day(day)})"
    if unit == "month":
        year, month = months_back(day, number)
        return phrase, f"{phrase} ({MONTH_NAMES[month - 1]} {year})"
    return phrase, f"{phrase} ({day.year - number})"


@st.composite
def chinese_phrase(draw, day: date) -> tuple[str, str]:
    """(phrase, what it must read after resolving) for a Chinese relative time."""
    from datetime import timedelta

    def written(d: date) -> str:
        return f"{d.year}年{d.month}月{d.day}日"

    kind = draw(st.sampled_from(["day", "week", "month", "year"]))
    if kind == "day":
        word, shift = draw(st.sampled_from([("前天", -2), ("昨天", -1), ("昨日", -1),
                                            ("今天", 0), ("今日", 0), ("明天", 1),
                                            ("明日", 1), ("后天", 2)]))
        return word, f"{word}（{written(day + timedelta(days=shift))}）"
    if kind == "week":
        word, side = draw(st.sampled_from([("上周", "之前"), ("上个星期", "之前"),
                                           ("上星期", "之前"), ("上个礼拜", "之前"),
                                           ("下周", "之后"), ("下个星期", "之后"),
                                           ("下星期", "之后"), ("本周", "所在"),
                                           ("这周", "所在")]))
        return word, f"{word}（{written(day)}{side}的一周）"
    if kind == "month":
        word, step = draw(st.sampled_from([("上个月", 1), ("上月", 1), ("下个月", -1),
                                           ("下月", -1), ("这个月", 0), ("本月", 0)]))
        year, month = months_back(day, step)
        return word, f"{word}（{year}年{month}月）"
    word, shift = draw(st.sampled_from([("前年", -2), ("去年", -1), ("今年", 0), ("明年", 1),
                                        ("后年", 2)]))
    return word, f"{word}（{day.year + shift}年）"


@st.composite
def sentences(draw) -> tuple[str, date, str]:
    """(text, the day it was said, what resolving must give): fillers and relative times,
    English and Chinese, separated by spaces."""
    day = draw(st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)))
    parts, expected = [], []
    for _ in range(draw(st.integers(1, 8))):
        choice = draw(st.sampled_from(["filler", "english", "chinese"]))
        if choice == "filler":
            filler = draw(st.sampled_from(FILLERS))
            parts.append(filler)
            expected.append(filler)
            continue
        phrase, resolved = draw(english_phrase(day) if choice == "english"
                                else chinese_phrase(day))
        parts.append(phrase)
        expected.append(resolved)
    return " ".join(parts), day, " ".join(expected)


@given(sentences())
def test_relative_times_in_any_sentence_resolve_as_the_rule_says(drawn):
    text, day, expected = drawn
    assert resolve(text, day) == expected
    assert resolve(expected, day) == expected                 # and only once


@pytest.mark.parametrize(("text", "expected"), [
    ("我昨天去了杭州看妈妈。", "我昨天（2023年5月24日）去了杭州看妈妈。"),
    ("前天和后天", "前天（2023年5月23日）和后天（2023年5月27日）"),
    ("上周搬家了", "上周（2023年5月25日之前的一周）搬家了"),
    ("上个月买了车，去年换了工作", "上个月（2023年4月）买了车，去年（2022年）换了工作"),
    ("明年去日本 next year", "明年（2024年）去日本 next year (2024)"),
])
def test_chinese_relative_times_are_resolved_the_chinese_way(text, expected):
    assert resolve(text, SAID) == expected
    assert resolve(expected, SAID) == expected               # and only once
