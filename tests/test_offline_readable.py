"""Offline scenes a person wants to read (issue 13): real words in names, sentences for
summaries, rollups that cite what they condense, open threads that open and close, a persona
in the memories' language that keeps up with the store. Small inputs of our own."""

from __future__ import annotations

import json
import re

import git
import pytest
from test_conservation_offline import add, body_of, fold, new_store

from scene_engine.offline.prose import summary
from scene_engine.offline.words import scene_name
from scene_engine.services.persona import persona_reason
from scene_engine.services.trace import trace_memory
from scene_engine.store import history
from scene_engine.store.memories import Journal
from scene_engine.store.scene import parse_scene

CAT_ZH = ["我养了一只橘猫，叫年糕，三岁了。", "年糕最近不爱吃猫粮，只吃冻干。",
          "带年糕去宠物医院打疫苗，医生说年糕有点胖。", "给年糕换了低脂猫粮，每天分三次喂。"]
RUST_ZH = ["我主要用 Rust 写服务端程序。", "用 Rust 重写了订单服务的缓存层。"]
CODE_EN = ["The user always writes code reviews before lunch.",
           "The user always asks for code reviews on Rust pull requests.",
           "Code reviews of the Rust services take the user two hours a day."]


def _words(name: str) -> list[str]:
    return name.removesuffix(".md").split("-")


def test_chinese_scene_names_are_words_not_character_pairs():
    name = scene_name(CAT_ZH, set())
    words = _words(name)
    assert 1 <= len(words) <= 3
    assert "年糕" in words                                   # the cat's name, whole
    # No piece cut across words ("一只", "养了", "叫年" were the old names' pieces).
    assert not {"一只", "养了", "叫年", "三岁"} & set(words)
    assert all(w in "".join(CAT_ZH) for w in words)


def test_english_scene_names_leave_filler_out_and_a_taken_name_gets_a_number():
    name = scene_name(CODE_EN, set())
    words = _words(name)
    assert 1 <= len(words) <= 3
    assert not {"user", "always", "the"} & set(words)
    assert "code" in words or "reviews" in words
    assert scene_name(CODE_EN, {name}) == f"{name.removesuffix('.md')}-2.md"


def test_a_name_is_in_the_language_most_memories_are_in():
    mixed = [*CAT_ZH, "Niangao the cat sleeps on the bookshelf."]
    assert re.search(r"[\u4e00-\u9fff]", scene_name(mixed, set()))
    english = [*CODE_EN, RUST_ZH[0]]
    assert not re.search(r"[\u4e00-\u9fff]", scene_name(english, set()))


def test_summaries_are_sentences_with_the_span_and_the_latest_change():
    en = summary([("2026-01-05", CODE_EN[0]), ("2026-03-02", CODE_EN[2])], [])
    assert en.endswith(".") and "from January to March 2026" in en
    assert "Latest (2 Mar): Code reviews of the Rust services" in en
    assert not re.match(r"^About [\w-]+, [\w-]+, ", en)              # not a keyword list
    zh = summary([("2026-01-25", CAT_ZH[0]), ("2026-04-02", CAT_ZH[3])], [])
    assert "年糕" in zh and "2026年1月至4月" in zh and zh.count("，") < 6
    assert "最近（4月2日）：给年糕换了低脂猫粮" in zh
    assert "关于" not in zh and "的记录（" not in zh                    # the old keyword form
    opened = summary([("2026-01-25", CAT_ZH[0])], ["在考虑要不要再领养一只猫给年糕作伴。"])
    assert "未决：在考虑要不要再领养一只猫" in opened


