"""Git history of a store, through GitPython: commits, hand edits, log, undo, blame.

Every batch is one commit (the aider habit: each model edit is a commit, so undo is safe).
The engine commits as its own author; a configured git user becomes the committer, so commits
work on a machine with no git identity at all (docs/DESIGN.md "History"). A person's hand edits,
committed by the engine before its next change, are authored by that person's identity.

A store may share its repository with a person's notes (``scenes init`` in a vault or an
existing repository, at its root or under a prefix). The ``git.Repo`` that ``open_repo``
returns then runs git in the store's folder, so every path and pathspec here is relative to
the store's root; commits are built in a temporary index and hold only the store's paths;
the history read (log, undo, blame, trace) is that of the store's paths.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scene_engine.core.errors import SceneEngineError
from scene_engine.core.text import one_line
from scene_engine.store import cache
from scene_engine.store.layout import is_utf8_name

if TYPE_CHECKING:
    from git import Commit, Repo

ENGINE_NAME = "scene-engine"
ENGINE_EMAIL = "scene-engine@localhost"

# What the engine tracks; everything else in the work tree is the user's business.
TRACKED = ("scenes", "persona.md", "memories", ".scene-engine/config.toml",
           ".scene-engine/state.json", ".gitignore")
# The store's own paths: the history read is theirs, whatever else the repository holds.
STORE_PATHS = ("scenes", "persona.md", "memories", ".scene-engine")
# Never committed, whatever folder is committed: editors' settings, trash and swap files.
EDITOR_GLOBS = ("**/.obsidian/**", "**/.trash/**", "**/.git/**", "**/.*.swp", "**/*~",
                "**/.#*")
INDEX_LOCK_WAIT = 5.0   # seconds a commit waits for another git's index.lock to go
# A commit in the middle of these would end the person's merge, rebase or cherry-pick.
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")
HAND_EDITABLE = ("scenes", "persona.md")
PERSON_FILES = ("persona.md", ".scene-engine/config.toml")   # besides scenes/*.md
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{40,64})\.", re.MULTILINE)


class HistoryError(SceneEngineError, RuntimeError):
    """A git operation failed or was refused; the message says why and what to do."""


class HeadMovedError(HistoryError):
    """A commit was made beside the engine between its read of HEAD and its ``update-ref``:
    the engine's commit is not made (``commit``); the message names that commit."""


def _git():
    """GitPython, imported on first use (~0.1 s: kept off the path of commands that skip git).
    Raises ``HistoryError`` when no git program can be found (GitPython refuses to import)."""
    try:
        import git
    except ImportError as exc:
        raise HistoryError("git is not installed or not on PATH: scene-engine keeps every "
                           "store in git; install git (2.x), or set GIT_PYTHON_GIT_EXECUTABLE "
                           "to its path") from exc
    return git


def open_repo(root: Path, new: bool = False) -> Repo:
    """The ``git.Repo`` of the store at ``root``: its own repository, or the work tree it sits
    in (a vault, an existing repository). Its git commands run in ``root``, so paths are the
    store's (``scenes/x.md``) wherever the store sits. Raises ``HistoryError`` if ``root`` is
    in no work tree, and ``ForeignRepository`` when the repository is not the store's
    (``check_own``; ``new``: the store's first commit is still to be made, nothing to check).
    """
    git = _git()
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise HistoryError(f"{root} is not in a git repository; a store is one (`git init` "
                           "in it and a first commit of its files make it one again)") from exc
    if repo.bare or repo.working_tree_dir is None:
        raise HistoryError(f"{root} is in a bare git repository; a store needs a work tree")
    if Path(root).resolve() != Path(repo.working_tree_dir).resolve():
        # The same ``Git`` object (the object database shares it, and ``interrupts`` clears
        # its helper processes), told to run in the store's folder.
        repo.git._working_dir = str(Path(root).resolve())
    head_sha(repo)   # a git that refuses the repository says so now, not as an empty history
    if not new:
        try:
            check_own(repo)
        except BaseException:
            repo.close()
            raise
    return repo


class ForeignRepository(HistoryError):
    """The git repository around a store is not the store's: the store is below its top and
    its commits never held the store (the store's own ``.git`` was deleted or moved, and git
    found a repository further up). Every write and every read of the history refuses: a
    commit would land in that other repository."""


# What a store's first commit holds (``store.init_store``) and every later one keeps: a
# repository whose HEAD has neither at the store's place never held the store.
_STORE_MARKS = (".scene-engine/state.json", ".scene-engine/config.toml")


def check_own(repo: Repo) -> None:
    """Raise ``ForeignRepository`` unless ``repo`` (from ``open_repo``) is the store's: its
    work tree's top is the store's root, or its HEAD holds the store's files at the store's
    place (a store made inside a repository, with ``--prefix`` or in a folder of it). One
    tree lookup, and only for a store below the top."""
    prefix = store_prefix(repo)
    if not prefix:
        return
    head = head_sha(repo)
    for mark in _STORE_MARKS:
        try:
            if head:
                repo.commit(head).tree / (prefix + mark)
                return
        except KeyError:
            continue
    top, root = work_tree(repo), git_cwd(repo)
    raise ForeignRepository(
        f"{root} is a store inside the git repository {top}, which never committed it (was "
        f"the store's own .git deleted or moved?): its commits would go into {top}. Bring "
        f"the store's .git back; or make the store a repository of its own (`cd {root} && "
        "git init && git add -A && git commit -m 'scene store'`); or, if it belongs in "
        f"{top}, commit it there (`git -C {top} add {prefix.rstrip('/')}` and `git -C {top} "
        "commit`). Nothing was changed.")


# Per git folder, commits git itself named as HEAD's within one batch (``heads_remembered``):
# a HEAD that says one of them again is that commit (an object does not change), read from
# two small files instead of a git process (a batch asked git for HEAD six times, a
# twentieth of its time: issue 39). Only within a batch: each command's first read asks git,
# which is what says a store is another user's ("dubious ownership").
_COMMITS: ContextVar[dict[str, set[str]] | None] = ContextVar("scene_engine_heads",
                                                                default=None)


@contextmanager
def heads_remembered() -> Iterator[None]:
    """Within it, ``head_sha`` reads HEAD from its files when git already named that commit
    (a commit, reset or ref made beside the engine is still seen: its files say another)."""
    token = _COMMITS.set({})
    try:
        yield
    finally:
        _COMMITS.reset(token)
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _said_head(repo: Repo) -> str:
    """The commit id HEAD's file says, through a loose branch ref: "" when it says none
    plainly (a packed ref, no commit yet, anything unusual), and git must be asked."""
    try:
        said = Path(repo.git_dir, "HEAD").read_text("utf-8").strip()
        if said.startswith("ref: refs/heads/"):
            ref = said[5:]
            if ".." in ref or "\\" in ref:
                return ""
            said = Path(repo.common_dir, ref).read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    return said if _SHA.fullmatch(said) else ""


def _heads_seen(repo: Repo) -> set[str]:
    """The commits git named as HEAD's in ``repo``'s git folder within this batch
    (``heads_remembered``); outside one, a set no one keeps."""
    known = _COMMITS.get()
    return known.setdefault(str(repo.git_dir), set()) if known is not None else set()


