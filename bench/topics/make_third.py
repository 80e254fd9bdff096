#!/usr/bin/env python3
"""Write bench/topics/third.jsonl: a third labelled topic set, held out from the other two.

One invented person, Zhou Min (周敏), 40, a freelance English–Chinese translator (legal and
medical texts, later game localisation) in Tianhe, Guangzhou, mother of Lele (乐乐, 9, in
Year 3 and then Year 4); husband Ajie (阿杰); her grandmother (外婆, 89) lives in Shunde. Over
2026: 12 areas of life and work, each memory jotted in the language she would use for it
(Chinese, English, or Chinese with English terms), labelled with its topic. Some notes touch
two areas (the knee and the insurance form, the trip and the rabbit) and carry the label of
the one they are mainly about.

Dates as in make_set.py: each topic's memories in their written order, spread by a seeded
generator within the months the area was active (``SPANS``), so topics interleave as they
would in a life. The seed is fixed; it was picked so that the dated events line up across
topics (the July trip to Spain, the summer holidays and the new school year, the knee injury
before the physio's advice to cycle). Deterministic: the same file every run.

    python bench/topics/make_third.py
"""

from __future__ import annotations

from make_set import spread, write  # this folder: run as `python bench/topics/<script>`

TOPICS: dict[str, list[str]] = {
    "kid-school": [
        "听说下学期乐乐要换班主任，是教数学的刘老师，家长群里都说她很严。",
        "每天晚上陪乐乐写作业到九点半，口算题总是马虎。",
        "家长群通知：每天要在小程序上打卡朗读课文，还要家长签字。",
        "要不要给乐乐报个奥数班？同事说三年级开始来得及，我还在犹豫。",
        "学校组织去华南植物园研学，我报名当了跟队家长。",
        "问了刘老师，她说乐乐思维没问题，就是计算粗心，奥数先不报了，每天多做十道口算。",
        "期末成绩出来了：语文 92，数学 88，英语 97，作文扣分最多。",
        "乐乐的暑假日记写了《我的太婆》，写得很真实，我偷偷拍下来发给了妈妈。",
        "暑假作业还剩一大堆：两本练习册、一篇读后感，还有一个科学小制作，开学前得赶完。",
        "科学小制作定了做一个饮料瓶风车，乐乐在回程的飞机上已经把图纸画好了。",
        "升四年级了，换了新的语文老师，每天的作业比去年多了快一倍。",
        "乐乐被选进学校合唱团，每周三放学后要留下来排练。",
        "开家长会，老师说要加强手机管理，回家和乐乐约好平板只在周末玩。",
        "英语听写错了五个，都是 th 开头的词，周末陪他过了一遍。",
    ],
    "translation-work": [
        "A Singapore law firm got in touch about EN>ZH work; the first job might be a long shareholder agreement.",
        "The shareholder agreement arrived: 18,000 words. Quoted 0.25 SGD a word; they came back with 0.20 and we settled on 0.22.",
        "Built a termbase in Trados for the agreement — 'drag-along rights' has no neat Chinese equivalent.",
        "客户发来的原文是扫描版 PDF，OCR 之后格式全乱了，光排版就花了半天。",
        "Delivered ahead of the deadline; the partner asked whether I also do Chinese into English.",
        "Invoice 2026-007 still unpaid after 45 days. Sent a polite reminder.",
        "The money finally came through Wise, minus 28 SGD in fees.",
        "Thinking about dropping the medical device agency — rates haven't moved since 2022 and the deadlines are brutal.",
        "Told the agency I'll only take their IFU jobs with at least five working days. They agreed, surprisingly.",
        "试了先用 DeepL 出初稿再做 post-editing，速度是快了，但合同条款的语气还得全部重写。",
        "A game studio in Shenzhen sent a test: 500 words of item descriptions and NPC dialogue.",
        "Passed the localisation test; first batch is 40,000 words of UI strings — lower rate, steady volume.",
        "Trados 的授权续费了，打完折还要两千多块。",
        "Q3 was my best quarter so far: four regular clients and no chasing anyone for payment.",
    ],
    "knee-injury": [
        "周末爬白云山，下台阶的时候右膝一软，当天晚上就肿起来了。",
        "The knee swells up again whenever I walk for more than half an hour. Ice, compression, leg up on the sofa while I work.",
        "去中山三院骨科挂了号，医生让先拍个 MRI。",
        "MRI result: partial tear of the medial meniscus, ACL intact. No surgery for now.",
        "膝盖又疼起来，医生开了双氯芬酸凝胶，说这段时间不能跑跳，也不能深蹲。",
        "Started physio twice a week — quad sets, straight-leg raises and endless glute bridges.",
        "上下楼梯的时候还是咔哒响，理疗师说只要不痛就不用管。",
        "Thinking about getting a brace for longer walks.",
        "买了 McDavid 的护膝，戴着有点热，但心里踏实多了。",
        "Physio progress: single-leg squat down to a chair with no pain. Six sessions to go.",
        "复查了，医生说半月板恢复得不错，可以慢慢加运动量，但爬山下坡还是要少。",
        "Walked 10,000 steps today with zero pain, the first time since that day on Baiyun Mountain.",
        "下雨天膝盖还是会隐隐发酸，腿部力量训练不能停。",
    ],
    "calligraphy": [
        "在少年宫旁边的书法班报了成人班，每周六上午上课。",
        "老师让我从颜真卿的《多宝塔碑》开始临，我的横画总是写得太肥。",
        "置办了一套笔墨纸砚：狼毫笔、红星宣纸、一得阁墨汁，还有一块很重的砚台。",
        "每天晚上乐乐睡了之后练半小时字，心特别静。",
        "写了一百遍「永」字，老师说侧点终于像样了。",
        "毛边纸用得太快，一刀纸两个星期就没了。",
        "想试试行书，老师说楷书再写半年再说。",
        "在考虑要不要参加区里的书法比赛，怕自己写得不够好。",
        "交了参赛作品，写的是《陋室铭》，装裱花了三百块。",
        "比赛拿了成人组优秀奖，不算什么，但还是挺开心的。",
        "老师终于同意我开始临《兰亭序》了。",
        "给外婆写了一幅「福寿康宁」，她挂在客厅里，见人就说是孙女写的。",
        "年底了，打算明年的春联自己写，先在毛边纸上试了几副。",
    ],
    "cycling": [
        "理疗师说骑车对膝盖友好，可以代替跑跳练腿，打算买一辆自行车。",
        "Test-rode a few bikes at a shop in Tianhe; the Giant Escape hybrid felt right.",
        "买了捷安特 Escape 2，加上头盔和码表一共四千出头。",
        "First proper ride: 25 km along the Pearl River from Ersha Island to Pazhou, 18 km/h average.",
        "在西班牙这几周没碰车，街上到处是骑车的人，看得手痒，回去要把座椅高度重新调好。",
        "Joined a Sunday-morning group that loops around 大学城 — everyone is on a road bike except me.",
        "要不要换公路车？群里的人说 hybrid 跟不上他们的配速。",
        "Decided to keep the hybrid and just get clipless pedals. Fell over once at a red light.",
        "骑车去学校接乐乐放学，比开车还快，他觉得我很酷。",
        "First 60 km ride, out to Hai'ou Island and back. Legs dead, knee fine.",
        "Flat tyre on the way back from Nansha; fixed it myself in 25 minutes and a lot of swearing.",
        "报名了从化的百公里骑行活动，从这周开始每个周末拉一次长距离。",
        "Finished the 100 km Conghua ride in 5 h 40 min — my first century.",
    ],
    "home-repair": [
        "回南天，卫生间天花板又开始滴水，应该是楼上的防水层坏了。",
        "和楼上邻居沟通了，她同意找师傅来看，费用一家一半。",
        "师傅说要把楼上卫生间的地砖全敲掉重做防水，至少五天。",
        "楼上的防水做完了，闭水试验四十八小时没漏。",
        "我们家天花板的霉斑用了除霉剂还是有印子，得重新刷漆。",
        "找了个散工师傅刷天花板，半天搞定，收了三百五。",
        "客厅空调不制冷了，师傅上门说是缺氟，加氟两百八。",
        "准备换掉厨房的水龙头，一直滴水，晚上听着很烦。",
        "网上买了个九牧的龙头，跟着视频自己换的，居然一次成功。",
        "阳台晾衣架的摇杆断了，在考虑是修还是换电动的。",
        "在西班牙刷手机下单了电动晾衣架，带烘干，一千出头，约了回广州以后上门安装。",
        "台风来之前检查了一遍窗户，主卧的窗胶老化了，自己打了一圈玻璃胶。",
    ],
    "grandma": [
        "外婆今年八十九了，还住在顺德老家，舅舅一家照顾她。",
        "周末带乐乐回顺德看外婆，她非要塞两袋鱼皮角让我们带回广州。",
        "舅舅打电话说外婆半夜起床摔了一跤，幸好只是手臂擦伤。",
        "打算给外婆的房间装几个扶手和感应夜灯，下周回去量尺寸。",
        "扶手和夜灯都装好了，外婆嘴上说多余，晚上起夜倒是都扶着走。",
        "外婆最近记性差了很多，一个下午把同一件事问了三遍。",
        "舅舅陪外婆去医院做了认知评估，医生说是轻度认知障碍，要多陪她说话。我人在西班牙，视频里外婆还问我吃饭没有。",
        "和妈妈、舅舅商量要不要请住家保姆，外婆不太愿意家里住个外人。",
        "最后请了个白天来的阿姨，早八点到晚六点，外婆说阿姨煲的汤还算入味。",
        "外婆虚岁九十，全家在顺德的酒楼摆了四桌，她穿了件新的红外套。",
        "每天晚上和外婆视频，她总把镜头对着天花板，我们只看得到吊灯。",
        "外婆又不肯吃降压药，说吃了头晕，让阿姨带她去问医生能不能减量。",
        "医生把外婆的降压药换成早上吃一次的那种，头晕好多了。",
    ],
    "tax-insurance": [
        "个税 App 开始年度汇算了，自由职业的劳务报酬要并进综合所得。",
        "Added up last year's income from all clients: about 310k RMB. The Singapore payments had no tax withheld here.",
        "问了做会计的朋友，境外收入要自己申报，新加坡那边没扣过税，所以也没有可以抵免的。",
        "汇算下来要补四千多，有点肉疼。",
        "Paid the top-up in the app. From now on every invoice and Wise statement goes in one folder.",
        "灵活就业的社保每个月两千一，打算继续交，不想断缴。",
        "Thinking about a critical-illness policy — the broker keeps pushing whole life, I only want cover to 70.",
        "比较了三家的重疾险，最后选了一款保到七十岁的定期，年缴八千三。",
        "The health questionnaire asked about joints; had to disclose the meniscus tear, so they excluded that knee.",
        "给乐乐买了学平险，一年一百五，学校推荐的那款保障太少。",
        "Now moving 20% of every client payment into a separate account for next year's tax.",
        "医保报销了膝盖理疗的一部分，退回来一千二。",
        "Emergency fund is at nine months of expenses, which is where a freelancer's should be.",
    ],
    "library-volunteer": [
        "Signed up to volunteer at the Guangzhou Library children's section: bilingual story time every other Saturday.",
        "First session: read 'The Very Hungry Caterpillar' in English and Chinese to about fifteen kids. Two cried, one fell asleep.",
        "补上了志愿者培训：孩子走失怎么处理，还要记住图书馆的紧急疏散路线。",
        "Picked next month's picture books: 'Where the Wild Things Are', 《团圆》 and 'Guess How Much I Love You'.",
        "Lele came along and turned the pages for me; he said it was boring but stayed the whole hour.",
        "The coordinator asked if I could also translate their English event posters. Said yes, short ones only.",
        "Thinking about a session for parents on reading aloud in English at home.",
        "Emailed the coordinator an outline for the parents' session: why read aloud, how to choose books, ten phrases to use. She wants it in September.",
        "志愿服务时长满五十小时了，收到了「i志愿」发的证书。",
        "Ran the first parents' session — twelve parents, lots of questions about phonics apps. Doing it again next month.",
        "Story time moves to Sunday afternoons from next month; not sure I can still make it.",
        "Agreed to Sundays, twice a month, and trained two new volunteers to cover the other weeks.",
        "Last story time of the year: paper lanterns and 'The Snowman'. The room was packed.",
    ],
    "spain-trip": [
        "Thinking about taking Lele to Spain this summer — Barcelona, maybe Andalusia. Ajie can take three weeks off in the summer.",
        "查了西班牙签证，旺季要提前很久预约，赶紧在签证中心网站上约了号。",
        "Flights: Guangzhou–Istanbul–Barcelona on Turkish, 7,400 per adult, cheaper than flying direct from Shanghai.",
        "签证材料里要在职证明，我是自由职业，只能拿存款证明和客户合同代替。",
        "三个人的申根签证都下来了，一年多次往返。",
        "Booked Sagrada Família for 10 am on a weekday — the only slot left that includes a tower.",
        "要不要在安达卢西亚租车自驾？阿杰担心开不惯，其实西班牙也是靠右行驶。",
        "Decided: train from Barcelona to Granada, and a rental car only for the white villages.",
        "Landed in Barcelona. Lele slept through the whole second flight; I didn't sleep at all.",
        "西班牙的晚饭九点以后才开始，乐乐每天八点就喊饿，只好先去超市买面包垫肚子。",
        "The Alhambra at sunset. Worth every euro and the queue.",
        "回广州了，行李箱里塞了三罐橄榄油和一大块火腿。",
        "Made a photo book of Spain for Lele's show-and-tell in class.",
    ],
    "spanish": [
        "Started Spanish on Duolingo — we keep saying we'll go to Spain one day, and I miss learning a language from zero.",
        "Ser vs estar is already annoying.",
        "Found an italki tutor from Valencia, Marta: 45 minutes twice a week, 25 USD a lesson.",
        "Marta says my pronunciation is fine but I build sentences in English word order.",
        "Can roll the r, sort of. Lele laughs every time I practise 'perro' and 'pero'.",
        "西语的动词变位比英语难多了，光现在时就背了两个星期。",
        "Thinking about sitting the DELE A2 in the autumn, to have a goal.",
        "Ordered tapas entirely in Spanish in Granada; the waiter answered in English anyway.",
        "Registered for the autumn DELE A2 at Guangdong University of Foreign Studies.",
        "Listening practice with a slow-Spanish podcast on my walks — knee exercise and homework at once.",
        "Mock A2: reading 20/25, listening 14/25. Listening needs work.",
        "Sat the DELE today; the oral went better than I expected, the listening didn't.",
        "DELE results only come out in a couple of months; meanwhile Marta started me on B1 and the subjunctive, which she calls 'the wall'.",
    ],
    "rabbit": [
        "乐乐生日想要个宠物，商量了很久，最后养了一只垂耳兔，叫布丁。",
        "布丁刚到家很胆小，在笼子角落里缩了一整天。",
        "宠物店说兔子主食要吃提摩西草，颗粒粮只能少给。",
        "布丁开始啃电线了，赶紧买了护线管把插座那一片全包起来。",
        "兔笼的垫料换成了木屑颗粒，味道小了很多。",
        "布丁两天没怎么拉便便，吓坏了，带去看异宠的医院，说是胃肠淤积。",
        "医生开了促胃肠动力的药，叮嘱多喂干草、少喂零食。",
        "我们出门这几个星期，布丁寄养在宠物店，每天收到两张照片。",
        "回来以后乐乐主动要求每天给布丁换水加草，比写作业积极多了。",
        "在纠结要不要给布丁做绝育，医生说母兔不做的话，以后子宫出问题的风险很高。",
        "布丁做完绝育，回家第一晚一直趴着不动，我陪它到凌晨两点。",
        "Pudding's nails were far too long; learned to clip them from a YouTube video — 还是得两个人按着。",
        "天冷了，给布丁的笼子围了一圈棉垫。",
    ],
}

# When each area was active (day of 2026, first and last). The knee goes in spring on Baiyun
# Mountain and mends by autumn; cycling starts on the physio's advice; the Spain trip is
# planned from early spring and taken in the July holidays; taxes are filed in spring; the
# school, the grandmother, the rabbit, the work and the volunteering run all year.
SPANS = {
    "kid-school": (40, 320), "translation-work": (3, 360), "knee-injury": (15, 300),
    "calligraphy": (20, 358), "cycling": (140, 358), "home-repair": (35, 300),
    "grandma": (10, 355), "tax-insurance": (55, 350), "library-volunteer": (40, 362),
    "spain-trip": (30, 270), "spanish": (5, 345), "rabbit": (20, 355),
}

SEED = 89309


def build(seed: int = SEED) -> list[dict]:
    """Every memory of this set, spread as make_set.py spreads its own."""
    return spread(TOPICS, SPANS, seed)


def main() -> None:
    write(build(), "third.jsonl")


if __name__ == "__main__":
    main()
