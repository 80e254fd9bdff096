"""L1 memories: all-or-nothing input validation and the append-only journal.

The journal lives in ``memories/`` as JSONL segments of ``SEGMENT`` records each
(``00000.jsonl`` holds numbers 0-999, ...). A memory's number (``seq``) fixes its segment and
line, so taking the next batch reads one or two segments: its cost follows the batch, not the
history. Segments are rewritten whole by temp file + rename, so a crash never leaves half a line.

A memory is its content and instant together with its scope, role and type (``kind``;
docs/DESIGN.md "Command line", memory input): two records agreeing on all of them are one memory (the second
id kept as an alias), and a known id is never given to another memory (the input is refused).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from scene_engine.core.errors import InputError
from scene_engine.core.fs import atomic_write_text
from scene_engine.core.plural import count
from scene_engine.store.layout import StoreError

SEGMENT = 1000
MAX_CONTENT_CHARS = 10_000
MAX_ID_CHARS = 200
MAX_METADATA_CHARS = 10_000   # a memory's metadata, as JSON text
MAX_METADATA_DEPTH = 32       # objects and lists inside one another in it
# Control characters (tab and line ends aside): a terminal escape in a memory would reach every
# `scenes show`, and the sandbox refuses NUL in a scene. One rule for every way text comes in.
# C0 (but tab and line ends), DEL and C1 (but NEL, a line end): U+009B opens a terminal
# escape as ESC [ does.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
FIELDS = {"id", "content", "created_at", "role", "type", "scope", "metadata"}


# Where a record is in the input: its line (JSONL, or a syntax error) or a label naming it
# ("record 2", "record 2 (line 5)": a JSON list's records, which may share a line).
Place = int | str


def place_text(place: Place) -> str:
    """``place`` as a person reads it: ``line 3`` for a line number, a label as it is."""
    return place if isinstance(place, str) else f"line {place}"


class MemoryInputError(InputError):
    """The input was refused whole. ``problems`` is a list of ``(place, message)``, a place
    a line number or a record's label (``Place``)."""

    def __init__(self, problems: Sequence[tuple[Place, str]]):
        self.problems = list(problems)
        shown = "\n".join(f"  {place_text(where)}: {msg}" for where, msg in problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(f"input refused, nothing added ({count(len(problems), 'problem')}):\n"
                         f"{shown}{more}")


@dataclass(frozen=True, slots=True)
class Memory:
    """One L1 memory. ``created_at`` is timezone-aware; ``seq`` is its journal number;
    ``aliases``: other ids the same record came with (the same content at the same instant,
    scope, role and type under another id, collapsed into this one and known from then on)."""

    id: str
    content: str
    created_at: datetime
    seq: int = -1
    role: str | None = None
    type: str | None = None
    scope: str | None = None
    metadata: dict | None = None
    aliases: tuple[str, ...] = ()
    # Extracted from a conversation (format 2, ``extraction``): None / empty for added ones.
    title: str | None = None
    sources: tuple[str, ...] = ()          # ids of the messages that support it
    relations: tuple[dict, ...] = ()       # {"type": same_as|supersedes|conflicts_with, "target"}
    status: str | None = None              # as written; later changes are events (review.py)
    extractor_version: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The JSON object stored in the journal (absent optional fields left out)."""
        record = {"seq": self.seq, "id": self.id, "content": self.content,
                  "created_at": self.created_at.isoformat()}
        for key in ("role", "type", "scope", "metadata"):
            if getattr(self, key) is not None:
                record[key] = getattr(self, key)
        if self.aliases:
            record["aliases"] = list(self.aliases)
        for key in ("title", "status", "extractor_version"):
            if getattr(self, key) is not None:
                record[key] = getattr(self, key)
        if self.sources:
            record["sources"] = list(self.sources)
        if self.relations:
            record["relations"] = [dict(r) for r in self.relations]
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Memory:
        """Inverse of ``to_record``."""
        return cls(id=record["id"], content=record["content"],
                   created_at=datetime.fromisoformat(record["created_at"]), seq=record["seq"],
                   role=record.get("role"), type=record.get("type"), scope=record.get("scope"),
                   metadata=record.get("metadata"), aliases=tuple(record.get("aliases") or ()),
                   title=record.get("title"), sources=tuple(record.get("sources") or ()),
                   relations=tuple(record.get("relations") or ()), status=record.get("status"),
                   extractor_version=record.get("extractor_version"))


# ---------------------------------------------------------------- input parsing

def parse_input(data: bytes, now: datetime | None = None, private=None) -> list[Memory]:
    """Parse a JSON list or JSONL of memory objects; validate every record first.

    Returns the memories (``seq`` unset) in input order. Raises ``MemoryInputError`` with the
    line number of every bad record (not an object, missing/empty/over-long content, bad
    date, wrong types, unknown fields, invalid UTF-8, invalid JSON, an id given twice for two
    different memories); then nothing is added. ``private``: the ``core.privacy.Redactor``
    that takes private spans and secret lines out of each content first (None: the built-in
    patterns; a store passes its own, ``Config.redactor``); a content that was nothing else
    is refused.
    """
    return [memory for _, memory in parse_lines(data, now, private)]


def parse_lines(data: bytes, now: datetime | None = None, private=None
                ) -> list[tuple[Place, Memory]]:
    """``parse_input`` with the place of each memory's record: ``[(place, Memory)]``, its line
    in JSONL, ``record N`` in a JSON list (with its line when the list spans lines), so a
    problem found later, against the journal, can name the record too. Raises as
    ``parse_input``."""
    from scene_engine.core.privacy import redactor

    now = now or datetime.now(UTC)
    private = private if private is not None else redactor()
    if _reads_as_jsonl(data):
        return _checked(_jsonl_records(data), now, private.text)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryInputError([_not_utf8(data, exc.start)]) from exc
    text = text.removeprefix("\ufeff")
    unreadable: list[tuple[Place, str]] = []     # JSONL lines that are no JSON
    items = _placed(text, _split_records(text, unreadable))
    if not items and not unreadable:   # `[]`, as an empty file: a mistake, not a no-op
        raise MemoryInputError([(1, "input is an empty JSON list: give at least one memory")])
    # A lone surrogate can only come in as a JSON escape (UTF-8 cannot carry one): without
    # such an escape in the text no record needs the per-record check.
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    return _checked(((place, value, surrogates, None) for place, value in items), now,
                    private.text, unreadable)


def _checked(records: Iterable[tuple[Place, Any, bool, str | None]], now: datetime,
             private: Callable[[str], str], unreadable: list[tuple[Place, str]] | None = None
             ) -> list[tuple[Place, Memory]]:
    """``parse_lines``'s memories of ``records``: ``(place, decoded value, whether its text
    holds a surrogate escape, the problem that kept it from being decoded)``, each validated
    as it comes (a record's decoded object is not kept: issue 39, an add of 100,000 lines in
    bounded memory). Raises ``MemoryInputError`` naming every bad record, in the file's
    order."""
    problems: list[tuple[Place, str]] = list(unreadable or [])
    lined: list[tuple[Place, Memory]] = []
    first_line: dict[str, int] = {}      # id -> where in ``lined`` it first came
    for place, value, surrogates, unread in records:
        if unread is not None:
            problems.append((place, unread))
            continue
        try:
            memory = _validate(value, now, surrogates, private)
        except ValueError as exc:
            problems.append((place, str(exc)))
            continue
        at = first_line.setdefault(memory.id, len(lined))
        if at < len(lined) and (difference := differs(kind(lined[at][1]), kind(memory))):
            # One id for two different memories: keeping either would silently lose the other.
            problems.append((place, f"id {memory.id!r} was already used on "
                                   f"{place_text(lined[at][0])} for {difference}"))
        lined.append((place, memory))
    if problems:
        # JSONL's places are its lines: every bad record in the order of the file.
        raise MemoryInputError(sorted(problems, key=lambda p: _line_of(p[0])))
    return lined


_BOM = b"\xef\xbb\xbf"


def _reads_as_jsonl(data: bytes) -> bool:
    """True when ``data`` is read as JSONL line by line (``_jsonl_records``), as the whole
    text would be: its first line that is not blank is a JSON value on its own, not a list
    (a list, or an object spread over lines, is read whole)."""
    for _, _, line in _byte_lines(data):
        try:
            first = line.decode("utf-8").strip()
        except UnicodeDecodeError:
            return False         # the whole text's reading names the byte
        if not first:
            continue
        if first.startswith("["):
            return False
        try:
            json.loads(first)
        except (ValueError, RecursionError):
            return not first.startswith("{")   # "{" alone: maybe an object over lines
        return True
    return False


def _byte_lines(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(line number from 1, offset of the line's first byte, the line) of ``data`` (a BOM at
    its start left out), split at ``\n`` only, as JSONL is."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    number = 1
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        yield number, start, data[start:end]
        start, number = end + 1, number + 1


def _not_utf8(data: bytes, at: int) -> tuple[int, str]:
    """(line, problem) for input ``data`` whose bytes from ``at`` (from 0) are not UTF-8:
    the byte counted in its line from 1, and a hint for a file saved as UTF-16."""
    line_start = data.rfind(b"\n", 0, at) + 1
    said = (f"invalid UTF-8 at byte {at - line_start + 1} of the line (byte {at + 1} of the "
            "input)")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:200].count(b"\x00") * 3 > \
            len(data[:200]):
        said += "; the file looks like UTF-16: save it as UTF-8"
    return data.count(b"\n", 0, at) + 1, said


def _jsonl_records(data: bytes) -> Iterator[tuple[Place, Any, bool, str | None]]:
    """``_checked``'s records of JSONL ``data``, a line at a time: each line decoded on its
    own (the first bytes that are not UTF-8 raise ``MemoryInputError`` with their line and
    offset, as the whole text's decoding does), blank lines skipped."""
    for number, offset, raw in _byte_lines(data):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MemoryInputError([_not_utf8(data, offset + exc.start)]) from exc
        if not line.strip():
            continue
        try:
            yield number, _decoder().decode(line), \
                _SURROGATE_ESCAPE.search(line) is not None, None
        except json.JSONDecodeError as exc:
            yield number, None, False, f"not valid JSON: {exc.msg} (column {exc.colno})"
        except ValueError as exc:   # a key twice in one record (_unique_keys)
            yield number, None, False, str(exc)
        except RecursionError:
            yield number, None, False, TOO_DEEP


def _line_of(place: Place) -> int:
    """The line a place names (a JSONL line, or a JSON list's record's line), for order."""
    if isinstance(place, int):
        return place
    found = re.search(r"line (\d+)", place) or re.search(r"(\d+)", place)
    return int(found.group(1)) if found else 0


# What a memory is, besides its instant: its words and who sees it, said it, what kind it is.
# The same words at the same instant under another scope (or role, or type) are another memory:
# collapsing them would hide the second from its own scope's search and recall.
KIND_FIELDS = ("scope", "role", "type")


def kind(memory: Memory | dict) -> tuple:
    """``(content, scope, role, type)`` of a memory or of its journal record: with its instant,
    the identity of a memory (two records agreeing on all five are one memory)."""
    if isinstance(memory, dict):
        return (memory["content"], *(memory.get(key) for key in KIND_FIELDS))
    return (memory.content, *(getattr(memory, key) for key in KIND_FIELDS))


def differs(kept: tuple, given: tuple) -> str | None:
    """How the memory ``given`` (a ``kind``) differs from ``kept``, as words for a message
    ("a different content", "another scope ('travel' there, none here)"), or None."""
    if kept[0] != given[0]:
        return "a different content"
    for key, there, here in zip(KIND_FIELDS, kept[1:], given[1:], strict=True):
        if there != here:
            return (f"another {key} ({'none' if there is None else repr(there)} there, "
                    f"{'none' if here is None else repr(here)} here)")
    return None


def _placed(text: str, records: list[tuple[int, Any]]) -> list[tuple[Place, Any]]:
    """``records`` (``_split_records``'s) with each one's place: a JSON list's records by
    their number (``record 2``; with the line when the list spans lines, where records may
    still share one), JSONL's by their line, which is the record."""
    if not text.lstrip().startswith("["):
        return list(records)
    one_line = len({line for line, _ in records}) == 1
    return [(f"record {n}" if one_line else f"record {n} (line {line})", value)
            for n, (line, value) in enumerate(records, start=1)]


def _split_records(text: str, problems: list | None = None) -> list[tuple[int, Any]]:
    """(line, decoded value) for each record of a JSON list or of JSONL. A JSONL line that
    is no JSON is raised as ``MemoryInputError``, or, given ``problems``, appended there as
    (line, message) and the other lines read on (so one refusal names every bad record)."""
    stripped = text.lstrip()
    if not stripped:
        raise MemoryInputError([(1, "input is empty: give a JSON list or JSONL of memories")])
    if stripped.startswith("["):
        return _split_json_list(text)
    if stripped.startswith("{"):
        whole = _one_object(text)
        if whole is not None:         # one object, pretty-printed over several lines
            return [whole]
    records: list[tuple[int, Any]] = []
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):  # JSONL: only \n ends a line
        if not line.strip():
            continue
        try:
            records.append((number, _decoder().decode(line)))
        except json.JSONDecodeError as exc:
            found.append((number, f"not valid JSON: {exc.msg} (column {exc.colno})"))
        except ValueError as exc:   # a key twice in one record (_unique_keys)
            found.append((number, str(exc)))
        except RecursionError:
            found.append((number, TOO_DEEP))
    if found and problems is None:
        raise MemoryInputError(found)
    if problems is not None:
        problems.extend(found)
    return records


