"""L1 memories (DESIGN.md "Command line", memory input): `scenes add`, validation, the journal."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import unicodedata
from datetime import UTC, datetime

import git
import pytest
from clirunner import CheckedRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scene_engine.batch.transaction import select_batch
from scene_engine.cli import app
from scene_engine.services.add import add_memories
from scene_engine.store.memories import (
    MAX_CONTENT_CHARS,
    SEGMENT,
    Journal,
    MemoryInputError,
    parse_input,
)
from scene_engine.store.store import init_store

runner = CheckedRunner()


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def add(store, data: bytes | str):
    """`scenes --dir STORE add -` with ``data`` on stdin; returns the click Result."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return runner.invoke(app, ["--dir", str(store.root), "add", "-"], input=raw)


def snapshot(store) -> tuple[str, dict[str, bytes], str]:
    """(HEAD sha, journal files' bytes, state.json text): what a refused add must not change."""
    repo = git.Repo(store.root)
    files = {p.name: p.read_bytes() for p in sorted(store.memories_dir.glob("*.jsonl"))}
    return repo.head.commit.hexsha, files, store.state_path.read_text("utf-8")


# ---------------------------------------------------------------- accepted input

def test_json_list_and_jsonl_are_both_accepted(store):
    as_list = json.dumps([{"id": "a", "content": "Bought a bike"},
                          {"id": "b", "content": "Rode the bike to work"}], indent=2)
    as_lines = '{"id": "c", "content": "骑车去了西湖"}\n\n{"id": "d", "content": "Fixed a flat"}\r\n'
    assert add(store, as_list).exit_code == 0
    result = add(store, as_lines)
    assert result.exit_code == 0, result.output
    memories = Journal(store.memories_dir).all()
    assert [m.id for m in memories] == ["a", "b", "c", "d"]
    assert [m.seq for m in memories] == [0, 1, 2, 3]
    assert memories[2].content == "骑车去了西湖"
    assert store.load_state().pending == 4


def test_each_add_is_one_commit(store):
    repo = git.Repo(store.root)
    before = len(list(repo.iter_commits()))
    add(store, '{"content": "one"}\n{"content": "two"}\n')
    assert len(list(repo.iter_commits())) == before + 1
    assert not repo.is_dirty(untracked_files=True)


@pytest.mark.parametrize(("given", "expected"), [
    (1_700_000_000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
    (1_700_000_000.5, datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=UTC)),
    ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
    ("2024-03-01T10:30:00Z", datetime(2024, 3, 1, 10, 30, tzinfo=UTC)),
    ("2024-03-01T10:30:00+08:00", datetime(2024, 3, 1, 2, 30, tzinfo=UTC)),
])
def test_epoch_seconds_and_iso_dates_are_accepted(store, given, expected):
    assert add(store, json.dumps([{"content": "dated", "created_at": given}])).exit_code == 0
    (memory,) = Journal(store.memories_dir).all()
    assert memory.created_at == expected
    assert memory.created_at.tzinfo is not None


def test_known_ids_are_skipped_and_counted(store):
    add(store, json.dumps([{"id": "a", "content": "first"}, {"id": "b", "content": "second"}]))
    result = add(store, json.dumps([{"id": "a", "content": "first"},
                                    {"id": "c", "content": "third"}]))
    assert result.exit_code == 0
    assert "added 1 memory (1 known id skipped" in result.stdout
    # A known id with another content is refused whole, as one id twice in one file is: a
    # memory is never rewritten, and a warning after the fact would leave the new one lost.
    refused = add(store, json.dumps([{"id": "d", "content": "fourth"},
                                     {"id": "a", "content": "first, again"}]))
    assert refused.exit_code == 2
    assert "record 2: id 'a' is already known with a different content" in refused.output
    memories = Journal(store.memories_dir).all()
    assert [(m.id, m.content) for m in memories] == [("a", "first"), ("b", "second"),
                                                     ("c", "third")]
    # Re-adding only known ids is a no-op: no commit either.
    head = git.Repo(store.root).head.commit.hexsha
    assert add(store, '{"id": "b", "content": "second"}').exit_code == 0
    assert git.Repo(store.root).head.commit.hexsha == head


