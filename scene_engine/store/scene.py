"""Scene file model: a META header (YAML front matter or the older block form) plus a body.

docs/DESIGN.md "Scene file": the canonical form is YAML front matter between ``---`` lines; the reader
also accepts the block form between ``-----META-START-----`` and ``-----META-END-----``. Keys the
engine knows (``created``, ``updated``, ``summary``, ``heat``) are typed and come first; unknown
keys are kept in their original order. A header that cannot be read leaves the whole text as body,
warns with file and line, and is never rewritten (``render_scene`` refuses such a scene).

python-frontmatter's own ``loads`` strips the body and reports no line numbers, so the split is
done here; the YAML work uses python-frontmatter's choice of the (C-accelerated when available)
safe PyYAML loader and dumper.
"""

from __future__ import annotations

import copy
import functools
import re
import warnings
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from frontmatter.default_handlers import YAMLHandler

from scene_engine.core.errors import InputError, SceneEngineError

if TYPE_CHECKING:
    # python-frontmatter types its picks as variables (a class is no base for mypy); they are
    # PyYAML's C-accelerated safe classes when built, else these, with the same interface.
    from yaml import SafeLoader
else:
    from frontmatter.default_handlers import SafeLoader

MAX_HEAT = 2**63 - 1   # the largest whole number the index (SQLite) can hold

HeaderStyle = Literal["yaml", "block"]
KNOWN_KEYS = ("created", "updated", "summary", "heat")
YAML_DELIM = YAMLHandler.START_DELIMITER  # "---"
BLOCK_START = "-----META-START-----"
BLOCK_END = "-----META-END-----"
_OPENERS: dict[str, tuple[HeaderStyle, str]] = {YAML_DELIM: ("yaml", YAML_DELIM), BLOCK_START: ("block", BLOCK_END)}
# Characters YAML or our CRLF folding would treat as line breaks: such text stays double-quoted.
_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
PREAMBLE = "\0preamble"   # raw-text slot for comment lines before the first header key
BEFORE = "\0before:"      # + key: comment lines just before that key
EPILOGUE = "\0epilogue"   # comment lines after the last key


class SceneHeaderWarning(UserWarning):
    """A scene header could not be parsed; the file is read as body only.

    ``name``: the file name given to the parser; ``line``: 1-based line in the file where the
    problem was found; ``reason``: what was wrong. ``str(warning)`` says all three.
    """

    def __init__(self, name: str, line: int, reason: str):
        self.name, self.line, self.reason = name, line, reason
        super().__init__(f"{name}, line {line}: {reason}; the whole file is read as body")


@dataclass
class Scene:
    """One scene file.

    ``name``: file name (e.g. ``travel.md``). ``meta``: header values, ordered ``created``,
    ``updated`` (timezone-aware ``datetime``), ``summary`` (str), ``heat`` (int >= 0), then unknown
    keys in file order; only the keys present in the file. ``body``: text after the header (LF line
    ends). ``header``: ``"yaml"``, ``"block"``, or ``None`` when the file has no readable header.
    ``header_error``: why the header was unreadable (``None`` if it was fine or absent); such a
    scene must not be rendered back, since the broken header is still inside ``body``.
    ``raw``: key -> (value as parsed, the key's source lines): ``render_scene`` writes a key whose
    value is unchanged from its source text byte for byte (``PREAMBLE`` holds comment lines
    before the first key). Empty for headers whose keys cannot be sliced by line (flow style,
    duplicate keys).
    """

    name: str
    meta: dict[str, Any]
    body: str
    header: HeaderStyle | None = None
    header_error: str | None = field(default=None, compare=False)
    raw: dict[str, tuple[Any, str]] = field(default_factory=dict, compare=False, repr=False)


