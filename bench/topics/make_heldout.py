#!/usr/bin/env python3
"""Write bench/topics/heldout.jsonl: a second, held-out labelled set for topic routing.

Written without looking at how routing works, to check that it generalises beyond
memories.jsonl. One different invented person, Xu Jia (许佳), a secondary-school physics
teacher in Hangzhou, over 2026: 12 areas of life and work, mostly different from Chen Yu's,
each memory jotted by hand in the language she would use for it (Chinese, English, or
Chinese with English terms), labelled with its main topic. Some memories touch two areas
(the dog in the car, a cake for the wedding) and carry the label of the main one. Dates:
each topic's memories in their written order, spread by a seeded generator, so topics
interleave as they would in a life, each within the months it was active (``SPANS``).
Deterministic: the same file every run.

    python bench/topics/make_heldout.py
"""

from __future__ import annotations

from make_set import spread, write  # this folder: run as `python bench/topics/<script>`

TOPICS: dict[str, list[str]] = {
    "teaching": [
        "这学期带高二两个班的物理，还当7班的班主任。",
        "7班期中考试物理平均分比3班低了六分，得想想办法。",
        "下个月有公开课，题目定了楞次定律，教研组长要来听。",
        "公开课试讲了一次，超时八分钟，演示实验那段要砍短。",
        "公开课上完了，评课的老师说学生互动不错，就是板书太乱。",
        "晚自习答疑，好几个学生还是分不清动量和动能。",
        "家长会上有家长问能不能多布置点题，我说题量不是关键。",
        "班上有个男生上课老睡觉，找他聊了聊，原来每天打游戏到两点。",
        "打算试一下分层作业：A 层只做基础题，B 层多一道拓展题。",
        "分层作业试了一个月，7班按时交作业的从七成涨到了九成。",
        "改了一百多份月考卷子，眼睛都花了。",
        "带学生做了测重力加速度的分组实验，用单摆那组数据最准。",
        "期末考试7班的物理平均分追上3班了，开心。",
        "学校问我下学期要不要跟着班上高三，还在考虑。",
        "答应带高三了，暑假把近五年的浙江选考物理题整理一遍。",
    ],
    "dog": [
        "豆包是我们家的柯基，两岁，特别能吃。",
        "Took 豆包 for his rabies shot; the vet says he is 1.5 kg overweight.",
        "豆包又把沙发垫咬破了，只要出门超过三个小时就拆家。",
        "Started crate training because of the chewing; he whined the first two nights.",
        "遛狗的时候豆包和一只金毛打起来了，耳朵被咬破一点。",
        "Cleaning his ear with saline twice a day; healed in about a week.",
        "考虑给豆包报个训犬班，主要练召回和随行。",
        "Signed 豆包 up for a six-week obedience class on Saturday mornings.",
        "训犬老师说柯基聪明但是倔，一定要用零食奖励。",
        "He finally comes back when called at the dog park, most of the time.",
        "换了鸭肉配方的狗粮，豆包吃了以后不怎么挠耳朵了。",
        "Booked a pet hotel for 豆包 for the honeymoon week, 120 yuan a night.",
        "去接豆包，寄养的阿姨说他每天都趴在门口等我们。",
        "豆包掉毛太厉害，买了一把脱毛梳，一梳一大团。",
    ],
    "balcony-garden": [
        "阳台朝南，打算种点东西，先买了两盆薄荷和一盆罗勒。",
        "网上买了营养土、珍珠岩和几个控根盆。",
        "小番茄发芽了，一共冒出来十一棵苗。",
        "罗勒长得太快，掐了顶，顺手做了一罐青酱。",
        "薄荷招了蚜虫，叶子背面全是，喷了稀释的肥皂水。",
        "蚜虫还是没除干净，又买了一瓶吡虫啉。",
        "给小番茄搭了架子，最高的那棵快一米了。",
        "梅雨季阳台太潮，两盆多肉烂根了，只好扔掉。",
        "第一批小番茄红了，摘了一小碗，酸甜的。",
        "想在阳台装个自动滴灌，出门的时候不用麻烦邻居浇水。",
        "滴灌装好了，定时每天早上六点浇十分钟。",
        "月季开了第一朵花，粉色的，拍了好多张。",
        "天冷了，把柠檬树搬进屋，其他盆都剪短了。",
        "阳台上种了一盆蒜苗，已经剪了两次炒鸡蛋。",
    ],
    "baking": [
        "Baked my first sourdough loaf this weekend; it came out flat and dense.",
        "Started a new sourdough starter from scratch, rye flour and water, fed twice a day.",
        "The starter finally doubles in four hours; I named it 老面.",
        "Second loaf: much better oven spring in a Dutch oven at 250°C.",
        "Bought a kitchen scale that reads to 0.1 g, mostly for yeast and salt.",
        "Tried a Basque cheesecake from a Bilibili recipe; burnt on top, perfect inside.",
        "烤了一盘蛋挞带去学校，办公室的老师几分钟就抢光了。",
        "Thinking about a proper stand mixer; kneading brioche by hand takes forty minutes.",
        "Got a Kenwood stand mixer on sale for 1,999 yuan.",
        "First brioche with the mixer: soft and shreddy, finally.",
        "Macarons cracked on top again; the oven runs 15 degrees hotter than the dial.",
        "Put an oven thermometer in and turned the dial down; this batch of macarons had feet.",
        "Practising a naked cake for the wedding dessert table; the cream keeps sliding off.",
        "Gave up on baking our own wedding cake; ordered one from a bakery on 武林路, I'll just do the cookies.",
    ],
    "car": [
        "想买车了，每次带豆包去宠物医院都打不到车。",
        "Comparing an EV and a plug-in hybrid: BYD Seal vs 秦 PLUS DM-i.",
        "去4S店试驾了海豹，加速很猛，就是豆包坐后座有点挤。",
        "Test drove a Model 3 as well; lovely to drive but 25 万 is over budget.",
        "问了物业地下车库能不能装充电桩，说要先去国家电网报装。",
        "国家电网的师傅来看过了，充电桩能装，要单独拉一根线。",
        "Decided on the Seal; with a home charger it works out to about 5 fen per km.",
        "提车了！白色的，4S店送了脚垫和一年的免费保养。",
        "The home charger is in: 7 kW, full overnight on the 谷电 rate.",
        "Car insurance: 交强险 plus 商业险 came to about 5,200 yuan, went with 平安.",
        "第一次自己开上高速，回绍兴一个半小时就到了。",
        "在学校停车场被人刮了一道，对方留了电话，走保险修好了。",
        "First service at 5,000 km: tyres and brake fluid checked, no oil change on an EV.",
        "刹车的时候吱吱响，4S店说刹车片没问题，下雨天正常。",
        "Road trip to 安吉 with 豆包; 快充 at the 服务区 took 30 to 80 percent in 25 minutes.",
    ],
    "photography": [
        "Bought a second-hand Fujifilm X-T30 with the 18-55 kit lens off 闲鱼.",
        "Shooting everything in aperture priority for now; ISO still confuses me.",
        "Went to West Lake at sunrise for the 断桥; the good light lasted about ten minutes.",
        "Switched to RAW and started editing in Lightroom; my phone pictures look flat now.",
        "Thinking about a prime lens: the 23mm f/2 or the 35mm f/1.4.",
        "Bought the XF 35mm f/1.4; 豆包's portraits with a blurry background look great.",
        "Joined a street photography walk on 河坊街 that someone organised on 小红书.",
        "Most of my street shots are taken from too far away; the leader said get closer.",
        "Tried film with a borrowed Olympus; 36 frames and only 9 in focus.",
        "Printed twelve shots for the hallway; the lab's matte paper looks lovely.",
        "My shot of the 龙井 tea terraces got second place in the staff photo contest.",
        "Cleaned the sensor myself with a swab kit, nervous the whole time.",
        "Made a photo book of my forty favourite frames from this year.",
    ],
    "badminton": [
        "学校教工羽毛球队每周三下午训练，报名参加了。",
        "打了两个小时球，第二天大腿酸得下不了楼梯。",
        "买了一支尤尼克斯的拍子，穿了26磅的线。",
        "反手高远球总是打不到底线，教练让我每天多练挥拍。",
        "在球馆认识了几个球友，周末一起约场。",
        "周末订场太难了，晚上七点到九点的场地一放出来就被抢光。",
        "打双打的时候扭了脚踝，冰敷了一晚上。",
        "脚踝消肿了，先停两周不打。",
        "回球场了，戴着护踝，步法还不太敢放开。",
        "准备参加区里的教职工比赛，和数学组王老师搭混双。",
        "混双打进了八强，输给了一中的一对，心服口服。",
        "断线了，这次换成24磅，控球感觉好一点。",
        "打算明年在学校带一个学生羽毛球社团。",
    ],
    "wedding": [
        "阿杰和我决定今年秋天在杭州办婚礼。",
        "看了三家酒店的宴会厅，西湖边那家最贵，一桌六千八。",
        "订了滨江的一家酒店，二十五桌，交了两万定金。",
        "Made a guest list spreadsheet with Ajie; already at 260 people, we need to cut.",
        "去舟山海边拍婚纱照，一天换了四套衣服。",
        "婚纱照选片，三百多张里只能挑四十张进相册，太难了。",
        "婚礼跟拍的摄影师要参考图，我发了几张自己喜欢的胶片风格。",
        "婚庆公司的方案出来了，主色调雾霾蓝，预算超了一万。",
        "纠结要不要请专业主持人，阿杰想让他大学室友来主持。",
        "最后还是请了专业主持人，室友当伴郎。",
        "Ordered the invitations: 150 printed, everyone else gets the 电子请柬 on WeChat.",
        "试婚纱，选了一件简单的缎面款，不要拖尾。",
        "婚礼办完了，累到第二天睡到中午。",
        "Honeymoon in Okinawa for six days, mostly snorkelling and eating.",
        "把礼金和账目整理好了，给每位亲友都发了感谢的消息。",
    ],
    "side-project": [
        "Idea: a WeChat mini-program where my students check in homework and see answers after the deadline.",
        "Registered a mini-program account; the 个人主体 version can't take payments, which I don't need.",
        "Writing the backend in Go with Gin; the first endpoint returns today's homework list.",
        "SQLite or MySQL? Going with SQLite for now: one file, easy to back up.",
        "The WeChat login flow is confusing: code2Session, openid, then my own session token.",
        "Login works end to end; the openid shows up in my users table.",
        "小程序审核被驳回了，说类目不对，要改成教育-在线教育。",
        "Deployed the Go service on a 2-core 轻量服务器 at Tencent Cloud, 99 yuan a year.",
        "用域名要先做 ICP 备案，材料交上去了，说要等二十天。",
        "备案通过了，HTTPS 证书也配好了。",
        "Pilot with 7班: 38 of 42 students checked in homework in the first week.",
        "Bug: two students saw each other's answers because I cached per class, not per user; fixed.",
        "Thinking about open-sourcing the Go backend on GitHub.",
        "Put the repo on GitHub; a teacher in 宁波 already opened an issue about deployment.",
    ],
    "book-club": [
        "Joined a book club at 晓风书屋; we meet on the last Sunday of the month.",
        "This month's book is 'Klara and the Sun'; finished it in two evenings.",
        "The Klara discussion ran over two hours; someone cried about the ending.",
        "下个月读余华的《文城》，书店卖断货了，只好买电子版。",
        "Didn't like 文城 as much as 活着; said so at the meeting and half the group agreed.",
        "Volunteered to host next month's meeting and choose the book.",
        "Torn between 'The Three-Body Problem' and something shorter like 'Convenience Store Woman'.",
        "Picked 'Convenience Store Woman'; it's short enough that everyone will finish it.",
        "Hosted for the first time; prepared ten questions and we only got through three.",
        "读书会有人提议每个季度读一本英文原版，投票通过了。",
        "First English original: 'Tomorrow, and Tomorrow, and Tomorrow'; the gaming vocabulary is hard.",
        "Skipped this month's meeting; too much wedding admin, I never finished the book.",
        "Year-end dinner with the group; everyone brought their favourite book of the year to swap.",
    ],
    "parents": [
        "爸妈住在绍兴，我每两周回去一次。",
        "爸爸体检查出胆结石，医生建议做微创手术。",
        "在纠结是在绍兴做手术，还是接来杭州邵逸夫医院做。",
        "最后定了在邵逸夫做，我离得近可以照顾。",
        "爸爸的胆囊手术很顺利，住院五天。",
        "妈妈在医院陪护睡折叠床，腰受不了，晚上我去换她。",
        "爸爸出院后只能吃清淡的，妈妈天天给他熬粥。",
        "妈妈学会了微信视频，现在每天晚上都要看一眼豆包。",
        "弟弟在上海找到了新工作，爸妈嘴上不说，其实舍不得。",
        "给爸妈家装了个智能门铃，不在家也能看到谁来了。",
        "准备给爸妈约一个全面体检的套餐。",
        "妈妈的体检报告出来了，骨密度偏低，医生让她补钙。",
        "爸爸术后复查一切正常，又开始偷偷喝黄酒了。",
    ],
    "dental": [
        "右下的智齿又发炎了，半边脸都肿了，吃了两天消炎药。",
        "Dentist at 浙大口腔 says the wisdom tooth is impacted and should come out.",
        "拍了 CBCT，智齿离神经管很近，医生说还是早点拔。",
        "Booked the extraction; have to wait until the swelling is completely gone.",
        "智齿拔了，四十分钟，打了三针麻药。",
        "Day 3 after the extraction: still only 粥 and yogurt.",
        "拔牙第七天拆线，医生说愈合得不错。",
        "Thinking about invisible braces before the wedding; my lower front teeth are crowded.",
        "问了价格，隐适美三万五，国产的时代天使两万二。",
        "The orthodontist says it's an 18-month case, so it won't be done for the wedding anyway; postponed.",
        "洗牙的时候发现一颗小蛀牙，顺便补了。",
        "Started using a water flosser; my gums bleed much less after two weeks.",
        "Decided: braces with 时代天使 after the wedding.",
        "戴上牙套了，第一周说话漏风，上课的时候学生在底下偷笑。",
    ],
}

# When each area was active (day of 2026, first and last). Teaching covers the spring term
# and the summer before taking the class into its final year; the wedding is planned from
# February and held in late autumn, so the cake, the pet hotel and the braces fall around it; the
# garden runs from spring sowing to winter; the dog, the parents and the badminton all year.
SPANS = {
    "teaching": (40, 235), "dog": (3, 358), "balcony-garden": (60, 355), "baking": (20, 290),
    "car": (30, 330), "photography": (15, 355), "badminton": (20, 350), "wedding": (40, 360),
    "side-project": (70, 350), "book-club": (25, 358), "parents": (5, 350), "dental": (35, 362),
}


def build(seed: int = 29) -> list[dict]:
    """Every memory of this set, spread as make_set.py spreads its own."""
    return spread(TOPICS, SPANS, seed)


def main() -> None:
    write(build(), "heldout.jsonl")


if __name__ == "__main__":
    main()
