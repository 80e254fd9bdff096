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

import json
import re
from collections import Counter
from dataclasses import replace

from scene_engine.batch.accounting import Declaration
from scene_engine.batch.conservation import (
    ENGINE_KEYS,
    MERGE_COVERAGE,
    dropped_facts,
    is_pinned,
    keeps,
)
from scene_engine.batch.rules import is_report_like, merged_from, room_demand
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.plural import count
from scene_engine.core.text import MARK, Vectorizer
from scene_engine.offline import threads
from scene_engine.offline.prose import summary as scene_summary
from scene_engine.offline.rollup import condense
from scene_engine.offline.routing import entry_terms, routing_terms, topic_evidence
from scene_engine.offline.timeline import (
    TIMELINE,
    Draft,
    Entry,
    ordered,
    parse_draft,
    render_body,
    size,
)
from scene_engine.offline.words import analyzer, name_fits, rare_word, topic_words
from scene_engine.offline.words import scene_name as _word_name
from scene_engine.store.memories import Memory
from scene_engine.store.scene import HeaderStyle, Scene, parse_scene, render_scene

__all__ = ["Draft", "Entry", "OfflineBackend", "OfflineError", "parse_draft", "render_body",
           "render_draft", "restates", "scene_name"]

SIMILAR_ENOUGH = 0.2    # topic evidence (``routing.topic_evidence``) for a memory to join a scene
WEAK_EVIDENCE = 0.1     # ... enough for a memory like no other of its batch (``_join_loners``)
RARITY_POWER = 1        # (``_rarity``; set on bench/bench_topics.py)
GROUP_SIMILAR = 0.12    # cosine of two memories of a batch that may open a scene together
RENAME_ENTRIES = 4      # a scene renamed for drift has at least this many entries (a topic)
SAME_TOPIC = 0.15       # cosine of two scenes alike enough to merge for room (``_create``)
ONE_TOPIC_WORDS = 3     # topic words (``topic_words``) two scenes of one topic share one of
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_DATED_LINE = re.compile(r"^\s*[-*]\s*(?:\d{4}-\d{2}-\d{2}\s*:\s*)?")
_BULLET = re.compile(r"^[-*+]\s")       # a top-level bullet (an indented one is under another)
_CJK_WORD = re.compile(r"[\u3400-\u9fff]{2,}")
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]{2,})\b")
_WORD = re.compile(f"[^\\W_](?:[^\\W_]|{MARK})*")   # a word with its combining marks


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
        deferred = worker.fold(job.memories)
        worker.rename_drifted()
        worker.flush()
        changed = sorted(d.name for d in worker.drafts.values()
                         if d.changed and d.name not in worker.deleted)
        folded = len(job.memories) - len(deferred)
        summary = (f"Folded {count(folded, 'memory')} into {count(len(changed), 'scene')}: "
                   f"{', '.join(changed) or 'none changed'}.")
        if deferred:
            summary += (" 1 unrelated memory waits for a scene of its own." if len(deferred) == 1
                        else f" {len(deferred)} unrelated memories wait for scenes of their own.")
        if worker.renamed:     # the log's "1 renamed" says which
            summary += " " + " ".join(f"Renamed {old} to {new} (its topic moved)."
                                      for old, new in worker.renamed)
        return BackendResult(final_text=summary, steps=len(job.box.calls),
                             deferred=[m.seq for m in deferred], declared=worker.declarations(),
                             may_skip=False)


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
        # One by default (the seed's rule); more only with new_scenes_per_batch above 1.
        self.allowance = job.context.allowance()
        self.placed: dict[int, tuple[str, str, str]] = {}   # seq -> (outcome, scene, id)
        # One IDF for the whole batch (scenes as they were + the batch's memories): stable,
        # deterministic, and a scene's vector is recomputed only when its draft changes.
        # Scenes are compared by name, summary and body: the header's dates would make routing
        # depend on the clock.
        self.docs = {n: _similarity_text(n, t) for n, t in self.texts.items()}
        self.vectors = Vectorizer(routing_terms).fit([*self.docs.values(), *(m.content for m in job.memories)])
        self._vectors: dict[str, dict[str, float]] = {}
        self._spread: tuple[list[str], Counter] | None = None   # (live scenes, term -> scenes)
        self._entry_terms: dict[str, tuple[Counter[str], int]] = {}
        self._old_bodies: dict[str, str] = {}

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

    def _vector(self, name: str) -> dict[str, float]:
        if name not in self._vectors:
            self._vectors[name] = self.vectors.vector(self._doc(name))
        return self._vectors[name]

    def _ranked(self, text: str) -> list[tuple[float, str]]:
        """Scenes by the evidence that ``text`` is about their topic
        (``routing.topic_evidence``), best first."""
        live = self._live()
        if self._spread is None or self._spread[0] != live:
            words = Counter(t for n in live for t in self._units(n)[0])
            self._spread = (live, words)
        spread = self._spread[1]
        scored = [(topic_evidence(text, self._units(n), spread, self._rarity), n) for n in live]
        return sorted(scored, key=lambda item: (-item[0], item[1]))

    def _rarity(self, term: str) -> float:
        """``term``'s IDF over the batch's scenes and memories, as a share of the largest
        IDF possible there, squared (a word half the texts say counts for little)."""
        top = self.vectors.idf("\x00")           # a term no text has
        return (self.vectors.idf(term) / top) ** RARITY_POWER

    def _units(self, name: str):
        """``routing.entry_terms`` of scene ``name``'s timeline entries (or paragraphs)."""
        if name not in self._entry_terms:
            if name in self.drafts:
                draft = self.drafts[name]
                units = [e.text for e in draft.entries] + [draft.head, draft.tail]
            else:
                units = parse_scene(self.texts[name], name=name).body.split("\n")
            self._entry_terms[name] = entry_terms(units)
        return self._entry_terms[name]


    def _forget(self, name: str) -> None:
        """The draft of ``name`` changed: its cached vector and word counts are stale."""
        self._vectors.pop(name, None)
        self._entry_terms.pop(name, None)
        self._spread = None

    def declarations(self) -> dict[str, Declaration]:
        """memory id -> where it went, following this batch's merges."""
        out = {}
        for outcome, scene, memory_id in self.placed.values():
            while scene in self.merged_into:
                scene = self.merged_into[scene]
            out[memory_id] = Declaration(outcome, scene)
        return out

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
        stays small enough to read and undo), the most alike first, and only when: alike by
        cosine (``SAME_TOPIC``), sharing one of their ``ONE_TOPIC_WORDS`` topic words (two
        scenes of a bike and of a knee may share words; not their topic), both the engine's
        alone (no line, summary or name a person gave; not pinned), and the merged text fits
        ``max_scene_chars`` as it is (an active merge condenses nothing). The merged-away
        file is deleted in this batch's commit and named in ``merged_from``; the heat is the
        two summed + 1 (``transaction.finalize_headers``). Returns True when it merged."""
        live = [n for n in self._live() if n not in self.created and n in self.texts]
        pairs = sorted(((self.vectors.similarity(self._vector(a), self._vector(b)), a, b)
                        for i, a in enumerate(live) for b in live[i + 1:]),
                       key=lambda p: (-p[0], p[1], p[2]))
        for similarity, a, b in pairs:
            if similarity < SAME_TOPIC:
                return False
            if len(self._doc(a)) + len(self._doc(b)) > self.limit_chars \
                    or not self._one_topic(a, b):
                continue
            if not (self._engine_only(a) and self._engine_only(b)):
                continue
            keep, drop = (a, b) if len(self._doc(a)) >= len(self._doc(b)) else (b, a)
            merged = self._merged(keep, drop)
            if merged is None or size(merged, self.zone) > self.limit_chars:
                continue
            self.drafts[keep] = merged
            self.drafts[drop].changed = False
            self._forget(keep)
            self.deleted.append(drop)
            self.merged_into[drop] = keep
            return True
        return False

    def _one_topic(self, a: str, b: str) -> bool:
        """True when scenes ``a`` and ``b`` share one of their topic words (as routing terms)."""
        def said(name: str) -> set[str]:
            units = parse_scene(self.texts[name], name=name).body.split("\n")
            return set(analyzer(" ".join(topic_words([u for u in units if u.strip()],
                                                     k=ONE_TOPIC_WORDS))))
        return bool(said(a) & said(b))

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
        """Route each memory to a scene, oldest instant first; return the memories deferred
        to a later batch.

        1. memories similar enough to a scene (or naming a rare name only one scene holds)
        join it, if it can make room; 2. among the rest, the largest group of mutually
        similar ones opens a new scene, and while the batch's allowance lasts
        (``rules.new_scene_allowance``: one, unless ``new_scenes_per_batch`` lets a young store
        open more) the next largest group of two or more opens another; 3. what is left
        waits for a later batch, where it may open a scene of its own, while there is room for
        more scenes; otherwise it joins the closest scene that can hold it. Every batch that
        defers also creates a scene, so deferral ends once the scene count reaches the cap.
        """
        self.come_under_cap()
        self.merge_one_topic()
        unmatched = []
        for memory in sorted(memories, key=lambda m: (m.created_at, m.seq)):
            candidates = self._candidates(memory)
            if self._place(memory, candidates):
                continue
            # Its scenes are full. At the cap, condense them deeper rather than merge two
            # unrelated scenes to open a second one for the same topic.
            if candidates and len(self._live()) >= self.limit \
                    and self._place(memory, candidates, deep=True):
                continue
            unmatched.append(memory)
        unmatched = self._join_loners(unmatched)
        if not unmatched:
            return []
        deferred: list[Memory] = []
        target: str | None = None
        grouped: set[int] = set()
        while unmatched and len(self.created) < self.allowance and self._can_create():
            group = self._largest_group(unmatched)
            if self.created and len(group) < 2:
                break              # a further new scene only for a topic said more than once
            made = self._create(group, self._ranked(group[0].content))
            if not made:
                break
            target = made
            grouped.update(m.seq for m in group)
            unmatched = [m for m in unmatched if not (m in group and self._add(made, m))]
            # A memory of the new topic that was not in the group joins it now.
            unmatched = [m for m in unmatched
                         if not (made in self._candidates(m) and self._add(made, m))]
        if unmatched and target and len(self._live()) < self.limit:
            # Some evidence for a scene is enough now; none at all waits for a scene.
            deferred = [m for m in unmatched if m.seq not in grouped
                        and not self._place(m, self._near(m))]
        for memory in unmatched:
            if memory in deferred or memory.seq in self.placed:
                continue
            ranked = self._ranked(memory.content)
            names = [n for s, n in ranked if s > 0]
            if not names and len(self._live()) >= self.limit:
                names = self._closest(memory)    # no scene can open for it: the least far
            if not names and self.placed:
                deferred.append(memory)   # about nothing a scene holds: a later batch opens one
                continue
            if self._is_long(memory):
                # Among the scenes it is clearly about, condensing them at the cap if need be:
                # filling an unrelated scene with room would make it look like this topic,
                # and the next merge would join the two. About none (a word or two in
                # common): the scene with most room, rather than roll one up for it.
                near = [n for s, n in ranked if s >= SIMILAR_ENOUGH]
                at_cap = len(self._live()) >= self.limit
                roomy = [n for _, n in ranked if self._has_room(n, memory)]
                if self._place(memory, [n for n in near if n in roomy]):
                    continue
                # Rolling a scene up for a long memory costs that scene's detail: a scene
                # with room takes it first, one it is clearly about only when none has room.
                if self._place(memory, roomy) or (
                        near and self._place(memory, near, deep=at_cap)):
                    continue
                names = self._roomiest(names, memory)
            if not self.placed:     # nothing placed yet: any scene rather than fail the batch
                names += [n for _, n in ranked if n not in names]
            if self._place(memory, names):
                continue
            # Deep rollups only when no scene can be added any more; otherwise wait: the next
            # batch may open a scene for it, and may condense this batch's entries.
            if len(self._live()) >= self.limit and self._place(memory, names, deep=True):
                continue
            # The first memory of a batch that no scene takes: the last resort of rollups
            # (``rollup.condense``'s squeeze) before failing, in the scene least far first.
            if not self.placed and self._place(memory, names + [
                    n for n in self._closest(memory) if n not in names], squeeze=True):
                continue
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
            deferred.append(memory)
        return deferred

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

    def _join_loners(self, memories: list[Memory]) -> list[Memory]:
        """Place each memory of ``memories`` that no other of them resembles (it would open
        a scene for one fact) in the scene it has some evidence for (``WEAK_EVIDENCE``), so a
        topic is not split over a second scene for a memory that says it in other words.
        Returns the memories still unplaced."""
        if len(memories) > 1:
            vectors = Vectorizer(routing_terms).fit(m.content for m in memories)
            vecs = [vectors.vector(m.content) for m in memories]
        left = []
        for i, memory in enumerate(memories):
            alone = len(memories) == 1 or all(
                vectors.similarity(vecs[i], other) < GROUP_SIMILAR
                for j, other in enumerate(vecs) if j != i)
            near = self._near(memory)
            if not (alone and near and self._place(memory, near)):
                left.append(memory)
        return left

    def _near(self, memory: Memory) -> list[str]:
        """Scenes with some evidence for ``memory`` (``WEAK_EVIDENCE``), best first, those
        with room first."""
        near = [n for s, n in self._ranked(memory.content) if s >= WEAK_EVIDENCE]
        return self._roomiest(near, memory)

    def _closest(self, memory: Memory) -> list[str]:
        """Every live scene, the most alike to ``memory`` (cosine) first, then the smallest:
        where a memory about no scene's topic goes when no scene can be opened for it."""
        vec = self.vectors.vector(memory.content)
        live = self._live()
        return self._roomiest(sorted(live, key=lambda n: (
            -self.vectors.similarity(vec, self._vector(n)), len(self._doc(n)), n)), memory)

    def _candidates(self, memory: Memory) -> list[str]:
        """Scenes that may take ``memory``: similar enough ones, best first, the one holding a
        rare name it mentions first of all."""
        ranked = self._ranked(memory.content)
        if not ranked:
            return []
        best_score = ranked[0][0]
        similar = [n for s, n in ranked if s >= max(SIMILAR_ENOUGH, best_score / 2)]
        named = self._named_scene(memory, ranked)
        if named:     # a name only that scene holds outweighs common words others share
            similar = [named, *(n for n in similar if n != named)]
        if self._is_long(memory):
            # A memory of a third of a scene or more would roll a whole scene's detail up into
            # digests: it joins only a scene with room for it, or opens its own while it can
            # (at the cap, ``fold`` puts it where there is most room).
            similar = [n for n in similar if self._has_room(n, memory)]
        return self._roomiest(similar, memory)

    def _named_scene(self, memory: Memory, ranked: list[tuple[float, str]]) -> str | None:
        """The one scene holding a name or acronym of ``memory`` that no other scene holds."""
        wanted = names_in(memory.content)
        # Chinese has no capitals: a word pair a scene says again and again (a pet's or a
        # friend's name) and no other scene says at all counts as a name.
        pairs = {t for t in analyzer(memory.content) if _CJK_WORD.fullmatch(t) and rare_word(t)}
        if not wanted and not pairs:
            return None
        holders: dict[str, list[tuple[str, int]]] = {}
        for name in self._live():
            found = self._units(name)[0]          # term -> entries that say it
            for term in (wanted | pairs) & found.keys():
                holders.setdefault(term, []).append((name, found[term]))
        unique = {held[0][0] for term, held in holders.items()
                  if len(held) == 1 and held[0][1] >= 2}
        return next((n for _, n in ranked if n in unique), None)

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
             squeeze: bool = False) -> bool:
        """Put ``memory`` into scene ``name``; False (nothing changed) if the scene cannot
        hold it even after condensing its old entries (deep rollups only if ``deep``, the
        last resort only if ``squeeze``: ``rollup.condense``)."""
        draft = self._draft(name)
        day = memory.created_at.astimezone(self.tz).date().isoformat()
        for i, entry in enumerate(draft.entries):
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
        self._forget(name)
        self.placed[memory.seq] = ("placed", name, memory.id)
        return True

    def _thread_or_entry(self, draft: Draft, memory: Memory, day: str,
                         may_open: bool = True) -> bool:
        """Add ``memory`` to ``draft``: as an open thread when it leaves something open
        (``threads.opens``) and ``may_open``, else as a timeline entry; the threads it settles
        (``threads.closes``) move to the timeline on their own day with its outcome. True
        when it opened a thread."""
        text = self._fitting(memory.content)
        settled = [t for t in draft.threads if t.day <= day and threads.closes(t, text)]
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

    def _fitting(self, text: str) -> str:
        """A memory longer than a whole scene keeps its beginning (the journal keeps all)."""
        room = max(self.limit_chars - 200, self.limit_chars // 2)
        if len(text) <= room:
            return text
        cut = text[:room]
        end = max(cut.rfind(". "), cut.rfind("。"))
        return (cut[: end + 1] if end > room // 2 else cut).rstrip() + "…"

    def _largest_group(self, memories: list[Memory]) -> list[Memory]:
        """The memory with most similar peers among ``memories``, with those peers (ties: the
        earliest), so a new scene starts from a topic, not from a stray fact."""
        vectors = Vectorizer(routing_terms).fit(m.content for m in memories)
        vecs = [vectors.vector(m.content) for m in memories]
        best: list[int] = []
        for i, vec in enumerate(vecs):
            peers = [j for j, other in enumerate(vecs)
                     if j == i or vectors.similarity(vec, other) >= GROUP_SIMILAR]
            if len(peers) > len(best):
                best = peers
        return [memories[j] for j in best]

    def _create(self, group: list[Memory], ranked: list[tuple[float, str]]) -> str | None:
        """Open the batch's new scene (merging two first at the cap); None if no room."""
        for _, name in ranked[:2]:     # the rules want two existing scenes read first
            self._draft(name)
        # At the cap a new scene costs a merge. Two scenes of one topic merge for it; two
        # different topics never do: the group joins the closest scene instead (``fold``), as
        # a few stray memories cost a scene's purity less than a whole other topic.
        if len(self._live()) >= self.limit and not self._merge_closest(SAME_TOPIC):
            return None
        name = scene_name([m.content for m in group], self._taken_names())
        self.created.append(name)
        self.drafts[name] = Draft(name, {}, "", [], changed=True)
        return name

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

    def _merge_closest(self, least: float = 0.0, move_summary: bool = False) -> bool:
        """Fold one scene into its closest peer and delete it (frees one place); False if no
        pair at least ``least`` alike (cosine) can merge without losing what the merged-away
        scene holds. With ``move_summary`` a scene whose summary a person wrote may be the
        one merged away: its summary goes into the merged body, word for word, as a line of
        its own (``_merged``).

        Pairs whose merged text fits ``max_scene_chars`` come first, most similar first; then
        the smallest pairs, condensed. Pinned scenes and this batch's new scene take no part.
        """
        live = [n for n in self._live() if n not in self.created
                and not is_pinned(self._draft(n).meta)]
        # A scene whose summary a person wrote is never the one merged away (the summary
        # would be lost with it); it can take another in.
        keeper_only = {n for n in live if self._draft(n).keep_summary
                       or n in self.job.context.person_links}
        vecs = {n: self._vector(n) for n in live}
        size = {n: len(self._doc(n)) for n in live}

        def rank(pair):
            sim, a, b = pair
            combined = size[a] + size[b]
            fits = combined <= self.limit_chars
            return (not fits, -sim if fits else combined, a, b)

        pairs = sorted(((self.vectors.similarity(vecs[a], vecs[b]), a, b)
                        for i, a in enumerate(live) for b in live[i + 1:]), key=rank)
        pairs = [p for p in pairs if p[0] >= least]
        for _, a, b in pairs:
            keep, drop = (a, b) if size[a] >= size[b] else (b, a)   # the bigger name says more
            if drop in keeper_only:
                keep, drop = drop, keep
            if drop in keeper_only and not move_summary:
                continue
            merged = self._merged(keep, drop, move_summary=drop in keeper_only)
            if merged is not None:
                self.drafts[keep] = merged
                self.drafts[drop].changed = False
                self._forget(keep)
                self.deleted.append(drop)
                self.merged_into[drop] = keep
                return True
        return False

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
        absorbed = [d for d, k in self.merged_into.items() if k == draft.name]
        if any(not keeps(self._old_body(d), [body], MERGE_COVERAGE) for d in absorbed):
            return False
        if draft.name not in self.texts:
            return True
        old = self._old_body(draft.name)
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
        topic (``offline_words.name_fits``): the scene is written under the new name with
        ``merged_from: [old name]`` and the old file deleted, in this batch's commit, so git
        sees a rename and ``trace`` and ``blame`` follow it. Only names the engine gave: a
        scene with a person's lines or summary, or pinned, keeps its name."""
        for draft in list(self.drafts.values()):
            name = draft.name
            engine = [e.text for e in draft.entries if not e.person]
            if (not draft.changed or name in self.created or name in self.deleted
                    or name not in self.texts or is_pinned(draft.meta) or draft.keep_summary
                    or len(engine) < len(draft.entries) or draft.head or draft.tail
                    or draft.heading or draft.own_threads
                    or len(engine) < RENAME_ENTRIES):
                continue
            texts = [*engine, *(t.text for t in draft.threads)]
            if name_fits(name, texts):
                continue
            named_by_person = getattr(self.job, "named_by_person", None)
            if named_by_person and named_by_person(name):
                continue          # a person chose this name (created or renamed the file)
            if name in self.job.context.person_links:
                continue          # a person's persona links to it by this name
            new = scene_name(texts, self._taken_names() - {name})
            if new.casefold() == name.casefold() or new != scene_name(texts, set()):
                continue   # the same name, or its name is taken (a numbered copy reads worse)
            # It keeps what it took in this batch: a scene merged into it is deleted too.
            self.drafts[new] = replace(draft, name=new, merged_from=[*draft.merged_from, name],
                                       changed=True)
            draft.changed = False
            self.deleted.append(name)
            self.merged_into[name] = new
            self.renamed.append((name, new))

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
