"""Lexical text features shared by the offline backend, the prompt builder and recall.

Latin-script words are lower-cased and stripped of stop words; runs of CJK characters become
overlapping character bigrams (Chinese has no spaces, and two characters is the commonest word
length). Similarity is cosine over term counts with a light IDF, which is enough to route a
memory to the scene it belongs to without a model.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable

# A letter of any alphabet but CJK (café, Zürich, Ελλάδα are words; CJK goes by bigrams).
_LETTER = r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_WORD = re.compile(f"{_LETTER}(?:{_LETTER}|['’-])*{_LETTER}|\\d{{2,}}|{_LETTER}")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")   # one Han character
STOP_WORDS = frozenset("""
a an and are as at be been being but by can could did do does doing for from had has have having
he her hers him his how i if in into is it its just me more most my no not of on or our ours she
so some such than that the their theirs them then there these they this those to too very was we
were what when where which while who whom why will with would you your yours also about after
again all am any because before both down during each few further here just like many much
now off once only other out over own same should through under until up upon us via yet one two
said says say got get gets go goes went going really thing things lot lots way ve ll re
start started starting new first last time times week weeks day days today yesterday recently
every year years month months felt feel feels made make makes want wants wanted like likes
liked love loves loved took take takes think thinks thought told tell tells asked ask know
""".split())
CJK_STOP = frozenset("我的 你的 他的 她的 我们 你们 他们 一个 这个 那个 就是 还是 已经 因为 所以 但是 而且 自己".split())


def is_cjk_text(text: str) -> bool:
    """True when CJK characters outnumber Latin letters (decides the prompt language)."""
    cjk = sum(len(m) for m in _CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return cjk > latin / 3


def terms(text: str) -> list[str]:
    """The index terms of ``text``: lower-cased words (no stop words) and CJK bigrams."""
    return list(_terms(text))


@functools.lru_cache(maxsize=1024)
def _terms(text: str) -> tuple[str, ...]:
    # Cached: the offline backend re-ranks every scene text once per memory of a batch.
    found = [w.lower().strip("'’-") for w in _WORD.findall(text)]
    found = [w for w in found if w not in STOP_WORDS and len(w) > 1]
    for run in _CJK.findall(text):
        if len(run) == 1:
            found.append(run)
        found.extend(b for b in (run[i:i + 2] for i in range(len(run) - 1)) if b not in CJK_STOP)
    return tuple(found)


class Vectorizer:
    """Term-count vectors weighted by IDF over a small, changing set of documents.

    ``fit(docs)`` sets document frequencies; ``vector(text)`` -> {term: weight};
    ``similarity(a, b)`` -> cosine in [0, 1]. ``analyzer(text) -> [term]``: how a text
    becomes terms (default ``terms``: words and CJK pairs; the offline backend routes by
    ``offline_words.analyzer``, real words).
    """

    def __init__(self, analyzer=None) -> None:
        self.df: Counter[str] = Counter()
        self.docs = 0
        self.analyzer = analyzer or terms

    def fit(self, docs: Iterable[str]) -> Vectorizer:
        """Count document frequencies over ``docs``; returns self."""
        self.df = Counter()
        self.docs = 0
        for doc in docs:
            self.docs += 1
            self.df.update(set(self.analyzer(doc)))
        return self

    def vector(self, text: str) -> dict[str, float]:
        """``{term: (1 + log count) * idf}`` for ``text``."""
        counts = Counter(self.analyzer(text))
        return {t: (1 + math.log(c)) * self.idf(t) for t, c in counts.items()}

    def idf(self, term: str) -> float:
        """Smoothed inverse document frequency (always > 0, also for unseen terms)."""
        return math.log((self.docs + 1) / (self.df.get(term, 0) + 0.5)) + 1.0

    @staticmethod
    def similarity(a: dict[str, float], b: dict[str, float]) -> float:
        """Cosine of two vectors, in [0, 1]; 0 when either is empty."""
        if not a or not b:
            return 0.0
        if len(a) > len(b):
            a, b = b, a
        dot = sum(w * b.get(t, 0.0) for t, w in a.items())
        norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
        return dot / norm if norm else 0.0


def keywords(texts: Iterable[str], vectorizer: Vectorizer | None = None, k: int = 3) -> list[str]:
    """The ``k`` most characteristic terms of ``texts`` (count x IDF), ties broken by term."""
    counts = Counter(t for text in texts for t in terms(text))
    weight = (lambda t: vectorizer.idf(t)) if vectorizer else (lambda t: 1.0)
    ranked = sorted(counts, key=lambda t: (-counts[t] * weight(t), t))
    chosen: list[str] = []
    for term in ranked:
        # Overlapping CJK bigrams (上海 / 去上) are one word cut twice: keep the stronger.
        if _CJK.fullmatch(term) and any(set(term) & set(c) for c in chosen if _CJK.fullmatch(c)):
            continue
        chosen.append(term)
        if len(chosen) == k:
            break
    return chosen
