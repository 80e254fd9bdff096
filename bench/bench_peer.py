"""Side-by-side benchmark of our search index against basic-memory's (a Markdown-notes MCP
memory server with its own SQLite index).

Both tools index the same generated notes: N Markdown files of about 1,500 characters, half
English pseudo-words and half Chinese (``bench_index.Corpus``), each with a YAML header holding
both tools' keys (title/type/permalink for basic-memory, created/updated/summary/heat for us).
Each tool gets its own copy of the same bytes. Measured tool after tool in alternation, median
over ``--runs`` rounds:

- full index from nothing, wall time of one process: ours a Python process running
  ``SceneIndex.sync`` with no database; theirs ``basic-memory project add`` in a fresh config
  folder (it indexes the folder and waits until done);
- no-change re-sync, wall time of one process: ``SceneIndex.sync`` against
  ``basic-memory reindex --search --project``;
- search p50/p95 in process, 10 results, over fixed queries (English words, English word pairs,
  Chinese words): ``SceneIndex.search`` against ``SearchService.search`` (what basic-memory's MCP
  ``search_notes`` tool runs through its API);
- edit-to-searchable p50/p95: a note saved atomically with a new unique word, until a search finds
  it; ours under ``SceneWatcher`` (default debounce), theirs under its ``WatchService`` (what
  ``basic-memory mcp`` runs, default ``index_delay``);
- accuracy: the notes found for a few words and word pairs against ``grep -l``.

Targets: ours at least 10x faster on the full index and on the no-change re-sync; our search p95
below theirs; our edit-to-searchable p95 under 300 ms; our notes found equal grep's for Chinese
words and single English words.

basic-memory 0.24 needs Python >= 3.12: the benchmark looks for one (``--bm-python``, PATH, pyenv)
and makes basic-memory's own venv in ~/.cache/scene-engine-bench/basic-memory-venv (pip install of
the pinned version, once, about 2 minutes). If it cannot, it prints "skipped: ..." with our own
figures only and exits 0. basic-memory runs with a config folder and HOME of its own in the temp
folder, with update checks, promos and model downloads off.

Usage: ``python bench/bench_peer.py [--quick] [--notes N] [--runs N] [--edits N] [--dir DIR]``.
Default 500 notes, 3 runs, 30 edits: 7 to 8 minutes on 2 cores, mostly basic-memory's full
index (about 0.23 s a note). ``--quick``: 200 notes, 1 run, 12 edits. Progress goes to stderr,
the figures to stdout as a Markdown block; exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_index import Corpus, percentile  # noqa: E402

from scene_engine.index.scenes import SceneIndex  # noqa: E402
from scene_engine.index.watcher import SceneWatcher  # noqa: E402

BM_VERSION = "0.24.1"
BM_PROJECT = "bench"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scene-engine-bench"
BM_VENV = CACHE / "basic-memory-venv"
EDIT_TIMEOUT = 30.0   # seconds an edit may take to become searchable before the run fails
HELPER_TIMEOUT = 900  # seconds for one process of basic-memory searches or edits

OUR_SYNC = ("import sys; from pathlib import Path; from scene_engine.index import SceneIndex; "
            "SceneIndex(Path(sys.argv[1]), Path(sys.argv[2])).sync()")

# Runs in basic-memory's venv: ``search`` times queries, ``edits`` times edit-to-searchable under
# its watch service. Reads a JSON payload on stdin, prints a JSON result as its last line.
BM_HELPER = '''
import asyncio, json, os, sys, time
from pathlib import Path

from loguru import logger

logger.remove()
logger.add(sys.stderr, level="WARNING")

from basic_memory import db
from basic_memory.config import ConfigManager
from basic_memory.index.local_runtime import LocalWatchEventIndexRuntimeFactory
from basic_memory.index.watch_service import WatchService
from basic_memory.repository import ProjectRepository
from basic_memory.schemas.search import SearchQuery
from basic_memory.services.composition import build_default_project_search_bundle
from basic_memory.services.file_service import FileService


def finish(result, code=0):
    """Print the result and leave at once: some of basic-memory's background tasks ignore
    cancellation, so asyncio's teardown could wait for ever."""
    print(json.dumps(result), flush=True)
    os._exit(code)


