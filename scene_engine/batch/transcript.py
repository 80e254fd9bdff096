"""Transcripts: every model batch's exchange, kept for a person as JSON Lines.

``.scene-engine/transcripts/NNNNNN.jsonl`` holds one event per line, written as it happens (so a
killed run leaves what it got to), for committed and failed batches alike; a batch number run
again (after a failure or a clash with a hand edit) appends a new attempt to the same file. The
folder is not in git (its own ``.gitignore``) and is pruned oldest first beyond ``KEEP_BYTES``.

Every event has ``t`` (seconds since the attempt started) and ``kind``; the kinds and their data:

- ``start``: model, api_base, memories (ids), limits; the first event also has ``at`` (UTC).
- ``prompt``: messages (the full prompt), tools (names).
- ``request``: call (1-based request number in its loop), messages (how many were sent).
- ``reply``: call, seconds, content, tool_calls, finish_reason, prompt_tokens,
  completion_tokens, text_fallback (the tool calls were written as text).
- ``error``: call, seconds, error (one line), timeout (bool); ``retry``: retry, of, pause, reason.
- ``truncated``: call, limit, dropped_calls; ``repair``: round, problems, content.
- ``tool``: id, name, arguments, result, refused, text_fallback.
- ``end``: outcome ("committed" or "failed"), commit or error, totals (see ``totals``).
"""

from __future__ import annotations

import json
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

from scene_engine.core.fs import atomic_write_text
from scene_engine.core.plural import count

__all__ = ["Transcript", "KEEP_BYTES", "transcript_path", "read_events", "render", "rotate",
           "describe_event"]

KEEP_BYTES = 20 * 1024 * 1024   # the transcripts folder is pruned to about this size


def transcript_path(meta_dir: Path, batch: int) -> Path:
    """Where batch ``batch``'s transcript lives under the store's ``.scene-engine`` folder."""
    return meta_dir / "transcripts" / f"{batch:06d}.jsonl"


class Transcript:
    """The events of one batch attempt; written to ``path`` line by line when given.

    Writing never fails the batch: a disk problem gives one warning and the transcript is
    kept in memory only from then on.
    """

    def __init__(self, path: Path | None = None, keep_bytes: int = KEEP_BYTES):
        self.path = path
        self.keep_bytes = keep_bytes
        self.events: list[dict] = []
        self._started = time.monotonic()

    def add(self, kind: str, **data) -> None:
        """Record one event (``kind`` and JSON-serialisable ``data``) and append it to the file."""
        event = {"t": round(time.monotonic() - self._started, 3), "kind": kind, **data}
        if not self.events:
            event["at"] = datetime.now(UTC).isoformat(timespec="seconds")
        self.events.append(event)
        self._write(event)

    def finish(self, outcome: str, **data) -> None:
        """Close the attempt with an ``end`` event (outcome "committed" or "failed", and e.g.
        ``commit`` or ``error``) and its totals; nothing when no model was used."""
        if self.events:
            self.add("end", outcome=outcome, **data, totals=totals(self.events))

    def _write(self, event: dict) -> None:
        if self.path is None:
            return
        try:
            folder = self.path.parent
            if len(self.events) == 1:
                folder.mkdir(parents=True, exist_ok=True)
                if not (folder / ".gitignore").exists():   # never committed with the store
                    atomic_write_text(folder / ".gitignore", "*\n")
                rotate(folder, self.keep_bytes, keep=self.path)
            # backslashreplace: a lone surrogate the model sent (refused by the sandbox) is
            # written as its JSON escape, which reads back as it came, and never ends a batch.
            with self.path.open("a", encoding="utf-8", errors="backslashreplace") as out:
                out.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:   # a transcript is a convenience; the batch does not depend on it
            warnings.warn(f"transcript not saved ({self.path.name}): {exc}", stacklevel=3)
            self.path = None


def totals(events: list[dict]) -> dict:
    """Sums over an attempt's events: requests, replies, prompt_tokens, completion_tokens
    (of every reply, those of abandoned loops and failed batches included), tool_calls,
    refused, text_calls, retries, timeouts, truncated, repairs, seconds."""
    replies = [e for e in events if e["kind"] == "reply"]
    tools = [e for e in events if e["kind"] == "tool"]
    return {
        "requests": sum(e["kind"] == "request" for e in events),
        "replies": len(replies),
        "prompt_tokens": sum(e.get("prompt_tokens") or 0 for e in replies),
        "completion_tokens": sum(e.get("completion_tokens") or 0 for e in replies),
        "tool_calls": len(tools),
        "refused": sum(bool(e.get("refused")) for e in tools),
        "text_calls": sum(bool(e.get("text_fallback")) for e in tools),
        "retries": sum(e["kind"] == "retry" for e in events),
        "timeouts": sum(bool(e.get("timeout")) for e in events if e["kind"] == "error"),
        "truncated": sum(e["kind"] == "truncated" for e in events),
        "repairs": sum(e["kind"] == "repair" for e in events),
        "seconds": events[-1]["t"] if events else 0.0,
    }


