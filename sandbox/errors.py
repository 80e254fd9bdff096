"""Exceptions raised to the *caller* of the sandbox (never to the model, which gets strings)."""

from __future__ import annotations


class SandboxError(Exception):
    """Base class for every error the sandbox raises to its caller."""


class RootError(SandboxError, ValueError):
    """The root directory cannot be used: missing, not a directory, or reached through a link."""


class NameRefused(SandboxError, ValueError):
    """A file name broke a naming rule; ``str(exc)`` is written for the model and says the fix."""


class ConflictError(SandboxError):
    """``apply()`` found files changed on disk since the sandbox saw them; nothing was written.

    ``names`` lists the canonical names that conflict, sorted.
    """

    def __init__(self, names: list[str]):
        self.names = sorted(names)
        super().__init__(
            "files changed on disk since they were read: " + ", ".join(self.names)
        )


class ApplyError(SandboxError):
    """Writing the change set failed part-way; what had been written was rolled back.

    ``unrestored`` lists names whose rollback also failed (normally empty); when it is not empty
    the root may be left partly changed and a person should look at those files.
    """

    def __init__(self, message: str, unrestored: list[str] | None = None):
        self.unrestored = sorted(unrestored or [])
        if self.unrestored:
            message += "; could not restore: " + ", ".join(self.unrestored)
        super().__init__(message)
