"""The index never goes deaf, splits, leaks or crashes, and Chinese questions work.

Each test replays one kind of fault found on main: Chinese questions typed without spaces,
a watcher deaf after scenes/ is replaced, a reindex under a running watcher, a failed reindex,
busy and read-only reads, symbolic links, other encodings, stop words, an edit during start-up.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.core import fs as fsutil
from scene_engine.index.scenes import SceneIndex, open_for_reading
from scene_engine.index.watcher import SceneWatcher
from scene_engine.store.store import init_store

runner = CheckedRunner()
DEBOUNCE = 0.1


def scene(summary: str, body: str) -> str:
    return f"---\nsummary: {summary}\nheat: 1\n---\n{body}\n"


def names(hits) -> list[str]:
    return [h.name for h in hits]


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def found(root: Path, query: str) -> list[str]:
    """What a fresh reader of the index file finds (no sync: the index as it is; [] while
    there is no index file, or a new one has no tables yet)."""
    try:
        conn = sqlite3.connect(f"file:{root / '.scene-engine' / 'index.sqlite'}?mode=ro",
                               uri=True)
    except sqlite3.OperationalError:
        return []
    try:
        return names(SceneIndex(root / ".scene-engine" / "index.sqlite", root / "scenes",
                                _conn=conn).search(query))
    except sqlite3.OperationalError as exc:   # caught between the file and its tables
        # ... or, read-only, between the new file and its WAL index (-shm) the writer is
        # making: sqlite says "disk I/O error" to this probe, and the next probe reads it.
        if "no such table" in str(exc) or "disk I/O error" in str(exc):
            return []
        raise
    finally:
        conn.close()


@pytest.fixture
def store(tmp_path) -> Path:
    root = tmp_path / "store"
    init_store(root)
    scenes = root / "scenes"
    (scenes / "family.md").write_text(scene(
        "家人", "我妈妈住在杭州，每周日和她视频。Mum retired last year."), encoding="utf-8")
    (scenes / "coffee.md").write_text(scene(
        "咖啡", "用户最喜欢上海武康路的一家咖啡馆，每天早上喝一杯拿铁。"), encoding="utf-8")
    (scenes / "work.md").write_text(scene(
        "Work", "Backend engineer; the Kafka migration project shipped in March."),
        encoding="utf-8")
    (scenes / "reading.md").write_text(scene(
        "读书", "读书时的笔记都记在Notion里，每月整理一次。"), encoding="utf-8")
    (scenes / "dentist.md").write_text(scene(
        "牙医", "每半年洗一次牙，上一次是九月，诊所在徐汇。"), encoding="utf-8")
    (scenes / "misc.md").write_text(scene(
        "Misc", "Went with the flow; nothing with a name in it."), encoding="utf-8")
    return root


# -- 1. Chinese questions as people type them -------------------------------------------


@pytest.mark.parametrize("query, scene_name", [
    ("上海咖啡", "coffee.md"),
    ("我妈妈住在哪里？", "family.md"),
    ("妈妈住哪儿", "family.md"),
    ("武康路那家咖啡馆叫什么名字", "coffee.md"),
    ("Kafka那个迁移项目什么时候上线的？", "work.md"),
    ("每天早上喝什么", "coffee.md"),
    ("读书笔记记在哪里", "reading.md"),        # a compound the scene writes apart
    ("我上次洗牙是什么时候？", "dentist.md"),   # a word jieba makes up ("洗牙")
])
def test_chinese_questions_typed_without_spaces_find_their_scene(store, query, scene_name):
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        assert names(index.search(query, k=3))[:1] == [scene_name]
    result = runner.invoke(app, ["--dir", str(store), "search", query, "--json"])
    assert result.exit_code == 0 and json.loads(result.output)[0]["name"] == scene_name


def test_recall_answers_a_chinese_question(store):
    result = runner.invoke(app, ["--dir", str(store), "recall", "我妈妈住在哪里？",
                                 "--json"])
    assert result.exit_code == 0, result.output
    passages = json.loads(result.output)["passages"]
    assert passages and passages[0]["scene"] == "family.md" and "杭州" in passages[0]["text"]


# -- 8. stop words never decide a match ---------------------------------------------------


def test_stop_words_never_decide_a_match(store):
    result = runner.invoke(app, ["--dir", str(store), "search", "coffee with Lena", "--json"])
    assert result.exit_code == 0
    assert "misc.md" not in [h["name"] for h in json.loads(result.output)]   # only "with"
    result = runner.invoke(app, ["--dir", str(store), "search", "what is it"])
    assert result.exit_code == 0 and "no match" in result.output and "misc" not in result.output


def test_a_fallback_to_any_word_is_said(store):
    result = runner.invoke(app, ["--dir", str(store), "search", "Kafka retired"])
    assert "no scene holds all of: Kafka, retired" in result.output
    hits = json.loads(runner.invoke(app, ["--dir", str(store), "search", "Kafka retired",
                                          "--json"]).output)
    assert {h["name"] for h in hits} == {"work.md", "family.md"}
    assert all(h["fallback"] for h in hits)
    exact = json.loads(runner.invoke(app, ["--dir", str(store), "search", "Kafka March",
                                           "--json"]).output)
    assert [h["name"] for h in exact] == ["work.md"] and not exact[0]["fallback"]


def test_english_words_match_their_other_forms(store):
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        assert names(index.search("migrations shipping")) == ["work.md"]
        assert "Kafka" in index.search("migrating")[0].snippet


# -- 2. the watcher re-arms on a new scenes/ folder --------------------------------------


@pytest.mark.parametrize("how", ["recreate", "move-in"])
def test_watcher_keeps_hearing_after_scenes_is_replaced(store, how):
    scenes = store / "scenes"
    with SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        saved = store.parent / "saved-scenes"
        shutil.copytree(scenes, saved)
        shutil.rmtree(scenes)
        if how == "recreate":
            shutil.copytree(saved, scenes)
        else:
            os.rename(saved, scenes)
        assert wait_for(lambda: watcher.wait_idle() and "work.md" in found(store, "Kafka"))
        (scenes / "work.md").write_text(scene("Work", "Now on the zeppelin team."))
        assert wait_for(lambda: found(store, "zeppelin") == ["work.md"]), \
            "an edit after scenes/ was replaced never reached the index"
        (scenes / "new.md").write_text(scene("New", "A quokka appeared."))
        assert wait_for(lambda: found(store, "quokka") == ["new.md"])


def test_an_edit_made_while_the_watcher_starts_is_not_lost(store):
    class EditRightAfterFirstSync(SceneIndex):
        def sync(self):
            report = super().sync()
            if not getattr(self, "_edited", False):   # the person saves just now
                self._edited = True
                (store / "scenes" / "work.md").write_text(scene("Work", "Moved to narwhals."))
            return report

    def factory():
        return EditRightAfterFirstSync(store / ".scene-engine" / "index.sqlite",
                                       store / "scenes")

    with SceneWatcher(store, index_factory=factory, debounce=DEBOUNCE):
        assert wait_for(lambda: found(store, "narwhals") == ["work.md"], timeout=5)


# -- 3, 4. reindex builds aside and swaps; the watcher keeps writing the live index --------


def test_reindex_while_watching_keeps_one_index(store):
    with SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        result = runner.invoke(app, ["--dir", str(store), "reindex"])
        assert result.exit_code == 0, result.output
        (store / "scenes" / "work.md").write_text(scene("Work", "Now a lighthouse keeper."))
        assert wait_for(lambda: found(store, "lighthouse") == ["work.md"]), \
            "the watcher wrote its edit somewhere the real index is not"
        assert watcher.stats.errors == 0


def test_a_deleted_index_file_is_recreated_not_written_blind(store):
    db = store / ".scene-engine" / "index.sqlite"
    with SceneIndex(db, store / "scenes") as index:
        index.sync()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        (store / "scenes" / "work.md").write_text(scene("Work", "Now a beekeeper."))
        index.index_file("work.md")
    assert found(store, "beekeeper") == ["work.md"]


def test_a_failed_reindex_leaves_the_old_index_usable(store):
    result = runner.invoke(app, ["--dir", str(store), "reindex"])
    assert result.exit_code == 0
    scenes = store / "scenes"
    shutil.move(scenes, store / "away")
    scenes.write_text("not a folder")                      # scenes/ cannot be listed
    result = runner.invoke(app, ["--dir", str(store), "reindex"])
    assert result.exit_code == 1
    assert "reindex failed" in result.output and "left as it was" in result.output
    assert "Traceback" not in result.output
    assert found(store, "Kafka") == ["work.md"]             # the old index is intact


def test_a_rebuild_with_an_unreadable_file_swaps_nothing(store, monkeypatch):
    db = store / ".scene-engine" / "index.sqlite"
    with SceneIndex(db, store / "scenes") as index:
        index.sync()
        real = fsutil.read_regular

        def unreadable(path):
            if Path(path).name == "work.md":
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)

        monkeypatch.setattr("scene_engine.index.scenes.read_regular", unreadable)
        with pytest.raises(OSError, match="work.md"):
            index.rebuild()
        assert names(index.search("Kafka")) == ["work.md"]


# -- 5. reads never crash on a busy or read-only index -----------------------------------


def test_a_busy_index_answers_as_it_is_with_a_warning(store, monkeypatch):
    from scene_engine.index import scenes as scene_index

    runner.invoke(app, ["--dir", str(store), "reindex"])
    (store / "scenes" / "work.md").write_text(scene("Work", "Kafka and a new pelican."))
    writer = sqlite3.connect(store / ".scene-engine" / "index.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")                        # another process is writing
    waits = []                 # how long each connection the reads open may wait for a writer
    real_connect = sqlite3.connect

    def connect(*args, **kwargs):
        waits.append(kwargs.get("timeout", 5.0))
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(scene_index.sqlite3, "connect", connect)
    try:
        result = runner.invoke(app, ["--dir", str(store), "search", "Kafka"])
        recalled = runner.invoke(app, ["--dir", str(store), "recall", "Kafka"])
    finally:
        monkeypatch.undo()
        writer.execute("ROLLBACK")
        writer.close()
    # Not the writer's wait: every connection a read opened waits the short read bound.
    assert waits and max(waits) <= scene_index.READ_BUSY_SECONDS < scene_index.BUSY_SECONDS
    assert result.exit_code == 0 and "work.md (heat 1)" in result.output, result.output
    assert "may be stale" in result.output and "Traceback" not in result.output
    assert recalled.exit_code == 0 and "may be stale" in recalled.output
    assert "Kafka" in recalled.output


@contextlib.contextmanager
def read_only(root: Path):
    """``root`` as a user who cannot write it sees it: a read-only bind mount for root (who
    may write anywhere), the write bits taken away for anyone else; skips when neither works."""
    if os.getuid() != 0:
        paths = [root, *root.rglob("*")]
        modes = {p: p.stat().st_mode for p in paths}
        for path in paths:
            path.chmod(modes[path] & ~0o222)
        try:
            yield root
        finally:
            for path in paths:
                path.chmod(modes[path])
        return
    view = root.parent / "read-only-view"
    view.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(root), str(view)], capture_output=True)
    if mounted.returncode:
        pytest.skip("cannot make a read-only view here (mount --bind refused)")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(view)],
                          capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        yield view
    finally:
        unmounted = subprocess.run(["umount", str(view)], capture_output=True)
        if unmounted.returncode:             # still busy: a file left open in the view
            subprocess.run(["umount", "-l", str(view)], capture_output=True)
            pytest.fail(f"a file stayed open in the read-only store: {unmounted.stderr!r}")


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
@pytest.mark.parametrize("indexed", [True, False])
def test_a_store_the_user_cannot_write_is_still_searchable(store, indexed):
    index_files = list((store / ".scene-engine").glob("index.sqlite*"))
    for path in index_files:
        path.unlink()
    if indexed:
        runner.invoke(app, ["--dir", str(store), "reindex"])
        (store / "scenes" / "late.md").write_text(scene("Late", "Kafka again, later."))
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    with read_only(store) as view:
        for command in (["search", "Kafka"], ["recall", "Kafka"]):
            result = runner.invoke(app, ["--dir", str(view), *command])
            assert result.exit_code == 0, result.output
            assert "unable to open" not in result.output and "readonly" not in result.output
            assert "work" in result.output
            if indexed:
                assert "late" in result.output     # brought up to date, in memory
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before


def test_open_for_reading_says_when_scenes_cannot_be_listed(store):
    runner.invoke(app, ["--dir", str(store), "reindex"])
    shutil.move(store / "scenes", store / "away")
    (store / "scenes").write_text("not a folder")
    index, warning = open_for_reading(store / ".scene-engine" / "index.sqlite",
                                      store / "scenes")
    try:
        assert "may be stale" in warning and names(index.search("Kafka")) == ["work.md"]
    finally:
        index.close()


# -- 6. symbolic links are never followed -------------------------------------------------


def test_a_symbolic_link_in_scenes_is_never_read(store, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("---\nsummary: x\n---\nhunter2password\n")
    (store / "scenes" / "leak.md").symlink_to(secret)
    with SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        (store / "scenes" / "leak2.md").symlink_to(secret)     # made while watching
        os.replace(store / "scenes" / "leak2.md", store / "scenes" / "leak3.md")
        (store / "scenes" / "work.md").write_text(scene("Work", "Kafka platypus."))
        assert wait_for(lambda: found(store, "platypus") == ["work.md"])
        assert watcher.wait_idle()
    assert found(store, "hunter2password") == []
    for command in (["search", "hunter2password"], ["recall", "hunter2password"]):
        result = runner.invoke(app, ["--dir", str(store), *command])
        assert "hunter2password" not in result.output
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        assert index.index_file("leak.md") is False
        assert "leak.md" not in index.entries()


def test_read_regular_refuses_links_and_folders(tmp_path):
    (tmp_path / "real.md").write_text("text")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert fsutil.read_regular(tmp_path / "real.md") == b"text"
    with pytest.raises(fsutil.NotRegularFile):
        fsutil.read_regular(tmp_path / "link.md")
    with pytest.raises(fsutil.NotRegularFile):
        fsutil.read_regular(tmp_path)


# -- 7. another encoding: frozen, named with its byte, still findable ---------------------


def test_a_latin1_scene_is_named_by_doctor_and_its_words_stay_findable(store):
    (store / "scenes" / "old.md").write_bytes(
        "---\nsummary: Café\nheat: 1\n---\nThe café on Rue Bonaparte.\n".encode("latin-1"))
    (store / "scenes" / "broken.md").write_text("---\nsummary: [oops\n---\nbody\n")
    result = runner.invoke(app, ["--dir", str(store), "doctor"])
    assert result.exit_code == 1
    assert "old.md is not UTF-8 (byte 16)" in result.output
    assert "broken.md, line" in result.output                 # doctor went on checking
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        assert names(index.search("cafe bonaparte")) == ["old.md"]


# -- 10. start-up: the quick door answers exactly as the full command line ----------------


@pytest.mark.parametrize("argv", [
    ["search", "Kafka"], ["search", "上海咖啡", "--json"], ["search", "-k", "1", "Kafka"],
    ["search", "coffee with nobody"], ["search", "what is it"],
    ["recall", "我妈妈住在哪里？"], ["recall", "Kafka", "--budget", "300", "--json"],
])
def test_the_quick_door_answers_like_the_full_command_line(store, argv):
    from scene_engine.cli import quick

    full = runner.invoke(app, ["--dir", str(store), *argv])
    scenes = Path(sys.executable).with_name("scenes")
    fresh = subprocess.run([str(scenes), "--dir", str(store), *argv], capture_output=True,
                           text=True, timeout=60)
    assert quick._parse(["--dir", str(store), *argv]) is not None   # it took the quick door
    assert fresh.returncode == full.exit_code == 0
    assert fresh.stdout == full.stdout


@pytest.mark.parametrize("argv", [
    ["search"], ["search", "--help"], ["search", "-k", "0", "x"], ["search", "a", "b"],
    ["recall", "x", "--budget", "50"], ["list", "-h"], ["--dir"], ["search", "-x"],
    ["status", "--json", "--json"], ["list", "x"], ["show", "x"],
    ["search", "x", "--json", "--json"], ["recall", "--budget=abc", "x"],
])
def test_anything_but_a_plain_search_goes_to_the_full_command_line(argv):
    from scene_engine.cli import quick

    assert quick._parse(argv) is None


def test_the_quick_door_reports_a_missing_store_in_one_line(tmp_path):
    scenes = Path(sys.executable).with_name("scenes")
    result = subprocess.run([str(scenes), "--dir", str(tmp_path), "search", "x"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "is not a scene store" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_a_linked_persona_or_scenes_folder_is_never_read(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "persona.md").write_text("# Persona\nThe vault code is swordfish42.\n")
    (outside / "secret.md").write_text(scene("Secret", "The vault code is swordfish42."))
    (store / "persona.md").symlink_to(outside / "persona.md")
    recalled = runner.invoke(app, ["--dir", str(store), "recall", "vault code"])
    assert recalled.exit_code == 0 and "swordfish42" not in recalled.output
    doctor = runner.invoke(app, ["--dir", str(store), "doctor"])
    assert "persona.md is a symbolic link" in doctor.output
    shutil.move(store / "scenes", tmp_path / "real-scenes")
    (store / "scenes").symlink_to(outside)
    for command in (["search", "swordfish42"], ["recall", "vault code"], ["reindex"]):
        result = runner.invoke(app, ["--dir", str(store), *command])
        assert "swordfish42" not in result.output and "Traceback" not in result.output
    assert found(store, "swordfish42") == []


# -- faults a tester found replaying other tools' bug reports ------------------------------


def test_one_bad_file_never_stops_search_for_the_whole_store(store):
    scenes = store / "scenes"
    (scenes / "big.md").write_text("---\nsummary: big\nheat: 9223372036854775808\n---\ntuba\n")
    os.close(os.open(os.path.join(os.fsencode(scenes), b"bad\xe9name.md"),
                     os.O_CREAT | os.O_WRONLY, 0o644))
    for command in (["search", "Kafka"], ["recall", "Kafka"], ["reindex"]):
        result = runner.invoke(app, ["--dir", str(store), *command])
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
    assert "work.md" in runner.invoke(app, ["--dir", str(store), "search", "Kafka"]).output
    assert "big.md" in runner.invoke(app, ["--dir", str(store), "search", "tuba"]).output
    doctor = runner.invoke(app, ["--dir", str(store), "doctor"]).output
    assert "big.md, line 3: heat must be a whole number from 0 to" in doctor
    assert r"bad\xe9name.md" in doctor and "not UTF-8" in doctor


def test_accents_and_unicode_forms_do_not_hide_a_word(store):
    import unicodedata

    (store / "scenes" / "cv.md").write_text(scene("CV", "Updated my résumé. Café Ébène."))
    (store / "scenes" / "nfd.md").write_text(scene("NFD", unicodedata.normalize(
        "NFD", "Moved to Zürich; 가족 dinner.")))
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        for query, name in [("resume", "cv.md"), ("résumés", "cv.md"), ("ebene", "cv.md"),
                            ("zurich", "nfd.md"), ("Zürich", "nfd.md"), ("가족", "nfd.md")]:
            assert names(index.search(query)) == [name], query


def test_chinese_question_words_never_decide_a_match(store):
    hits = json.loads(runner.invoke(app, ["--dir", str(store), "search", "上海哪家咖啡馆",
                                          "--json"]).output)
    assert [h["name"] for h in hits] == ["coffee.md"] and not hits[0]["fallback"]
    for query in ("妈妈为何住杭州", "妈妈是否住在杭州", "妈妈住杭州多久了"):
        hits = json.loads(runner.invoke(app, ["--dir", str(store), "search", query,
                                              "--json"]).output)
        assert [h["name"] for h in hits] == ["family.md"] and not hits[0]["fallback"], query


def test_recall_quotes_a_sentence_asked_about_in_another_word_form(store):
    result = json.loads(runner.invoke(app, ["--dir", str(store), "recall",
                                            "When did the migrating ship?", "--json"]).output)
    assert result["passages"] and "Kafka migration" in result["passages"][0]["text"]


def test_a_summary_is_kept_as_written(store):
    (store / "scenes" / "no.md").write_text("---\nsummary: No\nheat: 1\n---\nkayak trips\n")
    hits = json.loads(runner.invoke(app, ["--dir", str(store), "search", "kayak",
                                          "--json"]).output)
    assert hits[0]["summary"] == "No"


def test_a_scene_in_gbk_or_utf16_is_listed_and_searchable(store):
    (store / "scenes" / "gbk.md").write_bytes(
        "---\nsummary: 茶\nheat: 1\n---\n我在杭州喝龙井茶。\n".encode("gbk"))
    (store / "scenes" / "utf16.md").write_bytes(
        "---\nsummary: notes\nheat: 1\n---\nNotepad wrote this about walruses.\n"
        .encode("utf-16"))
    listed = runner.invoke(app, ["--dir", str(store), "list", "--json"])
    assert listed.exit_code == 0 and "gbk.md" in listed.output
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        assert names(index.search("龙井茶")) == ["gbk.md"]
        assert names(index.search("walruses")) == ["utf16.md"]


def test_odd_arguments_and_files_get_clean_answers(store):
    result = runner.invoke(app, ["--dir", str(store), "search", "x", "-k",
                                 "99999999999999999999"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    os.mkfifo(store / "scenes" / "pipe.md")
    doctor = runner.invoke(app, ["--dir", str(store), "doctor"]).output
    assert "pipe.md is not a regular file" in doctor
    from scene_engine.index.analysis import query_terms
    assert query_terms("中" * 40_000)              # bounded work, no hang on pasted text


# -- the watcher when its store or scenes/ goes away ---------------------------------------


def test_the_watcher_stops_when_the_store_is_moved(store):
    from scene_engine.index import watcher as watcher_module

    with SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        moved = store.parent / "moved"
        os.rename(store, moved)
        (moved / "scenes" / "work.md").write_text(scene("Work", "Edited after the move."))
        assert wait_for(lambda: watcher.lost is not None, timeout=10)
    assert "moved or deleted" in watcher.lost and watcher.stats.lost == watcher.lost
    assert not store.exists()                    # nothing made again at the old path
    assert watcher_module.REARM_CHECK <= 1.0


def test_scenes_replaced_by_a_file_is_said_once_and_healed(store, caplog):
    import logging

    scenes = store / "scenes"
    with caplog.at_level(logging.WARNING, logger="scene_engine.index.watcher"), \
            SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        shutil.move(scenes, store / "away")
        scenes.write_text("not a folder")
        # Several retries fail meanwhile (counted, not waited for by the clock).
        assert wait_for(lambda: watcher.stats.errors >= 3, timeout=30), watcher.stats
        said = [r for r in caplog.records if "cannot sync" in r.getMessage()]
        assert len(said) == 1 and not any(r.exc_info for r in caplog.records)
        scenes.unlink()
        shutil.move(store / "away", scenes)
        (scenes / "work.md").write_text(scene("Work", "Back with a marmot."))
        assert wait_for(lambda: found(store, "marmot") == ["work.md"])
        assert watcher.wait_idle()


def test_a_deleted_index_is_refilled_whole_under_the_watcher(store):
    db = store / ".scene-engine" / "index.sqlite"
    with SceneWatcher(store, debounce=DEBOUNCE):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        (store / "scenes" / "new.md").write_text(scene("New", "An ibex."))
        assert wait_for(lambda: found(store, "ibex") == ["new.md"])
        assert found(store, "Kafka") == ["work.md"]       # not only what changed since


def test_watch_on_a_store_it_cannot_write_says_so_in_one_line(store):
    for path in store.glob(".scene-engine/index.sqlite*"):
        path.unlink()
    with read_only(store) as view:
        result = runner.invoke(app, ["--dir", str(view), "watch"])
    assert result.exit_code == 1 and "cannot keep the search index here" in result.output
    assert "Traceback" not in result.output


def test_a_short_chinese_query_means_those_characters_together(tmp_path):
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    (scenes / "together.md").write_text(scene("a", "他说不知道它在哪。代二号楼。"))
    (scenes / "apart.md").write_text(scene("b", "道路很长。它很小。代表第二。"))
    with SceneIndex(tmp_path / "i.sqlite", scenes) as index:
        index.sync()
        assert names(index.search("道它")) == ["together.md"]    # as grep would find
        assert names(index.search("代二")) == ["together.md"]
        assert set(names(index.search("道路它"))) == {"apart.md"}  # no literal: by words


def test_new_text_with_its_old_size_and_mtime_is_still_seen(store, monkeypatch):
    monkeypatch.setattr("scene_engine.index.scenes.RACY_NS", 0)   # trust size+mtime at once
    path = store / "scenes" / "work.md"
    with SceneIndex(store / ".scene-engine" / "index.sqlite", store / "scenes") as index:
        index.sync()
        before = path.stat()
        time.sleep(0.01)
        path.write_text(path.read_text().replace("March", "Zarch"))   # same size
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))    # touch -r
        assert index.sync().updated == ["work.md"]
        assert names(index.search("Zarch")) == ["work.md"]


def test_the_watcher_ignores_a_name_that_is_not_utf8(store, caplog):
    import logging

    scenes = os.fsencode(store / "scenes")
    with caplog.at_level(logging.WARNING, logger="scene_engine.index.watcher"), \
            SceneWatcher(store, debounce=DEBOUNCE) as watcher:
        bad = os.path.join(scenes, b"bad\xffname.md")
        with open(bad, "wb") as handle:
            handle.write(b"---\nsummary: s\n---\nbody\n")
        (store / "scenes" / "work.md").write_text(scene("Work", "A wombat."))
        assert wait_for(lambda: found(store, "wombat") == ["work.md"])
        os.unlink(bad)
        assert watcher.wait_idle()
        assert watcher.stats.errors == 0 and not caplog.records


def test_a_name_that_is_not_utf8_is_never_committed(store):
    import git

    bad = os.path.join(os.fsencode(store / "scenes"), b"bad\xffname.md")
    with open(bad, "wb") as handle:
        handle.write(b"---\nsummary: s\n---\nbody\n")
    result = runner.invoke(app, ["--dir", str(store), "ingest", "-"],
                           input='[{"content": "The Kafka migration shipped."}]')
    assert result.exit_code == 0, result.output
    tracked = git.Repo(store).git.ls_files("-z", "scenes").split("\0")
    assert tracked and not any("bad" in name for name in tracked)


def test_persona_force_twice_is_not_a_failure(store):
    runner.invoke(app, ["--dir", str(store), "ingest", "-"],
                  input='[{"content": "The Kafka migration shipped."}]')
    for _ in range(2):
        result = runner.invoke(app, ["--dir", str(store), "persona", "--force"])
        assert result.exit_code == 0, result.output