TOO_DEEP = "nested too deeply: a memory is one JSON object of plain fields"


def _one_object(text: str) -> tuple[int, Any] | None:
    """(line, object) when ``text`` is exactly one JSON object (over one line or several),
    else None (JSONL, or not JSON: the line-by-line reading says what is wrong)."""
    start = len(text) - len(text.lstrip())
    if "\n" not in text.strip():
        return None                   # one line: JSONL's reading is the same and says more
    try:
        value, end = _decoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    if text[end:].strip():
        return None                   # more after it: JSONL
    return text.count("\n", 0, start) + 1, value


def _split_json_list(text: str) -> list[tuple[int, Any]]:
    """Decode a JSON list element by element so each record keeps its line number."""
    decoder = _decoder()
    pos = text.index("[") + 1
    records = []
    comma = False

    counted = [0, 1]     # (index, its line): each record's line counted on from the last
    # one's (counting from the start each time made a list of 100,000 records quadratic)

    def line_at(index: int) -> int:
        start, line = counted
        if index < start:
            return text.count("\n", 0, index) + 1
        counted[:] = [index, line + text.count("\n", start, index)]
        return counted[1]

    while True:
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            raise MemoryInputError([(line_at(pos), "JSON list is not closed with ]")])
        if text[pos] == "]":
            if comma:   # JSON allows no trailing comma; a record may be missing
                raise MemoryInputError([(line_at(pos), "a comma before ] (a record missing?)")])
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise MemoryInputError([(exc.lineno, f"not valid JSON: {exc.msg} "
                                                 f"(column {exc.colno})")]) from exc
        except ValueError as exc:   # a key twice in one record (_unique_keys)
            raise MemoryInputError([(line_at(pos), str(exc))]) from exc
        except RecursionError:
            raise MemoryInputError([(line_at(pos), TOO_DEEP)]) from None
        records.append((line_at(pos), value))
        pos = _skip_ws(text, end)
        comma = pos < len(text) and text[pos] == ","
        if comma:
            pos += 1
        elif pos < len(text) and text[pos] != "]":
            raise MemoryInputError([(line_at(pos), "expected , or ] between records")])
    rest = _skip_ws(text, pos + 1)
    if rest < len(text):
        raise MemoryInputError([(line_at(rest), "text after the closing ]")])
    return records


