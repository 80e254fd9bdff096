"""The fold reads scene texts line by line and clause by clause, each piece cached (issue 39):
a batch changes a few lines of a scene and one fact of a digest line. These check that the
pieces give what the whole text gives, for any text: the terms in the same order, the same
index text, the same content words; and that a header read from the cache is the reader's own
copy, a header holding itself included."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from scene_engine.batch import conservation
from scene_engine.core import text
from scene_engine.index import analysis
from scene_engine.store.scene import parse_scene

# Words of several scripts, marks, digits, "; " and line ends: what scene lines are made of.
PIECES = st.sampled_from([
    "Ran", "7", "km", "don't", "Porto's", "café", "cafe\u0301", "年糕", "咖啡馆", "不", "カタカナ",
    "สวัสดีครับ", "दिल्ली", "😀", "; ", "\n", " ", "-", "2026-03-04", "(digest)", ":", "×6",
    "not", "\u0301", "；", "１２", *string.ascii_letters[:6]])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def whole_terms(value: str) -> list[str]:
    """``text.terms`` as it was before lines were cached: the whole text read at once."""
    words, paired, cjk = text._kinds.__wrapped__(value)
    return [*words, *paired, *cjk]


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_terms_line_by_line_are_the_whole_texts_in_its_order(value):
    assert text.terms(value) == whole_terms(value)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_index_text_clause_by_clause_is_the_whole_texts(value):
    assert analysis.index_text(value) == analysis._line_index_text.__wrapped__(value)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.booleans())
def test_content_words_clause_by_clause_are_the_whole_texts(value, numbers):
    assert conservation.content_terms(value, numbers) == \
        conservation._line_terms.__wrapped__(value, numbers)


def test_a_header_from_the_cache_is_the_readers_own_copy():
    source = "---\nsummary: Porto\nmerged_from: [a.md, b.md]\nheat: 2\n---\n- 2026-03-04: x\n"
    first = parse_scene(source, name="s.md")
    first.meta["merged_from"].append("c.md")
    first.meta["summary"] = "changed"
    again = parse_scene(source, name="s.md")
    assert again.meta == {"summary": "Porto", "merged_from": ["a.md", "b.md"], "heat": 2}


def test_a_header_that_holds_itself_is_read_without_a_fault():
    scene = parse_scene("---\nsummary: x\nloop: &a [*a]\n---\nbody\n", name="s.md")
    assert scene.meta["summary"] == "x" and scene.body == "body\n"
    assert scene.meta["loop"][0] is scene.meta["loop"]     # the loop kept, in its own copy
