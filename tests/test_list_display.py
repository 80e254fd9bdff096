"""``scenes list`` drawn for a terminal with many rows (``cli.display.scene_columns``): the
same columns Rich's measures give, whatever the characters (CJK, emoji and their joiners,
combining marks, control characters), counted faster than Rich counts them."""

from __future__ import annotations

import random
import unicodedata

from rich.cells import cell_len

from scene_engine.cli import display


def _reference_columns(cells: list[tuple[str, str, str, str]], width: int) -> str:
    """The drawing as it was made with Rich's ``cell_len`` for every measure."""
    def printable(text):
        return "".join("\ufffd" if unicodedata.category(ch)[0] == "C" else ch
                       for ch in text) if not text.isprintable() else text

    def pad(text, size, right=False):
        gap = " " * (size - cell_len(text))
        return gap + text if right else text + gap

    def wrap(text, size):
        lines, line, used = [], "", 0
        for word in text.split(" "):
            cells = cell_len(word)
            if line and used + 1 + cells <= size:
                line, used = f"{line} {word}", used + 1 + cells
                continue
            if line:
                lines.append(line)
            line, used = "", 0
            while cells > size:
                cut, taken = 0, 0
                while cut < len(word) and taken + cell_len(word[cut]) <= size:
                    taken += cell_len(word[cut])
                    cut += 1
                cut = max(cut, 1)
                lines.append(word[:cut])
                word = word[cut:]
                cells = cell_len(word)
            line, used = word, cells
        if line:
            lines.append(line)
        return lines

    rows = [tuple(printable(c) for c in row) for row in
            [("name", "heat", "updated", "summary"), *cells]]
    widths = [max(cell_len(row[k]) for row in rows) for k in range(3)]
    room = max(display.SUMMARY_MIN, width - sum(widths) - 2 * 3 - 1)
    indent = " " * (sum(widths) + 2 * 3)
    out = []
    for row in rows:
        lead = "  ".join(pad(row[k], widths[k], right=k == 1) for k in range(3))
        wrapped = wrap(row[3], room) or [""]
        out.append(f"{lead}  {wrapped[0]}".rstrip())
        out += [f"{indent}{line}" for line in wrapped[1:]]
    return "\n".join(out) + "\n"


PIECES = ["a", "bc", " ", "  ", "中文", "咖啡馆的", "é", "x" * 45, "\u200b", "😀", "e\u0301",
          "ｗｉｄｅ", "\x1b[31m", "\t", "word ", "\u3000", "👩\u200d💻", "❤\ufe0f", "\u200d",
          "\ufe0f", "ก่", "דָּג", "\u00ad", "\u2028"]


def test_every_character_and_mixed_texts_measure_as_rich_measures_them():
    for code in range(0x20000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        assert display._cells(chr(code)) == cell_len(chr(code)), hex(code)
        assert display._each_cells(chr(code)) == [cell_len(chr(code))], hex(code)
    rng = random.Random(11)
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        assert display._cells(text) == cell_len(text), text
        assert display._each_cells(text) == [cell_len(ch) for ch in text], text


def test_many_rows_draw_the_same_columns_as_rich_measures_give():
    rng = random.Random(5)

    def text(n: int) -> str:
        return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, n)))

    for _ in range(1500):
        cells = [(text(5) or "n.md", str(rng.randint(0, 200)), text(3)[:16],
                  " ".join(text(30).split()) if rng.random() < 0.7 else text(30))
                 for _ in range(rng.randint(0, 12))]
        width = rng.randint(10, 200)
        assert display.scene_columns(cells, width) == _reference_columns(cells, width)
