"""Any history folds to the end with default settings (issue 37, part 0).

A person adds years of everyday memories and runs ``scenes run`` with no model: every batch
commits, nothing stays pending, ``doctor`` finds nothing wrong, and every scene is named by a
few words, never by a sentence. The histories come from ``tests/histories.py``: the issue's
own (eight people, eight cities, a dozen things, English and Chinese, many alike, five years)
and hypothesis's shapes of it (heavy repetition, near-duplicates, dense days, long gaps,
contradictions). The issue saw batch 122 of 3,000 such memories refused ("v02039:
mirela推荐我去graz玩.md says the opposite (…digest…)") and every later run fail the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import git
import pytest
from histories import everyday, histories
from hypothesis import HealthCheck, given, settings

from scene_engine.batch.accounting import LEDGER_DIR, Ledger, _held_in_lines
from scene_engine.offline.backend import OfflineBackend, restates
from scene_engine.services.add import add_memories
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.store import history
from scene_engine.store.memories import Memory
from scene_engine.store.store import init_store, open_store


def fold(root: Path, rows: list[dict], **config: int) -> None:
    """``scenes add`` then ``scenes run`` with default settings (``config`` overrides a
    number in config.toml); asserts the run ends with nothing pending, doctor clean and
    every scene named by a few words."""
    store = init_store(root)
    if config:
        text = store.config_path.read_text("utf-8")
        for key, value in config.items():
            text = re.sub(rf"(?m)^{key} = \d+", f"{key} = {value}", text)
        store.config_path.write_text(text, "utf-8")
        history.commit_files(git.Repo(root), "hand edit: config.toml",
                             [".scene-engine/config.toml"])
        store = open_store(root)
    add_memories(store, json.dumps(rows, ensure_ascii=False).encode())
    run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    assert check_store(store) == []
    for path in store.scenes_dir.glob("*.md"):
        assert_a_name(path.stem, rows)


def assert_a_name(stem: str, rows: list[dict]) -> None:
    """A scene's name is a few of its words (``naming``: two or three nouns or names, words
    said together kept together, at most 60 characters), never a memory said whole (the
    issue saw ``mirela推荐我去graz玩.md``)."""
    assert len(stem) <= 60, stem
    whole = {re.sub(r"\W+", "-", row["content"].lower()).strip("-") for row in rows}
    assert re.sub(r"-\d+$", "", stem) not in whole, f"{stem}: a whole memory as a name"


def memory(text: str) -> Memory:
    from datetime import UTC, datetime

    return Memory(seq=1, id="m1", content=text, created_at=datetime(2020, 1, 4, tzinfo=UTC))


def test_a_digest_holding_a_fact_beside_a_not_of_another_day_holds_that_fact():
    """The issue's refusal: the memory's own fact in a digest, beside another day's "not",
    was read as the scene saying the opposite."""
    body = ("## Timeline (UTC)\n- 2020-01 (digest): 1–26 Jan ×9: 最近睡得不好，早上很累; "
            "4 Jan: Mirela推荐我去Graz玩; 9 Jan: Talked with Mirela about the road bike in Graz\n")
    assert _held_in_lines(memory("Mirela推荐我去Graz玩"), body) == (1.0, "")
    # Its opposite, in a fact of its own, is still refused.
    said, opposite = _held_in_lines(memory("Mirela推荐我去Graz玩"),
                                    "- 2020-01 (digest): 4 Jan: Mirela不推荐我去Graz玩\n")
    assert said >= 0.8 and opposite == "Mirela不推荐我去Graz玩"


def test_a_line_whose_other_sentence_says_not_holds_its_first_sentence():
    """A memory of two sentences, one negated, said twice the same day: the scene's line of it
    holds it (the "not" of its second sentence is not the first one's)."""
    assert _held_in_lines(memory("Slept badly. Did not run."),
                          "- 2020-01-04: Slept badly. Did not run.\n") == (1.0, "")


@given(histories(most=40).map(lambda rows: [r["content"] for r in rows]))
@settings(max_examples=200, deadline=None)
def test_what_the_backend_finds_said_again_the_rule_finds_held(texts):
    """The offline backend records a memory as said already when an entry of its day
    ``restates`` it; the rule the batch is judged by must then find that entry holding it,
    or the backend would claim what its rules refuse."""
    for text in texts:
        for entry in texts:
            if restates(text, [entry]):
                line = f"- 2020-01-04: {entry}"
                assert _held_in_lines(memory(text), line) == (1.0, ""), (text, entry)


def test_a_month_of_the_same_days_folds_through_its_rollups(tmp_path):
    """Small scenes roll up within a few dozen memories: tiredness every day, a friend's
    tip said twice on some days (the second time found said already), and a "not"."""
    rows, n = [], 0
    for day in range(1, 29):
        said = ["最近睡得不好，早上很累"] + ["Mirela推荐我去Graz玩"] * 2 * (day % 3 == 0) \
            + ["Slept badly. Did not run."] * 2 * (day % 4 == 0)
        for i, text in enumerate(said):
            rows.append({"id": f"d{n}", "content": text,
                         "created_at": f"2020-02-{day:02d}T0{i}:00:00+00:00"})
            n += 1
    fold(tmp_path / "store", rows, max_scene_chars=600)


def test_a_memory_the_rule_does_not_find_held_where_the_backend_found_it_gets_its_own_line(
        tmp_path, monkeypatch):
    """Should the rule and the backend ever disagree about a memory said again the same day
    (as they did, issue 37), the backend checks its claim by the rule before writing and
    writes the memory as a line of its own: the batch commits, nothing is pending."""
    from scene_engine.batch import accounting

    judged = accounting._held_in_lines

    def stricter(memory, body):     # a planted fault: the rule refuses the restated memory
        if memory.id == "r2":
            return 1.0, "planted"
        return judged(memory, body)

    monkeypatch.setattr(accounting, "_held_in_lines", stricter)
    store = init_store(tmp_path / "store")
    rows = [{"id": f"r{i}", "content": text, "created_at": f"2020-02-04T0{i}:00:00+00:00"}
            for i, text in enumerate(["Mirela推荐我去Graz玩", "Slept badly. Did not run.",
                                      "Slept badly. Did not run."])]
    add_memories(store, json.dumps(rows, ensure_ascii=False).encode())
    run_pending(store, OfflineBackend())
    assert store.load_state().pending == 0
    outcomes = {e.id: e.outcome for path in (store.root / LEDGER_DIR).glob("*.json")
                for e in Ledger.parse(path.read_text("utf-8")).entries}
    assert outcomes["r2"] == "placed"
    body = "".join(p.read_text("utf-8") for p in store.scenes_dir.glob("*.md"))
    assert body.count("2020-02-04: Slept badly. Did not run.") == 2


def test_a_batch_that_still_breaks_a_rule_says_which_and_what_a_person_can_do(tmp_path,
                                                                              monkeypatch):
    """Whatever still fails names the rule, the memory and the scene, writes nothing, and
    tells a person the way forward; every memory stays pending."""
    from clirunner import CheckedRunner

    from scene_engine.batch import accounting
    from scene_engine.cli import app
    from scene_engine.offline.backend import _OfflineWorker

    monkeypatch.setattr(accounting, "_held_in_lines", lambda memory, body: (1.0, "planted"))
    monkeypatch.setattr(_OfflineWorker, "hold_to_the_rules", lambda self: None)
    root = tmp_path / "store"
    init_store(root)
    rows = [{"id": f"r{i}", "content": "Slept badly. Did not run.",
             "created_at": f"2020-02-04T0{i}:00:00+00:00"} for i in range(2)]
    runner = CheckedRunner()
    added = runner.invoke(app, ["--dir", str(root), "add", "-"], input=json.dumps(rows))
    assert added.exit_code == 0, added.output
    done = runner.invoke(app, ["--dir", str(root), "run"])
    assert done.exit_code == 1
    said = " ".join(done.output.split())
    assert re.search(r"r1: \S+\.md says the opposite", said), said
    assert "Nothing is lost" in said and "--batch-size 5" in said and "--backend llm" in said
    assert open_store(root).load_state().pending == 2


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=histories(most=60))
def test_a_short_history_of_any_shape_folds_to_the_end(tmp_path_factory, rows):
    fold(tmp_path_factory.mktemp("h") / "store", rows)


# Minutes, not the 300 s every other test gets: a batch of 20 costs about a second.
@pytest.mark.slow
@pytest.mark.timeout(1800)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=histories(most=600))
def test_a_history_of_any_shape_and_size_folds_to_the_end(tmp_path_factory, rows):
    fold(tmp_path_factory.mktemp("h") / "store", rows)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_issues_three_thousand_memories_fold_to_the_end(tmp_path):
    fold(tmp_path / "store", everyday(seed=37, total=3000))