def head_sha(repo: Repo) -> str:
    """HEAD's commit id, or "" on a branch with no commit yet. Raises ``HistoryError`` with
    git's own words when git cannot read the repository: another user's store ("dubious
    ownership"), a HEAD naming a commit that is not there, a broken object database.

    GitPython's ``repo.head.is_valid()`` answers False for all of those alike, and a history
    read through it came out empty (``log`` printed nothing, ``trace`` said no batch took a
    memory): every read of the history asks here instead. A fresh git process, not
    GitPython's long-lived helper, which a Ctrl-C may have killed: ``HEAD^{commit}`` makes
    git read the commit itself, so one process answers the common case; only when it
    fails does a second one tell no commit yet from a HEAD naming a missing commit."""
    said = _said_head(repo) if _COMMITS.get() is not None else ""
    seen = _heads_seen(repo)
    if said in seen:
        return said
    git = _git()
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "HEAD^{commit}")
        if said and sha == said:
            seen.add(sha)
        return sha
    except git.GitCommandError as exc:
        if exc.status != 1 or git_said_text(exc):
            raise HistoryError(f"git cannot read the repository: {git_said(exc)}") from exc
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "HEAD")
    except git.GitCommandError as exc:
        if exc.status == 1 and not git_said_text(exc):   # --quiet: no commit yet
            return ""
        raise HistoryError(f"git cannot read the repository: {git_said(exc)}") from exc
    try:
        repo.git.cat_file("-e", f"{sha}^{{commit}}")
    except git.GitCommandError as exc:
        said = git_said_text(exc) or f"commit {sha} is missing"
        raise HistoryError(f"git cannot read the repository: HEAD names {sha[:12]}, which "
                           f"git cannot read ({said})") from exc
    return sha


def work_tree(repo: Repo) -> Path:
    """The top of ``repo``'s work tree. ``open_repo``, ``find_repo`` and ``init_repo`` give
    only repositories with one (a bare repository is refused)."""
    top = repo.working_tree_dir
    assert top is not None, "a store's repository has a work tree (open_repo refuses a bare one)"
    return Path(top)


def git_cwd(repo: Repo) -> Path:
    """The folder ``repo``'s git commands run in: the store's root (``open_repo``)."""
    here = repo.git.working_dir
    assert here is not None, "GitPython gives a repository's Git a folder to run in"
    return Path(here)


def message_of(commit: Commit) -> str:
    """``commit.message`` as text: GitPython decodes every message it reads (undecodable
    bytes replaced), though its type says ``str | bytes``."""
    text = commit.message
    assert isinstance(text, str), "GitPython decodes a commit message it reads"
    return text


def find_repo(folder: Path) -> Repo | None:
    """The ``git.Repo`` whose work tree holds ``folder`` (or its nearest existing parent),
    or None outside any repository. Raises ``HistoryError`` for a bare repository or a
    folder inside a ``.git`` folder."""
    git = _git()
    folder = Path(folder).absolute()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if ".git" in folder.parts:
        raise HistoryError(f"{folder} is inside a .git folder")
    try:
        repo = git.Repo(existing, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    if repo.bare or repo.working_tree_dir is None:
        raise HistoryError(f"{folder} is in a bare git repository; a store needs a work tree")
    return repo


def ignored_path(repo: Repo, path: Path) -> str:
    """``path`` (absolute, inside ``repo``'s work tree, existing or not) as the repository
    names it if its ignore rules leave it out, else "". Raises ``HistoryError`` if git fails."""
    git = _git()
    top = work_tree(repo).resolve()
    parent = next(p for p in (path, *path.parents) if p.exists())
    name = (parent.resolve() / path.relative_to(parent)).relative_to(top).as_posix()
    try:
        repo.git.check_ignore("-q", "--", name)
    except git.GitCommandError as exc:
        if exc.status == 1:
            return ""
        raise HistoryError(f"git check-ignore failed: {git_said(exc)}") from exc
    return name


def init_repo(root: Path) -> Repo:
    """``git init`` at ``root`` with branch ``main``; returns the ``git.Repo``."""
    return _git().Repo.init(root, initial_branch="main")


def store_prefix(repo: Repo) -> str:
    """Where the store sits in its repository's work tree: "" at the top, else a path with a
    trailing slash (``"memory/"``). Paths in a commit's tree are this plus the store's path."""
    top = work_tree(repo).resolve()
    here = git_cwd(repo).resolve()
    inner = here.relative_to(top).as_posix()
    return "" if inner == "." else inner + "/"


def tree_path(repo: Repo, path: str) -> str:
    """``path`` (relative to the store's root) as a path in the repository's trees, for
    ``commit.tree / tree_path(repo, path)``."""
    return store_prefix(repo) + path


def _identity(repo: Repo, role: str) -> tuple[str, str]:
    """(name, email) as git reads it for ``role`` ("AUTHOR" or "COMMITTER"): the
    ``GIT_<ROLE>_NAME``/``_EMAIL`` variables first (containers, CI), then ``user.name`` and
    ``user.email`` at any config level, else the engine's."""
    reader = repo.config_reader()
    name = os.environ.get(f"GIT_{role}_NAME") or reader.get_value("user", "name", "")
    email = os.environ.get(f"GIT_{role}_EMAIL") or reader.get_value("user", "email", "")
    return str(name or ENGINE_NAME), str(email or ENGINE_EMAIL)


def person_identity(repo: Repo) -> tuple[str, str]:
    """(name, email) of the person as the author of their own work (``_identity``)."""
    return _identity(repo, "AUTHOR")


def _identity_env(repo: Repo, by_person: bool = False) -> dict[str, str]:
    """Committer = the person who runs the engine (``_identity``), else the engine. Author =
    the engine, except for a commit of the person's own work (``by_person``: their hand
    edits), which is theirs."""
    author = person_identity(repo) if by_person else (ENGINE_NAME, ENGINE_EMAIL)
    committer = _identity(repo, "COMMITTER")
    return {
        "GIT_AUTHOR_NAME": author[0],
        "GIT_AUTHOR_EMAIL": author[1],
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
        # No signing prompt or hook (a vault's post-commit push included) runs for a batch.
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "commit.gpgsign",
        "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "core.hooksPath",
        "GIT_CONFIG_VALUE_1": os.devnull,
    }


def git_said(exc) -> str:
    """What git said in a failed command (``git.GitCommandError``), on one line: its stderr
    without GitPython's wrapping and without git's ``hint:`` lines."""
    return git_said_text(exc) or " ".join(str(exc).split())


def git_said_text(exc) -> str:
    """``git_said`` without the fallback: "" when git wrote nothing on stderr."""
    text = exc.stderr if isinstance(getattr(exc, "stderr", None), str) else str(exc)
    text = text.strip().removeprefix("stderr:").strip().strip("'").strip()
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not line.strip().startswith("hint:")]
    return " ".join(lines)


