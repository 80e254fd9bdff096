"""Recall: what an agent puts in its context for a query, within a character budget.

The text has three parts, in this order: the persona, a compact map of the scenes (name, heat,
summary; the scenes that match the query first), and the passages that best answer the query,
most relevant first. Passages come from both layers: sentences of the matching scenes (a
timeline line's date kept with each of its sentences) and the matching memories of the journal
(each with its date), ranked together by one BM25 over all of them; a passage whose words an
already chosen one states is skipped, so one fact does not spend the budget twice. A question
about time ("when", "how long ago", 什么时候, 哪年) prefers dated passages. Nothing is cut
mid-sentence and the total never exceeds the budget. Candidates come from the FTS index (so a
store of 10,000 scenes or 100,000 memories costs about what a small one does).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from .analysis import fold, question_terms, text_terms
from .fsutil import read_regular_text
from .store import Store

DEFAULT_BUDGET = 4000
CANDIDATES = 16           # scenes whose sentences compete for the passage budget
MEMORY_CANDIDATES = 60    # memories that compete with them
SAME_FACT = 0.8           # a passage this much covered by a chosen one says nothing new
DATED_BOOST = 1.3         # a dated passage's score, for a question about time
_TIME_QUESTION = re.compile(
    r"\b(when|what (year|month|day|date|time)|how long|which (year|month|day)|ago|since|"
    r"until|before|after|date)\b|什么时候|哪年|哪一年|几月|哪天|多久|何时|几号", re.I)
PERSONA_SHARE = 0.08      # at most this share of the budget for the persona
MAP_SHARE = 0.1           # ... and for the scene map
SUMMARY_CHARS = 100       # a summary in the map is cut (at a word) to this
_DIGEST = re.compile(r"^- (\d{4})-\d{2} \(digest\): (.*)$")
_DIGEST_DAY = re.compile(r"^(\d{1,2} [A-Z][a-z]{2}): (.*)$")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_TIMELINE = re.compile(r"^- (\d{4})-(\d{2})-(\d{2}): (.*)$")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


@dataclass
class Passage:
    """One passage: a sentence of the scene ``scene`` (``text`` date-prefixed for timeline
    lines), or, with ``memory`` set (its id; ``scene`` is ""), a memory of the journal
    (``text`` prefixed with its readable date, ``created_at`` the ISO instant); ``score``
    (BM25 against the query)."""

    scene: str
    text: str
    score: float = 0.0
    memory: str | None = None
    created_at: str | None = None

    def source(self) -> dict:
        """Where it comes from, for ``--json``: ``{"scene": NAME}`` or ``{"memory": ID,
        "created_at": ISO}``."""
        if self.memory is not None:
            return {"memory": self.memory, "created_at": self.created_at}
        return {"scene": self.scene}


@dataclass
class Recall:
    """A recall result: ``text`` (what goes in the context, ``len(text) <= budget``), the
    ``persona`` part, the ``scenes`` map rows, the chosen ``passages`` and ``warning``: one
    line when the index could not be brought up to date (the answer may be stale), else None."""

    text: str
    budget: int
    persona: str = ""
    scenes: list[dict] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    warning: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict of the result."""
        return {"budget": self.budget, "chars": len(self.text), "text": self.text,
                "persona": self.persona, "scenes": self.scenes,
                "passages": [{**p.source(), "text": p.text, "score": round(p.score, 4)}
                             for p in self.passages],
                **({"warning": self.warning} if self.warning else {})}


def readable_date(year: str, month: str, day: str) -> str:
    """``("2023","05","08")`` -> ``"8 May 2023"`` (how people, and questions, write dates)."""
    return f"{int(day)} {_MONTHS[int(month) - 1]} {year}"


def split_passages(scene: str, body: str) -> list[Passage]:
    """The sentences of a scene body; timeline sentences carry their line's date."""
    passages = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        digest = _DIGEST.match(line)
        if digest:      # "- 2023-05 (digest): 7 May: fact; 12 May: fact" (offline rollups)
            passages += _digest_passages(scene, *digest.groups())
            continue
        found = _TIMELINE.match(line)
        prefix = ""
        if found:
            prefix = readable_date(*found.groups()[:3]) + ": "
            line = found.group(4)
        line = line.lstrip("-* ")
        for sentence in _SENTENCE.split(line):
            if sentence.strip():
                passages.append(Passage(scene, prefix + sentence.strip()))
    return passages


def _digest_passages(scene: str, year: str, facts: str) -> list[Passage]:
    """Each fact of a month digest as a passage, its ``7 May`` day made ``7 May 2023``."""
    out = []
    for fact in filter(None, (f.strip() for f in facts.split("; "))):
        dated = _DIGEST_DAY.match(fact)
        out.append(Passage(scene, f"{dated.group(1)} {year}: {dated.group(2)}" if dated
                           else fact))
    return out


