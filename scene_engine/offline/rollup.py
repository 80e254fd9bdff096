"""Rollups instead of loss: a full scene's oldest entries condensed into period digests.

When a scene body would pass ``max_scene_chars``, its oldest engine-written timeline entries
are rolled up, oldest first and only while it is too long (issue 13, docs/DESIGN.md "A batch"
step 7, conservation):

1. days into a month digest: every fact as said, led by its day, citing its memory ids
   (``- 2026-03 (digest): 4 Mar: Bought the CKA exam voucher. [cka-02]; 9 Mar: ...``);
2. (``deep``: a store at its scene cap) the month digests' facts cut to their first 12, 6,
   then 3 words as said (exact quotes, never paraphrased) — a turning point ("passed",
   "decided", 搬进, 领养了) or an open item keeps 12;
3. months into quarter digests, then quarters into a year digest: the turning points and
   open items kept (dated, quoted, cited), the rest counted and cited
   (``- 2026-Q1 (digest): 14 entries: 4 Mar: Passed the CKA exam [cka-10]; 13 more [cka-01, ...]``).

Every memory id an entry held stays cited by the digest that took it in, so ``scenes trace``
and ``scenes blame`` still lead back to the memories. Never a person's line, never an entry
of this batch (the newest facts are not the ones given up first), never an open thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from scene_engine.core.ids import NUMBERED, expand_range
from scene_engine.core.text import STOP_WORDS, keywords
from scene_engine.core.when import MONTH_ABBREVIATIONS
from scene_engine.offline.threads import opens, settles
from scene_engine.offline.timeline import Draft, Entry, ordered, period_start, size

DIGEST_WORDS = (10_000, 12, 6, 3)   # words a digest fact keeps, as room runs out
KEY_WORDS = 12                      # ... a turning point or open item keeps (until the end)
DIGEST_DAY = re.compile(r"^(\d{1,2} [A-Z][a-z]{2}: )(.*)$")   # "7 May: " before a digest fact
CITED = re.compile(r"\s*\[([^\[\]]+)\]$")                        # "fact [id1, id2]"
_COUNTED = re.compile(r"^(\d+) entries: (.*)$")
_MORE = re.compile(r"^(\d+) more(?: \((.*)\))?$")
PERIOD_KEYWORDS = 10                # words a quarter or year digest keeps of what it counts
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")

# ids_for(day, text) -> [(memory id, content)]: the memories an old day entry holds.
IdsFor = Callable[[str, str], list[tuple[str, str]]]


def cited(fact: str) -> tuple[str, list[str]]:
    """(the fact without its citation, the memory ids it cites, ranges expanded)."""
    found = CITED.search(fact)
    if not found:
        return fact, []
    ids = []
    for token in (i.strip() for i in found.group(1).split(",")):
        ids += expand_range(token) if token else []
    return fact[: found.start()], ids


def cite(fact: str, ids: list[str]) -> str:
    """``fact [id1, id2]`` (the fact alone when there are no ids); three or more ids that
    count up with the same prefix are written as a range, ``m0012..m0019``."""
    ids = list(dict.fromkeys(ids))
    return f"{fact} [{', '.join(_ranges(ids))}]" if ids else fact


def _ranges(ids: list[str]) -> list[str]:
    out: list[str] = []
    run: list[str] = []

    def close():
        out.extend([f"{run[0]}..{run[-1]}"] if len(run) >= 3 else run)

    for memory_id in sorted(ids, key=_id_order):
        if run and _follows(run[-1], memory_id):
            run.append(memory_id)
            continue
        close()
        run = [memory_id]
    close()
    return out


def _id_order(memory_id: str) -> tuple:
    found = NUMBERED.match(memory_id)
    return (found.group(1), len(found.group(2)), int(found.group(2))) if found else (memory_id, 0, 0)


def _follows(before: str, after: str) -> bool:
    a, b = NUMBERED.match(before), NUMBERED.match(after)
    return bool(a and b and a.group(1) == b.group(1) and len(a.group(2)) == len(b.group(2))
                and int(b.group(2)) == int(a.group(2)) + 1)


def digest_ids(text: str) -> list[str]:
    """Every memory id a digest line's text cites."""
    return [i for fact in text.split("; ") for i in cited(fact)[1]]


