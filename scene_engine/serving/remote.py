"""Stores on a git server: bare repositories, the clone cache, the push as the guard
(docs/DESIGN.md "Serving many stores").

Each store is one bare repository ``NAME.git`` under the server's base path, refusing forced
pushes and deleted branches (``receive.denyNonFastForwards``, ``receive.denyDeletes``). A
worker or a reader works in a clone of it (``Clone``): ``sync`` fetches and resets the clone to
the server's ``main`` (the ignored files, the search index and the caches, are kept; what a
killed process left, the write-ahead marker and the local inbox, is dropped: the server is the
truth), ``push`` pushes without force and says whether the server took it. Only the server's
``main`` is ever read: a batch counts once its push is taken, and two pushes built on one
head can never both be.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from scene_engine.core.errors import InputError
from scene_engine.serving.database import ServingError, check_name

BRANCH = "main"
# What git prints for a push the server (or git itself, seeing the server's head) refused
# because the branch moved on: the guard at work, not a failure.
# The server's main moved on (the guard): git's words for it, said by the client or the server.
_MOVED = ("non-fast-forward", "fetch first", "stale info")


def store_url(base: str, name: str) -> str:
    """The git address of store ``name`` under ``base`` (``git://host:port/``, a folder,
    ``file://`` or ``ssh://`` address): ``base/NAME.git``."""
    check_name(name)
    return f"{base.rstrip('/')}/{name}.git"


def _git(*args: str, cwd: Path | None = None, check: bool = True,
         timeout: float = 120) -> subprocess.CompletedProcess:
    """Run git quietly; a failure with ``check`` is ``ServingError`` with git's last line."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ServingError(f"git {args[0]} took more than {timeout:g} s") from exc
    if check and done.returncode:
        raise ServingError(f"git {args[0]} failed: {_said(done)}")
    return done


def _said(done: subprocess.CompletedProcess) -> str:
    """git's reason in one line: its last ``fatal:``/``error:`` line with the line after it
    when that says more (``errno=Connection refused`` after "unable to connect to ...")."""
    lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    marked = [i for i, line in enumerate(lines) if line.lower().startswith(("fatal", "error"))]
    if not marked:
        return (lines or [f"exit {done.returncode}"])[-1]
    last = marked[-1]
    more = lines[last + 1:last + 2]
    if more and not more[0].lower().startswith(("fatal", "error", "hint")):
        return f"{lines[last]} {more[0]}"
    return lines[last]


def create_bare(repos: Path, name: str) -> Path:
    """Make the bare repository of store ``name`` under ``repos`` (the git server's base
    path): forced pushes and branch deletions refused, served by ``git daemon`` (its export
    mark and pushes allowed), ``main`` its default branch. Raises ``InputError`` when it
    exists, ``ServingError`` when git fails."""
    path = Path(repos) / f"{check_name(name)}.git"
    if path.exists():
        raise InputError(f"{path} already exists")
    path.parent.mkdir(parents=True, exist_ok=True)
    _git("init", "--quiet", "--bare", "--initial-branch", BRANCH, str(path))
    for key, value in (("receive.denyNonFastForwards", "true"),
                       ("receive.denyDeletes", "true"), ("daemon.receivepack", "true")):
        _git("config", key, value, cwd=path)
    (path / "git-daemon-export-ok").touch()
    return path


def seed(url: str, work: Path) -> str:
    """Make a new, empty store in ``work`` (a folder that must not exist) and push it to
    ``url`` as the first commit of ``main``; returns that commit's sha."""
    from scene_engine.store.store import init_store

    init_store(work, own_repo=True)
    _git("branch", "--move", "--force", BRANCH, cwd=work)
    _git("remote", "add", "origin", url, cwd=work)
    _git("push", "--quiet", "origin", f"HEAD:refs/heads/{BRANCH}", cwd=work)
    return _git("rev-parse", "HEAD", cwd=work).stdout.strip()


def server_head(url: str) -> str:
    """The commit the server's ``main`` is at ("" for none). Raises ``ServingError`` when
    the server cannot be reached."""
    done = _git("ls-remote", url, f"refs/heads/{BRANCH}", timeout=30)
    return done.stdout.split("\t", 1)[0].strip()


class Clone:
    """A clone of one store's repository in ``path``, kept between jobs (its index and
    caches survive); ``url`` is the store's address on the git server."""

    def __init__(self, path: Path, url: str):
        self.path, self.url = Path(path), url

    def sync(self) -> str:
        """Fetch and reset to the server's ``main``; returns its commit. Whatever the clone
        held that the server does not (a killed job's commits, its write-ahead marker, the
        local inbox, untracked files) is dropped; ignored files (the index, caches) stay.
        Raises ``ServingError`` when the server cannot be reached."""
        if not (self.path / ".git").is_dir():
            if self.path.exists():
                shutil.rmtree(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _git("clone", "--quiet", "--branch", BRANCH, self.url, str(self.path))
        else:
            _git("fetch", "--quiet", "origin", f"+refs/heads/{BRANCH}:refs/remotes/origin/{BRANCH}",
                 cwd=self.path)
        for stale in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "index.lock"):
            (self.path / ".git" / stale).unlink(missing_ok=True)
        for stale in ("rebase-merge", "rebase-apply"):
            shutil.rmtree(self.path / ".git" / stale, ignore_errors=True)
        _git("checkout", "--quiet", "--force", "-B", BRANCH, f"origin/{BRANCH}", cwd=self.path)
        _git("reset", "--quiet", "--hard", f"origin/{BRANCH}", cwd=self.path)
        _git("clean", "--quiet", "-fd", cwd=self.path)     # untracked, never ignored, files
        for left in ("run", "inbox"):
            shutil.rmtree(self.path / ".scene-engine" / left, ignore_errors=True)
        return self.head()

    def head(self) -> str:
        """The clone's HEAD commit."""
        return _git("rev-parse", "HEAD", cwd=self.path).stdout.strip()

    def ahead(self) -> int:
        """How many commits the clone has that the server's ``main`` (as last fetched) lacks."""
        done = _git("rev-list", "--count", f"origin/{BRANCH}..HEAD", cwd=self.path)
        return int(done.stdout.strip() or 0)

    def push(self) -> bool:
        """Push ``main`` without force: True when the server took it (or had it), False when
        it refused because its ``main`` moved on (the guard). Raises ``ServingError`` for
        anything else (the server down, a repository missing)."""
        done = _git("push", "--porcelain", "origin", f"HEAD:refs/heads/{BRANCH}",
                    cwd=self.path, check=False)
        if done.returncode == 0:
            return True
        refused = [line for line in done.stdout.splitlines() if line.startswith("!")]
        if refused and all(any(m in line for m in _MOVED) for line in refused):
            return False
        # Refused for another reason (a hook declined it, a quota, no permission), or the
        # server away: the job fails with the server's words and is retried with backoff.
        remote = [line.removeprefix("remote:").strip() for line in done.stderr.splitlines()
                  if line.startswith("remote:") and line.removeprefix("remote:").strip()]
        reason = "; ".join(r.split("\t")[-1] for r in refused) or _said(done)
        raise ServingError(f"git push to {self.url} was refused: {reason}"
                           + (f" (the server said: {' '.join(remote)[:300]})" if remote else ""))
