"""End-to-end batches with the litellm backend against scripted, often misbehaving, models.

litellm really talks HTTP to ``tests/fakellm.py``. Every test ends in one of the two states a
user may see (DESIGN.md "A batch", steps 5-7): the batch is repaired and committed (the refusal
reached the model, the final files obey the scene rules, ``doctor`` is clean), or it failed with
nothing written (scene files, state.json and git HEAD unchanged, memories still pending).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from clirunner import CheckedRunner
from fakellm import call, delay, error, reply
from typer.testing import Result

from scene_engine.batch.contract import BatchError
from scene_engine.batch.model_backend import LLMBackend
from scene_engine.batch.rules import is_report_like
from scene_engine.batch.transaction import run_batch
from scene_engine.cli import app
from scene_engine.index.refresh import refresh_index
from scene_engine.llm.loop import Budget
from scene_engine.llm.preflight import PLACEHOLDER_KEY
from scene_engine.services.add import add_memories
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.store import history
from scene_engine.store.scene import read_scene
from scene_engine.store.store import Store, init_store, open_store

MODEL = "openai/test-model"

WORK = ("Alice's nursing job at the city hospital.",
        "Alice works as a nurse at the city hospital, mostly on the surgical ward.\n")
FAMILY = ("Alice's home life with her sister Mara and their cat.",
          "Alice shares a flat with her sister Mara and a grey cat called Pixel.\n")
HOBBIES = ("Alice's weekend climbing at the indoor gym.",
           "On weekends Alice goes bouldering at the indoor gym near the river.\n")
NIGHT_SHIFT = "Alice started night shifts at the hospital ward in May."


# ------------------------------------------------------------------------------ helpers

def seeded_scene(summary: str, body: str, heat: int) -> str:
    """A scene file as the engine writes it (engine-owned fields set)."""
    return (f"---\ncreated: 2024-01-01T00:00:00+00:00\nupdated: 2024-01-01T00:00:00+00:00\n"
            f"summary: {summary}\nheat: {heat}\n---\n{body}")


def model_scene(summary: str | None, body: str, **extra) -> str:
    """A scene as a model writes it: only the fields the model owns (plus ``extra``)."""
    meta = ({"summary": summary} if summary is not None else {}) | extra
    lines = [f"{k}: {json.dumps(v)}" for k, v in meta.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def make_store(root: Path, scenes: dict[str, tuple[str, str, int]], memories: list[str],
               persona: str | None = None) -> Store:
    """A committed store holding ``scenes`` (name -> (summary, body, heat)) and pending memories."""
    init_store(root)
    store = open_store(root)
    for name, (summary, body, heat) in scenes.items():
        (store.scenes_dir / name).write_text(seeded_scene(summary, body, heat), encoding="utf-8")
    if persona is not None:
        store.persona_path.write_text(persona, encoding="utf-8")
    repo = history.open_repo(store.root)
    # Seeded as the engine's own text (as earlier batches would have written it); tests of a
    # person's lines add theirs by hand.
    history.commit(repo, "init: seed scenes", paths=history.HAND_EDITABLE)
    records = [{"id": f"m{i}", "content": text, "created_at": f"2024-05-{i + 1:02d}T09:00:00Z"}
               for i, text in enumerate(memories)]
    add_memories(store, json.dumps(records).encode())
    refresh_index(store)  # so `doctor` starts clean
    return store


def with_settings(store: Store, **settings) -> Store:
    """``store`` with ``settings`` written into its config.toml, committed as a person would."""
    text = store.config_path.read_text("utf-8")
    for key, value in settings.items():
        shown = json.dumps(value) if isinstance(value, str) else str(value)
        text = re.sub(rf"(?m)^{key} = [^#\n]*", f"{key} = {shown} ", text)
    store.config_path.write_text(text, "utf-8")
    history.commit_files(history.open_repo(store.root), "hand edit: config.toml",
                         [".scene-engine/config.toml"])
    return open_store(store.root)


@pytest.fixture
def store(tmp_path) -> Store:
    """Three scenes (work, family, hobbies), one pending memory about work, a persona."""
    return make_store(tmp_path / "mem", {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                                          "hobbies.md": (*HOBBIES, 1)},
                      [NIGHT_SHIFT], persona="# Persona\nAlice, a nurse.\n")


def backend(fake_llm, **budget) -> LLMBackend:
    """The real LLM backend pointed at the fake server, with a budget that keeps tests fast."""
    limits = {"call_timeout": 2.0, "backoff": 0.01, "retries": 2, "max_steps": 8,
              "max_seconds": 20.0} | budget
    return LLMBackend(MODEL, api_base=fake_llm.api_base, api_key="sk-test",
                      budget=Budget(**limits))


@dataclass
class Snapshot:
    """What a failed batch must leave untouched."""

    head: str
    files: dict[str, bytes]
    state: bytes
    persona: bytes | None
    pending: int


def snapshot(store: Store) -> Snapshot:
    repo = history.open_repo(store.root)
    files = {p.name: p.read_bytes() for p in store.scenes_dir.iterdir()}
    persona = store.persona_path.read_bytes() if store.persona_path.exists() else None
    return Snapshot(repo.head.commit.hexsha, files, store.state_path.read_bytes(), persona,
                    store.load_state().pending)


def assert_nothing_written(store: Store, before: Snapshot) -> None:
    """Scene files, persona, state.json, git HEAD unchanged; the memories still pending."""
    assert snapshot(store) == before
    assert history.open_repo(store.root).is_dirty(untracked_files=True) is False
    assert check_store(store) == []


def texts(store: Store) -> dict[str, str]:
    return {n: (store.scenes_dir / n).read_text(encoding="utf-8") for n in store.scene_names()}


def assert_scenes_obey_rules(store: Store) -> None:
    """Every scene file readable, with a summary, a body within the limit, engine-owned heat;
    fewer than ``max_scenes`` scenes; no report-like names; ``doctor`` finds nothing."""
    config = store.config
    names = store.scene_names()
    assert len(names) < config.max_scenes
    for name in names:
        scene = read_scene(store.scenes_dir / name)
        assert scene.header == "yaml", name
        assert str(scene.meta.get("summary") or "").strip(), name
        assert len(scene.body.strip()) <= config.max_scene_chars, name
        assert isinstance(scene.meta["heat"], int) and scene.meta["heat"] >= 1, name
        assert not is_report_like(name)
    assert check_store(store) == []


def tool_result(fake_llm, tool_call: dict) -> str:
    """What the model was told in reply to ``tool_call`` (as seen in a later request)."""
    for request in fake_llm.requests:
        for message in request["messages"]:
            if message["role"] == "tool" and message["tool_call_id"] == tool_call["id"]:
                return message["content"]
    raise AssertionError(f"the result of {tool_call['function']} never reached the model")


def user_messages(fake_llm) -> list[str]:
    """The user messages of the longest conversation the model saw."""
    longest = max(fake_llm.requests, key=lambda r: len(r["messages"]))
    return [m["content"] for m in longest["messages"] if m["role"] == "user"]


def last_commit(store: Store):
    return history.open_repo(store.root).head.commit


def commit_subjects(store: Store) -> list[str]:
    repo = history.open_repo(store.root)
    return [c.summary for c in repo.iter_commits()]  # newest first


def work_update(extra: str = "In May 2024 she started night shifts.") -> dict:
    """A correct update of work.md that folds the night-shift memory in."""
    return call("write_to_file", {"path": "work.md", "content": model_scene(
        "Alice's nursing job at the city hospital, now on night shifts.", WORK[1] + extra + "\n")})


def assert_committed_batch(store: Store, number: int = 1) -> None:
    """A batch commit is HEAD, the memories are no longer pending, the rules hold."""
    head = last_commit(store)
    assert head.summary.startswith(f"batch {number}:")
    assert history.trailers(head.message)["Batch"] == str(number)
    assert store.load_state().pending == 0
    assert_scenes_obey_rules(store)


# ------------------------------------------------------------------------------ well-behaved

def test_well_behaved_model_creates_updates_and_merges(fake_llm, store):
    """One batch that updates, merges and creates: files, heat, merged_from, commit message."""
    merged = model_scene("Alice's home with Mara and Pixel, and her weekend climbing.",
                         FAMILY[1] + HOBBIES[1], merged_from=["hobbies.md"], heat=99)
    create = call("write_to_file", {"path": "cooking.md", "content": model_scene(
        "Alice learns to bake sourdough bread.", "In May 2024 Alice began baking sourdough.\n")})
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "family.md"}),
                          call("read_file", {"path": "hobbies.md"})]),
        reply(tool_calls=[work_update(), create,
                          call("write_to_file", {"path": "family.md", "content": merged}),
                          call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})]),
        reply(content="Night shifts added to work; hobbies merged into family; baking started."),
    ])
    before_head = last_commit(store).hexsha

    result = run_batch(store, backend(fake_llm))

    assert result is not None and result.number == 1 and result.memory_ids == ["m0"]
    assert result.counts == {"updated": 2, "created": 1, "merged": 1, "deleted": 1}
    assert store.scene_names() == ["cooking.md", "family.md", "work.md"]
    scenes = {n: read_scene(store.scenes_dir / n) for n in store.scene_names()}
    # Heat: new 1; changed +1; merged = sum of the merged heats + 1 (the model's 99 is ignored).
    assert {n: s.meta["heat"] for n, s in scenes.items()} == {
        "cooking.md": 1, "work.md": 4, "family.md": 2 + 1 + 1}
    assert scenes["family.md"].meta["merged_from"] == ["hobbies.md"]
    assert "bouldering" in scenes["family.md"].body
    assert "night shifts" in scenes["work.md"].body
    assert str(scenes["work.md"].meta["created"]).startswith("2024-01-01")
    assert scenes["cooking.md"].meta["updated"] == scenes["work.md"].meta["updated"]
    head = last_commit(store)
    assert head.parents[0].hexsha == before_head
    assert head.summary == "batch 1: 2 updated, 1 created, 1 merged, 1 deleted"
    assert "hobbies merged into family" in head.message
    trailers = history.trailers(head.message)
    assert trailers["Memories"] == "m0" and trailers["Memory-Seqs"] == "0"
    assert trailers["Backend"] == MODEL
    assert trailers["Tokens"] == str(3 * (10 + 5)) == str(result.tokens)
    assert sorted(d.a_path for d in head.diff(head.parents[0])) == [
        ".scene-engine/ledger/000001.json", ".scene-engine/state.json", "scenes/cooking.md",
        "scenes/family.md", "scenes/hobbies.md", "scenes/work.md"]
    assert "Ledger: .scene-engine/ledger/000001.json" in head.message
    assert "Accounted: 1 placed" in head.message
    assert_committed_batch(store)
    # The model was shown the scene list, the related texts and the memory, with its instant
    # in the store's time zone.
    prompt = user_messages(fake_llm)[0]
    assert "work.md (heat 3" in prompt and "[2024-05-01 09:00 UTC] (m0) " + NIGHT_SHIFT in prompt


@pytest.mark.parametrize("requested", [True, False])
def test_persona_request_makes_its_own_commit(fake_llm, store, requested):
    final = "Night shifts added."
    if requested:
        final += " [PERSONA_UPDATE_REQUEST] reason: she now works nights [/PERSONA_UPDATE_REQUEST]"
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content=final)])
    if requested:
        fake_llm.script([reply(content="# Persona\nAlice, a nurse who now works nights.")])
    old_persona = store.persona_path.read_text(encoding="utf-8")

    results = run_pending(store, backend(fake_llm))

    assert [r.number for r in results] == [1]
    subjects = commit_subjects(store)
    if requested:
        assert subjects[:2] == ["persona: regenerated from 3 scenes",
                                "batch 1: 1 updated, 0 created, 0 merged, 0 deleted"]
        head = last_commit(store)
        assert "Reason: the model asked for it." in head.message
        assert [d.a_path for d in head.diff(head.parents[0])] == [
            ".scene-engine/state.json", "persona.md"]
        assert "works nights" in store.persona_path.read_text(encoding="utf-8")
        # The persona prompt carried the scenes as they are after the batch.
        assert "night shifts" in fake_llm.requests[-1]["messages"][0]["content"]
        assert store.load_state().since_persona == 0
    else:
        assert subjects[0].startswith("batch 1:")
        assert store.persona_path.read_text(encoding="utf-8") == old_persona
        assert len(fake_llm.requests) == 2  # no persona call
    assert_scenes_obey_rules(store)


# ------------------------------------------------------------------------------ repaired in the loop

def _bad_steps_then_fix(bad: list[dict]) -> list:
    return [reply(tool_calls=bad), reply(tool_calls=[work_update()]),
            reply(content="Night shifts added to work.md.")]


TOO_LONG = model_scene("Alice's nursing job.", "Night shifts, ward rounds and paperwork. " * 40)
MISBEHAVIOUR = {
    # name: (bad tool calls, what the refusal must say)
    "path outside the root": ([call("write_to_file", {"path": "../persona.md", "content": "x"}),
                               call("read_file", {"path": "/etc/passwd"}),
                               call("read_file", {"path": "../.scene-engine/state.json"})],
                              "invalid path"),
    "archive marker": ([call("write_to_file", {"path": "hobbies.md", "content": "[ARCHIVE]"})],
                       "[DELETED]"),
    "over-long scene": ([call("write_to_file", {"path": "work.md", "content": TOO_LONG})],
                        "the limit is 1500"),
    "missing summary": ([call("write_to_file", {"path": "work.md", "content": model_scene(
        None, "Night shifts.\n", topic="work")})], "has no summary"),
    "empty header": ([call("write_to_file", {"path": "work.md",
                                             "content": "---\n---\nNight shifts.\n"})],
                     "has no summary"),   # an empty header parses: it just lacks the summary
    "no header at all": ([call("write_to_file", {"path": "work.md", "content": "Night shifts."})],
                         "cannot be read"),
    "arguments not JSON": ([call("write_to_file", '{"path": "work.md", "content": "Night')],
                           "not valid JSON"),
    "unknown tool": ([call("delete_file", {"path": "hobbies.md"})], "unknown tool"),
    "report-like name": ([call("write_to_file", {"path": "BATCH-1-report.md", "content":
                                                 model_scene("Batch one.", "Night shifts.\n")})],
                         "report or log name"),
}


@pytest.mark.parametrize("case", list(MISBEHAVIOUR))
def test_refused_call_is_explained_and_the_batch_is_repaired(fake_llm, store, case):
    bad, refusal = MISBEHAVIOUR[case]
    fake_llm.script(_bad_steps_then_fix(bad))
    persona = store.persona_path.read_bytes()
    before = texts(store)

    run_batch(store, backend(fake_llm))

    for bad_call in bad:
        told = tool_result(fake_llm, bad_call)
        assert told.startswith("Error:") and refusal in told, told
    assert_committed_batch(store)
    after = texts(store)
    assert set(after) == set(before)  # nothing deleted, nothing created by the bad calls
    assert "night shifts" in after["work.md"]
    assert after["hobbies.md"] == before["hobbies.md"]
    assert store.persona_path.read_bytes() == persona


def test_a_new_scene_past_the_batchs_allowance_is_refused(fake_llm, store):
    # With the young-store allowance on (new_scenes_per_batch = 3): 3 scenes of 14, room for
    # 11, so this batch may open two (a quarter of the room).
    store = with_settings(store, new_scenes_per_batch=3)
    cooking = call("write_to_file", {"path": "cooking.md", "content": model_scene(
        "Alice learns to bake.", "Alice began baking sourdough in May 2024.\n")})
    garden = call("write_to_file", {"path": "garden.md", "content": model_scene(
        "Alice's balcony garden.", "Alice planted tomatoes on the balcony.\n")})
    travel = call("write_to_file", {"path": "travel.md", "content": model_scene(
        "Alice's trips.", "Alice visited Porto in June 2024.\n")})
    fold = call("replace_in_file", {"path": "family.md", "old": "Pixel.\n",
                                    "new": "Pixel.\nThey went to Porto in June 2024.\n"})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "family.md"}),
                                       call("read_file", {"path": "hobbies.md"}), cooking,
                                       garden, travel]),
                     reply(tool_calls=[fold, work_update()]),
                     reply(content="Baking and garden scenes created; Porto folded into family.")])

    result = run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, travel)
    assert "at most 2 new scenes" in told and "garden.md" in told
    assert "OK" in tool_result(fake_llm, garden)
    assert result.counts["created"] == 2
    assert store.scene_names() == ["cooking.md", "family.md", "garden.md", "hobbies.md",
                                   "work.md"]
    assert "Porto" in texts(store)["family.md"]
    assert_committed_batch(store)


def test_new_scene_at_the_cap_is_refused(fake_llm, tmp_path):
    scenes = {f"area-{i:02d}.md": (f"Area {i} of Alice's life.", f"Things about area {i}.\n", 1)
              for i in range(14)}
    store = make_store(tmp_path / "mem", scenes, ["Alice adopted a dog named Rex."])
    create = call("write_to_file", {"path": "pets.md", "content": model_scene(
        "Alice's dog Rex.", "Alice adopted a dog named Rex in May 2024.\n")})
    fix = call("replace_in_file", {"path": "area-03.md", "old": "area 3.",
                                   "new": "area 3.\nShe adopted a dog named Rex."})
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "area-01.md"}),
                                       call("read_file", {"path": "area-02.md"}), create]),
                     reply(tool_calls=[call("read_file", {"path": "area-03.md"}), fix]),
                     reply(content="Rex folded into area-03.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, create)
    assert "there are already 14 scenes and the limit is 14" in told
    assert len(store.scene_names()) == 14 and "pets.md" not in store.scene_names()
    assert "Rex" in texts(store)["area-03.md"]
    assert_committed_batch(store)


def test_create_without_reading_is_refused_until_two_scenes_were_read(fake_llm, tmp_path):
    scenes = {"work.md": (*WORK, 1), "family.md": (*FAMILY, 1), "hobbies.md": (*HOBBIES, 1)}
    store = make_store(tmp_path / "mem", scenes, ["Bought sourdough starter named Bubbles."])
    content = model_scene("Alice bakes sourdough.", "She keeps a starter named Bubbles.\n")
    first = call("write_to_file", {"path": "baking.md", "content": content})
    second = call("write_to_file", {"path": "baking.md", "content": content})
    fake_llm.script([
        reply(tool_calls=[first]),
        reply(tool_calls=[call("read_file", {"path": "work.md"}),
                          call("read_file", {"path": "family.md"}), second]),
        reply(content="New baking scene."),
    ])

    run_batch(store, backend(fake_llm))

    # Precondition of the scenario: no scene text was shown in the prompt (none counts as read).
    assert "most related to this batch\n(none)" in user_messages(fake_llm)[0]
    assert "read at least 2 existing scenes" in tool_result(fake_llm, first)
    assert tool_result(fake_llm, second).startswith("OK: baking.md created")
    assert read_scene(store.scenes_dir / "baking.md").meta["heat"] == 1
    assert_committed_batch(store)


def test_unlisted_file_cannot_be_read(fake_llm, store):
    """A file that appeared after the prompt was built is not readable; it stays the user's."""
    diary = store.scenes_dir / "diary.md"
    peek = call("read_file", {"path": "diary.md"})

    def user_writes_diary(_request):
        diary.write_text(seeded_scene("Private.", "Dear diary, nobody may read this.\n", 1),
                         encoding="utf-8")
        return reply(tool_calls=[peek])

    fake_llm.script([user_writes_diary, reply(tool_calls=[work_update()]),
                     reply(content="Night shifts added.")])

    run_batch(store, backend(fake_llm))

    told = tool_result(fake_llm, peek)
    assert "not available to read" in told and "nobody may read" not in told
    assert "Dear diary" in diary.read_text(encoding="utf-8")
    # The batch commit holds only the batch; the diary is the user's own commit.
    head = last_commit(store)
    assert head.summary.startswith("batch 1:")
    assert "scenes/diary.md" not in {d.a_path for d in head.diff(head.parents[0])}
    assert "hand edit: diary.md" in commit_subjects(store)
    assert_committed_batch(store)