def quote(fact: str, words: int, exact: bool = True) -> str:
    """``fact`` cut to ``words`` words (CJK: ``2 * words`` characters), "…" when cut:
    ``exact``, its first words as said (a turning point, an open item); otherwise in
    telegraphic style, its words without stop words (more of what it says per character,
    so a scene keeps the share of its words the conservation check asks for)."""
    fact = " ".join(fact.split())
    tokens = fact.split(" ")
    if len(tokens) > 1:
        if not exact:
            tokens = [t for t in tokens
                      if t.lower().strip(".,;:!?'\"()") not in STOP_WORDS] or tokens
        return " ".join(tokens) if len(tokens) <= words else " ".join(tokens[:words]) + "…"
    return fact if len(fact) <= 2 * words else fact[: 2 * words] + "…"


def is_key(fact: str) -> bool:
    """A turning point (something happened or was decided) or an open item: what a rollup
    keeps longest."""
    return settles(fact) or opens(fact) is not None


def condense(draft: Draft, limit: int, zone: str, deep: bool = True,
             ids_for: IdsFor | None = None) -> bool:
    """Make ``draft``'s body fit ``limit`` characters by rolling up its oldest engine-written
    entries (see the module docstring); False if it still does not fit. ``ids_for`` finds
    the memories of an entry written by an earlier batch (None: only this batch's ids)."""
    roll = _Roller(draft, ids_for)
    steps: list[Callable[[], bool]] = [
        lambda: roll.oldest(_is_day, lambda d: d[:7], roll.month, by=lambda d: d)]
    if deep:
        steps += [partial(roll.shorten, w) for w in DIGEST_WORDS[1:]]
        steps += [lambda: roll.oldest(_is_month, _quarter, roll.period),
                  lambda: roll.oldest(_is_quarter, lambda d: d[:4], roll.period),
                  lambda: roll.shorten(6, keys=True), lambda: roll.shorten(3, keys=True)]
    for step in steps:
        while size(draft, zone) > limit and step():
            pass
    return size(draft, zone) <= limit


def _is_day(entry: Entry) -> bool:
    return not entry.digest and len(entry.day) == 10


def _is_month(entry: Entry) -> bool:
    return entry.digest and len(entry.day) == 7 and "-Q" not in entry.day


def _is_quarter(entry: Entry) -> bool:
    return entry.digest and "-Q" in entry.day


def _quarter(day: str) -> str:
    return f"{day[:4]}-Q{(int(day[5:7]) - 1) // 3 + 1}"


def _sentences(text: str) -> list[str]:
    return [f for f in _SENTENCE_END.split(text.strip()) if f]


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(".。!！?？").casefold()


