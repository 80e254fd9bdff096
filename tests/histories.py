"""Everyday histories for the offline backend (issue 37, part 0): what a person's memories look
like over years, to fold with default settings.

``everyday(seed, total)`` is the issue's history: eight people, eight cities, a dozen
recurring things, short English and Chinese sentences from a few templates ("Talked with
Mirela about the road bike in Graz.", 和Mirela在Graz聊了很久, 最近睡得不好，早上很累,
Mirela推荐我去Graz玩), many alike, a few negated or contradicting an earlier one, spread over
five years. ``histories()`` is a hypothesis strategy of such histories in many shapes:
templates repeated heavily, near-duplicates, dense days, long gaps, contradictions, English
and Chinese mixed. Every memory has an explicit id and ``created_at``, so a history is the
same run after run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import strategies as st

PEOPLE = ["Mirela", "Tomas", "Ana", "Jonas", "Priya", "Kenji", "Sofia", "Lukas"]
CITIES = ["Graz", "Porto", "Lyon", "Kyoto", "Tallinn", "Bergen", "Oaxaca", "Hangzhou"]
THINGS = ["road bike", "piano", "sourdough starter", "balcony garden", "old laptop", "camera",
          "kayak", "guitar", "tomatoes", "car", "cat", "flat"]
THINGS_ZH = ["自行车", "钢琴", "酸面团", "阳台花园", "旧电脑", "相机", "皮划艇", "吉他", "番茄",
             "汽车", "猫", "房子"]
EPOCH = 1_577_836_800          # 2020-01-01T00:00:00Z
FIVE_YEARS = 5 * 365 * 86_400

# {p} a person, {c} a city, {t} a thing (English), {z} the thing in Chinese.
ENGLISH = [
    "Talked with {p} about the {t} in {c}.",
    "{p} recommended I visit {c}.",
    "Had dinner with {p} in {c}.",
    "Fixed the {t} again.",
    "Slept badly, tired in the morning.",
    "Spent the weekend in {c} with {p}.",
    "{p} called about the {t}.",
    "Bought new parts for the {t}.",
    "Did not sleep well again.",
    "{p} is not coming to {c} after all.",
]
CHINESE = [
    "和{p}在{c}聊了很久",
    "最近睡得不好，早上很累",
    "{p}推荐我去{c}玩",
    "今天修了{z}",
    "和{p}一起吃晚饭",
    "{p}不想去{c}了",
    "周末在{c}",
    "{z}又坏了",
]
# A later memory saying the opposite of an earlier one (the seed's rule: kept, dated).
CONTRADICTIONS = [
    ("I love living in {c}.", "I no longer like living in {c}."),
    ("{p} lives in {c}.", "{p} does not live in {c} anymore; moved away."),
    ("我喜欢{z}", "我不喜欢{z}了"),
]


@dataclass(frozen=True)
class Shape:
    """How a drawn history looks: ``total`` memories, ``templates`` of the lists above in use
    (fewer: heavier repetition), ``chinese`` share, ``near`` share of near-duplicates (a
    sentence said again the same or the next day, a word changed), ``dense`` share said on a
    few crowded days, ``gap`` years of silence in the middle, ``contradictions`` pairs."""

    total: int
    templates: int
    chinese: float
    near: float
    dense: float
    gap: int
    contradictions: int
    seed: int


def _fill(template: str, rng: random.Random, people: list[str], cities: list[str]) -> str:
    index = rng.randrange(len(THINGS))
    return template.format(p=rng.choice(people), c=rng.choice(cities), t=THINGS[index],
                           z=THINGS_ZH[index])


def _times(shape: Shape, rng: random.Random) -> list[int]:
    """``shape.total`` instants over five years (ascending), a ``dense`` share on a handful of
    days, none in a ``gap``-year hole in the middle."""
    crowded = [EPOCH + rng.randrange(FIVE_YEARS) for _ in range(3)]
    hole = (EPOCH + FIVE_YEARS // 3, EPOCH + FIVE_YEARS // 3 + shape.gap * 365 * 86_400)
    out = []
    while len(out) < shape.total:
        if rng.random() < shape.dense:
            instant = rng.choice(crowded) + rng.randrange(86_400)
        else:
            instant = EPOCH + rng.randrange(FIVE_YEARS + shape.gap * 365 * 86_400)
        if not hole[0] <= instant < hole[1]:
            out.append(instant)
    return sorted(out)


def history(shape: Shape) -> list[dict]:
    """The memories of ``shape`` as ``scenes add`` records (``id``, ``content``,
    ``created_at`` in epoch seconds), oldest first."""
    rng = random.Random(shape.seed)
    english = ENGLISH[: max(1, shape.templates)]
    chinese = CHINESE[: max(1, shape.templates)]
    texts: list[str] = []
    for _ in range(shape.total):
        if texts and rng.random() < shape.near:        # said again, maybe a word changed
            text = texts[-1 - rng.randrange(min(5, len(texts)))]
            if rng.random() < 0.5:
                text = text.replace(rng.choice(CITIES), rng.choice(CITIES), 1)
        else:
            pool = chinese if rng.random() < shape.chinese else english
            text = _fill(rng.choice(pool), rng, PEOPLE, CITIES)
        texts.append(text)
    for _ in range(shape.contradictions):
        before, after = rng.choice(CONTRADICTIONS)
        i, j = sorted(rng.sample(range(shape.total), 2)) if shape.total > 1 else (0, 0)
        person, city, index = rng.choice(PEOPLE), rng.choice(CITIES), rng.randrange(len(THINGS))
        texts[i] = before.format(p=person, c=city, z=THINGS_ZH[index])
        texts[j] = after.format(p=person, c=city, z=THINGS_ZH[index])
    times = _times(shape, rng)
    return [{"id": f"v{n:05d}", "content": text, "created_at": instant}
            for n, (text, instant) in enumerate(zip(texts, times, strict=True))]


def everyday(seed: int = 37, total: int = 3000) -> list[dict]:
    """The issue's history: ``total`` memories, both languages about evenly, half of them
    near-repeats of a recent one, a few contradictions, over five years."""
    return history(Shape(total=total, templates=len(ENGLISH), chinese=0.5, near=0.3,
                         dense=0.02, gap=0, contradictions=total // 200, seed=seed))


def histories(most: int = 400) -> st.SearchStrategy[list[dict]]:
    """Histories of many shapes, up to ``most`` memories (see ``Shape``)."""
    shapes = st.builds(Shape, total=st.integers(1, most), templates=st.integers(1, 10),
                       chinese=st.sampled_from([0.0, 0.5, 1.0]),
                       near=st.sampled_from([0.0, 0.3, 0.8]),
                       dense=st.sampled_from([0.0, 0.1, 0.6]), gap=st.integers(0, 3),
                       contradictions=st.integers(0, 5), seed=st.integers(0, 2**16))
    return shapes.map(history)
