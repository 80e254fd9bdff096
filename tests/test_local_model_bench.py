"""bench/local_model.py, run against the scripted server standing in for a local model: the
report says what each batch did and whether every memory is accounted for."""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
local_model = pytest.importorskip("local_model")


def locomo_file(folder: Path, facts: int = 4) -> Path:
    """A little LoCoMo-shaped file (one sample, one session, ``facts`` observations): what the
    bench reads from ../shared/data, made here, so the test needs nothing outside the clone."""
    sample = {"sample_id": "conv-t",
              "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                               "session_1_date_time": "1:56 pm on 8 May, 2023",
                               "session_1": [{"speaker": "Ana", "dia_id": f"D1:{i + 1}",
                                              "text": f"Fact number {i} about the garden."}
                                             for i in range(facts)]},
              "observation": {"session_1_observation": {
                  "Ana": [[f"Ana planted bed {i} with tomatoes.", f"D1:{i + 1}"]
                          for i in range(facts)]}},
              "qa": []}
    path = folder / "locomo-sample.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_model_that_never_uses_its_tools_fails_its_batches_and_loses_nothing(fake_llm,
                                                                               tmp_path):
    from fakellm import reply

    fake_llm.repeat(reply(content="I have noted these memories."))
    args = Namespace(model="openai/local", memories=2, batch_size=2, call_timeout=30.0,
                     batch_timeout=60.0, data=locomo_file(tmp_path))
    report = local_model.run(fake_llm.api_base, args)
    rows = [line for line in report.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and all("| failed |" in row for row in rows)   # tried twice, stops
    # the why column is the error itself, not the hint or progress line printed after it
    whys = [row.rsplit("|", 2)[1].strip() for row in rows]
    assert all(why.startswith("batch 1 ") and not why.endswith(":") for why in whys), whys
    assert "Every memory accounted for: yes (2 in the journal, 2 still pending" in report
    assert fake_llm.requests                              # it really asked the server


def test_without_a_server_or_model_file_it_skips_with_a_reason(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["local_model.py"])
    assert local_model.main() == 0
    assert "skipped: no GGUF model file" in capsys.readouterr().out


def test_the_server_is_started_with_a_tool_calling_chat_format():
    command = local_model.server_command(Path("python"), Path("m.gguf"), 8080)
    at = command.index("--chat_format")
    assert command[at + 1] == "chatml-function-calling"


def test_a_server_that_stops_is_reported_by_its_error_line(tmp_path):
    # A stand-in for llama-cpp-python that fails as a missing chat format or a bad model file
    # does: a traceback, then its last line, then nothing listens.
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'llama_model_load: loading model' >&2\n"
                    "echo 'Traceback (most recent call last):' >&2\n"
                    "echo '  File \"server.py\", line 1' >&2\n"
                    "echo 'ValueError: Failed to load model from file: m.gguf' >&2\n"
                    "echo 'shutting down' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SystemExit) as stopped:
        local_model.serve_gguf(tmp_path / "m.gguf", python=fake, wait=30)
    said = str(stopped.value)
    assert "stopped (exit 1): ValueError: Failed to load model from file: m.gguf" in said


@pytest.mark.parametrize("stderr, line", [
    ("batch 3: folding 10 memories\nerror: batch 3 failed: model refused\n"
     "10 memories still pending\n", "batch 3 failed: model refused"),
    ("Traceback (most recent call last):\nKeyError: 'x'\n", "KeyError: 'x'"),
    ("only this\n", "only this"),
    ("error: a | b\n", "a \\| b"),
    ("error: batch 1 breaks the scene rules:\n- m0 is not placed\n- m1 neither\nhint\n",
     "batch 1 breaks the scene rules: m0 is not placed; m1 neither"),
])
def test_the_why_column_is_the_error_line(stderr, line):
    assert local_model.error_line(stderr) == line
