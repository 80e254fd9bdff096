"""Names and summaries a person would choose (issue 23): a scene is named by the nouns and
names of its memories, never by their verbs, adjectives, pleasantries or ids, and its summary
says its topic as a phrase, not as a list of whatever words were frequent.

Each memory set below gave one of the names users saw (``停跑-左膝-改成.md``,
``喝一杯-豆子-手冲.md``, ``年糕-挑食-名叫.md``, ``thanks-helping.md``,
``bacalhau-favourite-prefer.md``, ``john-maria-conv-30-d4.md``) or the summary "Porto, Pixel
and live" before; small inputs of our own."""

from __future__ import annotations

import re

import pytest

from scene_engine.offline.prose import summary
from scene_engine.offline.words import name_fits, scene_name, topic_phrase

KNEE_ZH = ["跑步的时候左膝疼，医生说是髌骨劳损，建议停跑两周。",
           "左膝还是有点疼，决定停跑，改成游泳。",
           "物理治疗师让我每天做左膝的康复训练，练股四头肌。",
           "停跑第三周，左膝不疼了，改成慢走和骑车。"]
COFFEE_ZH = ["我每天早上都要喝一杯手冲咖啡，最喜欢埃塞俄比亚的豆子。",
             "新买了一包云南的咖啡豆子，手冲出来有果酸味。",
             "手冲用的水温改成了92度，豆子磨得更细一点。",
             "周末去咖啡馆喝一杯，老板推荐了耶加雪菲的豆子。"]
CAT_ZH = ["我养了一只猫，名叫年糕，是只橘猫。", "年糕很挑食，只吃鸡肉味的猫粮。",
          "邻居家的猫名叫汤圆，年糕挑食，汤圆什么都吃。", "年糕挑食越来越严重，兽医建议改成湿粮。"]
THANKS_EN = ["Thanks for helping me with my resume yesterday!",
             "Thanks again for helping, the resume looks much better now.",
             "I really appreciate you helping me prepare for the interview, thanks!",
             "Thanks for helping me practise interview questions."]
BACALHAU_EN = ["My favourite dish is bacalhau à brás, I prefer it to any other cod dish.",
               "I prefer bacalhau with chickpeas when it is cold outside.",
               "Bacalhau is my favourite Christmas Eve dinner in Porto.",
               "We had bacalhau at a small tasca in Porto; still my favourite."]
# As a LoCoMo conversation's memories read when their source ids are in the text.
LOCOMO_EN = ["[conv-30 D4:3] John told Maria he started volunteering at the shelter.",
             "[conv-30 D4:7] Maria said she adopted a puppy named Coco from the shelter.",
             "[conv-30 D4:9] John asked Maria how Coco is doing at home.",
             "[conv-30 D4:12] Maria said Coco loves long walks in the park with John."]
PORTO_EN = ["I live in Porto now, near the river.",
            "My Pixel takes great photos of Porto at night.",
            "We live ten minutes from the centre of Porto.",
            "Dropped my Pixel on the tram in Porto; the screen survived."]

# set, the name users got, words of it (or like it) that must not name the scene again, one
# more memory of the same topic.
CASES = {
    "knee": (KNEE_ZH, "停跑-左膝-改成.md", {"停跑", "改成", "决定", "建议"},
             "左膝做了核磁共振，髌骨没有大问题，继续停跑一周。"),
    "coffee": (COFFEE_ZH, "喝一杯-豆子-手冲.md", {"喝一杯", "喜欢", "推荐", "改成"},
               "手冲壶换成了细嘴的，豆子还是埃塞俄比亚的。"),
    "cat": (CAT_ZH, "年糕-挑食-名叫.md", {"名叫", "挑食", "改成", "建议"},
            "年糕挑食的毛病好了一点，湿粮和猫粮混着吃。"),
    "thanks": (THANKS_EN, "thanks-helping.md", {"thanks", "helping", "appreciate", "practise"},
               "Thanks so much for helping me with the cover letter for the interview."),
    "bacalhau": (BACALHAU_EN, "bacalhau-favourite-prefer.md", {"favourite", "prefer", "still"},
                 "My favourite bacalhau in Porto is at the tasca near the market."),
    "locomo": (LOCOMO_EN, "john-maria-conv-30-d4.md", {"conv-30", "d4", "said", "loves"},
               "[conv-30 D4:15] Maria said Coco sleeps at the foot of her bed."),
    "porto": (PORTO_EN, "porto-pixel-live.md", {"live", "takes", "dropped", "survived"},
              "The light in Porto in the evening is perfect for my Pixel."),
}
# jieba's tags of nouns and names: nouns, people, places, organisations, other proper
# nouns, verbal nouns, abbreviations, Latin words (jieba.posseg's tag set).
NOUN_FLAGS = re.compile(r"^(n[a-z0-9]*|vn|j|eng)$")


def _words(name: str) -> list[str]:
    return name.removesuffix(".md").split("-")


