"""The search analysers: how text becomes index terms, and a question becomes a query.

One analyser for documents and queries, so a word matches itself however it is written:

- **English** (and other Latin-script words): lower-cased, stop words out (a stop word never
  decides a match: "coffee with Lena" must not find a scene for its "with"), ASCII words
  stemmed with the Snowball English stemmer ("runs", "running" -> "run"). Numbers are words.
- **Chinese/Japanese/Korean**: a document's CJK run is indexed as its overlapping character
  pairs plus its last character (``咖啡馆`` -> ``咖啡 啡馆 馆``): every word of every length
  is findable without a dictionary, and indexing stays fast (a segmenter reads ~300k characters
  a second; pairs cost nothing). A question is cut into words by jieba (``上海咖啡`` ->
  ``上海 / 咖啡``; ``我妈妈住在哪里`` -> ``我 / 妈妈 / 住 / 在 / 哪里``), question particles,
  pronouns and punctuation are dropped, and each remaining word is matched as the phrase of its
  character pairs (a one-character word as a prefix). A run typed without spaces is no longer
  one exact phrase.
- **Other scripts**: a word keeps its combining marks ("दिल्ली", "தமிழ்", "مَدْرَسَة" are one
  word each, never their bare letters); the index's FTS5 tokenizer counts marks as part of a
  token too (``FTS_TOKENIZER``). A run of a script written without spaces (Thai, Lao, Khmer,
  Myanmar) is indexed as its overlapping pairs of letters (a letter with its marks), and a
  word of a question is the phrase of its pairs, so "ทำงาน" is found inside a run; a
  one-letter word is never searched.

jieba's full dictionary takes 1-2 s to load, more than a whole query may cost. Segmenting a
sentence only ever consults dictionary words that are substrings of it, so the dictionary is
kept in a small SQLite table (built once per jieba version in the user's cache folder) and a
query loads just its own substrings: the same segmentation, in milliseconds. jieba's IDF table
(``idf``) and the part-of-speech tagger's character tables (``posseg_tables``) live in the
same file: held as Python dicts they took about 55 MB of every process that met a Chinese
word (issue 39), read from the file they cost only the words asked about.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import sqlite3
import sys
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scene_engine.core.text import (
    MARK,
    SPACELESS,
    SPACELESS_RUN,
    clauses,
    lazy_pattern,
    letter_pairs,
    letters,
)
from scene_engine.index.sqlite_rows import rows_in

_CJK = (r"\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u31a0-\u31bf"
        r"\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
CJK_RUN = lazy_pattern(f"[{_CJK}]+")
# Pictographs (emoji, dingbats, symbols): each its own term, written as its code point
# ("u1f378"), since FTS5's tokenizer keeps letters and digits only ("🍸" found "Cocktail 🍸").
_EMOJI = (r"\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\u2190-\u21ff"
          r"\u2700-\u27bf\u3297\u3299")
EMOJI = lazy_pattern(f"[{_EMOJI}]")
# A token: a CJK run, a pictograph, a run of a script written without spaces (Thai, Lao,
# Khmer, Myanmar: ``SPACELESS_RUN``), or a word: a letter or digit that is none of those, then
# more of them and the combining marks among them ("दिल्ली", "مَكْتَبَة", NFD "café").
_OTHER = f"(?![{_CJK}{SPACELESS}])[^\\W_]"
_TOKEN = lazy_pattern(f"[{_CJK}]+|[{_EMOJI}]|{SPACELESS_RUN.pattern}|{_OTHER}(?:{_OTHER}|{MARK})*")
# The FTS5 tokenizer of every indexed column: letters, numbers and marks make a token (the
# default leaves marks out and cuts "दिल्ली" apart), case and Latin accents folded.
FTS_TOKENIZER = "unicode61 remove_diacritics 2 categories ''L* N* Co M*''"

# Function words only: content words ("love", "time", "new") stay searchable.
STOP_WORDS = frozenset("""
a an and are as at be been being but by can could did do does doing for from had has have
having he her hers herself him himself his how i if in into is it its itself me my myself no
nor not of on or our ours ourselves she should so some such than that the their theirs them
themselves then there these they this those to too us very was we were what when where which
while who whom whose why will with would you your yours yourself yourselves s t d ll m re ve
am any did didn doesn don isn wasn weren won wouldn shouldn couldn also just
""".split())
# Question particles, pronouns, question words and glue; content words stay.
CJK_STOP_WORDS = frozenset("""
的 了 吗 呢 吧 啊 呀 哦 嘛 么 哈 啦 着 过 是 在 有 和 与 跟 及 或 也 都 就 还 又 很 太 把 被 给
对 从 到 让 我 你 您 他 她 它 我们 你们 他们 她们 咱们 自己 这 那 这个 那个 这些 那些 这里 那里
这儿 那儿 哪 哪里 哪儿 哪个 哪些 哪位 什么 啥 怎么 怎样 怎么样 如何 为什么 为啥 多少 几 谁 何时
什么时候 时候 当时 后来 现在 平时 一般 为何 是否 是不是 有没有 能不能 会不会 要不要 请问 一下 告诉 知道 记得 一个 吗 呢 之 其 而 得 地
""".split())
DICTIONARY_VERSION = 4   # bump when the dictionary table's layout or content rule changes
# "几岁" (how old), "几点": the question character goes, the unit stays ("岁"), unless
# what stays says nothing alone ("多久", "多大", "几个").
_QUESTION_HEADS = ("几", "多")
_BARE_AFTER_QUESTION = frozenset("个 久 大 长 远 高 重 多 少 些 种 位 样 么".split())
MAX_QUERY_CHARS = 2000   # a question is never longer; more is pasted text, cut to bound the work
_MAX_WORD = 8            # longest dictionary word looked up in a question


@functools.lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case ``word``, its accents taken off first
    ("résumés" and "resume" both give "resum"); a word of another script comes back as it is
    (the English stemmer would mangle it). Cached: a store's vocabulary is small, the
    pure-Python stemmer costs ~50 us a word."""
    if not word.isascii():
        plain = "".join(c for c in unicodedata.normalize("NFKD", word)
                        if not unicodedata.combining(c))
        if not plain.isascii():
            return word
        word = plain
    return _stemmer().stemWord(word)


