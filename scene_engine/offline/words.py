"""Words of the offline backend: what a memory is about, in real words of its own language.

Chinese is cut into words by jieba (``analysis.segment``: jieba's own dictionary and HMM,
read from the SQLite copy the search index uses, so it costs milliseconds), and characteristic
words are weighed by jieba's IDF table (``jieba/analyse/idf.txt``, the table
``jieba.analyse.extract_tags`` uses); English words are lower-cased, stop words and filler
("user", "always", "really") dropped, and grouped by their Snowball stem ("running", "runs"
and "run" are one word, shown in its commonest form). Numbers and counted quantities
(``三次``, ``12``) name no area of a life and are left out.

Used for routing (``analyzer``: the terms a scene and a memory are compared by), for scene
names (``scene_name``: at most three words of the scene's main topic, in its memories'
language) and for summaries (``topic_phrase``). Issue 13 ("words, not character pairs").
A name or a summary's topic is made of nouns and names only (``offline_nouns``, issue 23):
``topic_words`` ranks the words, keeps the nouns (a speaker label, ``Maria: ...``, aside),
and ``compounds`` keeps words said together together ("Convenience Store Woman"). The
words' rules: DESIGN.md "A batch (L1 → L2)", the offline backend.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from scene_engine.core.text import MARK, MARKS, STOP_WORDS, is_cjk_text, letters
from scene_engine.index.analysis import idf as analysis_idf
from scene_engine.index.analysis import segment, stem
from scene_engine.offline.nouns import (
    cjk_noun_test,
    courtesy_or_id,
    english_noun,
    speaker_label,
    verb_cue,
)

# A Chinese run, or a word: a letter, then letters, digits, apostrophes, hyphens and the
# combining marks among them ("दिल्ली" is one word, not "द" and "ल"); a run of Thai or
# another script written without spaces is one word (no dictionary cuts it).
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A Latin word stops where a Chinese run starts ("Miso今天" is "Miso" and "今天").
_TOKEN = re.compile(f"[{_HAN}]+"
                    f"|[^\\W\\d_{_HAN}](?:[^\\W{_HAN}]|['’-]|{MARK})*(?:[^\\W_{_HAN}]|{MARK})"
                    f"|[^\\W\\d_{_HAN}]{MARK}*")
_NOT_IN_NAME = re.compile(f"[^\\w\u3400-\u9fff{MARKS}]+")   # what a scene name's word drops
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SENTENCE_BREAK = re.compile(r"[.!?;:。！？；：\n]")
# Words that say nothing about which area of life a memory is from (issue 13: names such as
# ``code-user-always``). Kept apart from STOP_WORDS, which search and recall share.
FILLER = frozenset(("""
user users assistant assistants always never still maybe perhaps pretty quite bit good great nice better best bad
worse little big small lot today tonight tomorrow morning evening afternoon night yesterday
week weeks weekend month months year years time times day days finally anyway again even
ever often sometimes usually already almost enough thinking whether decided decide deciding
plan plans planning planned trying try tried keep keeps kept need needs needed use used using
find found back next last first second third new old long short sure well much many more
most less least another other others every each around about got getting gave give gives
someone something everything nothing anything there here once twice half whole full
bought buy buys booked book started starts began begin finished done did came come went
made took put set saw see seen looked look said asked told let lets still just ago since
one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
hundred thousand million once twice pm am km kg
instead everyone everybody making make makes made weekends evenings mornings nights hours hour
along across through
minutes minute completely really understood between things thing stuff lots way ways
monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
thursdays fridays saturdays sundays january february march april may june july august
september october november december
""").split())
CJK_FILLER = frozenset("""
你好 您好 谢谢 再见 好的 不客气 没问题 哈哈 早上好 晚安 用户 助手 帮你 帮您 我们 你们 他们 她们 自己 一个 这个 那个 这些 那些 就是 还是 已经 因为 所以 但是 而且 然后 今天
昨天 明天 最近 现在 时候 开始 准备 考虑 打算 计划 决定 觉得 感觉 可以 需要 应该 一直 还有 没有
不要 要不要 一下 一起 一切 终于 只有 还是 比较 非常 特别 有点 好多 很多 一些 这次 那次 每天 每周
每月 每年 今年 明年 去年 上次 下次 第一次 以后 之后 之前 以前 一天 两天 时间 问题 事情 东西 感觉
起来 出来 回来 过来 下来 上来 怎么 什么 为什么 如果 虽然 不过 只是 其实 可能 一定 终于 真的 还要
开心 高兴 不错 挺好 很好 满意 顺利 小时 分钟 太难 好几 几个 觉得 喜欢 特别 还行 一点
周一 周二 周三 周四 周五 周六 周日 周天 周末 星期一 星期二 星期三 星期四 星期五 星期六 星期日
星期天 每周一 每周二 每周三 每周四 每周五 每周六 每周日 每周末 上午 下午 晚上 早上 中午 傍晚
左边 右边 参加 报名 这周 上周 下周 这个月 上个月 下个月
""".split())
# Past forms the stemmer cannot bring home ("ran" and "run" are one word).
IRREGULAR = {"ran": "run", "swam": "swim", "rode": "ride", "wrote": "write", "ate": "eat",
             "drove": "drive", "flew": "fly", "sang": "sing", "taught": "teach", "met": "meet"}
_NUMERAL = re.compile(r"^[一二三四五六七八九十两几百千万零半第每][\u4e00-\u9fff]?$|^[一二三四五六七八九十两几百千万零]+")
_WEAK_HEADS = frozenset("子儿头们性化者家员上下里中后前间天年月日次个些点部面边")
SPECIFICITY_POWER = 1    # (tried 0.5, 1, 2 on bench/bench_topics.py: 1 routed best)
TYPICAL_IDF = 12.0     # about the median IDF of jieba's table: a word most texts lack
_DEFAULT_IDF = 9.0     # a word jieba's table lacks is rare: a name, a pet, a product
NAME_WEIGHT = 1.2      # an English name outweighs a common noun said as often (issue 23)


def language(texts: Iterable[str]) -> str:
    """``"zh"`` when most of ``texts`` (memories or lines) are Chinese, else ``"en"``: the
    language a scene's name, summary and the persona are written in (issue 13). Counted by
    text, not by character, so a few long Chinese lines do not outvote many English ones."""
    votes = Counter("zh" if is_cjk_text(t) else "en" for t in texts if t.strip())
    return "zh" if votes["zh"] > votes["en"] else "en"


def words(text: str) -> list[tuple[str, str]]:
    """The content words of ``text`` as ``(key, surface)`` pairs, in order: ``key`` is the
    Snowball stem of an English word (lower case) or the Chinese word itself; ``surface`` the
    word as written (English lower-cased unless it is an acronym or a name in capitals)."""
    return list(_words(text))


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if _CJK.match(token):
            out += [(w, w) for w in segment(token) if _cjk_content(w)]
            continue
        found = _latin(match, text)
        if found:
            out.append(found)
    return tuple(out)


def _latin(match: re.Match, text: str) -> tuple[str, str] | None:
    """``(key, surface)`` of the non-Chinese word ``match`` of ``text``; None for a stop
    word or filler."""
    token = match.group(0)
    # A possessive is its noun ("the master's" is about a master); other apostrophes make
    # a contraction ("don't", "I'm"), no content word.
    lower = re.sub(r"['’]s$", "", token.lower().strip("'’-"))
    if len(lower) < 2 or lower in STOP_WORDS or lower in FILLER or "'" in lower:
        return None
    before = text[: match.start()].rstrip()
    name = token[0].isupper() and before and not before.endswith((".", "!", "?", ":", ";"))
    capital = token.isupper() or any(c.isupper() for c in token[1:]) or name
    lower = IRREGULAR.get(lower, lower)
    return stem(lower), token if capital else lower


def _occurrences(text: str) -> tuple[tuple[str, str, int], ...]:
    """The words of ``text`` that may say its topic, as ``(key, surface, cue)``: those of
    ``words`` after a speaker label (``nouns.speaker_label``), ``cue`` how the words around
    an English word use it (``nouns.verb_cue``; 0 for Chinese).

    Clause by clause (``; ``), each clause cached: a digest line that took one more fact is
    segmented for that fact alone (jieba's tagger costs about 10 ms a long line). The same
    words as the whole text: a ``;`` already ends the words around a word (``_neighbour``)
    and a capital after it is no name (``_latin``)."""
    body = text[len(speaker_label(text)):]
    if "; " not in body:
        return _clause_occurrences(body)
    return tuple(o for clause in body.split("; ") for o in _clause_occurrences(clause))


@functools.lru_cache(maxsize=16384)     # a few thousand scene lines: about 10 MB at most
def _clause_occurrences(body: str) -> tuple[tuple[str, str, int], ...]:
    tokens = list(_TOKEN.finditer(body))
    out: list[tuple[str, str, int]] = []
    for i, match in enumerate(tokens):
        token = match.group(0)
        if _CJK.match(token):
            out += [(w, w, 0) for w in segment(token) if _cjk_content(w)]
            continue
        found = _latin(match, body)
        if not found:
            continue
        before, after = _neighbour(tokens, i, i - 1, body), _neighbour(tokens, i, i + 1, body)
        content_before = before is not None and _latin(tokens[i - 1], body) is not None
        out.append((*found, verb_cue(before, token.lower(), after, content_before)))
    return tuple(out)


def _neighbour(tokens: list[re.Match], i: int, j: int, text: str) -> str | None:
    """Token ``j`` next to token ``i``, lower case; None past the text, across a sentence's
    end or a clause's colon, or when it is Chinese."""
    if not 0 <= j < len(tokens):
        return None
    first, second = sorted((tokens[i], tokens[j]), key=lambda m: m.start())
    if _SENTENCE_BREAK.search(text, first.end(), second.start()) or _CJK.match(tokens[j].group(0)):
        return None
    return tokens[j].group(0).lower()


def _cjk_content(word: str) -> bool:
    return (len(word) >= 2 and word not in CJK_FILLER and not _NUMERAL.match(word)
            and not word.endswith(("了", "的", "着", "过")))


def analyzer(text: str) -> list[str]:
    """Routing terms of ``text``: the keys of ``words`` and, for a Chinese compound, its
    last character as well, the head of most Chinese nouns (``二手房`` and ``房子`` are both
    about a ``房``; ``橘猫`` is a ``猫``), so a topic said in different compounds still
    meets; ``text.Vectorizer(analyzer)``. A text of several lines (a scene) is analysed
    line by line, each line cached: a batch changes a few lines of a scene, and segmenting
    the rest again would cost most of the batch."""
    if "\n" not in text:
        return list(_analyzed(text))
    return [term for line in text.split("\n") for term in _analyzed(line)]


@functools.lru_cache(maxsize=8192)     # a few batches' lines: memory does not grow
def _analyzed(text: str) -> tuple[str, ...]:
    out = []
    for key, _ in _words(text):
        out.append(key)
        if _CJK.match(key) and len(key) >= 2 and key[-1] not in _WEAK_HEADS:
            out.append(key[-1])
    return tuple(out)


def _jieba_idf(keys: Iterable[str]) -> dict[str, float]:
    """jieba's IDF (``analysis.idf``: the table ``jieba.analyse`` ships) of each of ``keys``
    the table has (``_DEFAULT_IDF`` for a line without a value); {} if it cannot be read."""
    return {key: _DEFAULT_IDF if value is None else value
            for key, value in analysis_idf(keys).items()}


@functools.lru_cache(maxsize=16384)     # the words of a few batches' scenes
def _term_idf(term: str) -> float:
    return _jieba_idf([term]).get(term, TYPICAL_IDF)


def specificity(term: str) -> float:
    """How much a routing term can say about a topic, in (0, 1]: for a Chinese word, its
    jieba IDF against the table's typical value, squared (``医生`` 0.28, ``装修`` 0.47,
    ``年糕`` 0.83, a word the table lacks 1); 1 for other words (filler is already out)."""
    if not _CJK.match(term):
        return 1.0
    return min(1.0, (_term_idf(term) / TYPICAL_IDF) ** SPECIFICITY_POWER)


def topic_words(texts: list[str], k: int = 3, lang: str | None = None,
                rarity=None, recurring: bool = False) -> list[str]:
    """The ``k`` words that best say what ``texts`` (one scene's memories) are about, as
    written, best first, in ``lang`` (default: ``language(texts)``; words of the other script
    only when it has none): nouns and names only (``offline_nouns``: no verbs, adjectives,
    pleasantries or ids), other words only when the texts have no noun at all.

    A word counts once per text it is in (a topic recurs across memories); Chinese words are
    weighed by jieba's IDF (``准备``, ``开始`` say little, ``年糕`` much), English words by a
    light length bonus and names (``Porto``) by ``NAME_WEIGHT``; ``rarity(key) -> float`` (the store's IDF, optional) favours words
    other scenes do not use. ``recurring``: a third word joins only if two of the texts say
    it, when there are three or more (a name or a summary says "Porto and Pixel", not
    "Porto, Pixel and screen" for a screen dropped once).
    """
    lang = lang or language(texts)
    df: Counter[str] = Counter()
    forms: dict[str, Counter] = {}
    cues: dict[str, list[int]] = {}
    as_nouns: Counter[str] = Counter()        # uses of a form as a noun ("the performance")
    said: Counter[str] = Counter()            # uses of a key, in any form
    capitals: Counter[str] = Counter()        # ... in a form written with a capital
    for text in texts:
        seen = set()
        for key, written, cue in _occurrences(text):
            if key not in forms:
                forms[key], cues[key] = Counter(), [0, 0]
            forms[key][written] += 1
            said[key] += 1
            capitals[key] += written[:1].isupper()
            as_nouns[written] += cue < 0
            cues[key][cue < 0] += cue != 0
            if key not in seen:
                seen.add(key)
                df[key] += 1
    idf = _jieba_idf(key for key in df if _CJK.match(key))

    def named(key: str) -> bool:
        """Mostly written with a capital inside sentences: a name (``Porto``, ``Pixel``)."""
        return 2 * capitals[key] > said[key]

    def weight(key: str) -> float:
        if _CJK.match(key):
            # A word jieba's table lacks is a name when it recurs, and a mis-cut when it is
            # said once ("比手冲" cut as "比手").
            known = key in idf
            base = idf.get(key, _DEFAULT_IDF) / _DEFAULT_IDF * (1 if known or df[key] > 1 else 0.3)
        else:
            base = min(1.0, 0.55 + 0.06 * len(key)) * (NAME_WEIGHT if named(key) else 1.0)
        # a word said twice in a text counts a little more
        return (df[key] + 0.25 * (said[key] - df[key])) * base * (rarity(key) if rarity else 1.0)

    def in_lang(key: str) -> bool:
        return bool(_CJK.match(key)) == (lang == "zh")

    def surface(key: str) -> str:
        # The form said most often as a noun ("performance", not "perform"), then the
        # commonest, ties by the form itself: the same memories in any order give the same name.
        written = sorted(forms[key].items(),
                         key=lambda form: (-as_nouns[form[0]], -form[1], form[0]))
        named = [f for f, _ in written if f[:1].isupper()]
        return named[0] if named else written[0][0]

    cjk_noun = cjk_noun_test(key for key in df if _CJK.match(key))

    def noun(key: str) -> bool:
        if _CJK.match(key):
            return cjk_noun(key)
        verb, as_noun = cues[key]
        return english_noun(key, surface(key), (verb, as_noun, said[key]),
                            name=named(key))

    ranked = sorted(df, key=lambda key: (not in_lang(key), -weight(key), key))
    chosen = _choose(ranked, noun, surface, in_lang, k,
                     lambda key: recurring and len(texts) >= 3 and df[key] < 2)
    return chosen or _choose([key for key in ranked if not courtesy_or_id(key, surface(key))],
                             lambda key: True, surface, in_lang, k, lambda key: False)


def _choose(ranked: list[str], noun, surface, in_lang, k: int, once) -> list[str]:
    """The first ``k`` of ``ranked`` (keys, best first) that are ``noun(key)``, as
    ``surface(key)``; none inside or around one already chosen; a word of the other language
    only while none of the scene's own language is chosen; after two, none ``once(key)``
    (said in one text only). Nouns are tested lazily: the HMM tags only the words asked about."""
    chosen: list[str] = []
    for key in ranked:
        if chosen and not in_lang(key) and in_lang(ranked[0]):
            break
        if not noun(key):
            continue
        word = surface(key)
        if any(word in c or c in word for c in chosen):
            continue
        if len(chosen) >= 2 and once(key):
            continue
        chosen.append(word)
        if len(chosen) == k:
            break
    return chosen


def scene_name(texts: list[str], taken: set[str], rarity=None, is_report_like=None) -> str:
    """A file name of at most three words of the topic of ``texts`` (``年糕-芝麻.md``,
    ``kafka-order-rabbitmq.md``): its nouns and names (``topic_words``), best first, words
    the texts say together in their order (``convenience-store-woman.md``), unique
    (case-insensitive) among ``taken``. ``is_report_like(stem)``: the rules' check for names
    such as ``summary-…``."""
    found = compounds(topic_words(texts, k=3, rarity=rarity, recurring=True), texts)
    words_ = [_NOT_IN_NAME.sub("-", unicodedata.normalize("NFC", w.lower())).strip("-")
              for w in found]
    stem_ = _cut_name([w for w in words_ if w]) or "notes"
    if is_report_like and is_report_like(stem_):
        stem_ = f"about-{stem_}"
    # As the file system and the sandbox compare names: case aside, and NFC (a name typed on
    # macOS is NFD: "café" is two names to Python, one to the sandbox).
    def key(n: str) -> str:
        return unicodedata.normalize("NFC", n).casefold()

    folded = {key(t) for t in taken}
    name, n = f"{stem_}.md", 2
    while key(name) in folded:
        name, n = f"{stem_}-{n}.md", n + 1
    return name


def _cut_name(words_: list[str], limit: int = 60) -> str:
    """``words_`` joined by ``-`` in at most ``limit`` characters, whole words only; a first
    word longer than that (a run of Thai) is cut after a whole letter, never between a letter
    and its marks."""
    name = ""
    for word in words_:
        joined = f"{name}-{word}" if name else word
        if len(joined) > limit:
            break
        name = joined
    if not name and words_:
        for letter in letters(words_[0]):
            if len(name) + len(letter) > limit:
                break
            name += letter
    return name.strip("-")


def name_fits(name: str, texts: list[str], k: int = 3) -> bool:
    """True while the file name ``name`` still says the topic of ``texts`` (the scene's
    entries): one of its words is among their ``k`` topic words (``topic_words``), compared
    as routing terms. A scene keeps its name while its topic stays (issue 13); a name from a
    scene's first memories that none of its words still fits ("大腿-楼梯-第二天" for a scene
    now about baking) is due for a new one."""
    own = set(analyzer(" ".join(name.removesuffix(".md").split("-"))))
    return bool(own & set(analyzer(" ".join(topic_words(texts, k=k)))))


def topic_phrase(texts: list[str], lang: str, k: int = 3) -> str:
    """The topic words of ``texts`` joined as a reader says them: ``Kafka, orders and
    RabbitMQ``, ``Code reviews and Rust`` (words said together stay together, ``compounds``)
    / ``年糕、芝麻和猫``; "" when there are none."""
    found = compounds(topic_words(texts, k=k, lang=lang, recurring=True), texts)
    if not found:
        return ""
    if lang == "zh":
        return found[0] if len(found) == 1 else "、".join(found[:-1]) + "和" + found[-1]
    return found[0] if len(found) == 1 else ", ".join(found[:-1]) + " and " + found[-1]


def compounds(found: list[str], texts: list[str]) -> list[str]:
    """``found`` (topic words, best first) with the words ``texts`` say one after the other
    joined into one, in the texts' order (``Convenience Store Woman``, ``code reviews``):
    said so in two texts, or in every text that has both. Chinese words are left as they are
    (jieba already keeps a compound whole)."""
    units = list(found)
    joined = True
    while joined:
        joined = False
        for a, b in itertools.permutations(units, 2):
            if not (_CJK.match(a) or _CJK.match(b)) and _said_together(a, b, texts):
                units[units.index(a)] = f"{a} {b}"
                units.remove(b)
                joined = True
                break
    return units


def _said_together(a: str, b: str, texts: list[str]) -> bool:
    together = re.compile(rf"(?<![\w-]){re.escape(a)}[\s-]+{re.escape(b)}(?![\w-])", re.I)
    both = [t for t in texts if a.lower() in t.lower() and b.lower() in t.lower()]
    said = sum(1 for t in both if together.search(t))
    return said >= 2 or 0 < said == len(both)
