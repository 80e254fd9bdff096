"""Conservation with the offline backend (issue 9, faults 4-10, and "where did my memory go"):
full scenes, hand-written lines, same-day corrections, time zones, rare names, header keys,
pinned scenes, re-added files, `scenes trace` and `doctor`'s ledger check. Small inputs of our
own, each the smallest that showed the fault.
"""

from __future__ import annotations

import json
import re

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.batch.accounting import Ledger
from scene_engine.batch.transaction import run_batch
from scene_engine.cli import app
from scene_engine.index.refresh import refresh_index
from scene_engine.index.scenes import SceneIndex
from scene_engine.offline.backend import OfflineBackend
from scene_engine.services.add import add_memories
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.services.trace import trace_memory
from scene_engine.store import history
from scene_engine.store.memories import Journal
from scene_engine.store.scene import parse_scene
from scene_engine.store.store import init_store, open_store

runner = CheckedRunner()


def new_store(root, **settings):
    """A store with ``settings`` written into config.toml (committed as a person would)."""
    store = init_store(root)
    text = store.config_path.read_text("utf-8")
    for key, value in settings.items():
        shown = json.dumps(value) if isinstance(value, str) else str(value)
        text = re.sub(rf"(?m)^{key} = [^#\n]*", f"{key} = {shown} ", text)
    store.config_path.write_text(text, "utf-8")
    history.commit_files(git.Repo(root), "hand edit: config.toml", [".scene-engine/config.toml"])
    return open_store(root)


def add(store, *records) -> None:
    rows = [{"id": r[0], "content": r[1], "created_at": r[2]} for r in records]
    add_memories(store, json.dumps(rows, ensure_ascii=False).encode())


def fold(store) -> list:
    return run_pending(store, OfflineBackend())


def scene_texts(store) -> dict[str, str]:
    return {n: (store.scenes_dir / n).read_text("utf-8") for n in store.scene_names()}


def body_of(store, name: str) -> str:
    return parse_scene((store.scenes_dir / name).read_text("utf-8"), name).body


def hand_write(store, name: str, text: str) -> None:
    (store.scenes_dir / name).write_text(text, encoding="utf-8")


def head_ledger(store) -> Ledger:
    """The ledger of the newest batch (a persona commit may follow it)."""
    head = next(c for c in git.Repo(store.root).iter_commits()
                if "Ledger" in history.trailers(c.message))
    path = history.trailers(head.message)["Ledger"]
    return Ledger.parse((head.tree / path).data_stream.read().decode())


def garden_memories(n: int, start: int = 0, month: str = "2024-03") -> list[tuple]:
    return [(f"g{i}", f"Watered the balcony tomatoes and basil in the garden, day {i}.",
             f"{month}-{i % 28 + 1:02d}T08:00:00Z") for i in range(start, start + n)]


# ------------------------------------------------------------------ 4. a full scene

def store_at_cap_with_a_garden(tmp_path):
    """A store at its cap (2 scenes of 600 characters): a curry scene and a garden scene with
    six March entries. No new scene can take an overflow, so a full scene condenses."""
    store = new_store(tmp_path / "s", max_scene_chars=600, max_scenes=3)
    add(store, ("c1", "Cooked a lentil curry with fresh coriander for dinner.",
                "2024-02-01T19:00:00Z"))
    fold(store)
    add(store, *garden_memories(6))
    fold(store)
    return store


