"""The one schema an extractor's output must pass before anything is written (issue 12,
"Extraction rules"), and the adjudicator's verdict.

pydantic checks shapes and values; ``check_output`` adds what needs the block: every source is
a message of the block being extracted (never a context memory, never an invented id), every
relation points at a context memory. ``merge_exact_duplicates`` folds repeats within one output.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..memories import CONTROL_CHARS


def no_control(value: str | None) -> str | None:
    """``value`` unchanged; ``ValueError`` if it holds a control character (the rule `add`
    applies to content, ``memories.CONTROL_CHARS``: the text ends up in a scene)."""
    found = CONTROL_CHARS.search(value or "")
    if found:
        raise ValueError(f"contains the control character U+{ord(found.group()):04X}")
    return value

SCOPES = ("session", "project", "user")
RELATIONS = ("same_as", "supersedes", "conflicts_with")
VERDICTS = ("KEEP_LEFT", "KEEP_RIGHT", "KEEP_BOTH", "REVIEW")
AUTO_MERGE_CONFIDENCE = 0.9


class Relation(BaseModel):
    """A link from a new memory to an existing one (``target``: its id)."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["same_as", "supersedes", "conflicts_with"]
    target: str = Field(min_length=1, max_length=200)


class ExtractedMemory(BaseModel):
    """One atomic memory as an extractor gives it. Fields the model may not set (the
    extractor version, ids, times) are ignored here and set by code."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    title: str = Field(min_length=1, max_length=200,
                       description="The explicit object, a stable anchor and one main change.")
    summary: str = Field(min_length=1, max_length=2000,
                         description="The detail and the reason.")
    scope: Literal["session", "project", "user"] = Field(
        description="session: for one answer; project: a project requirement; user: explicit "
                    "long-term guidance. Never wider than the text says.")
    sources: list[str] = Field(min_length=1, description="Ids of the messages of THIS block "
                                                         "that directly support it.")
    relations: list[Relation] = Field(default_factory=list)

    _plain_text = field_validator("title", "summary")(no_control)

    @field_validator("sources")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        distinct = list(dict.fromkeys(v.strip() for v in value if v.strip()))
        if not distinct:
            raise ValueError("at least one source message id is required")
        return distinct


class ExtractionOutput(BaseModel):
    """What the ``record_memories`` tool takes (or the text reply holds as JSON)."""

    model_config = ConfigDict(extra="ignore")
    memories: list[ExtractedMemory] = Field(default_factory=list)


class Verdict(BaseModel):
    """The adjudicator's answer on one candidate pair. ``title``/``summary``: the complete
    merged memory, required for an automatic merge (KEEP_LEFT / KEEP_RIGHT)."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    verdict: Literal["KEEP_LEFT", "KEEP_RIGHT", "KEEP_BOTH", "REVIEW"]
    confidence: float = Field(ge=0.0, le=1.0)
    title: str | None = Field(None, max_length=200)
    summary: str | None = Field(None, max_length=2000)
    reason: str = ""

    _plain_text = field_validator("title", "summary")(no_control)

    @property
    def keeps_one(self) -> bool:
        """KEEP_LEFT or KEEP_RIGHT."""
        return self.verdict in ("KEEP_LEFT", "KEEP_RIGHT")

    @property
    def has_draft(self) -> bool:
        """A complete merged title and summary came with it."""
        return bool(self.title and self.summary)

    def auto_merge(self) -> bool:
        """Whether the merge may be applied without a person: a keep-one verdict, a complete
        draft and confidence at least ``AUTO_MERGE_CONFIDENCE`` (issue 12)."""
        return self.keeps_one and self.has_draft and self.confidence >= AUTO_MERGE_CONFIDENCE


class OutputError(ValueError):
    """The output broke the schema or a rule; ``problems`` are short sentences the model is
    shown when it is asked again."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def parse_output(payload: dict | str) -> ExtractionOutput:
    """Validate a decoded tool-call argument (or JSON text). Raises ``OutputError``."""
    return _validated(ExtractionOutput, payload)


def parse_verdict(payload: dict | str) -> Verdict:
    """Validate an adjudicator's answer. Raises ``OutputError``."""
    return _validated(Verdict, payload)


def _validated(model: type[BaseModel], payload: dict | str):
    try:
        if isinstance(payload, str):
            return model.model_validate_json(payload)
        return model.model_validate(payload)
    except ValidationError as exc:
        raise OutputError([_problem(e) for e in exc.errors()[:20]]) from None


def _problem(error: dict) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "output"
    return f"{where}: {error.get('msg', 'invalid')}"


def check_output(output: ExtractionOutput, block_ids: set[str], context_ids: set[str]
                 ) -> None:
    """The rules pydantic cannot see. Raises ``OutputError`` when a source is not a message
    of the block (a context memory's id is named as such: context is never a source) or a
    relation points at no context memory."""
    problems = []
    for n, memory in enumerate(output.memories):
        for source in memory.sources:
            if source in context_ids:
                problems.append(f"memories.{n}.sources: {source!r} is a context memory; "
                                "context is never a source, cite the block's message ids")
            elif source not in block_ids:
                problems.append(f"memories.{n}.sources: {source!r} is not a message of this "
                                "block")
        for relation in memory.relations:
            if relation.target not in context_ids:
                problems.append(f"memories.{n}.relations: {relation.target!r} is not one of "
                                "the existing memories shown")
    if problems:
        raise OutputError(problems)


def merge_exact_duplicates(items: list[tuple[ExtractedMemory, str]]
                           ) -> list[tuple[ExtractedMemory, str]]:
    """Fold memories with the same title, summary, scope and time (``items``: (memory, its
    time as ISO text)) into the first of them, with the union of their sources and relations
    in first-seen order. Deterministic: the result depends on the order given only."""
    kept: dict[tuple, int] = {}
    out: list[tuple[ExtractedMemory, str]] = []
    for memory, when in items:
        key = (memory.title, memory.summary, memory.scope, when)
        if key not in kept:
            kept[key] = len(out)
            out.append((memory, when))
            continue
        first, _ = out[kept[key]]
        sources = list(dict.fromkeys([*first.sources, *memory.sources]))
        relations = list({(r.type, r.target): r for r in [*first.relations,
                                                          *memory.relations]}.values())
        out[kept[key]] = (first.model_copy(update={"sources": sources,
                                                   "relations": relations}), when)
    return out