def commit(repo: Repo, message: str, paths: tuple[str, ...] = TRACKED, allow_empty: bool = False,
           by_person: bool = False, texts: Mapping[str, str | None] | None = None) -> str:
    """Commit exactly ``paths`` (files or folders relative to the store root; additions,
    changes and deletions) as they are in the work tree; return the new sha. ``texts``: the
    files of ``paths`` committed with the text given (None: deleted) instead of what the
    work tree holds: what the engine wrote, so an edit a person makes to one of them after
    the write stays theirs, a hand edit the next batch commits, instead of being taken into
    the engine's commit (``_stage_texts``).

    The commit is built in a temporary index started from HEAD, so whatever a person has
    staged elsewhere (an IDE, a git plugin, `git add`) is neither swept into the engine's
    commit nor lost: their index keeps it, and only ``paths`` are brought in line with the new
    commit there. Editors' files (``EDITOR_EXCLUDES``) inside a committed folder are left
    out. Returns "" when nothing changed and ``allow_empty`` is false. ``by_person``: the
    change is the person's (a hand edit), so they are its author (``_identity_env``). Hooks
    and signing are skipped: a store's commits are the engine's bookkeeping. Raises
    ``HistoryError`` if git fails or the repository is in the middle of a merge, rebase or
    cherry-pick (a commit then would end it for the person).
    """
    git = _git()
    root = git_cwd(repo)
    head = ensure_committable(repo)
    given = dict(texts or {})
    present = [p for p in paths if p not in given and (root / p).exists()]
    missing = [p for p in paths if p not in given and p not in present]
    index = Path(repo.git_dir) / f"{TEMP_INDEX}{os.getpid()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        if head:   # else the first commit: nothing to start from
            repo.git.read_tree(head, env=env)
        specs = _without_editor_files(root, present)
        if specs:   # never a bare `git add -A`: that would take the whole folder
            repo.git.add("-A", "--", *specs, env=env)
        if missing:   # a deleted file or folder; a path never tracked is simply skipped
            repo.git.rm("--cached", "-r", "--quiet", "--ignore-unmatch", "--", *missing,
                        env=env)
        if given:
            _stage_texts(repo, env, given)
        if not allow_empty and not _staged(repo, env, head):
            return ""
        made = _commit_index(repo, env, head, _with_trailers(message), by_person)
    except git.GitCommandError as exc:
        now = head_sha(repo) if head else ""
        if head and now and now != head:
            subject = repo.git.log("-1", "--format=%s", now)
            raise HeadMovedError(f"a commit was made in the repository meanwhile ({now[:7]} "
                                 f"\"{subject}\")") from exc
        said = git_said(exc)
        if "ignored by one of your .gitignore" in said:
            said += " (`scenes doctor` names the rule that ignores a store file)"
        raise HistoryError(f"git commit failed: {said}") from exc
    finally:
        index.unlink(missing_ok=True)
    sync_index(repo, paths)
    _heads_seen(repo).add(made)    # git named it HEAD's (``update-ref``)
    if head and not by_person and not is_person_commit(_with_trailers(message), ENGINE_EMAIL):
        _person_texts_past(repo, root, head, made)
    return made


def _stage_texts(repo: Repo, env: dict[str, str], texts: Mapping[str, str | None]) -> None:
    """Put each path of ``texts`` (from the store root) into the temporary index ``env``
    names with its given text as UTF-8 (None: out of the index): the blobs written as loose
    objects by this process (``_write_blob``), the index changed by one ``git update-index
    -z --index-info``. A path's mode is its file's, as ``git add`` takes it (executable or
    not). The bytes are the engine's own, so git's clean filters (``.gitattributes``) are
    not run on them."""
    prefix = store_prefix(repo)
    root = git_cwd(repo)
    objects = Path(repo.common_dir, "objects")
    _refuse_ignored(repo, env, [p for p, text in texts.items() if text is not None])
    records = []
    for path, text in sorted(texts.items()):
        full = prefix + path
        if text is None:
            records.append(f"0 {'0' * 40}\t{full}")
            continue
        records.append(f"{_file_mode(root / path)} {_write_blob(objects, text.encode())}"
                       f"\t{full}")
    with _nul_records(records) as feed:
        repo.git.update_index("-z", "--index-info", istream=feed, env=env)


@contextmanager
def _nul_records(records: Iterable[str]) -> Iterator[Any]:
    """``records`` each ended by a NUL, in a file to give git as its standard input (the
    ``-z`` forms of ``update-index`` and ``check-ignore``); paths as git spells them."""
    with tempfile.TemporaryFile() as feed:
        feed.write(b"".join(r.encode("utf-8", "surrogateescape") + b"\0" for r in records))
        feed.seek(0)
        yield feed


def _file_mode(path: Path) -> str:
    """The index mode ``git add`` gives ``path``: 100755 when its owner may run it (not on
    Windows, where git keeps no such bit), else 100644."""
    try:
        runnable = os.name != "nt" and os.stat(path).st_mode & 0o100
    except OSError:
        runnable = False
    return "100755" if runnable else "100644"


def _write_blob(objects: Path, data: bytes) -> str:
    """Write ``data`` as a git blob in the loose-object folder ``objects`` (git's format:
    zlib of ``blob <size>\\0<data>`` at ``xx/yyyy...`` of its sha1, read-only, written under
    a temporary name and renamed, as git does); return its id. One already there is kept.
    GitPython's ``odb.store`` took 5 ms a batch for the same (issue 39). Raises ``OSError``."""
    raw = b"blob %d\0" % len(data) + data
    sha = hashlib.sha1(raw).hexdigest()     # noqa: S324 - git's object id, not a secret
    folder = objects / sha[:2]
    target = folder / sha[2:]
    if target.exists():
        return sha
    folder.mkdir(exist_ok=True)
    partial = folder / f"tmp_obj_{os.getpid()}_{secrets.token_hex(4)}"   # git gc prunes these
    try:
        with open(partial, "wb") as out:
            out.write(zlib.compress(raw))
        os.chmod(partial, 0o444)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return sha


def _refuse_ignored(repo: Repo, env: dict[str, str], paths: list[str]) -> None:
    """``git add`` refused a new file a ``.gitignore`` rule ignores, and ``update-index``
    does not: ``GitCommandError`` as ``git add`` raised it, naming those of ``paths`` (from
    the store root) git ignores. One ``git check-ignore`` against the temporary index
    ``env`` names, in which a file HEAD tracks is never ignored."""
    if not paths:
        return
    git = _git()
    with _nul_records(paths) as feed:
        try:
            out = repo.git.check_ignore("-z", "--stdin", istream=feed, env=env)
        except git.GitCommandError as exc:
            if exc.status == 1:      # none of them is ignored
                return
            raise
    ignored = [p for p in out.split("\0") if p]
    if ignored:
        raise git.GitCommandError(["git", "add"], 1, (
            "The following paths are ignored by one of your .gitignore files: "
            + ", ".join(ignored)).encode())


def _commit_index(repo: Repo, env: dict[str, str], head: str, message: str,
                  by_person: bool) -> str:
    """Commit the temporary index ``env`` names on top of ``head`` ("" for the first commit)
    and move the branch to it; return the new commit's id. Git's plumbing: ``write-tree``,
    ``commit-tree`` and ``update-ref``. ``git commit`` first refreshed the whole index, and an
    index fresh from ``read-tree`` has no file's stat data, so every batch hashed every file
    of the store again (the journal, one ledger a batch): its cost grew with the store (issue
    39, item 2). The message is cleaned as ``git commit -m`` cleans it (``stripspace``).
    ``update-ref`` moves the branch only from ``head``: a commit made beside the engine in
    between fails this one (``GitCommandError``) instead of being undone by it. A kill before
    ``update-ref`` leaves unreferenced objects only (the batch is rolled back: recovery.py);
    after it, the batch is committed. Raises ``GitCommandError``."""
    tree = repo.git.write_tree(env=env)
    text = stripspace(message)
    parents = ("-p", head) if head else ()
    made = repo.git.commit_tree(tree, *parents, "-m", text,
                                env={**_identity_env(repo, by_person), **env})
    subject = text.split("\n", 1)[0]
    repo.git.update_ref("-m", f"commit{'' if head else ' (initial)'}: {subject}", "HEAD",
                        made, head)
    _pack_now_and_then(repo)
    return made


# git's own estimate of loose objects (``gc --auto``): the files of one of the 256 fan-out
# folders, times 256, against ``gc.auto`` (6,700 by default).
_GC_AUTO = 6700


