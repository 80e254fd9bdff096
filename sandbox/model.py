"""Small value types shared by the sandbox modules: the DELETED sentinel, Change, CallRecord."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, Literal


class _Deleted(enum.Enum):
    """Type of the ``DELETED`` sentinel: a staged removal, distinct from any string content.

    An enum of one member: one instance, so ``x is DELETED`` works everywhere, also after
    copy/pickle, and a type checker narrows ``str | _Deleted`` by it.
    """

    DELETED = "DELETED"

    def __repr__(self) -> str:
        return "DELETED"

    def __str__(self) -> str:
        return "DELETED"


DELETED: Final = _Deleted.DELETED
"""Sentinel value in ``pending()``/``apply()`` results: the file is (to be) removed."""

Content = str | _Deleted


@dataclass(frozen=True)
class Change:
    """One change a tool call wants to stage, as shown to policy checks.

    ``op``: "write" (write_to_file with content), "replace" (replace_in_file), "delete"
    (write_to_file with ``[DELETED]``). ``name``: canonical file name. ``old``: the content the
    model would currently see (staged, else on disk), None if the file does not exist. ``new``:
    the content after the change, None for a delete. ``created``: True when the file did not exist
    before this change set (so the change makes a new file).
    """

    op: Literal["write", "replace", "delete"]
    name: str
    old: str | None
    new: str | None
    created: bool


@dataclass(frozen=True)
class CallRecord:
    """One ``execute`` call, for logs.

    ``tool``: the tool name as sent (may be unknown). ``raw_path``: the ``path`` argument as sent,
    if it was a string. ``name``: the canonical name, when the path was valid. ``ok``: False for a
    refusal. ``message``: the text returned to the model (cut to 300 characters).
    """

    tool: str
    raw_path: str | None
    name: str | None
    ok: bool
    message: str

    @property
    def outcome(self) -> str:
        """``"ok"`` or ``"refused"``."""
        return "ok" if self.ok else "refused"
