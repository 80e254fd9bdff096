"""The words that state an attribute, for finding the statements meaning misses (issue 36;
docs/DESIGN.md "Index and watcher", current facts).

The sentence encoder (``index.dense``) tells a diet from a cat's diet, but it does not see
that "Moving day. Cascais, here we go." says where one lives, nor "First day at Kinetiq" who
one works for: those memories sit among the least near to "where do I live now?". For the
attributes whose statements it misses so, a family of words remains (``FAMILIES``): its
``ask`` words say a question is about it, its ``say`` words find the memories that may
state it (``SceneIndex.newest_memories``) and put them among the statements shown first,
newest first. A family never makes a claim: only meaning does (``current.weigh``). Each
family kept here earns its place in bench/RESULTS.md ("Current facts by meaning (issue
36)"): what removing it costs; diet, morning drink, alcohol and favourites earned nothing
there (meaning finds those) and went.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scene_engine.core.text import STOP_WORDS, lazy_pattern

__all__ = ["FAMILIES", "Family", "asked_families", "stated"]

# A word boundary for Latin words that a Chinese character also ends ("OPPO终于", "换了vivo"):
# to Python's ``\b`` both are word characters, so no boundary would be seen between them.
_B = r"(?:(?<![A-Za-z0-9])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?![A-Za-z0-9]))"


def _rx(source: str) -> re.Pattern:
    """``source`` compiled case-blind, its ``\b`` the Latin word boundary ``_B``, at its first
    use (``lazy_pattern``: a recall uses a few of these many patterns)."""
    return lazy_pattern(source.replace(r"\b", _B), re.I)


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
            r"\b(live[sd]?|moved (?:to|in|into|out|back|house|home|away|abroad)|"
            r"moving (?:to|in|into|out|back|day|house|home)|"
            r"move (?:to|in|into|back)|relocat\w*|settled in|"
            r"based in|new (?:place|flat|apartment|house|home)|our (?:flat|apartment|house|"
            r"place)|my (?:flat|apartment|house)|lease|landlord|unpack\w*|(?:moved|am|i'm|"
            r"we're) back (?:in|to) (?!work|the |school|normal|bed|it\b|my\b)\w+)\b|住在|住进|住到|搬到|搬去|搬回|搬家|搬进|搬来|新家|定居|安家|"
            r"落户|租了|买了房|房东",
            "live lives moved moving relocated new place flat apartment house home "
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
)


_ASK_WORDS = frozenset(w for f in FAMILIES for w in _literals(f.ask.pattern.replace(_B, r"\b"))
                       if " " not in w and w.isascii())


def asked_families(query: str) -> tuple[Family, ...]:
    """The families whose ``ask`` words ``query`` holds (a word typed with two letters
    swapped, "wrok", "lvie", read as the word it is meant to be: ``_untyped``)."""
    query = _untyped(query)
    return tuple(f for f in FAMILIES if f.ask.search(query))


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



def stated(families: tuple[Family, ...], text: str) -> bool:
    """Whether ``text`` holds a ``say`` word of one of ``families``."""
    return any(f.say.search(text) for f in families)
