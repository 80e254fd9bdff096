"""Where a person's history already is: assistant exports and agent session transcripts, read
as conversations of messages (issue 38, "Importers"; docs/guides/).

Formats, told apart by their content (or named with ``--format``):

- ``chatgpt``: ChatGPT's ``conversations.json``, a list of conversations, each a tree of
  message nodes under ``mapping``; only the branch the person kept is read, from
  ``current_node`` back to the root (a regenerated answer or an edited question leaves the
  others behind). System, tool and hidden messages are skipped, and so is an assistant's
  message to a tool (``recipient`` other than ``all``); images and files are noted by name
  in the memory's source, never read.
- ``claude``: Claude.ai's ``conversations.json``, conversations with ``chat_messages``
  (``sender`` human / assistant, ISO ``created_at``, ``text`` or content blocks); only the
  text blocks are read, attachments noted by name.
- ``claude-code``: Claude Code's session transcripts (a ``.jsonl`` file a session, under
  ``~/.claude/projects/<project>/``): ``user`` and ``assistant`` lines with ``message.content``
  as text or blocks (text, tool_use, tool_result), ``timestamp``, ``sessionId``, ``uuid``;
  a ``summary`` line names the session. Tool calls and results, meta lines (``isMeta``),
  compaction summaries, subagents' lines (``isSidechain``) and slash commands are not the
  person's words and are skipped.
- ``codex``: Codex CLI's session files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``):
  ``session_meta`` then ``response_item`` messages (``input_text`` / ``output_text``); the
  harness's own user messages (``<environment_context>``, ``<user_instructions>``, AGENTS.md)
  and function calls are skipped. The older layout without the ``payload`` wrapper too.
- ``messages``, ``locomo``, ``transcript``: the three layouts of ``conversation`` (read
  whole, refused whole, as before).

Only the person's words are theirs: an assistant's message is kept as ``context`` (shown to a
model extractor, never a memory of the offline one, never the person's claim). Every message
keeps its own time and speaker and an ``origin`` (format, file, conversation or session,
title) that its memories cite with its id. A message id is the source's own (a ChatGPT or
Claude message id, a Claude Code ``uuid``, ``SESSION:LINE`` for Codex), so the same message
read again from a later export is the same message.

A conversation that cannot be read (cut off, a byte that is not UTF-8, no ``mapping``) is a
``Broken`` item naming where it is; the others are still read. Everything a person marked
``<private>`` and every secret line is taken out here (``core.privacy``), before any
extractor, model or file sees it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import IO, Any

from scene_engine.core.errors import InputError
from scene_engine.core.privacy import Redactor
from scene_engine.extraction import jsonstream
from scene_engine.extraction.conversation import (
    CONTROL_CHARS,
    MAX_MESSAGE_CHARS,
    Message,
    read_conversation,
    starts_like_json,
    with_known_times,
)

FORMATS = ("chatgpt", "claude", "claude-code", "codex", "messages", "locomo", "transcript")
LEGACY = ("messages", "locomo", "transcript")
TURNS = "turns"          # what the hooks leave in the inbox (``services.hooks``)
TITLE_CHARS = 200
HEAD_BYTES = 1 << 16     # what detection reads of a file that is not a JSON list


class UnknownFormat(InputError):
    """The input is none of ``FORMATS``: one line naming them (exit 2)."""


@dataclass
class Conversation:
    """One conversation or session, read. ``key``: its id in the source; ``where``: its
    place in the input, for a person ("conversations.json, conversation 12"); ``notes``:
    what was odd but not fatal (a node missing from the tree)."""

    key: str
    title: str
    messages: list[Message]
    where: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Broken:
    """A conversation (or a line of a session file) that could not be read: ``where`` it is
    and why."""

    where: str
    reason: str


Item = Conversation | Broken


# ---------------------------------------------------------------- opening and detection

@dataclass
class Input:
    """What a command was given: files to read (a folder gives every session file in it),
    or bytes (standard input). ``size``: bytes in all, for a progress bar."""

    files: list[Path]
    data: bytes | None = None
    name: str = "stdin"
    base: Path | None = None

    @property
    def size(self) -> int:
        """Bytes to read in all."""
        if self.data is not None:
            return len(self.data)
        total = 0
        for path in self.files:
            try:
                total += path.stat().st_size
            except OSError:
                continue
        return total

    def label(self, path: Path | None) -> str:
        """How a file is named in reports and origins: relative to the folder given."""
        if path is None:
            return self.name
        if self.base is not None:
            try:
                return str(path.relative_to(self.base))
            except ValueError:
                pass
        return path.name


def open_input(source: str) -> Input:
    """The input ``source`` names: ``-`` (standard input), a file, or a folder (its
    ``conversations.json`` when it is an unpacked export, else every ``*.jsonl`` under it,
    in name order: a Claude Code project, ``~/.claude/projects``, ``~/.codex/sessions``).
    Raises ``InputError`` for a path that is not there or a folder with nothing to read."""
    import sys

    if source == "-":
        return Input(files=[], data=sys.stdin.buffer.read())
    path = Path(os.path.expanduser(source))
    if path.is_dir():
        export = path / "conversations.json"
        files = [export] if export.is_file() else sorted(
            p for p in path.rglob("*.jsonl") if p.is_file())
        if not files:
            raise InputError(f"{source}: a folder with no conversations.json and no .jsonl "
                             "session file in it")
        return Input(files=files, name=path.name, base=path)
    if not path.exists():
        raise InputError(f"{source}: no such file")
    return Input(files=[path], name=path.name)


def detect(stream: IO[bytes]) -> str | None:
    """The format of the file ``stream`` reads (one of ``FORMATS``, or ``TURNS``), from its
    first record; None when it is none of them. Reads at most the first element of a JSON
    list, or the first lines; the caller rewinds."""
    head = stream.read(HEAD_BYTES)
    if b"\x00" in head:
        return None                # no text: an archive, an image, UTF-16
    stripped = head.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()
    if not stripped:
        return "transcript"        # empty: the transcript reader says so in its words
    if not starts_like_json(stripped.decode("utf-8", "replace")):
        return "transcript"        # also a first line `[8 May 2023]`: a transcript's date
    if stripped[:1] == b"[":
        stream.seek(0)
        first = next(jsonstream.elements(stream), None)
        if first is not None and first.error is not None:
            # The first conversation is cut off (or broken): its keys still tell the export,
            # whose reader names the conversation and reads the others.
            for key, told in ((rb'"mapping"\s*:', "chatgpt"), (rb'"chat_messages"\s*:', "claude")):
                if re.search(key, head):
                    return told
        if first is None or first.value is None:
            return "messages" if first is not None and first.index == 1 else None
        return _kind_of_record(first.value, listed=True)
    if stripped[:1] == b"{":
        for line in head.split(b"\n")[:40]:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            kind = _kind_of_record(record, listed=False)
            if kind is not None:
                return kind
        stream.seek(0)
        whole = next(jsonstream.elements(stream), None)   # one pretty-printed object
        if whole is not None and whole.value is not None:
            return _kind_of_record(whole.value, listed=False)
        return None
    return "transcript"


_CLAUDE_CODE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot",
                      "queue-operation"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def _kind_of_record(record: Any, listed: bool) -> str | None:
    """The format one record belongs to (``listed``: it is an element of a JSON list)."""
    if not isinstance(record, dict):
        return None
    if "mapping" in record:
        return "chatgpt"
    if "chat_messages" in record:
        return "claude"
    if "scene_engine_turns" in record:
        return TURNS
    kind = record.get("type")
    if not listed and kind in _CODEX_TYPES and "payload" in record:
        return "codex"
    if not listed and kind in _CLAUDE_CODE_TYPES and (
            "sessionId" in record or "uuid" in record or kind in ("summary",
                                                                  "file-history-snapshot")):
        return "claude-code"
    if not listed and "id" in record and "timestamp" in record and (
            "instructions" in record or "git" in record):
        return "codex"             # the older Codex layout's first line
    if "conversation" in record or "session_1" in record:
        return "locomo"
    if "role" in record or "content" in record:
        return "messages"
    return None


ZIP_MAGIC = b"PK\x03\x04"


def unknown(name: str, head: bytes = b"") -> UnknownFormat:
    """The one-line refusal of an input in no known format (``head``: its first bytes, for
    the hint an export still zipped needs)."""
    if head.startswith(ZIP_MAGIC):
        return UnknownFormat(f"{name}: a zip archive, not a conversation file; unzip the "
                             "export and give its conversations.json (or the folder)")
    return UnknownFormat(f"{name}: not a conversation format scene-engine knows; known: "
                         f"{', '.join(FORMATS)} (name one with --format)")


def read_input(given: Input, fmt: str | None, private: Redactor,
               progress: Callable[[int], None] | None = None) -> Iterator[Item]:
    """Every conversation of ``given`` in order, as ``Conversation`` or ``Broken`` items.
    ``fmt``: one of ``FORMATS`` (None: detected per file). ``private``: takes out private
    spans and secret lines. ``progress(n)``: bytes read. Raises ``UnknownFormat`` for a
    single file in no known format (a folder's such files are ``Broken`` items), and
    ``ConversationInputError`` for a bad file of the three older layouts (refused whole)."""
    if given.data is not None:
        yield from _read_one(io.BytesIO(given.data), given.name, fmt, private, progress,
                             single=True)
        return
    for path in given.files:
        label = given.label(path)
        try:
            with path.open("rb") as stream:
                yield from _read_one(stream, label, fmt, private, progress,
                                     single=len(given.files) == 1)
        except UnknownFormat as exc:
            if len(given.files) == 1:
                raise
            yield Broken(label, str(exc).split(": ", 1)[1])
        except OSError as exc:
            yield Broken(label, f"cannot be read: {exc.strerror or exc}")


def _read_one(stream: IO[bytes], name: str, fmt: str | None, private: Redactor,
              progress: Callable[[int], None] | None, single: bool) -> Iterator[Item]:
    kind = fmt or detect(stream)
    stream.seek(0)
    if kind is None:
        raise unknown(name, stream.read(len(ZIP_MAGIC)))
    if kind in LEGACY:
        data = stream.read()
        if progress is not None:
            progress(len(data))
        yield from _legacy(data, name, private, fmt)
    elif kind in ("chatgpt", "claude"):
        read = _chatgpt if kind == "chatgpt" else _claude
        for element in jsonstream.elements(stream, progress):
            where = f"{name}, conversation {element.index} (character {element.offset})"
            if element.error is not None:
                yield Broken(where, element.error)
                continue
            try:
                yield read(element.value, name, where, private)
            except _Malformed as exc:
                yield Broken(where, str(exc))
    elif kind == "claude-code":
        yield from _claude_code(stream, name, private, progress)
    elif kind == "codex":
        yield from _codex(stream, name, private, progress)
    elif kind == TURNS:
        yield from _turns(stream, name, private, progress)
    else:
        raise unknown(name)


class _Malformed(InputError):
    """A conversation of a known format whose shape is wrong; the message says how."""


# ---------------------------------------------------------------- shared

# The cuts ``_clean`` made while ``noting_cuts`` is open (the import's own list).
_CUTS: ContextVar[list[str] | None] = ContextVar("scene_engine_cuts", default=None)


@contextlib.contextmanager
def noting_cuts() -> Iterator[list[str]]:
    """While open, every message ``_clean`` cuts to ``MAX_MESSAGE_CHARS`` is said in the list
    it gives (one line each: its length and first words), so that an import reports it
    instead of dropping the rest in silence. The reader decides when to read and clear it."""
    said: list[str] = []
    token = _CUTS.set(said)
    try:
        yield said
    finally:
        _CUTS.reset(token)


def _clean(text: str, private: Redactor) -> str:
    """A message's text as it may be kept: private spans and secret lines out, control
    characters (a terminal's colour codes in a paste) as spaces, at most
    ``MAX_MESSAGE_CHARS`` (a longer one is cut there, and said: ``noting_cuts``)."""
    text = private.text(CONTROL_CHARS.sub(" ", text)).strip()
    if len(text) > MAX_MESSAGE_CHARS:
        said = _CUTS.get()
        if said is not None:
            start = " ".join(text[:60].split())
            said.append(f"a message of {len(text):,} characters (\"{start}…\") was cut to "
                        f"its first {MAX_MESSAGE_CHARS:,}")
    return text[:MAX_MESSAGE_CHARS]


def _time(value: Any) -> datetime | None:
    """An epoch number or ISO text as an aware datetime; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), UTC)
        if isinstance(value, str) and value.strip():
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


