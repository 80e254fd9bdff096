"""``scenes review``: the pairs that may be one fact, for a person to decide, and the merges
(docs/DESIGN.md "Extraction"). The rules of a decision live in ``extraction.review``; this
checks what the face was asked before anything is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scene_engine.core.errors import InputError
from scene_engine.extraction import review as ledger

if TYPE_CHECKING:
    from scene_engine.store.store import Store

KEEPS = ("left", "right", "both")


def pending_pairs(store: Store) -> list[dict]:
    """The queue: each pair waiting, with both memories, dates, sources."""
    return ledger.queue(store)


def merges(store: Store) -> list[dict]:
    """Every merge made, applied or undone."""
    return ledger.merges(store)


def decide(store: Store, pair: str, keep: str | None = None, merge: bool = False,
           title: str | None = None, summary: str | None = None) -> dict:
    """Decide ``pair`` (its id or the start of it): ``keep`` left, right or both, or
    ``merge`` into one memory with ``title`` and ``summary`` (keeping left unless ``keep``
    says right). Returns the event written. Raises ``InputError`` for a decision that does
    not say what to do or says two things, and as ``extraction.review.decide``."""
    keep, title, summary = _checked(keep, merge, title, summary)
    return ledger.decide(store, pair, keep, title, summary)


def preview(store: Store, pair: str, keep: str | None = None, merge: bool = False,
            title: str | None = None, summary: str | None = None) -> dict:
    """What ``decide`` with the same arguments would do, nothing written (``scenes review
    PAIR ... --dry-run``, the page's preview): which memory is archived, which is kept or
    made, where the sources go (``extraction.review.preview``). Raises as ``decide``."""
    keep, title, summary = _checked(keep, merge, title, summary)
    return ledger.preview(store, pair, keep, title, summary)


def decided(store: Store) -> list[dict]:
    """The pairs decided, newest first, merges with whether they were undone (the page's
    "done" queue; ``extraction.review.decided``)."""
    return ledger.decided(store)


def _checked(keep: str | None, merge: bool, title: str | None, summary: str | None
             ) -> tuple[str, str | None, str | None]:
    """(keep, title, summary) as ``extraction.review`` takes them. Raises ``InputError``."""
    if merge and not (title and summary):
        raise InputError("--merge needs --title and --summary")
    if keep is None and not merge:
        raise InputError("say --keep left|right|both or --merge --title T --summary S")
    if keep not in (None, *KEEPS) or (merge and keep == "both"):
        raise InputError("--keep takes left, right or both (a merge keeps left or right)")
    if merge:
        _check_merged_text(title or "", summary or "")
    return keep or "left", (title if merge else None), (summary if merge else None)


def _check_merged_text(title: str, summary: str) -> None:
    """A person's merged memory holds what any memory may (``extraction.schema``: a title of
    at most ``TITLE_CHARS`` on one line, a summary of at most ``SUMMARY_CHARS``, no control
    characters). Raises ``InputError`` naming the limit; nothing is written."""
    from scene_engine.extraction.schema import SUMMARY_CHARS, TITLE_CHARS
    from scene_engine.store.memories import CONTROL_CHARS

    for name, text, limit in (("--title", title, TITLE_CHARS),
                              ("--summary", summary, SUMMARY_CHARS)):
        if not text.strip():
            raise InputError(f"{name} is empty: give the merged memory's words")
        if len(text) > limit:
            raise InputError(f"{name} has {len(text)} characters; at most {limit}: "
                             "shorten it, nothing was merged")
        if CONTROL_CHARS.search(text) or (name == "--title" and "\n" in text):
            raise InputError(f"{name} holds a control character"
                             + (" or a line break" if name == "--title" else ""))


def undo_merge(store: Store, merge_id: str) -> dict:
    """Take merge ``merge_id`` back: both memories active again, the pair queued again.
    Raises as ``extraction.review.undo`` (refused while a later change depends on it)."""
    return ledger.undo(store, merge_id)
