"""Lexical text features shared by the offline backend, the prompt builder and recall.

Latin-script words are lower-cased and stripped of stop words; runs of CJK characters become
overlapping character bigrams (Chinese has no spaces, and two characters is the commonest word
length). Similarity is cosine over term counts with a light IDF, which is enough to route a
memory to the scene it belongs to without a model.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any, cast


class LazyPattern:
    """A regular expression compiled at its first use, not at import: a pattern with the
    combining-mark class takes milliseconds to compile, and a command that never cuts such
    words (a search in English, a status) should not pay for it. ``pattern`` and ``flags``
    are there at once; anything else is the compiled pattern's (kept on the object after
    the first call, so later calls cost what the pattern's own do)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str) -> Any:
        value = getattr(re.compile(self.pattern, self.flags), name)
        setattr(self, name, value)
        return value


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_SAID = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def one_line(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1) written as an escape (``\\n``,
    ``\\t``, ``\\r``, ``\\x1b``): a file name or a line of a person's file printed where one
    line is one record (``scenes list`` in a pipe, a commit's subject, ``blame``) stays one
    line, and a terminal's escape sequence in it is shown, not obeyed."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda found: _CONTROL_SAID.get(found.group(),
                                                        f"\\x{ord(found.group()):02x}"), text)


# Control characters but a line's end (LF, CRLF) and a tab: what a terminal would obey.
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def shown_text(text: str) -> str:
    """``text`` (several lines: a scene, a message) for a terminal: its lines and tabs as
    they are, every other control character as an escape (``one_line``): a carriage return
    that would overwrite the line, a bell, an escape sequence (ESC or the one-character
    CSI, U+009B) is shown, not obeyed; a byte of another encoding in an argument (a lone
    surrogate, or its repr ``\\udce9``) as the byte, ``\\xe9``."""
    if "\\udc" in text:   # a byte of another encoding as Python's repr writes it
        text = _REPR_BYTE.sub(r"\\x\1", text)
    if text.isprintable():
        return text
    text = _LONE_BYTE.sub(lambda found: f"\\x{ord(found.group()) - 0xDC00:02x}", text)
    return _TERMINAL_CONTROL.sub(lambda found: one_line(found.group()), text)


# An argument's byte that was not UTF-8, as Python decodes it (a lone surrogate) and as its
# repr then writes it: shown as the byte, \xe9.
_LONE_BYTE = re.compile("[\udc80-\udcff]")
_REPR_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)`` at its first use (``LazyPattern``)."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))


def _mark_class() -> str:
    """The combining marks (Unicode categories Mn, Mc, Me) as the inside of a regular
    expression's character class, variation selectors aside (they choose how a character is
    drawn, not how a word is spelled: "❤️" is the heart). Python's ``\\w`` leaves marks
    out, so ``[^\\w_]+`` cuts "दिल्ली" into "द" and "ल"; every pattern that cuts words adds
    ``MARK``. Read from ``unicodedata`` (planes 0 and 1 and plane 14's selectors hold every
    mark): the characters themselves, ranges as ``a-b`` (none of them is special inside a
    class), which the regular expression parser reads three times faster than ``\\U``
    escapes. About 20 ms, so a start-up takes the copy ``core.marks`` keeps for the Unicode
    version it was made for (``marks_source`` writes it)."""
    category = unicodedata.category
    codes = [c for c in itertools.chain(range(0x300, 0x20000), range(0xE0100, 0xE01F0))
             if category(chr(c))[0] == "M" and not (0xFE00 <= c <= 0xFE0F or c >= 0xE0100
                                                     or 0x180B <= c <= 0x180D)]
    spans: list[list[int]] = []
    for c in codes:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in spans)


def marks_source() -> str:
    """The text of ``core/marks.py`` for this Python's Unicode version (``_mark_class`` with
    every character written as an escape): ``python -c "from scene_engine.core.text import
    marks_source; print(marks_source(), end='')" > scene_engine/core/marks.py``."""
    lines = [""]
    for ch in _mark_class():           # an escape is never cut between two lines
        if len(lines[-1]) > 80:
            lines.append("")
        lines[-1] += ch if ch == "-" else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 \
            else f"\\U{ord(ch):08x}"
    return ('"""The combining marks as a regular expression\'s character class, as\n'
            '``core.text._mark_class`` reads them from ``unicodedata`` for the Unicode version\n'
            'below (written by ``core.text.marks_source``; tests/test_text.py checks it). Another\n'
            'version is read afresh at start-up."""\n\n'
            f'UNIDATA_VERSION = "{unicodedata.unidata_version}"\n'
            "MARKS = (\n" + "".join(f'    "{line}"\n' for line in lines) + ")\n")


