"""Rules for file content a model sends, and the literal text search used by replace_in_file."""

from __future__ import annotations

import re

DELETE_MARKER = "[DELETED]"
"""Whole-file content (after trimming) that stages removal of a file (docs/DESIGN.md soft delete)."""

# A lone bracketed word, any case: models invent [ARCHIVE], [CONSOLIDATED], [deleted] to delete.
_MARKER_RE = re.compile(r"\[[A-Z][A-Z0-9_ -]*\]", re.IGNORECASE)


class ContentProblem(Exception):
    """Content cannot be staged; ``str(exc)`` is the explanation for the model."""


def is_delete_marker(content: str) -> bool:
    """True when ``content`` asks for deletion: exactly ``[DELETED]`` after trimming whitespace."""
    return content.strip() == DELETE_MARKER


def check_content(content: str, max_chars: int) -> None:
    """Refuse content that cannot become a file.

    ``content``: new file text (not the delete marker). ``max_chars``: limit in characters.
    Raises ``ContentProblem`` for empty/whitespace content, lone status markers, text over the
    limit, NUL characters, and lone surrogates that cannot be stored as UTF-8.
    """
    if len(content) > max_chars:
        raise ContentProblem(
            f"the content is {len(content)} characters long; the limit is {max_chars}. "
            "Write a shorter file."
        )
    stripped = content.strip()
    if not stripped:
        raise ContentProblem(
            f"the content is empty. To delete a file write exactly {DELETE_MARKER} as its "
            "content; otherwise send the full text of the file."
        )
    if _MARKER_RE.fullmatch(stripped):
        raise ContentProblem(
            f"{stripped} is not a supported marker. To delete a file write exactly "
            f"{DELETE_MARKER} as its content; otherwise send the full text of the file."
        )
    if "\x00" in content:
        raise ContentProblem("the content contains NUL characters. Send plain text only.")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise ContentProblem(
            "the content contains characters that cannot be stored as UTF-8 (lone surrogates). "
            "Send plain text only."
        ) from None


def count_occurrences(text: str, needle: str) -> int:
    """Count occurrences of ``needle`` in ``text``, overlapping ones too ("aaa" in "aaaa" is 2).

    Literal comparison only; no pattern syntax. ``needle`` must not be empty.
    """
    count, start = 0, text.find(needle)
    while start != -1:
        count += 1
        start = text.find(needle, start + 1)
    return count
