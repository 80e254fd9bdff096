"""The grammar of periods (core.periods, issue 23) and what summaries make of it: a span
reaches from the earliest start to the latest end, whatever order the lines are in, and the
latest line is the one that reaches furthest."""

from __future__ import annotations

import re

from scene_engine.core.periods import PERIOD, covers, first_day, last_day, years
from scene_engine.offline.prose import summary


def test_months_and_days_out_of_range_and_reversed_spans_are_no_periods():
    assert re.fullmatch(PERIOD, "2026-12-31") and re.fullmatch(PERIOD, "2026-Q4")
    for wrong in ("2026-13", "2026-00", "2026-05-40", "2026-05-00", "2026-Q5"):
        assert not re.fullmatch(PERIOD, wrong), wrong
    assert years("2026–2030") == (2026, 2030) and years("2030–2026") is None
    assert not covers("2030–2026", "2028-01-01")


def test_last_day_of_each_kind_of_period():
    assert last_day("2024-02") == "2024-02-29" and last_day("2023-02") == "2023-02-28"
    assert last_day("2024-Q2") == "2024-06-30" and last_day("2024") == "2024-12-31"
    assert last_day("2001–2026") == "2026-12-31" and last_day("2024-03-05") == "2024-03-05"
    assert first_day("2001–2026") == "2001-01-01"


def test_a_summary_spans_to_the_latest_fact_and_quotes_it_whatever_the_order():
    # A span digest sorts first (it starts in 2001) but speaks of September 2026; a day of
    # 2010 comes after it in the file.
    said = summary([("2001–2026", "3 Mar 2001–9 Sep 2026 ×20: Ran along the river; "
                                  "2 Jan 2003: Moved to Porto"),
                    ("2010-02-01", "Started at Northwind.")], [])
    assert "from January 2001 to September 2026" in said
    assert said.endswith("Latest (9 Sep): Ran along the river")
    # Lines out of order (an import): the latest day is the latest, not the last line.
    said = summary([("2026-05-03", "Moved to Porto with Ana."),
                    ("2024-01-10", "Lived in Lisbon."), ("2025-02-01", "Started at Northwind.")],
                   [])
    assert "from January 2024 to May 2026" in said
    assert said.endswith("Latest (3 May): Moved to Porto with Ana.")
    zh = summary([("2026-05-03", "搬到了波尔图。"), ("2024-01-10", "住在里斯本。")], [])
    assert "2024年1月至2026年5月" in zh and zh.endswith("最近（5月3日）：搬到了波尔图。")