# ------------------------------------------------------------------------------ provider trouble

def test_429_and_500_are_retried_before_success(fake_llm, store):
    fake_llm.script([error(429), error(500), reply(tool_calls=[work_update()]),
                     error(503), reply(content="Night shifts added.")])

    run_batch(store, backend(fake_llm, retries=2))

    assert len(fake_llm.requests) == 5
    assert "night shifts" in texts(store)["work.md"]
    assert_committed_batch(store)


def test_reply_slower_than_the_timeout_is_retried(fake_llm, store):
    fake_llm.script([delay(1.5, reply(content="too late")), reply(tool_calls=[work_update()]),
                     reply(content="Night shifts added.")])

    # a server that answers requests side by side, told so (timeout_retries)
    run_batch(store, backend(fake_llm, call_timeout=0.4, retries=1, timeout_retries=1))

    assert len(fake_llm.requests) == 3  # the slow call was given up and asked again
    assert "too late" not in last_commit(store).message
    assert "night shifts" in texts(store)["work.md"]
    assert_committed_batch(store)


# ------------------------------------------------------------------------------ failures

FAILURES = {
    # name: (script, then forever, budget overrides, words the error must contain)
    "a loop that never stops": (  # it stages a good write first: that must not land either
        [reply(tool_calls=[work_update()])], reply(tool_calls=[call("read_file", {"path":
                                                                                "work.md"})]),
        {"max_steps": 4}, ["steps budget"]),
    "an empty reply": ([], reply(content=""), {}, ["empty"]),
    "always slower than the timeout": ([], delay(1.0, reply(content="late")),
                                       {"call_timeout": 0.3, "retries": 1, "max_seconds": 5},
                                       ["Timeout"]),
    "500 forever": ([], error(500), {"retries": 2}, ["HTTP 500", "gave up after 2 retries"]),
    "bad api key": ([], error(401), {}, ["HTTP 401"]),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_failing_model_writes_nothing(fake_llm, store, case):
    steps, forever, budget, words = FAILURES[case]
    fake_llm.script(steps).repeat(forever)
    before = snapshot(store)

    with pytest.raises(BatchError) as caught:
        run_batch(store, backend(fake_llm, **budget))

    message = str(caught.value)
    assert "batch 1" in message and all(w in message for w in words), message
    assert_nothing_written(store, before)
    assert before.pending == 1


# ------------------------------------------------------------------------------ repair rounds

def test_repair_round_merges_down_to_the_limit(fake_llm, tmp_path):
    scenes = {f"area-{i:02d}.md": (f"Area {i} of Alice's life.", f"Things about area {i}.\n",
                                   i % 3 + 1) for i in range(15)}
    store = make_store(tmp_path / "mem", scenes, ["Alice renewed her passport."])
    # The seeded lines are a person's (committed outside the engine): the merge keeps them.
    merged = model_scene("Areas 0 and 1 of Alice's life.",
                         "Things about area 0.\nThings about area 1.\n", merged_from="area-01.md")
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "area-05.md"}),
                          call("replace_in_file", {"path": "area-05.md", "old": "area 5.",
                                                   "new": "area 5.\nShe renewed her passport."})]),
        reply(content="Passport noted."),
        reply(tool_calls=[call("read_file", {"path": "area-01.md"}),
                          call("read_file", {"path": "area-00.md"}),
                          call("write_to_file", {"path": "area-00.md", "content": merged}),
                          call("write_to_file", {"path": "area-01.md", "content": "[DELETED]"})]),
        reply(content="Merged area-01 into area-00."),
    ])

    result = run_batch(store, backend(fake_llm))

    repair = user_messages(fake_llm)[-1]
    assert "there will be 15 scenes; the limit is 14" in repair
    assert len(store.scene_names()) == 14 and "area-01.md" not in store.scene_names()
    area0 = read_scene(store.scenes_dir / "area-00.md")
    assert area0.meta["merged_from"] == ["area-01.md"]
    assert area0.meta["heat"] == 1 + 2 + 1  # area-00 (1) + area-01 (2) + 1
    assert result.counts == {"updated": 2, "created": 0, "merged": 1, "deleted": 1}
    assert "Merged area-01 into area-00." in last_commit(store).message
    assert_committed_batch(store)


