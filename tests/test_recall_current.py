"""Recall gives what is true now first, and the earlier values as history (issue 26)."""

from __future__ import annotations

import json

import pytest

from scene_engine.index.scenes import for_store
from scene_engine.offline.backend import OfflineBackend
from scene_engine.recall.assemble import recall
from scene_engine.recall.current import read_question, states
from scene_engine.services.add import add_memories
from scene_engine.services.run import run_pending
from scene_engine.store.store import init_store

LISBON = [
    ("m1", "2025-01-10", "I live in Lisbon, in a small flat near the river."),
    ("m2", "2025-02-02", "My sister lives in Madrid and wants me to visit."),
    ("m3", "2025-03-15", "Moved to Porto for the new job. The flat smells of paint."),
    ("m4", "2025-06-01", "Had a francesinha with Rui, way too much cheese."),
    ("m5", "2025-09-20", "Thinking of moving to Berlin one day, maybe."),
    ("m6", "2025-12-24", "I miss Porto's bakeries already, odd thing to say."),
    ("m7", "2026-04-03", "Back in Lisbon: we moved back into the old neighbourhood."),
    ("m8", "2026-05-11", "Joana has moved to Berlin, so proud of her."),
]
SUZHOU = [
    ("z1", "2024-03-01", "我住在杭州，每天骑车去西湖边上班。"),
    ("z2", "2024-05-20", "妈妈住在成都，打电话说想我了。"),
    ("z3", "2025-02-14", "搬到上海了，房子小但是离公司近。"),
    ("z4", "2025-08-09", "要不要搬去深圳试试？想想而已。"),
    ("z5", "2026-01-18", "搬家到苏州，新家楼下就是地铁站。"),
    ("z6", "2026-06-30", "好想念杭州的龙井虾仁。"),
]


def _store(tmp_path, rows, fold=False):
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = init_store(tmp_path / "store")
    lines = [json.dumps({"id": i, "created_at": f"{day}T09:00:00Z", "content": text})
             for i, day, text in rows]
    add_memories(store, "\n".join(lines).encode())
    if fold:
        run_pending(store, OfflineBackend())
    return store


