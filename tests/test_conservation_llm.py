"""Conservation with a model backend (issue 9, faults 1-3, 8, 9 and "where did my memory go"):
scripted models that overwrite what they never saw, claim work they did not do, delete a scene
on its own, drop a person's lines or header keys, or touch a pinned scene.

litellm talks HTTP to tests/fakellm.py. Every test ends with the batch repaired and committed
(what the person had is intact) or failed with nothing written and the memory pending.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from fakellm import call, reply
from test_batch_llm import (
    FAMILY,
    HOBBIES,
    NIGHT_SHIFT,
    WORK,
    assert_committed_batch,
    assert_nothing_written,
    backend,
    last_commit,
    make_store,
    model_scene,
    snapshot,
    texts,
    tool_result,
    user_messages,
    work_update,
)

from scene_engine.batch.accounting import Ledger
from scene_engine.batch.contract import BatchError
from scene_engine.batch.transaction import run_batch
from scene_engine.services.trace import trace_memory
from scene_engine.store import history
from scene_engine.store.scene import read_scene

GARDEN = ("Tomatoes and basil on the balcony.", "Tomatoes on the balcony grow slowly.\n")
MINE_HOBBY = "Note to self: book the climbing gym for the Saturday sessions."


@pytest.fixture
def store(tmp_path):
    """work, family, hobbies (all about Alice: shown in the prompt) and garden (unrelated to
    the night-shift memory, so neither shown nor read unless the model reads it)."""
    return make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1), "garden.md": (*GARDEN, 1)},
                      [NIGHT_SHIFT])


def ledger_of(store) -> Ledger:
    head = last_commit(store)
    path = history.trailers(head.message)["Ledger"]
    return Ledger.parse((head.tree / path).data_stream.read().decode())


def hand_edit(store, name: str, text: str) -> None:
    """Write a scene as a person would and commit it as a hand edit."""
    (store.scenes_dir / name).write_text(text, encoding="utf-8")
    repo = history.open_repo(store.root)
    history.commit_files(repo, f"hand edit: {name}", [f"scenes/{name}"])


# ------------------------------------------------------------------ 1. never change what you did not see

UNSEEN = {
    "write": call("write_to_file", {"path": "garden.md", "content": model_scene(
        "Alice's night shifts.", "Alice works nights now.\n")}),
    "replace": call("replace_in_file", {"path": "garden.md", "old": "slowly",
                                        "new": "slowly; Alice works nights"}),
    "delete": call("write_to_file", {"path": "garden.md", "content": "[DELETED]"}),
}


@pytest.mark.parametrize("op", list(UNSEEN))
def test_a_scene_never_read_cannot_be_changed(fake_llm, store, op):
    before = texts(store)["garden.md"]
    assert "garden.md" not in user_messages_of_prompt(store)
    fake_llm.script([reply(tool_calls=[UNSEEN[op]]), reply(tool_calls=[work_update()]),
                     reply(content="Night shifts added to work.md.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, UNSEEN[op])
    assert "you have not read garden.md" in told and 'read_file(path="garden.md")' in told
    assert texts(store)["garden.md"] == before
    assert_committed_batch(store)


def user_messages_of_prompt(store) -> str:
    """The batch prompt as the model will see it (built the same way)."""
    from scene_engine.batch.transaction import build_job, select_batch

    memories = select_batch(store, store.load_state(), 20)
    return build_job(store, 1, memories).messages[1]["content"].split("## Full text")[1]


def test_reading_first_makes_the_change_allowed(fake_llm, store):
    append = call("replace_in_file", {"path": "garden.md", "old": "slowly.\n",
                                      "new": "slowly.\nAlice works nights now.\n"})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "garden.md"}), append]),
                     reply(content="Night shifts noted.\nPLACED: m0 -> garden.md")])
    run_batch(store, backend(fake_llm))
    assert "Alice works nights now." in texts(store)["garden.md"]
    assert ledger_of(store).entries[0].scenes == ["garden.md"]


# ------------------------------------------------------------------ 2. never claim work not done

def test_claiming_an_update_without_a_tool_call_fails_after_one_repair(fake_llm, store):
    fake_llm.script([reply(content="I have updated work.md."),
                     reply(content="Yes, I have updated work.md.")])
    before = snapshot(store)

    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm))

    assert "no scene changed" in str(caught.value) and "m0" in str(caught.value)
    repair = user_messages(fake_llm)[-1]
    assert "NO_CHANGE: <id> already in <scene>.md" in repair and NIGHT_SHIFT[:40] in repair
    assert len(fake_llm.requests) == 2            # one repair round, not more
    assert_nothing_written(store, before)
    assert store.load_state().pending == 1


def test_an_explicit_no_change_is_committed_and_traced(fake_llm, tmp_path):
    store = make_store(tmp_path / "mem", {"work.md": (WORK[0], WORK[1] + NIGHT_SHIFT + "\n", 3),
                                          "family.md": (*FAMILY, 2)}, [NIGHT_SHIFT])
    fake_llm.script([reply(content="Nothing new.\nNO_CHANGE: m0 already in work.md")])
    before = texts(store)

    run_batch(store, backend(fake_llm))

    assert texts(store) == before
    (entry,) = ledger_of(store).entries
    assert (entry.id, entry.outcome, entry.scenes) == ("m0", "recorded", ["work.md"])
    assert "Accounted: 1 recorded" in last_commit(store).message
    found = trace_memory(store, "m0")
    assert found.status == "processed" and found.scenes == ["work.md"]
    assert any(NIGHT_SHIFT in row["text"] for row in found.lines)
    assert_committed_batch(store)


def test_a_false_no_change_is_refused(fake_llm, store):
    fake_llm.script([reply(content="NO_CHANGE: m0 already in hobbies.md")] * 2)
    before = snapshot(store)
    with pytest.raises(BatchError, match="hobbies.md does not hold it"):
        run_batch(store, backend(fake_llm))
    assert_nothing_written(store, before)


def test_a_skip_with_a_reason_is_recorded(fake_llm, tmp_path):
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2)},
                       ["Had a cheese sandwich for lunch at the ward."])
    fake_llm.script([reply(content="SKIP: m0 a one-off remark with no lasting meaning")])
    run_batch(store, backend(fake_llm))
    (entry,) = ledger_of(store).entries
    assert entry.outcome == "skipped" and "no lasting meaning" in entry.reason
    assert store.load_state().pending == 0


@pytest.mark.parametrize("memory", [
    "Correction: I do run in the rain now; I stopped going to the gym instead.",
    "Alice no longer works nights.", "我不再喝咖啡了。", "Alice moved to Porto in March."])
def test_a_memory_that_states_a_change_is_never_skipped(fake_llm, tmp_path, memory):
    store = make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2)},
                       [memory])
    fake_llm.script([reply(content="SKIP: m0 routine")] * 3)
    before = snapshot(store)
    with pytest.raises(BatchError, match="not a reason for SKIP"):
        run_batch(store, backend(fake_llm))
    assert_nothing_written(store, before)


def test_no_change_for_a_scene_that_says_the_opposite_is_refused(fake_llm, tmp_path):
    rain = ("Alice's running.", "Alice runs on Sundays.\nAlice never runs in the rain; she "
            "goes to the gym instead.\n")
    store = make_store(tmp_path / "mem", {"running.md": (*rain, 2), "family.md": (*FAMILY, 2)},
                       ["Alice runs in the rain every week now."])
    fake_llm.script([reply(content="NO_CHANGE: m0 already in running.md")] * 3)
    before = snapshot(store)
    with pytest.raises(BatchError, match="says the opposite"):
        run_batch(store, backend(fake_llm))
    assert_nothing_written(store, before)


def test_a_rewrite_that_drops_facts_whose_words_live_on_elsewhere_is_refused(fake_llm, tmp_path):
    runs = ("Alice's running.", "- 2026-01-10: Ran 5 km by the river.\n- 2026-02-01: Ran her "
            "first 10 km in 58 minutes.\n- 2026-03-22: Never runs in the rain; goes to the gym "
            "instead.\n- 2026-04-02: Ran in the park with Mara.\n")
    store = make_store(tmp_path / "mem", {"running.md": (*runs, 3), "family.md": (*FAMILY, 2)},
                       ["Alice ran 8 km along the coast in May."])
    cut = model_scene("Alice's running.", "- 2026-01-10: Ran 5 km by the river.\n- 2026-04-02: "
                      "Ran in the park with Mara; the gym when it rains.\n- 2026-05-01: Ran 8 km "
                      "along the coast.\n")
    whole = model_scene("Alice's running.", runs[1] + "- 2026-05-01: Ran 8 km along the coast.\n")
    write = call("write_to_file", {"path": "running.md", "content": cut})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "running.md"}), write,
                                       call("write_to_file", {"path": "running.md",
                                                              "content": whole})]),
                     reply(content="Added the coast run.")])
    run_batch(store, backend(fake_llm))
    told = tool_result(fake_llm, write)
    assert "58 minutes" in told and "has room" in told, told
    assert "58 minutes" in texts(store)["running.md"]


def test_an_unmentioned_memory_is_placed_where_the_added_text_states_it(fake_llm, store):
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Done.")])
    run_batch(store, backend(fake_llm))
    (entry,) = ledger_of(store).entries
    assert (entry.outcome, entry.scenes) == ("placed", ["work.md"])


# ------------------------------------------------------------------ 3. delete only as a merge

def test_a_delete_on_its_own_is_refused_and_the_scene_survives(fake_llm, store):
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    fake_llm.script([reply(tool_calls=[delete, work_update()]), reply(content="Tidied up.")])

    run_batch(store, backend(fake_llm))

    assert "only as part of a merge" in tool_result(fake_llm, delete)
    assert "hobbies.md" in texts(store)
    assert_committed_batch(store)


@pytest.mark.parametrize("order", ["delete first", "delete after a write"])
def test_a_delete_no_merged_from_names_is_refused_whatever_was_written_before(
        fake_llm, store, order):
    # family.md takes hobbies.md's text word for word but never names it in merged_from:
    # not a merge, so the delete must be refused whether it comes before or after that write.
    taken = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's family and hobbies.", FAMILY[1] + HOBBIES[1])})
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    reads = [call("read_file", {"path": "family.md"}), call("read_file", {"path": "hobbies.md"})]
    steps = [delete, taken] if order == "delete first" else [taken, delete]
    fake_llm.script([reply(tool_calls=[*reads, *steps, work_update()]),
                     reply(content="Tidied up.")] + [reply(content="Tidied up.")] * 2)

    with contextlib.suppress(BatchError):            # refused whole: nothing written is fine
        run_batch(store, backend(fake_llm))

    assert "hobbies.md" in texts(store)
    assert "only as part of a merge" in tool_result(fake_llm, delete)
    assert "hobbies.md" in [b.name for b in last_commit(store).tree["scenes"].blobs]


# How a merge may lose a person's line of the scene it takes in: drop it, or keep its words
# only inside a longer line of its own.
LOSSES_IN_A_MERGE = {"dropped": "",
                     "embedded": f"As she noted: {MINE_HOBBY} Alice means it.\n",
                     "glued": f"{MINE_HOBBY} Alice also climbs.\n"}


@pytest.mark.parametrize("loss", list(LOSSES_IN_A_MERGE))
def test_a_persons_line_of_a_merged_away_scene_stays_a_whole_line(fake_llm, store, loss):
    # The oracle is the rule: the person's line of the scene merged away is a line of some
    # scene after the batch, committed or refused.
    hand_edit(store, "hobbies.md", texts(store)["hobbies.md"] + MINE_HOBBY + "\n")
    merged = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's family and hobbies.", FAMILY[1] + HOBBIES[1] + LOSSES_IN_A_MERGE[loss],
        merged_from=["hobbies.md"])})
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    reads = [call("read_file", {"path": "family.md"}), call("read_file", {"path": "hobbies.md"})]
    fake_llm.script([reply(tool_calls=[*reads, merged, delete, work_update()]),
                     reply(content="Merged.")] + [reply(content="Merged.")] * 3)

    with contextlib.suppress(BatchError):
        run_batch(store, backend(fake_llm))

    lines = [line for text in texts(store).values() for line in text.split("\n")]
    assert MINE_HOBBY in lines, f"{loss}: the person's line is no longer a line of any scene"
    committed = [line for blob in last_commit(store).tree["scenes"].blobs
                 for line in blob.data_stream.read().decode("utf-8").split("\n")]
    assert MINE_HOBBY in committed


def test_a_merge_that_does_not_hold_the_merged_scene_is_refused(fake_llm, store):
    thin = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's home.", FAMILY[1], merged_from=["hobbies.md"])})
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    fake_llm.script([reply(tool_calls=[thin, delete, work_update()]),
                     reply(content="Merged.")] + [reply(content="Merged.")] * 2)
    before = snapshot(store)

    with pytest.raises(BatchError, match="hobbies.md"):
        run_batch(store, backend(fake_llm))

    assert "holds only" in tool_result(fake_llm, delete)
    assert_nothing_written(store, before)


# ------------------------------------------------------------------ a person's lines and keys

MINE = "Note to self: ask about the ICU rotation in autumn."


def test_a_write_that_drops_a_persons_line_is_refused(fake_llm, store):
    hand_edit(store, "work.md", texts(store)["work.md"] + MINE + "\n")
    dropped = call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice's job, now nights.", WORK[1] + "Alice started night shifts in May 2024.\n")})
    kept = call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice's job, now nights.", WORK[1] + MINE + "\nAlice started night shifts in May.\n")})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "work.md"}), dropped, kept]),
                     reply(content="Done.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, dropped)
    assert "keep these lines a person wrote" in told and MINE[:30] in told
    assert MINE in texts(store)["work.md"].splitlines()


# How a model may lose a person's line: drop it, or keep its words inside a longer line of
# its own (the line a person wrote is then gone, though its text is still there).
LOSSES = {"dropped": "",
          "embedded": f"As she noted: {MINE} Alice means it.\n",
          "prefixed": f"- {MINE}\n",
          "glued": f"{MINE} Alice started night shifts in May.\n"}


@pytest.mark.parametrize("loss", list(LOSSES))
def test_a_persons_line_is_a_whole_line_after_the_batch_whatever_the_model_writes(
        fake_llm, store, loss):
    # The oracle is the rule itself: the person's exact line is a line of some scene after the
    # batch, committed or refused; no message's wording is read.
    hand_edit(store, "work.md", texts(store)["work.md"] + MINE + "\n")
    losing = call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice's job, now nights.", WORK[1] + LOSSES[loss]
        + "Alice started night shifts at the hospital ward in May.\n")})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "work.md"}), losing]),
                     reply(content="Done.\nPLACED: m0 -> work.md")] * 4)

    with contextlib.suppress(BatchError):            # refused: nothing written is fine too
        run_batch(store, backend(fake_llm))

    lines = [line for text in texts(store).values() for line in text.split("\n")]
    assert MINE in lines, f"{loss}: the person's line is no longer a line of any scene"
    head = last_commit(store)
    committed = [line for blob in head.tree["scenes"].blobs
                 for line in blob.data_stream.read().decode("utf-8").split("\n")]
    assert MINE in committed


def test_a_merge_keeps_the_summary_a_person_wrote_for_the_merged_scene(fake_llm, store):
    hand_edit(store, "hobbies.md", texts(store)["hobbies.md"].replace(
        HOBBIES[0], "Climbing is my way to switch off."))
    thin = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's home and climbing.", FAMILY[1] + HOBBIES[1], merged_from=["hobbies.md"])})
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    kept = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's home and climbing.", FAMILY[1] + HOBBIES[1]
        + "Climbing is my way to switch off.\n", merged_from=["hobbies.md"])})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "hobbies.md"}), thin, delete,
                                       kept, delete, work_update()]),
                     reply(content="Merged.")])

    run_batch(store, backend(fake_llm))

    assert "has a summary a person wrote" in tool_result(fake_llm, delete)
    assert "hobbies.md" not in texts(store)
    assert "Climbing is my way to switch off." in texts(store)["family.md"]


KEYS = "time: 10:00\nmode: 0755\nok: yes   # kept as typed\nver: 1.10\nwhen: 2024-05-01 10:00\n"


def test_header_keys_a_person_added_come_back_byte_for_byte(fake_llm, store):
    text = texts(store)["work.md"].replace("heat: 3\n", "heat: 3\n" + KEYS)
    hand_edit(store, "work.md", text)
    # The model drops some keys and rewrites another as PyYAML would read it.
    rewrite = call("write_to_file", {"path": "work.md", "content": "---\nsummary: Nights now.\n"
                                     "time: 600\nok: true\n---\n" + WORK[1]
                                     + "In May 2024 she started night shifts.\n"})
    fake_llm.script([reply(tool_calls=[rewrite]), reply(content="Done.")])

    run_batch(store, backend(fake_llm))

    header = texts(store)["work.md"].split("---\n")[1]
    assert KEYS in header
    assert "summary: Nights now." in header and "heat: 4" in header


def test_a_pinned_scene_keeps_its_summary_and_is_never_deleted(fake_llm, store):
    pinned = texts(store)["hobbies.md"].replace("heat: 1\n", "heat: 1\npinned: true\n")
    hand_edit(store, "hobbies.md", pinned)
    resummarise = call("write_to_file", {"path": "hobbies.md", "content": model_scene(
        "Climbing, renamed by the model.", HOBBIES[1] + "She also climbs outdoors.\n")})
    delete = call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})
    fake_llm.script([reply(tool_calls=[resummarise, delete, work_update()]),
                     reply(content="Done.")])

    run_batch(store, backend(fake_llm))

    assert "pinned by a person" in tool_result(fake_llm, resummarise)
    assert "pinned by a person" in tool_result(fake_llm, delete)
    assert texts(store)["hobbies.md"] == pinned
    assert "pinned" in user_messages(fake_llm)[0].split("hobbies.md (")[1].split("\n")[0]


def test_a_merge_carries_the_merged_scenes_header_keys(fake_llm, store):
    hand_edit(store, "hobbies.md", texts(store)["hobbies.md"].replace(
        "heat: 1\n", "heat: 1\ngym: Riverside Boulders  # since 2023\n"))
    merged = call("write_to_file", {"path": "family.md", "content": model_scene(
        "Alice's home and her climbing.", FAMILY[1] + HOBBIES[1], merged_from=["hobbies.md"])})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "hobbies.md"}), merged,
                                       call("write_to_file", {"path": "hobbies.md",
                                                              "content": "[DELETED]"}),
                                       work_update()]),
                     reply(content="Merged hobbies into family.")])

    run_batch(store, backend(fake_llm))

    family = texts(store)["family.md"]
    assert "gym: Riverside Boulders  # since 2023\n" in family
    assert read_scene(store.scenes_dir / "family.md").meta["merged_from"] == ["hobbies.md"]
    assert json.loads(json.dumps(ledger_of(store).merges)) == {"family.md": ["hobbies.md"]}


def test_a_rewrite_that_wipes_a_scenes_facts_is_refused(fake_llm, tmp_path):
    engine_written = ("Alice's nursing job.", "Alice is a nurse on the surgical ward of the city "
                      "hospital; she trained in Porto, speaks three languages and mentors two "
                      "junior nurses on the ward rota.\n")
    store = make_store(tmp_path / "mem", {"work.md": (*engine_written, 3)}, [NIGHT_SHIFT])
    repo = history.open_repo(store.root)
    # Make the seeded text the engine's own (a batch wrote it), so only the wipe rule applies.
    repo.git.commit("--amend", "-m", "batch 0: seeded\n\nBatch: 0\nMemory-Seqs: \n",
                    "--quiet", env={"GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x",
                                    "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@x"})
    wipe = call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice works nights.", "In May 2024 Alice started night shifts on the ward.\n")})
    keep = call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice, a nurse, now on nights.", engine_written[1]
        + "In May 2024 Alice started night shifts on the ward.\n")})
    fake_llm.script([reply(tool_calls=[wipe]), reply(tool_calls=[keep]), reply(content="Done.")])

    run_batch(store, backend(fake_llm))

    assert "would keep only" in tool_result(fake_llm, wipe)
    assert "trained in Porto" in texts(store)["work.md"]


def test_a_failed_model_batch_leaves_its_transcript_for_a_person(fake_llm, store):
    fake_llm.script([reply(content="I have updated work.md."),
                     reply(content="Really, I have updated work.md.")])
    with pytest.raises(BatchError):
        run_batch(store, backend(fake_llm))
    path = store.meta_dir / "transcripts" / "000001.jsonl"
    events = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [e["kind"] for e in events if e["kind"] in ("reply", "repair", "end")] == [
        "reply", "repair", "reply", "end"]
    assert events[-2]["content"] == "Really, I have updated work.md."
    assert events[-1]["outcome"] == "failed" and "batch 1" in events[-1]["error"]
    assert events[-1]["totals"]["completion_tokens"] == 10     # both replies counted
    # requests are numbered across the batch, the repair round's included
    assert [e["call"] for e in events if e["kind"] == "request"] == [1, 2]
    assert history.open_repo(store.root).is_dirty(untracked_files=True) is False


GARDEN_FACTS = ("Tomatoes and basil grow on the balcony.",
                "The fig tree needs repotting before winter.",
                "Alice waters the plants at dawn.")


@pytest.mark.parametrize("dropped", range(len(GARDEN_FACTS)), ids=["first", "middle", "last"])
def test_a_rewrite_that_drops_one_fact_from_a_scene_with_room_is_refused(fake_llm, tmp_path,
                                                                        dropped):
    garden = ("Alice's balcony garden.", "".join(f"{fact}\n" for fact in GARDEN_FACTS))
    store = make_store(tmp_path / "mem", {"garden.md": (*garden, 1), "work.md": (*WORK, 3)},
                       [NIGHT_SHIFT])
    kept = [fact for i, fact in enumerate(GARDEN_FACTS) if i != dropped]
    trimmed = call("write_to_file", {"path": "garden.md", "content": model_scene(
        "Alice's balcony garden.", "".join(f"{fact}\n" for fact in kept))})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "garden.md"}), trimmed,
                                       work_update()]), reply(content="Done.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, trimmed)
    assert "has room, yet these facts of garden.md are gone" in told
    assert GARDEN_FACTS[dropped] in texts(store)["garden.md"].splitlines()


def test_a_merge_that_drops_facts_into_a_scene_with_room_is_refused(fake_llm, tmp_path):
    people = {"alice.md": ("Alice, my sister.", "Alice lives in Porto and teaches maths.\n", 2),
              "sarah.md": ("Sarah, an old friend.", "Sarah became CTO at a robotics start-up "
                           "in March 2021.\nSarah studied at Google's residency before.\n", 1)}
    store = make_store(tmp_path / "mem", people, ["Alice started a pottery class."])
    merged = call("write_to_file", {"path": "alice.md", "content": model_scene(
        "Alice and Sarah.", "Alice lives in Porto and teaches maths.\nSarah is a friend.\n"
        "Alice started a pottery class.\n", merged_from=["sarah.md"])})
    delete = call("write_to_file", {"path": "sarah.md", "content": "[DELETED]"})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "sarah.md"}), merged,
                                       delete]),
                     reply(content="Merged.")] + [reply(content="Merged.")] * 2)
    before = snapshot(store)

    with pytest.raises(BatchError):
        run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, delete)
    assert "gone" in told or "holds only" in told
    assert_nothing_written(store, before)


def test_no_change_for_a_memory_that_contradicts_the_scene_is_refused(fake_llm, tmp_path):
    store = make_store(tmp_path / "mem", {"food.md": ("Alice's food.",
                                                      "Alice loves Chinese food.\n", 1)},
                       ["Alice hates Chinese food now."])
    fake_llm.script([reply(content="NO_CHANGE: m0 already in food.md")] * 2)
    with pytest.raises(BatchError, match="food.md does not hold it"):
        run_batch(store, backend(fake_llm))


def test_a_stub_without_the_memorys_details_does_not_count_as_placed(fake_llm, tmp_path):
    store = make_store(tmp_path / "mem", {"health.md": ("Alice's health.",
                                                        "Alice sees Dr Reis yearly.\n", 1)},
                       ["Dentist appointment moved to 14:30 on 2026-06-12, room 204."])
    stub = call("replace_in_file", {"path": "health.md", "old": "yearly.\n",
                                    "new": "yearly.\nAlice has a dentist appointment.\n"})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "health.md"}), stub]),
                     reply(content="PLACED: m0 -> health.md")] * 2)
    with pytest.raises(BatchError, match="does not state it"):
        run_batch(store, backend(fake_llm))
