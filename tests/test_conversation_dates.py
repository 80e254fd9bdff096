"""A transcript in any common date form is a transcript (issue 37, part 3).

A file whose first line is ``[8 May 2023]`` was read as JSON (it starts with ``[``) and
refused. Now a file is JSON only when it opens as JSON does, and a date line is read in the
forms people write one: the README's (``2026-11-30``, ``[8 May 2023]``), LoCoMo's, headings,
rules, emphasis, weekdays, ordinals, times of day, Chinese.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.extraction.conversation import ConversationInputError, read_conversation
from scene_engine.extraction.dateline import date_line

runner = CheckedRunner()

MAY_8 = [
    "2023-05-08", "[8 May 2023]", "[2023-05-08]", "--- 8 May 2023 ---", "# 8 May 2023",
    "## 8 May 2023", "8 May 2023", "8 May, 2023", "May 8, 2023", "May 8 2023",
    "[May 8, 2023]", "(8 May 2023)", "=== 2023-05-08 ===", "**8 May 2023**",
    "*Monday, 8 May 2023*", "Monday, May 8th, 2023", "Mon 8 May 2023", "8th May 2023",
    "8 May 2023 (Monday)", "— 8 May 2023 —", "2023/05/08", "2023.05.08", "2023-5-8",
    "2023年5月8日", "【2023年5月8日 星期一】", "Date: 8 May 2023", "> 8 May 2023",
    "8 May 2023.", "  [ 8 May 2023 ]  ",
]
AT_TIME = [   # (line, hour, minute)
    ("1:56 pm on 8 May, 2023", 13, 56), ("[1:56 PM on 8 May, 2023]", 13, 56),
    ("2023-05-08 14:05", 14, 5), ("[2023-05-08 14:05]", 14, 5),
    ("8 May 2023 14:05", 14, 5), ("8 May 2023, 2:05 pm", 14, 5),
    ("May 8, 2023 at 2:05 PM", 14, 5), ("8 May 2023 2pm", 14, 0),
    ("# Monday, May 8th, 2023, 9:30 a.m.", 9, 30),
]
NOT_A_DATE = ["Ana: hi", "8 May", "May 2023", "2023", "Ana: 8 May 2023", "[Ana]: hi",
              "I moved on 8 May 2023", "8 May 2023 25:00", "Sunday", "30 February 2023",
              "8/5/2023"]


@pytest.mark.parametrize("line", MAY_8)
def test_a_date_line_in_any_common_form_names_its_day(line):
    assert date_line(line) == datetime(2023, 5, 8, tzinfo=UTC)


@pytest.mark.parametrize("line, hour, minute", AT_TIME)
def test_a_date_line_with_a_time_of_day_keeps_it(line, hour, minute):
    assert date_line(line) == datetime(2023, 5, 8, hour, minute, tzinfo=UTC)


def test_a_date_line_with_a_zone_keeps_it():
    found = date_line("2023-05-08T14:05:00+02:00")
    assert found is not None and found.utcoffset().total_seconds() == 7200


@pytest.mark.parametrize("line", NOT_A_DATE)
def test_a_line_that_is_not_only_a_whole_date_is_none(line):
    assert date_line(line) is None


@pytest.mark.parametrize("first", MAY_8 + [line for line, _, _ in AT_TIME])
def test_a_transcript_that_starts_with_a_date_line_is_a_transcript(first):
    text = f"{first}\nAna: I moved to Porto last week.\n\n[9 May 2023]\nBen: Nice, send photos.\n"
    messages = read_conversation(text.encode(), "chat.txt")
    assert [(m.speaker, m.created_at.date().isoformat(), m.session) for m in messages] == [
        ("Ana", "2023-05-08", 1), ("Ben", "2023-05-09", 2)]


@pytest.mark.parametrize("data", [
    '[{"role": "user", "content": "I moved to Porto."}]',
    '[\n  {"role": "user", "content": "I moved to Porto."}\n]',
    '  \n[ {"role": "user", "content": "I moved to Porto."} ]',
    '{"role": "user", "content": "I moved to Porto."}\n{"role": "assistant", "content": "Nice."}',
    '{\n  "role": "user", "content": "I moved to Porto."\n}',
])
def test_json_is_still_json(data):
    messages = read_conversation(data.encode(), "chat.json")
    assert messages[0].text == "I moved to Porto." and messages[0].id == "chat#1"


@pytest.mark.parametrize("data, says", [
    ('[{"role": "user", "content": "a"},\n  {"role": ', "line 2"),
    ("[]", "no message"),
    ('{"role": "user"', "line 1"),
])
def test_broken_json_is_still_refused_as_json(data, says):
    with pytest.raises(ConversationInputError) as refused:
        read_conversation(data.encode(), "chat.json")
    assert says in str(refused.value)
    assert "Name: text" not in str(refused.value)


@pytest.mark.parametrize("first", ["[8 May 2023]", "[2023-05-08]", "--- 8 May 2023 ---",
                                   "# 8 May 2023"])
def test_extract_takes_the_transcript_from_the_command_line(tmp_path, first):
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    path = tmp_path / "chat.txt"
    path.write_text(f"{first}\nAna: I moved to Porto last week.\n", "utf-8")
    result = runner.invoke(app, ["--dir", str(root), "extract", str(path), "--json"])
    assert result.exit_code == 0, result.output
    lines = (root / "memories" / "00000.jsonl").read_text("utf-8").splitlines()
    record = json.loads(lines[-1])
    assert "Porto" in record["content"] and record["created_at"].startswith("2023-05-08")