class SceneHeaderError(InputError):
    """A scene header that cannot be read: ``line`` (1-based, in the file) and ``reason``.
    Raised and caught inside this module (``parse_scene`` turns it into ``header_error`` and a
    ``SceneHeaderWarning``); under the one error root so nothing here is a root of its own."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line, self.reason = line, reason


_CONFLICT_OPEN = re.compile(r"^<{7}(?: |$)")
_CONFLICT_MIDDLE = re.compile(r"^(?:={7}|\|{7})(?: |$)")
_CONFLICT_CLOSE = re.compile(r"^>{7}(?: |$)")


def conflict_marker_lines(lines: list[str]) -> list[int]:
    """1-based numbers of the git conflict marker lines in ``lines`` (a file's lines, LF-split):
    each ``<<<<<<<`` line, the ``|||||||``/``=======`` lines after it and the ``>>>>>>>`` line
    that closes it. A lone ``=======`` (a Markdown heading underline) is not a marker."""
    found: list[int] = []
    block: list[int] = []
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if _CONFLICT_OPEN.match(line):
            block = [number]
        elif block and _CONFLICT_MIDDLE.match(line):
            block.append(number)
        elif block and _CONFLICT_CLOSE.match(line):
            found += [*block, number]
            block = []
    return found


def conflict_reason(markers: list[int]) -> str:
    """What a person reads about a scene holding git conflict markers at lines ``markers``."""
    shown = ", ".join(map(str, markers[:9])) + (" ..." if len(markers) > 9 else "")
    return (f"git conflict markers at lines {shown} (a merge of two copies left both sides in "
            "the file); batches leave this scene alone until a person resolves them by hand, "
            "keeping what both sides hold, and deletes the marker lines")


def parse_scene(text: str, name: str = "<scene>") -> Scene:
    """Parse a scene file's text into a ``Scene``.

    ``text``: the whole file (a BOM, CRLF line ends and a missing final newline are tolerated).
    ``name``: used in warnings and stored on the scene. Never raises on bad content: an unreadable
    header (bad YAML, unclosed header, not a mapping, heat not an int >= 0, date not a date) gives
    ``header=None``, the whole text as ``body``, ``header_error`` set, and a ``SceneHeaderWarning``.
    A text without any header gives ``header=None`` and no warning.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    markers = conflict_marker_lines(lines)
    if markers:     # two sides of a merge in one file: no side is the scene until a person picks
        reason = conflict_reason(markers)
        warnings.warn(SceneHeaderWarning(name, markers[0], reason), stacklevel=2)
        return Scene(name=name, meta={}, body=text, header=None,
                     header_error=f"line {markers[0]}: {reason}")
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    opener = lines[start].rstrip() if start is not None else None
    if start is None or opener not in _OPENERS:
        return Scene(name=name, meta={}, body=text, header=None)
    style, closer = _OPENERS[opener]
    try:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() == closer), None)
        if end is None:
            raise SceneHeaderError(start + 1, f"header opened by {opener!r} is never closed")
        meta, raw = _load_meta("\n".join(lines[start + 1:end]), first_line=start + 2)
    except SceneHeaderError as err:
        warnings.warn(SceneHeaderWarning(name, err.line, err.reason), stacklevel=2)
        return Scene(name=name, meta={}, body=text, header=None,
                     header_error=f"line {err.line}: {err.reason}")
    return Scene(name=name, meta=meta, body="\n".join(lines[end + 1:]), header=style, raw=raw)


def _load_meta(source: str, first_line: int) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
    """YAML header text -> (ordered, typed meta, raw key texts); raises ``SceneHeaderError`` with a
    file line. Each header text is parsed once (a batch reads a scene's header a dozen times:
    the rules, the index, the backend); the caller gets its own copy to change."""
    parsed = _parsed_meta(source, first_line)
    try:
        return _fresh(parsed[0]), _fresh(parsed[1])
    except _Cycle:      # a YAML alias inside itself: deepcopy keeps the loop
        return copy.deepcopy(parsed)


# Values a header may hold once its aliases are expanded. Ten lines of `&a [*b, *b, ...]`
# name 9**8 values ("billion laughs"): every reader that walks or copies the header (the copy
# each caller gets, the index, the page) took minutes and gigabytes on one file.
MAX_HEADER_VALUES = 10_000


