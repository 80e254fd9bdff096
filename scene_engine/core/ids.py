"""Memory id ranges as digests cite them (docs/DESIGN.md "A batch", step 7: rollups cite the
memories they hold): three or more ids that count up with one prefix are written
``m0012..m0019``. Light on purpose: recall, which starts in a new process each call, reads
citations without importing the offline backend's word tables."""

from __future__ import annotations

import re

NUMBERED = re.compile(r"^(.*?)(\d+)$")    # an id's prefix and its trailing number


def expand_range(token: str) -> list[str]:
    """``m0012..m0019`` -> ``["m0012", ..., "m0019"]``; any other token (a single id, or a
    range whose ends do not share a prefix and width) -> ``[token]``."""
    first, sep, last = token.partition("..")
    a, b = NUMBERED.match(first), NUMBERED.match(last) if sep else None
    if not (a and b and a.group(1) == b.group(1) and len(a.group(2)) == len(b.group(2))):
        return [token]
    width, prefix = len(a.group(2)), a.group(1)
    return [f"{prefix}{n:0{width}d}" for n in range(int(a.group(2)), int(b.group(2)) + 1)]
