"""apply(): conflict detection, atomic writes, rollback after injected failures, root checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_testutil import snapshot

from sandbox import DELETED, ApplyError, ConflictError, RootError, Sandbox


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("alpha\n")
    (root / "b.md").write_text("beta\n")
    (root / "c.md").write_text("gamma\n")
    return root


def _stage_mixed(box: Sandbox) -> None:
    """Two updates, one new file, one delete: every kind of step apply can take."""
    for call in [
        ("write_to_file", {"path": "a.md", "content": "ALPHA\n"}),
        ("replace_in_file", {"path": "b.md", "old": "beta", "new": "BETA"}),
        ("write_to_file", {"path": "new.md", "content": "fresh\n"}),
        ("write_to_file", {"path": "c.md", "content": "[DELETED]"}),
    ]:
        assert box.execute(*call).startswith("OK"), call


def test_apply_writes_exactly_the_pending_changes(root: Path) -> None:
    box = Sandbox(root)
    _stage_mixed(box)
    expected = {"a.md": "ALPHA\n", "b.md": "BETA\n", "c.md": DELETED, "new.md": "fresh\n"}
    assert box.pending() == expected
    assert box.apply() == expected
    assert sorted(os.listdir(root)) == ["a.md", "b.md", "new.md"]
    assert (root / "a.md").read_text() == "ALPHA\n"
    assert (root / "new.md").read_text() == "fresh\n"
    assert box.pending() == {} and box.apply() == {}


def test_apply_keeps_file_mode_and_allows_a_second_round(root: Path) -> None:
    os.chmod(root / "a.md", 0o600)
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "a.md", "content": "one\n"})
    box.apply()
    assert (os.stat(root / "a.md").st_mode & 0o777) == 0o600
    # the applied content is the new baseline: no false conflict on the next change set
    box.execute("replace_in_file", {"path": "a.md", "old": "one", "new": "two"})
    box.apply()
    assert (root / "a.md").read_text() == "two\n"


def test_conflict_when_file_changed_after_read(root: Path) -> None:
    box = Sandbox(root)
    assert box.execute("read_file", {"path": "a.md"}) == "alpha\n"
    box.execute("write_to_file", {"path": "a.md", "content": "model\n"})
    box.execute("write_to_file", {"path": "b.md", "content": "also\n"})
    (root / "a.md").write_text("hand edit\n")
    before = snapshot(root)
    with pytest.raises(ConflictError) as info:
        box.apply()
    assert info.value.names == ["a.md"]
    assert snapshot(root) == before  # b.md was not written either
    assert set(box.pending()) == {"a.md", "b.md"}  # kept for the caller to decide


@pytest.mark.parametrize("edit", ["append", "delete", "create"])
def test_an_edit_made_while_the_new_texts_are_written_is_never_replaced(
        root: Path, monkeypatch: pytest.MonkeyPatch, edit: str) -> None:
    # The temp files' fsyncs are the slow part of apply: a person's edit landing then, after
    # the check, used to be replaced by the rename (a newcomer lost lines typed during a run).
    import sandbox.atomic as atomic

    box = Sandbox(root)
    box.execute("write_to_file", {"path": "a.md", "content": "model a\n"})
    box.execute("write_to_file", {"path": "b.md", "content": "model b\n"})
    box.execute("write_to_file", {"path": "new.md", "content": "model new\n"})
    real = atomic._write_temp
    done = []

    def person_meanwhile(dir_fd, name, text, mode):
        if not done:
            done.append(name)
            if edit == "append":
                with open(root / "b.md", "a") as file:
                    file.write("- a line the person typed\n")
            elif edit == "delete":
                (root / "b.md").unlink()
            else:
                (root / "new.md").write_text("the person's own\n")
        return real(dir_fd, name, text, mode)

    monkeypatch.setattr(atomic, "_write_temp", person_meanwhile)
    with pytest.raises(ConflictError) as info:
        box.apply()
    assert info.value.names == (["new.md"] if edit == "create" else ["b.md"])
    assert (root / "a.md").read_text() == "alpha\n"           # nothing of the set written
    if edit == "append":
        assert (root / "b.md").read_text() == "beta\n- a line the person typed\n"
    elif edit == "delete":
        assert not (root / "b.md").exists()
    else:
        assert (root / "new.md").read_text() == "the person's own\n"
    assert not [n for n in os.listdir(root) if n.endswith(".tmp")]   # no temp file left
    assert set(box.pending()) == {"a.md", "b.md", "new.md"}


def test_conflict_when_new_file_appears_on_disk(root: Path) -> None:
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "new.md", "content": "model\n"})
    (root / "new.md").write_text("person\n")
    with pytest.raises(ConflictError) as info:
        box.apply()
    assert info.value.names == ["new.md"]
    assert (root / "new.md").read_text() == "person\n"


def test_conflict_when_new_file_appears_with_other_case(root: Path) -> None:
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "new.md", "content": "model\n"})
    (root / "NEW.md").write_text("person\n")
    with pytest.raises(ConflictError):
        box.apply()
    assert sorted(os.listdir(root)) == ["NEW.md", "a.md", "b.md", "c.md"]


def test_conflict_when_file_removed_on_disk(root: Path) -> None:
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "a.md", "content": "model\n"})
    (root / "a.md").unlink()
    with pytest.raises(ConflictError):
        box.apply()
    assert not (root / "a.md").exists()


def test_no_conflict_for_files_only_read(root: Path) -> None:
    box = Sandbox(root)
    box.execute("read_file", {"path": "a.md"})
    box.execute("write_to_file", {"path": "b.md", "content": "model\n"})
    (root / "a.md").write_text("hand edit\n")
    assert box.apply() == {"b.md": "model\n"}
    assert (root / "a.md").read_text() == "hand edit\n"


def test_note_seen_is_the_baseline(root: Path) -> None:
    # The caller showed the model an older text than the disk now holds: a later write conflicts.
    box = Sandbox(root)
    box.note_seen("a.md", "what the prompt showed\n")
    box.execute("write_to_file", {"path": "a.md", "content": "model\n"})
    with pytest.raises(ConflictError):
        box.apply()
    assert (root / "a.md").read_text() == "alpha\n"


def test_stage_snapshots_the_baseline(root: Path) -> None:
    box = Sandbox(root)
    box.stage("a.md", "engine header\nalpha\n")
    (root / "a.md").write_text("hand edit\n")
    with pytest.raises(ConflictError):
        box.apply()


def test_discard_drops_everything(root: Path) -> None:
    box = Sandbox(root)
    _stage_mixed(box)
    before = snapshot(root)
    box.discard()
    assert box.pending() == {}
    assert box.apply() == {}
    assert snapshot(root) == before


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, name: str, which: int) -> list[int]:
    """Make ``os.<name>`` raise OSError on its ``which``-th call only; return the call counter."""
    real = getattr(os, name)
    count = [0]

    def flaky(*args, **kwargs):
        count[0] += 1
        if count[0] == which:
            raise OSError(5, f"injected {name} failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, flaky)
    return count


@pytest.mark.parametrize(
    ("function", "which"),
    [("replace", 2), ("replace", 3), ("fsync", 2), ("fsync", 4), ("unlink", 1)],
)
def test_injected_failure_leaves_root_exactly_as_it_was(
    root: Path, monkeypatch: pytest.MonkeyPatch, function: str, which: int
) -> None:
    box = Sandbox(root)
    _stage_mixed(box)
    before = snapshot(root)
    count = _fail_on_call(monkeypatch, function, which)
    with pytest.raises(ApplyError) as info:
        box.apply()
    monkeypatch.undo()
    assert count[0] >= which  # the failure really happened inside apply
    assert info.value.unrestored == []
    assert snapshot(root) == before  # same names, bytes and modes; no temp files left
    assert len(box.pending()) == 4
    assert box.apply()  # once the disk behaves, the same change set goes through
    assert (root / "a.md").read_text() == "ALPHA\n"


def test_symlinked_root_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(RootError, match="symbolic link"):
        Sandbox(tmp_path / "link")


def test_root_under_a_symlinked_parent_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real" / "scenes").mkdir(parents=True)
    (tmp_path / "via").symlink_to(tmp_path / "real")
    with pytest.raises(RootError, match="symbolic link"):
        Sandbox(tmp_path / "via" / "scenes")


def test_missing_or_file_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RootError):
        Sandbox(tmp_path / "missing")
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(RootError):
        Sandbox(tmp_path / "file.md")


def test_root_swapped_for_a_link_later_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "a.md").write_text("outside\n")
    box = Sandbox(root)
    box.execute("write_to_file", {"path": "a.md", "content": "model\n"})
    root.rename(tmp_path / "moved")
    root.symlink_to(outside)
    assert box.execute("read_file", {"path": "a.md"}) == "model\n"  # staged, from memory
    result = box.execute("read_file", {"path": "other.md"})
    assert result.startswith("Error:") and "folder" in result
    with pytest.raises(RootError):
        box.apply()
    assert (outside / "a.md").read_text() == "outside\n"
    assert os.listdir(outside) == ["a.md"]