def test_a_full_scene_condenses_old_entries_and_keeps_the_newest_and_a_persons_lines(tmp_path):
    store = store_at_cap_with_a_garden(tmp_path)
    name = next(n for n in store.scene_names() if "tomatoes" in body_of(store, n))
    path = store.scenes_dir / name
    hand_write(store, name, path.read_text("utf-8") + "\nMy own rule: never water at noon.\n")
    add(store, ("late", "Planted chili peppers beside the tomatoes in the balcony garden.",
                "2024-06-01T08:00:00Z"), *garden_memories(3, start=6, month="2024-05"))
    fold(store)

    assert len(store.scene_names()) == 2 and name in store.scene_names()
    body = body_of(store, name)
    assert len(body.strip()) <= 600
    assert "My own rule: never water at noon." in body.splitlines()   # word for word
    assert "- 2024-06-01: Planted chili peppers beside the tomatoes" in body   # newest, whole
    digest = next(line for line in body.splitlines() if "(digest)" in line)
    # The oldest, one theme (watering, day after day), is one fact with its range and count.
    assert digest.startswith(("- 2024-03 (digest): 1–", "- 2024-Q1 (digest): 1 Mar–"))
    assert "×" in digest and "Watered the balcony tomatoes" in digest
    assert check_store(store) == []
    for i in range(6):                                   # each one still traceable
        trace = trace_memory(store, f"g{i}")
        whole = any(line.endswith(f"garden, day {i}.") for line in body.splitlines()
                    if "(digest)" not in line)
        assert trace.scenes == [name] and trace.lines
        assert all(row["how"] == ("whole" if whole else "condensed") for row in trace.lines)


def test_before_a_store_is_at_its_cap_an_overflowing_topic_gets_a_new_scene(tmp_path):
    store = new_store(tmp_path / "s", max_scene_chars=600)
    add(store, *garden_memories(6))
    fold(store)
    add(store, *garden_memories(8, start=6, month="2024-05"))
    fold(store)
    assert len(store.scene_names()) == 2          # a second garden scene, not deep digests
    text = "".join(body_of(store, n) for n in store.scene_names())
    assert all(f"day {i}." in text for i in range(6, 14))   # every new fact whole
    assert "entries:" not in text                              # no keyword digests


def test_a_memory_that_fits_nowhere_fails_the_batch_and_stays_pending(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=200)
    for name in ("notes-a.md", "notes-b.md"):
        hand_write(store, name, "---\nsummary: My notes.\n---\n" + f"{name} " + "word " * 35)
    add(store, ("m1", "Bought a red bicycle for commuting to the office.", "2024-01-01T08:00:00Z"))
    before = scene_texts(store)

    result = runner.invoke(app, ["--dir", str(store.root), "run"])

    assert result.exit_code == 1
    assert "fits in no scene" in result.output and "pending" in result.output
    assert scene_texts(store) == before
    assert open_store(store.root).load_state().pending == 1


# ------------------------------------------------------------------ 5. a correction is not a repeat

def test_a_same_day_correction_is_kept_and_searchable_and_a_true_repeat_is_recorded(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("a1", "The dentist appointment is on Tuesday at 10.", "2024-04-02T08:00:00Z"))
    fold(store)
    add(store, ("a2", "The dentist appointment is on Thursday at 10.", "2024-04-02T11:00:00Z"))
    fold(store)
    body = "".join(body_of(store, n) for n in store.scene_names())
    assert "Thursday" in body and "Tuesday" in body
    with SceneIndex(store.index_path, store.scenes_dir) as index:
        index.sync()
        assert index.search("Thursday")
    (entry,) = head_ledger(store).entries
    assert entry.outcome == "placed"

    add(store, ("a3", "The dentist appointment is on Thursday at 10.", "2024-04-02T15:00:00Z"))
    fold(store)
    (entry,) = head_ledger(store).entries
    assert entry.outcome == "recorded" and entry.scenes == store.scene_names()
    assert "".join(body_of(store, n) for n in store.scene_names()).count("Thursday") == 1


# ------------------------------------------------------------------ 6. time zones

