"""``scenes undo``: revert one batch (or persona commit) with a new commit; redo the same way.

Never a hard reset, never a force, never conflict markers: the reverse patch of the batch's
changes under ``scenes/`` and ``persona.md`` is checked with ``git apply --check`` first; if a
later commit changed the same lines it refuses, names those commits, and leaves the work tree
and index exactly as they were. ``state.json`` is not patched but rewritten: the batch's
memories become pending again (or forgotten with ``--forget``), so reverting an old batch
never conflicts on the state file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from scene_engine.core.errors import NotUtf8Error, SceneEngineError
from scene_engine.core.fs import atomic_write_text, decode_utf8, read_regular_text
from scene_engine.core.plural import count
from scene_engine.index.refresh import refresh_index
from scene_engine.store import history
from scene_engine.store.history import expand_seqs
from scene_engine.store.store import State, Store, render_state
from scene_engine.store.unit import StoreUnit, locked

if TYPE_CHECKING:
    from git import Commit, Repo

PATHS = history.HAND_EDITABLE
PERSONA = "persona.md"
STATE_FILE = ".scene-engine/state.json"
COMMIT_NAME_CHARS = 255   # longer than any sha or ref name a person types (a ref is a file name)


class UndoError(SceneEngineError, RuntimeError):
    """The undo was refused or failed; nothing changed. ``exit_code``: 1 refused, 2 bad usage."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class UndoResult:
    """What an undo did: ``action`` ("undo" | "redo"), the batch (or None for a persona or
    hand-edit commit), the target commit, the new commit, how many memories it re-queued
    (or forgot, or took back for a redo), and whether the persona was made anew with it."""

    action: str
    batch: int | None
    target: str
    commit: str
    memories: int
    persona: bool = False      # the persona was made anew (or removed) in the same commit


def undo(store: Store, target: str | None = None, forget: bool = False,
         expect: Literal["undo", "redo"] | None = None) -> UndoResult:
    """Revert batch ``target`` (a number), or a commit (sha prefix); default the newest live batch.

    If ``target`` names a batch that is already undone, the undo is undone (a redo).
    ``expect``: the action the caller showed a person ("Undo batch 14" on a page); when the
    store is no longer in that state (another tab, a double submit) the undo is refused
    instead of doing the opposite. Raises ``UndoError`` when there is nothing to undo, the
    target is unknown, the action is not ``expect``, or a later commit changed the same
    lines (the message names them).
    """
    with locked(store, numbering=False) as unit:
        repo = unit.repo
        action, commit, batch = _resolve(repo, target)
        if expect is not None and action != expect:
            raise UndoError(_not_expected(action, batch, commit))
        seqs = expand_seqs(history.trailers(history.message_of(commit)).get("Memory-Seqs", ""))
        if action == "redo":
            assert batch is not None, "_resolve gives every redo its batch"
            if forget:
                return _forget_pending(unit, commit, batch, seqs)
            _check_redo(repo, batch, seqs)
        # Plan on the files as they are (hand edits included) before committing anything,
        # so a refused undo leaves HEAD, index and work tree exactly as they were.
        # A batch's persona is the extractive one it made of its scenes (persona.in_batch):
        # never patched back (the persona before it may name scenes that are gone, or be
        # none at all); it is made anew for the scenes the undo leaves, in the same commit.
        results = _plan_reverse(store, repo, commit, action,
                                derived=(PERSONA,) if batch is not None else ())
        history.commit_hand_edits(repo)
        new_state = _new_state(store.load_state(), action, seqs, forget)
        # An undo of a persona commit (or a hand edit of it) puts a persona back itself.
        persona = None if PERSONA in results else \
            _persona(store, repo, results, forget and action == "undo")
        if persona is not None:
            results[PERSONA] = persona[0]
            new_state = new_state.model_copy(update={"since_persona": 0})
        planned = {**results, STATE_FILE: render_state(new_state)}
        message = _message(action, commit, batch, seqs, forget,
                           persona[1] if persona is not None else None)
        with unit.change(planned):   # Ctrl-C waits until the undo is committed
            _write_reverse(store, results, new_state)
            sha = history.commit(repo, message, paths=PATHS + (STATE_FILE,), allow_empty=True)
        refresh_index(store)
        return UndoResult(action=action, batch=batch, target=commit.hexsha, commit=sha,
                          memories=len(seqs), persona=persona is not None)