def _expanded_size(root: yaml.Node) -> int:
    """How many values the YAML ``root`` names with its aliases expanded (an alias inside
    itself counts once). Linear in the nodes written: each node is sized once."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            busy.discard(key)
            children = _children(node)
            sizes[key] = min(1 + sum(sizes.get(id(c), 1) for c in children),
                             MAX_HEADER_VALUES + 1)
            continue
        if key in sizes or key in busy:
            continue
        busy.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    return sizes.get(id(root), 1)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _Cycle(SceneEngineError):
    """A container that holds itself (``&a [*a]``); never leaves this module."""


def _fresh(value: Any, inside: frozenset[int] = frozenset()) -> Any:
    """A copy of a YAML value whose containers (dict, list, set, tuple) are new and whose
    scalars (str, numbers, dates: immutable) are shared: ``copy.deepcopy``'s result for what
    SafeLoader builds, at a fifth of its cost (issue 39). Raises ``_Cycle`` for a container
    inside itself."""
    if not isinstance(value, (dict, list, tuple, set)):
        return value
    if id(value) in inside:
        raise _Cycle
    inside = inside | {id(value)}
    if isinstance(value, dict):
        return {k: _fresh(v, inside) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v, inside) for v in value]
    if isinstance(value, tuple):
        return tuple(_fresh(v, inside) for v in value)
    return {_fresh(v, inside) for v in value}


@functools.lru_cache(maxsize=1024)
def _parsed_meta(source: str, first_line: int
                 ) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
    loader = SafeLoader(source)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node) > MAX_HEADER_VALUES:
            raise SceneHeaderError(first_line, (
                f"YAML aliases (*name) that expand to more than {MAX_HEADER_VALUES:,} values: "
                "a header is a few keys; write the values out or drop the aliases"))
        data = loader.construct_document(node) if node is not None else {}
    except SceneHeaderError:      # the aliases' bound: said as it is, not as invalid YAML
        raise
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as err:
        # ValueError/TypeError: PyYAML builds e.g. `2026-13-45` as a timestamp and fails.
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = first_line + (mark.line if mark else 0)
        raise SceneHeaderError(line, f"invalid YAML ({getattr(err, 'problem', None) or err})") from err
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SceneHeaderError(first_line, f"header is a {type(data).__name__}, not key: value pairs")
    pairs = node.value if node is not None else []   # an empty header has no node at all
    key_lines: dict = {}
    for key, _ in pairs:
        if not isinstance(key, yaml.ScalarNode):
            continue
        line = first_line + key.start_mark.line
        if key.value in key_lines:   # YAML keeps the last silently; one of them would be lost
            raise SceneHeaderError(line, f"key {key.value!r} appears twice (lines "
                                     f"{key_lines[key.value]} and {line}); keep one")
        key_lines[key.value] = line
    # A value as written: `summary: No` is the word "No", not YAML 1.1's false.
    written = {k.value: v.value for k, v in pairs
               if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)}
    meta = _typed_meta(data, key_lines, first_line, written)
    return meta, _raw_keys(source, node, meta)


def _raw_keys(source: str, node, meta: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """key -> (meta value, its source lines): from the key's line to the next key's line.

    YAML parsers do not round-trip a person's spelling (``10:00`` is read as 600, ``yes`` as
    true, ``1.10`` as 1.1), so each key's text is kept to be written back unchanged. Headers
    whose keys cannot be cut by line (flow style, duplicate or non-text keys) get none.
    """
    if node is None or node.flow_style or not node.value:
        return {}
    pairs = node.value
    keys = [k.value for k, _ in pairs]
    starts = [k.start_mark.line for k, _ in pairs]
    if (not all(isinstance(k, yaml.ScalarNode) and isinstance(k.value, str) for k, _ in pairs)
            or len(set(keys)) != len(keys) or starts != sorted(set(starts))
            or any(k.start_mark.column for k, _ in pairs)):
        return {}
    lines = source.split("\n")
    raw: dict[str, tuple[Any, str]] = {}
    if starts[0] > 0:
        raw[PREAMBLE] = (None, "\n".join(lines[:starts[0]]))
    for i, key in enumerate(keys):
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        block = lines[starts[i]:end]
        # Comment lines after a value belong to what follows, not to this key: a key the
        # engine rewrites must not take a person's comment with it.
        cut = len(block)
        while cut > 1 and (not block[cut - 1].strip() or block[cut - 1].lstrip().startswith("#")):
            cut -= 1
        trailing = "\n".join(block[cut:]).strip("\n")
        if key in meta:
            raw[key] = (meta[key], "\n".join(block[:cut]))
        if trailing:
            slot = f"{BEFORE}{keys[i + 1]}" if i + 1 < len(keys) else EPILOGUE
            raw[slot] = (None, trailing)
    return raw


def _typed_meta(data: dict, key_lines: dict, first_line: int,
                written: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("created", "updated"):
        if data.get(key) is not None:
            meta[key] = _as_datetime(data[key], key, key_lines.get(key, first_line))
    if "summary" in data:
        meta["summary"] = _as_summary(data["summary"], key_lines.get("summary", first_line),
                                      (written or {}).get("summary"))
    if data.get("heat") is not None:
        heat = data["heat"]
        if isinstance(heat, bool) or not isinstance(heat, int) or not 0 <= heat <= MAX_HEAT:
            raise SceneHeaderError(key_lines.get("heat", first_line),
                               f"heat must be a whole number from 0 to {MAX_HEAT}, not {heat!r}")
        meta["heat"] = heat
    meta.update((k, v) for k, v in data.items() if k not in KNOWN_KEYS)
    return meta


def _as_datetime(value: Any, key: str, line: int) -> datetime:
    """YAML timestamp, date or ISO-8601 text -> aware datetime (naive values are UTC)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise SceneHeaderError(line, f"{key} is not an ISO-8601 date: {value!r}") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time())
    if not isinstance(value, datetime):
        raise SceneHeaderError(line, f"{key} is not a date: {value!r}")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _as_summary(value: Any, line: int, written: str | None = None) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise SceneHeaderError(line, "summary must be text")
    if isinstance(value, str):
        return value
    return written if written is not None else str(value)   # `No`, `1.10`, `2024-05-01`


