"""Conversations in (issue 12) with a model: scripted replies through tests/fakellm.py, the
well-behaved and the misbehaving (bad scope, invented or context sources, malformed JSON,
low-confidence merges, a missing draft, a failing adjudicator)."""

from __future__ import annotations

import json

import git
import pytest
from clirunner import CheckedRunner
from fakellm import call, error, reply

from scene_engine.cli import app
from scene_engine.extraction import events as ledger
from scene_engine.extraction import review
from scene_engine.extraction.model import ExtractionError, ModelSettings
from scene_engine.extraction.pipeline import extract_file
from scene_engine.llm.loop import Budget
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

runner = CheckedRunner()
WHEN = "2026-11-30T09:00:00Z"
CHAT = [{"role": "user", "name": "Ana", "id": "m1", "created_at": WHEN,
         "content": "We moved the build from Make to Bazel; Make is gone for good."},
        {"role": "user", "name": "Ana", "id": "m2", "created_at": WHEN,
         "content": "Our build uses Bazel now, since November."}]
OLD = "\n".join([f"Ana: Fact number {i} about gardening and tomatoes {i}." for i in range(14)]
                + ["Ana: The Makefile build runs on Make with a " + "very " * 90 + "long file."])


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def settings(fake) -> ModelSettings:
    return ModelSettings(model="openai/test-model", api_base=fake.api_base, api_key="sk-test",
                         backoff=0, budget=Budget(max_seconds=30, retries=0, backoff=0))


def record(*memories):
    return reply(tool_calls=[call("record_memories", {"memories": list(memories)})])


def memory(sources, scope="project", title="Build tool: Bazel",
           summary="The build moved from Make to Bazel.", **more):
    return {"title": title, "summary": summary, "scope": scope, "sources": sources, **more}


def verdict(**answer):
    return reply(tool_calls=[call("adjudicate", answer)])


def context_of(request: dict) -> list[dict]:
    """The existing memories shown in an extraction request."""
    text = request["messages"][1]["content"]
    shown = text.split("\n\nThe block to extract")[0].split("\n", 1)[1]
    return json.loads(shown)


def chat_bytes() -> bytes:
    return json.dumps(CHAT).encode()


def state_of(store):
    files = {p.name: p.read_bytes() for p in store.memories_dir.glob("*.jsonl")}
    return git.Repo(store.root).head.commit.hexsha, files


# ---------------------------------------------------------------- extraction

def test_a_well_behaved_model_supersedes_with_context_that_is_never_a_source(store, fake_llm,
                                                                           tmp_path):
    extract_file(store, OLD.encode(), "old.txt")            # 15 existing memories
    old_make = next(m for m in Journal(store.memories_dir).all() if "Makefile" in m.content)

    def answer(request):
        shown = context_of(request)
        make = next(c["id"] for c in shown if "Makefile" in c["text"])
        return record(memory(["m1", "m2"], relations=[{"type": "supersedes", "target": make}],
                             extractor_version="evil/9"))

    fake_llm.script([answer])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    shown = context_of(fake_llm.requests[0])
    assert len(shown) <= 12 and all(len(c["text"]) <= 400 for c in shown)
    assert all(c["scope"] == "session" and c["status"] == "active" for c in shown)
    assert old_make.id in {c["id"] for c in shown}
    new = Journal(store.memories_dir).find(report.added_ids[0])
    assert (new.title, new.scope, new.sources) == ("Build tool: Bazel", "project", ("m1", "m2"))
    assert new.extractor_version == "model/1"                # set by code, not by the model
    assert new.relations == ({"type": "supersedes", "target": old_make.id},)
    assert new.metadata["quotes"]["m2"] == CHAT[1]["content"]
    status = ledger.statuses(Journal(store.memories_dir).all(), ledger.read_events(store))
    assert status[old_make.id] == "superseded"               # the older one stays, marked
    assert Journal(store.memories_dir).find(old_make.id) == old_make
    # Recall gives the current word only; the superseded memory stays findable in search.
    from scene_engine.index.scenes import read_index
    from scene_engine.recall.assemble import recall

    told = recall(store, "Which build tool: the Makefile or Bazel?", budget=4000).text
    assert "Bazel" in told and old_make.content not in told
    index, _ = read_index(store)
    try:
        assert old_make.id in {m.id for m in index.search_memories("Makefile", k=20)}
    finally:
        index.close()