MAX_NUMBER_DIGITS = 1000   # a number in a record (Python itself stops at 4,300 digits)


def _not_json(token: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity``: Python's JSON reads them, JSON has no such
    value, and a journal line holding one is not JSON for any other reader."""
    raise ValueError(f"{token} is not a JSON value (JSON has no NaN or Infinity)")


def _whole_number(text: str) -> int:
    """An integer of a record, refused past ``MAX_NUMBER_DIGITS`` digits (Python's own
    refusal told a person to call ``sys.set_int_max_str_digits``)."""
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-')):,} digits; a memory holds "
                         f"numbers of at most {MAX_NUMBER_DIGITS:,}")
    return int(text)


def _decoder() -> json.JSONDecoder:
    """The JSON reader of memory input: a key twice, NaN, Infinity and endless numbers
    refused (``ValueError``)."""
    return json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_not_json,
                            parse_int=_whole_number)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object, refusing a key given twice (JSON keeps the last one silently)."""
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"key {key!r} appears twice in one record")
        found[key] = value
    return found


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_kind(value: Any) -> str:
    """The JSON name of a decoded value's type (a person wrote JSON, not Python)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _validate(value: Any, now: datetime, surrogates: bool = True,
              clean: Callable[[str], str] | None = None) -> Memory:
    """One record -> Memory, or ``ValueError`` saying what is wrong with it. ``surrogates``:
    whether the record may hold a lone surrogate (checked only then); ``clean``: takes what
    may not be kept out of the content (``core.privacy``), before anything else sees it."""
    if not isinstance(value, dict):
        raise ValueError(f"a memory must be a JSON object, got {_json_kind(value)}")
    unknown = sorted(set(value) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted(FIELDS))}")
    try:  # JSON escapes can smuggle in lone surrogates, which no UTF-8 journal can hold
        if surrogates:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text contains a lone surrogate (invalid Unicode) "
                         f"{exc.object[exc.start:exc.end]!r}") from exc
    content = value.get("content")
    if not isinstance(content, str):
        raise ValueError("`content` is required and must be text")
    # One text, one form: the same words typed on macOS (NFD) and elsewhere (NFC) are the
    # same memory, and the journal keeps the composed form.
    content = unicodedata.normalize("NFC", content.strip())
    if not content:
        raise ValueError("`content` is empty")
    if all(c.isspace() or unicodedata.category(c) == "Cf" for c in content):
        # Zero-width spaces and the like only: a memory no one can see.
        raise ValueError("`content` is only invisible characters (zero-width spaces, "
                         "joiners or marks)")
    if clean is not None:
        content = clean(content)
        if not content:
            raise ValueError("`content` is only private text (a <private> span or a line "
                             "with a secret): nothing of it may be kept")
    if len(content) > MAX_CONTENT_CHARS:
        raise ValueError(f"`content` has {len(content)} characters; at most {MAX_CONTENT_CHARS}")
    control = CONTROL_CHARS.search(content)
    if control:   # a terminal escape in a memory would reach every `scenes show`
        raise ValueError(f"`content` contains the control character "
                         f"U+{ord(control.group()):04X} at position {control.start()}")
    created = _parse_time(value.get("created_at"), now)
    for key in ("role", "type", "scope"):
        problem = label_problem(value.get(key), key)
        if problem:
            raise ValueError(problem)
    if value.get("metadata") is not None and not isinstance(value["metadata"], dict):
        raise ValueError("`metadata` must be an object")
    if value.get("metadata") and _nested_deeper(value["metadata"], MAX_METADATA_DEPTH):
        # Before anything walks it by recursion (the JSON encoder, when the journal is
        # written): such a record failed a write half done, with a traceback.
        raise ValueError(f"`metadata` is nested more than {MAX_METADATA_DEPTH} levels deep; "
                         "keep it to a few plain fields")
    if value.get("metadata") and len(json.dumps(value["metadata"], ensure_ascii=False)) \
            > MAX_METADATA_CHARS:
        raise ValueError(f"`metadata` is over {MAX_METADATA_CHARS} characters as JSON; keep "
                         "large data elsewhere and put a reference here")
    mem_id = value.get("id")
    if mem_id is None:
        mem_id = derived_id(content, created, *(value.get(key) for key in KIND_FIELDS))
    elif not isinstance(mem_id, str):
        raise ValueError(f"`id` must be text, not {_shown(mem_id)} (leave it out for a "
                         "derived id)")
    elif not mem_id.strip():
        raise ValueError("`id` must be non-empty text")
    elif len(mem_id) > MAX_ID_CHARS or re.search(r"[\x00-\x1f\x7f]", mem_id):
        raise ValueError(f"`id` must be at most {MAX_ID_CHARS} printable characters")
    return Memory(id=mem_id, content=content, created_at=created, role=value.get("role"),
                  type=value.get("type"), scope=value.get("scope"),
                  metadata=value.get("metadata"))


def _shown(value: Any) -> str:
    """A record's value as JSON writes it (``true``, not Python's ``True``), cut to 80
    characters."""
    said = json.dumps(value, ensure_ascii=False)
    return said if len(said) <= 80 else said[:77] + "..."


MAX_LABEL_CHARS = 200   # a scope, role or type


def label_problem(value: Any, key: str) -> str:
    """Why ``value`` cannot be a memory's ``key`` (scope, role or type), or "": text, not
    empty, no spaces at its ends (" tenantA" would be a scope no search for "tenantA"
    finds), no control characters, at most ``MAX_LABEL_CHARS``. None is fine: no such label
    (a memory every scope sees)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return f"`{key}` must be text"
    if not value.strip():
        return (f"`{key}` is empty: leave it out"
                + (" for a memory every scope sees" if key == "scope" else ""))
    if value != value.strip():
        return f"`{key}` {value!r} has spaces at its ends: give it as {value.strip()!r}"
    if len(value) > MAX_LABEL_CHARS or CONTROL_CHARS.search(value) or "\n" in value:
        return f"`{key}` must be at most {MAX_LABEL_CHARS} printable characters on one line"
    return ""


