"""A batch reads what it touches (issue 23, item 2): the facts kept in ``.scene-engine/cache/``
so the journal checks, the person-text read and ``scenes list`` do not re-read the whole
journal, history or scene folder never change a verdict; the offline persona rides in the
batch's own commit. (The cost itself is measured by bench/bench_history_cost.py.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.services.listing import scene_rows
from scene_engine.store import history
from scene_engine.store.store import open_store

runner = CheckedRunner()
PERSON = {"GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.org",
          "GIT_COMMITTER_NAME": "Pat", "GIT_COMMITTER_EMAIL": "pat@example.org"}


def scenes(root: Path, *args: str, stdin: str | None = None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def rows(count: int, start: int = 0) -> str:
    return "".join(json.dumps({"id": f"m{i}", "content": f"Walked the dog in the park, day {i}.",
                               "created_at": 1_700_000_000 + i * 3600}) + "\n"
                   for i in range(start, start + count))


def git_(root: Path, *args: str, person: bool = False) -> str:
    import os

    env = {**os.environ, **PERSON} if person else None
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env).stdout


@pytest.fixture
def big(tmp_path) -> Path:
    """A store whose journal has one full segment (1,000 records) and a second one."""
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    assert scenes(root, "add", "-", stdin=rows(1005)).exit_code == 0
    assert scenes(root, "add", "-", stdin=rows(1, 1005)).exit_code == 0   # a write unit
    return root


def cached(root: Path, name: str) -> dict:
    return json.loads((root / ".scene-engine" / "cache" / name).read_text("utf-8"))


# ---------------------------------------------------------------- the journal's checks

def test_a_full_segment_edited_in_place_is_refused_after_its_facts_are_cached(big):
    segment = big / "memories" / "00000.jsonl"
    blob = git_(big, "rev-parse", "HEAD:memories/00000.jsonl").strip()
    assert cached(big, "segments.json")[blob][0] == 1000     # its facts are kept by blob
    text = segment.read_text("utf-8")
    segment.write_text(text.replace("day 500.", "day five hundred."), "utf-8")
    done = scenes(big, "add", "-", stdin=rows(1, 2000))
    assert done.exit_code == 1
    assert "memories/00000.jsonl line 501" in done.stderr and "nothing was written" in done.stderr


def test_a_committed_rewrite_of_a_cached_segment_still_breaks_the_numbering(big):
    # A person swaps two records and commits it: HEAD's blob is new, so it is read again.
    segment = big / "memories" / "00000.jsonl"
    lines = segment.read_text("utf-8").splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]
    segment.write_text("".join(lines), "utf-8")
    git_(big, "commit", "-qam", "my journal", person=True)
    done = scenes(big, "add", "-", stdin=rows(1, 2000))
    assert done.exit_code == 1
    assert "memories/00000.jsonl line 1 holds memory #1 where #0 belongs" in done.stderr


@pytest.mark.parametrize("damage", ["deleted", "garbage", "malformed"])
def test_the_cache_is_safe_to_delete_or_damage(big, damage):
    folder = big / ".scene-engine" / "cache"
    if damage == "deleted":
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    elif damage == "garbage":
        (folder / "segments.json").write_text("{not json", "utf-8")
        (folder / "person-texts.json").write_text("[1, 2]", "utf-8")
    else:
        facts = cached(big, "segments.json")
        (folder / "segments.json").write_text(json.dumps(
            {blob: [1000, "x", None, 4] for blob in facts}), "utf-8")
        (folder / "person-texts.json").write_text(json.dumps(
            {"paths": ["scenes", "persona.md"], "commit": "HEAD", "lines": 5}), "utf-8")
    assert scenes(big, "add", "-", stdin=rows(1, 3000)).exit_code == 0
    assert json.loads(scenes(big, "status", "--json").stdout)["pending"] == 1007
    assert scenes(big, "run", "--max-batches", "1").exit_code == 0     # reads person texts
    assert json.loads(scenes(big, "status", "--json").stdout)["pending"] == 987
    assert git_(big, "status", "--porcelain") == ""       # never committed, never shown


# ---------------------------------------------------------------- a person's lines

def scene_store(tmp_path) -> Path:
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    (root / "scenes" / "garden.md").write_text(
        "---\nsummary: The garden.\n---\n## Notes\n- Tomatoes on the balcony.\n", "utf-8")
    git_(root, "add", "scenes")
    git_(root, "commit", "-qm", "my garden", person=True)
    return root


def test_a_persons_commit_after_the_cached_point_counts_as_theirs(tmp_path):
    root = scene_store(tmp_path)
    repo = history.open_repo(root)
    assert "- Tomatoes on the balcony." in history.person_texts(repo)
    kept = cached(root, "person-texts.json")["commit"]
    with (root / "scenes" / "garden.md").open("a", encoding="utf-8") as out:
        out.write("- Basil next to the tomatoes.\n")
    git_(root, "commit", "-qam", "more garden", person=True)
    texts = history.person_texts(repo)
    assert {"- Basil next to the tomatoes.", "- Tomatoes on the balcony."} <= texts
    assert cached(root, "person-texts.json")["commit"] != kept     # read on from there


def test_a_reset_below_the_cached_point_reads_the_history_again(tmp_path):
    root = scene_store(tmp_path)
    with (root / "scenes" / "garden.md").open("a", encoding="utf-8") as out:
        out.write("- A line the person takes back.\n")
    git_(root, "commit", "-qam", "oops", person=True)
    repo = history.open_repo(root)
    assert "- A line the person takes back." in history.person_texts(repo)
    git_(root, "reset", "-q", "--hard", "HEAD~1")
    assert "- A line the person takes back." not in history.person_texts(repo)


def test_another_devices_person_commits_count_after_a_merge(tmp_path):
    root = scene_store(tmp_path)
    other = tmp_path / "other"
    git_(tmp_path, "clone", "-q", str(root), str(other))
    with (other / "scenes" / "garden.md").open("a", encoding="utf-8") as out:
        out.write("- Planted chillies on the other laptop.\n")
    git_(other, "commit", "-qam", "from the laptop", person=True)
    repo = history.open_repo(root)
    history.person_texts(repo)                                 # cached at this side's HEAD
    (root / "persona.md").write_text("# Me\n", "utf-8")        # this side moves on too
    git_(root, "add", "persona.md")
    git_(root, "commit", "-qm", "persona by hand", person=True)
    git_(root, "pull", "-q", "--no-rebase", "--no-edit", str(other), "main", person=True)
    assert "- Planted chillies on the other laptop." in history.person_texts(repo)


# ---------------------------------------------------------------- the persona

def test_the_offline_persona_is_refreshed_in_the_batch_commit_not_its_own(tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    topics = ["garden tomatoes basil balcony", "chess club tournament opening",
              "piano lessons scales teacher"]
    for t, topic in enumerate(topics):
        stdin = "".join(json.dumps({"content": f"Notes on {topic}, part {i}.",
                                    "created_at": 1_700_000_000 + (t * 10 + i) * 86400}) + "\n"
                        for i in range(8))
        assert scenes(root, "ingest", "-", "--batch-size", "4", stdin=stdin).exit_code == 0
    subjects = git_(root, "log", "--format=%s").splitlines()
    assert not [s for s in subjects if s.startswith("persona:")], subjects
    assert sum(s.startswith("batch ") for s in subjects) >= 6
    # The persona is there, names every scene there is, and came with a batch's commit.
    persona = (root / "persona.md").read_text("utf-8")
    for name in open_store(root).scene_names():
        assert f"**{name.removesuffix('.md')}**" in persona
    last = git_(root, "log", "-1", "--format=%B", "--", "persona.md")
    assert "Batch: " in last and "Persona-Refreshed: " in last
    log = json.loads(scenes(root, "log", "--json").stdout)
    assert any(e.get("persona") for e in log if e["kind"] == "batch")
    assert scenes(root, "doctor").exit_code == 0


def test_a_hand_edited_persona_is_not_overwritten_by_a_batch(tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    assert scenes(root, "ingest", "-", stdin=rows(5)).exit_code == 0
    (root / "persona.md").write_text("# Me\n\nI walk the dog every day.\n", "utf-8")
    done = scenes(root, "ingest", "-", "--batch-size", "2", stdin=rows(30, 5))
    assert done.exit_code == 0
    assert (root / "persona.md").read_text("utf-8") == "# Me\n\nI walk the dog every day.\n"
    assert done.stderr.count("persona.md was edited by hand") == 1


# ---------------------------------------------------------------- scenes list

def listed_store(tmp_path, count: int = 30) -> Path:
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    for k in range(count):
        (root / "scenes" / f"area-{k:02d}.md").write_text(
            f"---\nupdated: 2024-01-0{k % 9 + 1}T08:00:00+00:00\nsummary: Area {k} of a "
            f"life, told in a summary long enough to wrap.\nheat: {k % 5}\n---\nBody {k}.\n",
            "utf-8")
    (root / "scenes" / "broken.md").write_text("---\nsummary: [unclosed\n---\nx\n", "utf-8")
    git_(root, "add", "scenes")
    git_(root, "commit", "-qm", "my scenes", person=True)
    return root


def test_scenes_list_says_the_same_from_its_cache_and_sees_every_edit(tmp_path):
    root = listed_store(tmp_path)
    first = scenes(root, "list", "--json")
    assert (root / ".scene-engine" / "cache" / "scene-rows.json").exists()
    again = scenes(root, "list", "--json")
    assert again.stdout == first.stdout and again.stderr == first.stderr
    assert "broken.md" in first.stderr                      # the warning comes from the cache too
    scene = root / "scenes" / "area-03.md"
    scene.write_text(scene.read_text("utf-8").replace("heat: 3", "heat: 40"), "utf-8")
    top = json.loads(scenes(root, "list", "--json").stdout)[0]
    assert top["name"] == "area-03.md" and top["heat"] == 40


def test_scenes_list_on_a_terminal_past_a_screen_shows_every_cell(tmp_path, monkeypatch):
    from scene_engine.cli import display

    root = listed_store(tmp_path, count=60)
    store = open_store(root)
    listed = scene_rows(store)
    drawn = display.scene_columns(
        [(r["name"], str(r["heat"]), str(r["updated"] or "")[:16], r["summary"])
         for r in listed], 80)
    lines = drawn.splitlines()
    assert lines[0].split() == ["name", "heat", "updated", "summary"]
    assert all(len(line) <= 80 for line in lines)
    words = drawn.split()
    for row in listed:
        assert row["name"] in words and all(w in words for w in row["summary"].split())
    assert " ".join(words).count("told in a summary long enough to wrap.") == 60


def test_a_long_word_in_a_summary_is_cut_to_fit_its_column():
    from rich.cells import cell_len

    from scene_engine.cli.display import scene_columns

    summary = "这是一个很长的中文摘要没有空格需要按字符断开" * 2
    drawn = scene_columns([("家.md", "1", "", summary)], 50)
    assert len(drawn.splitlines()) > 2 and all(cell_len(line) <= 50
                                               for line in drawn.splitlines())
    assert summary in "".join(drawn.split())


def test_the_listing_cache_is_keyed_by_content(tmp_path):
    # One cached row per scene blob git has, nothing else.
    root = listed_store(tmp_path, count=2)
    scene_rows(open_store(root))
    kept = json.loads((root / ".scene-engine/cache/scene-rows.json").read_text("utf-8"))
    blobs = history.unchanged_blobs(root, "scenes")
    assert set(kept) == {blob for path, blob in blobs.items() if path.endswith(".md")}
    assert len(kept) == 3
