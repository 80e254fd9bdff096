"""The offline backend: deterministic, no network, and held to the same rules as a model.

For each memory it finds the most similar scene (``text.Vectorizer``: words and CJK bigrams),
adds the memory as a dated line to that scene's timeline, creates a scene only when nothing is
similar enough and the rules allow, and merges the two most similar scenes when the count is at
the cap. It works only through the sandbox's tools with JSON arguments, like a model would, so
the policy hooks judge it exactly as they judge a model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .memories import Memory
from .rules import is_report_like
from .scene import parse_scene, render_scene
from .text import Vectorizer, is_cjk_text, keywords, terms

TIMELINE = "Timeline"
SIMILAR_ENOUGH = 0.12   # cosine below this opens a new scene (when the rules allow one)
_LINE = re.compile(r"^- (\d{4}-\d{2}-\d{2}): (.*)$")


class OfflineError(RuntimeError):
    """The sandbox refused one of the offline backend's own calls (a bug, never expected)."""


@dataclass
class Draft:
    """A scene while the batch works on it: header extras, free text and dated timeline."""

    name: str
    meta: dict
    head: str                     # body text before the timeline section (kept as written)
    lines: list[tuple[str, str]]  # (date, text), oldest first
    tail: str = ""                # sections after the timeline (kept as written)
    merged_from: list[str] = field(default_factory=list)
    changed: bool = False

    def text_for_similarity(self) -> str:
        """Name, summary and text of the draft, as one string to compare memories against."""
        return " ".join([self.name.replace("-", " "), str(self.meta.get("summary", "")),
                         self.head, " ".join(t for _, t in self.lines), self.tail])


def parse_draft(name: str, text: str) -> Draft:
    """Split a scene into the parts the offline backend edits (see ``Draft``)."""
    scene = parse_scene(text, name=name)
    body = scene.body
    match = re.search(rf"^## {TIMELINE}\s*$", body, flags=re.M)
    if not match:
        return Draft(name, dict(scene.meta), body.rstrip(), [])
    head, rest = body[: match.start()].rstrip(), body[match.end():]
    nxt = re.search(r"^## ", rest, flags=re.M)
    section, tail = (rest[: nxt.start()], rest[nxt.start():]) if nxt else (rest, "")
    lines, notes = [], []
    for raw in section.splitlines():
        found = _LINE.match(raw.strip())
        if found:
            lines.append((found.group(1), found.group(2)))
        elif raw[:1].isspace() and raw.strip() and lines:   # a wrapped entry continues
            lines[-1] = (lines[-1][0], f"{lines[-1][1]} {raw.strip()}")
        elif raw.strip():
            notes.append(raw.rstrip())    # a person's own text: kept as written, never trimmed
    tail = "\n".join(notes + ([""] if notes and tail.strip() else []) + [tail.strip()]).strip()
    return Draft(name, dict(scene.meta), head, lines, tail)


def render_draft(draft: Draft, max_chars: int, style: str) -> str:
    """Scene text with a fresh summary, trimmed oldest-first to at most ``max_chars`` body chars."""
    lines = _grouped(draft.lines)
    while True:
        body = _body(draft, lines)
        if len(body.strip()) <= max_chars or len(lines) <= 1:
            break
        lines = lines[1:]              # oldest detail goes first
    if len(body.strip()) > max_chars and lines:
        # One day's facts alone overflow (a very long memory): keep its beginning rather than
        # lose it; the whole text stays in the memory journal.
        day, text = lines[0]
        room = max(0, len(text) - (len(body.strip()) - max_chars) - 1)
        lines = [(day, _cut(text, room).strip() + "…")] if room > 40 else []
        body = _body(draft, lines)
    if len(body.strip()) > max_chars:  # the hand-written part alone is too long: cut at a sentence
        body = _cut(body.strip(), max_chars)
    draft.lines = [(d, t) for d, t in draft.lines if any(d == g[0] for g in lines)] or draft.lines
    meta = dict(draft.meta)
    meta["summary"] = _summary(draft)
    if draft.merged_from:
        meta["merged_from"] = sorted(set(draft.merged_from))
    from .scene import Scene

    return render_scene(Scene(name=draft.name, meta=meta, body=body, header="yaml"), style=style)