def derived_id(content: str, created: datetime, scope: str | None = None,
               role: str | None = None, type: str | None = None) -> str:
    """The id of a record given without one: ``m-`` and a hash of what makes the memory
    (``kind``) and its instant. Scope, role and type count only when given, so a record with
    none of them keeps the id it always had (re-adding an old file adds nothing)."""
    parts = [content, created.isoformat()]
    parts += [f"{key}={value}" for key, value in zip(KIND_FIELDS, (scope, role, type),
                                                     strict=True) if value is not None]
    return f"m-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}"


# Instants a memory may carry: any zone's local day of them exists (year 9999 in Tokyo is
# past what a date can hold, and folding it into a dated line failed).
EARLIEST, LATEST = datetime(2, 1, 1, tzinfo=UTC), datetime(9998, 12, 31, tzinfo=UTC)


def _parse_time(value: Any, now: datetime) -> datetime:
    """ISO-8601 text or epoch seconds -> aware datetime (naive values are taken as UTC),
    within ``EARLIEST..LATEST``."""
    if value is None:
        return now
    when = _parsed_time(value)
    if not EARLIEST <= when <= LATEST:
        raise ValueError(f"`created_at` {value!r} is out of range: give a time between the "
                         f"years {EARLIEST.year} and {LATEST.year}")
    return when


