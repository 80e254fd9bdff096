"""The door of ``scenes hook EVENT`` (``services.hooks``): an agent waits for its hooks, a
SessionStart hook above all, so the console script (``entry.main``) offers the arguments
here before anything else is imported, and a hook imports only what it uses."""

from __future__ import annotations

import sys
from pathlib import Path


def run(argv: list[str]) -> int | None:
    """Run ``argv`` if it is ``[--dir D] hook EVENT`` with a known event; return its exit
    code (always 0), or None to leave it to the other doors (help, a mistake)."""
    hooked = _hook_args(argv)
    return hook(*hooked) if hooked is not None else None


def hook(directory: Path | None, event: str) -> int:
    """``scenes hook EVENT``: the hook input on stdin, its answer on stdout, at most one
    notice line on stderr; always 0, so no hook fails its agent."""
    from scene_engine.services.hooks import run_hook

    outcome = run_hook(event, sys.stdin, directory)
    if outcome.stdout:
        print(outcome.stdout)
    if outcome.notice:
        print(outcome.notice, file=sys.stderr)
    return 0


def _hook_args(argv: list[str]) -> tuple[Path | None, str] | None:
    """(--dir, EVENT) for ``[--dir D] hook EVENT`` with a known event, else None (the hook
    module is read only for a ``hook`` command: every other command passes through here)."""
    args = list(argv)
    directory = None
    if len(args) >= 2 and args[0] == "--dir" and args[1]:
        directory, args = Path(args[1]), args[2:]
    elif args and args[0].startswith("--dir=") and len(args[0]) > len("--dir="):
        directory, args = Path(args[0][len("--dir="):]), args[1:]
    if len(args) != 2 or args[0] != "hook":
        return None
    from scene_engine.services.hooks import EVENTS

    return (directory, args[1]) if args[1] in EVENTS else None