parse_time = _time


def as_dict(value: Any) -> dict:
    """``value`` when it is a JSON object, else an empty one (a field of the wrong shape
    reads as absent)."""
    return value if isinstance(value, dict) else {}


def _title(text: Any, fallback: str) -> str:
    said = " ".join(text.split()) if isinstance(text, str) and text.strip() else fallback
    return said[:TITLE_CHARS]


def _origin(fmt: str, name: str, key: str, title: str, **more: Any) -> dict:
    """Where a message was read, as its memories cite it; empty extras left out, and an
    attachment named twice (a Claude export lists a file under both ``attachments`` and
    ``files``) named once."""
    if more.get("attachments"):
        more["attachments"] = list(dict.fromkeys(more["attachments"]))
    return {"format": fmt, "file": name, "conversation": key, "title": title,
            **{k: v for k, v in more.items() if v}}


def _finish(key: str, title: str, where: str, messages: list[Message],
            notes: list[str] | None = None, start: datetime | None = None) -> Conversation:
    """The conversation with undated messages timed by their neighbours (else by ``start``,
    the conversation's own time)."""
    timed = with_known_times(messages)
    if start is not None:
        timed = [m if m.created_at is not None else replace(m, created_at=start)
                 for m in timed]
    return Conversation(key, title, timed, where, notes or [])


