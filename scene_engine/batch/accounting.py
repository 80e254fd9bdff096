"""Where did my memory go: every memory a batch marks processed is accounted for.

docs/DESIGN.md "A batch", step 7: a memory a batch takes is *placed* in a scene the batch changed,
found already *recorded* in a named scene, a *duplicate* of another memory of the batch, or
(model backends only) *skipped* with the model's reason. The batch writes this ledger into its
own commit (``.scene-engine/ledger/NNNNNN.json``); ``scenes trace`` and ``scenes doctor`` read it.

A model says what it did with a memory in its final answer, one line each:
``NO_CHANGE: m12 already in work.md``, ``SKIP: m13 <reason>``, ``PLACED: m14 -> work.md``.
A memory it does not mention is placed where the text the batch added covers it
(``PLACED_EVIDENCE`` of its words). Claims are checked against the files: a batch that changed
nothing and says nothing is refused, not committed. A memory that corrects or contradicts a
scene is never skipped (``corrects_a_scene``): the seed's rule writes it into the scene.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from sandbox import DELETED
from scene_engine.batch.conservation import NEGATION, content_terms, coverage, stripped_lines
from scene_engine.core.changes import states_a_change
from scene_engine.core.periods import digest_facts
from scene_engine.core.text import CJK_CHAR
from scene_engine.store.memories import Memory
from scene_engine.store.scene import parse_scene

LEDGER_DIR = ".scene-engine/ledger"
OUTCOMES = ("placed", "recorded", "duplicate", "skipped")
# Shares of a memory's words, numbers and negation counted (a stub without the time, the room
# or the "not" does not hold the memory).
PLACED_EVIDENCE = 0.5    # unmentioned memory: share of its words in the text a scene gained
LONG_MEMORY = 1000        # characters: a memory this long may be placed by its quoted head
QUOTED_HEAD = 200         # ... the characters of its beginning a scene must quote
CLAIM_EVIDENCE = 0.3     # "PLACED: id -> scene": the scene gained a good part of its words
RECORDED_EVIDENCE = 0.8  # "NO_CHANGE: id already in scene": the scene holds nearly all of it
_KEYWORDS = {"nochange": "recorded", "recorded": "recorded", "skip": "skipped",
             "skipped": "skipped", "placed": "placed"}
_DECLARATION = re.compile(r"^\s*(?:[-*]\s*)?\**(NO[_ ]?CHANGE|RECORDED|SKIP(?:PED)?|PLACED)\**"
                          r"\s*[:：]?\s*(.*)$", re.I)
_SCENE_NAME = re.compile(r"[^\s`'\"()\[\],;:]+\.md\b", re.I)

# A reason that says the memory conflicts with, corrects or updates what a scene holds. Such a
# memory is the newest word on a fact, not noise: skipped, the scene keeps only the old fact
# (issue 21). The seed's rule: it is written into the scene (its Evolution, or an open
# question). CONFLICT: the two disagree; REVISION: the memory changes or corrects the fact.
_CONFLICT_EN = (r"contradict\w*|conflict\w*|inconsisten\w*|incompatib\w*|disagree\w*|"
                r"at odds|mismatch\w*|clash\w*|contrary|opposite|oppos(?:es|ed|ing)|"
                r"discrepan\w*|differ(?:s|ed|ing)?\s+from|refut\w*|disput\w*|instead of|"
                r"(?:says|states|said|stated|claims)\s+otherwise|untrue|not true|inaccura\w*")
_CONFLICT_ZH = "不一致|不相符|不符|矛盾|冲突|相悖|相左|相反|抵触|出入|有误|不对|错了|说错|不同于"
_REVISION_EN = (r"(?:in)?correct(?:s|ed|ing|ion|ions)?|wrong\w*|mistake\w*|mistaken|erroneous|"
                r"updat\w*|supersed\w*|supercede\w*|replac\w*|overrid\w*|overrode|overwr\w*|"
                r"outdated|out[- ]of[- ]date|obsolete\w*|stale|revis\w*|amend\w*|retract\w*|"
                r"invalidat\w*|modif\w*|revers\w*|no longer|newer|more recent|"
                r"chang(?:e|es|ed|ing)")
_REVISION_ZH = ("更正|纠正|修正|改正|订正|勘误|更新|取代|替代|替换|代替|覆盖|推翻|过时|过期|作废|"
                "失效|变更|改变|变化|修改|改为|改成|改了|变了|不再|否定|撤回|旧的|之前的|以前的|"
                "原来的|早先|旧")
# Words that say the two AGREE: negated ("doesn't match work.md", "not consistent with",
# "不一样", "说的不对"), each says they disagree. A conflict said by denying agreement.
_AGREE_EN = (r"match(?:es|ed|ing)?|consistent|same|agree(?:s|d)?|accurate|true|right|valid|"
             r"correct|current|up[- ]to[- ]date|in line|align(?:s|ed)?|fit(?:s)?|hold(?:s)?")
_AGREE_ZH = "一样|一致|相同|相符|符合|对得上|对|准确|正确|吻合"
# Said with no keyword above, yet about a fact that changed: "counter to", "overturns",
# "anymore", "an older ward", "the earlier fact".
_CHANGED_EN = (r"counter\s+to|overturn\w*|anymore|any\s+more|old|older|earlier\s+(?:fact|one|"
               r"version|entry|line|statement)|previous(?:ly)?|used\s+to|formerly|former|"
               r"was\s+\w+\s+before|now\s+(?:is|says|works|lives)")


def _words(english: str, chinese: str) -> re.Pattern:
    # English words stand alone ("correct" is not "correctly"); Chinese has no spaces.
    return re.compile(rf"(?<![a-z])(?:{english})(?![a-z])|(?:{chinese})", re.I)


_CONFLICT_RE = _words(_CONFLICT_EN, _CONFLICT_ZH)
_CORRECTION_RE = _words(f"{_CONFLICT_EN}|{_REVISION_EN}|{_CHANGED_EN}",
                        f"{_CONFLICT_ZH}|{_REVISION_ZH}")
_AGREE_RE = _words(_AGREE_EN, _AGREE_ZH)
# A negation counts in its own clause only: "not noise, it contradicts work.md" is a conflict.
_CLAUSE = re.compile(r"[,.;:!?()\[\]，。；：！？、（）]|\b(?:but|however|though|although|"
                     r"yet|whereas|while)\b|但是|但|却|不过|而是", re.I)
_NEGATION_EN = frozenset("no not never without nothing none neither nor nobody cannot isn't "
                         "doesn't don't didn't wasn't aren't won't can't".split())
_NEGATION_ZH = re.compile(r"(?:不|没|无|未|并非)[^不没无未]{0,3}$")
_NOT_NEGATION_ZH = ("不少", "不久", "不断", "不错", "不仅", "不同")   # 不 that negates nothing
_NEGATION_AFTER = frozenset("nothing none no neither nobody".split())
# "not the same as any scene" / "matches nothing": a denied agreement with nothing in it.
_NOTHING_AFTER = re.compile(r"\s*(?:\w+\s+){0,2}(?:any|anything|nothing|none|no)\b|"
                            r"\s*(?:任何|什么)", re.I)


def corrects_a_scene(reason: str, conflict_only: bool = False) -> bool:
    """True when ``reason`` (a model's words for a SKIP or NO_CHANGE) says the memory
    conflicts with, contradicts, corrects, updates, supersedes or replaces what a scene holds,
    in English or Chinese, in any casing ("contradicts work.md", "CORRECTION", "与场景矛盾",
    "更正了旧的说法"); a negated one ("no conflict", "updates nothing", "无需更新") does not
    count. ``conflict_only``: only words saying the two disagree (a NO_CHANGE may say the
    scene was "updated"). The rule: such a memory is written into the scene, never skipped
    (issue 21, the seed's rule on contradictions)."""
    pattern = _CONFLICT_RE if conflict_only else _CORRECTION_RE
    for match in pattern.finditer(reason):
        before = _CLAUSE.split(reason[:match.start()])[-1]
        after = _CLAUSE.split(reason[match.end():])[0]
        if not _negated(before, after):
            return True
    for match in _AGREE_RE.finditer(reason):     # "doesn't match", "不一样": a denied agreement
        before = _CLAUSE.split(reason[:match.start()])[-1]
        after = _CLAUSE.split(reason[match.end():])[0]
        if _negated(before, after) and not _NOTHING_AFTER.match(after):
            return True
    return False


def _negated(before: str, after: str) -> bool:
    """A negation in the three words before a keyword or the two after it, in its clause."""
    prior = re.findall(r"[a-z']+", before.lower().replace("’", "'"))[-3:]
    later = re.findall(r"[a-z']+", after.lower())[:2]
    if _NEGATION_EN.intersection(prior) or _NEGATION_AFTER.intersection(later):
        return True
    for compound in _NOT_NEGATION_ZH:
        before = before.replace(compound, "  ")
    return bool(_NEGATION_ZH.search(before.rstrip()))


def ledger_path(batch: int) -> str:
    """Path of batch ``batch``'s ledger, relative to the store root."""
    return f"{LEDGER_DIR}/{batch:06d}.json"


@dataclass
class LedgerEntry:
    """One memory's fate in a batch: journal ``seq`` and ``id``, ``outcome`` (see OUTCOMES),
    ``scenes`` it is in, and ``reason`` (the model's words for a skip, the kept memory's id
    for a duplicate)."""

    seq: int
    id: str
    outcome: str
    scenes: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass
class Ledger:
    """A batch's ledger: ``entries`` in memory order and ``merges`` (surviving scene ->
    scenes merged into it by this batch)."""

    batch: int
    entries: list[LedgerEntry]
    merges: dict[str, list[str]] = field(default_factory=dict)

    def render(self) -> str:
        """JSON text, one memory per line so a diff reads like a list."""
        rows = ",\n".join("    " + json.dumps(asdict(e), ensure_ascii=False) for e in self.entries)
        return (f'{{\n  "batch": {self.batch},\n  "merges": '
                f'{json.dumps(self.merges, ensure_ascii=False, sort_keys=True)},\n'
                f'  "memories": [\n{rows}\n  ]\n}}\n')

    @classmethod
    def parse(cls, text: str) -> Ledger:
        """Inverse of ``render``; raises ``ValueError`` on a malformed ledger."""
        try:
            raw = json.loads(text)
            return cls(batch=int(raw["batch"]), merges=dict(raw.get("merges") or {}),
                       entries=[LedgerEntry(**e) for e in raw["memories"]])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"malformed ledger: {exc}") from exc

    def counts(self) -> dict[str, int]:
        """outcome -> number of memories, for every outcome."""
        return {o: sum(e.outcome == o for e in self.entries) for o in OUTCOMES}

    def summary_line(self) -> str:
        """``Accounted: 18 placed, 1 recorded, 1 skipped`` (outcomes that occur)."""
        shown = [f"{n} {o}" for o, n in self.counts().items() if n]
        return "Accounted: " + (", ".join(shown) or "nothing")


@dataclass(frozen=True)
class Declaration:
    """What a backend says it did with one memory: ``outcome``, ``scene`` (or None),
    ``reason``."""

    outcome: str
    scene: str | None = None
    reason: str = ""


def parse_declarations(text: str, ids: list[str]) -> dict[str, Declaration]:
    """memory id -> Declaration, from the ``NO_CHANGE:`` / ``SKIP:`` / ``PLACED:`` lines of a
    model's final answer (``ids``: the batch's memory ids; several on one line are allowed)."""
    found: dict[str, Declaration] = {}
    ordered = sorted(ids, key=len, reverse=True)   # m10 before m1
    for line in text.splitlines():
        match = _DECLARATION.match(line)
        if not match:
            continue
        outcome = _KEYWORDS[re.sub(r"[_ ]", "", match.group(1).lower())]
        rest = match.group(2)
        named = []
        for memory_id in ordered:
            pattern = rf"(?<![\w-]){re.escape(memory_id)}(?![\w-])"
            if re.search(pattern, rest):
                named.append(memory_id)
                rest = re.sub(pattern, " ", rest)
        scene = _SCENE_NAME.search(rest)
        reason = " ".join(re.sub(r"^[\s,:：\-—>]+", "", rest).split())
        for memory_id in named:
            found[memory_id] = Declaration(outcome, scene.group(0) if scene else None, reason)
    return found


def _evidence(memory: Memory, text: str) -> float:
    """Share of the memory's words that ``text`` states; 1.0 for a memory too long for a
    scene (over ``LONG_MEMORY`` characters) whose first ``QUOTED_HEAD`` characters ``text``
    quotes word for word: a scene keeps its beginning, the journal keeps all of it (a base64
    key or a pasted log has no words to count)."""
    found = coverage(memory.content, text, numbers=True)
    if found < 1.0 and len(memory.content) > LONG_MEMORY:
        head = " ".join(memory.content.split())[:QUOTED_HEAD]
        if head in " ".join(text.split()):
            return 1.0
    return found


def _held_in_lines(memory: Memory, body: str) -> tuple[float, str]:
    """(the least, over the memory's sentences, of the share of its words and numbers that
    one statement of ``body`` states; the statement nearest one of them when it says it with
    the opposite negation, or ""). A scene holds a memory when its statements say what the
    memory says, not when the memory's words are scattered over lines about other things
    ("I never run in the rain" does not hold "I now run in the rain"), nor over the facts of
    one digest line (issue 37: "4 Jan: Mirela推荐我去Graz玩" beside "最近睡得不好" is no
    "not" of the recommendation). A statement is a line, a digest's fact or a sentence of
    either (``_statements``); the nearest statement decides, and between equally near ones
    one that agrees. A memory too long for a scene is held by a quote of its head
    (``_evidence``)."""
    if len(memory.content) > LONG_MEMORY and _evidence(memory, body) >= 1.0:
        return 1.0, ""
    statements = _statements(body)
    sentences = [s for s in _SENTENCE.split(memory.content) if s.strip()]
    least, opposite = 1.0, ""
    for sentence in sentences or [memory.content]:
        wanted = content_terms(sentence, numbers=True)
        plain = wanted - {NEGATION}
        if not plain:
            continue
        agree, against, against_text = 0.0, 0.0, ""
        for said in statements:
            terms = content_terms(said, numbers=True)
            share = len(plain & terms) / len(plain)
            if (NEGATION in wanted) == (NEGATION in terms):
                agree = max(agree, share)
            elif share > against:
                against, against_text = share, said.strip()
        if against >= RECORDED_EVIDENCE and against > agree:
            opposite = opposite or against_text
        least = min(least, max(agree, against))
    return least, opposite


_SENTENCE = re.compile(r"(?<=[.!?。！？;；])\s*")


def _statements(body: str) -> list[str]:
    """What a scene body states, one text each: every non-blank line (a digest line fact by
    fact: ``periods.digest_facts``) and, when it has several sentences, each of them too (a
    "not" in one sentence does not negate the next)."""
    out = []
    for line in body.split("\n"):
        if not line.strip():
            continue
        for said in digest_facts(line) or [line]:
            out.append(said)
            parts = [part for part in _SENTENCE.split(said) if part.strip()]
            if len(parts) > 1:
                out += parts
    return out


def _body(name: str, text: str) -> str:
    scene = parse_scene(text, name=name)
    return scene.body if scene.header else text


def _casefold_lookup(names) -> dict[str, str]:
    return {n.casefold(): n for n in names}


def added_text(old: str | None, new: str) -> str:
    """The lines of ``new`` that ``old`` did not have (all of ``new`` for a new scene)."""
    if old is None:
        return new
    before = stripped_lines(old)
    return "\n".join(line for line in new.split("\n") if line.strip() not in before)


def account(memories: list[Memory], duplicates: list[tuple[Memory, Memory]], pending: dict,
            old_texts: dict[str, str], declared: dict[str, Declaration],
            allow_skip: bool) -> tuple[list[LedgerEntry], list[str]]:
    """Account for every memory of a batch; return (entries, problems).

    ``memories``: the batch's distinct memories; ``duplicates``: (dropped memory, the memory of
    the batch it repeats); ``pending``: the staged change set (name -> text or DELETED);
    ``old_texts``: name -> text before the batch; ``declared``: the backend's statements.
    Problems (empty = every memory accounted for) are written for the model to act on.
    """
    written = {n: c for n, c in pending.items() if c is not DELETED}
    after = {n: t for n, t in old_texts.items() if pending.get(n) is not DELETED} | written
    old_by_key = {n.casefold(): _body(n, t) for n, t in old_texts.items()}
    # Only the body counts as a place: a fact only in the summary is gone at the next batch.
    gained = {n: added_text(old_by_key.get(n.casefold()), _body(n, c)) for n, c in written.items()}
    scene_of = _casefold_lookup(after)
    entries, problems, missing = [], [], []
    for memory in memories:
        claim = declared.get(memory.id)
        entry, problem = _judge(memory, claim, gained, after, scene_of, allow_skip)
        if entry:
            entries.append(entry)
        elif problem:
            problems.append(problem)
        else:
            missing.append(memory)
    if missing:
        problems.append(_missing_message(missing, changed=bool(pending), allow_skip=allow_skip))
    by_seq = {e.seq: e for e in entries}
    for dropped, kept in duplicates:
        source = by_seq.get(kept.seq)
        entries.append(LedgerEntry(seq=dropped.seq, id=dropped.id, outcome="duplicate",
                                   scenes=list(source.scenes) if source else [], reason=kept.id))
    entries.sort(key=lambda e: e.seq)
    return entries, problems


def _judge(memory: Memory, claim: Declaration | None, gained: dict[str, str],
           after: dict[str, str], scene_of: dict[str, str], allow_skip: bool):
    """(entry, None) when accounted, (None, problem) for a false claim, (None, None) when
    nothing says where the memory went."""
    def entry(outcome, scenes, reason=""):
        return LedgerEntry(memory.seq, memory.id, outcome, scenes, reason), None

    if claim is None or claim.outcome == "placed":
        named = scene_of.get((claim.scene or "").casefold()) if claim else None
        if named and named in gained and _evidence(memory, gained[named]) >= CLAIM_EVIDENCE:
            return entry("placed", [named])
        best = max(gained, key=lambda n: (_evidence(memory, gained[n]), n), default=None)
        if best and _evidence(memory, gained[best]) >= PLACED_EVIDENCE:
            return entry("placed", [best])
        if claim and claim.scene:
            return None, (f"{memory.id}: you said it went into {claim.scene}, but the text "
                          f"{claim.scene} gained does not state it. Write it there, or say "
                          f"`NO_CHANGE: {memory.id} already in <scene>.md` if a scene holds it.")
        return None, None
    if claim.outcome == "recorded":
        if corrects_a_scene(claim.reason, conflict_only=True):
            return None, _correction_problem(memory.id, "NO_CHANGE", claim.reason)
        named = scene_of.get((claim.scene or "").casefold())
        if named is None:
            return None, (f"{memory.id}: `NO_CHANGE` must name the scene that already holds it "
                          f"(`NO_CHANGE: {memory.id} already in <scene>.md`); "
                          f"{claim.scene or 'a line without a scene'} names none of the "
                          "scenes.")
        held, opposite = _held_in_lines(memory, _body(named, after[named]))
        if opposite:
            return None, (f"{memory.id}: {named} says the opposite (\"{opposite[:120]}\"); "
                          "it does not hold this memory. Write the change into it (under "
                          "`## Evolution`, the earlier fact kept as earlier).")
        if held < RECORDED_EVIDENCE:
            return None, (f"{memory.id}: {named} does not hold it (no line of it states "
                          f"more than {held:.0%} of its words). Fold it into a scene instead.")
        return entry("recorded", [named])
    if not allow_skip:
        return None, f"{memory.id}: this backend may not skip memories."
    if corrects_a_scene(claim.reason) or states_a_change(memory.content):
        return None, _correction_problem(memory.id, "SKIP", claim.reason)
    if len(claim.reason.split()) + len(CJK_CHAR.findall(claim.reason)) < 2 and len(claim.reason) < 6:
        return None, (f"{memory.id}: a skip needs a reason (`SKIP: {memory.id} <why it is not "
                      "worth keeping>`).")
    return entry("skipped", [], claim.reason)


def _correction_problem(memory_id: str, keyword: str, reason: str) -> str:
    """What a model is told when its ``keyword`` line leaves out a memory that corrects or
    contradicts a scene (``corrects_a_scene``): where the seed's rules put it instead."""
    return (f"{memory_id}: a memory that corrects, updates or contradicts what a scene holds "
            f"is not a reason for {keyword} (you said: \"{reason[:120]}\"); the scene would "
            "keep only the old fact. Write it into that scene: the change with its date under "
            "`## Evolution` (keep the earlier fact, as earlier), or, when it is not clear which "
            "is true, as an open question under `## Open threads`.")


def _missing_message(missing: list[Memory], changed: bool, allow_skip: bool) -> str:
    shown = "; ".join(f"{m.id} \"{m.content[:80]}\"" for m in missing[:10])
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    start = ("no scene changed, and your answer does not say why" if not changed
             else "no scene you changed states these memories")
    skip = " or `SKIP: <id> <reason>` if it is not worth keeping" if allow_skip else ""
    return (f"{start}: {shown}{more}. Fold each into a scene with the tools, or end your "
            f"answer with one line per memory: `NO_CHANGE: <id> already in <scene>.md` if a "
            f"scene already holds it{skip}.")
