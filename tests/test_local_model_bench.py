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
    assert "Every memory accounted for: yes (2 in the journal, 2 still pending" in report
    assert fake_llm.requests                              # it really asked the server


def test_without_a_server_or_model_file_it_skips_with_a_reason(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["local_model.py"])
    assert local_model.main() == 0
    assert "skipped: no GGUF model file" in capsys.readouterr().out
