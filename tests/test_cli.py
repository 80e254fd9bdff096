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
from clirunner import CheckedRunner

import scene_engine.store.history as history
from scene_engine.cli import app
from scene_engine.services.doctor import check_store
from scene_engine.store.store import open_store

runner = CheckedRunner()


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

@pytest.mark.slow
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
    import scene_engine.services.backends
    import scene_engine.services.status

    scenes(root, "add", "-", stdin=memories(5))
    before = files_of(root)
    monkeypatch.setattr(scene_engine.services.backends, "make_backend", lambda *a, **k: BrokenBackend())
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
    import scene_engine.services.backends
    import scene_engine.services.status

    class SchemaBackend:
        name = "schema"

        def run(self, job):
            raise schema_error()

    scenes(root, "add", "-", stdin=memories(2))
    monkeypatch.setattr(scene_engine.services.backends, "make_backend", lambda *a, **k: SchemaBackend())
    failed = scenes(root, "run")
    monkeypatch.setattr(scene_engine.services.status, "status", lambda store: (_ for _ in ()).throw(
        schema_error()))
    escaped = scenes(root, "status")                 # one that no layer caught on its way up
    for result in (failed, escaped):
        assert result.exit_code == 1, result.output
        assert "title: String should have at most 10 characters" in result.stderr
        assert "pydantic" not in result.output and "For further information" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.slow
