"""The README's examples run as written on the demo store (DESIGN.md "Command line").

A new user makes the demo store (`scenes demo scene-demo`, the README's set-up) and types the
tour's lines one by one from that folder; each must succeed and say something of use, never
"no scene named" or "no match". The Python example and the two demo scenes the README shows
are checked the same way. (The README's other blocks need a notes vault, a model or a
conversation file of the reader's own.)
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# Words that mean an example named something the demo store does not have.
NOTHING_THERE = ("error:", "no match", "no scene named", "(no batch has taken it yet)",
                 "now in: no scene", "Traceback", "not a scene store")


def code_block_after(text: str, marker: str) -> str:
    """The first fenced block after ``marker`` in the README."""
    rest = text[text.index(marker):]
    found = re.search(r"```[a-z]*\n(.*?)```", rest, re.S)
    assert found, marker
    return found.group(1)


def tour_commands() -> list[str]:
    """The tour's command lines, their comments cut off (a comment starts after two spaces)."""
    lines = []
    for raw in code_block_after(README.read_text("utf-8"), "## A tour").splitlines():
        command = re.split(r"\s{2,}#", raw, maxsplit=1)[0].strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


@pytest.fixture
def shell(tmp_path) -> dict:
    """An environment whose PATH starts with a `scenes` that runs this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "scenes"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c '
                      f'"from scene_engine.cli.entry import main; main()" "$@"\n')
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def run(line: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def check_output(line: str, done: subprocess.CompletedProcess) -> None:
    """Exit 0 and output that shows the example found what it names."""
    said = done.stdout + done.stderr
    assert done.returncode == 0, (line, said)
    assert said.strip(), (line, "printed nothing")
    assert not [w for w in NOTHING_THERE if w in said], (line, said)
    words = line.split()
    command = words[1] if len(words) > 1 else ""
    expected = {"show": "## Timeline", "blame": "demo-", "recall": "## Passages",
                "doctor": "doctor: ok", "list": ".md",
                "log": "batch ", "status": '"pending"'}.get(command)
    if command == "search" and "--memories" in words:
        expected = "demo-"
    if command == "trace":
        expected = "now in: "
    if expected:
        assert expected in said, (line, said)


def watch_until_ctrl_c(cwd: Path, env: dict) -> None:
    """`scenes watch` runs until Ctrl-C: it says it is watching, and stops on SIGINT."""
    child = subprocess.Popen(["bash", "-c", "exec scenes watch"], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = child.stderr.readline()
    assert first.startswith("watching "), first + child.stderr.read()
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=60) in (0, 130)
    assert "Traceback" not in child.stderr.read()


@pytest.mark.slow
def test_every_line_of_the_tour_runs_as_written_on_the_demo_store(tmp_path, shell):
    made = run("scenes demo scene-demo", tmp_path, shell)       # the README's set-up
    assert made.returncode == 0, made.stderr
    commands = tour_commands()
    assert len(commands) >= 15
    cwd = tmp_path
    for line in commands:
        if line.startswith("cd "):
            cwd = (cwd / line[3:].strip()).resolve()
            assert cwd.is_dir(), line
            continue
        if line == "scenes watch":
            watch_until_ctrl_c(cwd, shell)
            continue
        done = run(line, cwd, shell)
        if line.split()[0] != "scenes" and "| scenes" not in line:
            assert done.returncode == 0, (line, done.stderr)   # making an input file
            continue
        check_output(line, done)
    # The tour leaves nothing of its own in the store (an input file made there would be an
    # untracked file that `git status` shows the person ever after).
    left = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=tmp_path / "scene-demo", capture_output=True, text=True)
    assert left.returncode == 0 and left.stdout == "", left.stdout


@pytest.mark.slow
def test_the_python_example_runs_on_the_demo_store(tmp_path, shell):
    assert run("scenes demo scene-demo", tmp_path, shell).returncode == 0
    code = code_block_after(README.read_text("utf-8"), "From Python:")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "tea in the afternoon" in done.stdout, done.stdout


@pytest.mark.slow
def test_the_demo_scenes_the_readme_shows_are_the_demo_s(tmp_path, shell):
    from scene_engine.store.scene import parse_scene

    assert run("scenes demo scene-demo", tmp_path, shell).returncode == 0
    text = README.read_text("utf-8")
    shown = re.findall(r"`scenes/([^`]+\.md)`:\n\n```\n(.*?)```", text, re.S)
    assert len(shown) == 2, [name for name, _ in shown]
    for name, quoted in shown:
        path = tmp_path / "scene-demo" / "scenes" / name
        assert path.exists(), f"the README shows {name}, which the demo does not make"
        made, told = parse_scene(path.read_text("utf-8")), parse_scene(quoted)
        assert made.body == told.body, name
        assert (made.meta["summary"], made.meta["heat"]) == \
            (told.meta["summary"], told.meta["heat"]), name
