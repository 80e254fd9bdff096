#!/usr/bin/env python3
"""Write bench/topics/fifth.jsonl: a held-out labelled set for topic grouping.

One invented person, Callum Reid, 39, from Glasgow, a freelance sound engineer
(location sound and post-production mixing) living in Lisbon since 2019, with his partner
Lin Jing (林静, "Jing"), a UX designer from Xiamen. His mother and his sister Fiona live in
Glasgow; his accountant is Rui; he drives an old VW van he calls Dona Rosa.

Twelve areas of his life from January 2025 to August 2026, each memory written by hand,
mostly in English (about 70 %), partly in Chinese (he is learning Mandarin and writes
some notes in it, or writes down what Jing said) or mixed, and labelled with the one
topic a careful reader would file it under. Jing, Fiona, Rui and the van recur across
topics on purpose; ears, money and paperwork come up in several topics; many memories
avoid their topic's obvious keyword.

Dates: a memory is either plain text (its day drawn by a seeded generator between its
neighbours) or ``("YYYY-MM-DD", text)`` (pinned to that day, for events with a date: the
festival premiere, the exam, Chinese New Year, the hospital stay). Each topic keeps its
written order and stays within its span (``SPANS``). Times are drawn in local Lisbon hours
(with summer time) and stored in UTC. Deterministic: the same file every run.

    python bench/topics/make_fifth.py
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

Item = str | tuple[str, str]

TOPICS: dict[str, list[Item]] = {
    # Job project: dialogue edit and mix of an indie feature film.
    "film-mix": [
        "Inês sent the locked cut of Maré Baixa, 94 minutes. Dialogue edit starts Monday.",
        "Production sound on reel 3 is a mess: wind on every exterior, the boom op clearly gave up.",
        "Whole day on Dialogue Isolate for the beach scene. Usable now, not pretty.",
        "ADR with Tiago (the lead) at the Alcântara studio: 14 lines in three hours. He hates his own voice.",
        "给静听了海边那场戏的对白，她说根本听不出来是后期配的。",
        "Inês 又换了 temp music，我的 premix balance 全乱了。",
        "Foley day: footsteps on wet sand, in a kiddie pool full of beach sand on the studio floor.",
        ("2025-03-20", "5.1 mix booked for five days at the dub stage, 1,200 € a day. Production pays, thank God."),
        ("2025-04-09", "混音第三天，导演坐在后面一句话都不说，我紧张死了。"),
        "Inês cried at the final playback. Printmaster done.",
        "Deliverables: 5.1, stereo fold-down, M&E, dialogue stems. QC bounced the M&E for missing foley on reel 5.",
        ("2025-05-06", "Premiere at IndieLisboa. The surrounds at São Jorge were 3 dB hot and I could hear it the whole time."),
        ("2025-05-12", "电影拿了观众奖！Inês 说下一部还找我。"),
        ("2025-09-18", "Invoice for Maré Baixa finally paid, four months late."),
    ],
    # Course: Mandarin evening classes, HSK 3.
    "mandarin": [
        "Signed up for Mandarin evening classes at the uni language centre, Tuesdays and Thursdays, A2.",
        "Teacher is Chen laoshi, from Harbin. She says Jing's Xiamen accent is 'not standard' and I shouldn't copy it.",
        "第三声还是说不好，老师说我每个字都像在问问题。",
        "静教我写“福”字，写了二十遍，她说像一只螃蟹。",
        "Anki deck at 600 cards. Reviews are eating my mornings.",
        "今天在中国超市用中文问老板有没有香菇，他听懂了！",
        "Registered for HSK 3, November 23rd, Lisbon test centre.",
        "Mock HSK 3: listening 82, reading 70, writing 51. Word order is killing me.",
        "把字句终于有点感觉了：我把咖啡喝完了。",
        ("2025-11-23", "Exam done. Ran out of time on the last writing part."),
        ("2025-12-19", "HSK 3 过了！236 分。静发了朋友圈。"),
        "Started the HSK 4 book, 600 new words. Jing says her parents will be impressed if I can just talk about the weather.",
        ("2026-03-10", "回来以后陈老师说我的听力进步了很多，口语还是太慢。"),
    ],
    # Residence cards, his and Jing's (AIMA).
    "residence": [
        "Jing's residence permit expires in June. The AIMA renewal portal is still 'em manutenção'.",
        "静说她同事排 AIMA 排了八个月，她很焦虑。",
        "Found a lawyer, Dra. Sofia Matos, 350 € to handle Jing's renewal.",
        "My own card is the post-Brexit one, five years from 2021, so mine is due in 2026. In the calendar now.",
        "Government extended expired permits until October. Lawyer says fine inside Schengen, risky outside it.",
        "Finally an appointment for Jing, in Faro, three hours away, in September. Took it.",
        ("2025-09-16", "去法鲁办静的续签，早上六点出发，录了指纹，十五分钟就完了。"),
        "静的新卡寄到了，有效期两年。她拍了照片发给她妈妈。",
        "My renewal needs proof of address, and the Penha de França lease was never registered with Finanças. Chasing the landlady.",
        ("2026-04-14", "AIMA Lisbon for my card: appointment at 9, seen at 11:40. Fingerprints, photo, done."),
        "新卡还没到，临时证明只有葡语，不知道回英国过边检行不行。",
        "New card arrived. Permanent this time, ten years.",
        "静在查入籍，要住满五年，她明年就够了。",
    ],
    # Money: freelance taxes and the accountant.
    "taxes": [
        "Quarterly IVA return due on the 20th. Rui needs every fatura by Friday.",
        "社保又涨了，Segurança Social 按上个季度的收入重新算的。",
        "Forgot to issue a recibo for the radio ad job. Rui says I can do it late, but don't make it a habit.",
        "静问我们能不能一起报 IRS，Rui 说要先登记 união de facto。",
        ("2025-06-02", "IRS for 2024: I owe 1,870 €. Rui says I should have been making pagamentos por conta."),
        "Payment plan with Finanças, three instalments.",
        "Went to the Junta for the união de facto declaration, needed for the joint IRS. Pedro and Ana came as witnesses.",
        "把定制耳塞和新的监听音箱都算成了工作开支，Rui 说耳塞也可以抵。",
        "Opened a separate business account so client money stops mixing with the groceries.",
        "开发票的软件每个月 9 欧，我还是觉得贵。",
        "Rui's fee is up to 90 € a month. Still cheaper than doing it myself and crying.",
        ("2026-04-22", "Filed IRS jointly with Jing this year: a 640 € refund. Rui is a genius."),
        "Asked Rui about switching from recibos verdes to a Unipessoal Lda. Not below 60k a year, he says.",
    ],
    # Trip: Chinese New Year in Xiamen, meeting Jing's parents.
    "xiamen-trip": [
        "Jing wants us in Xiamen for Chinese New Year. First time meeting her parents. Terrified.",
        "Flights Lisbon-Beijing-Xiamen, 1,340 € for the two of us. Booked.",
        "Visa form wants a hotel booking, but we're staying with her parents, so I need an invitation letter from her dad.",
        "静的爸爸写了邀请函，还附了一张户口本复印件。",
        "Visa approved, two entries.",
        "给她爸爸带什么？静说带威士忌，他喜欢喝酒。买了一瓶 Lagavulin 16。",
        "Practising “叔叔阿姨好，新年快乐” with Jing every night before bed.",
        ("2026-02-12", "Landed in Xiamen, 29 hours door to door. Her mum had cooked eight dishes at 11pm."),
        ("2026-02-16", "年夜饭吃了四个小时，静的爸爸一直给我倒酒。"),
        "鼓浪屿人太多了，但是钢琴博物馆很好玩。",
        "Recorded the midnight fireworks from their balcony on the little Zoom. Clipped the first ten seconds, the rest is gorgeous.",
        ("2026-02-20", "她妈妈给了我一个红包，说是见面礼。静说这就是认可我了。"),
        ("2026-02-25", "Jet lag is brutal. Awake at 4am eating her mum's pineapple cakes."),
        "Made a six-minute sound collage from the Xiamen recordings for her parents. Her dad watched it three times.",
    ],
    # A relative: his mother in Glasgow, falls and a broken hip.
    "mum": [
        ("2025-01-14", "Fiona called: Mum fell in the kitchen. Just bruises, but it's the second time since Christmas."),
        "Ordered Mum a personal alarm pendant, the one with fall detection.",
        "静给我妈寄了一条丝巾，妈妈在电话里说了三次 lovely。",
        ("2025-06-10", "Mum fell again, broken hip. She's at the QEUH, surgery tomorrow. On the last flight to Glasgow tonight."),
        ("2025-06-12", "Hip replacement went fine. She asked the nurse if I was 'the one that lives in Spain'."),
        ("2025-06-14", "Ward 7, visiting 2 to 8. Did the crossword with her. The hospital coffee is criminal."),
        ("2025-06-17", "Fiona and I argued about a care home. She does all the work and I'm 2,000 km away. She's not wrong."),
        ("2025-06-20", "在格拉斯哥待了十天，今天飞回里斯本。妈妈哭了。"),
        "Carers come twice a day now. The council pays part; Fiona and I split the rest, £380 a month each.",
        "Fiona sent a photo: Mum in the garden with the zimmer frame, thumbs up.",
        "和妈妈视频，静用英语跟她聊了半个小时做饭，她很开心。",
        "Her hearing aids keep whistling so she won't wear them. I know the feeling.",
        ("2025-12-26", "Christmas in Glasgow with Mum and Fiona. Mum kept calling Jing 'Jean'."),
        ("2026-06-22", "妈妈的髋关节一年复查没问题，可以不用拐杖了。"),
    ],
    # His own health: tinnitus and the ears a sound engineer lives on.
    "hearing": [
        ("2025-02-15", "Left ear ringing since the Coliseu gig last night. High pitch, like an old CRT telly."),
        "Still ringing three days later. Starting to worry.",
        "Otorrino: the audiogram shows a notch at 4 kHz in the left ear. 'Noise-induced', as if I didn't know.",
        "Custom moulded earplugs with ER-15 filters, 190 €.",
        "医生说耳鸣可能不会完全消失，要学会和它相处。",
        "Sleeping with a fan on. It's worst in silence, which is ironic for my job.",
        "Dropped my mix monitoring to 79 dB SPL and calibrated it with the meter. Mixes feel smaller; my left ear says thanks.",
        ("2025-07-10", "静建议试试针灸，她说厦门有个亲戚的耳鸣就是扎好的。"),
        "Acupuncture session three. No change in the ringing, but I sleep better afterwards.",
        ("2025-09-09", "半年后复查听力，4k 那个凹口没有变深。"),
        ("2025-09-10", "Forgot to write down: the otorrino also saw early exostosis in my right canal. Surfer's ear. Two ear problems for the price of one."),
        "Turned down three nights of festival FOH. Not worth it.",
        ("2026-03-01", "飞完长途以后耳鸣加重了一个星期，现在好了。"),
    ],
    # Hobby: building a Eurorack modular synth.
    "modular-synth": [
        "Ordered a Eurorack case and a DIY kit for a Plaits clone. Soldering like it's 2005.",
        "第一次焊 SMD 元件，手抖，焊坏了两个电阻。",
        "The Plaits clone works! First patch: a bassline like a broken fridge. Love it.",
        "Jing calls the rack 'your spaghetti'. 面条机器. She isn't wrong.",
        ("2025-04-10", "Recorded a 40-minute drone patch; 20 seconds of it ended up under the Maré Baixa trailer."),
        "Ground-loop hum when the rack goes into the studio interface. Fixed with a DI box.",
        "Built a Rings clone. Cold joint on the output jack, two hours to find it.",
        "Sold the old Moog Mother-32 to pay for modules. Regret it already.",
        "Synth meetup in the Desterro on Saturday. Brought the rack; someone offered me 400 € for the Rings.",
        "卖掉了一个滤波器模块，用这个钱买了一个 sequencer。",
        "焊台坏了，新的要 90 欧。",
        "A generative patch that plays all night. Jing says it's the only music of mine she can sleep to.",
        "在 Bandcamp 上发了第一张模块合成器 EP，卖了十一份，其中三份是静买的。",
    ],
    # Sport: learning to surf.
    "surfing": [
        "First lesson at Costa da Caparica. Stood up once, for two seconds. Drank half the Atlantic.",
        "Everything hurts. Shoulders mostly.",
        "Bought a used 8'0 foamie from a guy in Almada, 120 €.",
        "静也来上了一次课，她比我先站起来。",
        "Ericeira with Pedro: small clean waves at Foz do Lizandro, caught my first green wave.",
        "板子的鳍撞到了礁石，裂了一条缝，修要 40 欧。",
        ("2025-09-20", "Earplugs in the water from now on, doctor's orders."),
        "4/3 wetsuit for winter, the water's 14 degrees in January. 210 € at Decathlon.",
        "冬天水太冷了，两个月没下水。",
        "Dawn patrol at Carcavelos before a 10am studio session. Dolphins!",
        "换了一块 7'2 的 mini-mal，转弯容易多了。",
        "Wiped out at Guincho, the board caught my eyebrow. Three stitches at the Cascais hospital.",
        ("2026-08-18", "Out every morning this week. Not one proper wave, still happy."),
    ],
    # House: the damp rented flat, then the move.
    "flat": [
        "Black mould back in the bedroom ceiling corner. Bleach again.",
        "Emailed Sr. Almeida about the damp, photos attached. Nothing.",
        "静最近一直咳嗽，她觉得是卧室发霉的原因。",
        "Bought a dehumidifier, 20 litres a day. Emptying it twice a day; unreal how wet this place is.",
        "Almeida sent a painter who painted straight over the mould. Back in three weeks.",
        "Deco says the landlord has to fix structural damp. Sent him a carta registada.",
        "决定搬家了。在 Idealista 上看了十几套，里斯本的房租太疯狂了。",
        "Viewed a two-bed in Penha de França: 1,350 € a month, dry, south-facing, a box room for the studio.",
        "Signed the lease. Two months' deposit plus the first month, 4,050 € gone in one go.",
        ("2025-07-05", "搬家那天找了两个巴西小伙子，三个小时就搬完了，比我想的快。"),
        "Old landlord is keeping 600 € of the deposit for 'paint'. Disputing it.",
        "Rockwool panels up in the box room. Jing made me promise the living room stays panel-free.",
        "新家楼下的老太太给我们送了一盘 pastéis de nata。",
        "Got 400 € of the old deposit back after the Deco letter. Calling it a win.",
    ],
    # The van, Dona Rosa.
    "van": [
        ("2025-01-28", "Dona Rosa won't start in the cold. Battery, I hope, not the starter motor."),
        ("2025-02-03", "It was the starter motor. 280 € at the mechanic in Sacavém."),
        "EMEL ticket, 60 €: parked Rosa in a residents' zone in Campo de Ourique during a shoot.",
        "Whole location kit in the back for the Alentejo shoot: two booms, six lavs, the cart. Still room for a mattress.",
        "静在 Rosa 上学开手动挡，熄火了七次，我们笑了一路。",
        "Inspection failed: headlight alignment and a torn CV boot.",
        "IPO 第二次过了。",
        ("2025-08-09", "Slept in Rosa at Peniche after a surf, woke up to a parking fine on the windscreen."),
        "Insurance renewed, 340 € third party.",
        "Clutch slipping going up the Calçada da Graça. Mechanic says 900 €. Ouch.",
        ("2026-01-05", "考虑要不要卖掉 Rosa 换一辆电动车，静说舍不得。"),
        ("2026-01-12", "Decided: keep her one more year. New clutch it is."),
        ("2026-02-03", "换了离合器，上坡再也不打滑了。"),
        ("2026-07-30", "Rosa turns 27 according to the registration papers. Jing bought her a pineapple-shaped air freshener."),
    ],
    # Volunteering: audio workshops for teenagers at a community radio.
    "radio-workshops": [
        "Signed up to volunteer at Rádio Intendente. They need someone to run audio workshops for teenagers on Saturdays.",
        "First workshop: nine kids, 14 to 17. Taught them how to hold a mic. Half were on their phones.",
        "孩子们第一次自己出去录采访，在菜市场问摊主问题，全是噪音但是很可爱。",
        "Brought my old H4n and two SM58s, because the station's recorders are broken.",
        "A kid called Dário edits faster than I do. Gave him the Reaper shortcuts.",
        "电台的负责人 Marta 问我能不能帮忙写一个青年项目的资助申请。",
        "Grant application to the Câmara: 8,000 € for equipment and a year of Saturdays. I wrote the budget part.",
        "Approved! Only 5,000 €, but enough for four recorders and proper headphones.",
        "跟孩子们讲了怎么保护听力，每人发了一副耳塞。",
        "Their first show went out live: 30 minutes about the neighbourhood. Dário's mum rang the station to say she cried.",
        "Jing came and did a session on cover art for the podcast. The kids like her more than me.",
        "期末的节目被里斯本的一个播客节选播出了。",
        ("2026-08-28", "Second group starts in September: 14 signed up, and three from the first group are back as assistants."),
    ],
}

# When each area was active (first and last day, inclusive).
SPANS: dict[str, tuple[str, str]] = {
    "film-mix": ("2025-01-06", "2025-09-30"),        # front-loaded
    "mandarin": ("2025-01-20", "2026-07-15"),
    "residence": ("2025-02-01", "2026-08-15"),       # sparse, whole span
    "taxes": ("2025-01-10", "2026-08-20"),           # sparse, whole span
    "xiamen-trip": ("2025-09-01", "2026-03-31"),     # late, dense around February 2026
    "mum": ("2025-01-08", "2026-08-25"),             # a burst in June 2025, sparse otherwise
    "hearing": ("2025-02-10", "2026-07-31"),
    "modular-synth": ("2025-03-01", "2026-08-10"),
    "surfing": ("2025-04-05", "2026-08-29"),
    "flat": ("2025-01-06", "2025-12-20"),            # front-loaded
    "van": ("2025-01-25", "2026-08-29"),
    "radio-workshops": ("2025-06-01", "2026-08-29"),  # late
}

HOURS = (8, 23)   # local Lisbon hours a memory may be written in
SEED = 5


def lisbon_offset(day: date) -> timezone:
    """Lisbon's UTC offset on ``day``: +1 between the last Sundays of March and October."""
    def last_sunday(month: int) -> date:
        d = date(day.year, month, 31)
        return d - timedelta(days=(d.weekday() + 1) % 7)
    summer = last_sunday(3) <= day < last_sunday(10)
    return timezone(timedelta(hours=1 if summer else 0))


