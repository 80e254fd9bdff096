#!/usr/bin/env python3
"""Write bench/topics/fourth.jsonl: a held-out labelled set for topic grouping.

One invented person, Liu Xiaolan (刘晓岚), 34, a ward nurse on an orthopaedics ward of a
big hospital in Chengdu, who grew up in Yingshan county (营山, Nanchong) and moved to the
city after nursing college. Husband Zhou Bin (周斌), daughter Duoduo (朵朵, starting primary
school in the set), a mixed-breed dog called Doubao (豆包). Her father lives in Yingshan.

Twelve areas of her life from August 2024 to May 2026, each memory written by hand, mostly
in Chinese (about 70 %), partly in English or in Chinese with English terms, and labelled
with the one topic a careful reader would file it under. The same people (Zhou Bin,
Duoduo, Doubao, Dad, colleague Xiao He, classmate Wang Lei) recur across topics on purpose,
and many memories avoid their topic's obvious keyword.

Dates: a memory is either plain text (its day drawn by a seeded generator between its
neighbours) or ``("YYYY-MM-DD", text)`` (pinned to that day, for events with a date: the
Spring Festival, exams, the trip). Each topic keeps its written order and stays within
its span (``SPANS``). Times are drawn in local Chengdu hours and stored in UTC.
Deterministic: the same file every run.

    python bench/topics/make_fourth.py
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

Item = str | tuple[str, str]

TOPICS: dict[str, list[Item]] = {
    # Job project: the ward's quality-improvement circle on pressure injuries.
    "ward-qcc": [
        ("2024-08-12", "护士长让我牵头今年科里的品管圈，主题定了：降低骨科卧床病人的压力性损伤发生率。"),
        "QCC kickoff tomorrow 2pm. Need the baseline numbers from June and July before then.",
        "翻了两个月的护理记录，院内新发压疮 7 例，大部分在骶尾部，两例在足跟。",
        "Braden audit: only 23 of 31 admissions had a score documented in the first 24 h.",
        "圈员分工：小何画鱼骨图，我和李老师做现状调查。",
        "原因分析出来了，主要还是夜班翻身不到位，加上气垫床不够用。",
        "申请了四张气垫床，设备科说要等下个季度的预算。",
        "New turning chart on every bed: 2-hourly, initials + time. Night shift grumbling already.",
        "夜班同事嫌翻身卡麻烦，改成床头挂牌，打个勾就行。",
        ("2025-01-20", "新翻身卡用了两个月，数据出来了：新发 2 例，比基线少了一大半。"),
        "比赛的 PPT 做完了，12 分钟，表格太多。",
        "护士长帮我改稿子，说评委爱听故事，少放表格，多放那位老爷子的前后对比照片。",
        ("2025-05-14", "品管圈比赛拿了二等奖！奖金八百，给圈员一人点了一杯奶茶。"),
        "护理部让我们把这套做法推广到脊柱外科，下周二去给他们讲一次。",
    ],
    # A relative in hospital: her father's heart, coronary stent, the year after.
    "dad-heart": [
        ("2024-10-03", "国庆回营山，爸说爬坡的时候胸口闷，歇一下就好。让他来成都查一下，他不吭声。"),
        "爸死活不肯来，说县医院看过了，开了点药就行。",
        "Dad's ECG from the county hospital: ST depression in V4-V6. Showed it to Dr. Wang in cardiology, he said bring him in this week.",
        "爸坐大巴来了，周斌去城北客运站接的，暂时住我们家。",
        ("2024-10-21", "冠脉造影：前降支狭窄百分之九十，当场放了一个支架。"),
        ("2024-10-22", "Visited Dad on cardiology after my shift. He's complaining about the hospital food, so he's fine."),
        ("2024-10-25", "出院了。阿司匹林加氯吡格雷要吃满一年，不能自己停。"),
        "妈打电话说他又偷偷抽烟，被她在厕所抓到了。气死。",
        "和妈视频，教她给爸分药盒：早晚两格，一周七天。",
        "新农合报销下来了，自付一万二左右，我和弟弟一人一半。",
        ("2025-01-30", "过年回去，爸走路比以前快多了，还跟二叔去水库钓了一下午鱼。"),
        "心内科复查：支架通畅，血脂还是偏高，医生加了依折麦布。",
        ("2025-10-25", "Dad asked if he can stop the clopidogrel now that it's been a year. Told him to ask his cardiologist, not his daughter."),
        "爸现在每天傍晚在城南公园走一个小时，说比吃药管用。",
    ],
    # Her own health: a thyroid nodule found at the staff check-up.
    "thyroid": [
        ("2024-11-15", "职工体检，B 超说甲状腺右叶有个结节，0.8 cm，TI-RADS 3 类。"),
        ("2024-11-16", "Googled TI-RADS 3 at 1am. Should know better, I'm a nurse."),
        "内分泌科的同事说三类一般半年复查就行，叫我别自己吓自己。",
        "Neck feels tight when I swallow. Probably all in my head.",
        ("2025-05-20", "半年复查：长到 1.1 cm，升到 4a 类了。"),
        "约了细针穿刺，下周二上午，周斌请假陪我去。",
        ("2025-06-03", "FNA done. Hurt less than the cannulas I put in every day."),
        ("2025-06-10", "穿刺结果：良性，Bethesda II 类。在更衣室哭了一会儿。"),
        "甲功正常，不用吃药，以后一年复查一次 B 超。",
        "医生说碘盐照常吃，海带紫菜也不用刻意忌。",
        "Stopped checking my neck in the bathroom mirror every morning. Mostly.",
        ("2026-04-28", "今年的 B 超：还是 1.1 cm，没长。"),
    ],
    # Her daughter starting primary school: enrolment, then first grade.
    "school": [
        "朵朵今年九月上一年级，对口的是锦城路小学，听说学位很紧。",
        "Enrolment needs 户口 or 居住证 + 12 months of 社保 + the property certificate. Our 户口 is still in Yingshan.",
        "为了朵朵报名，去派出所办居住证，排了一个半小时的队。",
        ("2025-05-10", "Online registration opened at 9am, submitted at 9:04. Zhou Bin kept refreshing the page for me."),
        "学校通知六月八号带孩子去现场审核材料。",
        ("2025-06-08", "审核通过了。朵朵一直问什么时候可以背书包。"),
        "校服买了两套，书包是她自己挑的粉色。",
        ("2025-09-01", "开学第一天，她进校门头都没回，我倒是在门口站了半天。"),
        "家长群一天三百条消息，全是接龙。",
        "Pickup is 3:40 on Tuesdays and my shift starts at 4. Zhou Bin's mum will do Tuesdays.",
        "b 和 d 还是老分不清，拼音作业写了一个小时。",
        "第一次家长会，班主任说朵朵上课爱讲话，但是举手很积极。",
        "Homework at 9pm again, she cried over ten sums. I nearly did too.",
        ("2026-01-20", "期末语文 98，数学 100。答应她寒假去熊猫基地。"),
    ],
    # The family's old house in Yingshan, demolished for redevelopment.
    "old-house": [
        "妈说营山老街要拆迁了，我们家老房子在红线里面。",
        "房产证上还是爷爷的名字，爷爷走了以后一直没过户。",
        "The relocation office measured the house: 142 m² including the back shed, which they might not count.",
        "补偿有两种：拿钱，或者换安置房。爸想要房，妈想要钱。",
        "二叔说后面那间偏房是他当年出钱修的，要分一份。",
        "Family call about the 拆迁 money, two hours, nobody agreed on anything. Dad hung up on 二叔.",
        "回营山办继承公证，爸、二叔、姑姑都得到场，公证处门口就吵起来了。",
        "Final offer: 3,200 yuan/m² cash, or a 90 m² flat in the new 安置小区 plus 80k.",
        "定了：要安置房加补差价，偏房那份钱分给二叔三分之一。",
        "签字了。国庆以后就动工，妈让我回去多拍几张照片。",
        ("2025-10-03", "Walked through the old house one last time with Duoduo. Showed her the 门槛 where I used to do my homework."),
        "推土机进场了，妈在家族群里发了一段视频，一句话没说。",
        "安置房 2027 年才交房，这两年爸妈先在外面租房，每月有八百块过渡费。",
    ],
    # The dog, Doubao.
    "dog": [
        "豆包今天把朵朵的一只凉鞋啃坏了。",
        "Doubao is scratching his belly raw again. Red patches near the armpits.",
        "带去宠物医院，刮片说是真菌感染，开了药浴。",
        "药浴一周两次，每次泡十分钟，他全程都想跑。",
        "Vet bill 680 yuan with the skin scrape. Pet insurance would have been smart.",
        "豆包的毛长回来了。",
        "Zhou Bin wants Doubao neutered before he starts marking the sofa. Agreed.",
        "Half a sock came out in his poop this morning. The other half is still a mystery.",
        ("2025-05-31", "Doubao ate half a 粽子 off the table. Watched him all night for vomiting, nothing."),
        ("2025-07-14", "出发前把豆包送去宠物酒店，一天六十，他在笼子里一直叫。"),
        ("2025-07-24", "接他回来，瘦了一圈，店里说他几乎没怎么吃饭。"),
        ("2025-09-15", "朵朵说以后放学由她遛豆包，坚持了三天。"),
        "打了狂犬疫苗和八联，小区物业要求办养犬登记证。",
        "五岁了，嘴边开始长白毛。",
        "从公园回来左后腿一瘸一拐的，医生说是软组织拉伤，歇一个星期。",
    ],
    # Hobby: crochet.
    "crochet": [
        "夜班休息的间隙开始学钩针，跟着 B 站视频钩了一个杯垫。",
        "Magic ring finally makes sense. Fourth try.",
        "给朵朵钩了一只小兔子，耳朵一长一短，她照样抱着睡。",
        "淘宝买了十团牛奶棉，4 股的，那种偏粉的米色。",
        "科里的小何也想学，午休的时候教她起针。",
        "开始给豆包钩毛衣，量了胸围 52 cm。",
        "Doubao's sweater, second attempt: the first one wouldn't go over his head.",
        "给自己钩了一顶渔夫帽，戴去上班被夸了。",
        "Sold six amigurumi at the 玉林 weekend market. 240 yuan, which basically paid for the yarn.",
        "手腕疼，护士长说是腱鞘炎的前兆，让我少钩一点。",
        ("2025-09-08", "Found a panda amigurumi pattern to make for Duoduo's teacher, for Teachers' Day."),
        "妈让我给爸钩一条围巾，要灰色的，不要花里胡哨的。",
        "围巾钩完了，一行一百二十针，钩了三个星期。",
    ],
    # Sport: badminton with colleagues.
    "badminton": [
        "科里几个人每周三晚上在职工活动中心打羽毛球，我也报了名。",
        "买了一支尤尼克斯的入门拍，三百来块。",
        "打了两个小时，第二天小腿酸得下不了楼梯。",
        "Doubles with 小何 against the two anaesthetists. Lost 21-15, 21-12.",
        "这周夜班，球没打成。",
        "周斌的同事老郑教我反手高远球，说我握拍太紧。",
        "Rolled my ankle landing after a smash. Ice, elevation, no games for two weeks.",
        "脚踝好了，戴着护踝回去打了。",
        ("2025-04-26", "医院工会比赛，我和小何混进了女双八强。"),
        ("2025-04-27", "Quarter-final loss to the ICU pair. They train three times a week, unfair."),
        "周斌也开始打了，周末带朵朵去球馆，她负责捡球。",
        "Restrung at 24 lbs.",
    ],
    # Course: a self-study bachelor's degree in nursing (自考本科).
    "nursing-degree": [
        "自考护理学本科报名了，这次先报两门：内科护理学（二）和护理研究。",
        "学习计划：白班下班后看一小时，夜班后不看。要现实一点。",
        "护理研究的统计那章完全看不懂，t 检验、卡方，头大。",
        ("2025-04-13", "四月的考试考完了，内科护理还行，护理研究好几道大题没写完。"),
        "Results: 内科护理学 71, pass. 护理研究 52, retake in October.",
        "English (II) is the one everybody fails. Started 20 words a day on 百词斩.",
        "周斌晚上陪朵朵睡，我在客厅背书，豆包趴在我脚上。",
        ("2025-10-26", "十月考了护理研究重考和英语二，阅读还行，完形填空全靠蒙。"),
        ("2025-11-28", "Passed both!! 护理研究 68, English 63. Two subjects and the thesis left."),
        "论文打算写压力性损伤的护理干预，品管圈的数据正好能用。",
        "Thesis advisor assigned: Prof. Tang. Replies within a week, if I'm lucky.",
        "开题报告被导师打回来了，说样本量太小。",
        "Literature review at 34 references, half in English. Zotero is saving my life.",
        ("2026-04-19", "四月考完最后两门，只剩论文答辩了。"),
    ],
    # Money: insurance for the family.
    "insurance": [
        "同事家孩子得了白血病，花了几十万。决定给朵朵买一份重疾险。",
        "王磊在同学群里推他们公司的重疾险，私聊了我三次。",
        "Compared three plans for Duoduo: 50万 cover, premiums 2,100-2,800 a year, 30 years of payments.",
        "最后没买王磊的，网上买了一个性价比高的，年交两千三。",
        "Now one for me. The health questionnaire asks about nodules, so I have to declare the thyroid thing.",
        ("2025-03-14", "核保结果：甲状腺相关除外承保。也就是那块出问题不赔。"),
        "Signed all three of us up for 惠蓉保, 59 yuan each. Cheap, covers the big hospital bills.",
        ("2025-06-28", "周斌公司有团体医疗险，但是离职就没了，他也得单独买一份。"),
        ("2025-07-06", "Zhou Bin's term life: 1 million, 20 years, 1,400 a year. Beneficiaries: me and Duoduo."),
        "Looked into cover for Mum and Dad. After the stent Dad can only get the city 惠民保 kind, so bought Nanchong's one for both of them.",
        ("2025-08-05", "穿刺结果良性以后问了保险公司能不能重新核保，说要再等两年。"),
        "把所有保单拍照存进一个共享相册，列了一张表：谁、保什么、哪天交费。",
        ("2026-01-10", "朵朵那份自动扣款成功，第二年了。"),
    ],
    # Friend group: her high-school classmates from Yingshan.
    "classmates": [
        "营山中学 08 届的同学群突然活了，有人在张罗春节同学会。",
        "Reunion on 初三 at the hotpot place by the old bus station. 40 people signed up.",
        ("2025-01-31", "同学会：好多人认不出来了，班主任也来了，头发全白了。"),
        "班长小芳说她五一结婚，在南充办。",
        "Someone from the reunion messaged asking if I can get his mum a bed at my hospital. Third request like that since.",
        ("2025-04-28", "给小芳随了八百。"),
        ("2025-05-01", "Xiaofang's wedding in Nanchong: 7am bus there, home by midnight. Duoduo was a flower girl."),
        "王磊在群里发了一篇卖保险的长文，好几个人把他屏蔽了。",
        "在成都的几个同学拉了个小群，说好每个月聚一次，这次吃的冒菜。",
        "Chengdu subgroup dinner: six of us, all from 营山, all complaining about rent and kids' schools.",
        "小芳怀孕了，群里刷了一晚上的恭喜和红包。",
        "Zhang Min from class 3 died in a car accident on the G75. Didn't know her well, but she's been on my mind all day.",
        ("2026-02-19", "今年同学会没回去，要值班。大家发了合照，少了好几个人。"),
    ],
    # Trip: a summer self-drive to Daocheng Yading.
    "daocheng-trip": [
        "暑假想自驾去稻城亚丁，周斌担心朵朵太小会高反。",
        "Asked the head nurse for 8 days of annual leave in mid-July. OK if I cover two Sunday nights in June.",
        "路线：成都—康定—新都桥—理塘—稻城，回程走 318 慢慢拍。",
        "出发前给车做了保养，换了四个轮胎和刹车片，两千六。肉疼。",
        "买了四罐氧气和红景天，朵朵的量按体重减半。",
        ("2025-07-15", "出发！第一天到康定，朵朵在车上睡了四个小时。"),
        "新都桥的光太好了，周斌拍了两百张。",
        ("2025-07-17", "Litang, 4,000 m. Duoduo had a headache and threw up twice. Checked her SpO2 every hour: 88, 90, 91. Oxygen helped."),
        "在理塘多住了一天让她适应，后面的行程都往后推。",
        "景区门票加观光车，三个人一千二。",
        "Hiked to 牛奶海, five hours there and back. Carried Duoduo for the last kilometre.",
        ("2025-07-23", "回到成都，一共开了两千三百公里，油费加过路费两千出头。"),
        "这趟的照片九百张整理完了，洗了三十张挂在走廊。",
        "朵朵还在念叨牛奶海，说明年还要去。",
    ],
}

# When each area was active (first and last day, inclusive).
SPANS: dict[str, tuple[str, str]] = {
    "ward-qcc": ("2024-08-05", "2025-06-30"),        # front-loaded
    "dad-heart": ("2024-09-20", "2026-03-31"),       # intense in autumn 2024, sparse after
    "thyroid": ("2024-11-01", "2026-05-03"),         # sparse, whole span
    "school": ("2025-02-10", "2026-01-31"),
    "old-house": ("2025-03-10", "2026-05-01"),       # late
    "dog": ("2024-08-01", "2026-05-03"),             # whole span
    "crochet": ("2024-08-20", "2025-12-31"),
    "badminton": ("2024-08-07", "2026-04-30"),       # sparse, whole span
    "nursing-degree": ("2024-08-25", "2026-04-30"),
    "insurance": ("2024-12-01", "2026-02-28"),
    "classmates": ("2024-12-01", "2026-03-15"),
    "daocheng-trip": ("2025-04-01", "2025-09-30"),   # short and dense
}

LOCAL = timezone(timedelta(hours=8))   # Chengdu, no daylight saving
HOURS = (7, 23)                        # local hours a memory may be written in
SEED = 4


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
                             rng.randint(0, 59), tzinfo=LOCAL)
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
    write(build(), "fourth.jsonl")


if __name__ == "__main__":
    main()