def _persona(store: Store, repo: Repo, results: dict[str, str | None], forgot: bool
             ) -> tuple[str | None, str] | None:
    """``persona.after_undo`` for the scenes as the planned ``results`` leave them: (the
    persona's new text, None to remove it; the reason), or None to leave it."""
    from scene_engine.core.fs import read_regular_text
    from scene_engine.services.persona import after_undo

    texts: dict[str, str] = {}
    for name in store.scene_names():
        try:
            texts[name] = read_regular_text(store.scenes_dir / name, errors="replace")
        except OSError:
            continue
    for path, text in results.items():
        if path.startswith("scenes/") and path.count("/") == 1:
            name = path.removeprefix("scenes/")
            if text is None:
                texts.pop(name, None)
            elif name.endswith(".md"):
                texts[name] = text
    return after_undo(store, repo, texts, forgot)


def _not_expected(action: str, batch: int | None, commit: Commit) -> str:
    """The refusal of an undo whose store moved since the person saw it."""
    what = f"batch {batch}" if batch is not None else f"commit {commit.hexsha[:8]}"
    if action == "redo":
        return f"{what} is undone already: there is nothing to undo; nothing changed"
    return f"{what} is live already: there is nothing to redo; nothing changed"


def _resolve(repo: Repo, target: str | None) -> tuple[str, Commit, int | None]:
    """-> (action, commit to reverse, batch number or None)."""
    live = history.live_batches(repo)
    if target is None:
        if not live:
            raise UndoError("no batch to undo")
        number = max(live)
        return "undo", live[number], number
    if target.isdigit() and len(target) < 7:
        number = int(target)
        if number in live:
            return "undo", live[number], number
        undo_commit = _last_undo(repo, number)
        if undo_commit is None:
            raise UndoError(f"there is no batch {number}; `scenes log` lists them", 2)
        return "redo", undo_commit, number
    commit = _named_commit(repo, target)
    found = history.trailers(history.message_of(commit))
    kind = history.commit_kind(history.message_of(commit), commit.author.email)
    if kind in ("add", "init"):
        raise UndoError(f"{commit.hexsha[:8]} is an `{kind}` commit: it changes no scene. "
                        "Undo a batch instead (`scenes log` lists them).", 2)
    if kind == "batch":
        return _resolve(repo, found["Batch"])
    if kind == "redo":                      # undoing a redo = undoing the batch it restored
        number = int(found["Redo-Batch"])
        if number not in live:
            raise UndoError(f"batch {number} is already undone")
        return "undo", live[number], number
    if kind == "undo" and "Undo-Batch" in found:
        number = int(found["Undo-Batch"])
        if number in live:
            raise UndoError(f"batch {number} is already live again (redone)")
        return "redo", commit, number
    return "undo", commit, None


def _named_commit(repo: Repo, target: str) -> Commit:
    """The commit ``target`` (a sha or any name git knows) names. Raises ``UndoError`` (exit
    2) when it names none, ``HistoryError`` when git fails otherwise: a git that cannot read
    the repository is not a typing mistake."""
    if len(target) > COMMIT_NAME_CHARS:    # no commit is named so; git's argument list is not
        raise UndoError(f"{target[:24]!r}... ({len(target):,} characters) is neither a batch "
                        "number nor a commit", 2)
    git = history._git()
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{target}^{{commit}}")
    except git.GitCommandError as exc:
        if exc.status == 1 and not history.git_said_text(exc):
            raise UndoError(f"{target!r} is neither a batch number nor a commit", 2) from None
        raise history.HistoryError(f"git cannot read the repository: "
                                   f"{history.git_said(exc)}") from exc
    return repo.commit(sha)


def _forget_pending(unit: StoreUnit, commit: Commit, batch: int, seqs: list[int]) -> UndoResult:
    """``undo N --forget`` on an undone batch: its pending memories become forgotten."""
    store = unit.store
    state = store.load_state()
    waiting = sorted(set(seqs) & set(state.requeued))
    if not waiting:
        raise UndoError(f"batch {batch} is undone and none of its memories is pending")
    new_state = _new_state(state, "undo", waiting, forget=True)
    with unit.change({STATE_FILE: render_state(new_state)}):   # state and its commit go together
        store.save_state(new_state)
        sha = history.commit(unit.repo, f"forget batch {batch}'s memories\n\n"
                                        f"{count(len(waiting), 'pending memory')} will not be "
                                        f"processed.\n\nForget-Batch: {batch}\n"
                                        f"Memory-Seqs: {history.compress_seqs(waiting)}\n",
                             paths=(STATE_FILE,))
    return UndoResult(action="forget", batch=batch, target=commit.hexsha, commit=sha,
                      memories=len(waiting))


def _last_undo(repo: Repo, number: int) -> Commit | None:
    last = None
    for commit in history.engine_commits(repo):
        if history.trailers(history.message_of(commit)).get("Undo-Batch") == str(number):
            last = commit
    return last


