"""L0 readers: a conversation file -> messages with stable ids (issue 12, "Input (L0)").

Three layouts, told apart by their shape:

- OpenAI-style messages: a JSON list (or JSONL) of ``{role, content, name?, id?, created_at?}``;
- LoCoMo: a sample object (``{"conversation": {...}}``), the conversation object itself
  (``session_N`` lists of ``{speaker, dia_id, text}`` with ``session_N_date_time``), or a list
  of samples;
- a plain transcript: ``Name: text`` lines; a blank line or a date line (``dateline``: any
  common way of writing a day) starts a new session.

A file is read as JSON only when it opens as JSON does (``{"``, ``[{``, ``[ {``, ``["``,
``[]``...): a transcript that starts with ``[8 May 2023]`` is a transcript.

A bad file is refused whole (``ConversationInputError``, every problem with its line number)
before anything is extracted or written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import PurePath

from scene_engine.core.plural import count
from scene_engine.extraction.dateline import date_line
from scene_engine.store.memories import (
    CONTROL_CHARS,
    MemoryInputError,
    Place,
    _parse_time,
    _split_records,
    place_text,
)

MAX_MESSAGE_CHARS = 50_000
MAX_SPEAKER_CHARS = 60


class ConversationInputError(MemoryInputError):
    """The conversation file was refused whole; ``problems`` is a list of ``(line, message)``.
    A ``MemoryInputError``, so the CLI answers it as bad input (exit 2)."""

    def __init__(self, problems: Sequence[tuple[Place, str]]):
        self.problems = list(problems)
        shown = "\n".join(f"  {place_text(where)}: {msg}" for where, msg in problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        ValueError.__init__(self, f"conversation refused, nothing extracted or written "
                                  f"({count(len(problems), 'problem')}):\n{shown}{more}")


@dataclass(frozen=True)
class Message:
    """One utterance. ``id``: given by the file or ``STEM#N`` (file stem, 1-based position),
    stable across runs so memories can cite it; ``speaker``: the name, else the role;
    ``created_at``: aware datetime or None when the file gives no time; ``session``: 1-based;
    ``line``: where it starts in the file; ``context``: an assistant's words in an imported
    history (``sources``): shown to a model, never the person's fact, never a memory of the
    offline extractor; ``origin``: where it was read (format, file, conversation, title),
    cited by the memories made of it."""

    id: str
    speaker: str
    text: str
    created_at: datetime | None
    session: int
    line: int
    role: str | None = None
    context: bool = False
    origin: dict | None = field(default=None, compare=False, hash=False)


def read_conversation(data: bytes, name: str = "conversation", layout: str | None = None
                      ) -> list[Message]:
    """Parse a conversation file of any of the three layouts (module docstring).

    ``name``: the file's name; its stem prefixes derived ids (``chat#3``). ``layout``:
    ``"messages"``, ``"locomo"`` or ``"transcript"`` as a person named it (``--format``),
    read as that layout and refused in its words when it is not; None: told from the
    content. Returns the
    messages in file order (messages without text, such as an assistant's bare tool call, are
    left out). Raises ``ConversationInputError`` with the line of every problem: invalid
    UTF-8, invalid JSON, a message without text or speaker, a bad date, a duplicate id, an
    unreadable transcript line, or no message at all.
    """
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConversationInputError([(line, f"invalid UTF-8 at byte {exc.start}")]) from exc
    stem = PurePath(name).stem or "conversation"
    stripped = text.lstrip()
    if not stripped:
        raise ConversationInputError([(1, "the file is empty")])
    if layout == "transcript" or (layout is None and not starts_like_json(stripped)):
        messages = _transcript(text, stem)
    elif layout == "locomo":
        messages = _named_locomo(text)
    elif layout is None and stripped.startswith("{") and _is_locomo_object(text):
        messages = _locomo(json.loads(text), text)
    else:
        messages = _json_messages(text, stem)
    if not messages:
        raise ConversationInputError([(1, "no message with text in the file")])
    _check_unique(messages)
    return with_known_times(messages)


# JSON of messages or samples opens an object (`{"`, `{}`) or a list of objects, lists or
# strings (`[{`, `[[`, `["`, `[]`), blanks allowed between; a transcript's first line may
# be a bracketed date (`[8 May 2023]`, `[2023-05-08]`), which is no JSON.
_JSON_START = re.compile(r'\{\s*["}]|\[\s*[\[{"\]]')


def starts_like_json(stripped: str) -> bool:
    """True when the file (without leading blanks) opens as JSON does and its first line is
    not a transcript's date line."""
    if date_line(stripped.split("\n", 1)[0]) is not None:
        return False
    return _JSON_START.match(stripped) is not None


