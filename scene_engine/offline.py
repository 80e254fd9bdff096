"""The offline backend: deterministic, no network, and held to the same rules as a model.

For each memory it finds the most similar scene (``text.Vectorizer``: words and CJK bigrams, or
a rare name or acronym only one scene holds), adds the memory as a dated line to that scene's
timeline, creates a scene only when nothing is similar enough and the rules allow, and merges
the two most similar scenes when the count is at the cap. It works only through the sandbox's
tools with JSON arguments, like a model would, so the policy hooks judge it exactly as they
judge a model.

Conservation (DESIGN.md "A batch", step 7): text a person wrote (``conservation.Authorship``)
is kept word for word; when a scene is full its oldest engine-written entries are condensed
into month digests, never the memories of this batch; a memory that fits nowhere goes to
another or a new scene, and if nothing can hold it the batch fails with its memories pending.
Dates are written in the store's one time zone (config ``timezone``), ordered by instant.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from .accounting import Declaration
from .conservation import (
    ENGINE_KEYS,
    KEEP_COVERAGE,
    MERGE_COVERAGE,
    Authorship,
    coverage,
    is_pinned,
)
from .memories import Memory
from .rules import is_report_like, merged_from
from .scene import Scene, parse_scene, render_scene
from .text import STOP_WORDS, Vectorizer, is_cjk_text, keywords, terms
from .when import MONTH_ABBREVIATIONS

TIMELINE = "Timeline"
SIMILAR_ENOUGH = 0.12   # cosine below this opens a new scene (when the rules allow one)
DIGEST_WORDS = (10_000, 12, 6, 3)  # content words kept a fact in a month digest: all (stop
#                                    words dropped), then fewer as room runs out
_HEADING = re.compile(rf"^## {TIMELINE}(?: \([^)]*\))?\s*$", re.M)
_LINE = re.compile(r"^- (\d{4}(?:-\d{2}(?:-\d{2})?|-Q[1-4])?)( \(digest\))?: (.*)$")
DIGEST_DAY = re.compile(r"^(\d{1,2} [A-Z][a-z]{2}: )(.*)$")   # "7 May: " before a digest fact
_COUNTED = re.compile(r"^(\d+) entries: (.*)$")
DIGEST_KEYWORDS = 10      # words a quarter or year digest keeps
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_CJK_PAIR = re.compile(r"[\u3400-\u9fff]{2}")
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]{2,})\b")


class OfflineError(RuntimeError):
    """The offline backend cannot fold the batch (nothing fits, or a refused call)."""


@dataclass(frozen=True)
class Entry:
    """One timeline line. ``day``: ``YYYY-MM-DD`` (``YYYY-MM`` for a digest); ``text``: the
    facts, or for a person's line the line as written; ``person``: written by a person (kept
    word for word, never joined or condensed); ``digest``: a condensed month; ``fresh``: added
    by this batch (never condensed)."""

    day: str
    text: str
    person: bool = False
    digest: bool = False
    fresh: bool = False


@dataclass
class Draft:
    """A scene while the batch works on it: header, free text around the timeline, entries."""

    name: str
    meta: dict
    head: str                     # body text before the timeline section (kept as written)
    entries: list[Entry]          # the timeline, in file order then added order
    tail: str = ""                # sections after the timeline (kept as written)
    heading: str = ""             # a person's own timeline heading, kept as written
    raw: dict = field(default_factory=dict)   # header source texts (scene.Scene.raw)
    merged_from: list[str] = field(default_factory=list)
    changed: bool = False
    keep_summary: bool = False    # pinned, or a summary a person wrote

    def text_for_similarity(self) -> str:
        """Name, summary and text of the draft, as one string to compare memories against."""
        return " ".join([self.name.replace("-", " "), str(self.meta.get("summary", "")),
                         self.head, " ".join(e.text for e in self.entries), self.tail])


def parse_draft(name: str, text: str, author: Authorship | None = None) -> Draft:
    """Split a scene into the parts the offline backend edits (see ``Draft``); lines in
    ``author.lines`` are a person's and stay as written."""
    author = author or Authorship()
    scene = parse_scene(text, name=name)
    mine = set(author.lines)
    keep = is_pinned(scene.meta) or author.summary
    body = scene.body
    match = _HEADING.search(body)
    if not match:
        return Draft(name, dict(scene.meta), body.rstrip(), [], raw=scene.raw, keep_summary=keep)
    head, rest = body[: match.start()].rstrip(), body[match.end():]
    heading = match.group(0).strip()
    nxt = re.search(r"^## ", rest, flags=re.M)
    section, tail = (rest[: nxt.start()], rest[nxt.start():]) if nxt else (rest, "")
    entries: list[Entry] = []
    pinned = is_pinned(scene.meta)
    for raw_line in section.splitlines():
        line = raw_line.strip()
        found = _LINE.match(line)
        day = entries[-1].day if entries else ""
        if not line:
            continue
        if found and line not in mine:   # a pinned scene's entries are never condensed
            entries.append(Entry(found.group(1), found.group(3), digest=bool(found.group(2)),
                                 fresh=pinned))
        elif (raw_line[:1].isspace() and line not in mine and entries
              and not entries[-1].person):     # a wrapped entry continues
            entries[-1] = replace(entries[-1], text=f"{entries[-1].text} {line}")
        else:   # a person's own line: kept as written (spaces too), in place, never trimmed
            entries.append(Entry(found.group(1) if found else day, raw_line.rstrip("\r"),
                                 person=True))
    return Draft(name, dict(scene.meta), head, entries, tail.strip(),
                 heading=heading if heading in mine else "", raw=scene.raw, keep_summary=keep)