def test_exact_duplicate_contents_in_one_input_collapse_to_one(store):
    records = [{"id": f"x{i}", "content": "Ate ramen"} for i in range(3)]
    records.append({"id": "y", "content": "Ate udon"})
    result = add(store, json.dumps(records))
    assert result.exit_code == 0
    assert "2 duplicates collapsed" in result.stdout
    assert [m.content for m in Journal(store.memories_dir).all()] == ["Ate ramen", "Ate udon"]


def test_ids_default_to_a_stable_hash_of_content_and_time(store):
    add(store, '{"content": "x", "created_at": 1700000000}')
    # The same content and time gives the same id, so a re-sent memory is known.
    result = add(store, '{"content": "x", "created_at": "2023-11-14T22:13:20+00:00"}')
    assert "1 known id skipped" in result.stdout
    assert len(Journal(store.memories_dir).all()) == 1


# The same words at the same instant, told apart by what else makes a memory: its scope (who
# sees it), its role (who said it) or its type. Each pair: (first record's extra, second's).
OTHER_MEMORY = [
    ({"scope": "travel-bot"}, {"scope": "code-bot"}),
    ({"scope": "travel-bot"}, {}),
    ({}, {"scope": "code-bot"}),
    ({"role": "user"}, {"role": "assistant"}),
    ({"type": "fact"}, {"type": "preference"}),
]


@pytest.mark.parametrize("ids", [False, True], ids=["derived ids", "own ids"])
@pytest.mark.parametrize(("first", "second"), OTHER_MEMORY)
def test_the_same_words_at_the_same_instant_in_another_scope_are_another_memory(
        store, first, second, ids):
    # Two agents remember the same sentence at the same second, each in its own scope: the
    # second must not vanish into the first (its own scope's search would never see it).
    words = {"content": "The Lisbon office opens at nine.", "created_at": "2024-05-02T09:00:00Z"}
    one, two = {**words, **first}, {**words, **second}
    if ids:
        one["id"], two["id"] = "agent-a-1", "agent-b-1"
    assert add_memories(store, json.dumps(one).encode()).added == 1
    result = add(store, json.dumps(two))                     # the command line's face
    assert result.exit_code == 0, result.output
    assert "added 1 memory" in result.stdout
    kept = Journal(store.memories_dir).all()
    assert len(kept) == 2 and len({m.id for m in kept}) == 2
    assert [{k: getattr(m, k) for k in ("scope", "role", "type") if getattr(m, k)}
            for m in kept] == [first, second]
    if "scope" in second:     # its own scope finds it, by search and by recall
        scope = second["scope"]
        found = runner.invoke(app, ["--dir", str(store.root), "search", "Lisbon office",
                                    "--memories", "--scope", scope, "--json"])
        assert kept[1].id in {hit["id"] for hit in json.loads(found.stdout)}, found.output
        recalled = runner.invoke(app, ["--dir", str(store.root), "recall", "Lisbon office",
                                       "--scope", scope, "--json"])
        # (one passage for the words when an unscoped twin, visible to every scope, has them)
        assert {p.get("memory") for p in json.loads(recalled.stdout)["passages"]} & {
            m.id for m in kept if m.scope in (None, scope)}
    # Added again, each is the memory it is: nothing new, in either face.
    assert add_memories(store, json.dumps(one).encode()).added == 0
    assert "added 0 memories" in add(store, json.dumps(two)).stdout
    assert len(Journal(store.memories_dir).all()) == 2


def test_a_known_id_sent_with_another_scope_is_refused_not_dropped(store):
    kept = {"id": "office", "content": "The Lisbon office opens at nine.", "scope": "travel-bot"}
    assert add_memories(store, json.dumps(kept).encode()).added == 1
    before = snapshot(store)
    for other in ({"scope": "code-bot"}, {"scope": None}, {"role": "assistant"}):
        sent = json.dumps({**kept, **other})
        with pytest.raises(MemoryInputError, match="id 'office' is already known with another"):
            add_memories(store, sent.encode())                # the Python API
        result = add(store, sent)                             # the command line
        assert result.exit_code == 2 and "already known with another" in result.output
        assert snapshot(store) == before                      # nothing written


