"""Tool behaviour a caller relies on: policies, stage(), note_seen(), allow-list, records, names."""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from pathlib import Path

import pytest

from sandbox import (
    DELETED,
    Change,
    NameRefused,
    Sandbox,
    SandboxError,
    name_key,
    validate_name,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("alpha\n")
    (root / "b.md").write_text("beta\n")
    return root


def test_policy_refusal_reaches_the_model_and_stages_nothing(root: Path) -> None:
    box = Sandbox(root)
    box.add_policy(lambda c: "at most one new scene per batch" if c.created else None)
    result = box.execute("write_to_file", {"path": "new.md", "content": "x"})
    assert result.startswith("Error:")
    assert "refused by policy" in result and "at most one new scene per batch" in result
    assert box.pending() == {}
    assert box.execute("write_to_file", {"path": "a.md", "content": "y"}).startswith("OK")


def test_policy_sees_each_change_as_the_model_would(root: Path) -> None:
    seen: list[Change] = []
    box = Sandbox(root)
    box.add_policy(lambda c: seen.append(c))
    box.execute("write_to_file", {"path": "New.md", "content": "n1"})
    box.execute("replace_in_file", {"path": "new.md", "old": "n1", "new": "n2"})
    box.execute("replace_in_file", {"path": "A.md", "old": "alpha", "new": "ALPHA"})
    box.execute("write_to_file", {"path": "b.md", "content": "[DELETED]"})
    assert seen == [
        Change("write", "New.md", None, "n1", True),
        Change("replace", "New.md", "n1", "n2", True),
        Change("replace", "a.md", "alpha\n", "ALPHA\n", False),
        Change("delete", "b.md", "beta\n", None, False),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen[0].name = "x.md"  # type: ignore[misc]


def test_raising_policy_is_a_refusal_not_a_crash(root: Path) -> None:
    box = Sandbox(root)

    def broken(change: Change) -> str | None:
        raise KeyError("boom")

    box.add_policy(broken)
    result = box.execute("write_to_file", {"path": "a.md", "content": "x"})
    assert result.startswith("Error:") and "policy" in result and "KeyError" in result
    assert box.pending() == {}
    assert box.calls[-1].ok is False


def test_stage_bypasses_policies_but_not_name_rules(root: Path) -> None:
    box = Sandbox(root)
    box.add_policy(lambda c: "no")
    box.stage("A.md", "engine\n")
    box.stage("b.md", DELETED)
    assert box.pending() == {"a.md": "engine\n", "b.md": DELETED}
    with pytest.raises(NameRefused):
        box.stage("../x.md", "x")
    with pytest.raises(SandboxError):
        box.stage("missing.md", DELETED)
    with pytest.raises(TypeError):
        box.stage("a.md", 3)  # type: ignore[arg-type]
    box.apply()
    assert (root / "a.md").read_text() == "engine\n" and not (root / "b.md").exists()


def test_allow_list_note_seen_and_created_files(root: Path) -> None:
    box = Sandbox(root, readable=["a.md"])
    assert box.execute("read_file", {"path": "a.md"}) == "alpha\n"
    assert "not available" in box.execute("read_file", {"path": "b.md"})
    box.note_seen("b.md", "beta\n")
    assert box.execute("read_file", {"path": "B.md"}) == "beta\n"
    box.execute("write_to_file", {"path": "c.md", "content": "mine"})
    assert box.execute("read_file", {"path": "c.md"}) == "mine"
    assert box.read_names == {"a.md", "b.md", "c.md"}


def test_reads_see_staged_changes_and_deletions(root: Path) -> None:
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "a.md", "content": "staged"})
    assert box.execute("read_file", {"path": "a.md"}) == "staged"
    box.execute("write_to_file", {"path": "a.md", "content": "[DELETED]"})
    result = box.execute("read_file", {"path": "a.md"})
    assert result.startswith("Error:") and "deleted" in result
    assert box.pending() == {"a.md": DELETED}
    assert (root / "a.md").read_text() == "alpha\n"  # nothing on disk before apply