def _check_redo(repo: Repo, batch: int, seqs: list[int]) -> None:
    """A redo must not fold memories a later batch already took again."""
    for number, commit in sorted(history.live_batches(repo).items()):
        if number == batch:
            continue
        again = sorted(set(seqs) & set(expand_seqs(
            history.trailers(history.message_of(commit)).get("Memory-Seqs", ""))))
        if again:
            raise UndoError(f"cannot redo batch {batch}: batch {number} folded {len(again)} of "
                            f"its memories again; undo batch {number} first")


def _plan_reverse(store: Store, repo: Repo, commit: Commit, action: str = "undo",
                  derived: tuple[str, ...] = ()) -> dict[str, str | None]:
    """What undoing ``commit``'s changes under PATHS makes of each file: path -> text, or
    None for a file to remove. Writes nothing; raises ``UndoError`` naming the later commits
    on a conflict.

    Each file is merged three-way (``git merge-file``): base = the file as ``commit`` left it,
    ours = the file now, theirs = the file before ``commit``. Later changes elsewhere in the
    file survive; overlapping ones refuse the whole undo. A ``derived`` file (the persona a
    batch made of its scenes) is left as it is now.
    """
    parent = commit.parents[0] if commit.parents else None
    # --no-renames: a renamed scene is a deletion plus an addition, both to be reversed.
    names = repo.git.diff("--name-only", "-z", "--no-renames", "--relative",
                          parent.hexsha if parent else history.EMPTY_TREE,
                          commit.hexsha, "--", *PATHS).split("\0")
    results: dict[str, str | None] = {}
    conflicts = []
    for path in (n for n in names if n and n not in derived):
        try:
            before = _blob(parent, history.tree_path(repo, path), path)
            after = _blob(commit, history.tree_path(repo, path), path)
            now_path = store.root / path
            now = read_regular_text(now_path) if now_path.exists() else None
        except NotUtf8Error as exc:     # a merge of text needs text: refused, said in one line
            raise UndoError(f"cannot {action} {commit.hexsha[:8]} "
                            f"({history.message_of(commit).splitlines()[0]}): {exc}. "
                            "Nothing was changed.") from None
        merged = _merge(repo, now, after, before)
        if merged is False:
            conflicts.append(path)
        else:
            results[path] = merged
    if conflicts:
        raise UndoError(_conflict_message(repo, commit, conflicts, action))
    return results


def _write_reverse(store: Store, results: dict[str, str | None], state: State) -> list[str]:
    """Write the planned files and ``state`` (inside the unit's change, whose marker records
    them, so recovery can tell them from a later hand edit); return the paths written."""
    for path, text in results.items():
        target = store.root / path
        if text is None:
            target.unlink(missing_ok=True)
        else:
            atomic_write_text(target, text)
    store.save_state(state)
    return list(results)


def _blob(commit: Commit | None, path: str, shown: str) -> str | None:
    """The text of ``path`` (in the tree) as of ``commit``; None when it is not there.
    Raises ``NotUtf8Error`` naming ``shown`` and the commit."""
    if commit is None:
        return None
    try:
        data = (commit.tree / path).data_stream.read()
    except KeyError:
        return None
    return decode_utf8(data, f"{shown} as of commit {commit.hexsha[:8]}")


def _merge(repo: Repo, now: str | None, base: str | None, other: str | None
           ) -> str | None | Literal[False]:
    """Three-way merge of one file; None = the file should not exist; False = conflict."""
    if now == base:
        return other                       # untouched since the commit: plain revert
    if now is None or base is None or other is None:
        return False                       # created/deleted on one side, changed on the other
    import tempfile

    git = history._git()
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for label, text in (("now", now), ("base", base), ("other", other)):
            path = Path(tmp) / label
            path.write_text(text, encoding="utf-8")
            files.append(str(path))
        try:
            return repo.git.merge_file("-p", "--quiet", *files, strip_newline_in_stdout=False)
        except git.GitCommandError:
            return False


