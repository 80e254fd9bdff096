"""Rollups by theme (issue 23 item 3, seed 000's hierarchical rollups): a digest line says
each theme of its period in a sentence with its date range, carries every milestone, says
less at each depth, and writes no memory id, keyword list or "N more" into the scene."""

from __future__ import annotations

import re

from scene_engine.batch.conservation import held, keeps
from scene_engine.offline.prose import shorten
from scene_engine.offline.rollup import Fact, condense, is_milestone, render, themes
from scene_engine.offline.timeline import Draft, Entry, render_body

ZONE = "UTC"


def draft_of(rows: list[tuple[str, str]], **flags) -> Draft:
    return Draft("s.md", {}, "", [Entry(day, text, **flags) for day, text in rows])


def badminton_year() -> list[tuple[str, str]]:
    rows = []
    for month in range(1, 13):
        for week in (3, 17):
            rows.append((f"2025-{month:02d}-{week:02d}",
                         f"Played badminton with Wei at the community centre, week {week}."))
        rows.append((f"2025-{month:02d}-09", f"Read chapter {month} of the Rust book on the train."))
    rows.append(("2025-05-20", "Moved to Porto with Ana."))
    rows.append(("2025-09-02", "Started a new job at Northwind as a data engineer."))
    return sorted(rows)


def digests(draft: Draft) -> list[str]:
    return [line for line in render_body(draft, ZONE).splitlines() if "(digest)" in line]


def test_one_theme_becomes_one_fact_with_its_range_and_count():
    draft = draft_of([(f"2025-03-{d:02d}", f"Played badminton with Wei at the community centre, game {d}.")
                      for d in (4, 11, 18, 29)] + [("2025-03-12", "Bought a new blue raincoat.")])
    assert condense(draft, 150, ZONE, deep=False)
    (line,) = digests(draft)
    assert re.search(r"4–29 Mar ×4: Played badminton with Wei", line)
    assert "12 Mar: Bought a new blue raincoat" in line            # a fact of its own, as said


def test_milestones_survive_every_depth_and_deeper_digests_say_less():
    rows = badminton_year()
    sizes = {}
    for limit in (2400, 1200, 500):
        draft = draft_of(rows)
        assert condense(draft, limit, ZONE)
        body, text = render_body(draft, ZONE), "\n".join(digests(draft))
        assert "Moved to Porto" in body and "Started a new job at Northwind" in body
        sizes[limit] = len(body)
        # No id list, no count of "more", no keyword list: sentences with their dates.
        assert not re.search(r"\[|\d+ more|\d+ entries", text)
        for fact in (f for line in digests(draft) for f in line.split(": ", 1)[1].split("; ")):
            assert re.match(r"\d{1,2}(–\d{1,2})? [A-Z][a-z]{2}(–\d{1,2} [A-Z][a-z]{2})?( ×\d+)?: \S", fact), fact
    assert sizes[500] < sizes[1200] < sizes[2400]
    year = draft_of(rows)
    condense(year, 500, ZONE)
    assert any(line.startswith("- 2025 (digest)") for line in digests(year))
    line = next(line for line in digests(year) if line.startswith("- 2025 (digest)"))
    assert re.search(r"×\d+: Played badminton with Wei", line)   # the year's largest theme


def test_a_quarter_digest_is_shorter_than_its_month_children():
    facts = [Fact(f"2025-0{m}-{d:02d}", f"2025-0{m}-{d:02d}", text)
             for m in (1, 2, 3) for d, text in ((3, "Played badminton with Wei at the centre."),
                                                 (9, f"Tried a new ramen place number {m}."),
                                                 (20, "Played badminton with Wei at the centre again."))]
    months = sum(len(render([f for f in facts if f.start[5:7] == f"0{m}"], 1)) for m in (1, 2, 3))
    assert len(render(facts, 2)) < months
    assert "×6" in render(facts, 2)


def test_chinese_milestones_and_themes():
    rows = [(f"2025-04-{d:02d}", f"和小林在社区中心打羽毛球，第{d}次。") for d in (2, 9, 16, 23)]
    rows += [("2025-04-12", "我们搬到杭州了。"), ("2025-04-15", "医生确诊我有轻度贫血。")]
    assert is_milestone("我们搬到杭州了。") and is_milestone("医生确诊我有轻度贫血。")
    assert not is_milestone("和小林在社区中心打羽毛球。")
    draft = draft_of(rows)
    assert condense(draft, 110, ZONE)
    text = "\n".join(digests(draft))
    assert "搬到杭州" in text and "确诊" in text and "×4" in text