def _pairs(run: str) -> str:
    return " ".join(map(str.__add__, run, run[1:]))


def index_text(text: str) -> str:
    """Text as the index stores it: space-separated terms (stems and CJK character pairs).

    ``"I like running in 咖啡馆"`` -> ``"like run 咖啡 啡馆 馆"``. The FTS5 ``unicode61``
    tokenizer then folds case and diacritics of what is left. Clause by clause (lines, and
    a digest line's facts), each cached: a batch changes a few lines of a scene and one fact
    of a digest, and the index re-reads the old text to delete it (issue 39); no term spans
    a line's end or a ``; ``."""
    return " ".join(found for part in clauses(text) if (found := _line_index_text(part)))


@functools.lru_cache(maxsize=8192)     # a few batches' scene lines; bounded (issue 23)
def _line_index_text(text: str) -> str:
    out = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
        if CJK_RUN.fullmatch(token):
            if len(token) > 1:
                out.append(_pairs(token))
            out.append(token[-1])
        elif SPACELESS_RUN.fullmatch(token):
            out.extend(letter_pairs(token))
        elif EMOJI.fullmatch(token):
            out.append(emoji_term(token))
        else:
            word = token.lower()
            if word not in STOP_WORDS:
                out.append(stem(word))
    return " ".join(out)


@dataclass(frozen=True)
class QueryTerm:
    """One searchable unit of a question: ``text`` as the person typed it (for messages),
    ``fts``, its FTS5 expression (a quoted stem, a quoted phrase of character pairs, or a
    quoted prefix for one CJK character), and ``needle``, what to look for in a text to show
    where it matched (the stem or the word)."""

    text: str
    fts: str
    needle: str