def test_repair_round_deletes_a_merged_source(fake_llm, store):
    merged = model_scene("Alice's home and her climbing.", FAMILY[1] + HOBBIES[1],
                         merged_from=["hobbies.md"])
    fake_llm.script([
        reply(tool_calls=[work_update(), call("write_to_file", {"path": "family.md",
                                                                "content": merged})]),
        reply(content="Merged hobbies into family."),
        reply(tool_calls=[call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})]),
        reply(content="Deleted hobbies.md."),
    ])

    run_batch(store, backend(fake_llm))

    assert "family.md was merged from hobbies.md, which still exist" in user_messages(fake_llm)[-1]
    assert store.scene_names() == ["family.md", "work.md"]
    assert read_scene(store.scenes_dir / "family.md").meta["heat"] == 2 + 1 + 1
    assert_committed_batch(store)


def test_model_that_never_repairs_fails_after_two_rounds(fake_llm, store):
    merged = model_scene("Alice's home and her climbing.", FAMILY[1] + HOBBIES[1],
                         merged_from=["hobbies.md"])
    fake_llm.script([reply(tool_calls=[call("write_to_file", {"path": "family.md",
                                                              "content": merged})])])
    fake_llm.repeat(reply(content="All done, nothing else to fix."))
    before = snapshot(store)

    with pytest.raises(BatchError, match="hobbies.md, which still exist"):
        run_batch(store, backend(fake_llm))

    repairs = [m for m in user_messages(fake_llm) if "nothing has been saved yet" in m]
    assert len(repairs) == 2 and len(fake_llm.requests) == 4
    assert_nothing_written(store, before)


