"""``scenes status`` and the MCP ``status`` tool: what is pending, scenes, batches, what
waits for review, and every line that cannot be read (docs/DESIGN.md "Command line").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scene_engine.store import inbox
from scene_engine.store.memories import Journal
from scene_engine.store.store import Store

if TYPE_CHECKING:
    from git import Repo


def status(store: Store) -> dict:
    """``{"pending", "scenes", "batches", "last_batch", "memories", "forgotten", "persona",
    "queued", "review", "root", "warnings"}`` for the store (counts; ``last_batch`` is a
    number or None; ``queued``: memories waiting in the inbox for the store; ``review``:
    candidate pairs waiting in ``scenes review``, from the ledger's readable lines;
    ``warnings``: each line of the journal or the extraction ledger that cannot be read,
    by file and line: what it holds is missing from searches, recall and the counts; and a
    journal whose numbering is out of step with the state, as after a git merge of two
    copies: the counts are not to be trusted until ``scenes repair``).

    Raises ``HistoryError`` when the store is in no git repository or in one that is not
    its own (``history.ForeignRepository``: counts from there would hide that every write
    now refuses)."""
    from scene_engine.extraction.events import read_intact
    from scene_engine.extraction.review import open_pairs
    from scene_engine.store import history
    from scene_engine.store.layout import repair_order

    state = store.load_state()
    with history.open_repo(store.root) as repo:
        numbering = _numbering(store, state, repo)
    events, unread = read_intact(store)
    return {"pending": state.pending, "scenes": len(store.scene_names()),
            "batches": state.batch, "last_batch": state.batch or None,
            "memories": state.next_seq, "forgotten": len(state.forgotten),
            "persona": store.persona_path.exists(), "queued": inbox.queued(store),
            "review": len(open_pairs(events)), "root": str(store.root),
            "warnings": repair_order(store.root, journal_problems(store) + unread
                                     + numbering + _headers(store))}


def _headers(store: Store) -> list[str]:
    """The unreadable headers (one line) and each scene or persona that is not UTF-8."""
    from scene_engine.services.listing import header_warning_and_bytes

    said, undecodable = header_warning_and_bytes(store)
    return ([said] if said else []) + undecodable


def _numbering(store: Store, state, repo: Repo) -> list[str]:
    """The journal's committed lines rewritten by hand (``numbering.journal_edits``), else
    its numbering problem (``numbering.numbering_problem``), as warnings; or []."""
    from scene_engine.store import history
    from scene_engine.store.memories import JournalError
    from scene_engine.store.numbering import journal_edits, numbering_problem

    changes = history.journal_changes(repo)
    edits = journal_edits(repo, changes)
    if edits:
        return edits
    known = history.journal_blobs(repo, changes)     # segments known by cached facts
    try:
        problem = numbering_problem(store.memories_dir, state.next_seq, known, store.root)
    except JournalError:          # a torn line: named in the journal's own warnings
        return []
    from scene_engine.store.layout import repair_advice

    return [f"the memory journal's numbers are out of step ({problem}), as after a git "
            "merge of two copies; the counts above are not to be trusted: "
            + repair_advice(store.root)] if problem else []



def journal_problems(store: Store) -> list[str]:
    """A message for each journal line that is not a whole memory record (file and line in
    it), from the search index, which keeps them (one ``stat`` a segment when nothing
    changed); read from the journal itself when no index can be opened."""
    from scene_engine.index.scenes import IndexUnavailable, read_index

    try:
        index, _ = read_index(store)
    except IndexUnavailable:
        return Journal(store.memories_dir).intact()[1]
    try:
        return index.journal_problems()
    finally:
        index.close()
