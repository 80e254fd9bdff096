"""Rollups instead of loss: a full scene's oldest entries condensed by theme, depth by depth.

When a scene body would pass ``max_scene_chars``, its oldest engine-written entries are rolled
up, oldest first and only while it is too long (issue 13 and issue 23; seed 000's hierarchical
rollups; docs/DESIGN.md "A batch" step 7, conservation). A digest line holds facts, each a
sentence led by its date range, separated by ``; ``:

    - 2026-03 (digest): 4–29 Mar ×6: Ran 7 km along the river; 12 Mar: Moved to Porto

The steps, each applied only while the scene is still too long:

1. **depth 1** (a month): the oldest day entry joins its month's digest. Facts of one theme
   (the same subject doing the same kind of thing, said again: ``same_theme``) become one
   fact with their date range and count, said in the words of the most typical of them; a
   fact of its own is kept as said.
2. the oldest open thread of an earlier batch moves to the timeline ("left open"), so it can
   roll up too.
3. **depth 2** (a quarter), then **depth 3** (a year): a month digest joins its quarter's, a
   quarter digest its year's: every fact is kept, and themes told again across the months
   merge. A fact is said whole (one of more than ``FACT_WORDS`` words: its first whole
   clauses within them, ``prose.shorten``; never a word cut, no "…"). A depth-2 digest is
   shorter than its children.
4. **depth 4** (a span of years, ``- 2001–2027 (digest): 13 Jan 2001–21 Sep 2026 ×20: fact``):
   while a scene holds more than ``YEARS_APART`` digests of a year or more, its two oldest
   roll into the span of their years (before this year's months go deeper: older is coarser);
   its milestones of one theme told again merge too. Then the two oldest years roll into a
   span even when there are few.
5. the digests give up whole facts, one at a time, the least of note first (``give_ups``):
   what the scene says elsewhere too (the same kind of day said again, in another period or
   on a day of its own) before what only this fact says (``note``), and last a fact that
   introduces a name or a place to the scene (the first home's street, the first job's
   firm, the manager's name: ``_notes``); never a milestone (``is_milestone``: a move, a
   first or new job, an engagement, a death, a diagnosis, a purchase of note), never a
   digest's last fact.
6. the last resort, when no scene takes a memory by the steps above (scenes too small for
   their rollups: ``max_scene_chars`` near its minimum): milestones too are given up, least
   of note first, and a digest's one fact left is named by its own nouns and names
   (``prose.name_of``; ``squeezes``). A scene that is still too long
   (this batch's entries fill it) takes the memory nowhere: it goes to another scene, or
   waits for the next batch, when this batch's entries may roll up in turn.

``condense(..., check=...)`` judges each step by the coverage rule as it goes (the offline
backend passes ``conservation.keeps`` against the scene before the batch): a step the rule
would refuse, such as an old day rolled into a year digest that drops it, is undone and the
next step tried.

No memory id, count of "more" or keyword list is written into the text: ids are in the batch
ledgers, and ``trace`` / ``blame`` find a digest's memories by the period it covers (the
memories the scene took whose day falls in it). Never a person's line, never an entry of this
batch (the newest facts are not the ones given up first), never a thread of this batch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from scene_engine.core.ids import expand_range
from scene_engine.core.periods import (
    covers,
    first_day,
    is_span,
    parse_fact,
    say_fact,
    sort_key,
    span,
    years,
)
from scene_engine.core.text import is_cjk_text
from scene_engine.index.analysis import part_of_speech
from scene_engine.offline.prose import name_of, shorten, whole
from scene_engine.offline.threads import Thread
from scene_engine.offline.timeline import Draft, Entry, size
from scene_engine.offline.words import analyzer, specificity, words

# A fact is said whole; only one longer than this many words (CJK: twice as many characters)
# is said by its first whole clauses within them (``prose.shorten``): a first clause that is
# shorter than its fact loses its names and places ("Got the keys to my first flat").
FACT_WORDS = 30
NAME_NOTE = 2.0              # a name or place only this fact says weighs this much (``note``)
GIVE_UP_TRIES = 8            # facts tried, least of note first, for one fact given up
YEARS_APART = 3              # year digests a full scene keeps before its oldest join a span
SAME_THEME = 0.5             # shared specificity (of the smaller fact's) for one theme
SEPARATOR = "; "
CITED = re.compile(r"\s*\[([^\[\]]+)\]$")           # an older digest's "fact [id1, id2]"
_COUNTED = re.compile(r"^\d+ entries: ")            # an older digest's leading count
_MORE = re.compile(r"^\d+ more(?: \(.*\))?$")       # an older digest's "N more (words)"
_EN_MILESTONE = re.compile(
    r"\b(?:mov(?:ed|ing) (?:to|into|out|house|back)|relocat\w*|new job|(?:start|began)\w* (?:a |my |"
    r"the |his |her )?(?:new |first )?(?:job|role|position)|(?:my|our|her|his) first (?:job|flat|"
    r"home|house|apartment|child|baby)|keys to (?:my|our|the) (?:first |new )?(?:flat|home|house|"
    r"apartment)|hired|quit|resign\w*|retir\w*|fired|laid off|"
    r"promot\w*|engaged|married|wedding|divorc\w*|broke up|pregnan\w*|gave birth|was born|"
    r"born|died|passed away|funeral|diagnos\w*|surgery|operation|graduat\w*|adopt\w*|"
    r"bought (?:a |an |our |my |the )?(?:house|home|car|flat|apartment|condo)|"
    r"sold (?:the |our |my )?(?:house|home|car|flat|apartment)|signed|enrolled|accepted into|"
    r"admitted to|got (?:a |the )?(?:job|offer|degree|license|licence)|launched|opened (?:a|my|her|his))\b",
    re.I)
_ZH_MILESTONE = re.compile(
    r"搬家|搬到|搬进|搬去|入职|离职|辞职|跳槽|退休|升职|被裁|订婚|结婚|婚礼|离婚|分手|怀孕|出生|"
    r"去世|过世|葬礼|确诊|诊断|手术|毕业|领养|买了房|买房|买了车|买车|卖了房|签约|签了|录取|开业|创业")


@functools.lru_cache(maxsize=8192)      # a digest's facts are asked again at every step
def is_milestone(fact: str) -> bool:
    """True for an irreversible event (a move, a new job, an engagement, a death, a
    diagnosis, a purchase of note; English and Chinese): every rollup carries it."""
    return bool((_ZH_MILESTONE if is_cjk_text(fact) else _EN_MILESTONE).search(fact))


@dataclass(frozen=True)
class Fact:
    """One fact of a digest: ``start``/``end`` days (``YYYY-MM-DD``), ``text`` as said (cut
    when condensed), ``times`` it happened (a theme of several entries: more than 1)."""

    start: str
    end: str
    text: str
    times: int = 1

    @property
    def milestone(self) -> bool:
        return is_milestone(self.text)


def cited(fact: str) -> tuple[str, list[str]]:
    """(the fact without an older digest's id citation, the memory ids it cites, ranges
    expanded). Digests written since issue 23 cite none."""
    found = CITED.search(fact)
    if not found:
        return fact, []
    ids = []
    for token in (i.strip() for i in found.group(1).split(",")):
        ids += expand_range(token) if token else []
    return fact[: found.start()], ids


def digest_ids(text: str) -> list[str]:
    """Every memory id an older digest line's text cites (none for a digest by theme)."""
    return [i for fact in text.split(SEPARATOR) for i in cited(fact)[1]]


