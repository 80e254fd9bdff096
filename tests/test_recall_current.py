"""Recall gives what is true now first, and calls a memory "current" only where the evidence
is strong (issues 26, 36): never a plan, a visit, a room, a return to a habit, another
person's or a pet's attribute, nor the assistant's words."""

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
# The two look-alikes: a room of the flat, a return to an old habit.
ROOM_AND_HABIT = [
    ("m9", "2026-06-01", "Painted the living room green."),
    ("m10", "2026-07-01", "Went back to coffee after a month of tea."),
]
SUZHOU = [
    ("z1", "2024-03-01", "我住在杭州，每天骑车去西湖边上班。"),
    ("z2", "2024-05-20", "妈妈住在成都，打电话说想我了。"),
    ("z3", "2025-02-14", "搬到上海了，房子小但是离公司近。"),
    ("z4", "2025-08-09", "要不要搬去深圳试试？想想而已。"),
    ("z5", "2026-01-18", "搬家到苏州，新家楼下就是地铁站。"),
    ("z6", "2026-06-30", "好想念杭州的龙井虾仁。"),
]
# Nora: her job, her diet, a friend's city and job, a cat, the assistant.
NORA = [
    ("n01", "2024-01-09", "Started at Initech as a product designer."),
    ("n02", "2024-02-02", "I've been vegan for a year now and I feel great."),
    ("n03", "2024-03-15", "Moved to Porto for a change of scene."),
    ("n04", "2024-04-20", "Adopted a grey cat from the shelter and called her Miso."),
    ("n05", "2024-07-22", "Priya lives in Chicago and works at Datadog."),
    ("n06", "2024-10-05", "Vegan didn't stick; I'm vegetarian again and cheese is back."),
    ("n07", "2024-11-12", "The vet put Miso on a kidney diet, poor thing."),
    ("n08", "2024-12-01", "Priya says she's moving to Austin in January."),
    ("n09", "2025-01-10", "Handed in my notice at Initech today."),
    ("n10", "2025-01-28", "Priya moved to Austin and started at Stripe."),
    ("n11", "2025-02-03", "I left Initech and joined Globex as a design lead."),
    ("n12", "2025-05-17", "Moving day: we're back in Lisbon, in the Marvila flat now."),
    ("n13", "2025-06-01", "I live in Berlin, as an AI I do not really live anywhere.",
     "assistant"),
    ("n14", "2025-09-01", "I moved back to bouldering full time, running hurt my knee."),
    ("n15", "2025-09-09", "Since you work at Initech, the Friday demo could help.",
     "assistant"),
]
# 周宁: her home and work, her mother and grandmother, a cousin's company, a dog.
ZHOU = [
    ("c01", "2024-01-03", "我住在杭州，每天骑车去西湖边上班。"),
    ("c02", "2024-01-15", "我在云启科技做产品经理，第三年了。"),
    ("c03", "2024-02-01", "妈妈住在成都，打电话说想我了。"),
    ("c04", "2024-06-18", "小林跳槽去了华为，说加班太多。"),
    ("c05", "2024-10-01", "国庆回杭州看朋友，西湖人太多了。"),
    ("c06", "2024-12-02", "入职星河教育，第一天就开了三个会。"),
    ("c07", "2025-01-06", "打算明年换一辆电车。"),
    ("c08", "2025-02-14", "奶奶住院了，在成都华西医院，妈妈一直陪着。"),
    ("c09", "2025-03-03", "收养了一只柯基，叫可乐。"),
    ("c10", "2025-05-09", "小林入职大疆了，终于不用天天加班。"),
    ("c11", "2025-06-21", "搬家到苏州，新家楼下就是地铁站。"),
    ("c12", "2025-07-07", "阳台改成了小书房，放了一张旧书桌。"),
    ("c13", "2025-08-15", "作为AI我没有宠物，不过柯基很可爱。", "assistant"),
]


def _store(tmp_path, rows, fold=False):
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = init_store(tmp_path / "store")
    lines = [json.dumps({"id": row[0], "created_at": f"{row[1]}T09:00:00Z",
                         "content": row[2], **({"role": row[3]} if len(row) > 3 else {})})
             for row in rows]
    add_memories(store, "\n".join(lines).encode())
    if fold:
        run_pending(store, OfflineBackend())
    return store


def _lines(text: str) -> list[str]:
    body = text[text.index("## Passages\n"):]
    return [line for line in body.splitlines() if line.startswith("- ")]


