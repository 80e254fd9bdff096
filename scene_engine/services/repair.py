"""``scenes repair``: number the memory journal anew after a git merge of two copies of a
store (docs/DESIGN.md "A store on disk", two devices).

What is processed is decided from what the batches still in effect took, read by id from
their ledgers (or, for batches written before ledgers, their ``Memory-Seqs`` and the journal
of their own commit), never from a cursor position alone. Order: read every journal record
(either side's), collapse the same memory said on both sides, find the batches in effect
and their claims, give each claimed memory the number its batch gave it and the rest the
free numbers (pending again), release a batch whose numbers clash with the one kept, then
write the journal, state and ledger in one commit through the write unit of work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scene_engine.core.plural import count
from scene_engine.store.memories import SEGMENT, Journal, _lines
from scene_engine.store.numbering import STATE_PATH, numbering_problem
from scene_engine.store.store import State, Store, StoreError, render_state
from scene_engine.store.unit import StoreUnit, locked

if TYPE_CHECKING:
    from git import Commit, Repo


@dataclass(frozen=True)
class BatchClaim:
    """What one batch commit took: its ``number``, commit ``sha`` and the ``(seq, id)`` of each
    memory as the copy that made it numbered them (``id`` None when nothing says which)."""

    number: int
    sha: str
    memories: tuple[tuple[int, str | None], ...]



def batch_claim(repo: Repo, commit: Commit) -> BatchClaim:
    """The ``BatchClaim`` of a batch commit: its ledger's entries (every memory it took, the
    duplicates too), or for a batch made before ledgers were kept its ``Memory-Seqs`` trailer
    with the ids the journal of that very commit holds at those places. An unreadable ledger
    falls back to the trailer too. Raises nothing for a damaged commit: unknown ids are None."""
    from scene_engine.batch.accounting import Ledger
    from scene_engine.store import history
    from scene_engine.store.history import expand_seqs

    found = history.trailers(history.message_of(commit))
    number = int(found["Batch"])
    if found.get("Ledger"):
        try:
            blob = commit.tree / history.tree_path(repo, found["Ledger"])
            ledger = Ledger.parse(blob.data_stream.read().decode("utf-8"))
            return BatchClaim(number, commit.hexsha,
                              tuple((e.seq, e.id) for e in ledger.entries))
        except (KeyError, ValueError):   # unreadable: the trailer still says what it took
            pass
    seqs = expand_seqs(found.get("Memory-Seqs", ""))
    ids = _ids_at(repo, commit, seqs)
    return BatchClaim(number, commit.hexsha, tuple((s, ids.get(s)) for s in seqs))



def _ids_at(repo: Repo, commit: Commit, seqs: list[int]) -> dict[int, str]:
    """seq -> id of the journal records at those places in ``commit``'s own tree."""
    from scene_engine.store import history

    found: dict[int, str] = {}
    for number in sorted({s // SEGMENT for s in seqs}):
        try:
            blob = commit.tree / history.tree_path(repo, f"memories/{number:05d}.jsonl")
            lines = _lines(blob.data_stream.read().decode("utf-8"))
        except (KeyError, ValueError):
            continue
        for seq in (s for s in seqs if s // SEGMENT == number):
            try:
                found[seq] = json.loads(lines[seq % SEGMENT])["id"]
            except (IndexError, ValueError, KeyError, TypeError):
                continue
    return found



def live_claims(store: Store, repo: Repo) -> tuple[list[BatchClaim], list[BatchClaim]]:
    """(claims of the batches in effect, by number; claims of the batch commits that share a
    number with another and lose: the one whose ledger file is not the one in the work tree,
    the person's pick when they merged ``.scene-engine/``, else the earlier)."""
    from scene_engine.store import history

    commits = history.engine_commits(repo)
    gone = history.released_batches(commits)
    by_number: dict[int, list] = {}
    for commit in commits:
        if commit.hexsha not in gone and \
                history.commit_kind(history.message_of(commit), commit.author.email) == "batch":
            by_number.setdefault(int(history.trailers(history.message_of(commit))["Batch"]), []).append(
                commit)
    losers = [c for n, group in by_number.items() if len(group) > 1
              for c in group if c is not _kept(store, repo, n, group)]
    live = history.live_batches(repo, released={c.hexsha for c in losers})
    return ([batch_claim(repo, live[n]) for n in sorted(live)],
            [batch_claim(repo, c) for c in losers])



def _kept(store: Store, repo: Repo, number: int, group: list):
    """Of the commits ``group`` that all say ``Batch: number``, the one whose ledger is the
    file in the work tree (the side kept in the merge); with no such file, the last. A file
    that is neither side's (torn, or mixed by the merge) says nothing of which side was
    kept: ``StoreError`` names it, and nothing is written. One holding both sides between
    git's conflict markers (committed as the merge left it) keeps the last, as no file does:
    the other is released, and repair writes the kept one's file back
    (``ledgers_to_restore``)."""
    from scene_engine.batch.accounting import ledger_path
    from scene_engine.store import history

    rel = ledger_path(number)
    path = store.root / rel
    on_disk = path.read_bytes() if path.is_file() else None
    sides = []
    for commit in group:
        try:
            blob = commit.tree / history.tree_path(repo, rel)
        except KeyError:
            continue
        if blob.data_stream.read() == on_disk:
            return commit
        sides.append(commit.hexsha[:8])
    if on_disk is not None and sides and not _has_markers(on_disk):
        raise StoreError(f"{rel} is neither copy's ledger of batch {number} (torn, or mixed "
                         f"by the merge); nothing was written. Take one side whole, `git "
                         f"checkout SHA -- {rel}` with SHA one of {', '.join(sides)}, commit, "
                         "then `scenes repair`")
    return group[-1]



@dataclass
class Reconciled:
    """A repaired journal: ``records`` in their new order (``seq`` set), ``processed`` (the
    numbers live batches took, each still pointing at the memory it took) and ``released``
    (the batches that could not keep theirs)."""

    records: list[dict]
    processed: set[int]
    released: list[BatchClaim] = field(default_factory=list)



def collapse(records: list[dict]) -> tuple[list[dict], dict[str, int]]:
    """(each memory once, id or alias -> its place in that list). Records that share an id or
    an alias, or state the same content at the same instant under the same scope (as
    ``Journal.plan_append`` collapses them: both devices added it), are one memory: the
    first is kept and takes the others' ids as aliases."""
    kept: list[dict] = []
    owner: dict[str, int] = {}
    facts: dict[tuple, int] = {}
    for record in records:
        ids = [record["id"], *(record.get("aliases") or ())]
        fact = (record.get("content"), record.get("created_at"), record.get("scope"))
        place = next((owner[i] for i in ids if i in owner), facts.get(fact))
        if place is None:
            place = len(kept)
            kept.append(dict(record))
            facts[fact] = place
        else:
            first = kept[place]
            known = {first["id"], *(first.get("aliases") or ())}
            extra = [i for i in ids if i not in known]
            if extra:
                first["aliases"] = [*(first.get("aliases") or ()), *extra]
        owner.update((i, place) for i in ids if i not in owner)
    return kept, owner



def reconcile(records: list[dict], claims: list[BatchClaim]) -> Reconciled:
    """Number ``records`` (journal order, as merged) so that every claim of ``claims`` (the
    live batches, lowest number first) keeps its numbers where it can: a batch whose memories
    all exist and whose numbers no earlier batch gave to another memory keeps them all; any
    other batch is released whole. The memories no kept batch took fill the free numbers in
    journal order."""
    unique, owner = collapse(records)
    at: dict[int, int] = {}       # number -> place in ``unique``
    placed: dict[int, int] = {}   # place in ``unique`` -> number
    released = []
    for claim in claims:
        want = _fitting(claim, owner, len(unique), at, placed)
        if want is None:
            released.append(claim)
            continue
        at.update(want)
        placed.update((place, seq) for seq, place in want.items())
    processed = set(at)
    free = iter(s for s in range(len(unique)) if s not in at)
    for place in range(len(unique)):
        if place not in placed:
            at[next(free)] = place
    return Reconciled([{**unique[at[seq]], "seq": seq} for seq in range(len(unique))],
                      processed, released)



def _fitting(claim: BatchClaim, owner: dict[str, int], size: int, at: dict[int, int],
             placed: dict[int, int]) -> dict[int, int] | None:
    """number -> place of each memory ``claim`` took, or None when one cannot keep its number
    (an id no record has, a number past the journal's end, a number or a memory an earlier
    batch kept: two batches in effect never hold one memory)."""
    want: dict[int, int] = {}
    for seq, memory_id in claim.memories:
        place = owner.get(memory_id) if memory_id is not None else None
        if place is None or seq >= size or seq in at or place in placed or seq in want:
            return None
        want[seq] = place
    return want if len(set(want.values())) == len(want) else None



def claims_problem(records: list[dict], claims: list[BatchClaim], state: State) -> str:
    """What disagrees between a journal whose numbering is whole (``records`` in order), the
    live batches' ``claims`` and ``state.json`` ("" when nothing): a batch that took a memory
    under a number the journal gives another (a merge repaired by an older engine), or a
    memory the state counts as processed that no live batch took, or the other way round."""
    for claim in claims:
        for seq, memory_id in claim.memories:
            record = records[seq] if seq < len(records) else None
            if record is None or memory_id not in (record["id"], *(record.get("aliases") or ())):
                other = f"memory {record['id']}" if record else "no memory"
                return (f"batch {claim.number} took memory {memory_id} as #{seq}, but the "
                        f"journal's #{seq} is {other}")
    pending = set(state.requeued) | set(state.forgotten) | \
        set(range(state.cursor, state.next_seq))
    processed = set(range(state.next_seq)) - pending
    taken = {seq for claim in claims for seq, _ in claim.memories}
    if processed != taken:
        odd = min(processed ^ taken)
        return (f"state.json counts memory #{odd} as "
                f"{'processed' if odd in processed else 'pending'}, but "
                f"{'no' if odd in processed else 'a'} live batch took it")
    return ""



def repaired_state(state: State, plan: Reconciled, forgotten: set[str],
                   last_batch: int) -> State:
    """``state`` for the journal ``plan`` made: every memory it does not count as processed
    or ``forgotten`` (ids) pending (past the cursor or re-queued), the batch counter at least
    ``last_batch`` (the newest batch number in the history, either device's)."""
    seq_of = {i: r["seq"] for r in plan.records for i in (r["id"], *(r.get("aliases") or ()))}
    dropped = sorted({seq_of[i] for i in forgotten if i in seq_of} - plan.processed)
    top = max(plan.processed | set(dropped), default=-1) + 1
    requeued = [s for s in range(top) if s not in plan.processed and s not in set(dropped)]
    return state.model_copy(update={
        "next_seq": len(plan.records), "cursor": top, "requeued": requeued,
        "forgotten": dropped, "batch": max(state.batch, last_batch)})



def forgotten_ids(store: Store, repo: Repo, state: State, records: list[dict]) -> set[str]:
    """The ids of the memories ``state.json`` lists as forgotten, in the numbering of the copy
    it came from: the record carrying that number, or when both copies numbered one (a
    record each), the one at that place in the journal of the newest commit (not a merge)
    whose ``state.json`` is this very file. Neither when that cannot tell: a forgotten
    memory comes back pending rather than another one being hidden."""
    found: set[str] = set()
    origin = None
    for seq in state.forgotten:
        carrying = [r["id"] for r in records if r.get("seq") == seq]
        if len(carrying) > 1 and origin is None:
            origin = _origin_ids(store, repo, list(state.forgotten))
        pick = carrying if len(carrying) == 1 else \
            [i for i in carrying if (origin or {}).get(seq) == i]
        found.update(pick[:1])
    return found



def forgotten_in_history(repo: Repo) -> set[str]:
    """The ids of the memories an ``undo --forget`` (or a ``forget`` of an undone batch's
    pending memories) forgot, by the journal of that commit's own tree, so a merge that kept
    the other device's ``state.json`` (which never heard of the forget) cannot bring them
    back; a later redo of the batch takes them out again. Oldest first over both sides of
    every merge (``history.engine_commits``); a forget commit without ``Memory-Seqs`` (made
    before they carried it) counts only through ``state.json``."""
    from scene_engine.store import history

    forgotten: set[str] = set()
    for commit in history.engine_commits(repo):
        if len(commit.parents) > 1:
            continue
        message = history.message_of(commit)
        said = history.trailers(message)
        seqs = history.expand_seqs(said.get("Memory-Seqs", ""))
        if not seqs:
            continue
        forgets = "Forget-Batch" in said or ("Undo-Batch" in said and " forgotten." in message)
        if forgets:
            forgotten |= set(_ids_at(repo, commit, seqs).values())
        elif "Redo-Batch" in said:
            forgotten -= set(_ids_at(repo, commit, seqs).values())
    return forgotten


def _origin_ids(store: Store, repo: Repo, seqs: list[int]) -> dict[int, str]:
    """seq -> id in the journal of the newest non-merge commit whose ``state.json`` is the
    one on disk ({} when none of the last 200 commits is)."""
    from scene_engine.store import history

    on_disk = store.state_path.read_bytes()
    for commit in reversed(history.engine_commits(repo)[-200:]):
        if len(commit.parents) > 1:
            continue
        try:
            blob = commit.tree / history.tree_path(repo, STATE_PATH)
        except KeyError:
            continue
        if blob.data_stream.read() == on_disk:
            return _ids_at(repo, commit, seqs)
    return {}



def repair_numbering(store: Store) -> dict:
    """Number the journal anew (``reconcile``), write it, ``state.json`` (``repaired_state``)
    and the extraction ledger's event numbers in one commit, under the store lock. Returns
    ``{"repaired": bool, "memories": n, "pending_again": n (memories waiting for a batch),
    "released_batches": [numbers], "problem": text}``. Raises ``JournalError`` for a torn
    journal line, ``HistoryError`` if git refuses (a merge still in progress)."""
    with locked(store, numbering=False) as unit:   # the numbering is what it repairs
        return _repair(unit)


def _repair(unit: StoreUnit) -> dict:
    store, repo = unit.store, unit.repo
    state, sides = _state_for_repair(store)
    journal = Journal(store.memories_dir)
    markers = journal.conflict_markers()     # a merge committed as git left it: both sides
    records = [record for _, _, record in journal._records(skip_markers=True)]
    claims, losers = live_claims(store, repo)
    events = _renumbered_events(store)
    problem = (f"git conflict markers at {markers[0]}" +
               (f" and {len(markers) - 1} more" if len(markers) > 1 else "") if markers
               else "") or numbering_problem(store.memories_dir, state.next_seq) or \
        claims_problem(records, claims, state) or \
        (f"{count(len(losers), 'batch commit')} {'shares' if len(losers) == 1 else 'share'} a "
         "number with another" if losers else "") or \
        ("state.json holds git conflict markers" if sides else "") or \
        ("the extraction ledger's events are not numbered 1, 2, 3, ..." if events else "")
    if not problem:
        return {"repaired": False, "memories": state.next_seq, "pending_again": 0,
                "released_batches": [], "problem": ""}
    plan = reconcile(records, claims)
    plan.released = losers + plan.released
    last = max((c.number for c in claims + losers), default=0)
    forgotten = forgotten_ids(store, repo, state, records) | forgotten_in_history(repo)
    fixed = repaired_state(state, plan, forgotten, last)
    _write_repair(unit, plan, fixed, events, problem,
                  ledgers_to_restore(store, repo, claims))
    return {"repaired": True, "memories": len(plan.records), "pending_again": fixed.pending,
            "released_batches": sorted({c.number for c in plan.released}),
            "problem": problem}



def _write_repair(unit: StoreUnit, plan: Reconciled, fixed: State, events: str | None,
                  problem: str, ledgers: dict[str, str] | None = None) -> None:
    """Write the repaired journal, state and extraction ledger (and the batch ledgers a merge
    left with conflict markers, ``ledgers``: path -> the text their batch wrote) and commit
    them, as one change of the unit of work (a crash is rolled back by the next command)."""
    from scene_engine.core.fs import atomic_write_text
    from scene_engine.extraction.events import LOG_PATH, log_path
    from scene_engine.store import history

    store = unit.store
    texts = _segment_texts(plan.records)
    old = sorted(store.memories_dir.glob("*.jsonl"))
    planned: dict[str, str | None] = {f"memories/{name}": text for name, text in texts.items()}
    planned |= {f"memories/{p.name}": None for p in old if p.name not in texts}
    planned[STATE_PATH] = render_state(fixed)
    if events is not None:
        planned[LOG_PATH] = events
    planned |= ledgers or {}
    released = "".join(f"\nBatch {c.number} ({c.sha[:8]}) is released: its memories are "
                       "pending again." for c in plan.released)
    trailer = ("\n\n" + history.RELEASED + ": " +
               " ".join(f"{c.number}@{c.sha}" for c in plan.released)) if plan.released else ""
    with unit.change(planned):
        for path in old:
            if path.name not in texts:
                path.unlink()
        for name, text in texts.items():
            atomic_write_text(store.memories_dir / name, text)
        if events is not None:
            atomic_write_text(log_path(store), events)
        for rel, text in (ledgers or {}).items():
            atomic_write_text(store.root / rel, text)
        store.save_state(fixed)
        history.commit(unit.repo, f"repair: journal numbered anew, "
                                  f"{count(fixed.pending, 'memory')} pending\n\nProblem: {problem}.{released}{trailer}\n",
                       paths=("memories", STATE_PATH, LOG_PATH, *(ledgers or {})))



def _renumbered_events(store: Store) -> str | None:
    """The extraction ledger (``dedupe.jsonl``) with its events numbered 1, 2, 3, ... and an
    event both copies wrote kept once, when both sides of a merge were kept; None when it is
    numbered already (or absent). Raises ``LedgerError`` for a line that is not an event."""
    from scene_engine.extraction.events import log_path, read_events

    if not log_path(store).exists():
        return None
    events = read_events(store, skip_markers=True)
    seen, kept = set(), []
    for event in events:
        key = json.dumps({k: v for k, v in event.items() if k != "n"}, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(event)
    if [e.get("n") for e in events] == list(range(1, len(events) + 1)) and \
            not _ledger_markers(store):
        return None
    return "".join(json.dumps({**e, "n": n}, ensure_ascii=False) + "\n"
                   for n, e in enumerate(kept, start=1))



def _state_for_repair(store: Store) -> tuple[State, int]:
    """(the state repair starts from, how many sides of a conflict it was read from). A
    ``state.json`` a merge left with git's conflict markers in it (committed as it was) is
    read side by side: the side with the newer batch is the base, the batch counter the
    highest of both, and no memory counts as forgotten (each side numbered its own: a
    forgotten memory comes back pending rather than another one being hidden). Raises
    ``StateUnreadable`` for a state that is neither."""
    from scene_engine.store.layout import StateUnreadable
    from scene_engine.store.memories import CONFLICT_MARKER

    try:
        return store.load_state(), 0
    except StateUnreadable as exc:
        unreadable = exc
    text = store.state_path.read_text(encoding="utf-8", errors="replace")
    try:
        states = [State(**json.loads(side))
                  for side in _conflict_sides(text.split("\n"), CONFLICT_MARKER)]
    except (ValueError, TypeError):
        states = []
    if len(states) < 2:
        raise unreadable
    base = max(states, key=lambda s: s.batch)
    return base.model_copy(update={"batch": max(s.batch for s in states), "forgotten": []}), \
        len(states)


def _conflict_sides(lines: list[str], marker) -> list[str]:
    """The two texts git's conflict hunks in ``lines`` stand for: ours (between ``<<<<<<<``
    and ``=======``, or ``|||||||``) and theirs (between ``=======`` and ``>>>>>>>``), each
    with the lines outside the hunks; [] when there is no hunk."""
    ours, theirs, part = [], [], "both"
    for line in lines:
        if marker.match(line):
            part = {"<": "ours", "|": "base", "=": "theirs", ">": "both"}[line[0]]
            continue
        if part in ("both", "ours"):
            ours.append(line)
        if part in ("both", "theirs"):
            theirs.append(line)
    return ["\n".join(ours), "\n".join(theirs)] if ours != theirs else []


def _has_markers(data: bytes) -> bool:
    from scene_engine.store.memories import CONFLICT_MARKER

    return any(CONFLICT_MARKER.match(line) for line in
               data.decode("utf-8", "replace").split("\n"))


def ledgers_to_restore(store: Store, repo, claims: list[BatchClaim]) -> dict[str, str]:
    """``{path: text}`` of each live batch's ledger file that holds git's conflict markers
    (a merge committed as is): the text its own commit wrote, for repair to put back."""
    from scene_engine.batch.accounting import ledger_path
    from scene_engine.store import history

    found = {}
    for claim in claims:
        rel = ledger_path(claim.number)
        path = store.root / rel
        if path.is_file() and _has_markers(path.read_bytes()):
            blob = repo.commit(claim.sha).tree / history.tree_path(repo, rel)
            found[rel] = blob.data_stream.read().decode("utf-8")
    return found


def _ledger_markers(store: Store) -> bool:
    """Whether ``dedupe.jsonl`` holds a git conflict marker line (a merge committed as is)."""
    from scene_engine.extraction.events import log_path
    return _has_markers(log_path(store).read_bytes())


def _segment_texts(records: list[dict]) -> dict[str, str]:
    texts: dict[str, list[str]] = {}
    for record in records:
        texts.setdefault(f"{record['seq'] // SEGMENT:05d}.jsonl", []).append(
            json.dumps(record, ensure_ascii=False))
    return {name: "\n".join(lines) + "\n" for name, lines in texts.items()}


def repair_store(store: Store) -> dict:
    """``scenes repair``: ``repair_numbering``, then the index brought in step with the
    journal it wrote. Returns ``repair_numbering``'s report; raises as it does."""
    from scene_engine.index.refresh import refresh_index

    report = repair_numbering(store)
    if report["repaired"]:
        refresh_index(store)
    return report