def condense(draft: Draft, limit: int, zone: str, deep: bool = True,
             check: Callable[[Draft], bool] | None = None, squeeze: bool = False) -> bool:
    """Make ``draft``'s body fit ``limit`` characters by rolling up its oldest engine-written
    entries (the module docstring's steps; only step 1 unless ``deep``, step 6 only with
    ``squeeze`` too: the caller's last resort); False if it still does not fit.
    ``check(draft) -> bool``: the rule the result must keep (the coverage rule,
    ``conservation.keeps``); a step after which it fails is undone and the next one tried.
    Pure: only ``draft.entries`` and ``draft.threads`` change."""
    roll = _Roller(draft)
    steps: list[Callable[[], bool]] = [lambda: roll.oldest(_is_day, 1)]
    if deep:
        # Each fact that may be given up is one way: the rule may refuse one and accept
        # another.
        steps += [roll.retire_thread, lambda: roll.merge_years(YEARS_APART),
                  lambda: roll.oldest(_is_month, 2), lambda: roll.oldest(_is_quarter, 3),
                  lambda: roll.merge_years(1),
                  lambda: any(_kept(draft, way, check) for way in roll.give_ups())]
    if deep and squeeze:
        steps.append(lambda: any(_kept(draft, way, check) for way in roll.squeezes()))
    # After any step, start again from the first: a retired thread is a day entry that
    # rolls up at depth 1 before any month goes deeper. The rule is judged once, on the
    # result (judging every step cost a third of a batch, issue 39): only when the result
    # breaks it is the rollup done again step by step, each step judged and the refused
    # ones undone.
    if check is not None:
        entries, threads = list(draft.entries), list(draft.threads)
        if _roll(draft, limit, zone, steps, None) and check(draft):
            return True
        draft.entries, draft.threads = entries, threads
    return _roll(draft, limit, zone, steps, check)