def test_line_separators_inside_content_survive_the_journal(store):
    tricky = "one\u2028two\u0085three\u2029four"
    assert add(store, json.dumps({"id": "t", "content": tricky}, ensure_ascii=False)).exit_code == 0
    assert add(store, '{"id": "u", "content": "after"}').exit_code == 0
    memories = Journal(store.memories_dir).all()
    assert [m.content for m in memories] == [tricky, "after"]
    assert [m.content for m in select_batch(store, store.load_state(), 5)] == [tricky, "after"]


# ---------------------------------------------------------------- refused input

BAD_JSONL = [
    ("not an object", '42', "JSON object"),
    ("a list", '["content"]', "JSON object"),
    ("missing content", '{"id": "q"}', "content"),
    ("empty content", '{"content": "   "}', "empty"),
    ("over-long content", json.dumps({"content": "x" * (MAX_CONTENT_CHARS + 1)}), "at most"),
    ("bad date", '{"content": "x", "created_at": "last tuesday"}', "ISO-8601"),
    ("boolean date", '{"content": "x", "created_at": true}', "created_at"),
    ("date out of range", '{"content": "x", "created_at": 1e20}', "out of range"),
    ("content not text", '{"content": 5}', "content"),
    ("role not text", '{"content": "x", "role": 3}', "role"),
    ("metadata not an object", '{"content": "x", "metadata": [1]}', "metadata"),
    ("id not text", '{"content": "x", "id": 7}', "id"),
    ("unknown field", '{"content": "x", "tags": ["a"]}', "tags"),
    ("bad JSON", '{"content": "x"', "not valid JSON"),
    ("lone surrogate", '{"content": "a\\ud800b"}', "surrogate"),
    # Not JSON for any other reader of the journal (Node, jq), though Python reads them.
    ("NaN in metadata", '{"content": "x", "metadata": {"a": NaN}}', "NaN is not a JSON"),
    ("Infinity in metadata", '{"content": "x", "metadata": {"a": [-Infinity]}}',
     "-Infinity is not a JSON"),
    # Python's own refusal told a person to call sys.set_int_max_str_digits().
    ("an endless number", '{"content": "x", "id": ' + "9" * 5000 + "}", "5,000 digits"),
    # The 8-bit terminal escape (CSI) and the other C1 controls, as the C0 ones.
    ("a C1 control", '{"content": "a\\u009b31m"}', "control character U+009B"),
    ("invisible content", '{"content": "\\u200b\\u200b \\u2060"}', "only invisible"),
    ("id a boolean", '{"content": "x", "id": true}', "not true (leave"),
]


@pytest.mark.parametrize(("bad", "expected"), [b[1:] for b in BAD_JSONL],
                         ids=[b[0] for b in BAD_JSONL])
def test_one_bad_record_refuses_the_whole_input(store, bad, expected):
    before = snapshot(store)
    good = '{"id": "g1", "content": "fine"}'
    text = "\n".join([good, good.replace("g1", "g2").replace("fine", "also fine"), bad, good])
    result = add(store, text)
    assert result.exit_code == 2
    assert "line 3" in result.stderr
    assert expected in result.stderr
    assert snapshot(store) == before


def test_a_file_saved_as_utf16_is_named_so(store):
    result = add(store, '{"content": "x"}\n'.encode("utf-16"))
    assert result.exit_code == 2
    assert "line 1: invalid UTF-8 at byte 1 of the line" in result.stderr
    assert "looks like UTF-16: save it as UTF-8" in result.stderr


def test_invalid_utf8_is_refused_with_its_line(store):
    before = snapshot(store)
    data = b'{"content": "ok"}\n{"content": "caf\xe9"}\n'
    result = add(store, data)
    assert result.exit_code == 2
    assert "line 2" in result.stderr and "UTF-8" in result.stderr
    assert snapshot(store) == before


