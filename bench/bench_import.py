"""Importers and hooks (issue 38): import speed and peak memory of a generated ChatGPT-shaped
export, SessionStart hook latency on stores of 1,000 and 10,000 memories, Stop hook latency.

    python bench/bench_import.py                    # everything, the sizes of the issue
    python bench/bench_import.py --messages 10000   # a smaller export
    python bench/bench_import.py --only hooks

Each measured command runs as a person's (or an agent's) would: a new ``scenes`` process, the
console script's own entry, so Python's start-up counts; each hook run is followed by a
``python -c pass`` (the yardstick: the ratio of each pair is reported, as these machines are
shared). Peak memory is the child's maximum
resident set (``getrusage``). The export is made by ``chatgpt_export``: conversations of 20
messages (10 the person's, 10 the assistant's, a regenerated answer in every fifth), a mapping
tree and a ``current_node`` each, about 1 KB a message, in made-up words of Zipf frequency.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "from scene_engine.cli.entry import main; main()"
SYLLABLES = "ka lo mi ne ru sa te vo bi da fe gu ha ji ko la ma no pe ri su ta vi wo ze".split()


def vocabulary(size: int = 3000, seed: int = 3) -> tuple[list[str], list[float]]:
    """``size`` made-up words and Zipf weights (the n-th word 1/n as common as the first):
    a person's words, not a few dozen repeated, so similar-memory pairs stay as rare as in
    real text."""
    rng = random.Random(seed)
    words = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
                    for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    return words, [1 / (n + 1) for n in range(len(words))]


WORDS, WEIGHTS = vocabulary()


def scenes(*args: str, stdin: str | None = None, env: dict | None = None
           ) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``scenes ARGS`` as a new process; (seconds, the finished process)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], input=stdin, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, cwd=ROOT)
    return time.perf_counter() - start, done


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, WEIGHTS, k=n)).capitalize() + "."


def chatgpt_export(path: Path, messages: int, seed: int = 7) -> int:
    """Write a ChatGPT ``conversations.json`` of about ``messages`` messages; returns the
    number written. Written conversation by conversation (the generator holds one)."""
    rng = random.Random(seed)
    per = 20
    count = 0
    t0 = 1_700_000_000.0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for c in range(messages // per):
            mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
            parent = "root"
            for m in range(per):
                node = f"c{c}-m{m}"
                role = "user" if m % 2 == 0 else "assistant"
                text = (f"I {rng.choice(['moved', 'booked', 'started', 'finished'])} "
                        f"{sentence(rng, 12)} {sentence(rng, 20)}") if role == "user" else \
                    " ".join(sentence(rng, 18) for _ in range(6))
                mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                    "id": node, "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": t0 + c * 3600 + m * 30, "update_time": None,
                    "content": {"content_type": "text", "parts": [text]}, "status":
                    "finished_successfully", "end_turn": role == "assistant", "weight": 1.0,
                    "metadata": {}, "recipient": "all"}}
                mapping[parent]["children"].append(node)
                if role == "assistant" and m % 10 == 1 and c % 5 == 0:   # a regeneration
                    alt = node + "-regen"
                    mapping[alt] = {"id": alt, "parent": parent, "children": [],
                                    "message": {**mapping[node]["message"], "id": alt}}
                    mapping[parent]["children"].insert(0, alt)
                parent = node
                count += 1
            conversation = {"title": sentence(rng, 4), "create_time": t0 + c * 3600,
                            "update_time": t0 + c * 3600 + per * 30, "mapping": mapping,
                            "current_node": parent, "conversation_id": f"conv-{c}",
                            "id": f"conv-{c}", "is_archived": False, "moderation_results": []}
            out.write(("," if c else "") + json.dumps(conversation))
        out.write("]")
    return count


def child_peak_mb() -> float:
    """The largest resident set of any child waited for so far, in MB (Linux: KB units)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def bench_import(messages: int, work: Path) -> dict:
    """Import speed and peak memory of ``extract`` on a fresh store (offline extractor)."""
    export = work / "conversations.json"
    made = chatgpt_export(export, messages)
    size = export.stat().st_size
    store = work / "import-store"
    scenes("init", str(store))
    seconds, done = scenes("--dir", str(store), "extract", str(export), "--json")
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    report = json.loads(done.stdout)
    peak = child_peak_mb()
    seconds_again, again = scenes("--dir", str(store), "extract", str(export), "--json")
    return {"messages": made, "file_mb": round(size / 1e6, 1), "seconds": round(seconds, 1),
            "messages_per_s": round(made / seconds), "peak_rss_mb": round(peak),
            "memories": report["added"], "commits": report["commits"],
            "again_seconds": round(seconds_again, 1),
            "again_added": json.loads(again.stdout)["added"]}


READ = """
import json, resource, sys, time
from scene_engine.core.privacy import redactor
from scene_engine.extraction import sources
start = time.perf_counter()
messages = conversations = 0
for item in sources.read_input(sources.open_input(sys.argv[1]), None, redactor()):
    conversations += 1
    messages += len(getattr(item, "messages", ()))
print(json.dumps({"conversations": conversations, "messages_read": messages,
                  "seconds": round(time.perf_counter() - start, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def bench_read(export: Path) -> dict:
    """Reading alone (the stream reader, the ChatGPT reader, the privacy filter; no
    extraction, no journal): its speed and its peak memory against the file's size."""
    done = subprocess.run([sys.executable, "-c", READ, str(export)], capture_output=True,
                          text=True, cwd=ROOT, check=True)
    out = json.loads(done.stdout)
    out["messages_per_s"] = round(out["messages_read"] / out["seconds"])
    out["file_mb"] = round(export.stat().st_size / 1e6, 1)
    return out


