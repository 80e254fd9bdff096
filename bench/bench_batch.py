"""Batch engine benchmarks: engine overhead per batch, prompt size, model round trips.

    python bench/bench_batch.py [--repeat N] [--profile]

1. Overhead: one offline batch (20 memories, 14 scenes present, cap 15) timed end to end
   (``batch.run_batch``), against a bare ``git add`` + ``git commit`` of the same changed files in
   a copy of the store made just before the batch. Target: at most 2x. Medians over ``--repeat``.
2. Prompt size: tokens (``llm.count_tokens("gpt-4o-mini", ...)``) of ``batch.build_job(...)``'s
   messages for LoCoMo batches (every observation one memory, as in /work/shared/data/README.md),
   per batch and per memory, on an empty store and once the store holds scenes.
3. Round trips: model calls per batch for a well-behaved scripted model (tests/fakellm.py) that
   writes all its changes in one reply and then answers.

Exits 1 when the overhead target is missed. Runs offline; no network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from scene_engine.batch import transaction as batch_mod  # noqa: E402
from scene_engine.offline.backend import OfflineBackend  # noqa: E402
from scene_engine.services.add import add_memories  # noqa: E402
from scene_engine.store.store import init_store, open_store  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
TOPICS = ["hiking trails mountains", "cooking recipes kitchen", "piano lessons music",
          "knee injury physiotherapy", "software release deadline", "family visits grandmother",
          "garden tomatoes roses", "chess club tournament", "car repair garage", "painting "
          "watercolour landscapes", "language study Japanese", "budget savings mortgage",
          "dog training puppy", "volunteering food bank"]


def quiet_git_env() -> None:
    """No user config: the benchmark measures the engine, not someone's git hooks."""
    home = tempfile.mkdtemp(prefix="bench-home-")
    os.environ.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")


def scene_text(topic: str, n: int) -> str:
    lines = "\n".join(f"- 2024-01-{d + 1:02d}: Notes on {topic}, entry {d}." for d in range(n))
    return (f"---\ncreated: 2024-01-01T00:00:00+00:00\nupdated: 2024-01-02T00:00:00+00:00\n"
            f"summary: About {topic}.\nheat: 3\n---\n## Timeline\n{lines}\n")


def prepared_store(workdir: Path):
    """A store with 14 scenes (committed, indexed) and 20 pending memories on 3 of the topics."""
    store = init_store(workdir / "store")
    for topic in TOPICS:
        (store.scenes_dir / f"{topic.split()[0]}.md").write_text(scene_text(topic, 12), "utf-8")
    memories = [{"id": f"b{i}", "content": f"More about {TOPICS[i % 3]}: detail number {i}.",
                 "created_at": 1_710_000_000 + i * 3600} for i in range(20)]
    add_memories(store, json.dumps(memories).encode())
    repo = batch_mod.history.open_repo(store.root)
    batch_mod.history.commit_hand_edits(repo)
    batch_mod.refresh_index(store)
    return open_store(store.root)


def git_commit_time(copy: Path, changed: dict[str, bytes | None]) -> float:
    """Seconds for ``git add`` + ``git commit`` of ``changed`` (path -> bytes, None = delete)."""
    for rel, data in changed.items():
        if data is None:
            (copy / rel).unlink()
        else:
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            (copy / rel).write_bytes(data)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    start = time.perf_counter()
    subprocess.run(["git", "add", "-A", "--", *changed], cwd=copy, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "bare"], cwd=copy, check=True,
                   env=env)
    return time.perf_counter() - start