def _posseg_nouns(word: str) -> bool:
    """True when jieba.posseg tags every piece of ``word`` as a noun or a name (a word of
    our own dictionary, ``猫粮``, is two nouns to jieba's)."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(40)
    return all(NOUN_FLAGS.match(flag) for _, flag in jieba.posseg.lcut(word))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_names_users_got_do_not_come_back_and_no_word_is_a_verb_or_an_id(case):
    texts, bad, not_names, _ = CASES[case]
    name = scene_name(texts, set())
    words = _words(name)
    assert name != bad and 1 <= len(words) <= 3, name
    assert not not_names & set(words), name
    assert not [w for w in words if re.search(r"\d", w)], name           # no conv-30, d4
    said = " ".join(texts).lower()
    assert all(w.replace("-", " ") in said or w in said for w in words), name


@pytest.mark.parametrize("case", ["knee", "coffee", "cat"])
def test_chinese_names_are_nouns_and_names_by_jieba_posseg(case):
    texts = CASES[case][0]
    words = _words(scene_name(texts, set()))
    assert words and all(_posseg_nouns(w) for w in words), words


def test_the_cat_and_the_thanks_keep_what_the_scene_is_about():
    assert "年糕" in _words(scene_name(CAT_ZH, set()))
    assert "左膝" in _words(scene_name(KNEE_ZH, set()))
    assert {"interview", "resume"} & set(_words(scene_name(THANKS_EN, set())))
    assert _words(scene_name(BACALHAU_EN, set()))[0] == "bacalhau"
    assert {"coco", "shelter", "puppy"} & set(_words(scene_name(LOCOMO_EN, set())))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_name_is_stable_in_order_and_under_one_more_memory_of_the_topic(case):
    texts, _, _, more = CASES[case]
    name = scene_name(texts, set())
    assert scene_name(list(reversed(texts)), set()) == name            # the same memories
    grown = [*texts, more]
    assert name_fits(name, grown)                # so rename_drifted keeps the scene's name
    # A scene opened from the grown set would still be named by the same main word (a word
    # the new memory says again may join or replace a word said once).
    assert _words(scene_name(grown, set()))[0] == _words(name)[0]


def test_a_name_that_no_noun_of_the_scene_fits_is_due_for_a_new_one():
    assert not name_fits("thanks-helping.md", THANKS_EN)     # only a pleasantry and a verb
    assert name_fits(scene_name(THANKS_EN, set()), THANKS_EN)
    assert not name_fits("停跑-改成.md", KNEE_ZH)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_summary_says_the_topic_in_nouns_and_names_then_the_span_and_the_latest(case):
    texts, _, not_names, _ = CASES[case]
    days = [(f"2026-0{i + 1}-1{i}", t) for i, t in enumerate(texts)]
    said = summary(days, [])
    topic, _, rest = re.split(r"([:：])", said, maxsplit=1)
    if re.search(r"[\u4e00-\u9fff]", topic):
        parts = re.split("[、和]", topic)
        assert all(_posseg_nouns(p) for p in parts), said
        assert rest.startswith("2026年1月至4月的4条记录。最近（4月13日）："), said
    else:
        parts = re.split(r", | and ", topic)
        assert not {p.lower() for p in parts} & not_names, said
        assert rest.startswith(" 4 entries from January to April 2026. Latest (13 Apr): "), said
    assert 1 <= len(parts) <= 3 and not {p.lower() for p in parts} & not_names, said
    assert len(said) <= 240 if topic.isascii() else len(said) <= 120


def test_porto_pixel_and_live_is_now_porto_and_pixel():
    said = summary([(f"2026-0{i + 1}-01", t) for i, t in enumerate(PORTO_EN)], [])
    assert said.startswith(("Porto and Pixel:", "Pixel and Porto:")), said


def test_words_said_together_stay_together_in_the_name_and_the_summary():
    club = ["Picked 'Convenience Store Woman' for the book club; it is short.",
            "Klara loved Convenience Store Woman, the others found it odd.",
            "Convenience Store Woman: we talked about work and belonging."]
    assert scene_name(club, set()).startswith("convenience-store-woman")
    assert topic_phrase(club, "en").startswith("Convenience Store Woman")
    reviews = ["The user always writes code reviews before lunch.",
               "The user always asks for code reviews on Rust pull requests.",
               "Code reviews of the Rust services take the user two hours a day."]
    assert "code reviews" in topic_phrase(reviews, "en").lower()


def test_who_spoke_names_no_scene_but_who_is_talked_about_may():
    turns = ["John: I started volunteering at the animal shelter on Saturdays.",
             "Maria: The shelter gave me a puppy, his name is Coco.",
             "John: Coco is lucky, the shelter was crowded.",
             "Maria: Coco chewed my slippers again."]
    words = _words(scene_name(turns, set()))
    assert not {"john", "maria"} & set(words) and {"shelter", "coco"} <= set(words), words


def test_a_scene_with_no_noun_still_gets_a_name_from_its_words_never_a_pleasantry():
    name = scene_name(["每天都去健身，坚持健身。", "健身打卡第十天。"], set())
    assert "健身" in _words(name)
    assert scene_name(["Thanks!", "Thanks again, thank you so much!"], set()) == "notes.md"
