"""De-duplication across blocks: candidate pairs by the program, a verdict by a model or a
person (issue 12, "De-duplication across blocks").

The program only proposes: two extracted memories of the same store and scope whose words
overlap enough. It never drops a memory because its text is similar. A model adjudicates
each pair (``adjudicate``); its merge is applied only when ``Verdict.auto_merge`` holds;
anything else keeps both, and everything but a confident KEEP_BOTH queues the pair for a
person (``review``). Offline there is no adjudicator: every candidate is queued.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Set
from dataclasses import dataclass, replace

from scene_engine.core.text import terms
from scene_engine.extraction.events import new_event
from scene_engine.extraction.merge import plan_merge
from scene_engine.extraction.model import ExtractionError, ModelSettings, ask, tool_spec
from scene_engine.extraction.schema import AUTO_MERGE_CONFIDENCE, Verdict, parse_verdict
from scene_engine.store.memories import Memory

SIMILARITY = 0.6      # Jaccard of the two memories' word sets
MIN_TERMS = 3         # fewer words than this: too little to call two texts alike
# Bounds, so a conversation that repeats itself (a daily reminder said 600 times) queues a
# few pairs per memory, not every pair: the review queue and the model calls grow with the
# memories, not with their square.
PAIRS_PER_MEMORY = 3  # a new memory pairs with its most similar earlier ones only
TERM_WINDOW = 200     # a word shared by many memories is compared with its latest holders
ADJUDICATE_TOOL = tool_spec("adjudicate", "Your verdict on the two memories.",
                            Verdict.model_json_schema())


def pair_id(left: str, right: str) -> str:
    """A stable id for the pair (order of the two ids does not matter)."""
    a, b = sorted((left, right))
    return "p-" + hashlib.sha256(f"{a}\x00{b}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Candidate:
    """A pair to decide: ``left`` the older memory, ``right`` the newer, their similarity."""

    left: Memory
    right: Memory
    similarity: float

    @property
    def id(self) -> str:
        """``pair_id`` of the two."""
        return pair_id(self.left.id, self.right.id)


def _words(memory: Memory, cache: dict[str, frozenset[str]] | None = None
           ) -> frozenset[str]:
    """The memory's words (title and content); ``cache``: by id, for a caller that asks
    about the same memories again (a long import, once per commit)."""
    if cache is not None and memory.id in cache:
        return cache[memory.id]
    words = frozenset(terms(f"{memory.title or ''} {memory.content}"))
    if cache is not None:
        cache[memory.id] = words
    return words


def candidates(existing: Iterable[Memory], new: list[Memory], skip: Set[str] = frozenset(),
               cache: dict[str, frozenset[str]] | None = None) -> list[Candidate]:
    """Pairs (older, newer) among ``existing`` + ``new`` with at least one of them new, both
    extracted (they have a scope and a title), of the same scope, not related to each other,
    with word-set similarity at least ``SIMILARITY``. ``skip``: pair ids already queued or
    decided. Each new memory is compared with what came before it (earlier blocks too): the
    latest memory with the very same words if there is one (a repeat pairs with its last
    repeat only), else its ``PAIRS_PER_MEMORY`` most similar (``TERM_WINDOW`` latest holders
    of each word). ``cache``: each memory's words by id, kept between calls."""
    pool: list[tuple[Memory, frozenset[str]]] = []
    by_term: dict[tuple[str, str], list[int]] = defaultdict(list)
    same_words: dict[tuple[str, frozenset[str]], int] = {}
    found: list[Candidate] = []
    new_ids = {m.id for m in new}
    for memory in [*existing, *new]:
        if not memory.title or not memory.scope:
            continue
        words = _words(memory, cache)
        if memory.id in new_ids and len(words) >= MIN_TERMS:
            twin = same_words.get((memory.scope, words))
            if twin is not None and pool[twin][0].id != memory.id:
                other = pool[twin][0]
                if pair_id(other.id, memory.id) not in skip and other.id not in \
                        {r["target"] for r in memory.relations}:
                    found.append(Candidate(other, memory, 1.0))
            else:
                found += _matches(memory, words, pool, by_term, skip)[:PAIRS_PER_MEMORY]
        for term in words:
            by_term[(memory.scope, term)].append(len(pool))
        same_words[(memory.scope, words)] = len(pool)
        pool.append((memory, words))
    return found


