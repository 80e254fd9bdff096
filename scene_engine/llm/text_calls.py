"""Tool calls a model wrote as plain text, recognised so they can run like structured ones.

Small local models, and servers whose chat template has no tool-call parser, often answer a
tool call as text instead of in ``tool_calls``. Recognised forms (the whole reply, apart from
white space and prose outside code fences):

- a JSON object ``{"name": "read_file", "arguments": {...}}`` (``"parameters"`` is accepted for
  ``"arguments"``, and ``{"function": {...}}`` around it), or a JSON list of such objects,
  bare or in a ```` ```json ```` fence (several fences: several calls);
- ``<tool_call>{...}</tool_call>`` blocks (Qwen's and Hermes' format);
- ``functions.write_to_file:{...}`` (one per line or one for the whole reply).

A call counts only if it names one of the loop's tools and its arguments are a JSON object;
anything else (a JSON answer, a call to an unknown tool, broken JSON) stays a plain reply.
"""

from __future__ import annotations

import itertools
import json
import re

__all__ = ["parse_text_calls"]

_FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\n?(.*?)```", re.S | re.I)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_PREFIXED = re.compile(r"^\s*functions\.([A-Za-z_][\w-]*)\s*:\s*(\{.*\})\s*$", re.S)
_ids = itertools.count(1)


def parse_text_calls(text: str, tools: set[str]) -> list[dict]:
    """The tool calls written as text in ``text``, in OpenAI wire form (``{"id", "type":
    "function", "function": {"name", "arguments": JSON text}}``), ids ``text_call_N``.

    ``tools``: the names of the tools the model was given. Returns [] unless the text is made
    of well-formed calls to those tools only (see the module docstring).
    """
    if not text or not text.strip():
        return []
    for blocks in (_TAGGED.findall(text), _FENCE.findall(text)):
        if blocks:
            return _all_or_nothing([_from_json(b, tools) for b in blocks])
    prefixed = _prefixed(text, tools)
    if prefixed:
        return prefixed
    return _all_or_nothing([_from_json(text, tools)])


def _all_or_nothing(found: list[list[dict] | None]) -> list[dict]:
    """Every block must be a call; one that is not makes the reply plain text."""
    if not found or any(not calls for calls in found):
        return []
    return [call for calls in found if calls for call in calls]


def _from_json(block: str, tools: set[str]) -> list[dict] | None:
    """The calls in one JSON block (an object or a list of objects), or None."""
    try:
        data = json.loads(block.strip())
    except (json.JSONDecodeError, ValueError):
        return None
    items = data if isinstance(data, list) else [data]
    found = [_call_of(item, tools) for item in items]
    calls = [call for call in found if call]
    return calls if calls and len(calls) == len(found) else None


def _call_of(item, tools: set[str]) -> dict | None:
    """One call from ``{"name", "arguments"|"parameters"}`` (or ``{"function": {...}}``)."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    arguments = item.get("arguments", item.get("parameters"))
    if isinstance(arguments, str):   # arguments as JSON text, as in the wire format
        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, ValueError):
            return None
    if name not in tools or not isinstance(arguments, dict):
        return None
    return _wire(name, arguments)


def _prefixed(text: str, tools: set[str]) -> list[dict]:
    """``functions.NAME:{...}`` calls: the whole reply, else one per non-empty line."""
    whole = _PREFIXED.match(text)
    pieces = [whole] if whole else [_PREFIXED.match(line) for line in text.splitlines()
                                    if line.strip()]
    calls = []
    for match in pieces:
        if match is None:
            return []
        try:
            arguments = json.loads(match.group(2))
        except (json.JSONDecodeError, ValueError):
            return []
        if match.group(1) not in tools or not isinstance(arguments, dict):
            return []
        calls.append(_wire(match.group(1), arguments))
    return calls


def _wire(name: str, arguments: dict) -> dict:
    return {"id": f"text_call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
