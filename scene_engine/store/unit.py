"""The one write unit of work: every change of a store goes through it (docs/DESIGN.md "A
store on disk", crash safety).

A batch, an add, a persona refresh, an undo, a repair and an extraction each write several
files and one commit. The sequence they share, in this order:

 1. take the store lock (``lock.store_lock``; ``LockBusyError`` when it stays busy);
 2. open the repository (closed again at the end: its ``git cat-file`` helpers end with it);
 3. finish or roll back a change a killed process left (``recovery.recover``);
 4. check that no committed journal line was rewritten by hand
    (``numbering.check_journal_appended``: the commit would take the rewrite in), then the
    journal's numbering (``numbering.check_numbering``) unless the unit is the repair of it;
    both from one ``git diff`` of the journal folder, reading only the segments it names and
    the last one (a segment git says is HEAD's is known by facts cached from its blob), so
    their cost follows what changed since the last commit, not the journal's size;
 5. for the write itself (``StoreUnit.change``): hold Ctrl-C and SIGTERM back
    (``interrupts.critical``), write the write-ahead marker naming every path and the text
    planned for it (``recovery.begin``), let the caller write and commit, drop the marker.

A change that raises leaves the marker, and step 3 of the next unit rolls it back, as after a
process killed in between; the caller may name exceptions that wrote nothing (only the marker
goes) or that are rolled back at once. So a crash at
any instant leaves the store as it was before the change or after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scene_engine.core import interrupts
from scene_engine.store import history, recovery
from scene_engine.store.lock import store_lock
from scene_engine.store.numbering import check_journal_appended, check_numbering

if TYPE_CHECKING:
    from git import Repo

    from scene_engine.store.store import Store


@dataclass
class StoreUnit:
    """The store under its lock, with its repository open and nothing left half-done: what a
    writer works with inside ``locked``."""

    store: Store
    repo: Repo

    @contextlib.contextmanager
    def change(self, planned: Mapping[str, str | None],
               nothing_written: tuple[type[BaseException], ...] = (),
               roll_back: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
        """Write and commit ``planned`` as one change: ``planned`` maps each path (relative
        to the store root) to the exact text about to be written there, or None for a
        deletion or for an engine file whose text is decided while writing
        (``recovery.begin``). The body writes the files and commits; Ctrl-C waits until it
        is done. An exception of ``nothing_written`` (the caller knows no file was touched)
        drops the marker; one of ``roll_back`` rolls the planned paths back to HEAD now; any
        other leaves the marker, and the next unit of work rolls the change back as after a
        crash. The exception is raised again in every case."""
        with interrupts.critical(self.repo):
            recovery.begin(self.store, planned, self.repo)
            try:
                yield
            except nothing_written:
                recovery.end(self.store)
                raise
            except roll_back:
                recovery.recover(self.store, self.repo)
                raise
            recovery.end(self.store)


@contextlib.contextmanager
def locked(store: Store, timeout: float | None = None, numbering: bool = True
           ) -> Iterator[StoreUnit]:
    """Steps 1-4 of the unit of work: the lock (waiting at most ``timeout`` seconds; None:
    ``lock.lock_timeout()``), the repository, recovery, and (``numbering``) the journal's
    numbering check. Yields a ``StoreUnit`` whose ``change`` does step 5. Raises
    ``LockBusyError``, ``NumberingError`` (a merged journal: ``scenes repair`` first),
    ``JournalEditedError`` (a committed journal line rewritten by hand) and
    ``HistoryError``."""
    with store_lock(store.lock_path, timeout=timeout), \
            contextlib.closing(history.open_repo(store.root)) as repo:
        recovery.recover(store, repo)
        changes = history.journal_changes(repo)   # one git diff of the journal, for both
        check_journal_appended(repo, changes)      # first: a rewrite also breaks the numbering
        if numbering:
            check_numbering(store, repo=repo, changes=changes)
        yield StoreUnit(store, repo)