def test_timelines_follow_the_instant_in_the_stores_zone(tmp_path):
    records = [("flight", "Flew from Chicago to Tokyo for the robotics trip.",
                "2024-05-01T23:00:00-05:00"),            # 2024-05-02 04:00 UTC
               ("packing", "Packed the bags for the robotics trip to Tokyo.",
                "2024-05-02T01:00:00+09:00")]            # 2024-05-01 16:00 UTC
    store = new_store(tmp_path / "utc")
    add(store, *records)
    fold(store)
    (name,) = store.scene_names()
    body = body_of(store, name)
    assert "## Timeline (UTC)" in body
    assert body.index("- 2024-05-01: Packed") < body.index("- 2024-05-02: Flew")
    summary = parse_scene((store.scenes_dir / name).read_text("utf-8"), name).meta["summary"]
    assert "Latest (2 May): Flew from Chicago" in summary

    tokyo = new_store(tmp_path / "tokyo", timezone="Asia/Tokyo")
    add(tokyo, *records)
    fold(tokyo)
    body = body_of(tokyo, tokyo.scene_names()[0])
    assert "## Timeline (Asia/Tokyo)" in body
    # Both on 2 May there, the earlier instant first, each fact its own bullet (issue 23).
    assert ("- 2024-05-02: Packed the bags for the robotics trip to Tokyo.\n"
            "- 2024-05-02: Flew from") in body


def test_an_unknown_time_zone_is_refused_clearly(tmp_path):
    store = init_store(tmp_path / "s")
    store.config_path.write_text(store.config_path.read_text("utf-8")
                                 .replace('timezone = "UTC"', 'timezone = "Mars/Olympus"'))
    result = runner.invoke(app, ["--dir", str(store.root), "status"])
    assert result.exit_code == 2 and "unknown time zone 'Mars/Olympus'" in result.output


# ------------------------------------------------------------------ 7. a rare name routes

def test_a_rare_acronym_brings_a_short_memory_to_its_scene(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *[(f"k{i}", text, f"2024-02-0{i + 1}T09:00:00Z") for i, text in enumerate([
        "Joined the KPX platform team at work as the new backend lead.",
        "The KPX team planned the database migration for the billing service.",
        "Reviewed pull requests for the KPX billing migration with Priya."])])
    add(store, *[(f"c{i}", text, f"2024-02-1{i}T19:00:00Z") for i, text in enumerate([
        "Cooked a lentil curry with fresh coriander for dinner.",
        "Baked rye bread with caraway seeds in the new oven.",
        "Made tomato soup with basil and served it with the rye bread."])])
    fold(store)
    before = set(store.scene_names())
    kpx = [n for n in before if "KPX" in body_of(store, n)]
    assert len(kpx) == 1
    add(store, ("k9", "KPX standup ran long.", "2024-02-20T09:00:00Z"))
    fold(store)
    assert set(store.scene_names()) == before                   # no new scene for it
    assert "KPX standup ran long." in body_of(store, kpx[0])


# ------------------------------------------------------------------ 8 and 9. keys, pins, summaries

KEYS = "time: 10:00\nmode: 0755\nok: yes   # as typed\nver: 1.10\nwhen: 2024-05-01 10:00\n"


def test_hand_added_keys_a_hand_summary_and_a_pin_survive_batches(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=4)
    add(store, *garden_memories(4), ("c1", "Cooked a lentil curry with coriander for dinner.",
                                      "2024-03-10T19:00:00Z"))
    fold(store)
    names = store.scene_names()
    garden = next(n for n in names if "tomatoes" in body_of(store, n))
    text = (store.scenes_dir / garden).read_text("utf-8")
    text = re.sub(r"(?m)^summary: .*$", "summary: My balcony garden, kept by me.", text)
    hand_write(store, garden, text.replace("heat: ", KEYS + "heat: ", 1))
    add(store, *garden_memories(3, start=4))
    fold(store)
    text = (store.scenes_dir / garden).read_text("utf-8")
    assert KEYS in text.split("---\n")[1]
    assert "summary: My balcony garden, kept by me.\n" in text    # a person's summary stays
    assert "day 6." in text

    # Pinned: never merged away, even when the cap forces merges.
    hand_write(store, garden, text.replace("heat: ", "pinned: true\nheat: ", 1))
    topics = ["Went hiking on the ridge trail above the lake with Bob.",
              "Started piano lessons with a teacher in the old town.",
              "Renewed the car insurance and paid the annual road tax.",
              "Learned to knit a scarf with thick blue wool."]
    for i, topic in enumerate(topics):
        add(store, (f"t{i}", topic, f"2024-04-{i + 1:02d}T09:00:00Z"))
        fold(store)
        assert garden in store.scene_names()
        assert "pinned: true" in (store.scenes_dir / garden).read_text("utf-8")
    assert check_store(store) == []


