"""One bullet per fact (issue 23, item 6): the offline backend writes each fact of a scene's
timeline on its own ``- YYYY-MM-DD: ...`` line, same-day facts included, reads them back as
separate entries, keeps an older scene's glued day line as it is, counts the summary's
entries as the bullets a reader sees, and never lets a very long memory fill the summary or
share a bullet. Small inputs of our own, in English and Chinese, through the command line and
the offline backend."""

from __future__ import annotations

import json
import re

import pytest
from clirunner import CheckedRunner
from test_conservation_offline import add, body_of, fold, head_ledger, new_store

from scene_engine.cli import app
from scene_engine.offline import timeline
from scene_engine.offline.prose import LATEST_CHARS
from scene_engine.offline.timeline import parse_draft, render_body
from scene_engine.services.doctor import check_store
from scene_engine.services.trace import blame_scene, trace_memory
from scene_engine.store.scene import parse_scene

runner = CheckedRunner()

LESSON = "Cello lesson with Mrs Park moved to Thursday at 5pm. Bring the new rosin."
RECITAL = "Cello recital at the community hall went well; I played the Bach suite."
SCALES = "Practised cello scales and the Bach suite for an hour."
CAT_ZH = ["年糕今天去宠物医院打了疫苗。", "年糕把窗台上的花盆推倒了。", "给年糕买了新的猫抓板。"]


def _bullets(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("- ")]


def _summary(store, name: str) -> str:
    return str(parse_scene((store.scenes_dir / name).read_text("utf-8"), name).meta["summary"])


def _only_scene(store) -> str:
    (name,) = store.scene_names()
    return name


def _cli(store, *args: str, stdin: str | None = None):
    result = runner.invoke(app, ["--dir", str(store.root), *args], input=stdin)
    assert result.exit_code == 0, result.output
    return result


def _records(*rows: tuple[str, str, str]) -> str:
    return json.dumps([{"id": i, "content": c, "created_at": t} for i, c, t in rows],
                      ensure_ascii=False)


def test_same_day_facts_are_separate_bullets_through_the_command_line(tmp_path):
    store = new_store(tmp_path / "s")
    _cli(store, "add", "-", stdin=_records(("lesson", LESSON, "2026-05-07T09:00:00Z"),
                                           ("recital", RECITAL, "2026-05-07T19:00:00Z")))
    _cli(store, "run")
    name = _only_scene(store)
    assert _bullets(body_of(store, name)) == [f"- 2026-05-07: {LESSON}",
                                              f"- 2026-05-07: {RECITAL}"]
    # The next batch reads them back as two entries and adds a third of that day on its own.
    _cli(store, "add", "-", stdin=_records(("scales", SCALES, "2026-05-07T21:00:00Z")))
    _cli(store, "run")
    assert _bullets(body_of(store, name)) == [f"- 2026-05-07: {LESSON}",
                                              f"- 2026-05-07: {RECITAL}",
                                              f"- 2026-05-07: {SCALES}"]
    assert "Cello" in _summary(store, name) and ": 3 entries in May 2026." in _summary(store, name)
    # Each memory is traced, whole, to its own line.
    lines = {m: [(r["line"], r["how"]) for r in trace_memory(store, m).lines]
             for m in ("lesson", "recital", "scales")}
    assert sorted(lines.values()) == [[(8, "whole")], [(9, "whole")], [(10, "whole")]]
    shown = runner.invoke(app, ["--dir", str(store.root), "trace", "lesson"]).output
    assert f"{name}:{lines['lesson'][0][0]} (batch 1) - 2026-05-07: {LESSON}" in shown
    blamed = {r["text"]: r["memories"] for r in blame_scene(store, name)}
    assert blamed[f"- 2026-05-07: {RECITAL}"] == ["recital"]
    assert check_store(store) == []


def test_chinese_same_day_facts_are_separate_bullets_and_the_summary_counts_them(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *[(f"n{i}", text, f"2026-03-02T0{i + 1}:00:00Z") for i, text in enumerate(CAT_ZH)],
        ("n9", "年糕最喜欢趴在窗台上晒太阳。", "2026-03-05T09:00:00Z"))
    fold(store)
    name = _only_scene(store)
    bullets = _bullets(body_of(store, name))
    # (A day's facts keep the order the batch added them in: the new scene's group first.)
    assert sorted(bullets[:3]) == sorted(f"- 2026-03-02: {text}" for text in CAT_ZH)
    assert bullets[3] == "- 2026-03-05: 年糕最喜欢趴在窗台上晒太阳。"
    assert "2026年3月的4条记录。" in _summary(store, name)
    assert all([r["text"] for r in trace_memory(store, f"n{i}").lines] == [f"- 2026-03-02: {t}"]
               for i, t in enumerate(CAT_ZH))


