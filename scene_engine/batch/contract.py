"""What a batch gives a backend and what a backend gives back (docs/DESIGN.md "A batch").

``BatchJob`` is everything a backend needs for one batch (the sandbox with the scene policy,
the memories, the scenes it may touch, the prompt, the rule context); ``BackendResult`` is
what it reports; ``BatchResult`` is a committed batch; ``BatchError`` says a batch failed
with nothing written. The ``Backend`` protocol is the one contract every backend implements;
``ModelBackend`` adds what a model backend offers besides (a set-up check, a budget, a
listener for its events).
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sandbox import Sandbox
from scene_engine.batch.accounting import (
    Declaration,
    Ledger,
    LedgerEntry,
    account,
    parse_declarations,
)
from scene_engine.batch.rules import (
    RuleContext,
    validate_batch,
)
from scene_engine.batch.transcript import Transcript
from scene_engine.core.errors import SceneEngineError
from scene_engine.store.config import Config
from scene_engine.store.memories import Memory

if TYPE_CHECKING:
    from scene_engine.llm.loop import Budget


class BatchError(SceneEngineError, RuntimeError):
    """A batch failed; nothing was written and its memories are still pending."""



@dataclass
class BackendResult:
    """What a backend reports: final text (the batch summary), steps, tokens, cost."""

    final_text: str
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    problems: list[str] = field(default_factory=list)
    deferred: list[int] = field(default_factory=list)   # memory seqs left for a later batch
    # What the backend says it did with each memory (id -> Declaration); None: read the
    # NO_CHANGE/SKIP/PLACED lines of ``final_text``. ``may_skip``: skips allowed at all.
    declared: dict[str, Declaration] | None = None
    may_skip: bool = True



@dataclass
class BatchJob:
    """Everything a backend needs for one batch.

    ``box``: the sandbox over ``scenes/`` with the scene policy installed; ``memories``: the
    batch, oldest first; ``scene_texts``: name -> text of every scene the batch may touch, and
    ``scene_meta`` their parsed headers (``left_alone``: the others, with why); ``messages``: the prompt; ``context``: the rule
    context; ``duplicates``: (dropped, kept) pairs of memories said twice; ``transcript``: the
    model's whole exchange (``transcript.Transcript``), filled by a model backend; ``validate()`` ->
    problems of the change set; ``account(...)`` -> where each memory went.
    """

    number: int
    box: Sandbox
    memories: list[Memory]
    scene_texts: dict[str, str]
    context: RuleContext
    config: Config
    language: str
    messages: list[dict]
    scene_meta: dict[str, dict] = field(default_factory=dict)   # headers of scene_texts
    duplicates: list[tuple[Memory, Memory]] = field(default_factory=list)
    transcript: Transcript = field(default_factory=Transcript)   # the model's exchange
    # () -> every memory of the journal: for a backend that must name the memories behind
    # a line an earlier batch wrote (the offline rollups cite them); read only when called.
    journal: Callable[[], list[Memory]] | None = None
    # name -> True when a person gave the scene its name (created or renamed it): the offline
    # backend never renames such a scene. Asked only for a scene that is due for a new name.
    named_by_person: Callable[[str], bool] | None = None
    # texts -> float32 (len(texts), dim): the sentence encoder, cached (``index.dense``), for a
    # backend that groups by meaning (the offline backend); None: no meaning at hand.
    embed: Callable[[list[str]], Any] | None = None
    # n -> up to n memories pending after this batch, in the order later batches take them:
    # for a backend that groups the batch with what comes next (``offline.grouping``).
    upcoming: Callable[[int], list[Memory]] | None = None
    # name -> why the batch leaves that scene alone (not UTF-8, a header that does not
    # parse, conflict markers, a name or a size the sandbox refuses): said to whoever names it.
    left_alone: dict[str, str] = field(default_factory=dict)

    def validate(self) -> list[str]:
        """The scene-rule problems of the staged change set (empty when it may be applied)."""
        return validate_batch(self.box.pending(), self.context)

    def account(self, final_text: str, declared: dict[str, Declaration] | None = None,
                may_skip: bool = True, deferred: Set[int] = frozenset()
                ) -> tuple[list[LedgerEntry], list[str]]:
        """(ledger entries, problems) for the memories not ``deferred``; ``declared`` defaults
        to the NO_CHANGE/SKIP/PLACED lines of ``final_text`` (see ``accounting``)."""
        active = [m for m in self.memories if m.seq not in deferred]
        if declared is None:
            declared = parse_declarations(final_text, [m.id for m in active])
        pairs = [(d, k) for d, k in self.duplicates if k.seq not in deferred]
        return account(active, pairs, self.box.pending(), self.scene_texts, declared, may_skip)



@dataclass
class BatchResult:
    """A committed batch: number, memory ids, counts, summary, commit sha, usage, whether the
    model asked for a new persona and whether the batch's commit holds one."""

    number: int
    memory_ids: list[str]
    counts: dict[str, int]
    summary: str
    commit: str
    backend: str
    tokens: int = 0
    cost: float | None = None
    persona_requested: bool = False
    ledger: Ledger | None = None
    persona_refreshed: bool = False     # the batch's commit holds a new persona too


@runtime_checkable
class Backend(Protocol):
    """What folds a batch: the one contract every backend implements (offline, a model).

    ``name`` goes into the commit trailers; ``run(job)`` works on ``job.box`` (the sandbox,
    nothing else touches the files) and returns a ``BackendResult``. It may raise anything:
    the batch then fails with nothing written (``BatchError``)."""

    name: str

    def run(self, job: BatchJob) -> BackendResult: ...


@runtime_checkable
class ModelBackend(Backend, Protocol):
    """A backend that talks to a model (``batch.model_backend.LLMBackend``): besides ``run``,

    - ``prepare()`` checks the set-up (key, address) before any batch takes the lock and
      raises ``ModelError`` with one line for a person;
    - ``budget`` (``llm.loop.Budget``) is the limits the settings give it;
    - ``listener`` hears every event of the exchange, ``listener(kind, data)``, or None;
    - ``persona(language, scenes, max_chars)`` writes a persona, returning (text, tokens).
    """

    budget: Budget
    listener: Callable[[str, dict[str, Any]], None] | None

    def prepare(self) -> None: ...

    def persona(self, language: str, scenes: str, max_chars: int) -> tuple[str, int]: ...