def _kept_marks() -> str:
    from scene_engine.core import marks

    return marks.MARKS if unicodedata.unidata_version == marks.UNIDATA_VERSION \
        else _mark_class()


MARKS = _kept_marks()   # inside a character class: f"[{MARKS}]", f"[^\\w{MARKS}]"
MARK = f"[{MARKS}]"
# Scripts written without spaces between words that have no dictionary here: Thai, Lao,
# Myanmar, Khmer and the Tai scripts. A run of them is searched and compared by overlapping
# pairs of letters (a letter with its marks: "ม่" is one), as CJK is; a single letter never
# decides a match. Japanese kana is CJK to the search index (``index.analysis``).
SPACELESS = ("\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u1980-\u19ff\u1a20-\u1aaf"
             "\ua9e0-\ua9ff\uaa60-\uaadf")
SPACELESS_RUN = lazy_pattern(f"(?:(?=[{SPACELESS}])(?:[^\\W\\d_]|{MARK}))+")
_CLUSTER = lazy_pattern(f"[^{MARKS}]{MARK}*|{MARK}+")


def letters(run: str) -> list[str]:
    """The letters of ``run``, each with the combining marks that follow it
    (``"ใหม่"`` -> ``["ใ", "ห", "ม่"]``)."""
    return _CLUSTER.findall(run)


def letter_pairs(run: str) -> list[str]:
    """The overlapping pairs of letters of ``run`` (``letters``), or its one letter:
    ``"ทำงาน"`` -> ``["ทำ", "ำง", "งา", "าน"]``."""
    found = letters(run)
    return [a + b for a, b in zip(found, found[1:], strict=False)] or found


