"""The checks every face makes of a query and a number, in one wording (the command line,
the MCP tools and the Python API refuse the same values in the same words, exit 2), and of
the settings' time zone and secret patterns (``store.config``, ``store.schemas``)."""

from __future__ import annotations

from typing import Any

from scene_engine.core.errors import InputError

__all__ = ["query_problem", "check_query", "check_number", "MIN_BUDGET", "MAX_BUDGET",
           "known_zone", "check_patterns"]

MIN_BUDGET, MAX_BUDGET = 100, 10_000_000   # a recall's budget, in characters


def query_problem(query: Any) -> str:
    """Why ``query`` cannot be searched for or recalled (a usage error, exit 2), or "": an
    empty or blank query asks for nothing (it is not "no match"); a query that is not text
    (a number, a list) is said as such, not as empty."""
    if query is None:
        return "the query is missing: give the words to look for"
    if not isinstance(query, str):
        return f"the query must be text (the words to look for), not {query!r}"
    if not query.strip():
        return "the query is empty: give the words to look for"
    return ""


def check_query(query: Any) -> str:
    """``query`` when it can be searched; raises ``InputError`` (``query_problem``)."""
    problem = query_problem(query)
    if problem:
        raise InputError(problem)
    return query


def check_number(value: Any, name: str, low: int, high: int) -> int:
    """``value`` when it is a whole number (not a bool) in ``low..high``; raises
    ``InputError`` naming ``name`` and the range."""
    if type(value) is not int or not low <= value <= high:
        raise InputError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    return value


def known_zone(value: str) -> str:
    """``value`` if it names an IANA time zone, else the zone it names in another case
    ("utc", "europe/lisbon"); raises ``ValueError``."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

    try:
        ZoneInfo(value)
        return value
    except (ZoneInfoNotFoundError, ValueError):
        pass
    spelled = {z.lower(): z for z in available_timezones()}   # "utc", "europe/lisbon"
    if value.strip().lower() in spelled:
        return spelled[value.strip().lower()]
    raise ValueError(f"unknown time zone {value!r}; use an IANA name such as UTC or "
                     "Europe/Lisbon")


def check_patterns(value: list[str]) -> list[str]:
    """``value`` if every pattern is a regular expression; raises ``ValueError``."""
    import re

    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return value
