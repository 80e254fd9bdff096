"""Conversations -> memories in the journal: read, extract block by block, relate,
de-duplicate, write (``scenes extract`` and ``scenes ingest --conversation``).

A file of the older layouts is refused whole before any model call; an export or a session
folder is read conversation by conversation (``sources``), one that cannot be read is
reported and passed over (``--strict``: refused whole). A block the extractor cannot do
after its retries stops the run: nothing is written for a short input, and a long import
keeps the commits it made (every ``FLUSH`` memories), which a second run does not repeat.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import ValidationError

from scene_engine.core.plural import count
from scene_engine.core.privacy import Redactor
from scene_engine.extraction import dedupe, events, offline, sources
from scene_engine.extraction.context import choose
from scene_engine.extraction.conversation import ConversationInputError, Message, blocks
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
    ``kept_both``: candidate pairs by outcome; ``added_ids``: the new ids, in order;
    ``conversations``: conversations (sessions) read; ``broken``: those that could not be
    read, ``{where, reason}`` each (the rest were imported); ``notes``: what was odd but
    read anyway; ``private``: what the privacy filter took out, in words; ``commits``: commits
    made (a long import commits as it goes); ``dry_run``: nothing was written, and
    ``would_add`` holds the memories that would have been."""

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
    conversations: int = 0
    commits: int = 0
    broken: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    private: str = ""
    dry_run: bool = False
    added_ids: list[str] = field(default_factory=list)
    would_add: list[Memory] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The report as a JSON object (``added_ids`` and ``would_add`` left out)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("added_ids", "would_add")}


class ImportRefused(ConversationInputError):
    """``--strict``: a conversation could not be read, so nothing was; ``broken`` as in
    ``ExtractReport``. Exit 2."""

    LEAD = "refused whole (--strict), nothing extracted or written"

    def __init__(self, broken: list[dict]):
        self.problems = [(0, f"{b['where']}: {b['reason']}") for b in broken]
        shown = "\n".join(f"  {b['where']}: {b['reason']}" for b in broken[:50])
        more = f"\n  ... and {len(broken) - 50} more" if len(broken) > 50 else ""
        ValueError.__init__(self, f"{self.LEAD}: {count(len(broken), 'conversation')} could "
                                  f"not be read:\n{shown}{more}")


class NothingRead(ImportRefused):
    """Nothing of the input could be read (a cut-off export, or a ``--format`` that is not
    the file's: every conversation or line skipped, not one message read): an import of
    nothing is a failure, not a success. Exit 2."""

    LEAD = "nothing read, nothing extracted or written"


FLUSH = 5000     # new memories a long import commits at a time (bounded memory, resumable)


def extract_file(store: Store, data: bytes, name: str, settings: ModelSettings | None = None,
                 block_size: int = BLOCK_SIZE) -> ExtractReport:
    """Extract the conversation ``data`` (file name ``name``, any format ``sources`` knows,
    detected) into ``store``'s journal (``import_items``).

    ``settings`` None: the offline extractor (no model; candidates only queued). Returns an
    ``ExtractReport``. Raises ``ConversationInputError`` (bad file, exit 2),
    ``sources.UnknownFormat``, ``ExtractionError`` (a block failed; exit 1) and what
    ``events.write`` raises; nothing is written on any.
    """
    private = store.config.redactor()
    items = sources.read_input(sources.Input(files=[], data=data, name=name), None, private)
    return import_items(store, items, name, settings, block_size=block_size, private=private)


