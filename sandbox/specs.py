"""OpenAI-style JSON-schema specs of the three file tools."""

from __future__ import annotations

from .content import DELETE_MARKER


def _function(name: str, description: str, properties: dict[str, str]) -> dict:
    """One ``{"type": "function", "function": {...}}`` entry; every property is a required string."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": text} for key, text in properties.items()
                },
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


def tool_specs(suffixes: tuple[str, ...]) -> list[dict]:
    """Specs for read_file, write_to_file and replace_in_file.

    ``suffixes``: allowed file endings, named in the descriptions. Returns a new list of dicts in
    the OpenAI ``tools`` format (also accepted by litellm).
    """
    endings = " or ".join(suffixes)
    path = f"A plain file name ending in {endings}, e.g. 'notes{suffixes[0]}'. No folders."
    return [
        _function(
            "read_file",
            "Return the full text of a file, including changes you made in this session.",
            {"path": path},
        ),
        _function(
            "write_to_file",
            "Create a file or replace its whole content. Send the complete text of the file. "
            f"To delete a file, send exactly {DELETE_MARKER} as the content. Changes are staged "
            "and written together at the end.",
            {"path": path, "content": f"The complete new file text, or {DELETE_MARKER}."},
        ),
        _function(
            "replace_in_file",
            "Replace one exact piece of text in a file. 'old' is matched literally (no patterns) "
            "and must occur exactly once; include enough surrounding text to make it unique.",
            {
                "path": path,
                "old": "The exact text to find, copied from the file, whitespace included.",
                "new": "The text to put in its place (may be empty to remove 'old').",
            },
        ),
    ]
