"""The prompt templates in ``prompts/`` (Chinese and English), loaded and filled.

Plain-text files packaged with the wheel, one per message kind (``batch_system_en``,
``extract_en``, ``repair_zh``, ...); ``$placeholders`` filled with ``string.Template``.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def template(name: str) -> str:
    """The text of ``prompts/<name>.md``; raises ``FileNotFoundError`` if absent."""
    return files("prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")



def fill(name: str, **values) -> str:
    """``template(name)`` with ``$placeholders`` filled; missing ones raise ``KeyError``."""
    return Template(template(name)).substitute(**{k: str(v) for k, v in values.items()})



def repair_message(language: str, problems: list[str]) -> dict:
    """The user message of a repair round, listing what is still wrong."""
    return {"role": "user",
            "content": fill(f"repair_{language}", problems="\n".join(f"- {p}" for p in problems))}