def test_every_bad_line_is_named(store):
    before = snapshot(store)
    records = [{"content": "ok"}, {"content": ""}, {"content": "ok 2"}, {"content": 1},
               {"content": "ok 3", "colour": "red"}]
    result = add(store, "\n".join(json.dumps(r) for r in records))
    assert result.exit_code == 2
    for line in ("line 2", "line 4", "line 5"):
        assert line in result.stderr
    assert "line 1:" not in result.stderr and "line 3:" not in result.stderr
    assert snapshot(store) == before


@pytest.mark.parametrize("unreadable", ['{"content": "x"', "not json at all",
                                        '{"content": "x", "content": "y"}'])
def test_a_line_that_is_no_json_does_not_hide_the_other_bad_lines(store, unreadable):
    """One refusal names every bad record, in file order, whatever kind each is: fixing the
    unreadable line must not reveal problems that were there all along."""
    before = snapshot(store)
    lines = [json.dumps({"content": "ok"}), json.dumps({"content": ""}), unreadable,
             json.dumps({"content": "ok 2"}), json.dumps({"id": "q"})]
    result = add(store, "\n".join(lines))
    assert result.exit_code == 2
    named = re.findall(r"line (\d+):", result.stderr)
    assert named == ["2", "3", "5"], result.stderr
    assert snapshot(store) == before


def test_json_list_errors_name_the_line_of_the_record(store):
    text = '[\n  {"content": "ok"},\n  {"content": "ok too"},\n  {"content": ""}\n]'
    result = add(store, text)
    assert result.exit_code == 2
    assert "line 4" in result.stderr


@pytest.mark.parametrize("text", ["", "   \n", "[", '[{"content": "x"}] trailing'])
def test_empty_or_malformed_input_exits_2(store, text):
    before = snapshot(store)
    assert add(store, text).exit_code == 2
    assert snapshot(store) == before


# ---------------------------------------------------------------- round trip (property)

LABEL = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=10).filter(lambda label: label == label.strip())
record = st.fixed_dictionaries(
    # Control characters (C0, DEL, C1) other than tab and line ends are refused (see the
    # next test), and so is content of invisible characters only.
    {"content": st.text(min_size=1, max_size=80).filter(
        lambda s: s.strip() and not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]", s)
        and any(not (c.isspace() or unicodedata.category(c) == "Cf") for c in s))},
    optional={
        "created_at": st.one_of(
            st.integers(min_value=0, max_value=4_000_000_000),
            st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1),
                         timezones=st.just(UTC)).map(datetime.isoformat)),
        "role": st.sampled_from(["user", "assistant"]),
        # A label (``memories.label_problem``): text on one line, no spaces at its ends.
        "type": LABEL,
        "scope": LABEL,
        "metadata": st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5),
                                    max_size=3),
    })


def instant(value) -> datetime | None:
    """The instant a ``created_at`` value names (None: not given, so "now" for all)."""
    if value is None:
        return None
    if isinstance(value, int):
        return datetime.fromtimestamp(value, UTC)
    return datetime.fromisoformat(value)


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(record, min_size=1, max_size=12), as_list=st.booleans())
# A character NFC decomposes (a composition exclusion) and the same word typed NFD and NFC.
@example(records=[{"content": "\U0001d1bb"}], as_list=False)
@example(records=[{"content": "cafe\u0301"}, {"content": "caf\u00e9"}], as_list=True)
def test_valid_records_round_trip_through_add_and_the_journal(tmp_path_factory, records,
                                                                as_list):
    store = init_store(tmp_path_factory.mktemp("prop") / "s")
    for i, r in enumerate(records):
        r["id"] = f"id-{i}"
    text = (json.dumps(records, ensure_ascii=False) if as_list
            else "\n".join(json.dumps(r, ensure_ascii=False) for r in records))
    report = add_memories(store, text.encode("utf-8"))

    # The same content at the same instant, in the same scope, role and type, is one record
    # said twice: collapsed, its id kept as an alias. The same content at another time (or
    # under another scope, role or type) is another memory and kept.
    expected, aliases = {}, {}
    for r in records:
        # Content is stored in NFC (memories.py): canonically equal texts are one text.
        key = (unicodedata.normalize("NFC", r["content"].strip()), instant(r.get("created_at")),
               r.get("scope"), r.get("role"), r.get("type"))
        if key in expected:
            aliases[key].append(r["id"])
        else:
            expected[key], aliases[key] = r, []
    journal = Journal(store.memories_dir).all()
    assert report.added == len(expected) == len(journal)
    assert report.duplicates == len(records) - len(expected)
    pairs = zip(expected.values(), aliases.values(), strict=True)
    for (r, ids), m in zip(pairs, journal, strict=True):
        assert m.id == r["id"] and list(m.aliases) == ids
        assert m.content == unicodedata.normalize("NFC", r["content"].strip())
        for key in ("role", "type", "scope", "metadata"):
            assert getattr(m, key) == r.get(key)
        if isinstance(r.get("created_at"), int):
            assert m.created_at.timestamp() == r["created_at"]
        elif "created_at" in r:
            assert m.created_at == datetime.fromisoformat(r["created_at"])
    assert store.load_state().next_seq == len(journal)
    # What a batch reads is what was added.
    batch = select_batch(store, store.load_state(), len(journal))
    assert [m.content for m in batch] == [m.content for m in journal]