# ------------------------------------------------------------------ 10. re-adding a file

def test_adding_the_same_file_twice_adds_nothing_the_second_time(tmp_path):
    store = new_store(tmp_path / "s")
    rows = [{"id": "x1", "content": "Met Ana for coffee.", "created_at": "2024-01-05T10:00:00Z"},
            {"id": "x2", "content": "Met Ana for coffee.", "created_at": "2024-01-05T10:00:00Z"},
            {"id": "x3", "content": "Met Ana for coffee.", "created_at": "2024-07-05T10:00:00Z"}]
    data = json.dumps(rows).encode()
    first = add_memories(store, data)
    assert (first.added, first.duplicates) == (2, 1)        # same instant collapsed; July kept
    again = add_memories(store, data)
    assert (again.added, again.known) == (0, 3)
    journal = Journal(store.memories_dir).all()
    assert [(m.id, m.aliases) for m in journal] == [("x1", ("x2",)), ("x3", ())]
    fold(store)
    assert trace_memory(store, "x2").memory.id == "x1"


# ------------------------------------------------------------------ where did my memory go

def set_cap(store, max_scenes: int):
    """Change ``max_scenes`` by hand, as a person would, committed as a hand edit."""
    text = re.sub(r"(?m)^max_scenes = \d+", f"max_scenes = {max_scenes}",
                  store.config_path.read_text("utf-8"))
    store.config_path.write_text(text, "utf-8")
    history.commit_files(git.Repo(store.root), "hand edit: config.toml",
                         [".scene-engine/config.toml"])
    return open_store(store.root)


def test_trace_follows_a_memory_through_a_merge_and_an_undo(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=4)
    add(store, *garden_memories(2), ("h1", "Went hiking on the ridge trail with Bob.",
                                      "2024-03-03T09:00:00Z"))
    fold(store)
    add(store, ("p1", "Started piano lessons in the old town.", "2024-03-04T09:00:00Z"))
    fold(store)
    found = trace_memory(store, "g0")
    kinds = [e["kind"] for e in found.events]
    assert kinds == ["batch"] and found.events[0]["outcome"] == "placed"
    assert found.scenes and all((store.scenes_dir / s).exists() for s in found.scenes)
    assert any("Watered the balcony tomatoes" in row["text"] for row in found.lines)
    # Three scenes, and a cap lowered to two: the next batch must merge one scene away.
    before = set(store.scene_names())
    owners = {name: [m for m in ("g0", "h1", "p1") if trace_memory(store, m).scenes == [name]]
              for name in before}
    store = set_cap(store, 3)
    add(store, ("k1", "Learned to knit a scarf with blue wool.", "2024-03-05T09:00:00Z"))
    fold(store)
    (gone,) = before - set(store.scene_names())            # the merge happened
    moved = trace_memory(store, owners[gone][0])
    merges = [e for e in moved.events if e["kind"] == "merge"]
    assert [e["from"] for e in merges] == [gone], moved.events
    assert merges[0]["into"] in moved.scenes and gone not in moved.scenes

    result = runner.invoke(app, ["--dir", str(store.root), "trace", "k1"])
    assert result.exit_code == 0 and "placed" in result.output and "now in:" in result.output
    runner.invoke(app, ["--dir", str(store.root), "undo"])
    found = trace_memory(store, "k1")
    assert found.status == "pending" and [e["kind"] for e in found.events] == ["batch", "undo"]
    unknown = runner.invoke(app, ["--dir", str(store.root), "trace", "nope"])
    assert unknown.exit_code == 2 and "no memory has the id 'nope'" in unknown.output