# ---------------------------------------------------------------- the older layouts

def _legacy(data: bytes, name: str, private: Redactor, layout: str | None = None
            ) -> Iterator[Item]:
    """The three older layouts: read whole, refused whole (``read_conversation``; ``layout``
    the one a person named, None: told from the content); the privacy filter applied to
    each message, a message left empty by it dropped."""
    messages = []
    for message in read_conversation(data, name, layout):
        text = private.text(message.text)
        if text:
            messages.append(replace(message, text=text))
    stem = PurePath(name).stem or "conversation"
    yield Conversation(stem, stem, messages, name)


# ---------------------------------------------------------------- ChatGPT

_HIDDEN_TYPES = {"code", "execution_output", "user_editable_context", "thoughts",
                 "reasoning_recap", "tether_quote", "tether_browsing_display",
                 "system_error", "model_editable_context", "computer_output",
                 "super_widget", "sonic_webpage"}


def _chatgpt(value: Any, name: str, where: str, private: Redactor) -> Conversation:
    """One ChatGPT conversation: the kept branch, root first."""
    if not isinstance(value, dict) or not isinstance(value.get("mapping"), dict):
        raise _Malformed("a ChatGPT conversation needs a `mapping` of message nodes")
    mapping: dict = value["mapping"]
    key = str(value.get("conversation_id") or value.get("id") or where)
    title = _title(value.get("title"), "untitled")
    notes: list[str] = []
    branch = _kept_branch(mapping, value.get("current_node"), notes)
    messages: list[Message] = []
    for node in branch:
        message = _chatgpt_message(node, name, key, title, private)
        if message is not None:
            messages.append(replace(message, line=len(messages) + 1))
    return _finish(key, title, where, messages, notes, _time(value.get("create_time")))