def _pack_now_and_then(repo: Repo) -> None:
    """What ``git commit`` did after each commit and the plumbing does not: ``git gc --auto``
    (packs loose objects once there are many; in the background, as git does; the person's
    ``gc.auto`` and ``gc.autoDetach`` hold). Asked only when git's own estimate says it may
    act, so most batches start no process: without it a store kept every batch's objects
    loose (about ten a batch, 50,000 at 100,000 memories). A failure costs nothing."""
    try:
        loose = len(os.listdir(Path(repo.common_dir, "objects", "17")))
    except OSError:
        return
    if loose * 256 <= _GC_AUTO:
        return
    try:
        repo.git.gc("--auto", "--quiet")
    except Exception:   # packing is housekeeping: the commit is made
        return


def stripspace(message: str) -> str:
    """``message`` as ``git commit -m`` writes it (git's ``stripspace`` without comment
    removal, the cleanup mode ``whitespace``): each line's trailing ASCII white space cut,
    blank lines at the start and end dropped, runs of blank lines made one, a final line
    break. "" for a message of white space only."""
    lines = [line.rstrip(_ASCII_SPACE) for line in message.split("\n")]
    out: list[str] = []
    gap = False
    for line in lines:
        if not line:
            gap = bool(out)
            continue
        if gap:
            out.append("")
        out.append(line)
        gap = False
    return "\n".join(out) + "\n" if out else ""


_ASCII_SPACE = " \t\n\v\f\r"     # git's isspace(): ASCII only (a no-break space is text)


def _person_texts_past(repo: Repo, root: Path, parent: str, made: str) -> None:
    """The engine's own commit ``made`` adds no line of a person's: a ``person_texts`` cache
    as of ``parent`` holds as of ``made`` too when ``made``'s one parent is ``parent`` (not
    when a person's commit came between), and the next batch reads no history for it (two
    git processes a batch, issue 39). The commit git just wrote is a loose object, read
    with gitdb (GitPython's own object reader) without a git process."""
    kept = cache.load(root, PERSON_TEXTS)
    if kept.get("commit") != parent:
        return
    try:
        from gitdb import LooseObjectDB  # type: ignore[import-untyped]

        raw = LooseObjectDB(str(Path(repo.common_dir, "objects"))).stream(
            bytes.fromhex(made)).read()
    except Exception:   # packed, or unreadable: the next batch reads the history as before
        return
    parents = [line[7:].decode("ascii") for line in raw.split(b"\n\n", 1)[0].split(b"\n")
               if line.startswith(b"parent ")]
    if parents == [parent]:
        cache.save(root, PERSON_TEXTS, {**kept, "commit": made})


def ensure_committable(repo: Repo) -> str:
    """Raise ``HistoryError`` if git cannot read the repository (``head_sha``), a commit now
    would end a merge, rebase, cherry-pick or revert the person has in progress in the
    repository (``IN_PROGRESS``), HEAD is detached (a commit there is lost at the next
    checkout) or another git holds the index (``index.lock``); else return HEAD's commit id
    ("" before the first commit)."""
    busy = [name for name in IN_PROGRESS if (Path(repo.git_dir) / name).exists()]
    if busy:
        raise HistoryError(f"the git repository is in the middle of a merge, rebase or "
                           f"cherry-pick ({busy[0]}); finish or abort it, then run this again")
    # Another git holds the person's index (an editor's git plugin, a commit in a terminal):
    # a commit now could not bring their index in line, and theirs would undo ours.
    head = head_sha(repo)
    if head and repo.head.is_detached:   # a commit would be lost on checkout
        raise HistoryError("HEAD is detached (an old commit is checked out); check out a "
                           "branch (`git switch main`), then run this again")
    lock = Path(repo.git_dir) / "index.lock"
    # A person's commit or a plugin's holds it for milliseconds: wait that out before
    # saying so (a backup plugin committing every second stopped a newcomer's run).
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if lock.exists():
        raise HistoryError(f"another git is at work in this repository ({lock} exists); "
                           "run this again when it is done, or delete that file if no git "
                           "is running")
    return head


def is_editor_file(path: str) -> bool:
    """True for an editor's file that is never the store's: anything in ``.obsidian/``,
    ``.trash/`` or ``.git/``, swap files (``.x.swp``), backups (``x~``) and lock files
    (``.#x``)."""
    parts = path.split("/")
    name = parts[-1]
    return (any(p in (".obsidian", ".trash", ".git") for p in parts)
            or (name.startswith(".") and name.endswith(".swp"))
            or name.endswith("~") or name.startswith(".#"))


def _without_editor_files(root: Path, paths: list[str]) -> list[str]:
    """Pathspecs for ``git add``: ``paths`` minus editors' files (a folder gets exclusions
    under it; git's exclusions misbehave beside a single file, so files are filtered here)."""
    specs = []
    for path in paths:
        if (root / path).is_dir():
            specs.append(path)
            specs += [f":(exclude,glob){path.rstrip('/')}/{g}" for g in EDITOR_GLOBS]
        elif not is_editor_file(path):
            specs.append(path)
    return specs


# Trailers every engine commit made in this context carries besides its own (a fold job's
# ``Job`` and ``Attempt``: docs/DESIGN.md "Serving many stores"); ``extra_trailers`` sets them.
_EXTRA_TRAILERS: ContextVar[tuple[str, ...]] = ContextVar("extra_trailers", default=())


@contextmanager
def extra_trailers(lines: Iterable[str]) -> Iterator[None]:
    """Every commit ``commit`` makes in the ``with`` body (this thread or task) ends with
    ``lines`` (``Key: value`` each) as trailers too."""
    token = _EXTRA_TRAILERS.set(tuple(lines))
    try:
        yield
    finally:
        _EXTRA_TRAILERS.reset(token)


def _with_trailers(message: str) -> str:
    """``message`` with the context's extra trailers: in its trailer paragraph when its
    last paragraph is one, else as a paragraph of their own."""
    extra = _EXTRA_TRAILERS.get()
    if not extra:
        return message
    text = message.rstrip("\n")
    last = text.split("\n\n")[-1]
    joined = "\n" if "\n\n" in text and trailers(last) and len(trailers(last)) == len(
        [line for line in last.splitlines() if line.strip()]) else "\n\n"
    return text + joined + "\n".join(extra) + "\n"


TEMP_INDEX = "scene-engine-index-"   # + pid, in the git folder; a leftover one is harmless


def sync_index(repo: Repo, paths: tuple[str, ...]) -> None:
    """Make the person's index agree with HEAD for ``paths`` only (the engine's own; what a
    person staged elsewhere stays staged)."""
    git = _git()
    try:
        repo.git.reset("-q", "HEAD", "--", *paths)
    except git.GitCommandError:   # a path neither HEAD nor the index has: one at a time
        for path in paths:
            try:
                repo.git.reset("-q", "HEAD", "--", path)
            except git.GitCommandError:
                continue


def _staged(repo: Repo, env: dict, head: str) -> bool:
    if not head:
        return bool(repo.git.ls_files(env=env))
    return bool(repo.git.diff("--cached", "--name-only", env=env))


def commit_files(repo: Repo, message: str, files: list[str], by_person: bool = False,
                 texts: Mapping[str, str | None] | None = None) -> str:
    """Commit exactly ``files`` (a missing file is a deletion), even if nothing changed (a
    batch is a commit whatever it wrote); return the new sha. See ``commit`` (``texts``)."""
    return commit(repo, message, tuple(files), allow_empty=True, by_person=by_person,
                  texts=texts)


