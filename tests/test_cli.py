"""The command line contract (DESIGN.md "Command line") and crash safety of `add` and a batch.

Exit codes: 0 success, 1 failure of the operation, 2 bad usage or bad input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

import scene_engine.history as history
from scene_engine.cli import app
from scene_engine.doctor import check_store
from scene_engine.store import open_store

runner = CliRunner()


TOPICS = ("walked the dog in the park", "cooked curry for dinner", "我在图书馆看书",
          "fixed a bug in the payment service")


def memories(n: int, start: int = 0, topics: tuple[str, ...] = TOPICS) -> str:
    """JSONL of ``n`` memories with ids m<start>..., cycling through ``topics``."""
    return "\n".join(json.dumps({"id": f"m{i}", "content": f"{topics[i % len(topics)]} ({i})",
                                 "created_at": 1_700_000_000 + 3600 * i}, ensure_ascii=False)
                     for i in range(start, start + n))


@pytest.fixture
def root(tmp_path) -> Path:
    path = tmp_path / "store"
    assert runner.invoke(app, ["init", str(path)]).exit_code == 0
    return path


def scenes(root: Path, *args: str, stdin: str | None = None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def status(root: Path) -> dict:
    result = scenes(root, "status", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def files_of(root: Path) -> dict[str, bytes]:
    """Every scene file, persona, journal segment and state.json: what a failure must keep."""
    paths = [*root.glob("scenes/*.md"), *root.glob("memories/*.jsonl"), root / "persona.md",
             root / ".scene-engine/state.json"]
    return {str(p.relative_to(root)): p.read_bytes() for p in paths if p.exists()}


# ---------------------------------------------------------------- exit codes

def test_ingest_is_add_plus_run(root):
    result = scenes(root, "ingest", "-", stdin=memories(30))
    assert result.exit_code == 0, result.output
    data = status(root)
    assert data["pending"] == 0
    # 30 memories at 20 a batch: at least 2 batches (more when the offline backend defers
    # unrelated memories to open scenes of their own).
    assert data["batches"] >= 2
    assert data["scenes"] >= 1
    assert scenes(root, "doctor").exit_code == 0


def test_run_with_nothing_pending_exits_0_and_commits_nothing(root):
    head = git.Repo(root).head.commit.hexsha
    result = scenes(root, "run")
    assert result.exit_code == 0, result.output
    assert git.Repo(root).head.commit.hexsha == head


def test_run_honours_batch_size_and_max_batches(root):
    # One topic, so the offline backend folds every memory it takes (none deferred).
    scenes(root, "add", "-", stdin=memories(30, topics=("walked the dog in the park",)))
    assert scenes(root, "run", "--batch-size", "7", "--max-batches", "2").exit_code == 0
    assert (status(root)["pending"], status(root)["batches"]) == (16, 2)


@pytest.mark.parametrize("args", [
    ["run", "--backend", "bogus"],
    ["run", "--batch-size", "0"],
    ["run", "--max-batches", "nope"],
    ["frobnicate"],
    ["add", "/no/such/file.jsonl"],
    ["show", "no-such-scene"],
])
def test_bad_usage_exits_2(root, args):
    before = files_of(root)
    result = scenes(root, *args)
    assert result.exit_code == 2, result.output
    assert files_of(root) == before


def test_bad_input_exits_2_and_adds_nothing(root):
    result = scenes(root, "ingest", "-", stdin='{"content": "ok"}\n{"content": ""}\n')
    assert result.exit_code == 2
    assert status(root)["pending"] == 0 and status(root)["batches"] == 0


def test_doctor_exits_1_when_an_invariant_is_broken(root):
    scenes(root, "ingest", "-", stdin=memories(10))
    assert scenes(root, "doctor").exit_code == 0
    scene = next((root / "scenes").glob("*.md"))
    scene.write_text("---\nsummary: [unclosed\n---\nbody\n", encoding="utf-8")
    result = scenes(root, "doctor", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and any(scene.name in p for p in report["problems"])


class BrokenBackend:
    """A backend whose model call fails (as a provider outage would, after its retries)."""

    name = "broken"

    def run(self, job):
        job.box.execute("write_to_file", {"path": "x.md",
                                          "content": "---\nsummary: s\n---\nhalf done\n"})
        raise ConnectionError("provider unreachable (simulated)")


def test_a_failing_backend_exits_1_and_keeps_memories_pending(root, monkeypatch):
    import scene_engine.engine

    scenes(root, "add", "-", stdin=memories(5))
    before = files_of(root)
    monkeypatch.setattr(scene_engine.engine, "make_backend", lambda *a, **k: BrokenBackend())
    result = scenes(root, "run")
    assert result.exit_code == 1, result.output
    assert "provider unreachable" in result.stderr
    assert files_of(root) == before
    assert status(root)["pending"] == 5


def schema_error():
    """A pydantic ``ValidationError``, as a backend or the engine's own schema raises one."""
    from pydantic import BaseModel, Field

    class Reply(BaseModel):
        title: str = Field(max_length=10)

    try:
        Reply(title="a title far over the limit")
    except Exception as exc:
        return exc
    raise AssertionError("pydantic accepted it")


