"""Which words may name a scene: nouns and names, never verbs, adjectives, pleasantries or ids.

A scene's name and the topic of its summary (``offline_words.topic_words``) are made of the
words a person would choose for the topic (issue 23: ``停跑-左膝-改成.md``, ``thanks-helping.md``
and ``john-maria-conv-30-d4.md`` were not). DESIGN.md "A batch (L1 → L2)" (the offline
backend). Steps:

1. **Chinese**: jieba's part of speech (``cjk_noun_test``). A word jieba's dictionary has
   keeps its dictionary tag (``analysis.part_of_speech``: the tags ``jieba.posseg`` gives it); a word it
   lacks (a name or compound jieba's HMM joined, ``左膝``, ``停跑``) is tagged by
   ``jieba.posseg``'s own HMM (its tables, read once when first needed), as ``jieba.posseg``
   tags such a word; a word that starts with an adverb or pronoun or ends in a measure word
   (``太乱``, ``报个``) is a mis-cut, and a verb with its object that the dictionary calls a
   person (``喝咖啡``) is no name. Nouns, names, places, organisations, other
   proper nouns, verbal nouns (``训练``, ``游泳``), abbreviations and Latin words count
   (``NOUN_TAGS``); verbs (``改成``, ``名叫``, ``挑食``), adjectives, adverbs, numerals,
   measure words, time and place words and idioms do not.
2. **English** (no tagger among our dependencies; a deterministic rule, ``english_noun``):
   a word with a digit is an id (``conv-30``, ``d4``, ``m0012``); pleasantries (``thanks``,
   ``sorry``) never name a topic; a name (capitalised inside sentences, ``Porto``, ``Pixel``)
   always may; other words not when they are common verbs or adjectives (``VERBS``,
   ``ADJECTIVES``, compared by stem: ``helping`` is ``help``), adverbs and participles by their
   ending (``-ly``, ``-ed``, ``-ous``, ``-ful``), words the texts use as verbs only
   (``verb_cue``: after ``I``/``we``/``to``/a modal, or before ``me``/``them``, and seldom
   after an article, a preposition or another word of the topic), and ``-ing`` words the
   texts never use as nouns ("started eating fish", but "the running club").
3. **Speaker labels**: ``Maria: ...`` at the start of a line (a conversation's turns) says who
   spoke, not what about (``speaker_label``).
"""

from __future__ import annotations

import functools
import importlib.util
import pickle
import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from scene_engine.index.analysis import _import_jieba, part_of_speech, posseg_tables, stem

# jieba's tags of words that may name a scene: nouns (n, ng), names of people (nr...), places
# (ns), organisations (nt), other proper nouns (nz, nl), verbal nouns (vn), abbreviations (j)
# and Latin words (eng). jieba.posseg's tag set: jieba's README, "词性标注".
NOUN_TAGS = frozenset("n ng nr nr1 nr2 nrj nrf nrfg nrt ns nsf nt nz nl vn j eng".split())
# An HMM-joined word that starts with an adverb, pronoun, preposition, conjunction or particle,
# or ends in a measure word, numeral, particle or adverb, is a mis-cut ("太乱", "报个").
_NOT_A_NOUN_START = frozenset("d r p c u".split())
_NOT_A_NOUN_END = frozenset("q m u y d".split())
_POSSEG_TABLES = ("prob_start.p", "prob_trans.p")   # the small ones, held whole

# Said to be polite, never a topic (issue 23: ``thanks-helping.md``).
PLEASANTRIES = frozenset("""
thanks thank thankful thx please pls sorry apologies apologise apologize hello hi hey hiya
howdy bye goodbye welcome cheers congrats congratulations appreciate appreciated appreciation
yes yeah yep yup nope ok okay wow lol haha hahaha omg btw oh ah um hmm cool awesome amazing
glad hopefully woohoo yay alright gonna wanna gotta hah yo
""".split())
CJK_PLEASANTRIES = frozenset("谢谢 感谢 多谢 辛苦 麻烦 抱歉 不好意思 对不起 你好 您好 再见 拜拜 哈哈 好的 "
                             "没事 不客气".split())