def import_items(store: Store, items: Iterable[sources.Item], name: str,
                 settings: ModelSettings | None = None, strict: bool = False,
                 dry_run: bool = False, block_size: int = BLOCK_SIZE,
                 private: Redactor | None = None) -> ExtractReport:
    """Extract every conversation of ``items`` (``sources.read_input``'s) into ``store``'s
    journal, conversation by conversation, so only one is held at a time.

    A conversation that could not be read is reported (``ExtractReport.broken``) and the
    others are imported; ``strict``: then nothing is written (``ImportRefused``). A long
    import commits every ``FLUSH`` new memories (so an interrupted one keeps what it
    committed, and a second run adds only the rest: ids come from the messages' own ids);
    ``dry_run``: nothing is written, the memories are in ``would_add``. Raises as
    ``extract_file``; a block that fails stops the import with the commits made so far kept.
    """
    ensure_recovered(store)      # an interrupted write is rolled back before reading
    existing = Journal(store.memories_dir).all()
    history = events.read_events(store)
    status = events.statuses(existing, history)
    known = {i for m in existing for i in (m.id, *m.aliases)}
    report = ExtractReport(extractor=MODEL_VERSION if settings else offline.VERSION,
                           dry_run=dry_run)
    new: list[Memory] = []
    new_events: list[dict] = []
    quotes: dict[str, str] = {}
    words: dict[str, frozenset[str]] = {}
    # Messages a model already extracted (the same id and words, as its memories quote them)
    # are not sent again: a second run on the same file would only paraphrase them anew.
    quoted = {(source, text) for m in existing
              for source, text in ((m.metadata or {}).get("quotes") or {}).items()}

    def flush() -> None:
        added, pair_events = _deduplicate(existing, new, status, history, settings, report,
                                          quotes, words)
        made = [*new, *added]
        if dry_run:
            report.would_add += made
        elif made or new_events or pair_events:
            fresh = events.write(store, made, [*new_events, *pair_events],
                                 f"add: {count(len(made), 'memory')} extracted from {name}\n\n"
                                 f"Extractor: {report.extractor}\nMessages: {report.messages}\n")
            report.commits += 1
            report.added += len(fresh)
            report.added_ids += [m.id for m in fresh]
        existing.extend(made)
        history.extend([*new_events, *pair_events])
        new.clear()
        new_events.clear()
        quotes.clear()

    try:
        with sources.noting_cuts() as cuts:     # a message cut to its limit is said
            _extract_all(items, report, strict, dry_run, block_size, settings, status,
                         existing, new, new_events, quotes, quoted, known, flush, cuts)
    except ExtractionError as exc:
        if report.commits:      # the commits made stay: say so, and that a re-run resumes
            raise ExtractionError(f"{exc}; the {count(report.added, 'memory')} committed "
                                  "before it stay (run it again to add the rest)") from None
        raise ExtractionError(f"{exc}; nothing written") from None
    if strict and report.broken:
        raise ImportRefused(report.broken)
    if report.broken and not report.messages:
        raise NothingRead(report.broken)
    if not report.messages and not report.broken:
        raise ConversationInputError([(1, "no message with text in the input")])
    flush()
    if private is not None:
        report.private = private.note()
    return report


def _extract_all(items, report: ExtractReport, strict: bool, dry_run: bool, block_size: int,
                 settings: ModelSettings | None, status: dict[str, str],
                 existing: list[Memory], new: list[Memory], new_events: list[dict],
                 quotes: dict[str, str], quoted: set, known: set[str], flush,
                 cuts: list[str]) -> None:
    """``import_items``' loop: each conversation's blocks extracted into ``new`` (and its
    status events into ``new_events``), ``flush`` called every ``FLUSH`` new memories;
    ``cuts``: ``sources.noting_cuts``' list, said under the place of the item read."""
    for item in items:
        report.notes += [f"{item.where}: {cut}" for cut in cuts]   # made reading it
        cuts.clear()
        if isinstance(item, sources.Broken):
            report.broken.append({"where": item.where, "reason": item.reason})
            continue
        report.conversations += 1
        report.messages += len(item.messages)
        report.notes += [f"{item.where}: {note}" for note in item.notes]
        for block in blocks(item.messages, block_size):
            if settings is not None:
                block = [m for m in block if (m.id, m.text) not in quoted]
                if not any(not m.context for m in block):
                    continue
                quotes.update((m.id, m.text) for m in block)
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
        if not strict and not dry_run and len(new) >= FLUSH:
            flush()


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
        origin = by_id[memory.sources[0]].origin
        metadata = {**({"quotes": quotes} if quotes else {}),
                    **({"source": origin} if origin else {})}
        out.append(Memory(
            id=f"x-{digest[:16]}", content=content_of(memory.title, memory.summary),
            created_at=datetime.fromisoformat(when), role=by_id[memory.sources[0]].role,
            scope=memory.scope, title=memory.title, sources=tuple(memory.sources),
            relations=tuple(r.model_dump() for r in memory.relations), status="active",
            extractor_version=version,   # set here, never by the model
            metadata=metadata or None))
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
                 quotes: dict[str, str], words: dict[str, frozenset[str]] | None = None
                 ) -> tuple[list[Memory], list[dict]]:
    """Candidate pairs of the new memories, decided (model) or queued (offline). ``words``:
    the memories' words by id, kept across the commits of one long import."""
    seen = {e["pair"] for e in history if e.get("pair")}
    live = [m for m in existing if status.get(m.id, "active") not in NOT_LIVE]
    found = dedupe.candidates(live, _own_records(existing, new, status), seen, words)
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