def _claims(found) -> dict[str, str]:
    """memory id -> status, for the passages that claim something ("current", "until")."""
    return {p.memory or p.text: p.status for p in found.passages
            if p.status.startswith("current") or "until" in p.status}


def _before(lines: list[str], first: str, then: str) -> bool:
    """Whether the line holding ``first`` comes before any line holding ``then``."""
    a = next(n for n, line in enumerate(lines) if first in line)
    return all(a < n for n, line in enumerate(lines) if then in line)


@pytest.mark.parametrize("fold", [False, True], ids=["journal", "folded"])
@pytest.mark.parametrize("question", ["Where do I live now?", "where do i live",
                                      "Which city am I based in these days?"])
def test_the_latest_move_comes_first_and_nothing_else_is_called_current(tmp_path, question,
                                                                        fold):
    store = _store(tmp_path, LISBON, fold)
    found = recall(store, question, budget=1500)
    lines = _lines(found.text)
    assert "Back in Lisbon" in lines[0] and "3 April 2026" in lines[0]
    assert _before(lines, "Back in Lisbon", "Moved to Porto")
    assert found.passages[0].status in ("current, said 3 April 2026", "said 3 April 2026")
    # Another person's city, a plan and a sigh for a past city are no statement of mine.
    for text in ("Madrid", "Thinking of moving", "I miss Porto", "Joana has moved"):
        line = next((ln for ln in lines if text in ln), "")
        assert "current" not in line and "until" not in line and "said" not in line


@pytest.mark.parametrize("question", ["Where do I live now?", "我现在住在哪里？"])
def test_a_room_and_a_return_to_a_habit_are_no_move(tmp_path, question):
    """The issue's example: "living room" is no *live*, "went back" to coffee no move."""
    store = _store(tmp_path, LISBON + ROOM_AND_HABIT)
    found = recall(store, question, budget=1500)
    lines = _lines(found.text)
    for text in ("living room", "back to coffee"):
        line = next((ln for ln in lines if text in ln), "")
        assert "current" not in line and "until" not in line, line
        assert not line or _before(lines, "Back in Lisbon", text)
    assert "Back in Lisbon" in lines[0]


@pytest.mark.parametrize("question", ["我现在住在哪个城市？", "我家在哪", "我目前住哪"])
def test_chinese_the_latest_move_comes_first(tmp_path, question):
    store = _store(tmp_path, SUZHOU)
    found = recall(store, question, budget=1500)
    lines = _lines(found.text)
    assert "苏州" in lines[0] and "18 January 2026" in lines[0]
    assert _before(lines, "苏州", "上海")
    for text in ("成都", "深圳", "好想念杭州"):
        line = next((ln for ln in lines if text in ln), "")
        assert "current" not in line and "until" not in line


def test_the_demo_calls_no_plan_current_and_words_to_find_claim_nothing(tmp_path):
    """The demo's own store: "moving in December" is a plan; `李伟 咖啡` is no question."""
    from scene_engine.services.demo import demo_memories

    store = init_store(tmp_path / "store")
    add_memories(store, demo_memories())
    found = recall(store, "Where do I live now?", budget=2000)
    assert not any("Marvila" in p.text and p.status.startswith("current")
                   for p in found.passages)
    for query in ("李伟 咖啡", "ukulele", "Marta promotion"):
        assert not any(p.status for p in recall(store, query, budget=2000).passages), query


def test_a_pets_diet_is_not_mine(tmp_path):
    store = _store(tmp_path, NORA)
    found = recall(store, "Am I still vegan?", budget=1500)
    assert "n07" not in _claims(found)
    lines = _lines(found.text)
    assert _before(lines, "vegetarian again", "vegan for a year")


def test_left_and_joined_is_a_job_change_and_a_return_to_bouldering_is_none(tmp_path):
    store = _store(tmp_path, NORA)
    for question in ("Where do I work now?", "Who's my employer?"):
        found = recall(store, question, budget=1500)
        claims = _claims(found)
        lines = _lines(found.text)
        assert _before(lines, "joined Globex", "Started at Initech"), question
        assert not claims.get("n01", "").startswith("current")
        assert "n14" not in claims and "n15" not in claims   # bouldering; the assistant
        assert not any(s.startswith("current") for i, s in claims.items() if i != "n11")


