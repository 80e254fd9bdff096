"""What the model is told: role, template, tier, scene list, readable files, related scenes."""

from __future__ import annotations

import json
import re

import pytest

from scene_engine.batch.transaction import build_job, select_batch
from scene_engine.services.add import add_memories
from scene_engine.store.store import init_store, open_store


def scene(summary: str, body: str, heat: int = 2) -> str:
    return (f"---\ncreated: 2026-01-01T00:00:00+00:00\nupdated: 2026-02-01T00:00:00+00:00\n"
            f"summary: {summary}\nheat: {heat}\n---\n{body}\n")


SCENES = {
    "hiking.md": scene("Weekend hikes in the Alps with Anna.", "Hiked the Zermatt trail in June."),
    "work.md": scene("Data engineer at Acme; manager Rita.", "Rita praised the pipeline work."),
    "cooking.md": scene("Vegetarian cooking at home.", "Makes palak paneer for friends."),
    "garden.md": scene("Tomatoes and roses on the balcony.", "Planted roses in April."),
}


def make_job(tmp_path, memories: list[dict], scenes=SCENES, language: str | None = None):
    store = init_store(tmp_path / "s")
    for name, text in scenes.items():
        (store.scenes_dir / name).write_text(text, encoding="utf-8")
    if language:
        store.config_path.write_text(store.config_path.read_text("utf-8").replace(
            'language = "auto"', f'language = "{language}"'), "utf-8")
        store = open_store(store.root)
    add_memories(store, "\n".join(json.dumps(m, ensure_ascii=False) for m in memories).encode())
    picked = select_batch(store, store.load_state(), 20)
    return build_job(store, 1, picked)


HIKE = [{"id": "h1", "content": "Hiked to the Matterhorn base with Anna last Saturday.",
         "created_at": "2026-07-06T18:00:00Z"},
        {"id": "w1", "content": "Rita asked me to lead the Acme pipeline migration.",
         "created_at": "2026-07-07T09:00:00Z"}]


def test_the_system_message_states_the_scene_rules(tmp_path):
    system = make_job(tmp_path, HIKE).messages[0]["content"]
    for rule in ("Update before you create", "At most one new scene", "merged_from",
                 "[DELETED]", "narrative", "absolute", "contradictions", "1500 characters",
                 "summary:", "PERSONA_UPDATE_REQUEST", "read_file"):
        assert rule in system, rule


def test_the_batch_message_lists_scenes_files_template_and_dated_memories(tmp_path):
    job = make_job(tmp_path, HIKE)
    user = job.messages[1]["content"]
    for name in SCENES:
        assert f"- {name} (heat 2, updated 2026-02-01T00:00:00+00:00): " in user
    assert "Files you may read: cooking.md, garden.md, hiking.md, work.md" in user
    for section in ("## Basics", "## Core traits", "## Preferences", "## Implicit signals",
                    "## Core narrative", "## Evolution", "## Open threads"):
        assert section in user
    assert "- [2026-07-06 18:00 UTC] (h1) Hiked to the Matterhorn base" in user
    assert "Scenes now (4 of at most 14)" in user and "plenty of room" in user


def test_the_most_related_scenes_are_shown_in_full_and_count_as_read(tmp_path):
    job = make_job(tmp_path, HIKE)
    user = job.messages[1]["content"]
    related = user.split("## Full text of the scenes most related to this batch")[1]
    assert "### hiking.md" in related and "Zermatt trail" in related
    assert "### work.md" in related and "pipeline work" in related
    assert "### garden.md" not in related                     # unrelated: listed, not shown
    assert {"hiking.md", "work.md"} <= job.context.shown


@pytest.mark.parametrize("count, words", [(0, "no scenes yet"), (12, "getting full"),
                                          (14, "Do not create a scene")])
def test_the_tier_message_follows_the_scene_count(tmp_path, count, words):
    scenes = {f"area-{i}.md": scene(f"Area {i}.", f"Body {i}.") for i in range(count)}
    user = make_job(tmp_path, HIKE, scenes=scenes).messages[1]["content"]
    assert words in user


def test_chinese_memories_get_the_chinese_prompt_unless_configured(tmp_path):
    memories = [{"content": "今天在上海和李伟喝咖啡，聊了很久。", "created_at": "2026-03-01T10:00:00Z"}]
    job = make_job(tmp_path / "a", memories)
    assert job.language == "zh" and "场景" in job.messages[0]["content"]
    assert "## 新记忆（第 1 批）" in job.messages[1]["content"]
    forced = make_job(tmp_path / "b", memories, language="en")
    assert forced.language == "en" and "Update before you create" in forced.messages[0]["content"]


def test_a_scene_with_a_broken_header_is_listed_but_not_readable(tmp_path):
    scenes = dict(SCENES, **{"broken.md": "---\nsummary: [unclosed\n---\nHiking notes.\n"})
    with pytest.warns(UserWarning, match=r"leaves scenes/broken\.md alone: its header cannot "
                      r"be read \(broken\.md, line 3"):
        job = make_job(tmp_path, HIKE, scenes=scenes)
    user = job.messages[1]["content"]
    assert re.search(r"- broken\.md .*leave this file alone", user)
    assert "broken.md" not in user.split("Files you may read:")[1].splitlines()[0]
    assert job.box.execute("read_file", {"path": "broken.md"}).startswith("Error:")
