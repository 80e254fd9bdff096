"""Scenes by what memories are about (issue 36; docs/DESIGN.md "Meaning and grouping"): the
offline backend groups by meaning, over the batch, the scenes and what is pending after it;
a topic in two languages is one scene; a thread closes only when a memory answers it, in
the scene that asked; names follow the topic, never a number, never back and forth."""

from __future__ import annotations

import json
import re
from pathlib import Path

import git
import pytest
from test_conservation_offline import add, body_of, fold, new_store

from scene_engine.services.trace import trace_memory

ROOT = Path(__file__).resolve().parents[1]

CAT_EN = [("c1", "Adopted a grey kitten from the shelter and named her Miso.", "2026-01-03"),
          ("c2", "Miso knocked a glass off the table and hid under the sofa.", "2026-01-09"),
          ("c3", "Took Miso to the vet for her first vaccines.", "2026-01-20")]
CYCLING_EN = [("b1", "Bought a second-hand road bike for the weekend rides.", "2026-01-04"),
              ("b2", "Rode 60 km along the coast with the cycling club.", "2026-01-11"),
              ("b3", "Fixed a flat tyre on the road bike before the club ride.", "2026-01-18")]
CAT_ZH = [("z1", "Miso今天又把花瓶打翻了，躲在床底下不出来。", "2026-02-02"),
          ("z2", "带Miso去宠物医院打了第二针疫苗。", "2026-02-14")]
CYCLING_ZH = [("y1", "周末和车友骑了八十公里，腿都酸了。", "2026-02-05"),
              ("y2", "给公路车换了新的刹车片。", "2026-02-16")]


def rows(*groups):
    return [(i, text, f"{day}T09:00:00Z") for group in groups for i, text, day in group]


def scene_of(store, memory_id: str) -> str:
    (scene,) = trace_memory(store, memory_id).scenes
    return scene


def test_a_topic_said_in_chinese_joins_the_scene_of_the_same_topic_in_english(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *rows(CAT_EN, CYCLING_EN))
    fold(store)
    cat, bike = scene_of(store, "c1"), scene_of(store, "b1")
    assert cat != bike
    add(store, *rows(CAT_ZH, CYCLING_ZH))
    fold(store)
    assert len(store.scene_names()) == 2          # no scene for Chinese lines as such
    assert {scene_of(store, i) for i, _, _ in CAT_ZH} == {cat}
    assert {scene_of(store, i) for i, _, _ in CYCLING_ZH} == {bike}


def test_memories_of_two_languages_and_two_topics_fold_by_topic_not_language(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *rows(CAT_EN, CAT_ZH, CYCLING_EN, CYCLING_ZH))
    fold(store)
    cats = {scene_of(store, i) for i, _, _ in CAT_EN + CAT_ZH}
    bikes = {scene_of(store, i) for i, _, _ in CYCLING_EN + CYCLING_ZH}
    assert len(cats) == 1 and len(bikes) == 1 and cats != bikes


# The demo's food, which once made four one-line scenes: no two of these share a word.
FOOD = [("f1", "I am vegetarian and love cooking Indian food at home.", "2026-01-15"),
        ("f2", "Made palak paneer for friends; everyone asked for the recipe.", "2026-02-22"),
        ("f3", "Bought a cast-iron pan for making dosas.", "2026-04-18"),
        ("f4", "Started eating fish again on weekends, mostly grilled sardines.", "2026-06-02")]
WORK = [("w1", "Started a new job as a backend engineer at Northwind.", "2026-01-05"),
        ("w2", "My team lead at Northwind is Marta; she likes written design docs.", "2026-01-07"),
        ("w3", "Shipped my first feature at Northwind: the parcel-tracking API.", "2026-01-20"),
        ("w4", "Marta asked me to lead the database migration at Northwind.", "2026-02-18")]


def test_one_topic_said_in_other_words_each_time_is_one_scene_not_one_a_memory(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *rows(FOOD, WORK))
    fold(store)
    assert len({scene_of(store, i) for i, _, _ in FOOD}) == 1
    assert len({scene_of(store, i) for i, _, _ in WORK}) == 1
    assert len(store.scene_names()) == 2


def test_a_thread_is_closed_by_the_memory_that_answers_it_not_by_a_look_alike(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("t1", "Thinking about how to tell Mum about the engagement.",
                "2026-03-01T09:00:00Z"),
        ("t2", "Mum called; she wants us to visit in the spring.", "2026-03-02T09:00:00Z"))
    fold(store)
    (scene,) = store.scene_names()
    assert "## Open threads" in body_of(store, scene)
    add(store, ("t3", "Visited my grandmother in the hospital; she is recovering well.",
                "2026-03-05T09:00:00Z"))
    fold(store)
    assert "Thinking about how to tell Mum" in _open_threads(store)
    add(store, ("t4", "Told Mum about the engagement; she cried with joy.",
                "2026-03-09T09:00:00Z"))
    fold(store)
    assert "Thinking about how to tell Mum" not in _open_threads(store)
    text = "".join(body_of(store, n) for n in store.scene_names())
    assert "Thinking about how to tell Mum about the engagement. → 2026-03-09: Told Mum" in text


def _open_threads(store) -> str:
    out = ""
    for name in store.scene_names():
        body = body_of(store, name)
        if "## Open threads" in body:
            out += body[body.index("## Open threads"):]
    return out


def test_a_decided_question_goes_to_the_scene_that_asked_it_and_closes_the_thread(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *rows(WORK), ("m1", "Thinking about doing a part-time master's in data science.",
                             "2026-03-01T09:00:00Z"),
        *rows(FOOD))
    fold(store)
    asked = scene_of(store, "m1")
    add(store, ("m2", "Decided against the master's; the fees are too high this year.",
                "2026-04-02T09:00:00Z"))
    fold(store)
    assert scene_of(store, "m2") == asked
    assert "Thinking about doing a part-time master's" not in _open_threads(store)


def test_names_say_the_topic_in_its_nouns(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *rows(CAT_EN, CYCLING_EN))
    fold(store)
    words = {n: set(n.removesuffix(".md").split("-")) for n in store.scene_names()}
    cat, bike = scene_of(store, "c1"), scene_of(store, "b1")
    assert words[cat] & {"miso", "kitten", "vet", "cat"}, words
    assert words[bike] & {"bike", "road", "cycling", "club"}, words
    assert not any(re.search(r"\d", n) for n in store.scene_names())


@pytest.mark.slow
@pytest.mark.parametrize("labelled", ["heldout", "fourth"])
def test_a_whole_life_folds_with_no_numbered_name_and_no_name_back_and_forth(tmp_path,
                                                                              labelled):
    records = [json.loads(line) for line in
               (ROOT / "bench" / "topics" / f"{labelled}.jsonl").read_text("utf-8").splitlines()]
    store = new_store(tmp_path / "s")
    from scene_engine.services.add import add_memories

    add_memories(store, "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode())
    fold(store)
    assert not any(re.search(r"-\d+\.md$", n) for n in store.scene_names())
    renames = re.findall(r"Renamed (\S+) to (\S+) \(its topic moved\)",
                         git.Repo(store.root).git.log("--format=%B"))
    assert not {(new, old) for old, new in renames} & set(renames)      # never back again
    names = [new for _, new in renames]
    assert len(names) == len(set(names))         # no name given twice
    assert len(store.scene_names()) <= store.config.max_scenes - 1