def _old_glued_lines(entries):
    """The timeline as the backend wrote it before issue 23: one line a day, its facts joined."""
    lines, days = [], {}
    for entry in timeline.ordered(entries):
        if entry.person or entry.digest:
            lines.append(entry.text if entry.person else f"- {entry.day} (digest): {entry.text}")
        elif entry.day in days:
            index = days[entry.day]
            lines[index] += " " + timeline.sentence(entry.text)
        else:
            days[entry.day] = len(lines)
            lines.append(f"- {entry.day}: {timeline.sentence(entry.text)}")
    return lines


def test_an_old_glued_day_line_stays_one_entry_and_new_facts_get_their_own(tmp_path,
                                                                            monkeypatch):
    store = new_store(tmp_path / "s")
    with monkeypatch.context() as old:     # a scene an earlier version wrote
        old.setattr(timeline, "_timeline_lines", _old_glued_lines)
        add(store, ("lesson", LESSON, "2026-05-07T09:00:00Z"),
            ("recital", RECITAL, "2026-05-07T19:00:00Z"))
        fold(store)
    name = _only_scene(store)
    glued = f"- 2026-05-07: {LESSON} {RECITAL}"
    assert _bullets(body_of(store, name)) == [glued]
    # Said again that day, word for word (one sentence of the glued line): nothing added.
    add(store, ("again", "cello recital at the community hall went well, I played the Bach "
                         "suite", "2026-05-07T22:00:00Z"),
        ("scales", SCALES, "2026-05-07T21:00:00Z"))
    fold(store)
    assert _bullets(body_of(store, name)) == [glued, f"- 2026-05-07: {SCALES}"]
    assert {e.id: e.outcome for e in head_ledger(store).entries} == {"scales": "placed",
                                                                    "again": "recorded"}
    assert ": 2 entries in May 2026." in _summary(store, name)
    # Both memories of the glued line are still traced to it, whole.
    assert [(r["text"], r["how"]) for r in trace_memory(store, "lesson").lines] == [(glued, "whole")]
    assert [(r["text"], r["how"]) for r in trace_memory(store, "recital").lines] == [(glued, "whole")]


def test_a_two_sentence_memory_said_again_the_same_day_is_recorded_not_added(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("lesson", LESSON, "2026-05-07T09:00:00Z"),
        ("recital", RECITAL, "2026-05-07T19:00:00Z"))
    fold(store)
    add(store, ("again", LESSON.lower().replace("5pm.", "5pm;"), "2026-05-07T20:00:00Z"),
        ("zh1", "年糕今天去宠物医院打了疫苗。 医生说它有点胖。", "2026-05-08T09:00:00Z"))
    fold(store)
    assert {e.id: e.outcome for e in head_ledger(store).entries} == {"again": "recorded",
                                                                    "zh1": "placed"}
    add(store, ("zh2", "年糕今天去宠物医院打了疫苗，医生说它有点胖", "2026-05-08T10:00:00Z"))
    fold(store)
    assert [e.outcome for e in head_ledger(store).entries] == ["recorded"]
    body = "".join(body_of(store, n) for n in store.scene_names()).casefold()
    assert body.count("cello lesson with mrs park") == 1
    assert body.count("医生说它有点胖") == 1
    # A memory of two sentences on its own bullet is traced there whole (no one sentence
    # holds it, its line does).
    assert [r["how"] for r in trace_memory(store, "zh1").lines] == ["whole"]
    assert [r["how"] for r in trace_memory(store, "lesson").lines] == ["whole"]


def test_a_wrapped_line_continues_its_entry_and_each_bullet_is_read_as_one(tmp_path):
    text = ("---\nsummary: Cello.\n---\n## Timeline (UTC)\n"
            f"- 2026-05-07: {LESSON[:44]}\n  {LESSON[45:]}\n"
            f"- 2026-05-07: {RECITAL}\n"
            f"- 2026-05-06: {LESSON} {RECITAL}\n")
    draft = parse_draft("cello.md", text)
    assert [(e.day, e.text) for e in draft.entries] == [
        ("2026-05-07", LESSON), ("2026-05-07", RECITAL), ("2026-05-06", f"{LESSON} {RECITAL}")]
    assert render_body(draft, "UTC").splitlines()[1:] == [
        f"- 2026-05-06: {LESSON} {RECITAL}", f"- 2026-05-07: {LESSON}", f"- 2026-05-07: {RECITAL}"]


