"""Fresh commands (issue 39 part 4) and the agent's hooks (issue 38): what each call costs
as a new process, as an agent makes it, against a bare ``python -c pass`` in the same run.

    python bench/bench_startup.py [--quick] [--runs N] [--only commands|list|hooks]

1. ``scenes search`` (English and Chinese words), ``recall`` (by words only,
   ``SCENE_ENGINE_SEMANTIC=off``, and by meaning, the default: the sentence encoder is
   loaded for the question), ``status`` on a store of ``--memories`` (3,000) everyday
   memories (bench/topics' sets, as bench_volume makes them), ``--batches`` of them folded
   into scenes, their vectors made. Targets: a fresh search at most 4x ``python -c pass``, a
   recall by words at most 6x; recall by meaning is reported against the same baseline.
2. ``scenes list`` at ``--scenes`` (10,000) committed scenes of bench_index's generated
   text, once its rows are cached (the first list, which reads every scene, is shown apart):
   into a pipe, and drawn for a terminal (``TTY_COMPATIBLE=1``, 120 x 50). Target: under 0.5 s.
3. ``scenes hook session-start`` on a store of ``--hook-memories`` (10,000) added memories
   (as bench_import makes it): the kept answer (the store unchanged since the last start)
   and the store read (the kept answer removed before each run); ``scenes hook stop`` with a
   session grown by one exchange before each run, each run's background fold (words only,
   ``SCENE_ENGINE_HOOK_FOLD=host``) finished before the next. Target: the kept answer under
   300 ms; the others are reported.

Every figure pairs the command (A) with ``python -c pass`` (B), run in turn A B A B ... after
one run of each that is not counted: the wall time of each (median), the median of the
pairwise ratios A/B, and the CPU time (user + system of the process and the children it
waited for) of each (median) with its ratio. The load average before and after is printed:
these machines are shared, and the ratios are what to compare across runs. The package's
bytecode is compiled first, as an installed package's is. Prints a Markdown block; exits 1
when a target is missed.
"""

from __future__ import annotations

import argparse
import compileall
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
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

