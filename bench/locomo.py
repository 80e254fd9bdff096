"""LoCoMo end to end: ingest each sample's facts with the offline backend, then measure recall.

Recall draws on the scenes and the memory journal together (fused); the table reports it at
2,000, 4,000 and 8,000 characters beside BM25 over the raw facts with the same budget, and the
share of answers that all facts together contain (the ceiling of any extractive recall).

    python bench/locomo.py [--data ../shared/data/locomo10.json] [--samples 0,1] [--out DIR]
    python bench/locomo.py --conversation [--samples 0,1]

``--conversation``: each sample's raw dialogue (not the ready-made observations) goes through
the offline extractor (``scenes extract``) and then the scenes; recall at 2,000 and 4,000
characters is reported beside the observation-fed store and BM25 over the raw dialogue turns.

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
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scene_engine.core.text import STOP_WORDS  # noqa: E402
from scene_engine.recall.assemble import Passage, rank_passages, readable_date  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo10.json"
BUDGETS = (2000, 4000, 8000)
CATEGORIES = (1, 2, 3, 4)
# Conversation mode: a raw dialogue holds about three times its observations' text, more than
# 15 scenes of the default 1,500 characters hold (the offline scene backend refuses then).
SCENE_CHARS = 4000


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


def turn_passages(sample: dict) -> list[Passage]:
    """One passage per raw dialogue turn: ``date: Speaker: text`` (the conversation mode's
    baseline, as BM25 over the turns would see them)."""
    conv, out = sample["conversation"], []
    for key in conv:
        if not key.startswith("session_") or key.endswith("date_time"):
            continue
        day = session_time(conv[f"{key}_date_time"]).date().isoformat().split("-")
        for turn in conv[key]:
            out.append(Passage("turns", f"{readable_date(*day)}: {turn['speaker']}: "
                                        f"{turn['text']}"))
    return out


def ranked_text(passages: list[Passage], question: str, budget: int) -> str:
    """BM25 over ``passages``, best first, as many whole lines as fit in ``budget``."""
    lines, used = [], 0
    for passage in rank_passages(question, passages):
        line = f"- {passage.text}"
        if used + len(line) + 1 <= budget:
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)


def run_conversation(sample: dict, workdir: Path, scene_chars: int = SCENE_CHARS) -> dict:
    """The conversation-fed store, the observation-fed store and BM25 over the raw turns on
    the same questions at 2,000 and 4,000 characters; returns the figures."""
    from scene_engine.extraction.pipeline import extract_file
    from scene_engine.index.scenes import for_store
    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.recall.assemble import recall
    from scene_engine.services.add import add_memories
    from scene_engine.services.doctor import check_store
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import init_store

    conv_store = init_store(workdir / f"{sample['sample_id']}-conversation")
    if scene_chars:
        conv_store = replace(conv_store, config=conv_store.config.model_copy(
            update={"max_scene_chars": scene_chars}))
    started = time.perf_counter()
    extracted = extract_file(conv_store, json.dumps(sample).encode(), "locomo.json")
    extract_s = time.perf_counter() - started
    run_pending(conv_store, OfflineBackend())
    conv_s = time.perf_counter() - started
    obs_store = init_store(workdir / f"{sample['sample_id']}-observations")
    add_memories(obs_store, "\n".join(json.dumps(m) for m in sample_memories(sample))
                 .encode())
    run_pending(obs_store, OfflineBackend())
    turns = turn_passages(sample)
    scores = defaultdict(lambda: [0, 0, 0, 0])   # budget -> [questions, conv, obs, turns]
    with for_store(conv_store) as conv_index, for_store(obs_store) as obs_index:
        conv_index.sync()
        obs_index.sync()
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES or "answer" not in qa:
                continue
            for budget in BUDGETS[:2]:
                row = scores[budget]
                row[0] += 1
                row[1] += answered(qa["answer"], recall(conv_store, qa["question"],
                                                        budget=budget, index=conv_index).text)
                row[2] += answered(qa["answer"], recall(obs_store, qa["question"],
                                                        budget=budget, index=obs_index).text)
                row[3] += answered(qa["answer"], ranked_text(turns, qa["question"], budget))
    problems = check_store(conv_store)
    return {"sample": sample["sample_id"], "turns": len(turns), "memories": extracted.added,
            "queued": extracted.queued, "extract_s": round(extract_s, 2),
            "wall_s": round(conv_s, 2), "scenes": len(conv_store.scene_names()),
            "doctor": "clean" if not problems else "; ".join(problems),
            "scores": {str(b): v for b, v in scores.items()}}


def conversation_report(rows: list[dict]) -> tuple[str, bool]:
    """Per sample and overall: conversation-fed vs observation-fed vs raw-turn BM25; and
    whether the offline target (conversation-fed >= raw turns at each budget) is met."""
    out = ["| sample | turns | memories extracted | pairs queued | extract s | extract + "
           "scenes s | scenes | doctor |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['sample']} | {r['turns']} | {r['memories']} | {r['queued']} | "
                   f"{r['extract_s']} | {r['wall_s']} | {r['scenes']} | {r['doctor']} |")
    out += ["", "| budget | questions | conversation-fed | observation-fed | raw-turn BM25 | "
                "target met (conversation >= turns) |", "|---|---|---|---|---|---|"]
    met = True
    for budget in BUDGETS[:2]:
        n, c, o, t = (sum(r["scores"][str(budget)][i] for r in rows) for i in range(4))
        met &= c >= t
        out.append(f"| {budget} | {n} | {c / n:.1%} | {o / n:.1%} | {t / n:.1%} | "
                   f"{'yes' if c >= t else 'NO'} |")
    return "\n".join(out), met


def run_one(sample: dict, workdir: Path) -> dict:
    """Ingest one sample into a new store and score recall; returns the figures."""
    from scene_engine.index.scenes import for_store
    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.recall.assemble import recall
    from scene_engine.services.add import add_memories
    from scene_engine.services.doctor import check_store
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import init_store

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
    parser.add_argument("--conversation", action="store_true",
                        help="feed the raw dialogue through the extractor (see above)")
    parser.add_argument("--scene-chars", type=int, default=SCENE_CHARS,
                        help="max_scene_chars of the conversation-fed store (0: the default)")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    workdir = args.out or Path(tempfile.mkdtemp(prefix="locomo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.one is not None:      # child process: one sample, JSON on stdout
        row = run_conversation(data[args.one], workdir, args.scene_chars) \
            if args.conversation else run_one(data[args.one], workdir)
        print(json.dumps(row))
        return 0
    picked = [int(i) for i in args.samples.split(",") if i] or list(range(len(data)))
    rows = []
    for i in picked:
        child = subprocess.run([sys.executable, __file__, "--data", str(args.data), "--one",
                                str(i), "--out", str(workdir),
                                *(["--conversation", "--scene-chars", str(args.scene_chars)]
                                  if args.conversation else [])],
                               capture_output=True, text=True, check=False)
        if child.returncode:
            print(child.stderr, file=sys.stderr)
            return 1
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        if args.conversation:
            print(f"{r['sample']}: {r['turns']} turns, {r['memories']} memories, "
                  f"{r['wall_s']} s, doctor {r['doctor']}", file=sys.stderr)
            continue
        print(f"{r['sample']}: {r['memories']} memories, {r['batches']} batches, {r['scenes']} "
              f"scenes, {r['wall_s']} s, {r['peak_mb']} MB, doctor {r['doctor']}",
              file=sys.stderr)
    if args.conversation:
        text, met = conversation_report(rows)
        print(text)
        return 0 if met and all(r["doctor"] == "clean" for r in rows) else 1
    print(report(rows))
    print(f"\nstores kept in {workdir}" if args.out else "", file=sys.stderr)
    return 0 if all(r["doctor"] == "clean" and r["added"] == r["memories"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