class _SceneDumper(yaml.SafeDumper):
    """Safe dumper: ISO-8601 ``T`` timestamps, multi-line text as readable literal blocks,
    every character written as itself. PyYAML's pure-Python emitter: libyaml's (the C one)
    takes a character beyond the BMP (an emoji) for unprintable and writes ``"\\U0001F431"``."""

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        """PyYAML's, but a character beyond the BMP is printable too (PyYAML escapes it even
        with ``allow_unicode``); never folded (headers are dumped at an unbounded width)."""
        self.write_indicator('"', True)
        out = []
        for ch in text:
            if ch in _ESCAPED or not _printable(ch):
                code = ord(ch)
                out.append("\\" + self.ESCAPE_REPLACEMENTS[ch] if ch in self.ESCAPE_REPLACEMENTS
                           else f"\\x{code:02X}" if code <= 0xFF
                           else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
            else:
                out.append(ch)
        data = "".join(out)
        self.column += len(data)
        self.stream.write(data)
        self.write_indicator('"', False)

    def ignore_aliases(self, data: Any) -> bool:
        # `created` and `updated` are often the same object: write the value twice, never
        # `&id001` / `*id001`, which an editor user would not recognise.
        return True


_ESCAPED = frozenset('"\\\x85\u2028\u2029\ufeff')


def _printable(ch: str) -> bool:
    return ("\x20" <= ch <= "\x7e" or "\xa0" <= ch <= "\ud7ff" or "\ue000" <= ch <= "\ufffd"
            or "\U00010000" <= ch <= "\U0010ffff")


def _represent_datetime(dumper: yaml.SafeDumper, value: datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    block = "\n" in value and not any(b in value for b in _BREAKS)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if block else None)


_SceneDumper.add_representer(datetime, _represent_datetime)
_SceneDumper.add_representer(str, _represent_str)


class _ObsidianDumper(_SceneDumper):
    """Dates as Obsidian's "Date & time" property takes them: ``YYYY-MM-DDTHH:MM:SS``, no
    offset (Obsidian shows a value with one as plain text). Written in UTC, the zone this
    reader gives a time without one, so a scene reads back to the same instant."""


def _represent_obsidian_datetime(dumper: yaml.SafeDumper, value: datetime) -> yaml.ScalarNode:
    plain = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", plain.isoformat())


_ObsidianDumper.add_representer(datetime, _represent_obsidian_datetime)
_DUMPERS = {"iso": _SceneDumper, "obsidian": _ObsidianDumper}


def ordered_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` in canonical order: created, updated, summary, heat, then the rest as given."""
    head = {k: meta[k] for k in KNOWN_KEYS if k in meta}
    return head | {k: v for k, v in meta.items() if k not in KNOWN_KEYS}


def render_scene(scene: Scene, style: HeaderStyle = "yaml", times: str = "iso") -> str:
    """Render a scene as file text: header in ``style`` (``"yaml"`` or ``"block"``), then body.

    Keys in canonical order (``ordered_meta``), dates as ISO-8601 with offset (``times`` =
    "iso") or in UTC without one ("obsidian", config ``header_times``), Unicode kept
    readable. The body follows the closing delimiter line unchanged. Raises ``ValueError`` for a
    scene whose header could not be parsed (its body still holds the broken header; writing it
    back would add a second header) and for an unknown style.
    """
    if scene.header_error:
        raise ValueError(f"{scene.name}: header unreadable ({scene.header_error}); "
                         "refusing to rewrite the file")
    if style not in ("yaml", "block"):
        raise ValueError(f"unknown header style {style!r}; use 'yaml' or 'block'")
    dumper = _DUMPERS[times]
    meta = ordered_meta(scene.meta)
    opener, closer = (YAML_DELIM, YAML_DELIM) if style == "yaml" else (BLOCK_START, BLOCK_END)
    header = _header_text(meta, scene.raw, dumper)
    if scene.raw and header != _dump(meta, dumper) and not _same_meta(header, meta):
        header = _dump(meta, dumper)   # kept text no longer reads back the same (a lost anchor)
    return f"{opener}\n{header}{closer}\n{scene.body}"


def _dump(meta: dict[str, Any], dumper: type = _SceneDumper) -> str:
    return yaml.dump(meta, Dumper=dumper, allow_unicode=True, sort_keys=False,
                     default_flow_style=False, width=1_000_000) if meta else ""


def _dump_one(key: str, value: Any, dumper: type) -> str:
    """``_dump({key: value})``, from a cache when the value is hashable (a summary, a date, a
    heat: a batch renders each scene's header several times)."""
    try:
        return _dumped_one(key, value, repr(value), dumper)
    except TypeError:           # a list or a mapping: dumped each time
        return _dump({key: value}, dumper)


@functools.lru_cache(maxsize=4096)
def _dumped_one(key: str, value: Any, written: str, dumper: type) -> str:
    # ``written`` (its repr) tells apart values that are equal and not the same: True and 1,
    # one instant at two offsets.
    return _dump({key: value}, dumper)


def _header_text(meta: dict[str, Any], raw: dict[str, tuple[Any, str]],
                 dumper: type = _SceneDumper) -> str:
    """Header lines: a key whose value is unchanged since it was read keeps its source text."""
    parts = [raw[PREAMBLE][1] + "\n"] if PREAMBLE in raw else []
    for key, value in meta.items():
        if f"{BEFORE}{key}" in raw:
            parts.append(raw[f"{BEFORE}{key}"][1] + "\n")
        kept = raw.get(key)
        if kept is not None and type(kept[0]) is type(value) and kept[0] == value:
            parts.append(kept[1] + "\n")
        else:
            parts.append(_dump_one(key, value, dumper))
    if EPILOGUE in raw:
        parts.append(raw[EPILOGUE][1] + "\n")
    return "".join(parts)


def _same_meta(header: str, meta: dict[str, Any]) -> bool:
    """True when ``header`` parses back to ``meta`` (guards the kept source texts)."""
    try:
        parsed, _ = _load_meta(header.rstrip("\n"), first_line=1)
    except SceneHeaderError:
        return False
    return parsed == meta


def read_scene(path: Path) -> Scene:
    """Read and parse the scene file at ``path`` (UTF-8); name is the file name.

    Raises ``OSError`` if unreadable or not a regular file (``fsutil.NotRegularFile``: a
    symbolic link is never followed) and ``core.errors.NotUtf8Error`` (a
    ``UnicodeDecodeError``: the file and the byte) if not UTF-8; header problems only
    warn (see ``parse_scene``).
    """
    from scene_engine.core.fs import read_regular_text

    path = Path(path)
    return parse_scene(read_regular_text(path), name=path.name)


def body_chars(scene: Scene) -> int:
    """Characters in the body without surrounding whitespace (the ``max_scene_chars`` rule)."""
    return len(scene.body.strip())
