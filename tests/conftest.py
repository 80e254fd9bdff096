"""Shared pytest fixtures: no git identity for any test, nothing read or written outside the
clone, and the scripted fake model server (see tests/fakellm.py)."""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakellm import FakeLLM
from hypothesis import settings

# Property tests draw the same examples every run, so CI cannot fail on a draw no one has seen
# (it once drew U+1D1BB); `HYPOTHESIS_PROFILE=explore pytest` draws new ones to hunt with.
settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def encoder_cache(tmp_path_factory) -> Path:
    """One folder for the sentence encoder's prepared copy (``SCENE_ENGINE_CACHE``,
    scene_engine.index.encoder_cache) for the whole run, as a user's cache is kept between
    commands. In each test's empty HOME every process that needed the encoder loaded it the
    package's slow way and wrote an 80 MB copy beside it. tests/test_encoder_cache.py names
    its own folders, and tests the first load there."""
    return tmp_path_factory.mktemp("encoder-cache")


@pytest.fixture(autouse=True)
def no_git_identity(tmp_path_factory, encoder_cache) -> Iterator[None]:
    """Every test runs as on a fresh machine: HOME is an empty folder, git reads no system or
    global config (so no identity), and no store is chosen by the environment. A patch of its
    own, not the test's ``monkeypatch``: a test's ``monkeypatch.undo()`` must not bring the
    real HOME (and its ~/.gitconfig, outside the clone) back. (The encoder's cache is the
    run's one folder: ``encoder_cache``.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        patch.setenv("SCENE_ENGINE_CACHE", str(encoder_cache))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
        for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                     "GIT_COMMITTER_EMAIL", "EMAIL", "SCENE_ENGINE_DIR"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running FakeLLM on 127.0.0.1:<free port>; script it, point litellm at ``api_base``.

    Use model ``openai/test-model`` and any api_key (e.g. ``"sk-test"``).
    """
    with FakeLLM() as server:
        yield server


# ---------------------------------------------------------------- nothing outside the clone

REPOSITORY = Path(__file__).resolve().parents[1]
# What a test may open: the clone, temporary folders (tmp_path, the test's HOME), Python and
# its packages, and the system's own files. Not the folders beside the clone: a person who
# clones the project has no ../shared/data (benchmarks may read it; tests never).
_SYSTEM = ("/dev", "/proc", "/sys", "/etc", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/run")
_PYTHON = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
_ALLOWED = tuple(sorted({os.path.join(p, "") for root in
                         (str(REPOSITORY), tempfile.gettempdir(), *_PYTHON, *_SYSTEM)
                         for p in (root, os.path.realpath(root))}))
_OUTSIDE: list[str] = []


def _watch_opens(event: str, args: tuple) -> None:
    """Audit hook: note every file this process opens outside ``_ALLOWED``."""
    if event != "open":
        return
    try:
        target = args[0]
        if target is None or isinstance(target, int):   # a file descriptor
            return
        path = os.path.abspath(os.fsdecode(os.fspath(target)))
        # A probe of a file that is not there (a library looking for a git folder) reads
        # nothing; one that is there is what a fresh clone would lack.
        if not (path + os.sep).startswith(_ALLOWED) and os.path.exists(path):
            _OUTSIDE.append(path)
    except Exception:          # never let the watch break an open
        return


sys.addaudithook(_watch_opens)


@pytest.fixture(autouse=True)
def nothing_outside_the_clone() -> Iterator[None]:
    """Fail a test that opened a file outside the repository (and temporary folders, Python,
    the system): the README's test command must pass on a fresh clone."""
    start = len(_OUTSIDE)
    yield
    found = sorted(set(_OUTSIDE[start:]))
    del _OUTSIDE[start:]
    assert not found, f"the test opened files outside the clone: {found[:5]}"
