"""Store settings: `.scene-engine/config.toml`, checked field by field.

Defaults come from docs/DESIGN.md ("A batch"): 15 scenes at most, 1,500 body characters per scene,
20 memories per batch, a persona refresh every 50 memories.

A value of the type and range a field takes (as TOML writes it, as the engine renders it) is
checked here in plain Python; anything else (a type pydantic would convert, such as "7" for 7,
a value out of range, a key no field has) goes to the pydantic schema ``schemas.Config``,
which converts it or refuses it with its own message, exactly as when ``Config`` was that
model. So a command that only reads never loads pydantic for settings that are right.
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, cast

from scene_engine.core.checks import check_patterns, known_zone
from scene_engine.core.errors import InputError, plain_problems

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from scene_engine.core.privacy import Redactor


class ConfigError(InputError):
    """config.toml cannot be read or holds a bad value; the message names the file and key."""


class PlainRecord:
    """``model_dump`` and ``model_copy`` for a dataclass checked in plain Python, as the
    pydantic models it stands in for have them (``Config`` here, ``store.State``)."""

    def model_dump(self) -> dict[str, Any]:
        """Every field by name, in order (lists copied)."""
        return {f.name: copy.copy(getattr(self, f.name)) for f in fields(cast(Any, self))}

    def model_copy(self, update: dict[str, Any] | None = None) -> Self:
        """A copy with the fields of ``update`` replaced (not checked)."""
        made = copy.copy(self)
        for name, value in (update or {}).items():
            setattr(made, name, value)
        return made


@dataclass(init=False)
class Config(PlainRecord):
    """Settings of one store.

    Fields: ``max_scenes`` (scene files allowed is ``max_scenes - 1``), ``max_scene_chars``
    (characters of a scene body), ``batch_size`` (memories per batch), ``persona_every``
    (memories between persona refreshes), ``language`` ("auto", "en" or "zh": prompt language),
    ``meta_style`` ("yaml" front matter or the older "block" form), ``backend``/``model``/
    ``api_base`` (defaults for ``scenes run``), ``call_timeout`` (seconds one model request may
    take), ``batch_timeout`` (seconds a whole model batch may take, repair rounds included),
    ``max_output_tokens`` (``max_tokens`` sent with every model request),
    ``timeout_retries`` (tries again after a request cut off at ``call_timeout``: "auto" is
    none for a server at ``api_base``, which often answers one request at a time and goes on
    with the abandoned reply, and the usual retries for a hosted provider), ``timezone`` (IANA name such as "UTC" or
    "Europe/Lisbon": the one zone every date the engine writes is in, so a timeline is in
    time order whatever zone each memory came with), ``fold_every``/``fold_idle`` (folding in
    the background, ``scenes mcp`` and ``scenes watch --fold``: a batch runs once this many
    memories are pending, or once memories have waited this many seconds with none added),
    ``prefix`` (set by ``scenes init --prefix``: where the store sits in the folder it was made
    in, such as "memory/"; "" = at that folder's root), ``wiki_links`` (the persona links
    scenes as ``[[name]]`` so a vault user can click through) and ``header_times`` ("iso":
    ISO-8601 with the zone offset; "obsidian": ``YYYY-MM-DDTHH:MM:SS`` in UTC without an
    offset, the form Obsidian's "Date & time" property takes). ``scenes init`` turns both on
    inside an Obsidian vault (a ``.obsidian/`` folder at or above the store).
    ``new_scenes_per_batch``: new scenes one batch may add, for every backend; 1 is the seed's
    rule (docs/DESIGN.md "A batch" step 5); above 1, a young store may open up to that many, a
    quarter of the room left at most (``rules.new_scene_allowance``). ``embedding``: what
    recall finds meaning with: "use" (the bundled multilingual sentence encoder, the
    default) or "e5" (multilingual-e5-small, the ``semantic`` extra); the offline backend
    groups memories with "use" whatever this says (``index.dense``). ``secret_patterns``:
    regular expressions of lines never kept, added to ``core.privacy``'s defaults (API keys,
    tokens, passwords), which always apply.

    ``Config(**values)`` checks every value (``_checked``; pydantic's ``ValidationError``
    for one it refuses, as before); ``model_dump()`` and ``model_copy(update=...)`` are as
    pydantic's (the copy is not checked again).
    """

    max_scenes: int = 15
    max_scene_chars: int = 1500
    batch_size: int = 20
    persona_every: int = 50
    language: Literal["auto", "en", "zh"] = "auto"
    meta_style: Literal["yaml", "block"] = "yaml"
    backend: Literal["offline", "llm"] = "offline"
    model: str = ""
    api_base: str = ""
    call_timeout: float = 60.0
    batch_timeout: float = 300.0
    max_output_tokens: int = 4096
    timeout_retries: Literal["auto"] | int = "auto"
    timezone: str = "UTC"
    fold_every: int = 20
    fold_idle: float = 300.0
    prefix: str = ""
    wiki_links: bool = False
    header_times: Literal["iso", "obsidian"] = "iso"
    new_scenes_per_batch: int = 1
    embedding: Literal["use", "e5"] = "use"
    secret_patterns: list[str] = field(default_factory=list)

    def __init__(self, **values: Any) -> None:
        checked = _checked(values)
        if checked is None:        # pydantic converts it or refuses it, in its words
            from scene_engine.store import schemas

            checked = schemas.Config(**values).model_dump()
        for name in _FIELDS:
            setattr(self, name, checked[name] if name in checked else _default(name))

    def redactor(self) -> Redactor:
        """A fresh ``core.privacy.Redactor`` with the built-in secret patterns and this
        store's ``secret_patterns`` (its totals at zero)."""
        from scene_engine.core.privacy import redactor

        return redactor(self.secret_patterns)

    @property
    def tz(self) -> ZoneInfo:
        """The ``timezone`` setting as a ``ZoneInfo``."""
        from zoneinfo import ZoneInfo

        return ZoneInfo(self.timezone)