# ------------------------------------------------------------------------------ hand edits

HAND_NOTE = "Hand note: Alice prefers the intensive care unit."


def test_hand_edit_while_the_model_thinks_is_kept(fake_llm, store):
    work = store.scenes_dir / "work.md"
    stale_write = work_update("In May 2024 she started night shifts. STALE VERSION.")

    def user_edits_then_model_writes(_request):
        work.write_text(work.read_text(encoding="utf-8") + HAND_NOTE + "\n", encoding="utf-8")
        return reply(tool_calls=[stale_write])

    fresh_read = call("read_file", {"path": "work.md"})

    def fresh_write(request):
        # The second attempt writes what it read, so the hand note survives only if it was fresh.
        read = next(m["content"] for m in request["messages"]
                    if m["role"] == "tool" and m["tool_call_id"] == fresh_read["id"])
        body = read.split("---\n", 2)[2] + "In May 2024 she started night shifts.\n"
        return reply(tool_calls=[call("write_to_file", {"path": "work.md", "content": model_scene(
            "Alice's nursing job, now on night shifts.", body)})])

    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "work.md"})]),
        user_edits_then_model_writes,
        reply(content="First attempt."),
        reply(tool_calls=[fresh_read]), fresh_write, reply(content="Second attempt."),
    ])

    run_batch(store, backend(fake_llm))

    assert HAND_NOTE in tool_result(fake_llm, fresh_read)
    final = work.read_text(encoding="utf-8")
    assert HAND_NOTE in final and "night shifts" in final and "STALE" not in final
    batch, hand = last_commit(store), last_commit(store).parents[0]
    assert hand.summary == "hand edit: work.md"
    assert HAND_NOTE in (hand.tree / "scenes/work.md").data_stream.read().decode()
    assert "Second attempt." in batch.message and "First attempt." not in batch.message
    assert read_scene(work).meta["heat"] == 4
    assert_committed_batch(store)


