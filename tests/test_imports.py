"""A person's history in (issue 38): ChatGPT and Claude exports, Claude Code and Codex
sessions, each as its public format has it (tests/fixtures/imports/, written from the formats'
documentation and open-source parsers), and each malformed the ways real exports are: cut off,
a missing create_time, a null node, a byte that is not UTF-8."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.core.privacy import redactor
from scene_engine.extraction import jsonstream, sources
from scene_engine.extraction.conversation import Message
from scene_engine.extraction.model import check_context
from scene_engine.extraction.schema import ExtractedMemory, ExtractionOutput, OutputError
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
runner = CheckedRunner()


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def cli(store, *args):
    return runner.invoke(app, ["--dir", str(store.root), *args])


def read(path: Path, fmt: str | None = None) -> list:
    return list(sources.read_input(sources.open_input(str(path)), fmt, redactor()))


def journal(store) -> list:
    return Journal(store.memories_dir).all()


def head(store) -> str:
    return git.Repo(store.root).head.commit.hexsha


# ---------------------------------------------------------------- the four formats

def test_chatgpt_keeps_the_branch_the_person_kept_and_only_what_was_said():
    [conversation] = read(FIXTURES / "chatgpt.json")
    said = {m.id: m for m in conversation.messages}
    assert list(said) == ["n1", "n3", "n4"]          # n2 was regenerated away; n0, n5 hidden/tool
    assert "ABANDONED" not in json.dumps([m.text for m in conversation.messages])
    assert said["n3"].context and not said["n1"].context
    assert said["n1"].created_at.isoformat().startswith("2026-01-01T00:00:00")
    assert said["n4"].text == "Here is the ryokan we picked near Kyoto station."   # private out
    assert said["n4"].origin["attachments"] == ["an image", "ryokan.jpg"]          # noted only
    assert said["n1"].origin == {"format": "chatgpt", "file": "chatgpt.json",
                                 "conversation": "c-1", "title": "Kyoto trip"}


def test_claude_export_reads_text_blocks_and_notes_files():
    first, second = read(FIXTURES / "claude.json")
    assert [m.text for m in first.messages] == [
        "My sourdough starter is called Bubbles and lives on top of the fridge.",
        "A warm spot helps; feed it twice a day.", "I bake every Sunday for my neighbours."]
    assert first.messages[1].context and first.messages[1].speaker == "Claude"
    assert first.messages[0].origin["attachments"] == ["feeding-log.txt"]   # its text unread
    assert "50g flour" not in json.dumps([m.text for m in first.messages])
    assert second.messages[0].text == "My new work laptop is a ThinkPad X1."  # token line out


def test_claude_code_takes_the_persons_words_not_tools_commands_or_meta():
    [session] = read(FIXTURES / "claude-code.jsonl")
    assert session.title == "Fix flaky retry test"                     # the summary line
    assert [(m.id, m.context) for m in session.messages] == [
        ("u1", False), ("a1", True), ("a2", True), ("u5", False)]
    assert session.messages[1].text == "Looking at retry.py now."       # no tool_use, thinking
    assert "hunter22" not in json.dumps([m.text for m in session.messages])   # a tool result
    assert session.messages[0].origin["cwd"] == "/home/ana/orca"
    assert session.key == "5f0c1d2e-0000-4000-8000-000000000001"


def test_codex_skips_the_harness_and_tool_calls():
    [session] = read(FIXTURES / "codex.jsonl")
    assert [(m.text, m.context) for m in session.messages] == [
        ("Our release branch for Orca is cut every second Tuesday.", False),
        ("The latest release branch is release-42.", True)]
    assert session.messages[0].id == "0199e1a2-codex-0001:3"
    assert session.key == "0199e1a2-codex-0001"


def test_an_image_given_to_codex_is_noted_and_its_wrapper_tags_are_no_words(tmp_path):
    """Codex wraps a pasted image in text blocks of markup (`<image>`, `</image>`): noted
    as an image in the source, never words of the person; an image alone is no memory."""
    lines = (FIXTURES / "codex.jsonl").read_text().splitlines()
    def said(*blocks):
        return json.dumps({"timestamp": "2026-03-30T05:40:00.000Z", "type": "response_item",
                           "payload": {"type": "message", "role": "user",
                                       "content": list(blocks)}})
    picture = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    lines[1:1] = [said({"type": "input_text", "text": "Why does this chart dip in May?"},
                       {"type": "input_text", "text": "<image name=[Image #1]>"}, picture,
                       {"type": "input_text", "text": "</image>"}),
                  said({"type": "input_text", "text": "\n"},
                       {"type": "input_text", "text": "<image>"}, picture,
                       {"type": "input_text", "text": "</image>"})]
    path = tmp_path / "rollout-2026-03-30T05-38-34-x.jsonl"
    path.write_text("\n".join(lines) + "\n")
    [session] = read(path)
    texts = [m.text for m in session.messages]
    assert texts[0] == "Why does this chart dip in May?" and len(texts) == 3
    assert not any("image" in text.lower() for text in texts)
    assert session.messages[0].origin["attachments"] == ["an image"]


def test_chatgpt_nodes_without_ids_are_known_by_their_keys(tmp_path):
    export = _chatgpt_export(2)
    for conversation in export:
        for node in conversation["mapping"].values():
            node.pop("id")
            node["message"].pop("id")
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    first, second = read(path)
    assert [m.id for m in first.messages + second.messages] == ["m0", "m1"]


def test_a_file_named_under_attachments_and_files_is_noted_once(tmp_path):
    export = [{"uuid": "k1", "name": "Utils", "created_at": "2026-01-01T09:00:00Z",
               "chat_messages": [{"uuid": "k1-1", "sender": "human",
                                  "created_at": "2026-01-01T09:00:00Z",
                                  "text": "Please tidy my utils module.",
                                  "attachments": [{"file_name": "utils.py",
                                                   "extracted_content": "def f(): pass"}],
                                  "files": [{"file_name": "utils.py"}]}]}]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    [conversation] = read(path)
    assert conversation.messages[0].origin["attachments"] == ["utils.py"]


@pytest.mark.parametrize("name, fmt", [("chatgpt.json", "chatgpt"), ("claude.json", "claude"),
                                       ("claude-code.jsonl", "claude-code"),
                                       ("codex.jsonl", "codex")])
def test_the_format_is_told_from_the_content(name, fmt):
    with (FIXTURES / name).open("rb") as stream:
        assert sources.detect(stream) == fmt


# ---------------------------------------------------------------- into the journal

def test_only_the_persons_words_become_memories_each_citing_its_source(store):
    result = cli(store, "extract", str(FIXTURES / "claude-code.jsonl"))
    assert result.exit_code == 0, result.output
    memories = journal(store)
    assert [m.sources for m in memories] == [("u1",), ("u5",)]
    assert all(m.role == "user" for m in memories)
    assert memories[1].scope == "user"                   # "From now on, …"
    assert memories[0].metadata["source"]["title"] == "Fix flaky retry test"
    assert memories[0].metadata["source"]["file"] == "claude-code.jsonl"


def test_reimporting_or_a_later_export_adds_only_what_is_new(store, tmp_path):
    assert cli(store, "extract", str(FIXTURES / "chatgpt.json")).exit_code == 0
    before, first = head(store), [m.id for m in journal(store)]
    again = cli(store, "extract", str(FIXTURES / "chatgpt.json"), "--json")
    assert json.loads(again.output)["added"] == 0 and head(store) == before
    later = json.loads((FIXTURES / "chatgpt.json").read_text())
    later.append({"title": "Bike", "create_time": 1767312000, "conversation_id": "c-2",
                  "current_node": "b1", "mapping": {
                      "b1": {"id": "b1", "parent": None, "children": [], "message": {
                          "id": "b1", "author": {"role": "user"}, "create_time": 1767312000,
                          "content": {"content_type": "text",
                                      "parts": ["I commute by bike along the river."]}}}}})
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(later))
    result = json.loads(cli(store, "extract", str(path), "--json").output)
    assert result["added"] == 1 and result["known"] == len(first)
    assert [m.id for m in journal(store)][:len(first)] == first


def test_a_folder_of_sessions_is_read_whole(store, tmp_path):
    projects = tmp_path / "projects"
    for name in ("-home-ana-orca", "-home-ana-kite"):
        (projects / name).mkdir(parents=True)
    shutil.copy(FIXTURES / "claude-code.jsonl", projects / "-home-ana-orca" / "s1.jsonl")
    other = (FIXTURES / "claude-code.jsonl").read_text().replace("u1", "k1").replace(
        "flaky on ARM", "slow on Windows").replace("u5", "k5").replace("three", "five")
    (projects / "-home-ana-kite" / "s2.jsonl").write_text(other)
    report = json.loads(cli(store, "extract", str(projects), "--json").output)
    assert report["conversations"] == 2 and report["added"] == 4
    files = {m.metadata["source"]["file"] for m in journal(store)}
    assert files == {"-home-ana-orca/s1.jsonl", "-home-ana-kite/s2.jsonl"}


def test_dry_run_shows_what_would_be_taken_and_writes_nothing(store):
    before = head(store)
    result = cli(store, "extract", str(FIXTURES / "claude.json"), "--dry-run")
    assert result.exit_code == 0
    assert "Bubbles" in result.output and "ThinkPad" in result.output
    assert "ghp_" not in result.output and "nothing was written" in result.output
    assert head(store) == before and journal(store) == []


def test_an_unknown_format_is_refused_in_one_line(store, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('[{"foo": 1}]')
    result = cli(store, "extract", str(path))
    assert result.exit_code == 2
    [line] = [x for x in result.output.splitlines() if x.strip()]
    assert all(name in line for name in sources.FORMATS)


def test_a_format_named_wrong_is_refused(store):
    result = cli(store, "extract", str(FIXTURES / "codex.jsonl"), "--format", "slack")
    assert result.exit_code == 2 and "claude-code" in result.output


@pytest.mark.parametrize("named,export", [("claude", "chatgpt.json"),
                                           ("chatgpt", "claude.json"),
                                           ("chatgpt", "claude-code.jsonl"),
                                           ("codex", "chatgpt.json")])
def test_a_format_that_is_not_the_files_reads_nothing_and_fails(store, named, export):
    """Every conversation skipped is no success: exit 2, each named with why, nothing
    written (a dry run too)."""
    before = head(store)
    for dry in ((), ("--dry-run",)):
        result = cli(store, "extract", str(FIXTURES / export), "--format", named, *dry)
        assert result.exit_code == 2, result.output
        assert "nothing read" in result.output and "Traceback" not in result.output
    assert head(store) == before and journal(store) == []


@pytest.mark.parametrize("layout,words", [("transcript", "not `Name: text`"),
                                          ("locomo", "not a LoCoMo sample"),
                                          ("messages", "unknown field")])
def test_an_older_layout_named_is_read_as_that_layout(store, layout, words):
    """``--format transcript`` / ``locomo`` / ``messages`` on an export: refused in that
    layout's own words, never read by another layout's rules."""
    for export in ("chatgpt.json", "claude.json"):
        result = cli(store, "extract", str(FIXTURES / export), "--format", layout)
        assert result.exit_code == 2 and words in result.output, result.output
    assert journal(store) == []


def test_a_file_that_is_no_text_is_an_unknown_format_and_a_zip_says_unzip(store, tmp_path):
    import zipfile

    binary = tmp_path / "photo.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        packed.write(FIXTURES / "chatgpt.json", "conversations.json")
    said = cli(store, "extract", str(binary))
    assert said.exit_code == 2 and all(name in said.output for name in sources.FORMATS)
    zipped = cli(store, "extract", str(archive))
    assert zipped.exit_code == 2 and "unzip" in zipped.output and "line" not in zipped.output
    assert journal(store) == []


def test_an_export_cut_inside_its_first_conversation_is_still_told_and_named(store, tmp_path):
    for export in (_chatgpt_export(2), _claude_export(2)):
        data = json.dumps(export, indent=1).encode()
        path = tmp_path / "conversations.json"
        path.write_bytes(data[: len(data) // 4])               # inside the first
        result = cli(store, "extract", str(path))
        assert result.exit_code == 2, result.output
        assert "conversation 1" in result.output and "cut off" in result.output


def test_a_long_message_is_cut_with_a_note_never_in_silence(store, tmp_path):
    """A pasted document over the message limit: its first 50,000 characters kept, and the
    import says which message was cut (the text, the dry run and --json)."""
    export = _chatgpt_export(1)
    text = "I keep bees on the roof. " + "The hive log says calm. " * 3000
    export[0]["mapping"]["m0"]["message"]["content"]["parts"] = [text]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    dry = cli(store, "extract", str(path), "--dry-run")
    assert dry.exit_code == 0 and "was cut to its first 50,000" in dry.output
    assert "I keep bees on the roof" in dry.output.split("note:")[-1]
    report = json.loads(cli(store, "extract", str(path), "--json").output)
    assert report["added"] >= 1 and len(report["notes"]) == 1
    assert report["notes"][0].startswith("conversations.json, conversation 1 ")


def test_a_bad_message_in_a_messages_file_is_said_once(store, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "x " * 30000}]))
    result = cli(store, "extract", str(path))
    assert result.exit_code == 2
    assert result.output.count("conversation refused") == 1 and "at most 50000" in result.output


# ---------------------------------------------------------------- malformed as real exports are

def _chatgpt_export(count: int) -> list[dict]:
    out = []
    for n in range(count):
        out.append({"title": f"Chat {n}", "create_time": 1767225600 + n * 86400,
                    "conversation_id": f"c{n}", "current_node": f"m{n}", "mapping": {
                        f"m{n}": {"id": f"m{n}", "parent": None, "children": [], "message": {
                            "id": f"m{n}", "author": {"role": "user"},
                            "create_time": 1767225600 + n * 86400,
                            "content": {"content_type": "text",
                                        "parts": [f"Fact number {n}: I planted {n} tulips."]}}}}})
    return out


def _claude_export(count: int) -> list[dict]:
    return [{"uuid": f"k{n}", "name": f"Chat {n}", "created_at": "2026-01-0{n + 1}T09:00:00Z",
             "chat_messages": [{"uuid": f"k{n}-1", "sender": "human",
                                "created_at": "2026-01-0{n + 1}T09:00:00Z",
                                "text": f"Fact number {n}: I planted {n} roses."}]}
            for n in range(count)]


def test_a_cut_off_export_keeps_what_came_before_and_says_where(store, tmp_path):
    data = json.dumps(_chatgpt_export(3)).encode()
    path = tmp_path / "conversations.json"
    path.write_bytes(data[: data.index(b'"c2"') + 10])          # the download stopped
    result = cli(store, "extract", str(path), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["added"] == 2
    assert report["broken"][0]["where"].startswith("conversations.json, conversation 3 ")
    assert "cut off" in report["broken"][0]["reason"]
    strict = cli(store, "extract", str(path), "--strict")
    assert strict.exit_code == 2 and "conversation 3" in strict.output


def test_strict_refuses_the_whole_file_and_writes_nothing(store, tmp_path):
    data = json.dumps(_chatgpt_export(3)).encode()
    path = tmp_path / "conversations.json"
    path.write_bytes(data.replace(b"tulips.\"]}}}}}, {", b"tulips.\"]}}}}}, {", 1)
                     .replace(b"planted 1 tulips", b"planted 1 tulip\xff", 1))
    before = head(store)
    result = cli(store, "extract", str(path), "--strict")
    assert result.exit_code == 2 and "not UTF-8" in result.output
    assert head(store) == before and journal(store) == []
    relaxed = json.loads(cli(store, "extract", str(path), "--json").output)
    assert relaxed["added"] == 2 and "not UTF-8" in relaxed["broken"][0]["reason"]
    assert relaxed["broken"][0]["where"].startswith("conversations.json, conversation 2")


def test_a_missing_create_time_takes_the_nearest_known_time(tmp_path):
    export = json.loads((FIXTURES / "chatgpt.json").read_text())
    del export[0]["mapping"]["n4"]["message"]["create_time"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    [conversation] = read(path)
    times = {m.id: m.created_at for m in conversation.messages}
    assert times["n4"] == times["n3"]                # the message before it, not today


def test_a_null_node_ends_the_branch_there_with_a_note(store, tmp_path):
    export = json.loads((FIXTURES / "chatgpt.json").read_text())
    export[0]["mapping"]["n1"] = None
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    [conversation] = read(path)
    assert [m.id for m in conversation.messages] == ["n3", "n4"]
    assert "n1 is missing or null" in conversation.notes[0]
    result = cli(store, "extract", str(path))
    assert result.exit_code == 0 and "note:" in result.output


def test_a_session_file_with_a_torn_line_and_a_bad_byte_keeps_the_rest(store, tmp_path):
    lines = (FIXTURES / "claude-code.jsonl").read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"flaky", b"fl\xe9ky")            # not UTF-8
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b'{"type":"user","message":{"ro')   # torn last line
    report = json.loads(cli(store, "extract", str(path), "--json").output)
    assert [b["where"] for b in report["broken"]] == ["session.jsonl, line 2",
                                                      "session.jsonl, line 10"]
    assert report["added"] == 1                                   # u5 still taken


def test_a_cut_off_claude_export_keeps_the_whole_conversations(store, tmp_path):
    data = (FIXTURES / "claude.json").read_bytes()
    path = tmp_path / "conversations.json"
    path.write_bytes(data[: data.index(b"Work laptop")])
    report = json.loads(cli(store, "extract", str(path), "--json").output)
    assert report["conversations"] == 1 and report["added"] == 2 and len(report["broken"]) == 1


# ---------------------------------------------------------------- a stream, and the model's rule

def test_the_stream_reader_gives_every_element_whatever_the_chunk(monkeypatch):
    monkeypatch.setattr(jsonstream, "CHUNK", 5)
    values = [{"n": n, "text": "é" * n} for n in range(30)]
    data = json.dumps(values, ensure_ascii=False).encode()
    got = list(jsonstream.elements(io.BytesIO(data)))
    assert [e.value for e in got] == values and all(e.error is None for e in got)


def test_a_model_may_not_make_the_assistants_words_the_persons():
    block = [Message("u", "user", "I moved to Porto.", None, 1, 1, "user"),
             Message("a", "ChatGPT", "Porto is in Portugal.", None, 1, 2, "assistant",
                     context=True)]
    claim = ExtractionOutput(memories=[ExtractedMemory(
        title="Porto", summary="Porto is in Portugal.", scope="user", sources=["a"])])
    with pytest.raises(OutputError, match="only the assistant's words"):
        check_context(claim, block)
    check_context(ExtractionOutput(memories=[ExtractedMemory(
        title="Moved", summary="Moved to Porto.", scope="user", sources=["u", "a"])]), block)
