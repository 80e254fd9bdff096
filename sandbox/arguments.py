"""Turn whatever a model sent as tool arguments into a checked dict, or a message saying why not."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

# A whole argument string wrapped in a Markdown code fence, e.g. ```json\n{...}\n```.
_FENCE_RE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)\r?\n?```\Z", re.DOTALL)


class ArgumentProblem(Exception):
    """Arguments cannot be used; ``str(exc)`` is the explanation for the model."""


def strip_fence(text: str) -> str:
    """Return ``text`` without a surrounding Markdown code fence (```json ... ```), trimmed."""
    text = text.strip()
    match = _FENCE_RE.match(text)
    return match.group(1).strip() if match else text


def parse_arguments(raw: object, max_chars: int) -> dict[str, object]:
    """Decode tool arguments sent as a JSON object string (maybe fenced) or as a mapping.

    ``raw``: anything. ``max_chars``: upper bound on the length of a string ``raw`` (characters),
    so a huge payload is refused before it is parsed. Returns a new dict. Raises
    ``ArgumentProblem`` when ``raw`` is not a JSON object.
    """
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None:
        raw = "{}"
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        raise ArgumentProblem(
            f"arguments must be a JSON object, not {type(raw).__name__}."
        )
    if len(raw) > max_chars:
        raise ArgumentProblem(
            f"the arguments are {len(raw)} characters long, more than the limit of {max_chars}. "
            "Send shorter content."
        )
    text = strip_fence(raw) or "{}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ArgumentProblem(
            f"the arguments are not valid JSON ({exc}). Send one JSON object such as "
            '{"path": "notes.md"} with strings in double quotes and newlines escaped as \\n.'
        ) from None
    if not isinstance(value, dict):
        raise ArgumentProblem(
            f"the arguments must be a JSON object with named fields, not a JSON "
            f"{_json_type(value)}."
        )
    return value


def _json_type(value: object) -> str:
    """JSON type name of a decoded value, for messages."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


def check_fields(
    args: dict[str, object], tool: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> None:
    """Refuse missing, unknown and non-string fields.

    ``args``: decoded arguments. ``tool``: tool name for messages. ``required``/``optional``: field
    names, all of which take strings. Raises ``ArgumentProblem`` naming every bad field.
    """
    known = required + optional
    signature = f"{tool}({', '.join(known)})"
    extra = sorted(str(k) for k in args if k not in known)
    if extra:
        raise ArgumentProblem(
            f"unexpected argument(s) {', '.join(map(repr, extra))}; {signature} takes only "
            f"{', '.join(map(repr, known))}."
        )
    missing = [k for k in required if k not in args or args[k] is None]
    if missing:
        raise ArgumentProblem(
            f"missing argument(s) {', '.join(map(repr, missing))}; call {signature} with every "
            "argument as a string."
        )
    wrong = [k for k in known if k in args and not isinstance(args[k], str)]
    if wrong:
        kinds = ", ".join(f"{k!r} is a {_json_type(args[k])}" for k in wrong)
        raise ArgumentProblem(f"wrong argument type: {kinds}; every argument of {signature} must be a string.")