_FIELDS = tuple(f.name for f in fields(Config))


def _default(name: str) -> Any:
    return [] if name == "secret_patterns" else getattr(Config, name)


_INTS: dict[str, tuple[float, float]] = {"max_scenes": (3, 100_000), "max_scene_chars": (200, 1_000_000),
         "batch_size": (1, 10_000), "persona_every": (1, math.inf),
         "max_output_tokens": (16, 1_000_000), "fold_every": (1, 100_000),
         "new_scenes_per_batch": (1, 1000)}
_FLOATS = {"call_timeout": (False, 0.0, 86_400.0), "batch_timeout": (False, 0.0, 604_800.0),
           "fold_idle": (True, 1.0, 604_800.0)}        # (the bound allowed, bound, highest)
_CHOICES = {"language": ("auto", "en", "zh"), "meta_style": ("yaml", "block"),
            "backend": ("offline", "llm"), "header_times": ("iso", "obsidian"),
            "embedding": ("use", "e5")}
_TEXTS = ("model", "api_base", "prefix")


def _checked(values: dict[str, Any]) -> dict[str, Any] | None:
    """``values`` as the fields keep them when every one is of the type its field takes and
    within its range (an int given for a float made a float, as pydantic makes it); None
    when pydantic must decide (another type, out of range, an unknown key)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        kind = type(value)
        if name in _INTS:
            least, most = _INTS[name]
            if kind is not int or not least <= value <= most:
                return None
        elif name in _FLOATS:
            inclusive, low, high = _FLOATS[name]
            if kind not in (int, float):
                return None
            try:
                number = float(value)
            except OverflowError:
                return None
            if not (math.isfinite(number) and (number >= low if inclusive else number > low)
                    and number <= high):
                return None
            value = number
        elif name in _CHOICES:
            if kind is not str or value not in _CHOICES[name]:
                return None
        elif name in _TEXTS:
            if kind is not str:
                return None
        elif name == "timeout_retries":
            if not ((kind is str and value == "auto") or (kind is int and 0 <= value <= 20)):
                return None
        elif name == "timezone":
            if kind is not str:
                return None
            try:
                value = known_zone(value)
            except ValueError:
                return None
        elif name == "wiki_links":
            if kind is not bool:
                return None
        elif name == "secret_patterns":
            if kind is not list or len(value) > 1000 or any(type(p) is not str for p in value):
                return None
            try:
                value = check_patterns(list(value))
            except ValueError:
                return None
        else:
            return None                # a key no field has: pydantic says so
        out[name] = value
    return out


def load_config(path: Path) -> Config:
    """Read and check ``path``; a missing file gives the defaults.

    Raises ``ConfigError`` naming the file and the offending key.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config()
    except UnicodeDecodeError as exc:    # the byte, as every reader says it (core.fs)
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}): save it as UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    try:
        return Config(**raw)            # checked once; pydantic loaded only if it refuses
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        raise ConfigError(f"{path}: {plain_problems(exc)}") from exc


def render_config(config: Config) -> str:
    """TOML text for ``config`` with a comment per key (stdlib has no TOML writer)."""
    notes = {
        "max_scenes": "scene files stay below this count",
        "max_scene_chars": "characters of one scene body",
        "batch_size": "memories per batch",
        "persona_every": "memories between persona refreshes",
        "language": "prompt language: auto, en or zh",
        "meta_style": "scene header form: yaml or block",
        "backend": "default backend for `scenes run`: offline or llm",
        "model": "litellm model name for the llm backend",
        "api_base": "OpenAI-compatible server URL, if any",
        "call_timeout": "seconds one model request may take",
        "batch_timeout": "seconds one model batch may take, repair rounds included",
        "max_output_tokens": "max_tokens sent with every model request",
        "timeout_retries": "retries after a request timed out: auto (none for --api-base) or N",
        "timezone": "IANA zone of every date the engine writes (timelines, summaries)",
        "fold_every": "background folding: run a batch once this many memories are pending",
        "fold_idle": "background folding: or once they waited this many seconds, none added",
        "prefix": "where this store sits in the folder it was made in (scenes init --prefix)",
        "wiki_links": "persona links scenes as [[name]] (on inside an Obsidian vault)",
        "header_times": "scene header dates: iso (with offset) or obsidian (UTC, no offset)",
        "new_scenes_per_batch": "new scenes one batch may add (above 1: only while the store is young)",
        "embedding": "recall by meaning with: use (bundled) or e5 (the semantic extra)",
        "secret_patterns": "regexes of lines never kept, beside the built-in ones (keys, tokens, passwords)",
    }
    lines = ["# scene-engine settings"]
    for key, value in config.model_dump().items():
        # JSON string escapes are valid TOML basic-string escapes.
        if isinstance(value, bool):
            shown = "true" if value else "false"
        elif isinstance(value, list):   # JSON string escapes are TOML's too
            shown = json.dumps(value, ensure_ascii=False)
        else:
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)
        if key == "secret_patterns" and not value:
            # Left out while empty, so a store made now still opens with a scene-engine from
            # before the key (config refuses keys it does not know); shown for finding.
            lines.append(f"# {key} = []  # {notes[key]}")
            continue
        lines.append(f"{key} = {shown}  # {notes[key]}")
    return "\n".join(lines) + "\n"
