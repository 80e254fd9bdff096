"""Words that say a fact changed: "moved to", "no longer", "now", 搬到, 不再, 换了 (issue 26's
offline detector of updates, first used by the batch's accounting, issue 25).

A memory that states a change is the newest word on something a scene may already say the
old way: it is never skipped, and "a scene already holds it" needs that scene to say it, not
the old fact with the same words (docs/DESIGN.md "A batch", accounting).
"""

from __future__ import annotations

import re

__all__ = ["states_a_change"]

_EN = re.compile(
    r"\b(?:correction|actually|no longer|(?:not|n't)\b[^.!?]{0,40}\b(?:any ?more)|anymore|"
    r"instead|changed|switched|swapped|moved (?:to|back|out|in|into|away)|relocated|quit|"
    r"stopped|gave up|given up|started|began|now|nowadays|these days|from now on|"
    r"used to|not any ?longer|ended|broke up|divorced|got married|engaged|promoted|"
    r"resigned|retired|left (?:my|the|her|his)|joined)\b", re.I)
_ZH = re.compile(r"不再|已经不|改成|改为|换了|换成|搬到|搬去|搬回|搬家|更正|其实|现在|如今|"
                 r"目前|开始|戒了|辞职|离职|入职|分手|离婚|结婚|不.{0,6}了")


def states_a_change(text: str) -> bool:
    """True when ``text`` says something changed or is so now (English or Chinese)."""
    return bool(_EN.search(text) or _ZH.search(text))
