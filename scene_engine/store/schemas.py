"""The pydantic schemas of the settings (``config.toml``) and the state checkpoint
(``state.json``): the judges of every value the plain checks of ``config.Config`` and
``store.State`` cannot settle by themselves (a type pydantic converts, a value out of range,
an unknown key), so what is accepted, how it is converted and every message are pydantic's,
as they always were. Imported only then: pydantic takes a tenth of a second to load, and
a command that starts as a new process for every question an agent asks must not pay that
for settings that are already right.

tests/test_store.py checks that both ways agree on every field (defaults, bounds, types).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scene_engine.core.checks import check_patterns, known_zone
from scene_engine.store.layout import FORMAT_VERSION


class Config(BaseModel):
    """``config.Config``'s fields, bounds and defaults as a pydantic model (its docstring
    says what each means)."""

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
        return check_patterns(value)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return known_zone(value)


class State(BaseModel):
    """``store.State``'s fields and bounds as a pydantic model (keys it does not know are
    left out, as pydantic does by default)."""

    format: int = FORMAT_VERSION
    cursor: int = Field(0, ge=0)
    next_seq: int = Field(0, ge=0)
    batch: int = Field(0, ge=0)
    requeued: list[int] = Field(default_factory=list)
    forgotten: list[int] = Field(default_factory=list)
    since_persona: int = Field(0, ge=0)