def _parsed_time(value: Any) -> datetime:
    if isinstance(value, bool):
        raise ValueError("`created_at` must be ISO-8601 text or epoch seconds, not a boolean")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"`created_at` {value} is out of range") from exc
    if not isinstance(value, str):
        raise ValueError("`created_at` must be ISO-8601 text or epoch seconds")
    try:
        # RFC 3339 allows a lower-case separator and zone letter.
        parsed = datetime.fromisoformat(re.sub(r"(?<=\d)t(?=\d)", "T", value.strip())
                                        .replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"`created_at` {value!r} is not an ISO-8601 date") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# ---------------------------------------------------------------- journal

@dataclass(frozen=True)
class AddReport:
    """What ``Journal.append`` did: ``added`` new memories, ``known`` ids skipped (the same
    memory sent again), ``duplicates`` records with the same content at the same instant, in
    the same scope, role and type, as another, collapsed into it (their ids are recorded as
    aliases, so adding the same file again adds nothing). ``same_as``: ``(id given, id of the
    memory kept)`` for each record skipped or collapsed. ``conflicts``: ``(position in the
    input, message)`` for each known id sent with another memory; those are not added (a
    memory is never rewritten), and ``engine.add_memories`` refuses the whole input for them.
    ``ids``: the ids of the memories added, in order; ``commit``: the add's commit ("" when
    nothing was written), both set by ``services.add``. ``known_ids``: the ids skipped as
    known (the ``known`` of them)."""

    added: int
    known: int
    duplicates: int
    same_as: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[tuple[int, str], ...] = ()
    known_ids: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    commit: str = ""


