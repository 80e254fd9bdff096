"""The offline backend: deterministic, no network, and held to the same rules as a model.

For each memory it finds the scene whose topic it is about (``routing.topic_evidence`` over
real words, ``offline_words``: jieba for Chinese, stems without filler for English; or a rare
name or acronym only one scene holds), adds the memory as a dated line to that scene's
timeline (or, for a plan or an open question, to its open threads, ``threads``; a memory that
settles a thread closes it), creates a scene only when nothing is close and the rules allow,
and merges the two most alike scenes when the count is at the cap. It works only through the sandbox's
tools with JSON arguments, like a model would, so the policy hooks judge it exactly as they
judge a model.

Conservation (docs/DESIGN.md "A batch", step 7): text a person wrote (``conservation.Authorship``)
is kept word for word; when a scene is full its oldest engine-written entries are rolled up
into period digests that cite their memory ids (``rollup``), never the memories of this
batch; a memory that fits nowhere goes to
another or a new scene, and if nothing can hold it the batch fails with its memories pending.
Dates are written in the store's one time zone (config ``timezone``), ordered by instant.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from scene_engine.batch.accounting import Declaration, account
from scene_engine.batch.conservation import (
    ENGINE_KEYS,
    MERGE_COVERAGE,
    dropped_facts,
    is_pinned,
    keeps,
)
from scene_engine.batch.rules import is_report_like, merged_from, room_demand
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.periods import parse_fact
from scene_engine.core.plural import count
from scene_engine.core.text import MARK
from scene_engine.offline import threads
from scene_engine.offline.grouping import (
    AHEAD,
    CAP_MERGE,
    GROUP,
    JOIN,
    NEW_TOPIC,
    ORPHAN,
    SAME_TOPIC,
    SCENES_PER_STEP,
    plan,
)
from scene_engine.offline.meaning import Space, one_blas_thread
from scene_engine.offline.naming import BEST_FIT, RENAME_RATIO, fit, name_stem, name_words
from scene_engine.offline.prose import summary as scene_summary
from scene_engine.offline.rollup import condense
from scene_engine.offline.timeline import (
    TIMELINE,
    Draft,
    Entry,
    ordered,
    parse_draft,
    render_body,
    size,
)
from scene_engine.offline.words import analyzer, name_fits
from scene_engine.offline.words import scene_name as _word_name
from scene_engine.store.memories import Memory
from scene_engine.store.scene import HeaderStyle, Scene, parse_scene, render_scene

__all__ = ["Draft", "Entry", "OfflineBackend", "OfflineError", "parse_draft", "render_body",
           "render_draft", "restates", "scene_name"]

RENAME_ENTRIES = 4      # a scene renamed for drift has at least this many entries (a topic)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_DATED_LINE = re.compile(r"^\s*[-*]\s*(?:\d{4}-\d{2}-\d{2}\s*:\s*)?")
_BULLET = re.compile(r"^[-*+]\s")       # a top-level bullet (an indented one is under another)
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]{2,})\b")
_WORD = re.compile(f"[^\\W_](?:[^\\W_]|{MARK})*")   # a word with its combining marks


# A scene line's date or period prefix ("- 2026-01-05: ", "- 2026-03 (digest): "): what it
# says is after it; a digest's facts each lead with their own days ("4–29 Mar ×6: ").
_LINE_PREFIX = re.compile(r"^\s*(?:[-*+]\s+)?(?:(\d{4}[-\d–Q]*)(\s*\(digest\))?\s*:\s*)?")
_NEXT_FACT = re.compile(r";\s+(?=\d{1,2}(?:–\d{1,2})? [A-Z][a-z]{2}\b)")


def _scene_lines(body: str) -> list[str]:
    """What a scene body says, unit by unit (no blank line, no heading): each line without
    its date or period prefix, and a digest line fact by fact without their days, so that a
    digest that took one more fact is embedded for that fact alone (the others are cached):
    what the scene's vector is made of."""
    out = []
    for line in body.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _LINE_PREFIX.match(line)
        if found is None:                      # the pattern is all optional: never None
            continue
        said = line[found.end():].strip()
        if found.group(2):                     # a digest of period group(1)
            for fact in _NEXT_FACT.split(said):
                parsed = parse_fact(fact.strip(), found.group(1))
                text = (parsed[3] if parsed else fact).strip()
                if text:
                    out.append(text)
        elif said:
            out.append(said)
    return out


def _no_meaning(texts):
    """A job built without an embedder (a test's own job): every text means the same."""
    import numpy

    return numpy.zeros((len(texts), 1), dtype=numpy.float32)


class OfflineError(SceneEngineError, RuntimeError):
    """The offline backend cannot fold the batch (nothing fits, or a refused call)."""


def render_draft(draft: Draft, style: HeaderStyle, zone: str) -> str:
    """Scene text with the body as it stands and a fresh summary (unless a person's or the
    scene is pinned)."""
    meta = dict(draft.meta)
    if not draft.keep_summary or not str(meta.get("summary") or "").strip():
        meta["summary"] = _summary(draft)
    if draft.merged_from:
        meta["merged_from"] = sorted(set(draft.merged_from))
    scene = Scene(name=draft.name, meta=meta, body=render_body(draft, zone), header="yaml",
                  raw=draft.raw)
    return render_scene(scene, style=style)


def _summary(draft: Draft) -> str:
    """``offline_prose.summary`` of the draft's timeline and open threads: what the
    engine's entries say (a person's lines when there are none), and as many entries, over
    the span, as the timeline has bullets (issue 23 item 6: a reader counts the bullets)."""
    timeline = ordered(draft.entries)
    bullets = _bullets(timeline)
    said = [(e.day, _plain(e)) for e in timeline if not e.person] or bullets \
        or [(e.day, e.text) for e in timeline]
    return scene_summary(said, [t.text for t in draft.threads], draft.head or draft.tail,
                         bullets=[day for day, _ in bullets] or None)


def _bullets(timeline: list[Entry]) -> list[tuple[str, str]]:
    """(day, text) of each bullet of ``timeline`` (in order): an engine entry (a digest is
    one bullet), or a person's own top-level ``-``/``*`` line with the lines under it that
    are no bullet of their own (a wrapped line, a nested list); a person's heading is none."""
    out: list[tuple[str, str]] = []
    for entry in timeline:
        if not entry.person:
            out.append((entry.day, _plain(entry)))
        elif _BULLET.match(entry.text):
            out.append((entry.day, _DATED_LINE.sub("", entry.text)))
        elif out and not entry.text.lstrip().startswith("#") and entry.text.strip():
            out[-1] = (out[-1][0], f"{out[-1][1]} {entry.text.strip()}")
    return out