def _grouped(lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One line per date, facts of the same day joined, oldest first (saves characters)."""
    days: dict[str, list[str]] = {}
    for day, text in sorted(lines, key=lambda item: item[0]):
        days.setdefault(day, [])
        if text not in days[day]:
            days[day].append(text)
    return [(day, " ".join(_sentence(t) for t in texts)) for day, texts in days.items()]


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", "。", "！", "？")) else text + "."


def _body(draft: Draft, lines: list[tuple[str, str]]) -> str:
    parts = [draft.head] if draft.head else []
    parts.append(f"## {TIMELINE}\n" + "\n".join(f"- {d}: {t}" for d, t in lines))
    if draft.tail:
        parts.append(draft.tail)
    return "\n\n".join(parts) + "\n"


def _cut(text: str, max_chars: int) -> str:
    cut = text[:max_chars]
    end = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("\n"))
    return (cut[: end + 1] if end > max_chars // 2 else cut).rstrip() + "\n"


def _summary(draft: Draft) -> str:
    lines = sorted(draft.lines, key=lambda item: item[0])
    facts = [t for _, t in lines]
    topic = ", ".join(w[:30] for w in keywords(facts or [draft.head], k=4)) \
        or draft.name.removesuffix(".md")
    zh = is_cjk_text(" ".join(facts))
    span = f"{lines[0][0]} {'至' if zh else 'to'} {lines[-1][0]}" if lines else "undated"
    latest = _sentence(facts[-1]) if facts else draft.head[:160]
    latest = latest if len(latest) <= 160 else latest[:157] + "..."
    if zh:
        return f"关于{topic}的记录（{span}）。最近：{latest}"
    return f"About {topic} ({span}). Latest: {latest}"


def restates(fact: str, lines: list[str], share: float = 0.8) -> bool:
    """True when one of ``lines`` (the same day's entries) already holds at least ``share``
    of ``fact``'s terms (and at least three): the same thing said twice that day. A repeat on
    another day is a recurring event and is kept."""
    wanted = set(terms(fact))
    if len(wanted) < 3:
        return False
    return any(len(wanted & set(terms(line))) >= share * len(wanted) for line in lines)


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


class OfflineBackend:
    """Backend protocol: ``run(job) -> BackendResult``; ``name`` goes in commit trailers."""

    name = "offline"

    def run(self, job):
        """Fold ``job.memories`` into scenes through ``job.box``; a ``BackendResult`` whose
        ``deferred`` lists memories left for a later batch. Raises ``OfflineError``."""
        from .batch import BackendResult

        worker = _OfflineWorker(job)
        deferred = worker.fold(job.memories)
        worker.flush()
        changed = sorted(d.name for d in worker.drafts.values() if d.changed)
        folded = len(job.memories) - len(deferred)
        summary = (f"Folded {folded} {'memory' if folded == 1 else 'memories'} into "
                   f"{len(changed)} scene(s): {', '.join(changed) or 'none changed'}.")
        if deferred:
            summary += (f" {len(deferred)} unrelated {'memory waits' if len(deferred) == 1 else 'memories wait'}"
                        " for a scene of its own.")
        return BackendResult(final_text=summary, steps=len(job.box.calls),
                             deferred=[m.seq for m in deferred])


class _OfflineWorker:
    def __init__(self, job):
        self.job = job
        self.box = job.box
        # Scenes with unreadable headers still count against the cap but are never touched.
        self.limit = job.context.max_scenes - 1 - len(job.context.frozen)
        self.drafts: dict[str, Draft] = {}
        self.texts = dict(job.scene_texts)   # name -> current text (not yet read through the box)
        self.deleted: list[str] = []
        self.created: str | None = None
        # One IDF for the whole batch (scenes as they were + the batch's memories): stable,
        # deterministic, and a scene's vector is recomputed only when its draft changes.
        self.vectors = Vectorizer().fit([*self.texts.values(), *(m.content for m in job.memories)])
        self._vectors: dict[str, dict[str, float]] = {}

    # -- sandbox calls, exactly as a model would make them
    def _call(self, tool: str, **arguments) -> str:
        result = self.box.execute(tool, json.dumps(arguments, ensure_ascii=False))
        if result.startswith("Error"):
            raise OfflineError(f"{tool}({arguments.get('path')}) refused: {result}")
        return result

    def _draft(self, name: str) -> Draft:
        if name not in self.drafts:
            self.drafts[name] = parse_draft(name, self._call("read_file", path=name))
        return self.drafts[name]

    def _live(self) -> list[str]:
        names = [n for n in self.texts if n not in self.deleted]
        return names + ([self.created] if self.created and self.created not in names else [])

    def _doc(self, name: str) -> str:
        if name in self.drafts:
            return self.drafts[name].text_for_similarity()
        return self.texts.get(name, "")

    def _vector(self, name: str) -> dict[str, float]:
        if name not in self._vectors:
            self._vectors[name] = self.vectors.vector(self._doc(name))
        return self._vectors[name]

    def _ranked(self, text: str) -> list[tuple[float, str]]:
        query = self.vectors.vector(text)
        scored = [(self.vectors.similarity(query, self._vector(n)), n) for n in self._live()]
        return sorted(scored, key=lambda item: (-item[0], item[1]))

    # -- folding
    def fold(self, memories: list[Memory]) -> list[Memory]:
        """Route each memory to a scene; return the memories deferred to a later batch.

        1. memories similar enough to a scene join it; 2. among the rest, the largest group of
        mutually similar ones opens the batch's one new scene (rules: one per batch);
        3. what is left waits for a later batch, where it may open a scene of its own, while
        there is room for more scenes; otherwise it joins its closest scene. Every batch that
        defers also creates a scene, so deferral ends once the scene count reaches the cap.
        """
        while len(self._live()) > self.limit and len(self._live()) > 1:
            self._merge_closest()          # the cap was lowered: come back under it first
        unmatched = []
        for memory in memories:
            ranked = self._ranked(memory.content)
            if ranked and ranked[0][0] >= SIMILAR_ENOUGH:
                self._add(self._roomiest(ranked, memory), memory)
            else:
                unmatched.append(memory)
        if not unmatched:
            return []
        if not self._can_create():
            for memory in unmatched:     # no room and nothing to merge: closest scene it is
                self._add(self._closest(memory), memory)
            return []
        group = self._largest_group(unmatched)
        target = self._create(group, self._ranked(group[0].content))
        for memory in group:
            self._add(target, memory)
        rest = [m for m in unmatched if m not in group]
        room = len(self._live()) < self.limit
        deferred = rest if room else []
        for memory in rest:
            if memory not in deferred:
                self._add(self._closest(memory), memory)
        return deferred

    def _can_create(self) -> bool:
        """Room for one more scene, or two scenes to merge to make room."""
        return len(self._live()) < self.limit or len(self._live()) >= 2

    def _closest(self, memory: Memory) -> str:
        ranked = self._ranked(memory.content)
        if not ranked:
            frozen = len(self.job.context.frozen)
            raise OfflineError(
                f"no scene can take this memory: the cap is {self.job.context.max_scenes - 1} "
                f"scenes and {frozen} of them have headers that cannot be read. Fix or remove "
                "those files (`scenes doctor` names them), or raise max_scenes.")
        return ranked[0][1]

    def _roomiest(self, ranked: list[tuple[float, str]], memory: Memory) -> str:
        """The best-matching scene, unless it is full and a close second (at least half its
        similarity, and similar enough) still has room: a full scene would drop old detail."""
        limit = self.job.context.max_scene_chars
        best_score, best = ranked[0]
        for score, name in ranked:
            if score < max(SIMILAR_ENOUGH, best_score / 2):
                break
            if len(self._doc(name)) + len(memory.content) + 16 <= limit:
                return name
        return best

    def _add(self, name: str, memory: Memory) -> None:
        draft = self._draft(name)
        draft.changed = True
        self._vectors.pop(name, None)
        day = memory.created_at.date().isoformat()
        if restates(memory.content, [text for d, text in draft.lines if d == day]):
            return                        # said twice the same day: no new detail
        draft.lines.append((day, memory.content))

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

    def _create(self, group: list[Memory], ranked: list[tuple[float, str]]) -> str:
        for _, name in ranked[:2]:     # the rules want two existing scenes read first
            self._draft(name)
        if len(self._live()) >= self.limit and len(self._live()) > 1:
            self._merge_closest()
        name = scene_name([m.content for m in group], set(self._live()) | set(self.deleted))
        self.created = name
        self.drafts[name] = Draft(name, {}, "", [], changed=True)
        return name

    def _merge_closest(self) -> None:
        """Fold one scene into its closest peer and delete it (frees one place).

        Among pairs whose merged text fits ``max_scene_chars`` the most similar pair wins;
        if none fits, the smallest pair (a merge that overflows loses its oldest detail).
        """
        live = [n for n in self._live() if n != self.created]
        vecs = {n: self._vector(n) for n in live}
        size = {n: len(self._doc(n)) for n in live}
        limit = self.job.context.max_scene_chars

        def rank(pair):
            sim, a, b = pair
            combined = size[a] + size[b]
            return (combined > limit, -sim if combined <= limit else combined, a, b)

        pairs = sorted(((self.vectors.similarity(vecs[a], vecs[b]), a, b)
                        for i, a in enumerate(live) for b in live[i + 1:]), key=rank)
        _, keep, drop = pairs[0]
        if size[drop] > size[keep]:       # keep the bigger scene's name: it says more
            keep, drop = drop, keep
        kept, dropped = self._draft(keep), self._draft(drop)
        kept.lines += dropped.lines
        kept.head = "\n\n".join(p for p in (kept.head, dropped.head) if p)
        kept.merged_from.append(drop)
        kept.changed = True
        dropped.changed = False
        self._vectors.pop(keep, None)
        self._call("write_to_file", path=drop, content="[DELETED]")
        self.deleted.append(drop)

    def flush(self) -> None:
        """Write every changed draft through the sandbox (creation last: reads come first)."""
        style = self.job.config.meta_style
        order = sorted((d for d in self.drafts.values() if d.changed),
                       key=lambda d: (d.name == self.created, d.name))
        for draft in order:
            if draft.name in self.deleted:
                continue
            text = render_draft(draft, self.job.context.max_scene_chars, style)
            self._call("write_to_file", path=draft.name, content=text)