# Common verbs that are seldom a topic's noun (an activity, "running", "cooking", "work", stays).
VERBS = frozenset("""
accept add admit agree allow answer appear apply argue arrive ask assume avoid become begin
believe belong bring catch cause check choose claim come consider continue
cry decide describe deserve discover discuss do enjoy ensure expect explain fail feel
find finish follow forget get give go guess happen hate hear help hold hope imagine
improve include intend invite keep know learn leave let lie like listen live look lose love
make manage matter mean meet mention mind miss need notice pick prefer prepare
pretend promise prove provide pull push put reach realise realize receive recommend remember
remind require say seem send sit speak spend start stay stop suggest
suppose take tell tend think throw touch try turn understand use wait wake want wish wonder
worry hurt goes went gone got gotten came made took taken gave given knew known thought felt left
kept meant met lost bought brought heard held stood began begun chose chosen forgot
forgotten sat sent spent paid became told said saying tells says cheer practise
""".split())
# Adjectives and adverbs.
ADJECTIVES = frozenset("""
favourite favorite happy sad excited proud different tough hard easy important special fun
real true ready able busy free beautiful wonderful fantastic incredible perfect positive
negative talented interesting stressful difficult nervous tired worried grateful lovely
huge tiny high low early late young own whole same similar certain possible impossible main
major minor simple strong weak quick slow super fine crazy weird funny serious sweet empty
healthy unhealthy delicious tasty yummy rich poor safe sick afraid alone alive aware
exciting inspiring glad cute rewarding overwhelming supportive creative passionate
together forward away ahead apart abroad anymore afterwards later soon else rather
""".split())
# Words about the talk or the notes themselves, not their topic (a rollup's "3 entries: ...").
TALK = frozenset("""
conversation conversations chat chats message messages people person guy guys kind sort type
idea ideas point reason fact case question questions entry entries note notes
""".split())
# Months and weekdays written short ("2 Mar", "Sun 14:00"): capitalised, yet no names.
DATE_WORDS = frozenset("jan feb mar apr jun jul aug sep sept oct nov dec "
                       "mon tue tues wed thu thur thurs fri sat sun".split())
# Nouns among words that end like adverbs or participles.
_LY_NOUNS = frozenset("""
family rally belly jelly lily bully ally assembly supply reply fly butterfly dragonfly
firefly monopoly anomaly holly italy sicily july
""".split())
_ED_NOUNS = frozenset("hundred seabed flowerbed hotbed bobsled homestead bloodshed watershed "
                      "hatred kindred".split())
# The words around a word that say it is used as a verb, or as a noun.
SUBJECTS = frozenset("i we you they he she".split())
AUXILIARIES = frozenset("""
to will would can could should must might shall do does did don't doesn't didn't can't
cannot won't wouldn't couldn't shouldn't not i'll we'll you'll they'll i'd we'd i've we've
you've they've let's gonna wanna gotta
""".split())
BE = frozenset("am is are was were be been being i'm you're we're they're he's she's it's".split())
OBJECTS = frozenset("me him us them".split())
ARTICLES = frozenset("a an the my your his our their this these those".split())
DETERMINERS = frozenset("""
a an the my your his her our their its this that these those some any no every each another
either neither such whose of for with about in on at from after before during into onto over
under near by without between around through across via per
""".split())
_SPEAKER = re.compile(r"^\s*([^\W\d_][\w'’.-]{0,30})\s*[:：]\s*")


@functools.lru_cache(maxsize=8)
def _stems(words: frozenset[str]) -> frozenset[str]:
    """``words`` and their Snowball stems (``helping`` meets ``help``)."""
    return frozenset(stem(w) for w in words) | words


def speaker_label(text: str) -> str:
    """The label ``text`` starts with, as a conversation's turn does (``Maria: ...``,
    ``李伟：...``), or "": who spoke, which names no topic."""
    found = _SPEAKER.match(text)
    return found.group(0) if found else ""


def english_noun(key: str, surface: str, cues: tuple[int, int, int] = (0, 0, 0),
                 name: bool = False) -> bool:
    """True when the English word ``surface`` (its stem ``key``) may name a topic (step 2 of
    the module docstring). ``cues``: over the scene's texts, ``(uses as a verb, uses as a
    noun, uses)`` (``verb_cue``); ``name``: the word is mostly written with a capital inside
    sentences (a name: ``Porto``), so only the digit and pleasantry rules apply to it."""
    word = surface.lower()
    if courtesy_or_id(key, word):
        return False
    if word in DATE_WORDS and (name or word != "sun"):      # the sun is a noun
        return False
    if name:
        return True
    if (word in VERBS or word in ADJECTIVES or word in TALK or key in _stems(VERBS)
            or key in _stems(ADJECTIVES) or key in _stems(TALK)):
        return False
    if _adverb_or_participle(word):
        return False
    verb, noun, uses = cues
    if word.endswith("ing") and not noun:
        return False        # a gerund names only where it is a noun: "the running club"
    return not (verb > 2 * noun and 2 * verb >= uses)


def courtesy_or_id(key: str, word: str) -> bool:
    """True for a word that never names a scene, even when nothing else can: an id or a
    token with a digit (``conv-30``, ``d4``), or a pleasantry (``thanks``, ``谢谢``)."""
    word = word.lower()
    return (any(c.isdigit() for c in word) or word in PLEASANTRIES
            or key in _stems(PLEASANTRIES) or word in CJK_PLEASANTRIES)


