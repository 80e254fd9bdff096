"""``scenes trace MEMORY_ID``: where a memory went (DESIGN.md "A batch", step 7).

From the journal (the memory), the state (pending, processed or forgotten), the batch ledgers
in git (which batch took it and what it did with it), the later history (merges that moved
its scene, hand renames and deletions, undos and redos) and ``git blame`` (the lines that
carry it now).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import history
from .accounting import Ledger
from .batch import expand_seqs
from .conservation import coverage
from .memories import Journal, Memory
from .store import Store

LINE_EVIDENCE = 0.5   # a current line carries the memory if it holds this share of its words


class TraceError(LookupError):
    """No memory has this id (``exit_code`` 2: bad input)."""

    exit_code = 2


@dataclass
class Trace:
    """What ``trace_memory`` found. ``status``: "pending" | "processed" | "forgotten";
    ``events``: oldest first, each ``{"kind", "time", "commit", ...}``; ``scenes``: the scenes
    that hold it now; ``lines``: ``{"scene", "line", "text", "batch"}`` carrying it now."""

    memory: Memory
    status: str
    events: list[dict] = field(default_factory=list)
    scenes: list[str] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        """A JSON-ready dict (the memory as its journal record)."""
        data = asdict(self)
        data["memory"] = self.memory.to_record()
        return data


def trace_memory(store: Store, memory_id: str) -> Trace:
    """Follow ``memory_id`` (an id or an alias) through the history; raises ``TraceError``."""
    memory = Journal(store.memories_dir).find(memory_id)
    if memory is None:
        raise TraceError(f"no memory has the id {memory_id!r}; `scenes log` lists batches "
                         "with their memory ids")
    state = store.load_state()
    status = ("forgotten" if memory.seq in state.forgotten else
              "pending" if memory.seq in state.requeued or memory.seq >= state.cursor
              else "processed")
    repo = history.open_repo(store.root)
    trace = Trace(memory=memory, status=status)
    tracked: set[str] = set()
    batches: dict[int, set[str]] = {}    # batch that took it -> the scenes it went to
    for commit in history.engine_commits(repo):
        found = history.trailers(commit.message)
        kind = history.commit_kind(commit.message)
        base = {"time": commit.committed_datetime.isoformat(), "commit": commit.hexsha}
        if kind == "batch":
            ledger = _ledger(commit, found)
            if memory.seq in expand_seqs(found.get("Memory-Seqs", "")):
                entry = _entry(ledger, memory.seq)
                tracked = set(entry.get("scenes", [])) if entry else set()
                batches[int(found["Batch"])] = set(tracked)
                trace.events.append(base | {"kind": "batch", "batch": int(found["Batch"])}
                                    | (entry or {"outcome": "unknown (batch made before "
                                                            "ledgers were kept)"}))
            elif ledger and tracked:
                tracked = _follow_merges(trace, base, int(found["Batch"]), ledger, tracked)
        elif kind in ("undo", "redo", "forget"):
            number = found.get("Undo-Batch") or found.get("Redo-Batch") or found.get("Forget-Batch")
            if number and int(number) in batches:
                trace.events.append(base | {"kind": kind, "batch": int(number)})
                tracked = set(batches[int(number)]) if kind == "redo" else set()
        elif kind == "hand edit" and tracked:
            tracked = _follow_hand_edit(trace, base, repo, commit, tracked)
    on_disk = set(store.scene_names())
    trace.scenes = sorted(tracked & on_disk) if status == "processed" else []
    trace.lines = _current_lines(repo, store, memory, trace.scenes)
    return trace


def _ledger(commit, found: dict) -> Ledger | None:
    path = found.get("Ledger")
    if not path:
        return None
    try:
        return Ledger.parse((commit.tree / path).data_stream.read().decode("utf-8"))
    except (KeyError, ValueError):
        return None


def _entry(ledger: Ledger | None, seq: int) -> dict | None:
    if ledger is None:
        return None
    match = next((e for e in ledger.entries if e.seq == seq), None)
    return {"outcome": match.outcome, "scenes": match.scenes, "reason": match.reason} \
        if match else None


def _follow_merges(trace: Trace, base: dict, batch: int, ledger: Ledger,
                   tracked: set[str]) -> set[str]:
    for survivor, sources in ledger.merges.items():
        moved = tracked & set(sources)
        for source in sorted(moved):
            trace.events.append(base | {"kind": "merge", "batch": batch, "from": source,
                                        "into": survivor})
        if moved:
            tracked = (tracked - moved) | {survivor}
    return tracked


def _follow_hand_edit(trace: Trace, base: dict, repo, commit, tracked: set[str]) -> set[str]:
    """Renames and deletions of tracked scenes a person made."""
    if not commit.parents:
        return tracked
    out = repo.git.diff("--name-status", "-M", commit.parents[0].hexsha, commit.hexsha,
                        "--", "scenes")
    for row in out.splitlines():
        parts = row.split("\t")
        old = parts[1].removeprefix("scenes/") if len(parts) > 1 else ""
        if parts[0].startswith("R") and old in tracked:
            new = parts[2].removeprefix("scenes/")
            tracked = (tracked - {old}) | {new}
            trace.events.append(base | {"kind": "renamed by hand", "from": old, "into": new})
        elif parts[0] == "D" and old in tracked:
            tracked = tracked - {old}
            trace.events.append(base | {"kind": "deleted by hand", "from": old})
    return tracked


def _current_lines(repo, store: Store, memory: Memory, scenes: list[str]) -> list[dict]:
    """Lines of ``scenes`` now that state the memory, with the batch that last wrote them."""
    rows = []
    for scene in scenes:
        try:
            blame = history.blame_lines(repo, f"scenes/{scene}")
        except history.HistoryError:
            continue
        for row in blame:
            text = row["text"].strip()
            if text and coverage(memory.content, text) >= LINE_EVIDENCE:
                rows.append({"scene": scene, "line": row["line"], "text": row["text"],
                             "batch": row["batch"], "kind": row["kind"]})
    return rows


def render(trace: Trace) -> str:
    """The trace as lines a person reads."""
    m = trace.memory
    lines = [f"memory {m.id} (#{m.seq}, {m.created_at.isoformat()})", f"  {m.content[:300]}",
             f"status: {trace.status}", "history:"]
    for e in trace.events:
        when = f"  {e['time'][:19]} {e['commit'][:8]}"
        if e["kind"] == "batch":
            where = ", ".join(e.get("scenes") or []) or "no scene"
            reason = f" ({e['reason']})" if e.get("reason") else ""
            lines.append(f"{when} batch {e['batch']}: {e['outcome']} -> {where}{reason}")
        elif e["kind"] == "merge":
            lines.append(f"{when} batch {e['batch']}: {e['from']} merged into {e['into']}")
        elif "from" in e:
            lines.append(f"{when} {e['kind']}: {e['from']}"
                         + (f" -> {e['into']}" if e.get("into") else ""))
        else:
            lines.append(f"{when} {e['kind']} of batch {e['batch']}")
    if not trace.events:
        lines.append("  (no batch has taken it yet)")
    lines.append("now in: " + (", ".join(trace.scenes) or "no scene"))
    for row in trace.lines:
        who = f"batch {row['batch']}" if row["batch"] else row["kind"]
        lines.append(f"  {row['scene']}:{row['line']} ({who}) {row['text']}")
    return "\n".join(lines) + "\n"
