"""Hooks for coding agents (issue 38, "Hooks"), driven as Claude Code drives them: the
hook's JSON on standard input in its documented shape (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``), the answer read back from standard output; and the plugin's
commands run exactly as its ``hooks/hooks.json`` names them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scene_engine.services import hooks
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

REPOSITORY = Path(__file__).resolve().parents[1]
PLUGIN = REPOSITORY / "integrations" / "claude-code"
FIXTURE = Path(__file__).parent / "fixtures" / "imports" / "claude-code.jsonl"


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "memory")


@pytest.fixture
def no_fold(monkeypatch):
    """In-process hooks start no background fold (the plugin test runs the real one)."""
    started = []
    monkeypatch.setattr(hooks, "_start_fold_at", lambda root: started.append(root) or True)
    return started


def hook_input(event: str, project: Path, transcript: Path | None = None, **more) -> str:
    payload = {"session_id": "5f0c1d2e-0000-4000-8000-000000000001", "cwd": str(project),
               "hook_event_name": event, "permission_mode": "default", **more}
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    return json.dumps(payload)


def turns_files(store) -> list[Path]:
    return sorted((hooks.hooks_dir(store) / "turns").glob("*.jsonl"))


# ---------------------------------------------------------------- SessionStart

def test_session_start_gives_the_recall_as_additional_context(store, tmp_path, no_fold):
    (store.root / "persona.md").write_text("Ana is a backend engineer who keeps retries "
                                           "at three.\n")
    project = tmp_path / "orca"
    project.mkdir()
    outcome = hooks.run_hook("session-start", hook_input("SessionStart", project,
                                                         source="startup"), store.root)
    answer = json.loads(outcome.stdout)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "keeps retries at three" in context and "orca" in context
    assert len(context) <= hooks.DEFAULT_BUDGET + len(hooks.HEADER) + 200
    assert outcome.notice == ""


def test_hooks_run_inside_a_process_leave_its_recall_by_meaning_on(store, tmp_path, no_fold,
                                                                   monkeypatch):
    """The hooks recall by words for speed; a host or test that runs them in-process keeps
    meaning for its own recalls afterwards (a leaked switch once emptied later recalls)."""
    from scene_engine.index.refresh import vectors_enabled

    monkeypatch.delenv("SCENE_ENGINE_SEMANTIC", raising=False)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    hooks.run_hook("session-start", hook_input("SessionStart", tmp_path), store.root)
    hooks.run_hook("stop", hook_input("Stop", tmp_path, transcript), store.root)
    hooks.fold(store.root)
    assert "SCENE_ENGINE_SEMANTIC" not in os.environ
    assert vectors_enabled()
    monkeypatch.setenv("SCENE_ENGINE_SEMANTIC", "on")   # a person's own choice stays
    hooks.run_hook("session-start", hook_input("SessionStart", tmp_path), store.root)
    assert os.environ["SCENE_ENGINE_SEMANTIC"] == "on"


def test_session_start_answers_again_from_what_it_kept_until_the_store_changes(
        store, tmp_path, monkeypatch, no_fold):
    from scene_engine.services import recall

    project = tmp_path / "orca"
    project.mkdir()
    said = hook_input("SessionStart", project)
    first = hooks.run_hook("session-start", said, store.root).stdout

    def refuse(*args, **kwargs):
        raise AssertionError("the store was read although nothing changed")

    monkeypatch.setattr(recall, "recall", refuse)
    assert hooks.run_hook("session-start", said, store.root).stdout == first
    (store.root / "persona.md").write_text("Ana moved the Orca builds to Bazel.\n")
    changed = hooks.run_hook("session-start", said, store.root)
    assert "skipped" in changed.notice            # it had to read the store: recall refused
    monkeypatch.undo()
    assert "Bazel" in hooks.run_hook("session-start", said, store.root).stdout


def test_no_store_or_a_broken_one_is_a_notice_never_a_failure(tmp_path, store, no_fold):
    project = tmp_path / "elsewhere"
    project.mkdir()
    missing = hooks.run_hook("session-start", hook_input("SessionStart", project))
    assert json.loads(missing.stdout)["hookSpecificOutput"]["additionalContext"] == ""
    notice = json.loads(missing.stdout)["systemMessage"]
    assert "no memory for this project" in notice
    # What to do, said once and in a hook's terms (an agent's hook has no --dir).
    assert notice.count("scenes init") == 1 and "--dir" not in notice and "((" not in notice
    (store.meta_dir / "config.toml").write_text("max_scenes = 'many'\n")
    broken = hooks.run_hook("stop", hook_input("Stop", project, FIXTURE), store.root)
    assert broken.notice.startswith("scene-engine:") and "\n" not in broken.notice
    assert hooks.run_hook("stop", "not json at all", store.root).notice
    assert hooks.run_hook("nonsense", "{}", store.root).notice.startswith("scene-engine:")


def _hook_process(event: str, stdin: str, env: dict) -> subprocess.CompletedProcess:
    """``scenes hook EVENT`` as a new process, as an agent starts it (the console script's
    entry: the hook door)."""
    return subprocess.run([sys.executable, "-c", "from scene_engine.cli.entry import main; "
                           "main()", "hook", event], input=stdin, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


@pytest.mark.parametrize("damage", ["missing", "broken settings", "torn state", "not a folder"])
def test_a_hook_process_on_a_missing_or_broken_store_exits_0_with_one_notice(
        tmp_path, store, damage):
    """A new process, as the agent runs it: whatever is wrong with the store, exit 0, one
    ``scene-engine:`` line on stderr, and at start a well-formed answer (no context)."""
    project = tmp_path / "orca"
    project.mkdir()
    where = store.root
    if damage == "missing":
        where = tmp_path / "nothing-here"
    elif damage == "broken settings":
        (store.meta_dir / "config.toml").write_text("max_scenes = 'many'\n")
    elif damage == "torn state":
        (store.meta_dir / "state.json").write_text('{"cursor": ')
    else:
        where = tmp_path / "a-file"
        where.write_text("not a store")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    env = {"SCENE_ENGINE_DIR": str(where), "SCENE_ENGINE_HOOK_FOLD": "host"}
    started = _hook_process("session-start", hook_input("SessionStart", project), env)
    assert started.returncode == 0, started.stderr
    answer = json.loads(started.stdout)
    assert answer["hookSpecificOutput"]["additionalContext"] == ""
    assert started.stderr.startswith("scene-engine:") and started.stderr.count("\n") == 1
    assert answer["systemMessage"] == started.stderr.strip()
    stopped = _hook_process("stop", hook_input("Stop", project, transcript), env)
    assert stopped.returncode == 0 and stopped.stdout == ""
    assert stopped.stderr.startswith("scene-engine:") and stopped.stderr.count("\n") == 1
    assert "Traceback" not in started.stderr + stopped.stderr


def test_a_new_process_gives_the_kept_answer_as_the_one_that_read_the_store(store, tmp_path):
    """The start after a start (nothing changed) answers from what was kept, word for word
    what the process that read the store answered."""
    (store.root / "persona.md").write_text("Ana keeps the Orca retries at three.\n")
    project = tmp_path / "orca"
    project.mkdir()
    env = {"SCENE_ENGINE_DIR": str(store.root)}
    said = hook_input("SessionStart", project)
    first = _hook_process("session-start", said, env)
    kept = list((hooks.hooks_dir(store) / "context").glob("*.json"))
    again = _hook_process("session-start", said, env)
    assert first.returncode == again.returncode == 0 and len(kept) == 1
    assert again.stdout == first.stdout and "retries at three" in first.stdout
    assert first.stderr == again.stderr == ""


# ---------------------------------------------------------------- Stop, SessionEnd, PreCompact

def test_stop_takes_the_new_turns_once_and_filtered(store, tmp_path, no_fold):
    transcript = tmp_path / "session.jsonl"
    lines = FIXTURE.read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:4]))
    said = hook_input("Stop", tmp_path, transcript, stop_hook_active=False)
    first = hooks.run_hook("stop", said, store.root)
    assert first.taken == 2 and first.folding and no_fold == [store.root]   # u1 and a1
    assert hooks.run_hook("stop", said, store.root).taken == 0                # nothing new
    secret = ('{"type":"user","uuid":"u9","sessionId":"s","timestamp":"2026-03-06T14:18:00Z",'
              '"message":{"role":"user","content":"Deploy with <private>my pin 4471</private> '
              'the blue-green script."}}\n')
    with transcript.open("a") as out:
        out.write("".join(lines[4:]) + secret + '{"type":"user","uuid":"half')   # half a line
    assert hooks.run_hook("session-end", said, store.root).taken == 3       # a2, u5, u9
    with transcript.open("a") as out:
        out.write('","message":{"role":"user","content":"Now whole."}}\n')
    assert hooks.run_hook("pre-compact", said, store.root).taken == 1
    written = "".join(p.read_text() for p in turns_files(store))
    assert "4471" not in written and "blue-green" in written
    assert "hunter22" not in written and "/clear" not in written              # tool, command


def test_a_resumed_session_replaying_old_turns_adds_nothing_known(store, tmp_path, no_fold,
                                                                 monkeypatch):
    monkeypatch.setenv("SCENE_ENGINE_HOOK_FOLD", "host")      # the journal is what counts
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    hooks.run_hook("stop", hook_input("Stop", tmp_path, transcript), store.root)
    hooks.fold(store.root)
    known = [m.id for m in Journal(store.memories_dir).all()]
    resumed = tmp_path / "resumed.jsonl"      # a new session id, the old turns copied in
    resumed.write_text(FIXTURE.read_text().replace("5f0c1d2e-0000-4000-8000-000000000001",
                                                   "77777777-0000-4000-8000-000000000002"))
    taken = hooks.run_hook("stop", json.dumps({"session_id": "77777777", "cwd": str(tmp_path),
                                               "transcript_path": str(resumed)}), store.root)
    assert taken.taken == 4
    hooks.fold(store.root)
    assert [m.id for m in Journal(store.memories_dir).all()] == known
    assert turns_files(store) == []


def test_fold_extracts_and_folds_or_leaves_it_to_the_host(store, tmp_path, no_fold,
                                                          monkeypatch):
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    hooks.run_hook("stop", hook_input("Stop", tmp_path, transcript), store.root)
    monkeypatch.setenv("SCENE_ENGINE_HOOK_FOLD", "host")
    hooks.fold(store.root)
    assert store.load_state().pending == 2 and turns_files(store) == []
    monkeypatch.delenv("SCENE_ENGINE_HOOK_FOLD")
    transcript.write_text(FIXTURE.read_text().replace('"u5"', '"u6"').replace(
        "three", "four"))
    hooks.run_hook("stop", json.dumps({"session_id": "other", "cwd": str(tmp_path),
                                       "transcript_path": str(transcript)}), store.root)
    hooks.fold(store.root)
    assert store.load_state().pending == 0 and list((store.root / "scenes").glob("*.md"))


def test_a_fold_while_another_holds_the_store_leaves_the_turns_to_it(store, tmp_path,
                                                                     no_fold, monkeypatch):
    """Stop, SessionEnd and PreCompact ending at once each start a fold: the one that holds
    the fold's lock takes every file; another leaves at once, reading and logging nothing."""
    from filelock import FileLock

    monkeypatch.setenv("SCENE_ENGINE_HOOK_FOLD", "host")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    hooks.run_hook("stop", hook_input("Stop", tmp_path, transcript), store.root)
    waiting = turns_files(store)
    held = FileLock(str(hooks.hooks_dir(store) / "fold.lock"))
    with held.acquire(timeout=5):
        assert hooks.fold(store.root).notice == ""
        assert turns_files(store) == waiting and store.load_state().pending == 0
    hooks.fold(store.root)
    assert turns_files(store) == [] and store.load_state().pending == 2