def _conflict_message(repo: Repo, commit: Commit, files: list[str], action: str = "undo") -> str:
    """Which later changes stand in the way: commits still in effect (not undone ones, not
    the undo commits themselves), newest first, and the person's uncommitted edits."""
    live = {c.hexsha for c in history.live_batches(repo).values()}
    later = []
    for c in repo.iter_commits(f"{commit.hexsha}..HEAD", paths=files):
        kind = history.commit_kind(history.message_of(c), c.author.email)
        if kind == "batch" and c.hexsha not in live:
            continue                          # undone since: not in the way
        later.append(f"{c.hexsha[:8]} {history.message_of(c).splitlines()[0]}")
    dirty = set(history.dirty_paths(repo)) & set(files)
    shown = "; ".join(later[:10]) + (f"; and {len(later) - 10} more" if len(later) > 10 else "")
    root = history.git_cwd(repo)
    gone = sorted(p for p in dirty if not (root / p).exists())
    edited = sorted(dirty - set(gone))
    blockers = [f"later commits ({shown})" if later else "",
                f"your uncommitted edits of {', '.join(edited)}" if edited else "",
                f"your uncommitted deletion of {', '.join(gone)}" if gone else ""]
    what = " and ".join(b for b in blockers if b) or "later changes"
    ways = []
    if later:
        ways.append("undo those commits first (newest first)")
    if edited:
        ways.append(f"commit your edits first (`git commit {' '.join(edited)}`) or put them "
                    f"aside (`git checkout -- {' '.join(edited)}` drops them)")
    if gone:
        ways.append(f"bring the deleted {'file' if len(gone) == 1 else 'files'} back "
                    f"(`git checkout -- {' '.join(gone)}`) or commit the deletion "
                    f"(`git rm {' '.join(gone)}` and `git commit`) first")
    ways.append("edit the scene by hand")
    advice = "; or ".join(ways)
    if later or edited:
        why = f"{what} changed the same or neighbouring lines of {', '.join(files)}"
    else:
        why = (f"{', '.join(gone)} {'was' if len(gone) == 1 else 'were'} deleted by hand and "
               "the deletion is not committed")
    return (f"cannot {action} {commit.hexsha[:8]} "
            f"({history.message_of(commit).splitlines()[0]}): {why}. "
            f"{advice[:1].upper()}{advice[1:]}. Nothing was changed.")


def _new_state(state: State, action: str, seqs: list[int], forget: bool) -> State:
    requeued, forgotten = list(state.requeued), list(state.forgotten)
    if action == "undo":
        if forget:
            forgotten = sorted(set(forgotten) | set(seqs))
            requeued = [s for s in requeued if s not in set(seqs)]
        else:
            requeued = sorted(set(requeued) | set(seqs))
    else:
        requeued = [s for s in requeued if s not in set(seqs)]
        forgotten = [s for s in forgotten if s not in set(seqs)]
    return state.model_copy(update={"requeued": requeued, "forgotten": forgotten})


def _message(action: str, commit: Commit, batch: int | None, seqs: list[int], forget: bool,
             persona: str | None = None) -> str:
    """The undo's (or redo's) commit message: ``undo batch 17: 3 updated, ...`` (the batch
    named once: its own subject's ``batch 17:`` is not said again), the trailers that
    ``history`` reads, and ``Persona-Refreshed`` with ``persona``'s reason when the persona
    was made anew in the same commit."""
    subject = history.message_of(commit).splitlines()[0]
    what = f"batch {batch}" if batch is not None else commit.hexsha[:8]
    if action == "undo":
        fate = ("forgotten" if forget else "pending again") if seqs else "none"
        said = subject.removeprefix(f"{what}:").strip() if batch is not None else subject
        lines = [f"undo {what}: {said}" if said else f"undo {what}", "",
                 f"Reverts {commit.hexsha}. Memories: {len(seqs)} {fate}.", ""]
        trailer = [f"Undo-Batch: {batch}"] if batch is not None else [f"Undo-Commit: {commit.hexsha}"]
    else:
        lines = [f"redo {what}", "", f"Reverts the undo {commit.hexsha}.", ""]
        trailer = [f"Redo-Batch: {batch}"]
    if seqs:
        from scene_engine.store.history import compress_seqs

        trailer.append(f"Memory-Seqs: {compress_seqs(seqs)}")
    if persona:
        trailer.append(f"Persona-Refreshed: {persona}")
    return "\n".join(lines + trailer) + "\n"


FATES = {"undo": "pending again", "redo": "folded again", "forget": "forgotten"}


def undo_batch(store: Store, target: str | None = None, forget: bool = False,
               expect: Literal["undo", "redo"] | None = None) -> dict:
    """``scenes undo`` (and the MCP ``undo`` tool): ``undo``, which, when the undone batch
    renamed or merged a scene the persona names, makes the persona name the scenes there
    are, and after ``forget`` makes it anew from the scenes left (``persona.after_undo``),
    so a forgotten memory does not live on in it: in the undo's own commit. Returns ``{"action", "batch", "target", "commit", "memories", "fate", "pending",
    "persona_regenerated"}`` (``fate``: what became of the memories: "pending again",
    "forgotten", "folded again"). ``expect`` as ``undo``. Raises ``UndoError``."""
    result = undo(store, target, forget=forget, expect=expect)
    fate = "forgotten" if forget and result.action == "undo" else FATES[result.action]
    return {"action": result.action, "batch": result.batch, "target": result.target,
            "commit": result.commit, "memories": result.memories, "fate": fate,
            "pending": store.load_state().pending, "persona_regenerated": result.persona}