def test_the_installed_command_runs_as_a_subprocess(root, tmp_path):
    """`python -m`-free entry point: the console script contract, exit codes included."""
    data = tmp_path / "in.jsonl"
    data.write_text(memories(3), encoding="utf-8")
    env = {**os.environ, "SCENE_ENGINE_DIR": str(root)}
    # What pyproject's `scenes` script runs (handlers before the command line is imported).
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    done = subprocess.run([*command, "ingest", str(data)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = subprocess.run([*command, "status", "--json"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert json.loads(out.stdout)["pending"] == 0
    bad = subprocess.run([*command, "--dir", str(tmp_path / "nowhere"), "list"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "nowhere does not exist" in bad.stderr
    assert "Traceback" not in bad.stderr


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
        if os.path.isabs(dst):    # the engine's own files (marker, caches), not a scene's
            return real_replace(src, dst, *args, **kwargs)
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


# ---------------------------------------------------------------- what a person expects of a CLI

COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands)
ODD_METAVARS = ("<str>", "<bool>", "<int", "<float", "<path>", "{", "}")


def bad_wraps(text: str, width: int) -> list[str]:
    """Lines of a help text that a greedy wrap at ``width`` would not have ended there (the
    next word fitted), and words broken at a hyphen. Commands lists and new option rows are
    rows of their own, not continuations."""
    bad, section = [], "usage"
    lines = text.splitlines()
    for prev, line in zip(lines, lines[1:], strict=False):
        if line and not line.startswith(" "):
            section = line
            continue
        if not prev.strip() or not line.strip() or section.startswith("Commands"):
            continue
        indent = len(line) - len(line.lstrip())
        if section.startswith(("Options", "Arguments")) and indent <= 2:
            continue                                   # the next row, not a continuation
        if prev[-1:] == "-" and prev[-2:-1].isalpha() and line.lstrip()[:1].isalpha():
            bad.append(f"{prev!r} / {line!r}: a word cut at its hyphen")
        elif len(prev) + (2 if line.lstrip()[:1] == "[" else 1) + len(line.split()[0]) <= width:
            # (click puts two spaces before the "[default: ...]" note)
            bad.append(f"{prev!r} / {line!r}: the next word fitted")
    return bad


def test_version_and_dash_h_on_every_command_with_plain_help():
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and "0.1.0" in version.stdout
    assert "search" in COMMANDS and "log" in COMMANDS and len(COMMANDS) >= 20
    for name in [None, *COMMANDS]:
        for width in (60, 80, 100):
            args = ["-h"] if name is None else [name, "-h"]
            result = runner.invoke(app, args, terminal_width=width)
            assert result.exit_code == 0, (args, result.output)
            text = result.stdout
            assert text.startswith("Usage:") and "Show this message and exit." in text, args
            assert not [m for m in ODD_METAVARS if m in text], (args, text)
            assert not bad_wraps(text, width), (args, width, bad_wraps(text, width), text)
            assert max(len(line) for line in text.splitlines()) <= width, (args, width, text)
            if name is None and width >= 80:          # each command's line whole, not cut
                assert "..." not in text.split("Commands:")[1], text


@pytest.mark.slow
def test_json_on_add_run_ingest_and_undo_is_one_document(root):
    added = scenes(root, "add", "-", "--json", stdin=memories(3))
    assert added.exit_code == 0, added.output
    report = json.loads(added.stdout)
    assert report.pop("commit") and report == {"added": 3, "ids": ["m0", "m1", "m2"], "known": 0,
                                               "duplicates": 0, "pending": 3}
    ran = scenes(root, "run", "--json", "--batch-size", "2")
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.stdout)
    numbers = [b["batch"] for b in report["committed"]]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 2
    assert sorted(m for b in report["committed"] for m in b["memories"]) == ["m0", "m1", "m2"]
    assert all(len(b["memories"]) <= 2 for b in report["committed"])
    assert all(len(b["commit"]) == 40 for b in report["committed"])
    assert (report["pending"], report["failed"]) == (0, None) and report["scenes"] >= 1
    ingested = scenes(root, "ingest", "-", "--json", stdin=memories(2, start=3))
    assert ingested.exit_code == 0, ingested.output
    both = json.loads(ingested.stdout)
    assert both["added"]["added"] == 2 and both["pending"] == 0
    assert sorted(m for b in both["committed"] for m in b["memories"]) == ["m3", "m4"]
    undone = scenes(root, "undo", "--json")
    assert undone.exit_code == 0, undone.output
    back = json.loads(undone.stdout)
    last = both["committed"][-1]
    assert (back["action"], back["batch"], back["memories"], back["pending"]) == \
        ("undo", last["batch"], len(last["memories"]), len(last["memories"]))
    assert git.Repo(root).commit(back["commit"]).message.startswith(f"undo batch {last['batch']}")


def test_run_json_says_what_failed_and_what_is_pending(root, monkeypatch):
    import scene_engine.services.backends
    import scene_engine.services.status

    scenes(root, "add", "-", stdin=memories(5))
    monkeypatch.setattr(scene_engine.services.backends, "make_backend", lambda *a, **k: BrokenBackend())
    result = scenes(root, "run", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)                    # one document, failure and all
    assert report["committed"] == [] and report["pending"] == 5
    assert "provider unreachable" in report["failed"]
    assert "provider unreachable" in result.stderr


def test_counts_agree_with_their_nouns(root):
    one = scenes(root, "add", "-", stdin=memories(1))
    assert "added 1 memory (" in one.stdout, one.stdout
    ran = scenes(root, "run")
    assert "1 batch committed; 0 memories pending; 1 scene" in ran.stdout, ran.stdout
    undone = scenes(root, "undo")
    assert "1 memory pending again" in undone.stdout, undone.stdout
    again = scenes(root, "run")
    outputs = [one.output, ran.output, undone.output, again.output,
               scenes(root, "log").output, scenes(root, "doctor").output,
               scenes(root, "reindex").output]
    for text in outputs:
        assert "(s)" not in text and "(es)" not in text, text
        assert "1 memories" not in text and "1 scenes" not in text and "1 batches" not in text


def test_list_into_a_file_keeps_whole_names(root, tmp_path):
    long = "a-scene-whose-name-is-much-longer-than-any-table-column-would-allow-here.md"
    (root / "scenes" / long).write_text("---\nsummary: A scene with a long name.\n---\nBody.\n",
                                        encoding="utf-8")
    scenes(root, "add", "-", stdin=memories(2))
    scenes(root, "run")
    names = open_store(root).scene_names()
    listed = scenes(root, "list")
    assert listed.exit_code == 0
    for name in names:
        assert name in listed.stdout, (name, listed.stdout)
    out = tmp_path / "list.txt"
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    with out.open("w") as sink:
        done = subprocess.run([*command, "--dir", str(root), "list"], stdout=sink, timeout=60)
    assert done.returncode == 0
    text = out.read_text("utf-8")
    assert all(name in text for name in names) and "…" not in text


@pytest.mark.parametrize("args", [["search", ""], ["search", "   "], ["search", "", "--json"],
                                  ["search", "", "--memories"], ["recall", ""],
                                  ["recall", " ", "--json"]])
def test_an_empty_query_is_a_usage_error(root, args):
    result = scenes(root, *args)
    assert result.exit_code == 2 and "empty" in result.stderr, result.output
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    done = subprocess.run([*command, "--dir", str(root), *args], capture_output=True, text=True,
                          timeout=60)                    # the quick door says the same
    assert done.returncode == 2 and done.stderr == result.stderr, done
    assert done.stdout == result.stdout == ("" if "--json" not in args else done.stdout)
    if "--json" in args:                   # one JSON document, the failure included
        assert json.loads(done.stdout)["exit_code"] == 2


@pytest.mark.slow
def test_log_into_a_closed_pipe_exits_0(root):
    for start in range(0, 12, 4):
        scenes(root, "add", "-", stdin=memories(4, start=start))
        scenes(root, "run")
    assert len(scenes(root, "log").stdout.splitlines()) > 6
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    shell = " ".join(f"'{c}'" for c in command)
    piped = subprocess.run(["bash", "-c", f"{shell} --dir '{root}' log | head -1; "
                                          "exit ${PIPESTATUS[0]}"],
                           capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and len(piped.stdout.splitlines()) == 1, piped
    assert piped.stderr == "", piped.stderr
    for args in (["log"], ["log", "--json"], ["list"], ["-h"]):
        # The reader is gone before the first line is written: every write fails.
        child = subprocess.Popen([*command, "--dir", str(root), *args],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        child.stdout.close()
        err = child.stderr.read()
        assert child.wait(timeout=60) == 0 and err == b"", (args, err)


def test_plain_log_marks_a_persons_own_commit_as_a_hand_edit(root):
    scenes(root, "add", "-", stdin=memories(2))
    scenes(root, "run")
    scene = sorted((root / "scenes").glob("*.md"))[0]
    scene.write_text(scene.read_text("utf-8") + "\nMy own line.\n", encoding="utf-8")
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "vault backup", env={"GIT_AUTHOR_NAME": "Ana",
                                                     "GIT_AUTHOR_EMAIL": "ana@example.org",
                                                     "GIT_COMMITTER_NAME": "Ana",
                                                     "GIT_COMMITTER_EMAIL": "ana@example.org"})
    line = next(t for t in scenes(root, "log").stdout.splitlines() if "vault backup" in t)
    assert line.endswith("vault backup (hand edit)"), line


def test_the_progress_line_says_what_happens_and_draws_each_state_once():
    import io

    from rich.console import Console

    from scene_engine.batch.contract import BatchResult
    from scene_engine.cli.display import RunDisplay

    def result(number: int, ids: list[str]) -> BatchResult:
        return BatchResult(number=number, memory_ids=ids, counts={"updated": 1},
                           summary="", commit="0" * 40, backend="offline")

    out = io.StringIO()
    screen = Console(file=out, force_terminal=True, width=100)
    with RunDisplay(2, 7, console=screen, size=5) as display:
        display.batch = 4
        display.starting()                                   # the offline backend: no events
        display.advance(result(4, [f"m{i}" for i in range(5)]))
        display.listener("request", {"call": 1, "messages": 2})   # a model's batch says more
        display.listener("tool", {"name": "read_file", "arguments": "{}", "result": "",
                                  "refused": False, "text_fallback": False})
        display.listener("tool", {"name": "read_file", "arguments": "{}", "result": "",
                                  "refused": False, "text_fallback": False})   # no change
    text = out.getvalue()
    assert "starting" not in text
    for state in ("batch 4: folding 5 memories", "batch 5: folding 2 memories",
                  "batch 5: waiting for the model (request 1)",
                  "batch 5: model working: read_file"):
        assert text.count(state) == 1, (state, text)
    assert text.count("batch 4: 5 memories, 1 updated") == 1
    # The last planned batch (``--max-batches``) announces no batch after it.
    out = io.StringIO()
    with RunDisplay(1, 20, console=Console(file=out, force_terminal=True, width=100),
                    size=5) as display:
        display.batch = 1
        display.starting()
        display.advance(result(1, [f"m{i}" for i in range(5)]))
    assert "batch 2: folding" not in out.getvalue(), out.getvalue()


def test_an_emoji_in_a_memory_is_written_as_itself_in_the_scene_header(root):
    memory = '{"content":"Adopted a kitten named Miso 🐱 from the shelter in Braga."}'
    assert scenes(root, "ingest", "-", stdin=memory + "\n").exit_code == 0
    (scene,) = (root / "scenes").glob("*.md")
    header = scene.read_text("utf-8").split("---")[1]
    assert "Miso 🐱 from" in header and "\\U" not in header
