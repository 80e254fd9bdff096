"""Property tests: whatever a model sends and the caller applies, nothing escapes the root."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_testutil import make_world, snapshot

from sandbox import ConflictError, NameRefused, Sandbox, validate_name

# Pieces that hit the rules; joined at random with arbitrary text.
FRAGMENTS = [
    "..", ".", "/", "\\", ":", "%2e", "%2f", "\x00", "\u202e", "\u2066", "\u200f", "\uff0e",
    "\uff0f", "\u2215", "con", "NUL", "com1", "a", "A", "é", "e\u0301", " ", "~", "-",
    ".md", ".MD", ".py", "link.md", "dangling.md", "dir.md", "hard.md", "a.md", "outside",
]
names = st.one_of(
    st.text(max_size=30),
    st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join),
    st.tuples(st.text(max_size=10), st.sampled_from([".md", ".MD", ".md ", ".md."])).map("".join),
    st.sampled_from(["a.md", "A.md", "café.md", "cafe\u0301.md", "new.md", "NEW.MD"]),
)
contents = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["[DELETED]", " [DELETED]\n", "", "[ARCHIVE]", "x" * 70]),
)
calls = st.one_of(
    st.tuples(st.just("read_file"), st.fixed_dictionaries({"path": names})),
    st.tuples(
        st.just("write_to_file"), st.fixed_dictionaries({"path": names, "content": contents})
    ),
    st.tuples(
        st.just("replace_in_file"),
        st.fixed_dictionaries({"path": names, "old": contents, "new": contents}),
    ),
    st.tuples(
        st.sampled_from(["read_file", "write_to_file", "replace_in_file", "rm"]),
        st.one_of(
            st.text(max_size=40),
            st.dictionaries(st.sampled_from(["path", "content", "old", "new", "x"]),
                            st.one_of(names, st.integers(), st.none()), max_size=4),
        ),
    ),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls, max_size=8))
def test_no_call_sequence_escapes_the_root(sequence: list[tuple[str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = make_world(Path(tmp))
        outside, root_before = snapshot(world.outside), snapshot(world.root)
        box = Sandbox(world.root, max_content_chars=64)
        for tool, args in sequence:
            result = box.execute(tool, args)
            assert isinstance(result, str) and "internal error" not in result
        pending = box.pending()
        try:
            box.apply()
        except ConflictError:  # impossible here: nothing else touches the disk
            raise AssertionError("false conflict") from None
        assert snapshot(world.outside) == outside
        assert sorted(os.listdir(tmp)) == ["outside", "root"]
        after = snapshot(world.root)
        for name, entry in after.items():
            if root_before.get(name) == entry:
                continue  # untouched planted entries (links, hidden files) may be illegal
            validate_name(name)  # every new or changed file has a legal name...
            assert entry[0] == "file" and name in pending  # ...and is a file the caller saw staged
        for name, entry in root_before.items():
            if name not in after:
                assert name in pending and entry[0] == "file"  # only staged deletions vanish


@settings(max_examples=300, deadline=None)
@given(names)
def test_accepted_names_are_flat_stable_and_legal(raw: str) -> None:
    try:
        name = validate_name(raw)
    except NameRefused as exc:
        assert str(exc)  # always an explanation
        return
    assert validate_name(name) == name  # canonical form is a fixed point
    assert os.path.basename(name) == name and "\\" not in name and ":" not in name
    assert not name.startswith(".") and ".." not in name and name.lower().endswith(".md")
    assert len(name.encode("utf-8")) <= 200 and name.isprintable()
