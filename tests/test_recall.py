"""Recall: persona, scene map and the best passages, never over the budget; and the demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from clirunner import CheckedRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scene_engine.cli import app
from scene_engine.core.when import readable, resolve
from scene_engine.index.scenes import SceneIndex
from scene_engine.recall.assemble import LONG_MEMORY, recall, split_passages
from scene_engine.services.demo import build_demo
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store

ROOT = Path(__file__).resolve().parents[1]
runner = CheckedRunner()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    store, _, _ = build_demo(tmp_path_factory.mktemp("demo") / "store")
    return store


def test_the_demo_folds_its_memories_into_readable_scenes(demo):
    names = demo.scene_names()
    assert 2 <= len(names) < 15
    assert demo.persona_path.exists()
    text = " ".join((demo.scenes_dir / n).read_text("utf-8") for n in names)
    assert "Northwind" in text and "李伟" in text          # English and Chinese both folded


def test_recall_puts_the_answer_first_and_dates_it(demo):
    result = recall(demo, "When did I get promoted to senior engineer?", budget=4000)
    assert result.passages, result.text
    best = result.passages[0]
    assert "promoted" in best.text.lower()
    assert best.dated().startswith("15 June 2026: ")    # timeline dates are written for people
    # In the text, the day is a heading over its facts (said once for the day).
    section = result.text.split("## Passages\n")[1]
    assert "\n15 June 2026:\n" in "\n" + section
    assert section.split("15 June 2026:\n")[1].splitlines()[0].endswith(best.text)
    assert result.text.index("## Persona") < result.text.index("## Scenes") \
        < result.text.index("## Passages")


def test_recall_finds_two_character_chinese_words(demo):
    result = recall(demo, "咖啡", budget=1200)
    assert result.passages
    assert all("咖啡" in p.text for p in result.passages[:2])


def test_passages_cite_a_map_tag_or_the_scene_name(demo):
    result = recall(demo, "knee pain running", budget=2000)
    tags = {line.split(" ", 1)[0] for line in result.text.split("## Scenes\n")[1]
            .split("\n\n")[0].splitlines()}
    cited = [line.split("]", 1)[0].removeprefix("- [")
             for line in result.text.split("## Passages\n")[1].splitlines()
             if line.startswith("- [")]
    stems = {n.removesuffix(".md") for n in demo.scene_names()}
    assert cited and set(cited) <= tags | stems
    assert set(cited) & tags                            # the map's scenes are cited by tag


def test_a_query_with_no_match_still_gives_persona_and_map(demo):
    result = recall(demo, "zyzzyva quokka", budget=1000)
    assert result.passages == []
    assert "## Scenes" in result.text and len(result.text) <= 1000


# Queries that find something: random text alone mostly finds nothing, and a recall of
# only the persona and the map never comes near its budget, where an overflow shows.
DEMO_WORDS = ["Marta", "Northwind", "promotion", "PostgreSQL", "marathon", "Lisbon", "knee",
              "rain", "Porto", "mother", "guitar", "Kenji", "Osaka", "李伟", "上海", "咖啡",
              "红烧肉", "rent", "dinner", "startup", "engineer", "Coimbra"]
QUESTIONS = ["When did I {}?", "Where do I live now?", "Who is {}?", "What happened with {}?",
             "{} {}", "{}", "我和{}怎么样？", "Which city does {} live in now?"]
QUERIES = st.one_of(
    st.text(min_size=0, max_size=40),
    st.builds(lambda form, words: form.format(*words), st.sampled_from(QUESTIONS),
              st.lists(st.sampled_from(DEMO_WORDS), min_size=2, max_size=2)),
    st.lists(st.sampled_from(DEMO_WORDS), min_size=1, max_size=5).map(" ".join))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES, budget=st.integers(min_value=100, max_value=5000),
       scope=st.sampled_from([None, None, None, "an-agent"]))
def test_recall_never_exceeds_its_budget_and_keeps_sentences_whole(demo, query, budget, scope):
    if not query.strip():                 # refused as the command line refuses it
        from scene_engine.core.errors import InputError

        with pytest.raises(InputError, match="the query is empty"):
            recall(demo, query, budget=budget)
        return
    with SceneIndex(demo.index_path, demo.scenes_dir) as index:
        result = recall(demo, query, budget=budget, index=index, scope=scope)
        assert len(result.text) <= budget
        # Just below what filled this recall, the last passage no longer fits: an overflow
        # of a few characters shows only there, at the edge of a passage.
        for short in (1, 5, 12):
            tighter = len(result.text) - short
            if tighter >= 100:
                again = recall(demo, query, budget=tighter, index=index, scope=scope)
                assert len(again.text) <= tighter, (query, scope, tighter)
    body = "\n".join((demo.scenes_dir / n).read_text("utf-8") for n in demo.scene_names())
    journal = {m.id: m.content for m in Journal(demo.memories_dir).all()}
    for passage in result.passages:
        if passage.memory is not None:   # a memory of the journal, whole (relative times
            said = " ".join(journal[passage.memory].split())     # made absolute: 明年（2027年）)
            said = resolve(said, passage.day) if passage.day else said
            assert passage.text == said or (
                len(journal[passage.memory]) > LONG_MEMORY       # ... or a whole sentence
                and passage.text in said)
            assert f" {passage.text}\n" in result.text
            continue
        assert passage.text in body                      # a whole sentence, not a fragment
        assert f"] {passage.text}\n" in result.text
        if passage.day:                                  # under its day's heading
            assert f"\n{readable(passage.day)}:\n" in result.text


def test_a_tiny_budget_is_refused(demo):
    with pytest.raises(ValueError):
        recall(demo, "anything", budget=50)


def test_split_passages_keeps_each_sentence_with_its_date():
    body = "## Timeline\n- 2023-05-08: Went hiking. Saw a deer!\n\nLikes tea. 喜欢咖啡。也喜欢茶。\n"
    texts = [p.dated() for p in split_passages("a.md", body)]
    assert texts == ["8 May 2023: Went hiking.", "8 May 2023: Saw a deer!", "Likes tea.",
                     "喜欢咖啡。", "也喜欢茶。"]


def test_split_passages_resolves_relative_times_against_the_line_date():
    body = ("- 2023-05-25: Ran a charity race last Saturday.\n"
            "- 2023-02-30: Painted yesterday.\n"                # no such day: left undated
            "- 2023-05 (digest): 7 May: Went to a support group yesterday; 9 May: Hiked\n")
    passages = split_passages("a.md", body)
    assert passages[0].text == ("Ran a charity race last Saturday (the Saturday before "
                                "25 May 2023).")
    assert passages[1].day is None and "2023-02-30" in passages[1].text
    assert passages[2].day.isoformat() == "2023-05-07"
    assert passages[2].text == "Went to a support group yesterday (6 May 2023)"
    assert passages[3].dated() == "9 May 2023: Hiked"


def test_a_digests_undated_and_ranged_facts_keep_their_period_in_recall():
    body = ("- 1990–1999 (digest): Lived in Lisbon with Ana; 4 Mar 1991–2 Feb 1995 ×3: Sailed "
            "the Tagus\n"
            "- 2026 (digest): 4–29 Mar ×6: Ran 7 km along the river\n"
            "- 2026-13 (digest): Not a month\n")
    passages = split_passages("a.md", body)
    texts = [p.dated() for p in passages]
    assert texts[0] == "Lived in Lisbon with Ana (1990–1999)"
    assert texts[1] == "Sailed the Tagus (4 Mar 1991–2 Feb 1995 ×3)"
    assert texts[2] == "Ran 7 km along the river (4–29 Mar 2026 ×6)"
    # Month 13 is no period: the line is text, not a digest with a date to trust.
    assert all(p.day is None for p in passages) and "2026-13" in texts[3]


def test_cli_recall_json_and_budget(demo):
    result = runner.invoke(app, ["--dir", str(demo.root), "recall", "Porto", "--budget", "800",
                                 "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)     # a warning goes to stderr
    assert data["chars"] == len(data["text"]) <= 800
    assert any("Porto" in p["text"] for p in data["passages"])
    bad = runner.invoke(app, ["--dir", str(demo.root), "recall", "x", "--budget", "10"])
    assert bad.exit_code == 2


def test_recall_on_an_empty_store_is_empty_but_fine(tmp_path):
    store = init_store(tmp_path / "s")
    result = recall(store, "anything")
    assert result.passages == [] and len(result.text) <= 4000


@pytest.mark.slow
def test_demo_command_prints_list_scene_and_recall(tmp_path):
    result = runner.invoke(app, ["demo", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert "scenes show" in result.output and "## Passages" in result.output
    again = runner.invoke(app, ["demo", str(tmp_path / "d")])   # not over an existing store
    assert again.exit_code == 2 and "not empty" in again.output


def test_locomo_memories_carry_sample_dia_id_and_session_date():
    sys.path.insert(0, str(ROOT / "bench"))
    from locomo import answered, sample_memories

    sample = {"sample_id": "conv-x",
              "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023"},
              "observation": {"session_1_observation": {
                  "Ann": [["Ann likes tea.", "D1:3"], ["Ann runs.", "D1:5"]],
                  "Bob": [["Bob naps.", "D1:3"]]}}}
    found = sample_memories(sample)
    # Two speakers citing one dia id at the same place still get different ids.
    assert [m["id"] for m in found] == ["conv-x:D1:3:0", "conv-x:D1:5:1", "conv-x:D1:3:2"]
    assert found[0]["created_at"].startswith("2023-05-08T13:56")
    assert answered("7 May 2023", "She went on 7 May 2023.")
    assert not answered("7 May 2023", "She went on 2023-05-07.")


@pytest.mark.parametrize("budget", [600, 1000, 4000])
def test_the_map_lists_the_matching_scene_first_with_contiguous_tags(demo, budget):
    result = recall(demo, "Northwind", budget=budget)
    names = [r["name"] for r in result.scenes]
    assert names, result.text
    assert "Northwind" in (demo.scenes_dir / names[0]).read_text("utf-8")
    tags = [line.split(" ", 1)[0] for line in result.text.split("## Scenes\n")[1]
            .split("\n\n")[0].splitlines()]
    assert tags == [f"S{i}" for i in range(1, len(tags) + 1)]


def test_recall_and_its_result_type_are_importable_from_the_package():
    import scene_engine.recall as package
    from scene_engine.recall import assemble

    assert package.recall is assemble.recall and package.Recall is assemble.Recall
    with pytest.raises(AttributeError, match="scene_engine.recall' has no attribute"):
        getattr(package, "RecallResult")   # noqa: B009 (a name the package must not have)