def rotate(folder: Path, keep_bytes: int, keep: Path | None = None) -> list[Path]:
    """Delete the oldest ``*.jsonl`` files (by modification time) until the rest, ``keep``
    included, fit in ``keep_bytes``; ``keep`` itself is never deleted. Returns those deleted."""
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    used = sum(p.stat().st_size for p in files if p == keep)
    deleted = []
    for path in files:
        if path == keep:
            continue
        size = path.stat().st_size
        if used + size > keep_bytes:
            path.unlink(missing_ok=True)
            deleted.append(path)
        else:
            used += size
    return deleted


def read_events(path: Path) -> list[dict]:
    """The events of a transcript file, in order; a torn last line (a killed run) is skipped.
    Raises ``FileNotFoundError``."""
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def _clip(text, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _args(arguments) -> str:
    return _clip(arguments if isinstance(arguments, str) else json.dumps(arguments), 160)


def describe_event(kind: str, data: dict) -> str | None:
    """One line for a person about an event as it happens (``run -v``, progress), or None for
    events not worth a line (request, prompt, start, end)."""
    if kind == "tool":
        verdict = "refused: " + _clip(data["result"][6:], 200) if data.get("refused") else "ok"
        via = " (written as text)" if data.get("text_fallback") else ""
        return f"tool {data['name']} {_args(data['arguments'])}{via} -> {verdict}"
    if kind == "reply":
        return (f"reply after {data['seconds']:.1f} s: {data['prompt_tokens']} + "
                f"{data['completion_tokens']} tokens, finish {data.get('finish_reason')}")
    if kind == "error":
        return f"request {data['call']} failed after {data['seconds']:.1f} s: {data['error']}"
    if kind == "retry":
        return f"retry {data['retry']} of {data['of']} in {data['pause']:g} s ({data['reason']})"
    if kind == "truncated":
        dropped = (f"; {count(data['dropped_calls'], 'tool call')} dropped"
                   if data["dropped_calls"] else "")
        return f"reply cut off at max_output_tokens ({data['limit']}){dropped}"
    if kind == "repair":
        return f"repair round {data['round']}: " + "; ".join(_clip(p, 160)
                                                            for p in data["problems"])
    return None


def render(events: list[dict], batch: int) -> str:
    """A transcript for a person: each attempt with its set-up, every request, reply (its text
    and tool calls), tool result, error, retry and repair round, and the totals."""
    lines: list[str] = []
    attempt = 0
    for event in events:
        kind, at = event["kind"], f"[{event['t']:7.1f} s]"
        if kind == "start":
            attempt += 1
            where = f" at {event['api_base']}" if event.get("api_base") else ""
            when = f", {event['at']}" if event.get("at") else ""
            limits = ", ".join(f"{k} {v:g}" for k, v in (event.get("limits") or {}).items())
            lines += [f"batch {batch}, attempt {attempt}{when}: model {event['model']}{where}",
                      f"  limits: {limits}", f"  memories: {', '.join(event['memories'])}"]
        elif kind == "prompt":
            sizes = ", ".join(f"{m['role']} {len(str(m.get('content') or ''))} chars"
                              for m in event["messages"])
            lines.append(f"  prompt: {sizes}; tools: {', '.join(event['tools'])}")
        elif kind == "request":
            lines.append(f"{at} request {event['call']} ({event['messages']} messages)")
        elif kind == "reply":
            lines.append(f"{at} {describe_event(kind, event)}"
                         + (" (tool calls written as text)" if event.get("text_fallback") else ""))
            if event.get("content"):
                lines += [f"      | {line}" for line in str(event["content"]).splitlines()]
            lines += [f"      call {c['function']['name']} {_args(c['function']['arguments'])}"
                      for c in event.get("tool_calls") or []]
        elif kind == "end":
            lines.append(_end_line(event))
        else:
            text = describe_event(kind, event)
            if text:
                lines.append(f"{at} {text}")
    return "\n".join(lines) + "\n"


def _end_line(event: dict) -> str:
    t = event.get("totals") or {}
    what = (f"committed {str(event.get('commit', ''))[:8]}" if event["outcome"] == "committed"
            else f"failed: {event.get('error', '')}")
    return (f"  end: {what}\n  totals: {t.get('requests', 0)} requests, {t.get('replies', 0)} "
            f"replies, {t.get('prompt_tokens', 0)} prompt + {t.get('completion_tokens', 0)} "
            f"completion tokens, {t.get('tool_calls', 0)} tool calls ({t.get('refused', 0)} "
            f"refused, {t.get('text_calls', 0)} written as text), {t.get('retries', 0)} "
            f"retries, {t.get('timeouts', 0)} timeouts, {t.get('truncated', 0)} cut off, "
            f"{t.get('repairs', 0)} repair rounds, {t.get('seconds', 0):.1f} s\n")
