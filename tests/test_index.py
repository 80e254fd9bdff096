"""Search index: incremental sync by checksum, CJK + English search, safety, self-repair."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import warnings

import pytest

from scene_engine.index.analysis import index_text
from scene_engine.index.scenes import SceneIndex, fts_query


def write(folder, name, summary, body, heat=1):
    path = folder / name
    path.write_text(f"---\nsummary: {summary}\nheat: {heat}\n---\n{body}", encoding="utf-8")
    return path


def checksums(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.md")}


@pytest.fixture
def store(tmp_path):
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    write(scenes, "coffee.md", "Morning routine", "用户每天早上在上海喝咖啡，然后去跑步。", heat=2)
    write(scenes, "work.md", "Career and projects", "Works as a backend engineer on payments.")
    write(scenes, "travel.md", "Trips", "去年秋天去了杭州和北京旅行。Visited Hangzhou.", heat=5)
    index = SceneIndex(tmp_path / ".scene-engine" / "index.sqlite", scenes)
    index.sync()
    yield scenes, index
    index.close()


def names(hits):
    return [h.name for h in hits]


def test_entries_hold_header_values_and_checksums(store):
    scenes, index = store
    entries = index.entries()
    assert {n: e.checksum for n, e in entries.items()} == checksums(scenes)
    assert entries["travel.md"].heat == 5 and entries["work.md"].summary == "Career and projects"
    assert entries["coffee.md"].size == (scenes / "coffee.md").stat().st_size


def test_two_character_chinese_and_english_words_are_found(store):
    _, index = store
    assert names(index.search("咖啡")) == ["coffee.md"]
    assert names(index.search("上海")) == ["coffee.md"]
    assert names(index.search("杭州")) == ["travel.md"]
    assert names(index.search("engineer")) == ["work.md"]
    assert names(index.search("ENGINEER")) == ["work.md"]  # case folded
    hit = index.search("咖啡")[0]
    assert hit.summary == "Morning routine" and hit.heat == 2 and "咖啡" in hit.snippet


def test_longer_and_single_chinese_queries(store):
    _, index = store
    assert names(index.search("喝咖啡")) == ["coffee.md"]
    assert names(index.search("咖啡跑步")) == ["coffee.md"]  # two words, not one phrase...
    assert names(index.search("海上")) == []   # ...but a word's characters must be in order
    assert set(names(index.search("州"))) == {"travel.md"}  # a single char matches anywhere
    assert "coffee.md" in names(index.search("啡"))


def test_all_terms_preferred_then_any_term(store):
    _, index = store
    assert names(index.search("Hangzhou 杭州")) == ["travel.md"]
    assert set(names(index.search("payments 北京"))) == {"work.md", "travel.md"}


def test_heat_breaks_ties(tmp_path):
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    for name, heat in [("aa.md", 1), ("bb.md", 7), ("cc.md", 3)]:
        write(scenes, name, "same", "identical body about gardens", heat=heat)
    with SceneIndex(tmp_path / "i.sqlite", scenes) as index:
        index.sync()
        assert names(index.search("gardens")) == ["bb.md", "cc.md", "aa.md"]


@pytest.mark.parametrize("query", ['"', 'a "b', "NEAR(a b)", "a*", "*", "summary:x", "a OR",
                                   "AND", "(", "^start", "-x", "'; DROP TABLE scenes; --",
                                   "咖啡*", "", "   ", "!!!"])
def test_fts_syntax_in_queries_is_plain_text(store, query):
    _, index = store
    assert isinstance(index.search(query), list)
    assert index.entries()  # still there


def test_query_builder_quotes_everything():
    assert fts_query('NEAR "x" b*:c') == '"near" AND "x" AND "b" AND "c"'
    assert fts_query('say "hi"', any_term=True) == '"say" OR "hi"'
    assert fts_query("上海咖啡馆") == '"上海" AND "咖啡 啡馆"'   # jieba's words, pair phrases
    assert fts_query("..") is None
    assert index_text("like咖啡馆") == "like 咖啡 啡馆 馆"


def test_sync_is_incremental_and_notices_changes(store):
    scenes, index = store
    report = index.sync()
    assert not report.changed and report.unchanged == 3
    write(scenes, "work.md", "Career", "Now a data engineer in 深圳.")
    (scenes / "travel.md").unlink()
    write(scenes, "family.md", "Family", "Two kids.")
    (scenes / "notes.txt").write_text("not a scene")
    report = index.sync()
    assert (report.added, report.updated, report.removed) == (["family.md"], ["work.md"],
                                                              ["travel.md"])
    assert {n: e.checksum for n, e in index.entries().items()} == checksums(scenes)
    assert names(index.search("深圳")) == ["work.md"]
    assert index.search("杭州") == []


def test_same_size_same_mtime_edit_is_still_seen(store):
    # A fresh file's size+mtime is not trusted (racy clean), so an edit within the clock's
    # granularity that keeps the size is still indexed.
    scenes, index = store
    path = write(scenes, "coffee.md", "Morning routine", "AAAA")
    index.sync()
    stat = path.stat()
    path.write_text(path.read_text().replace("AAAA", "BBBB"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert index.sync().updated == ["coffee.md"]
    assert names(index.search("BBBB")) == ["coffee.md"]


def test_touch_without_content_change_is_not_a_change(store):
    scenes, index = store
    os.utime(scenes / "work.md", ns=(time.time_ns(), time.time_ns() - 10**10))
    assert not index.sync().changed


def test_index_file_updates_and_removes_one(store):
    scenes, index = store
    assert index.index_file("work.md") is False
    write(scenes, "work.md", "Career", "Switched to robotics.")
    assert index.index_file("work.md") is True
    assert names(index.search("robotics")) == ["work.md"]
    (scenes / "work.md").unlink()
    assert index.index_file("work.md") is True
    assert "work.md" not in index.entries()
    assert index.index_file("../escape.md") is False


def test_bad_header_is_indexed_as_body_with_warning(store):
    scenes, index = store
    (scenes / "broken.md").write_text("---\nsummary: [oops\n---\nbody mentions zebras\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the index captures the warning, never leaks it
        report = index.sync()
    assert report.added == ["broken.md"]
    assert any("broken.md, line" in w for w in report.warnings)
    assert names(index.search("zebras")) == ["broken.md"]
    assert index.entries()["broken.md"].summary == ""


def test_corrupt_database_is_rebuilt(tmp_path, store):
    scenes, index = store
    db = index.db_path
    index.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{db}{suffix}"):
            os.unlink(f"{db}{suffix}")
    db.write_bytes(b"this is not a database" * 100)
    with SceneIndex(db, scenes) as again:
        again.sync()
        assert {n: e.checksum for n, e in again.entries().items()} == checksums(scenes)


def test_old_schema_version_is_rebuilt(store):
    scenes, index = store
    index.conn.execute("PRAGMA user_version = 0")
    index.close()
    with SceneIndex(index.db_path, scenes) as again:
        assert again.entries() == {}  # recreated empty ...
        again.sync()                  # ... and refilled from the files
        assert names(again.search("咖啡")) == ["coffee.md"]
        version = again.conn.execute("PRAGMA user_version").fetchone()[0]
        assert version >= 1


def test_rebuild_matches_sync(store):
    scenes, index = store
    before = index.entries()
    report = index.rebuild()
    assert sorted(report.added) == sorted(before) and index.entries() == before


@pytest.mark.slow
def test_thousands_of_scenes_added_and_removed_in_one_sync_and_searched(tmp_path):
    # What this holds: one sync adds thousands of scenes and removes over a thousand (more
    # than the 999 bound parameters of an older SQLite), and search still ranks the rest.
    # How fast a large store indexes is bench/bench_index.py's (10,000 scenes), not a test's.
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    for i in range(2_400):
        (scenes / f"s{i:05d}.md").write_text(
            f"---\nsummary: scene {i}\nheat: {i % 7}\n---\nword{i} common 上海{'咖啡' * (i % 2)}\n")
    with SceneIndex(tmp_path / "i.sqlite", scenes) as index:
        assert len(index.sync().added) == 2_400
        for i in range(0, 2_400, 2):  # delete half: 1,200 removals in one sync
            (scenes / f"s{i:05d}.md").unlink()
        assert len(index.sync().removed) == 1_200
        assert names(index.search("word2399")) == ["s02399.md"]
        assert names(index.search("word2398")) == []
        assert len(index.search("咖啡", k=50)) == 50
        assert len(index.entries()) == 1_200


def test_connection_errors_other_than_corruption_are_raised(tmp_path):
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    with SceneIndex(tmp_path / "i.sqlite", scenes) as index:
        locker = sqlite3.connect(tmp_path / "i.sqlite", isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        index.conn.execute("PRAGMA busy_timeout = 50")
        write(scenes, "a.md", "x", "y")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            index.sync()
        locker.execute("ROLLBACK")
        locker.close()
        assert index.sync().added == ["a.md"]  # nothing was lost or dropped


@pytest.mark.parametrize("query", ["🍸", "🍸 tonight", "☕", "🇵🇹"])
def test_an_emoji_is_a_word_a_search_finds(tmp_path, query):
    from clirunner import CheckedRunner as CliRunner

    from scene_engine.cli import app
    from scene_engine.store.store import init_store

    root = tmp_path / "s"
    init_store(root)
    runner = CliRunner()
    added = runner.invoke(app, ["--dir", str(root), "ingest", "-"], input="\n".join([
        '{"id": "c1", "content": "Cocktail 🍸 tonight with Ana, then ☕ and a trip to 🇵🇹."}',
        '{"id": "c2", "content": "A quiet evening at home reading."}']) + "\n")
    assert added.exit_code == 0, added.output
    found = runner.invoke(app, ["--dir", str(root), "search", query, "--memories", "--json"])
    assert found.exit_code == 0, found.output
    assert [h["id"] for h in json.loads(found.stdout)] == ["c1"], found.output
    scenes = runner.invoke(app, ["--dir", str(root), "search", query, "--json"])
    assert json.loads(scenes.stdout) and not json.loads(scenes.stdout)[0]["fallback"]


MARKED = [   # (id, content): words whose marks are part of them, and runs without spaces
    ("h1", "मैं दिल्ली में नई नौकरी शुरू कर रहा हूँ"),
    ("h2", "आज रात खाने में दाल बनाई"),
    ("b1", "আমি কলকাতায় নতুন চাকরি পেয়েছি"),
    ("ta", "நான் சென்னையில் புதிய வேலை தொடங்கினேன்"),
    ("ar", "ذَهَبْتُ إِلَى المَدْرَسَةِ الجَدِيدَةِ"),
    ("nfd", "Cafe\u0301 au lait with Rene\u0301e in Sa\u0303o Paulo"),
    ("t1", "ย้ายไปเชียงใหม่เพื่อทำงานใหม่"),
    ("t2", "วันนี้กินข้าวผัดกับเพื่อน"),
    ("lo", "ຂ້ອຍໄປຮຽນພາສາລາວທີ່ວຽງຈັນ"),
    ("km", "ខ្ញុំទៅធ្វើការនៅភ្នំពេញ"),
    ("my", "ကျွန်တော်ရန်ကုန်မှာအလုပ်လုပ်တယ်"),
]


@pytest.fixture(scope="module")
def marked_store(tmp_path_factory):
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    from scene_engine.store.store import init_store

    root = tmp_path_factory.mktemp("marked") / "s"
    init_store(root)
    runner = CheckedRunner()
    lines = "".join(json.dumps({"id": i, "content": c}) + "\n" for i, c in MARKED)
    assert runner.invoke(app, ["--dir", str(root), "add", "-"], input=lines).exit_code == 0

    def found(query: str, *extra: str) -> list[str]:
        result = runner.invoke(app, ["--dir", str(root), "search", query, "--memories",
                                     "--json", *extra])
        return [h["id"] for h in json.loads(result.stdout)] if result.exit_code == 0 else []
    return found


@pytest.mark.parametrize(("query", "wanted"), [
    ("दिल्ली", ["h1"]), ("नौकरी", ["h1"]), ("दाल", ["h2"]), ("কলকাতায়", ["b1"]),
    ("சென்னையில்", ["ta"]), ("المَدْرَسَةِ", ["ar"]), ("café", ["nfd"]), ("renée", ["nfd"]),
    ("são", ["nfd"]), ("ทำงาน", ["t1"]), ("เชียงใหม่", ["t1"]), ("ข้าวผัด", ["t2"]),
    ("ພາສາລາວ", ["lo"]), ("ភ្នំពេញ", ["km"]), ("ရန်ကုန်", ["my"]),
])
def test_a_word_with_combining_marks_or_inside_a_run_without_spaces_is_found(
        marked_store, query, wanted):
    assert marked_store(query) == wanted


@pytest.mark.parametrize("letter", ["द", "ल", "ท", "ใ", "ม่", "ន"])
def test_a_single_letter_or_a_bare_letter_of_a_word_finds_nothing(marked_store, letter):
    assert marked_store(letter) == []

