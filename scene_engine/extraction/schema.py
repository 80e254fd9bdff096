"""The one schema an extractor's output must pass before anything is written (issue 12,
"Extraction rules"), and the adjudicator's verdict.

pydantic checks shapes and values; ``check_output`` adds what needs the block: every source is
a message of the block being extracted (never a context memory, never an invented id), every
relation points at a context memory. ``merge_exact_duplicates`` folds repeats within one output.

A title or summary over its limit is cut, not refused (issue 21): it is filled from what
people wrote, and one long token (a URL, a key, a hash, a run of Chinese without spaces) must
not stop a conversation. ``clip`` cuts at a word, else at a character boundary (never inside
an emoji sequence or between a letter and its combining marks), and marks the cut with "…".
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scene_engine.core.errors import InputError
from scene_engine.store.memories import CONTROL_CHARS

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails


def no_control(value: str | None) -> str | None:
    """``value`` unchanged; ``ValueError`` if it holds a control character (the rule `add`
    applies to content, ``memories.CONTROL_CHARS``: the text ends up in a scene)."""
    found = CONTROL_CHARS.search(value or "")
    if found:
        raise ValueError(f"contains the control character U+{ord(found.group()):04X}")
    return value


TITLE_CHARS = 200
SUMMARY_CHARS = 2000
ELLIPSIS = "…"
# Code points that belong to the character before them: a cut between the two would leave a
# bare accent, half an emoji (ZWJ sequences, skin tones, flags' tags) or a lone jamo.
_JOINS_BEFORE = frozenset((0x200D, 0x20E3, *range(0xFE00, 0xFE10), *range(0x1F3FB, 0x1F400),
                           *range(0xE0020, 0xE0080), *range(0xE0100, 0xE01F0),
                           *range(0x1160, 0x1200), *range(0xD7B0, 0xD800)))
_REGIONAL = range(0x1F1E6, 0x1F200)        # two of these make one flag
_BREAKS_AFTER = "，。、；：！？,;"           # a cut may also follow these (CJK has no spaces)


def clip(text: str, limit: int) -> str:
    """``text`` (stripped) when it fits in ``limit`` characters, else its beginning cut at a
    word (or after a CJK comma or full stop) in the second half of the room, else at a
    character boundary, with "…" appended: at most ``limit`` characters in all. Issue 21:
    a field with a length limit filled from user text is cut, never refused."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = split_at(text, limit - len(ELLIPSIS))[0]
    return (head.rstrip(",;:，；：、") or head) + ELLIPSIS


def split_at(text: str, room: int) -> tuple[str, str]:
    """(the beginning of ``text`` in at most ``room`` characters, the rest), cut as ``clip``
    says; neither has spaces at the cut, and no other character is lost. The whole text and
    "" when it fits."""
    if len(text) <= room:
        return text, ""
    cut = next((i for i in range(room, room // 2, -1)
                if text[i].isspace() or text[i - 1] in _BREAKS_AFTER), None)
    if cut is None:
        cut = next((i for i in range(room, 0, -1) if _boundary(text, i)), room)
    return text[:cut].rstrip() or text[:cut], text[cut:].lstrip()


def _boundary(text: str, i: int) -> bool:
    """Whether ``text[:i]`` ends a whole character as a person sees it (a grapheme, close
    enough without a Unicode segmentation library)."""
    here, before = ord(text[i]), ord(text[i - 1])
    if here in _JOINS_BEFORE or before == 0x200D or unicodedata.combining(text[i]) \
            or unicodedata.category(text[i]) in ("Mn", "Mc", "Me"):
        return False
    if here in _REGIONAL and before in _REGIONAL:
        run = 0
        while i - run - 1 >= 0 and ord(text[i - run - 1]) in _REGIONAL:
            run += 1
        return run % 2 == 0          # after a whole flag, not inside one
    return True


def _clipped(limit: int):
    """A before-validator cutting text over ``limit`` with ``clip`` (other values pass)."""
    def cut(value):
        return clip(value, limit) if isinstance(value, str) else value
    return cut


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
    title: str = Field(min_length=1, max_length=TITLE_CHARS,
                       description="The explicit object, a stable anchor and one main change.")
    summary: str = Field(min_length=1, max_length=SUMMARY_CHARS,
                         description="The detail and the reason.")
    scope: Literal["session", "project", "user"] = Field(
        description="session: for one answer; project: a project requirement; user: explicit "
                    "long-term guidance. Never wider than the text says.")
    sources: list[str] = Field(min_length=1, description="Ids of the messages of THIS block "
                                                         "that directly support it.")
    relations: list[Relation] = Field(default_factory=list)

    _plain_text = field_validator("title", "summary")(no_control)
    _cut_title = field_validator("title", mode="before")(_clipped(TITLE_CHARS))
    _cut_summary = field_validator("summary", mode="before")(_clipped(SUMMARY_CHARS))

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
    title: str | None = Field(None, max_length=TITLE_CHARS)
    summary: str | None = Field(None, max_length=SUMMARY_CHARS)
    reason: str = ""

    _plain_text = field_validator("title", "summary")(no_control)
    _cut_title = field_validator("title", mode="before")(_clipped(TITLE_CHARS))
    _cut_summary = field_validator("summary", mode="before")(_clipped(SUMMARY_CHARS))

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


class OutputError(InputError):
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
        raise OutputError(problems_of(exc)) from None


def problems_of(exc: ValidationError) -> list[str]:
    """Short sentences for a pydantic ``ValidationError`` (no input dump, no help URL)."""
    return [_problem(e) for e in exc.errors()[:20]]


def _problem(error: ErrorDetails) -> str:
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
