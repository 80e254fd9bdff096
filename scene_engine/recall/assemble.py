"""Recall: what an agent puts in its context for a query, within a character budget.

The text has three parts, in this order: the persona, a compact map of the scenes (name, heat,
summary; the scenes that match the query first), and the passages that best answer the query.
Passages come from both layers: sentences of the matching scenes (a timeline line's date kept
with each of its sentences) and the matching memories of the journal (each with its date),
ranked together by one BM25 whose word weights come from the whole journal. A memory stands in for a scene sentence that only
restates it (the memory keeps the words as said, and its id); a passage whose words an already
chosen one states is skipped, so one fact does not spend the budget twice. A question about time
("when", "how long ago", 什么时候, 哪年) prefers passages that name a time; any other question
prefers, among near equals, passages of a day that holds a strong match (``_by_day``).
Relative times are made absolute ("last year (2022)", ``when.resolve``). Chosen passages are laid out by date, the
facts of one day under one heading, oldest first (newest first after a question about what
is true now), undated ones before them. Nothing is cut
mid-sentence and the total never exceeds the budget. Candidates come from the FTS index (so a
store of 10,000 scenes or 100,000 memories costs about what a small one does).

Every passage names its source one way (issue 21): a scene's sentence, and a memory a
candidate scene holds (its digest cites it, or one of its sentences restates it), is cited by
the scene's map tag, the scene added to the map when it was not shown; a memory no scene
holds has no tag. A quote the engine cut short (a digest's first words of a fact, "…") is
never a passage: the memory it quotes stands in for it, whole, or it is left out.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from scene_engine.core.errors import InputError
from scene_engine.core.fs import read_regular_text
from scene_engine.core.ids import expand_range
from scene_engine.core.periods import PERIOD, parse_fact, say_fact
from scene_engine.core.plural import count
from scene_engine.core.when import readable, resolve
from scene_engine.index.analysis import CJK_RUN, fold, question_terms, text_terms
from scene_engine.recall.current import (
    ASKS_CURRENT,
    Nearness,
    Question,
    Verdict,
    expansion,
    is_question,
    read_question,
    weigh,
)
from scene_engine.store.layout import StoreError
from scene_engine.store.store import Store

if TYPE_CHECKING:
    from scene_engine.index.scenes import Hit, SceneIndex
    from scene_engine.recall.semantic import Meaning

DEFAULT_BUDGET = 4000
CANDIDATES = 16           # scenes whose sentences compete for the passage budget
MEMORY_CANDIDATES = 60    # memories that compete with them (more for a larger budget)
CHARS_PER_CANDIDATE = 50  # ... one candidate memory per this many characters of budget
LONG_MEMORY = 400         # a memory longer than this is recalled sentence by sentence
SAME_FACT = 0.8           # a passage this much covered by a chosen one says nothing new
# Characters of a Chinese question's frame, not its topic: a pair holding one anchors nothing.
_FUNCTION_CHARS = frozenset("我你他她们的了是在吗呢什么哪怎样还有没不谁几")
HISTORY = 3               # earlier values of an asked attribute shown after the current one
STATING = 40              # memories that may state it, searched by the question's rarest words
TIME_BOOST = 1.3          # a passage that names a time, for a question about time
SAME_DAY = 0.3            # share of its day's best other score a passage gains (not for "when")
_TIME_QUESTION = re.compile(
    r"\b(when|what (year|month|day|date|time)|how long|which (year|month|day)|ago|since|"
    r"until|before|after|date)\b|什么时候|哪年|哪一年|几月|哪天|多久|何时|几号", re.I)
_TIME_WORDS = re.compile(
    r"\bhow (long|many (years|months|weeks|days))( ago)?\b|\b(ago|since when)\b", re.I)
_NAMES_TIME = re.compile(
    r"\((?:the |\d)|\b(?:19|20)\d\d\b|\d+\s*[年月日号]|\b(?:January|February|March|April|May|"
    r"June|July|August|September|October|November|December)\b")
PERSONA_SHARE = 0.08      # at most this share of the budget for the persona
MAX_RECALL_BUDGET = 10_000_000   # core.checks.MAX_BUDGET
MAP_SHARE = 0.05          # ... and for the scene map (the lines its passages add come on top)
PERSONA_MAX = 400         # ... and never more than this many characters (a paragraph)
MAP_MAX = 600             # (about five scenes with their summaries)
SUMMARY_CHARS = 100       # a summary in the map is cut (at a word) to this
_DIGEST = re.compile(rf"^- ({PERIOD}) \(digest\): (?:\d+ entries: )?(.*)$")
_CITED = re.compile(r"\s*\[[^\[\]]*\]$")      # a digest fact's memory ids ("fact [m1, m2]")
_MORE = re.compile(r"^\d+ more(?: \(.*\))?$")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_TIMELINE = re.compile(r"^- (\d{4})-(\d{2})-(\d{2}): (.*)$")
_CLOSED = re.compile(r"\s*→\s*\d{4}-\d{2}-\d{2}: ")     # ``threads.ARROW`` and a day
_SHORTEST_LINE = 8        # no passage line is shorter ("- " and a few words): stop looking
_CUT = "…"                # how the engine marks a quote it cut short (``rollup.quote``)
_MAP_HEADING = "## Scenes\n"

# ``terms -> (documents, {term: documents holding it})``: the statistics IDF is taken from.
Corpus = Callable[[set[str]], tuple[int, dict[str, int]]]


@dataclass
class Passage:
    """One passage: a sentence of the scene ``scene``, or, with ``memory`` set (its id), a
    memory of the journal (``created_at`` its ISO instant; ``scene`` the scene that holds
    it, or ""). ``text``: the words, relative times made absolute; ``day``: the date it is
    about (a timeline line's or the memory's), or None; ``score``: BM25 against the query;
    ``cut``: the engine's shortened quote of a fact (never shown as it is); ``cites``: the
    ids of the memories a digest's fact cites; ``period``: the dates of a digest's fact over
    several days (``4–29 Mar 2026 ×6``) or of its undated one (the digest's ``1990–1999``),
    shown after its text but not searched (a range is no answer to "when")."""

    scene: str
    text: str
    day: date | None = None
    score: float = 0.0
    memory: str | None = None
    created_at: str | None = None
    cut: bool = False         # a quote the engine cut short: shown only as its memory
    cites: tuple[str, ...] = ()   # the memories a digest fact cites
    period: str = ""          # a digest fact of no one day: its dates (``4–29 Mar 2026 ×6``)
    status: str = ""          # a current fact's "current, said 21 Feb 2026" (``current``)

    def source(self) -> dict:
        """Where it comes from, for ``--json``: ``{"scene": NAME}``, ``{"memory": ID,
        "created_at": ISO}``, or both when a scene holds the memory."""
        found: dict[str, str | None] = {"scene": self.scene} if self.scene else {}
        if self.memory is not None:
            found.update(memory=self.memory, created_at=self.created_at)
        return found

    def dated(self) -> str:
        """The text after its readable date (``8 May 2023: ...``), or with its period after
        it (``text (4–29 Mar 2026 ×6)``), or the text alone."""
        return f"{readable(self.day)}: {self.text}" if self.day else self.shown()

    def shown(self) -> str:
        """The text as a recall shows it: a digest fact's period after it."""
        return f"{self.text} ({self.period})" if self.period else self.text

    def labelled(self) -> str:
        """``shown`` after a current fact's status ("current, said 21 Feb 2026: ...")."""
        return f"{self.status}: {self.shown()}" if self.status else self.shown()


@dataclass
class Recall:
    """A recall result: ``text`` (what goes in the context, ``len(text) <= budget``), the
    ``persona`` part, the ``scenes`` map rows, the chosen ``passages`` (best first),
    ``warning``: one line when the index could not be brought up to date (the answer may be
    stale) or a line of the journal or the extraction ledger cannot be read (named by file
    and line: what it holds is missing from the answer), else None; and ``note``: when no
    passage answers the query, one line that says so (``nothing_found``), else None."""

    text: str
    budget: int
    persona: str = ""
    scenes: list[dict] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    warning: str | None = None
    note: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict of the result; a passage's ``date`` is ISO (``2023-05-08``),
        its ``tag`` the map tag it is cited by (``S1``), when its scene is in the map."""
        tags = {row["name"]: f"S{i}" for i, row in enumerate(self.scenes, start=1)}
        return {"budget": self.budget, "chars": len(self.text), "text": self.text,
                "persona": self.persona, "scenes": self.scenes,
                "passages": [{**p.source(),
                              **({"tag": tags[p.scene]} if p.scene in tags else {}),
                              "text": p.text, "date": p.day.isoformat() if p.day else None,
                              **({"period": p.period} if p.period else {}),
                              **({"status": p.status} if p.status else {}),
                              "score": round(p.score, 4)} for p in self.passages],
                "empty": not self.passages,
                **({"note": self.note} if self.note else {}),
                **({"warning": self.warning} if self.warning else {})}


def nothing_found(text: str) -> str:
    """The line a recall with no passage says: that nothing in memory answers the query, and
    what the answer ``text`` holds instead (the persona and the scene map, or nothing)."""
    rest = "only the persona and the scene map are given" if text else "the answer is empty"
    return f"nothing in memory answers the query: {rest}"


def readable_date(year: str, month: str, day: str) -> str:
    """``("2023","05","08")`` -> ``"8 May 2023"`` (how people, and questions, write dates)."""
    return readable(date(int(year), int(month), int(day)))


def _day(year: str, month: str, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:              # "2023-02-30" in a hand-edited timeline: left undated
        return None


def split_passages(scene: str, body: str) -> list[Passage]:
    """The sentences of a scene body; timeline sentences carry their line's date (and their
    relative times are resolved against it). A digest fact cut to its first words, or the
    end of a timeline line holding a memory too long for its scene, is marked ``cut``."""
    return [Passage(scene, text, day, cut=cut, cites=cites, period=period)
            for text, day, cut, cites, period in _sentences(scene, body)]


@functools.lru_cache(maxsize=256)
def _sentences(scene: str, body: str
               ) -> tuple[tuple[str, date | None, bool, tuple, str], ...]:
    """``split_passages`` as (text, day, cut, cites, period); cached, since an agent asks
    about the same scenes again and again and a body is split the same way each time."""
    passages = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        digest = _DIGEST.match(line)
        if digest:      # "- 2023-05 (digest): 7 May: fact; 12 May: fact" (offline rollups)
            passages += [(p.text, p.day, p.cut, p.cites, p.period)
                         for p in _digest_passages(scene, *digest.groups())]
            continue
        found = _TIMELINE.match(line)
        day = None
        if found:
            day = _day(*found.groups()[:3])
            line = found.group(4) if day else line
        line = line.lstrip("-* ")
        # A closed thread ("plan. → 2026-11-15: outcome…"): the outcome's whole text is the
        # timeline's entry of its own day, so the clipped copy after the arrow is no passage.
        line = _CLOSED.split(line, 1)[0]
        # A memory longer than its scene is kept by its beginning (``offline`` backend).
        clipped = found is not None and len(line) > LONG_MEMORY and line.endswith(_CUT)
        parts = [p.strip() for p in _SENTENCE.split(line) if p.strip()]
        for n, text in enumerate(parts, start=1):
            passages.append((resolve(text, day) if day else text, day,
                             clipped and n == len(parts), (), ""))
    return tuple(passages)


def _digest_passages(scene: str, period: str, facts: str) -> list[Passage]:
    """Each fact of a digest (month, quarter, year or span of years; offline ``rollup``) as
    a passage, its ``7 May`` day made 7 May of that year (``periods.parse_fact``), a theme
    over days with no day, its cited memory ids in ``cites`` (not in its text), ``cut`` when
    the digest kept only its first words."""
    out = []
    for fact, ids in filter(lambda f: f[0], map(_cited, facts.split("; "))):
        if _MORE.match(fact):       # "13 more" of a quarter or year digest says nothing
            continue
        dated = parse_fact(fact, period)
        text, day, when = fact, None, period       # undated: the digest's period is its
        if dated and dated[0] == dated[1]:
            day = _day(*dated[0].split("-"))
            text, when = (resolve(dated[3], day), "") if day else (fact, "")
        elif dated:       # a theme over days: no one day is its, its range and count are
            text = dated[3]
            when = say_fact(dated[0], dated[1], dated[2], "", in_span=True).rstrip(": ")
        out.append(Passage(scene, text, day, cut=fact.endswith(_CUT), cites=ids,
                           period=when))
    return out


def _cited(fact: str) -> tuple[str, tuple[str, ...]]:
    """(a digest fact without its citation, the memory ids it cites, ranges expanded)."""
    found = _CITED.search(fact)
    if not found:
        return fact.strip(), ()
    tokens = (t.strip() for t in found.group(0).strip(" []").split(","))
    return fact[: found.start()].strip(), tuple(i for t in tokens if t for i in expand_range(t))


@functools.lru_cache(maxsize=256)
def cited_ids(body: str) -> tuple[tuple[str, bool], ...]:
    """(memory id, whether a fact quotes it rather than counts it: ``13 more [...]``) for
    every memory a scene body's digests cite (``rollup.cite``: ``fact [m1, m0012..m0019]``),
    in order."""
    out = []
    for line in body.splitlines():
        digest = _DIGEST.match(line.strip())
        for fact, ids in map(_cited, digest.group(2).split("; ") if digest else ()):
            out += [(i, not _MORE.match(fact)) for i in ids]
    return tuple(out)


def rank_passages(query: str, passages: list[Passage],
                  corpus: Corpus | None = None) -> list[Passage]:
    """BM25 (k1 1.2, b 0.75, length in characters) of each passage (its date and text) against
    the query terms (the search analyser: stems, Chinese words by character pairs, stop words
    out); best first, ties by original order. Passages with no query term are dropped.

    ``corpus`` gives the document frequencies the word weights come from (the journal's, from
    the index); without it, the passages themselves are the corpus.
    """
    wanted = question_terms(query)
    if not wanted or not passages:
        return []
    # A passage can only hold a term whose text it (nearly) contains: tokenise just those
    # (recall is on an agent's hot path; a 10,000-scene store brings hundreds of candidate
    # sentences). A stem may end differently from its word ("happi", "happy"): drop a letter.
    probes = {t if len(t) < 4 else t[:-1] for t in wanted}
    passages = [p for p in passages if _holds_any(fold(p.dated()), probes)]
    if not passages:
        return []
    docs = [_term_counts(p.dated()) for p in passages]
    lengths = [len(p.dated()) for p in passages]
    scores = _bm25(wanted, docs, lengths, corpus or _own_corpus(docs))
    for passage, score in zip(passages, scores, strict=True):
        passage.score = score
    order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))
    return [passages[i] for i in order if scores[i] > 0]


@functools.lru_cache(maxsize=16384)
def _term_counts(text: str) -> Counter:
    """``Counter`` of ``text_terms(text)``, each Chinese character pair also counted as its
    first character: a one-character word of a question matches as a prefix, as in the index
    (``渋谷``, cut by jieba into ``渋 / 谷``, finds ``渋谷で``). Shared, never changed (an agent
    asks about the same passages again and again)."""
    terms = text_terms(text)
    counts = Counter(terms)
    if not text.isascii():
        counts.update(t[0] for t in terms if len(t) == 2 and CJK_RUN.fullmatch(t))
    return counts


def _bm25(terms: set[str], docs: list[Counter], lengths: list[int],
          corpus: Corpus) -> list[float]:
    n, df = corpus(terms)
    idf = {t: _idf(n, df.get(t, 0)) for t in terms}
    avg = sum(lengths) / len(lengths) or 1.0
    return [sum(idf[t] * doc[t] * 2.2 / (doc[t] + 1.2 * (0.25 + 0.75 * length / avg))
                for t in idf.keys() & doc.keys())
            for doc, length in zip(docs, lengths, strict=True)]


def _idf(n: int, df: int) -> float:
    return math.log(1 + (max(n, df) - df + 0.5) / (df + 0.5))


def _own_corpus(docs: list[Counter]) -> Corpus:
    def stats(terms: set[str]) -> tuple[int, dict[str, int]]:
        return len(docs), {t: sum(1 for d in docs if t in d) for t in terms}
    return stats


def _holds_any(text: str, probes: set[str]) -> bool:
    return any(t in text for t in probes)


def _persona_part(store: Store, limit: int) -> str:
    """The persona's first sentences, in order, while they fit in ``limit`` characters (its
    own top heading dropped: the recall text has one; no dangling lead-in line). A persona
    that is not UTF-8 is left out, as a batch leaves it alone (``_persona_unreadable``
    says why)."""
    if limit <= 20:
        return ""
    try:   # a link to a file elsewhere is not the persona: nothing outside the store is read
        text = read_regular_text(store.persona_path).strip()
    except (OSError, UnicodeDecodeError):
        return ""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("# ")]
    out, used = [], 0
    for sentence in (s for line in lines for s in _SENTENCE.split(line) if s.strip()):
        if used + len(sentence) + 1 > limit:
            break
        out.append(sentence)
        used += len(sentence) + 1
    while out and out[-1].rstrip().endswith((":", "：")):
        out.pop()
    return "\n".join(out)


def _check_arguments(store: Any, query: Any, budget: Any, scope: Any) -> None:
    """Refuse what the command line refuses, in its words (``core.checks``), with
    ``InputError``: a Python caller gets no raw ``TypeError`` or ``AttributeError``."""
    from scene_engine.core.checks import MAX_BUDGET, MIN_BUDGET, check_number, check_query
    from scene_engine.store.layout import StorePaths
    from scene_engine.store.memories import label_problem

    if not isinstance(store, StorePaths):
        raise InputError(f"recall needs an open store (scene_engine.open_store(DIR)), not "
                         f"{store!r}")
    check_query(query)
    check_number(budget, "budget", MIN_BUDGET, MAX_BUDGET)
    problem = label_problem(scope, "scope").replace("`scope`", "the scope")
    if problem:
        raise InputError(problem)


def recall(store: Store, query: str, budget: int = DEFAULT_BUDGET,
           index: SceneIndex | None = None, scope: str | None = None,
           persona: bool = False) -> Recall:
    """Build the recall text for ``query`` in at most ``budget`` characters.

    ``persona``: the caller asks for the persona (``scenes recall --persona``): when it does
    not fit the budget, the warning says so and with what budget it would. Unasked, that is
    said only when the budget is below what the persona takes at its default share (the
    persona a recall of the default budget shows): a smaller budget chosen on purpose is not
    a fault.

    ``scope``: recall for one agent or project: only memories of that scope or of none, and
    no persona or scenes (a scene folds the memories of every scope together, so it could
    tell one scope another's facts).

    ``index``: an open ``SceneIndex`` to reuse (for speed in a loop); otherwise one is opened
    and brought up to date (``index.open_for_reading``: never needs write access; a busy
    index answers as it is, with ``Recall.warning`` set). An interrupted batch is rolled back
    first (``recovery.ensure_recovered``: one ``stat`` when there is none), so its
    half-written scenes are never recalled. Raises ``InputError`` (also a ``ValueError``)
    for an empty query or one that is not text, a budget that is not a whole number from 100
    to 10,000,000, a scope that is not one, or a ``store`` that is not a store, in the
    command line's words; ``index.IndexUnavailable`` when no index can be read or built.
    """
    _check_arguments(store, query, budget, scope)
    from scene_engine.index.scenes import read_index
    from scene_engine.store.recovery import ensure_recovered

    ensure_recovered(store)
    query = _without_time_words(query)

    own = index is None
    warning = None
    if index is None:
        index, warning = read_index(store)
    try:
        scoped = scope is not None
        meaning = _by_meaning(store, index, query, scoped)   # embeds while words are searched
        hits = [] if scoped else index.search(query, k=CANDIDATES, any_term=True)
        bodies = index.bodies([h.name for h in hits])
        hot = [] if scoped else index.hottest(12)
        k = max(MEMORY_CANDIDATES, budget // CHARS_PER_CANDIDATE)
        found = index.search_memories(query, k=k, any_term=True, scope=scope)
        # Some word of the query is in the journal, or it is a question at all.
        worded = bool(found) or is_question(query)
        unread = [index.journal_warning(), _ledger_warning(store), index.header_warning()]
        gone = not_current(store)
        question = _asked(index, query)
        if question is not None:      # its latest mentions and statements, BM25 aside
            known = {m.id for m in found}
            for words in [*expansion(question), " ".join(sorted(question.anchors))]:
                more = index.newest_memories(words, k=STATING, scope=scope)
                found += [m for m in more if m.id not in known]
                known |= {m.id for m in more}
        meant, said = meaning()
        # The vectors know no scope; words to find of which the journal holds none take
        # meaning only when it stands out more ("zyzzyva quokka": ``semantic.Leads``).
        dense = [] if scoped or not (worded or meant.alone) else meant.hits
        known = {m.id for m in found}
        found += [m for m in dense if m.id not in known]
        found = [m for m in found if m.id not in gone]
        found += _quoted_memories(index, bodies, {m.id for m in found} | gone)
        current = _weighed(index, question, found, meant)
        holder = None if scoped else _scene_holder(store, index, [*hits, *hot], bodies, found)
        zone = store.config.tz
        passages = [p for m in found for p in memory_passages(m, zone)]
        if found:     # the journal's word statistics, read while the index is open
            memo: dict[str, int] = {}
            total, lookup = index.memory_count, index.memory_document_counts

            def corpus(terms: set[str]) -> tuple[int, dict[str, int]]:
                missing = terms - memo.keys()
                memo.update(lookup(missing) if missing else {})
                return total(), {t: memo.get(t, 0) for t in terms}

            result = assemble(store, query, budget, hits, bodies, hot, passages, corpus,
                              persona=not scoped, holder=holder, current=current,
                              dense=[m.id for m in dense] or None, asked=persona)
        else:
            result = assemble(store, query, budget, hits, bodies, hot, passages,
                              persona=not scoped, holder=holder, current=current,
                              dense=[m.id for m in dense] or None, asked=persona)
    finally:
        if own:
            index.close()
    # Said on every answer that may lack what a bad line holds (in ``to_json`` too).
    result.warning = "; ".join(filter(None, [warning, *unread, said, result.warning])) or None
    if not result.passages:      # said, never a blank answer a caller takes for a recall
        result.note = nothing_found(result.text)
    return result


def _by_meaning(store: Store, index: SceneIndex, query: str, scoped: bool
                ) -> Callable[[], tuple[Meaning, str | None]]:
    """A function giving (what the encoder says of ``query``: ``semantic.Meaning``, a
    warning or None), its search begun now (``semantic.start``): an empty ``Meaning`` when
    meaning is turned off; a vectors file that cannot be used costs only the meaning, said
    in the warning. ``scoped``: the caller keeps no hit (the vectors know no scope), only
    the question's vector for judging current facts."""
    from scene_engine.core.errors import SceneEngineError
    from scene_engine.recall.semantic import Meaning, enabled, start

    def failed(err: Exception) -> Callable[[], tuple[Meaning, str | None]]:
        return lambda: (Meaning(), f"recall by meaning is off for this answer: {err}")

    if not enabled():
        return lambda: (Meaning(), None)
    try:
        pending = start(store, index, query)
    except (SceneEngineError, OSError) as err:
        return failed(err)

    def result() -> tuple[Meaning, str | None]:
        try:
            return pending(), None
        except (SceneEngineError, OSError) as err:
            return failed(err)()
    return result


def _weighed(index: SceneIndex, question: Question | None, found: list, meant: Meaning
             ) -> Verdict | None:
    """What the evidence says about the attribute ``question`` asks (``current.weigh``)
    among the ``found`` memories (``MemoryHit``), by their roles and, with meaning, their
    vectors (``meant.vectors``: the store's cached ones); None without a question."""
    if question is None or not found:
        return None
    newest = sorted(found, key=lambda m: (_instant(m.created_at), m.seq), reverse=True)
    roles = index.memory_roles([m.seq for m in newest])
    candidates = [(m.id, m.content, roles.get(m.seq)) for m in newest]
    if meant.query is None or meant.vectors is None or meant.median is None:
        return weigh(question, candidates, None)
    import numpy as np

    matrix = meant.vectors([m.content for m in newest])
    row = {m.id: n for n, m in enumerate(newest)}
    cosines = np.einsum("ij,j->i", matrix, meant.query)

    def typical(ids) -> float:
        rows = matrix[[row[i] for i in ids]]
        pairs = np.einsum("ij,kj->ik", rows, rows)    # numpy's loop: BLAS threads spin here
        return float(np.median(pairs[np.triu_indices(len(ids), 1)])) if len(ids) > 1 else 0.0
    return weigh(question, candidates, Nearness(
        near=lambda i: float(cosines[row[i]]),
        between=lambda a, b: float(np.dot(matrix[row[a]], matrix[row[b]])),
        median=meant.median, typical=typical))


def _instant(created_at: str) -> float:
    """An ISO instant as seconds (a zone-less one read as UTC), for ordering; 0 when it is
    no instant."""
    try:
        moment = datetime.fromisoformat(created_at)
    except ValueError:
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _asked(index: SceneIndex, query: str) -> Question | None:
    """The attribute of the speaker ``query`` asks about (``current.read_question``), with
    its rarest content term as anchor (the journal's counts: a word in more than a tenth of
    the memories anchors nothing), or None: for a question about when, unless it also asks
    about now ("since when do I live here" is about time; "where do I live now" is not)."""
    if _TIME_QUESTION.search(query) and not ASKS_CURRENT.search(query):
        return None
    terms = question_terms(ASKS_CURRENT.sub(" ", query))
    counts = index.memory_document_counts(terms) if terms else {}
    total = max(index.memory_count(), 1)
    usable = sorted((n, t) for t, n in counts.items()
                    if 0 < n <= total / 10 and not _FUNCTION_CHARS.intersection(t))
    anchors = frozenset(t for _, t in usable[:2 if usable and CJK_RUN.match(usable[0][1])
                                            else 1])
    return read_question(query, anchors)


def _ledger_warning(store: Store) -> str | None:
    """The extraction ledger's first line that is not an event, for the answer's warning
    (its other events still count), or None."""
    from scene_engine.extraction.events import read_intact

    problems = read_intact(store)[1]
    return problems[0] if problems else None


Holder = Callable[[str, str, "date | None"], "dict | None"]


def _scene_holder(store: Store, index: SceneIndex, scenes: list, bodies: dict[str, str], found: list
                  ) -> Holder:
    """A function ``(memory id, text) -> map row`` of the scene that holds a recalled memory,
    or None: a scene of ``scenes`` (the candidates, then the hottest) whose digest cites it,
    else, for a memory a batch has folded, a scene of ``scenes`` the batch ledgers put it in
    (``SceneIndex.memory_scenes``), else a scene whose body states its words (one index
    search, only for a memory chosen with no candidate scene restating it)."""
    bodies = {**bodies, **index.bodies([h.name for h in scenes if h.name not in bodies])}
    held: dict[str, Hit] = {}   # memory id -> the index hit of the scene citing it
    for hit in scenes:
        for memory_id, _ in cited_ids(bodies.get(hit.name, "")):
            held.setdefault(memory_id, hit)
    folded = _folded(store, found)

    def holder(memory_id: str, text: str, day: date | None = None) -> dict | None:
        if memory_id in held:
            return _row(held[memory_id])
        if memory_id not in folded:
            return None
        # The ledgers say where it went (a digest by theme names no id): a candidate scene.
        placed = set(index.memory_scenes(memory_id))
        hit = next((h for h in scenes if h.name in placed), None)
        if hit is not None and still_says(text, day, bodies.get(hit.name, "")):
            return _row(hit)
        said = " ".join(text.split())
        for hit in index.search(text, k=3):
            if hit.fallback:            # no scene holds every word of it
                break
            if said in " ".join(index.bodies([hit.name]).get(hit.name, "").split()):
                return _row(hit)
        return None
    return holder


STILL_SAYS = 0.5     # share of a memory's words its scene must still have to be cited


def still_says(text: str, day: date | None, body: str) -> bool:
    """True when a scene ``body`` the ledgers name for a memory (said on ``day``) may still
    hold it: a digest line of the body covers ``day`` (a digest by theme keeps few of each
    memory's words, and the ledger is the evidence), or the body has at least ``STILL_SAYS``
    of the memory ``text``'s words (``core.text.terms``). A line a person removed by hand
    leaves the ledger as it was; the memory is then cited by no scene (as ``scenes trace``
    says "its line was removed by hand"), not by one that no longer says it."""
    from scene_engine.core.periods import covers
    from scene_engine.core.text import terms

    if day is not None:
        said = day.isoformat()
        if any(covers(found.group(1), said) for found in _DIGEST_LINE.finditer(body)):
            return True
    wanted = set(terms(text))
    return not wanted or len(wanted & _body_terms(body)) >= STILL_SAYS * len(wanted)


@functools.lru_cache(maxsize=32)
def _body_terms(body: str) -> frozenset[str]:
    """A scene body's words, once a body: a recall asks of one scene for many memories (a
    few bodies kept: a long-running server holds no store's text for long)."""
    from scene_engine.core.text import terms

    return frozenset(terms(body))


_DIGEST_LINE = re.compile(rf"(?m)^\s*[-*]\s*({PERIOD}) \(digest\)\s*:")


def _folded(store: Store, found: list) -> set[str]:
    """Ids of the ``found`` memories (``MemoryHit``) a batch has taken (none pending)."""
    try:
        state = store.load_state()
    except (OSError, ValueError, StoreError):   # an unreadable state: open_store warned
        return set()
    waiting = set(state.requeued)
    return {m.id for m in found if m.seq < state.cursor and m.seq not in waiting}


def _row(hit) -> dict:
    """A scene map row of an index hit: name, heat, summary cut at a word."""
    return {"name": hit.name, "heat": hit.heat,
            "summary": _cut_words(" ".join(str(hit.summary or "").split()))}


def _quoted_memories(index: SceneIndex, bodies: dict[str, str], known: set[str]) -> list:
    """The memories (``MemoryHit``) the candidate scenes' digests quote (cut short, or in
    telegraphic style), not among ``known`` (found already, or no longer current): the
    words as said stand in for the digest's quote."""
    wanted = {i for body in bodies.values() for i, quoted in cited_ids(body) if quoted} - known
    return index.memories_by_id(sorted(wanted)) if wanted else []


def not_current(store: Store) -> frozenset[str]:
    """Ids of memories that are no longer the current word on their fact: superseded by a
    newer one, merged into another, or the text of a merge since undone (the extraction
    ledger, ``extraction.events``). Recall leaves them out; the journal and search keep them.
    Empty when the ledger is absent; a line that is not an event is passed over (recall's
    warning names it)."""
    from scene_engine.extraction.events import log_path, read_intact, statuses

    if not log_path(store).exists():
        return frozenset()
    found = statuses([], read_intact(store)[0])    # a bad line: the others still count
    return frozenset(i for i, status in found.items() if status != "active")


def _without_time_words(query: str) -> str:
    """``query`` without the words that only ask about time ("how long ago", "how many years
    ago"): they are no topic, and passages that merely say "ago" or "long" must not win. The
    question stays a time question (``_TIME_QUESTION`` sees "when" or what is left, and an
    asked time is marked): returned unchanged when nothing else would remain."""
    rest = _TIME_WORDS.sub(" ", query)
    if rest == query or not question_terms(rest):
        return query
    return "when " + rest.strip()


def memory_passages(hit, zone=None) -> list[Passage]:
    """A memory found by the index (``memory_index.MemoryHit``) as passages, dated by the day
    it was written in ``zone`` (a ``ZoneInfo``, the store's: the day its scene timeline
    shows; None keeps the instant's own offset), relative times resolved against that day.
    One passage, or one a sentence for a memory longer than ``LONG_MEMORY`` characters (a
    long memory must not be out of reach of a small budget)."""
    day = _local_day(hit.created_at, zone)
    text = " ".join(hit.content.split())
    parts = [s for s in _SENTENCE.split(text) if s.strip()] if len(text) > LONG_MEMORY \
        else [text]
    parts = [piece for part in parts for piece in _pieces(part)]
    return [Passage("", resolve(part, day) if day else part, day, memory=hit.id,
                    created_at=hit.created_at) for part in parts]


def _pieces(sentence: str, size: int = LONG_MEMORY) -> list[str]:
    """``sentence`` as it is, or, longer than ``size`` characters (one sentence of thousands:
    a pasted note, a log line), pieces of about ``size`` cut between words, each cut shown
    by "…": no part of a memory is out of reach of a small budget, and a cut never passes
    for the whole."""
    if len(sentence) <= size:
        return [sentence]
    pieces, rest = [], sentence
    while len(rest) > size:
        cut = rest.rfind(" ", size // 2, size)
        cut = cut if cut > 0 else size            # one long token (a URL, CJK): by characters
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    pieces.append(rest)
    return [("…" if i else "") + piece + ("…" if i < len(pieces) - 1 else "")
            for i, piece in enumerate(pieces) if piece]


def _local_day(created_at: str, zone) -> date | None:
    try:
        moment = datetime.fromisoformat(created_at)
    except ValueError:
        return None
    if zone is not None and moment.tzinfo is not None:
        moment = moment.astimezone(zone)
    return moment.date()


def assemble(store: Store, query: str, budget: int, hits, bodies: dict[str, str],
             hot: list, memories: list[Passage] | None = None,
             corpus: Corpus | None = None, persona: bool = True,
             holder: Holder | None = None, current: Verdict | None = None,
             dense: list[str] | None = None, asked: bool = False) -> Recall:
    """Lay out persona, scene map and passages within ``budget`` (see module docstring).

    ``memories``: passages of the journal's best memories (``memory_passages``), ranked with
    the scenes' sentences; ``corpus``: the journal's word statistics (``rank_passages``).
    Scenes in the map get short tags (S1, S2, ...) that their passages cite, so a passage
    costs a few characters of attribution instead of the scene's name; a passage of a scene
    the map could not show adds the scene to the map (name and heat), its cost counted in
    the budget. ``holder``: ``(memory id, text) -> map row`` of the scene holding a memory
    no candidate scene sentence restates (``_scene_holder``). ``persona``: False leaves it
    out. ``current``: what the evidence says about the attribute the query asks
    (``current.weigh``): the memories that state it come first, newest first, the newest
    marked current and the ones before it as history only when the evidence is strong
    (``_current_first``). ``dense``: memory ids nearest the query by meaning, best
    first (the semantic extra, ``semantic.fuse``); None without it. ``asked``: the caller
    asked for the persona (``_persona_warning``).
    """
    persona_text = (_persona_part(store, min(int(budget * PERSONA_SHARE), PERSONA_MAX))
                    if persona else "")
    rows, seen = [], set()
    for row in [*hits, *hot]:
        if row.name not in seen:
            seen.add(row.name)
            rows.append(_row(row))
    scene_map = _SceneMap(rows, *_scene_map(rows, min(int(budget * MAP_SHARE), MAP_MAX)))
    header = "## Persona\n" + persona_text + "\n\n" if persona_text else ""
    title = "## Passages\n"
    room = budget - len(header) - len(scene_map.text()) - len(title) - 1
    passages = [p for h in hits for p in split_passages(h.name, bodies.get(h.name, ""))]
    ranked = _ranked(query, passages + list(memories or []), corpus, dense)
    if current is not None and current.statements:
        ranked = _current_first(current, list(memories or []), ranked)
    chosen = _choose(ranked, room, scene_map, holder or (lambda *_: None))
    body = _layout(chosen, scene_map.line, newest_first=current is not None)
    text = (header + scene_map.text() + (title + body if chosen else "")).rstrip()
    found = Recall(text=text + "\n" if text else "", budget=budget, persona=persona_text,
                   scenes=scene_map.shown, passages=chosen)
    said = [] if not persona or persona_text else (
        _persona_unreadable(store) or _persona_warning(store, budget, asked))
    if ranked and not chosen:    # found, but no passage fits: say so, not an empty answer
        said.append(f"{count(len(ranked), 'passage')} "
                    f"{'matches' if len(ranked) == 1 else 'match'}, but none fits in {budget} "
                    "characters after the persona and the scene map; ask with a larger "
                    "--budget")
    found.warning = "; ".join(said) or None
    return found


def _persona_unreadable(store: Store) -> list[str]:
    """The one line of a persona that is not UTF-8 (``NotUtf8Error``: the file, the byte,
    ``scenes doctor``), or ``[]``."""
    try:
        read_regular_text(store.persona_path)
    except UnicodeDecodeError as exc:
        return [str(exc)]
    except OSError:
        pass
    return []


def _persona_warning(store: Store, budget: int, asked: bool) -> list[str]:
    """The warning of a recall that left the persona out for want of room (``[]`` when it
    says nothing): said when the caller ``asked`` for the persona, or when ``budget`` is
    below what the persona takes at its default share (its text in a recall of the default
    budget, else its first sentence): a budget chosen smaller than the default, which
    still holds that, leaves the persona out by choice, not by fault."""
    first = _persona_part(store, PERSONA_MAX)
    if not first:
        return []                         # no persona (or none readable): nothing left out
    usual = _persona_part(store, min(int(DEFAULT_BUDGET * PERSONA_SHARE), PERSONA_MAX))
    if not asked and budget >= len(usual or first):
        return []
    low, high = 0, PERSONA_MAX            # the least room that shows its first sentence
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _persona_part(store, middle) else (middle, high)
    need = min(-(-high * 100 // round(PERSONA_SHARE * 100)), MAX_RECALL_BUDGET)
    return [f"the persona does not fit in {budget} characters (a recall gives it "
            f"{round(PERSONA_SHARE * 100)}% of the budget); ask with --budget {need} or "
            "more to get it"]


@dataclass
class _SceneMap:
    """The scene map as shown (``lines``, ``shown`` rows, tags S1, S2, ...), which grows by a
    line (name and heat) when a chosen passage cites a scene of ``rows`` not shown yet: every
    passage of a scene is cited by its tag, never by a bare name (issue 21)."""

    rows: list[dict]
    lines: list[str]
    shown: list[dict]
    tags: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tags = {r["name"]: f"S{i}" for i, r in enumerate(self.shown, start=1)}
        self._rows = {r["name"]: r for r in self.rows}

    def know(self, row: dict) -> str:
        """Make a scene's map ``row`` one the map may add; returns its name."""
        if row["name"] not in self._rows:
            self.rows.append(row)
            self._rows[row["name"]] = row
        return row["name"]

    def text(self) -> str:
        """The map's part of the recall text ("" when it has no line)."""
        return _MAP_HEADING + "\n".join(self.lines) + "\n\n" if self.lines else ""

    def tag(self, scene: str) -> str | None:
        """The tag ``scene`` has, or would get if added; None for no scene (or one unknown)."""
        if scene in self.tags:
            return self.tags[scene]
        return f"S{len(self.shown) + 1}" if scene in self._rows else None

    def cost(self, scene: str) -> int:
        """Characters the map grows by if ``scene`` is added (0 when it is there)."""
        if scene in self.tags or scene not in self._rows:
            return 0
        added = len(self._new_line(scene)) + 1
        return added if self.lines else added - 1 + len(_MAP_HEADING) + 2

    def add(self, scene: str) -> None:
        """Show ``scene`` in the map (nothing when it is there or unknown)."""
        if self.cost(scene):
            self.lines.append(self._new_line(scene))
            self.shown.append(self._rows[scene])
            self.tags[scene] = f"S{len(self.shown)}"

    def line(self, passage: Passage) -> str:
        """``- [S1] text`` for a passage of a scene (its tag, or the one it would get), else
        ``- text`` (a memory no scene holds)."""
        tag = self.tag(passage.scene)
        return f"- [{tag}] {passage.labelled()}" if tag else f"- {passage.labelled()}"

    def _new_line(self, scene: str) -> str:
        row = self._rows[scene]
        return f"{self.tag(scene)} {row['name']} (heat {row['heat']})"


def _choose(ranked: list[Passage], room: int, scene_map: _SceneMap,
            holder: Holder) -> list[Passage]:
    """The best passages that fit in ``room`` characters as ``_layout`` writes them (with
    the map lines their scenes add), each saying something the ones before it did not; a
    scene sentence that only restates a candidate memory is replaced by that memory, a
    memory a scene holds is cited with it (a restating sentence, else ``holder``),
    and a quote the engine cut short is never chosen as it is."""
    restated = _restatement_finder(ranked)
    attributed = _attributor(ranked, restated, holder, scene_map)
    chosen: list[Passage] = []
    used = 0
    days: set[date | None] = set()
    said: list[set[str]] = []
    every: set[str] = set()
    taken: set[object] = set()   # (memory id, text) of a memory, id() of a scene passage
    for passage in ranked:
        if room - used < _SHORTEST_LINE:
            break
        passage = attributed(restated(passage))
        if passage.cut:
            continue                    # no memory to quote it whole
        key = (passage.memory, passage.text) if passage.memory is not None else id(passage)
        if key in taken:
            continue
        words = set(text_terms(passage.text))
        enough = SAME_FACT * len(words)
        if words and len(words & every) >= enough and any(
                len(words & other) >= enough for other in said):
            continue                    # a chosen passage already states it
        cost = len(scene_map.line(passage)) + 1 + scene_map.cost(passage.scene)
        if passage.day and passage.day not in days and not passage.status:
            cost += len(readable(passage.day)) + 2      # its day's heading
        if used + cost <= room:
            scene_map.add(passage.scene)
            chosen.append(passage)
            taken.add(key)
            used += cost
            days.add(None if passage.status else passage.day)
            said.append(words)
            every |= words
    return chosen


def _attributor(ranked: list[Passage], restated: Callable[[Passage], Passage],
                holder: Holder, scene_map: _SceneMap) -> Callable[[Passage], Passage]:
    """A function that gives a memory passage with no scene the scene that holds it: the
    best-ranked candidate scene whose sentence restates it (``restated``, the same test that
    puts the memory in place of the sentence), else ``holder``'s (made known to
    ``scene_map``); any other passage back as it is."""
    restating: dict[tuple[str, str], str] = {}
    built: list[bool] = []

    def find(passage: Passage) -> Passage:
        if passage.memory is None or passage.scene:
            return passage
        if not built:               # at the first memory without a scene: often none comes
            built.append(True)
            for other in ranked:
                if other.memory is None and (found := restated(other)).memory:
                    restating.setdefault((found.memory, found.text), other.scene)
        scene = restating.get((passage.memory, passage.text))
        if scene is None and (row := holder(passage.memory, passage.text, passage.day)):
            scene = scene_map.know(row)
        return replace(passage, scene=scene) if scene else passage
    return find


def _restatement_finder(ranked: list[Passage]) -> Callable[[Passage], Passage]:
    """A function that gives, for a scene sentence whose words one of the candidate memories
    holds (``SAME_FACT`` of them), that memory cited with the scene, and any other passage
    back as it is: the memory is the words as said, with its id and date; the scene line its
    paraphrase, and the scene where the fact lives. A digest's fact that cites candidate
    memories gets the one of them holding most of its words; a cut one citing none stays
    as it is (and is then never shown)."""
    holders: dict[str, list[int]] = {}
    memories = [p for p in ranked if p.memory is not None]
    held: list[set[str]] = []

    def find(passage: Passage) -> Passage:
        if passage.memory is not None or not memories:
            return passage
        if not held:           # built at the first scene sentence: often none is reached
            held.extend(set(text_terms(m.text)) for m in memories)
            for i, words in enumerate(held):
                for term in words:
                    holders.setdefault(term, []).append(i)
        words = set(text_terms(passage.text))
        own = [i for i, m in enumerate(memories) if m.memory in passage.cites]
        if own or passage.cut:       # a digest's fact is the memory it cites, no other
            if not own:
                return passage
            closest = max(own, key=lambda i: (len(words & held[i]), -i))
            return replace(memories[closest], scene=passage.scene, score=passage.score)
        need = math.ceil(SAME_FACT * len(words))
        if not need:
            return passage
        # A memory holding ``need`` of the words holds one of any ``len - need + 1`` of
        # them: look only among the holders of the rarest few.
        rarest = sorted(words, key=lambda t: len(holders.get(t, ())))[:len(words) - need + 1]
        best, most = None, need - 1
        for i in sorted({i for t in rarest for i in holders.get(t, ())}):
            if (n := len(words & held[i])) > most:
                best, most = i, n
        if best is None:
            return passage
        return replace(memories[best], scene=passage.scene, score=passage.score)
    return find


def _layout(chosen: list[Passage], line: Callable[[Passage], str],
            newest_first: bool = False) -> str:
    """Current facts and their history first (newest first, each with its status), then
    undated passages (best first), then one heading a day, oldest day first (``newest_first``:
    after a question about what is true now), its passages best first under it."""
    lines = [line(p) for p in chosen if p.status]
    rest = [p for p in chosen if not p.status]
    lines += [line(p) for p in rest if not p.day]
    for day in sorted({p.day for p in rest if p.day}, reverse=newest_first):
        lines.append(f"{readable(day)}:")
        lines += [line(p) for p in rest if p.day == day]
    return "\n".join(lines)


def _ranked(query: str, passages: list[Passage], corpus: Corpus | None,
            dense: list[str] | None = None) -> list[Passage]:
    """``rank_passages``, fused with the ``dense`` order of memory ids when given
    (``semantic.fuse``: the memories found only by meaning join); for a question about time,
    passages that name a time in their own words (``(2022)``, ``in May``, ``3月``) first
    among near equals."""
    ranked = rank_passages(query, passages, corpus)
    if not _TIME_QUESTION.search(query):
        ranked = _by_day(ranked)
    if dense:
        from scene_engine.recall.semantic import fuse

        place = {memory_id: n for n, memory_id in enumerate(dense)}
        seen = {id(p) for p in ranked}
        extra = sorted((p for p in passages if p.memory in place and id(p) not in seen),
                       key=lambda p: place[p.memory or ""])
        ranked = fuse(ranked, dense, extra)
    if not _TIME_QUESTION.search(query):
        return ranked
    for passage in ranked:
        if _NAMES_TIME.search(passage.text):
            passage.score *= TIME_BOOST
    return sorted(ranked, key=lambda p: -p.score)


def _by_day(ranked: list[Passage]) -> list[Passage]:
    """``ranked`` with each dated passage's score raised by ``SAME_DAY`` of the best score of
    another passage of its day, best first: what was said the day a passage matches well is
    its context (the same conversation), so among passages that share only a common query
    word (a name), those of that day come first. Not for a question about time: there the
    day is what is asked, and passages of other days must keep their chance."""
    best: dict[date, list[float]] = {}
    for passage in ranked:
        if passage.day:
            top = best.setdefault(passage.day, [0.0, 0.0])    # the two best of the day
            if passage.score > top[0]:
                top[:] = [passage.score, top[0]]
            elif passage.score > top[1]:
                top[1] = passage.score
    for passage in ranked:
        if passage.day:
            first, second = best[passage.day]
            passage.score += SAME_DAY * (second if passage.score >= first else first)
    return sorted(ranked, key=lambda p: -p.score)


def _current_first(verdict: Verdict, memories: list[Passage], ranked: list[Passage]
                   ) -> list[Passage]:
    """``ranked`` with the memories that may state the asked attribute first (``verdict
    .statements``, newest first; a memory by its first passage), at most ``HISTORY`` + 1 of
    them, each ``said DAY``, claiming nothing; when the evidence is strong (``verdict
    .claimed``) the newest is ``current, said DAY`` and the earlier statements of the same
    attribute (``verdict.history``) ``said DAY, until DAY`` (the day the next of them said
    otherwise). A memory no query word reached is among them too: "Moved to Porto" states
    where I live. The other statements follow what the query's words rank."""
    first: dict[str, Passage] = {}
    for passage in memories:
        if passage.memory and passage.day:
            first.setdefault(passage.memory, passage)
    newest = [first[i] for i in verdict.statements if i in first]
    if not newest:
        return ranked
    scores: dict[tuple[str | None, str], float] = {
        (p.memory, p.text): p.score for p in ranked if p.memory is not None}
    shown = newest[:HISTORY + 1]
    day = {p.memory: readable(p.day) for p in shown if p.day}     # every one has a day
    statuses = {p.memory: f"said {day[p.memory]}" for p in shown}
    if verdict.claimed and shown[0].memory == verdict.statements[0]:
        chain = [shown[0]] + [p for p in shown if p.memory in verdict.history]
        statuses[shown[0].memory] = f"current, said {day[shown[0].memory]}"
        for newer, older in zip(chain, chain[1:], strict=False):
            statuses[older.memory] = f"said {day[older.memory]}, until {day[newer.memory]}"
    block = [replace(p, status=statuses[p.memory], score=scores.get((p.memory, p.text), 0.0))
             for p in shown]
    keys = {(p.memory, p.text) for p in block}
    rest = [p for p in ranked if p.memory is None or (p.memory, p.text) not in keys]
    keys |= {(p.memory, p.text) for p in rest if p.memory is not None}
    return block + rest + [p for p in newest if (p.memory, p.text) not in keys]


def _scene_map(rows: list[dict], limit: int) -> tuple[list[str], list[dict]]:
    """Map lines in order (matching scenes first), within ``limit`` characters: a scene with its
    summary when that fits, else just name and heat; stops at the first that does not fit, so
    the best-matching scenes are never dropped for lesser ones and tags stay S1, S2, S3..."""
    lines: list[str] = []
    shown: list[dict] = []
    used = 0
    for row in rows:
        tag = f"S{len(shown) + 1} {row['name']} (heat {row['heat']})"
        for line in (f"{tag}: {row['summary']}" if row["summary"] else tag, tag):
            if used + len(line) + 1 <= limit:
                break
        else:
            break
        lines.append(line)
        shown.append(row)
        used += len(line) + 1
    return lines, shown


def _cut_words(text: str, limit: int = SUMMARY_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut + "…"
