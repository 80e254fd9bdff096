"""Issue 21, item 6: a field with a length limit filled from what people wrote (a title, a
summary, a speaker's name) never stops an extraction. A long token (a URL, a key, a hash),
Chinese without spaces, emoji and combining characters at the cut: the conversation is
imported, titles and summaries are cut at a word or character boundary with "…", nothing
said is lost, and no traceback reaches a person (an in-process crash exits 1 too, so each
test also asserts that no exception escaped)."""

from __future__ import annotations

import json
import unicodedata

import git
import pytest
from clirunner import CheckedRunner
from fakellm import call, reply

from scene_engine.cli import app
from scene_engine.extraction import offline
from scene_engine.extraction.schema import ExtractedMemory
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

runner = CheckedRunner()
FAMILY = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"   # one emoji, 7 code points
FLAG = "\U0001F1F5\U0001F1F9"                                          # one flag, 2 code points
LONG_TEXTS = {
    "url": "Our staging login is at https://staging.example.com/" + "a1b2c3" * 60
           + "?token=x and it expires on Friday.",
    "hash": "The release commit is " + "0123456789abcdef" * 40 + " on main.",
    "chinese": "我周末在杭州" + "爬山看风景吃东西" * 400 + "然后回家了",
    "emoji": "Our family photo " + FAMILY * 60 + " is on the fridge.",
    "flags": "Trip plan: " + FLAG * 150 + " every country in the list.",
    "combining": "Her name is spelt Re\u0301ne\u0301e " + "e\u0301" * 400 + " on the form.",
    "long sentence": " ".join(f"word{i}" for i in range(700)) + ".",
}


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    # An exception inside the command would also end with exit code 1: none may escape.
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    assert "Traceback" not in result.output
    return result


def chat_file(tmp_path, text: str, name: str = "Ana", role: str = "user"):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": role, "name": name, "id": "u1", "content": text,
                                 "created_at": "2026-11-30T09:00:00Z"}]), encoding="utf-8")
    return path


def whole_characters(text: str, cut_at: int) -> bool:
    """No cut inside a character as a person sees it: after an accent's base, inside an
    emoji sequence or a flag."""
    if cut_at >= len(text):
        return True
    after, before = text[cut_at], text[cut_at - 1]
    if unicodedata.combining(after) or "\u200D" in (after, before):
        return False
    flags = len(text[:cut_at]) - len(text[:cut_at].rstrip(FLAG[0] + FLAG[1]))
    return flags % 2 == 0


@pytest.mark.parametrize("kind", sorted(LONG_TEXTS))
def test_a_long_token_is_imported_with_every_word_and_limits_kept(store, tmp_path, kind):
    said = LONG_TEXTS[kind]
    result = invoke("--dir", store.root, "extract", chat_file(tmp_path, said), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] >= 1
    memories = Journal(store.memories_dir).all()
    for memory in memories:
        assert memory.sources == ("u1",)
        assert len(memory.title) <= 200 and len(memory.content) <= 2000
        assert memory.content.startswith(memory.title.removesuffix("…"))
        if memory.title.endswith("…"):
            assert whole_characters(memory.content, len(memory.title) - 1), memory.title
    # Nothing said is lost: the pieces, their speaker and cut marks taken off, are the message.
    pieces = [m.content.removeprefix("Ana: ").removesuffix("…").replace(" ", "")
              for m in memories]
    dense = said.replace(" ", "")
    assert "".join(pieces) == dense
    cuts = [sum(map(len, pieces[:i])) for i in range(1, len(pieces))]
    assert all(whole_characters(dense, cut) for cut in cuts)


def test_ingest_conversation_folds_a_long_token_into_scenes(store, tmp_path):
    said = LONG_TEXTS["url"] + " " + LONG_TEXTS["chinese"]
    result = invoke("--dir", store.root, "ingest", "--conversation", chat_file(tmp_path, said))
    assert result.exit_code == 0, result.output
    assert store.scene_names()
    assert "staging.example.com" in invoke("--dir", store.root, "search", "staging",
                                           "--memories").output


def test_a_long_speaker_name_is_cut_in_the_summary_not_refused(store, tmp_path):
    path = chat_file(tmp_path, "I adopted a beagle named Rex last week.", name="N" * 3000)
    result = invoke("--dir", store.root, "extract", path)
    assert result.exit_code == 0, result.output
    (memory,) = Journal(store.memories_dir).all()
    assert memory.content.endswith("…: I adopted a beagle named Rex last week.")
    assert len(memory.title) <= 200


def test_a_model_answer_with_a_long_title_and_summary_is_cut_not_sent_back(store, fake_llm,
                                                                          tmp_path):
    title = "Staging login https://staging.example.com/" + "q" * 400
    summary = "The staging login " + "z" * 3000 + " expires on Friday."
    fake_llm.script([reply(tool_calls=[call("record_memories", {"memories": [
        {"title": title, "summary": summary, "scope": "project", "sources": ["u1"]}]})])])
    path = chat_file(tmp_path, LONG_TEXTS["url"])
    result = invoke("--dir", store.root, "extract", path, "--model", "openai/test-model",
                    "--api-base", fake_llm.api_base)
    assert result.exit_code == 0, result.output
    assert len(fake_llm.requests) == 1                   # accepted as given, cut
    (memory,) = Journal(store.memories_dir).all()
    # Cut inside the URL (the word before it is too early to cut at), marked as cut.
    assert memory.title == title[:199] + "…"
    assert memory.content.startswith(memory.title + ": The staging login zzz")
    assert memory.content.endswith("z…") and len(memory.content) == 200 + 2 + 2000


def test_output_that_breaks_the_schema_is_one_clear_error_and_nothing_written(store, tmp_path,
                                                                             monkeypatch):
    # Whatever rule the offline extractor may one day break, a person gets a sentence.
    def broken(block):
        return [ExtractedMemory(title="t", summary="s", scope="forever", sources=["u1"])]

    monkeypatch.setattr(offline, "extract", broken)
    head = git.Repo(store.root).head.commit.hexsha
    result = invoke("--dir", store.root, "extract", chat_file(tmp_path, "I moved to Porto."))
    assert result.exit_code == 1
    assert "scope" in result.output and "nothing written" in result.output
    assert "errors.pydantic.dev" not in result.output
    assert Journal(store.memories_dir).all() == []
    assert git.Repo(store.root).head.commit.hexsha == head
