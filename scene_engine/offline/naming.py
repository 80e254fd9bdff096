"""What a scene is called: the nouns and names its memories share that say most of what they
mean (docs/DESIGN.md "Grouping", names; issue 36 item 3).

The candidates are the scene's nouns and names in its own language (``words.topic_words``:
no verbs, numbers, pleasantries or ids; Chinese by jieba's tags); each is embedded by the
sentence encoder and ranked by how near it is in meaning to the scene as a whole, weighed by
how many of its lines say it (a word one line says once names no topic, however apt). The
best two or three, words said together kept together (``words.compounds``), make the name.

A name then stays until the topic moves: a scene is renamed only when its name has become
much worse than the best name it could have (``RENAME_RATIO``), so adding a memory in the
other language, or one more word in a tie, never flips it back and forth. A new scene whose
best name is a live scene's name is that scene's topic (the caller puts its memories there);
a name that is taken by a gone scene tries the next words before it takes a number.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from scene_engine.offline.words import _NOT_IN_NAME, _cut_name, compounds, topic_words

__all__ = ["BEST_FIT", "CANDIDATES", "RENAME_RATIO", "fit", "name_words", "name_stem"]

CANDIDATES = 8        # nouns and names considered for a name
NAME_WORDS = 3        # words a name has at most
RENAME_RATIO = 0.65   # a name is kept while it fits at least this share of the best one's fit
BEST_FIT = 0.8        # about the most a name of two or three words fits its lines (0.6-0.7)

Embed = Callable[[Sequence[str]], Any]


def _np() -> Any:
    import numpy

    return numpy


def name_words(texts: list[str], embed: Embed | None, k: int = NAME_WORDS) -> list[str]:
    """The ``k`` words that best name ``texts`` (a scene's lines), best first, as written:
    ``topic_words``' candidates ranked by meaning (cosine of the word's vector to the mean
    of the lines' vectors) times the square root of the share of lines that say it; words
    said together joined (``Convenience Store Woman``). Without ``embed``, the words' own
    order. [] when the lines have no noun."""
    candidates = topic_words(texts, k=CANDIDATES, recurring=True)
    if not candidates:
        return []
    if embed is None or len(candidates) == 1:
        return compounds(candidates[:k], texts)
    np = _np()
    lines = [t for t in texts if t.strip()]
    centre = np.asarray(embed(lines), dtype=np.float64).mean(axis=0)
    vectors = np.asarray(embed(candidates), dtype=np.float64)
    lowered = [t.casefold() for t in lines]

    def score(i: int) -> float:
        word = candidates[i].casefold()
        share = sum(word in t for t in lowered) / max(len(lines), 1)
        return _cosine(vectors[i], centre) * math.sqrt(max(share, 1 / max(len(lines), 1)))

    order = sorted(range(len(candidates)), key=lambda i: (-score(i), i))
    return compounds([candidates[i] for i in order[:k]], texts)


def name_stem(words: list[str]) -> str:
    """``words`` as a file name's stem: lower case, NFC, characters a name may not hold made
    ``-``, joined by ``-`` in at most 60 characters (``_cut_name``); "" for none."""
    parts = [_NOT_IN_NAME.sub("-", unicodedata.normalize("NFC", w.lower())).strip("-")
             for w in words]
    return _cut_name([p for p in parts if p])


def fit(name: str, texts: list[str], embed: Embed) -> float:
    """How well the file name ``name`` says what ``texts`` mean: the cosine of the name's
    words (``-`` read as spaces) to the mean of the lines' vectors."""
    np = _np()
    lines = [t for t in texts if t.strip()]
    if not lines:
        return 0.0
    phrase = " ".join(name.removesuffix(".md").split("-"))
    centre = np.asarray(embed(lines), dtype=np.float64).mean(axis=0)
    return _cosine(np.asarray(embed([phrase]), dtype=np.float64)[0], centre)


def _cosine(a: Any, b: Any) -> float:
    np = _np()
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b) / (na * nb) if na and nb else 0.0