def rank_passages(query: str, passages: list[Passage]) -> list[Passage]:
    """BM25 (k1 1.2, b 0.75, length in characters) of each passage against the query terms
    (the search analyser: stems, Chinese words by character pairs, stop words out); best
    first, ties by original order. Passages with no query term are dropped."""
    wanted = question_terms(query)
    if not wanted or not passages:
        return []
    n = len(passages)
    # Length normalisation by characters, so the average covers every passage cheaply.
    avg = sum(len(p.text) for p in passages) / n or 1.0
    # A passage can only hold a term whose text it (nearly) contains: tokenise just those
    # (recall is on an agent's hot path; a 10,000-scene store brings hundreds of candidate
    # sentences). A stem may end differently from its word ("happi", "happy"): drop a letter.
    probes = {t if len(t) < 4 else t[:-1] for t in wanted}
    passages = [p for p in passages if _holds_any(fold(p.text), probes)]
    docs = [Counter(text_terms(p.text)) for p in passages]
    df = Counter(t for d in docs for t in wanted & d.keys())
    for passage, doc in zip(passages, docs, strict=True):
        length = len(passage.text)
        passage.score = sum(
            math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            * doc[t] * 2.2 / (doc[t] + 1.2 * (0.25 + 0.75 * length / avg))
            for t in wanted & doc.keys())
    order = sorted(range(len(passages)), key=lambda i: (-passages[i].score, i))
    return [passages[i] for i in order if passages[i].score > 0]


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


def recall(store: Store, query: str, budget: int = DEFAULT_BUDGET, index=None) -> Recall:
    """Build the recall text for ``query`` in at most ``budget`` characters.

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

    own = index is None
    warning = None
    if own:
        index, warning = read_index(store)
    try:
        hits = index.search(query, k=CANDIDATES, any_term=True)
        bodies = index.bodies([h.name for h in hits])
        hot = index.hottest(12)
        found = index.search_memories(query, k=MEMORY_CANDIDATES, any_term=True)
    finally:
        if own:
            index.close()
    result = assemble(store, query, budget, hits, bodies, hot, [memory_passage(m) for m in found])
    result.warning = warning
    return result


def memory_passage(hit) -> Passage:
    """A memory found by the index (``memory_index.MemoryHit``) as a passage: its text after
    its readable date (``8 May 2023: ...``)."""
    day = hit.created_at[:10].split("-")
    prefix = readable_date(*day) + ": " if len(day) == 3 and all(p.isdigit() for p in day) \
        else ""
    return Passage("", prefix + " ".join(hit.content.split()), memory=hit.id,
                   created_at=hit.created_at)


def assemble(store: Store, query: str, budget: int, hits, bodies: dict[str, str],
             hot: list, memories: list[Passage] | None = None) -> Recall:
    """Lay out persona, scene map and passages within ``budget`` (see module docstring).

    ``memories``: passages of the journal's best memories (``memory_passage``), ranked with
    the scenes' sentences. Scenes in the map get short tags (S1, S2, ...) that their passages
    cite, so a passage costs a few characters of attribution instead of the scene's name; a
    memory's line is its date and text.
    """
    persona = _persona_part(store, int(budget * PERSONA_SHARE))
    rows, seen = [], set()
    for row in [*hits, *hot]:
        if row.name not in seen:
            seen.add(row.name)
            rows.append({"name": row.name, "heat": row.heat,
                         "summary": _cut_words(" ".join(str(row.summary or "").split()))})
    map_lines, shown = _scene_map(rows, int(budget * MAP_SHARE))
    map_text = "\n".join(map_lines)
    tags = {r["name"]: f"S{i}" for i, r in enumerate(shown, start=1)}
    header = "## Persona\n" + persona + "\n\n" if persona else ""
    header += "## Scenes\n" + map_text + "\n\n" if map_text else ""
    title = "## Passages\n"
    room = budget - len(header) - len(title) - 1
    chosen, used, said, every = [], 0, [], set()
    passages = [p for h in hits for p in split_passages(h.name, bodies.get(h.name, ""))]
    for passage in _ranked(query, passages + list(memories or [])):
        words = set(text_terms(passage.text))
        enough = SAME_FACT * len(words)
        if words and len(words & every) >= enough and any(
                len(words & other) >= enough for other in said):
            continue                    # a chosen passage already states it
        if passage.memory is not None:
            line = f"- {passage.text}"
        else:
            tag = tags.get(passage.scene, passage.scene.removesuffix(".md"))
            line = f"- [{tag}] {passage.text}"
        if used + len(line) + 1 <= room:
            chosen.append((passage, line))
            used += len(line) + 1
            said.append(words)
            every |= words
    text = header + (title + "\n".join(line for _, line in chosen) if chosen else "")
    return Recall(text=text.rstrip() + "\n", budget=budget, persona=persona, scenes=shown,
                  passages=[p for p, _ in chosen])


def _ranked(query: str, passages: list[Passage]) -> list[Passage]:
    """``rank_passages``, dated passages first among equals for a question about time."""
    ranked = rank_passages(query, passages)
    if not _TIME_QUESTION.search(query):
        return ranked
    for passage in ranked:
        if _DATED.match(passage.text):
            passage.score *= DATED_BOOST
    return sorted(ranked, key=lambda p: -p.score)


_DATED = re.compile(r"^\d{1,2} [A-Z][a-z]+ \d{4}: ")


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
