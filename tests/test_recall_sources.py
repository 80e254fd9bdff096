"""Issue 21, item 10: recall names every passage's source one way, as docs/guides/search-and-recall.md's recall
section promises. A scene's sentence, and a memory a scene holds, are cited by the scene's
map tag (S1, S2, ...; a scene the map had no room for is added to it), never by a bare
scene name and never left untagged; a memory no scene holds has no tag; a passage is whole
sentences, never a quote the engine cut short ("Caroline: walking in…")."""

from __future__ import annotations

import json
import re

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.services.add import add_memories
from scene_engine.store import history
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store, open_store

runner = CheckedRunner()
ACTIVITIES = ["walking in the park with her dog Max every morning before work",
              "painting a watercolor of the old lighthouse near the harbor",
              "volunteering at the LGBTQ youth center downtown on weekends",
              "reading a novel about a family that moves to Alaska",
              "baking sourdough bread with a starter her grandmother gave her",
              "hiking the coastal trail with her friends from the support group",
              "learning to play the ukulele from online videos at night",
              "researching adoption agencies that welcome single parents"]
QUERIES = ["Caroline adoption agencies", "Melanie baking sourdough bread",
           "youth center volunteering", "What does Caroline do in the morning?",
           "lighthouse watercolor", "ukulele"]


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    assert result.exit_code == 0, result.output
    return result


def configured(root, **settings):
    """A new store with ``settings`` in config.toml, committed as a person would."""
    store = init_store(root)
    text = store.config_path.read_text("utf-8")
    for key, value in settings.items():
        text = re.sub(rf"(?m)^{key} = [^#\n]*", f"{key} = {value} ", text)
    store.config_path.write_text(text, "utf-8")
    history.commit_files(git.Repo(root), "hand edit: config.toml", [".scene-engine/config.toml"])
    return open_store(root)


@pytest.fixture(scope="module")
def rolled(tmp_path_factory):
    """A store whose few small scenes had to roll their oldest entries up into digests
    (facts merged by theme, some given up), folded by the engine itself. Since issue 36 the
    engine cuts no fact short; a digest an older engine cut is
    ``test_a_cut_quote_is_shown_as_the_memory_it_cites_whole``'s."""
    store = configured(tmp_path_factory.mktemp("rolled") / "s", max_scenes=3,
                       max_scene_chars=600)
    rows = [{"id": f"m{i:02d}", "content": f"{('Caroline', 'Melanie')[i * 3 % 5 == 1]}: "
             f"{ACTIVITIES[(i * 5) % 8]}, she said on day {i}.",
             "created_at": f"2023-{1 + i // 4:02d}-{1 + (i % 4) * 7:02d}T10:00:00Z"}
            for i in range(40)]
    add_memories(store, json.dumps(rows).encode())
    invoke("--dir", store.root, "run")
    bodies = "".join((store.scenes_dir / n).read_text("utf-8") for n in store.scene_names())
    assert "(digest)" in bodies and "…" not in bodies    # the case this file is about
    return store


def recall_both(store, query, budget):
    text = invoke("--dir", store.root, "recall", query, "--budget", budget).stdout
    data = json.loads(invoke("--dir", store.root, "recall", query, "--budget", budget,
                             "--json").stdout)     # a warning (the persona did not fit): stderr
    assert data["text"] == text
    return text, data