def test_the_summary_counts_every_bullet_a_person_wrote_ones_included(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("lesson", LESSON, "2026-05-07T09:00:00Z"),
        ("recital", RECITAL, "2026-05-07T19:00:00Z"))
    fold(store)
    name = _only_scene(store)
    path = store.scenes_dir / name
    path.write_text(path.read_text("utf-8")
                    + "- 2026-04-20: Bought a cello case (my own note).\n"
                    + "  It was blue.\n", "utf-8")
    add(store, ("scales", SCALES, "2026-05-08T09:00:00Z"))
    fold(store)
    bullets = _bullets(body_of(store, name))
    assert len(bullets) == 4 and "- 2026-04-20: Bought a cello case (my own note)." in bullets
    assert ": 4 entries from April to May 2026. Latest (8 May): Practised" in _summary(store, name)


def test_a_digest_is_one_bullet_of_the_count(tmp_path):
    store = new_store(tmp_path / "s", max_scene_chars=600, max_scenes=3)
    add(store, ("c1", "Cooked a lentil curry with fresh coriander for dinner.",
                "2024-02-01T19:00:00Z"))
    fold(store)
    add(store, *[(f"g{i}", f"Watered the balcony tomatoes and basil in the garden, day {i}.",
                  f"2024-03-{i + 1:02d}T08:00:00Z") for i in range(6)])
    fold(store)
    add(store, *[(f"g{i}", f"Watered the balcony tomatoes and basil in the garden, day {i}.",
                  f"2024-05-{i:02d}T08:00:00Z") for i in range(6, 9)])
    fold(store)
    name = next(n for n in store.scene_names() if "tomatoes" in body_of(store, n))
    bullets = _bullets(body_of(store, name))
    assert any("(digest)" in b for b in bullets) and len(bullets) >= 2
    count = re.search(r": (\d+) entries ", _summary(store, name))
    assert count and int(count.group(1)) == len(bullets)


LONG_EN = " ".join(f"The Postgres replica {i} lag check ran at night and the vacuum job "
                   f"finished step {i}." for i in range(200))[:10_000]
LONG_ZH = "".join(f"数据库第{i}号副本的夜间检查完成了，清理任务也跑完了。" for i in range(500))[:10_000]


@pytest.mark.parametrize(("short", "long", "lang"), [
    ("The Postgres backup job now runs nightly at 2am.", LONG_EN, "en"),
    ("数据库的备份任务现在每晚两点运行。", LONG_ZH, "zh")])
def test_a_ten_thousand_character_memory_is_cut_alone_and_never_fills_the_summary(
        tmp_path, short, long, lang):
    assert len(long) == 10_000
    store = new_store(tmp_path / "s")
    add(store, ("short", short, "2026-05-07T09:00:00Z"))
    fold(store)
    add(store, ("long", long, "2026-05-07T19:00:00Z"))
    fold(store)
    name = _only_scene(store)
    bullets = _bullets(body_of(store, name))
    assert bullets[0] == f"- 2026-05-07: {short}"          # the other fact, whole, alone
    assert len(bullets) == 2 and bullets[1].endswith("…")
    cut = bullets[1].removeprefix("- 2026-05-07: ").removesuffix("…")
    assert long.startswith(cut) and short not in bullets[1]
    assert len(body_of(store, name).strip()) <= 1500      # the scene keeps its room
    said = _summary(store, name)
    assert long[:LATEST_CHARS[lang] // 2] in said and long[:500] not in said
    assert len(said) < 300
    assert [r["how"] for r in trace_memory(store, "long").lines] == ["cut"]
    assert trace_memory(store, "short").lines[0]["text"] == bullets[0]
    assert check_store(store) == []


@pytest.mark.parametrize(("line", "said"), [
    ("- 2026-10-04: Dentist appointment about my Rex (note a295).", ""),
    ("- 2026-12-25: Dentist appointment about my Berlin (note a10).", "whole"),
    ("- 2026-12-25: Dentist appointment about my Berlin (note a11).", ""),
])
def test_a_line_states_a_memory_by_its_own_numbers_not_by_its_date(line, said):
    # A newcomer's trace named another memory's line: the "10" of its date "2026-10-04"
    # passed for the "a10" of the memory.
    from datetime import UTC, datetime

    from scene_engine.services.trace import _states
    from scene_engine.store.memories import Memory

    memory = Memory(seq=30, id="a-10", content="Dentist appointment about my Berlin (note a10)",
                    created_at=datetime(2026, 12, 25, 21, tzinfo=UTC))
    assert _states(memory, line, UTC) == said
