"""Digests a person can trust (issue 36 item 4): no line the engine writes is cut mid-sentence
or mid-word, and a memory's fact does not leave every scene while there is room. A full scene
gives up whole facts, the same kind of day said again first; a first home, a first job and a
manager's name (facts that bring a name or a place to the scene) stay at every depth."""

from __future__ import annotations

import json
import random
import re
from datetime import date, timedelta

from scene_engine.core.periods import parse_fact
from scene_engine.offline.prose import summary
from scene_engine.offline.rollup import condense
from scene_engine.offline.timeline import Draft, Entry, render_body
from scene_engine.services.add import add_memories
from scene_engine.services.backends import make_backend
from scene_engine.services.run import run_pending
from scene_engine.store.scene import parse_scene
from scene_engine.store.store import init_store

ZONE = "UTC"
CUT = re.compile(r"…|\.\.\.")

FIRSTS = [
    ("2019-09-01", "Got the keys to my first flat, a one-bedroom on Elm Street in Leeds."),
    ("2019-09-16", "Started my first job as a junior analyst at Harrow & Finch in Leeds."),
    ("2019-09-18", "My manager at Harrow & Finch is Gwen Parry; she wants a status note every "
                   "Friday."),
]
CHANGES = [
    ("2020-07-03", "Adopted a grey cat from the Leeds shelter and named her Miso."),
    ("2021-03-20", "Moved to Manchester, into a flat above a bakery on Oldham Street."),
    ("2021-04-06", "Left Harrow & Finch and joined Corvid Systems as a data analyst."),
    ("2021-04-08", "My new manager at Corvid Systems is Tomasz Nowak."),
    ("2022-11-02", "Promoted to senior analyst at Corvid Systems."),
    ("2024-01-27", "Bought a terraced house in Stockport with Jess."),
    ("2024-05-13", "Started a new job as analytics lead at Pellow Health in Stockport."),
]
EVERYDAY = [
    "Ran {n} km along the canal before work; legs heavy but the rain held off, and I beat "
    "last week's time.",
    "Cooked a {dish} for dinner from the green cookbook, and there was enough left for lunch.",
    "Called Mum on Sunday evening; she talked about her {thing} for an hour and asked when "
    "I'm visiting.",
    "Long day at {work} closing the monthly reports; the numbers did not reconcile until "
    "after seven.",
    "Team meeting at {work} ran over by an hour again; nothing decided and three new action "
    "items for me.",
    "Read {n} chapters of {book} on the train to {work}; the carriage was packed and I stood.",
    "Went to the gym after work: legs and core, then a slow swim; the pool was nearly empty.",
    "Did the weekly big shop at the supermarket, spent more than planned, and forgot the milk.",
    "Cleaned the {home} from top to bottom and did three loads of laundry with a podcast on.",
    "Miso knocked a {thing} off the shelf in the {home} again and then sat there looking "
    "pleased.",
    "Watered the tomatoes and basil on the balcony of the {home}; the basil is taking off.",
    "Pub quiz with Dan and Priya at the Crown; we came {n}th out of twelve teams.",
    "Practised the piano for forty minutes: scales, then the {piece} until my hands were "
    "tired.",
    "Dentist check-up at the practice on Station Road; no fillings, just a scale and polish.",
    "Paid the {bill} bill online and moved the rest of the month's money into savings.",
    "Dropped the bike at the repair shop; the gears slip and the back brake squeals.",
]
FILL = {"dish": ["lentil curry", "mushroom risotto", "fish pie", "ramen"],
        "thing": ["garden", "choir", "knee", "book club", "mug", "plant pot"],
        "book": ["Middlemarch", "Dune", "Piranesi", "Educated"],
        "piece": ["Chopin nocturne", "Bach prelude", "Satie Gymnopédie"],
        "bill": ["electricity", "gas", "water", "phone"]}


