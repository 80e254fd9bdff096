"""Areas of a life, for the offline backend: words that name one area however it is said.

Routing by shared words (``routing``) cannot see that "失眠" and "补牙" are both about health,
or that "Japanese class" and "日语" are one topic: a model knows, the offline backend does
not. This module gives it the little it needs: a hand-written list of areas of life and work
(health, family, home, money, pets, ...) each with common words that name it, in English
(whole words as listed, lower-cased: a stem would make "saving time" money) and Chinese
(found as substrings, so jieba's cut does not matter).
A memory's areas (``areas_of``) become extra routing terms (``AREA_PREFIX`` + area), weighed
like any other word: one that every scene says counts for little (``routing.topic_evidence``
divides by the number of scenes that say it). The lists were written from general
vocabulary, not from the labelled sets of ``bench/bench_topics.py`` (issue 13: one topic a
scene); a word that names two areas ("疫苗" is a pet's or a person's) is left out.
"""

from __future__ import annotations

import functools
import re

AREA_PREFIX = "@"

# area -> (English words, Chinese words), the forms a text uses (plurals listed).
AREAS: dict[str, tuple[str, str]] = {
    "health": (
        "doctor doctors hospital hospitals clinic dentist dental orthodontist tooth teeth wisdom "
        "gums floss cavity physio physiotherapy therapy therapist medicine medication pill pills "
        "prescription symptom symptoms sick illness flu fever cough headache migraine insomnia "
        "sleep asleep checkup check-up vitamin vitamins surgery operation injury injured allergy "
        "allergies allergic blood diagnosis diagnosed nurse eyesight myopia glasses pain sore "
        "rehab x-ray mri dermatologist health healthy knee knees ankle sprain sprained wrist "
        "shoulder antibiotics stitches recovery recovered ache aches cholesterol diabetes "
        "asthma eczema hay-fever inhaler ward gp specialist ointment bandage",
        "医生 医院 门诊 急诊 挂号 体检 牙医 牙齿 补牙 洗牙 拔牙 智齿 牙套 正畸 牙龈 口腔 龋齿 蛀牙 牙疼 "
        "腰疼 腰痛 腰椎 颈椎 理疗 失眠 睡眠 睡不着 感冒 发烧 咳嗽 头疼 头痛 过敏 手术 吃药 药量 处方 "
        "血压 血糖 血脂 维生素 近视 眼科 复查 住院 出院 生病 消炎药 胆结石 发炎 扭伤 胃疼 胃病 针灸 "
        "中医 健康 康复 劳损 症状 膝盖 脚踝 韧带 骨折 拆线 输液 打针 病房 护士 药店 鼻炎 湿疹 哮喘 "
        "胆固醇 糖尿病 疼痛 酸痛 肿了 消肿 冰敷 热敷 体检报告 化验 验血 拍片 核磁"),
    "family": (
        "mom mum mother dad father parents sister brother grandma grandmother grandpa "
        "grandfather granny aunt uncle cousin son daughter niece nephew family relatives "
        "sibling siblings in-laws stepmother stepfather",
        "妈妈 爸爸 父母 爸妈 母亲 父亲 奶奶 爷爷 外婆 外公 姥姥 姥爷 姐姐 哥哥 弟弟 妹妹 表妹 表哥 "
        "表姐 表弟 堂妹 堂哥 堂姐 堂弟 家人 亲戚 侄子 侄女 外甥 老家 回家过年 家里人 公公 婆婆 岳父 "
        "岳母 舅舅 姑姑 阿姨 叔叔 伯伯 老人家 二老"),
    "children": (
        "kid kids child children toddler baby babies nappy diaper nanny babysitter playground "
        "kindergarten nursery",
        "孩子 儿子 女儿 宝宝 小孩 幼儿园 托班 奶粉 尿布 辅食 早教 带娃 哄睡 接送 亲子"),
    "school": (
        "school schools teacher teachers student students pupil pupils classroom "
        "homework lesson lessons semester principal headteacher grade grades curriculum "
        "tutoring tutor syllabus parent-teacher",
        "学校 老师 学生 班主任 上课 下课 作业 家长会 课堂 学期 期中 期末 月考 校长 小学 初中 高中 "
        "高考 中考 年级 班级 教室 备课 讲课 晚自习 开学 寒假 暑假 教研 公开课 试卷 批改 补课 辅导班 "
        "习题 教案 听课 评课 教学 同学们"),
    "home": (
        "apartment flat house rent rental landlord lease mortgage renovation renovate "
        "furniture sofa neighbour neighbor neighbours deposit tenant realtor relocate "
        "relocation plumber plumbing leak leaking boiler heater fridge washing-machine "
        "dishwasher repair repairs handyman paint painting wallpaper tiles tile carpenter "
        "electrician cleaning vacuum",
        "房子 房东 租房 房租 租金 买房 看房 二手房 两居室 三居室 首付 房贷 装修 搬家 家具 中介 过户 "
        "钥匙 物业 小区 新家 公寓 瓷砖 水电 租约 沙发 邻居 漏水 水管 马桶 热水器 冰箱 洗衣机 空调 "
        "维修 修理 换灯 灯泡 刷墙 油漆 地板 窗帘 收纳 打扫 家务 扫地机 保洁 门锁 衣柜"),
    "money": (
        "money budget saving savings invest investment investing investments fund funds stock "
        "stocks shares bond bonds salary tax taxes bank loan spending expense expenses pension "
        "dividend dividends debt credit portfolio finance financial yuan dollars euros "
        "insurance premium premiums refund invoice invoices accountant retirement",
        "存钱 理财 基金 股票 工资 退税 个税 税务 银行 预算 开销 花销 记账 投资 信用卡 存款 收益 利率 "
        "年终奖 储蓄 花呗 账单 省钱 保险 保费 理赔 社保 公积金 养老金 报销 发票 贷款 还款 定投 "
        "收入 支出 余额 转账"),
    "pets": (
        "cat cats kitten kittens dog dogs puppy puppies pet pets vet vets litter leash "
        "kibble rabbit bunny hamster parrot aquarium goldfish tortoise turtle grooming",
        "猫 狗 宠物 猫粮 狗粮 猫砂 兽医 遛狗 铲屎 驱虫 绝育 猫爬架 狗绳 兔子 仓鼠 鹦鹉 鱼缸 金鱼 "
        "乌龟 柯基 金毛 泰迪 柴犬 橘猫 寄养 狂犬"),
    "food": (
        "coffee tea cook cooking cooked recipe recipes bake baking baked bread sourdough "
        "cake cakes cookies pastry oven restaurant restaurants dinner lunch breakfast meal "
        "meals food wine beer espresso latte brew grinder barista dish dishes kitchen "
        "dough flour yeast dumplings noodles soup salad vegetarian vegan cuisine chef",
        "咖啡 做饭 下厨 菜谱 食谱 烘焙 烤箱 餐厅 饭店 早餐 午饭 午餐 晚饭 晚餐 面包 蛋糕 火锅 外卖 "
        "奶茶 红烧 炒菜 饺子 手冲 拿铁 面粉 酵母 发面 包子 馒头 蛋挞 饼干 厨房 炖 煲汤 下馆子 "
        "美食 小吃 甜点 烤肉 食材 买菜"),
    "travel": (
        "trip trips travel travelling traveling flight flights hotel hotels visa passport "
        "itinerary vacation holiday holidays tour tours sightseeing airport backpacking "
        "honeymoon resort cruise luggage suitcase hostel",
        "旅行 旅游 机票 酒店 民宿 签证 护照 攻略 景点 行程 古城 古镇 自驾游 度假 出游 游玩 蜜月 "
        "行李 跟团 自由行 出境 订票 高铁票"),
    "sport": (
        "run running marathon gym workout workouts swim swimming yoga cycling bike "
        "hike hiking badminton tennis basketball football soccer fitness stretching jog "
        "jogging pace race racket rackets shuttlecock doubles coach climbing "
        "bouldering volleyball ping-pong squash pilates triathlon",
        "跑步 马拉松 健身 游泳 瑜伽 骑行 徒步 羽毛球 网球 篮球 足球 锻炼 配速 健身房 半马 全马 "
        "跑团 乒乓球 登山 球拍 球馆 双打 单打 比赛 教练 攀岩 排球 普拉提 打球 约球 球友 拉伸 "
        "体能 训练营"),
    "music": (
        "guitar piano violin cello drum drums song songs sing singing chord chords band "
        "concert concerts music musical ukulele strumming choir karaoke",
        "吉他 钢琴 小提琴 大提琴 唱歌 音乐 演奏 乐谱 和弦 练琴 演唱会 尤克里里 架子鼓 歌曲 合唱 "
        "乐队 考级 音乐会 琴行"),
    "languages": (
        "language languages japanese english french spanish german korean italian vocabulary "
        "grammar fluent jlpt ielts toefl duolingo kanji hiragana katakana pronunciation",
        "日语 英语 法语 韩语 德语 西班牙语 意大利语 外语 单词 语法 听力 口语 雅思 托福 五十音 假名 "
        "片假名 平假名 敬语 发音"),
    "study": (
        "exam exams certificate certification course courses study studying degree "
        "score scores thesis dissertation phd master's bootcamp mooc",
        "考试 证书 考证 备考 复习 课程 学位 分数 模拟题 报名费 刷题 考研 论文 答辩 网课 自学"),
    "work": (
        "job office boss manager colleague colleagues coworker coworkers meeting meetings "
        "deadline deadlines promotion interview resign resignation appraisal okr career "
        "client clients contract contracts freelance freelancing  proposal hr "
        "payroll overtime commute",
        "工作 上班 公司 老板 领导 同事 开会 会议 加班 升职 面试 离职 跳槽 绩效 出差 述职 年会 客户 "
        "合同 甲方 乙方 项目 报价 外包 自由职业 稿费 通勤 打卡 周报 汇报"),
    "software": (
        "code coding server servers database deploy deployment bug bugs api cluster "
        "kubernetes kubectl docker python golang java javascript release latency "
        "microservice queue cache backend frontend programming repository repo github "
        "staging production app apps sql sqlite mysql bugfix refactor",
        "代码 服务器 数据库 部署 上线 集群 接口 编程 开发 架构 后端 前端 测试环境 运维 小程序 "
        "域名 备案 bug 调试 重构"),
    "friends": (
        "friend friends party parties birthday roommate flatmate reunion",
        "朋友 聚会 生日 同学 闺蜜 发小 室友 好友 聚餐"),
    "love": (
        "wedding bride groom engagement engaged proposal propose girlfriend boyfriend "
        "fiance fiancee fiancé fiancée husband wife anniversary dating",
        "婚礼 婚纱 求婚 订婚 结婚 伴郎 伴娘 喜糖 请柬 彩礼 男朋友 女朋友 对象 相亲 婚宴 老公 老婆 "
        "领证 婚庆 婚戒 纪念日 约会"),
    "car": (
        "car cars drive driving driver licence license parking garage ev charging tyre tire "
        "tyres tires brake brakes mechanic hybrid sedan suv dealership petrol gasoline "
        "dashcam scratch dent test-drive",
        "开车 驾照 停车 保养 加油 充电桩 年检 轮胎 刹车 违章 提车 试驾 车险 4S店 驾校 科目 汽车 "
        "新能源 电车 油车 混动 车位 车库 洗车 刮蹭 剐蹭 倒车 高速"),
    "books": (
        "book books novel novels reading author authors library kindle chapter chapters "
        "bookshop bookstore fiction memoir",
        "小说 读书 阅读 作者 图书馆 读完 书单 读书会 书店 看书 电子书 散文"),
    "photo": (
        "camera cameras photo photos photography lens lenses photograph photographs shoot "
        "shooting drawing painting sketch aperture tripod lightroom",
        "相机 镜头 拍照 摄影 照片 画画 绘画 素描 修图 胶片 光圈 三脚架 冲洗"),
    "garden": (
        "plant plants garden gardening flower flowers seed seeds soil balcony succulent "
        "succulents compost seedling seedlings prune pruning watering fertiliser "
        "fertilizer herbs basil tomato tomatoes",
        "植物 花盆 多肉 阳台 浇水 施肥 盆栽 发芽 种子 绿萝 花草 种菜 土壤 营养土 修剪 播种 开花 "
        "枯萎 烂根 虫害 蚜虫 花园"),
    "crafts": (
        "knitting knit crochet sewing calligraphy pottery origami embroidery chess "
        "boardgame boardgames puzzle puzzles lego fishing",
        "书法 毛笔 字帖 练字 编织 毛线 钩针 刺绣 陶艺 手工 折纸 象棋 围棋 棋谱 下棋 桌游 拼图 "
        "乐高 钓鱼 鱼竿"),
    "volunteering": (
        "volunteer volunteers volunteering charity donation donations fundraiser ngo",
        "志愿者 义工 公益 捐款 募捐 慈善"),
}

_WORD = re.compile(r"[a-z][a-z'-]*")


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(English word -> area, [(Chinese word, area)]); a word listed under two areas names
    neither (it would only blur them)."""
    english: dict[str, str] = {}
    clash: set[str] = set()
    chinese: dict[str, str] = {}
    for area, (en, zh) in AREAS.items():
        for key in en.split():
            if english.get(key, area) != area:
                clash.add(key)
            english[key] = area
        for word in zh.split():
            if chinese.get(word, area) != area:
                clash.add(word)
            chinese[word] = area
    english = {k: a for k, a in english.items() if k not in clash}
    return english, [(w, a) for w, a in chinese.items() if w not in clash]


@functools.lru_cache(maxsize=8192)
def areas_of(text: str) -> frozenset[str]:
    """The areas of life ``text`` speaks of, as routing terms (``"@health"``): an English
    word whose stem a list holds, or a Chinese word of a list found in the text."""
    english, chinese = _tables()
    found = {english[key] for key in _WORD.findall(text.lower()) if key in english}
    found.update(area for word, area in chinese if word in text)
    return frozenset(AREA_PREFIX + area for area in found)
