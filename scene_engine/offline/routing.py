"""Which scene a memory belongs to, for the offline backend: evidence in topic words.

Each scene is a list of entries, each a set of routing terms (``offline_words.analyzer``:
jieba words and their head characters, English stems without filler). A memory's evidence
for a scene (``topic_evidence``) adds, for each of its words, the share of the scene's
entries that say it, divided by the number of scenes that say it, and weighed by how much
the word can say about a topic at all (``offline_words.specificity``). A word most of a
scene's entries say and no other scene says ("guitar", "年糕") is a topic word; a word one
entry of a long scene says once, or every scene says, is little. Unlike cosine, a short
memory is not penalised for being short, nor a long scene for being long. Issue 13: one
topic a scene. The thresholds that use it are in ``offline`` and were set on the labelled
set of ``bench/bench_topics.py``.
"""

from __future__ import annotations

from collections import Counter

from scene_engine.offline.areas import AREA_PREFIX, areas_of
from scene_engine.offline.words import analyzer, specificity

AREA_WEIGHT = 0.5   # an area of life (``areas``) against a word: a bridge, not the topic itself
AREA_MAJORITY = 0.5  # share of a scene's entries that speak of an area for it to be the scene's
HAPAX_WEIGHT = 0.5   # a word one entry of a scene of HAPAX_ENTRIES+ says: half a topic word
HAPAX_ENTRIES = 3
AREA_MISMATCH = 0.3  # evidence kept for a memory of other areas than all of the scene's


def routing_terms(text: str) -> list[str]:
    """The terms a memory and a scene are compared by: ``offline_words.analyzer`` (real
    words) and the areas of life the text speaks of (``areas.areas_of``, ``"@health"``)."""
    return [*analyzer(text), *sorted(areas_of(text))]


def entry_terms(units: list[str]) -> tuple[Counter[str], int]:
    """(term -> number of units that say it, number of units) of a scene's units (timeline
    entries, paragraphs): what ``topic_evidence`` compares a memory with."""
    counts: Counter[str] = Counter()
    n = 0
    for unit in units:
        if unit.strip() and not unit.lstrip().startswith("#"):    # a heading is no entry
            counts.update(set(routing_terms(unit)))
            n += 1
    return counts, n


def topic_evidence(memory: str, scene: tuple[Counter[str], int], spread: dict[str, int],
                   rarity=None) -> float:
    """Evidence that ``memory`` is about the topic of a scene (``entry_terms`` of it): for
    each of its words, the share of the scene's entries that say it (shrunk for a scene of
    few entries: n / (entries + 1)), divided by the number of scenes that say it
    (``spread``), times its ``specificity``. A word most of a scene's entries say and no
    other scene does ("guitar", "年糕") is a topic word: about 1 alone. A word one entry of a
    long scene says ("医生") is little. ``rarity(term) -> (0, 1]``: how rare the word is in
    what the batch sees (``Vectorizer.idf`` scaled), so a word every memory says ("note")
    is no topic."""
    counts, entries = scene
    if not entries:
        return 0.0
    score = 0.0
    said = set(routing_terms(memory))
    areas = {t for t in said if t.startswith(AREA_PREFIX)}
    # A scene's areas are those most of its entries speak of: a cat's vet visit does not
    # make the cat's scene a health scene.
    main = {t for t, n in counts.items() if t.startswith(AREA_PREFIX) and n >= entries * AREA_MAJORITY}
    for term in said - (areas - main):
        n = counts.get(term, 0)
        if n:
            rare = rarity(term) if rarity else 1.0
            weight = AREA_WEIGHT if term in areas else specificity(term)
            if n == 1 and entries >= HAPAX_ENTRIES:
                weight *= HAPAX_WEIGHT   # said once in a scene of several entries: no topic word
            score += n / (entries + 1) / max(spread.get(term, 1), 1) * weight * rare
    if areas and main and not areas & main:
        score *= AREA_MISMATCH     # about another area of life than the scene's
    return score