def _kept_branch(mapping: dict, current: Any, notes: list[str]) -> list[dict]:
    """The nodes from the root to ``current`` (the branch the person kept). Without a
    usable ``current_node``, the latest leaf. A node that is missing or null ends the walk
    there (noted): what is above it cannot be reached."""
    if not isinstance(current, str) or not isinstance(mapping.get(current), dict):
        leaves = [(_node_time(n), k) for k, n in mapping.items()
                  if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            return []
        current = max(leaves, key=lambda t: (t[0], t[1]))[1]
        notes.append("no usable current_node: the latest leaf's branch was read")
    branch, seen = [], set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id not in seen:
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            notes.append(f"node {node_id} is missing or null: the branch was read from "
                         "below it")
            break
        # A node without its own `id` (some exporters leave it out) is known by its key.
        branch.append(node if node.get("id") else {**node, "id": node_id})
        node_id = node.get("parent")
    branch.reverse()
    return branch


def _node_time(node: dict) -> float:
    message = node.get("message")
    when = message.get("create_time") if isinstance(message, dict) else None
    return float(when) if isinstance(when, int | float) and not isinstance(when, bool) else 0.0


def _chatgpt_message(node: dict, name: str, key: str, title: str, private: Redactor
                     ) -> Message | None:
    """The message of one node, or None for what is not said by the person or the
    assistant to the person (system, tool, hidden, to a tool, no text)."""
    message = node.get("message")
    if not isinstance(message, dict):
        return None                      # the root placeholder
    author = as_dict(message.get("author"))
    role = author.get("role")
    metadata = as_dict(message.get("metadata"))
    if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation") \
            or metadata.get("is_user_system_message") \
            or message.get("recipient", "all") not in ("all", None):
        return None
    content = as_dict(message.get("content"))
    if content.get("content_type") in _HIDDEN_TYPES:
        return None
    texts, attached = [], []
    for part in content.get("parts") or ():
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = str(part.get("content_type") or "")
            if "image" in kind:
                attached.append("an image")
            elif "audio" in kind:
                attached.append("audio")
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
    if isinstance(content.get("text"), str):
        texts.append(content["text"])
    for item in metadata.get("attachments") or ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            attached.append(item["name"])
    text = _clean("\n".join(texts), private)
    if not text:
        return None
    mid = str(message.get("id") or node.get("id") or "")
    if not mid:
        return None
    return Message(id=mid, speaker="user" if role == "user" else "ChatGPT", text=text,
                   created_at=_time(message.get("create_time")), session=1, line=0,
                   role=role, context=role != "user",
                   origin=_origin("chatgpt", name, key, title, attachments=attached))


# ---------------------------------------------------------------- Claude.ai

def _claude(value: Any, name: str, where: str, private: Redactor) -> Conversation:
    """One Claude.ai conversation: its messages in order (the latest branch when the
    export records parents)."""
    if not isinstance(value, dict) or not isinstance(value.get("chat_messages"), list):
        raise _Malformed("a Claude conversation needs a list of `chat_messages`")
    key = str(value.get("uuid") or where)
    title = _title(value.get("name"), "untitled")
    raw = [m for m in value["chat_messages"] if isinstance(m, dict)]
    messages = []
    for position, item in enumerate(_claude_branch(raw), start=1):
        sender = item.get("sender")
        if sender not in ("human", "assistant"):
            continue
        texts = []
        blocks = item.get("content")
        if isinstance(blocks, list) and blocks:
            texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                     and isinstance(b.get("text"), str)]
        elif isinstance(item.get("text"), str):
            texts = [item["text"]]
        text = _clean("\n".join(texts), private)
        if not text:
            continue
        attached = [a.get("file_name") for key_ in ("attachments", "files")
                    for a in item.get(key_) or () if isinstance(a, dict)
                    and isinstance(a.get("file_name"), str)]
        role = "user" if sender == "human" else "assistant"
        messages.append(Message(
            id=str(item.get("uuid") or f"{key}#{position}"),
            speaker="user" if role == "user" else "Claude", text=text,
            created_at=_time(item.get("created_at")), session=1, line=position, role=role,
            context=role != "user", origin=_origin("claude", name, key, title,
                                                   attachments=attached)))
    return _finish(key, title, where, messages, start=_time(value.get("created_at")))


