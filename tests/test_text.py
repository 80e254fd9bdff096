"""The combining-mark class every word pattern uses (``core.text.MARKS``), kept precomputed in
``core.marks`` so a start-up does not walk every code point."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from scene_engine.core import marks, text


@pytest.mark.skipif(unicodedata.unidata_version != marks.UNIDATA_VERSION,
                    reason="another Unicode version: text reads the marks afresh")
def test_the_kept_marks_are_what_unicodedata_says():
    assert marks.MARKS == text._mark_class() == text.MARKS
    assert text.marks_source() == Path(marks.__file__).read_text("utf-8")


def test_mark_matches_every_combining_mark_and_nothing_else():
    codes = [*range(0x300, 0x20000), *range(0xE0000, 0xE0200)]
    found = {ord(ch) for ch in re.findall(text.MARK, "".join(map(chr, codes)))}
    assert found == {c for c in codes if unicodedata.category(chr(c))[0] == "M" and not (
        0xFE00 <= c <= 0xFE0F or c >= 0xE0100 or 0x180B <= c <= 0x180D)}


def test_words_keep_their_marks():
    assert text.terms("दिल्ली தமிழ் café") == ["दिल्ली", "தமிழ்", "café"]
    assert text.letters("ใหม่") == ["ใ", "ห", "ม่"]