def test_the_assistants_words_are_never_the_persons(tmp_path):
    store = _store(tmp_path, NORA)
    found = recall(store, "Where do I live now?", budget=1500)
    assert "n13" not in _claims(found)
    assert not any(p.memory == "n13" and p.status for p in found.passages)
    zh = recall(_store(tmp_path / "zh", ZHOU), "我现在养的是什么宠物？", budget=1500)
    assert not any(p.memory == "c13" and p.status for p in zh.passages)


def test_a_named_person_gets_their_own_latest_value_first(tmp_path):
    store = _store(tmp_path, NORA)
    for question in ("Which city does Priya live in now?", "Where does Priya work now?"):
        found = recall(store, question, budget=1500)
        assert found.passages[0].memory == "n10", found.text
        assert found.passages[0].status.startswith("current")
        claims = _claims(found)
        assert set(claims) <= {"n10", "n05"}         # none of mine, not her plan
        assert "until" in claims.get("n05", "until")
    zh = recall(_store(tmp_path / "zh", ZHOU), "小林现在在哪家公司？", budget=1500)
    assert zh.passages[0].memory == "c10" and zh.passages[0].status.startswith("current")
    assert set(_claims(zh)) <= {"c10", "c04"}


def test_my_mothers_home_is_not_my_grandmothers_hospital_nor_my_move(tmp_path):
    store = _store(tmp_path, ZHOU)
    found = recall(store, "我妈妈住在哪里？", budget=1500)
    claims = _claims(found)
    assert "c08" not in claims and "c11" not in claims and "c01" not in claims
    assert "成都" in _lines(found.text)[0]


def test_chinese_my_own_job_and_home_not_my_cousins_nor_a_visit(tmp_path):
    store = _store(tmp_path, ZHOU)
    work = recall(store, "我在哪家公司上班？", budget=1500)
    assert "c10" not in _claims(work) and "c04" not in _claims(work)
    assert _before(_lines(work.text), "星河教育", "云启科技")
    home = recall(store, "我现在住在哪里？", budget=1500)
    for memory in ("c05", "c12", "c03"):         # a visit, a room, my mother
        assert memory not in _claims(home)
    assert _before(_lines(home.text), "苏州", "我住在杭州")


@pytest.mark.parametrize("rows, question, trap", [
    # a room of the flat
    ([("a", "2024-01-01", "Moved to York, the house by the river."),
      ("b", "2025-06-20", "Moved my desk into the spare room, much better light.")],
     "Where do I live now?", "b"),
    # a return to an old habit
    ([("a", "2024-01-01", "We moved to Leeds last week, boxes everywhere."),
      ("b", "2025-03-01", "Back to bouldering full time after the knee healed.")],
     "Where do I live these days?", "b"),
    # another person's attribute, a named third person
    ([("a", "2024-01-01", "Bought a second-hand Kia Niro, my first car in years."),
      ("b", "2025-02-01", "Kyle bought a Subaru Outback and will not stop talking about it.")],
     "What car do I drive now?", "b"),
    ([("a", "2024-01-01", "I live in Leeds, near the station."),
      ("b", "2025-02-01", "Theo lives in York and keeps saying I should move there.")],
     "Where do I live now?", "b"),
    # a plan
    ([("a", "2024-01-01", "Bought a second-hand Kia Niro, my first car in years."),
      ("b", "2025-02-01", "Thinking about getting a Tesla next year.")],
     "What car do I drive now?", "b"),
    ([("a", "2024-01-01", "买了一辆比亚迪秦，终于不用挤地铁了。"),
      ("b", "2025-02-01", "打算明年换一辆电车。")], "我现在开什么车？", "b"),
    # a visit
    ([("a", "2024-01-01", "搬到深圳了，房子小但是离公司近。"),
      ("b", "2025-02-01", "国庆回杭州看朋友，西湖人太多了。")], "我现在住在哪里？", "b"),
    ([("a", "2024-01-01", "I live in Baltimore now, in a rowhouse."),
      ("b", "2025-02-01", "Back in Pittsburgh for Thanksgiving, the old street is the same.")],
     "Where do I live now?", "b"),
    # a pet's attribute
    ([("a", "2024-01-01", "收养了一只柯基，叫可乐。"),
      ("b", "2025-02-01", "可乐换了新狗粮，吃得很香。")], "我现在养的是什么宠物？", "b"),
    # the assistant's recap of an old value
    ([("a", "2024-01-01", "I live in Pittsburgh, in Squirrel Hill."),
      ("c", "2025-01-01", "Moved to Philadelphia, the new flat is tiny."),
      ("b", "2025-06-01", "Since you live in Pittsburgh, try the Strip District.", "assistant")],
     "Where do I live now?", "b"),
])
def test_a_look_alike_is_never_called_current(tmp_path, rows, question, trap):
    found = recall(_store(tmp_path, rows), question, budget=1500)
    assert trap not in _claims(found), found.text