def _plain(entry: Entry) -> str:
    """An entry's words without an older digest's citations and counts (what a summary
    quotes)."""
    if not entry.digest:
        return entry.text
    text = re.sub(r"^\d+ entries: ", "", entry.text)
    return re.sub(r"\s*\[[^\[\]]*\]", "", text)


def _facts(entry: Entry) -> list[str]:
    """What an entry says, fact by fact: a digest's facts without their days (each one
    embedded and segmented once, however often the digest grows), another entry whole."""
    text = _plain(entry)
    if not entry.digest:
        return [text]
    out = []
    for fact in _NEXT_FACT.split(text):
        parsed = parse_fact(fact.strip(), entry.day)
        said = (parsed[3] if parsed else fact).strip()
        if said:
            out.append(said)
    return out


def _pair_order(pair: tuple[float, str, str]) -> tuple[float, str, str]:
    """The order ``merge_one_topic`` tries pairs of scenes in: the most alike first, then
    by name."""
    return -pair[0], pair[1], pair[2]


def _similarity_text(name: str, text: str) -> str:
    """Name, summary and body of a scene text (what routing compares memories against)."""
    scene = parse_scene(text, name=name)
    return "\n".join([name.replace("-", " "), str(scene.meta.get("summary", "")), scene.body])


def _tokens(text: str) -> set[str]:
    """Every word, number and CJK character of ``text``, lower-cased (stop words included:
    "not" and "3" change a fact)."""
    found: set[str] = set()
    for token in _WORD.findall(text.lower()):
        if re.search(r"[\u3400-\u9fff]", token):
            found.update(token)          # each CJK character (周二 vs 周四 differ)
        else:
            found.add(token)
    return found


def restates(fact: str, lines: list[str]) -> bool:
    """True when one of ``lines`` (the same day's entries, one fact each), or a sentence of
    one, says exactly ``fact``: the same words, numbers and characters, case and punctuation
    aside. A correction adds or drops a word ("not", "Thursday"), so it is new; an entry and
    its sentences are compared one by one, so words spread over a day's facts never add up
    to a repeat (an old scene's day line may still hold several facts); a repeat on another
    day is a recurring event and is never checked here."""
    wanted = _tokens(fact)
    return bool(wanted) and any(
        wanted == _tokens(part) for line in lines
        for part in dict.fromkeys([line, *_SENTENCE_END.split(line.strip())]))


def scene_name(memory_texts: list[str], taken: set[str], rarity=None) -> str:
    """A file name of at most three topic words of the memories, in their language, unique
    (case-insensitive) among ``taken`` (``offline_words.scene_name``)."""
    return _word_name(memory_texts, taken, rarity=rarity, is_report_like=is_report_like)


def _name_key(name: str) -> str:
    """A file name as the file system and the sandbox compare names: case aside, and NFC (a
    name typed on macOS is NFD: "café" is two names to Python, one to the sandbox)."""
    return unicodedata.normalize("NFC", name).casefold()


def names_in(text: str) -> set[str]:
    """Names and acronyms of ``text`` as index terms: ``KPX``, ``iOS``-like words with inner
    capitals or digits, and capitalised words that do not start a sentence."""
    found = set()
    for sentence in _SENTENCE_END.split(text.strip()):
        for match in _NAME.finditer(sentence):
            word = match.group(0)
            inner = any(c.isupper() or c.isdigit() for c in word[1:])
            if inner or match.start() > 0:
                found.update(analyzer(word))
    return found


class OfflineBackend:
    """Backend protocol: ``run(job) -> BackendResult``; ``name`` goes in commit trailers."""

    name = "offline"

    def run(self, job):
        """Fold ``job.memories`` into scenes through ``job.box``; a ``BackendResult`` whose
        ``deferred`` lists memories left for a later batch and ``declared`` says where each
        other memory went. Raises ``OfflineError`` when a memory fits nowhere."""
        from scene_engine.batch.contract import BackendResult

        worker = _OfflineWorker(job)
        with one_blas_thread():
            deferred = worker.fold(job.memories)
            worker.rename_drifted()
            worker.hold_to_the_rules()
            worker.flush()
        changed = sorted(d.name for d in worker.drafts.values()
                         if d.changed and d.name not in worker.deleted)
        folded = len(job.memories) - len(deferred)
        summary = (f"Folded {count(folded, 'memory')} into {count(len(changed), 'scene')}: "
                   f"{', '.join(changed) or 'none changed'}.")
        summary += _deferred_said(len(deferred) - len(worker.no_room), len(worker.no_room),
                                  job.context.max_scenes - 1)
        if worker.merges:      # the log's "1 merged" says which, and why
            summary += " " + " ".join(f"Merged {drop} into {keep} ({why})."
                                      for drop, keep, why in worker.merges)
        if worker.renamed:     # the log's "1 renamed" says which
            summary += " " + " ".join(f"Renamed {old} to {new} (its topic moved)."
                                      for old, new in worker.renamed)
        return BackendResult(final_text=summary, steps=len(job.box.calls),
                             deferred=[m.seq for m in deferred], declared=worker.declarations(),
                             may_skip=False)


def _deferred_said(waiting: int, no_room: int, limit: int) -> str:
    """What the batch's summary says of the memories it left pending: those waiting for a
    topic of their own to form (there is room for new scenes), and those that fit nowhere
    this batch (the store at its cap, the scenes near them full, condensed as far as one
    batch may: ``conservation.keeps``)."""
    said = ""
    if waiting:
        said += (" 1 unrelated memory waits for a scene of its own." if waiting == 1
                 else f" {waiting} unrelated memories wait for scenes of their own.")
    if no_room:
        said += (f" {count(no_room, 'memory')} did not fit: the store is at its limit of "
                 f"{count(limit, 'scene')} and the scenes near {'it' if no_room == 1 else 'them'}"
                 " are full; later batches condense further (raise max_scenes or "
                 "max_scene_chars to fold faster).")
    return said


def cap_outlook(job) -> tuple[int, bool]:
    """What the next offline batch does about the scene cap, for ``doctor``: (scenes it
    merges away to come under the cap, True when it cannot come under it and so opens no new
    scene). Nothing is written."""
    worker = _OfflineWorker(job)
    worker.come_under_cap()
    return len(worker.deleted), worker.stuck


