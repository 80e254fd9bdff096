"""The model path against a real local model: what each batch did, and whether every memory
is accounted for.

    python bench/local_model.py [--gguf FILE] [--build] [--memories 40] [--batch-size 10]
    python bench/local_model.py --api-base http://127.0.0.1:8080/v1 --model openai/local

Two ways to get a model server:

1. ``--api-base`` (and ``--model``): an OpenAI-compatible server already running (Ollama,
   vLLM, ``llama-server --jinja``, LM Studio ...). Nothing is installed.
2. Otherwise this installs llama-cpp-python's server into its own environment
   (``~/.cache/scene-engine/local-model-bench/``, never the project's) and serves ``--gguf``
   (a small instruct model in GGUF form, e.g. Qwen2.5-0.5B-Instruct Q4_K_M) on 127.0.0.1,
   with the tool-calling chat format (``--chat_format chatml-function-calling``). A
   binary wheel is used when the registry has one; compiling it (``--build``) took 44 minutes
   on these machines, so it is never done unasked.

It skips, with a message and exit 0, when it has no server and cannot get one (no wheel and no
``--build``, or no ``--gguf``): CI does not run it. With a server, it ingests ``--memories``
LoCoMo facts (sample 0) into a new store with the llm backend, batch by batch, and prints a
Markdown table per batch: committed / failed and why, requests, repair rounds, tool calls
written as text, tokens, seconds (from the batch's transcript), and for a failed batch the
error line itself (``error: ...``, not whatever came last); then whether every memory is
accounted for (``doctor``; the journal's memories all processed or still pending, none lost).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from locomo import DEFAULT_DATA, sample_memories  # noqa: E402

CACHE = Path.home() / ".cache" / "scene-engine" / "local-model-bench"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-base", default="", help="use this running server")
    parser.add_argument("--model", default="openai/local", help="litellm model name")
    parser.add_argument("--gguf", type=Path, default=None, help="GGUF model file to serve")
    parser.add_argument("--build", action="store_true", help="compile llama-cpp-python")
    parser.add_argument("--memories", type=int, default=40)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="LoCoMo JSON; its sample 0's facts are the memories")
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--call-timeout", type=float, default=300.0)
    parser.add_argument("--batch-timeout", type=float, default=1800.0)
    args = parser.parse_args()
    server = None
    api_base = args.api_base
    if not api_base:
        skip = why_not_local(args)
        if skip:
            print(f"local model benchmark skipped: {skip}")
            return 0
        server, api_base = serve_gguf(args.gguf)
    try:
        print(run(api_base, args))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    return 0


def why_not_local(args) -> str | None:
    """Why no local server can be had here (None: it can), after trying to install one."""
    if args.gguf is None or not args.gguf.is_file():
        return ("no GGUF model file (--gguf FILE); none is on the package registries these "
                "machines reach. Or pass --api-base of a running OpenAI-compatible server.")
    python = CACHE / "venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(CACHE / "venv")], check=True)
    wanted = ["llama-cpp-python[server]>=0.3,<0.4"]
    binary = [] if args.build else ["--only-binary=:all:"]
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", *binary, *wanted],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        return (f"llama-cpp-python could not be installed ({last}); --build compiles it "
                "(about 45 minutes here)")
    return None


# llama-cpp-python's server puts tools into the prompt and parses tool calls back only with
# a tool-calling chat format; with the model's own template the tools never reach the model.
CHAT_FORMAT = "chatml-function-calling"


def server_command(python: Path, gguf: Path, port: int) -> list[str]:
    """The command that serves ``gguf`` with llama-cpp-python on 127.0.0.1:``port``."""
    return [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--host",
            "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--chat_format", CHAT_FORMAT]


def serve_gguf(gguf: Path, python: Path | None = None, wait: float = 600.0
               ) -> tuple[subprocess.Popen, str]:
    """Start llama-cpp-python's OpenAI-compatible server for ``gguf`` on a free local port
    (``python``: the interpreter that has it, default the bench's own environment). A server
    that exits or does not listen within ``wait`` seconds ends the bench with its own error
    line (its output is kept in ``server.log`` beside the store)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = Path(tempfile.mkdtemp(prefix="local-model-server-")) / "server.log"
    with log.open("w", encoding="utf-8") as out:
        server = subprocess.Popen(server_command(python or CACHE / "venv" / "bin" / "python",
                                                 gguf, port), stdout=out, stderr=out)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and server.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server, f"http://127.0.0.1:{port}/v1"
        time.sleep(0.5)
    if server.poll() is None:
        server.kill()
        raise SystemExit(f"the local model server did not listen within {wait:g} s ({log})")
    said = log.read_text("utf-8", "replace")
    raise SystemExit(f"the local model server stopped (exit {server.returncode}): "
                     f"{error_line(said)} ({log})")


def error_line(said: str) -> str:
    """The line of a program's output that says what went wrong: the command line's
    ``error: ...`` line (with the ``- problem`` lines it lists, when it ends with a colon),
    else the last line naming an error or exception (a traceback's last line), else the last
    line; ``|`` escaped for a Markdown table."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
    chosen = None
    if at is not None:
        chosen = lines[at].removeprefix("error: ")
        listed = []
        for line in lines[at + 1:] if chosen.endswith(":") else []:
            if not line.startswith("- "):
                break
            listed.append(line.removeprefix("- "))
        chosen = f"{chosen} {'; '.join(listed)}" if listed else chosen
    if chosen is None:
        chosen = next((line for line in reversed(lines)
                       if "error" in line.lower() or "exception" in line.lower()),
                      lines[-1] if lines else "?")
    return chosen.replace("|", "\\|")


def run(api_base: str, args) -> str:
    """Ingest the memories batch by batch against ``api_base``; the Markdown report."""
    from scene_engine.batch.transcript import read_events, totals, transcript_path
    from scene_engine.services.add import add_memories
    from scene_engine.services.doctor import check_store
    from scene_engine.store.memories import Journal
    from scene_engine.store.store import init_store

    # Benchmarks may read ../shared/data; a test passes a little file of its own (``data``).
    data = json.loads(Path(getattr(args, "data", None) or DEFAULT_DATA).read_text("utf-8"))
    memories = sample_memories(data[0])[:args.memories]
    store = init_store(Path(tempfile.mkdtemp(prefix="local-model-")) / "store")
    add_memories(store, "\n".join(json.dumps(m) for m in memories).encode())
    rows, started = [], time.perf_counter()
    for _ in range(-(-len(memories) // args.batch_size) + 2):   # a failed batch may retry
        before = store.load_state()
        if not before.pending or [r[1] for r in rows[-2:]] == ["failed", "failed"]:
            break                      # done, or the model fails again and again
        number = before.batch + 1
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", "from scene_engine.cli.entry import main; main()", "--dir",
             str(store.root), "run", "--backend", "llm", "--model", args.model, "--api-base",
             api_base, "--batch-size", str(args.batch_size), "--max-batches", "1",
             "--call-timeout", str(args.call_timeout), "--batch-timeout",
             str(args.batch_timeout)], capture_output=True, text=True, check=False,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        seconds = time.perf_counter() - t0
        path = transcript_path(store.root / ".scene-engine", number)
        events = read_events(path) if path.exists() else []
        attempt = events[max((i for i, e in enumerate(events) if e["kind"] == "start"),
                             default=0):]
        sums = totals(attempt) if attempt else {}
        why = "" if done.returncode == 0 else error_line(done.stderr)
        rows.append((number, "committed" if done.returncode == 0 else "failed", why, sums,
                     seconds))
    state = store.load_state()
    journal = len(Journal(store.memories_dir).all())
    problems = check_store(store)
    out = [f"`python bench/local_model.py --model {args.model}` against {api_base} — "
           f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {len(memories)} memories, batch size "
           f"{args.batch_size}, {time.perf_counter() - started:.0f} s in all\n",
           "| batch | outcome | requests | repairs | text calls | refused | tokens (prompt + "
           "completion) | seconds | why |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for number, outcome, why, sums, seconds in rows:
        out.append(f"| {number} | {outcome} | {sums.get('requests', 0)} | "
                   f"{sums.get('repairs', 0)} | {sums.get('text_calls', 0)} | "
                   f"{sums.get('refused', 0)} | {sums.get('prompt_tokens', 0)} + "
                   f"{sums.get('completion_tokens', 0)} | {seconds:.1f} | {why} |")
    accounted = journal == len(memories) and state.next_seq == len(memories)
    out.append(f"\nEvery memory accounted for: {'yes' if accounted and not problems else 'NO'} "
               f"({journal} in the journal, {state.pending} still pending, doctor: "
               f"{'ok' if not problems else '; '.join(problems)})")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
