"""Failures from the libraries under the engine, said in one line for a person or an agent.

The engine's own errors derive from ``core.errors.SceneEngineError`` and say themselves; what
is left are the failures GitPython and pydantic raise from deep inside an operation (another
git's ``index.lock`` in a shared repository, data the engine made that did not pass its own
schema). Both faces (the command line and the MCP server) ask ``describe`` (docs/DESIGN.md
"Errors").
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
