"""The development set for recall's current facts (issue 36): written by the engineer who
built the evidence rule, from the issue's examples and the distractor kinds that
bench/updates/README.md names, to tune on, so that the held-out bench/updates stays held out.

    python bench/updates_dev/make_set.py      # writes memories.jsonl and questions.jsonl

Same format as bench/updates (README.md there). Each memory has a label after it: ``cur:A``
(the latest value of attribute A of the question's subject), ``old:A`` (an earlier value),
``-`` (noise or a look-alike, never current). Questions name their attribute; the id lists
are computed from the labels.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (person, day, role, text, labels): labels "old:home cur:work" etc.; "" for noise/traps.
MEMORIES = [
    # d1: Nora, English. home Lisbon -> Porto -> Lisbon; job Initech -> Globex; drink coffee
    # -> tea -> coffee; diet vegan -> vegetarian; pet cat Miso; sport running -> bouldering.
    ("d1", "2024-01-05", "user", "I live in Lisbon, in a small flat near the river.", "old:home"),
    ("d1", "2024-01-09", "user", "Started at Initech as a product designer.", "old:work"),
    ("d1", "2024-01-20", "user", "My sister lives in Madrid and wants me to visit.", ""),
    ("d1", "2024-02-02", "user", "I've been vegan for a year now and I feel great.", "old:diet"),
    ("d1", "2024-02-14", "user", "Coffee every morning, two cups before nine.", "old:drink"),
    ("d1", "2024-03-01", "user", "Running three times a week along the river.", "old:sport"),
    ("d1", "2024-03-15", "user", "Moved to Porto for a change of scene. The flat smells of paint.", "old:home"),
    ("d1", "2024-04-02", "user", "Had a francesinha with Rui, way too much cheese.", ""),
    ("d1", "2024-04-20", "user", "Adopted a grey cat from the shelter and called her Miso.", "cur:pet"),
    ("d1", "2024-05-11", "user", "Switched from coffee to green tea; sleeping much better.", "old:drink"),
    ("d1", "2024-06-01", "user", "Thinking of moving to Berlin one day, maybe.", ""),
    ("d1", "2024-06-18", "assistant", "Since you live in Lisbon, you could try the Alfama cafés.", ""),
    ("d1", "2024-07-04", "user", "Painted the living room green over the weekend.", ""),
    ("d1", "2024-07-22", "user", "Priya lives in Chicago and works at Datadog.", "old:priya-home old:priya-work"),
    ("d1", "2024-08-09", "user", "If we ever get a dog it has to be a greyhound.", ""),
    ("d1", "2024-09-01", "user", "I moved back to bouldering full time, running hurt my knee.", "cur:sport"),
    ("d1", "2024-09-20", "user", "Mum says she is never leaving Coimbra.", ""),
    ("d1", "2024-10-05", "user", "Vegan didn't stick; I'm vegetarian again and cheese is back.", "cur:diet"),
    ("d1", "2024-10-30", "user", "Back in Lisbon for Christmas shopping with my sister.", ""),
    ("d1", "2024-11-12", "user", "The vet put Miso on a kidney diet, poor thing.", ""),
    ("d1", "2024-12-01", "user", "Priya says she's moving to Austin in January.", ""),
    ("d1", "2025-01-10", "user", "Handed in my notice at Initech today.", ""),
    ("d1", "2025-01-28", "user", "Priya moved to Austin and started at Stripe.", "cur:priya-home cur:priya-work"),
    ("d1", "2025-02-03", "user", "I left Initech and joined Globex as a design lead.", "cur:work"),
    ("d1", "2025-02-20", "user", "Went back to coffee after a month of tea.", "cur:drink"),
    ("d1", "2025-03-08", "user", "The offer on the Marvila flat was accepted; moving in May.", ""),
    ("d1", "2025-04-02", "user", "Rented a car for the drive to the Algarve.", ""),
    ("d1", "2025-05-17", "user", "Moving day: we're back in Lisbon, in the Marvila flat now.", "cur:home"),
    ("d1", "2025-06-01", "assistant", "I live in Berlin, as an AI I do not really live anywhere.", ""),
    ("d1", "2025-06-20", "user", "Moved my desk into the spare room, much better light.", ""),
    ("d1", "2025-07-04", "user", "Rui bought a Vespa and keeps asking me to ride it.", ""),
    ("d1", "2025-08-15", "user", "My grandmother is in hospital in Coimbra after a fall.", ""),
    ("d1", "2025-09-09", "assistant", "Since you work at Initech, the Friday demo could help.", ""),
    ("d1", "2025-10-02", "user", "Made dosas on the cast-iron pan again, nearly perfect.", ""),
    # d3: Sam, English. home Leeds -> York; job teacher at Northfield -> analyst at Brightline;
    # partner Alex -> single -> Jo; car Fiesta -> none -> Niro; phone iPhone 11 -> Pixel 8;
    # brother Ewan: Aberdeen -> Inverness.
    ("d3", "2023-02-01", "user", "Third year teaching maths at Northfield Academy in Leeds.", "old:work old:home"),
    ("d3", "2023-02-19", "user", "Alex and I celebrated two years together with dim sum.", "old:partner"),
    ("d3", "2023-03-05", "user", "My phone is an ancient iPhone 11; the battery dies by lunch.", "old:phone"),
    ("d3", "2023-03-30", "user", "Drove the old Fiesta to the coast, it only just made it.", "old:car"),
    ("d3", "2023-04-14", "user", "My brother Ewan lives in Aberdeen, near the harbour.", "old:ewan-home"),
    ("d3", "2023-05-02", "user", "Marked sixty mock papers tonight. Never again.", ""),
    ("d3", "2023-06-10", "user", "Alex and I broke up. It was coming for months.", "old:partner"),
    ("d3", "2023-07-01", "user", "Sold the Fiesta for scrap money; buses from now on.", "old:car"),
    ("d3", "2023-07-20", "user", "Theo lives in York and keeps saying I should move there.", ""),
    ("d3", "2023-08-12", "user", "Kyle bought a Subaru Outback and will not stop talking about it.", ""),
    ("d3", "2023-09-03", "user", "Signed up for an evening data course at the library.", ""),
    ("d3", "2023-10-15", "user", "Finally replaced the dying iPhone with a Pixel 8.", "cur:phone"),
    ("d3", "2023-11-11", "user", "Ewan says he might move to Inverness next year.", ""),
    ("d3", "2023-12-24", "user", "Christmas at Mum's, she made far too many sprouts.", ""),
    ("d3", "2024-01-22", "user", "Got an offer from Brightline Analytics in York! Starting in March.", ""),
    ("d3", "2024-02-09", "user", "Handed in my notice at Northfield; the kids made me a card.", ""),
    ("d3", "2024-02-26", "user", "The offer on the terrace house in York was accepted, moving in March.", ""),
    ("d3", "2024-03-16", "user", "Moving day. The van got lost twice but we're in the York house now.", "cur:home"),
    ("d3", "2024-03-18", "user", "First day at Brightline as a junior data analyst.", "cur:work"),
    ("d3", "2024-04-04", "user", "Painted the spare bedroom yellow; it looks like a lemon.", ""),
    ("d3", "2024-04-28", "assistant", "Since you live in Leeds, the Headingley market is worth a visit.", ""),
    ("d3", "2024-05-19", "user", "Ewan moved to Inverness, new flat by the river.", "cur:ewan-home"),
    ("d3", "2024-06-07", "user", "Back in Leeds for a school reunion, the old staff room hasn't changed.", ""),
    ("d3", "2024-06-30", "user", "Met Jo at the climbing wall; we talked for hours.", ""),
    ("d3", "2024-08-18", "user", "Jo and I are officially together.", "cur:partner"),
    ("d3", "2024-09-09", "user", "Test drove a Kia Niro. Thinking about it.", ""),
    ("d3", "2024-10-01", "user", "Bought a second-hand Kia Niro, first car in over a year.", "cur:car"),
    ("d3", "2024-10-20", "user", "Rented a van to help Jo move her sofa.", ""),
    ("d3", "2024-11-05", "user", "Cooked a huge lasagne for the team lunch.", ""),
    ("d3", "2024-12-12", "assistant", "As an AI I don't drive, but the Niro is a good choice.", ""),
    ("d3", "2025-01-19", "user", "Went back to Northfield to give a talk to the sixth form.", ""),
    ("d3", "2025-02-02", "user", "Long walk on the city walls, York in the frost is lovely.", ""),
    # d2: 周宁, Chinese. home 杭州 -> 上海 -> 苏州; job 云启科技 -> 星河教育; pet 豆豆 (cat)
    # -> 可乐 (dog); drink 咖啡 -> 茶; partner single -> 周明.
    ("d2", "2024-01-03", "user", "我住在杭州，每天骑车去西湖边上班。", "old:home"),
    ("d2", "2024-01-15", "user", "我在云启科技做产品经理，第三年了。", "old:work"),
    ("d2", "2024-02-01", "user", "妈妈住在成都，打电话说想我了。", ""),
    ("d2", "2024-02-20", "user", "家里的橘猫豆豆又把绿萝啃了。", "old:pet"),
    ("d2", "2024-03-08", "user", "每天早上一杯手冲咖啡，不喝不行。", "old:drink"),
    ("d2", "2024-04-10", "user", "搬到上海了，房子小但是离公司近。", "old:home"),
    ("d2", "2024-05-05", "user", "要不要搬去深圳试试？想想而已。", ""),
    ("d2", "2024-05-30", "user", "客厅换了新沙发，终于能躺着看电影了。", ""),
    ("d2", "2024-06-18", "user", "小林跳槽去了华为，说加班太多。", "old:xiaolin-work"),
    ("d2", "2024-07-02", "assistant", "你之前提到住在杭州，西湖边的早餐店怎么样？", ""),
    ("d2", "2024-08-01", "user", "豆豆去世了，十四岁，家里一下子空了。", "old:pet"),
    ("d2", "2024-09-12", "user", "咖啡喝多了心慌，改成每天早上喝绿茶了。", "cur:drink"),
    ("d2", "2024-10-01", "user", "国庆回杭州看朋友，西湖人太多了。", ""),
    ("d2", "2024-10-20", "user", "和周明在一起了，他做饭比我好吃。", "cur:partner"),
    ("d2", "2024-11-11", "user", "跟云启提了离职，下个月开始新工作。", ""),
    ("d2", "2024-12-02", "user", "入职星河教育，第一天就开了三个会。", "cur:work"),
    ("d2", "2025-01-06", "user", "打算明年换一辆电车。", ""),
    ("d2", "2025-02-14", "user", "奶奶住院了，在成都华西医院，妈妈一直陪着。", ""),
    ("d2", "2025-03-03", "user", "收养了一只柯基，叫可乐。", "cur:pet"),
    ("d2", "2025-04-18", "user", "可乐换了新狗粮，吃得很香。", ""),
    ("d2", "2025-05-09", "user", "小林入职大疆了，终于不用天天加班。", "cur:xiaolin-work"),
    ("d2", "2025-06-21", "user", "搬家到苏州，新家楼下就是地铁站。", "cur:home"),
    ("d2", "2025-07-07", "user", "阳台改成了小书房，放了一张旧书桌。", ""),
    ("d2", "2025-08-15", "assistant", "作为AI我没有宠物，不过柯基很可爱。", ""),
    ("d2", "2025-09-01", "user", "又回到羽毛球了，周末和同事打两小时。", ""),
    ("d2", "2025-10-10", "user", "好想念杭州的龙井虾仁。", ""),
]

QUESTIONS = [
    ("d1", "en", "Where do I live now?", "home", "self", ["Lisbon"], "current"),
    ("d1", "en", "which city is home these days", "home", "self", ["Lisbon"], "current"),
    ("d1", "en", "Where do I work now?", "work", "self", ["Globex"], "current"),
    ("d1", "en", "Who's my employer?", "work", "self", ["Globex"], "current"),
    ("d1", "en", "Am I still vegan?", "diet", "self", ["vegetarian"], "current"),
    ("d1", "en", "What do I drink in the morning now?", "drink", "self", ["coffee"], "current"),
    ("d1", "en", "Am I still drinking green tea?", "drink", "self", ["coffee"], "current"),
    ("d1", "en", "What sport do I do these days?", "sport", "self", ["bouldering"], "current"),
    ("d1", "en", "What pet do I have?", "pet", "self", ["Miso"], "current"),
    ("d1", "en", "Which city does Priya live in now?", "priya-home", "Priya", ["Austin"], "current"),
    ("d1", "en", "Where does Priya work now?", "priya-work", "Priya", ["Stripe"], "current"),
    ("d1", "en", "What car do I drive now?", "car", "self", [], "none"),
    ("d1", "en", "Do I have a dog?", "dog", "self", [], "none"),
    ("d3", "en", "Where do I live these days?", "home", "self", ["York"], "current"),
    ("d3", "en", "Who do I work for?", "work", "self", ["Brightline"], "current"),
    ("d3", "en", "Am I still teaching?", "work", "self", ["Brightline"], "current"),
    ("d3", "en", "Who am I seeing at the moment?", "partner", "self", ["Jo"], "current"),
    ("d3", "en", "What car do I have?", "car", "self", ["Niro"], "current"),
    ("d3", "en", "what phone do i use", "phone", "self", ["Pixel"], "current"),
    ("d3", "en", "Where does my brother Ewan live now?", "ewan-home", "Ewan", ["Inverness"], "current"),
    ("d3", "en", "Do I have a pet?", "pet", "self", [], "none"),
    ("d2", "zh", "我现在住在哪里？", "home", "self", ["苏州"], "current"),
    ("d2", "zh", "我家在哪个城市", "home", "self", ["苏州"], "current"),
    ("d2", "zh", "我在哪家公司上班？", "work", "self", ["星河教育"], "current"),
    ("d2", "zh", "我现在养的是什么宠物？", "pet", "self", ["可乐"], "current"),
    ("d2", "zh", "我早上还喝咖啡吗？", "drink", "self", ["绿茶"], "current"),
    ("d2", "zh", "我现在有对象吗？", "partner", "self", ["周明"], "current"),
    ("d2", "zh", "小林现在在哪家公司？", "xiaolin-work", "小林", ["大疆"], "current"),
    ("d2", "zh", "我妈妈住在哪里？", "mum-home", "妈妈", [], "none"),
    ("d2", "zh", "我开什么车？", "car", "self", [], "none"),
]


def main() -> None:
    rows, labels = [], {}
    counters: dict[str, int] = {}
    for person, day, role, text, label in MEMORIES:
        counters[person] = counters.get(person, 0) + 1
        mid = f"{person}-{counters[person]:03d}"
        rows.append({"person": person, "id": mid, "content": text,
                     "created_at": f"{day}T09:00:00Z", "role": role})
        labels[mid] = (person, label.split())
    out = []
    for person, language, question, attribute, subject, current, kind in QUESTIONS:
        cur = [i for i, (p, ls) in labels.items() if p == person and f"cur:{attribute}" in ls]
        old = [i for i, (p, ls) in labels.items() if p == person and f"old:{attribute}" in ls]
        trap = [i for i, (p, ls) in labels.items() if p == person and i not in cur + old]
        out.append({"person": person, "language": language, "question": question,
                    "attribute": attribute, "subject": subject, "current": current,
                    "history": [], "current_ids": cur if kind != "none" else [],
                    "stale_ids": old if kind != "none" else [], "distractor_ids": trap,
                    "as_of": "2026-12-01T00:00:00Z", "kind": kind})
    (HERE / "memories.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    (HERE / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in out), "utf-8")


if __name__ == "__main__":
    main()