def _roll(draft: Draft, limit: int, zone: str, steps: list[Callable[[], bool]],
          check: Callable[[Draft], bool] | None) -> bool:
    """Take ``steps`` (the first that changes the draft and keeps ``check``, from the first
    again) until ``draft`` fits ``limit``; whether it fits."""
    while size(draft, zone) > limit and any(_kept(draft, step, check) for step in steps):
        pass
    return size(draft, zone) <= limit


def _kept(draft: Draft, step: Callable[[], bool], check: Callable[[Draft], bool] | None
          ) -> bool:
    """Run ``step``; True when it changed ``draft`` and ``check`` accepts the result (else
    it is undone)."""
    entries, threads = list(draft.entries), list(draft.threads)
    if not step():
        return False
    if check is None or check(draft):
        return True
    draft.entries, draft.threads = entries, threads
    return False


def _is_day(entry: Entry) -> bool:
    return not entry.digest and len(entry.day) == 10


def _is_month(entry: Entry) -> bool:
    return entry.digest and len(entry.day) == 7 and "-Q" not in entry.day


def _is_quarter(entry: Entry) -> bool:
    return entry.digest and "-Q" in entry.day


def _period(day: str, depth: int) -> str:
    """The period of ``depth`` (1 month, 2 quarter, 3 year) that ``day`` lies in."""
    if depth == 1:
        return day[:7]
    if depth == 2:
        return f"{day[:4]}-Q{(int(day[5:7]) - 1) // 3 + 1}"
    return day[:4]


def _is_yearly(entry: Entry) -> bool:
    return entry.digest and (len(entry.day) == 4 or is_span(entry.day))


def _depth(period: str) -> int:
    """1 a month, 2 a quarter, 3 a year, 4 a span of years."""
    return 2 if "-Q" in period else 3 if len(period) == 4 else 4 if is_span(period) else 1


def _years(period: str) -> tuple[int, int]:
    return years(period) or (int(period[:4]), int(period[:4]))