SCENES = str(Path(sys.executable).with_name("scenes"))
BARE = [sys.executable, "-c", "pass"]
ENGLISH = ["coffee", "running knee", "sister", "guitar lessons", "flat renovation"]
CHINESE = ["咖啡", "跑步", "妈妈", "体检", "搬家"]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(command: list[str], env: dict | None = None, stdin: str | None = None
             ) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds, the finished process) of ``command``, a new process."""
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)
    return time.perf_counter() - start, _cpu() - cpu, done


def paired(commands: list[list[str]], runs: int, env: dict | None = None,
           stdin: str | None = None, before=None, after=None) -> dict:
    """``commands`` (taken in turn) against ``python -c pass``, ``runs`` pairs after one
    uncounted pair. ``before``/``after``: called around each run of a command (not timed)."""
    walls, cpus, bare_walls, bare_cpus, ratios, cpu_ratios = [], [], [], [], [], []
    for n in range(runs + 1):
        if before:
            before()
        wall, cpu, done = run_once(commands[n % len(commands)], env, stdin)
        if done.returncode != 0:
            raise SystemExit(f"{commands[n % len(commands)]} failed: {done.stderr}")
        if after:
            after()
        bare_wall, bare_cpu, _ = run_once(BARE)
        if n == 0:
            continue                  # the warm-up pair
        walls.append(wall)
        cpus.append(cpu)
        bare_walls.append(bare_wall)
        bare_cpus.append(bare_cpu)
        ratios.append(wall / bare_wall)
        cpu_ratios.append(cpu / bare_cpu if bare_cpu else float("nan"))
    return {"wall": statistics.median(walls), "bare": statistics.median(bare_walls),
            "ratio": statistics.median(ratios), "cpu": statistics.median(cpus),
            "bare_cpu": statistics.median(bare_cpus),
            "cpu_ratio": statistics.median(cpu_ratios), "runs": runs,
            "p95": sorted(walls)[min(len(walls) - 1, round(0.95 * (len(walls) - 1)))]}


# ---------------------------------------------------------------- the stores

def memory_store(work: Path, memories: int, batches: int) -> Path:
    """``memories`` everyday memories added (their vectors made), ``batches`` folded."""
    from bench_volume import everyday

    from scene_engine.offline.backend import OfflineBackend
    from scene_engine.services.add import add_memories
    from scene_engine.services.run import run_pending
    from scene_engine.store.store import init_store

    store = init_store(work / "memories")
    add_memories(store, json.dumps(everyday(memories), ensure_ascii=False).encode())
    run_pending(store, OfflineBackend(), max_batches=batches)
    return store.root


def scene_store(work: Path, count: int) -> Path:
    """``count`` generated scenes (bench_index's), committed as a person's edit."""
    from bench_index import Corpus, generate

    from scene_engine.store.store import init_store

    store = init_store(work / "scenes")
    generate(store.scenes_dir, count, Corpus(random.Random(7)))
    person = {"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.org",
              "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@example.org"}
    for args in (["add", "-A", "scenes"], ["commit", "-q", "-m", "hand edit: scenes"]):
        subprocess.run(["git", *args], cwd=store.root, check=True,
                       env={**os.environ, **person})
    return store.root


def hook_store(work: Path, memories: int) -> Path:
    """``memories`` added memories and a persona (bench_import's ``store_of``)."""
    from bench_import import store_of

    return store_of(memories, work)


# ---------------------------------------------------------------- the measurements

def commands(root: Path, runs: int) -> dict:
    at = ["--dir", str(root)]
    words = {"SCENE_ENGINE_SEMANTIC": "off"}
    return {
        "search, English words": paired([[SCENES, *at, "search", q] for q in ENGLISH], runs),
        "search, Chinese words": paired([[SCENES, *at, "search", q] for q in CHINESE], runs),
        "recall, words only": paired([[SCENES, *at, "recall", q] for q in ENGLISH + CHINESE],
                                     runs, env=words),
        "recall, by meaning (default)": paired(
            [[SCENES, *at, "recall", q] for q in ENGLISH + CHINESE], runs),
        "status": paired([[SCENES, *at, "status"]], runs),
    }


def listing(root: Path, runs: int) -> tuple[float, dict]:
    """(seconds of the first list, which reads every scene; the lists after it)."""
    first, _, done = run_once([SCENES, "--dir", str(root), "list"])
    assert done.returncode == 0, done.stderr
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "120", "LINES": "50"}
    return first, {
        "list, into a pipe": paired([[SCENES, "--dir", str(root), "list"]], runs),
        "list, drawn for a terminal": paired([[SCENES, "--dir", str(root), "list"]], runs,
                                             env=terminal),
    }


def hooks(root: Path, runs: int) -> dict:
    project = root.parent / "orca"
    project.mkdir(exist_ok=True)
    context = root / ".scene-engine" / "inbox" / "hooks" / "context"
    env = {"SCENE_ENGINE_DIR": str(root)}
    start = json.dumps({"session_id": "bench", "cwd": str(project), "source": "startup",
                        "hook_event_name": "SessionStart", "transcript_path": None})
    hook = [SCENES, "hook", "session-start"]

    def forget() -> None:
        for kept in context.glob("*.json"):
            kept.unlink()

    out = {"SessionStart, the store read": paired([hook], runs, env=env, stdin=start,
                                                   before=forget)}
    run_once(hook, env, start)      # keeps the answer
    out["SessionStart, the kept answer"] = paired([hook], runs, env=env, stdin=start)
    transcript = root.parent / "session.jsonl"
    transcript.write_text("")
    said = json.dumps({"session_id": "bench", "cwd": str(project),
                       "transcript_path": str(transcript), "hook_event_name": "Stop"})
    count = [0]

    def grow() -> None:
        count[0] += 1
        n = count[0]
        with transcript.open("a") as sink:
            for kind, content in (("user", f"Please fix bug {n} in the parser."),
                                  ("assistant", [{"type": "text", "text": f"Fixed {n}."}])):
                sink.write(json.dumps({"type": kind, "uuid": f"{kind}-{n}",
                                       "sessionId": "bench", "cwd": str(project),
                                       "timestamp": "2026-03-06T14:15:22Z",
                                       "message": {"role": kind, "content": content}}) + "\n")

    pid_file = root / ".scene-engine" / "inbox" / "hooks" / "fold.pid"

    def settle() -> None:           # the background fold it started, done before the next
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                os.kill(int(pid_file.read_text().strip()), 0)
            except (OSError, ValueError):
                return
            time.sleep(0.05)

    out["Stop (one exchange taken)"] = paired(
        [[SCENES, "hook", "stop"]], runs, stdin=said, before=grow, after=settle,
        env={**env, "SCENE_ENGINE_HOOK_FOLD": "host", "SCENE_ENGINE_SEMANTIC": "off"})
    return out


TARGETS = {"search, English words": ("ratio", 4.0), "search, Chinese words": ("ratio", 4.0),
           "recall, words only": ("ratio", 6.0), "list, into a pipe": ("wall", 0.5),
           "list, drawn for a terminal": ("wall", 0.5),
           "SessionStart, the kept answer": ("wall", 0.3)}


def table(rows: dict) -> tuple[list[str], bool]:
    lines = ["| command | wall, median (p95) | `python -c pass` | wall ratio | CPU | CPU "
             "ratio | target | met |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    missed = False
    for name, f in rows.items():
        kind, bound = TARGETS.get(name, (None, None))
        if kind is None:
            target, met = "-", "-"
        else:
            value = f["ratio"] if kind == "ratio" else f["wall"]
            ok = value <= bound
            missed |= not ok
            target = f"<= {bound:g}x" if kind == "ratio" else f"< {bound * 1000:.0f} ms"
            met = "yes" if ok else "NO"
        lines.append(f"| {name} | {f['wall'] * 1000:.0f} ({f['p95'] * 1000:.0f}) ms | "
                     f"{f['bare'] * 1000:.0f} ms | {f['ratio']:.1f}x | "
                     f"{f['cpu'] * 1000:.0f} ms | {f['cpu_ratio']:.1f}x | {target} | {met} |")
    return lines, missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--memories", type=int, default=None)
    parser.add_argument("--batches", type=int, default=None)
    parser.add_argument("--scenes", type=int, default=None)
    parser.add_argument("--hook-memories", type=int, default=None)
    parser.add_argument("--only", choices=("commands", "list", "hooks"))
    args = parser.parse_args()
    runs = args.runs or (5 if args.quick else 15)
    memories = args.memories or (1000 if args.quick else 3000)
    batches = args.batches if args.batches is not None else (10 if args.quick else 40)
    count = args.scenes or (2000 if args.quick else 10_000)
    hooked = args.hook_memories or (2000 if args.quick else 10_000)
    compileall.compile_dir(str(ROOT / "scene_engine"), quiet=1)
    rows: dict = {}
    notes = []
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        loads = [os.getloadavg()[0]]
        if args.only in (None, "commands"):
            rows |= commands(memory_store(work, memories, batches), runs)
            notes.append(f"commands: a store of {memories:,} memories, {batches} batches "
                         "folded")
        if args.only in (None, "list"):
            first, listed = listing(scene_store(work, count), runs)
            rows |= {f"{name} ({count:,} scenes)": f for name, f in listed.items()}
            for name in listed:
                TARGETS[f"{name} ({count:,} scenes)"] = TARGETS[name]
            notes.append(f"the first list of {count:,} scenes (every scene read, its row "
                         f"cached): {first:.1f} s")
        if args.only in (None, "hooks"):
            found = hooks(hook_store(work, hooked), runs)
            rows |= {f"{name} ({hooked:,} memories)": f for name, f in found.items()}
            for name in found:
                if name in TARGETS:
                    TARGETS[f"{name} ({hooked:,} memories)"] = TARGETS[name]
        loads.append(os.getloadavg()[0])
    lines, missed = table(rows)
    print(f"`python bench/bench_startup.py{' --quick' if args.quick else ''}` — "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load average {loads[0]:.1f} before, {loads[-1]:.1f} after; {runs} pairs a row")
    print()
    for note in notes:
        print(f"- {note}")
    print()
    print("\n".join(lines))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