# A letter of any alphabet but CJK and the spaceless scripts (café, Zürich, Ελλάδα, दिल्ली
# are words; CJK and Thai go by pairs), with the marks that follow it.
_LETTER = f"[^\\W\\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff{SPACELESS}]{MARK}*"
_WORD = lazy_pattern(f"{_LETTER}(?:{_LETTER}|['’-])*{_LETTER}|\\d{{2,}}|{_LETTER}")
_CJK = lazy_pattern(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_PAIRED = lazy_pattern(f"(?:[\u3040-\u30ff]{MARK}*)+|{SPACELESS_RUN.pattern}")   # kana, Thai...
CJK_CHAR = lazy_pattern(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")   # one Han character
STOP_WORDS = frozenset("""
a an and are as at be been being but by can could did do does doing for from had has have having
he her hers him his how i if in into is it its just me more most my no not of on or our ours she
so some such than that the their theirs them then there these they this those to too very was we
were what when where which while who whom why will with would you your yours also about after
again all am any because before both down during each few further here just like many much
now off once only other out over own same should through under until up upon us via yet one two
said says say got get gets go goes went going really thing things lot lots way ve ll re
start started starting new first last time times week weeks day days today yesterday recently
every year years month months felt feel feels made make makes want wants wanted like likes
liked love loves loved took take takes think thinks thought told tell tells asked ask know
""".split())
CJK_STOP = frozenset("我的 你的 他的 她的 我们 你们 他们 一个 这个 那个 就是 还是 已经 因为 所以 但是 而且 自己".split())


def is_cjk_text(text: str) -> bool:
    """True when CJK characters outnumber Latin letters (decides the prompt language)."""
    cjk = sum(len(m) for m in _CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return cjk > latin / 3


def terms(text: str) -> list[str]:
    """The index terms of ``text``: lower-cased words (no stop words; a word keeps its
    combining marks), CJK bigrams and the letter pairs of kana, Thai and the other spaceless
    scripts (``letter_pairs``)."""
    # Clause by clause (lines, and a digest line's facts), each cached: a batch changes a few
    # lines of a scene and one fact of a digest (no term spans a line's end or a "; "), and
    # every batch reads every scene (issue 39). In the whole text's order: its words, then
    # its kana/Thai pairs, then its CJK pairs.
    kinds = [_kinds(part) for part in clauses(text)]
    return [term for kind in range(3) for line in kinds for term in line[kind]]


_CLAUSE_BREAK = re.compile(r"\n|; ")


def clauses(text: str) -> list[str]:
    """``text`` cut at its line ends and at ``; `` (a digest line's facts), the pieces every
    reading of words caches by (issue 39): no word, term, number or negation spans either."""
    if "\n" not in text and "; " not in text:
        return [text]
    return _CLAUSE_BREAK.split(text)


@functools.lru_cache(maxsize=8192)      # a few batches' scene lines; bounded (issue 23)
def _kinds(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(words, letter pairs of spaceless scripts, CJK characters and pairs) of one line."""
    text = unicodedata.normalize("NFC", text)   # "café" typed on macOS (NFD) is "café"
    found = [w.lower().strip("'’-") for w in _WORD.findall(text)]
    words = tuple(w for w in found if w not in STOP_WORDS and len(w) > 1)
    paired: list[str] = []
    for run in _PAIRED.findall(text):
        paired.extend(letter_pairs(run) if len(letters(run)) > 1 else [])
    cjk: list[str] = []
    for run in _CJK.findall(text):
        if len(run) == 1:
            cjk.append(run)
        cjk.extend(b for b in (run[i:i + 2] for i in range(len(run) - 1)) if b not in CJK_STOP)
    return words, tuple(paired), tuple(cjk)


class Vectorizer:
    """Term-count vectors weighted by IDF over a small, changing set of documents.

    ``fit(docs)`` sets document frequencies; ``vector(text)`` -> {term: weight};
    ``similarity(a, b)`` -> cosine in [0, 1]. ``analyzer(text) -> [term]``: how a text
    becomes terms (default ``terms``: words and CJK pairs; the offline backend routes by
    ``offline_words.analyzer``, real words).
    """

    def __init__(self, analyzer=None) -> None:
        self.df: Counter[str] = Counter()
        self.docs = 0
        self.analyzer = analyzer or terms
        self._counts: dict[str, Counter[str]] = {}    # the fitted documents' terms

    def fit(self, docs: Iterable[str]) -> Vectorizer:
        """Count document frequencies over ``docs``; returns self."""
        self.df = Counter()
        self.docs = 0
        self._counts = {}
        for doc in docs:
            self.docs += 1
            if doc not in self._counts:
                self._counts[doc] = Counter(self.analyzer(doc))
            self.df.update(self._counts[doc].keys())
        return self

    def _counted(self, text: str) -> Counter[str]:
        """``text``'s terms counted; a document fitted is not read again for its vector."""
        found = self._counts.get(text)
        return found if found is not None else Counter(self.analyzer(text))

    def vector(self, text: str) -> dict[str, float]:
        """``{term: (1 + log count) * idf}`` for ``text``."""
        counts = self._counted(text)
        return {t: (1 + math.log(c)) * self.idf(t) for t, c in counts.items()}

    def idf(self, term: str) -> float:
        """Smoothed inverse document frequency (always > 0, also for unseen terms)."""
        return math.log((self.docs + 1) / (self.df.get(term, 0) + 0.5)) + 1.0

    @staticmethod
    def similarity(a: dict[str, float], b: dict[str, float]) -> float:
        """Cosine of two vectors, in [0, 1]; 0 when either is empty."""
        if not a or not b:
            return 0.0
        if len(a) > len(b):
            a, b = b, a
        dot = sum(w * b.get(t, 0.0) for t, w in a.items())
        norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
        return dot / norm if norm else 0.0


def keywords(texts: Iterable[str], vectorizer: Vectorizer | None = None, k: int = 3) -> list[str]:
    """The ``k`` most characteristic terms of ``texts`` (count x IDF), ties broken by term."""
    counts = Counter(t for text in texts for t in terms(text))
    weight = (lambda t: vectorizer.idf(t)) if vectorizer else (lambda t: 1.0)
    ranked = sorted(counts, key=lambda t: (-counts[t] * weight(t), t))
    chosen: list[str] = []
    for term in ranked:
        # Overlapping CJK bigrams (上海 / 去上) are one word cut twice: keep the stronger.
        if _CJK.fullmatch(term) and any(set(term) & set(c) for c in chosen if _CJK.fullmatch(c)):
            continue
        chosen.append(term)
        if len(chosen) == k:
            break
    return chosen
