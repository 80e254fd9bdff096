"""Conservation: no fact and no person's word is lost by a batch (docs/DESIGN.md "A batch", step 7).

The measures every backend is judged by, in code, not in a prompt:

- ``coverage(source, target)``: the share of ``source``'s content words found in ``target``
  (English words stemmed with the Snowball stemmer, Chinese by character pairs, numbers left
  out because dates are everywhere). A scene deleted by a merge must be covered by the scene
  that absorbed it (``MERGE_COVERAGE``), a rewritten scene by what the batch writes
  (``KEEP_COVERAGE``: condensing is fine, wiping is not); a memory is placed where the batch's
  added text covers it (``accounting``).
- ``Authorship``: which lines of a scene a person wrote (their text was added by a hand edit
  or a person's own commit: ``history.person_texts``). Those lines come back word for word,
  in the same scene or, after a merge, in the scene that absorbed it.
- ``is_pinned``: ``pinned: true`` in a header; such a scene is never deleted, merged away,
  renamed or re-summarised.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from scene_engine.core.periods import PERIOD, covers, first_day
from scene_engine.core.text import clauses, terms
from scene_engine.store.scene import parse_scene

MERGE_COVERAGE = 0.5     # share of a merged-away scene's words the surviving scene must hold
KEEP_COVERAGE = 0.5      # share of a rewritten scene's words the batch must still hold
DIGEST_KEEP = 0.2        # ... of the words of dated lines a digest of their period took in
ENGINE_KEYS = frozenset({"created", "updated", "heat", "summary", "merged_from"})


@functools.lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # The pure-Python Snowball stemmer costs ~50 us a word; a person's vocabulary is small.
    return _stemmer().stemWord(word) if word.isascii() else word


NEGATION = "¬not"         # one term for "not", "never", "no", "n't": they change a fact
_NEGATION = re.compile(r"\b(?:not|never|no|none|nothing|nobody|neither|nor|cannot)\b|n't|不|没|别")


def content_terms(text: str, numbers: bool = False) -> frozenset[str]:
    """The content words of ``text``: ``text.terms``, Latin words stemmed, numbers only if
    ``numbers`` (dates are everywhere in a scene; in a memory a number is a fact), and
    ``NEGATION`` when it negates something (stop words hide "not"). A text of several lines
    is the union of its lines', and a line the union of its clauses' (each clause cached: a
    batch changes a few lines of a scene, and a digest line one fact of it; no word, number
    or negation spans a ``; ``)."""
    if "\n" not in text and "; " not in text:
        return _line_terms(text, numbers)
    return _text_terms(text, numbers)


@functools.lru_cache(maxsize=64)        # a scene's body before the batch is asked at each step
def _text_terms(text: str, numbers: bool) -> frozenset[str]:
    return frozenset().union(*(_line_terms(part, numbers) for part in clauses(text)))


# A batch's working set is its scenes' lines and its memories (a few hundred); 8,192 lines
# keep several batches' worth without growing with the store (issue 23: memory at 100,000).
@functools.lru_cache(maxsize=8192)
def _line_terms(text: str, numbers: bool) -> frozenset[str]:
    found = {_stem(t) for t in terms(text) if not t.isdigit()}
    if numbers:   # every number, one digit too ("day 1" is not "day 7")
        found.update(re.findall(r"\d+", text))
    if _NEGATION.search(text.lower()):
        found.add(NEGATION)
    return frozenset(found)


_DATED_LINE = re.compile(rf"^\s*[-*]\s*({PERIOD})( \(digest\))?\s*:")


def held(old_body: str, new_bodies: list[str], own: str | None = None) -> tuple[float, float]:
    """How much of a scene body's words the bodies a batch writes still hold, with rollups
    in mind (issue 23): (share of the words of its plain lines, share of the words of its
    dated lines that a digest line of the new bodies covers by its period).

    A digest is a condensed period by design (seed 000's hierarchical rollups): an old digest
    line that a digest of the same or a wider period replaces is not counted at all, and dated
    lines a digest took in need only keep ``DIGEST_KEEP`` of their words; every other line
    keeps its share as before (``KEEP_COVERAGE``, ``MERGE_COVERAGE``). Each share is 1.0 when
    there is nothing of its kind. ``own``: the scene's own new body, whose digests alone say
    which of its lines were rolled up (a digest of another scene stands for none of them;
    default: all of ``new_bodies``)."""
    periods = [found.group(1) for body in ([own] if own is not None else new_bodies)
               for line in body.split("\n")
               if (found := _DATED_LINE.match(line)) and found.group(2)]
    plain, rolled = [], []
    for line in old_body.split("\n"):
        found = _DATED_LINE.match(line)
        if found and any(covers(p, first_day(found.group(1))) for p in periods):
            if not found.group(2):       # an old digest a digest replaced counts for nothing
                rolled.append(line)
            continue
        plain.append(line)
    target = "\n".join(new_bodies)
    return coverage("\n".join(plain), target), coverage("\n".join(rolled), target)


def keeps(old_body: str, new_bodies: list[str], least: float = KEEP_COVERAGE) -> bool:
    """True when ``new_bodies`` hold enough of ``old_body`` (``held``): ``least`` of its plain
    words and ``DIGEST_KEEP`` of the words of the lines a digest took in."""
    plain, rolled = held(old_body, new_bodies)
    return plain >= least and rolled >= DIGEST_KEEP


def coverage(source: str, target: str, numbers: bool = False) -> float:
    """Share in [0, 1] of ``source``'s content words that ``target`` also has (1.0 when
    ``source`` has none); ``numbers``: count numbers as words."""
    wanted = content_terms(source, numbers)
    if not wanted:
        return 1.0
    return len(wanted & content_terms(target, numbers)) / len(wanted)


_ISO_DAY = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")
FULL_SHARE = 0.8         # a scene this full (of max_scene_chars) may condense its facts
FACT_KEEP = 0.5          # otherwise each fact keeps at least this share of its words


def facts_of(body: str) -> list[str]:
    """The statements of a scene body: its sentences (lines split at sentence ends), without
    headings and very short fragments."""
    found = []
    for line in body.split("\n"):
        line = line.strip().lstrip("-*").strip()
        if line and not line.startswith("#"):
            found += [f for f in re.split(r"(?<=[.!?。！？;；])\s*", line) if len(f) > 12]
    return found


def dropped_facts(old_body: str, new_bodies: list[str], demand: int, max_chars: int
                  ) -> list[str]:
    """Facts of ``old_body`` that none of ``new_bodies`` keeps (no line of them holds
    ``FACT_KEEP`` of the fact's words and numbers), when keeping them would have fit: ``demand`` (characters of
    everything that had to go into the scene: its old text, what it absorbed, what the batch
    added) stays under ``FULL_SHARE`` of ``max_chars``. A full scene may condense; a scene
    with room keeps every fact."""
    if demand >= FULL_SHARE * max_chars:
        return []
    # Judged line by line, numbers counted: a fact's words scattered over other lines ("ran"
    # and "km" of another run) do not keep "Ran my first 10 km in 58 minutes".
    # A line's date is not what it says: "2026-01-10" must not make "Ran 5 km" keep "10 km".
    lines = [content_terms(_ISO_DAY.sub(" ", line), numbers=True) for body in new_bodies
             for line in body.split("\n") if line.strip()]
    lost = []
    for fact in facts_of(old_body):
        words = content_terms(_ISO_DAY.sub(" ", fact), numbers=True) - {NEGATION}
        if len(words) >= 3 and not any(len(words & line) >= FACT_KEEP * len(words)
                                       for line in lines):
            lost.append(fact)
    return lost


def is_pinned(meta: dict) -> bool:
    """True for ``pinned: true`` (or ``yes``/``on``) in a scene header."""
    value = meta.get("pinned")
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on")
    return value is True


@dataclass(frozen=True)
class Authorship:
    """What a person wrote in one scene file: ``lines`` (body lines, stripped, non-blank, in
    file order) and ``summary`` (True when the ``summary:`` line is theirs)."""

    lines: tuple[str, ...] = ()
    summary: bool = False


def authorship(text: str, person: frozenset[str], name: str = "scene") -> Authorship:
    """The ``Authorship`` of a scene whose file text is ``text``, given ``person``: every line
    a person's commit ever added (``history.person_texts``)."""
    if not person:
        return Authorship()
    scene = parse_scene(text, name=name)
    header = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    header = header[: len(header) - len(scene.body.split("\n"))] if scene.header else []
    body = tuple(line.strip() for line in scene.body.split("\n") if line.strip() in person)
    summary = any(line.startswith("summary:") and line.strip() in person for line in header)
    return Authorship(lines=body, summary=summary)


def stripped_lines(text: str) -> set[str]:
    """The non-blank lines of ``text``, stripped (what "a line is still there" compares)."""
    return {line.strip() for line in text.split("\n") if line.strip()}


def lost_lines(lines: Iterable[str], texts: Iterable[str]) -> list[str]:
    """Those of ``lines`` that are in none of ``texts`` (as whole lines), in order."""
    present: set[str] = set()
    for text in texts:
        present |= stripped_lines(text)
    return [line for line in dict.fromkeys(lines) if line not in present]


def quote(lines: list[str], limit: int = 5) -> str:
    """Lines as a short quoted list for a message (``"a"; "b"; and 3 more``)."""
    shown = "; ".join(f'"{line[:120]}"' for line in lines[:limit])
    return shown + (f"; and {len(lines) - limit} more" if len(lines) > limit else "")
