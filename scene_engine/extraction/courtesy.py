"""An assistant's courtesy is never a memory (docs/DESIGN.md "Extraction (L0 -> L1)"; seed 004's
rule, issue 21): ordinary agent steps have a higher bar than what the user says.

What the user says keeps the low bar of ``offline.says_something``. An assistant's sentence is
kept only when, its acknowledgement ("Sure,", 好的，) taken off, it is no courtesy
(congratulations, sympathy, praise, thanks, wishes, offers of help, "Great question",
"Got it", 恭喜, 收到, 没问题, 祝你…), no question (the user's answer is the memory) and
still holds two content words (Chinese: three characters beyond courtesy's own, 我, 了, 的...)
beyond stock words. Such sentences
are not cited as sources either: the model extractor sends back a memory that cites an
assistant message with nothing else in it (``model.check_courtesy``, ``courtesy_only``).
"""

from __future__ import annotations

import re

from scene_engine.core.text import STOP_WORDS, terms

# Who speaks for the agent when the file has no role (a transcript, LoCoMo-like JSON); no
# name a person may have (Claude is one).
AGENT_NAMES = frozenset({"assistant", "ai", "ai assistant", "bot", "chatbot", "chatgpt",
                         "助手", "ai助手", "智能助手", "机器人"})

_EN_OPENERS = (
    r"congrat\w*|kudos|bravo|well done|good job|great job|nice (job|work)|great work"
    r"|(i'?m|i am) (so |very |really |truly |just )?(sorry|glad|happy|thrilled|excited|"
    r"delighted|pleased|proud)\b|(i'?m|i am) sure you"
    r"|sorry (to hear|about|for)|so sorry|glad (to|you|that|i)|happy (to|for|you)"
    r"|(that|this|it)('?s| is| sounds| must be| must have been| seems| looks)( like)?"
    r"( (so|really|such|very|truly|quite|absolutely))?( an?)? (great|wonderful|awesome|amazing|"
    r"exciting|fantastic|lovely|nice|good|cool|terrible|awful|tough|hard|rough|frustrating|"
    r"sad|difficult|big|huge|fun|interesting|impressive|understandable|incredible|brilliant|"
    r"perfect|excellent|beautiful|scary|stressful|heartbreaking|a lot)\b"
    r"|sounds (like|great|good|amazing|fun|lovely|wonderful|exciting|awesome|perfect|"
    r"interesting)\b"
    r"|(it'?s|it is) (great|good|wonderful|nice|lovely) (to hear|that you)"
    r"|what an? \w+|how (exciting|wonderful|lovely|fun|nice|awful|sad|cool|great)"
    r"|(great|good|excellent|interesting|fair|smart) (question|point|idea|choice|catch|thinking)"
    r"|best of luck|good luck|wishing you|i wish you|fingers crossed|all the best"
    r"|have (an?|fun)\b|enjoy\b|take care|stay safe|safe travels|cheers\b"
    r"|(i )?hope (this|that|it|you|everything|things|the)\b"
    r"|let me know|feel free|(don'?t|do not) hesitate|just (ask|let)|tell me more"
    r"|if (you|there'?s) (need|have|want|would like|'d like|is) (any|anything|more|other|"
    r"further|help|me)\b|(is there )?anything else"
    r"|(i'?d|i would|i'?ll|i will) (be (happy|glad)|love to)|i can help|happy to help"
    r"|(i'?m|i am) (here|always here)|how (can|may) i (help|assist)"
    r"|(you'?re|you are) (welcome|very welcome|doing|so right|absolutely right|right|not alone)"
    r"|you (must|should|will|'?ll) (be|feel) (so |very |really )?(proud|excited|thrilled|"
    r"happy|relieved|great)|you'?ve got this|you deserve"
    r"|(thanks|thank you) for|(i'?ll|i will) (keep that in mind|remember (that|this))"
    r"|i (completely |totally |fully )?understand|no (worries|problem)"
    # The assistant saying it keeps what it was told, and no more: "I've made a note of it",
    # "saved that", "I'm noting that down now" (not "I saved your address as ...": a fact).
    r"|(i'?ve|i have|i'?ll|i will|i'?m|i am|i)( now| just| already)? (made a note|"
    r"(taken|take|making|make) (a )?note|noted|noting|saved|saving|stored|storing|recorded|"
    r"recording|remembered|will remember|logged|jotted|written|writing|added|adding)"
    r"( (of )?(it|that|this|them|everything|all of (it|that)))?( (down|away))?"
    r"( (now|for you|for later|for next time))?\W*$"
    r"|(that'?s|it'?s|this is)( been)? (noted|saved|recorded|stored|logged)\W*$"
)
_EN_STOCK = (
    r"(my pleasure|no problem|no worries|not a problem|anytime|of course|certainly|absolutely|"
    r"sure thing|sure|ok|okay|alright|all right|got it|understood|noted|i understand|i see|"
    r"makes sense|that makes sense|sounds good|will do|roger|perfect|excellent|great|awesome|"
    r"wonderful|thank you|thanks|yes|yeah|right|done|indeed|exactly|nice|wow|fair enough|"
    r"here you go|here it is|here you are|there you go)"
)
_ZH_OPENERS = (
    r"恭喜|祝贺|祝你|祝您|预祝|很高兴|真高兴|太好了|太棒了|真棒|真不错|好棒|辛苦了|加油|抱歉|"
    r"对不起|很遗憾|真遗憾|听到|希望(这|对|能|你|您)|如果(你|您)(还)?(有|需要|想)|如果还有|"
    r"有(任何|什么)(问题|需要)|随时|不客气|没关系|别客气|好问题|问得好|"
    r"(这|那)?(听起来|看起来|真是|真|太)(很|真|太|非常)?(棒|好|不错|有趣|厉害|酷|精彩|难|辛苦|遗憾)|"
    r"这(是)?(个|一个)?(好|很好的|不错的)(主意|问题|消息|选择)|感谢|谢谢|"
    r"为你(感到)?(高兴|骄傲|开心)|为您(感到)?(高兴|骄傲|开心)|"
    r"(你|您)(真|太)(棒|厉害|了不起|优秀|聪明|有心)|做得(好|很好|不错)|一路顺风|旅途愉快|"
    r"玩得开心|我会(记住|注意|留意)|很乐意|乐意(为|帮)|"
    r"(很|非常|十分|真的|真|特别)(抱歉|遗憾|感谢|谢谢)|"
    r"(真|也|我)?(为|替)(你|您)(感到)?(高兴|骄傲|开心|自豪)|"
    r"希望.{0,10}(顺利|成功|愉快|开心|好运|一切都好|早日康复)|"
    r"(真是|真|太)?(个|一个)?好(主意|办法|想法)|节哀|"
    r"我(完全|很)?(明白|理解|懂)(你|您)?(的意思|的感受|的心情)?|"
    r"(要|多)?(注意|保重)(身体)?|多(休息|喝水)|早日康复|"
    r"我(会|已经|已)?(记住|记下|记好|记录|保存)(了|啦)?|(已|已经)(记下|记住|记录|保存|收到)|"
    r"谢谢(你的|您的)?(分享|信任|告诉)"
)
# A wish said whole ("生日快乐", 周末愉快, 新年快乐！): a courtesy however short its words.
_ZH_WISH = r"\S{0,6}(快乐|愉快|顺利|如意)[!！~～。.]*"
_ZH_STOCK = r"(明白了|明白|好的|好|收到|了解|知道了|没问题|当然|当然可以|可以|行|好嘞|嗯+|是的|对|懂了)"
_COURTESY = re.compile(
    rf"^\W*({_EN_OPENERS}|{_ZH_OPENERS})|^\W*({_EN_STOCK}|{_ZH_STOCK})[\W\s]*$|"
    rf"^\W*{_ZH_WISH}$", re.IGNORECASE)
