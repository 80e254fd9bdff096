"""bench/local_model.py, run against the scripted server standing in for a local model: the
report says what each batch did and whether every memory is accounted for."""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
local_model = pytest.importorskip("local_model")


def test_a_model_that_never_uses_its_tools_fails_its_batches_and_loses_nothing(fake_llm):
    from fakellm import reply

    fake_llm.repeat(reply(content="I have noted these memories."))
    args = Namespace(model="openai/local", memories=2, batch_size=2, call_timeout=30.0,
                     batch_timeout=60.0)
    report = local_model.run(fake_llm.api_base, args)
    rows = [line for line in report.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and all("| failed |" in row for row in rows)   # tried twice, stops
    assert "Every memory accounted for: yes (2 in the journal, 2 still pending" in report
    assert fake_llm.requests                              # it really asked the server


def test_without_a_server_or_model_file_it_skips_with_a_reason(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["local_model.py"])
    assert local_model.main() == 0
    assert "skipped: no GGUF model file" in capsys.readouterr().out