class _Roller:
    """The rollup steps on one draft."""

    def __init__(self, draft: Draft):
        self.draft = draft

    def _movable(self, kind: Callable[[Entry], bool]) -> list[Entry]:
        return [e for e in self.draft.entries if not (e.person or e.fresh) and kind(e)]

    def oldest(self, kind: Callable[[Entry], bool], depth: int) -> bool:
        """Roll the oldest movable entry of ``kind`` (a digest: with the others of its
        period) into the digest of ``depth`` that covers it (the scene's digest of that
        period, or a deeper one it already has); False when there is nothing to roll."""
        movable = self._movable(kind)
        if not movable:
            return False
        entry = min(movable, key=lambda e: sort_key(e.day))
        day = first_day(entry.day)
        into = self._covering(day, depth)
        target = into.day if into else _period(day, depth)
        # Days go one at a time; digests of one period together, so that a theme said once
        # a month is seen as the theme of the quarter it is.
        together = [e for e in movable if e is not entry and depth > 1
                    and covers(target, first_day(e.day))]
        # The digest's own facts first: where a depth keeps only the last of facts of one
        # day, the one rolled in is kept (the old digest's stand-in counts for nothing).
        taken = ([into] if into else []) + [entry, *together]
        facts = [f for e in taken for f in _facts(e)]
        rolled = Entry(target, render(facts, _depth(target)), digest=True)
        self.draft.entries = [e for e in self.draft.entries if e not in taken] + [rolled]
        return True

    def _covering(self, day: str, depth: int) -> Entry | None:
        """The scene's movable digest of ``depth`` or deeper whose period holds ``day``."""
        found = [e for e in self._movable(lambda e: e.digest)
                 if _depth(e.day) >= depth and covers(e.day, day)]
        return min(found, key=lambda e: _depth(e.day)) if found else None

    def merge_years(self, keep: int) -> bool:
        """Roll the two oldest digests of a year or more into one digest of the years they
        span (depth 4; two digests of one year: that year's), while the scene has more than
        ``keep`` of them: a scene full of years keeps its last ones as years and its earlier
        ones as one span. False when there are no more than ``keep`` (or fewer than two)."""
        yearly = sorted(self._movable(_is_yearly), key=lambda e: (sort_key(e.day), e.day))
        if len(yearly) < 2 or len(yearly) <= keep:
            return False
        taken = yearly[:2]
        bounds = [_years(e.day) for e in taken]
        period = span(str(min(b[0] for b in bounds)), str(max(b[1] for b in bounds)))
        facts = [f for e in taken for f in _facts(e)]
        rolled = Entry(period, render(facts, _depth(period)), digest=True)
        self.draft.entries = [e for e in self.draft.entries
                              if all(e is not t for t in taken)] + [rolled]
        return True

    def retire_thread(self) -> bool:
        """Move the oldest open thread an earlier batch opened to the timeline, as left open
        (a thread of this batch carries its memory's id and stays)."""
        old = [t for t in self.draft.threads if not t.ids]
        if not old:
            return False
        thread: Thread = min(old, key=lambda t: t.day)
        self.draft.threads = [t for t in self.draft.threads if t is not thread]
        left = "（未决）" if is_cjk_text(thread.text) else " (left open)"
        self.draft.entries.append(Entry(thread.day, thread.text.rstrip(".。") + left))
        return True

    def _candidates(self, milestones: bool) -> list[tuple[Entry, list[Fact], Fact]]:
        """(digest, its facts, a fact it may give up) for every fact of the movable digests
        but a digest's last one (and, unless ``milestones``, but a milestone), the least of
        note first (``_notes``: a fact that introduces a name or place last, then by
        ``note``; ties the oldest first)."""
        digests = [(e, _facts(e)) for e in self._movable(lambda e: e.digest)]
        found = [(e, facts, f) for e, facts in digests if len(facts) > 1 for f in facts
                 if milestones or not f.milestone]
        if not found:
            return []
        notes = _notes(self.draft, digests)
        return sorted(found, key=lambda c: (c[2].milestone, *notes[id(c[2])], c[2].start,
                                            c[2].end, sort_key(c[0].day)))

    def give_ups(self) -> list[Callable[[], bool]]:
        """The ways to give up one whole fact of the scene's digests, in order (step 5 of the
        module docstring): the least of note first, never a milestone, never a digest's last
        fact. The digest still covers its period, so ``trace`` finds the memory and the
        journal keeps its words. Each way returns True when it changed the draft."""
        return [self._way(entry, [f for f in facts if f is not drop])
                for entry, facts, drop in self._candidates(False)[:GIVE_UP_TRIES]]

    def squeezes(self) -> list[Callable[[], bool]]:
        """The last resort of a scene too small for its rollups (``max_scene_chars`` near
        its minimum), as the ways to take it, in order: a fact given up, milestones too (the
        least of note first, a digest's last fact never); then a digest's one fact named by
        its own nouns and names (``prose.name_of``) instead of a sentence. The digest still
        covers its period, so ``trace`` finds its memories and the journal keeps their
        words. Each way returns True when it changed the draft."""
        ways = [self._way(entry, [f for f in facts if f is not drop])
                for entry, facts, drop in self._candidates(True)[:GIVE_UP_TRIES]]
        for entry in sorted(self._movable(lambda e: e.digest), key=lambda e: sort_key(e.day)):
            facts = _facts(entry)
            if len(facts) == 1 and (named := name_of(facts[0].text)):
                ways.append(self._way(entry, [replace(facts[0], text=named)]))
        return ways

    def _way(self, entry: Entry, facts: list[Fact]) -> Callable[[], bool]:
        """A step that gives ``entry`` the text of ``facts`` (False if that changes nothing
        or leaves it empty)."""
        def step() -> bool:
            text = _join(facts, in_span=is_span(entry.day))
            if not text or text == entry.text:
                return False
            self._replace(entry, replace(entry, text=text))
            return True
        return step

    def _replace(self, old: Entry, new: Entry) -> None:
        self.draft.entries = [new if e is old else e for e in self.draft.entries]