def _claude_branch(raw: list[dict]) -> list[dict]:
    """The messages of the branch shown last, when every message names its parent
    (``parent_message_uuid``); else all of them in order."""
    by_id = {m.get("uuid"): m for m in raw if isinstance(m.get("uuid"), str)}
    if not raw or len(by_id) != len(raw) or not all("parent_message_uuid" in m for m in raw):
        return raw
    last = max(raw, key=lambda m: str(m.get("created_at") or ""))
    chain, seen = [], set()
    node: dict | None = last
    while node is not None and node.get("uuid") not in seen:
        seen.add(node.get("uuid"))
        chain.append(node)
        node = by_id.get(node.get("parent_message_uuid"))
    chain.reverse()
    return chain


# ---------------------------------------------------------------- JSONL sessions

def _lines(stream: IO[bytes], name: str, progress: Callable[[int], None] | None
           ) -> Iterator[tuple[int, dict | Broken]]:
    """``(line number, record)`` for each line of a JSONL file, a ``Broken`` for a line that
    is not a JSON object (torn, not UTF-8); blank lines skipped."""
    for number, raw in enumerate(stream, start=1):
        if progress is not None:
            progress(len(raw))
        if not raw.strip():
            continue
        where = f"{name}, line {number}"
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            yield number, Broken(where, f"a byte that is not UTF-8 at byte {exc.start}")
            continue
        except ValueError:
            yield number, Broken(where, "not a whole JSON line (cut off?)")
            continue
        if not isinstance(record, dict):
            yield number, Broken(where, "not a JSON object")
            continue
        yield number, record