def query_terms(query: str) -> list[QueryTerm]:
    """The searchable words of ``query``, in order, without repeats, stop words and
    punctuation. FTS5 syntax in the input is never interpreted (every term is quoted)."""
    found: dict[str, QueryTerm] = {}
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", query[:MAX_QUERY_CHARS])):
        if CJK_RUN.fullmatch(token):
            freq = _frequencies_or_none(token)
            for word in segment(token, freq):
                if word in CJK_STOP_WORDS or word.startswith("哪"):   # 哪家, 哪天: asking
                    continue
                if len(word) == 2 and word.startswith(_QUESTION_HEADS):
                    word = word[1]       # "几岁" -> "岁"; "多久" -> nothing
                if word in CJK_STOP_WORDS or word in _BARE_AFTER_QUESTION:
                    continue
                fts = _cjk_term(word, freq or {})
                found.setdefault(fts, QueryTerm(word, fts, word))
        elif SPACELESS_RUN.fullmatch(token):
            if len(letters(token)) > 1:   # one letter alone is in countless words
                fts = f'"{" ".join(letter_pairs(token))}"'
                found.setdefault(fts, QueryTerm(token, fts, token))
        elif EMOJI.fullmatch(token):
            term = emoji_term(token)
            found.setdefault(f'"{term}"', QueryTerm(token, f'"{term}"', token))
        else:
            word = token.lower()
            if word in STOP_WORDS:
                continue
            root = stem(word)
            fts = '"' + root.replace('"', '""') + '"'
            found.setdefault(fts, QueryTerm(token, fts, root))
    return list(found.values())


def emoji_term(char: str) -> str:
    """The index term of one pictograph: ``u`` and its code point in hex ("🍸" -> "u1f378")."""
    return f"u{ord(char):x}"


def _cjk_term(word: str, freq: dict[str, int]) -> str:
    """The FTS5 expression for one Chinese word of a question.

    One character: a prefix (it starts a pair, or ends its run). Longer: the phrase of its
    character pairs, or, since a person may write a compound apart ("读书笔记" / "读书的笔记"),
    all of the dictionary words inside it; a word jieba made up from unknown characters
    (HMM: "洗牙" for "洗一次牙") may also match by its characters."""
    if len(word) == 1:
        return f'"{word}"*'
    phrase = f'"{_pairs(word)}"'
    spans = [(i, j) for i in range(len(word))
             for j in range(i + 2, min(len(word), i + _MAX_WORD) + 1)
             if j - i < len(word) and freq.get(word[i:j]) and word[i:j] not in CJK_STOP_WORDS]
    inner = [word[i:j] for i, j in spans]
    covered = {k for i, j in spans for k in range(i, j)}
    if inner and len(covered) == len(word):   # the parts say all the word says ("咖啡馆": no)
        apart = " AND ".join(f'"{_pairs(w)}"' for w in inner)
    elif not freq.get(word):
        apart = " AND ".join(f'"{c}"*' for c in word if c not in CJK_STOP_WORDS)
    else:
        return phrase
    return f"({phrase} OR ({apart}))" if apart else phrase


def literal_query(query: str) -> str | None:
    """``query`` as typed, for FTS5: each Chinese run one phrase of its character pairs (a
    substring match, as grep would find it), English words stemmed, stop words out; terms
    ANDed. None when nothing is left. Tried before the segmented words: a short Chinese
    query ("道它", "代二") means those characters together."""
    parts = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", query[:MAX_QUERY_CHARS])):
        if CJK_RUN.fullmatch(token):
            parts.append(f'"{token}"*' if len(token) == 1 else f'"{_pairs(token)}"')
        elif SPACELESS_RUN.fullmatch(token):
            if len(letters(token)) > 1:
                parts.append(f'"{" ".join(letter_pairs(token))}"')
        elif EMOJI.fullmatch(token):
            parts.append(f'"{emoji_term(token)}"')
        elif (word := token.lower()) not in STOP_WORDS:
            parts.append('"' + stem(word).replace('"', '""') + '"')
    return " AND ".join(dict.fromkeys(parts)) or None


@functools.lru_cache(maxsize=8192)
def text_terms(text: str) -> tuple[str, ...]:
    """The terms of ``text`` as the index holds them (``index_text``): for ranking passages
    with the same analyser as search. Cached: recall ranks a passage, then checks it against
    the chosen ones, and an agent asks about the same scenes again and again."""
    return tuple(index_text(text).split())


def question_terms(query: str) -> set[str]:
    """The terms a passage is scored on for ``query``: the stems of its English words and the
    character pairs of its Chinese words (one-character words as they are)."""
    found: set[str] = set()
    for term in query_terms(query):
        if CJK_RUN.fullmatch(term.text):
            found.update(_pairs(term.text).split() or [term.text])
        elif SPACELESS_RUN.fullmatch(term.text):
            found.update(letter_pairs(term.text))
        else:
            found.add(term.needle)
    return found