class Journal:
    """The append-only journal under ``memories/`` (see the module docstring)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _segment(self, number: int) -> Path:
        return self.folder / f"{number:05d}.jsonl"

    def _rows(self, number: int) -> list[tuple[int, str]]:
        """``journal_rows`` of segment ``number`` ([] when it does not exist)."""
        path = self._segment(number)
        if not path.exists():
            return []
        return journal_rows(path.read_bytes())

    def _read_segment(self, number: int) -> list[str]:
        return [line for _, line in self._rows(number)]

    def _records(self, skip_markers: bool = False):
        """(segment number, offset, record) of every journal line, in order; raises
        ``JournalError`` at the first line that is not a whole record. ``skip_markers``:
        a git conflict marker line is no record and is passed over (``scenes repair``, which
        keeps both sides of a merge)."""
        for path in sorted(self.folder.glob("*.jsonl")):
            for offset, (number, line) in enumerate(journal_rows(path.read_bytes())):
                if skip_markers and CONFLICT_MARKER.match(line):
                    continue
                yield int(path.stem), offset, _record(path, offset, line, number)

    def conflict_markers(self) -> list[str]:
        """``memories/NNNNN.jsonl line N`` of each git conflict marker line in the journal
        (``<<<<<<<``, ``=======``, ``>>>>>>>``, ``|||||||``): what a merge of two copies left
        when the person committed it as it was."""
        found = []
        for path in sorted(self.folder.glob("*.jsonl")):
            found += [f"{_rel(path)} line {number}" for number, line in
                      journal_rows(path.read_bytes()) if CONFLICT_MARKER.match(line)]
        return found

    def intact(self) -> tuple[list[Memory], list[str]]:
        """(every memory whose line is a whole record, in journal order; a ``bad_line``
        message for each line that is not): for a reader that can answer without the
        memories it cannot read, and must say which (``doctor``)."""
        memories, problems = [], []
        for path in sorted(self.folder.glob("*.jsonl")):
            for number, line in journal_rows(path.read_bytes()):
                try:
                    memories.append(Memory.from_record(parse_record(line)))
                except ValueError as exc:
                    problems.append(bad_line(_rel(path), number, str(exc)))
        return memories, problems

    def known_ids(self) -> dict[str, str]:
        """Every id in the journal, aliases included, with its content (reads it all: used by
        ``add`` and ``trace``, not by batches)."""
        ids = {}
        for _, _, record in self._records():
            for memory_id in (record["id"], *(record.get("aliases") or ())):
                ids[memory_id] = record["content"]
        return ids

    def find(self, memory_id: str) -> Memory | None:
        """The memory with this id or alias, or None (reads the whole journal). Raises
        ``JournalError`` naming the first line that is not a whole record when no readable
        line has it (it may be on that line)."""
        memories, unread = self.intact()
        for memory in memories:
            if memory_id == memory.id or memory_id in memory.aliases:
                return memory
        if unread:
            raise JournalError(unread[0])
        return None

    def plan_append(self, memories: list[Memory], next_seq: int, catalog=None,
                    own: bool = False) -> tuple[list[Memory], AddReport, Mapping[Path, str]]:
        """What appending ``memories`` at ``next_seq`` makes: (the new memories with their
        ``seq``, the counts, segment path -> its whole new text). Writes nothing.

        A record with the same content at the same instant, in the same scope, role and type
        (``kind``), as one already in the journal or earlier in the input is the same memory:
        its id becomes an alias of that one (known from then on, so adding the same file again
        adds nothing). The same fact restated at another time, or under another scope, is
        another memory and kept. A known id sent with another memory is a conflict (reported,
        never written).

        ``catalog``: an index in step with the journal (``index.SceneIndex`` just synced, with
        ``known_memory_places`` and ``memory_places``) that says where just these memories'
        ids and facts are; without it (or when a place it gives does not hold what it said)
        the whole journal is read (and checked: a torn line raises ``JournalError``).
        ``own``: ``memories`` are the caller's to give up (parsed for this add alone): the new
        ones are numbered in place, not copied (a copy each was 14 MB at 100,000: issue 39).
        """
        looked_up = self._from_catalog(memories, catalog) if catalog is not None else None
        found, where = looked_up or self._catalogue()
        # id -> (id of its memory, ``kind``), or a new memory's place in ``fresh`` (``_known``)
        known = cast("dict[str, tuple[str, tuple] | int]", found)
        fresh: list[Memory] = []
        first: dict[tuple, int] = {}                    # identity -> index in fresh
        aliases: dict[tuple[int, int], list[str]] = {}  # journal line -> ids to add
        skipped = dupes = 0
        known_ids: list[str] = []
        same_as: list[tuple[str, str]] = []
        conflicts: list[tuple[int, str]] = []
        for position, memory in enumerate(memories):
            if memory.id in known:
                kept_id, kept_kind = _known(known[memory.id], fresh)
                difference = differs(kept_kind, kind(memory))
                if difference:
                    conflicts.append((position, (
                        f"id {memory.id!r} is already known with {difference}; a memory is "
                        "never rewritten: give this one a new id")))
                else:
                    skipped += 1
                    known_ids.append(memory.id)
                    same_as.append((memory.id, kept_id))
                continue
            key = (memory.created_at, *kind(memory))
            place = next((p for p, other in where.get((memory.content, memory.created_at), ())
                          if other == kind(memory)), None)
            if key in first:
                kept = fresh[first[key]]
                fresh[first[key]] = replace(kept, aliases=(*kept.aliases, memory.id))
                kept_id = kept.id
            elif place is not None:
                aliases.setdefault(place[0], []).append(memory.id)
                kept_id = place[1]
            else:
                first[key] = len(fresh)
                known[memory.id] = len(fresh)      # its place in fresh: no tuple held a memory
                fresh.append(_with_seq(memory, next_seq + len(fresh), own))
                continue
            known[memory.id] = (kept_id, kind(memory))
            same_as.append((memory.id, kept_id))
            dupes += 1
        writes = self._segment_texts(fresh, aliases)
        return fresh, AddReport(added=len(fresh), known=skipped, duplicates=dupes,
                                same_as=tuple(same_as), conflicts=tuple(conflicts),
                                known_ids=tuple(known_ids)), writes

    def _catalogue(self) -> tuple[dict[str, tuple[str, tuple]], dict[tuple, list]]:
        """Every id and alias with (the id of its memory, its ``kind``), and for each (content,
        instant) the records stating it: ``[((segment, line), id), kind]``."""
        known: dict[str, tuple[str, tuple]] = {}
        where: dict[tuple, list] = {}
        for number, offset, record in self._records():
            found = (record["id"], kind(record))
            for memory_id in (record["id"], *(record.get("aliases") or ())):
                known[memory_id] = found
            where.setdefault((record["content"], datetime.fromisoformat(record["created_at"])),
                             []).append((((number, offset), record["id"]), found[1]))
        return known, where

    def _from_catalog(self, memories: list[Memory], catalog):
        """``_catalogue`` for just ``memories``, from the places ``catalog`` gives, each read
        from its journal line; None when a line does not hold what the index said (the index
        lags a hand edit: the caller reads the whole journal)."""
        places = catalog.known_memory_places(sorted({m.id for m in memories}))
        facts = catalog.memory_places(sorted({(m.content, m.created_at) for m in memories},
                                             key=lambda f: (f[0], f[1].timestamp())))
        segments: dict[int, list[str]] = {}

        def record_at(place: tuple[int, int]) -> dict | None:
            number, offset = place
            if number not in segments:    # read once (not at every record: 115 s to add
                segments[number] = self._read_segment(number)   # 100,000 known ids again)
            lines = segments[number]
            return _record(self._segment(number), offset, lines[offset]) \
                if offset < len(lines) else None

        known = {}
        for memory_id, place in places.items():
            record = record_at(place)
            if record is None or memory_id not in (record["id"], *(record.get("aliases") or ())):
                return None
            known[memory_id] = (record["id"], kind(record))
        where: dict[tuple, list] = {}
        for fact, spots in facts.items():
            for place in spots:
                record = record_at(place)
                if record is None or (record["content"], datetime.fromisoformat(
                        record["created_at"])) != fact:
                    return None
                where.setdefault(fact, []).append(((place, record["id"]), kind(record)))
        return known, where

    def _segment_texts(self, fresh: list[Memory], aliases: dict[tuple[int, int], list[str]]
                       ) -> Mapping[Path, str]:
        """Segment path -> its whole new text: the lines it holds (checked here, aliases
        added) and ``fresh``'s records. A segment's text is made when it is read, one at a
        time (issue 39: 100,000 memories added at once held every segment's text, 30 MB)."""
        new: dict[int, list[Memory]] = {}
        for memory in fresh:
            # Said here, not kept: a record JSON cannot write (metadata nested too deep for
            # the encoder) fails the plan, before any segment is written.
            json.dumps(memory.to_record(), ensure_ascii=False)
            new.setdefault(memory.seq // SEGMENT, []).append(memory)
        made: dict[Path, Callable[[], str]] = {}
        for number in sorted(set(new) | {n for n, _ in aliases}):
            rows = self._rows(number)
            for line_number, line in rows:   # written back as they are: they must be text
                if _NOT_UTF8.search(line):
                    raise JournalError(bad_line(_rel(self._segment(number)), line_number,
                                                "not UTF-8"))
            lines = [line for _, line in rows]
            for (seg, offset), ids in aliases.items():
                if seg == number:
                    record = json.loads(lines[offset])
                    record["aliases"] = [*(record.get("aliases") or []), *ids]
                    lines[offset] = json.dumps(record, ensure_ascii=False)
            made[self._segment(number)] = functools.partial(_segment_text, lines,
                                                            new.get(number, []))
        return _Made(made)

    @staticmethod
    def write(writes: Mapping[Path, str]) -> None:
        """Write planned segment texts, each atomically (temp file + rename)."""
        for path, text in writes.items():
            atomic_write_text(path, text)

    def append(self, memories: list[Memory], next_seq: int) -> tuple[list[Memory], AddReport]:
        """``plan_append`` then ``write``; returns the new memories and the counts."""
        fresh, report, writes = self.plan_append(memories, next_seq)
        self.write(writes)
        return fresh, report

    def read(self, seqs: list[int]) -> list[Memory]:
        """The memories with these numbers, in the order given; reads only their segments."""
        cache: dict[int, list[tuple[int, str]]] = {}
        result = []
        for seq in seqs:
            number = seq // SEGMENT
            if number not in cache:
                cache[number] = self._rows(number)
            rows = cache[number]
            offset = seq - number * SEGMENT
            if offset >= len(rows):
                raise KeyError(f"memory #{seq} is not in the journal")
            line_number, line = rows[offset]
            result.append(Memory.from_record(_record(self._segment(number), offset, line,
                                                     line_number)))
        return result

    def all(self) -> list[Memory]:
        """Every memory, in journal order."""
        return [Memory.from_record(record) for _, _, record in self._records()]


class JournalError(StoreError):
    """A journal line cannot be read; the message names the file, the line and the way back
    (the journal is in git)."""


def _record(path: Path, offset: int, line: str, number: int | None = None) -> dict:
    """One journal line as a record; ``JournalError`` (``bad_line``) naming the file and the
    line (``number``, its line in the file; default the ``offset``-th non-blank line) when it
    is not a whole one."""
    try:
        return parse_record(line)
    except ValueError as exc:
        raise JournalError(bad_line(_rel(path), number or offset + 1, str(exc))) from None


# A line git writes into a file both sides of a merge changed (``merge.conflictStyle`` diff3
# adds the ``|||||||`` one).
CONFLICT_MARKER = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?: |$)")
MARKER_REASON = "a git conflict marker left by a merge"


def parse_record(line: str) -> dict:
    """A journal line (as ``journal_rows`` gives it) as its record. Raises ``ValueError``
    saying, in a person's words, why it is not a whole memory record: a git conflict marker,
    not UTF-8, not JSON (cut short: where), JSON but not an object, or an object without a
    memory's fields."""
    if CONFLICT_MARKER.match(line):
        raise ValueError(MARKER_REASON)
    if _NOT_UTF8.search(line):
        raise ValueError("not UTF-8")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:   # its own "line 1" would contradict the file's
        said = exc.msg[:1].lower() + exc.msg[1:]
        raise ValueError(f"{said}{'' if said.endswith(' at') else ' at'} column "
                         f"{exc.colno}") from None
    if not isinstance(record, dict):
        raise ValueError(f"{_json_kind(record)}, not a JSON object")
    missing = [key for key in ("seq", "id", "content", "created_at") if key not in record]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    if not isinstance(record["seq"], int) or isinstance(record["seq"], bool) or \
            not all(isinstance(record[k], str) for k in ("id", "content", "created_at")):
        raise ValueError("a field of the wrong type")
    try:
        Memory.from_record(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None
    return record


def bad_line(rel: str, number: int, reason: str) -> str:
    """The one message for a journal line that is not a whole record, wherever it is read
    (``rel``: ``memories/00000.jsonl``; ``number``: its line in the file, from 1). A
    conflict marker says how to keep both sides (``scenes repair``); any other bad line how
    to bring back the committed file."""
    if reason == MARKER_REASON:
        return (f"{rel} line {number} is {reason} of two copies of this store: the memories "
                "of both sides are there; `scenes repair` keeps them all and drops the "
                "markers")
    return (f"{rel} line {number} is not a whole memory record ({reason}); the journal is in "
            f"git: `git checkout -- {rel}` brings back the last committed version")


def journal_rows(data: bytes) -> list[tuple[int, str]]:
    """(line number in the file, from 1; text) of each non-blank line of JSONL bytes (a
    journal segment, the extraction ledger). Only ``\\n`` ends a line: ``str.splitlines``
    would also split on U+2028, U+0085 and friends, which ``json.dumps`` leaves unescaped.
    A line that is not UTF-8 keeps its bytes as surrogate escapes (``parse_record`` names
    it): one bad line never makes the others unreadable."""
    text = data.decode("utf-8", "surrogateescape")
    return [(number, line) for number, line in enumerate(text.split("\n"), start=1)
            if line.strip()]


# A byte that is not UTF-8, as ``surrogateescape`` decodes it (valid UTF-8 never gives one).
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def _rel(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _lines(text: str) -> list[str]:
    """The non-blank lines of JSONL text (only ``\\n`` ends a line, see ``journal_rows``)."""
    return [line for line in text.split("\n") if line.strip()]


def _nested_deeper(value: Any, limit: int) -> bool:
    """True when ``value`` holds objects or lists more than ``limit`` levels inside one
    another (counted without recursion: any depth is answered)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _segment_text(lines: list[str], fresh: list[Memory]) -> str:
    """A journal segment's text: its ``lines`` as they are, then ``fresh``'s records."""
    return "\n".join([*lines, *(json.dumps(m.to_record(), ensure_ascii=False)
                                 for m in fresh)]) + "\n"


class _Made(Mapping[Path, str]):
    """``{path: text}`` whose texts are made when read (``Journal._segment_texts``)."""

    def __init__(self, made: dict[Path, Callable[[], str]]):
        self._made = made

    def __getitem__(self, path: Path) -> str:
        return self._made[path]()

    def __iter__(self) -> Iterator[Path]:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)


def _with_seq(memory: Memory, seq: int, own: bool = False) -> Memory:
    # A shallow copy with one field set: ``dataclasses.replace`` re-runs __init__ and costs
    # ten times as much, which shows when 10,000 memories are added at once. ``own``: the
    # memory is the caller's to give up (``plan_append``): numbered in place.
    copied = memory if own else copy.copy(memory)
    object.__setattr__(copied, "seq", seq)
    return copied


def _known(found: tuple[str, tuple] | int, fresh: list[Memory]) -> tuple[str, tuple]:
    """(id, ``kind``) of a known id's memory: ``found`` as ``plan_append``'s ``known`` holds
    it, a new memory by its place in ``fresh``."""
    if isinstance(found, int):
        return fresh[found].id, kind(fresh[found])
    return found
