"""A store never stops for its own text (issue 23 item 1): when scenes are full the engine
rolls up, merges or condenses its own entries, so any volume folds with default rules; a
batch fails only when the scenes are full of text a person wrote, and then it names them."""

from __future__ import annotations

import json
import re

import pytest
from clirunner import CheckedRunner
from test_conservation_offline import add, hand_write, new_store

from scene_engine.cli import app
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.periods import parse_fact
from scene_engine.offline.backend import OfflineBackend
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.services.trace import trace_memory
from scene_engine.store.scene import body_chars, parse_scene

runner = CheckedRunner()
TOPICS = ["Played badminton with Wei at the community centre", "Baked sourdough bread with rye",
          "Walked the dog Bruno along the river", "Fixed the kitchen tap with a new washer",
          "和小林去公园跑步", "给年糕买了新的猫砂", "Studied Japanese kanji for the JLPT",
          "Paid the car insurance for the Golf"]


def volume(n: int, year: int = 2023) -> list[tuple]:
    return [(f"v{i:04d}", f"{TOPICS[i % len(TOPICS)]}, entry {i}.",
             f"{year + i // 400}-{1 + (i // 34) % 12:02d}-{1 + i % 28:02d}T08:{i % 60:02d}:00Z")
            for i in range(n)]


@pytest.mark.slow
def test_small_full_scenes_at_the_cap_fold_any_volume_and_stay_readable(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=4, max_scene_chars=500)
    rows = volume(400)
    for start in range(0, len(rows), 100):
        add(store, *rows[start:start + 100])
        run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    assert check_store(store) == []
    assert len(store.scene_names()) <= 3
    for name in store.scene_names():
        scene = parse_scene((store.scenes_dir / name).read_text("utf-8"), name)
        assert body_chars(scene) <= 500
        for line in scene.body.splitlines():
            assert "[v0" not in line and " more (" not in line, line   # no ids, no word lists


LONG = ["Thinking about whether to move the badminton club to the Tuesday slot at the centre",
        "Moved the sourdough starter to the fridge and baked a rye loaf that came out dense",
        "Walked the dog Bruno along the river for an hour; he chased the ducks and got muddy",
        "Fixed the kitchen tap with a new washer from the hardware shop, the drip stopped",
        "和小林去公园跑步，跑了八公里，膝盖有点疼，打算下周去医院看看是不是半月板的问题",
        "给年糕买了新的猫砂和冻干，它挑食，只吃鸡肉味的，换了三个牌子才找到它喜欢的",
        "Signed up for the JLPT N3 exam in December and studied kanji for two hours tonight",
        "Paid the car insurance for the Golf; the broker wants me to add breakdown cover"]


@pytest.mark.slow
def test_scenes_at_the_smallest_size_allowed_fold_open_questions_and_milestones(tmp_path):
    # max_scene_chars at its minimum (200): a memory of half a scene, an open question that
    # would take a thread's heading, a year digest of milestones that keeps each: the engine
    # squeezes its own oldest digests rather than stop (stopped at batch 70 before).
    store = new_store(tmp_path / "s", max_scene_chars=200)
    rows = [(f"m{i:04d}", f"{LONG[i % len(LONG)]}, entry {i}.",
             f"{2023 + i // 300}-{1 + (i // 25) % 12:02d}-{1 + i % 28:02d}T08:{i % 60:02d}:00Z")
            for i in range(250)]
    for start in range(0, len(rows), 100):
        add(store, *rows[start:start + 100])
        run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    assert check_store(store) == []
    for name in store.scene_names():
        scene = parse_scene((store.scenes_dir / name).read_text("utf-8"), name)
        assert body_chars(scene) <= 200
    assert trace_memory(store, "m0000").lines          # the oldest is still found