def map_tags(text: str) -> dict[str, str]:
    """{tag: scene name} of the text's scene map."""
    if "## Scenes\n" not in text:
        return {}
    lines = text.split("## Scenes\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return {line.split(" ")[0]: line.split(" ")[1] for line in lines}


@pytest.mark.parametrize("budget", [300, 600, 1500, 4000])
@pytest.mark.parametrize("query", QUERIES)
def test_every_passage_names_its_source_by_a_map_tag_or_not_at_all(rolled, query, budget):
    text, data = recall_both(rolled, query, budget)
    assert len(text) <= budget
    tags = map_tags(text)
    assert list(tags) == [f"S{i}" for i in range(1, len(tags) + 1)]
    assert [row["name"] for row in data["scenes"]] == list(tags.values())
    lines = text.split("## Passages\n", 1)[1].splitlines() if data["passages"] else []
    cited = [line for line in lines if line.startswith("- [")]
    assert all(re.match(r"- \[S\d+\] ", line) for line in cited), cited   # never a bare name
    for passage in data["passages"]:
        if "scene" in passage:
            assert tags[passage["tag"]] == passage["scene"]
            assert f"- [{passage['tag']}] {passage['text']}" in lines
        else:
            assert "tag" not in passage and f"- {passage['text']}" in lines


@pytest.mark.parametrize("query", QUERIES)
def test_a_memory_a_scene_holds_is_cited_with_that_scene(rolled, query):
    _, data = recall_both(rolled, query, 4000)
    memories = [p for p in data["passages"] if "memory" in p]
    assert memories
    for passage in memories:
        trace = json.loads(invoke("--dir", rolled.root, "trace", passage["memory"],
                                  "--json").output)
        if trace["scenes"]:                 # the scene holds it: cited with it
            assert passage.get("scene") in trace["scenes"], passage


@pytest.mark.parametrize("budget", [300, 4000])
@pytest.mark.parametrize("query", QUERIES)
def test_a_passage_is_whole_sentences_never_a_cut_quote(rolled, query, budget):
    _, data = recall_both(rolled, query, budget)
    journal = {m.id: " ".join(m.content.split()) for m in Journal(rolled.memories_dir).all()}
    for passage in data["passages"]:
        assert not passage["text"].endswith("…"), passage
        if "memory" in passage:
            assert passage["text"] == journal[passage["memory"]]


def scene_file(store, name: str, body: str) -> None:
    """A scene a person (or an older engine) wrote: header and body, committed."""
    (store.scenes_dir / name).write_text(
        "---\ncreated: 2023-06-01T00:00:00+00:00\nupdated: 2023-06-01T00:00:00+00:00\n"
        f"summary: {name.removesuffix('.md')}\nheat: 2\n---\n{body}", encoding="utf-8")
    history.commit_files(git.Repo(store.root), "hand edit", [f"scenes/{name}"])


def test_a_cut_quote_is_shown_as_the_memory_it_cites_whole(tmp_path):
    store = init_store(tmp_path / "s")
    walk = ("Caroline: walking in the park every morning with her dog Max helps her think "
            "before her long shifts at the hospital.")
    rows = [{"id": "walk", "content": walk, "created_at": "2023-05-07T10:00:00Z"},
            # shorter memories that the index ranks above it for the same words
            *({"id": f"w{i}", "content": f"Caroline walking number {i} today, it was grey.",
               "created_at": "2023-05-08T10:00:00Z"} for i in range(80))]
    add_memories(store, json.dumps(rows).encode())
    # The second quote cites a memory the journal does not show (forgotten): left out.
    scene_file(store, "caroline-mornings.md",
               "## Timeline (UTC)\n- 2023-05 (digest): 7 May: Caroline: walking in the park "
               "every… [walk]; 9 May: Caroline: walking the coastal… [ghost]\n")
    text, data = recall_both(store, "Caroline walking", 1000)
    quoted = [p for p in data["passages"] if p.get("scene") == "caroline-mornings.md"]
    assert [p["memory"] for p in quoted] == ["walk"]       # the memory the digest cites
    assert quoted[0]["text"] == walk and quoted[0]["tag"] == "S1"
    assert f"- [S1] {walk}\n" in text
    assert "…" not in text.split("## Passages\n", 1)[1]   # no cut quote, of any memory


def test_a_scene_the_map_had_no_room_for_is_added_to_it(tmp_path):
    store = init_store(tmp_path / "s")
    long_name = "caroline-support-group-accepted-lgbtq-community-evenings-downtown.md"
    scene_file(store, long_name, "## Timeline (UTC)\n- 2023-05-07: Caroline went to the "
                                 "LGBTQ support group and felt accepted.\n")
    text, data = recall_both(store, "Caroline support group", 400)
    (passage,) = data["passages"]
    assert passage["scene"] == long_name and passage["tag"] == "S1"
    assert f"S1 {long_name} (heat 2)" in text
    assert "- [S1] Caroline went to the LGBTQ support group and felt accepted." in text
    assert f"[{long_name.removesuffix('.md')}]" not in text


def test_a_memory_whose_scene_is_not_among_the_candidates_is_cited_with_it(tmp_path):
    store = init_store(tmp_path / "s")
    walk = "Caroline: walking in the park every morning with her dog Max before work."
    add_memories(store, json.dumps([{"id": "walk", "content": walk,
                                     "created_at": "2023-05-07T10:00:00Z"}]).encode())
    invoke("--dir", store.root, "run")
    (home,) = store.scene_names()
    for i in range(20):     # scenes that match the question better than the memory's own
        scene_file(store, f"dog-max-morning-{i:02d}.md", f"Dog Max barked {i} mornings.\n")
    _, data = recall_both(store, "dog Max morning", 4000)
    (passage,) = [p for p in data["passages"] if p.get("memory") == "walk"]
    assert passage["scene"] == home and passage["text"] == walk
    assert data["scenes"][int(passage["tag"][1:]) - 1]["name"] == home


@pytest.mark.parametrize("edit", ["removed", "reworded"])
def test_a_line_a_person_took_out_of_a_scene_no_longer_cites_that_scene(tmp_path, edit):
    """The ledgers still name the scene a batch put a memory in; after a person removes (or
    rewrites beyond recognition) its line, recall cites the memory with no scene, as
    ``trace`` says it is in none, while the scene's other memories stay cited."""
    store = init_store(tmp_path / "s")
    rows = [("dinner", "Hosted a dinner with six dishes for Marta and the team."),
            ("design", "Marta prefers written design docs over meetings at Northwind."),
            ("ship", "Shipped the parcel-tracking API at Northwind with Marta's team.")]
    add_memories(store, json.dumps([{"id": i, "content": t,
                                     "created_at": f"2026-0{n + 1}-05T10:00:00Z"}
                                    for n, (i, t) in enumerate(rows)]).encode())
    invoke("--dir", store.root, "run")
    (name,) = store.scene_names()
    path = store.scenes_dir / name
    text = path.read_text("utf-8")
    line = next(x for x in text.splitlines() if "six dishes" in x)
    new = "" if edit == "removed" else "- 2026-01-05: Cooked for Marta's team.\n"
    path.write_text(text.replace(line + "\n", new), "utf-8")
    history.commit_files(git.Repo(store.root), "hand edit", [f"scenes/{name}"],
                         by_person=True)
    _, data = recall_both(store, "dinner six dishes Marta team", 4000)
    (dinner,) = [p for p in data["passages"] if p.get("memory") == "dinner"]
    assert "scene" not in dinner, dinner
    trace = json.loads(invoke("--dir", store.root, "trace", "dinner", "--json").output)
    assert trace["scenes"] == []
    _, data = recall_both(store, "Marta written design docs", 4000)
    cited = [p for p in data["passages"] if p.get("memory") == "design" or p.get("scene")]
    assert cited and all(p.get("scene") == name for p in cited), cited