def test_hand_edits_on_every_attempt_fail_the_batch_and_keep_the_edits(fake_llm, store):
    work = store.scenes_dir / "work.md"
    edits = iter(["first", "second"])

    def user_edits_then_model_writes(_request):
        # The model keeps everything it saw (a person's lines included) and adds the memory;
        # meanwhile the person adds another line.
        seen = read_scene(work).body
        work.write_text(work.read_text(encoding="utf-8") + f"Hand edit {next(edits)}.\n",
                        encoding="utf-8")
        return reply(tool_calls=[call("write_to_file", {"path": "work.md", "content": model_scene(
            "Alice's nursing job, now on night shifts.",
            seen + "In May 2024 she started night shifts.\n")})])

    fake_llm.script([user_edits_then_model_writes, reply(content="one"),
                     user_edits_then_model_writes, reply(content="two")])
    state_before = store.state_path.read_bytes()

    with pytest.raises(BatchError, match="changed on disk"):
        run_batch(store, backend(fake_llm))

    final = work.read_text(encoding="utf-8")
    assert "Hand edit first." in final and "Hand edit second." in final
    assert "night shifts" not in final
    assert store.state_path.read_bytes() == state_before and store.load_state().pending == 1
    assert not last_commit(store).summary.startswith("batch")
    assert not [p for p in check_store(store) if "recovery" in p]  # no half-done batch left
    # The next run (a well-behaved model now) keeps both edits and folds the memory in.
    fake_llm.script([reply(tool_calls=[call("read_file", {"path": "work.md"})])])
    fake_llm.script([lambda request: reply(tool_calls=[call("replace_in_file", {
        "path": "work.md", "old": "Hand edit second.",
        "new": "Hand edit second.\nIn May 2024 she started night shifts."})])])
    fake_llm.script([reply(content="Night shifts added.")])
    run_batch(store, backend(fake_llm))
    final = work.read_text(encoding="utf-8")
    assert "Hand edit first." in final and "Hand edit second." in final and "night shifts" in final
    assert_committed_batch(store)