# ---------------------------------------------------------------- batch selection cost

def test_selecting_a_batch_reads_only_the_segments_it_needs(store, monkeypatch):
    total = 5 * SEGMENT
    lines = "\n".join(json.dumps({"id": f"m{i}", "content": f"memory number {i}",
                                  "created_at": 1_700_000_000 + i}) for i in range(total))
    add_memories(store, lines.encode())
    assert sorted(p.name for p in store.memories_dir.glob("*.jsonl")) == [
        f"{n:05d}.jsonl" for n in range(5)]
    # Pretend the first 2,990 memories were folded already: the batch straddles two segments.
    state = store.load_state().model_copy(update={"cursor": 3 * SEGMENT - 10})
    store.save_state(state)

    reads: list[str] = []
    real_read_text, real_read_bytes = pathlib.Path.read_text, pathlib.Path.read_bytes

    def counting_read_text(self, *args, **kwargs):
        reads.append(self.name)
        return real_read_text(self, *args, **kwargs)

    def counting_read_bytes(self, *args, **kwargs):
        reads.append(self.name)
        return real_read_bytes(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_text", counting_read_text)
    monkeypatch.setattr(pathlib.Path, "read_bytes", counting_read_bytes)
    batch = select_batch(store, state, 20)

    assert [m.seq for m in batch] == list(range(2990, 3010))
    assert [m.id for m in batch] == [f"m{i}" for i in range(2990, 3010)]
    assert sorted(n for n in reads if n.endswith(".jsonl")) == ["00002.jsonl", "00003.jsonl"]


def test_adding_known_memories_again_reads_each_segment_once(store, monkeypatch):
    # The index says where each known id is; each segment it names is read once, not once
    # per memory (100,000 known ids took 115 s, issue 39). The same file again adds nothing.
    lines = "\n".join(json.dumps({"id": f"m{i}", "content": f"memory number {i}",
                                  "created_at": 1_700_000_000 + i})
                       for i in range(2 * SEGMENT + 10)).encode()
    add_memories(store, lines)
    reads: list[int] = []
    real_read = Journal._read_segment

    def counting_read(self, number):
        reads.append(number)
        return real_read(self, number)

    monkeypatch.setattr(Journal, "_read_segment", counting_read)
    report = add_memories(store, lines)
    assert (report.added, report.known) == (0, 2 * SEGMENT + 10)
    assert sorted(reads) == [0, 1, 2]


def test_requeued_memories_come_first(store):
    add_memories(store, "\n".join(json.dumps({"content": f"m {i}"}) for i in range(10)).encode())
    state = store.load_state().model_copy(update={"cursor": 6, "requeued": [2, 3]})
    assert [m.seq for m in select_batch(store, state, 4)] == [2, 3, 6, 7]


def test_parse_error_lists_every_problem():
    from scene_engine.store.memories import parse_input

    with pytest.raises(MemoryInputError) as caught:
        parse_input(b'{"content": ""}\n{"content": "ok"}\n{"content": 3}\n')
    assert [line for line, _ in caught.value.problems] == [1, 3]


@pytest.mark.parametrize("given, said", [
    ('[{"content": "ok"}, {"id": 1}]', ["record 2: `content` is required"]),
    ('[{"content": "ok"},\n {"content": ""},\n {"content": 7}]',
     ["record 2 (line 2): ", "record 3 (line 3): "]),
    ('[{"id": "a", "content": "one"}, {"id": "a", "content": "two"}]',
     ["record 2: id 'a' was already used on record 1"]),
    ('{"content": "ok"}\n{"id": 1}\n', ["line 2: `content` is required"]),   # JSONL: lines
])
def test_a_refusal_names_the_record_of_a_json_list(store, given, said):
    result = runner.invoke(app, ["--dir", str(store.root), "add", "-"], input=given)
    assert result.exit_code == 2
    problems = result.stderr.splitlines()[1:]
    assert len(problems) == len(said)
    for line, start in zip(problems, said, strict=True):
        assert line.strip().startswith(start), (line, start)


def test_one_id_for_two_different_memories_refuses_the_input_with_both_lines():
    from scene_engine.store.memories import parse_input

    with pytest.raises(MemoryInputError) as caught:
        parse_input(b'{"id": "dup", "content": "one"}\n{"id": "x", "content": "ok"}\n'
                    b'{"id": "dup", "content": "two"}\n')
    assert caught.value.problems[0][0] == 3
    assert "line 1" in caught.value.problems[0][1]
    # The same id with the same content is a plain repeat: it collapses, nothing refused.
    assert len(parse_input(b'{"id": "a", "content": "same"}\n{"id": "a", "content": "same"}\n')) == 2


def test_rfc3339_lower_case_dates_are_accepted():
    from scene_engine.store.memories import parse_input

    (memory,) = parse_input(b'{"content": "x", "created_at": "2026-02-03t10:00:00z"}')
    assert memory.created_at == datetime(2026, 2, 3, 10, tzinfo=UTC)


def test_bad_json_shapes_are_refused_with_their_lines(tmp_path):
    cases = {'[{"content": "a"},\n]': "line 2: a comma before ]",
             '{"content": "a", "content": "b"}': "line 1: key 'content' appears twice",
             '[{"content": "a"}]\n\n  x': "line 3: text after the closing ]",
             'null': "line 1: a memory must be a JSON object, got null",
             '{"content": "hi \\u001b[31m red"}': "control character U+001B at position 3"}
    for text, message in cases.items():
        with pytest.raises(MemoryInputError) as caught:
            parse_input(text.encode())
        assert message in str(caught.value), (text, str(caught.value))


def _break_index(store, how: str) -> None:
    if how == "deleted":
        store.index_path.unlink()
    elif how == "corrupt":
        store.index_path.write_bytes(b"not a database" * 100)
    elif how == "journal edited by hand":    # an alias written into the segment directly
        segment = sorted(store.memories_dir.glob("*.jsonl"))[0]
        lines = segment.read_text("utf-8").splitlines()
        record = json.loads(lines[0])
        record["aliases"] = ["hand-alias"]
        lines[0] = json.dumps(record)
        segment.write_text("\n".join(lines) + "\n", "utf-8")
        # Committed by the person (as a sync from another device would bring it): an
        # uncommitted rewrite of a journal line is refused by every write.
        subprocess.run(["git", "-c", "user.name=P", "-c", "user.email=p@x", "commit", "-qam",
                        "alias by hand"], cwd=store.root, check=True)


@pytest.mark.parametrize("how", ["current", "deleted", "corrupt", "journal edited by hand"])
def test_add_knows_ids_and_repeats_whatever_state_the_index_is_in(store, how):
    # add looks ids and repeats up in the index; the journal decides when the index cannot.
    first = [{"id": "a", "content": "Ate ramen", "created_at": "2024-01-01T10:00:00Z"},
             {"id": "b", "content": "Ate udon", "created_at": "2024-01-02T10:00:00Z"}]
    assert add(store, json.dumps(first)).exit_code == 0
    _break_index(store, how)
    again = [{"id": "a", "content": "Ate ramen"},                          # a known id
             {"id": "b2", "content": "Ate udon", "created_at": "2024-01-02T11:00:00+01:00"},
             {"id": "c", "content": "Ate soba", "created_at": "2024-01-03T10:00:00Z"}]
    result = add(store, json.dumps(again))
    assert result.exit_code == 0, result.output
    assert "added 1 memory (1 known id skipped, 1 duplicate collapsed" in result.stdout
    known = ["a", "b2", "c"] + (["hand-alias"] if how == "journal edited by hand" else [])
    for memory_id in known:       # each id is known now, its alias too: nothing is added
        head = git.Repo(store.root).head.commit.hexsha
        repeat = add(store, json.dumps({"id": memory_id, "content": "whatever"}))
        assert repeat.exit_code == 2, (memory_id, repeat.output)   # known, with another content
        assert f"id {memory_id!r} is already known" in repeat.output, (memory_id, repeat.output)
        assert git.Repo(store.root).head.commit.hexsha == head
    assert [m.id for m in Journal(store.memories_dir).all()] == ["a", "b", "c"]


def test_a_torn_journal_line_refuses_the_add_even_with_a_current_index(store):
    assert add(store, '{"id": "a", "content": "Ate ramen"}').exit_code == 0
    segment = sorted(store.memories_dir.glob("*.jsonl"))[0]
    segment.write_text(segment.read_text("utf-8") + '{"seq": 1, "id": "b", "cont\n', "utf-8")
    before = snapshot(store)
    result = add(store, '{"id": "c", "content": "Ate soba"}')
    assert result.exit_code != 0 and "line 2" in result.output
    assert snapshot(store) == before


def test_the_same_words_in_another_unicode_form_are_the_same_memory(store):
    import unicodedata

    text = "Café trip to Zürich planned."
    for form in ("NFC", "NFD"):
        result = add(store, json.dumps({"content": unicodedata.normalize(form, text),
                                        "created_at": "2025-06-01T10:00:00Z"}))
        assert result.exit_code == 0
    assert [m.content for m in Journal(store.memories_dir).all()] == [text]


@pytest.mark.parametrize("label, says", [("", "is empty"), ("   ", "is empty"),
                                         (" tenantA", "spaces at its ends"),
                                         ("tenantA ", "spaces at its ends"),
                                         ("a\nb", "one line"), ("x" * 201, "at most 200")])
@pytest.mark.parametrize("key", ["scope", "role", "type"])
def test_a_scope_role_or_type_that_names_nothing_clearly_is_refused(store, key, label, says):
    # " tenantA" would be a scope no search for "tenantA" finds; "" would look like one.
    result = add(store, json.dumps([{"content": "Parked on level 3.", key: label}]))
    assert result.exit_code == 2, result.output
    assert f"`{key}`" in result.stderr and says in result.stderr, result.stderr
    assert Journal(store.memories_dir).all() == []


@pytest.mark.parametrize("when", ["9999-12-31T20:00:00Z", "0001-01-01T00:00:00Z",
                                  "9999-06-01T00:00:00+09:00", 253402300000])
def test_a_time_past_what_any_zone_can_date_is_refused(store, when):
    # Year 9999 in Tokyo is past what a date holds: folding it crashed every later run.
    result = add(store, json.dumps([{"content": "Sentinel note about Kyoto temples.",
                                     "created_at": when}]))
    assert result.exit_code == 2 and "out of range" in result.stderr, result.output
    assert Journal(store.memories_dir).all() == []


def test_the_edges_of_the_range_fold_and_recall_in_a_far_zone(store):
    config = store.root / ".scene-engine" / "config.toml"
    config.write_text(re.sub(r'(?m)^timezone = .*$', 'timezone = "Asia/Tokyo"',
                             config.read_text("utf-8")), "utf-8")
    ok = add(store, json.dumps([
        {"id": "late", "content": "Booked a week in Kyoto.", "created_at": "9998-12-31T00:00:00Z"},
        {"id": "early", "content": "Kyoto temples, first visit.",
         "created_at": "0002-01-01T00:00:00Z"}]))
    assert ok.exit_code == 0, ok.output
    ran = runner.invoke(app, ["--dir", str(store.root), "run"])
    assert ran.exit_code == 0 and ran.exception is None, ran.output
    recalled = runner.invoke(app, ["--dir", str(store.root), "recall", "Kyoto"])
    assert recalled.exit_code == 0 and "Kyoto" in recalled.stdout, recalled.output


def test_metadata_nested_past_the_limit_is_refused_before_anything_is_written(store):
    """Metadata nested hundreds deep once passed the parse and failed the journal's write
    half done, with a traceback; nesting past ``MAX_METADATA_DEPTH`` is refused as bad input,
    and metadata up to it is kept."""
    from scene_engine.store.memories import MAX_METADATA_DEPTH

    def nested(depth: int) -> dict:
        value: object = 1
        for _ in range(depth):
            value = {"a": value}
        assert isinstance(value, dict)
        return value

    assert add(store, json.dumps({"id": "ok", "content": "Kept",
                                  "metadata": nested(MAX_METADATA_DEPTH)})).exit_code == 0
    before = snapshot(store)
    for depth in (MAX_METADATA_DEPTH + 1, 900, 985, 2_000):
        line = json.dumps({"id": f"deep{depth}", "content": "Too deep",
                           "metadata": nested(min(depth, 900))})
        if depth > 900:     # deeper than json.dumps can build here: written by hand
            line = line.replace('{"a": ', '{"a": ' * (depth - 899), 1) + "}" * (depth - 900)
        result = add(store, line)
        assert result.exit_code == 2, (depth, result.output)
        assert "nested" in result.output and "Traceback" not in result.output, depth
        assert snapshot(store) == before
    assert [m.id for m in Journal(store.memories_dir).all()] == ["ok"]


def test_text_given_in_python_with_a_lone_surrogate_is_refused_by_its_name(store):
    before = snapshot(store)
    with pytest.raises(MemoryInputError) as caught:
        add_memories(store, '{"content": "fine"}\n{"content": "a\ud800b"}\n')
    assert caught.value.problems == [(2, "text contains a lone surrogate (invalid Unicode) "
                                         "'\\ud800'")]
    assert snapshot(store) == before


def test_an_input_past_the_bound_is_refused_before_it_fills_the_memory(store, monkeypatch,
                                                                         tmp_path):
    # `scenes add /dev/urandom` read until the machine ran out of memory (24 GB), past
    # every SIGTERM: the input is read a piece at a time and refused past the bound.
    from scene_engine.cli import base

    monkeypatch.setattr(base, "MAX_INPUT_MB", 1)
    before = snapshot(store)
    line = json.dumps({"content": "x" * 100}) + "\n"
    big = tmp_path / "big.jsonl"
    big.write_text(line * (2 * 2**20 // len(line)), encoding="utf-8")
    for source, stdin in ((str(big), None), ("-", big.read_bytes())):
        result = runner.invoke(app, ["--dir", str(store.root), "add", source], input=stdin)
        assert result.exit_code == 2
        assert "more than 1 MB" in result.stderr and "nothing was added" in result.stderr
    assert snapshot(store) == before
    empty = runner.invoke(app, ["--dir", str(store.root), "add", ""])
    assert empty.exit_code == 2 and "FILE is empty" in empty.stderr
    assert snapshot(store) == before


def test_a_large_add_says_its_vectors_come_next_and_a_small_one_does_not(store):
    # 10,000 new memories took a silent 99 s after their commit (their vectors).
    many = "".join(json.dumps({"content": "Walked the dog.", "created_at": 1_700_000_000 + i})
                   + "\n" for i in range(1000))
    result = add(store, many)
    assert result.exit_code == 0
    assert "added 1000 memories; now their vectors" in result.stderr
    assert "Ctrl-C is safe" in result.stderr
    assert result.stdout.startswith("added 1000 memories (0 known ids")
    small = add(store, '{"content": "Fed the cat."}')
    assert small.exit_code == 0 and "vectors" not in small.stderr