def _day(text: str) -> date:
    return date.fromisoformat(text)


def days_for(items: list[Item], span: tuple[str, str], rng: random.Random) -> list[date]:
    """A day for each item, in order: pinned items keep their day, the others are drawn
    (distinct, sorted) strictly between their pinned neighbours and within ``span``."""
    first, last = _day(span[0]), _day(span[1])
    fixed = {i: _day(it[0]) for i, it in enumerate(items) if isinstance(it, tuple)}
    bounds = [(-1, first - timedelta(days=1))] + sorted(fixed.items()) + \
             [(len(items), last + timedelta(days=1))]
    out: list[date] = [first] * len(items)
    for (i, lo), (j, hi) in zip(bounds, bounds[1:], strict=False):
        assert lo < hi, f"pinned days out of order near item {j}"
        free = list(range(i + 1, j))
        gap = (hi - lo).days - 1
        assert gap >= len(free), f"not enough days for items {free}"
        picks = sorted(rng.sample(range(1, gap + 1), len(free)))
        for k, off in zip(free, picks, strict=False):
            out[k] = lo + timedelta(days=off)
        if j < len(items):
            out[j] = hi
    for d in out:
        assert first <= d <= last, f"{d} outside {span}"
    return out


def build() -> list[dict]:
    """Every memory of this set, oldest first, each instant distinct."""
    rows, seen = [], set()
    for topic, items in TOPICS.items():
        rng = random.Random(f"{SEED}-{topic}")   # per topic: editing one leaves the others
        for n, (day, item) in enumerate(zip(days_for(items, SPANS[topic], rng), items, strict=False)):
            text = item[1] if isinstance(item, tuple) else item
            local = datetime(day.year, day.month, day.day, rng.randint(*HOURS),
                             rng.randint(0, 59), tzinfo=lisbon_offset(day))
            when = local.astimezone(UTC)
            while when in seen:
                when += timedelta(minutes=1)
            seen.add(when)
            rows.append({"id": f"{topic}-{n + 1:02d}", "content": text,
                         "created_at": when.isoformat(), "metadata": {"topic": topic}})
    rows.sort(key=lambda r: r["created_at"])
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    return rows


def write(rows: list[dict], name: str) -> None:
    """Write ``rows`` as JSON lines to ``name`` beside this script, and say so."""
    out = Path(__file__).with_name(name)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    topics = len({r["metadata"]["topic"] for r in rows})
    print(f"wrote {len(rows)} memories over {topics} topics to {out}")


def main() -> None:
    write(build(), "fifth.jsonl")


if __name__ == "__main__":
    main()
