"""How long `scenes run` takes to fail when the model cannot be used, as a new user meets it.

    python bench/bench_setup_failures.py [--repeat 5]

Store: `scenes init` plus one memory; no API key in the environment; nothing listening at the
addresses. Wall time of the whole command (a new process, Python start-up included), median of
``--repeat`` runs, with `scenes status` on the same store as the start-up baseline in the same
run. Each case must exit 1 with one `error:` line and leave the memory pending; target: under
3 s (issue 14 measured 20-41 s before the set-up check). Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENTRY = "from scene_engine.cli.entry import main; main()"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
        "GROQ_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY")
TARGET = 3.0


def free_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def timed(store: Path, args: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, "--dir", str(store), *args],
                          capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - started, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from scene_engine.services.add import add_memories
    from scene_engine.store.store import init_store

    store = init_store(Path(tempfile.mkdtemp(prefix="setup-failures-")) / "store")
    add_memories(store, b'{"content": "Prefers window seats."}')
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    cases = [("start-up baseline", ["status"], False),
             ("missing API key", ["run", "--model", "gpt-4o-mini"], True),
             ("nothing listening", ["run", "--model", "openai/qwen", "--api-base",
                                    f"http://127.0.0.1:{free_port()}/v1"], True),
             ("local Ollama address, nothing there", ["run", "--model", "ollama/llama3.1"],
              True)]
    rows, missed = [], False
    for name, command, must_fail in cases:
        times, last = [], None
        for _ in range(args.repeat):
            seconds, last = timed(store.root, command, env)
            times.append(seconds)
        median = statistics.median(times)
        lines = [ln for ln in last.stderr.splitlines() if ln.startswith("error:")]
        ok = not must_fail or (last.returncode == 1 and len(lines) == 1
                               and store.load_state().pending == 1 and median < TARGET)
        missed |= not ok
        rows.append(f"| {name} | `{' '.join(command)}` | {median:.2f} s | "
                    f"{'' if not must_fail else ('yes' if ok else 'NO')} | "
                    f"{lines[0][:90] if lines else ''} |")
    print(f"`python bench/bench_setup_failures.py --repeat {args.repeat}` — "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n")
    print(f"| case | command | median wall time | < {TARGET:g} s, one line, nothing written | "
          "error line |\n| --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