def test_a_question_about_an_earlier_value_claims_nothing_current(tmp_path):
    store = _store(tmp_path, NORA)
    for question in ("Where did Priya live before Austin?", "Where did I work before Globex?"):
        found = recall(store, question, budget=1500)
        assert not any(p.status.startswith("current") for p in found.passages), question


def test_without_meaning_statements_come_first_and_nothing_is_claimed(tmp_path, monkeypatch):
    monkeypatch.setenv("SCENE_ENGINE_SEMANTIC", "off")
    store = _store(tmp_path, LISBON)
    found = recall(store, "Where do I live now?", budget=1500)
    assert "Back in Lisbon" in _lines(found.text)[0]
    assert not _claims(found)


def test_the_history_is_kept_and_search_still_finds_every_memory(tmp_path):
    store = _store(tmp_path, LISBON)
    found = recall(store, "Where do I live now?", budget=3000)
    shown = {p.memory for p in found.passages}
    assert {"m1", "m3", "m7"} <= shown
    with for_store(store) as index:
        index.sync()
        assert [m.id for m in index.search_memories("Lisbon flat river")] == ["m1"]


def test_json_says_which_passage_is_current(tmp_path):
    store = _store(tmp_path, NORA)
    passages = recall(store, "Which city does Priya live in now?",
                      budget=1500).to_json()["passages"]
    assert passages[0]["memory"] == "n10" and passages[0]["status"].startswith("current")
    assert all("status" not in p or p["status"].startswith(("current", "said"))
               for p in passages)


def test_a_question_about_when_is_left_as_it_was(tmp_path):
    store = _store(tmp_path, LISBON)
    for question in ("When did Joana move to Berlin?", "When did I move to Porto?"):
        found = recall(store, question, budget=1500)
        assert not any(p.status for p in found.passages), question


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
    ("Kyle bought a Subaru Outback.", False), ("Inês's old Clio broke down again.", False),
    ("小林入职大疆了。", False), ("Vivian 在 Toronto 订婚了。", False),
    ("Priya says she's moving to Austin in January.", False),
    ("入职星河教育，第一天就开了三个会。", True), ("晓琳和我分手了。", True),
])
def test_who_a_statement_is_about(text, expected):
    question = read_question("Where do I live now?")
    assert question is not None and states(question, text) is expected


def test_an_assistants_statement_is_never_the_persons():
    question = read_question("Where do I live now?")
    assert question is not None and not states(question, "I live in Berlin.", "assistant")


@pytest.mark.parametrize("query, subject", [
    ("Where do I live now?", ""), ("which city is home these days", ""),
    ("Which city does Priya live in now?", "Priya"), ("Is Keisha still at Hamilton General?",
                                                      "Keisha"),
    ("Where does my mum live?", "mum"), ("Where does my brother Ewan live now?", "Ewan"),
    ("小林现在在哪家公司？", "小林"), ("我妈妈住在哪里？", "妈妈"), ("Vivian 现在住在哪？", "Vivian"),
    ("Am I still with Vivian?", ""), ("我老公叫什么名字？", ""),
])
def test_whose_attribute_a_question_asks_about(query, subject):
    found = read_question(query)
    assert found is not None and found.subject == subject


@pytest.mark.parametrize("query", ["ukulele", "李伟 咖啡", "Marta promotion"])
def test_words_to_find_are_no_question(query):
    assert read_question(query) is None


@pytest.mark.parametrize("question", ["which city is home these days", "where do i lvie now",
                                      "Were do I live?"])
def test_a_question_without_i_or_with_a_typo_still_gets_the_latest_first(tmp_path,
                                                                         question):
    store = _store(tmp_path, LISBON)
    assert "Back in Lisbon" in _lines(recall(store, question, budget=1500).text)[0]


@pytest.mark.parametrize("text", ["国庆回成都看爸妈，豆豆已经是一只老猫了。",
                                  "Back in Chicago for Thanksgiving, the old flat is still there."])
def test_a_visit_states_nothing_about_home_or_pets(text):
    for question in ("Where do I live now?", "我目前养的是什么宠物？"):
        found = read_question(question)
        assert found is not None and not states(found, text)