def test_the_same_file_extracted_again_sends_the_model_nothing_it_already_read(store,
                                                                             fake_llm):
    fake_llm.script([record(memory(["m1", "m2"]))])
    first = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert first.added == 1 and len(fake_llm.requests) == 1
    again = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert again.added == 0 and len(fake_llm.requests) == 1       # no call, no paraphrase
    longer = [*CHAT, {"role": "user", "id": "m3", "content": "Also, tests run on CI nightly."}]
    fake_llm.script([record(memory(["m3"], title="CI: nightly tests",
                                   summary="Tests run on CI every night."))])
    later = extract_file(store, json.dumps(longer).encode(), "chat.json", settings(fake_llm))
    assert later.added == 1
    sent = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "nightly" in sent and CHAT[0]["content"] not in sent    # only the new message


def test_a_bad_scope_is_sent_back_and_the_corrected_answer_is_written(store, fake_llm):
    fake_llm.script([record(memory(["m1"], scope="forever")), record(memory(["m1"]))])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert report.added == 1
    retry = fake_llm.requests[1]["messages"][-1]["content"]
    assert "refused" in retry and "scope" in retry


@pytest.mark.parametrize("answers", [
    ["scope-forever"] * 3,
    ["invented", "context", "no-scope"],
])
def test_no_valid_answer_after_three_attempts_writes_nothing(store, fake_llm, tmp_path,
                                                             answers):
    extract_file(store, b"Ana: The build runs on Make.\n", "old.txt")

    def misbehave(kind):
        def answer(request):
            if kind == "invented":
                return record(memory(["m77"]))
            if kind == "context":
                return record(memory([context_of(request)[0]["id"]]))
            if kind == "no-scope":
                return record({"title": "t", "summary": "s", "sources": ["m1"]})
            return record(memory(["m1"], scope="forever"))
        return answer

    fake_llm.script([misbehave(kind) for kind in answers])
    before = state_of(store)
    path = tmp_path / "chat.json"
    path.write_bytes(chat_bytes())
    result = runner.invoke(app, ["--dir", str(store.root), "extract", str(path), "--model",
                                 "openai/test-model", "--api-base", fake_llm.api_base])
    assert result.exit_code == 1
    assert "nothing written" in result.output
    assert len(fake_llm.requests) == 3
    assert state_of(store) == before


def test_control_characters_from_the_model_are_sent_back_never_written(store, fake_llm):
    fake_llm.script([record(memory(["m1"], summary="Bazel\u0000\u0007 build")),
                     record(memory(["m1"]))])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert report.added == 1
    assert "control character" in fake_llm.requests[1]["messages"][-1]["content"]
    journal = "".join(p.read_text() for p in store.memories_dir.glob("*.jsonl"))
    assert "\\u0000" not in journal and "\x00" not in journal


def test_malformed_json_is_retried_and_a_text_answer_is_accepted(store, fake_llm):
    fake_llm.script([reply(tool_calls=[call("record_memories", '{"memories": [')]),
                     reply(content="Here you go:\n```json\n" + json.dumps(
                         {"memories": [memory(["m2"])]}) + "\n```")])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert report.added == 1
    assert "not valid JSON" in fake_llm.requests[1]["messages"][-1]["content"]


def test_exact_duplicates_in_one_answer_become_one_memory_with_both_sources(store, fake_llm):
    fake_llm.script([record(memory(["m1"]), memory(["m2"]),
                            memory(["m2"], scope="session", summary="Bazel since November."))])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    memories = [Journal(store.memories_dir).find(i) for i in report.added_ids]
    assert [(m.sources, m.scope) for m in memories] == [(("m1", "m2"), "project"),
                                                        (("m2",), "session")]


# ---------------------------------------------------------------- adjudication

def _two_blocks(fake_llm):
    """Block 1 and block 2 each give a memory about the same fact (a candidate pair)."""
    return [record(memory(["m1"], summary="Ana's build moved from Make to Bazel.")),
            record(memory(["m2"], summary="Ana's build moved from Make to Bazel in November."))]