def test_doctor_finds_a_batch_whose_ledger_misses_a_memory(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *garden_memories(3))
    result = run_batch(store, OfflineBackend())
    assert check_store(store) == []
    repo = git.Repo(store.root)
    # Rewrite the batch commit with a ledger that forgets one memory (history edited by hand).
    path = store.root / ".scene-engine/ledger/000001.json"
    ledger = Ledger.parse(path.read_text("utf-8"))
    ledger.entries = ledger.entries[:-1]
    path.write_text(ledger.render(), "utf-8")
    repo.git.add("-A", "--", str(path))
    repo.git.commit("--amend", "--no-edit", "--quiet",
                    env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x",
                         "GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x"})
    refresh_index(store)
    problems = check_store(store)
    assert any("does not account for 1 of its memories" in p for p in problems), problems
    assert result.number == 1


def test_a_name_one_chinese_scene_keeps_repeating_brings_a_short_memory_there(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *[(f"n{i}", text, f"2024-02-0{i + 1}T09:00:00Z") for i, text in enumerate([
        "我养了一只橘猫，名字叫年糕，今年三岁。", "年糕最喜欢趴在窗台上晒太阳。",
        "带年糕去宠物医院打了疫苗。"])])
    add(store, *[(f"w{i}", text, f"2024-02-1{i}T09:00:00Z") for i, text in enumerate([
        "项目组决定把消息队列从 RabbitMQ 换成 Kafka。", "和同事讨论了 Kafka 分区的设计方案。"])])
    fold(store)
    before = set(store.scene_names())
    cat = [n for n in before if "年糕" in body_of(store, n)]
    assert len(cat) == 1
    add(store, ("n9", "年糕今天吐了。", "2024-02-20T09:00:00Z"))
    fold(store)
    assert set(store.scene_names()) == before
    assert "年糕今天吐了" in body_of(store, cat[0])