def store_of(memories: int, work: Path) -> Path:
    """A store holding ``memories`` memories (added, not folded: a journal that size). Added
    without the sentence encoder's vectors: the SessionStart hook reads words only, so the
    vectors would cost minutes here and change nothing measured."""
    rng = random.Random(memories)
    store = work / f"store-{memories}"
    scenes("init", str(store))
    records = [{"id": f"m{n}", "content": f"{sentence(rng, 10)} {sentence(rng, 8)}",
                "created_at": 1_700_000_000 + n * 600} for n in range(memories)]
    for start in range(0, memories, 5000):
        data = "\n".join(json.dumps(r) for r in records[start:start + 5000])
        _, done = scenes("--dir", str(store), "add", "-", stdin=data,
                         env={"SCENE_ENGINE_SEMANTIC": "off"})
        if done.returncode != 0:
            raise SystemExit(done.stderr)
    (store / "persona.md").write_text("Ana lives in Lisbon and works on the orca project.\n")
    return store


def percentiles(samples: list[float], bare: list[float] | None = None) -> dict:
    """p50 and p95 of ``samples``; with ``bare`` (a ``python -c pass`` timed after each
    sample, in turn with it) its median and the median of the pairwise ratios."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    out = {"p50_ms": round(statistics.median(ordered) * 1000),
           "p95_ms": round(p95 * 1000), "runs": len(samples)}
    if bare:
        out["python_c_pass_ms"] = round(statistics.median(bare) * 1000)
        out["ratio"] = round(statistics.median(a / b for a, b in zip(samples, bare,
                                                                     strict=True)), 1)
    return out


def bare_python() -> float:
    """Seconds of ``python -c pass``: the yardstick timed in turn with each hook."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def bench_session_start(store: Path, runs: int) -> dict:
    """SessionStart latency: the first start (the store read), then the starts after it
    (the kept answer, the store unchanged)."""
    project = store.parent / "orca"
    project.mkdir(exist_ok=True)
    said = json.dumps({"session_id": "bench", "cwd": str(project), "source": "startup",
                       "hook_event_name": "SessionStart", "transcript_path": None})
    env = {"SCENE_ENGINE_DIR": str(store)}
    cold, cold_bare = [], []
    for _ in range(max(3, runs // 5)):        # the store read: the kept answer removed first
        for kept in (store / ".scene-engine" / "inbox" / "hooks" / "context").glob("*.json"):
            kept.unlink()
        seconds, done = scenes("hook", "session-start", stdin=said, env=env)
        assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"], done.stderr
        cold.append(seconds)
        cold_bare.append(bare_python())
    warm, warm_bare = [], []
    for _ in range(runs):
        warm.append(scenes("hook", "session-start", stdin=said, env=env)[0])
        warm_bare.append(bare_python())
    return {"store_read": percentiles(cold, cold_bare), "kept": percentiles(warm, warm_bare)}


def bench_stop(store: Path, runs: int) -> dict:
    """Stop hook latency: a session that grows by one exchange (a prompt, an answer with a
    tool call, its result) before each Stop; the fold it starts (words only, the turns
    extracted, nothing folded) finishes before the next, so no run shares the machine
    with it."""
    transcript = store.parent / "session.jsonl"
    transcript.write_text("")
    env = {"SCENE_ENGINE_DIR": str(store), "SCENE_ENGINE_HOOK_FOLD": "host",
           "SCENE_ENGINE_SEMANTIC": "off"}     # the fold it starts embeds nothing
    pid_file = store / ".scene-engine" / "inbox" / "hooks" / "fold.pid"
    times, bare = [], []
    for n in range(runs):
        with transcript.open("a") as out:
            for kind, content in (("user", f"Please fix bug {n} in the parser."),
                                  ("assistant", [{"type": "text", "text": f"Fixed {n}."},
                                                 {"type": "tool_use", "id": f"t{n}",
                                                  "name": "Edit", "input": {}}]),
                                  ("user", [{"type": "tool_result", "tool_use_id": f"t{n}",
                                             "content": "ok"}])):
                out.write(json.dumps({"type": kind, "uuid": f"{kind}-{n}-{len(str(content))}",
                                      "sessionId": "bench", "cwd": str(store.parent),
                                      "timestamp": "2026-03-06T14:15:22Z",
                                      "message": {"role": kind, "content": content}}) + "\n")
        said = json.dumps({"session_id": "bench", "cwd": str(store.parent),
                           "transcript_path": str(transcript), "hook_event_name": "Stop"})
        times.append(scenes("hook", "stop", stdin=said, env=env)[0])
        deadline = time.monotonic() + 300     # its background fold done before the next
        while time.monotonic() < deadline:
            try:
                os.kill(int(pid_file.read_text().strip()), 0)
            except (OSError, ValueError):
                break
            time.sleep(0.05)
        bare.append(bare_python())
    return percentiles(times, bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--stores", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", choices=("import", "read", "hooks"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        out: dict = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count()}
        if args.only in (None, "read"):
            export = work / "conversations.json"
            out["read_messages"] = chatgpt_export(export, args.messages)
            out["read"] = bench_read(export)
            print(json.dumps(out["read"]), flush=True)
        if args.only in (None, "import"):
            out["import"] = bench_import(args.messages, work)
            print(json.dumps(out["import"]), flush=True)
        if args.only in (None, "hooks"):
            for size in args.stores:
                store = store_of(size, work)
                out[f"session_start_{size}"] = bench_session_start(store, args.runs)
                print(size, json.dumps(out[f"session_start_{size}"]), flush=True)
            out["stop"] = bench_stop(store, args.runs)
            print("stop", json.dumps(out["stop"]), flush=True)
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
