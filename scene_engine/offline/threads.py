"""Open threads: plans, promises and open questions a scene keeps in sight until resolved.

A memory that says something is not settled yet — "thinking about adopting a second cat",
"preparing for the CKA exam", 打算 / 准备 / 考虑 / 要不要 — opens a thread: it goes into the
scene's ``## Open threads`` section with what would close it (a decision, a result, done or
dropped). A later memory that settles it — near it in meaning (the sentence encoder) and
saying it happened or was decided ("Passed the CKA exam", 领养了, "Decided against") — goes
to its scene and closes it:
the thread moves to the timeline, on its own day, with the outcome and the day it closed.
Issue 13 ("open threads"). Pure functions; ``timeline`` keeps the section in a scene.

A thread line: ``- 2026-05-03: Thinking about an espresso machine. → closes with a decision``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scene_engine.core.text import is_cjk_text
from scene_engine.offline.words import analyzer, specificity

HEADING = "## Open threads"
HEADING_RE = re.compile(r"^## Open threads\s*$", re.M)
ARROW = " → "
LINE = re.compile(r"^- (\d{4}-\d{2}-\d{2}): (.*?) → (.+)$")
# (kind, English pattern, Chinese pattern); the first that matches decides the closer.
_OPENERS = (
    ("decide", r"\b(?:thinking (?:about|of)|considering|wondering|whether|should I|not sure)\b",
     r"考虑|要不要|是否|犹豫|纠结"),
    ("result", r"\b(?:preparing for|prepare for|studying for|waiting for|applied for|signed up for)\b",
     r"准备考|备考|等结果|报名了|申请了"),
    ("done", r"\b(?:plan(?:ning)? to|going to|want to|hope to|hoping to|intend to|will|need to|"
             r"promised|about to)\b",
     r"打算|准备|计划|想要|答应|承诺|争取"),
)
# What settles a thread of each kind: a result (an exam, an application), a decision, or
# being done (a plan carried out). A step on the way ("bought the exam voucher") is not one.
_SETTLE = {
    # Not "finished" or "跑完": a training run finishes too, long before the race.
    "result": (r"\b(?:passed|failed|results? (?:came|is|are|arrived)|got (?:the|my) results?|"
               r"accepted|rejected|admitted|certified)\b",
               r"通过|没过|挂了|成绩出来|结果出来|录取|考过|完赛"),
    "decide": (r"\b(?:decided|chose|chosen|bought|adopted|signed|declined|against|instead|"
               r"gave up|dropped|approved|booked|went with|settled on|no longer|after all|"
               r"staying|turned down|won't|will not)\b",
               r"决定|领养了|买了|买下|签了|放弃|算了|不买|选了|定了|批准"),
    "done": (r"\b(?:done|finished|completed|did|went|came|moved|arrived|launched|recorded|"
             r"cancel(?:l)?ed|gave up|dropped|decided|passed|bought|booked|visited)\b",
             r"完成|做完|去了|来了|到了|搬进|上线|办好|下来了|取消|放弃|算了|决定|通过"),
}
CLOSERS = {"decide": ("a decision", "做出决定"), "result": ("the result", "有了结果"),
           "done": ("done or dropped", "完成或放弃")}
SHARED_EVIDENCE = 1.0   # summed specificity of the words a closing memory shares with a thread
# Cosines (the sentence encoder, ``index.dense.Use``) of a thread and the memory that closes
# it: answers ("Passed the CKA exam" for "Preparing for the CKA exam": 0.55; "Adopted a
# second cat" for "Thinking about adopting a second cat": 0.65) against look-alikes of the
# same person's life ("Visited my grandmother in Chengdu" for telling Mum of an
# engagement: 0.32; a training run for a race: 0.44, and no result).
ANSWERS = 0.45
RELATED = 0.35
DECIDED = 0.25     # ... for a decision that names the question's own word
SAYS_IT = 0.6      # without a word of the thread's kind ("Told Mum about the engagement": 0.65)


@dataclass(frozen=True)
class Thread:
    """One open thread: ``day`` it was opened (``YYYY-MM-DD``), ``text`` as said, ``closer``
    (what would close it, in the thread's language), ``ids`` of its memory (this batch's)."""

    day: str
    text: str
    closer: str
    ids: tuple[str, ...] = ()

    def line(self) -> str:
        """The thread as a line of the section."""
        return f"- {self.day}: {self.text}{ARROW}{self.closer}"


def opens(text: str) -> Thread | None:
    """A thread (day left empty) if ``text`` leaves something open, else None. A memory
    that also settles something ("Decided to keep ...") opens nothing."""
    zh = is_cjk_text(text)
    if settles(text):
        return None
    for kind, english, chinese in _OPENERS:
        if re.search(chinese if zh else english, text, flags=0 if zh else re.I):
            return Thread("", " ".join(text.split()), CLOSERS[kind][1 if zh else 0])
    return None


def settles(text: str, kind: str | None = None) -> bool:
    """True when ``text`` says something of ``kind`` ("result", "decide", "done"; None: any)
    happened or was decided."""
    zh = is_cjk_text(text)
    kinds = [kind] if kind else list(_SETTLE)
    return any(re.search(_SETTLE[k][1] if zh else _SETTLE[k][0], text, flags=0 if zh else re.I)
               for k in kinds)


def kind_of(thread: Thread) -> str:
    """The thread's kind, read from its closer ("done" for a closer a person wrote)."""
    return next((k for k, names in CLOSERS.items() if thread.closer in names), "done")