def _facts(entry: Entry) -> list[Fact]:
    """The facts of a day entry (one per sentence-run: the entry) or of a digest line (older
    digest forms read too: citations, counts and "N more" dropped; a fact an older engine cut
    short, "…", loses the clause it cut: ``prose.whole``)."""
    return list(_parsed(entry.day, entry.text, entry.digest))


@functools.lru_cache(maxsize=2048)      # digest lines are long: a few batches' worth
def _parsed(day: str, said: str, digest: bool) -> tuple[Fact, ...]:
    if not digest:
        text = whole(said)
        return (Fact(day, day, text),) if text else ()
    body = _COUNTED.sub("", said)
    out = []
    for part in (p for p in body.split(SEPARATOR) if p.strip()):
        plain = cited(part)[0].strip()
        if _MORE.match(plain):
            continue
        found = parse_fact(plain, day)
        if not found:
            out.append(Fact(first_day(day), first_day(day), whole(plain)))
            continue
        start, end, times, text = found
        out.append(Fact(start, end, whole(text), times))
    return tuple(out)


@functools.lru_cache(maxsize=65536)     # each step compares a digest's facts again
def same_theme(a: str, b: str) -> bool:
    """True when two facts are of one theme: the same subject doing the same kind of thing,
    said again, told by their topic words (``words.analyzer``, each weighed by its
    ``specificity``): what they share is at least ``SAME_THEME`` of each one's. Of the
    smaller one's only, "RabbitMQ is easier to operate, but the order service needs replay"
    was one theme with a comparison doc of Kafka and RabbitMQ for the order service, and
    merged into its words it left every scene (issue 36)."""
    (ta, wa), (tb, wb) = _weighed(a), _weighed(b)
    both = ta.keys() & tb.keys()
    return len(both) >= 2 and sum(ta[t] for t in both) >= SAME_THEME * max(wa, wb)


@functools.lru_cache(maxsize=4096)      # a digest's facts are compared again at every step
def _weighed(text: str) -> tuple[dict[str, float], float]:
    """(each topic word of ``text`` with its ``specificity``, their sum)."""
    terms = {t: specificity(t) for t in set(analyzer(text))}
    return terms, sum(terms.values())


def themes(facts: list[Fact], milestones: bool = False) -> list[list[Fact]]:
    """``facts`` grouped by theme (``same_theme`` with the group's first fact), in the order
    of their first fact; a milestone is a theme of its own (it is never merged away), or with
    ``milestones`` (a span of years) one with the milestones of its theme (the same event told
    again: its dates and count carry every one)."""
    groups: list[list[Fact]] = []
    for fact in sorted(facts, key=lambda f: (f.start, f.end)):
        home = None if fact.milestone and not milestones else next(
            (g for g in groups if g[0].milestone == fact.milestone
             and same_theme(g[0].text, fact.text)), None)
        if home is None:
            groups.append([fact])
        else:
            home.append(fact)
    return groups


def _typical(group: list[Fact]) -> Fact:
    """The fact that shares most with the others of its theme (ties: the earliest)."""
    if len(group) <= 2:
        return group[0]
    terms = [set(analyzer(f.text)) for f in group]
    score = [sum(len(t & o) for j, o in enumerate(terms) if j != i) for i, t in enumerate(terms)]
    return group[score.index(max(score))]


def _merge(group: list[Fact]) -> Fact:
    """One fact for a theme: its date range, how many times, the typical fact's words."""
    typical = _typical(group)
    return Fact(min(f.start for f in group), max(f.end for f in group), typical.text,
                sum(f.times for f in group))


