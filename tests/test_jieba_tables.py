"""jieba's IDF table and part-of-speech tagger read from the dictionary file (issue 39: memory
that stays flat): the same numbers and tags as jieba's own tables, without holding them."""

from __future__ import annotations

import pickle
import re
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scene_engine.index import analysis
from scene_engine.offline import nouns, words

JIEBA = Path(analysis._import_jieba().__file__).parent


@pytest.fixture(scope="module")
def posseg_tables():
    """jieba.posseg's four tables, whole, as posseg itself loads them."""
    names = ("char_state_tab.p", "prob_start.p", "prob_trans.p", "prob_emit.p")
    tables = []
    for name in names:
        with open(JIEBA / "posseg" / name, "rb") as table:
            tables.append(pickle.load(table))
    return tables


def _tag_with_whole_tables(word: str, tables) -> str:
    viterbi = nouns._posseg_model()[0]
    _, route = viterbi(word, *tables)
    states = "".join(state for state, _ in route)
    whole = (len(word) == 1 and states == "S") or re.fullmatch("BM*E", states)
    return route[-1][1] if whole else "x"


# Characters the tagger knows, and some it does not (a rare CJK ideograph, Latin, a symbol).
_KNOWN = "王磊小林李伟年糕杭州咖啡馆猫粮喝装修医生准备开始上海北京周末跑步老师妈妈"
_UNKNOWN = "𠀀丨A7·"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_KNOWN + _UNKNOWN, min_size=1, max_size=6))
def test_the_tagger_tags_as_jieba_posseg_does_with_its_whole_tables(posseg_tables, word):
    assert nouns._hmm_tag(word) == _tag_with_whole_tables(word, posseg_tables)


def test_the_tagger_agrees_on_every_word_of_a_chinese_text(posseg_tables):
    text = ("上周末和王磊去杭州西湖边的咖啡馆坐了一下午，他说明年想带小林去日本看樱花。"
            "妈妈的年糕做得越来越好，邻居张阿姨每年春节都来要一盒。")
    runs = re.findall("[\u4e00-\u9fff]+", text)
    said = {r[i:i + k] for r in runs for k in (1, 2, 3, 4) for i in range(len(r) - k + 1)}
    wrong = [w for w in sorted(said) if nouns._hmm_tag(w) != _tag_with_whole_tables(
        w, posseg_tables)]
    assert not wrong


def test_idf_is_jiebas_table_and_a_word_it_lacks_is_left_out():
    table = {}
    with open(JIEBA / "analyse" / "idf.txt", encoding="utf-8") as lines:
        for line in lines:
            word, _, value = line.rstrip("\n").partition(" ")
            table[word] = float(value)
    asked = ["医生", "装修", "年糕", "准备", "开始", "不是一个词语", "Porto", *list(table)[:600]]
    got = analysis.idf(asked)
    assert got == {w: table[w] for w in asked if w in table}
    assert "不是一个词语" not in got and len(got) > 600      # more than one query's worth
    assert words.specificity("年糕") > words.specificity("装修") > words.specificity("医生")
    assert words.specificity("不是一个词语") == 1.0 and words.specificity("Porto") == 1.0


def test_tagging_and_weighing_chinese_words_does_not_hold_the_tables():
    texts = ["周末和王磊去杭州的咖啡馆", "王磊推荐了杭州一家咖啡馆", "妈妈做的年糕很好吃"]
    words.topic_words(texts)                      # the dictionary file exists from here on
    for cached in (nouns._hmm_tag, nouns._posseg_model, words._term_idf):
        cached.cache_clear()
    analysis._TAGS.clear()
    tracemalloc.start()
    try:
        assert words.topic_words(texts)
        assert nouns._hmm_tag("王磊") and words.specificity("年糕") < 1.0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # jieba's IDF table alone is 36 MB as a dict, its tagger's character tables 18 MB.
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB"