# ---------------------------------------------------------------- rendering and condensing

def _period_start(day: str) -> str:
    """Sort key of a day or period: ``2024-Q2`` starts at ``2024-04``, ``2024`` at
    ``2024-00`` (so a digest comes before the days it came from)."""
    if "-Q" in day:
        year, quarter = day.split("-Q")
        return f"{year}-{3 * int(quarter) - 2:02d}"
    return day if len(day) != 4 else f"{day}-00"


def _similarity_text(name: str, text: str) -> str:
    """Name, summary and body of a scene text (what routing compares memories against)."""
    scene = parse_scene(text, name=name)
    return " ".join([name.replace("-", " "), str(scene.meta.get("summary", "")), scene.body])


def _ordered(entries: list[Entry]) -> list[Entry]:
    """By day or period start; a day's lines keep their order."""
    return sorted(entries, key=lambda e: _period_start(e.day))


def _timeline_lines(entries: list[Entry]) -> list[str]:
    """One line per day for the engine's facts of that day (joined), a person's lines as
    written, one line per digest."""
    lines, days = [], {}
    for entry in _ordered(entries):
        if entry.person:
            lines.append(entry.text)
        elif entry.digest:
            lines.append(f"- {entry.day} (digest): {entry.text}")
        elif entry.day in days:
            index, texts = days[entry.day]
            texts.append(_sentence(entry.text))
            lines[index] = f"- {entry.day}: {' '.join(texts)}"
        else:
            days[entry.day] = (len(lines), [_sentence(entry.text)])
            lines.append(f"- {entry.day}: {_sentence(entry.text)}")
    return lines


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "。", "！", "？", "…")) else text + "."


def render_body(draft: Draft, zone: str) -> str:
    """The scene body: free text, the timeline (heading names the time zone), later sections."""
    parts = [draft.head] if draft.head else []
    heading = draft.heading or f"## {TIMELINE} ({zone})"
    parts.append("\n".join([heading, *_timeline_lines(draft.entries)]))
    if draft.tail:
        parts.append(draft.tail)
    return "\n\n".join(parts) + "\n"


def _size(draft: Draft, zone: str) -> int:
    return len(render_body(draft, zone).strip())


def _shorten(fact: str, words: int) -> str:
    """``fact`` in telegraphic style: its words without stop words, at most ``words`` of them
    (CJK text: ``2 * words`` characters), "…" if cut. Keeps more of what a fact says per
    character than cutting its first words."""
    fact = " ".join(fact.split()).rstrip(".。")
    tokens = fact.split(" ")
    if len(tokens) > 1:
        kept = [t for t in tokens if t.lower().strip(".,;:!?'\"()") not in STOP_WORDS] or tokens
        return " ".join(kept[:words]) + ("…" if len(kept) > words else "")
    return fact if len(fact) <= 2 * words else fact[: 2 * words] + "…"