class _OfflineWorker:
    def __init__(self, job):
        self.job = job
        self.box = job.box
        self.limit_chars = job.context.max_scene_chars
        self.zone = job.config.timezone
        self.tz = job.config.tz
        # Scenes with unreadable headers still count against the cap but are never touched.
        self.limit = job.context.max_scenes - 1 - len(job.context.frozen)
        self.stuck = False   # over the cap, and no two scenes can merge (``fold``)
        self.drafts: dict[str, Draft] = {}
        self.texts = dict(job.scene_texts)   # name -> current text (not yet read through the box)
        self.deleted: list[str] = []
        self.merged_into: dict[str, str] = {}
        self.created: list[str] = []      # this batch's new scenes (rules.new_scene_allowance)
        self.renamed: list[tuple[str, str]] = []    # (old name, new name) this batch
        self.merges: list[tuple[str, str, str]] = []  # (merged away, into, why) this batch
        # One by default (the seed's rule); more only with new_scenes_per_batch above 1.
        self.allowance = job.context.allowance()
        self.placed: dict[int, tuple[str, str, str]] = {}   # seq -> (outcome, scene, id)
        self.no_room: list[Memory] = []      # deferred at the cap: no scene could take them
        # Scenes are compared by name, summary and body (their sizes, for merges); by meaning
        # through ``_meaning``: the header's dates would make grouping depend on the clock.
        self.docs = {n: _similarity_text(n, t) for n, t in self.texts.items()}
        self._old_bodies: dict[str, str] = {}
        # The rule's verdict on a scene's body, by its text: a placement judges the same
        # body twice (the rollup's result, then the placement's own check).
        self._verdicts: dict[tuple[str, str, tuple[str, ...]], bool] = {}
        self._space: Space | None = None
        self._members: dict[str, list[int]] = {}   # scene -> rows of its lines (``_meaning``)
        self._sums: dict[str, Any] = {}       # scene -> the sum of those rows
        self._row: dict[int, int] = {}        # memory seq -> its row in the space

    # -- sandbox calls, exactly as a model would make them
    def _call(self, tool: str, **arguments) -> str:
        result = self.box.execute(tool, json.dumps(arguments, ensure_ascii=False))
        if result.startswith("Error"):
            raise OfflineError(f"{tool}({arguments.get('path')}) refused: {result}")
        return result

    def _draft(self, name: str) -> Draft:
        if name not in self.drafts:
            text = self._call("read_file", path=name)
            self.drafts[name] = parse_draft(name, text, self.job.context.authorship(name))
        return self.drafts[name]

    def _live(self) -> list[str]:
        names = [n for n in self.texts if n not in self.deleted]
        return names + [n for n in self.created if n not in names]

    def _doc(self, name: str) -> str:
        if name in self.drafts:
            return self.drafts[name].text_for_similarity()
        return self.docs.get(name, "")

    # -- meaning (``meaning``, ``grouping``)
    def _meaning(self, memories: Sequence[Memory] = (), ahead: Sequence[Memory] = ()) -> Space:
        """The batch's vectors, made once: every line of every scene as the batch found it,
        ``memories`` (the batch) and ``ahead`` (memories pending after it). A scene's vector
        is the sum of its lines' (``_sums``), kept up to date as memories join it."""
        if self._space is not None:
            return self._space
        lines: list[str] = []
        owner: list[str] = []
        for name in self._live():
            for line in _scene_lines(self._doc_body(name)):
                lines.append(line)
                owner.append(name)
        extra = [m for m in ahead if m.seq not in {b.seq for b in memories}]
        texts = lines + [m.content for m in memories] + [m.content for m in extra]
        per_scene = Counter(owner)
        weights = [1 / per_scene[o] for o in owner] + [1.0] * (len(texts) - len(lines))
        self._space = Space(texts, self.job.embed or _no_meaning, weights)
        for name in self._live():
            self._members[name] = [i for i, o in enumerate(owner) if o == name]
            self._sums[name] = self._space.total(self._members[name])
        for i, memory in enumerate([*memories, *extra]):
            self._row[memory.seq] = len(lines) + i
        return self._space

    def _doc_body(self, name: str) -> str:
        """The body of scene ``name`` as the batch found it (or its draft now)."""
        if name in self.drafts:
            return render_body(self.drafts[name], self.zone)
        return parse_scene(self.texts[name], name=name).body

    def _memory_vector(self, memory: Memory) -> Any:
        space = self._meaning()
        if memory.seq not in self._row:      # not seen when the space was made
            return space.total([])
        return space.rows[self._row[memory.seq]]

    def _scene_similarity(self, a: str, b: str) -> float:
        self._meaning()
        return Space.cosine(self._sums[a], self._sums[b])

    def _nearest(self, memory: Memory, least: float | None = None) -> list[str]:
        """Live scenes by how near ``memory`` is to each in meaning, nearest first (ties by
        name); with ``least``, only those at least that near."""
        vector = self._memory_vector(memory)
        scored = sorted(((-Space.cosine(vector, self._sums[n]), n) for n in self._live()
                         if n in self._sums), key=lambda item: item)
        return [n for s, n in scored if least is None or -s >= least]

    def _took(self, name: str, memory: Memory) -> None:
        """``memory`` went into scene ``name``: the scene's vector takes its row."""
        if self._space is not None and name in self._sums and memory.seq in self._row:
            self._members[name].append(self._row[memory.seq])
            self._sums[name] = self._sums[name] + self._memory_vector(memory)

    def _same_topic(self, a: str, b: str) -> float:
        """How much scenes ``a`` and ``b`` are one topic: the larger share, over the two, of
        a scene's lines that are nearer in meaning to the other scene than to the rest of
        their own, and at least ``grouping.JOIN`` near it (so they would have joined it, had
        it been there first). Over one half: one topic (a silhouette below zero). Two scenes
        as alike as memories that form a topic together (``grouping.GROUP``) are one: 1.
        (Two scenes each other's nearest are not: on bench/topics that merged topics.)"""
        self._meaning()
        if self._scene_similarity(a, b) >= GROUP:
            return 1.0          # as alike as memories that open a topic together
        return max(self._would_join(a, b), self._would_join(b, a))

    def _would_join(self, small: str, other: str) -> float:
        rows = self._members.get(small, [])
        if not rows or other not in self._sums:
            return 0.0
        space = self._meaning()
        vectors = space.rows[rows]
        near = Space.cosines(vectors, self._sums[other])
        if len(rows) == 1:     # a scene of one line: as near as two memories of one topic
            return float(near[0] >= GROUP)
        rest = Space.cosines(self._sums[small][None, :] - vectors, None, pairs=vectors)
        return float(((near >= JOIN) & (near > rest)).sum()) / len(rows)

    def _forget(self, name: str) -> None:
        """The draft of ``name`` changed (its vector is kept up to date by ``_took``)."""

    def declarations(self) -> dict[str, Declaration]:
        """memory id -> where it went, following this batch's merges."""
        out = {}
        for outcome, scene, memory_id in self.placed.values():
            while scene in self.merged_into:
                scene = self.merged_into[scene]
            out[memory_id] = Declaration(outcome, scene)
        return out

    def hold_to_the_rules(self) -> None:
        """Judge each memory this batch found said already ("recorded": the same day's entry
        restates it) by the rule the batch itself is judged by (``accounting.account``, on the
        bodies as the batch leaves them), before anything is written; one the rule does not
        find held there is written into that scene as an entry of its own instead. So the
        backend never claims what its rules refuse, and a disagreement between the two costs
        a line, not the batch (issue 37: a digest's "not" of another fact was read as the
        opposite of a memory its own line held, and every later run failed the same way)."""
        recorded = [m for m in self.job.memories
                    if self.placed.get(m.seq, ("",))[0] == "recorded"]
        if not recorded:
            return
        # The bodies alone (a text without a header is all body to the rule); a scene merged
        # away is named by no claim (``declarations`` follows merges).
        bodies = {d.name: render_body(d, self.zone) for d in self.drafts.values()
                  if d.changed and d.name not in self.deleted}
        claims = self.declarations()
        held, _ = account(recorded, [], bodies, self.job.scene_texts,
                          {m.id: claims[m.id] for m in recorded}, allow_skip=False)
        accounted = {entry.seq for entry in held}
        for memory in recorded:
            scene = claims[memory.id].scene
            if memory.seq not in accounted and scene is not None:
                self._add(scene, memory, deep=True, again=True)

    # -- folding
    def come_under_cap(self) -> None:
        """The cap was lowered, or a person's own scenes went over it: merge scenes until
        there is room for the batch's new scene, moving a person's summary into the merged
        body when it must (every word of theirs kept). When no two scenes can merge, set
        ``stuck``: the batch still folds its memories into the scenes there are and opens no
        new one (``doctor`` runs this too, to say which the next batch will do)."""
        while len(self._live()) > self.limit and len(self._live()) > 1:
            if not self._merge_closest() and not self._merge_closest(move_summary=True):
                break
        if len(self._live()) > self.limit:   # frozen scenes alone may fill the cap too
            self.stuck = self.job.context.cap_stuck = True

    def merge_one_topic(self) -> bool:
        """Seed 001's active merge (主动合并; issue 23 item 5): two scenes of one topic merge as
        soon as both exist, below the cap too, so the slot is free before a later topic needs
        it and no memory has to go into a scene of another topic. One pair a batch (a batch
        stays small enough to read and undo), the most alike first, and only when: one topic
        by meaning (``_same_topic`` over ``grouping.SAME_TOPIC``), both the engine's alone (no line, summary or name a
        person gave; not pinned), and the merged text fits ``max_scene_chars`` as it is (an
        active merge condenses nothing: a topic too big for one scene below the cap has a
        second one, ``fold``). The merged-away file is deleted in this batch's
        commit and named in ``merged_from``; the heat is the two summed + 1
        (``transaction.finalize_headers``). Returns True when it merged."""
        live = [n for n in self._live() if n not in self.created and n in self.texts]
        if len(live) < 2:
            return False
        # Only a pair whose texts fit one scene may merge: the others are not weighed at all
        # (a full store's scenes are each most of a scene, and weighing every pair by
        # meaning was a tenth of a batch, issue 39). A scene drafted on the way (its text
        # read as the backend edits it) may fit with another then: that pair is weighed
        # and takes its place among those still to come, as if all had been weighed first.
        every = [(a, b) for i, a in enumerate(live) for b in live[i + 1:]]
        weighed: set[tuple[str, str]] = set()
        waiting: list[tuple[float, str, str]] = []

        def fits(a: str, b: str) -> bool:
            return len(self._doc(a)) + len(self._doc(b)) <= self.limit_chars

        def weigh(after: tuple[float, str, str] | None = None) -> None:
            lengths = {n: len(self._doc(n)) for n in live}
            for a, b in every:
                if (a, b) not in weighed and lengths[a] + lengths[b] <= self.limit_chars:
                    weighed.add((a, b))
                    pair = (self._same_topic(a, b), a, b)
                    if after is None or _pair_order(pair) > _pair_order(after):
                        waiting.append(pair)
            waiting.sort(key=_pair_order, reverse=True)    # the next one last

        weigh()
        while waiting:
            pair = waiting.pop()
            share, a, b = pair
            if share <= SAME_TOPIC:
                return False
            if not fits(a, b):
                continue
            drafted = len(self.drafts)
            if self._engine_only(a) and self._engine_only(b):
                keep, drop = (a, b) if len(self._doc(a)) >= len(self._doc(b)) else (b, a)
                merged = self._merged(keep, drop)
                if merged is not None and size(merged, self.zone) <= self.limit_chars:
                    self._absorb(keep, drop, merged, "one topic")
                    return True
            if len(self.drafts) != drafted:
                weigh(after=pair)
        return False

    def _absorb(self, keep: str, drop: str, merged: Draft, why: str) -> None:
        """Scene ``drop`` merged into ``keep`` (``merged`` is the new draft), for the
        reason ``why`` (said in the batch's summary)."""
        self.merges.append((drop, keep, why))
        self.drafts[keep] = merged
        self.drafts[drop].changed = False
        self.deleted.append(drop)
        self.merged_into[drop] = keep
        if drop in self._sums:
            self._sums[keep] = self._sums[keep] + self._sums.pop(drop)
            self._members[keep] = self._members[keep] + self._members.pop(drop)

    def _engine_only(self, name: str) -> bool:
        """True when only the engine wrote scene ``name``: no line or summary of a person, not
        pinned, a name the engine gave."""
        draft = self._draft(name)
        if is_pinned(draft.meta) or draft.keep_summary or draft.head or draft.tail \
                or draft.heading or draft.own_threads or any(e.person for e in draft.entries):
            return False
        if name in self.job.context.person_links:
            return False         # a person's persona links to it by name
        return not (self.job.named_by_person and self.job.named_by_person(name))

    def fold(self, memories: list[Memory]) -> list[Memory]:
        """Put each memory in the scene of its topic, decided for the whole batch at once
        (``grouping.plan``: the batch, the scenes and the memories pending after it grouped
        by meaning); return the memories deferred to a later batch.

        1. A memory whose group holds a scene goes to it (the next nearest, when that cannot
           make room). 2. A memory alone in its topic (no other pending memory shares it)
           joins the nearest scene at least ``grouping.ORPHAN`` near. 3. The batch's largest
           new topic (``grouping.NEW_TOPIC`` memories, pending ones after the batch
           included, one more each ``grouping.SCENES_PER_STEP`` scenes) opens the batch's new
           scene, a merge of two scenes of one topic first at the cap; else a topic whose
           scenes are full, below the cap, gets a second one; when nothing else of the batch
           found a place, its first memory's topic opens one. 4. The others wait for a later batch while the store has room for more
           scenes: a topic for its own scene, a memory near no scene for a topic to form.
           Without room each joins the nearest scene that can hold it. Every batch places or
           opens something, so deferral ends.
        """
        order = sorted(memories, key=lambda m: (m.created_at, m.seq))
        upcoming = self.job.upcoming(AHEAD) if self.job.upcoming else []
        space = self._meaning(order, upcoming)      # before any merge asks what scenes mean
        self.come_under_cap()
        self.merge_one_topic()
        live = [n for n in self._live() if n in self._sums]
        ahead = [m for m in upcoming if m.seq in self._row and m not in order]
        decided = plan([self._sums[n] for n in live],
                       space.rows[[self._row[m.seq] for m in order]],
                       space.rows[[self._row[m.seq] for m in ahead]])
        company = {m.seq: decided.company.get(i, 0) for i, m in enumerate(order)}
        unmatched: list[Memory] = []
        overflow: list[Memory] = []      # of a topic whose scenes are full
        for i, memory in enumerate(order):
            scene = decided.joins.get(i)
            answered = self._settled_by(memory)
            if answered and self._place_near(memory, answered):
                continue
            if scene is not None:
                targets = [live[scene], *(n for n in self._nearest(memory, JOIN)
                                          if n != live[scene])]
            elif company[memory.seq] < NEW_TOPIC:
                targets = self._nearest(memory, ORPHAN)
            else:
                targets = []
            if not (targets and self._place_near(memory, targets, clearly=scene is not None)):
                unmatched.append(memory)
                if targets:
                    overflow.append(memory)
        # The largest new topics open scenes while the batch's allowance lasts (one by
        # default); a fuller store opens one only for a topic said more often.
        topics = [([order[i] for i in rows if order[i] in unmatched], support)
                  for rows, support in decided.topics
                  if support >= NEW_TOPIC + len(live) // SCENES_PER_STEP]
        if not topics and overflow:
            topics = [(overflow, len(overflow))]  # a topic whose scene is full: a second one
        if not topics and unmatched and (not self.placed or not ahead):
            # Nothing found a place, or nothing is pending after the batch to share a topic
            # with: the first one's topic opens.
            topics = [([unmatched[0]], 1)]
        for new, support in topics:
            if not new or len(self.created) >= self.allowance or not self._can_create():
                break
            if self.created and support < NEW_TOPIC:
                break          # a further new scene only for a topic said more than once
            made = self._create(new, max(support, len(new)))
            if not made:
                break
            # A new scene takes its group as it is; a live one of the same name (``_create``)
            # as any scene of the topic does, condensing if it must.
            unmatched = [m for m in unmatched if not (m in new and (
                self._add(made, m) if made in self.created else self._place_near(m, [made])))]
            # A memory alone in its group may be of the new scene's topic, said in other
            # words: it looks again, now that the scene is there.
            unmatched = [m for m in unmatched if not (
                company[m.seq] < NEW_TOPIC and (near := self._nearest(m, ORPHAN))
                and self._place_near(m, near))]
        room = len(self._live()) < self.limit and not self.stuck
        # Wait only when something of the batch found its place (a batch must settle some).
        waiting = [m for m in unmatched if room and self.placed]
        deferred: list[Memory] = []
        for memory in unmatched:
            if memory not in waiting and not self._place_anywhere(memory):
                deferred.append(memory)
        # No room for a scene of their own: they wait for room the rollups make, not a topic.
        self.no_room = [] if room else deferred
        return waiting + deferred

    def _place_near(self, memory: Memory, targets: list[str], clearly: bool = True) -> bool:
        """Put ``memory`` into the first of ``targets`` (its topic's scenes, nearest first)
        that can take it: as it is, or condensing that scene's old entries (deeper at the cap,
        rather than open a second scene of the same topic). A long memory (a third of a scene
        or more) rolls a scene's detail up only when nothing else will do: below the cap it
        goes only where it fits as it is (another scene may open for it); at the cap a scene
        of ``targets`` with room comes first, then, unless the memory is ``clearly`` about
        them (a memory alone near them is not), any scene with room."""
        if self._is_long(memory):
            roomy = [n for n in targets if self._has_room(n, memory)]
            if len(self._live()) < self.limit:
                targets = roomy
            elif self._place(memory, roomy) or (not clearly and self._place(
                    memory, [n for n in self._roomiest(self._nearest(memory), memory)
                             if self._has_room(n, memory)])):
                return True
        if self._place(memory, targets):
            return True
        return len(self._live()) >= self.limit and self._place(memory, targets, deep=True)

    def _place_anywhere(self, memory: Memory) -> bool:
        """Put ``memory``, which no scene's topic takes and no new scene can hold, into the
        nearest scene that can (a long one into the scene with most room first); deep
        rollups when no scene can be added any more; for the batch's first memory the last
        resort of rollups (``rollup.condense``'s squeeze) before failing. False: it waits."""
        names = self._nearest(memory)
        if self._is_long(memory):
            names = self._roomiest(names, memory)
        if self._place(memory, names):
            return True
        if len(self._live()) >= self.limit and self._place(memory, names, deep=True):
            return True
        if not self.placed and self._place(memory, names, squeeze=True):
            return True
        frozen = sorted(self.job.context.frozen)
        if not self.placed and not self._live() and frozen:
            raise OfflineError(
                f"memory {memory.id} fits in no scene: every scene is one a person must "
                f"fix first ({', '.join(frozen[:3])}{' ...' if len(frozen) > 3 else ''}; "
                "`scenes doctor` says what each needs), and they fill the cap of "
                f"{self.job.context.max_scenes - 1}. Fix one, or raise max_scenes; the "
                "memories stay pending.")
        if not self.placed:
            raise OfflineError(self._no_room(memory))
        return False

    def _no_room(self, memory: Memory) -> str:
        """Why ``memory`` fits nowhere, naming the files: the engine condenses its own text
        without limit, so only a person's text (or this batch's) can fill a scene for good."""
        owned = []
        for name in self._live():
            draft = self._draft(name)
            own = sum(len(e.text) for e in draft.entries if e.person) + len(draft.head) \
                + len(draft.tail) + sum(len(line) for line in draft.own_threads)
            owned.append((-own, name, own))
        named = ", ".join(f"{name} ({own:,} characters a person wrote)"
                          for _, name, own in sorted(owned)[:3] if own)
        if not named:     # the engine's own digests, squeezed as far as the rules allow
            return (f"memory {memory.id} fits in no scene: the {len(owned)} scenes hold only "
                    "the engine's own rollups, already condensed as far as the coverage rule "
                    f"allows, and no new scene can be made (cap {self.limit}): scenes of "
                    f"{self.limit_chars:,} characters are too small for this memory "
                    f"({len(memory.content):,} characters). Raise max_scene_chars or "
                    "max_scenes; the memories stay pending.")
        return (f"memory {memory.id} fits in no scene: the scenes are full of text a person "
                f"wrote, which the engine never condenses or moves ({named}), or of this "
                f"batch's memories, and no new scene can be made (cap {self.limit}). Shorten "
                "one of those files by hand or raise max_scenes; the memories stay pending.")

    def _is_long(self, memory: Memory) -> bool:
        """A memory of a third of a scene's room or more."""
        return len(memory.content) * 3 > self.limit_chars

    def _has_room(self, name: str, memory: Memory) -> bool:
        """True when scene ``name`` holds ``memory`` without condensing anything."""
        return len(self._doc(name)) + len(self._fitting(memory.content)) + 16 <= self.limit_chars

    def _roomiest(self, names: list[str], memory: Memory) -> list[str]:
        """``names`` with those that hold the memory without condensing first (a full scene
        would give up old detail for it), otherwise in the same order."""
        room = [n for n in names if self._has_room(n, memory)]
        return room + [n for n in names if n not in room]

    def _place(self, memory: Memory, names: list[str], deep: bool = False,
               squeeze: bool = False) -> bool:
        return any(self._add(name, memory, deep or squeeze, squeeze) for name in names)

    def _can_create(self) -> bool:
        """Room for one more scene, or two scenes to merge to make room (never when the store
        is over its cap and no two of its scenes can merge: ``fold``)."""
        if self.stuck:
            return False
        return len(self._live()) < self.limit or len(self._live()) >= 2

    def _add(self, name: str, memory: Memory, deep: bool = False,
             squeeze: bool = False, again: bool = False) -> bool:
        """Put ``memory`` into scene ``name``; False (nothing changed) if the scene cannot
        hold it even after condensing its old entries (deep rollups only if ``deep``, the
        last resort only if ``squeeze``: ``rollup.condense``). ``again``: as an entry of its
        own even when the same day's entry says it already."""
        draft = self._draft(name)
        day = memory.created_at.astimezone(self.tz).date().isoformat()
        for i, entry in enumerate(() if again else draft.entries):
            # A person's line is kept as they wrote it, its date and bullet included.
            said = _DATED_LINE.sub("", entry.text) if entry.person else entry.text
            if entry.day == day and restates(memory.content, [said]):
                # Said again that day, adding nothing: recorded there, and as fresh as a new
                # fact (this batch does not condense what it just found confirmed).
                draft.entries[i] = replace(entry, fresh=True)
                self.placed[memory.seq] = ("recorded", name, memory.id)
                return True
        before, open_before = list(draft.entries), list(draft.threads)
        # An open thread takes more room than an entry (its heading, its "→"): a scene too
        # small for it takes the memory as a timeline entry.
        for may_open in (True, False):
            opened = self._thread_or_entry(draft, memory, day, may_open)
            # Each rollup step is judged by the rule as it goes: one that would give up too
            # much is undone and a deeper one (older years into a span) tried instead.
            fits = condense(draft, self.limit_chars, self.zone, deep, check=self._keeps,
                            squeeze=squeeze)
            if fits and self._keeps(draft):   # the rules' own measure (``conservation``)
                break
            draft.entries, draft.threads = list(before), list(open_before)
            if not opened:
                return False
        draft.changed = True
        self._took(name, memory)
        self.placed[memory.seq] = ("placed", name, memory.id)
        return True

    def _thread_or_entry(self, draft: Draft, memory: Memory, day: str,
                         may_open: bool = True) -> bool:
        """Add ``memory`` to ``draft``: as an open thread when it leaves something open
        (``threads.opens``) and ``may_open``, else as a timeline entry; the threads it settles
        (``threads.closes``) move to the timeline on their own day with its outcome. True
        when it opened a thread."""
        text = self._fitting(memory.content)
        settled = [t for t in draft.threads if t.day <= day
                   and threads.closes(t, text, self._answer(t, memory))]
        opened = None if settled or is_pinned(draft.meta) or not may_open \
            else threads.opens(text)
        if opened:
            draft.threads.append(replace(opened, day=day, ids=(memory.id,)))
        else:
            draft.entries.append(Entry(day, text, fresh=True, ids=(memory.id,)))
        for thread in settled:
            draft.threads.remove(thread)
            draft.entries.append(Entry(thread.day, threads.closed_text(thread, day, text),
                                       fresh=True, ids=thread.ids))
        return opened is not None

    def _answer(self, thread: threads.Thread, memory: Memory) -> float | None:
        """The sentence encoder's cosine of ``thread`` and ``memory`` (None without one)."""
        if self.job.embed is None:
            return None
        a, b = self.job.embed([thread.text, memory.content])
        return Space.cosine(a, b)

    def _settled_by(self, memory: Memory) -> list[str]:
        """Scenes with an open thread ``memory`` settles (``threads.closes``): a decided
        question goes where it was asked, whatever else it talks about."""
        day = memory.created_at.astimezone(self.tz).date().isoformat()
        found = []
        for name in self._live():
            open_ = bool(self.drafts[name].threads) if name in self.drafts \
                else threads.HEADING in self.docs.get(name, "")
            if not open_ or is_pinned(self._draft(name).meta):
                continue
            if any(t.day <= day and threads.closes(t, memory.content, self._answer(t, memory))
                   for t in self._draft(name).threads):
                found.append(name)
        return found

    def _fitting(self, text: str) -> str:
        """A memory longer than a whole scene keeps its beginning (the journal keeps all)."""
        room = max(self.limit_chars - 200, self.limit_chars // 2)
        if len(text) <= room:
            return text
        cut = text[:room]
        end = max(cut.rfind(". "), cut.rfind("。"))
        return (cut[: end + 1] if end > room // 2 else cut).rstrip() + "…"

    def _create(self, group: list[Memory], support: int = 0) -> str | None:
        """Open the batch's new scene for ``group`` (merging two first at the cap) and return
        its name; None if there is no room. A group whose best name is a live scene's name is
        that scene's topic: that scene is returned instead, and nothing is opened. ``support``:
        how many memories the topic has, pending ones included."""
        for name in self._nearest(group[0])[:2]:   # the rules want two existing scenes read
            self._draft(name)
        texts = [m.content for m in group]
        same = self._named_like(texts)
        if same is not None:
            return same
        # At the cap a new scene costs a merge. Two scenes alike enough merge for it; two
        # different topics never do: the group joins the nearest scenes instead (``fold``),
        # as a few stray memories cost a scene's purity less than a whole other topic.
        # A topic said less often than the smaller scene of the pair has lines is not worth
        # it: at a small cap, topics would take turns evicting each other every batch.
        if len(self._live()) >= self.limit and not self._merge_closest(
                CAP_MERGE, most_lines=support):
            return None
        name = self._new_name(texts, self._taken_names())
        self.created.append(name)
        self.drafts[name] = Draft(name, {}, "", [], changed=True)
        self._sums[name] = self._meaning().total([])
        self._members[name] = []
        return name

    def _named_like(self, texts: list[str]) -> str | None:
        """The live scene (not new this batch) whose name is the name ``texts`` would get,
        or None: a second ``猫粮`` scene would be ``猫粮-2``, the same topic."""
        stem = name_stem(name_words(texts, self.job.embed))
        if not stem:
            return None
        wanted = _name_key(f"{stem}.md")
        return next((n for n in self._live() if n not in self.created
                     and _name_key(n) == wanted and not is_pinned(self._draft(n).meta)), None)

    def _new_name(self, texts: list[str], taken: set[str]) -> str:
        """A name for a scene of ``texts`` that none of ``taken`` has: its best words
        (``naming``), else other pairs and triples of its best five, and a number only when
        every one is taken or reads like a report (``words.scene_name``)."""
        embed = self.job.embed
        words = name_words(texts, embed, k=5)
        folded = {_name_key(t) for t in taken}
        tries = [words[:3], *(list(c) for size in (2, 3)
                              for c in itertools.combinations(words, size))]
        for chosen in tries:
            stem = name_stem(chosen)
            if stem and not is_report_like(stem) and _name_key(f"{stem}.md") not in folded:
                return f"{stem}.md"      # a report-like name ("summary-...") tries other words
        return scene_name(texts, taken)

    def _taken_names(self) -> set[str]:
        """Names a new or renamed scene may not take: live, deleted or given by a rename this
        batch, existing when it began, any an existing scene lists in ``merged_from`` (a
        reused name would read as if that scene had been merged into the other one), and a
        gone scene's the persona still links to (``RuleContext.reserved``)."""
        earlier = {m for name, text in self.texts.items()
                   for m in merged_from(parse_scene(text, name=name))}
        renamed = {new for _, new in self.renamed}
        return (set(self._live()) | set(self.deleted) | set(self.job.context.existing)
                | earlier | renamed | self.job.context.reserved)

    def _merge_closest(self, least: float = -1.0, move_summary: bool = False,
                       most_lines: int | None = None) -> bool:
        """Fold one scene into its closest peer and delete it (frees one place); False if no
        pair at least ``least`` alike in meaning can merge without losing what the merged-away
        scene holds. With ``move_summary`` a scene whose summary a person wrote may be the
        one merged away: its summary goes into the merged body, word for word, as a line of
        its own (``_merged``).

        Pairs whose merged text fits ``max_scene_chars`` come first, most similar first; then
        the smallest pairs, condensed. Pinned scenes and this batch's new scene take no part;
        with ``most_lines``, nor a pair whose smaller scene has more lines than that.
        """
        live = [n for n in self._live() if n not in self.created
                and not is_pinned(self._draft(n).meta)]
        # A scene whose summary a person wrote is never the one merged away (the summary
        # would be lost with it); it can take another in.
        keeper_only = {n for n in live if self._draft(n).keep_summary
                       or n in self.job.context.person_links}
        size = {n: len(self._doc(n)) for n in live}

        def rank(pair):
            sim, a, b = pair
            combined = size[a] + size[b]
            fits = combined <= self.limit_chars
            return (not fits, -sim if fits else combined, a, b)

        pairs = sorted(((self._scene_similarity(a, b), a, b)
                        for i, a in enumerate(live) for b in live[i + 1:]), key=rank)
        pairs = [p for p in pairs if p[0] >= least and (
            most_lines is None or min(len(self._members.get(p[1], ())),
                                      len(self._members.get(p[2], ()))) <= most_lines)]
        for _, a, b in pairs:
            keep, drop = (a, b) if size[a] >= size[b] else (b, a)   # the bigger name says more
            if drop in keeper_only:
                keep, drop = drop, keep
            if drop in keeper_only and not move_summary:
                continue
            merged = self._merged(keep, drop, move_summary=drop in keeper_only)
            if merged is not None:
                self._absorb(keep, drop, merged, self._room_reason())
                return True
        return False

    def _room_reason(self) -> str:
        """Why a merge made room, as the batch's summary says it: the cap, and the files
        the engine cannot read that count toward it (a person wondering why two good
        scenes became one learns it was their broken files' room)."""
        # ``max_scenes`` is the count scene files stay below (docs/guides/configuration.md).
        cap, frozen = self.job.context.max_scenes - 1, len(self.job.context.frozen)
        return (f"to make room: at most {cap} scenes"
                + (f", {frozen} of them files the engine cannot read (`scenes doctor`)"
                   if frozen else ""))

    def _merged(self, keep: str, drop: str, move_summary: bool = False) -> Draft | None:
        """``keep`` with ``drop`` folded in, or None when it cannot hold ``drop``'s content
        (too little of its words after condensing, or a header key both set differently).
        ``move_summary``: ``drop``'s summary (a person's) opens its text in the merged body."""
        kept, dropped = self._draft(keep), self._draft(drop)
        for key, value in dropped.meta.items():
            if key not in ENGINE_KEYS and key in kept.meta and kept.meta[key] != value:
                return None
        # A person's own timeline heading in the scene merged away stays, word for word,
        # unless it is the very heading the merged scene has: one timeline, one heading.
        heading = kept.heading or f"## {TIMELINE} ({self.zone})"
        extra = [Entry("", dropped.heading, person=True)] \
            if dropped.heading and dropped.heading.strip() != heading.strip() else []
        summary = str(dropped.meta.get("summary") or "").strip() if move_summary else ""
        # A line both scenes hold word for word (a hand-copied scene) is written once.
        held = {(e.day, e.text.strip()) for e in kept.entries}
        fresh = [e for e in dropped.entries if (e.day, e.text.strip()) not in held]
        merged = replace(kept, entries=[*kept.entries, *extra, *fresh],
                         head="\n\n".join(p for p in (kept.head, summary, dropped.head) if p),
                         tail="\n\n".join(p for p in (kept.tail, dropped.tail) if p),
                         merged_from=[*kept.merged_from, drop, *dropped.merged_from],
                         threads=[*kept.threads, *dropped.threads],
                         own_threads=[*kept.own_threads, *dropped.own_threads], changed=True)
        old_body = parse_scene(self.texts[drop], name=drop).body

        def holds_both(draft: Draft) -> bool:
            return self._keeps(draft) and keeps(old_body, [render_body(draft, self.zone)],
                                                 MERGE_COVERAGE)

        if not condense(merged, self.limit_chars, self.zone, check=holds_both) \
                or not holds_both(merged):
            return None
        return merged

    def _keeps(self, draft: Draft) -> bool:
        """The draft still holds most of the words its scene had before the batch (the same
        rule the batch checks: condensing is fine, wiping is not). Facts are condensed here
        only when a scene overflows, so the rule for a scene with room holds by design.
        A scene merged into it this batch must stay held too (``MERGE_COVERAGE``)."""
        body = render_body(draft, self.zone)
        absorbed = tuple(d for d, k in self.merged_into.items() if k == draft.name)
        key = (draft.name, body, absorbed)
        if key not in self._verdicts:
            if len(self._verdicts) > 256:
                self._verdicts.clear()
            self._verdicts[key] = self._judge(draft.name, body, absorbed)
        return self._verdicts[key]

    def _judge(self, name: str, body: str, absorbed: tuple[str, ...]) -> bool:
        """``_keeps`` for the rendered ``body`` of scene ``name``."""
        if any(not keeps(self._old_body(d), [body], MERGE_COVERAGE) for d in absorbed):
            return False
        if name not in self.texts:
            return True
        old = self._old_body(name)
        if not keeps(old, [body]):
            return False
        # The batch's rule for a scene with room (``rules``: nothing dropped unless what had
        # to go in fills most of it), measured as the batch will measure it.
        return not dropped_facts(old, [body], room_demand(old, body), self.limit_chars)

    def _old_body(self, name: str) -> str:
        if name not in self._old_bodies:
            self._old_bodies[name] = parse_scene(self.texts[name], name=name).body
        return self._old_bodies[name]

    def rename_drifted(self) -> None:
        """Give a new name to each scene this batch changed whose name no longer says its
        topic: the best name its lines could have (``naming.name_words``) says it much better
        than the name it has (``naming.fit`` below ``naming.RENAME_RATIO`` of the new one's,
        so a tie or a memory in the other language never flips a name back and forth). The
        scene is written under the new name with ``merged_from: [old name]`` and the old
        file deleted, in this batch's commit, so git sees a rename and ``trace`` and
        ``blame`` follow it. Only names the engine gave: a scene with a person's lines or
        summary, or pinned, keeps its name; a name another scene has or had is not taken."""
        embed = self.job.embed
        drafts = [d for d in list(self.drafts.values()) if self._may_rename(d)]
        said = {d.name: [*(f for e in d.entries for f in _facts(e)),
                         *(t.text for t in d.threads)] for d in drafts}
        if embed is not None and drafts:     # one call: the encoder's cost is per call
            embed([*(t for texts in said.values() for t in texts),
                   *(" ".join(d.name.removesuffix(".md").split("-")) for d in drafts)])
        for draft in drafts:
            name, texts = draft.name, said[draft.name]
            if embed is not None and fit(name, texts, embed) >= RENAME_RATIO * BEST_FIT:
                continue     # no name could say it enough better (and finding one costs)
            stem = name_stem(name_words(texts, embed))
            new = f"{stem}.md" if stem and not is_report_like(stem) else ""
            if not new or _name_key(new) == _name_key(name):
                continue
            if embed is not None and fit(name, texts, embed) >= RENAME_RATIO * fit(new, texts,
                                                                                  embed):
                continue          # the name still says the topic well enough
            if embed is None and name_fits(name, texts):
                continue
            named_by_person = getattr(self.job, "named_by_person", None)
            if named_by_person and named_by_person(name):
                continue          # a person chose this name (created or renamed the file)
            if name in self.job.context.person_links:
                continue          # a person's persona links to it by this name
            if _name_key(new) in {_name_key(t) for t in self._taken_names() - {name}}:
                continue          # taken (a numbered copy reads worse than the old name)
            # It keeps what it took in this batch: a scene merged into it is deleted too.
            self.drafts[new] = replace(draft, name=new, merged_from=[*draft.merged_from, name],
                                       changed=True)
            draft.changed = False
            self.deleted.append(name)
            self.merged_into[name] = new
            self.renamed.append((name, new))
            if name in self._sums:
                self._sums[new] = self._sums.pop(name)
                self._members[new] = self._members.pop(name)

    def _may_rename(self, draft: Draft) -> bool:
        """A scene this batch changed whose name the engine gave and keeps giving: no
        person's line, summary, heading or thread in it, not pinned, not new or deleted in
        this batch, and a topic (``RENAME_ENTRIES``)."""
        name = draft.name
        return not (not draft.changed or name in self.created or name in self.deleted
                    or name not in self.texts or is_pinned(draft.meta) or draft.keep_summary
                    or any(e.person for e in draft.entries) or draft.head or draft.tail
                    or draft.heading or draft.own_threads
                    or len(draft.entries) < RENAME_ENTRIES)

    def flush(self) -> None:
        """Write the changed existing scenes, then delete the merged-away ones (a delete needs
        its survivor written first), then write the new scene (it needs the room)."""
        style = self.job.config.meta_style
        changed = [d for d in self.drafts.values() if d.changed and d.name not in self.deleted]
        for draft in sorted((d for d in changed if d.name not in self.created),
                            key=lambda d: d.name):     # renamed ones too: before their delete
            self._call("write_to_file", path=draft.name,
                       content=render_draft(draft, style, self.zone))
        for name in self.deleted:
            self._call("write_to_file", path=name, content="[DELETED]")
        for draft in (d for d in changed if d.name in self.created):
            self._call("write_to_file", path=draft.name,
                       content=render_draft(draft, style, self.zone))