# Characters a Chinese courtesy is made of, not its content: 我记住了 holds two content
# characters (记住), a fact the assistant states holds three or more.
_ZH_FILLER = frozenset("我你您他她它们了的吧呢哦啊呀啦嘛很非常真也都会这那个是就还要有在")
# An acknowledgement before the content ("Sure, here you go: the cache is in /tmp.";
# 好的，已经改好了): taken off before the sentence is judged.
_ACK = re.compile(rf"^\W*({_EN_STOCK}|{_ZH_STOCK}|here'?s what i found)\s*"
                  r"[,，!！.。:：、;；—–-]+\s*", re.IGNORECASE)
# Words an assistant's stock sentences are made of: they do not count as content.
STOCK_WORDS = frozenset("""
help helps helped helping assist assistance question questions glad sorry hear hearing hope
hoping happy understood understand noted let know feel free hesitate anything else need
needs welcome pleasure problem problems worries luck wish wishes enjoy exciting excited proud
share sharing shared sounds idea ideas course certainly appreciate appreciated perfect done
sure okay here find found please wonderful great awesome good nice amazing fantastic happy
thanks thank congratulations congrats info information ready always keep mind remember
""".split())
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def is_agent(role: str | None, speaker: str) -> bool:
    """Whether a message is the assistant's: its role, else (no role in the file) its
    speaker's name (``AGENT_NAMES``: "Assistant", "AI", 助手...)."""
    if role:
        return role.strip().lower() == "assistant"
    return speaker.strip().lower() in AGENT_NAMES


def agent_keeps(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether an assistant's ``sentence`` carries a fact worth a memory (module docstring):
    no courtesy, no question, and after its acknowledgement two content words beyond stop
    words, stock words and the speakers' ``names`` (Chinese: three characters that are not
    ``_ZH_FILLER``)."""
    text = sentence.strip()
    while (ack := _ACK.match(text)) and ack.end() < len(text):
        text = text[ack.end():]
    if _COURTESY.match(text) or text.rstrip().endswith(("?", "？")):
        return False
    if len(_CJK_CHAR.findall(text)) >= 3:
        return len([c for c in _CJK_CHAR.findall(text) if c not in _ZH_FILLER]) >= 3
    words = {w for w in terms(text) if not _CJK_CHAR.match(w)}
    return len(words - STOP_WORDS - STOCK_WORDS - names) >= 2


def courtesy_only(text: str, sentences, names: frozenset[str] = frozenset()) -> bool:
    """True when no sentence of an assistant message's ``text`` passes ``agent_keeps``
    (``sentences``: how the text is cut, ``offline.sentences``)."""
    return not any(agent_keeps(s, names) for s in sentences(text))