def test_a_schema_error_reaches_a_person_as_one_plain_line(root, monkeypatch):
    # pydantic's own text carries a help URL and a dump of the input: a person reads neither.
    import scene_engine.engine

    class SchemaBackend:
        name = "schema"

        def run(self, job):
            raise schema_error()

    scenes(root, "add", "-", stdin=memories(2))
    monkeypatch.setattr(scene_engine.engine, "make_backend", lambda *a, **k: SchemaBackend())
    failed = scenes(root, "run")
    monkeypatch.setattr(scene_engine.engine, "status", lambda store: (_ for _ in ()).throw(
        schema_error()))
    escaped = scenes(root, "status")                 # one that no layer caught on its way up
    for result in (failed, escaped):
        assert result.exit_code == 1, result.output
        assert "title: String should have at most 10 characters" in result.stderr
        assert "pydantic" not in result.output and "For further information" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_installed_command_runs_as_a_subprocess(root, tmp_path):
    """`python -m`-free entry point: the console script contract, exit codes included."""
    data = tmp_path / "in.jsonl"
    data.write_text(memories(3), encoding="utf-8")
    env = {**os.environ, "SCENE_ENGINE_DIR": str(root)}
    # What pyproject's `scenes` script runs (handlers before the command line is imported).
    command = [sys.executable, "-c", "from scene_engine.entry import main; main()"]
    done = subprocess.run([*command, "ingest", str(data)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([*command, "status", "--json"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert json.loads(out.stdout)["pending"] == 0
    bad = subprocess.run([*command, "--dir", str(tmp_path / "nowhere"), "list"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a scene store" in bad.stderr


# ---------------------------------------------------------------- crash safety

def commit_fails_when(monkeypatch, prefix: str) -> None:
    """Make ``history.commit`` and ``history.commit_files`` write nothing and raise for
    messages starting with ``prefix``: the files of the change are already on disk."""
    for name in ("commit", "commit_files"):
        real = getattr(history, name)

        def failing(repo, message, *args, _real=real, **kwargs):
            if message.startswith(prefix):
                raise history.HistoryError("simulated crash before the commit")
            return _real(repo, message, *args, **kwargs)

        monkeypatch.setattr(history, name, failing)


def test_an_add_that_dies_before_its_commit_is_rolled_back_by_the_next_command(root,
                                                                               monkeypatch):
    scenes(root, "ingest", "-", stdin=memories(20))
    before, head = files_of(root), git.Repo(root).head.commit.hexsha

    commit_fails_when(monkeypatch, "add:")
    failed = scenes(root, "add", "-", stdin=memories(5, start=20))
    assert failed.exit_code == 1
    assert files_of(root) != before                     # the journal and state were written
    assert any("interrupted" in p for p in check_store(open_store(root)))
    monkeypatch.undo()
    no_git_identity_again(monkeypatch, root)

    # The next command under the lock rolls the half-done add back before its own work.
    again = scenes(root, "add", "-", stdin=memories(2, start=100))
    assert again.exit_code == 0, again.output
    assert status(root)["pending"] == 2
    assert git.Repo(root).head.commit.parents[0].hexsha == head
    assert check_store(open_store(root)) == []
    # The lost add can simply be sent again.
    assert scenes(root, "add", "-", stdin=memories(5, start=20)).exit_code == 0
    assert status(root)["pending"] == 7


def no_git_identity_again(monkeypatch, root: Path) -> None:
    """``monkeypatch.undo`` also restored the environment; keep git identity-free."""
    monkeypatch.setenv("HOME", str(root.parent))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")


def test_a_batch_that_dies_before_its_commit_leaves_the_store_as_before(root, monkeypatch):
    scenes(root, "ingest", "-", stdin=memories(20))
    scenes(root, "add", "-", stdin=memories(20, start=20))
    before, head = files_of(root), git.Repo(root).head.commit.hexsha

    commit_fails_when(monkeypatch, "batch")
    failed = scenes(root, "run")
    assert failed.exit_code == 1
    assert "simulated crash" in failed.output
    # The batch wrote its scenes and state, then rolled them back when the commit failed.
    assert files_of(root) == before
    monkeypatch.undo()
    no_git_identity_again(monkeypatch, root)

    # `add` of a known id does nothing of its own but recovers first.
    assert scenes(root, "add", "-", stdin=memories(1, start=20)).exit_code == 0
    assert files_of(root) == before
    assert git.Repo(root).head.commit.hexsha == head
    assert status(root)["pending"] == 20
    assert check_store(open_store(root)) == []
    assert not git.Repo(root).is_dirty(untracked_files=True)

    assert scenes(root, "run").exit_code == 0
    assert status(root)["pending"] == 0
    assert check_store(open_store(root)) == []


def test_a_rename_failing_midway_through_apply_writes_nothing(root, monkeypatch):
    import sandbox.atomic

    scenes(root, "ingest", "-", stdin=memories(20))
    scenes(root, "add", "-", stdin=memories(20, start=20))
    before = files_of(root)
    real_replace, calls = os.replace, []

    def flaky_replace(src, dst, *args, **kwargs):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device (simulated)")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(sandbox.atomic.os, "replace", flaky_replace)
    failed = scenes(root, "run", "--batch-size", "20")
    assert failed.exit_code != 0
    monkeypatch.undo()
    no_git_identity_again(monkeypatch, root)
    assert len(calls) >= 2, "the batch never reached a second rename: test does not bite"

    assert scenes(root, "add", "-", stdin=memories(1, start=20)).exit_code == 0
    assert files_of(root) == before
    assert status(root)["pending"] == 20
    assert check_store(open_store(root)) == []
    assert not list((root / "scenes").glob(".*.tmp"))