def test_this_batchs_entries_and_a_persons_lines_are_never_rolled():
    rows = badminton_year()
    draft = Draft("s.md", {}, "", [Entry(d, t, fresh=True) for d, t in rows[-3:]]
                  + [Entry("2025-01-01", "- 2025-01-01: my own note, as I wrote it", person=True)]
                  + [Entry(d, t) for d, t in rows[:-3]])
    condense(draft, 600, ZONE)
    body = render_body(draft, ZONE)
    assert "- 2025-01-01: my own note, as I wrote it" in body.splitlines()
    assert all(t in body for _, t in rows[-3:])


def test_an_older_digest_with_ids_and_counts_is_read_and_rewritten_by_theme():
    old = Entry("2025-01", "4 Jan: Played badminton with Wei at the centre. [m01]; 11 Jan: Played "
                "badminton with Wei at the centre. [m02, m03]; 3 more (badminton, wei) [m04..m06]",
                digest=True)
    draft = Draft("s.md", {}, "", [old, *(Entry(f"2025-02-{d:02d}", "Played badminton with Wei at the centre.")
                                         for d in (1, 8))])
    assert condense(draft, 90, ZONE)
    text = "\n".join(digests(draft))
    assert "m0" not in text and "more" not in text and "×4" in text


def test_themes_keep_a_milestone_apart():
    facts = [Fact("2025-05-01", "2025-05-01", "Moved to Porto with Ana."),
             Fact("2025-05-02", "2025-05-02", "Moved the sofa to the window with Ana.")]
    assert len(themes(facts)) == 2


def test_the_coverage_rule_lets_a_digest_condense_its_period_but_not_wipe_it():
    old = "\n".join(f"- {d}: {t}" for d, t in badminton_year())
    draft = draft_of(badminton_year())
    condense(draft, 500, ZONE)
    assert keeps(old, [render_body(draft, ZONE)])
    wiped = "## Timeline (UTC)\n- 2025 (digest): 1 Jan: Things happened\n"
    assert held(old, [wiped])[1] < 0.2 and not keeps(old, [wiped])
    assert not keeps(old, ["## Timeline (UTC)\n- 2026-01-01: Something else entirely.\n"])


def test_a_merge_into_a_renamed_scene_is_judged_with_what_its_old_name_held():
    # Batch 16 of a LoCoMo conversation: a scene merged into another, which the same batch
    # renamed and rolled up; the rule took the new name's old text as empty ("has room").
    from scene_engine.batch.rules import RuleContext, deletion_problems

    def scene(body: str, merged=()) -> str:
        header = "summary: s\n" + "".join(f"merged_from:\n- {m}\n" for m in merged[:1])
        return f"---\n{header}---\n{body}"

    rows = badminton_year()
    keep = "\n".join(f"- {d}: {t}" for d, t in rows)
    gone = "\n".join(f"- 2025-0{k + 1}-11: John said his new role gives him a purpose, "
                     f"entry {k}." for k in range(8))
    draft = draft_of([(d, t) for d, t in rows])
    condense(draft, 900, ZONE)
    assert len(keep) + len(gone) > 0.8 * 3800      # the two had to fit: a full scene
    context = RuleContext(existing={"old.md", "gone.md"}, max_scenes=15, max_scene_chars=3800,
                          old_texts={"old.md": scene(keep), "gone.md": scene(gone)})
    pending = {"new.md": "---\nsummary: s\nmerged_from:\n- old.md\n- gone.md\n---\n"
                         + render_body(draft, ZONE), "old.md": "[DELETED]", "gone.md": "[DELETED]"}
    from sandbox import DELETED
    pending = {n: (DELETED if t == "[DELETED]" else t) for n, t in pending.items()}
    assert not [p for p in deletion_problems("gone.md", pending, context) if "has room" in p]