async def files(service, query, limit):
    rows = await service.search(SearchQuery(text=query), limit=limit)
    return sorted({Path(row.file_path).name for row in rows})


async def main(command, name, payload):
    config = ConfigManager().config
    _, session_maker = await db.get_or_create_db(
        db_path=config.database_path, db_type=db.DatabaseType.FILESYSTEM, config=config)
    async with db.scoped_session(session_maker) as session:
        project = await ProjectRepository().get_by_name(session, name)
    service = build_default_project_search_bundle(
        project_id=project.id, session_maker=session_maker,
        file_service=FileService(Path(project.path), app_config=config),
        app_config=config).search_service
    await service.init_search_index()
    await files(service, "warmup", 10)
    if command == "search":
        out = []
        for query in payload["queries"]:
            started = time.perf_counter()
            found = await files(service, query, payload["limit"])
            out.append([(time.perf_counter() - started) * 1000, found])
        finish(out)
    watcher = WatchService(config, ProjectRepository(), session_maker, quiet=True,
                           event_index_runtime_factory=LocalWatchEventIndexRuntimeFactory())
    task = asyncio.create_task(watcher.run())
    await asyncio.sleep(payload["settle"])
    latencies = []
    for note, token in payload["edits"]:
        path = Path(project.path) / note
        tmp = path.with_name(f".{note}.tmp")
        tmp.write_text(path.read_text(encoding="utf-8") + f"\\n{token}\\n", encoding="utf-8")
        started = time.perf_counter()
        os.replace(tmp, path)
        while not await files(service, token, 1):
            if time.perf_counter() - started > payload["timeout"]:
                finish(f"{token} not searchable after {payload['timeout']} s", 1)
            await asyncio.sleep(0.002)
        latencies.append((time.perf_counter() - started) * 1000)
    finish([latencies, config.index_delay])