def _facts(entry: Entry) -> list[str]:
    if entry.digest:
        return [f for f in entry.text.split("; ") if f]
    return [f for f in _SENTENCE_END.split(entry.text.strip()) if f]


def condense(draft: Draft, limit: int, zone: str, deep: bool = True) -> bool:
    """Make the body fit ``limit`` characters by condensing the oldest engine-written entries;
    return False if it still does not fit.

    Rollups, oldest first, each step only while the body is too long: days into month
    digests (each fact without its stop words, led by its day); with ``deep``, then shorter
    facts, months into quarter digests and quarters into year digests (``N entries:
    keywords``). Never a person's line, never an entry of this batch: the newest facts are
    not the ones given up first. Deep rollups are for a store that cannot grow any more.
    """
    steps = [lambda: _roll_oldest(draft, _is_day, lambda d: d[:7], _month_digest, by=lambda d: d)]
    if deep:
        steps += [lambda w=w: _shorten_digests(draft, w) for w in DIGEST_WORDS[1:]]
        steps += [lambda: _roll_oldest(draft, _is_month, _quarter, _keyword_digest),
                  lambda: _roll_oldest(draft, _is_quarter, lambda d: d[:4], _keyword_digest)]
    for step in steps:
        while _size(draft, zone) > limit and step():
            pass
    return _size(draft, zone) <= limit


def _is_day(entry: Entry) -> bool:
    return not entry.digest and len(entry.day) == 10


def _is_month(entry: Entry) -> bool:
    return entry.digest and len(entry.day) == 7 and "-Q" not in entry.day


def _is_quarter(entry: Entry) -> bool:
    return entry.digest and "-Q" in entry.day


def _quarter(day: str) -> str:
    return f"{day[:4]}-Q{(int(day[5:7]) - 1) // 3 + 1}"


def _roll_oldest(draft: Draft, kind, period, make, by=None) -> bool:
    """Roll the engine's old entries of ``kind`` into their ``period``'s digest (with that
    period's existing digest, if any), the oldest ``by`` group (default: the whole oldest
    period; days go one at a time, so a month is not digested for one day's room); False when
    there is nothing to roll."""
    by = by or period
    movable = [e for e in draft.entries if not (e.person or e.fresh) and kind(e)]
    if not movable:
        return False
    first = min((by(e.day) for e in movable), key=_period_start)
    chosen = [e for e in movable if by(e.day) == first]
    target = period(chosen[0].day)
    chosen += [e for e in draft.entries if e.digest and e.day == target
               and not (e.person or e.fresh)]
    draft.entries = [e for e in draft.entries if e not in chosen] + [make(target, chosen)]
    return True


def _month_digest(month: str, entries: list[Entry]) -> Entry:
    """One month's facts, each shortened and led by its day (``7 May: ...``), so a digest
    still says when; facts already in a digest keep their day."""
    facts = []
    for entry in _ordered(entries):
        day = "" if entry.digest else f"{int(entry.day[8:10])} {MONTH_ABBREVIATIONS[int(entry.day[5:7]) - 1]}: "
        facts += [day + _shorten_dated(f, DIGEST_WORDS[0]) for f in _facts(entry)]
    return Entry(month, "; ".join(dict.fromkeys(facts)), digest=True)


def _shorten_dated(fact: str, words: int) -> str:
    """``_shorten`` for a digest fact, leaving its ``7 May:`` day in front alone."""
    found = DIGEST_DAY.match(fact)
    return found.group(1) + _shorten(found.group(2), words) if found else _shorten(fact, words)


def _keyword_digest(period: str, entries: list[Entry]) -> Entry:
    count, texts = 0, []
    for entry in entries:
        counted = _COUNTED.match(entry.text) if entry.digest and len(entry.day) != 7 else None
        count += int(counted.group(1)) if counted else len(_facts(entry))
        texts.append(counted.group(2) if counted else entry.text)
    words = keywords(texts, k=DIGEST_KEYWORDS)
    return Entry(period, f"{count} entries: {', '.join(words)}", digest=True)


def _shorten_digests(draft: Draft, words: int) -> bool:
    """Shorten the facts of every month digest to ``words`` words; False if none changed."""
    before = list(draft.entries)
    draft.entries = [replace(e, text="; ".join(_shorten_dated(f, words) for f in _facts(e)))
                     if _is_month(e) and not e.person else e for e in draft.entries]
    return draft.entries != before