# ------------------------------------------------------------------------------ command line

def _cli(store: Store, fake_llm) -> Result:
    """``scenes --dir D run --model M --api-base URL`` in-process (litellm is already loaded)."""
    argv = ["--dir", str(store.root), "run", "--model", MODEL, "--api-base", fake_llm.api_base]
    return CheckedRunner().invoke(app, argv, env={"OPENAI_API_KEY": "sk-test"})


def test_cli_run_commits_a_batch(fake_llm, store):
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])

    done = _cli(store, fake_llm)

    assert done.exit_code == 0, done.output
    assert "1 batch committed; 0 memories pending" in done.stdout
    assert last_commit(store).summary.startswith("batch 1:")
    assert "night shifts" in texts(store)["work.md"]
    assert all(r["model"] == "test-model" for r in fake_llm.requests)


def test_cli_run_with_failing_model_exits_1(fake_llm, store):
    fake_llm.repeat(error(401))  # not retried, so the default budget's backoff costs nothing
    before = snapshot(store)

    done = _cli(store, fake_llm)

    assert done.exit_code == 1, done.output
    assert "error:" in done.stderr and "HTTP 401" in done.stderr
    assert "1 memory still pending" in done.stderr
    assert_nothing_written(store, before)


def test_a_priced_model_records_its_cost_in_the_commit(fake_llm, store):
    """litellm knows gpt-4o-mini's price: the batch commit carries tokens and Cost-USD."""
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Added night shifts.")])
    priced = LLMBackend("openai/gpt-4o-mini", api_base=fake_llm.api_base, api_key="sk-test",
                        budget=Budget(call_timeout=2.0, backoff=0.01, retries=2))
    result = run_batch(store, priced)
    found = history.trailers(last_commit(store).message)
    assert int(found["Tokens"]) == result.tokens > 0
    assert float(found["Cost-USD"]) == pytest.approx(result.cost) and result.cost > 0
    entry = history.log_entries(history.open_repo(store.root))[0]
    assert entry["cost"] == pytest.approx(result.cost)


