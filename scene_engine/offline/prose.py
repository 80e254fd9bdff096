"""Summaries the offline backend writes: one or two sentences a person reads, never a list.

A scene's summary (the ``summary`` header the index, ``scenes list`` and the persona show)
says, in the language most of its entries are in (issue 13): what it is about (its topic
nouns and names, joined as a reader says them, words said together kept together:
``offline_words.topic_phrase``, issue 23), the span it covers and how many entries (one per
timeline bullet, a digest one too: issue 23 item 6), then the latest change, quoted (the
first whole clauses within ``LATEST_CHARS``, so a very long memory never fills the header;
never a word or a clause cut short: ``shorten``):

    Kafka and order service: 14 entries from January to December 2026. Latest (2 Dec): We
    decided to keep RabbitMQ for the small internal notification jobs and Kafka for orders.

    年糕、芝麻和猫：2026年1月至11月的13条记录。最近（11月21日）：年糕和芝麻现在会一起睡觉了。

An open thread, when there is one, is named instead of a second entry count: "1 open: …".

``shorten`` is how the offline backend says less of a fact without cutting it (issue 36 item
4: no line cut mid-sentence): its first whole clauses, or, where even the first is too long,
a phrase of its own nouns and names (``name_of``); never a cut word and no "…".
"""

from __future__ import annotations

import functools
import re

from scene_engine.core.periods import first_day, last_day, parse_fact
from scene_engine.core.text import is_cjk_text
from scene_engine.core.when import MONTH_ABBREVIATIONS
from scene_engine.offline.words import language, topic_phrase

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
LATEST_CHARS = {"en": 150, "zh": 60}


def summary(days: list[tuple[str, str]], open_threads: list[str], fallback: str = "",
            bullets: list[str] | None = None) -> str:
    """The summary of a scene whose timeline has ``days`` — ``(day or period, text)``,
    oldest first (``YYYY-MM-DD``, ``YYYY-MM``, ``YYYY-Qn`` or ``YYYY``) — and the texts of
    its ``open_threads``; ``fallback``: what to say of a scene with neither (its free text).
    ``bullets``: the day of every bullet of the timeline, oldest first, when they are more
    than ``days`` (a person's lines besides the engine's): the entry count and the span are
    theirs, so the count is the number of bullets a reader sees (issue 23 item 6)."""
    texts = [t for _, t in days] + open_threads
    if not texts:
        return _clip(" ".join(fallback.split()), "en") or "Notes."
    lang = language(texts)
    topic = topic_phrase(texts, lang) or ("记录" if lang == "zh" else "Notes")
    counted = bullets if bullets else [d for d, _ in days]
    count = len(counted)
    dated = [d for d in counted if _month(d)]     # a person's undated line has no month
    reach = {d: _reach(d, t) for d, t in days}
    span = _span(dated, lang, reach) if dated else ""
    if lang == "zh":
        records = f"{span}的{count}条记录" if span else f"{count}条记录"
        first = f"{topic}：{records}。" if days else f"{topic}。"
    else:
        entries = f"{count} {'entry' if count == 1 else 'entries'}" + (f" {span}" if span else "")
        first = f"{topic[:1].upper()}{topic[1:]}: {entries}." if days else f"{topic}."
    if open_threads:
        said = _clip(open_threads[-1], lang)
        return first + (f"未决：{said}" if lang == "zh" else f" Open: {said}")
    # The latest is the line that reaches furthest (a day after an imported older digest,
    # or the other way round): not the last in the file's order.
    day, text = max(reversed(days), key=lambda d: (reach[d[0]], len(d[0]) == 10))
    if len(day) != 10:        # a digest: its latest fact, on its own last day
        day, text = _latest_fact(day, text)
    said = _clip(text, lang)
    when = _day(day, lang)
    if lang == "zh":
        return first + (f"最近（{when}）：{said}" if when else f"最近：{said}")
    return first + (f" Latest ({when}): {said}" if when else f" Latest: {said}")


def _clip(text: str, lang: str) -> str:
    """``text`` within ``LATEST_CHARS`` by whole clauses (``shorten``); a first clause of
    more than twice that is named by its nouns (``name_of``) instead."""
    limit = LATEST_CHARS[lang]
    said = shorten(text, limit, chars=True)
    if len(said) <= 2 * limit:
        return said
    return name_of(said, lang) or said


# Where a clause ends: after , ; : . ! ? (and a space), before a dash or an arrow between
# spaces, after a Chinese clause mark. Not after an abbreviation ("Dr. Okafor"), a number's
# own comma or point ("120,000", "1.5"), or a date's colon ("→ 2026-03-18: ...").
_BOUNDARY = re.compile(r"(?<=[,;:.!?])\s+|\s+(?=[—–→]\s)|(?<=[，；：。！？、])")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|St|Prof|Jr|Sr|vs|etc|e\.g|i\.e|No)\.$",
                           re.I)
_DATE_COLON = re.compile(r"\d{4}-\d{2}(?:-\d{2})?:$")
CUT_MARKS = ("…", "...")
_CLAUSE_MARKS = ",;:.!?，；：。！？、—–→ "


