"""Hostile corpus: tool calls a confused or malicious model might send.

Each case runs against a fresh world (tests/sandbox/sandbox_testutil.py), then the change set is
applied. Invariants after every case: nothing outside the root changed, the root holds exactly
the expected files, and the text returned to the model names the problem (a keyword).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sandbox_testutil import ROOT_FILES, SECRET, SHOWN, make_world, snapshot

from sandbox import Sandbox

NEW = "new text\n"


@dataclass(frozen=True)
class Case:
    """One call. ``keyword``: must appear in the result (case-insensitive); ``ok``: accepted;
    ``effect``: files expected to differ after apply, name -> text (None: removed)."""

    id: str
    tool: object
    args: object
    keyword: str
    ok: bool = False
    effect: dict[str, str | None] = field(default_factory=dict)


SEP = "separators are not allowed"
LOOK = "looks like a dot or slash"
CTRL = "invisible or control character"
SUFFIX = "only files ending with"
LONG = "longer than"
RESERVED = "reserved device name"

# (path, keyword for refusal) - each is tried with read_file and with write_to_file.
BAD_NAMES: list[tuple[str, str]] = [
    ("../x.md", SEP), ("..\\x.md", SEP), ("a/../b.md", SEP), ("%2e%2e/x.md", SEP),
    ("....//x.md", SEP), ("/etc/passwd", SEP), ("C:\\x.md", SEP), ("C:x.md", SEP),
    ("\\\\server\\share\\x.md", SEP), (".git/config", SEP), ("./a.md", SEP), ("a.md/", SEP),
    ("/a.md", SEP), ("~/x.md", SEP), ("//x.md", SEP), ("\\x.md", SEP),
    ("file:///etc/passwd", SEP), ("../outside/secret.md", SEP), ("../../outside/secret.md", SEP),
    ("root/a.md", SEP), ("x.md::$DATA", SEP), ("a*.md", SEP), ("a?.md", SEP), ('a".md', SEP),
    ("a<b>.md", SEP), ("a|b.md", SEP),
    ("..", "ends with a dot"), (".", "ends with a dot"), ("x.md.", "ends with a dot"),
    ("..md", "hidden"), (".x.md", "hidden"), (".md", "hidden"), (".hidden.md", "hidden"),
    (".git", "hidden"), ("a..md", "'..'"),
    ("x.md.py", SUFFIX), ("x.py", SUFFIX), ("x", SUFFIX), ("notes.txt", SUFFIX),
    ("x.mdx", SUFFIX), ("x.m d", SUFFIX), ("etc/passwd", SEP),
    ("x.md ", "whitespace"), (" a.md", "whitespace"), ("a.md\u00a0", "unusual space"),
    ("\u3000a.md", "unusual space"), ("a\u00a0b.md", "unusual space"), ("-rf.md", "may not start with '-'"),
    ("x\x00.md", CTRL), ("x\n.md", CTRL), ("x.md\n", CTRL), ("x\t.md", CTRL), ("x\x7f.md", CTRL),
    ("x\x1b[31m.md", CTRL), ("x\u202e.md", CTRL), ("\u202edm.x", CTRL), ("x\u2066.md", CTRL),
    ("x\u2067.md", CTRL), ("x\u2068.md", CTRL), ("x\u2069.md", CTRL), ("x\u200e.md", CTRL),
    ("x\u200f.md", CTRL), ("x\u200b.md", CTRL), ("x\ufeff.md", CTRL), ("x\u2028.md", CTRL),
    ("x\udc80.md", CTRL),
    ("\uff0e\uff0e\uff0fx.md", LOOK), ("x\uff0emd", LOOK), ("a\u2215b.md", LOOK),
    ("a\u2044b.md", LOOK), ("a\u29f8b.md", LOOK), ("a\uff3cb.md", LOOK),
    ("\uff0e\uff0e\u2215x.md", LOOK),
    ("a" * 198 + ".md", LONG), ("é" * 99 + ".md", LONG), ("a" * 10_000 + ".md", LONG),
    ("con.md", RESERVED), ("CON.md", RESERVED), ("nul.md", RESERVED), ("com1.md", RESERVED),
    ("LPT9.md", RESERVED), ("aux.md", RESERVED), ("prn.md", RESERVED),
    ("con.backup.md", RESERVED), ("com\u00b9.md", RESERVED), ("con .md", RESERVED),
    ("conin$.md", RESERVED),
    ("", "empty"),
]
# Legal names that do not exist yet: read says so, write creates exactly that file in the root.
GOOD_NEW_NAMES = [
    "x.MD", "console.md", "a" * 197 + ".md", "é" * 98 + ".md", "%2e%2e.md", "%2e%2e%2fx.md",
    "日记.md", "name with spaces.md", "x.md.md",
]
# Files planted in the root that must never be used (links are not followed).
PLANTED = [
    ("link.md", "symbolic link"), ("dangling.md", "symbolic link"),
    ("linkdir.md", "symbolic link"), ("dir.md", "not a regular file"),
    ("fifo.md", "not a regular file"), ("hard.md", "hard links"),
]


def _name_cases() -> list[Case]:
    cases: list[Case] = []
    for i, (name, keyword) in enumerate(BAD_NAMES):
        cases.append(Case(f"read-bad-{i}", "read_file", {"path": name}, keyword))
        cases.append(Case(f"write-bad-{i}", "write_to_file", {"path": name, "content": NEW}, keyword))
    for i, name in enumerate(GOOD_NEW_NAMES):
        cases.append(Case(f"read-new-{i}", "read_file", {"path": name}, "does not exist"))
        cases.append(
            Case(f"write-new-{i}", "write_to_file", {"path": name, "content": NEW}, "created",
                 ok=True, effect={name: NEW})
        )
    for name, keyword in PLANTED:
        cases.append(Case(f"read-{name}", "read_file", {"path": name}, keyword))
        cases.append(Case(f"write-{name}", "write_to_file", {"path": name, "content": NEW}, keyword))
        cases.append(Case(f"delete-{name}", "write_to_file", {"path": name, "content": "[DELETED]"}, keyword))
        cases.append(Case(f"replace-{name}", "replace_in_file", {"path": name, "old": "T", "new": "x"}, keyword))
    return cases


def _write(path: str, content: object) -> dict:
    return {"path": path, "content": content}


def _rep(path: str, old: object, new: object) -> dict:
    return {"path": path, "old": old, "new": new}


OTHER_CASES = [
    # case and Unicode-normalisation collisions resolve to the on-disk file
    Case("case-read", "read_file", {"path": "A.md"}, "alpha", ok=True),
    Case("case-write", "write_to_file", _write("A.MD", NEW), "updated", ok=True, effect={"a.md": NEW}),
    Case("nfd-write", "write_to_file", _write("cafe\u0301.md", NEW), "updated", ok=True,
         effect={"café.md": NEW}),
    Case("nfd-upper-read", "read_file", {"path": "CAFE\u0301.md"}, "coffee", ok=True),
    Case("allow-list-read", "read_file", {"path": "private.md"}, "not available"),
    Case("allow-list-replace", "replace_in_file", _rep("private.md", "not", "x"), "not available"),
    # soft delete and content rules
    Case("delete", "write_to_file", _write("a.md", "[DELETED]"), "deletion", ok=True,
         effect={"a.md": None}),
    Case("delete-padded", "write_to_file", _write("b.md", "  [DELETED]\n"), "deletion", ok=True,
         effect={"b.md": None}),
    Case("delete-missing", "write_to_file", _write("nope.md", "[DELETED]"), "does not exist"),
    Case("empty", "write_to_file", _write("a.md", ""), "[DELETED]"),
    Case("whitespace", "write_to_file", _write("a.md", " \n\t "), "[DELETED]"),
    Case("archive", "write_to_file", _write("a.md", "[ARCHIVE]"), "not a supported marker"),
    Case("consolidated", "write_to_file", _write("a.md", "\n[CONSOLIDATED]\n"), "[DELETED]"),
    Case("deleted-lower", "write_to_file", _write("a.md", "[deleted]"), "not a supported marker"),
    Case("merged-into", "write_to_file", _write("a.md", "[MERGED_INTO_B]"), "[DELETED]"),
    Case("huge", "write_to_file", _write("a.md", "x" * 200_001), "limit"),
    Case("huge-raw", "write_to_file", json.dumps(_write("a.md", "\x01" * 205_000)), "limit"),
    Case("nul-content", "write_to_file", _write("a.md", "a\x00b"), "NUL"),
    Case("surrogate-content", "write_to_file", _write("a.md", "a\udc80b"), "UTF-8"),
    Case("max-content", "write_to_file", _write("big.md", "y" * 200_000), "created", ok=True,
         effect={"big.md": "y" * 200_000}),
    # replace_in_file: literal text, exactly once
    Case("overlap", "replace_in_file", _rep("aaaa.md", "aaa", "b"), "occurs 2 times"),
    Case("overlap-many", "replace_in_file", _rep("aaaa.md", "a", "b"), "occurs 4 times"),
    Case("whole", "replace_in_file", _rep("aaaa.md", "aaaa", "b"), "replaced", ok=True,
         effect={"aaaa.md": "b"}),
    Case("dollar-amp", "replace_in_file", _rep("pattern.md", "$&", "X"), "replaced", ok=True,
         effect={"pattern.md": "price X and \\1 and a.*b\n"}),
    Case("backref-old", "replace_in_file", _rep("pattern.md", "\\1", "one"), "replaced", ok=True,
         effect={"pattern.md": "price $& and one and a.*b\n"}),
    Case("backref-new", "replace_in_file", _rep("a.md", "alpha", "\\1 $& \\g<0>"), "replaced",
         ok=True, effect={"a.md": "\\1 $& \\g<0>\n"}),
    Case("dot-star", "replace_in_file", _rep("a.md", ".*", "x"), "occurs 0 times"),
    Case("dot-star-literal", "replace_in_file", _rep("pattern.md", "a.*b", "ab"), "replaced",
         ok=True, effect={"pattern.md": "price $& and \\1 and ab\n"}),
    Case("regex-class", "replace_in_file", _rep("b.md", "beta [a-z]+", "x"), "occurs 0 times"),
    Case("multiline", "replace_in_file", _rep("b.md", "one\nbeta", "1\nB"), "replaced", ok=True,
         effect={"b.md": "beta 1\nB two\n"}),
    Case("new-empty", "replace_in_file", _rep("b.md", "beta one\n", ""), "replaced", ok=True,
         effect={"b.md": "beta two\n"}),
    Case("twice", "replace_in_file", _rep("b.md", "beta", "x"), "occurs 2 times"),
    Case("empty-old", "replace_in_file", _rep("a.md", "", "x"), "'old' is empty"),
    Case("missing-new", "replace_in_file", {"path": "a.md", "old": "alpha"}, "missing argument"),
    Case("to-empty", "replace_in_file", _rep("aaaa.md", "aaaa", "  "), "[DELETED]"),
    Case("to-marker", "replace_in_file", _rep("a.md", "alpha\n", "[DELETED]"), "write_to_file"),
    Case("replace-missing", "replace_in_file", _rep("nope.md", "a", "b"), "does not exist"),
    Case("replace-huge", "replace_in_file", _rep("a.md", "alpha", "z" * 200_000), "limit"),
    Case("crlf-mismatch", "replace_in_file", _rep("b.md", "one\r\nbeta", "x"), "occurs 0 times"),
    # argument shapes
    Case("bad-json", "read_file", "{path: a.md}", "not valid JSON"),
    Case("truncated-json", "write_to_file", '{"path": "a.md", "content": "abc', "not valid JSON"),
    Case("fenced-json", "read_file", '```json\n{"path": "a.md"}\n```', "alpha", ok=True),
    Case("fenced-plain", "read_file", '```\n{"path": "b.md"}\n```', "beta", ok=True),
    Case("fenced-write", "write_to_file", '```json\n{"path": "f.md", "content": "x"}\n```',
         "created", ok=True, effect={"f.md": "x"}),
    Case("json-list", "read_file", '["a.md"]', "array"),
    Case("json-string", "read_file", '"a.md"', "string"),
    Case("json-number", "read_file", "42", "number"),
    Case("json-null", "read_file", "null", "JSON object"),
    Case("py-list", "read_file", ["a.md"], "JSON object"),
    Case("py-int", "read_file", 7, "JSON object"),
    Case("empty-args", "read_file", "", "missing argument"),
    Case("deep-json", "read_file", "[" * 100_000 + "]" * 100_000, "not valid JSON"),
    Case("path-int", "read_file", {"path": 5}, "wrong argument type"),
    Case("path-null", "read_file", {"path": None}, "missing argument"),
    Case("path-list", "read_file", {"path": ["a.md"]}, "wrong argument type"),
    Case("path-bool", "write_to_file", _write(True, NEW), "wrong argument type"),
    Case("content-dict", "write_to_file", _write("a.md", {"text": "x"}), "wrong argument type"),
    Case("content-int", "write_to_file", _write("a.md", 12), "wrong argument type"),
    Case("content-list", "write_to_file", _write("a.md", ["x"]), "wrong argument type"),
    Case("old-int", "replace_in_file", _rep("a.md", 1, "x"), "wrong argument type"),
    Case("extra-field", "read_file", {"path": "a.md", "mode": "r"}, "unexpected argument"),
    Case("extra-write", "write_to_file", {**_write("a.md", NEW), "append": "yes"},
         "unexpected argument"),
    Case("missing-path", "write_to_file", {"content": NEW}, "missing argument"),
    Case("missing-content", "write_to_file", {"path": "a.md"}, "missing argument"),
    Case("filename-alias", "read_file", {"file": "a.md"}, "unexpected argument"),
    # tool names
    Case("unknown-tool", "delete_file", {"path": "a.md"}, "unknown tool"),
    Case("upper-tool", "READ_FILE", {"path": "a.md"}, "unknown tool"),
    Case("private-method", "_read_file", {"path": "a.md"}, "unknown tool"),
    Case("dunder", "__init__", {}, "unknown tool"),
    Case("none-tool", None, {"path": "a.md"}, "unknown tool"),
    Case("list-files", "list_files", {}, "unknown tool"),
    Case("empty-tool", "", "{}", "unknown tool"),
]

CORPUS = _name_cases() + OTHER_CASES


def _run(case: Case, base: Path) -> tuple[str, list[str]]:
    """Run one case in a fresh world under ``base``; return (result, list of invariant breaks)."""
    world = make_world(base)
    outside_before, base_before = snapshot(world.outside), sorted(p.name for p in base.iterdir())
    root_before = snapshot(world.root)
    box = Sandbox(world.root, readable=SHOWN)
    result = box.execute(case.tool, case.args)
    box.apply()
    broken = []
    if snapshot(world.outside) != outside_before or (world.outside / "secret.md").read_text() != SECRET:
        broken.append("outside changed")
    if sorted(p.name for p in base.iterdir()) != base_before:
        broken.append("something appeared next to the root")
    expected = {k: v for k, v in root_before.items() if k not in case.effect}
    expected.update({k: v for k, v in case.effect.items() if v is not None})
    after = snapshot(world.root)
    for name, value in expected.items():
        got = after.get(name)
        if isinstance(value, str):
            if got is None or got[1] != value.encode("utf-8"):
                broken.append(f"{name} does not hold the expected text")
        elif got != value:
            broken.append(f"{name} changed")
    broken += [f"unexpected {n!r} in root" for n in after if n not in expected]
    return result, broken


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_hostile_call(case: Case, tmp_path: Path) -> None:
    result, broken = _run(case, tmp_path)
    assert broken == []
    assert case.keyword.lower() in result.lower()
    assert result.startswith("Error:") != case.ok
    assert "internal error" not in result
    if not case.ok:  # a refusal says what to do, not only what was wrong
        assert len(result) > len("Error: ") + 20


def test_corpus_escape_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The figure the issue asks for: corpus size and escapes (must be zero)."""
    escapes = []
    for i, case in enumerate(CORPUS):
        base = tmp_path / str(i)
        base.mkdir()
        _, broken = _run(case, base)
        if broken:
            escapes.append((case.id, broken))
    with capsys.disabled():
        print(f"\nsandbox hostile corpus: {len(CORPUS)} calls, {len(escapes)} escapes")
    assert len(CORPUS) >= 150
    assert escapes == []


def test_corpus_keeps_root_files_as_planned() -> None:
    # Guard against the corpus silently drifting from the world it assumes.
    assert {"a.md", "b.md", "aaaa.md", "pattern.md"} <= set(ROOT_FILES)