def test_a_server_at_api_base_needs_no_api_key(fake_llm, store, monkeypatch):
    """An OpenAI-compatible local server: no key in the environment, a placeholder is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_llm.script([reply(tool_calls=[work_update()]), reply(content="Night shifts added.")])
    keyless = LLMBackend(MODEL, api_base=fake_llm.api_base,
                         budget=Budget(call_timeout=2.0, backoff=0.5, retries=4))
    run_batch(store, keyless)
    assert "night shifts" in texts(store)["work.md"]
    assert {h["authorization"] for h in fake_llm.headers} == {f"Bearer {PLACEHOLDER_KEY}"}
    assert_committed_batch(store)


def test_a_missing_api_key_fails_at_once_with_a_clear_message(store, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keyless = LLMBackend("gpt-4o-mini", budget=Budget(call_timeout=2.0, backoff=0.5, retries=4))
    before = snapshot(store)
    with pytest.raises(BatchError) as caught:
        run_batch(store, keyless)
    assert "needs an API key" in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)
    assert "retries" not in str(caught.value)              # a set-up problem is not retried
    assert_nothing_written(store, before)


CLIFFS = "Alice now climbs outdoors at the sea cliffs every Sunday instead of the gym."


def _store_at_the_cap(root: Path) -> Store:
    """The three scenes of ``store`` with ``max_scenes = 4`` (no room for a new one)."""
    store = make_store(root, {"work.md": (*WORK, 3), "family.md": (*FAMILY, 2),
                              "hobbies.md": (*HOBBIES, 1)}, [CLIFFS])
    config = store.config_path.read_text("utf-8").replace("max_scenes = 15", "max_scenes = 4")
    store.config_path.write_text(config, "utf-8")
    history.commit_files(history.open_repo(root), "hand edit: config", [".scene-engine/config.toml"])
    return open_store(root)


def test_a_model_renames_a_scene_at_the_cap_and_history_follows(fake_llm, tmp_path):
    store = _store_at_the_cap(tmp_path / "mem")
    renamed = model_scene("Alice's climbing, from the gym to the sea cliffs.",
                          HOBBIES[1] + "Since May 2024 Alice climbs at the sea cliffs every Sunday.\n",
                          merged_from=["hobbies.md"])
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "hobbies.md"}),
                          call("read_file", {"path": "work.md"})]),
        reply(tool_calls=[call("write_to_file", {"path": "climbing.md", "content": renamed}),
                          call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"})]),
        reply(content="Renamed hobbies to climbing; added the sea cliffs."),
    ])
    result = run_batch(store, backend(fake_llm))

    assert result is not None and result.counts.get("renamed") == 1
    assert sorted(store.scene_names()) == ["climbing.md", "family.md", "work.md"]
    scene = read_scene(store.scenes_dir / "climbing.md")
    assert scene.meta["merged_from"] == ["hobbies.md"] and scene.meta["heat"] == 2
    assert last_commit(store).message.splitlines()[0].endswith(", 1 renamed")
    assert check_store(store) == []


def test_a_merge_under_a_new_name_is_counted_as_renamed_and_merged(fake_llm, tmp_path):
    # A newcomer's subjects: "1 created, 1 merged, 2 deleted" while the summary said a merge
    # and a rename of its survivor.
    store = _store_at_the_cap(tmp_path / "mem")
    both = model_scene("Alice's climbing and her family's Sundays at the cliffs.",
                       HOBBIES[1] + FAMILY[1] + "Since May 2024 Alice climbs every Sunday.\n",
                       merged_from=["hobbies.md", "family.md"])
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "hobbies.md"}),
                          call("read_file", {"path": "family.md"}),
                          call("read_file", {"path": "work.md"})]),
        reply(tool_calls=[call("write_to_file", {"path": "climbing.md", "content": both}),
                          call("write_to_file", {"path": "hobbies.md", "content": "[DELETED]"}),
                          call("write_to_file", {"path": "family.md", "content": "[DELETED]"})]),
        reply(content="Merged family into hobbies, renamed it climbing."),
    ])
    result = run_batch(store, backend(fake_llm))
    assert result is not None
    assert result.counts == {"updated": 0, "created": 0, "merged": 1, "deleted": 1,
                             "renamed": 1}
    assert last_commit(store).message.splitlines()[0].endswith(
        "0 updated, 0 created, 1 merged, 1 deleted, 1 renamed")


def test_a_new_name_that_keeps_the_old_scene_is_a_new_scene_and_is_refused_at_the_cap(
        fake_llm, tmp_path):
    store = _store_at_the_cap(tmp_path / "mem")
    head = last_commit(store).hexsha
    copy = model_scene("Alice's climbing.", HOBBIES[1] + "Sea cliffs every Sunday since May.\n",
                       merged_from=["hobbies.md"])
    fake_llm.script([
        reply(tool_calls=[call("read_file", {"path": "hobbies.md"}),
                          call("read_file", {"path": "work.md"})]),
        reply(tool_calls=[call("write_to_file", {"path": "climbing.md", "content": copy})]),
        reply(content="Made climbing.md."),
    ] * 3)
    with pytest.raises(BatchError, match="hobbies.md, which still exist"):
        run_batch(store, backend(fake_llm), attempts=1)
    assert last_commit(store).hexsha == head
    assert sorted(store.scene_names()) == ["family.md", "hobbies.md", "work.md"]


def _split_hobbies() -> list:
    """A model's replies that split hobbies.md into three new names, each with
    ``merged_from: [hobbies.md]``, then delete it."""
    parts = [call("write_to_file", {"path": f"{n}.md", "content": model_scene(
        f"Alice's {n}.", HOBBIES[1] + f"{CLIFFS} ({n})\n", merged_from=["hobbies.md"])})
        for n in ("bouldering", "climbing", "gym")]
    return [
        reply(tool_calls=[call("read_file", {"path": "hobbies.md"}),
                          call("read_file", {"path": "work.md"})]),
        reply(tool_calls=[*parts, call("write_to_file", {"path": "hobbies.md",
                                                         "content": "[DELETED]"})]),
        reply(content="Split hobbies."),
    ]


def test_one_scene_split_into_several_new_names_is_one_rename_and_new_scenes(fake_llm, tmp_path):
    # Three new names each claiming hobbies.md: only one continues it; the others are new
    # scenes, and at the cap there is no room for them: refused, the rename goes through.
    store = _store_at_the_cap(tmp_path / "mem")
    fake_llm.script(_split_hobbies() * 3)
    result = run_batch(store, backend(fake_llm), attempts=1)
    assert result is not None and result.counts.get("renamed") == 1
    assert result.counts["created"] == 0 and result.counts["deleted"] == 0
    assert sorted(store.scene_names()) == ["bouldering.md", "family.md", "work.md"]


def test_a_split_with_room_is_one_rename_and_new_scenes_not_merges(fake_llm, tmp_path):
    # Two new scenes and a rename: a young store with the allowance on (3 a batch) has room.
    store = with_settings(make_store(tmp_path / "mem", {
        "work.md": (*WORK, 3), "family.md": (*FAMILY, 2), "hobbies.md": (*HOBBIES, 1)},
        [CLIFFS]), new_scenes_per_batch=3)
    fake_llm.script(_split_hobbies())
    result = run_batch(store, backend(fake_llm))
    assert result is not None
    assert result.counts == {"updated": 0, "created": 2, "merged": 0, "deleted": 0,
                             "renamed": 1}
    for name in ("climbing.md", "gym.md"):
        scene = read_scene(store.scenes_dir / name)
        assert scene.meta["heat"] == 1 and "merged_from" not in scene.meta
    assert read_scene(store.scenes_dir / "bouldering.md").meta["merged_from"] == ["hobbies.md"]


@pytest.mark.parametrize("address", ["http://[::1", "http://localhost:99999/v1", "http://",
                                     "::::"])
def test_a_malformed_api_base_is_one_line_and_nothing_is_written(tmp_path, address):
    root = tmp_path / "mem"
    init_store(root)
    runner = CheckedRunner()
    added = runner.invoke(app, ["--dir", str(root), "add", "-"],
                          input='{"content": "Booked the dentist for May."}\n')
    assert added.exit_code == 0, added.output
    for args in (["run"], ["extract", "-"]):
        done = runner.invoke(app, ["--dir", str(root), *args, "--model", "openai/x",
                                   "--api-base", address], input="User: hi there, it's me\n")
        assert done.exit_code == 1, (args, done.output)
        assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
        assert "not a server address" in done.stderr or "does not resolve" in done.stderr \
            or "nothing is listening" in done.stderr, done.stderr
    assert json.loads(runner.invoke(app, ["--dir", str(root), "status", "--json"]).stdout
                      )["pending"] == 1
