#!/usr/bin/env python3
"""Write bench/topics/memories.jsonl: the labelled set of bench/bench_topics.py.

One invented person, Chen Yu (陈雨), a backend engineer in Shenzhen, over 2026: 12 areas of
life and work, each memory written by hand in the language she would use for it (Chinese,
English, or Chinese with English terms), labelled with its topic. Dates: each topic's
memories in their written order, spread by a seeded generator, so topics
interleave as they would in a life, each within the months it was active (``SPANS``). Deterministic: the same file every run.

    python bench/topics/make_set.py
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

TOPICS: dict[str, list[str]] = {
    "message-queue": [
        "Our team has to choose a message queue for the order service: Kafka, RabbitMQ or Pulsar.",
        "Wrote a comparison doc of Kafka and RabbitMQ for the order service; Kafka wins on throughput.",
        "RabbitMQ is easier to operate, but the order service needs replay, which Kafka does well.",
        "Benchmarked Kafka on three brokers: 120k messages per second with acks=all.",
        "Pulsar looked good on paper, but nobody on the team has run it in production.",
        "Thinking about whether Kafka consumer groups can handle the order service's peak traffic.",
        "The architecture review approved Kafka for the order service.",
        "Set up the Kafka cluster in staging with three brokers and ZooKeeper replaced by KRaft.",
        "Kafka consumer lag on the order topic spiked during the load test; partitions were too few.",
        "Raised the order topic from 12 to 48 partitions; consumer lag is gone in the load test.",
        "订单服务的 Kafka 集群今天正式上线，消费延迟稳定在 200 毫秒以内。",
        "Wrote the runbook for the Kafka cluster: broker restarts, partition reassignment, lag alerts.",
        "A Kafka broker disk filled up at 3 am; I was on call and moved the logs to a bigger volume.",
        "We decided to keep RabbitMQ for the small internal notification jobs and Kafka for orders.",
    ],
    "cka-exam": [
        "Preparing for the CKA exam; I want to pass it before the end of June.",
        "Bought the CKA exam voucher and the Killer.sh practice sessions.",
        "CKA practice: etcd backup and restore still takes me too long.",
        "Practised kubectl imperative commands every evening for the CKA; aliases save a lot of time.",
        "备考 CKA：每天晚上练一小时 kubectl，重点是网络策略和 etcd 备份。",
        "Killer.sh CKA simulator score: 62 out of 100, the pass mark is 66.",
        "CKA 的集群排障题还是不熟，周末再练两套 Killer.sh 模拟题。",
        "Second Killer.sh CKA simulator run: 81 out of 100.",
        "Booked the CKA exam for June 14 at 9 am.",
        "Passed the CKA exam with 89 points!",
        "Added the CKA certificate to my LinkedIn profile; two recruiters wrote the same day.",
        "Thinking about the CKS exam next, after the CKA.",
        "Helped a colleague prepare for the CKA exam with my kubectl aliases and notes.",
        "Registered for the CKS exam in November; the CKA must still be valid, which it is.",
    ],
    "cat": [
        "我养了一只橘猫，叫年糕，三岁了。",
        "年糕最近不爱吃猫粮，只吃冻干。",
        "带年糕去宠物医院打疫苗，医生说它有点胖，要控制饮食。",
        "给年糕换了低脂猫粮，每天分三次喂。",
        "年糕半夜在家里跑酷，把书架上的花瓶打碎了。",
        "在考虑要不要再领养一只猫给年糕作伴。",
        "年糕体重从六公斤降到五点五公斤，医生很满意。",
        "买了一个新的猫爬架，年糕很喜欢，天天睡在最上层。",
        "年糕洗澡的时候抓伤了我的手。",
        "从救助站领养了一只小黑猫，叫芝麻，和年糕先隔离一周。",
        "年糕和芝麻第一次见面，年糕哈了芝麻好几次。",
        "年糕和芝麻现在会一起睡觉了，两只猫相处得很好。",
        "芝麻打了第二针疫苗，年糕也做了年度体检。",
    ],
    "coffee": [
        "I drink a pour-over coffee every morning; Ethiopian beans are my favourite.",
        "Bought a Comandante hand grinder for my pour-over coffee.",
        "Coffee in the afternoon keeps me awake at night, so I switched to green tea after 2 pm.",
        "Found a small specialty coffee roaster near the office in Nanshan.",
        "Tried an Aeropress recipe from the roaster: 15 g coffee, 230 g water, two minutes.",
        "The roaster's Kenyan beans are too sour for me; back to Ethiopian Yirgacheffe.",
        "Started weighing my pour-over coffee: 1 to 16, water at 92 degrees.",
        "Thinking about buying an espresso machine, maybe a Breville, for milk coffee at home.",
        "Decided against the espresso machine for now; the Aeropress makes good enough milk coffee.",
        "Took a latte art class at the coffee roaster; my hearts look like pears.",
        "Cut down to one coffee a day after the dentist mentioned stains.",
        "Gave my colleague a bag of the roaster's Yirgacheffe coffee beans for her birthday.",
    ],
    "running": [
        "Signed up for the Shenzhen half marathon in December.",
        "Ran 5 km along the Shenzhen Bay park in 31 minutes.",
        "Running plan for the half marathon: three runs a week, long run on Sunday.",
        "Sunday long run: 12 km in 1 hour 18 minutes.",
        "Bought new running shoes, Asics Novablast, after my old ones wore out.",
        "Shin pain after the 15 km long run; taking three days off running.",
        "Back to running; an easy 6 km with no shin pain.",
        "Ran 18 km on Sunday, the longest run of my half marathon plan.",
        "Joined a running club that meets at Shenzhen Bay on Wednesday evenings.",
        "Tempo run with the running club: 8 km at 5:30 per km.",
        "Finished the Shenzhen half marathon in 2 hours 4 minutes!",
        "Thinking about a full marathon next year; the running club does Xiamen in January.",
    ],
    "family": [
        "妈妈住在成都，每周日晚上和她视频。",
        "妈妈的血压有点高，医生让她每天量血压。",
        "给妈妈买了一个电子血压计寄回成都。",
        "爸爸退休了，开始在成都的老年大学学书法。",
        "春节回成都过年，和爸爸妈妈一起包了饺子。",
        "准备五一接爸妈来深圳住两周。",
        "爸妈来深圳了，带他们去了世界之窗和深圳湾公园。",
        "妈妈说深圳太热，还是想早点回成都。",
        "表妹考上了四川大学，妈妈让我给她寄一台笔记本电脑。",
        "妈妈的血压控制住了，医生把药量减半。",
        "爸爸的书法作品在老年大学的展览上展出了。",
        "国庆节回成都，陪妈妈去复查，一切正常。",
    ],
    "apartment": [
        "在深圳租的房子合同八月到期，房东说要涨租百分之十。",
        "开始看房，想在南山区买一套两居室。",
        "看了三套南山的二手房，价格都在六百万以上。",
        "和中介去看了西丽的一套两居室，离地铁站只有五百米。",
        "在考虑要不要买西丽那套房子，首付还差五十万。",
        "和银行谈了房贷，利率三点一，贷款三十年。",
        "决定买下西丽的那套两居室，签了购房合同。",
        "房子过户完成，拿到钥匙了。",
        "找了装修公司，预算二十万，工期三个月。",
        "装修开工了，先做水电改造。",
        "装修延期两周，因为瓷砖到货晚了。",
        "装修完成，搬进了西丽的新家，年糕很快就适应了。",
        "新家的房贷每月一万二，从工资卡自动扣款。",
    ],
    "guitar": [
        "Started learning the acoustic guitar with online lessons.",
        "My fingertips hurt after the first week of guitar practice.",
        "Learned the G, C and D chords on the guitar; switching between them is slow.",
        "Practising guitar 20 minutes a day with a metronome at 60 bpm.",
        "Bought a Yamaha FG800 acoustic guitar to replace the borrowed one.",
        "Can finally play Wonderwall on the guitar, badly.",
        "The F barre chord on the guitar is still buzzing after a month.",
        "Found a guitar teacher in Futian for Saturday lessons.",
        "My guitar teacher says my strumming rhythm is better than my chords.",
        "Played guitar at a friend's birthday party; only two wrong chords.",
        "Thinking about recording a guitar cover for my sister's wedding.",
        "Recorded the guitar cover for my sister's wedding; she cried.",
    ],
    "japanese": [
        "开始学日语，用 Duolingo 每天学十五分钟。",
        "日语五十音图终于背完了，片假名还是容易混。",
        "报名了 JLPT N4 考试，七月考。",
        "Japanese class on Tuesday evenings: we started the te-form.",
        "日语的敬语好难，老师说 N4 不考太多。",
        "Watched a Japanese drama without Chinese subtitles and understood about a third.",
        "JLPT N4 模拟题考了 78 分，听力最弱。",
        "每天通勤路上听 NHK 的日语新闻练听力。",
        "参加了 JLPT N4 考试，听力部分感觉还行。",
        "JLPT N4 成绩出来了，通过了！",
        "准备明年考日语 N3，换了一本新的语法书。",
        "Had a language exchange with a Japanese colleague: my Japanese for her Chinese.",
    ],
    "health": [
        "体检发现维生素 D 偏低，医生建议每天补充一千单位。",
        "最近腰疼，久坐之后更明显。",
        "去看了腰疼，医生说是腰肌劳损，建议做理疗。",
        "做了五次理疗，腰疼好多了。",
        "买了一张升降桌，站着写代码，腰舒服多了。",
        "牙医说我有两颗龋齿，需要补牙。",
        "补了两颗牙，下个月再去洗牙。",
        "最近失眠，晚上十二点以后才能睡着。",
        "睡前不看手机之后，失眠好了一些。",
        "复查维生素 D 已经正常了，可以停掉补充剂。",
        "打算每年十月做一次全面体检。",
        "十月的体检结果都正常，只有眼睛近视又加深了。",
    ],
    "finance": [
        "Opened an index fund account and set up a monthly investment of 3,000 yuan.",
        "My savings target this year is 150,000 yuan for the apartment down payment.",
        "Moved my emergency fund into a money market fund: six months of expenses.",
        "Index fund is down 8 percent this quarter; keeping the monthly investment anyway.",
        "Reading 'The Psychology of Money'; the chapter on enough is the best.",
        "Thinking about whether to pay off the mortgage early or keep investing in the index fund.",
        "Decided to keep investing in index funds instead of paying the mortgage early; the rate is only 3.1 percent.",
        "Started a budget spreadsheet: rent, food, cat, coffee and travel each get a monthly limit.",
        "Budget review: I spent 40 percent over the food budget in July.",
        "Raised the monthly index fund investment to 4,000 yuan after my raise.",
        "Tax refund of 2,300 yuan arrived; put it into the emergency fund.",
        "Index fund is up 12 percent for the year.",
    ],
    "travel": [
        "计划国庆去云南旅行，想去大理和丽江。",
        "订了去大理的机票，十月一日出发。",
        "在大理订了一家洱海边的民宿，可以看日出。",
        "做了云南旅行的攻略：大理三天，丽江两天，最后一天去沙溪古镇。",
        "到大理了，骑电动车环洱海，风景太美了。",
        "在大理古城吃了乳扇和过桥米线。",
        "丽江古城人太多了，第二天改去了束河古镇。",
        "沙溪古镇很安静，是这次云南旅行最喜欢的地方。",
        "云南旅行回来了，照片整理了三百多张。",
        "考虑明年春天去日本旅行，看樱花。",
        "把云南旅行的照片做成了一本相册送给妈妈。",
        "查了日本旅行的签证材料，需要银行流水和在职证明。",
        "日本旅行的签证下来了，五年多次往返。",
    ],
}

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
# When each area was active (day of 2026, first and last): a life has seasons. The exam is
# prepared from spring to June, the flat bought and renovated from spring to autumn, the trip
# planned in late summer; the cat, the family, health and money run all year.
SPANS = {
    "message-queue": (10, 200), "cka-exam": (40, 330), "cat": (5, 350), "coffee": (15, 345),
    "running": (120, 355), "family": (20, 340), "apartment": (60, 300), "guitar": (0, 290),
    "japanese": (15, 300), "health": (30, 345), "finance": (10, 350), "travel": (200, 350),
}


def spread(topics: dict[str, list[str]], spans: dict[str, tuple[int, int]],
           seed: int) -> list[dict]:
    """Each topic's memories in their written order, on days drawn (seeded) within its span:
    rows with id, content, created_at (ISO) and metadata.topic, oldest first. The other
    labelled sets (make_heldout.py, make_third.py) are spread the same way."""
    rng = random.Random(seed)
    rows = []
    for topic, texts in topics.items():
        first, last = spans[topic]
        days = sorted(rng.sample(range(first, last), len(texts)))
        for n, (day, text) in enumerate(zip(days, texts, strict=True)):
            when = START + timedelta(days=day, hours=rng.randint(0, 13), minutes=rng.randint(0, 59))
            rows.append({"id": f"{topic}-{n + 1:02d}", "content": text,
                         "created_at": when.isoformat(), "metadata": {"topic": topic}})
    rows.sort(key=lambda r: (r["created_at"], r["id"]))
    return rows


def write(rows: list[dict], name: str) -> None:
    """Write ``rows`` as JSON lines to ``name`` beside this script, and say so."""
    out = Path(__file__).with_name(name)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    topics = len({r["metadata"]["topic"] for r in rows})
    print(f"wrote {len(rows)} memories over {topics} topics to {out}")


def build(seed: int = 13) -> list[dict]:
    """Every memory of this set (``spread``)."""
    return spread(TOPICS, SPANS, seed)


def main() -> None:
    write(build(), "memories.jsonl")


if __name__ == "__main__":
    main()