def test_net_changes_only(root: Path) -> None:
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "tmp.md", "content": "x"})
    box.execute("write_to_file", {"path": "tmp.md", "content": "[DELETED]"})
    box.execute("write_to_file", {"path": "a.md", "content": "alpha\n"})  # same as disk
    assert box.pending() == {}


def test_case_and_normalisation_spellings_are_one_staged_file(root: Path) -> None:
    box = Sandbox(root)
    nfd, nfc = "re\u0301sume\u0301.md", "résumé.md"
    box.execute("write_to_file", {"path": nfd, "content": "one"})
    box.execute("write_to_file", {"path": nfc.upper(), "content": "two"})
    assert box.pending() == {unicodedata.normalize("NFC", nfd): "two"}
    box.apply()
    assert [p.name for p in root.iterdir() if p.name.startswith("r")] == [nfc]


def test_two_disk_files_differing_by_case_are_refused(root: Path) -> None:
    (root / "Dup.md").write_text("1")
    (root / "dup.md").write_text("2")
    box = Sandbox(root)
    result = box.execute("write_to_file", {"path": "DUP.md", "content": "x"})
    assert result.startswith("Error:") and "ambiguous" in result
    assert box.pending() == {}


def test_call_record(root: Path) -> None:
    box = Sandbox(root)
    box.execute("read_file", {"path": "A.md"})
    box.execute("write_to_file", '{"path": "../x.md", "content": "x"}')
    box.execute("nope", {})
    first, second, third = box.calls
    assert (first.tool, first.raw_path, first.name, first.outcome) == ("read_file", "A.md", "a.md", "ok")
    assert (second.raw_path, second.name, second.ok) == ("../x.md", None, False)
    assert "separators" in second.message
    assert third.tool == "nope" and not third.ok


def test_tool_specs_are_openai_style(root: Path) -> None:
    specs = Sandbox(root, suffixes=(".md", ".txt")).tool_specs()
    json.dumps(specs)
    by_name = {s["function"]["name"]: s["function"] for s in specs}
    assert {s["type"] for s in specs} == {"function"}
    assert by_name["read_file"]["parameters"]["required"] == ["path"]
    assert by_name["write_to_file"]["parameters"]["required"] == ["path", "content"]
    assert by_name["replace_in_file"]["parameters"]["required"] == ["path", "old", "new"]
    assert "[DELETED]" in by_name["write_to_file"]["description"]
    assert ".txt" in by_name["read_file"]["parameters"]["properties"]["path"]["description"]


def test_other_suffixes_and_case_insensitive_suffix(root: Path) -> None:
    (root / "n.txt").write_text("text\n")
    box = Sandbox(root, suffixes=(".txt",))
    assert box.execute("read_file", {"path": "N.TXT"}) == "text\n"
    assert "only files ending with '.txt'" in box.execute("read_file", {"path": "a.md"})


def test_validate_name_and_key() -> None:
    assert validate_name("cafe\u0301.md") == "café.md"
    assert name_key("Work.md") == name_key("work.md") == name_key("WORK.MD")
    assert name_key("Straße.md") == name_key("STRASSE.md")
    assert name_key("a.md") != name_key("b.md")
    with pytest.raises(NameRefused, match="hidden"):
        validate_name(".x.md")
    with pytest.raises(NameRefused, match="string"):
        validate_name(None)
    assert validate_name("x.TXT", (".md", ".txt")) == "x.TXT"


def test_deleted_sentinel() -> None:
    import copy
    import pickle

    assert repr(DELETED) == "DELETED"
    assert copy.deepcopy(DELETED) is DELETED
    assert pickle.loads(pickle.dumps(DELETED)) is DELETED
    assert DELETED != "[DELETED]"


def test_bad_constructor_arguments(root: Path) -> None:
    with pytest.raises(ValueError):
        Sandbox(root, suffixes=("md",))
    with pytest.raises(NameRefused):
        Sandbox(root, readable=["../a.md"])
