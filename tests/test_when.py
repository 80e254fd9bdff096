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