def render_draft(draft: Draft, style: str, zone: str) -> str:
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
    entries = [e for e in _ordered(draft.entries) if not e.person] or _ordered(draft.entries)
    facts = [e.text for e in entries]
    topic = ", ".join(w[:30] for w in keywords(facts or [draft.head], k=4)) \
        or draft.name.removesuffix(".md")
    zh = is_cjk_text(" ".join(facts))
    span = f"{entries[0].day} {'至' if zh else 'to'} {entries[-1].day}" if entries else "undated"
    latest = _sentence(facts[-1]) if facts else draft.head[:160]
    latest = latest if len(latest) <= 160 else latest[:157] + "..."
    if zh:
        return f"关于{topic}的记录（{span}）。最近：{latest}"
    return f"About {topic} ({span}). Latest: {latest}"


def _tokens(text: str) -> set[str]:
    """Every word, number and CJK character of ``text``, lower-cased (stop words included:
    "not" and "3" change a fact)."""
    found: set[str] = set()
    for token in re.findall(r"[^\W_]+", text.lower()):
        if re.search(r"[\u3400-\u9fff]", token):
            found.update(token)          # each CJK character (周二 vs 周四 differ)
        else:
            found.add(token)
    return found


def restates(fact: str, lines: list[str]) -> bool:
    """True when a sentence of ``lines`` (the same day's entries) says exactly ``fact``: the
    same words, numbers and characters, case and punctuation aside. A correction adds or
    drops a word ("not", "Thursday"), so it is new; sentences are compared one by one, so
    words spread over a day's facts never add up to a repeat; a repeat on another day is a
    recurring event and is never checked here."""
    wanted = _tokens(fact)
    return bool(wanted) and any(wanted == _tokens(sentence) for line in lines
                                for sentence in _SENTENCE_END.split(line.strip()))


def scene_name(memory_texts: list[str], taken: set[str]) -> str:
    """A file name from the memories' keywords, unique (case-insensitive) among ``taken``."""
    # Numbers (dates, counts, note numbers) name no area of a life: words first.
    found = keywords(memory_texts, k=8)
    found = [w for w in found if not w.isdigit()][:3] or found[:3]
    words = [re.sub(r"[^\w\u3400-\u9fff-]", "", w) for w in found]
    stem = "-".join(w for w in words if w)[:60] or "notes"
    if is_report_like(stem):
        stem = f"about-{stem}"
    folded = {t.casefold() for t in taken}
    name, n = f"{stem}.md", 2
    while name.casefold() in folded:
        name, n = f"{stem}-{n}.md", n + 1
    return name


def names_in(text: str) -> set[str]:
    """Names and acronyms of ``text`` as index terms: ``KPX``, ``iOS``-like words with inner
    capitals or digits, and capitalised words that do not start a sentence."""
    found = set()
    for sentence in _SENTENCE_END.split(text.strip()):
        for match in _NAME.finditer(sentence):
            word = match.group(0)
            inner = any(c.isupper() or c.isdigit() for c in word[1:])
            if inner or match.start() > 0:
                found.update(terms(word))
    return found


class OfflineBackend:
    """Backend protocol: ``run(job) -> BackendResult``; ``name`` goes in commit trailers."""

    name = "offline"

    def run(self, job):
        """Fold ``job.memories`` into scenes through ``job.box``; a ``BackendResult`` whose
        ``deferred`` lists memories left for a later batch and ``declared`` says where each
        other memory went. Raises ``OfflineError`` when a memory fits nowhere."""
        from .batch import BackendResult

        worker = _OfflineWorker(job)
        deferred = worker.fold(job.memories)
        worker.flush()
        changed = sorted(d.name for d in worker.drafts.values()
                         if d.changed and d.name not in worker.deleted)
        folded = len(job.memories) - len(deferred)
        summary = (f"Folded {folded} {'memory' if folded == 1 else 'memories'} into "
                   f"{len(changed)} scene(s): {', '.join(changed) or 'none changed'}.")
        if deferred:
            summary += (f" {len(deferred)} unrelated {'memory waits' if len(deferred) == 1 else 'memories wait'}"
                        " for a scene of its own.")
        return BackendResult(final_text=summary, steps=len(job.box.calls),
                             deferred=[m.seq for m in deferred], declared=worker.declarations(),
                             may_skip=False)