def _matches(memory: Memory, words: frozenset[str], pool, by_term, skip) -> list[Candidate]:
    shared: dict[int, int] = defaultdict(int)
    for term in words:
        for i in by_term.get((memory.scope, term), ())[-TERM_WINDOW:]:
            shared[i] += 1
    related = {r["target"] for r in memory.relations}
    out = []
    for i, n in shared.items():
        other, theirs = pool[i]
        if len(theirs) < MIN_TERMS or other.id in related or other.id == memory.id:
            continue
        similarity = n / len(words | theirs)
        if similarity >= SIMILARITY and pair_id(other.id, memory.id) not in skip:
            out.append((-similarity, -i, Candidate(other, memory, round(similarity, 3))))
    # Most similar first; among equals the latest (the one a person remembers).
    return [candidate for *_, candidate in sorted(out, key=lambda t: t[:2])]


def adjudicate(candidate: Candidate, settings: ModelSettings, quotes: dict[str, str]
               ) -> tuple[Verdict | None, str]:
    """Ask the model for a verdict (at most ``settings.adjudication_attempts`` tries, with
    backoff). ``quotes``: message id -> its text, for the sources that are known. Returns
    (verdict or None when every attempt failed, the failure)."""
    shown = {side: _show(m, quotes) for side, m in (("left", candidate.left),
                                                    ("right", candidate.right))}
    messages = [{"role": "system", "content": _instructions()},
                {"role": "user", "content": json.dumps(shown, ensure_ascii=False, indent=1)}]
    # The two attempts are the whole allowance: no provider-level retries inside them.
    once = replace(settings, budget=replace(settings.budget, retries=0))
    try:
        return ask(messages, ADJUDICATE_TOOL, parse_verdict, once,
                   settings.adjudication_attempts, pause=settings.backoff), ""
    except ExtractionError as exc:
        return None, str(exc)


def _instructions() -> str:
    from scene_engine.llm.prompts import template

    return template("adjudicate_en")


def _show(memory: Memory, quotes: dict[str, str]) -> dict:
    stored = (memory.metadata or {}).get("quotes") or {}
    return {"id": memory.id, "title": memory.title, "summary": memory.content,
            "scope": memory.scope, "time": memory.created_at.isoformat(),
            "sources": [{"id": s, "text": quotes.get(s) or stored.get(s)}
                        for s in memory.sources]}


def decide(candidate: Candidate, verdict: Verdict | None, failure: str
           ) -> tuple[list[Memory], list[dict]]:
    """What a verdict does: (memories to append, events). An automatic merge (keep-one,
    complete draft, confidence >= 0.9) merges; a KEEP_BOTH at that confidence records it;
    anything else (failure, REVIEW, low confidence, missing draft) queues the pair."""
    if verdict is not None and verdict.auto_merge():
        keep = "left" if verdict.verdict == "KEEP_LEFT" else "right"
        created, event = plan_merge(candidate.left, candidate.right, keep, verdict.title,
                                    verdict.summary, by="adjudicator",
                                    confidence=verdict.confidence, pair=candidate.id)
        # No new memory when the draft is one of the two word for word (that one is kept).
        return ([created] if created is not None else []), [event]
    if verdict is not None and verdict.verdict == "KEEP_BOTH" and \
            verdict.confidence >= AUTO_MERGE_CONFIDENCE:
        return [], [new_event("kept_both", pair=candidate.id, left=candidate.left.id,
                              right=candidate.right.id, by="adjudicator",
                              confidence=verdict.confidence)]
    return [], [queued(candidate, _reason(verdict, failure))]


def queued(candidate: Candidate, reason: str) -> dict:
    """The ``queued`` event for ``candidate``."""
    return new_event("queued", pair=candidate.id, left=candidate.left.id,
                     right=candidate.right.id, reason=reason,
                     similarity=candidate.similarity)


def _reason(verdict: Verdict | None, failure: str) -> str:
    if verdict is None:
        return f"adjudication failed: {failure}"
    if verdict.verdict == "REVIEW":
        return f"the adjudicator asked for review ({verdict.confidence:.2f})"
    if verdict.keeps_one and not verdict.has_draft:
        return f"{verdict.verdict} without a complete merged draft"
    return f"{verdict.verdict} at confidence {verdict.confidence:.2f} (below " \
           f"{AUTO_MERGE_CONFIDENCE})"