# Text Claude Code writes as a user turn that the person did not type.
_CC_NOT_SAID = re.compile(r"^\s*(<command-name>|<command-message>|<local-command-stdout>|"
                          r"<local-command-stderr>|<bash-input>|<bash-stdout>|<bash-stderr>|"
                          r"<user-memory-input>|Caveat: The messages below were generated|"
                          r"\[Request interrupted by user)")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def _claude_code(stream: IO[bytes], name: str, private: Redactor,
                 progress: Callable[[int], None] | None) -> Iterator[Item]:
    """One Claude Code session file: its broken lines, then the session as one
    conversation (a file resumed under a new ``sessionId`` keeps one conversation; each
    message's origin names its own session)."""
    messages: list[Message] = []
    title, key, sessions = "", "", []
    for number, record in _lines(stream, name, progress):
        if isinstance(record, Broken):
            yield record
            continue
        if record.get("type") == "summary":
            title = title or _title(record.get("summary"), "")
            continue
        message = claude_code_message(record, name, private, number)
        if message is None:
            continue
        session = str(record.get("sessionId") or "")
        if session and session not in sessions:
            sessions.append(session)
        key = key or session
        messages.append(replace(message, session=max(1, len(sessions))))
    key = key or PurePath(name).stem
    title = title or _first_words(messages) or key
    yield _finish(key, title, name, [replace(m, origin={**(m.origin or {}), "title": title})
                                     for m in messages])


def claude_code_message(record: dict, name: str, private: Redactor, line: int = 0
                        ) -> Message | None:
    """The message one Claude Code transcript line holds, or None (not a user or assistant
    line, a meta line, a subagent's, a compaction summary, tool calls and results only, a
    slash command, no text)."""
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isMeta") or \
            record.get("isSidechain") or record.get("isCompactSummary") or \
            record.get("isVisibleInTranscriptOnly"):
        return None
    body = as_dict(record.get("message"))
    content = body.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
    else:
        return None
    said = _REMINDER.sub("", "\n".join(texts))
    if kind == "user" and _CC_NOT_SAID.match(said):
        return None
    text = _clean(said, private)
    uuid = record.get("uuid")
    if not text or not isinstance(uuid, str) or not uuid:
        return None
    session = str(record.get("sessionId") or "")
    role = "user" if kind == "user" else "assistant"
    return Message(id=uuid, speaker="user" if role == "user" else "Claude Code", text=text,
                   created_at=_time(record.get("timestamp")), session=1, line=line,
                   role=role, context=role != "user",
                   origin=_origin("claude-code", name, session, "", cwd=record.get("cwd")))


def _first_words(messages: list[Message]) -> str:
    first = next((m.text for m in messages if not m.context), "")
    return " ".join(first.split()[:12])


# Codex wraps an image a person gave in text blocks of their own (`<image>`, `</image>`,
# `<image name=[Image #1]>`): the harness's markup around it, not words said.
_IMAGE_TAG = re.compile(r"^\s*</?image\b[^>]*>\s*$", re.IGNORECASE)
_CODEX_NOT_SAID = re.compile(r"^\s*(<environment_context>|<user_instructions>|<INSTRUCTIONS>|"
                             r"# AGENTS\.md instructions|<user_shell_command>|<turn_aborted>|"
                             r"<ide_context>)")