def test_a_line_a_person_corrected_in_the_timeline_stays_as_corrected(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("r1", "Ran 5 km along the river before work.", "2024-03-01T07:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    path = store.scenes_dir / name
    fixed = path.read_text("utf-8").replace("Ran 5 km", "Ran 6 km (I miscounted)")
    hand_write(store, name, fixed)
    add(store, ("r2", "Ran 5 km along the river again after work.", "2024-03-01T18:00:00Z"))
    fold(store)
    body = body_of(store, name)
    assert "- 2024-03-01: Ran 6 km (I miscounted) along the river before work." in body
    assert "- 2024-03-01: Ran 5 km along the river again after work." in body  # its own line


def test_only_a_restatement_adding_nothing_is_a_repeat():
    from scene_engine.offline.backend import restates

    line = "Met Ana at the cafe. The dentist appointment is on Tuesday at 10."
    assert restates("the dentist appointment is on tuesday at 10", [line])
    for changed in ("The dentist appointment is on Thursday at 10.",      # another day
                    "The dentist appointment is on Tuesday at 11.",       # another hour
                    "The dentist appointment is not on Tuesday at 10.",   # a negation added
                    "The dentist appointment is on Tuesday.",             # a detail dropped
                    "Ana is at the dentist on Tuesday at 10.",            # words of two facts
                    "Amy met Bob."):                                      # letters in common
        assert not restates(changed, [line]), changed
    assert not restates("I am allergic to penicillin.", ["I am not allergic to penicillin."])
    assert not restates("牙医预约在周四上午十点。", ["牙医预约在周二上午十点。"])
    assert restates("牙医预约在周二上午十点", ["牙医预约在周二上午十点。"])


def test_a_same_day_negation_and_a_new_fact_are_both_kept(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("d1", "I am allergic to penicillin.", "2026-03-02T09:00:00Z"),
        ("d2", "I am not allergic to penicillin.", "2026-03-02T10:00:00Z"),
        ("t1", "Flight to Tokyo departed, the Tokyo trip begins.", "2026-03-02T07:30:00Z"),
        ("t4", "Tokyo trip: hotel is the Park Hyatt.", "2026-03-02T11:00:00Z"))
    fold(store)
    body = "".join(body_of(store, n) for n in store.scene_names())
    assert "I am not allergic to penicillin." in body and "Park Hyatt" in body
    assert {e.outcome for e in head_ledger(store).entries} == {"placed"}


def test_what_a_person_staged_is_never_swept_into_an_engine_commit(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *garden_memories(2))
    fold(store)
    repo = git.Repo(store.root)
    (name,) = store.scene_names()
    path = store.scenes_dir / name
    path.write_text(path.read_text("utf-8") + "My staged note: basil hates cold.\n", "utf-8")
    (store.root / "notes.txt").write_text("a person's own file\n", "utf-8")
    repo.git.add("--", f"scenes/{name}", "notes.txt")          # as an IDE or git plugin would

    add(store, ("k1", "Learned to knit a scarf with blue wool.", "2024-03-05T09:00:00Z"))
    added = repo.head.commit
    assert set(added.stats.files) == {"memories/00000.jsonl", ".scene-engine/state.json"}
    fold(store)
    subjects = [c.summary for c in repo.iter_commits(max_count=3)]
    assert subjects[1] == f"hand edit: {name}"                  # the line is the person's
    assert "notes.txt" not in {f for c in repo.iter_commits() for f in c.stats.files}
    assert repo.git.diff("--cached", "--name-only").split() == ["notes.txt"]   # still staged
    # ... and still protected: a later batch keeps it word for word.
    add(store, *garden_memories(3, start=2))
    fold(store)
    assert "My staged note: basil hates cold." in "".join(scene_texts(store).values())


TOPICS = ["Bought a red bicycle for commuting.", "Read a book about volcanoes in Iceland.",
          "Visited the aquarium with my niece.", "Started learning the cello at night school.",
          "Repaired the leaking kitchen tap myself.", "Planted tulip bulbs in the front yard.",
          "Joined a chess club that meets on Thursdays.", "Booked a dentist check-up for May.",
          "Tried a new ramen place near the station.", "Painted the bedroom walls light green.",
          "Watched a documentary about octopuses.", "Ran a 10 km race along the harbour."]


@pytest.mark.slow
def test_a_persons_dated_line_stays_theirs_through_merges_and_full_scenes(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=600)
    add(store, ("a1", "Started a new job at Northwind in Lisbon.", "2026-01-05T09:00:00Z"),
        ("a2", "Ran 10 km along the river in 55 minutes.", "2026-01-06T09:00:00Z"))
    fold(store)
    name = next(n for n in store.scene_names() if "Northwind" in body_of(store, n))
    mine = "- 2026-01-04: HANDA I signed the Northwind contract on the 4th, salary 50k."
    path = store.scenes_dir / name
    hand_write(store, name, path.read_text("utf-8") + mine + "\n")
    for i, topic in enumerate(TOPICS):
        add(store, (f"t{i}", topic, f"2026-02-{i + 1:02d}T09:00:00Z"))
        fold(store)
        lines = {line for text in scene_texts(store).values() for line in text.splitlines()}
        assert mine in lines, f"after topic {i}"
    assert check_store(store) == []


def test_a_scene_saved_with_crlf_line_ends_is_folded_into_and_keeps_them(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("a1", "Started a new job at Northwind in Lisbon.", "2026-01-05T09:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    path = store.scenes_dir / name
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    add(store, ("b1", "Northwind gave me a new laptop in Lisbon.", "2026-01-07T09:00:00Z"))
    fold(store)
    data = path.read_bytes()
    assert b"new laptop" in data and data.count(b"\r\n") == data.count(b"\n")
    assert store.load_state().pending == 0


def test_a_persons_summary_survives_quotes_comments_and_merges(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=3)
    add(store, ("a1", "Started a new job at Northwind in Lisbon.", "2026-01-05T09:00:00Z"),
        ("a2", "Ran 10 km along the river in 55 minutes.", "2026-01-06T09:00:00Z"))
    fold(store)
    work = next(n for n in store.scene_names() if "Northwind" in body_of(store, n))
    path = store.scenes_dir / work
    mine = 'summary: "My work life, in my own words."  # mine'
    hand_write(store, work, re.sub(r"(?m)^summary: .*$", mine, path.read_text("utf-8")))
    for i, topic in enumerate(TOPICS[:4]):
        add(store, (f"t{i}", topic, f"2026-02-{i + 1:02d}T09:00:00Z"))
        fold(store)
        assert any(mine in t for t in scene_texts(store).values()), f"after topic {i}"


def test_a_pinned_scenes_entries_are_never_condensed(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=400)
    add(store, ("c1", "Cooked a lentil curry with fresh coriander for dinner.",
                "2024-02-01T19:00:00Z"), *garden_memories(3))
    fold(store)
    garden = next(n for n in store.scene_names() if "tomatoes" in body_of(store, n))
    path = store.scenes_dir / garden
    hand_write(store, garden, path.read_text("utf-8").replace("heat: ", "pinned: true\nheat: "))
    before = [line for line in body_of(store, garden).splitlines() if line.startswith("- ")]
    add(store, *garden_memories(6, start=3))
    fold(store)
    after = body_of(store, garden).splitlines()
    assert all(line in after for line in before)
    assert "(digest)" not in body_of(store, garden)


def test_scenes_in_latin_1_or_with_names_differing_by_case_are_left_alone(tmp_path):
    store = new_store(tmp_path / "s")
    (store.scenes_dir / "cafe.md").write_bytes("---\nsummary: Caf\xe9 notes.\n---\nCr\xe8me br\xfbl\xe9e.\n"
                                               .encode("latin-1"))
    (store.scenes_dir / "Work.md").write_text("---\nsummary: Work A.\n---\nA\n", "utf-8")
    (store.scenes_dir / "work.md").write_text("---\nsummary: Work B.\n---\nB\n", "utf-8")
    before = {n: (store.scenes_dir / n).read_bytes() for n in store.scene_names()}
    add(store, ("m1", "Bought a red bicycle for commuting.", "2024-01-01T08:00:00Z"))
    result = runner.invoke(app, ["--dir", str(store.root), "run"])
    assert result.exit_code == 0, result.output
    assert open_store(store.root).load_state().pending == 0
    assert all((store.scenes_dir / n).read_bytes() == b for n, b in before.items())
    problems = check_store(store)
    assert any("cafe.md is not UTF-8 (byte" in p for p in problems)
    assert any("Work.md and work.md differ only by case" in p for p in problems)


def test_the_same_memory_under_a_new_id_in_a_later_add_becomes_an_alias(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("a", "Moved to Porto.", "2026-01-05T09:00:00Z"))
    fold(store)
    report = add_memories(store, json.dumps([{"id": "b", "content": "Moved to Porto.",
                                              "created_at": "2026-01-05T10:00:00+01:00"}]).encode())
    assert (report.added, report.duplicates) == (0, 1)
    assert [(m.id, m.aliases) for m in Journal(store.memories_dir).all()] == [("a", ("b",))]
    assert open_store(store.root).load_state().pending == 0
    assert trace_memory(store, "b").memory.id == "a"
    assert check_store(store) == []


def test_a_torn_journal_line_is_named_with_the_way_back(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *garden_memories(3))
    segment = store.memories_dir / "00000.jsonl"
    segment.write_bytes(segment.read_bytes()[:-25])
    result = runner.invoke(app, ["--dir", str(store.root), "add", "-"],
                           input='{"content": "q"}')
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "memories/00000.jsonl line 3 is not a whole memory record" in result.output
    assert "git checkout -- memories/00000.jsonl" in result.output
    doctor = runner.invoke(app, ["--dir", str(store.root), "doctor"])
    assert doctor.exit_code == 1 and "memories/00000.jsonl line 3" in doctor.output


def test_trace_shows_only_the_memorys_own_lines_digests_included_and_follows_an_undone_merge(
        tmp_path):
    store = store_at_cap_with_a_garden(tmp_path)
    add(store, ("late", "Planted chili peppers beside the tomatoes in the balcony garden.",
                "2024-06-01T08:00:00Z"), *garden_memories(3, start=6, month="2024-05"))
    fold(store)
    condensed = trace_memory(store, "g1")
    assert [row["how"] for row in condensed.lines] == ["condensed"]
    assert re.search(r"\(digest\): 1–\d+ Mar ×\d+: Watered", condensed.lines[0]["text"])
    whole = trace_memory(store, "g7")
    assert [(row["how"], "day 7." in row["text"]) for row in whole.lines] == [("whole", True)]
    # A merge, then its undo: the memory is back in its own scene. Room for a knitting
    # scene, then the cap lowered again: the next batch merges a scene away.
    store = set_cap(store, 4)
    add(store, ("k1", "Learned to knit a scarf with blue wool.", "2024-06-05T09:00:00Z"))
    fold(store)
    (knitting,) = trace_memory(store, "k1").scenes
    store = set_cap(store, 3)
    add(store, ("k2", "Knitted a blue wool hat to match the scarf.", "2024-06-06T09:00:00Z"))
    fold(store)
    assert len(store.scene_names()) == 2
    merged = [e for e in trace_memory(store, "k1").events if e["kind"] == "merge"]
    assert [e["from"] for e in merged] == [knitting]           # the merge branch happened
    undone = runner.invoke(app, ["--dir", str(store.root), "undo"])
    assert undone.exit_code == 0, undone.output
    again = trace_memory(store, "k1")
    assert again.events[-1]["kind"] == "merge undone"
    assert merged[-1]["from"] in again.scenes
    assert (store.scenes_dir / knitting).exists()
    alias = runner.invoke(app, ["--dir", str(store.root), "trace", "g7"])
    assert alias.exit_code == 0 and "now in:" in alias.output


def test_small_things_a_new_user_hit(tmp_path):
    store = new_store(tmp_path / "s", timezone="utc")       # any case of a zone name
    assert open_store(store.root).config.timezone == "UTC"
    empty = runner.invoke(app, ["--dir", str(store.root), "add", "/dev/null"])
    assert "no such file" not in empty.output and empty.exit_code == 2   # empty input: bad input
    assert "input is empty" in empty.output
    add(store, ("c", "Had coffee at the Café Noir with Ana.", "2026-01-01T09:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    path = store.scenes_dir / name
    hand_write(store, name, path.read_text("utf-8") + "Two spaces end this line  \n")
    add(store, ("d", "Had coffee at the Café Noir with Ana again.", "2026-01-02T09:00:00Z"))
    fold(store)
    assert "Two spaces end this line  \n" in path.read_text("utf-8")   # a Markdown line break
    nfd = name.replace("é", "e\u0301") if "é" in name else name.upper()
    shown = runner.invoke(app, ["--dir", str(store.root), "show", nfd])
    assert shown.exit_code == 0
    store.config_path.write_text(store.config_path.read_text("utf-8").replace(
        'timezone = "utc"', 'timezone = "Mars/Base"'), "utf-8")
    bad = runner.invoke(app, ["--dir", str(store.root), "status"])
    assert bad.exit_code == 2 and "Value error" not in bad.output


def test_a_memory_too_long_for_any_scene_is_folded_by_its_quoted_beginning(tmp_path):
    # A pasted key or log has no words to count: the scene quotes its beginning, the journal
    # keeps it whole, and it no longer blocks the memories behind it.
    import base64
    import random

    store = init_store(tmp_path / "s")
    key = base64.b64encode(random.Random(7).randbytes(3750)).decode()
    records = [{"id": "key", "content": f"My deploy key is {key}",
                "created_at": "2025-01-01T00:00:00Z"},
               {"id": "ys", "content": "y" * 2500, "created_at": "2025-01-01T01:00:00Z"},
               {"id": "seat", "content": "Prefers window seats.",
                "created_at": "2025-01-02T00:00:00Z"}]
    add_memories(store, "\n".join(json.dumps(r) for r in records).encode())
    run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0 and check_store(store) == []
    text = "".join((store.scenes_dir / n).read_text("utf-8") for n in store.scene_names())
    assert f"My deploy key is {key[:150]}" in text and "window seats" in text
    outcomes = {}
    for commit in git.Repo(store.root).iter_commits():
        path = history.trailers(commit.message).get("Ledger")
        if path:
            ledger = Ledger.parse((commit.tree / path).data_stream.read().decode())
            outcomes.update({e.id: e.outcome for e in ledger.entries})
    assert outcomes == {"key": "placed", "ys": "placed", "seat": "placed"}