def with_known_times(messages: list[Message]) -> list[Message]:
    """Undated messages take the time of the latest dated message before them (else of the
    first one after): an undated first session must not read as said today, after the
    dated ones that follow it. A file with no time at all stays undated (then: now)."""
    known = [m.created_at for m in messages if m.created_at is not None]
    if not known or len(known) == len(messages):
        return messages
    out, last = [], known[0]     # before the first dated message: its time
    for message in messages:
        if message.created_at is not None:
            last = message.created_at
            out.append(message)
        else:
            out.append(replace(message, created_at=last))
    return out


def blocks(messages: list[Message], size: int = 20) -> Iterator[list[Message]]:
    """The messages in extraction blocks: never across a session, at most ``size`` each."""
    current: list[Message] = []
    for message in messages:
        if current and (message.session != current[-1].session or len(current) >= size):
            yield current
            current = []
        current.append(message)
    if current:
        yield current


# ---------------------------------------------------------------- OpenAI-style messages

def _json_messages(text: str, stem: str) -> list[Message]:
    try:
        records = _split_records(text)     # (line, value), each with its line number
    except MemoryInputError as exc:
        raise ConversationInputError(exc.problems) from None
    if len(records) == 1 and isinstance(records[0][1], list):
        raise ConversationInputError([(records[0][0], "a list inside a list: give the "
                                                     "messages as one JSON list or JSONL")])
    if records and all(isinstance(v, dict) and "conversation" in v for _, v in records):
        return _locomo(json.loads(text), text)     # a list of LoCoMo samples
    problems, messages = [], []
    one_line = len({line for line, _ in records}) < len(records)   # a list on one line
    for position, (line, value) in enumerate(records, start=1):
        try:
            message = _openai_message(value, line, f"{stem}#{position}")
        except ConversationInputError as exc:    # the message's own check: its line and words
            problems += exc.problems
            continue
        except ValueError as exc:
            problems.append((line, f"message {position}: {exc}" if one_line else str(exc)))
            continue
        if message is not None:
            messages.append(message)
    if problems:
        raise ConversationInputError(problems)
    return messages


def _openai_message(value, line: int, default_id: str) -> Message | None:
    if not isinstance(value, dict):
        raise ValueError("a message must be a JSON object with role and content")
    unknown = sorted(set(value) - {"role", "content", "name", "id", "created_at",
                                   "tool_calls", "tool_call_id"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    role = value.get("role")
    if not isinstance(role, str) or not role.strip():
        raise ValueError("`role` is required and must be text")
    content = _content_text(value.get("content"))
    if content is None:
        if value.get("tool_calls"):
            return None               # an assistant's bare tool call: nothing said
        raise ValueError("`content` is required and must be text (or a list of text parts)")
    name = value.get("name")
    if name is not None and not isinstance(name, str):
        raise ValueError("`name` must be text")
    mid = value.get("id")
    if mid is not None and (isinstance(mid, bool) or not isinstance(mid, str | int)
                            or not str(mid).strip()):
        raise ValueError("`id` must be non-empty text or a number")
    when = _parse_time(value["created_at"], datetime.now(UTC)) \
        if value.get("created_at") is not None else None
    return _message(str(mid) if mid is not None else default_id, (name or role).strip(),
                    content, when, 1, line, role.strip())


def _content_text(content) -> str | None:
    """Text of a message's content: a string or OpenAI's list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        joined = "\n".join(p for p in parts if isinstance(p, str))
        return joined if joined.strip() else None
    return None


# ---------------------------------------------------------------- LoCoMo

def _is_locomo_object(text: str) -> bool:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and ("conversation" in value or "session_1" in value)


def _named_locomo(text: str) -> list[Message]:
    """A file named LoCoMo (``--format locomo``): a sample or a list of them, else refused
    in one line saying what a LoCoMo sample is."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConversationInputError([(exc.lineno, f"not JSON, so no LoCoMo sample: "
                                                   f"{exc.msg} (column {exc.colno})")]) from None
    samples = value if isinstance(value, list) else [value]
    if not samples or not all(isinstance(v, dict) and ("conversation" in v or "session_1" in v)
                              for v in samples):
        raise ConversationInputError([(1, "not a LoCoMo sample: an object (or a list of "
                                          "them) with a \"conversation\" of session_N lists")])
    return _locomo(value, text)