# ``git status --porcelain`` codes of a path git has not merged (a conflict of a merge, a
# cherry-pick or a ``git stash pop``): git's documentation of the short format.
_UNMERGED = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})


def dirty_paths(repo: Repo, refuse_unmerged: bool = False) -> list[str]:
    """Files a person may edit — scene files (``scenes/*.md``, not hidden), ``persona.md``
    and the settings — that differ from HEAD: changed, added or deleted; sorted. Editor swap
    and backup files are not scenes and are never reported (so never committed).
    ``refuse_unmerged``: raise ``HistoryError`` naming the files git holds unmerged (a
    ``git stash pop`` that conflicted leaves no merge in progress, only them): a commit of
    them would take the conflict markers and end the person's resolution."""
    out = repo.git.status("--porcelain", "-z", "--untracked-files=all", "--no-renames", "--",
                          "scenes", *PERSON_FILES)
    root = git_cwd(repo)
    prefix = store_prefix(repo)   # git status names paths from the top of the work tree
    entries = [e for e in out.split("\0") if len(e) > 3]
    unmerged = sorted(e[3:].removeprefix(prefix) for e in entries if e[:2] in _UNMERGED)
    if refuse_unmerged and unmerged:
        raise HistoryError(f"{', '.join(unmerged[:3])}{' ...' if len(unmerged) > 3 else ''} "
                           "has a conflict git has not resolved (`git status`): resolve it "
                           "and `git add` it, then run again; nothing was written")
    names = {entry[3:].removeprefix(prefix) for entry in entries}
    names = {n for n in names if not (root / n).is_symlink()}   # links are never scenes
    # nor files git cannot read (no permission): ``git add`` would fail every batch; the
    # batch leaves them alone and says why (``transaction._unreadable``).
    names = {n for n in names if not (root / n).exists() or os.access(root / n, os.R_OK)}
    names = {n for n in names if is_utf8_name(n) and "\ufffd" not in n}   # nor names git
    # cannot spell in UTF-8 (doctor names them)
    return sorted(n for n in names
                  if n in PERSON_FILES or (n.startswith("scenes/") and n.count("/") == 1
                                           and _is_scene_file(n.split("/", 1)[1])))


def journal_changes(repo: Repo) -> dict[str, tuple[str, str]]:
    """Each journal segment (path from the store root) whose work-tree file differs from
    HEAD's, with git's ``(lines added, lines deleted)`` ("-" for a file git takes as binary);
    a deleted segment counts its lines as deleted. One ``git diff --numstat`` of the journal
    folder: git compares the files it has seen by their stat data, so the cost follows the
    segments changed, not the journal's size. {} before the first commit."""
    if not repo.head.is_valid():
        return {}
    out = repo.git.diff("--numstat", "-z", "--no-renames", "HEAD", "--", "memories")
    prefix = store_prefix(repo)
    found = {}
    for field in filter(None, out.split("\0")):
        added, deleted, path = field.split("\t", 2)
        found[path.removeprefix(prefix)] = (added, deleted)
    return found


def journal_blobs(repo: Repo, changes: dict[str, tuple[str, str]] | None = None
                  ) -> dict[str, str]:
    """Path from the store root -> blob sha of each journal segment whose work-tree file git
    says is HEAD's (``journal_changes`` lists the others): what a check derived from that
    blob once holds for the file now. Read in-process from HEAD's tree (no new git process).
    {} before the first commit or when HEAD has no journal. Call it on a repository
    ``open_repo`` opened (which asked git whether HEAD can be read)."""
    if not repo.head.is_valid():
        return {}
    changes = journal_changes(repo) if changes is None else changes
    try:
        tree = repo.head.commit.tree / tree_path(repo, "memories")
    except KeyError:
        return {}
    return {f"memories/{blob.name}": blob.hexsha for blob in tree.blobs
            if f"memories/{blob.name}" not in changes}