# The combining diacritics of Latin, Greek and Cyrillic letters: what "accents off" takes
# away (``stem`` makes such a word plain; a word of another script keeps its marks).
_ACCENTS = lazy_pattern("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """``text`` lower-cased, accents off (for a quick "may it hold this term?" test)."""
    if text.isascii():
        return text.lower()
    return _ACCENTS.sub("", unicodedata.normalize("NFKD", text.lower()))


def only_stop_words(query: str) -> bool:
    """True when ``query`` has words but every one is a stop word ("what is it")."""
    return bool(_TOKEN.findall(query)) and not query_terms(query)


# -- jieba, with its dictionary read word by word from SQLite ------------------------------


def segment(run: str, freq: dict[str, int] | None = None) -> list[str]:
    """jieba's segmentation of ``run`` (a CJK run), HMM on for unknown words (names).
    ``freq``: ``_frequencies(run)`` when the caller has it.

    Falls back to one word per run if jieba cannot be loaded (the pair phrase still
    matches)."""
    if freq is None:
        freq = _frequencies_or_none(run)
    if freq is None:
        return [run]
    tokenizer = _tokenizer()
    tokenizer.FREQ = freq
    return [w for w in tokenizer.cut(run, HMM=True) if w.strip()]


def _frequencies_or_none(run: str) -> dict[str, int] | None:
    try:
        _tokenizer()
        return _frequencies(run)
    except (ImportError, OSError, sqlite3.Error):
        return None


@functools.lru_cache(maxsize=1)
def _tokenizer():
    jieba = _import_jieba()
    tokenizer = jieba.Tokenizer()
    tokenizer.total = _dictionary()[1]
    tokenizer.initialized = True        # never load the full dictionary: FREQ is set per run
    return tokenizer


def _import_jieba():
    # jieba imports pkg_resources (0.2 s) only to open its own data files, with a plain open()
    # as its fallback: hide pkg_resources while it loads.
    saved = sys.modules.get("pkg_resources", ...)
    # None in sys.modules makes an import fail (the import system's rule); typeshed allows
    # only modules there.
    sys.modules["pkg_resources"] = None  # type: ignore[assignment]
    try:
        import jieba
    finally:
        if saved is ...:
            sys.modules.pop("pkg_resources", None)
        else:
            sys.modules["pkg_resources"] = saved
    jieba.setLogLevel(40)
    return jieba


def _frequencies(run: str) -> dict[str, int]:
    """jieba's FREQ restricted to ``run``: its dictionary words that occur in ``run`` (with
    their counts) and their prefixes (0), which is all ``Tokenizer.get_DAG`` consults."""
    wanted = {run[i:j] for i in range(len(run))
              for j in range(i + 1, min(len(run), i + _MAX_WORD) + 1)}
    conn = _dictionary()[0]
    freq: dict[str, int] = {}
    with _lock:
        rows = conn.execute(f"SELECT word, freq FROM words WHERE word IN "
                            f"({','.join('?' * len(wanted))})", tuple(wanted)).fetchall()
    for word, count in rows:
        freq[word] = count
        for end in range(1, len(word)):
            freq.setdefault(word[:end], 0)
    return freq


def part_of_speech(words: list[str]) -> dict[str, str]:
    """jieba's part-of-speech tag of each of ``words`` its dictionary has (``dict.txt``'s
    third column, the tags ``jieba.posseg`` gives: ``n`` noun, ``nr`` person, ``v`` verb, ...;
    ``n`` for a word of ``words_zh.txt``, nouns only); a word it lacks is left out, and all
    are when jieba cannot be loaded. Read from the dictionary table, so the full dictionary
    is never loaded."""
    asked = set(words)
    try:
        with _lock:         # one connection; and a clear of the cache must not fall mid-read
            wanted = sorted(asked - _TAGS.keys())
            if wanted:
                rows = _rows_where("SELECT word, tag FROM words WHERE word", wanted)
                if len(_TAGS) + len(wanted) > _TAGS_KEPT:
                    _TAGS.clear()
                _TAGS.update(dict.fromkeys(wanted, ""))
                _TAGS.update((word, tag or "") for word, tag in rows)
            return {word: tag for word in asked if (tag := _TAGS.get(word))}
    except (ImportError, OSError, sqlite3.Error):
        return {}


def idf(words: Iterable[str]) -> dict[str, float | None]:
    """jieba's IDF of each of ``words`` its table has (``jieba/analyse/idf.txt``, the weights
    ``jieba.analyse.extract_tags`` uses; a line without a value reads as ``None``); a word it
    lacks is left out, and all are when jieba cannot be loaded. Read from the dictionary
    file: the table is never held whole."""
    asked = set(words)
    try:
        with _lock:
            wanted = sorted(asked - _IDFS.keys())
            if wanted and len(_IDFS) + len(wanted) > _TAGS_KEPT:
                _IDFS.clear()
                wanted = sorted(asked)
            if wanted:
                rows = _rows_where("SELECT word, idf FROM idf WHERE word", wanted)
                _IDFS.update(dict.fromkeys(wanted, _ABSENT))
                _IDFS.update(rows)
            return {word: value for word in asked if (value := _IDFS[word]) is not _ABSENT}
    except (ImportError, OSError, sqlite3.Error):
        return {}


# The IDFs read so far (``_ABSENT`` for a word the table lacks): a scene's summary weighs the
# same words at every batch. Bounded as ``_TAGS`` is.
_ABSENT = float("nan")
_IDFS: dict[str, float | None] = {}


def posseg_tables(chars: Iterable[str]) -> tuple[dict[str, tuple], dict[tuple, dict[str, float]]]:
    """jieba.posseg's HMM tables restricted to ``chars``: (``char_state_tab``: char -> the
    states it may take, ``prob_emit``: state -> {char: log probability}), states as
    ``(position, tag)`` pairs (``("B", "nr")``), as ``jieba/posseg/*.p`` hold them. Its
    ``viterbi`` asks only about the characters of the word it tags, so these give the same
    route as the whole tables. Raises ``sqlite3.Error``, ``OSError`` or ``ImportError`` when
    the dictionary file cannot be read."""
    asked = sorted(set(chars))
    states: dict[str, tuple] = {}
    emit: dict[tuple, dict[str, float]] = {}
    if not asked:
        return states, emit
    with _lock:
        for char, said in _rows_where("SELECT char, states FROM posseg_states WHERE char",
                                      asked):
            states[char] = tuple(tuple(pair.split(" ")) for pair in said.split(","))
        for char, state, prob in _rows_where(
                "SELECT char, state, prob FROM posseg_emit WHERE char", asked):
            emit.setdefault(tuple(state.split(" ")), {})[char] = prob
    return states, emit


def _rows_where(select: str, values: list[str]) -> list[tuple]:
    """The rows of ``select`` over ``values`` in the dictionary file (``rows_in``); the
    caller holds ``_lock``."""
    return list(rows_in(_dictionary()[0], select, values))


# The tags read so far ("" for a word the dictionary lacks): a scene's summary asks about the
# same words at every batch (issue 39). Bounded, so a long import does not grow with them.
_TAGS: dict[str, str] = {}
_TAGS_KEPT = 50_000


_lock = threading.Lock()    # one dictionary connection, shared by threads


@functools.lru_cache(maxsize=1)
def _dictionary() -> tuple[sqlite3.Connection, int]:
    """(connection to the dictionary table, jieba's total count). Built once per jieba
    version in the cache folder; in memory if no cache folder can be written."""
    jieba = _import_jieba()
    source = Path(jieba.__file__).with_name("dict.txt")
    extra = SUPPLEMENT.stat().st_size if SUPPLEMENT.exists() else 0
    stamp = f"{DICTIONARY_VERSION}-{source.stat().st_size}-{source.stat().st_mtime_ns}-{extra}"
    for folder in _cache_folders():
        path = folder / f"jieba-{stamp}.sqlite"
        with contextlib.suppress(OSError, sqlite3.Error):
            if not path.exists():
                _build_dictionary(source, path)
                _drop_older_dictionaries(folder)
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            return conn, conn.execute("SELECT total FROM meta").fetchone()[0]
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    _fill_dictionary(conn, source)
    return conn, conn.execute("SELECT total FROM meta").fetchone()[0]


def _drop_older_dictionaries(folder: Path) -> None:
    """Remove the dictionary files an older ``DICTIONARY_VERSION`` built in ``folder`` (never
    read again). A process still reading one keeps its open file."""
    for old in folder.glob("jieba-*.sqlite"):
        version = old.name.split("-")[1]
        if version.isdigit() and int(version) < DICTIONARY_VERSION:
            with contextlib.suppress(OSError):
                old.unlink()


def _cache_folders() -> Iterator[Path]:
    import tempfile

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    yield Path(base) / "scene-engine"
    yield Path(tempfile.gettempdir()) / f"scene-engine-{os.getuid() if hasattr(os, 'getuid') else 0}"


def _build_dictionary(source: Path, path: Path) -> None:
    # Built under a temporary name, renamed into place: a reader never sees half a table.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    conn = sqlite3.connect(partial)
    try:
        _fill_dictionary(conn, source)
    finally:
        conn.close()
    os.replace(partial, path)


SUPPLEMENT = Path(__file__).with_name("words_zh.txt")   # words jieba's 2013 dictionary lacks
SUPPLEMENT_COUNT = 2000   # a common word's count in jieba's table: enough to be cut whole


def supplement_words() -> list[str]:
    """The words of ``words_zh.txt`` (``#`` lines are comments), in file order."""
    try:
        text = SUPPLEMENT.read_text(encoding="utf-8")
    except OSError:
        return []
    return [w for line in text.splitlines() if not line.startswith("#") for w in line.split()]


def _fill_dictionary(conn: sqlite3.Connection, source: Path) -> None:
    rows = []
    total = 0
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            parts = line.split(" ")
            if len(parts) >= 2 and parts[1].strip().isdigit():
                count = int(parts[1])
                rows.append((parts[0], count, parts[2].strip() if len(parts) > 2 else ""))
                total += count
    known = {word for word, _, _ in rows}
    for word in supplement_words():       # jieba's own count wins where it has the word
        if word not in known:
            known.add(word)
            rows.append((word, SUPPLEMENT_COUNT, "n"))     # the file lists nouns only
            total += SUPPLEMENT_COUNT
    conn.executescript("CREATE TABLE words (word TEXT PRIMARY KEY, freq INTEGER, tag TEXT) "
                       "WITHOUT ROWID; CREATE TABLE meta (total INTEGER);"
                       "CREATE TABLE idf (word TEXT PRIMARY KEY, idf REAL) WITHOUT ROWID;"
                       "CREATE TABLE posseg_states (char TEXT PRIMARY KEY, states TEXT) "
                       "WITHOUT ROWID; CREATE TABLE posseg_emit (char TEXT, state TEXT, "
                       "prob REAL, PRIMARY KEY (char, state)) WITHOUT ROWID;")
    conn.executemany("INSERT OR REPLACE INTO words VALUES (?, ?, ?)", rows)
    conn.execute("INSERT INTO meta VALUES (?)", (total,))
    conn.executemany("INSERT OR REPLACE INTO idf VALUES (?, ?)",
                     _idf_rows(source.with_name("analyse") / "idf.txt"))
    _fill_posseg(conn, source.with_name("posseg"))
    conn.commit()


def _idf_rows(path: Path) -> Iterator[tuple[str, float | None]]:
    """(word, idf) of jieba's IDF file; none when it is missing."""
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as lines:
        for line in lines:
            word, _, value = line.rstrip("\n").partition(" ")
            yield word, float(value) if value else None


def _fill_posseg(conn: sqlite3.Connection, folder: Path) -> None:
    """jieba.posseg's character tables (its own pickles, as posseg reads them) as rows;
    none when they cannot be read (the tagger then says ``n``, ``offline.nouns``)."""
    try:
        with open(folder / "char_state_tab.p", "rb") as table:
            states = pickle.load(table)
        with open(folder / "prob_emit.p", "rb") as table:
            emit = pickle.load(table)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
        return
    conn.executemany("INSERT INTO posseg_states VALUES (?, ?)",
                     ((char, ",".join(" ".join(state) for state in said))
                      for char, said in states.items()))
    conn.executemany("INSERT INTO posseg_emit VALUES (?, ?, ?)",
                     ((char, " ".join(state), prob) for state, probs in emit.items()
                      for char, prob in probs.items()))

