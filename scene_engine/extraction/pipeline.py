"""Conversation file -> memories in the journal: read, extract block by block, relate,
de-duplicate, write once (``scenes extract`` and ``scenes ingest --conversation``).

All or nothing: the file is refused whole before any model call, and a block the extractor
cannot do after its retries stops the run with nothing written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import ValidationError

from scene_engine.core.plural import count
from scene_engine.extraction import dedupe, events, offline
from scene_engine.extraction.context import choose
from scene_engine.extraction.conversation import Message, blocks, read_conversation
from scene_engine.extraction.merge import content_of
from scene_engine.extraction.model import VERSION as MODEL_VERSION
from scene_engine.extraction.model import ExtractionError, ModelSettings
from scene_engine.extraction.model import extract as model_extract
from scene_engine.extraction.schema import (
    ExtractedMemory,
    ExtractionOutput,
    merge_exact_duplicates,
    problems_of,
)
from scene_engine.store.memories import Journal, Memory
from scene_engine.store.recovery import ensure_recovered
from scene_engine.store.store import Store

BLOCK_SIZE = 20
QUOTE_CHARS = 400
NOT_LIVE = ("merged", "retracted", "superseded")


@dataclass
class ExtractReport:
    """What one extraction did. ``added``: new memories in the journal (merged ones
    included); ``known``: extracted again with an id already there (a re-run);
    ``superseded``: older memories a new one replaced; ``queued`` / ``merged`` /
    ``kept_both``: candidate pairs by outcome; ``added_ids``: the new ids, in order."""

    extractor: str
    messages: int = 0
    blocks: int = 0
    added: int = 0
    known: int = 0
    superseded: int = 0
    candidates: int = 0
    queued: int = 0
    merged: int = 0
    kept_both: int = 0
    added_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The report as a JSON object (``added_ids`` left out)."""
        return {k: v for k, v in self.__dict__.items() if k != "added_ids"}


def extract_file(store: Store, data: bytes, name: str, settings: ModelSettings | None = None,
                 block_size: int = BLOCK_SIZE) -> ExtractReport:
    """Extract the conversation ``data`` (file name ``name``) into ``store``'s journal.

    ``settings`` None: the offline extractor (no model; candidates only queued). Returns an
    ``ExtractReport``. Raises ``ConversationInputError`` (bad file, exit 2), ``ExtractionError``
    (a block failed; exit 1) and what ``events.write`` raises; nothing is written on any.
    """
    messages = read_conversation(data, name)
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    existing = Journal(store.memories_dir).all()
    history = events.read_events(store)
    status = events.statuses(existing, history)
    known = {i for m in existing for i in (m.id, *m.aliases)}
    report = ExtractReport(extractor=MODEL_VERSION if settings else offline.VERSION,
                           messages=len(messages))
    new: list[Memory] = []
    new_events: list[dict] = []
    # Messages a model already extracted (the same id and words, as its memories quote them)
    # are not sent again: a second run on the same file would only paraphrase them anew.
    quoted = {(source, text) for m in existing
              for source, text in ((m.metadata or {}).get("quotes") or {}).items()}
    for block in blocks(messages, block_size):
        if settings is not None:
            block = [m for m in block if (m.id, m.text) not in quoted]
            if not block:
                continue
        report.blocks += 1
        output = _block_output(block, [*existing, *new], status, settings)
        for memory in _records(output, block, report.extractor, settings is not None):
            if memory.id in known:
                report.known += 1
                continue
            known.add(memory.id)
            new.append(memory)
            for relation in memory.relations:
                if relation["type"] == "supersedes" and \
                        status.get(relation["target"]) != "superseded":
                    status[relation["target"]] = "superseded"
                    report.superseded += 1
                    new_events.append(events.new_event(
                        "status", memory=relation["target"], status="superseded",
                        by=memory.id))
    added, pair_events = _deduplicate(existing, new, status, history, settings, report,
                                      {m.id: m.text for m in messages})
    fresh = events.write(store, [*new, *added], [*new_events, *pair_events],
                         f"add: {count(len(new) + len(added), 'memory')} extracted from {name}\n\n"
                         f"Extractor: {report.extractor}\nMessages: {len(messages)}\n")
    report.added = len(fresh)
    report.added_ids = [m.id for m in fresh]
    return report


