"""The model extractor: one block of messages -> validated memories, through litellm.

The model answers with a tool call (``record_memories``) or, failing that, the same JSON as
text. Every answer is validated (``schema.parse_output`` + ``schema.check_output``) before it
is used; an invalid one (bad scope, invented or context sources, an assistant's courtesy
cited as a source, malformed JSON) is sent back with the problems, at most
``ModelSettings.attempts`` times in all. If it still fails the block raises
``ExtractionError`` and the caller writes nothing (issue 12: never a default wider scope).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scene_engine.core.errors import SceneEngineError
from scene_engine.core.plural import count
from scene_engine.extraction import offline
from scene_engine.extraction.context import ContextMemory
from scene_engine.extraction.conversation import Message
from scene_engine.extraction.courtesy import courtesy_only, is_agent
from scene_engine.extraction.schema import ExtractionOutput, OutputError, check_output, parse_output
from scene_engine.llm.loop import Budget, ModelError, complete_message
from scene_engine.llm.prompts import template

VERSION = "model/1"


class ExtractionError(SceneEngineError, RuntimeError):
    """A block could not be extracted (the model failed or never gave a valid answer);
    nothing of the run is written."""


@dataclass
class ModelSettings:
    """Where the model is and how hard to try. ``attempts``: answers asked for per block (the
    first and its corrections); ``adjudication_attempts``: per candidate pair (issue 12: at
    most two); ``backoff``: seconds before a second adjudication, doubled after."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    attempts: int = 3
    adjudication_attempts: int = 2
    backoff: float = 1.0
    budget: Budget = field(default_factory=lambda: Budget(max_seconds=120.0, retries=2))


def tool_spec(name: str, description: str, schema: dict) -> dict:
    """An OpenAI function spec taking ``schema`` (a pydantic JSON schema)."""
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": schema}}


RECORD_TOOL = tool_spec("record_memories", "Record the memories of this block.",
                        ExtractionOutput.model_json_schema())


def structured_answer(reply: dict, tool: str) -> dict | str:
    """The tool call's arguments (decoded) if the model called ``tool``, else its text with
    any code fence removed (the JSON fallback). Raises ``OutputError`` for arguments that are
    not JSON."""
    for call in reply.get("tool_calls") or ():
        if call["function"]["name"] == tool:
            try:
                return json.loads(call["function"]["arguments"] or "{}")
            except json.JSONDecodeError as exc:
                raise OutputError([f"the {tool} arguments are not valid JSON: {exc.msg}"]) \
                    from None
    text = (reply.get("content") or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    text = fenced.group(1).strip() if fenced else text
    if not text.startswith("{"):
        start = text.find("{")
        text = text[start:] if start >= 0 else text
    if not text:
        raise OutputError([f"no {tool} call and no JSON in the reply"])
    return text


def ask(messages: list[dict], tool: dict, parse: Callable, settings: ModelSettings,
        attempts: int, pause: float = 0.0):
    """Ask until ``parse(answer)`` accepts an answer, at most ``attempts`` times; each invalid
    answer goes back to the model with its problems (``pause`` seconds before the next try,
    doubled each time). Returns what ``parse`` returned. Raises ``ExtractionError`` with the
    last problems (or the model's error) when no attempt succeeds."""
    convo = list(messages)
    name = tool["function"]["name"]
    last = "no attempt made"
    for attempt in range(attempts):
        if attempt and pause:
            time.sleep(pause * 2 ** (attempt - 1))
        try:
            reply = complete_message(convo, [tool], model=settings.model,
                                     api_base=settings.api_base, api_key=settings.api_key,
                                     budget=settings.budget)
        except ModelError as exc:
            last = str(exc)
            continue
        try:
            return parse(structured_answer(reply, name))
        except OutputError as exc:
            last = str(exc)
            convo += [{"role": "assistant", "content": reply.get("content") or
                       json.dumps([c["function"] for c in reply.get("tool_calls") or []])},
                      {"role": "user", "content": "Your answer was refused: " + "; ".join(
                          exc.problems) + f". Call {name} again with a corrected answer."}]
    raise ExtractionError(f"no valid answer after {count(attempts, 'attempt')}: {last}")


def extract(block: list[Message], context: list[ContextMemory], settings: ModelSettings
            ) -> ExtractionOutput:
    """The validated memories of ``block``. ``context``: existing memories shown for
    understanding and relation matching (never a source). Raises ``ExtractionError``."""
    block_ids = {m.id for m in block}
    context_ids = {c.id for c in context}

    def parse(answer):
        output = parse_output(answer)
        check_output(output, block_ids, context_ids)
        check_courtesy(output, block)
        check_context(output, block)
        return output

    return ask(prompt(block, context), RECORD_TOOL, parse, settings, settings.attempts)


def check_courtesy(output: ExtractionOutput, block: list[Message]) -> None:
    """Raises ``OutputError`` when a memory cites an assistant message that holds nothing
    but courtesy (``courtesy.courtesy_only``: acknowledgements, congratulations, stock
    phrases): such a message is never a memory and never a source (seed 004, issue 21)."""
    names = frozenset(w.lower() for m in block for w in m.speaker.split())
    courtesy = {m.id for m in block if is_agent(m.role, m.speaker)
                and courtesy_only(m.text, offline.sentences, names)}
    problems = [f"memories.{n}.sources: {source!r} is only the assistant's courtesy (an "
                "acknowledgement, congratulation or stock phrase), never a memory or a "
                "source; cite the messages that state the fact, or leave the memory out"
                for n, memory in enumerate(output.memories) for source in memory.sources
                if source in courtesy]
    if problems:
        raise OutputError(problems)


def check_context(output: ExtractionOutput, block: list[Message]) -> None:
    """Raises ``OutputError`` when a memory cites only messages of an imported history's
    assistant (``Message.context``): what the assistant said there is context, never the
    person's fact (issue 38)."""
    context = {m.id for m in block if m.context}
    problems = [f"memories.{n}.sources: {', '.join(map(repr, memory.sources))} are only the "
                "assistant's words (marked context): a memory states what the person said; "
                "cite the person's message, or leave the memory out"
                for n, memory in enumerate(output.memories)
                if context and set(memory.sources) <= context]
    if problems:
        raise OutputError(problems)


def prompt(block: list[Message], context: list[ContextMemory]) -> list[dict]:
    """The system rules (``prompts/extract_en.md``) and the block with its context."""
    shown = [{"id": c.id, "scope": c.scope, "status": c.status, "text": c.text}
             for c in context]
    said = [{"id": m.id, "speaker": m.speaker, "time": m.created_at.isoformat()
             if m.created_at else None, "text": m.text,
             **({"context": "the assistant's words: context, never a memory alone"}
                if m.context else {})} for m in block]
    user = ("Existing memories (context only, never a source):\n"
            f"{json.dumps(shown, ensure_ascii=False, indent=1)}\n\n"
            "The block to extract (cite these ids):\n"
            f"{json.dumps(said, ensure_ascii=False, indent=1)}")
    return [{"role": "system", "content": template("extract_en")},
            {"role": "user", "content": user}]
