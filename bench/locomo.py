"""LoCoMo end to end: ingest each sample's facts with the offline backend, then measure recall.

Recall draws on the scenes and the memory journal together (fused); the table reports it at
2,000, 4,000 and 8,000 characters beside BM25 over the raw facts with the same budget, and the
share of answers that all facts together contain (the ceiling of any extractive recall).

    python bench/locomo.py [--data ../shared/data/locomo10.json] [--samples 0,1] [--out DIR]

Per sample: memories, batches, scenes, wall time, peak memory (each sample runs in its own
process so the figure is its own), doctor result. Then, for the questions of categories 1-4,
the share answered by ``scenes recall`` at 2,000 and 4,000 characters, against a baseline in the
same run: BM25 over the sample's raw facts (each with its date) under the same budget. A
question counts as answered when every content word of the gold answer appears in the recalled
text (case and punctuation ignored).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scene_engine.recall import Passage, rank_passages, readable_date  # noqa: E402
from scene_engine.text import STOP_WORDS  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo10.json"
BUDGETS = (2000, 4000, 8000)
CATEGORIES = (1, 2, 3, 4)


def session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> aware datetime (UTC; LoCoMo gives no zone)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sample_memories(sample: dict) -> list[dict]:
    """One memory per observation: id from sample, dia id and position; the session's time."""
    conv, memories = sample["conversation"], []
    for key, by_speaker in sample["observation"].items():
        session = key.removesuffix("_observation")
        when = session_time(conv[f"{session}_date_time"]).isoformat()
        # Position within the session's observations (both speakers): two speakers' facts
        # may cite the same dia id at the same place in their own lists.
        facts = [fact for speaker_facts in by_speaker.values() for fact in speaker_facts]
        for position, (fact, dia_id) in enumerate(facts):
            memories.append({"id": f"{sample['sample_id']}:{dia_id}:{position}",
                             "content": fact, "created_at": when})
    return memories


def answer_words(answer) -> list[str]:
    """Content words of a gold answer: lower-cased, punctuation dropped, stop words out."""
    words = re.findall(r"[\w']+", str(answer).lower())
    content = [w.strip("'") for w in words if w not in STOP_WORDS]
    return [w for w in content if w] or [w for w in words if w]


def answered(answer, text: str) -> bool:
    """Every content word of ``answer`` occurs as a word of ``text``."""
    have = set(w.strip("'") for w in re.findall(r"[\w']+", text.lower()))
    return all(w in have for w in answer_words(answer))


def baseline_text(memories: list[dict], question: str, budget: int, every: bool = False) -> str:
    """BM25 over the raw facts (date-prefixed like recall's passages), best first, in budget;
    ``every``: all of them, in order (the ceiling of any extractive recall)."""
    passages = []
    for m in memories:
        day = datetime.fromisoformat(m["created_at"]).date().isoformat().split("-")
        passages.append(Passage("facts", f"{readable_date(*day)}: {m['content']}"))
    lines, used = [], 0
    for passage in passages if every else rank_passages(question, passages):
        line = f"- {passage.text}"
        if used + len(line) + 1 <= budget:
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)


