"""Knowledge updates: is the current value the first passage a recall gives that states the
asked attribute? (issue 26; the set and its judging rule: ``bench/knowledge/README.md``).

    python bench/bench_knowledge.py [--budget 2000] [--fold] [--show]

Steps: one store a person (p1-p6), their memories added; with ``--fold`` the offline backend
folds them into scenes too (recall then draws on scenes and journal; without it, on the
journal alone, as an agent that has not folded yet). For every question, ``recall`` at the
budget; the passage lines of its text are read in the order an agent reads them.

The judge (the README's rule, made mechanical): the first passage line that either holds
every keyword of ``current`` (answered) or names one of the attribute's other values of its
``history`` (a stale value first: not answered) decides; no such line: not answered. A value's
words in parentheses are dropped ("Miso (cat)" is "Miso"). History questions ("where did I
live before Lisbon?") count as answered when some passage holds their keywords (their order
is no target). Figures by language and kind, and the misses with ``--show``.

Also counted (issue 36): how often a line is marked ``current`` (claimed) for a current
question, and how often such a line lacks the keywords of ``current`` (a wrong claim, by the
weaker keyword rule: this set labels no memory but the evidence).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "knowledge"
_PAREN = re.compile(r"[（(][^()（）]*[)）]")


def load(name: str) -> list[dict]:
    """The records of ``bench/knowledge/NAME.jsonl``."""
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def passage_lines(text: str) -> list[str]:
    """The passage lines of a recall text, in order (persona, map and day headings out)."""
    starts = [i for i in (text.find("## Current\n"), text.find("## Passages\n")) if i >= 0]
    body = text[min(starts):] if starts else ""
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]


def _holds(line: str, word: str) -> bool:
    return word.casefold() in line.casefold()


def stale_values(question: dict) -> list[str]:
    """The attribute's values other than the asked one, as words a line may hold."""
    wanted = [w.casefold() for w in question["current"]]
    out = []
    for value in question["history"]:
        value = _PAREN.sub("", value).strip()
        if value and not any(w in value.casefold() or value.casefold() in w for w in wanted):
            out.append(value)
    return out


def judge(question: dict, lines: list[str]) -> tuple[bool, str]:
    """(answered, the deciding line or why none) for one question's recalled lines."""
    if question["kind"] == "history":
        hit = next((ln for ln in lines if all(_holds(ln, w) for w in question["current"])),
                   None)
        return hit is not None, hit or "(no passage holds it)"
    stale = stale_values(question)
    for line in lines:
        if all(_holds(line, w) for w in question["current"]):
            return True, line
        if any(_holds(line, v) for v in stale):
            return False, line
    return False, "(no passage states it)"


def run(budget: int, fold: bool, show: bool) -> dict:
    """Build the stores, ask every question; returns the figures (and prints misses)."""
    from scene_engine.index.refresh import refresh_vectors
    from scene_engine.index.scenes import for_store
    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.recall.assemble import recall
    from scene_engine.services.add import add_memories
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import init_store

    memories, questions = load("memories"), load("questions")
    work = Path(tempfile.mkdtemp(prefix="knowledge-"))
    by_person = defaultdict(list)
    for m in memories:
        by_person[m["person"]].append({k: m[k] for k in ("id", "content", "created_at")})
    scores: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    used: list[float] = []
    times: list[float] = []
    for person, rows in sorted(by_person.items()):
        store = init_store(work / person)
        add_memories(store, "\n".join(json.dumps(r) for r in rows).encode())
        refresh_vectors(store)   # as `scenes add` leaves a store (the extra's vectors; else nothing)
        if fold:
            run_pending(store, OfflineBackend())
        with for_store(store) as index:
            index.sync()
            for q in (q for q in questions if q["person"] == person):
                t0 = time.perf_counter()
                found = recall(store, q["question"], budget=budget, index=index)
                times.append((time.perf_counter() - t0) * 1000)
                ok, why = judge(q, passage_lines(found.text))
                row = scores[(q["language"], q["kind"])]
                row[0] += 1
                row[1] += ok
                marked = [p for p in found.passages if p.status.startswith("current")]
                wrong = [p for p in marked if q["kind"] == "current" and not all(
                    _holds(p.text, w) for w in q["current"])]
                row[2] += bool(marked) and q["kind"] == "current" and not wrong
                row[3] += len(wrong)
                if show and wrong:
                    print(f"WRONG CLAIM {person} {q['question']!r} want {q['current']}: "
                          f"{wrong[0].text[:140]}")
                used.append(len(found.text) / budget)
                if show and not ok:
                    print(f"MISS {person} {q['question']!r} want {q['current']}: {why[:140]}")
    return {"scores": scores, "used": sum(used) / len(used), "times": sorted(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--fold", action="store_true", help="fold into scenes first (offline)")
    parser.add_argument("--show", action="store_true", help="print each miss")
    args = parser.parse_args()
    figures = run(args.budget, args.fold, args.show)
    print("| language | kind | questions | answered (current first) | claimed current, "
          "rightly | wrong claims |\n|---|---|---|---|---|---|")
    for (language, kind), (n, ok, claimed, wrong) in sorted(figures["scores"].items()):
        right = f"{claimed / n:.1%}" if kind == "current" else ""
        print(f"| {language} | {kind} | {n} | {ok / n:.1%} | {right} | {wrong} |")
    times = figures["times"]
    print(f"\nbudget {args.budget}, {'folded' if args.fold else 'journal only'}: "
          f"{figures['used']:.0%} of the budget used on average; recall p50 "
          f"{times[len(times) // 2]:.1f} ms, p95 {times[int(len(times) * 0.95)]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