def clauses(text: str) -> list[str]:
    """``text`` (one line) as its clauses in order, each with its own closing mark; joined
    they give the text back."""
    text = " ".join(text.split())
    pieces, start = [], 0
    for found in _BOUNDARY.finditer(text):
        before = text[start:found.start()]
        if not before.strip() or _ABBREVIATION.search(before) or _DATE_COLON.search(before):
            continue
        pieces.append(text[start:found.end()])
        start = found.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _weight(text: str, chars: bool) -> int:
    """The size of ``text``: characters, or words (a Chinese text: half its characters)."""
    if chars:
        return len(text)
    return (len(text) + 1) // 2 if is_cjk_text(text) else len(text.split())


def whole(text: str) -> str:
    """``text`` without a clause it ends on cut short (an older line that ends in "…"): its
    whole clauses before it; as it is when it was not cut, or when no whole clause is left."""
    text = " ".join(text.split())
    if not text.endswith(CUT_MARKS):
        return text
    parts = clauses(text)[:-1]
    kept = "".join(parts).rstrip(_CLAUSE_MARKS)
    return kept if kept else text


@functools.lru_cache(maxsize=4096)      # a digest's facts are said again at every step
def shorten(text: str, limit: int, chars: bool = False) -> str:
    """``text`` on one line, or when it is longer than ``limit`` words (``chars``:
    characters; Chinese: ``2 * limit`` characters) its first whole clauses within that, at
    least the first one; the mark that closed the last one left off. Never a word or a
    clause cut short, and no "…" (a text that ends cut short, ``whole``, loses that clause)."""
    text = whole(text)
    if _weight(text, chars) <= limit:
        return text
    parts = clauses(text)
    kept = parts[0]
    for part in parts[1:]:
        if _weight((kept + part).rstrip(_CLAUSE_MARKS), chars) > limit:
            break
        kept += part
    return kept.rstrip(_CLAUSE_MARKS) or text


def name_of(text: str, lang: str | None = None) -> str:
    """A short phrase of ``text``'s own nouns and names (``words.topic_phrase``: ``Harrow,
    Finch and job``), what a fact is named by where not even its first clause fits; "" when
    it has none."""
    return topic_phrase([text], lang or ("zh" if is_cjk_text(text) else "en"))


def _month(day: str, end: bool = False) -> tuple[int, int] | None:
    """(year, month) a day or period starts in (``periods.first_day``), or with ``end`` ends
    in (``periods.last_day``); None for what is no period."""
    found = last_day(day) if end else first_day(day)   # a span of years: Jan / Dec
    try:
        return int(found[:4]), int(found[5:7]) if len(found) >= 7 else 1
    except ValueError:
        return None


def _reach(day: str, text: str) -> str:
    """The last day a timeline line speaks of: a day itself; a digest's latest fact
    (``_latest_fact``), or its period's last day when its facts are undated."""
    if len(day) == 10:
        return day
    end, _ = _latest_fact(day, text)
    return end if end != day else last_day(day)


def _latest_fact(period: str, text: str) -> tuple[str, str]:
    """(its last day, its words) of the fact of a digest line that reaches furthest, or
    (``period``, ``text``) when its facts are undated."""
    facts = [found for part in text.split("; ") if (found := parse_fact(part.strip(), period))]
    if not facts:
        return period, text
    _, end, _, said = max(facts, key=lambda f: f[1])
    return end, said


def _span(days: list[str], lang: str, reach: dict[str, str] | None = None) -> str:
    """``from January to December 2026`` / ``2026年1月至11月`` / ``in March 2026``: from the
    earliest start to the latest end of ``days`` (in any order: an import may be unsorted;
    ``reach``: the last day a line speaks of, ``_reach``, else its period's last day)."""
    reach = reach or {}
    starts = [m for d in days if (m := _month(d))]
    ends = [m for d in days if (m := _month(reach.get(d, d), end=True))]
    if not starts or not ends:
        return ""
    start, end = min(starts), max(ends)
    (y1, m1), (y2, m2) = start, end
    if lang == "zh":
        if (y1, m1) == (y2, m2):
            return f"{y1}年{m1}月"
        return f"{y1}年{m1}月至{m2}月" if y1 == y2 else f"{y1}年{m1}月至{y2}年{m2}月"
    if (y1, m1) == (y2, m2):
        return f"in {MONTHS[m1 - 1]} {y1}"
    if y1 == y2:
        return f"from {MONTHS[m1 - 1]} to {MONTHS[m2 - 1]} {y1}"
    return f"from {MONTHS[m1 - 1]} {y1} to {MONTHS[m2 - 1]} {y2}"


def _day(day: str, lang: str) -> str:
    """``2 Dec`` / ``12月2日`` for a day; "" for a period."""
    if len(day) != 10:
        return ""
    month, date = int(day[5:7]), int(day[8:10])
    return f"{month}月{date}日" if lang == "zh" else f"{date} {MONTH_ABBREVIATIONS[month - 1]}"