def test_a_confident_merge_with_a_draft_is_applied_and_can_be_undone(store, fake_llm):
    fake_llm.script([*_two_blocks(fake_llm),
                     verdict(verdict="KEEP_RIGHT", confidence=0.95, title="Build tool: Bazel",
                             summary="Moved from Make to Bazel in November; Make is gone.")])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm), block_size=1)
    assert (report.candidates, report.merged, report.queued) == (1, 1, 0)
    asked = json.loads(fake_llm.requests[2]["messages"][-1]["content"])
    assert asked["left"]["sources"][0] == {"id": "m1", "text": CHAT[0]["content"]}
    merge = review.merges(store)[0]
    status = ledger.statuses(Journal(store.memories_dir).all(), ledger.read_events(store))
    assert [status[i] for i in merge["retired"]] == ["merged", "merged"]
    assert Journal(store.memories_dir).find(merge["created"]).sources == ("m1", "m2")
    review.undo(store, merge["merge"])
    status = ledger.statuses(Journal(store.memories_dir).all(), ledger.read_events(store))
    assert [status[i] for i in merge["retired"]] == ["active", "active"]
    assert status[merge["created"]] == "retracted"


@pytest.mark.parametrize("answers, reason", [
    ([verdict(verdict="KEEP_LEFT", confidence=0.6, title="T", summary="S")], "0.60"),
    ([verdict(verdict="KEEP_RIGHT", confidence=0.97)], "without a complete merged draft"),
    ([verdict(verdict="REVIEW", confidence=0.5)], "asked for review"),
    ([reply(content="not json"), verdict(verdict="MAYBE", confidence=2)],
     "adjudication failed"),
    ([error(500), error(503)], "adjudication failed"),
])
def test_doubtful_verdicts_keep_both_and_queue_the_pair(store, fake_llm, answers, reason):
    fake_llm.script([*_two_blocks(fake_llm), *answers])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm), block_size=1)
    assert (report.merged, report.queued) == (0, 1)
    assert len(fake_llm.requests) == 2 + len(answers)       # at most two tries per pair
    pair = review.queue(store)[0]
    assert reason in pair["reason"]
    assert (pair["left"]["status"], pair["right"]["status"]) == ("active", "active")


def test_a_merge_draft_with_control_characters_is_never_applied(store, fake_llm):
    bad = verdict(verdict="KEEP_LEFT", confidence=0.99, title="Bazel\u0001", summary="S\u0007")
    fake_llm.script([*_two_blocks(fake_llm), bad, bad])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm), block_size=1)
    assert (report.merged, report.queued) == (0, 1)
    pair = review.queue(store)[0]
    with pytest.raises(review.MergeRefused, match="control"):
        review.decide(store, pair["pair"], "left", title="Bazel\x01", summary="Moved.")
    assert review.queue(store)                               # still waiting for a person


def test_a_confident_keep_both_is_recorded_not_queued(store, fake_llm):
    fake_llm.script([*_two_blocks(fake_llm), verdict(verdict="KEEP_BOTH", confidence=0.92)])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm), block_size=1)
    assert (report.kept_both, report.queued, report.added) == (1, 0, 2)
    assert review.queue(store) == []


def test_model_failure_stops_the_run_before_anything_is_written(store, fake_llm):
    fake_llm.script([error(400)] * 3)
    before = state_of(store)
    with pytest.raises(ExtractionError):
        extract_file(store, chat_bytes(), "chat.json", settings(fake_llm))
    assert state_of(store) == before


def test_a_confident_merge_whose_draft_is_one_of_the_two_word_for_word_keeps_that_one(
        store, fake_llm):
    # plan_merge gives no new memory then; the adjudicator's decision once handed the journal
    # a None to append (found by the type checker).
    fake_llm.script([*_two_blocks(fake_llm),
                     verdict(verdict="KEEP_LEFT", confidence=0.95, title="Build tool: Bazel",
                             summary="Ana's build moved from Make to Bazel in November.")])
    report = extract_file(store, chat_bytes(), "chat.json", settings(fake_llm), block_size=1)
    assert (report.candidates, report.merged, report.queued, report.added) == (1, 1, 0, 2)
    merge = review.merges(store)[0]
    assert merge["created"] is None
    status = ledger.statuses(Journal(store.memories_dir).all(), ledger.read_events(store))
    kept = Journal(store.memories_dir).find(merge["keep"])
    assert kept.content.endswith("in November.") and status[kept.id] == "active"
    assert [status[i] for i in merge["retired"]] == ["merged"]