def test_codex_sessions_are_taken_too(store, tmp_path, no_fold):
    codex = Path(__file__).parent / "fixtures" / "imports" / "codex.jsonl"
    outcome = hooks.run_hook("stop", hook_input("Stop", tmp_path, codex), store.root)
    assert outcome.taken == 2
    [turns] = turns_files(store)
    assert "environment_context" not in turns.read_text()


# ---------------------------------------------------------------- the plugin, as Claude Code runs it

def test_the_plugin_is_what_claude_code_documents():
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "scene-engine"
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers["scene-engine"] == {"command": "scenes", "args": ["mcp"]}
    events = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(events) == {"SessionStart", "Stop", "SessionEnd", "PreCompact"}
    market = json.loads((REPOSITORY / ".claude-plugin" / "marketplace.json").read_text())
    assert (REPOSITORY / market["plugins"][0]["source"] / ".claude-plugin").is_dir()


def test_the_plugins_hook_commands_run_as_named(store, tmp_path):
    """Each command of hooks/hooks.json, run by a shell as Claude Code runs it, with a
    ``scenes`` on the PATH (this checkout's), the store chosen per person by
    SCENE_ENGINE_DIR: exit 0 every time, the SessionStart answer parsed back, and the Stop
    hook's turns folded into scenes by the fold it starts in the background."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "scenes"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from scene_engine.cli.entry '
                    f'import main; main()" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPOSITORY), "SCENE_ENGINE_DIR": str(store.root),
           "CLAUDE_PLUGIN_ROOT": str(PLUGIN)}
    project = tmp_path / "orca"
    project.mkdir()
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(FIXTURE.read_text())
    events = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]

    def run(event: str, **more) -> subprocess.CompletedProcess:
        [group] = events[event]
        [command] = group["hooks"]
        assert command["type"] == "command"
        return subprocess.run(command["command"], shell=True, cwd=project, env=env,
                              input=hook_input(event, project, transcript, **more),
                              capture_output=True, text=True, timeout=command["timeout"])

    stopped = run("Stop", stop_hook_active=False)
    assert stopped.returncode == 0 and stopped.stdout == "" and stopped.stderr == "", \
        stopped.stderr                          # the fold it started is no news
    deadline = time.monotonic() + 60            # the detached fold, with the store's backend
    while time.monotonic() < deadline and (turns_files(store)
                                           or store.load_state().pending
                                           or not list((store.root / "scenes").glob("*.md"))):
        time.sleep(0.2)
    assert not turns_files(store) and store.load_state().pending == 0, \
        (hooks.hooks_dir(store) / "fold.log").read_text()
    for event, more in (("SessionEnd", {"reason": "prompt_input_exit"}),
                        ("PreCompact", {"trigger": "auto", "custom_instructions": ""})):
        done = run(event, **more)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    started = run("SessionStart", source="startup")
    assert started.returncode == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "retr" in context.lower()            # the folded session, recalled for the project