def run_one(sample: dict, workdir: Path) -> dict:
    """Ingest one sample into a new store and score recall; returns the figures."""
    from scene_engine.batch import run_pending
    from scene_engine.doctor import check_store
    from scene_engine.engine import add_memories
    from scene_engine.index import for_store
    from scene_engine.offline import OfflineBackend
    from scene_engine.recall import recall
    from scene_engine.store import init_store

    memories = sample_memories(sample)
    store = init_store(workdir / sample["sample_id"])
    started = time.perf_counter()
    added = add_memories(store, "\n".join(json.dumps(m) for m in memories).encode())
    results = run_pending(store, OfflineBackend())
    wall = time.perf_counter() - started
    problems = check_store(store)
    # (category, budget) -> [questions, recall, baseline]; budget 0: all facts (the ceiling)
    scores = defaultdict(lambda: [0, 0, 0])
    recall_ms = []
    every_fact = baseline_text(memories, "", 10**9, every=True)
    with for_store(store) as index:
        index.sync()
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES or "answer" not in qa:
                continue
            ceiling = scores[(qa["category"], 0)]
            ceiling[0] += 1
            ceiling[1] += answered(qa["answer"], every_fact)
            for budget in BUDGETS:
                t0 = time.perf_counter()
                text = recall(store, qa["question"], budget=budget, index=index).text
                recall_ms.append((time.perf_counter() - t0) * 1000)
                row = scores[(qa["category"], budget)]
                row[0] += 1
                row[1] += answered(qa["answer"], text)
                row[2] += answered(qa["answer"], baseline_text(memories, qa["question"], budget))
    recall_ms.sort()
    return {"sample": sample["sample_id"], "memories": len(memories), "batches": len(results),
            "scenes": len(store.scene_names()), "wall_s": round(wall, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "doctor": "clean" if not problems else "; ".join(problems),
            "added": added.added,
            "recall_p95_ms": round(recall_ms[int(len(recall_ms) * 0.95)], 2) if recall_ms else 0,
            "scores": {f"{c}:{b}": v for (c, b), v in scores.items()}}


def report(rows: list[dict]) -> str:
    """The per-sample table and the recall table (scenes vs raw-fact baseline), as Markdown."""
    out = ["| sample | memories (added) | batches | scenes | wall s | peak MB | recall p95 ms | "
           "doctor |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['sample']} | {r['memories']} ({r['added']}) | {r['batches']} | "
                   f"{r['scenes']} | "
                   f"{r['wall_s']} | {r['peak_mb']} | {r['recall_p95_ms']} | {r['doctor']} |")
    total = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        for key, (n, s, b) in r["scores"].items():
            for i, v in enumerate((n, s, b)):
                total[key][i] += v
    out += ["", "| category | budget | questions | recall (scenes + memories) | "
                "raw-fact BM25 baseline |", "|---|---|---|---|---|"]
    share = {}
    for category in (*CATEGORIES, "all 1-4"):
        for budget in (*BUDGETS, 0):
            keys = [f"{c}:{budget}" for c in (CATEGORIES if category == "all 1-4"
                                               else (category,))]
            n, s, b = (sum(total.get(k, (0, 0, 0))[i] for k in keys) for i in range(3))
            if not n:
                continue
            share[(category, budget)] = (s / n, b / n)
            if budget == 0:
                out.append(f"| {category} | all facts (ceiling) | {n} | {s / n:.1%} | |")
            else:
                out.append(f"| {category} | {budget} | {n} | {s / n:.1%} | {b / n:.1%} |")
    out += ["", "| target | measured | met |", "|---|---|---|"]
    for mine, theirs in ((2000, 4000), (4000, 8000)):
        got, want = share[("all 1-4", mine)][0], share[("all 1-4", theirs)][1]
        out.append(f"| recall at {mine} >= baseline at {theirs} | {got:.1%} vs {want:.1%} | "
                   f"{'yes' if got >= want else 'NO'} |")
    behind = [f"{c}@{b}" for c in CATEGORIES for b in BUDGETS
              if (c, b) in share and share[(c, b)][0] < share[(c, b)][1]]
    out.append(f"| every category >= baseline at the same budget | "
               f"{'behind: ' + ', '.join(behind) if behind else 'all'} | "
               f"{'NO' if behind else 'yes'} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--samples", default="", help="comma-separated indexes (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="keep the stores here")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    workdir = args.out or Path(tempfile.mkdtemp(prefix="locomo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.one is not None:      # child process: one sample, JSON on stdout
        print(json.dumps(run_one(data[args.one], workdir)))
        return 0
    picked = [int(i) for i in args.samples.split(",") if i] or list(range(len(data)))
    rows = []
    for i in picked:
        child = subprocess.run([sys.executable, __file__, "--data", str(args.data), "--one",
                                str(i), "--out", str(workdir)], capture_output=True, text=True,
                               check=False)
        if child.returncode:
            print(child.stderr, file=sys.stderr)
            return 1
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        print(f"{r['sample']}: {r['memories']} memories, {r['batches']} batches, {r['scenes']} "
              f"scenes, {r['wall_s']} s, {r['peak_mb']} MB, doctor {r['doctor']}",
              file=sys.stderr)
    print(report(rows))
    print(f"\nstores kept in {workdir}" if args.out else "", file=sys.stderr)
    return 0 if all(r["doctor"] == "clean" and r["added"] == r["memories"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