asyncio.run(main(sys.argv[1], sys.argv[2], json.load(sys.stdin)))
'''


def progress(message: str) -> None:
    print(f"[bench_peer] {message}", file=sys.stderr, flush=True)


# -- basic-memory's venv ---------------------------------------------------------------------

def python_version(python: str) -> tuple[int, int] | None:
    """(major, minor) of the interpreter ``python``, or None if it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    major, minor = out.split()
    return int(major), int(minor)


def find_python(explicit: str | None) -> str | None:
    """A Python >= 3.12 (basic-memory's floor): ``explicit``, then PATH, then pyenv's."""
    candidates = [explicit] if explicit else [
        sys.executable, *(shutil.which(f"python3.{m}") for m in (12, 13, 14)),
        *sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.1[2-9]*/bin/python3")))]
    for python in filter(None, candidates):
        version = python_version(python)
        if version and version >= (3, 12):
            return python
    return None


def installed_version(venv: Path) -> str | None:
    """basic-memory's version in ``venv``, or None."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    result = subprocess.run([python, "-c", "import importlib.metadata as m; "
                             "print(m.version('basic-memory'))"], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def ensure_bm_venv(venv: Path, explicit_python: str | None) -> tuple[Path | None, str]:
    """basic-memory's venv with the pinned version, made if needed: (venv, '') or (None, why)."""
    if installed_version(venv) == BM_VERSION:
        return venv, ""
    if venv.exists() and not (venv / "pyvenv.cfg").exists():
        return None, f"{venv} exists and is not a venv: not replacing it"
    python = find_python(explicit_python)
    if python is None:
        return None, f"basic-memory {BM_VERSION} needs Python >= 3.12 and none was found"
    progress(f"installing basic-memory=={BM_VERSION} into {venv} with {python} (a few minutes)")
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = [[python, "-m", "venv", str(venv)],
             [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
              f"basic-memory=={BM_VERSION}"]]
    for step in steps:
        try:
            result = subprocess.run(step, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as err:
            shutil.rmtree(venv, ignore_errors=True)
            return None, f"{shlex.join(step[:3])} failed: {err}"
        if result.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            lines = [ln for ln in result.stderr.splitlines() if "is ignored" not in ln]
            return None, f"{shlex.join(step[:3])} failed: {' / '.join(lines[-3:])}"
    return venv, ""


class BasicMemory:
    """basic-memory with a config folder and HOME of its own under ``work``."""

    def __init__(self, venv: Path, work: Path, notes: Path):
        self.venv, self.work, self.notes = venv, work, notes
        self.helper = work / "bm_helper.py"
        self.helper.write_text(BM_HELPER, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items()
                    if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
        self.env.update(HOME=str(work / "home"), BASIC_MEMORY_CONFIG_DIR=str(work / "config"),
                        BASIC_MEMORY_NO_PROMOS="1", BASIC_MEMORY_AUTO_UPDATE="false",
                        BASIC_MEMORY_CLOUD_PROMO_OPT_OUT="true", HF_HUB_OFFLINE="1",
                        LOGFIRE_IGNORE_NO_CONFIG="1", DO_NOT_TRACK="1")

    def cli(self, *args: str) -> float:
        """Wall seconds of one ``basic-memory`` command."""
        return timed([str(self.venv / "bin" / "basic-memory"), *args], self.env)

    def full_index(self) -> float:
        shutil.rmtree(self.work / "config", ignore_errors=True)
        shutil.rmtree(self.work / "home", ignore_errors=True)
        (self.work / "home").mkdir()
        return self.cli("project", "add", BM_PROJECT, str(self.notes), "--default", "--local")

    def resync(self) -> float:
        return self.cli("reindex", "--search", "--project", BM_PROJECT)

    def run_helper(self, command: str, payload: dict):
        result = subprocess.run([str(self.venv / "bin" / "python"), str(self.helper), command,
                                 BM_PROJECT], input=json.dumps(payload), capture_output=True,
                                text=True, env=self.env, timeout=HELPER_TIMEOUT)
        if result.returncode != 0:
            raise RuntimeError(f"basic-memory {command} failed: "
                               f"{(result.stdout + result.stderr)[-2000:]}")
        return json.loads(result.stdout.strip().splitlines()[-1])

    def search(self, queries: list[str], limit: int = 10) -> list[tuple[float, set[str]]]:
        out = self.run_helper("search", {"queries": queries, "limit": limit})
        return [(ms, set(found)) for ms, found in out]

    def edits(self, edits: list[tuple[str, str]]) -> tuple[list[float], int]:
        latencies, delay = self.run_helper(
            "edits", {"edits": edits, "settle": 2.0, "timeout": EDIT_TIMEOUT})
        return latencies, delay

    def semantic_note(self) -> str:
        """Whether basic-memory could embed here (it needs sqlite3 extension loading)."""
        probe = "import sqlite3; print(hasattr(sqlite3.Connection, 'enable_load_extension'))"
        out = subprocess.run([str(self.venv / "bin" / "python"), "-c", probe],
                             capture_output=True, text=True).stdout.strip()
        if out == "True":
            return "semantic search possible on this Python (embeddings may add to its figures)"
        return "keyword search only: this Python's sqlite3 cannot load extensions, so no embeddings"


# -- scene-engine ------------------------------------------------------------------------------

class Ours:
    """scene-engine's index over ``root/scenes``."""

    def __init__(self, root: Path):
        self.root = root
        self.db = root / ".scene-engine" / "index.sqlite"
        self.env = dict(os.environ, PYTHONPATH=str(REPO))

    def full_index(self) -> float:
        shutil.rmtree(self.db.parent, ignore_errors=True)
        return self.resync()

    def resync(self) -> float:
        return timed([sys.executable, "-c", OUR_SYNC, str(self.db), str(self.root / "scenes")],
                     self.env)

    def search(self, queries: list[str], limit: int = 10) -> list[tuple[float, set[str]]]:
        index = SceneIndex(self.db, self.root / "scenes")
        found(index, "warmup", 10)
        out = []
        for query in queries:
            started = time.perf_counter()
            names = found(index, query, limit)
            out.append(((time.perf_counter() - started) * 1000, names))
        return out

    def edits(self, edits: list[tuple[str, str]]) -> tuple[list[float], int]:
        """Milliseconds from an atomic save (temp + rename) to the new word being searchable."""
        index = SceneIndex(self.db, self.root / "scenes")
        latencies = []
        with SceneWatcher(self.root) as watcher:
            for note, token in edits:
                path = self.root / "scenes" / note
                tmp = path.with_name(f".{note}.tmp")
                tmp.write_text(path.read_text(encoding="utf-8") + f"\n{token}\n",
                               encoding="utf-8")
                started = time.perf_counter()
                os.replace(tmp, path)
                while not found(index, token, 1):
                    if time.perf_counter() - started > EDIT_TIMEOUT:
                        raise RuntimeError(f"{token} not searchable after {EDIT_TIMEOUT} s")
                    time.sleep(0.002)
                latencies.append((time.perf_counter() - started) * 1000)
            debounce = getattr(watcher, "debounce", None)
        return latencies, round(debounce * 1000) if debounce else 0


def found(index: SceneIndex, query: str, k: int) -> set[str]:
    """Names of the notes that hold the query's words (a fallback hit holds only some)."""
    return {h.name for h in index.search(query, k=k) if not getattr(h, "fallback", False)}


# -- corpus, queries, ground truth -------------------------------------------------------------

def timed(cmd: list[str], env: dict) -> float:
    """Wall seconds of a process; raises with its stderr if it fails."""
    started = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({result.returncode}): "
                           f"{result.stderr[-2000:]}")
    return seconds


def write_notes(folders: list[Path], count: int, corpus: Corpus) -> dict[str, str]:
    """The same ``count`` notes into each of ``folders``; returns name -> body."""
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    bodies = {}
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        body = corpus.body()
        header = {"title": f"Note {i:05d}", "type": "note", "permalink": f"note-{i:05d}",
                  "created": moment, "updated": moment, "summary": body[:80].strip(),
                  "heat": corpus.rng.randint(1, 20)}
        text = ("---\n" + yaml.safe_dump(header, allow_unicode=True, sort_keys=False)
                + "---\n" + body)
        name = f"note-{i:05d}.md"
        bodies[name] = body
        for folder in folders:
            (folder / name).write_text(text, encoding="utf-8")
    return bodies


def query_set(corpus: Corpus, rng: random.Random) -> dict[str, list[str]]:
    """Fixed search-latency queries by kind, Zipf-weighted like the notes."""
    return {
        "English words": rng.choices(corpus.english, corpus.en_weights, k=100),
        "English pairs": [" ".join(rng.choices(corpus.english, corpus.en_weights, k=2))
                          for _ in range(50)],
        "Chinese words": rng.choices(corpus.chinese, corpus.zh_weights, k=100),
    }


def accuracy_queries(corpus: Corpus, bodies: dict[str, str]) -> list[tuple[str, str]]:
    """(kind, query): 4 English and 4 Chinese words held by a few notes, 2 English pairs."""
    words = [set(re.findall(r"[a-z]+", body.lower())) for body in bodies.values()]

    def en_df(word: str) -> int:
        return sum(word in held for held in words)

    def zh_df(word: str) -> int:
        return sum(word in body for body in bodies.values())

    limit = max(3, len(bodies) // 20)
    english = [w for w in corpus.english[:400] if 2 <= en_df(w) <= limit][:4]
    chinese = [w for w in corpus.chinese[:400] if 2 <= zh_df(w) <= limit][:4]
    common = [w for w in corpus.english[:60] if len(bodies) // 10 <= en_df(w) <= len(bodies) // 2]
    pairs = [f"{a} {b}" for a, b in zip(common[0::2], common[1::2], strict=False)
             if any(a in held and b in held for held in words)][:2]
    return ([("English word", w) for w in english] + [("Chinese word", w) for w in chinese]
            + [("English pair", p) for p in pairs])


def grep_truth(folder: Path, kind: str, query: str) -> set[str]:
    """Names of the notes in ``folder`` that ``grep -l`` finds for ``query`` (every word of a
    pair; English as whole words, ignoring case; Chinese as a substring)."""
    found = None
    for word in query.split():
        flags = "-rlF" if kind.startswith("Chinese") else "-rliwF"
        out = subprocess.run(["grep", flags, "--", word, str(folder)], capture_output=True,
                             text=True, env=dict(os.environ, LC_ALL="C.UTF-8")).stdout
        names = {Path(line).name for line in out.splitlines()}
        found = names if found is None else found & names
    return found or set()


# -- measuring ---------------------------------------------------------------------------------

def p50_p95(values: list[float]) -> tuple[float, float]:
    return percentile(values, 50), percentile(values, 95)


def search_round(tool, queries: dict[str, list[str]]) -> dict[str, tuple[float, float, int]]:
    """One pass over every query: kind -> (p50 ms, p95 ms, queries with hits); 'all' too."""
    flat = [q for kind in queries.values() for q in kind]
    results = tool.search(flat)
    out, at = {}, 0
    for kind, kind_queries in queries.items():
        part = results[at:at + len(kind_queries)]
        at += len(kind_queries)
        out[kind] = (*p50_p95([ms for ms, _ in part]), sum(bool(f) for _, f in part))
    out["all"] = (*p50_p95([ms for ms, _ in results]), sum(bool(f) for _, f in results))
    return out


def median_rounds(rounds: list[dict]) -> dict[str, tuple[float, float, int]]:
    return {kind: tuple(statistics.median(r[kind][i] for r in rounds) for i in range(3))
            for kind in rounds[0]}


def compare(found: set[str], truth: set[str]) -> str:
    """'N exact', or what was found, missed and extra against grep."""
    missed, extra = len(truth - found), len(found - truth)
    if not missed and not extra:
        return f"{len(found)} exact"
    return f"{len(found & truth)} (missed {missed}, extra {extra})"


def measure(ours: Ours, theirs: BasicMemory | None, runs: int, queries: dict,
            edit_rounds: list[list[tuple[str, str]]], checks: list[tuple[str, str]],
            scenes: Path) -> dict:
    """Every figure, tool after tool in alternation. ``theirs`` None: ours only."""
    tools = {"ours": ours, "theirs": theirs} if theirs else {"ours": ours}
    figures: dict = {name: {"full": [], "resync": [], "search": [], "edits": []}
                     for name in tools}
    for stage, method in (("full", "full_index"), ("resync", "resync")):
        for run in range(runs):
            for name, tool in tools.items():
                figures[name][stage].append(getattr(tool, method)())
            progress(f"{stage} run {run + 1}/{runs}: " + ", ".join(
                f"{name} {figures[name][stage][-1]:.2f} s" for name in tools))
    for run in range(runs):
        for name, tool in tools.items():
            figures[name]["search"].append(search_round(tool, queries))
        progress(f"search round {run + 1}/{runs}: " + ", ".join(
            f"{name} p95 {figures[name]['search'][-1]['all'][1]:.2f} ms" for name in tools))
    flat = [q for _, q in checks]
    for name, tool in tools.items():
        results = tool.search(flat, limit=len(list(scenes.glob("*.md"))) + 50)
        figures[name]["accuracy"] = [names for _, names in results]
    figures["truth"] = [grep_truth(scenes, kind, q) for kind, q in checks]
    progress("accuracy checked against grep")
    for run, edits in enumerate(edit_rounds):
        for name, tool in tools.items():
            latencies, delay = tool.edits(edits)
            figures[name]["edits"] += latencies
            figures[name]["delay"] = delay
        progress(f"edit round {run + 1}/{len(edit_rounds)}: " + ", ".join(
            f"{name} max {max(figures[name]['edits'][-len(edits):]):.0f} ms" for name in tools))
    return figures


def start_time(tool: str, bm: BasicMemory | None) -> float | None:
    """Wall seconds of a process that only starts the tool (imports, no work)."""
    if tool == "ours":
        return timed([sys.executable, "-c", "import scene_engine.index"],
                     dict(os.environ, PYTHONPATH=str(REPO)))
    return min(bm.cli("--version") for _ in range(3)) if bm else None


# -- report ------------------------------------------------------------------------------------

def fmt(value: float | None, unit: str, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f} {unit}"


def ratio(theirs: float | None, ours: float) -> float | None:
    return theirs / ours if theirs is not None and ours > 0 else None


def report(args, argv, figures: dict, starts: dict, queries: dict, checks, bm_note: str,
           count: int) -> int:
    """Print the Markdown block; returns how many targets were missed."""
    ours, theirs = figures["ours"], figures.get("theirs")
    med = statistics.median
    command = "python bench/bench_peer.py " + shlex.join(argv)
    print(f"`{command.strip()}` — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {count} notes "
          f"(~1,500 characters, half Chinese), {args.runs} run(s), "
          f"{len(ours['edits'])} edits, {os.cpu_count()} CPUs\n")
    print(f"- basic-memory {BM_VERSION}: {bm_note}")
    print("- full index and re-sync: wall time of one process, median of the runs; search: "
          "in process, 10 results, median over the runs of each run's percentile\n")
    print("| figure | scene-engine | basic-memory | theirs / ours |\n| --- | --- | --- | --- |")
    rows = [("process start, import only", starts["ours"], starts["theirs"], "s"),
            ("full index from nothing", med(ours["full"]),
             med(theirs["full"]) if theirs else None, "s"),
            ("no-change re-sync", med(ours["resync"]),
             med(theirs["resync"]) if theirs else None, "s")]
    for label, mine, peer, unit in rows:
        r = ratio(peer, mine)
        print(f"| {label} | {fmt(mine, unit)} | {fmt(peer, unit)} | "
              f"{'—' if r is None else f'{r:.1f}x'} |")
    our_search = median_rounds(ours["search"])
    peer_search = median_rounds(theirs["search"]) if theirs else None
    for kind in [*queries, "all"]:
        n = sum(map(len, queries.values())) if kind == "all" else len(queries[kind])
        mine = our_search[kind]
        peer = peer_search[kind] if peer_search else None
        r = ratio(peer[1], mine[1]) if peer else None
        print(f"| search p50 / p95, {kind} ({n}; with hits: {mine[2]:.0f} / "
              f"{'—' if peer is None else f'{peer[2]:.0f}'}) | {mine[0]:.2f} / {mine[1]:.2f} ms"
              f" | {'—' if peer is None else f'{peer[0]:.2f} / {peer[1]:.2f} ms'} | "
              f"{'—' if r is None else f'{r:.1f}x (p95)'} |")
    our_edit = p50_p95(ours["edits"])
    peer_edit = p50_p95(theirs["edits"]) if theirs else None
    print(f"| edit-to-searchable p50 / p95 | {our_edit[0]:.0f} / {our_edit[1]:.0f} ms "
          f"(debounce {ours['delay']} ms) | "
          + ("—" if not peer_edit else
             f"{peer_edit[0]:.0f} / {peer_edit[1]:.0f} ms (index_delay {theirs['delay']} ms)")
          + f" | {'—' if not peer_edit else f'{peer_edit[1] / our_edit[1]:.1f}x (p95)'} |\n")

    print("Notes found against `grep -l` (English: whole word, any case; Chinese: substring; "
          "pair: both words):\n")
    print("| query | kind | grep | scene-engine | basic-memory |\n| --- | --- | --- | --- | --- |")
    exact = True
    for i, (kind, query) in enumerate(checks):
        truth = figures["truth"][i]
        mine = compare(ours["accuracy"][i], truth)
        if kind != "English pair":
            exact &= mine.endswith("exact")
        peer = compare(theirs["accuracy"][i], truth) if theirs else "—"
        print(f"| {query} | {kind} | {len(truth)} | {mine} | {peer} |")

    def faster(stage: str) -> tuple[str, bool | None]:
        r = ratio(med(theirs[stage]), med(ours[stage])) if theirs else None
        return ("—" if r is None else f"{r:.1f}x"), (None if r is None else r >= 10)

    targets = [("full index at least 10x faster", *faster("full")),
               ("no-change re-sync at least 10x faster", *faster("resync")),
               ("search p95 (all queries) below basic-memory's",
                f"{our_search['all'][1]:.2f} vs "
                + ("—" if not peer_search else f"{peer_search['all'][1]:.2f} ms"),
                None if not peer_search else our_search["all"][1] < peer_search["all"][1]),
               ("edit-to-searchable p95 under 300 ms", f"{our_edit[1]:.0f} ms",
                our_edit[1] < 300),
               ("notes found equal grep's (Chinese, single English words)",
                "yes" if exact else "no", exact)]
    print("\n| target (scene-engine) | measured | met |\n| --- | --- | --- |")
    missed = 0
    for label, value, met in targets:
        missed += met is False
        print(f"| {label} | {value} | {'n/a' if met is None else 'yes' if met else 'NO'} |")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 notes, 1 run, 12 edits")
    parser.add_argument("--notes", type=int, default=None, help="notes (default 500)")
    parser.add_argument("--runs", type=int, default=None, help="rounds per figure (default 3)")
    parser.add_argument("--edits", type=int, default=None, help="edits per tool (default 30)")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--bm-python", default=None, help="Python >= 3.12 for basic-memory")
    parser.add_argument("--bm-venv", type=Path, default=BM_VENV, help="basic-memory's venv")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    count = args.notes or (200 if args.quick else 500)
    args.runs = args.runs or (1 if args.quick else 3)
    edit_count = args.edits or (12 if args.quick else 30)

    venv, why = ensure_bm_venv(args.bm_venv, args.bm_python)
    if venv is None:
        progress(f"skipped: {why}; our own figures only")
    rng = random.Random(20261201)
    corpus = Corpus(rng)
    queries = query_set(corpus, random.Random(7))
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        work = Path(work)
        progress(f"writing {count} notes twice into {work}")
        bodies = write_notes([work / "ours" / "scenes", work / "bm" / "notes"], count, corpus)
        checks = accuracy_queries(corpus, bodies)
        names = sorted(bodies)
        edits = [(rng.choice(names), f"peeredit{i:04d}x") for i in range(edit_count)]
        edit_rounds = [edits[r::args.runs] for r in range(args.runs) if edits[r::args.runs]]
        bm = BasicMemory(venv, work / "bm", work / "bm" / "notes") if venv else None
        starts = {"ours": start_time("ours", bm), "theirs": start_time("theirs", bm)}
        figures = measure(Ours(work / "ours"), bm, args.runs, queries, edit_rounds, checks,
                          work / "ours" / "scenes")
        bm_note = bm.semantic_note() if bm else f"skipped: {why}"
    missed = report(args, argv, figures, starts, queries, checks, bm_note, count)
    if venv is None:
        print(f"\nskipped: {why} — basic-memory's figures are missing; exit 0")
        return 0
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
