"""Store settings: `.scene-engine/config.toml`, validated with pydantic.

Defaults come from docs/DESIGN.md ("A batch"): 15 scenes at most, 1,500 body characters per scene,
20 memories per batch, a persona refresh every 50 memories.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scene_engine.core.errors import InputError, plain_problems


class ConfigError(InputError):
    """config.toml cannot be read or holds a bad value; the message names the file and key."""


class Config(BaseModel):
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
    """

    model_config = ConfigDict(extra="forbid")

    max_scenes: int = Field(15, ge=3, le=100_000)
    max_scene_chars: int = Field(1500, ge=200, le=1_000_000)
    batch_size: int = Field(20, ge=1, le=10_000)
    persona_every: int = Field(50, ge=1)
    language: Literal["auto", "en", "zh"] = "auto"
    meta_style: Literal["yaml", "block"] = "yaml"
    backend: Literal["offline", "llm"] = "offline"
    model: str = ""
    api_base: str = ""
    call_timeout: float = Field(60.0, gt=0, le=86_400)
    batch_timeout: float = Field(300.0, gt=0, le=604_800)
    max_output_tokens: int = Field(4096, ge=16, le=1_000_000)
    timeout_retries: Literal["auto"] | Annotated[int, Field(ge=0, le=20)] = "auto"
    timezone: str = "UTC"
    fold_every: int = Field(20, ge=1, le=100_000)
    fold_idle: float = Field(300.0, ge=1.0, le=604_800.0)
    prefix: str = ""
    wiki_links: bool = False
    header_times: Literal["iso", "obsidian"] = "iso"
    new_scenes_per_batch: int = Field(1, ge=1, le=1000)
    embedding: Literal["use", "e5"] = "use"
    secret_patterns: list[str] = Field(default_factory=list, max_length=1000)

    @field_validator("secret_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
            return value
        except (ZoneInfoNotFoundError, ValueError):
            pass
        spelled = {z.lower(): z for z in available_timezones()}   # "utc", "europe/lisbon"
        if value.strip().lower() in spelled:
            return spelled[value.strip().lower()]
        raise ValueError(f"unknown time zone {value!r}; use an IANA name such as UTC or "
                         "Europe/Lisbon")

    def redactor(self):
        """A fresh ``core.privacy.Redactor`` with the built-in secret patterns and this
        store's ``secret_patterns`` (its totals at zero)."""
        from scene_engine.core.privacy import redactor

        return redactor(self.secret_patterns)

    @property
    def tz(self) -> ZoneInfo:
        """The ``timezone`` setting as a ``ZoneInfo``."""
        return ZoneInfo(self.timezone)


def load_config(path: Path) -> Config:
    """Read and validate ``path``; a missing file gives the defaults.

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
        return Config(**raw)
    except ValidationError as exc:
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
