"""Shared pytest fixtures: no git identity for any test, and the scripted fake model server
(see tests/fakellm.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from fakellm import FakeLLM
from hypothesis import settings

# Property tests draw the same examples every run, so CI cannot fail on a draw no one has seen
# (it once drew U+1D1BB); `HYPOTHESIS_PROFILE=explore pytest` draws new ones to hunt with.
settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def no_git_identity(tmp_path_factory, monkeypatch) -> None:
    """Every test runs as on a fresh machine: HOME is an empty folder, git reads no system or
    global config (so no identity), and no store is chosen by the environment."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "EMAIL", "SCENE_ENGINE_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running FakeLLM on 127.0.0.1:<free port>; script it, point litellm at ``api_base``.

    Use model ``openai/test-model`` and any api_key (e.g. ``"sk-test"``).
    """
    with FakeLLM() as server:
        yield server