def unchanged_blobs(root: Path, folder: str) -> dict[str, str]:
    """Path (from the store root) -> blob sha of each regular file under ``folder`` whose
    work-tree file git's index says holds that blob (staged or committed, not changed
    since): a fact derived from the blob holds for the file. Two ``git ls-files`` run in the
    store's folder ``root`` by git's own program, as GitPython would find it, without loading
    GitPython (git compares by stat data, so the cost is a stat per file, not a read); {}
    when git cannot say (no git, no repository, a repository git refuses)."""
    import subprocess

    program = os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git"
    running: list[subprocess.Popen] = []
    try:                               # both at once: each waits on the disk
        for option in ("-s", "-m"):
            running.append(subprocess.Popen(
                [program, "ls-files", option, "-z", "--", folder], cwd=root,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        said = [child.communicate()[0] for child in running]
    except OSError:
        return {}
    finally:
        for child in running:
            if child.poll() is None:   # an interrupt between the two: none left behind
                child.kill()
                child.wait()
    if any(child.returncode for child in running):
        return {}
    staged, modified = (out.decode("utf-8", "surrogateescape") for out in said)
    changed = set(modified.split("\0"))
    found = {}
    for entry in filter(None, staged.split("\0")):
        info, _, path = entry.partition("\t")
        mode, sha, stage = info.split(" ")
        if mode in ("100644", "100755") and stage == "0" and path not in changed:
            found[path] = sha
    return found


def rewritten_journal_lines(repo: Repo, changes: dict[str, tuple[str, str]] | None = None
                            ) -> list[tuple[str, int, bool]]:
    """(path from the store root, first changed line, 1-based, whether that line is now torn:
    not a whole record) of each journal segment whose
    committed lines differ in the work tree: a line changed or removed, or the file deleted,
    since HEAD. Lines appended after the committed ones are not a rewrite (an interrupted add
    leaves none: recovery rolls it back). Empty while a merge is in progress (its own
    refusal says what to do). ``changes``: ``journal_changes`` when the caller has it (one
    ``git diff`` of the journal folder, else made here); only the segments it names are read."""
    if (Path(repo.git_dir) / "MERGE_HEAD").exists() or not repo.head.is_valid():
        return []
    changes = journal_changes(repo) if changes is None else changes
    found = []
    for rel, (_, deleted) in sorted(changes.items()):
        if deleted == "0":
            continue                    # only lines added at the end
        committed = repo.git.show(f"HEAD:{tree_path(repo, rel)}", stdout_as_string=False)
        now = (git_cwd(repo) / rel).read_bytes() if (git_cwd(repo) / rel).is_file() else b""
        new_lines = now.split(b"\n")
        line = _first_record_lost(committed.split(b"\n"), new_lines)
        if line:
            found.append((rel, line, line <= len(new_lines) and not _whole(new_lines[line - 1])))
    return found


def _whole(line: bytes) -> bool:
    """True when ``line`` is a whole journal record (a JSON object)."""
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:               # torn, not UTF-8, blank
        return False


def _first_record_lost(old_lines: list[bytes], new_lines: list[bytes]) -> int:
    """The 1-based number of the first line of ``old_lines`` that is a whole record (a JSON
    object) and is not, in order, among ``new_lines``; 0 when every one is. A torn or blank
    committed line may be fixed or dropped (that is the way back a torn line's message
    gives), so only whole records count."""
    at = 0
    for number, old in enumerate(old_lines, start=1):
        if not _whole(old):
            continue
        while at < len(new_lines) and new_lines[at] != old:
            at += 1
        if at == len(new_lines):
            return number
        at += 1
    return 0


def commit_hand_edits(repo: Repo, texts: Mapping[str, str] | None = None) -> str:
    """Commit changes a person made under ``scenes/``, ``persona.md`` or the settings as their
    own commit (``hand edit: NAMES``), so a batch or undo commit holds only its own change;
    return its sha ("" when nothing was edited). Authored by the person's git identity when
    one is configured: the words are theirs, only the commit is the engine's doing.
    ``texts``: path (from the store root) -> the text a batch read of it; a changed file
    among them is committed as read, not as it is by the time git looks (what the person
    typed after the read stays a change for the next hand-edit commit)."""
    from scene_engine.core.interrupts import critical

    names = dirty_paths(repo, refuse_unmerged=True)
    if not names:
        return ""
    shown = ", ".join(one_line(Path(n).name) for n in names[:10]) + (
        " ..." if len(names) > 10 else "")
    read = {n: texts[n] for n in names if texts and n in texts}
    with critical(repo):   # git add + commit: not to be cut half-way by Ctrl-C
        # Not when the files are as HEAD has them (``git rm --cached``: a change of the
        # person's index only, theirs to keep): no empty commit, their index left alone.
        return commit(repo, f"hand edit: {shown}\n\nEdited outside scene-engine; "
                            "committed by scene-engine before its next change.\n",
                      tuple(names), by_person=True, texts=read)


def _is_scene_file(name: str) -> bool:
    return name.lower().endswith(".md") and not name.startswith(".")


# ---------------------------------------------------------------- reading the history

def trailers(message: str) -> dict[str, str]:
    """The ``Key: value`` trailer lines of a commit message's last paragraph."""
    last = message.strip().split("\n\n")[-1]
    found = {}
    for line in last.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            found[key] = value.strip()
    return found


def engine_commits(repo: Repo) -> list[Commit]:
    """Every commit on the current branch that touches the store's paths (``STORE_PATHS``),
    oldest first: a person's commits elsewhere in a shared repository are not the store's
    history. Empty for a repository with no commit. Raises ``HistoryError`` when git cannot
    read the history (never an empty list for that)."""
    head = head_sha(repo)
    if not head:
        return []
    try:
        return list(reversed(list(repo.iter_commits(head, paths=list(STORE_PATHS)))))
    except (_git().GitCommandError, ValueError) as exc:   # ValueError: an object unreadable
        said = git_said(exc) if isinstance(exc, _git().GitCommandError) else str(exc)
        raise HistoryError(f"cannot read the history: {said}") from exc


def live_batches(repo: Repo, released: Iterable[str] = frozenset()) -> dict[int, Commit]:
    """Batch number -> its commit, for batches that are in effect (made and not undone).

    An undo commit carries ``Undo-Batch: N`` and a redo ``Redo-Batch: N``; the last of those
    decides whether batch N is live. A batch commit a ``scenes repair`` released
    (``released_batches``), or one of the shas in ``released`` (a repair deciding which to
    release), is never live: after a merge of two copies two commits may carry one number.
    """
    live: dict[int, Commit] = {}
    made: dict[int, Commit] = {}
    # A plain `git revert` of a batch commit is an undo of it, a revert of that a redo.
    reverts: dict[str, tuple[int, bool]] = {}   # sha -> (batch, True if it makes it live)
    commits = engine_commits(repo)
    gone = released_batches(commits) | set(released)
    for c in commits:
        if c.hexsha in gone:       # a repair gave it up: its memories were made pending
            continue
        found = trailers(message_of(c))
        if "Batch" in found and "Undo-Batch" not in found:
            made[int(found["Batch"])] = c
            live[int(found["Batch"])] = c
            reverts[c.hexsha] = (int(found["Batch"]), True)
        elif "Undo-Batch" in found:
            live.pop(int(found["Undo-Batch"]), None)
        elif "Redo-Batch" in found and int(found["Redo-Batch"]) in made:
            live[int(found["Redo-Batch"])] = made[int(found["Redo-Batch"])]
        elif (plain := plain_revert(reverts, c)) is not None:
            number, now_live = plain
            if not now_live:
                live.pop(number, None)
            elif number in made:
                live[number] = made[number]
    return live


RELEASED = "Released-Batches"   # repair trailer: ``N@sha`` of each batch commit given up


def released_batches(commits: list[Commit]) -> set[str]:
    """Shas of the batch commits a ``scenes repair`` among ``commits`` gave up (its
    ``Released-Batches: N@sha ...`` trailer; ``numbering.repair_numbering``), unless that
    repair was reverted with ``git revert``."""
    reverted = {reverted_commit(message_of(c)) for c in commits}
    found: set[str] = set()
    for c in commits:
        if c.hexsha not in reverted and commit_kind(message_of(c), c.author.email) == "repair":
            found.update(item.partition("@")[2] for item in
                         trailers(message_of(c)).get(RELEASED, "").split())
    return found


def plain_revert(reverts: dict[str, tuple[int, bool]], commit: Commit) -> tuple[int, bool] | None:
    """For a plain ``git revert`` of a commit in ``reverts`` (sha -> (batch, whether the batch
    is live after it): a batch commit, or a revert of one), ``(batch, live after this one)``,
    recorded in ``reverts`` for this commit too; None for any other commit."""
    reverted = reverted_commit(message_of(commit))
    if reverted not in reverts:
        return None
    number, was_live = reverts[reverted]
    reverts[commit.hexsha] = (number, not was_live)
    return number, not was_live


def named_by_person(repo: Repo, path: str) -> bool:
    """True when the newest commit that brought ``path`` (relative to the store root) into
    being under that name is a person's (``is_person_commit``): they created the file or
    renamed a scene to it. A name a person chose is theirs to keep (the offline renames).
    False for a file no commit added yet. Raises ``HistoryError`` if git fails."""
    git = _git()
    if not head_sha(repo):
        return False
    try:
        out = repo.git.log("-1", "--no-renames", "--diff-filter=A", "--format=%ae%x01%B",
                           "--", path)
    except git.GitCommandError as exc:
        raise HistoryError(f"cannot read the history: {git_said(exc)}") from exc
    email, _, message = out.partition("\x01")
    return bool(message) and is_person_commit(message, email)


def last_batch_number(repo: Repo, depth: int = 200) -> int:
    """The ``Batch: N`` of the newest batch commit on the branch (0 if none within ``depth``
    commits): a plain ``git revert`` of a batch puts ``state.json``'s counter back, and a new
    batch must not take a number an earlier commit already has (``undo N`` would not know
    which). Only this store's batches count: in a repository that holds two stores (two
    folders of one vault), each numbers its own from 1. Walks commits in-process from HEAD
    (GitPython's object reader, no new git process): the newest batch is a few commits
    back. Raises ``HistoryError`` when git cannot read the repository."""
    head = head_sha(repo)
    if not head:
        return 0
    prefix = store_prefix(repo).rstrip("/")
    commit = repo.commit(head)
    for _ in range(depth):
        number = trailers(message_of(commit)).get("Batch", "")
        if number.isdigit() and _changes_folder(commit, prefix):
            return int(number)
        if not commit.parents:
            break
        commit = commit.parents[0]
    return 0


def _changes_folder(commit: Commit, folder: str) -> bool:
    """True when ``commit`` changes something under ``folder`` (a path in the repository's
    trees; "" the whole tree) against its first parent (a root commit: when it has it)."""
    if not folder:
        return True

    def sub(tree) -> str | None:
        try:
            return (tree / folder).hexsha
        except KeyError:
            return None

    mine = sub(commit.tree)
    return mine != (sub(commit.parents[0].tree) if commit.parents else None)


def reverted_commit(message: str) -> str:
    """The sha a plain ``git revert`` commit names ("This reverts commit SHA."), else ""."""
    match = _REVERTS.search(message)
    return match.group(1) if match else ""


def commit_kind(message: str, author_email: str | None = None) -> str:
    """"batch" | "undo" | "redo" | "forget" | "persona" | "hand edit" | "add" | "init" |
    "repair" | "other". A plain ``git revert`` (its message names the reverted commit) is an
    "undo". The kinds named by a subject alone ("add:", "init:", "repair:") are the engine's
    only when ``author_email`` (if given) is the engine's: a person may well write "add: my
    notes" (a "hand edit:" subject is the person's kind whoever wrote it)."""
    found = trailers(message)
    if "Undo-Batch" in found or "Undo-Commit" in found or reverted_commit(message):
        return "undo"
    if "Redo-Batch" in found:
        return "redo"
    if "Forget-Batch" in found:
        return "forget"
    if "Batch" in found:
        return "batch"
    if "Persona" in found:
        return "persona"
    subject = message.split("\n", 1)[0]
    if subject.startswith("hand edit:"):
        return "hand edit"
    for kind in ("add", "init", "repair"):
        if subject.startswith(kind + ":") and author_email in (None, ENGINE_EMAIL):
            return kind
    return "other"


def log_entries(repo: Repo, include_adds: bool = False) -> list[dict]:
    """Batches newest first, with hand edits, undos and persona commits between them.

    Each entry: ``kind``, ``commit`` (sha), ``time`` (ISO-8601), ``subject``, ``summary``
    (first body line), and for batches ``batch``, ``memories`` (trailer text), ``model``,
    ``tokens``, ``undone`` (bool) and ``persona`` (bool: the batch's commit also holds the
    persona it made anew).
    """
    live = live_batches(repo)
    entries: list[dict[str, Any]] = []
    for c in reversed(engine_commits(repo)):
        message = message_of(c)
        kind = commit_kind(message, c.author.email)
        if kind == "other" and touches(repo, c.hexsha, HAND_EDITABLE):
            kind = "hand edit"   # a person's own commit of scene edits (a vault's auto-commit)
        if kind in ("init", "other") or (kind == "add" and not include_adds):
            continue
        found = trailers(message)
        parts = message.strip().split("\n\n")
        entry: dict[str, Any] = {
            "kind": kind, "commit": c.hexsha, "time": c.committed_datetime.isoformat(),
            "subject": parts[0].splitlines()[0],
            "summary": parts[1].splitlines()[0] if len(parts) > 2 else ""}
        if kind == "batch":
            number = int(found["Batch"])
            entry.update(batch=number, memories=found.get("Memories", ""),
                         model=found.get("Backend", ""), tokens=int(found.get("Tokens", 0) or 0),
                         cost=float(found["Cost-USD"]) if "Cost-USD" in found else None,
                         undone=getattr(live.get(number), "hexsha", None) != c.hexsha,
                         persona="Persona-Refreshed" in found)
        entries.append(entry)
    return entries


def changed_paths(repo: Repo, old: str, new: str, *paths: str) -> list[tuple[str, str, str]]:
    """The files under ``paths`` (relative to the store root) that changed from commit
    ``old`` to ``new`` (``new`` "" for the work tree), renames found: ``(status, path, path
    now)`` with status ``A``, ``M``, ``D`` or ``R`` (``path now`` differs only for ``R``),
    paths relative to the store root. Read NUL-separated (``-z``), so any name comes back as
    it is: Chinese, an emoji, spaces, tabs or a newline, never git's quoted ``"\\345..."``."""
    out = repo.git.diff("--name-status", "-z", "--relative", "-M", old, *([new] if new else []),
                        "--", *paths)
    return _name_status(out)


def uncommitted_changes(repo: Repo, *paths: str) -> list[tuple[str, str, str]]:
    """``changed_paths`` from HEAD to the work tree, files git does not track yet counted: a
    scene a person renamed with ``mv`` and has not committed is a rename (``R``), not a
    deletion. Compared in a temporary index started from HEAD (the person's index is never
    touched; editors' files are left out). [] before the first commit or when git cannot
    write its temporary index (a read-only repository: nothing is known to have moved)."""
    git = _git()
    head = head_sha(repo)
    if not head:
        return []
    root = git_cwd(repo)
    index = Path(repo.git_dir) / f"{TEMP_INDEX}{os.getpid()}-{threading.get_ident()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        repo.git.read_tree(head, env=env)
        present = [p for p in paths if (root / p).exists()]
        specs = _without_editor_files(root, present)
        if specs:
            repo.git.add("-A", "--", *specs, env=env)
        missing = [p for p in paths if p not in present]
        if missing:
            repo.git.rm("--cached", "-r", "--quiet", "--ignore-unmatch", "--", *missing,
                        env=env)
        out = repo.git.diff("--cached", "--name-status", "-z", "--relative", "-M", head,
                            "--", *paths, env=env)
    except (git.GitCommandError, OSError):
        return []
    finally:
        index.unlink(missing_ok=True)
    return _name_status(out)


def _name_status(out: str) -> list[tuple[str, str, str]]:
    """``git diff --name-status -z`` as ``(status, path, path now)`` rows."""
    fields = out.split("\0")
    found, i = [], 0
    while i < len(fields) and fields[i]:
        status = fields[i][0]
        if status in "RC":
            found.append((status, fields[i + 1], fields[i + 2]))
            i += 3
        else:
            found.append((status, fields[i + 1], fields[i + 1]))
            i += 2
    return found


def unquote_path(text: str) -> str:
    """A path as git prints it where it cannot take ``-z`` (``blame --porcelain``'s
    ``filename``): as it is, or C-quoted when it holds anything but printable ASCII
    (``"scenes/\\345\\256\\266.md"`` -> ``scenes/家.md``), the quotes and escapes undone."""
    if len(text) < 2 or not (text[0] == text[-1] == '"'):
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode("utf-8")
            i += 1
        elif body[i + 1] in "01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            out += _C_ESCAPES.get(body[i + 1], body[i + 1]).encode("utf-8")
            i += 2
    return out.decode("utf-8", "surrogateescape")


_C_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


def touches(repo: Repo, sha: str, paths: tuple[str, ...]) -> bool:
    """True when commit ``sha`` changes a file under ``paths`` (relative to the store root)."""
    return bool(repo.git.diff_tree("--root", "--no-commit-id", "--name-only", "-r", sha,
                                   "--", *paths))


def persona_by_person(repo: Repo) -> bool:
    """True when the newest commit that touched persona.md is a person's: a hand edit, their
    own commit or a vault plugin's auto-commit of their edit (the engine then never writes it
    over, and keeps the scenes it links to where they are)."""
    email, _, message = repo.git.log("-1", "--format=%ae%x01%B", "--", "persona.md"
                                     ).partition("\x01")
    return bool(message) and is_person_commit(message, email)


def is_person_commit(message: str, author_email: str | None = None) -> bool:
    """True for a commit of a person's own work: a hand edit the engine committed for them, or
    any commit the engine did not make (their own, a vault plugin's auto-commit). See
    ``commit_kind`` for ``author_email``."""
    return commit_kind(message, author_email) not in ENGINE_KINDS


def blame_lines(repo: Repo, path: str, contents: Path | None = None) -> list[dict]:
    """Each line of ``path`` (relative to the store root) with the commit that last changed it;
    ``contents``: the file that holds its text now, when that is another (a scene renamed by
    hand and not committed yet: ``path`` is its name in HEAD).

    Entry: ``line`` (1-based), ``text``, ``commit`` (sha, or "" when not committed yet),
    ``kind`` (see ``commit_kind``), ``batch`` (number or None), ``seqs`` (the journal numbers
    of the memories that commit folded: a batch's or a redo's ``Memory-Seqs``, else []) and
    ``path`` (the file's path, relative to the store root, in that commit: a line a batch
    carried over from a scene it merged or renamed keeps the old name). Which of ``seqs`` a
    line states is ``trace.blame_scene``'s business. Raises ``HistoryError`` if git cannot
    blame the file (``NotCommitted`` when HEAD does not hold it).
    """
    git = _git()
    head = head_sha(repo)
    try:
        if not head:
            raise KeyError(path)
        repo.commit(head).tree / tree_path(repo, path)
    except KeyError:
        raise NotCommitted(f"cannot blame {path}: it is not committed yet") from None
    try:
        # -C: a line a batch carried over from a scene it renamed or merged away (deleted in
        # the same commit) keeps the commit that wrote it; git's rename detection alone misses
        # a small scene renamed with a new entry and summary.
        out = repo.git.blame("--line-porcelain", "-w", "-C",
                             *(["--contents", str(contents)] if contents else []), "--", path)
    except git.GitCommandError as exc:
        raise HistoryError(f"cannot blame {path}: {git_said(exc)}") from exc
    rows: list[dict] = []
    cache: dict[str, dict] = {}
    sha, name, prefix = "", path, store_prefix(repo)
    for raw in out.split("\n"):
        if raw.startswith("\t"):
            info = cache.setdefault(sha, _blame_info(repo, sha))
            rows.append({"line": len(rows) + 1, "text": raw[1:], "commit": info["commit"],
                         "kind": info["kind"], "batch": info["batch"], "seqs": info["seqs"],
                         "path": name})
        elif raw.startswith("filename "):   # from the top of the work tree
            name = unquote_path(raw[len("filename "):]).removeprefix(prefix)
        elif raw and len(raw.split(" ", 1)[0]) == 40 and raw[0] in "0123456789abcdef":
            sha, name = raw.split(" ", 1)[0], path
    return rows


class NotCommitted(HistoryError):
    """``blame_lines`` of a file HEAD does not hold (a scene written by hand, not committed
    yet): there is no history to tell."""


# Commit kinds the engine makes; "hand edit" and "other" (a person's own commit) are a person's.
ENGINE_KINDS = frozenset({"batch", "undo", "redo", "persona", "init", "add", "forget",
                          "repair"})


PERSON_TEXTS = "person-texts.json"   # the cache: {"paths", "commit", "lines"}


def person_texts(repo: Repo, paths: tuple[str, ...] = HAND_EDITABLE) -> frozenset[str]:
    """Every line (stripped, non-blank) a person's commit ever added under ``paths``: hand
    edits and commits the engine did not make (``ENGINE_KINDS``).

    Who wrote a line is decided by its text, not by ``git blame``: blame follows neither a
    line a merge moved into another scene nor one a batch moved within its scene, and an
    undo would claim the lines it restores. A line whose text a person once wrote is theirs
    wherever it is now (the conservation rules, docs/DESIGN.md "A batch", step 7).

    The history is read as far as needed: the store's cache (``cache``: ``person-texts.json``)
    keeps the lines as of a commit, and when that commit is still in HEAD's history (an undo,
    a repair, a hand edit or a merge of another device's commits came after it) only the
    commits since are read; when it is not (the branch was reset, rebased or amended below
    it) or there is no cache, the whole history is. So a batch pays for the commits since
    the last batch, not for the store's age. Raises ``HistoryError`` if git fails.
    """
    head = head_sha(repo)
    if not head:
        return frozenset()
    root = git_cwd(repo)
    kept = cache.load(root, PERSON_TEXTS)
    since = kept.get("commit") if kept.get("paths") == list(paths) else None
    saved = kept.get("lines")
    if not (isinstance(since, str) and isinstance(saved, list)
            and all(isinstance(line, str) for line in saved)):
        since, saved = None, []           # none, or not what this function writes
    lines = set(saved)
    if since == head:
        return frozenset(lines)
    if since and not _is_ancestor(repo, since, head):
        since, lines = None, set()
    lines |= _person_lines(repo, f"{since}..{head}" if since else head, paths)
    cache.save(root, PERSON_TEXTS, {"paths": list(paths), "commit": head,
                                    "lines": sorted(lines)})
    return frozenset(lines)


def _is_ancestor(repo: Repo, old: str, new: str) -> bool:
    """True when commit ``old`` is in the history of ``new`` (False too when git no longer
    has ``old``: a branch reset and the object pruned)."""
    git = _git()
    try:
        repo.git.merge_base("--is-ancestor", old, new)
    except git.GitCommandError:
        return False
    return True


def _person_lines(repo: Repo, revisions: str, paths: tuple[str, ...]) -> set[str]:
    """The lines the person's commits among ``revisions`` (a commit or ``A..B``) added under
    ``paths`` (``person_texts``). Raises ``HistoryError`` if git fails."""
    git = _git()
    try:
        log = repo.git.log("--format=%H%x01%ae%x01%B%x02", revisions, "--", *paths)
    except git.GitCommandError as exc:
        raise HistoryError(f"cannot read the history: {git_said(exc)}") from exc
    shas = []
    for record in filter(None, (r.strip() for r in log.split("\x02"))):
        sha, _, rest = record.partition("\x01")
        email, _, message = rest.partition("\x01")
        if is_person_commit(message, email):
            shas.append(sha)
    lines: set[str] = set()
    for start in range(0, len(shas), 200):   # a bounded command line
        try:
            # A line whose only change is its end (an editor saving CRLF) stays whose it was.
            # -M: a renamed file is no new text (a person who renames a scene writes no line).
            out = repo.git.show("-M", "-U0", "--ignore-cr-at-eol", "--format=",
                                *shas[start:start + 200], "--", *paths)
        except git.GitCommandError as exc:
            raise HistoryError(f"cannot read the history: {git_said(exc)}") from exc
        lines.update(line[1:].strip() for line in out.split("\n")
                     if line.startswith("+") and not line.startswith("+++") and line[1:].strip())
    return lines


def _blame_info(repo: Repo, sha: str) -> dict:
    if set(sha) == {"0"}:
        return {"commit": "", "kind": "uncommitted", "batch": None, "seqs": []}
    from scene_engine.store.history import expand_seqs

    commit = repo.commit(sha)
    found = trailers(message_of(commit))
    number = found.get("Batch") or found.get("Undo-Batch") or found.get("Redo-Batch")
    kind = commit_kind(message_of(commit), commit.author.email)
    # Only a batch or a redo wrote its memories into lines; an undo brought back older ones.
    seqs = expand_seqs(found.get("Memory-Seqs", "")) if kind in ("batch", "redo") else []
    # A person's own commit (a vault's auto-commit) that changed this line is a hand edit.
    return {"commit": sha, "kind": "hand edit" if kind == "other" else kind,
            "batch": int(number) if number else None, "seqs": seqs}


def compress_seqs(seqs: list[int]) -> str:
    """``[0,1,2,5]`` -> ``"0-2,5"`` (journal numbers, so undo can re-queue exactly these)."""
    parts, ordered = [], sorted(set(seqs))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)



def expand_seqs(text: str) -> list[int]:
    """Inverse of ``compress_seqs``."""
    seqs: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        seqs.extend(range(int(low), int(high or low) + 1))
    return seqs