def life(total: int = 150) -> list[dict]:
    """A generated everyday life, oldest first: a first home, a first job and its manager,
    moves and job changes, and many everyday memories (the same kinds of day again)."""
    rng = random.Random(7)
    rows = FIRSTS + CHANGES
    start, days = date(2019, 9, 2), (date(2024, 12, 20) - date(2019, 9, 2)).days
    everyday = total - len(rows)
    for i in range(everyday):
        day = (start + timedelta(days=days * i // everyday + rng.randrange(5))).isoformat()
        work = ("Harrow & Finch" if day < "2021-04-06" else "Corvid Systems"
                if day < "2024-05-13" else "Pellow Health")
        home = ("Elm Street flat" if day < "2021-03-20" else "Oldham Street flat"
                if day < "2024-01-27" else "Stockport house")
        text = rng.choice(EVERYDAY).format(n=rng.randrange(3, 13), work=work, home=home,
                                           **{k: rng.choice(v) for k, v in FILL.items()})
        rows.append((day, text))
    rows.sort(key=lambda r: r[0])
    return [{"id": f"life-{i:03d}", "content": text, "created_at": f"{day}T{8 + i % 10:02d}:00:00Z"}
            for i, (day, text) in enumerate(rows)]


def _digests(draft: Draft) -> list[str]:
    return [line for line in render_body(draft, ZONE).splitlines() if "(digest)" in line]


def _whole_or_named(fact: str, sources: list[str]) -> bool:
    """True when ``fact`` is one of ``sources`` whole, its first whole clauses, or (the last
    resort) a phrase of words one of them says."""
    for source in (t.rstrip(".").replace("; ", ", ") for t in sources):
        if source.startswith(fact) and source[len(fact):][:1] in ("", ",", ":"):
            return True
    phrase = set(re.split(r",? and |, ", fact))
    return any(all(w in source for w in phrase) for source in sources)


def test_a_digest_says_its_facts_whole_and_never_cuts_one_short():
    # Depth after depth and in the last resort, a fact is said whole or by a phrase of its
    # own words (it was "Got the keys to my first flat, a one-bedroom on…").
    rows = [(day, text) for day, text in FIRSTS]
    rows += [(f"2020-{m:02d}-{d:02d}", EVERYDAY[(m + d) % len(EVERYDAY)].format(
        n=m, dish="fish pie", thing="garden", work="Harrow & Finch", book="Dune",
        home="Elm Street flat", piece="Bach prelude", bill="gas"))
        for m in range(1, 13) for d in (4, 18)]
    for limit in (2400, 1200, 600, 300):
        draft = Draft("s.md", {}, "", [Entry(day, text) for day, text in rows])
        condense(draft, limit, ZONE, squeeze=True)
        assert _digests(draft)
        for line in _digests(draft):
            assert not CUT.search(line), line
            period, facts = re.match(r"- (\S+) \(digest\): (.*)$", line).groups()
            for fact in facts.split("; "):
                said = parse_fact(fact, period)
                assert said and _whole_or_named(said[3], [t for _, t in rows]), fact


def test_a_full_scene_gives_up_the_same_kind_of_day_before_a_first_job_or_a_manager():
    # A quarter digest kept only what its word list called a milestone: "Started my first
    # job" and "My manager ... is Gwen Parry" were not, and left every scene (issue 36).
    rows = [(day, text) for day, text in FIRSTS]
    rows += [(f"2019-{m:02d}-{d:02d}", "Went to the gym after work: legs and core, then a "
                                       "slow swim; the pool was nearly empty.")
             for m in (9, 10, 11, 12) for d in (3, 10, 24)]
    rows += [(f"2019-{m:02d}-{d:02d}", f"Called Mum on Sunday evening; she talked about her "
                                       f"{thing} for an hour.")
             for m, d, thing in ((9, 8, "garden"), (10, 13, "choir"), (11, 17, "knee"),
                                 (12, 15, "garden"))]
    rows += [(f"2020-01-{d:02d}", "Went to the gym after work: legs and core, then a slow "
                                  "swim; the pool was nearly empty.") for d in (5, 19)]
    draft = Draft("s.md", {}, "", [Entry(day, text) for day, text in sorted(rows)])
    assert condense(draft, 460, ZONE)
    body = render_body(draft, ZONE)
    for words in ("Elm Street in Leeds", "first job", "Harrow & Finch", "Gwen Parry"):
        assert words in body, body
    assert not CUT.search(body)
    # The gym, said fourteen times, is what went (said once, with how many times, at most).
    assert body.count("Went to the gym") <= 1, body


def test_a_summary_quotes_whole_clauses_never_a_cut_word():
    long = ("Told Marta I am staying at Northwind after all; the startup offer was too risky, "
            "the equity was thin, the founders had never shipped, and my team needs me for "
            "the migration.")
    said = summary([("2026-11-15", long)], [])
    assert not CUT.search(said), said
    latest = said.split("Latest (15 Nov): ", 1)[1]
    assert long.startswith(latest) and long[len(latest)] in ";,", latest
    # One clause longer than any summary: named by its own nouns, not cut.
    endless = "Wrote " + " and ".join(f"report {w}" for w in ("alpha", "beta", "gamma", "delta",
                                                            "epsilon", "zeta", "eta", "theta",
                                                            "iota", "kappa", "lambda", "mu",
                                                            "nu", "xi", "omicron", "pi",
                                                            "rho", "sigma", "tau", "upsilon",
                                                            "phi", "chi", "psi", "omega",
                                                            "one", "two", "three", "four"))
    said = summary([("2026-11-16", endless)], [])
    assert not CUT.search(said) and len(said) < 300, said
    text = "决定留在公司，" + "".join(f"第{i}个原因是创业公司的股权太少，" for i in range(9)) + "团队也需要我。"
    zh = summary([("2026-11-15", text)], [])
    latest = zh.split("最近（11月15日）：", 1)[1]
    assert not CUT.search(zh) and text.startswith(latest) and text[len(latest)] == "，", zh


def test_a_folded_life_keeps_its_first_home_job_and_manager_and_no_line_is_cut(tmp_path):
    # 150 everyday memories, default settings (14 scenes of 1,500 characters, far more room
    # than their text): a quarter digest left the first home in no scene, cut to "a
    # one-bedroom on…", and 18 digest lines ended in a cut word.
    store = init_store(tmp_path / "s")
    add_memories(store, json.dumps(life(150)).encode())
    run_pending(store, make_backend("offline"), size=20)
    assert store.load_state().pending == 0
    lines, summaries = [], []
    for name in store.scene_names():
        scene = parse_scene((store.scenes_dir / name).read_text("utf-8"), name)
        lines += [line for line in scene.body.splitlines() if line.startswith("- ")]
        summaries.append(str(scene.meta.get("summary", "")))
    assert any("(digest)" in line for line in lines)          # full scenes rolled up
    for line in lines + summaries:
        assert not CUT.search(line), line
    for words in (("first flat", "Elm Street", "Leeds"), ("first job", "Harrow & Finch"),
                  ("manager", "Gwen Parry"), ("manager", "Tomasz Nowak")):
        assert any(all(w in line for w in words) for line in lines), words
