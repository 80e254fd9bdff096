"""Prompt building from the plain-text templates in ``prompts/`` (Chinese and English).

Templates use ``$name`` placeholders (string.Template), so braces in scene text never break them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, tzinfo

from scene_engine.core.text import is_cjk_text
from scene_engine.llm.prompts import fill, template
from scene_engine.store.memories import Memory


def choose_language(setting: str, memories: list[Memory]) -> str:
    """"en" or "zh": the configured language, or by the memories' script when "auto"."""
    if setting in ("en", "zh"):
        return setting
    return "zh" if is_cjk_text(" ".join(m.content for m in memories)) else "en"


def tier(language: str, count: int, limit: int) -> str:
    """The tier message for ``count`` scenes of at most ``limit`` (prompts/tiers_*.md)."""
    lines = dict(line.split(": ", 1) for line in template(f"tiers_{language}").splitlines()
                 if ": " in line)
    if count == 0:
        return lines["empty"]
    if count >= limit:
        return lines["cap"]
    return lines["high"] if count >= limit - 3 else lines["low"]


@dataclass(frozen=True)
class SceneInfo:
    """One line of the scene list: name, heat, updated (ISO text), summary, pinned."""

    name: str
    heat: int
    updated: str
    summary: str
    pinned: bool = False


def format_memory(memory: Memory, tz: tzinfo = UTC) -> str:
    """``- [2023-05-08 14:30 UTC] (id) content``: the instant in the store's one time zone
    (config ``timezone``), so the model can order events and make dates absolute."""
    when = memory.created_at.astimezone(tz)
    return f"- [{when:%Y-%m-%d %H:%M} {when.tzname()}] ({memory.id}) {memory.content}"


def _scene_line(info: SceneInfo) -> str:
    pin = ", pinned: keep its summary, never delete or merge it away" if info.pinned else ""
    return f"- {info.name} (heat {info.heat}, updated {info.updated}{pin}): {info.summary}"


def new_scenes_phrase(language: str, allowed: int) -> str:
    """How the system prompt says how many new scenes this batch may add: "one new scene" /
    "3 new scenes" (Chinese "一个场景" / "3 个场景"); ``allowed``: ``rules.new_scene_allowance``."""
    if language == "zh":
        return "一个场景" if allowed == 1 else f"{allowed} 个场景"
    return "one new scene" if allowed == 1 else f"{allowed} new scenes"


def batch_messages(*, language: str, batch: int, memories: list[Memory], scenes: list[SceneInfo],
                   limit: int, max_scene_chars: int, related: dict[str, str],
                   readable: list[str] | None = None, tz: tzinfo = UTC,
                   new_scenes: int = 1) -> list[dict]:
    """The system and user messages for one batch.

    ``scenes``: every existing scene; ``related``: name -> full text of the few scenes most
    related to the batch; ``limit``: scene files allowed (``max_scenes - 1``); ``readable``:
    the files the model may read (default: every scene listed); ``tz``: the zone memory
    times are shown in; ``new_scenes``: new scenes this batch may add (the code enforces it,
    ``rules.new_scene_allowance``; one unless ``new_scenes_per_batch`` says more).
    """
    readable = [s.name for s in scenes] if readable is None else readable
    scene_list = "\n".join(_scene_line(s) for s in scenes) or "(none)"
    related_text = "\n\n".join(f"### {name}\n{text}" for name, text in related.items()) or "(none)"
    user = fill(
        f"batch_{language}", count=len(scenes), limit=limit, tier=tier(language, len(scenes), limit),
        scene_list=scene_list, readable=", ".join(readable) or "(none)",
        template=template(f"template_{language}"), related=related_text, batch=batch,
        memories="\n".join(format_memory(m, tz) for m in sorted(
            memories, key=lambda m: (m.created_at, m.seq))),
    )
    system = fill(f"system_{language}", max_scene_chars=max_scene_chars,
                  new_scenes=new_scenes_phrase(language, new_scenes))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


