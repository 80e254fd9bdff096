"""The existing memories an extractor is shown with a block (issue 12: at most 8 related and
4 recent, each cut to 400 characters, with scope and status). Context helps the model
understand the block and match relations; it is never a source (``schema.check_output``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from scene_engine.core.text import terms
from scene_engine.extraction.conversation import Message
from scene_engine.store.memories import Memory

RELATED = 8
RECENT = 4
CONTEXT_CHARS = 400
HIDDEN = ("merged", "retracted")   # no longer a memory of its own


@dataclass(frozen=True)
class ContextMemory:
    """One memory as shown: ``text`` is its title and content cut to ``CONTEXT_CHARS``."""

    id: str
    scope: str
    status: str
    text: str


def choose(block: list[Message], pool: list[Memory], status: dict[str, str]
           ) -> list[ContextMemory]:
    """The related memories of ``pool`` (most shared words with the block first, at most
    ``RELATED``) then the most recent others (at most ``RECENT``). ``pool``: oldest first
    (the journal, then what this run extracted so far: those have no number yet, so the
    order is the recency). ``status``: id -> status now (``events.statuses``); merged and
    retracted memories are not shown."""
    live = [(age, m) for age, m in enumerate(pool) if status.get(m.id, "active") not in HIDDEN]
    said = Counter(t for m in block for t in terms(m.text))
    scored = []
    for age, memory in live:
        shared = sum(said[t] > 0 for t in set(terms(_text(memory))))
        if shared:
            scored.append((-shared, -age, memory))
    related = [m for _, _, m in sorted(scored, key=lambda s: s[:2])[:RELATED]]
    taken = {m.id for m in related}
    recent = [m for _, m in reversed(live) if m.id not in taken][:RECENT]
    return [_shown(m, status) for m in related + recent]


def _text(memory: Memory) -> str:
    if memory.title and not memory.content.startswith(memory.title):
        return f"{memory.title}: {memory.content}"
    return memory.content


def _shown(memory: Memory, status: dict[str, str]) -> ContextMemory:
    text = _text(memory)
    if len(text) > CONTEXT_CHARS:
        text = text[:CONTEXT_CHARS - 1].rstrip() + "…"
    return ContextMemory(id=memory.id, scope=memory.scope or "unscoped",
                         status=status.get(memory.id, "active"), text=text)
