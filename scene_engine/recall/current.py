"""What is true now: which recalled memories state the asked attribute of the asked person,
and whether the evidence is strong enough to call the newest *current* (issues 26, 36;
docs/DESIGN.md "Index and watcher", current facts).

Knowledge changes: where a person lives, works, who they are with, what they keep, eat or
play. A question about such an attribute ("where do I live now?", "我在哪工作？", "which city
does Priya live in now?") wants its latest value first and the earlier ones as history. A
wrong "current" is worse than none, so there are two levels of evidence:

1. ``read_question``: a question (not a list of words to find: "李伟 咖啡"), whose attribute
   it asks about (``subject``: the speaker, or the person it names: "Priya", "my mum", 小林,
   我妈妈), and whether it asks for an earlier value ("before", 之前: ``past``).
2. ``states``: a memory may state the subject's attribute only when it is the person's own
   words (not the assistant's: role ``assistant``), its first clause about that subject (not
   "my sister lives in Madrid", "Joana has moved", "Pepper's teeth", 妈妈住在, 小林入职), as a
   fact (not "thinking of moving", "if we get a dog", 打算, "I miss Porto") and no visit or
   trip ("back in Chicago for Thanksgiving", 出差).
3. ``weigh``: which of those are about the asked attribute is judged by meaning (the
   sentence encoder, ``index.dense``): a statement is clearly nearer the question than the
   journal at large (``STRONG``, ``CLOSE``). For the attributes whose statements the encoder
   does not link to the question ("Moving day. Cascais, here we go." for "where do I live?"),
   their stating words find them (``stating.FAMILIES``). The statements are shown first,
   newest first, dated, claiming nothing, unless the evidence is strong (``Verdict
   .claimed``): the newest clear statement is the nearest or nearly (``CLAIM_GAP``), no
   plan in it (``firm``), an earlier clear statement says the same attribute in other words
   (``SAME``: statement against statement), and no newer memory of the subject may be a new
   value it does not weigh (``PLAUSIBLE``, alike, or found by the stating words). Then the
   newest is "current" and the earlier ones "until" the next.

Without meaning (``SCENE_ENGINE_SEMANTIC=off``) only the stating words find statements, and
nothing is claimed. The closed classes of words left here (pronouns and kin words, modality
and visit markers, asking and past words) are measured in bench/RESULTS.md ("Current facts
by meaning (issue 36)"): what removing each costs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scene_engine.core.text import lazy_pattern
from scene_engine.recall.stating import Family, asked_families, stated

__all__ = ["ASKS_CURRENT", "Nearness", "Question", "Verdict", "expansion", "is_question",
           "read_question", "states", "weigh"]

# A word boundary for Latin words that a Chinese character also ends ("OPPO终于", "换了vivo"):
# to Python's ``\b`` both are word characters, so no boundary would be seen between them.
_B = r"(?:(?<![A-Za-z0-9])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?![A-Za-z0-9]))"


def _rx(source: str) -> re.Pattern:
    """``source`` compiled case-blind, its ``\b`` the Latin word boundary ``_B``, at its first
    use (``lazy_pattern``: a recall uses a few of these many patterns)."""
    return lazy_pattern(source.replace(r"\b", _B), re.I)


# A question that asks for the value now (issue 26: now, currently, still, 现在, 目前, 还).
ASKS_CURRENT = _rx(
    r"\b(now|currently|current|still|these days|at the moment|nowadays|anymore|any more|"
    r"today|lately|right now)\b|现在|目前|如今|还|最近|眼下|这阵子")

# -- the meaning thresholds: cosines of the default encoder (USE), set on bench/knowledge
# and bench/updates_dev (bench/RESULTS.md "Current facts by meaning (issue 36)") ----------
STRONG = 0.18     # a clear statement: this far ahead of the journal's median cosine
CLOSE = 0.5       # ... and at least this share of the nearest statement's lead
CLAIM_GAP = 0.1   # a claimed statement is at most this far behind the nearest one
SAME = 0.20       # two statements of one attribute: this far above two of them anyway
TYPICAL_OF = 4    # statements enough to measure how alike two of them are anyway
TYPICAL_MAX = 64  # ... of which the newest this many are measured (2,016 pairs)
PLAUSIBLE = 0.10  # a newer memory this far ahead of the median may be a new value

# -- closed classes -------------------------------------------------------------------------
# People other than the speaker: pronouns and kin words (a pet is "he"/"she" too).
_OTHER_EN = (r"he|she|they|mum|mom|mother|dad|father|"
             r"parents|sister|brother|sis|bro|wife|husband|son|daughter|grandma|grandmother|"
             r"grandpa|grandfather|granny|nan|aunt|uncle|cousin|niece|nephew|friend|"
             r"roommate|flatmate|housemate|colleague|boss|manager|neighbou?r|boyfriend|"
             r"girlfriend|fianc[eé]e?|ex")
_OTHER_ZH = (r"妈妈|母亲|老妈|爸爸|父亲|老爸|爸妈|父母|姐姐|妹妹|哥哥|弟弟|姐|妹|哥|弟|老公|老婆|"
             r"丈夫|妻子|儿子|女儿|奶奶|爷爷|外婆|外公|姥姥|姥爷|阿姨|叔叔|舅舅|姑姑|表姐|表哥|"
             r"表妹|表弟|堂姐|堂哥|堂妹|堂弟|闺蜜|室友|同事|老板|邻居|朋友|男朋友|女朋友|前任|"
             r"前夫|前妻|他们|她们|他|她|妈|爸")
_OTHER = _rx(rf"\b(?:{_OTHER_EN})\b|{_OTHER_ZH}")
_KIN_EN = re.compile(rf"\b(?:my|our)\s+((?:{_OTHER_EN}))\b", re.I)
_SELF = _rx(r"\b(i|i'm|i've|i'd|i'll|im|ive|we|we're|we've|we'd|we'll|me|us|my|our|mine|"
            r"ours)\b|我们|我|咱们|咱")
# "my sister", 我妈妈: the speaker's word naming another person.
_SELF_KIN = _rx(rf"\b(?:my|our)\s+(?:\w+\s+)?(?:{_OTHER_EN})\b|(?:我们|我)的?(?:{_OTHER_ZH})")
# A clause about wanting, planning or supposing (it changes nothing), or about missing a
# place or a thing (a past value named again), states no value.
_MODAL = _rx(
    r"\b(thinking (?:of|about)|think about|considering|consider|might|maybe|perhaps|"
    r"wants? to|wanted to|would (?:love|like)|'d (?:love|like)|should|could|plan(?:ning|s)? "
    r"to|hope to|hoping to|if|unless|dream\w*|someday|one day|tempted|wonder\w*|"
    r"miss(?:ing)?|going to|gonna|will|'ll|talk(?:s|ing|ed)? (?:about|of)|looking (?:at|for)|"
    r"next (?:week|month|year|spring|summer|autumn|fall|winter)|(?:moving|starting|leaving|"
    r"joining|switching) [^,.;]{0,30}\b(?:in|this|next) (?:january|february|march|april|may|"
    r"june|july|august|september|october|november|december|spring|summer|autumn|fall|"
    r"winter))\b|[?？]|想念|怀念|好想|想去|想搬|想要|想换|想养|打算|要不要|考虑|如果|"
    r"假如|要是|也许|可能|希望|梦想|想想|准备|计划|下个月|下周|明年|将要|会不会")
# A sentence about a visit or a trip says where one was, not where one lives or works.
_AWAY = _rx(r"\b(visit\w*|trip|holiday|vacation|for (?:the )?(?:weekend|thanksgiving|"
            r"christmas|holidays|new year)|business travel)\b|出差|旅游|旅行|探亲|看望|"
            r"回\S{1,4}看|国庆去|国庆回|过年回|去了\S{1,4}玩|度假")
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*")
_CLAUSE = re.compile(r"[,;:，；：、]|\bbut\b|\band then\b|但是|不过|然后")
_FIRST_PERSON = _rx(r"\b(i|my|me|mine|i'm|am i|do i|did i|have i|im)\b|我")
# A question about an earlier value ("Where did I live before Lisbon?", 我之前开的什么车？).
_PAST = _rx(r"\b(before|used to|previous\w*|earlier|former\w*|first|originally|back "
            r"then)\b|之前|以前|原来|上一个|上一份|过去|最早|当初")
# A question, not a list of words to find: a question mark, a word that asks, or a
# Chinese asking word.
_ASKS = _rx(r"[?？]|^\s*(what|what's|whats|which|where|where's|who|who's|whose|how|how's|"
            r"is|are|am|do|does|did|has|have|can)\b|吗|呢|什么|哪|谁|几|怎么|怎样|是否|有没有")
# Words a question begins with, or asks with, that are no name ("Which city does Priya
# live in?": Priya is; "Is", "Which" are not).
_ASKING = frozenset(
    "what what's whats which where where's who who's whom whose when how how's is are am "
    "was were do does did has have had can could will would should the a an and or in at "
    "on for of to with still now currently these days".split())
_NAME = re.compile(r"\b[A-Z][a-zà-ÿ]+(?:[-'][A-Z]?[a-zà-ÿ]+)?\b")
# A Chinese question without 我 begins with its subject: the characters before the first
# word of time, place or asking (小林现在在哪家公司？, 阿敏还住在大理吗？).
_ZH_SUBJECT = re.compile(r"^([\u4e00-\u9fff]{1,4}?)(?:现在|目前|如今|最近|还|在|住|是|的|有|"
                         r"去|做|开|用|养|叫|和|跟|吗|呢)")


@dataclass(frozen=True)
class Question:
    """What a question asks about: ``subject`` ("" for the speaker, else the person it
    names: "Priya", "mum", 小林, 妈妈), ``anchors`` (its own rarest content terms, as the
    analyser makes them, for finding statements in other words), ``text`` (the question as
    asked), ``families`` (the attributes whose stating words find statements meaning
    misses: ``stating.FAMILIES``),
    ``past`` (it asks for an earlier value: "before", "used to", 之前: nothing is claimed
    current for it)."""

    subject: str = ""
    anchors: frozenset[str] = frozenset()
    text: str = ""
    families: tuple[Family, ...] = ()
    past: bool = False


def read_question(query: str, anchors: frozenset[str] = frozenset()) -> Question | None:
    """Whose attribute ``query`` asks about: the speaker's (I, my, 我, or no one named:
    "which city is home these days"), or a named person's ("Which city does Priya live in
    now?", "Where does my mum live?", 小林现在在哪家公司？, 我妈妈住在哪里？); None for words
    to find rather than a question ("ukulele", "李伟 咖啡": no question word or mark, no
    "I"), and for a question about a named person that does not ask about now ("What is
    Caroline researching?": its best answers are not the latest, bench/RESULTS.md).
    ``anchors``: the query's content terms to find statements by (the caller's analyser)."""
    if not is_question(query):
        return None
    subject = _subject(query)
    if subject and not _FIRST_PERSON.search(query) and not ASKS_CURRENT.search(query):
        return None     # "What is Caroline researching?": about her, but not about now
    return Question(subject, anchors, query, asked_families(query), bool(_PAST.search(query)))


def is_question(query: str) -> bool:
    """Whether ``query`` is a question (a question mark, a word that asks, 吗, 什么, or
    "I"), not words to find ("ukulele", "李伟 咖啡", "zyzzyva quokka")."""
    return bool(_ASKS.search(query) or _FIRST_PERSON.search(query))


def _subject(query: str) -> str:
    """"" for the speaker, else the name or kin word of the person ``query`` asks about."""
    kin = _KIN_EN.search(query)
    if kin and not re.match(r"\s*(who|who's|whom)\b", query, re.I):
        named = re.match(r"\s+([A-Z][a-zà-ÿ]+)", query[kin.end():])
        # "Where does my mum live?" (not "Who's my partner?"); "my brother Ewan": Ewan
        return named.group(1) if named else kin.group(1).lower()
    zh_kin = re.search(rf"(?:我们|我)的?({_OTHER_ZH})", query)
    if zh_kin and not re.search(r"谁|叫什么", query):
        return zh_kin.group(1)           # 我妈妈住在哪里？ (not 我老公叫什么名字？)
    if _FIRST_PERSON.search(query):
        return ""
    names = [m.group(0) for m in _NAME.finditer(query)
             if m.group(0).lower() not in _ASKING and m.group(0) != "I"]
    if names:
        return names[0]                  # "Is Keisha still at Hamilton General?": Keisha
    found = _ZH_SUBJECT.match(query.strip())
    if found and not re.search(r"[哪谁什么几怎]", found.group(1)):
        return found.group(1)            # 小林现在在哪家公司？
    other = _OTHER.search(query)
    if other:
        return other.group(0).lower()    # "where does mum live now"
    return ""                            # "which city is home these days"


def expansion(question: Question) -> list[str]:
    """The stating words of each asked family (``stating.Family.words``), one search each:
    a family's many mentions must not crowd out another's."""
    return [f.words for f in question.families]


def states(question: Question, text: str, role: str | None = None) -> bool:
    """True when ``text`` may state an attribute of the question's subject, as a fact: the
    person's own words (``role`` not ``"assistant"``); its first clause about that subject
    (for the speaker: "I", "we", 我 or nobody, not "my sister", "he", "Joana has", 妈妈; for
    another person: naming them before the speaker); no clause of its first sentence a plan,
    wish, hypothesis, longing or question (``_MODAL``); no sentence of it a visit or a trip
    (``_AWAY``). Which attribute it states is for the meaning to judge (``weigh``); a claim
    asks more (``firm``)."""
    return role != "assistant" and _states(question.subject, text)


@functools.lru_cache(maxsize=16384)
def _states(subject: str, text: str) -> bool:
    """``states`` for the person's own words (cached: recall judges the same memories for
    question after question)."""
    if _AWAY.search(text):
        return False
    sentence = next((s for s in _SENTENCES.split(text) if s.strip()), "")
    clauses = [c for c in _CLAUSE.split(sentence) if c.strip()]
    if not clauses or any(_MODAL.search(c) for c in clauses):
        return False
    return _about(clauses[0], subject)


def firm(text: str) -> bool:
    """Whether no clause of ``text`` is a plan, wish, hypothesis or question: a memory that
    mixes a fact with a plan ("We're doing it. Moving to Denver this summer. I'll tell the
    principal on Monday.") is never claimed current."""
    return not any(_MODAL.search(c) for c in _CLAUSE.split(text) if c.strip())


def _about(clause: str, subject: str) -> bool:
    """Whether ``clause`` is about ``subject`` ("" the speaker): for the speaker, the first
    person it names is the speaker, or nobody ("Moved to Porto."), or another joined by
    "and I" ("Tom and I moved"); for another person, it names them, and not after the
    speaker ("I told Priya ..." is the speaker's)."""
    people = _people(clause)
    if subject:
        at = clause.lower().find(subject.lower())
        return at >= 0 and not any(kind == "self" and start < at for start, kind in people)
    if not people or re.search(r"\band (?:i|me)\b|和我|跟我", clause, re.I):
        return True
    return people[0][1] == "self"


def _people(clause: str) -> list[tuple[int, str]]:
    """(where, "self" or "other") of each person ``clause`` names as a subject may be, in
    order: "my sister" and 我妈妈 are another person, "I", "we", "my", 我 the speaker, he,
    she, they another; a name another (``_NAMED``: "Joana has", "Kyle bought"; a Chinese
    clause's first word when the dictionary calls it a name: 刘强决定...). An object ("took
    her to the vet") is no subject."""
    found: list[tuple[int, str]] = []
    kin = [(m.start(), m.end()) for m in _SELF_KIN.finditer(clause)]
    found += [(start, "other") for start, _ in kin]
    covered = [range(a, b) for a, b in kin]
    for pattern, kind in ((_OTHER, "other"), (_SELF, "self"), (_NAMED, "other")):
        found += [(m.start(), kind) for m in pattern.finditer(clause)
                  if not any(m.start() in span for span in covered)]
    lead = len(clause) - len(clause.lstrip())
    if _zh_name_first(clause.strip()) or _OWNED.match(clause.strip()) or \
            _NAME_ZH.match(clause.strip()):
        found.append((lead, "other"))
    return sorted(found)


def _zh_name_first(clause: str) -> bool:
    """Whether a Chinese clause begins with a person's name: its first word (jieba's cut)
    is one the dictionary tags as a name (``nr``: 刘强, 小林), or a word of two or three
    characters the dictionary lacks, made up by the cut, before no noun (安琪, 晓琳)."""
    run = re.match(r"[\u4e00-\u9fff]{2,8}", clause)
    return run is not None and _zh_name_begins(run.group(0))


@functools.lru_cache(maxsize=16384)
def _zh_name_begins(run: str) -> bool:
    """``_zh_name_first`` of a clause's first run of Chinese characters (at most 8)."""
    from scene_engine.index.analysis import _frequencies_or_none, part_of_speech, segment

    freq = _frequencies_or_none(run)
    if freq is None:            # no jieba: no name is seen
        return False
    words = segment(run, freq)
    if len(words) < 2:
        return False
    tags = part_of_speech(words[:2])
    if tags.get(words[0]) == "nr":
        return True
    # A word the cut made up is a name when no noun follows it (安琪换了, 晓琳和我), not
    # when one does (入职星河教育: a verb the 2013 dictionary lacks).
    return not freq.get(words[0]) and 2 <= len(words[0]) <= 3 and \
        not tags.get(words[1], "").startswith("n")


# A clause that begins with someone's thing is about them ("Inês's old Clio broke down",
# "Pepper's teeth cleaning"), not about the speaker.
_OWNED = re.compile(r"(?!(?:It|That|Here|There|What|Let|Who|Where|How|He|She)'s\b)"
                    r"[A-Z][a-zà-ÿ]+'s\s")
# A Latin name before Chinese words begins a clause about that person ("Vivian 在 Toronto
# 订婚了").
_NAME_ZH = re.compile(r"[A-Z][a-zà-ÿ]+\s*[\u4e00-\u9fff]")
# A name as a clause's subject: a capitalized word, not a known word of the language's
# sentence openings, followed by a verb ("Joana has moved", "Kyle bought", "Priya says").
_NAMED = re.compile(
    r"(?<![\w'])(?!(?:I|We|My|Our|It|This|That|The|Just|Finally|Today|Officially|Now|So|"
    r"And|Also|Still|Back|Went|Moved|Got|Started|First|New|Signed|Took|Had|Made|Did|Left|"
    r"Joined|Bought|Sold|Adopted|Quit|Switched|Swapped|Painted|Moving|Starting|Going|"
    r"Last|Next|This|Yesterday|Tonight|Tomorrow|Our|Your|Their)\b)"
    r"[A-Z][a-zà-ÿ]+(?:'s)?\s+(?:has|had|is|was|and|just|finally|officially|got|gets|"
    r"lives|lived|moved|moves|works|worked|started|starts|left|leaves|quit|will|says|said|"
    r"bought|buys|sold|drives|drove|adopted|joined|took|takes|switched|swapped|went|goes|"
    r"is|got|'s)\b")


@dataclass
class Verdict:
    """What the evidence says: ``statements`` (memory ids, newest first: the memories that
    may state the subject's asked attribute, shown first and dated), ``claimed`` (the newest
    is "current": the strong case) and ``history`` (when claimed, the earlier statements of
    the same attribute, newest first: each stood "until" the next; the other statements
    claim nothing)."""

    statements: list[str] = field(default_factory=list)
    claimed: bool = False
    history: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Nearness:
    """What the encoder says of the candidates: ``near(id)`` a memory's cosine to the
    question, ``between(a, b)`` the cosine of two memories, ``median`` the journal's median
    cosine to the question (how near an unrelated memory is) and ``typical(ids)`` the median
    cosine of two of those memories (how alike two memories of that lot are anyway: two
    about Priya share her name, whatever else they say)."""

    near: Callable[[str], float]
    between: Callable[[str, str], float]
    median: float
    typical: Callable[[Sequence[str]], float]


def weigh(question: Question, candidates: Sequence[tuple[str, str, str | None]],
          nearness: Nearness | None) -> Verdict:
    """The statements of the asked attribute among ``candidates`` (``(memory id, text,
    role)``, newest first) and whether the newest is claimed current (the module's steps).
    ``nearness`` None (no meaning): only those the stating words find, never claimed."""
    own = [i for i, text, role in candidates if states(question, text, role)]
    texts = {i: text for i, text, _ in candidates}
    worded = [i for i in own if stated(question.families, texts[i])]
    if not own or nearness is None:
        return Verdict(worded)
    lead = {i: nearness.near(i) - nearness.median for i in own}
    best = max(lead.values())
    clear = [i for i in own if lead[i] >= max(STRONG, CLOSE * best)]
    if not clear:           # nothing stands out: only what the stating words find
        return Verdict(worded)
    lot = own if len(own) >= TYPICAL_OF else [i for i, _, _ in candidates]
    typical = nearness.typical(lot[:TYPICAL_MAX])

    def alike(a: str, b: str) -> bool:
        return nearness.between(a, b) - typical >= SAME

    newest = clear[0]
    newer = own[:own.index(newest)]
    older = own[own.index(newest) + 1:]
    # Newer memories that may be a new value in other words ("back on one espresso every
    # morning" after "green tea in the mornings now"): shown, and no claim is made past them.
    followers = [i for i in newer if i in worded or any(alike(i, c) for c in clear)]
    doubts = followers + [i for i in newer if lead[i] >= PLAUSIBLE]
    shown = set(clear + worded + [i for i in followers if lead[i] >= PLAUSIBLE])
    history = [i for i in older if alike(newest, i)]
    claimed = (not question.past and not doubts and lead[newest] >= best - CLAIM_GAP
               and firm(texts[newest]) and any(lead[i] >= STRONG for i in history))
    shown |= set(history) if claimed else set()
    statements = [i for i in own if i in shown]
    return Verdict(statements, claimed,
                   [i for i in history if i in statements] if claimed else [])