def overhead(repeat: int, profile: bool) -> dict:
    engine, bare, changed_counts = [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            store = prepared_store(Path(tmp))
            copy = Path(tmp) / "copy"
            shutil.copytree(store.root, copy, symlinks=True)
            start = time.perf_counter()
            if profile and not engine:
                import cProfile
                import pstats

                prof = cProfile.Profile()
                result = prof.runcall(batch_mod.run_batch, store, OfflineBackend())
                pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
            else:
                result = batch_mod.run_batch(store, OfflineBackend())
            engine.append(time.perf_counter() - start)
            assert result is not None and len(result.memory_ids) > 0
            names = subprocess.run(["git", "diff", "--name-only", "HEAD~1", "HEAD"],
                                   cwd=store.root, check=True, capture_output=True,
                                   text=True).stdout.split()
            changed = {n: (store.root / n).read_bytes() if (store.root / n).exists() else None
                       for n in names}
            changed_counts.append(len(changed))
            bare.append(git_commit_time(copy, changed))
    e, b = statistics.median(engine), statistics.median(bare)
    return {"engine_s": e, "bare_git_s": b, "ratio": e / b, "files": changed_counts[0]}


def locomo_memories() -> list[dict]:
    sys.path.insert(0, str(ROOT / "bench"))
    from locomo import sample_memories

    samples = json.loads(LOCOMO.read_text("utf-8"))
    return sample_memories(samples[0])


def prompt_size(batches: int = 6) -> dict:
    """Tokens of the batch prompt for LoCoMo sample 0, batch by batch (offline backend folds)."""
    from scene_engine.llm.loop import count_tokens

    with tempfile.TemporaryDirectory() as tmp:
        store = init_store(Path(tmp) / "s")
        add_memories(store, json.dumps(locomo_memories()).encode())
        rows = []
        for _ in range(batches):
            state = store.load_state()
            taken = batch_mod.select_batch(store, state, store.config.batch_size)
            if not taken:
                break
            job = batch_mod.build_job(store, state.batch + 1, taken)
            tokens = count_tokens("gpt-4o-mini", job.messages, job.box.tool_specs())
            rows.append({"batch": state.batch + 1, "memories": len(taken),
                         "scenes": len(job.scene_texts), "shown": len(job.context.shown),
                         "tokens": tokens})
            batch_mod.run_batch(store, OfflineBackend())
    return {"rows": rows,
            "per_memory": [r["tokens"] / r["memories"] for r in rows]}


def round_trips() -> dict:
    """Model calls for one batch with a scripted model that writes once, then answers."""
    from fakellm import FakeLLM, call, reply

    from scene_engine.batch.model_backend import LLMBackend

    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as server:
        store = prepared_store(Path(tmp))
        state = store.load_state()
        taken = batch_mod.select_batch(store, state, 20)
        texts = batch_mod.read_scene_texts(store)
        related = batch_mod.related_scenes(texts, taken, batch_mod.RELATED_SCENES)
        calls = []
        for name, text in related.items():
            mine = [m.content for m in taken if name.removesuffix(".md") in m.content.lower()]
            if mine:
                calls.append(call("write_to_file", {"path": name, "content": text.rstrip()
                                  + "\n" + "\n".join(f"- 2024-03-10: {c}" for c in mine) + "\n"}))
        server.script([reply(tool_calls=calls), reply(content="Folded the batch.")])
        backend = LLMBackend(model="openai/test-model", api_base=server.api_base,
                             api_key="sk-test")
        result = batch_mod.run_batch(store, backend)
        return {"model_calls": len(server.requests), "writes": len(calls),
                "committed": result is not None, "shown_scenes": len(related)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    quiet_git_env()
    over = overhead(args.repeat, args.profile)
    print(f"overhead: engine batch {over['engine_s'] * 1000:.0f} ms, bare git add+commit of the "
          f"same {over['files']} files {over['bare_git_s'] * 1000:.0f} ms, ratio "
          f"{over['ratio']:.2f}x (target <= 2x) [median of {args.repeat}]")
    size = prompt_size()
    for row in size["rows"]:
        print(f"prompt: batch {row['batch']}: {row['memories']} memories, {row['scenes']} "
              f"scenes ({row['shown']} shown in full): {row['tokens']} tokens "
              f"({row['tokens'] / row['memories']:.0f}/memory)")
    trips = round_trips()
    print(f"round trips: {trips['model_calls']} model calls per batch "
          f"({trips['writes']} writes in one reply, {trips['shown_scenes']} scenes shown, "
          f"committed={trips['committed']})")
    return 0 if over["ratio"] <= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
