"""Shared pytest fixtures: the scripted fake model server (see tests/fakellm.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakellm import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running FakeLLM on 127.0.0.1:<free port>; script it, point litellm at ``api_base``.

    Use model ``openai/test-model`` and any api_key (e.g. ``"sk-test"``).
    """
    with FakeLLM() as server:
        yield server