def test_only_a_scenes_own_digests_say_which_of_its_lines_were_rolled_up():
    # Another scene's digest of March stands for none of this scene's March lines: they keep
    # half their words, as any line does (a 10,000-memory run was refused at batch 147 when
    # the engine judged by its own scene and the rules by every scene).
    jobs = ["kitchen tap washer", "bathroom mirror", "garden fence", "bike chain", "door hinge",
            "window latch", "roof gutter", "shower drain", "garage light", "balcony rail"]
    old = "\n".join(f"- 2025-03-{d:02d}: Fixed the {job}." for d, job in enumerate(jobs, 1))
    own = "\n".join(old.splitlines()[:2])
    other = "- 2025-03 (digest): 1–9 Mar ×4: Played badminton with Wei"
    plain, rolled = held(old, [own, other], own=own)
    assert rolled == 1.0 and plain == held(old, [own])[0]
    assert held(old, [own, other])[1] < 1.0          # without ``own``: every body's digests


def test_a_scene_that_takes_in_a_second_scene_still_names_the_first_in_merged_from():
    # blame of a digest reads a scene's lineage in merged_from: a second merge in a later
    # batch must not drop the first (found by the active-merge work on branch h23merge).
    from datetime import UTC, datetime

    from scene_engine.batch.transaction import _header
    from scene_engine.store.scene import Scene

    before = Scene(name="guitar.md", meta={"summary": "Guitar.", "heat": 3,
                                           "merged_from": ["guitar-2.md"]}, body="x\n")
    written = Scene(name="guitar.md", meta={"summary": "Guitar."}, body="x\ny\n")
    third = Scene(name="guitar-3.md", meta={"summary": "Guitar again.", "heat": 1}, body="y\n")
    meta, _ = _header(written, before, [third], datetime.now(UTC), 5)
    assert meta["merged_from"] == ["guitar-2.md", "guitar-3.md"]


def test_a_scene_full_of_years_rolls_its_oldest_into_a_span_the_rule_accepts():
    # 10,000 everyday memories stopped at batch 470: each scene was a dozen thin year digests
    # long, and the only step left rolled an old day into this year's digest, dropping it,
    # which the coverage rule refused. Now the rule judges each step, and old years join a span.
    rows = [(str(year), f"7 May–25 Jun ×2: The F barre chord on the guitar still buzzes, year "
                        f"{year}; 11 Nov: Skipped this month's book club meeting")
            for year in range(2029, 2039)]
    rows.append(("2039", "26 May: Thinking about invisible braces before the wedding"))
    old = draft_of(rows, digest=True)
    old.entries.append(Entry("2039-09-27", "Ordered the invitations: 150 printed, everyone "
                                           "else gets the electronic card on WeChat."))
    old_body = render_body(old, ZONE)
    draft = draft_of(rows, digest=True)
    draft.entries += [old.entries[-1], Entry("2040-06-05", "Booked the venue by the lake.",
                                             fresh=True)]
    limit = len(old_body) - 40

    def rule(d: Draft) -> bool:
        return keeps(old_body, [render_body(d, ZONE)])

    assert condense(draft, limit, ZONE, check=rule)
    body = render_body(draft, ZONE)
    assert rule(draft) and len(body.strip()) <= limit
    assert "Ordered the invitations" in body and "Booked the venue by the lake" in body
    (line,) = [d for d in digests(draft) if re.match(r"- 2029–20\d\d \(digest\)", d)]
    # One theme over the years: one fact with its first and last day and how many times.
    assert re.search(r"7 May 2029–25 Jun 20\d\d ×\d+: The F barre chord", line), line
    assert re.search(r"- 2038 \(digest\)", body)     # the last years stay years


def test_a_shorter_fact_is_its_first_whole_clauses_never_a_cut_word_or_number():
    # Said in fewer words at depth, a fact keeps whole clauses (it was "去钓了35…").
    assert shorten("去钓了35条鲫鱼，最大的一条有半斤", 2) == "去钓了35条鲫鱼"
    assert shorten("今天买McDavid的护膝，戴着有点热", 2) == "今天买McDavid的护膝"
    assert shorten("买了护膝，戴着有点热但是心里踏实多了", 6) == "买了护膝"
    assert shorten("Ran 11 km along the canal; legs heavy, and I beat last week's time.", 9) \
        == "Ran 11 km along the canal; legs heavy"
    assert shorten("Dr. Okafor, my manager, said 120,000 rows is fine.", 3) == "Dr. Okafor"
