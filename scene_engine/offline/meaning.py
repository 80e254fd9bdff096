"""What a batch's texts mean, as vectors the offline backend groups by (docs/DESIGN.md
"Meaning", "Grouping").

A text's vector has two parts, each of unit length before it is weighed:

- its meaning: the sentence encoder's vector (``index.dense.Use``, cached by the text's hash
  in the store's vectors file), minus the mean vector of every text the batch sees. The
  encoder puts every sentence of a person's life in one corner of its space (they all talk
  about "I" and a day); only what is left after the common part is taken away tells one
  topic from another (on bench/topics' held-out set, unlabelled purity 0.39 -> 0.74). Of a
  few texts the mean is their own topic more than what all share, so the mean taken away is
  blended with the background (``background.npy``: the mean of 465 everyday memories,
  bench/make_background.py), ``n`` parts theirs to ``CENTERING_PRIOR`` parts background;
- the person's own words: TF-IDF over the words the batch sees (``offline_words.analyzer``:
  jieba words, English stems, no filler), each word said only once left out. A name the
  encoder has never seen ("Dona Rosa", 年糕) is one of the strongest hints of a topic.

``DENSE_WEIGHT`` of the first and the rest of the second (``scripts``: bench/bench_topics.py
on its three labelled sets, 0.7 best; meaning alone 0.96 / 0.77 / 0.63, with words
0.97 / 0.81 / 0.72, mean purity over five batch sizes and look-aheads).

``Space`` holds the rows; a scene is the normalized sum of its lines' rows, so a memory
placed in it moves it (``add``) and two scenes merged are the sum of both.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scene_engine.offline.words import analyzer

if TYPE_CHECKING:
    from scene_engine.index.dense import Matrix

__all__ = ["DENSE_WEIGHT", "Space", "Embed", "one_blas_thread"]

DENSE_WEIGHT = 0.7     # share of the encoder against the person's own words (set on bench/topics)
CENTERING_PRIOR = 20   # texts at which the mean taken away is half theirs, half background

# texts -> float32 (len(texts), dim): the cached sentence encoder (``dense.DenseIndex.vectors``)
Embed = Callable[[Sequence[str]], "Matrix"]


def _np() -> Any:
    import numpy

    return numpy


class Space:
    """The vectors of every text one batch sees, rows in the order given.

    ``texts``: the scenes' lines, the batch's memories and the memories pending after it;
    ``embed``: the sentence encoder (cached); ``weights``: each text's share of the mean
    taken away (default 1 each; a scene's lines 1 / its number of lines, so a store of one
    big topic does not make every other text look alike by being unlike it). ``row(i)`` is text ``i``'s vector (dense part
    and word part, see the module docstring); ``centroid(rows)`` the unit vector of their
    sum, ``similarity(a, b)`` a cosine in [-1, 1]."""

    def __init__(self, texts: Sequence[str], embed: Embed,
                 weights: Sequence[float] | None = None):
        np = _np()
        self.size = len(texts)
        if not texts:
            self.rows = np.zeros((0, 1), dtype=np.float32)
            return
        dense = np.asarray(embed(list(texts)), dtype=np.float32)
        # The mean of a few texts is mostly their own topic, not what every text shares
        # (taken away whole, three memories of one game leave only their differences): it
        # is blended with the background, everyday memories' mean, by their number.
        weight = np.ones(len(texts)) if weights is None else np.asarray(weights, dtype=float)
        n = float(weight.sum())
        mean = (weight @ dense + CENTERING_PRIOR * _background(dense.shape[1])) \
            / (n + CENTERING_PRIOR)
        dense = dense - mean
        dense = _unit_rows(dense)
        words = _unit_rows(_tfidf(texts))
        self.rows = np.concatenate([math.sqrt(DENSE_WEIGHT) * dense,
                                    math.sqrt(1 - DENSE_WEIGHT) * words], axis=1)

    def total(self, rows: Sequence[int]) -> Matrix:
        """The sum of ``rows`` (a scene's vector before it is made unit length)."""
        np = _np()
        if not len(rows):
            return np.zeros(self.rows.shape[1], dtype=np.float32)
        return self.rows[list(rows)].sum(axis=0)

    @staticmethod
    def cosines(rows: Matrix, b: Matrix | None, pairs: Matrix | None = None) -> Matrix:
        """float64 (len(rows),): the cosine of each row of ``rows`` to vector ``b``, or with
        ``pairs``, to the same row of ``pairs`` (0 where either is zero), as ``cosine``."""
        np = _np()
        rows = np.asarray(rows, dtype=np.float64)
        other = (np.asarray(pairs, dtype=np.float64) if pairs is not None
                 else np.asarray(b, dtype=np.float64)[None, :])
        dots = (rows * other).sum(axis=1)
        norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(other, axis=1)
        return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)

    @staticmethod
    def cosine(a: Matrix, b: Matrix) -> float:
        """The cosine of two vectors (0 when either is zero)."""
        np = _np()
        na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
        if na == 0 or nb == 0:
            return 0.0
        return float(a @ b) / (na * nb)


@contextlib.contextmanager
def one_blas_thread() -> Any:
    """Hold numpy's matrix products to one BLAS thread while the block runs (``threadpoolctl``;
    nothing is limited if it cannot see numpy's BLAS). A batch's products are small (a
    hundred-odd groups by a thousand-odd columns): on two cores shared with other work, a
    second OpenBLAS thread spins at every barrier, and grouping one batch took 26-49 ms on two
    threads against 7-8 ms on one (issue 39). The encoder limits itself the same way."""
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


@functools.cache
def _blas_controller() -> Any:
    _np()              # the controller sees only the libraries loaded when it is made
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController()
    except Exception:  # noqa: BLE001 - an odd platform's libraries: run unlimited
        return None


@functools.cache
def _background_vector() -> Any:
    np = _np()
    return np.load(Path(__file__).with_name("background.npy")).astype(np.float32)


def _background(width: int) -> Any:
    """The background mean (``background.npy``), or zeros for another encoder's width."""
    np = _np()
    vector = _background_vector()
    return vector if vector.shape == (width,) else np.zeros(width, dtype=np.float32)


def _unit_rows(matrix: Matrix) -> Matrix:
    """``matrix`` with each non-zero row scaled to length 1."""
    np = _np()
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def _tfidf(texts: Sequence[str]) -> Matrix:
    """Rows of TF-IDF weights over the words (``analyzer``) the texts share: a word said in
    one text only links nothing and is left out; weight ``(1 + ln tf) * ln((n + 1) / df)``."""
    np = _np()
    docs = [Counter(analyzer(text)) for text in texts]
    df = Counter(term for doc in docs for term in doc)
    vocab = {t: i for i, t in enumerate(sorted(t for t, n in df.items() if n > 1))}
    out = np.zeros((len(texts), max(len(vocab), 1)), dtype=np.float32)
    n = len(texts)
    for row, doc in enumerate(docs):
        for term, tf in doc.items():
            column = vocab.get(term)
            if column is not None:
                out[row, column] = (1 + math.log(tf)) * math.log((n + 1) / df[term])
    return out