def _adverb_or_participle(word: str) -> bool:
    if word.endswith("ly") and len(word) >= 4 and word not in _LY_NOUNS:
        return True
    if (word.endswith("ed") and not word.endswith("eed") and len(word) >= 5
            and word not in _ED_NOUNS):
        return True
    return len(word) >= 6 and word.endswith(("ous", "ful"))


def verb_cue(before: str | None, word: str, after: str | None, content_before: bool) -> int:
    """How the words around ``word`` (lower case; None across a sentence's end) use it:
    1 as a verb (after a subject pronoun, ``to``, a modal or an object pronoun, ``help me
    move``; an ``-ing`` word after a form of "be" or before an article, ``cleaning the car``;
    any word before an object pronoun), -1 as a noun (after an article, a possessive or a
    preposition, or after another content word, ``content_before``: ``dance class``), 0
    when they do not say."""
    if after in OBJECTS or (word.endswith("ing") and after in ARTICLES):
        return 1
    if before is None:
        return 0
    if (before in SUBJECTS or before in AUXILIARIES or before in OBJECTS
            or (before in BE and word.endswith("ing"))):
        return 1
    if before in DETERMINERS:
        return -1
    # After a word of the topic ("dance class"), not after a verb ("recommended visiting").
    plain = not (_adverb_or_participle(before) or before in VERBS or before in ADJECTIVES)
    return -1 if content_before and plain else 0


def cjk_noun_test(words: Iterable[str]) -> Callable[[str], bool]:
    """A test of whether a Chinese word, one of ``words``, is a noun or a name by jieba's part
    of speech (step 1 of the module docstring): the dictionary's tags of ``words`` are read at
    once, the HMM tags a word the dictionary lacks when it is asked about."""
    words = set(words)
    tags = part_of_speech([*words, *(piece for w in words for piece in (w[0], w[-1], w[1:]))])

    @functools.cache
    def is_noun(word: str) -> bool:
        tag = tags.get(word)
        if tag and tag.startswith("nr") and _verb_and_object(word, tags):
            return False
        return (tag or _unknown_word_tag(word, tags)) in NOUN_TAGS

    return is_noun


def _verb_and_object(word: str, tags: dict[str, str]) -> bool:
    """True for a word of three or more characters that is a verb and a common noun
    (``喝咖啡``: 喝 and 咖啡), which jieba's dictionary tags as a person's name."""
    return len(word) >= 3 and tags.get(word[0], "")[:1] == "v" and tags.get(word[1:]) == "n"


def _unknown_word_tag(word: str, tags: dict[str, str]) -> str:
    """jieba.posseg's tag of a word its dictionary lacks, "x" when posseg would cut it into
    several words or it is a mis-cut (starts with an adverb, ends in a measure word)."""
    if tags.get(word[0]) in _NOT_A_NOUN_START or tags.get(word[-1]) in _NOT_A_NOUN_END:
        return "x"
    return _hmm_tag(word)


@functools.lru_cache(maxsize=16384)     # a scene's words are asked about at every summary
def _hmm_tag(word: str) -> str:
    """jieba.posseg's HMM tag of ``word`` when it tags it as one word, else "x"."""
    model = _posseg_model()
    if model is None:
        return "n"          # no tagger: a word jieba's HMM joined is most often a name
    viterbi, start, transitions = model
    try:
        states, emit = posseg_tables(word)
    except (ImportError, OSError, sqlite3.Error):
        return "n"
    # viterbi asks for the emissions of every state it meets: those of none of the word's
    # characters are empty, as in the whole table.
    _, route = viterbi(word, states, start, transitions, defaultdict(dict, emit))
    tags = "".join(state for state, _ in route)
    whole = (len(word) == 1 and tags == "S") or re.fullmatch("BM*E", tags)
    return route[-1][1] if whole else "x"


@functools.lru_cache(maxsize=1)
def _posseg_model():
    """(jieba.posseg's viterbi, its start and transition tables), read from jieba's files:
    importing ``jieba.posseg`` would load its tables as Python modules (about 1 s) and
    jieba's full dictionary on first use. Its character tables, 18 MB as dicts, are read a
    word at a time from the dictionary file (``analysis.posseg_tables``). None if
    unreadable."""
    try:
        folder = Path(_import_jieba().__file__).with_name("posseg")
        spec = importlib.util.spec_from_file_location("_scene_engine_posseg_viterbi",
                                                      folder / "viterbi.py")
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        tables = []
        for name in _POSSEG_TABLES:
            with open(folder / name, "rb") as table:
                tables.append(pickle.load(table))     # jieba's own files, as posseg reads them
        return module.viterbi, *tables
    except (ImportError, OSError, pickle.UnpicklingError, AttributeError, EOFError):
        return None