def _codex(stream: IO[bytes], name: str, private: Redactor,
           progress: Callable[[int], None] | None) -> Iterator[Item]:
    """One Codex session file, as one conversation."""
    key, start, cwd = "", None, None
    said: list[Message] = []
    events: list[Message] = []   # event_msg user_message: only when no response item has them
    for number, record in _lines(stream, name, progress):
        if isinstance(record, Broken):
            yield record
            continue
        kind = record.get("type")
        payload = as_dict(record.get("payload"))
        if "payload" not in record:      # the older layout: the record is the item itself
            payload, kind = record, ("session_meta" if "instructions" in record
                                     and "id" in record else "response_item")
        when = _time(record.get("timestamp")) or _time(payload.get("timestamp"))
        if kind == "session_meta":
            key = key or str(payload.get("id") or "")
            start = start or when
            cwd = cwd or payload.get("cwd")
            continue
        session = key or PurePath(name).stem
        if kind == "response_item" and payload.get("type") == "message":
            message = codex_message(payload, f"{session}:{number}", when, name, session,
                                     private, number, cwd)
            if message is not None:
                said.append(message)
        elif kind == "event_msg" and payload.get("type") == "user_message" and \
                isinstance(payload.get("message"), str):
            text = _clean(payload["message"], private)
            if text and not _CODEX_NOT_SAID.match(text):
                events.append(Message(id=f"{session}:{number}", speaker="user", text=text,
                                      created_at=when, session=1, line=number, role="user",
                                      origin=_origin("codex", name, session, "", cwd=cwd)))
    if not any(not m.context for m in said):
        said = sorted([*said, *events], key=lambda m: m.line)
    key = key or PurePath(name).stem
    title = _first_words(said) or key
    yield _finish(key, title, name, [replace(m, origin={**(m.origin or {}), "conversation": key,
                                                        "title": title}) for m in said],
                  start=start)


def codex_message(payload: dict, mid: str, when: datetime | None, name: str, session: str,
                  private: Redactor, line: int, cwd: Any) -> Message | None:
    """The message of one Codex ``response_item`` of type ``message`` (``payload``), or
    None (a developer or system message, the harness's own user message, no text)."""
    role = payload.get("role")
    if role not in ("user", "assistant"):
        return None                      # developer and system messages: the harness's
    content = payload.get("content")
    attached: list[str] = []
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in ("input_image", "image", "output_image"):
                attached.append("an image")          # noted, never read
            elif kind in ("input_text", "output_text", "text") and \
                    isinstance(block.get("text"), str) and not _IMAGE_TAG.match(block["text"]):
                texts.append(block["text"])
    else:
        return None
    raw = "\n".join(texts)
    if role == "user" and _CODEX_NOT_SAID.match(raw):
        return None
    text = _clean(raw, private)
    if not text:
        return None
    return Message(id=mid, speaker="user" if role == "user" else "Codex", text=text,
                   created_at=when, session=1, line=line, role=role, context=role != "user",
                   origin=_origin("codex", name, session, "", cwd=cwd, attachments=attached))


# ---------------------------------------------------------------- the hooks' turns

def turns_text(header: dict, messages: Iterable[Message]) -> str:
    """A turns file (``services.hooks``): a header line, then one message a line, each
    already filtered for privacy."""
    lines = [json.dumps({"scene_engine_turns": 1, **header}, ensure_ascii=False)]
    for m in messages:
        lines.append(json.dumps({
            "id": m.id, "speaker": m.speaker, "role": m.role, "text": m.text,
            "created_at": m.created_at.isoformat() if m.created_at else None,
            "context": m.context, "origin": m.origin}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _turns(stream: IO[bytes], name: str, private: Redactor,
           progress: Callable[[int], None] | None) -> Iterator[Item]:
    header: dict = {}
    messages = []
    for number, record in _lines(stream, name, progress):
        if isinstance(record, Broken):
            yield record
            continue
        if "scene_engine_turns" in record:
            header = record
            continue
        text = _clean(str(record.get("text") or ""), private)   # filtered again: cheap, sure
        if not text or not isinstance(record.get("id"), str):
            continue
        messages.append(Message(
            id=record["id"], speaker=str(record.get("speaker") or "user"), text=text,
            created_at=_time(record.get("created_at")), session=1, line=number,
            role=record.get("role") if isinstance(record.get("role"), str) else None,
            context=bool(record.get("context")),
            origin=record.get("origin") if isinstance(record.get("origin"), dict) else None))
    key = str(header.get("session") or PurePath(name).stem)
    yield _finish(key, str(header.get("title") or key), name, messages)
