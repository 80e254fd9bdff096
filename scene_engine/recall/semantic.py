"""Meaning as well as words: dense candidates and ranks for recall, and what the encoder
says of a question for its current facts (issues 26, 36; docs/DESIGN.md "Index and
watcher", dense vectors).

The sentence encoder is in every install (``index.dense``: USE by default, e5 with the
``semantic`` extra and ``embedding = "e5"``); ``SCENE_ENGINE_SEMANTIC=off`` turns meaning off,
and recall is then what words alone make it. With it:

1. ``start``: the journal's vectors (``.scene-engine/vectors/<embedder>.sqlite``, one key
   ``m:<journal number>`` a memory) are brought in step when the journal's count differs
   from theirs (only texts never embedded are embedded), then the query's nearest
   ``DENSE_CANDIDATES`` memories are found, when the nearest is far enough ahead of the
   journal's median cosine (``DENSE_LEAD``, by embedder; else none). The ``Meaning`` keeps the question's vector and the median, and reads memories'
   vectors, for ``current.weigh``.
2. ``fuse``: recall's BM25 order and the dense order are fused by reciprocal rank
   (``RRF_K``): a passage either ranks well in takes a good place, one found only by meaning
   ("moved to Porto" for "where do I live?") joins them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from scene_engine.index.memories import MemoryHit
    from scene_engine.index.scenes import SceneIndex
    from scene_engine.store.store import Store

DENSE_CANDIDATES = 100    # memories found by meaning that join the BM25 candidates


@dataclass(frozen=True)
class Leads:
    """How far ahead of the journal's median cosine the nearest memory must be for any to
    count as near a question, for one embedder: ``nearest`` (else none is: a question no
    memory is near), ``alone`` (for words to find none of which the journal holds:
    "zyzzyva quokka")."""

    nearest: float
    alone: float


# By the embedder's ``key``. e5 scores every text at 0.72-0.82 cosine against a question,
# nonsense too (nonsense: 0.025-0.033 ahead at best on the demo store; "what do I cook?",
# "guitar fado": 0.08-0.10). USE's cosines spread from about -0.1 to 0.9: on the 237
# questions of bench/knowledge and bench/updates the nearest memory is 0.10-0.63 ahead (5th
# percentile 0.147), on 180 nonsense queries against the same 15 journals 0.07-0.28 (median
# 0.125); 0.20 lets 5 % of the nonsense through, and 79 % of the questions (bench/RESULTS.md
# "Current facts by meaning (issue 36)"). So a question, or a query some word of which the
# journal holds, needs 0.12; words to find that it lacks 0.20. A lead asked of each memory
# that joins (0.02-0.10) cost LoCoMo and the updates set more than it saved.
DENSE_LEAD = {"e5-small": Leads(0.04, 0.04), "use-m3": Leads(0.12, 0.20)}
RRF_K = 20                # reciprocal-rank fusion's constant (Cormack et al., 2009)

__all__ = ["DENSE_CANDIDATES", "DENSE_LEAD", "RRF_K", "Leads", "Meaning", "enabled",
           "nearest_memories", "fuse", "start"]


def enabled() -> bool:
    """Whether recall uses meaning (``index.refresh.vectors_enabled``)."""
    from scene_engine.index.refresh import vectors_enabled

    return vectors_enabled()


def nearest_memories(store: Store, index: SceneIndex, query: str,
                     k: int = DENSE_CANDIDATES) -> list[MemoryHit]:
    """The ``k`` memories nearest to ``query`` by meaning, best first (never a forgotten
    one): ``start`` then its result's hits at once. Raises as ``start``'s result."""
    return start(store, index, query, k)().hits


@dataclass
class Meaning:
    """What the encoder says about a question: ``hits`` (the memories nearest it, best
    first; ``[]`` when none stands out), ``query`` (its vector, float32 (dim,), or None
    without meaning), ``median`` (the journal's median cosine to it, or None) and
    ``vectors`` (texts -> float32 (len(texts), dim), unit rows, read from the store's
    vectors file where they are there; None without meaning), ``alone`` (the hits stand
    out enough to count for words to find none of which the journal holds: ``Leads``)."""

    hits: list[MemoryHit] = field(default_factory=list)
    query: Any = None
    median: float | None = None
    vectors: Callable[[Sequence[str]], Any] | None = None
    alone: bool = False


def start(store: Store, index: SceneIndex, query: str, k: int = DENSE_CANDIDATES
          ) -> Callable[[], Meaning]:
    """Begin finding the ``k`` memories nearest ``query`` by meaning: the vectors are brought
    in step with the journal (``index.refresh.sync_vectors``: nothing to do after an add)
    and the question is embedded on a worker thread (the model and SQLite let go of the
    interpreter, so the words' search goes on meanwhile); returns a function giving the
    ``Meaning`` (empty without the encoder, turned off, or for a question with no word;
    ``hits`` never a forgotten memory), to call on the ``index``'s thread. Raises (at once or
    from that function) what ``DenseIndex`` raises (``VectorsUnavailable``: the file cannot
    be used)."""
    if not enabled():
        return Meaning
    from scene_engine.index.analysis import question_terms
    from scene_engine.index.dense import DenseIndex, normalize
    from scene_engine.index.refresh import store_embedder, sync_vectors, vectors_folder
    from scene_engine.index.scenes import READ_BUSY_SECONDS

    if not question_terms(query):       # "4∭", "???": no word, so no meaning to look for
        return Meaning
    # A read waits for another writer of the vectors only as long as for one of the index.
    sync_vectors(store, index, busy_seconds=READ_BUSY_SECONDS)
    embedder = store_embedder(store)
    vector = _worker().submit(embedder.query, normalize(query))
    folder = vectors_folder(store)
    leads = leads_for(embedder)

    def vectors(texts: Sequence[str]) -> Any:
        with DenseIndex(folder, embedder=embedder, busy_seconds=READ_BUSY_SECONDS) as file:
            return file.vectors(texts)

    def result() -> Meaning:
        with DenseIndex(folder, embedder=embedder, busy_seconds=READ_BUSY_SECONDS) as file:
            found, median = file.nearest_and_median(vector.result(), k=k, keys="m:")
        meaning = Meaning([], vector.result(), median, vectors)
        if median is None or not found or found[0][1] < median + leads.nearest:
            return meaning  # nothing stands out: a question no memory is near in meaning
        meaning.hits = index.memories_by_seq([int(key[2:]) for key, _ in found])
        meaning.alone = found[0][1] >= median + leads.alone
        return meaning
    return result


def leads_for(embedder: Any) -> Leads:
    """The ``Leads`` of ``embedder`` (``DENSE_LEAD`` by its ``key``; e5's for another)."""
    return DENSE_LEAD.get(getattr(embedder, "key", ""), DENSE_LEAD["e5-small"])


@functools.lru_cache(maxsize=1)
def _worker() -> ThreadPoolExecutor:
    """The one thread that embeds questions (the model runs on one thread anyway)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="scene-engine-embed")


def fuse(ranked: list, dense_ids: list[str], extra: list) -> list:
    """``ranked`` (recall's passages, BM25 order) fused with ``dense_ids`` (memory ids by
    meaning, best first) by reciprocal rank: score ``1/(RRF_K + rank)`` summed over the two
    orders. ``extra``: passages of dense memories that BM25 did not rank (no query word), in
    the same id order; they join with their dense rank alone. A passage's ``score`` becomes
    its fused score; ties keep BM25's order."""
    place = {memory_id: n for n, memory_id in enumerate(dense_ids, start=1)}
    scored = []
    for n, passage in enumerate([*ranked, *extra]):
        score = 1 / (RRF_K + n + 1) if n < len(ranked) else 0.0
        if passage.memory is not None and passage.memory in place:
            score += 1 / (RRF_K + place[passage.memory])
        passage.score = score
        scored.append((-score, n, passage))
    return [p for _, _, p in sorted(scored, key=lambda t: (t[0], t[1]))]