def _block_output(block: list[Message], known: list[Memory], status: dict[str, str],
                  settings: ModelSettings | None) -> ExtractionOutput:
    """One block's validated memories, offline or by the model (``known``: the memories
    its context is chosen from). Raises ``ExtractionError``, also for output the schema
    refuses (a rule broken in code must still reach a person as one sentence: issue 21)."""
    try:
        if settings is None:
            return ExtractionOutput(memories=offline.extract(block))
        return model_extract(block, choose(block, known, status), settings)
    except ValidationError as exc:
        where = block[0].id if len(block) == 1 else f"{block[0].id} to {block[-1].id}"
        raise ExtractionError(f"the memories of messages {where} broke the schema: "
                              f"{'; '.join(problems_of(exc))}") from None


def _records(output: ExtractionOutput, block: list[Message], version: str, quote: bool
             ) -> list[Memory]:
    """The journal records of one block's validated output: times from the sources, exact
    duplicates folded, ids from the content (so a re-run finds them known)."""
    by_id = {m.id: m for m in block}
    timed = [(m, _time_of(m, by_id).isoformat()) for m in output.memories]
    out = []
    for memory, when in merge_exact_duplicates(timed):
        digest = hashlib.sha256("\x00".join([memory.title, memory.summary, memory.scope,
                                             *memory.sources]).encode()).hexdigest()
        quotes = {s: by_id[s].text[:QUOTE_CHARS] for s in memory.sources} if quote else None
        out.append(Memory(
            id=f"x-{digest[:16]}", content=content_of(memory.title, memory.summary),
            created_at=datetime.fromisoformat(when), role=by_id[memory.sources[0]].role,
            scope=memory.scope, title=memory.title, sources=tuple(memory.sources),
            relations=tuple(r.model_dump() for r in memory.relations), status="active",
            extractor_version=version,   # set here, never by the model
            metadata={"quotes": quotes} if quotes else None))
    return out


def _time_of(memory: ExtractedMemory, by_id: dict[str, Message]) -> datetime:
    """The latest time among the memory's sources (now when the file gives none)."""
    times = [t for t in (by_id[s].created_at for s in memory.sources) if t is not None]
    return max(times) if times else datetime.now(UTC).replace(microsecond=0)


def _own_records(existing: list[Memory], new: list[Memory], status: dict[str, str]
                 ) -> list[Memory]:
    """The new memories that will be journal records of their own: not the same words at the
    same instant as an earlier one (the journal keeps those as an alias of it: the same
    sentence said twice in one LoCoMo session), not superseded in this run."""
    facts = {(m.content, m.created_at) for m in existing}
    out = []
    for memory in new:
        fact = (memory.content, memory.created_at)
        if fact not in facts and status.get(memory.id) not in NOT_LIVE:
            out.append(memory)
        facts.add(fact)
    return out


def _deduplicate(existing: list[Memory], new: list[Memory], status: dict[str, str],
                 history: list[dict], settings: ModelSettings | None, report: ExtractReport,
                 quotes: dict[str, str]) -> tuple[list[Memory], list[dict]]:
    """Candidate pairs of the new memories, decided (model) or queued (offline)."""
    seen = {e["pair"] for e in history if e.get("pair")}
    live = [m for m in existing if status.get(m.id, "active") not in NOT_LIVE]
    found = dedupe.candidates(live, _own_records(existing, new, status), seen)
    report.candidates = len(found)
    added: list[Memory] = []
    out: list[dict] = []
    retired: set[str] = set()
    for candidate in found:
        if {candidate.left.id, candidate.right.id} & retired:
            continue            # one of them was merged already in this run
        if settings is None:
            out.append(dedupe.queued(candidate, "offline: no automatic merges"))
            report.queued += 1
            continue
        verdict, failure = dedupe.adjudicate(candidate, settings, quotes)
        created, decided = dedupe.decide(candidate, verdict, failure)
        added += created
        out += decided
        kind = decided[0]["event"]
        report.merged += kind == "merge"
        report.kept_both += kind == "kept_both"
        report.queued += kind == "queued"
        if kind == "merge":
            retired.update(decided[0]["retired"])
    return added, out