def test_scenes_full_of_a_persons_text_fail_the_batch_naming_the_files(tmp_path):
    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=300)
    add(store, ("a1", "Played badminton with Wei.", "2024-01-01T08:00:00Z"))
    run_pending(store, OfflineBackend())
    add(store, ("b1", "Baked sourdough bread.", "2024-01-02T08:00:00Z"),
        ("b2", "Baked sourdough bread again with rye.", "2024-01-03T08:00:00Z"))
    run_pending(store, OfflineBackend())
    names = store.scene_names()
    assert len(names) == 2
    for name in names:        # a person fills each scene with their own words
        own = "\n".join(f"My own line {k} about {name} that I wrote and keep." for k in range(6))
        hand_write(store, name, f"---\nsummary: mine\n---\n{own}\n")
    add(store, ("c1", "Played badminton with Wei at the community centre again, a long game "
                "of three sets that went on and on until the lights went out.",
                "2024-01-04T08:00:00Z"))
    with pytest.raises(SceneEngineError) as refused:
        run_pending(store, OfflineBackend())
    message = str(refused.value)
    assert "fits in no scene" in message and "a person wrote" in message
    assert any(name in message for name in names)
    assert "max_scene_chars" not in message
    assert store.load_state().pending == 1                         # the memory waits
    out = runner.invoke(app, ["--dir", str(store.root), "run"])
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert json.loads(runner.invoke(app, ["--dir", str(store.root), "status", "--json"]).stdout
                      )["pending"] == 1


SPAN_LINE = re.compile(r"^- (\d{4})–(\d{4}) \(digest\): (.+)$", re.M)


def yearly(n: int, per_year: int, year: int = 2001) -> list[tuple]:
    """``n`` memories, ``per_year`` a year from ``year`` on: a life over decades."""
    return [(f"y{i:04d}", f"{TOPICS[i % len(TOPICS)]}, entry {i}.",
             f"{year + i // per_year}-{1 + (i * 5) % 12:02d}-{1 + i % 28:02d}T08:00:00Z")
            for i in range(n)]


@pytest.mark.slow
def test_decades_in_small_scenes_roll_old_years_into_spans_and_trace_finds_the_oldest(
        tmp_path):
    # A scene full of year digests (it was: 10,000 everyday memories stopped at batch 470,
    # every scene twelve years of digests long) rolls its oldest years into one span.
    store = new_store(tmp_path / "s", max_scenes=4, max_scene_chars=600)
    rows = yearly(480, per_year=16)                  # thirty years
    for start in range(0, len(rows), 80):
        add(store, *rows[start:start + 80])
        run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    assert check_store(store) == []
    bodies = {n: parse_scene((store.scenes_dir / n).read_text("utf-8"), n)
              for n in store.scene_names()}
    spans = [(n, m) for n, scene in bodies.items() for m in SPAN_LINE.finditer(scene.body)]
    assert spans, "\n\n".join(s.body for s in bodies.values())
    for name, found in spans:
        assert body_chars(bodies[name]) <= 600
        for fact in found.group(3).split("; "):       # each fact led by its days and years
            assert parse_fact(fact, f"{found.group(1)}–{found.group(2)}") is not None, fact
            assert re.match(r"\d{1,2}(–\d{1,2})? [A-Z][a-z]{2}( \d{4})?(–\d{1,2} [A-Z][a-z]{2} "
                            r"\d{4})?( ×\d+)?: \S", fact), fact
    oldest = trace_memory(store, "y0000")
    assert oldest.lines and {row["how"] for row in oldest.lines} == {"condensed"}
    assert any(SPAN_LINE.match(row["text"].strip()) for row in oldest.lines), oldest.lines


def test_memories_left_at_the_cap_are_said_to_lack_room_not_a_scene_of_their_own(tmp_path):
    # A newcomer's store at its cap folded one or two memories a batch, each batch saying "19
    # unrelated memories wait for scenes of their own": no scene could be made for them.
    import git

    store = new_store(tmp_path / "s", max_scenes=3, max_scene_chars=400)
    add(store, *volume(160))
    run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    messages = [c.message for c in git.Repo(store.root).iter_commits()
                if c.message.startswith("batch")]
    full = [m for m in messages if "did not fit" in m]
    assert full, messages[:3]
    for message in full:
        assert "at its limit of 2 scenes" in message and "scenes of their own" not in message