def test_a_thread_opens_and_a_later_memory_closes_it_with_its_outcome(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("c1", "I drink a pour-over coffee every morning; Ethiopian beans are my favourite.",
                "2026-03-01T08:00:00Z"),
        ("c2", "Thinking about buying an espresso machine for milk coffee at home.",
         "2026-03-05T08:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    body = body_of(store, name)
    threads = body.split("## Open threads", 1)[1].split("## Timeline", 1)[0]
    assert "- 2026-03-05: Thinking about buying an espresso machine" in threads
    assert "→ a decision" in threads
    add(store, ("c3", "Decided against the espresso machine; the pour-over coffee is enough.",
                "2026-04-10T08:00:00Z"))
    fold(store)
    body = body_of(store, name)
    assert "## Open threads" not in body                            # nothing open any more
    closed = next(line for line in body.splitlines() if line.startswith("- 2026-03-05:"))
    assert "→ 2026-04-10: Decided against the espresso machine" in closed
    assert "- 2026-04-10: Decided against the espresso machine" in body
    assert trace_memory(store, "c2").scenes == [name]


def test_a_chinese_thread_closes_when_it_is_done(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, ("k1", CAT_ZH[0], "2026-02-01T08:00:00Z"),
        ("k2", "在考虑要不要再领养一只猫给年糕作伴。", "2026-02-10T08:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    assert "在考虑要不要再领养一只猫给年糕作伴。 → 做出决定" in body_of(store, name)
    add(store, ("k3", "从救助站领养了一只小黑猫，叫芝麻，和年糕先隔离一周。", "2026-03-01T08:00:00Z"))
    fold(store)
    body = body_of(store, name)
    assert "## Open threads" not in body
    assert "→ 2026-03-01: 从救助站领养了一只小黑猫" in body


@pytest.mark.slow
def test_a_full_scene_rolls_up_by_theme_and_trace_still_finds_every_memory(tmp_path):
    store = new_store(tmp_path / "s", max_scene_chars=700, max_scenes=3)
    rows = [(f"r{i:02d}", f"Ran {5 + i % 7} km along the river in the park, run number {i}.",
             f"2025-{1 + i // 6:02d}-{1 + (i * 5) % 27:02d}T07:00:00Z") for i in range(40)]
    add(store, ("w1", "Started a new job at Northwind in Lisbon.", "2025-01-02T09:00:00Z"))
    for start in range(0, 40, 10):
        add(store, *rows[start:start + 10])
        fold(store)
    bodies = {n: body_of(store, n) for n in store.scene_names()}
    text = "\n".join(bodies.values())
    digests = [line for line in text.splitlines() if "(digest)" in line]
    assert digests                                                     # it did roll up
    # By theme: the runs are one fact with their date range and count, not a word list,
    # and no memory id is written into the text (they are in the ledgers).
    assert any(re.search(r"\d+ [A-Z][a-z]{2}–\d+ [A-Z][a-z]{2} ×\d+: Ran \d+ km", line)
               for line in digests)
    assert not any(re.search(r"\br\d\d\b|\d+ more|\[", line) for line in digests)
    newest = max(rows, key=lambda r: r[2])
    assert newest[1].rstrip(".") in text                               # newest never first
    for memory in Journal(store.memories_dir).all():
        lines = trace_memory(store, memory.id).lines
        assert lines, f"trace finds no line of {memory.id}"
        whole = memory.content in text           # "number 3." is not "number 31."
        assert any(row["how"] == ("whole" if whole else "condensed") for row in lines)


def test_the_persona_is_in_the_memories_language_and_is_refreshed_as_the_store_grows(tmp_path):
    store = new_store(tmp_path / "s")
    english = [(f"e{i}", text, f"2026-01-{i + 2:02d}T09:00:00Z") for i, text in enumerate(
        ["Started a new job at Northwind in Lisbon.", "My team lead at Northwind is Marta.",
         "Shipped the parcel-tracking API at Northwind.", "Ran 10 km along the Tejo river.",
         "Ran a half marathon in Lisbon in 1 hour 58 minutes."])]
    add(store, *english, ("z1", "周末和朋友去喝咖啡。", "2026-01-20T09:00:00Z"))
    fold(store)
    persona = store.persona_path.read_text("utf-8")
    assert persona.startswith("# Persona") and "人物画像" not in persona
    first = persona
    more = [(f"g{i}", f"Practised the guitar for {20 + i} minutes with a metronome.",
             f"2026-02-{i + 1:02d}T09:00:00Z") for i in range(20)]
    add(store, *more)
    fold(store)
    persona = store.persona_path.read_text("utf-8")
    assert persona != first                              # not left a first-batch snapshot
    assert "guitar" in persona.lower()
    assert persona_reason(store, False) is None          # and not due again at once


def test_a_mostly_chinese_store_gets_a_chinese_persona(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *[(f"k{i}", t, f"2026-02-{i + 1:02d}T08:00:00Z") for i, t in enumerate(CAT_ZH)],
        ("e1", "Niangao the cat sleeps on the bookshelf.", "2026-02-20T08:00:00Z"))
    fold(store)
    persona = store.persona_path.read_text("utf-8")
    assert persona.startswith("# 人物画像")
    cat = next(n for n in store.scene_names() if "年糕" in body_of(store, n))
    scene = parse_scene((store.scenes_dir / cat).read_text("utf-8"))
    assert re.search(r"[\u4e00-\u9fff]", scene.meta["summary"])


KNEES = [("k1", "My knees hurt on the stairs after a 5 km run.", "2026-03-01T08:00:00Z"),
         ("k2", "Knees still hurt on the stairs the next day; ice helped.", "2026-03-02T08:00:00Z")]
# Knees, then a physio and the hips: one topic whose words move, so the scene keeps what it
# has and is renamed once its name says the topic much worse than a new one would.
DRIFT = [("r1", "Saw a physio: my knee pain comes from weak hips.", "2026-03-08T08:00:00Z"),
         ("r2", "Physio exercises every morning for the hips: squats and bridges.",
          "2026-03-15T08:00:00Z"),
         ("r3", "Second physio session; the exercises for my hips are getting easier.",
          "2026-03-22T08:00:00Z"),
         ("r4", "Physio said to add side planks to the hip exercises.", "2026-03-29T08:00:00Z"),
         ("r5", "Third physio session: hips much stronger, bridges with one leg now.",
          "2026-04-05T08:00:00Z"),
         ("r6", "Last physio session; she gave me a hip routine to keep doing at home.",
          "2026-04-12T08:00:00Z"),
         ("r7", "Did the physio's hip routine twice this week: clamshells and bridges.",
          "2026-04-19T08:00:00Z"),
         ("r8", "The hip exercises from the physio take twenty minutes now.",
          "2026-04-26T08:00:00Z")]


# A scene that starts from an ankle the later memories never mention: knees, then running
# take it over, so its name drifts and the engine renames it.
ANKLE_TO_MARATHON = ["My left ankle hurts after climbing stairs.",
                     "The knee pain got worse; saw a physio about my knee.",
                     "Physio said my knee pain comes from weak hips; doing knee exercises daily.",
                     "Knee feels better; the physio cleared me to start jogging slowly.",
                     "Went jogging for 20 minutes, no knee pain.",
                     "Joined a running club that meets on Saturday mornings.",
                     "Ran 10 km with the running club for the first time.",
                     "Signed up for the Berlin marathon in September."]


def _knee_store(tmp_path):
    """A new store with ``KNEES`` folded into its one scene: (store, that scene's name)."""
    store = new_store(tmp_path / "s")
    add(store, *KNEES)
    fold(store)
    (first,) = store.scene_names()
    return store, first


def _person(repo) -> None:
    """The person's git identity in this repository (tests run with none)."""
    with repo.config_writer() as config:
        config.set_value("user", "name", "Ana")
        config.set_value("user", "email", "ana@example.org")


def _rename_as_person(store, old: str, new: str):
    """The person renames scene ``old`` to ``new`` with git mv and commits it; their repo."""
    repo = git.Repo(store.root)
    _person(repo)
    repo.git.mv(f"scenes/{old}", f"scenes/{new}")
    repo.git.commit("-m", f"rename {old} to {new}")
    return repo


def test_one_memory_at_a_time_joins_its_topic_instead_of_opening_a_scene_each(tmp_path):
    # An agent that runs a batch after every memory: each memory of the topic joins its
    # scene by meaning (knees, a physio, the hips), instead of a new scene per memory.
    store = new_store(tmp_path / "s")
    for row in [*KNEES, *DRIFT]:
        add(store, row)
        fold(store)
    assert len(store.scene_names()) == 1


def test_a_scene_whose_topic_drifted_is_renamed_in_its_batch_and_history_follows(tmp_path):
    store, first = _knee_store(tmp_path)
    assert "knees" in first or "stairs" in first
    created = parse_scene((store.scenes_dir / first).read_text("utf-8"), first).meta["created"]
    for row in DRIFT:
        add(store, row)
        fold(store)
    (name,) = store.scene_names()
    assert name != first and {"physio", "hips"} & set(name.removesuffix(".md").split("-"))
    scene = parse_scene((store.scenes_dir / name).read_text("utf-8"), name)
    assert scene.meta["merged_from"] == [first]
    assert scene.meta["created"] == created                  # as old as the scene it continues
    assert "My knees hurt on the stairs" in scene.body        # nothing left behind
    repo = git.Repo(store.root)
    message = next(c.message for c in repo.iter_commits() if "renamed" in c.message)
    assert re.match(r"batch \d+: .*, 1 renamed", message)
    assert f"Renamed {first} to {name}" in message            # the log says which
    # git sees a rename, so `git log --follow` reaches the first batch.
    follows = repo.git.log("--follow", "--format=%s", "--", f"scenes/{name}").splitlines()
    assert any(s.startswith("batch 1:") for s in follows)
    # trace follows the first memory into the renamed scene, and blame credits its line to
    # the batch that wrote it, not to the renaming one.
    traced = trace_memory(store, "k1")
    assert name in traced.scenes
    assert [(e["kind"], e["from"], e["into"]) for e in traced.events if "into" in e] == \
        [("rename", first, name)]
    rows = history.blame_lines(repo, f"scenes/{name}")
    knee = next(r for r in rows if "My knees hurt on the stairs" in r["text"])
    assert knee["batch"] == 1
    # Asking for the old name says where it went.
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    shown = CheckedRunner().invoke(app, ["--dir", str(store.root), "show", first])
    assert shown.exit_code == 2 and f"renamed or merged into {name}" in shown.output


def test_a_scene_a_person_wrote_in_keeps_its_name_however_its_topic_moves(tmp_path):
    store, first = _knee_store(tmp_path)
    text = (store.scenes_dir / first).read_text("utf-8")
    (store.scenes_dir / first).write_text(text + "\nMy physio is Dr. Lin.\n", encoding="utf-8")
    history.commit_files(git.Repo(store.root), "hand edit", [f"scenes/{first}"])
    for row in DRIFT:
        add(store, row)
        fold(store)
    assert first in store.scene_names()
    assert "renamed" not in git.Repo(store.root).git.log("--format=%s")


def test_a_rename_is_not_a_new_scene_but_must_delete_the_old_one(tmp_path):
    from scene_engine.batch.rules import new_names, successor_of

    old = "stairs-hurt-knees.md"
    renamed = "---\nsummary: Running.\nmerged_from: [stairs-hurt-knees.md]\n---\nRuns.\n"
    assert successor_of("run-club.md", renamed, {old}) == [old]
    assert new_names({"run-club.md": renamed}, {old}) == set()
    assert new_names({"run-club.md": renamed.replace("merged_from: [stairs-hurt-knees.md]\n",
                                                     "")}, {old}) == {"run-club.md"}


def test_a_memory_about_another_area_does_not_join_a_scene_that_once_mentioned_it(tmp_path):
    # The cat's scene mentions the pet hospital, a vaccine and a doctor once; the person's
    # own flu shot says those words too, but it is health, not the cat: it stays out.
    store = new_store(tmp_path / "s")
    add(store, *[(f"c{i}", text, f"2026-01-0{i + 1}T08:00:00Z") for i, text in enumerate(CAT_ZH)])
    fold(store)
    (cat,) = store.scene_names()
    add(store, ("h1", "自己去医院打了流感疫苗，医生说这周别剧烈运动。", "2026-02-01T08:00:00Z"))
    fold(store)
    assert "流感" not in body_of(store, cat)


def test_words_newer_than_jiebas_dictionary_are_cut_whole_in_names_and_search():
    from scene_engine.index.analysis import segment

    # jieba's 2013 dictionary cut "比手冲" as 比手/冲 and "微信" as 微/信 (the demo's
    # `咖啡-比手-爱乐.md`); scene_engine/words_zh.txt adds such words to it.
    assert {"爱乐压", "手冲"} <= set(segment("李伟教我用爱乐压做咖啡比手冲更省时间"))
    assert {"微信", "小程序"} <= set(segment("用微信小程序扫码打卡"))
    coffee = ["我每天早上都要喝一杯手冲咖啡，最喜欢埃塞俄比亚的豆子。",
              "李伟教我用爱乐压做咖啡，比手冲更省时间。",
              "下午喝咖啡会失眠，所以改成下午只喝绿茶。"]
    words = _words(scene_name(coffee, set()))
    assert "咖啡" in words and not {"比手", "爱乐"} & set(words)


def test_weekdays_and_filler_do_not_name_a_scene():
    name = scene_name(["Japanese class on Tuesday evenings: we started keigo.",
                       "Japanese class on Tuesday: keigo again, everyone struggled.",
                       "Running instead of Japanese class this Tuesday."], set())
    assert "japanese" in _words(name)
    assert not {"tuesday", "evenings", "everyone", "instead"} & set(_words(name))


@pytest.mark.slow
def test_a_rename_in_a_store_of_several_scenes_reads_only_the_scene_it_renames(tmp_path):
    # The rule "read two scenes before creating one" guards against needless new scenes; a
    # rename adds none, and a batch that read only the renamed scene used to fail for ever.
    store = new_store(tmp_path / "s")
    add(store, ("g1", "Bought a second-hand acoustic guitar and practised chords.",
                "2025-12-20T09:00:00Z"))
    fold(store)
    (guitar,) = store.scene_names()
    for i, text in enumerate(ANKLE_TO_MARATHON):
        add(store, (f"k{i}", text, f"2026-01-{i * 4 + 3:02d}T09:00:00Z"))
        fold(store)                     # raised BatchError at the renaming batch
    assert guitar in store.scene_names()
    assert "renamed" in git.Repo(store.root).git.log("--format=%s")
    assert fold(store) == []            # nothing left pending


def test_a_person_renaming_a_scene_writes_none_of_its_lines_and_trace_follows(tmp_path):
    from scene_engine.batch.conservation import authorship

    store, first = _knee_store(tmp_path)
    repo = _rename_as_person(store, first, "my-knees.md")
    text = (store.scenes_dir / "my-knees.md").read_text("utf-8")
    assert authorship(text, history.person_texts(repo)).lines == ()   # a rename wrote no line
    assert trace_memory(store, "k1").scenes == ["my-knees.md"]
    add(store, ("k3", "Knees still sore on the stairs after the weekend.", "2026-03-04T08:00:00Z"))
    fold(store)
    summary = str(parse_scene((store.scenes_dir / "my-knees.md").read_text("utf-8"),
                              "my-knees.md").meta["summary"])
    assert "3 entries" in summary          # the engine still writes its summary


def test_a_plain_git_revert_of_a_batch_is_an_undo_and_its_number_is_not_reused(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *KNEES)
    fold(store)
    add(store, DRIFT[0])
    fold(store)
    repo = git.Repo(store.root)
    _person(repo)
    head = next(c for c in repo.iter_commits() if c.message.startswith("batch 2:"))
    repo.git.revert("--no-edit", head.hexsha)
    kinds = [e["kind"] for e in trace_memory(store, "r1").events]
    assert kinds == ["batch", "undo"]
    fold(store)
    subjects = repo.git.log("--format=%s").splitlines()
    assert subjects[0].startswith("batch 3:") and sum(s.startswith("batch 2:") for s in subjects) == 1


def test_blame_credits_a_renamed_small_scene_s_lines_to_the_batches_that_wrote_them(tmp_path):
    # A short scene renamed with new entries and a new summary is too different for git's
    # rename detection (50 %): blame must find its lines in the scene deleted in the same
    # commit (-C), or the renaming batch takes credit for every line.
    repo = git.Repo.init(tmp_path / "r")
    _person(repo)
    old = ["- 2026-01-03: My left knee hurts after climbing stairs.",
           "- 2026-01-10: The knee pain got worse; saw a physio about my knee."]
    new = [f"- 2026-02-{d:02d}: Ran {d} km with the running club along the river today."
           for d in range(1, 9)]
    (tmp_path / "r" / "scenes").mkdir()
    (tmp_path / "r" / "scenes" / "stairs.md").write_text("\n".join(old) + "\n")
    repo.git.add("-A")
    repo.git.commit("-m", "batch 1: 0 updated, 1 created\n\nBatch: 1\nMemories: k0, k1")
    repo.git.mv("scenes/stairs.md", "scenes/running.md")
    (tmp_path / "r" / "scenes" / "running.md").write_text("\n".join(old + new) + "\n")
    repo.git.add("-A")
    repo.git.commit("-m", "batch 2: 1 renamed\n\nBatch: 2\nMemories: r1")
    rows = history.blame_lines(repo, "scenes/running.md")
    assert [r["batch"] for r in rows[:2]] == [1, 1] and rows[2]["batch"] == 2


@pytest.mark.slow
def test_the_persona_follows_a_rename_and_its_undo(tmp_path):
    from clirunner import CheckedRunner

    from scene_engine.cli import app
    from scene_engine.services.doctor import check_store

    store, first = _knee_store(tmp_path)
    for row in DRIFT:
        add(store, row)
        fold(store)
    (name,) = store.scene_names()
    persona = store.persona_path.read_text("utf-8")
    assert f"**{name.removesuffix('.md')}**" in persona
    assert first.removesuffix(".md") not in persona
    # Undo the renaming batch: the old name is back, and so is it in the persona.
    repo = git.Repo(store.root)
    renaming = next(c for c in repo.iter_commits() if "renamed" in c.message.split("\n")[0])
    number = history.trailers(renaming.message)["Batch"]
    while True:        # undo the newest batches down to the renaming one
        result = CheckedRunner().invoke(app, ["--dir", str(store.root), "undo"])
        assert result.exit_code == 0, result.output
        if f"undo batch {number}:" in result.output:
            break
    assert store.scene_names() == [first]
    assert f"**{first.removesuffix('.md')}**" in store.persona_path.read_text("utf-8")
    assert check_store(store) == []


def test_a_pending_memory_a_person_already_wrote_down_is_recorded_not_a_stuck_batch(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *KNEES)
    fold(store)
    (name,) = store.scene_names()
    add(store, ("k9", "Knee pain on the office stairs again after the physio session.",
                "2026-03-05T09:00:00Z"))
    path = store.scenes_dir / name
    path.write_text(path.read_text("utf-8")
                    + "- 2026-03-05: Knee pain on the office stairs again after the physio "
                      "session.\n", encoding="utf-8")
    fold(store)                                   # failed on every run before
    ledger = json.loads(next((store.root / ".scene-engine" / "ledger").glob("000002.json"))
                        .read_text("utf-8"))
    assert [e["outcome"] for e in ledger["memories"]] == ["recorded"]


def test_a_new_scene_name_never_takes_an_nfd_name_a_person_gave_in_nfc(tmp_path):
    import unicodedata

    store = new_store(tmp_path / "s")
    nfd = unicodedata.normalize("NFD", "zürich-zoë-café.md")
    (store.scenes_dir / nfd).write_text("---\nsummary: My tax notes.\n---\nTax return filed "
                                        "in March; the adviser charged 300 francs.\n",
                                        encoding="utf-8")
    history.commit_files(git.Repo(store.root), "hand edit", [f"scenes/{nfd}"])
    assert scene_name(["Met Zoë at the café in Zürich."], set()) == \
        unicodedata.normalize("NFC", nfd)        # the name the engine picks is the same name
    add(store, ("z1", "Met Zoë at the café in Zürich.", "2026-03-05T09:00:00Z"))
    fold(store)                                   # refused for ever before: the same file
    assert "My tax notes." in (store.scenes_dir / nfd).read_text("utf-8")


def test_a_rename_keeps_the_whole_chain_of_names_and_no_new_scene_takes_one_of_them():
    from datetime import UTC, datetime

    from scene_engine.batch.rules import RuleContext, validate_batch
    from scene_engine.batch.transaction import _header
    from scene_engine.store.scene import Scene

    # B (once A) renamed to C: C's merged_from names both, so A is never handed out again.
    b = Scene(name="b.md", meta={"summary": "B.", "merged_from": ["a.md"]}, body="x\n")
    c = Scene(name="c.md", meta={"summary": "C."}, body="x\n")
    meta, _ = _header(c, None, [b], datetime.now(UTC), 2)
    assert meta["merged_from"] == ["a.md", "b.md"]
    # A new scene named after one a live scene took in reads as if it had been merged there.
    kept = "---\nsummary: Knees and running.\nmerged_from: [a.md]\nheat: 3\n---\nRuns.\n"
    context = RuleContext(existing={"c.md"}, max_scenes=15, max_scene_chars=1500,
                          old_texts={"c.md": kept}, read={"c.md"})
    problems = validate_batch({"a.md": "---\nsummary: New.\n---\nSomething new.\n"}, context)
    assert any("lists in merged_from" in p for p in problems)


@pytest.mark.slow
def test_doctor_names_a_renamed_scene_that_an_old_editor_buffer_brought_back(tmp_path):
    from scene_engine.services.doctor import check_store

    store, first = _knee_store(tmp_path)
    old_buffer = (store.scenes_dir / first).read_text("utf-8")
    for row in DRIFT:
        add(store, row)
        fold(store)
    (name,) = store.scene_names()
    (store.scenes_dir / first).write_text(old_buffer + "- 2026-04-01: one more line.\n",
                                          encoding="utf-8")
    problems = check_store(store)
    assert any(f"{first} exists again, but {name} took it in" in p for p in problems), problems


def test_trace_finds_a_memory_in_a_scene_a_person_moved_and_rewrote_in_one_step(tmp_path):
    store, first = _knee_store(tmp_path)
    text = (store.scenes_dir / first).read_text("utf-8")
    (store.scenes_dir / first).unlink()
    more = "".join(f"- 2026-04-{d:02d}: Physio exercise set number {d} done at home.\n"
                   for d in range(1, 15))
    (store.scenes_dir / "my-body.md").write_text(text + more, encoding="utf-8")
    history.commit_hand_edits(git.Repo(store.root))      # git sees a delete and an add
    trace = trace_memory(store, "k1")
    assert trace.scenes == ["my-body.md"] and trace.lines


def test_a_race_thread_closes_at_the_race_not_at_a_training_run_and_weekdays_name_no_scene():
    from scene_engine.offline.threads import closes, opens

    thread = opens("报名了九月份的北京马拉松。")
    assert thread is not None and closes(thread, "北京马拉松完赛了，用时四小时十分。")
    # A training run finishes too: it settles no race (a thread stays open until then).
    assert not closes(thread, "马拉松训练：跑团晨跑十公里，跑完后大家一起去吃了早餐。")
    race = opens("Preparing for the York marathon in October.")
    assert race is not None
    assert not closes(race, "Finished a 12 km marathon training run, then had breakfast.")
    name = scene_name(["每周六早上和球友打羽毛球。", "周六的羽毛球课练了反手。",
                       "羽毛球比赛周六开始，报名参加了双打。"], set())
    assert "羽毛球" in _words(name) and not {"周六", "每周六", "参加"} & set(_words(name))


@pytest.mark.slow
def test_a_very_long_memory_at_the_cap_goes_where_there_is_room_not_into_a_full_scene(tmp_path):
    # At the cap (two scene files) a long memory that shares a word or two with the full
    # running scene would roll it up into digests; it goes to the scene with room instead.
    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=1200)
    add(store, *[(f"x{i}", f"Running club long run number {i}: {10 + i} km "
                  "along the bay with the half marathon group.",
                  f"2026-04-{i + 1:02d}T08:00:00Z") for i in range(13)])
    fold(store)
    add(store, ("g1", "Bought a second-hand acoustic guitar and practised chords.",
                "2026-04-20T09:00:00Z"),
        ("g2", "Guitar lesson: chords G, C and D, and a strumming pattern.",
         "2026-04-21T09:00:00Z"))
    fold(store)
    assert len(store.scene_names()) == 2
    running = next(n for n in store.scene_names() if "g1" not in (store.scenes_dir / n).read_text("utf-8")
                   and "guitar" not in n)
    before = body_of(store, running)
    long = " ".join(f"Day {i}: walked the dog Bruno by the bay and met our neighbour Carla."
                    for i in range(1, 40))[:500]
    add(store, ("l1", long, "2026-05-01T09:00:00Z"))
    fold(store)
    assert body_of(store, running) == before


def test_trace_of_an_emoji_only_memory_shows_its_line_not_a_heading(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *KNEES, ("e1", "🏃‍♂️🏃‍♂️🎉", "2026-03-03T09:00:00Z"))
    fold(store)
    lines = trace_memory(store, "e1").lines
    assert lines and all("🏃" in row["text"] for row in lines)


def test_a_closed_thread_line_recalls_as_its_plan_on_its_day_without_the_clipped_outcome():
    from scene_engine.recall.assemble import split_passages

    body = ("## Timeline (UTC)\n"
            "- 2026-08-01: Thinking about leaving Northwind. → 2026-11-15: Told Marta I am…\n"
            "- 2026-11-15: Told Marta I am staying at Northwind after all.\n")
    passages = [(p.text, str(p.day)) for p in split_passages("work.md", body)]
    assert passages == [("Thinking about leaving Northwind.", "2026-08-01"),
                        ("Told Marta I am staying at Northwind after all.", "2026-11-15")]


@pytest.mark.slow
def test_a_name_a_person_gave_by_renaming_a_scene_is_never_renamed_back(tmp_path):
    store, first = _knee_store(tmp_path)
    repo = _rename_as_person(store, first, "diary.md")        # none of the topic's words
    for row in DRIFT:
        add(store, row)
        fold(store)
    assert store.scene_names() == ["diary.md"]
    assert "renamed" not in repo.git.log("--format=%s")


@pytest.mark.slow
def test_long_memories_at_the_cap_stay_out_of_a_scene_they_are_not_about(tmp_path):
    # The roomiest scene is where a long memory goes only among the scenes it is about: an
    # unrelated garden scene filled with race reports would look like running and be merged.
    store = new_store(tmp_path / "s", max_scenes=3)
    add(store, *KNEES, *DRIFT)
    fold(store)
    add(store, ("g1", "Planted tomatoes and basil on the balcony garden.", "2026-04-01T09:00:00Z"),
        ("g2", "The balcony garden tomatoes need watering twice a day.", "2026-04-02T09:00:00Z"))
    fold(store)
    assert len(store.scene_names()) == 2
    garden = next(n for n in store.scene_names() if "tomatoes" in body_of(store, n))
    before = body_of(store, garden)
    for i in range(3):
        report = (f"Race report {i}: ran the half marathon with the running club; " * 12)[:600]
        add(store, (f"big{i}", report, f"2026-05-1{i}T09:00:00Z"))
        fold(store)
    assert body_of(store, garden) == before


@pytest.mark.slow
def test_the_demo_ends_with_a_persona_made_from_its_scenes_as_they_are(tmp_path):
    from scene_engine.services.demo import build_demo

    store, _, _ = build_demo(tmp_path / "demo")
    persona = store.persona_path.read_text("utf-8")
    assert store.load_state().since_persona == 0
    assert "Thinking about leaving Northwind" not in persona     # settled in November
    # Made after the last change of a scene: by the last batch, in its commit, or after it.
    repo = git.Repo(store.root)
    scenes_at = repo.git.log("-1", "--format=%H", "--", "scenes")
    persona_at = repo.git.log("-1", "--format=%H", "--", "persona.md")
    assert repo.is_ancestor(scenes_at, persona_at)


@pytest.mark.parametrize("texts", [
    ["मैं दिल्ली में नई नौकरी शुरू कर रहा हूँ", "दिल्ली में नौकरी का पहला दिन अच्छा रहा"],
    ["நான் சென்னையில் புதிய வேலை தொடங்கினேன்", "சென்னையில் வேலை நன்றாக இருக்கிறது"],
    ["ذَهَبْتُ إِلَى المَدْرَسَةِ الجَدِيدَةِ", "المَدْرَسَةِ الجَدِيدَةِ كَبِيرَة"],
    ["ย้ายไปเชียงใหม่เพื่อทำงานใหม่"],
    ["Cafe\u0301 au lait with Rene\u0301e", "Rene\u0301e likes cafe\u0301 crème"],
])
def test_scene_names_in_scripts_with_combining_marks_are_whole_words(texts):
    import unicodedata

    words = _words(scene_name(texts, set()))
    said = {unicodedata.normalize("NFC", w).lower()
            for t in texts for w in re.findall(r"[^\s,.]+", t)}
    assert words and all(w in said for w in words), words


@pytest.mark.parametrize("names", [["家人.md", "家 人 🐱.md"], ["my knees 🦵.md", "Knie.md"],
                                   ["膝盖 and tab\tname.md", "e\u0301tude.md"]])
def test_trace_follows_renames_and_a_deletion_by_hand_whatever_the_names_are(tmp_path, names):
    store, first = _knee_store(tmp_path)
    repo = _rename_as_person(store, first, names[0])
    assert trace_memory(store, "k1").scenes == [names[0]]
    _rename_as_person(store, names[0], names[1])
    found = trace_memory(store, "k1")
    hand = [(e["kind"], e["from"], e["into"]) for e in found.events if "hand" in e["kind"]]
    assert hand == [("renamed by hand", first, names[0]), ("renamed by hand", *names)]
    assert found.scenes == [names[1]] and found.lines
    assert all(line["scene"] == names[1] for line in found.lines)
    repo.git.rm("-q", f"scenes/{names[1]}")
    repo.git.commit("-m", "drop it")
    gone = trace_memory(store, "k1")
    assert gone.events[-1]["kind"] == "deleted by hand" and gone.events[-1]["from"] == names[1]
    assert gone.scenes == []


def _trace_text(store, memory_id: str) -> str:
    from scene_engine.services.trace import render

    return render(trace_memory(store, memory_id))


@pytest.mark.parametrize("new", ["my-knees.md", "膝盖 🦵.md"])
def test_trace_finds_a_memory_in_a_scene_renamed_by_hand_and_not_committed(tmp_path, new):
    store, first = _knee_store(tmp_path)
    repo = git.Repo(store.root)
    before = repo.git.status("--porcelain", "-z", "--untracked-files=all")
    (store.scenes_dir / first).rename(store.scenes_dir / new)
    found = trace_memory(store, "k1")
    assert found.scenes == [new] and found.uncommitted == [new]
    assert [line["scene"] for line in found.lines] == [new] and found.lines[0]["batch"] == 1
    assert f"now in: {new} (uncommitted)" in _trace_text(store, "k1")
    assert ("renamed by hand", first, new) in [
        (e["kind"], e["from"], e.get("into")) for e in found.events if e.get("uncommitted")]
    # Only looked: the person's index and the git folder are as they were.
    (store.scenes_dir / new).rename(store.scenes_dir / first)
    assert repo.git.status("--porcelain", "-z", "--untracked-files=all") == before
    assert not list((store.root / ".git").glob(f"{history.TEMP_INDEX}*"))


@pytest.mark.parametrize("rename", [False, True])
def test_trace_says_a_line_a_person_took_out_is_gone_committed_or_not(tmp_path, rename):
    store, first = _knee_store(tmp_path)
    path = store.scenes_dir / first
    text = path.read_text("utf-8")
    assert "My knees hurt on the stairs after a 5 km run." in text
    kept = "".join(line for line in text.splitlines(keepends=True)
                   if "5 km run" not in line)
    path.write_text(kept, "utf-8")
    if rename:
        path = path.rename(store.scenes_dir / "knees by hand.md")
    found = trace_memory(store, "k1")
    assert found.scenes == [] and found.lines == []
    shown = _trace_text(store, "k1")
    assert f"now in: no scene (its line was removed by hand from {path.name}, not committed yet)" \
        in shown
    assert trace_memory(store, "k2").scenes == [path.name]      # the other one is still there
    repo = git.Repo(store.root)
    _person(repo)
    repo.git.add("-A", "scenes")
    repo.git.commit("-qm", "my own words")
    sha = repo.head.commit.hexsha
    found = trace_memory(store, "k1")
    assert found.scenes == [] and found.events[-1]["kind"] == "line removed by hand"
    assert found.events[-1]["commit"] == sha
    assert f"removed by hand from {path.name}, in {sha[:8]})" in _trace_text(store, "k1")
