"""The deterministic extractor (no model; the default): each utterance split into sentences,
greetings and filler dropped, the rest kept as what its speaker said (issue 12, "Offline").

The sentences one utterance keeps stay together in one memory up to ``MAX_CHARS`` (longer
ones are cut at sentence ends): a memory per sentence made a LoCoMo conversation six times as
many memories as its curated observations, more than the offline scene backend can fold
(``bench/RESULTS.md``, "Conversations in"), and a sentence alone loses what its pronouns
point at.

Limits (also in docs/guides/offline-backend.md): it does not understand; it keeps every sentence of the user with
a content word and drops only greetings and filler, so it over-keeps (an assistant's sentence
has the higher bar of ``courtesy``: never its acknowledgements, congratulations or stock
phrases); it never relates memories (no same_as / supersedes / conflicts_with) and never
merges (similar pairs go to the review queue); a pronoun is left as said; scope is
``session`` unless the sentence itself says "always", "from now on", "in this project" and
the like.
"""

from __future__ import annotations

import re

from scene_engine.core.text import STOP_WORDS, terms
from scene_engine.extraction.conversation import MAX_SPEAKER_CHARS, Message
from scene_engine.extraction.courtesy import agent_keeps, is_agent
from scene_engine.extraction.schema import (
    ELLIPSIS,
    SUMMARY_CHARS,
    TITLE_CHARS,
    ExtractedMemory,
    clip,
    split_at,
)

VERSION = "offline/1"
TITLE_WORDS = 10
MAX_CHARS = 400       # one memory's sentences (speaker prefix aside)

# Sentence ends: . ! ? (and CJK 。！？) followed by space, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
# Words a greeting or a reaction is made of; a sentence of only these (and stop words and the
# speakers' names) says nothing worth keeping.
FILLER = frozenset("""
hi hey hello hiya yo bye goodbye thanks thank thx cheers ok okay yes yeah yep yup no nope sure
wow oh ah uh um hmm haha lol great awesome cool nice amazing wonderful fantastic glad good well
totally absolutely definitely agree agreed right exactly indeed see soon care morning evening
night afternoon congrats congratulations sounds sound true gonna lot much happy hear talk
catch chat later again anytime welcome fun incredible beautiful lovely sweet
""".split())
# Scope is widened only by words in the sentence itself (never by default).
_USER_SCOPE = re.compile(r"\b(always|from now on|never again|in general|every time|"
                         r"whenever|by default|going forward)\b|以后|总是|永远", re.IGNORECASE)
_PROJECT_SCOPE = re.compile(r"\b(in|for|across) (this|the|our) (project|repo|repository|"
                            r"codebase)\b|本项目|这个项目", re.IGNORECASE)
SKIPPED_ROLES = ("system", "tool", "function", "developer")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (punctuation kept)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


# Whole greetings, thanks and an assistant's stock offers of help, English and Chinese.
_STOCK = re.compile(r"^\W*(how (can|may) i help( you)?( today)?|what can i do for you|"
                    r"anything else\??|你好|您好|嗨|哈喽|谢谢(你|您)?(啦|了)?|多谢|再见|拜拜|晚安|"
                    r"早上好|好的|嗯+|哈+|不客气|没问题|有什么(可以|能)帮(你|您)(的)?(吗)?)"
                    r"(\W+(how (can|may) i help( you)?( today)?|有什么(可以|能)帮(你|您)(的)?(吗)?))?"
                    r"[\W\s]*$"
                    r"|^(hi|hey|hello|hiya|dear)\W+\w+(\s\w+)?\W*$", re.IGNORECASE)   # "Hey Mel!"


def says_something(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """False for a greeting, thanks, an assistant's stock offer of help or a bare reaction:
    no word outside stop words, filler and the speakers' names (CJK text: any two-character
    term counts), in English and Chinese."""
    if _STOCK.match(sentence.strip()):
        return False
    words = [w for w in terms(sentence) if w not in FILLER and w not in names]
    return any(w not in STOP_WORDS for w in words)


def scope_of(sentence: str) -> str:
    """``user`` / ``project`` when the sentence says so, else ``session``."""
    if _USER_SCOPE.search(sentence):
        return "user"
    if _PROJECT_SCOPE.search(sentence):
        return "project"
    return "session"


def extract(block: list[Message]) -> list[ExtractedMemory]:
    """The memories of a block, in order: per utterance, its sentences that say something,
    grouped up to ``MAX_CHARS`` and by scope (a "from now on" sentence is a ``user`` memory of
    its own); summary ``"Speaker: sentences"``, title its first words, the message as source.
    Tool and system messages are routine steps and left out, and so is an imported
    history's assistant (``Message.context``); an assistant's sentence must
    also pass the higher bar of ``courtesy.agent_keeps`` (seed 004). A sentence too long for
    one summary is cut into pieces that fit, each but the last ending in "…", so nothing
    said is lost and no limit is broken (issue 21: a URL, a key, Chinese without spaces)."""
    names = frozenset(w.lower() for m in block for w in m.speaker.split())
    out = []
    for message in block:
        if (message.role or "") in SKIPPED_ROLES or message.context:
            continue              # an imported history's assistant: context, not a fact
        speaker = clip(message.speaker, MAX_SPEAKER_CHARS)
        room = SUMMARY_CHARS - len(speaker) - len(": ")
        keeps = _bar(message)
        kept = [piece for s in sentences(message.text) if says_something(s, names)
                and keeps(s, names) for piece in _pieces(s, room)]
        for scope, group in _groups(kept):
            summary = f"{speaker}: {' '.join(group)}"
            out.append(ExtractedMemory(title=_title(summary), summary=summary, scope=scope,
                                       sources=[message.id]))
    return out


def _bar(message: Message):
    """The extra test a sentence of ``message`` must pass: an assistant's the higher bar
    (``courtesy.agent_keeps``), anyone else's none."""
    return agent_keeps if is_agent(message.role, message.speaker) else lambda *_: True


def _pieces(sentence: str, room: int) -> list[str]:
    """``sentence`` in pieces of at most ``room`` characters (``schema.split_at``: at a
    word, else at a character boundary), each but the last marked "…" as cut."""
    out = []
    while len(sentence) > room:
        head, sentence = split_at(sentence, room - len(ELLIPSIS))
        out.append(head + ELLIPSIS)
    return [*out, sentence] if sentence else out


def _groups(kept: list[str]) -> list[tuple[str, list[str]]]:
    """Consecutive sentences of one scope, at most ``MAX_CHARS`` a group (a longer sentence
    is a group of its own)."""
    groups: list[tuple[str, list[str]]] = []
    for sentence in kept:
        scope = scope_of(sentence)
        if groups and groups[-1][0] == scope and \
                len(" ".join(groups[-1][1])) + 1 + len(sentence) <= MAX_CHARS:
            groups[-1][1].append(sentence)
        else:
            groups.append((scope, [sentence]))
    return groups


def _title(summary: str) -> str:
    # The summary's own first words: the journal then keeps the summary alone
    # (``merge.content_of``), so no word is stored twice. Cut to the schema's limit when
    # the words are long (a URL, Chinese without spaces): still the summary's beginning.
    return clip(" ".join(summary.split()[:TITLE_WORDS]).rstrip(",;:"), TITLE_CHARS)