def _locomo(value, text: str) -> list[Message]:
    samples = value if isinstance(value, list) else [value]
    problems: list[tuple[int, str]] = []
    messages: list[Message] = []
    for sample in samples:
        conv = sample.get("conversation", sample)
        prefix = f"{sample['sample_id']}:" if isinstance(sample.get("sample_id"), str) else ""
        keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)),
                      key=lambda k: int(k.split("_")[1]))
        if not keys:
            problems.append((1, "a LoCoMo conversation needs session_N lists of turns"))
        for key in keys:
            number = int(key.split("_")[1])
            when = _locomo_time(conv.get(f"{key}_date_time"))
            where = _line_of(text, f'"{key}"')
            if when is None:
                problems.append((where, f"{key}_date_time is missing or not a date such as "
                                        "'1:56 pm on 8 May, 2023'"))
            turns = conv[key]
            if not isinstance(turns, list):
                problems.append((where, f"{key} must be a list of turns"))
                continue
            for turn in turns:
                line = _line_of(text, json.dumps(turn.get("dia_id")) if isinstance(turn, dict)
                                else "", where)
                if not isinstance(turn, dict) or not all(
                        isinstance(turn.get(k), str) and turn[k].strip()
                        for k in ("speaker", "dia_id", "text")):
                    problems.append((line, f"a turn of {key} needs speaker, dia_id and text"))
                    continue
                messages.append(_message(prefix + turn["dia_id"], turn["speaker"].strip(),
                                         turn["text"], when, number, line))
    if problems:
        raise ConversationInputError(problems)
    return messages


def _locomo_time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    for form in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(value.strip(), form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _line_of(text: str, needle: str, start_line: int = 1) -> int:
    """The line where ``needle`` first occurs at or after ``start_line`` (1 if absent)."""
    offset = 0
    for _ in range(start_line - 1):
        offset = text.find("\n", offset) + 1
    found = text.find(needle, offset) if needle else -1
    return text.count("\n", 0, found) + 1 if found >= 0 else start_line


# ---------------------------------------------------------------- plain transcripts

_SPEAKER_LINE = re.compile(rf"^\s*([^:\n]{{1,{MAX_SPEAKER_CHARS}}}?)\s*:\s(.*)$")


def _transcript(text: str, stem: str) -> list[Message]:
    problems: list[tuple[int, str]] = []
    messages: list[Message] = []
    session, when, gap = 1, None, False
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            gap = bool(messages)
            continue
        date = date_line(line)
        if date is not None:
            session += bool(messages)
            when, gap = date, False
            continue
        if gap:
            session += 1
            gap = False
        match = _SPEAKER_LINE.match(line)
        if match and match.group(1).lstrip().startswith(("{", "[")):
            # JSON read as a transcript (``--format transcript`` on a JSON file): `{"a": 1`
            # is no speaker's name.
            problems.append((number, "a line of JSON, not `Name: text`"))
            continue
        if not match or not match.group(2).strip() or len(match.group(1).split()) > 4:
            if messages and not gap and messages[-1].session == session and not problems \
                    and not line.lstrip().startswith(":"):
                # A wrapped line: the turn goes on (common in pasted and exported chats).
                last = messages[-1]
                messages[-1] = _message(last.id, last.speaker, f"{last.text} {line.strip()}",
                                        last.created_at, last.session, last.line)
                continue
            problems.append((number, "expected `Name: text`, a date line or a blank line"))
            continue
        messages.append(_message(f"{stem}#{len(messages) + 1}", match.group(1).strip(),
                                 match.group(2), when, session, number))
    if problems:
        raise ConversationInputError(problems)
    return messages


# ---------------------------------------------------------------- shared

def _message(mid: str, speaker: str, text: str, when, session: int, line: int,
             role: str | None = None) -> Message:
    text = text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        raise ConversationInputError([(line, f"a message of {len(text)} characters; at most "
                                             f"{MAX_MESSAGE_CHARS}")])
    if CONTROL_CHARS.search(text + speaker):
        raise ConversationInputError([(line, "a control character in the message")])
    return Message(id=mid, speaker=speaker, text=text, created_at=when, session=session,
                   line=line, role=role)


def _check_unique(messages: list[Message]) -> None:
    seen: dict[str, int] = {}
    problems = []
    for m in messages:
        if m.id in seen:
            problems.append((m.line, f"message id {m.id!r} was already used on line "
                                     f"{seen[m.id]}"))
        seen.setdefault(m.id, m.line)
    if problems:
        raise ConversationInputError(problems)
