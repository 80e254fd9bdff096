"""A correction is never skipped away (issue 21 item 4; the seed's rule: a contradiction is
written into the scene's evolution or its open questions, never silently dropped).

A model that answers ``SKIP: m0 contradicts work.md`` for a memory that corrects a scene gets
a repair round that says where the memory goes; a model that keeps skipping it fails the batch
with nothing written and the memory pending. Skips for noise and greetings still pass.
litellm talks HTTP to tests/fakellm.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakellm import call, reply
from test_batch_llm import (
    FAMILY,
    assert_committed_batch,
    assert_nothing_written,
    backend,
    make_store,
    snapshot,
    texts,
    user_messages,
)
from test_conservation_llm import ledger_of

from scene_engine.batch.accounting import account, parse_declarations
from scene_engine.batch.contract import BatchError
from scene_engine.batch.transaction import run_batch
from scene_engine.store.memories import Memory

OLD_FACT = "- 2024-01-10: Alice works on the surgical ward of the city hospital."
WORK_SCENE = ("Alice's nursing job at the city hospital.",
              f"Alice is a nurse at the city hospital.\n\n## Evolution\n{OLD_FACT}\n", 3)
MOVED = "Alice moved from the surgical ward to the children's ward in May 2024."
NEW_FACT = "- 2024-05-01: Alice moved from the surgical ward to the children's ward."

CORRECTIONS = ["m0 contradicts", "contradicts work.md", "CONFLICTS WITH work.md",
               "Correction of an earlier fact in work.md", "it updates the ward in work.md",
               "supersedes what work.md says", "replaces the old ward; keeping work.md as is",
               "not noise, but inconsistent with work.md", "与 work.md 矛盾", "和现有场景冲突",
               "更正了旧的说法", "与场景内容不一致", "更新了病房信息，保留旧的"]
LEGIT = ["a greeting with no lasting meaning", "small talk about the weather",
         "noise: no conflict with any scene", "闲聊，没有长期意义", "只是问候，无需更新场景"]


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path / "mem", {"work.md": WORK_SCENE, "family.md": (*FAMILY, 2)},
                      [MOVED])


def test_a_skipped_correction_gets_a_repair_round_and_lands_in_the_scenes_evolution(
        fake_llm, store):
    record = call("replace_in_file", {"path": "work.md", "old": OLD_FACT + "\n",
                                      "new": f"{OLD_FACT}\n{NEW_FACT}\n"})
    fake_llm.script([reply(content="Nothing to add.\nSKIP: m0 contradicts work.md"),
                     reply(tool_calls=[record]),
                     reply(content="Recorded the move in work.md's evolution.")])

    run_batch(store, backend(fake_llm))

    repair = user_messages(fake_llm)[-1]
    assert "m0: a memory that corrects, updates or contradicts" in repair
    assert "## Evolution" in repair and "## Open threads" in repair
    work = texts(store)["work.md"]
    assert OLD_FACT in work and NEW_FACT in work          # the old fact and the correction
    (entry,) = ledger_of(store).entries
    assert (entry.outcome, entry.scenes) == ("placed", ["work.md"])
    assert_committed_batch(store)


@pytest.mark.parametrize("reason", CORRECTIONS)
def test_a_model_that_keeps_skipping_a_correction_fails_and_writes_nothing(
        fake_llm, store, reason):
    fake_llm.script([reply(content=f"SKIP: m0 {reason}")] * 3)
    before = snapshot(store)

    with pytest.raises(BatchError, match="not a reason for SKIP"):
        run_batch(store, backend(fake_llm), attempts=1)

    assert len(fake_llm.requests) == 2                    # one repair round, then it failed
    assert_nothing_written(store, before)
    assert store.load_state().pending == 1


def test_a_no_change_that_says_the_memory_contradicts_the_scene_is_refused(fake_llm, tmp_path):
    # work.md holds the memory's words, so the claim "already in work.md" passed on its own.
    store = make_store(tmp_path / "mem", {"work.md": (WORK_SCENE[0], WORK_SCENE[1] + MOVED + "\n",
                                                      3)}, [MOVED])
    fake_llm.script([reply(content="NO_CHANGE: m0 already in work.md, which contradicts it")] * 3)
    before = snapshot(store)
    with pytest.raises(BatchError, match="not a reason for NO_CHANGE"):
        run_batch(store, backend(fake_llm), attempts=1)
    assert_nothing_written(store, before)


@pytest.mark.parametrize("reason", LEGIT)
def test_a_skip_for_noise_or_a_greeting_still_passes(fake_llm, store, reason):
    fake_llm.script([reply(content=f"SKIP: m0 {reason}")])
    run_batch(store, backend(fake_llm))
    (entry,) = ledger_of(store).entries
    assert entry.outcome == "skipped" and entry.reason == reason
    assert_committed_batch(store)


def _verdict(line: str) -> tuple[str, str]:
    """('skipped' | 'refused', problem) for one declaration line about memory m0."""
    memory = Memory(seq=0, id="m0", content=MOVED, created_at=datetime(2024, 5, 1, tzinfo=UTC))
    entries, problems = account([memory], [], {}, {}, parse_declarations(line, ["m0"]), True)
    return ("skipped" if entries else "refused"), " ".join(problems)


@pytest.mark.parametrize("reason", CORRECTIONS + [
    "Contradiction with work.md", "CORRECTS the ward", "conflicting info", "overrides work.md",
    "newer than what work.md says", "outdated by this memory", "no longer true per work.md",
    "differs from work.md", "says children's ward instead of surgical", "wrong; work.md says",
    "与work.md相悖", "纠正场景中的错误", "取代旧的事实", "与场景不符", "场景里的说法已过时",
    # A conflict said by denying agreement, or by time words (a later trial's wordings).
    "doesn't match work.md anymore", "work.md is not correct anymore", "not the same as work.md",
    "counter to work.md", "overturns the earlier fact", "the scene already has an older ward",
    "not consistent with work.md", "和work.md不一样了", "和work.md说的不一样",
    "work.md is no longer accurate", "跟场景里的不一样", "场景里写的不对", "work.md has the old ward",
    "she used to work on the surgical ward"])
def test_every_wording_of_a_correction_is_refused_as_a_skip(reason):
    verdict, problem = _verdict(f"SKIP: m0 {reason}")
    assert verdict == "refused" and "## Evolution" in problem, reason


@pytest.mark.parametrize("reason", LEGIT + [
    "routine pleasantry", "the assistant's acknowledgement", "a test message", "thanks",
    "does not contradict anything, just chatter", "updates nothing", "没有任何冲突的寒暄",
    "寒暄而已", "测试消息", "not the same as any scene: just noise"])
def test_a_skip_that_is_not_about_a_correction_is_kept(reason):
    assert _verdict(f"SKIP: m0 {reason}")[0] == "skipped", reason