def _lines(text: str) -> list[str]:
    body = text[text.index("## Passages\n"):]
    return [line for line in body.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("fold", [False, True], ids=["journal", "folded"])
@pytest.mark.parametrize("question", ["Where do I live now?", "where do i live",
                                      "Which city am I based in these days?"])
def test_the_latest_move_comes_first_marked_current(tmp_path, question, fold):
    store = _store(tmp_path, LISBON, fold)
    found = recall(store, question, budget=1500)
    lines = _lines(found.text)
    assert "current, said 3 April 2026" in lines[0] and "Back in Lisbon" in lines[0]
    # The move before it is history, with the day the next one said otherwise.
    porto = next(line for line in lines if "Moved to Porto" in line)
    assert "said 15 March 2025, until 3 April 2026" in porto
    assert lines.index(porto) < len(lines)
    # Another person's city, a plan and a sigh for a past city are no statement of mine.
    for text in ("Madrid", "Thinking of moving", "I miss Porto", "Joana has moved"):
        line = next((ln for ln in lines if text in ln), "")
        assert "current" not in line and "until" not in line
    assert [p.status for p in found.passages][0].startswith("current")


@pytest.mark.parametrize("question", ["我现在住在哪个城市？", "我家在哪", "我目前住哪"])
def test_chinese_the_latest_move_comes_first_marked_current(tmp_path, question):
    store = _store(tmp_path, SUZHOU)
    lines = _lines(recall(store, question, budget=1500).text)
    assert "current, said 18 January 2026" in lines[0] and "苏州" in lines[0]
    shanghai = next(line for line in lines if "上海" in line)
    assert "until 18 January 2026" in shanghai
    for text in ("成都", "深圳", "好想念杭州"):
        line = next((ln for ln in lines if text in ln), "")
        assert "current" not in line and "until" not in line


def test_the_history_is_kept_and_search_still_finds_every_memory(tmp_path):
    store = _store(tmp_path, LISBON)
    found = recall(store, "Where do I live now?", budget=3000)
    shown = {p.memory for p in found.passages}
    assert {"m1", "m3", "m7"} <= shown
    with for_store(store) as index:
        index.sync()
        assert [m.id for m in index.search_memories("Lisbon flat river")] == ["m1"]


def test_json_says_which_passage_is_current(tmp_path):
    store = _store(tmp_path, LISBON)
    passages = recall(store, "where do I live now", budget=1500).to_json()["passages"]
    assert passages[0]["memory"] == "m7" and passages[0]["status"].startswith("current")
    assert all("status" not in p or p["status"].startswith(("current", "said"))
               for p in passages)


def test_a_question_about_someone_else_or_about_when_is_left_as_it_was(tmp_path):
    store = _store(tmp_path, LISBON)
    for question in ("When did Joana move to Berlin?", "When did I move to Porto?"):
        found = recall(store, question, budget=1500)
        assert not any(p.status for p in found.passages), question
    assert read_question("When did Caroline move to Sweden?") is None


def test_a_job_change_and_a_status_change_in_both_languages(tmp_path):
    rows = [("j1", "2024-01-05", "Four years as a nurse at Hospital Santo António now."),
            ("j2", "2024-09-02", "Handed in my notice at the hospital today."),
            ("j3", "2024-10-01", "First day at Kinetiq as a clinical product specialist."),
            ("j4", "2025-03-03", "My brother joined a bank in Glasgow."),
            ("c1", "2024-02-01", "我在云启科技做产品经理。"),
            ("c2", "2025-05-06", "入职星河教育，第一天就开了三个会。"),
            ("c3", "2025-07-07", "姐姐在新加坡换了工作。")]
    store = _store(tmp_path / "en", rows[:4])
    first = _lines(recall(store, "Who's my employer?", budget=1500).text)[0]
    assert "Kinetiq" in first and "current" in first
    store = _store(tmp_path / "zh", rows[4:])
    first = _lines(recall(store, "我现在在哪工作？", budget=1500).text)[0]
    assert "星河教育" in first and "current" in first


def test_recall_fills_its_budget_with_the_statements_of_the_attribute(tmp_path):
    rows = [(f"w{n:03d}", f"20{20 + n // 12}-{n % 12 + 1:02d}-03",
             f"Started a new job at Company{n} as analyst number {n}.") for n in range(60)]
    store = _store(tmp_path, rows)
    found = recall(store, "Who do I work for now?", budget=2000)
    assert len(found.text) > 1600       # not a few hundred characters
    assert "Company59" in _lines(found.text)[0]


@pytest.mark.parametrize("text, expected", [
    ("Moved to Porto!", True), ("My sister moved to Madrid.", False),
    ("We are thinking of moving to Berlin.", False), ("Joana has moved to Berlin.", False),
    ("Tom and I moved into a flat in Leeds.", True), ("搬到苏州了。", True),
    ("妈妈住在成都。", False), ("要不要搬去杭州？", False), ("我妈妈搬到北京了。", False),
])
def test_who_a_statement_is_about(text, expected):
    question = read_question("Where do I live now?")
    assert question is not None and states(question, text) is expected


@pytest.mark.parametrize("question", ["which city is home these days", "where do i lvie now",
                                      "Were do I live?"])
def test_a_question_without_i_or_with_a_typo_still_asks_for_the_current_value(tmp_path,
                                                                             question):
    store = _store(tmp_path, LISBON)
    assert "Back in Lisbon" in _lines(recall(store, question, budget=1500).text)[0]


def test_a_question_naming_someone_else_gets_no_current_block(tmp_path):
    store = _store(tmp_path, LISBON)
    found = recall(store, "which city is Joana's home now", budget=1500)
    assert not any(p.status for p in found.passages)


@pytest.mark.parametrize("text", ["国庆回成都看爸妈，豆豆已经是一只老猫了。",
                                  "Back in Chicago for Thanksgiving, the old flat is still there."])
def test_a_visit_states_nothing_about_home_or_pets(text):
    for question in ("Where do I live now?", "我目前养的是什么宠物？"):
        found = read_question(question)
        assert found is not None and not states(found, text)
