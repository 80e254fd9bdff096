"""Failures from the libraries under the engine, said in one line for a person or an agent.

The engine's own errors derive from ``core.errors.SceneEngineError`` and say themselves; what
is left are the failures GitPython and pydantic raise from deep inside an operation (another
git's ``index.lock`` in a shared repository, data the engine made that did not pass its own
schema). Both faces (the command line and the MCP server) ask ``describe`` (docs/DESIGN.md
"Errors"); the command line's two doors (``cli.base.handled`` and the quick door's) ask
``refusal`` how to end.
"""

from __future__ import annotations


def describe(exc: BaseException) -> str | None:
    """One line for ``exc`` when it is a failure of git (``git.GitCommandError``: the command
    and git's own words) or of a schema (``pydantic.ValidationError``, without its help URL);
    None for anything else (a bug, which the caller lets through)."""
    from pydantic import ValidationError

    from scene_engine.core.errors import plain_error

    if isinstance(exc, ValidationError):    # data the engine made did not pass its schema
        return f"invalid data: {plain_error(exc)}"
    try:
        import git
    except ImportError:          # no git program: nothing of git can have failed
        return None
    if isinstance(exc, git.GitCommandError):
        from scene_engine.store.history import git_said

        return f"git failed ({' '.join(map(str, exc.command[:2]))}): {git_said(exc)}"
    return None


def refusal(exc: Exception) -> tuple[str, int, BaseException | None] | None:
    """How a command says ``exc`` as it ends (a broken pipe is decided before, by each door):
    ``(message, exit code, interrupt)``, where ``interrupt`` is the signal that came first
    (``core.interrupts.received``) when the failure was its doing — a git child that died
    of the same Ctrl-C — and the command ends as interrupted instead; None for a bug, which
    goes up as itself. The engine's errors carry their code; the disk's name the file; git's
    and a schema's are ``describe``'s line with exit 1."""
    from scene_engine.core.errors import SceneEngineError
    from scene_engine.core.interrupts import received

    if isinstance(exc, SceneEngineError):
        return str(exc), exc.exit_code, received() if exc.exit_code == 1 else None
    if isinstance(exc, OSError):             # a disk problem: say which file, no traceback
        return f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1, None
    said = describe(exc)                     # git's refusals, a schema's complaint
    if said is None:
        return None
    return said, 1, received()