class _Roller:
    """The rollup steps on one draft (``ids_for`` as in ``condense``)."""

    def __init__(self, draft: Draft, ids_for: IdsFor | None):
        self.draft = draft
        self.ids_for = ids_for

    def oldest(self, kind: Callable[[Entry], bool], period: Callable[[str], str],
               make: Callable[[str, list[Entry]], Entry],
               by: Callable[[str], str] | None = None) -> bool:
        """Roll the engine's old entries of ``kind`` into their ``period``'s digest (with that
        period's existing digest), the oldest ``by`` group (default: the whole oldest
        period; days go one at a time); False when there is nothing to roll."""
        draft = self.draft
        by = by or period
        movable = [e for e in draft.entries if not (e.person or e.fresh) and kind(e)]
        if not movable:
            return False
        first = min((by(e.day) for e in movable), key=period_start)
        chosen = [e for e in movable if by(e.day) == first]
        target = period(chosen[0].day)
        chosen += [e for e in draft.entries if e.digest and e.day == target
                   and not (e.person or e.fresh)]
        draft.entries = [e for e in draft.entries if e not in chosen] + [make(target, chosen)]
        return True

    def month(self, month: str, entries: list[Entry]) -> Entry:
        """One month's facts as said, each led by its day and citing its memories."""
        facts: list[str] = []
        for entry in ordered(entries):
            if entry.digest:
                facts += [f for f in entry.text.split("; ") if f]
                continue
            day = f"{int(entry.day[8:10])} {MONTH_ABBREVIATIONS[int(entry.day[5:7]) - 1]}: "
            facts += [day + f for f in self._cited_facts(entry)]
        return Entry(month, "; ".join(dict.fromkeys(facts)), digest=True)

    def _cited_facts(self, entry: Entry) -> list[str]:
        """The sentences of a day entry, each memory's id on the last sentence of it."""
        sentences = _sentences(entry.text)
        if entry.ids:
            held = [(i, entry.text) for i in entry.ids]
        else:
            held = self.ids_for(entry.day, entry.text) if self.ids_for else []
        where: dict[int, list[str]] = {}
        for memory_id, content in held:
            spots = [k for k, s in enumerate(sentences) if _norm(s) and _norm(s) in _norm(content)]
            where.setdefault(spots[-1] if spots else len(sentences) - 1, []).append(memory_id)
        return [cite(s, where.get(k, [])) for k, s in enumerate(sentences)]

    def period(self, period: str, entries: list[Entry]) -> Entry:
        """A quarter's or a year's digest: its turning points and open items (dated, quoted,
        cited), the rest counted and cited."""
        count, keys, rest, others = 0, [], [], []
        for entry in ordered(entries):
            counted = None if _is_month(entry) else _COUNTED.match(entry.text)
            body = counted.group(2) if counted else entry.text
            for fact in (f for f in body.split("; ") if f):
                text, ids = cited(fact)
                more = _MORE.match(text.strip())
                if more:
                    rest += ids
                    others.append(more.group(2) or "")
                    continue
                if not counted:
                    count += 1
                dated = DIGEST_DAY.match(text)
                if is_key(dated.group(2) if dated else text):
                    keys.append(cite(_quote_dated(text, KEY_WORDS), ids))
                else:
                    rest += ids
                    others.append(dated.group(2) if dated else text)
            count += int(counted.group(1)) if counted else 0
        about = ", ".join(keywords(others, k=PERIOD_KEYWORDS)) if others else ""
        tail = f"{count - len(keys)} more" + (f" ({about})" if about else "")
        parts = keys + ([cite(tail, rest)] if count > len(keys) else [])
        return Entry(period, f"{count} entries: " + "; ".join(parts), digest=True)

    def shorten(self, words: int, keys: bool = False) -> bool:
        """Cut every digest fact to ``words`` words (turning points and open items to at
        least ``KEY_WORDS`` unless ``keys``); False if nothing changed."""
        before = list(self.draft.entries)
        self.draft.entries = [replace(e, text=self._shortened(e.text, words, keys))
                              if e.digest and not (e.person or e.fresh) else e
                              for e in self.draft.entries]
        return self.draft.entries != before

    @staticmethod
    def _shortened(text: str, words: int, keys: bool) -> str:
        counted = _COUNTED.match(text)
        body = counted.group(2) if counted else text
        out = []
        for fact in body.split("; "):
            plain, ids = cited(fact)
            dated = DIGEST_DAY.match(plain)
            said = dated.group(2) if dated else plain
            if _MORE.match(plain.strip()):
                out.append(fact)
                continue
            key = is_key(said)
            keep = words if keys or not key else max(words, KEY_WORDS)
            out.append(cite(_quote_dated(plain, keep, exact=key), ids))
        joined = "; ".join(out)
        return f"{counted.group(1)} entries: {joined}" if counted else joined


def _quote_dated(fact: str, words: int, exact: bool = True) -> str:
    """``quote`` for a digest fact, leaving its ``7 May:`` day in front alone."""
    found = DIGEST_DAY.match(fact)
    if found:
        return found.group(1) + quote(found.group(2), words, exact)
    return quote(fact, words, exact)
