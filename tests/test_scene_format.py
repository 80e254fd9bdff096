"""Scene file format: both header forms, typed values, round trips, malformed headers."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scene_engine.store.scene import (
    KNOWN_KEYS,
    Scene,
    SceneHeaderWarning,
    body_chars,
    parse_scene,
    read_scene,
    render_scene,
)

TRICKY = [
    "key: value inside",
    "a # not a comment",
    "\"quoted\" and 'single' and \"it's\"",
    "“curly” ‘quotes’",
    "全角冒号：在这里",
    "- starts like a list item",
    "* starts like an alias or bullet",
    "&anchor and !tag and %directive",
    "line one\nline two\n\nline four",
    "trailing newline\n",
    "用户喜欢在上海的咖啡馆工作，周末去杭州。",
    "yes",
    "null",
    "3",
    "2026-01-01",
    "  leading spaces",
    "tab\there",
    "",
]


def parse_quiet(text: str, name: str = "s.md") -> tuple[Scene, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scene = parse_scene(text, name=name)
    return scene, [w for w in caught if issubclass(w.category, SceneHeaderWarning)]


def test_yaml_front_matter_is_typed_and_ordered():
    text = ("---\nfoo: bar\nheat: 3\nsummary: Coffee in Shanghai.\n"
            "updated: 2026-11-30T18:02:00+08:00\ncreated: 2026-11-30 17:21:00\n---\n## Body\n")
    scene, caught = parse_quiet(text)
    assert not caught
    assert scene.header == "yaml"
    assert list(scene.meta) == ["created", "updated", "summary", "heat", "foo"]
    assert scene.meta["created"] == datetime(2026, 11, 30, 17, 21, tzinfo=UTC)  # naive -> UTC
    assert scene.meta["updated"].utcoffset() == timedelta(hours=8)
    assert scene.meta["heat"] == 3 and scene.meta["summary"] == "Coffee in Shanghai."
    assert scene.body == "## Body\n"


def test_block_form_reads_like_yaml_and_renders_either_way():
    text = "-----META-START-----\nsummary: 旅行\nheat: 2\n-----META-END-----\nbody\n"
    scene, caught = parse_quiet(text)
    assert not caught and scene.header == "block"
    assert scene.meta == {"summary": "旅行", "heat": 2}
    assert render_scene(scene, "block") == text
    assert render_scene(scene).startswith("---\nsummary: 旅行\nheat: 2\n---\n")


def test_bom_crlf_and_missing_final_newline_are_tolerated():
    scene, caught = parse_quiet("\ufeff---\r\nsummary: x\r\nheat: 1\r\n---\r\nline\r\nlast")
    assert not caught
    assert scene.meta == {"summary": "x", "heat": 1}
    assert scene.body == "line\nlast"
    no_body, _ = parse_quiet("---\nsummary: x\n---")
    assert no_body.header == "yaml" and no_body.body == ""


def test_text_without_header_is_body_without_warning():
    scene, caught = parse_quiet("# Just notes\n\nNo header here.\n")
    assert scene.header is None and scene.header_error is None and not caught
    assert scene.body == "# Just notes\n\nNo header here.\n"


def test_render_is_canonical():
    scene = Scene("a.md", {"zeta": 1, "heat": 2, "summary": "上海的咖啡",
                           "updated": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                           "created": datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=8)))},
                  "body\n", "yaml")
    assert render_scene(scene) == (
        "---\ncreated: 2026-01-01T00:00:00+08:00\nupdated: 2026-01-02T03:04:05+00:00\n"
        "summary: 上海的咖啡\nheat: 2\nzeta: 1\n---\nbody\n")
    assert body_chars(scene) == 4


@pytest.mark.parametrize("value", TRICKY)
@pytest.mark.parametrize("style", ["yaml", "block"])
def test_tricky_values_round_trip(value, style):
    scene = Scene("t.md", {"summary": value, "note": value, "tags": [value, "x"]},
                  "## 正文\n- item\n---\nafter a rule\n", "yaml")
    back, caught = parse_quiet(render_scene(scene, style), name="t.md")
    assert not caught
    assert back.meta == scene.meta and back.body == scene.body and back.header == style


@pytest.mark.parametrize("text, line, reason", [
    ("---\nsummary: [unclosed\n---\nbody\n", 3, "invalid YAML"),
    ("---\nsummary: a: b\n---\nbody\n", 2, "invalid YAML"),
    ("---\nsummary: x\nheat: -2\n---\nbody\n", 3, "heat"),
    ("---\nsummary: x\n\nheat: lots\n---\n", 4, "heat"),
    ("---\n- just\n- a list\n---\nbody\n", 2, "not key: value"),
    ("---\ncreated: last tuesday\n---\n", 2, "created"),
    ("---\nupdated: 2026-02-30\n---\n", 2, "day is out of range"),
    ("---\nsummary: never closed\nbody\n", 1, "never closed"),
    ("-----META-START-----\nsummary: x\n---\nbody\n", 1, "never closed"),
])
def test_malformed_header_keeps_whole_text_and_warns(text, line, reason):
    scene, caught = parse_quiet(text, name="bad.md")
    assert scene.header is None and scene.meta == {}
    assert scene.body == text  # whole file kept: nothing lost, no second header added
    assert scene.header_error
    assert len(caught) == 1
    warning = caught[0].message
    assert (warning.name, warning.line) == ("bad.md", line)
    assert reason in str(warning) and "bad.md" in str(warning)
    with pytest.raises(ValueError, match="refusing to rewrite"):
        render_scene(scene)


def test_read_scene_uses_file_name(tmp_path):
    path = tmp_path / "家庭.md"
    path.write_bytes("---\nsummary: 家\n---\n正文\n".encode())
    scene = read_scene(path)
    assert scene.name == "家庭.md" and scene.meta["summary"] == "家" and scene.body == "正文\n"


# -- property: any header values survive render -> parse ------------------------------------

summaries = st.text(max_size=80)
extra_keys = st.text(st.characters(categories=["L", "N"], include_characters="_-"),
                     min_size=1, max_size=12).filter(lambda k: k not in KNOWN_KEYS)
scalars = st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False))
extra_values = st.one_of(scalars, st.lists(scalars, max_size=3),
                         st.dictionaries(extra_keys, scalars, max_size=2))
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
moments = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1),
                       timezones=offsets)
bodies = st.text(st.characters(exclude_characters="\r"), max_size=200)


@settings(max_examples=150, deadline=None)
@given(summary=summaries, created=moments, updated=moments, heat=st.integers(0, 10**6),
       extras=st.dictionaries(extra_keys, extra_values, max_size=4), body=bodies,
       style=st.sampled_from(["yaml", "block"]))
def test_round_trip_property(summary, created, updated, heat, extras, body, style):
    meta = {"created": created, "updated": updated, "summary": summary, "heat": heat, **extras}
    scene = Scene("p.md", meta, body, style)
    back, caught = parse_quiet(render_scene(scene, style), name="p.md")
    assert not caught
    assert back.meta == meta and list(back.meta) == list(meta)
    assert back.meta["created"].isoformat() == created.isoformat()  # offset kept, not just instant
    assert back.body == body and back.header == style


def test_an_empty_header_is_a_header_with_no_keys():
    """`---` then `---`: a readable (empty) header, not a crash; the body stays the body."""
    scene = parse_scene("---\n---\nJust a body.\n", name="empty.md")
    assert scene.header == "yaml"
    assert scene.meta == {}
    assert scene.body == "Just a body.\n"


def test_equal_dates_are_written_as_values_not_yaml_anchors():
    when = datetime(2026, 11, 30, 17, 21, tzinfo=UTC)
    text = render_scene(Scene(name="a.md", meta={"created": when, "updated": when,
                                                 "summary": "s", "heat": 1}, body="b\n"))
    assert "&" not in text and "*id" not in text
    assert text.count("2026-11-30T17:21:00+00:00") == 2


PERSON_KEYS = ("# a comment a person wrote\n", "time: 10:00\n", "mode: 0755\n",
               "ok: yes   # inline comment\n", "ver: 1.10\n", "when: 2024-05-01 10:00\n",
               "tags: [a,  b]\n", "note: |\n  two\n  lines\n", "list:\n  - a\n  -   b\n")


@pytest.mark.parametrize("style", ["yaml", "block"])
def test_keys_the_engine_does_not_own_come_back_byte_for_byte(style):
    opener, closer = ("---", "---") if style == "yaml" else ("-----META-START-----",
                                                             "-----META-END-----")
    text = f"{opener}\n{''.join(PERSON_KEYS)}summary: Old.\nheat: 2\n{closer}\nbody\n"
    scene, caught = parse_quiet(text)
    assert not caught
    scene.meta.update(summary="New summary.", heat=3)
    out = render_scene(scene, style)
    for block in PERSON_KEYS:
        assert block in out, block
    again, _ = parse_quiet(out)
    assert again.meta == scene.meta


def test_a_changed_value_is_written_fresh_and_a_flow_header_still_renders():
    scene, _ = parse_quiet("---\ntime: 10:00\nsummary: s\n---\nb\n")
    scene.meta["time"] = "11:30"
    assert "time: '11:30'\n" in render_scene(scene)
    flow, _ = parse_quiet("---\n{summary: s, time: 10:00}\n---\nb\n")
    assert parse_quiet(render_scene(flow))[0].meta == flow.meta


def test_comments_after_engine_keys_stay_when_those_keys_are_rewritten():
    text = ("---\ncreated: 2024-01-01T00:00:00+00:00\n# my note about this scene\n"
            "summary: Old.\n# why I keep it\n\nheat: 2\ncolor: blue\n# the end\n---\nbody\n")
    scene, _ = parse_quiet(text)
    scene.meta.update(summary="New.", heat=3)
    out = render_scene(scene)
    for comment in ("# my note about this scene\n", "# why I keep it\n", "# the end\n"):
        assert comment in out
    assert out.index("# why I keep it") < out.index("heat: 3")


def test_a_key_written_twice_makes_the_header_unreadable_with_both_lines():
    scene, caught = parse_quiet("---\nrace: Lisbon half\nsummary: s\nrace: Porto 10k\n---\nb\n")
    assert scene.header is None
    assert "'race' appears twice (lines 2 and 4)" in str(caught[0].message)


@pytest.mark.parametrize("style", ["yaml", "block"])
@pytest.mark.parametrize("times", ["iso", "obsidian"])
@pytest.mark.parametrize("summary", [
    "Adopted a kitten named Miso 🐱 from the shelter in Braga.",
    "Shelter, kitten and adopted: 1 entry. Latest: Miso 🐱 from Braga.",   # quoted (": ")
    "  leading spaces, 🐱 and a bell \x07",                                # double-quoted
    "𠀀𠀁 rare Han, 🇵🇹 a flag, 👩‍👧 a family",
])
def test_characters_beyond_the_bmp_are_written_as_themselves(summary, style, times):
    scene = Scene(name="s.md", meta={"summary": summary, "heat": 1, "mood": "😊 good"},
                  body="body\n")
    text = render_scene(scene, style=style, times=times)
    assert "\\U" not in text and "\\u" not in text
    for ch in (c for c in summary + "😊" if ord(c) > 0xFFFF):
        assert ch in text
    back = parse_quiet(text)[0]
    assert back.meta["summary"] == summary and back.meta["mood"] == "😊 good"


def _laughs(levels: int) -> str:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for before, name in zip("abcdefghij", "bcdefghijk"[:levels - 1], strict=False):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nbillion laughs\n"


def test_a_header_whose_aliases_expand_past_the_bound_is_unreadable_not_a_hang(tmp_path):
    # Ten lines of `&b [*a, *a, ...]` name 9**10 values: every command that read the file
    # (status, list, doctor, search) ran for minutes and gigabytes. It is now a header the
    # engine cannot read, said once, and the file is left alone; small aliases still read.
    scene, caught = parse_quiet(_laughs(10), "laughs.md")
    assert scene.header is None and "billion laughs" in scene.body
    assert any("aliases" in str(w.message) and "10,000" in str(w.message) for w in caught)
    small, caught = parse_quiet("---\nx: &a [1, 2]\ny: *a\nsummary: ok\n---\nbody\n")
    assert small.meta["y"] == [1, 2] and small.meta["summary"] == "ok" and not caught
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    from scene_engine.store.store import init_store

    root = tmp_path / "store"
    init_store(root)
    (root / "scenes" / "laughs.md").write_text(_laughs(10), encoding="utf-8")
    runner = CheckedRunner()
    for args in (["status"], ["list"], ["search", "laughs"], ["doctor"]):
        result = runner.invoke(app, ["--dir", str(root), *args])
        assert result.exit_code in (0, 1), (args, result.output)
    assert "laughs.md" in result.output and "aliases" in result.output   # doctor names it