def render(facts: list[Fact], depth: int) -> str:
    """The text of a digest line of ``depth`` (1 month, 2 quarter, 3 year, 4 span) holding
    ``facts``: merged by theme, every theme kept, oldest first, each said whole (see the
    module docstring). Facts are given up only when the scene needs the room
    (``_Roller.give_ups``), not here."""
    return _rendered(tuple(facts), depth)


@functools.lru_cache(maxsize=1024)      # a step undone by the rule is taken again (``condense``)
def _rendered(facts: tuple[Fact, ...], depth: int) -> str:
    merged = [_merge(g) for g in themes(list(facts), milestones=depth == 4)]
    return _join([replace(f, text=shorten(f.text, FACT_WORDS)) for f in merged],
                 in_span=depth == 4)


@functools.lru_cache(maxsize=4096)
def names(text: str) -> frozenset[str]:
    """The keys (``words.words``) of the names and places ``text`` says: an English word
    written with a capital inside a sentence or in capitals (``Porto``, ``Gwen``, ``CKA``); a
    Chinese word jieba's dictionary tags as a person, place, organisation or other proper
    noun (``杭州``, ``小林``), or lacks (a name its HMM joined: ``王磊``)."""
    pairs = words(text)
    cjk = [key for key, _ in pairs if is_cjk_text(key)]
    tags = part_of_speech(cjk) if cjk else {}
    found = set()
    for key, surface in pairs:
        if is_cjk_text(key):
            tag = tags.get(key)
            if len(key) >= 2 and (tag is None or tag[:2] in ("nr", "ns", "nt", "nz")):
                found.add(key)
        elif surface[:1].isupper():
            found.add(key)
    return frozenset(found)


def _notes(draft: Draft, digests: list[tuple[Entry, list[Fact]]]
           ) -> dict[int, tuple[bool, float]]:
    """(introduces, ``note``) of every fact of ``digests`` (by ``id``) against the rest of
    ``draft``: ``introduces`` when it says a name or place (``names``) that no line or fact of
    the scene says on an earlier day (the first home's street, the first job's firm, the
    manager's name; the scene's text before and after its timeline counts as earliest)."""
    rolled = {id(e) for e, _ in digests}
    # (day, text) of every line and fact of the scene; "" sorts before every day.
    said = [(first_day(e.day), e.text) for e in draft.entries if id(e) not in rolled]
    said += [(t.day, t.text) for t in draft.threads]
    said += [("", line) for line in (draft.head + "\n" + draft.tail).split("\n") if line.strip()]
    own = [f for _, facts in digests for f in facts]
    said += [(f.start, f.text) for f in own]
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for day, text in said:
        for term in set(analyzer(text)):
            counts[term] = counts.get(term, 0) + 1
        for name in names(text):
            first[name] = min(first.get(name, day), day)
    return {id(f): (any(first[n] >= f.start for n in names(f.text)),
                    note(set(analyzer(f.text)), counts, names(f.text))) for f in own}


def note(terms: set[str], counts: dict[str, int], names: frozenset[str] = frozenset()) -> float:
    """How much a fact says that its scene says nowhere else: the ``specificity`` of each of
    its ``terms`` no other line or fact has (``counts``: in how many of the scene's lines
    and facts, this one included, each term is), a name or place (``names``) ``NAME_NOTE``
    times as much. The same kind of day said again notes 0; a first job, a manager's name,
    a first home note most."""
    return sum(specificity(t) * (NAME_NOTE if t in names else 1.0)
               for t in terms if counts.get(t, 0) <= 1)


def _join(facts: list[Fact], in_span: bool = False) -> str:
    return SEPARATOR.join(_said(f, in_span) for f in sorted(facts, key=lambda f: (f.start, f.end)))


def _said(fact: Fact, in_span: bool) -> str:
    """``4–29 Mar ×6: text`` (``periods.say_fact``: with the years in a span of years); a
    ``; `` of the text becomes ``, `` (it separates the facts of a digest)."""
    text = fact.text.replace(SEPARATOR, ", ").rstrip(".。")   # the separator ends it
    return say_fact(fact.start, fact.end, fact.times, text, in_span)
