"""Merges and their undo, as events (``events``): nothing already written is changed.

A merge with a draft appends a new memory (the merged title and summary, the union of
sources and relations) and retires both; keeping one as it is retires only the other.
Undo puts back the statuses the merge changed and retracts what it created, and refuses when
a later change depends on the merge (issue 12: every merge is reversible).
"""

from __future__ import annotations

import hashlib

from scene_engine.extraction.events import new_event, undone_merges
from scene_engine.store.memories import CONTROL_CHARS, Memory
from scene_engine.store.store import StoreError

MERGE_VERSION = "merge/1"


class MergeRefused(StoreError):
    """A merge or its undo cannot be done as asked (exit 2); nothing was written."""

    exit_code = 2


def content_of(title: str, summary: str) -> str:
    """A memory's journal text from its title and summary (the summary alone when it
    already starts with the title)."""
    return summary if summary.startswith(title.rstrip(" …")) else f"{title}: {summary}"


def plan_merge(left: Memory, right: Memory, keep: str, title: str | None = None,
               summary: str | None = None, *, by: str, confidence: float | None = None,
               pair: str | None = None, again: int = 0) -> tuple[Memory | None, dict]:
    """(the merged memory to append or None, the ``merge`` event).

    ``keep``: "left" or "right". With ``title`` and ``summary`` a new memory holds the merged
    text and both are retired; without them the kept one stays as it is and only the other
    is retired. ``by``: "adjudicator" or "person". Raises ``MergeRefused`` for a bad ``keep``
    or an empty draft. ``again``: how many merges of this pair came before (each undone,
    or the pair would not be open): a decision after an undo gets an id of its own, since an
    ``undo`` event names a merge by id and would take back the new one too."""
    if keep not in ("left", "right"):
        raise MergeRefused(f"keep must be left or right, not {keep!r}")
    kept, other = (left, right) if keep == "left" else (right, left)
    seed = f"{left.id}\x00{right.id}\x00{title}\x00{summary}"
    if again:        # the first decision keeps the id it always had
        seed += f"\x00{keep}\x00{again}"
    digest = hashlib.sha256(seed.encode())
    merge_id = "g-" + digest.hexdigest()[:10]
    if title is None and summary is None:
        return None, new_event("merge", merge=merge_id, pair=pair, keep=kept.id,
                               created=None, retired=[other.id], by=by,
                               confidence=confidence)
    title, summary = (title or "").strip(), (summary or "").strip()
    if not title or not summary:
        raise MergeRefused("a merge needs both a title and a summary")
    if CONTROL_CHARS.search(title + summary):
        raise MergeRefused("a merge's title and summary may not hold control characters")
    same = [m for m in (kept, other) if m.content == content_of(title, summary)]
    if same:
        # The draft is one of the two word for word: keep that one as it is (a new record of
        # the same text at the same time would be folded into it by the journal).
        keep = "left" if same[0] is left else "right"
        return plan_merge(left, right, keep, by=by, confidence=confidence, pair=pair,
                          again=again)
    pair_ids = {left.id, right.id}
    relations = {(r["type"], r["target"]): r for m in (left, right) for r in m.relations
                 if r["target"] not in pair_ids}
    quotes = {**((left.metadata or {}).get("quotes") or {}),
              **((right.metadata or {}).get("quotes") or {})}
    merged = Memory(id=f"{merge_id}-m", content=content_of(title, summary),
                    created_at=max(left.created_at, right.created_at), role=kept.role,
                    scope=kept.scope, title=title,
                    sources=tuple(dict.fromkeys([*left.sources, *right.sources])),
                    relations=tuple(relations.values()), status="active",
                    extractor_version=MERGE_VERSION,
                    metadata={"merged_from": [left.id, right.id],
                              **({"quotes": quotes} if quotes else {})})
    return merged, new_event("merge", merge=merge_id, pair=pair, keep=kept.id,
                             created=merged.id, retired=[left.id, right.id], by=by,
                             confidence=confidence)


def plan_undo(merge_id: str, events: list[dict], memories: list[Memory]) -> dict:
    """The ``undo`` event for ``merge_id``. Raises ``MergeRefused`` when there is no such
    merge, it was undone already, or a later change depends on it: a later event (not itself
    undone) names one of its memories, or a memory relates to what it created."""
    index = next((i for i, e in enumerate(events)
                  if e["event"] == "merge" and e["merge"] == merge_id), None)
    if index is None:
        raise MergeRefused(f"no merge {merge_id!r} (see `scenes review --merges`)")
    undone = undone_merges(events)
    if merge_id in undone:
        raise MergeRefused(f"merge {merge_id} was undone already")
    merge = events[index]
    involved = {merge["keep"], *merge["retired"]} | ({merge["created"]} - {None})
    for later in events[index + 1:]:
        if later["event"] == "merge" and later["merge"] in undone or later["event"] == "undo":
            continue
        named = {later.get(k) for k in ("memory", "by", "left", "right", "keep", "created")}
        named |= set(later.get("retired") or ())
        if named & involved and later["event"] != "queued":
            raise MergeRefused(f"merge {merge_id} cannot be undone: a later change "
                               f"({later['event']} #{later.get('n')}) depends on it; undo "
                               "that first")
    created = merge["created"]
    for memory in memories:
        if created and any(r["target"] == created for r in memory.relations):
            raise MergeRefused(f"merge {merge_id} cannot be undone: memory {memory.id} "
                               f"relates to the merged memory {created}")
    return new_event("undo", merge=merge_id)