class _OfflineWorker:
    def __init__(self, job):
        self.job = job
        self.box = job.box
        self.limit_chars = job.context.max_scene_chars
        self.zone = job.config.timezone
        self.tz = job.config.tz
        # Scenes with unreadable headers still count against the cap but are never touched.
        self.limit = job.context.max_scenes - 1 - len(job.context.frozen)
        self.drafts: dict[str, Draft] = {}
        self.texts = dict(job.scene_texts)   # name -> current text (not yet read through the box)
        self.deleted: list[str] = []
        self.merged_into: dict[str, str] = {}
        self.created: str | None = None
        self.placed: dict[int, tuple[str, str, str]] = {}   # seq -> (outcome, scene, id)
        # One IDF for the whole batch (scenes as they were + the batch's memories): stable,
        # deterministic, and a scene's vector is recomputed only when its draft changes.
        # Scenes are compared by name, summary and body: the header's dates would make routing
        # depend on the clock.
        self.docs = {n: _similarity_text(n, t) for n, t in self.texts.items()}
        self.vectors = Vectorizer().fit([*self.docs.values(), *(m.content for m in job.memories)])
        self._vectors: dict[str, dict[str, float]] = {}
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
        return names + ([self.created] if self.created and self.created not in names else [])

    def _doc(self, name: str) -> str:
        if name in self.drafts:
            return self.drafts[name].text_for_similarity()
        return self.docs.get(name, "")

    def _vector(self, name: str) -> dict[str, float]:
        if name not in self._vectors:
            self._vectors[name] = self.vectors.vector(self._doc(name))
        return self._vectors[name]

    def _ranked(self, text: str) -> list[tuple[float, str]]:
        query = self.vectors.vector(text)
        scored = [(self.vectors.similarity(query, self._vector(n)), n) for n in self._live()]
        return sorted(scored, key=lambda item: (-item[0], item[1]))

    def declarations(self) -> dict[str, Declaration]:
        """memory id -> where it went, following this batch's merges."""
        out = {}
        for outcome, scene, memory_id in self.placed.values():
            while scene in self.merged_into:
                scene = self.merged_into[scene]
            out[memory_id] = Declaration(outcome, scene)
        return out

    # -- folding
    def fold(self, memories: list[Memory]) -> list[Memory]:
        """Route each memory to a scene, oldest instant first; return the memories deferred
        to a later batch.

        1. memories similar enough to a scene (or naming a rare name only one scene holds)
        join it, if it can make room; 2. among the rest, the largest group of mutually
        similar ones opens the batch's one new scene (rules: one per batch); 3. what is left
        waits for a later batch, where it may open a scene of its own, while there is room for
        more scenes; otherwise it joins the closest scene that can hold it. Every batch that
        defers also creates a scene, so deferral ends once the scene count reaches the cap.
        """
        while len(self._live()) > self.limit and len(self._live()) > 1:
            if not self._merge_closest():      # the cap was lowered: come back under it first
                raise OfflineError(
                    f"there are {len(self._live())} scenes and the cap is now {self.limit}, but "
                    "no two scenes can be merged without losing what they hold. Merge two "
                    "scenes by hand or raise max_scenes.")
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
        if not unmatched:
            return []
        deferred: list[Memory] = []
        if self.created is None and self._can_create():
            group = self._largest_group(unmatched)
            target = self._create(group, self._ranked(group[0].content))
            if target:
                unmatched = [m for m in unmatched if not (m in group and self._add(target, m))]
            if target and len(self._live()) < self.limit:
                deferred = [m for m in unmatched if m not in group]
        for memory in unmatched:
            if memory in deferred:
                continue
            names = [n for _, n in self._ranked(memory.content)]
            if self._place(memory, names):
                continue
            # Deep rollups only when no scene can be added any more; otherwise wait: the next
            # batch may open a scene for it, and may condense this batch's entries.
            if len(self._live()) >= self.limit and self._place(memory, names, deep=True):
                continue
            if not self.placed:
                raise OfflineError(
                    f"memory {memory.id} fits in no scene: every scene is full of text a "
                    f"person wrote or of this batch's memories, and no new scene can be made "
                    f"(cap {self.limit}). Raise max_scene_chars or max_scenes, or shorten a "
                    "scene by hand; the memories stay pending.")
            deferred.append(memory)
        return deferred

    def _candidates(self, memory: Memory) -> list[str]:
        """Scenes that may take ``memory``: similar enough ones, best first, the one holding a
        rare name it mentions first of all."""
        ranked = self._ranked(memory.content)
        if not ranked:
            return []
        best_score = ranked[0][0]
        similar = [n for s, n in ranked if s >= max(SIMILAR_ENOUGH, best_score / 2)]
        named = self._named_scene(memory, ranked)
        if named and named not in similar:
            similar = [named, *similar]
        return self._roomiest(similar, memory)

    def _named_scene(self, memory: Memory, ranked: list[tuple[float, str]]) -> str | None:
        """The one scene holding a name or acronym of ``memory`` that no other scene holds."""
        wanted = names_in(memory.content)
        # Chinese has no capitals: a word pair a scene says again and again (a pet's or a
        # friend's name) and no other scene says at all counts as a name.
        pairs = {t for t in terms(memory.content) if _CJK_PAIR.fullmatch(t)}
        if not wanted and not pairs:
            return None
        holders: dict[str, list[tuple[str, int]]] = {}
        for name in self._live():
            found = terms(self._doc(name))
            for term in (wanted | pairs) & set(found):
                holders.setdefault(term, []).append((name, found.count(term)))
        unique = {held[0][0] for term, held in holders.items()
                  if len(held) == 1 and (term in wanted or held[0][1] >= 2)}
        return next((n for _, n in ranked if n in unique), None)

    def _roomiest(self, names: list[str], memory: Memory) -> list[str]:
        """``names`` with those that hold the memory without condensing first (a full scene
        would give up old detail for it), otherwise in the same order."""
        room = [n for n in names
                if len(self._doc(n)) + len(memory.content) + 16 <= self.limit_chars]
        return room + [n for n in names if n not in room]

    def _place(self, memory: Memory, names: list[str], deep: bool = False) -> bool:
        return any(self._add(name, memory, deep) for name in names)

    def _can_create(self) -> bool:
        """Room for one more scene, or two scenes to merge to make room."""
        return len(self._live()) < self.limit or len(self._live()) >= 2

    def _add(self, name: str, memory: Memory, deep: bool = False) -> bool:
        """Put ``memory`` into scene ``name``; False (nothing changed) if the scene cannot
        hold it even after condensing its old entries (deep rollups only if ``deep``)."""
        draft = self._draft(name)
        day = memory.created_at.astimezone(self.tz).date().isoformat()
        for i, entry in enumerate(draft.entries):
            if entry.day == day and restates(memory.content, [entry.text]):
                # Said again that day, adding nothing: recorded there, and as fresh as a new
                # fact (this batch does not condense what it just found confirmed).
                draft.entries[i] = replace(entry, fresh=True)
                self.placed[memory.seq] = ("recorded", name, memory.id)
                return True
        before = list(draft.entries)
        draft.entries.append(Entry(day, self._fitting(memory.content), fresh=True))
        fits = condense(draft, self.limit_chars, self.zone, deep)
        rolled = draft.entries[:len(before)] != before     # anything condensed?
        if not fits or (rolled and not self._keeps(draft)):
            draft.entries = before
            return False
        draft.changed = True
        self._vectors.pop(name, None)
        self.placed[memory.seq] = ("placed", name, memory.id)
        return True

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
        vectors = Vectorizer().fit(m.content for m in memories)
        vecs = [vectors.vector(m.content) for m in memories]
        best: list[int] = []
        for i, vec in enumerate(vecs):
            peers = [j for j, other in enumerate(vecs)
                     if j == i or vectors.similarity(vec, other) >= SIMILAR_ENOUGH]
            if len(peers) > len(best):
                best = peers
        return [memories[j] for j in best]

    def _create(self, group: list[Memory], ranked: list[tuple[float, str]]) -> str | None:
        """Open the batch's new scene (merging two first at the cap); None if no room."""
        for _, name in ranked[:2]:     # the rules want two existing scenes read first
            self._draft(name)
        if len(self._live()) >= self.limit and not self._merge_closest():
            return None
        # Not a name an existing scene lists in merged_from: a reused name would read as if
        # the new scene had been merged into that one.
        earlier = {m for text in self.texts.values()
                   for m in merged_from(parse_scene(text, name="scene.md"))}
        taken = set(self._live()) | set(self.deleted) | set(self.job.context.existing) | earlier
        name = scene_name([m.content for m in group], taken)
        self.created = name
        self.drafts[name] = Draft(name, {}, "", [], changed=True)
        return name

    def _merge_closest(self) -> bool:
        """Fold one scene into its closest peer and delete it (frees one place); False if no
        pair can merge without losing what the merged-away scene holds.

        Pairs whose merged text fits ``max_scene_chars`` come first, most similar first; then
        the smallest pairs, condensed. Pinned scenes and this batch's new scene take no part.
        """
        live = [n for n in self._live() if n != self.created
                and not is_pinned(self._draft(n).meta)]
        # A scene whose summary a person wrote is never the one merged away (the summary
        # would be lost with it); it can take another in.
        keeper_only = {n for n in live if self._draft(n).keep_summary}
        vecs = {n: self._vector(n) for n in live}
        size = {n: len(self._doc(n)) for n in live}

        def rank(pair):
            sim, a, b = pair
            combined = size[a] + size[b]
            fits = combined <= self.limit_chars
            return (not fits, -sim if fits else combined, a, b)

        pairs = sorted(((self.vectors.similarity(vecs[a], vecs[b]), a, b)
                        for i, a in enumerate(live) for b in live[i + 1:]), key=rank)
        for _, a, b in pairs:
            keep, drop = (a, b) if size[a] >= size[b] else (b, a)   # the bigger name says more
            if drop in keeper_only:
                keep, drop = drop, keep
            if drop in keeper_only:
                continue
            merged = self._merged(keep, drop)
            if merged is not None:
                self.drafts[keep] = merged
                self.drafts[drop].changed = False
                self._vectors.pop(keep, None)
                self.deleted.append(drop)
                self.merged_into[drop] = keep
                return True
        return False

    def _merged(self, keep: str, drop: str) -> Draft | None:
        """``keep`` with ``drop`` folded in, or None when it cannot hold ``drop``'s content
        (too little of its words after condensing, or a header key both set differently)."""
        kept, dropped = self._draft(keep), self._draft(drop)
        for key, value in dropped.meta.items():
            if key not in ENGINE_KEYS and key in kept.meta and kept.meta[key] != value:
                return None
        extra = [Entry("", dropped.heading, person=True)] if dropped.heading else []
        merged = replace(kept, entries=[*kept.entries, *extra, *dropped.entries],
                         head="\n\n".join(p for p in (kept.head, dropped.head) if p),
                         tail="\n\n".join(p for p in (kept.tail, dropped.tail) if p),
                         merged_from=[*kept.merged_from, drop, *dropped.merged_from],
                         changed=True)
        if not condense(merged, self.limit_chars, self.zone) or not self._keeps(merged):
            return None
        old_body = parse_scene(self.texts[drop], name=drop).body
        if coverage(old_body, render_body(merged, self.zone)) < MERGE_COVERAGE:
            return None
        return merged

    def _keeps(self, draft: Draft) -> bool:
        """The draft still holds most of the words its scene had before the batch (the same
        rule the batch checks: condensing is fine, wiping is not). Facts are condensed here
        only when a scene overflows, so the rule for a scene with room holds by design."""
        if draft.name not in self.texts:
            return True
        if draft.name not in self._old_bodies:
            self._old_bodies[draft.name] = parse_scene(self.texts[draft.name], name=draft.name).body
        return coverage(self._old_bodies[draft.name], render_body(draft, self.zone)) >= KEEP_COVERAGE

    def flush(self) -> None:
        """Write the changed existing scenes, then delete the merged-away ones (a delete needs
        its survivor written first), then write the new scene (it needs the room)."""
        style = self.job.config.meta_style
        changed = [d for d in self.drafts.values() if d.changed and d.name not in self.deleted]
        for draft in sorted((d for d in changed if d.name != self.created), key=lambda d: d.name):
            self._call("write_to_file", path=draft.name,
                       content=render_draft(draft, style, self.zone))
        for name in self.deleted:
            self._call("write_to_file", path=name, content="[DELETED]")
        for draft in (d for d in changed if d.name == self.created):
            self._call("write_to_file", path=draft.name,
                       content=render_draft(draft, style, self.zone))
