"""The review queue: pairs the program or the adjudicator left for a person, and what the
person decides (``scenes review``): keep one, keep both, merge with an edited draft, or undo
a merge.

A pair is open from its ``queued`` event until a ``merge`` or ``kept_both`` event names it;
undoing that merge opens it again.
"""

from __future__ import annotations

from scene_engine.extraction import events as ledger
from scene_engine.extraction.merge import MergeRefused, plan_merge, plan_undo
from scene_engine.store.memories import Journal, Memory
from scene_engine.store.recovery import ensure_recovered
from scene_engine.store.store import Store


def open_pairs(event_list: list[dict]) -> list[dict]:
    """The ``queued`` events still waiting for a decision, oldest first (one per pair)."""
    undone = ledger.undone_merges(event_list)
    waiting: dict[str, dict] = {}
    for event in event_list:
        if event["event"] == "queued":
            waiting.setdefault(event["pair"], event)
        elif event["event"] == "kept_both" or (event["event"] == "merge"
                                               and event["merge"] not in undone):
            if event.get("pair") is not None:
                waiting.pop(event["pair"], None)
        elif event["event"] == "undo":
            merge = next(e for e in event_list if e.get("merge") == event["merge"]
                         and e["event"] == "merge")
            if merge.get("pair"):
                origin = next((e for e in event_list if e["event"] == "queued"
                               and e["pair"] == merge["pair"]), None)
                if origin is not None:
                    waiting[merge["pair"]] = origin
    return list(waiting.values())


def queue(store: Store) -> list[dict]:
    """The open pairs with both memories in full: ``[{pair, reason, similarity, queued_at,
    left: {...}, right: {...}}]`` where each side has id, title, summary, scope, status,
    created_at and sources (ids, with the quoted text when it was kept)."""
    event_list = _readable_events(store)
    journal = Journal(store.memories_dir).all()
    memories = {i: m for m in journal for i in (m.id, *m.aliases)}
    status = ledger.statuses(journal, event_list)
    return [{"pair": e["pair"], "reason": e["reason"], "similarity": e.get("similarity"),
             "queued_at": e["at"], "left": _side(memories[e["left"]], status),
             "right": _side(memories[e["right"]], status)}
            for e in open_pairs(event_list)]


def _readable_events(store: Store) -> list[dict]:
    """The ledger's events for a listing, an interrupted write rolled back first: a line
    that is not an event is a warning naming it (its events are missing from the listing;
    a decision refuses until it is fixed), never the end of the listing."""
    import warnings

    ensure_recovered(store)
    events, problems = ledger.read_intact(store)
    for problem in problems:
        warnings.warn(problem, stacklevel=3)
    return events


def merges(store: Store) -> list[dict]:
    """Every merge with whether it was undone: ``[{merge, by, keep, created, retired,
    confidence, at, undone}]``."""
    event_list = _readable_events(store)
    undone = ledger.undone_merges(event_list)
    return [{k: e.get(k) for k in ("merge", "pair", "by", "keep", "created", "retired",
                                   "confidence", "at")} | {"undone": e["merge"] in undone}
            for e in event_list if e["event"] == "merge"]


def _side(memory: Memory, status: dict[str, str]) -> dict:
    quotes = (memory.metadata or {}).get("quotes") or {}
    return {"id": memory.id, "title": memory.title, "summary": memory.content,
            "scope": memory.scope, "status": status.get(memory.id, "active"),
            "created_at": memory.created_at.isoformat(),
            "sources": [{"id": s, "text": quotes.get(s)} for s in memory.sources]}


def decide(store: Store, pair: str, keep: str, title: str | None = None,
           summary: str | None = None) -> dict:
    """A person's decision on an open pair: ``keep`` "left" / "right" (the other is retired;
    with ``title`` and ``summary`` a merged memory replaces both) or "both". Commits it and
    returns the event written. Raises ``MergeRefused`` (exit 2) for an unknown or closed pair
    or a bad choice."""
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    event_list = ledger.read_events(store)
    waiting = {e["pair"]: e for e in open_pairs(event_list)}
    matches = [p for p in waiting if p == pair or p.startswith(pair)]
    if len(matches) != 1:
        raise MergeRefused(f"no open pair {pair!r} in the review queue (`scenes review` "
                           "lists them)" if not matches else f"{pair!r} names several pairs")
    event = waiting[matches[0]]
    if keep == "both":
        if title or summary:
            raise MergeRefused("--title/--summary go with a merge (--keep left|right)")
        decision = ledger.new_event("kept_both", pair=event["pair"], left=event["left"],
                                    right=event["right"], by="person")
        ledger.write(store, [], [decision], f"review: keep both of {event['pair']}")
        return decision
    journal = Journal(store.memories_dir)
    left, right = journal.find(event["left"]), journal.find(event["right"])
    if left is None or right is None:   # the journal was edited or damaged since
        missing = event["left"] if left is None else event["right"]
        raise MergeRefused(f"pair {event['pair']} names memory {missing}, which is not in "
                           "the journal")
    created, decision = plan_merge(left, right, keep, title, summary, by="person",
                                   pair=event["pair"])
    ledger.write(store, [created] if created else [], [decision],
                 f"review: merge {decision['merge']} ({event['pair']}, keep {keep})")
    return decision


def undo(store: Store, merge_id: str) -> dict:
    """Undo a merge (automatic or by hand); returns the ``undo`` event. Raises
    ``MergeRefused`` as ``merge.plan_undo``."""
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    event_list = ledger.read_events(store)
    matches = {e["merge"] for e in event_list if e["event"] == "merge"
               and e["merge"].startswith(merge_id)}
    if len(matches) > 1:
        raise MergeRefused(f"{merge_id!r} names several merges")
    target = matches.pop() if matches else merge_id
    event = plan_undo(target, event_list, Journal(store.memories_dir).all())
    ledger.write(store, [], [event], f"review: undo merge {target}")
    return event
