"""What is true now: which recalled passages state the asked attribute of the asked person, and
which of them is the latest (issue 26; docs/DESIGN.md "Recall", current facts).

Knowledge changes: where a person lives, works, who they are with, what they keep, drive,
eat, drink or play, how a plan or an illness stands. A question about such an attribute
("where do I live now?", "我在哪工作？", "am I still vegan?") wants its latest value, first,
and the earlier ones only as history. No model is at hand offline, so the rules are words:

1. ``read_question``: the attributes a question asks about (``FAMILIES``: the words that ask
   for one, in English and Chinese), its own rarest content words (``anchors``: "heel",
   "picture book", 装修) and whether it is about the speaker (I, my, 我) or a named person.
2. ``expansion``: the words that state those attributes ("moved", 搬到, "joined", 入职),
   for finding the memories that say it without the question's words ("Moved to Porto").
3. ``states``: a passage states the attribute when one of its clauses holds a stating word
   (or an anchor), about the asked person (not "my sister lives in Madrid", "妈妈住在成都"),
   as a fact (not "thinking of moving to Berlin", "要不要搬去杭州", "I miss Porto").
4. recall (``assemble._current_first``): those passages newest first; the newest is
   current, the ones before it are history, each with the day the next one said otherwise
   ("until 21 Feb 2026").

Nothing is dropped: the other passages follow as before, and search finds every memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scene_engine.core.text import STOP_WORDS

__all__ = ["FAMILIES", "Question", "read_question", "expansion", "states", "ASKS_CURRENT"]

# A word boundary for Latin words that a Chinese character also ends ("OPPO终于", "换了vivo"):
# to Python's ``\b`` both are word characters, so no boundary would be seen between them.
_B = r"(?:(?<![A-Za-z0-9])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?![A-Za-z0-9]))"


def _rx(source: str) -> re.Pattern:
    """``source`` compiled case-blind, its ``\b`` the Latin word boundary ``_B``."""
    return re.compile(source.replace(r"\b", _B), re.I)


# A question that asks for the value now (issue 26: now, currently, still, 现在, 目前, 还).
ASKS_CURRENT = _rx(
    r"\b(now|currently|current|still|these days|at the moment|nowadays|anymore|any more|"
    r"today|lately|right now)\b|现在|目前|如今|还|最近|眼下|这阵子")

@dataclass(frozen=True)
class Family:
    """One attribute that changes: ``ask`` (words of a question about it) and ``say`` (words
    of a memory that states it), each a regular expression over lower-cased text."""

    name: str
    ask: re.Pattern
    say: re.Pattern
    words: str          # the stating words to search with (``expansion``)


def _family(name: str, ask: str, say: str, words: str) -> Family:
    return Family(name, _rx(ask), _rx(say),
                  " ".join(dict.fromkeys([*words.split(), *_literals(say)])))


_PLAIN = re.compile(r"[a-z' \u4e00-\u9fff-]+")


def _literals(pattern: str) -> list[str]:
    """The plain words among a pattern's alternatives ("moved", 搬到, "first day"; a stem
    for "relocat\\w*"): what a search for its statements looks for."""
    out = []
    for alt in re.split(r"[|()]", pattern.replace(r"\b", "").replace("?:", "")):
        alt = re.sub(r"\\w[*+]$|s\?$|\[\^[^]]*\]\{[^}]*\}.*$", "", alt).strip()
        if _PLAIN.fullmatch(alt) and (len(alt) > 3 or not alt.isascii()) \
                and alt.lower() not in STOP_WORDS:
            out.append(alt)
    return out


# The attributes of LongMemEval's knowledge-update questions and of everyday life; where a
# question names one, the memories that state it need not share a word with the question.
FAMILIES: tuple[Family, ...] = (
    _family("home",
            r"\b(live|living|lives|home|based|city|town|reside|address|neighbou?rhood|district"
            r"|move|moved)\b|住|家在|我家|哪个城市|城市|定居|哪个区|搬",
            r"\b(live[sd]?|living|moved|moving (?:to|in|into|out|back|day|house|home)|"
            r"move (?:to|in|into|back)|relocat\w*|settled in|"
            r"based in|new (?:place|flat|apartment|house|home)|our (?:flat|apartment|house|"
            r"place)|my (?:flat|apartment|house)|lease|landlord|unpack\w*|(?:moved |am |i'm )?"
            r"back (?:in|to) (?!work|the |school|normal|bed|it\b|my\b)\w+)\b|住在|住进|住到|搬到|搬去|搬回|搬家|搬进|搬来|新家|定居|安家|"
            r"落户|租了|买了房|房东",
            "live lives living moved moving relocated new place flat apartment house home "
            "lease 住在 搬到 搬去 搬回 搬家 搬进 新家 定居 安家"),
    _family("work",
            r"\b(work|works|working|job|employer|company|employed|role|title|position|career|"
            r"teach|teaching|boss|office)\b|工作|上班|公司|职位|岗位|单位|职业|做什么的|老板",
            r"\b(work(?:s|ed|ing)? (?:at|for|as|in)|job|employer|hired|joined|first day|"
            r"new role|promot\w+|title|position|quit|resign\w*|handed in|notice|laid off|"
            r"(?:made|became|now|am|i'm) (?:a |an |the )?[\w ]{0,20}(?:lead|manager|head|"
            r"director|engineer|designer|teacher|nurse|analyst|specialist)|"
            r"redundan\w+|freelanc\w*|offer|started at|contract|retired|career)\b|入职|上班|"
            r"工作|离职|辞职|跳槽|升职|升为|升了|升[^，。,]{1,12}了|当上|职位|公司|offer|转岗|自由职业|裁员|"
            r"单干|创业",
            "job joined hired first day new role promoted quit resigned offer freelance "
            "work works working 入职 离职 辞职 跳槽 升职 职位 公司 上班 工作"),
    _family("partner",
            r"\b(relationship|partner|boyfriend|girlfriend|husband|wife|dating|seeing|married|"
            r"engaged|single|spouse|fianc\w*)\b|男朋友|女朋友|对象|老公|老婆|丈夫|妻子|"
            r"另一半|结婚|已婚|订婚|离婚|单身|恋爱",
            r"\b(boyfriend|girlfriend|partner|husband|wife|dating|date with|first date|"
            r"broke up|break ?up|split up|engaged|married|marry|(?:our|my) wedding|proposed|"
            r"divorc\w*|"
            r"(?:i'm|i am|being|still|now|officially|back to being) single|fianc\w*|"
            r"anniversary|moved in (?:together|with)|together|officially with|"
            r"seeing (?:someone|each other))\b|男朋友|女朋友|对象|"
            r"老公|老婆|在一起|分手|订婚|结婚|领证|婚礼|离婚|单身|求婚|恋爱|约会|前男友|"
            r"前女友|前夫|前妻",
            "boyfriend girlfriend partner husband wife dating date broke up engaged married "
            "wedding proposed divorced single 男朋友 女朋友 对象 老公 老婆 在一起 分手 订婚 "
            "结婚 领证 离婚 单身 求婚"),
    _family("pet",
            r"\b(pets?|dogs?|cats?|pupp(?:y|ies)|kittens?|rabbits?|fish|birds?|parrots?|"
            r"hamsters?|tortoise|turtle)\b|宠物|猫|狗|养|鹦鹉|乌龟|兔",
            r"\b(pets?|dogs?|cats?|pupp(?:y|ies)|kittens?|adopt\w*|rescue\w*|rabbits?|"
            r"bunn(?:y|ies)|fish|parrots?|birds?|hamsters?|tortoise|turtle|greyhound|lurcher|"
            r"vet|died|put down|rehom\w*)\b|宠物|猫|狗|领养|收养|养了|去世|鹦鹉|乌龟|兔|送回|"
            r"送走|柯基|英短",
            "pet dog cat puppy kitten adopted rescue rabbit vet died rehomed 宠物 猫 狗 领养 "
            "养了 鹦鹉 乌龟"),
    _family("car",
            r"\b(car|drive|driving|vehicle)\b|车",
            r"\b(car|drive|drove|driving|test[- ]drive|ev|sold|bought|traded|new car)\b|车|"
            r"提车|买了一辆|卖了",
            "car drive drove driving bought sold traded 车 提车 买了一辆"),
    _family("phone",
            r"\b(phone|mobile)\b|手机|收机",
            r"\b(phone|iphone|pixel|galaxy|fairphone|mobile|samsung|huawei|xiaomi|oppo|vivo|"
            r"android)\b|手机|华为|小米|苹果|换机",
            "phone iphone pixel galaxy 手机"),
    _family("diet",
            r"\b(vegan|vegetarian|diet|eat|eating|meat|dairy|keto|fasting|sugar|food)\b|吃素|"
            r"忌口|饮食|生酮|断食|吃肉|戒糖",
            r"\b(vegan|vegetarian|meat|dairy|keto|fasting|diet|sugar|gluten|plant[- ]based|"
            r"pescatarian)\b|吃素|荤|吃肉|戒糖|生酮|断食|饮食|乳制品|忌口|keto",
            "vegan vegetarian meat dairy keto fasting diet sugar 吃素 吃肉 戒糖 生酮 断食 饮食"),
    _family("drink",
            r"\b(coffee|tea|drink|drinking|morning)\b|喝|咖啡|茶",
            r"\b(coffee|tea|espresso|latte|decaf|rooibos|matcha|cappuccino|flat white)\b|"
            r"咖啡|茶|美式|奶茶|柠檬水|拿铁",
            "coffee tea espresso latte decaf rooibos matcha 咖啡 茶 美式 奶茶 拿铁"),
    _family("alcohol",
            r"\b(alcohol|booze|sober|beer|wine|drinking)\b|酒",
            r"\b(alcohol|drinking|sober|beer|wine|pints?|booze|dry january)\b|酒",
            "alcohol sober beer wine drinking 酒 戒酒"),
    _family("exercise",
            r"\b(sport|sports|exercise|workout|gym|fitness|training)\b|运动|健身|锻炼",
            r"\b(gym|run|running|ran|swim\w*|cycl\w+|yoga|pilates|climb\w*|boulder\w*|hik\w+|"
            r"football|tennis|club|marathon|training|workout|sport)\b|运动|健身|跑步|越野跑|"
            r"游泳|瑜伽|普拉提|羽毛球|爬山|骑行|跳操",
            "gym running swimming cycling yoga pilates climbing hiking football club training "
            "运动 健身 跑步 游泳 瑜伽 普拉提 羽毛球 爬山 骑行"),
    _family("hobby",
            r"\b(hobby|hobbies|craft|instrument|pastime)\b|爱好|乐器|兴趣",
            r"\b(crochet\w*|knit\w*|pottery|piano|guitar|chess|paint\w*|sketch\w*|bak\w+|"
            r"sew\w*|ukulele|violin|hobby)\b|吉他|钢琴|水彩|烘焙|书法|画画|乐器|爱好",
            "crochet knitting pottery piano guitar chess painting baking hobby 吉他 钢琴 水彩 "
            "烘焙 书法 画画"),
    _family("favourite",
            r"\b(favou?rite|best)\b|最喜欢|最爱",
            r"\b(favou?rite|fave|best|obsessed)\b|最喜欢|最爱",
            "favourite favorite fave best 最喜欢 最爱"),
)

# A clause about wanting, planning or supposing (it changes nothing), or about missing or
# visiting a place (a past value named again), is no statement of the value.
_NOT_A_FACT = _rx(
    r"\b(thinking (?:of|about)|think about|considering|might|maybe|perhaps|wants? to|wanted "
    r"to|would (?:love|like)|should|could|plan(?:ning|s)? to|hope to|if (?:i|we)|dream\w*|"
    r"someday|one day|looked at|looking at|tempted|wonder\w*|miss(?:ing)?)\b|[?？]|"
    r"想念|怀念|好想|想去|想搬|想要|打算|要不要|考虑|如果|也许|可能|希望|梦想|想想")
# A sentence about a visit or a trip says where one was, not where one lives, works or
# keeps a pet: none of its clauses states the attribute ("国庆回成都看爸妈，豆豆已经是一只
# 老猫了", "Back in Chicago for Thanksgiving").
_AWAY = _rx(r"\b(visit\w*|trip|holiday|vacation|for (?:the )?(?:weekend|thanksgiving|"
            r"christmas|holidays|new year))\b|出差|旅游|旅行|探亲|看望|回\S{1,4}看|国庆去|国庆回|"
            r"过年回|去了\S{1,4}玩|度假")
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*")
# Whose attribute a clause states: the last of these before its stating word is its subject.
_OTHER = _rx(
    r"\b(sister|brother|mum|mom|mother|dad|father|parents|friend|colleague|boss|neighbou?r|"
    r"cousin|aunt|uncle|son|daughter|he|she|they|his|her|their)\b|妈妈|妈|爸爸|爸|姐姐|"
    r"妹妹|哥哥|弟弟|朋友|同事|老板|他们|她们|他|她|闺蜜|室友|表姐|表哥|表妹|表弟|堂|"
    r"前夫|前妻")
_SELF = _rx(r"\b(i|i'm|i've|i'd|i'll|we|we're|we've|me|us)\b|我(?!的|妈|爸|姐|哥|妹|"
                   r"弟)|我们")
# A name as a clause's subject: "Joana has moved", "Tom and I" (then "I" comes after it).
_NAMED = re.compile(r"\b(?!(?:We|My|Our|It|This|That|The|Just|Finally|Today|Officially|"
                    r"Now|So|And|Also|Still)\b)[A-Z][a-zà-ÿ]+(?:'s)?\s+(?:has|had|is|was|and|just|finally|"
                    r"officially|got|gets|lives|lived|moved|moves|works|worked|started|left|"
                    r"quit|is|will)\b")
_CLAUSE = re.compile(r"[,;.!:，；。！：、]|\bbut\b|\band then\b|但是|不过|然后")
_FIRST_PERSON = _rx(r"\b(i|my|me|mine|i'm|am i|do i|did i|have i)\b|我")


_ASK_WORDS = frozenset(w for f in FAMILIES for w in _literals(f.ask.pattern.replace(_B, r"\b"))
                       if " " not in w and w.isascii())


@dataclass(frozen=True)
class Question:
    """What a question asks about: ``families`` (the ``FAMILIES`` it names), ``anchors``
    (its own rarest content terms, as the analyser makes them: an attribute no family
    names). Whether it says "now" or not, the latest value is its answer; a question about
    an earlier one ("before Lisbon") reads it in the history that follows."""

    families: tuple[Family, ...]
    anchors: frozenset[str]


def read_question(query: str, anchors: frozenset[str] = frozenset()) -> Question | None:
    """The attribute ``query`` asks about, or None when it is no question about what the
    speaker is, has or does (no first person: "when did Caroline move?" is left as it is).
    ``anchors``: the query's content terms to fall back on (the caller's analyser)."""
    query = _untyped(query)
    families = tuple(f for f in FAMILIES if f.ask.search(query))
    if not _FIRST_PERSON.search(query) and (not families or _names_someone(query)):
        return None      # "what city is home now" is the speaker's; "where is Joana" not
    if not families and not anchors:
        return None
    return Question(families, anchors)


def _names_someone(query: str) -> bool:
    """Whether a question without "I" names another person: a capitalized word after its
    first ("Where does Joana live?"), a kin word or he/she (``_OTHER``)."""
    words = query.split()
    return bool(_OTHER.search(query)) or any(w[:1].isupper() for w in words[1:])


def _untyped(query: str) -> str:
    """``query`` with a word typed with two letters swapped ("wrok", "lvie") put right when
    it is a word some question of an attribute uses (``_ASK_WORDS``)."""
    out = []
    for word in re.findall(r"\w+|\W+", query):
        low = word.lower()
        if low.isascii() and len(low) >= 4 and low not in _ASK_WORDS:
            low = next((w for w in _swaps(low) if w in _ASK_WORDS), low)
            word = low if low != word.lower() else word
        out.append(word)
    return "".join(out)


def _swaps(word: str) -> list[str]:
    return [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)]


def expansion(question: Question) -> list[str]:
    """The words that state each asked attribute (``Family.words``, space-separated), one
    search each: a family's many mentions must not crowd out another's."""
    return [f.words for f in question.families]


def states(question: Question, text: str) -> bool:
    """True when ``text`` states the asked attribute of the speaker, as a fact: a clause of
    it holds a stating word of an asked family or one of the question's anchors (lower-cased
    text holding the analysed term: "migrain" in "migraines", 装修), no other person is that
    clause's subject, it is no plan, wish or question, and its sentence tells no visit or
    trip (``_AWAY``)."""
    low = text.lower()      # most candidates hold no stating word at all: no clause split
    if not any(f.say.search(text) for f in question.families) and \
            not any(a in low for a in question.anchors):
        return False
    clauses = [c for sentence in _SENTENCES.split(text) if not _AWAY.search(sentence)
               for c in _CLAUSE.split(sentence)]
    for clause in clauses:
        if not clause.strip() or _NOT_A_FACT.search(clause):
            continue
        low = clause.lower()
        spans = [m.start() for f in question.families for m in f.say.finditer(clause)]
        spans += [low.find(a) for a in question.anchors if a in low]
        if spans and _about_speaker(clause[:min(spans)]):
            return True
    return False


def _about_speaker(before: str) -> bool:
    """Whether the words before a clause's stating word leave the speaker its subject: the
    last person named there is "I"/"we"/我 or nobody ("Moved to Porto."), not "my sister",
    "he", "Joana has", 妈妈."""
    other = [m.end() for m in _OTHER.finditer(before)]
    other += [m.end() for m in _NAMED.finditer(before)]
    own = [m.end() for m in _SELF.finditer(before)]
    return not other or (bool(own) and max(own) > max(other))
