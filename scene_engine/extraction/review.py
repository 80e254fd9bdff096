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


def _open_pair(store: Store, pair: str) -> dict:
    """The ``queued`` event of the open pair ``pair`` (its id or the start of it). Raises
    ``MergeRefused`` for an unknown or closed pair, or a prefix of several."""
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    waiting = {e["pair"]: e for e in open_pairs(ledger.read_events(store))}
    matches = [p for p in waiting if p == pair or p.startswith(pair)]
    if len(matches) != 1:
        raise MergeRefused(f"no open pair {pair!r} in the review queue (`scenes review` "
                           "lists them)" if not matches else f"{pair!r} names several pairs")
    return waiting[matches[0]]


def _plan(store: Store, event: dict, keep: str, title: str | None, summary: str | None
          ) -> tuple[list[Memory], dict]:
    """(memories to append, the decision event) for a person's choice on open pair
    ``event``, nothing written. Raises ``MergeRefused`` as ``decide``."""
    if keep == "both":
        if title or summary:
            raise MergeRefused("--title/--summary go with a merge (--keep left|right)")
        return [], ledger.new_event("kept_both", pair=event["pair"], left=event["left"],
                                    right=event["right"], by="person")
    journal = Journal(store.memories_dir)
    left, right = journal.find(event["left"]), journal.find(event["right"])
    if left is None or right is None:   # the journal was edited or damaged since
        missing = event["left"] if left is None else event["right"]
        raise MergeRefused(f"pair {event['pair']} names memory {missing}, which is not in "
                           "the journal")
    earlier = sum(1 for e in ledger.read_events(store)
                  if e["event"] == "merge" and e.get("pair") == event["pair"])
    created, decision = plan_merge(left, right, keep, title, summary, by="person",
                                   pair=event["pair"], again=earlier)
    return ([created] if created else []), decision


def decide(store: Store, pair: str, keep: str, title: str | None = None,
           summary: str | None = None) -> dict:
    """A person's decision on an open pair: ``keep`` "left" / "right" (the other is retired;
    with ``title`` and ``summary`` a merged memory replaces both) or "both". Commits it and
    returns the event written. The pair is looked up and the decision planned under the
    store lock (``events.write_planned``): of two decisions on one pair at once, the second
    is refused as closed. Raises ``MergeRefused`` (exit 2) for an unknown or closed pair or
    a bad choice."""
    _plan(store, _open_pair(store, pair), keep, title, summary)   # refused before the lock
    made: dict = {}

    def plan() -> tuple[list[Memory], list[dict], str]:    # again under it: still open?
        event = _open_pair(store, pair)
        created, decision = _plan(store, event, keep, title, summary)
        made.update(decision)
        if decision["event"] == "kept_both":
            return [], [decision], f"review: keep both of {event['pair']}"
        return created, [decision], (f"review: merge {decision['merge']} ({event['pair']}, "
                                     f"keep {keep})")

    ledger.write_planned(store, plan)
    return made


def preview(store: Store, pair: str, keep: str, title: str | None = None,
            summary: str | None = None) -> dict:
    """What ``decide`` would do, nothing written: ``{"pair", "event" ("merge" or
    "kept_both"), "kept" (id or None), "retired" (ids archived: no longer recalled or
    folded, still in the journal), "created" (the merged memory as ``{id, title, summary,
    sources}``, or None), "evidence_to" (the id that holds both memories' sources after it,
    or None)}``. Raises ``MergeRefused`` as ``decide``."""
    event = _open_pair(store, pair)
    created, decision = _plan(store, event, keep, title, summary)
    if decision["event"] == "kept_both":
        return {"pair": event["pair"], "event": "kept_both", "kept": None, "retired": [],
                "created": None, "evidence_to": None}
    made = created[0] if created else None
    return {"pair": event["pair"], "event": "merge", "kept": decision["keep"],
            "retired": list(decision["retired"]),
            "created": {"id": made.id, "title": made.title, "summary": made.content,
                        "sources": list(made.sources)} if made else None,
            "evidence_to": made.id if made else decision["keep"]}


def decided(store: Store) -> list[dict]:
    """The pairs decided, newest first: ``[{pair, event ("merge" or "kept_both"), by, at,
    merge (id or None), undone (bool), left, right (ids), keep, created}]``; a merge the
    adjudicator made without a pair is listed too (``pair`` None)."""
    event_list = _readable_events(store)
    undone = ledger.undone_merges(event_list)
    rows = []
    for e in event_list:
        if e["event"] == "kept_both":
            rows.append({"pair": e.get("pair"), "event": "kept_both", "by": e.get("by"),
                         "at": e.get("at"), "merge": None, "undone": False,
                         "left": e.get("left"), "right": e.get("right"), "keep": None,
                         "created": None})
        elif e["event"] == "merge":
            retired = list(e.get("retired") or [])
            others = [m for m in retired if m != e.get("keep")]
            rows.append({"pair": e.get("pair"), "event": "merge", "by": e.get("by"),
                         "at": e.get("at"), "merge": e["merge"],
                         "undone": e["merge"] in undone, "left": e.get("keep"),
                         "right": others[0] if others else None, "keep": e.get("keep"),
                         "created": e.get("created")})
    rows.reverse()
    return rows


def undo(store: Store, merge_id: str) -> dict:
    """Undo a merge (automatic or by hand); returns the ``undo`` event. Planned under the
    store lock (``events.write_planned``): a second undo of the same merge at once is
    refused as already undone. Raises ``MergeRefused`` as ``merge.plan_undo``."""
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    made: dict = {}

    def plan() -> tuple[list[Memory], list[dict], str]:
        event_list = ledger.read_events(store)
        matches = {e["merge"] for e in event_list if e["event"] == "merge"
                   and e["merge"].startswith(merge_id)}
        if len(matches) > 1:
            raise MergeRefused(f"{merge_id!r} names several merges")
        target = matches.pop() if matches else merge_id
        event = plan_undo(target, event_list, Journal(store.memories_dir).all())
        made.update(event)
        return [], [event], f"review: undo merge {target}"

    plan()                       # refused before the lock (an unknown or undone merge)
    made.clear()
    ledger.write_planned(store, plan)
    return made
