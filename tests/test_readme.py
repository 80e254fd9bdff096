"""The README's examples run as written on the demo store (DESIGN.md "Command line"), and the
documents hold together.

A new user makes the demo store (`scenes demo scene-demo`, the README's set-up) and types the
tour's lines one by one from that folder; each must succeed and say something of use, never
"no scene named" or "no match". The Python example and the two demo scenes the README shows
are checked the same way. (The other blocks, in the README and in docs/guides/, need a notes
vault, a model, a server or a conversation file of the reader's own.)

The README is the five-minute start and the rest is in docs/guides/ (issue 37, part 9): the
README stays short, keeps its two set-up commands as CI runs them, and names the section the
batch's own error message sends a person to; every relative link in the README and under
docs/ reaches a file (and a heading, for a `#` link); the command reference names every
command and the configuration guide every key.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = ROOT / "docs" / "guides"
# The README's test command, exactly (`.ci/run` runs its two pytest commands, after ruff and mypy).
TEST_COMMAND = ('python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e ".[dev]" && '
                '.venv/bin/python -m pytest -q -n 2 -m "not slow" && '
                '.venv/bin/python -m pytest -q -m slow')
DEMO_COMMAND = ('python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e ".[dev]" && '
                '.venv/bin/scenes demo scene-demo')
README_MOST_LINES = 260
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


# --- the documents hold together -----------------------------------------------------------

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code (where a `](` is no link)."""
    return re.sub(r"`[^`\n]+`", "", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The `#` names GitHub gives a Markdown file's headings."""
    names: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", path.read_text("utf-8")),
                              re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        name, n = slug, 0
        while name in names:
            n += 1
            name = f"{slug}-{n}"
        names.add(name)
    return names


def test_the_readme_is_a_five_minute_read():
    lines = README.read_text("utf-8").count("\n")
    assert lines <= README_MOST_LINES, (
        f"README.md has {lines} lines: keep it at most {README_MOST_LINES}, and move the rest "
        f"into a guide under docs/guides/ (listed in docs/guides/README.md)")


def test_the_readme_keeps_its_two_set_up_commands_as_ci_runs_them():
    text = README.read_text("utf-8")
    blocks = re.findall(r"```\n(.*?)\n```", text.split("## Set-up", 1)[1].split("\n## ", 1)[0],
                        re.S)
    assert blocks == [DEMO_COMMAND, TEST_COMMAND], blocks
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    for command in TEST_COMMAND.split(" && ")[2:]:
        assert command in ci, f".ci/run does not run the README's `{command}`"
    assert TEST_COMMAND in (GUIDES / "development.md").read_text("utf-8")


def test_every_relative_link_in_the_documents_reaches_a_file_and_a_heading():
    broken = []
    checked = 0
    for doc in documents():
        for target in LINK.findall(prose(doc.read_text("utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):         # https:, mailto:
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            where = (doc.parent / path).resolve() if path else doc
            if not where.exists() or ROOT not in [where, *where.parents]:
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert checked >= 40, checked
    assert not broken, "\n".join(broken)


def test_the_link_checker_sees_a_broken_link(tmp_path, monkeypatch):
    doc = tmp_path / "x.md"
    doc.write_text("# A\n\n[ok](#a) [gone](missing.md) [no heading](#b) `[code](not-a-link.md)`\n"
                   "```\n[fenced](not-a-link-either.md)\n```\n", "utf-8")
    found = LINK.findall(prose(doc.read_text("utf-8")))
    assert found == ["#a", "missing.md", "#b"]
    assert anchors(doc) == {"a"}
    assert {"set-up-two-commands", "a-tour", "when-a-batch-cannot-be-folded"} <= anchors(README)


def test_the_section_a_failed_batch_names_is_in_the_readme():
    """A batch that breaks a rule ends its message with (README, "When a batch cannot be
    folded"): that heading is in the README, and links on to the whole story."""
    from scene_engine.batch.transaction import WAY_FORWARD

    named = re.findall(r'README, "([^"]+)"', WAY_FORWARD)
    assert named, WAY_FORWARD
    text = README.read_text("utf-8")
    for section in named:
        assert re.search(rf"^#+ {re.escape(section)}$", text, re.M), section
    assert "guides/models.md#when-a-batch-cannot-be-folded" in text


def test_the_command_reference_names_every_command():
    from typer.main import get_command

    from scene_engine.cli import app

    table = (GUIDES / "commands.md").read_text("utf-8")
    listed = set(re.findall(r"^\| `scenes ([a-z]+)", table, re.M))
    assert set(get_command(app).commands) == listed, \
        sorted(set(get_command(app).commands) ^ listed)


def test_the_configuration_guide_names_every_key():
    from dataclasses import fields

    from scene_engine.store.config import Config

    guide = (GUIDES / "configuration.md").read_text("utf-8")
    rows = " ".join(re.findall(r"^\| (.*?) \|", guide, re.M))
    keys = [f.name for f in fields(Config)]
    assert "max_scenes" in keys and "embedding" in keys
    missing = [key for key in keys if f"`{key}`" not in rows]
    assert not missing, missing


def test_the_guides_index_lists_every_guide():
    index = (GUIDES / "README.md").read_text("utf-8")
    listed = set(re.findall(r"\]\(([a-z0-9-]+\.md)\)", index))
    on_disk = {p.name for p in GUIDES.glob("*.md")} - {"README.md"}
    assert on_disk == listed, sorted(on_disk ^ listed)
    readme = README.read_text("utf-8")
    assert not [g for g in on_disk - {"chatgpt.md", "claude.md", "claude-code.md", "codex.md",
                                      "gemini-cli.md"} if f"docs/guides/{g})" not in readme]
