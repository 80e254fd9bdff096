"""Issue 21, item 7 (seed 004's rule): ordinary agent steps have a higher bar than what the
user says. An assistant's acknowledgements, congratulations, sympathy, praise, thanks,
wishes, offers of help and stock phrases are never memories and never sources, in English
and Chinese; an assistant sentence that carries a fact is kept; the user's own words keep
the lower bar."""

from __future__ import annotations

import json

import pytest
from clirunner import CheckedRunner
from fakellm import call, reply

from scene_engine.cli import app
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

runner = CheckedRunner()
COURTESY = [
    "Congratulations on the move!", "Understood.", "Got it.", "Sure, here you go!",
    "Great question!", "I'm so sorry to hear about your dog.", "That must be really hard.",
    "That sounds amazing!", "Let me know if you need anything else.", "Happy to help!",
    "You're welcome!", "Good luck with the interview tomorrow!", "Enjoy your trip to Japan!",
    "Thanks for sharing that with me.", "I hope this helps!", "What a lovely idea.",
    "Would you like me to book a table?", "Noted, I'll keep that in mind.",
    "Wishing you all the best with the new job!", "You've got this!", "Of course!",
    "明白了。", "好的。", "恭喜你搬家了！", "收到！", "没问题！", "祝你旅途愉快！", "希望对你有帮助！",
    "有什么需要随时告诉我。", "不客气。", "这听起来很棒！", "你真棒！", "听到这个消息我很难过。",
    "好问题！", "收到，谢谢！",
    # A later trial's wordings: the assistant saying it keeps a note, wishes, sympathy.
    "Absolutely, I've made a note of it.", "Perfect, I've saved that.", "That's noted!",
    "I'm noting that down now.", "我记住了", "行，记下了", "很抱歉听到这个消息", "真为你骄傲",
    "生日快乐", "周末愉快", "希望面试顺利", "好主意", "节哀顺变", "我明白你的意思",
    "非常感谢你的信任", "注意身体哦", "我记住了，谢谢分享", "新年快乐！",
]
FACTS_SAID_BY_THE_ASSISTANT = [
    "In this project the Bazel cache lives in /tmp/bazel.",
    "Your flight to Lisbon leaves at 9:40 from gate B12.",
    "Sure, the standup moved to Friday at 3pm.",
    "好的，已经帮你把会议改到周五下午三点。",
    "I saved your new address as Rua Augusta 12, Porto.",
    "会议改到周三下午三点",
]


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result


def chat(tmp_path, turns: list[tuple[str, str]]):
    """A chat file of (role, text) turns, ids ``t1``, ``t2``, ..."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": role, "id": f"t{i}", "content": text}
                                for i, (role, text) in enumerate(turns, 1)]),
                    encoding="utf-8")
    return path


def sources(store) -> dict[str, str]:
    """{message id: the memory text citing it} of the journal."""
    return {s: m.content for m in Journal(store.memories_dir).all() for s in m.sources}


def test_an_assistants_courtesy_is_neither_a_memory_nor_a_source(store, tmp_path):
    turns = []
    for line in COURTESY:
        turns += [("user", "We finally moved to Porto and I start the new job on Monday."),
                  ("assistant", line)]
    turns += [("assistant", fact) for fact in FACTS_SAID_BY_THE_ASSISTANT]
    result = invoke("--dir", store.root, "extract", chat(tmp_path, turns))
    assert result.exit_code == 0, result.output
    cited = sources(store)
    courtesy_ids = {f"t{2 * i + 2}" for i in range(len(COURTESY))}
    assert not courtesy_ids & cited.keys(), {i: cited[i] for i in courtesy_ids & cited.keys()}
    for line in COURTESY:
        assert all(line not in text for text in cited.values()), line
    first_fact = 2 * len(COURTESY) + 1
    for n, fact in enumerate(FACTS_SAID_BY_THE_ASSISTANT, first_fact):
        assert cited[f"t{n}"] == f"assistant: {fact}"     # a fact the assistant gave stays


def test_a_courtesy_before_a_fact_is_dropped_and_the_fact_kept(store, tmp_path):
    path = chat(tmp_path, [
        ("user", "I moved to Porto last week."),
        ("assistant", "Congratulations on the move! I saved your new address as Rua Augusta "
                      "12, Porto. Let me know if anything else changes."),
        ("assistant", "恭喜！已经把你的新地址记为波尔图奥古斯塔街12号。祝你一切顺利！")])
    assert invoke("--dir", store.root, "extract", path).exit_code == 0
    cited = sources(store)
    assert cited["t2"] == "assistant: I saved your new address as Rua Augusta 12, Porto."
    assert cited["t3"] == "assistant: 已经把你的新地址记为波尔图奥古斯塔街12号。"


def test_a_transcripts_assistant_has_the_higher_bar_and_the_user_the_lower(store, tmp_path):
    path = tmp_path / "talk.txt"
    path.write_text("User: Understood, I will bring the blue folder on Monday.\n"
                    "Assistant: Got it! Great question, by the way.\n"
                    "AI: That sounds wonderful, congratulations!\n"
                    "助手: 好的，没问题！\n"
                    "Claude: Great question, I moved to Berlin in May.\n", encoding="utf-8")
    assert invoke("--dir", store.root, "extract", path).exit_code == 0
    cited = sources(store)
    assert set(cited) == {"talk#1", "talk#5"}           # Claude is a person's name here
    assert cited["talk#1"].startswith("User: Understood, I will bring the blue folder")


def test_a_model_citing_an_assistants_courtesy_is_sent_back(store, fake_llm, tmp_path):
    path = chat(tmp_path, [("user", "We moved to Porto."),
                           ("assistant", "Congratulations on the move! 恭喜！")])

    def record(sources):
        return reply(tool_calls=[call("record_memories", {"memories": [
            {"title": "Home: Porto", "summary": "The user moved to Porto.", "scope": "user",
             "sources": sources}]})])

    fake_llm.script([record(["t1", "t2"]), record(["t1"])])
    result = invoke("--dir", store.root, "extract", path, "--model", "openai/test-model",
                    "--api-base", fake_llm.api_base)
    assert result.exit_code == 0, result.output
    assert len(fake_llm.requests) == 2
    refusal = fake_llm.requests[1]["messages"][-1]["content"]
    assert "'t2'" in refusal and "courtesy" in refusal
    assert sources(store) == {"t1": "Home: Porto: The user moved to Porto."}
