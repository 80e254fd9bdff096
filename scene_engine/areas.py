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
        "doctor doctors hospital clinic dentist dental orthodontist tooth teeth wisdom gums floss cavity filling physio physiotherapy "
        "therapy medicine medication pill prescription symptom sick illness flu fever cough "
        "headache migraine insomnia sleep asleep checkup vitamin surgery injury injured allergy "
        "allergic blood diagnosis diagnosed nurse eyesight myopia pain sore "
        "rehab x-ray mri dermatologist health healthy",
        "医生 医院 门诊 急诊 挂号 体检 牙医 牙齿 补牙 洗牙 拔牙 智齿 牙套 正畸 牙龈 口腔 龋齿 蛀牙 牙疼 腰疼 腰痛 腰椎 颈椎 "
        "理疗 失眠 睡眠 睡不着 感冒 发烧 咳嗽 头疼 头痛 过敏 手术 吃药 药量 处方 血压 血糖 血脂 "
        "维生素 近视 眼科 复查 住院 出院 生病 消炎药 胆结石 发炎 扭伤 胃疼 胃病 针灸 中医 健康 康复 劳损 症状"),
    "family": (
        "mom mum mother dad father parents sister brother grandma grandmother grandpa "
        "grandfather aunt uncle cousin son daughter niece nephew family relatives sibling",
        "妈妈 爸爸 父母 爸妈 母亲 父亲 奶奶 爷爷 外婆 外公 姥姥 姥爷 姐姐 哥哥 弟弟 妹妹 表妹 表哥 "
        "表姐 表弟 堂妹 堂哥 家人 亲戚 儿子 女儿 侄子 侄女 外甥 老家 回家过年 家里人"),
    "home": (
        "apartment flat house rent rental landlord lease mortgage renovation renovate "
        "furniture sofa neighbour neighbor deposit tenant realtor relocate relocation",
        "房子 房东 租房 房租 租金 买房 看房 二手房 两居室 三居室 首付 房贷 装修 搬家 家具 中介 过户 "
        "钥匙 物业 小区 新家 公寓 瓷砖 水电 租约 沙发 邻居"),
    "money": (
        "money budget saving savings invest investment investing fund stock stocks bond "
        "salary tax bank loan spending expense expenses pension dividend debt credit "
        "portfolio finance financial yuan dollars",
        "存钱 理财 基金 股票 工资 退税 个税 银行 预算 开销 花销 记账 投资 信用卡 存款 收益 利率 "
        "理财 年终奖 储蓄 花呗 账单 省钱"),
    "pets": (
        "cat cats kitten kittens dog dogs puppy puppies pet pets vet vets litter leash kibble",
        "猫 狗 宠物 猫粮 狗粮 猫砂 兽医 遛狗 铲屎 驱虫 绝育 猫爬架 狗绳"),
    "food": (
        "coffee tea cook cooking recipe bake baking restaurant dinner lunch breakfast meal "
        "food wine beer espresso latte brew grinder barista dish dishes",
        "咖啡 做饭 下厨 菜谱 食谱 烘焙 烤箱 餐厅 饭店 早餐 午饭 午餐 晚饭 晚餐 面包 蛋糕 火锅 外卖 "
        "奶茶 红烧 炒菜 饺子 手冲 拿铁"),
    "travel": (
        "trip travel flight hotel visa passport itinerary vacation holiday tour sightseeing "
        "airport backpacking",
        "旅行 旅游 机票 酒店 民宿 签证 护照 攻略 景点 行程 古城 古镇 自驾游 度假 出游 游玩"),
    "sport": (
        "run running marathon gym workout swim swimming yoga cycling hike hiking badminton "
        "tennis basketball football soccer fitness stretching jog jogging pace race",
        "跑步 马拉松 健身 游泳 瑜伽 骑行 徒步 羽毛球 网球 篮球 足球 锻炼 配速 健身房 半马 全马 "
        "跑团 乒乓球 登山"),
    "music": (
        "guitar piano violin drum drums song songs sing singing chord chords band concert "
        "music musical ukulele strumming",
        "吉他 钢琴 小提琴 唱歌 音乐 演奏 乐谱 和弦 练琴 演唱会 尤克里里 架子鼓 歌曲"),
    "languages": (
        "language languages japanese english french spanish german korean vocabulary "
        "grammar fluent jlpt ielts toefl duolingo kanji hiragana katakana",
        "日语 英语 法语 韩语 德语 西班牙语 外语 单词 语法 听力 口语 雅思 托福 五十音 假名 "
        "片假名 平假名 敬语"),
    "study": (
        "exam exams certificate certification course courses study studying degree "
        "score scores syllabus",
        "考试 证书 考证 备考 复习 课程 学位 分数 模拟题 报名费 刷题 考研"),
    "work": (
        "job office boss manager colleague colleagues coworker meeting meetings deadline "
        "promotion interview resign resignation appraisal okr career",
        "工作 上班 公司 老板 领导 同事 开会 会议 加班 升职 面试 离职 跳槽 绩效 出差 述职 年会"),
    "software": (
        "code coding server database deploy deployment bug api cluster kubernetes kubectl "
        "docker python golang java release latency microservice queue cache backend "
        "frontend programming repository staging production",
        "代码 服务器 数据库 部署 上线 集群 接口 编程 开发 架构 后端 前端 测试环境 运维"),
    "friends": (
        "friend friends party parties birthday",
        "朋友 聚会 生日 同学 闺蜜 发小 室友"),
    "love": (
        "wedding bride groom engagement engaged proposal propose girlfriend boyfriend "
        "fiance fiancee honeymoon",
        "婚礼 婚纱 求婚 订婚 结婚 伴郎 伴娘 喜糖 请柬 彩礼 男朋友 女朋友 对象 相亲 蜜月 婚宴"),
    "car": (
        "car cars drive driving driver licence license parking garage ev charging tyre tire "
        "brake brakes mechanic",
        "开车 驾照 停车 保养 加油 充电桩 年检 轮胎 刹车 违章 提车 试驾 车险 4S店 驾校 科目"),
    "books": (
        "book books novel novels reading author library kindle chapter",
        "小说 读书 阅读 作者 图书馆 读完 书单 读书会"),
    "photo": (
        "camera photo photos photography lens photograph shoot shooting drawing painting",
        "相机 镜头 拍照 摄影 照片 画画 绘画 素描 修图 胶片"),
    "garden": (
        "plant plants garden gardening flower flowers seed seeds soil balcony succulent",
        "植物 花盆 多肉 阳台 浇水 施肥 盆栽 发芽 种子 绿萝 花草"),
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
