"""Merge before waste (issue 23 item 5; seed 001's active merge, 主动合并): two scenes of one
topic merge as soon as both exist, below the cap too, so the slot is free before a later topic
needs it; a scene with a person's words in it, and scenes of two topics, never merge so."""

from __future__ import annotations

import git
from test_conservation_offline import add, fold, hand_write, new_store, scene_texts

from scene_engine.batch.rules import merged_from
from scene_engine.services.trace import trace_memory
from scene_engine.store.scene import parse_scene

RACKET = ["Bought a new Yonex racket and shuttlecocks for the club.",
          "Restrung the Yonex racket at the club shop, 24 lbs.",
          "Club night: lost both doubles games, the Yonex racket felt heavy."]
BRIDGE = ["Played badminton with Wei at the club with my new Yonex racket.",
          "Badminton with Wei again at the club, the Yonex racket is great now.",
          "Badminton doubles with Wei at the club: won, Yonex racket strung tighter."]


def two_scenes_of_badminton(tmp_path):
    """A store whose first batches made two scenes of one topic: games with Wei, then a
    racket said in other words (no word in common, so it opened a scene of its own)."""
    store = new_store(tmp_path / "s")
    add(store, *[(f"a{i}", f"Played badminton with Wei at the community centre, game {i}.",
                  f"2025-01-0{i + 1}T08:00:00Z") for i in range(3)])
    fold(store)
    add(store, *[(f"b{i}", text, f"2025-02-0{i + 1}T08:00:00Z") for i, text in enumerate(RACKET)])
    fold(store)
    assert len(store.scene_names()) == 2
    return store


def heats(store) -> dict[str, int]:
    return {n: int(parse_scene(t, n).meta["heat"]) for n, t in scene_texts(store).items()}


def test_two_scenes_of_one_topic_merge_once_they_say_it_below_the_cap(tmp_path):
    store = two_scenes_of_badminton(tmp_path)
    # Memories that say both ("badminton with Wei" and "the Yonex racket") show one topic.
    add(store, *[(f"c{i}", text, f"2025-03-0{i + 1}T08:00:00Z") for i, text in enumerate(BRIDGE)])
    fold(store)
    before = heats(store)
    assert len(before) == 2 and store.config.max_scenes > 3       # far below the cap
    add(store, ("d0", "Badminton with Wei at the community centre, then the club.",
                "2025-04-01T08:00:00Z"))
    fold(store)
    (name,) = store.scene_names()
    scene = parse_scene((store.scenes_dir / name).read_text("utf-8"), name)
    (gone,) = set(before) - {name}
    assert merged_from(scene) == [gone]
    # Heat of a merge: both summed, + 1 (docs/DESIGN.md "Scene file").
    assert scene.meta["heat"] == sum(before.values()) + 1
    for memory_id in ("a0", "b0", "c2", "d0"):               # every fact is in the survivor
        assert any(row["scene"] == name for row in trace_memory(store, memory_id).lines)
    assert "Yonex racket" in scene.body and "community centre" in scene.body
    commit = git.Repo(store.root).head.commit
    assert f"scenes/{gone}" in commit.stats.files and not (store.scenes_dir / gone).exists()
    # The batch's message says which scene went where, and why.
    assert f"Merged {gone} into {name} (one topic)." in commit.message


def test_a_scene_a_person_wrote_in_is_not_merged_away_for_a_topic(tmp_path):
    store = two_scenes_of_badminton(tmp_path)
    racket = next(n for n in store.scene_names() if "badminton" not in n)
    text = (store.scenes_dir / racket).read_text("utf-8")
    hand_write(store, racket, text + "- 2025-02-10: My own note: the grip needs replacing.\n")
    add(store, *[(f"c{i}", text, f"2025-03-0{i + 1}T08:00:00Z") for i, text in enumerate(BRIDGE)])
    fold(store)
    add(store, ("d0", "Badminton with Wei at the community centre, then the club.",
                "2025-04-01T08:00:00Z"))
    fold(store)
    assert racket in store.scene_names() and len(store.scene_names()) == 2
    assert "My own note: the grip needs replacing." in (store.scenes_dir / racket).read_text()


def test_scenes_of_two_topics_stay_apart_below_the_cap(tmp_path):
    store = new_store(tmp_path / "s")
    add(store, *[(f"a{i}", f"Played badminton with Wei at the club, game {i}.",
                  f"2025-01-0{i + 1}T08:00:00Z") for i in range(3)])
    fold(store)
    add(store, *[(f"s{i}", f"Baked sourdough bread with rye at home, loaf {i}.",
                  f"2025-02-0{i + 1}T08:00:00Z") for i in range(3)])
    fold(store)
    add(store, ("m0", "Baked a sourdough loaf for the badminton club night.",
                "2025-03-01T08:00:00Z"),
        ("m1", "Played badminton with Wei, then baked rye sourdough at home.",
         "2025-03-02T08:00:00Z"))
    fold(store)
    add(store, ("m2", "Played badminton at the club again.", "2025-03-03T08:00:00Z"))
    fold(store)
    assert len(store.scene_names()) == 2


def test_a_scene_a_persons_persona_names_keeps_its_name_and_file(tmp_path):
    store = two_scenes_of_badminton(tmp_path)
    racket = next(n for n in store.scene_names() if "badminton" not in n)
    # The person rewrote the persona in their own words, listing the racket scene by name.
    store.persona_path.write_text("I play badminton twice a week.\n\n- **"
                                  f"{racket.removesuffix('.md')}** (heat 1): my racket\n",
                                  encoding="utf-8")
    add(store, *[(f"c{i}", text, f"2025-03-0{i + 1}T08:00:00Z") for i, text in enumerate(BRIDGE)])
    fold(store)
    add(store, ("d0", "Badminton with Wei at the community centre, then the club.",
                "2025-04-01T08:00:00Z"))
    fold(store)
    assert racket in store.scene_names()          # the persona's link still leads to it
    assert "I play badminton twice a week." in store.persona_path.read_text("utf-8")


def test_a_merge_for_room_says_so_and_counts_the_files_the_engine_cannot_read(tmp_path):
    # A newcomer's eight broken files took the cap's room and the next batch merged three
    # good scenes without a word why: the batch's message now says it was for room, and
    # how many of the scenes the cap counts are files the engine cannot read.
    from test_conservation_offline import fold as fold_all

    store = new_store(tmp_path / "s", max_scenes=6)
    topics = {"chess": "Played a chess tournament, the Sicilian opening again, game {i}.",
              "garden": "Planted tomatoes and basil in the greenhouse beds, row {i}.",
              "sailing": "Sailed the dinghy across the bay in a strong wind, trip {i}."}
    for t, (topic, text) in enumerate(topics.items()):
        add(store, *[(f"{topic}{i}", text.format(i=i), f"2025-0{t + 1}-0{i + 1}T08:00:00Z")
                     for i in range(3)])
        fold_all(store)
    assert len(store.scene_names()) == 3
    for i in range(3):            # headers no one can read: the engine leaves them alone
        hand_write(store, f"broken-{i}.md", f"---\nsummary: [unclosed {i}\n---\nnotes\n")
    add(store, ("x0", "Played a chess tournament again, the Sicilian opening, game 9.",
                "2025-05-01T08:00:00Z"))
    fold_all(store)
    messages = [c.message for c in git.Repo(store.root).iter_commits(max_count=5)]
    said = [m for m in messages if "Merged " in m]
    assert said, messages
    # max_scenes = 6: scene files stay below 6, so at most 5 (3 of them unreadable).
    assert "(to make room: at most 5 scenes, 3 of them files the engine cannot read" in said[0]
