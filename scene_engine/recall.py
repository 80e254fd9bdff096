"""Recall: what an agent puts in its context for a query, within a character budget.

The text has three parts, in this order: the persona, a compact map of the scenes (name, heat,
summary; the scenes that match the query first), and the passages that best answer the query.
Passages come from both layers: sentences of the matching scenes (a timeline line's date kept
with each of its sentences) and the matching memories of the journal (each with its date),
ranked together by one BM25 whose word weights come from the whole journal. A memory stands in for a scene sentence that only
restates it (the memory keeps the words as said, and its id); a passage whose words an already
chosen one states is skipped, so one fact does not spend the budget twice. A question about time
("when", "how long ago", 什么时候, 哪年) prefers passages that name a time. Relative times are
made absolute ("last year (2022)", ``when.resolve``). Chosen passages are laid out by date, the
facts of one day under one heading, oldest first, undated ones before them. Nothing is cut
mid-sentence and the total never exceeds the budget. Candidates come from the FTS index (so a
store of 10,000 scenes or 100,000 memories costs about what a small one does).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from .analysis import CJK_RUN, fold, question_terms, text_terms
from .fsutil import read_regular_text
from .store import Store
from .when import MONTH_ABBREVIATIONS, readable, resolve

DEFAULT_BUDGET = 4000
CANDIDATES = 16           # scenes whose sentences compete for the passage budget
MEMORY_CANDIDATES = 60    # memories that compete with them (more for a larger budget)
CHARS_PER_CANDIDATE = 50  # ... one candidate memory per this many characters of budget
LONG_MEMORY = 400         # a memory longer than this is recalled sentence by sentence
SAME_FACT = 0.8           # a passage this much covered by a chosen one says nothing new
TIME_BOOST = 1.3          # a passage that names a time, for a question about time
_TIME_QUESTION = re.compile(
    r"\b(when|what (year|month|day|date|time)|how long|which (year|month|day)|ago|since|"
    r"until|before|after|date)\b|什么时候|哪年|哪一年|几月|哪天|多久|何时|几号", re.I)
_TIME_WORDS = re.compile(
    r"\bhow (long|many (years|months|weeks|days))( ago)?\b|\b(ago|since when)\b", re.I)
_NAMES_TIME = re.compile(
    r"\((?:the |\d)|\b(?:19|20)\d\d\b|\d+\s*[年月日号]|\b(?:January|February|March|April|May|"
    r"June|July|August|September|October|November|December)\b")
PERSONA_SHARE = 0.08      # at most this share of the budget for the persona
MAP_SHARE = 0.1           # ... and for the scene map
PERSONA_MAX = 400         # ... and never more than this many characters (a paragraph)
MAP_MAX = 600             # (about five scenes with their summaries)
SUMMARY_CHARS = 100       # a summary in the map is cut (at a word) to this
_DIGEST = re.compile(r"^- (\d{4})(?:-\d{2}|-Q[1-4])? \(digest\): (?:\d+ entries: )?(.*)$")
_CITED = re.compile(r"\s*\[[^\[\]]*\]$")      # a digest fact's memory ids ("fact [m1, m2]")
_MORE = re.compile(r"^\d+ more(?: \(.*\))?$")
_DIGEST_DAY = re.compile(r"^(\d{1,2}) ([A-Z][a-z]{2}): (.*)$")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_TIMELINE = re.compile(r"^- (\d{4})-(\d{2})-(\d{2}): (.*)$")
_CLOSED = re.compile(r"\s*→\s*\d{4}-\d{2}-\d{2}: ")     # ``threads.ARROW`` and a day
_SHORTEST_LINE = 8        # no passage line is shorter ("- " and a few words): stop looking

# ``terms -> (documents, {term: documents holding it})``: the statistics IDF is taken from.
Corpus = Callable[[set[str]], tuple[int, dict[str, int]]]


@dataclass
class Passage:
    """One passage: a sentence of the scene ``scene``, or, with ``memory`` set (its id), a
    memory of the journal (``created_at`` its ISO instant; ``scene`` the scene that restates
    it, or ""). ``text``: the
    words, relative times made absolute; ``day``: the date it is about (a timeline line's or
    the memory's), or None; ``score``: BM25 against the query."""

    scene: str
    text: str
    day: date | None = None
    score: float = 0.0
    memory: str | None = None
    created_at: str | None = None

    def source(self) -> dict:
        """Where it comes from, for ``--json``: ``{"scene": NAME}``, ``{"memory": ID,
        "created_at": ISO}``, or both when a scene holds the memory."""
        found = {"scene": self.scene} if self.scene else {}
        if self.memory is not None:
            found.update(memory=self.memory, created_at=self.created_at)
        return found

    def dated(self) -> str:
        """The text after its readable date (``8 May 2023: ...``), or the text alone."""
        return f"{readable(self.day)}: {self.text}" if self.day else self.text


@dataclass
class Recall:
    """A recall result: ``text`` (what goes in the context, ``len(text) <= budget``), the
    ``persona`` part, the ``scenes`` map rows, the chosen ``passages`` (best first) and
    ``warning``: one line when the index could not be brought up to date (the answer may be
    stale) or a line of the journal or the extraction ledger cannot be read (named by file
    and line: what it holds is missing from the answer), else None."""

    text: str
    budget: int
    persona: str = ""
    scenes: list[dict] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    warning: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict of the result; a passage's ``date`` is ISO (``2023-05-08``),
        its ``tag`` the map tag it is cited by (``S1``), when its scene is in the map."""
        tags = {row["name"]: f"S{i}" for i, row in enumerate(self.scenes, start=1)}
        return {"budget": self.budget, "chars": len(self.text), "text": self.text,
                "persona": self.persona, "scenes": self.scenes,
                "passages": [{**p.source(),
                              **({"tag": tags[p.scene]} if p.scene in tags else {}),
                              "text": p.text, "date": p.day.isoformat() if p.day else None,
                              "score": round(p.score, 4)} for p in self.passages],
                **({"warning": self.warning} if self.warning else {})}


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
    relative times are resolved against it)."""
    return [Passage(scene, text, day) for text, day in _sentences(scene, body)]


@functools.lru_cache(maxsize=256)
def _sentences(scene: str, body: str) -> tuple[tuple[str, date | None], ...]:
    """``split_passages`` as (text, day) pairs; cached, since an agent asks about the same
    scenes again and again and a body is split the same way each time."""
    passages = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        digest = _DIGEST.match(line)
        if digest:      # "- 2023-05 (digest): 7 May: fact; 12 May: fact" (offline rollups)
            passages += [(p.text, p.day) for p in _digest_passages(scene, *digest.groups())]
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
        for sentence in _SENTENCE.split(line):
            if sentence.strip():
                text = sentence.strip()
                passages.append((resolve(text, day) if day else text, day))
    return tuple(passages)


def _digest_passages(scene: str, year: str, facts: str) -> list[Passage]:
    """Each fact of a digest (month, quarter or year; offline ``rollup``) as a passage, its
    ``7 May`` day made 7 May of that year, its cited memory ids left out."""
    out = []
    for fact in filter(None, (_CITED.sub("", f).strip() for f in facts.split("; "))):
        if _MORE.match(fact):       # "13 more" of a quarter or year digest says nothing
            continue
        dated = _DIGEST_DAY.match(fact)
        if dated and dated.group(2) in MONTH_ABBREVIATIONS:
            day = _day(year, str(MONTH_ABBREVIATIONS.index(dated.group(2)) + 1), dated.group(1))
            out.append(Passage(scene, resolve(dated.group(3), day) if day else fact, day))
        else:
            out.append(Passage(scene, fact))
    return out


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
    own top heading dropped: the recall text has one; no dangling lead-in line)."""
    if limit <= 20:
        return ""
    try:   # a link to a file elsewhere is not the persona: nothing outside the store is read
        text = read_regular_text(store.persona_path, errors="replace").strip()
    except OSError:
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


def recall(store: Store, query: str, budget: int = DEFAULT_BUDGET, index=None,
           scope: str | None = None) -> Recall:
    """Build the recall text for ``query`` in at most ``budget`` characters.

    ``scope``: recall for one agent or project: only memories of that scope or of none, and
    no persona or scenes (a scene folds the memories of every scope together, so it could
    tell one scope another's facts).

    ``index``: an open ``SceneIndex`` to reuse (for speed in a loop); otherwise one is opened
    and brought up to date (``index.open_for_reading``: never needs write access; a busy
    index answers as it is, with ``Recall.warning`` set). An interrupted batch is rolled back
    first (``recovery.ensure_recovered``: one ``stat`` when there is none), so its
    half-written scenes are never recalled. Raises ``ValueError`` for a budget under 100
    characters, ``index.IndexUnavailable`` when no index can be read or built.
    """
    if budget < 100:
        raise ValueError("the recall budget must be at least 100 characters")
    from .index import read_index
    from .recovery import ensure_recovered

    ensure_recovered(store)
    query = _without_time_words(query)

    own = index is None
    warning = None
    if own:
        index, warning = read_index(store)
    try:
        scoped = scope is not None
        hits = [] if scoped else index.search(query, k=CANDIDATES, any_term=True)
        bodies = index.bodies([h.name for h in hits])
        hot = [] if scoped else index.hottest(12)
        k = max(MEMORY_CANDIDATES, budget // CHARS_PER_CANDIDATE)
        found = index.search_memories(query, k=k, any_term=True, scope=scope)
        unread = [index.journal_warning(), _ledger_warning(store)]
        gone = not_current(store)
        found = [m for m in found if m.id not in gone]
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
                              persona=not scoped)
        else:
            result = assemble(store, query, budget, hits, bodies, hot, passages,
                              persona=not scoped)
    finally:
        if own:
            index.close()
    # Said on every answer that may lack what a bad line holds (in ``to_json`` too).
    result.warning = "; ".join(filter(None, [warning, *unread])) or None
    return result


def _ledger_warning(store: Store) -> str | None:
    """The extraction ledger's first line that is not an event, for the answer's warning
    (its other events still count), or None."""
    from .extraction.events import read_intact

    problems = read_intact(store)[1]
    return problems[0] if problems else None


def not_current(store: Store) -> frozenset[str]:
    """Ids of memories that are no longer the current word on their fact: superseded by a
    newer one, merged into another, or the text of a merge since undone (the extraction
    ledger, ``extraction.events``). Recall leaves them out; the journal and search keep them.
    Empty when the ledger is absent; a line that is not an event is passed over (recall's
    warning names it)."""
    from .extraction.events import log_path, read_intact, statuses

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
    return [Passage("", resolve(part, day) if day else part, day, memory=hit.id,
                    created_at=hit.created_at) for part in parts]


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
             corpus: Corpus | None = None, persona: bool = True) -> Recall:
    """Lay out persona, scene map and passages within ``budget`` (see module docstring).

    ``memories``: passages of the journal's best memories (``memory_passages``), ranked with
    the scenes' sentences; ``corpus``: the journal's word statistics (``rank_passages``).
    Scenes in the map get short tags (S1, S2, ...) that their passages cite, so a passage
    costs a few characters of attribution instead of the scene's name. ``persona``: False
    leaves it out.
    """
    persona = _persona_part(store, min(int(budget * PERSONA_SHARE), PERSONA_MAX)) if persona else ""
    rows, seen = [], set()
    for row in [*hits, *hot]:
        if row.name not in seen:
            seen.add(row.name)
            rows.append({"name": row.name, "heat": row.heat,
                         "summary": _cut_words(" ".join(str(row.summary or "").split()))})
    map_lines, shown = _scene_map(rows, min(int(budget * MAP_SHARE), MAP_MAX))
    map_text = "\n".join(map_lines)
    tags = {r["name"]: f"S{i}" for i, r in enumerate(shown, start=1)}
    header = "## Persona\n" + persona + "\n\n" if persona else ""
    header += "## Scenes\n" + map_text + "\n\n" if map_text else ""
    title = "## Passages\n"
    room = budget - len(header) - len(title) - 1
    passages = [p for h in hits for p in split_passages(h.name, bodies.get(h.name, ""))]
    ranked = _ranked(query, passages + list(memories or []), corpus)
    chosen = _choose(ranked, room, lambda p: _line(p, tags))
    body = _layout(chosen, lambda p: _line(p, tags))
    text = header + (title + body if chosen else "")
    return Recall(text=text.rstrip() + "\n", budget=budget, persona=persona, scenes=shown,
                  passages=chosen)


def _line(passage: Passage, tags: dict[str, str]) -> str:
    """``- [S1] text`` for a passage of a scene in the map; a scene sentence outside it cites
    the scene's name; a memory cites nothing more (its scene, if any, is in ``--json``)."""
    if passage.scene in tags:
        return f"- [{tags[passage.scene]}] {passage.text}"
    if passage.scene and passage.memory is None:
        return f"- [{passage.scene.removesuffix('.md')}] {passage.text}"
    return f"- {passage.text}"


def _choose(ranked: list[Passage], room: int, line: Callable[[Passage], str]) -> list[Passage]:
    """The best passages that fit in ``room`` characters as ``_layout`` writes them, each
    saying something the ones before it did not; a scene sentence that only restates a
    candidate memory is replaced by that memory."""
    restated = _restatement_finder(ranked)
    chosen, used, days, said, every, taken = [], 0, set(), [], set(), set()
    for passage in ranked:
        if room - used < _SHORTEST_LINE:
            break
        passage = restated(passage)
        key = (passage.memory, passage.text) if passage.memory is not None else id(passage)
        if key in taken:
            continue
        words = set(text_terms(passage.text))
        enough = SAME_FACT * len(words)
        if words and len(words & every) >= enough and any(
                len(words & other) >= enough for other in said):
            continue                    # a chosen passage already states it
        cost = len(line(passage)) + 1
        if passage.day and passage.day not in days:
            cost += len(readable(passage.day)) + 2      # its day's heading
        if used + cost <= room:
            chosen.append(passage)
            taken.add(key)
            used += cost
            days.add(passage.day)
            said.append(words)
            every |= words
    return chosen


def _restatement_finder(ranked: list[Passage]) -> Callable[[Passage], Passage]:
    """A function that gives, for a scene sentence whose words one of the candidate memories
    holds (``SAME_FACT`` of them), that memory cited with the scene, and any other passage
    back as it is: the memory is the words as said, with its id and date; the scene line its
    paraphrase, and the scene where the fact lives."""
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


def _layout(chosen: list[Passage], line: Callable[[Passage], str]) -> str:
    """Undated passages first (best first), then one heading a day, oldest day first, its
    passages best first under it."""
    lines = [line(p) for p in chosen if not p.day]
    for day in sorted({p.day for p in chosen if p.day}):
        lines.append(f"{readable(day)}:")
        lines += [line(p) for p in chosen if p.day == day]
    return "\n".join(lines)


def _ranked(query: str, passages: list[Passage], corpus: Corpus | None) -> list[Passage]:
    """``rank_passages``; for a question about time, passages that name a time
    in their own words (``(2022)``, ``in May``, ``3月``) first among near equals."""
    ranked = rank_passages(query, passages, corpus)
    if not _TIME_QUESTION.search(query):
        return ranked
    for passage in ranked:
        if _NAMES_TIME.search(passage.text):
            passage.score *= TIME_BOOST
    return sorted(ranked, key=lambda p: -p.score)


def _scene_map(rows: list[dict], limit: int) -> tuple[list[str], list[dict]]:
    """Map lines in order (matching scenes first), within ``limit`` characters: a scene with its
    summary when that fits, else just name and heat; stops at the first that does not fit, so
    the best-matching scenes are never dropped for lesser ones and tags stay S1, S2, S3..."""
    lines, shown, used = [], [], 0
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