def closes(thread: Thread, text: str, similarity: float | None = None) -> bool:
    """True when ``text`` (a later memory) settles ``thread``: it says something of the
    thread's kind happened (``settles``) and answers that very thread. ``similarity``: the
    sentence encoder's cosine of the two: at least ``ANSWERS``, or ``RELATED`` with a topic
    word of the thread said again (``SHARED_EVIDENCE``): "Visited my grandmother in
    Chengdu" shares a city with "how to tell Mum in Chengdu about the engagement" and
    answers nothing. A memory with no word of the thread's kind closes it only when it says
    the very thing (``SAYS_IT``) and leaves nothing open itself. Without ``similarity`` (no
    encoder at hand), the shared words alone decide."""
    if not settles(text, kind_of(thread)):
        # No word of its kind ("Told Mum about the engagement" settles "how to tell Mum"):
        # only a statement that says the very thing, itself leaving nothing open.
        return similarity is not None and similarity >= SAYS_IT and opens(text) is None
    shared = set(analyzer(thread.text)) & set(analyzer(text))
    worded = sum(specificity(t) for t in shared) >= SHARED_EVIDENCE
    if similarity is None:
        return worded
    # A decision that names what was in question ("Decided against the master's" for
    # "Thinking about a part-time master's in data science": 0.28) is an answer in few words.
    least = DECIDED if kind_of(thread) == "decide" else RELATED
    return similarity >= ANSWERS or (worded and similarity >= least)


def closed_text(thread: Thread, day: str, outcome: str, words: int = 12) -> str:
    """The timeline text of a closed thread: what was open and how it ended, on ``day``
    (``Thinking about X. → 2026-06-20: Decided against …``); the outcome is the closing
    memory's first whole clauses within ``words`` words (``prose.shorten``: never a word or a
    clause cut short; its whole text is on its own day)."""
    from scene_engine.offline.prose import shorten

    return f"{thread.text}{ARROW}{day}: {shorten(outcome, words)}"


def parse_section(section: str, mine: set[str]) -> tuple[list[Thread], list[str]]:
    """(threads, a person's lines) of an ``## Open threads`` section's text (heading not
    included); lines in ``mine`` (written by a person) are kept as written, never closed."""
    threads, own = [], []
    for raw in section.splitlines():
        line = raw.strip()
        if not line:
            continue
        found = LINE.match(line)
        if found and line not in mine:
            threads.append(Thread(found.group(1), found.group(2), found.group(3)))
        else:
            own.append(raw.rstrip("\r"))
    return threads, own


def render_section(threads: list[Thread], own: list[str]) -> str:
    """The section's text, heading first; "" when there is nothing open."""
    if not threads and not own:
        return ""
    return "\n".join([HEADING, *own, *(t.line() for t in sorted(threads, key=lambda t: t.day))])
