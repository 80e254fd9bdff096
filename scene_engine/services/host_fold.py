"""A batch the host's own model drives, call by call (docs/DESIGN.md "Host folding", issue 25).

The litellm backend runs the model inside the batch; here the model is outside (an MCP host's,
or an application's through Anthropic's memory tool) and the batch waits for its calls. The
batch code is the same: ``batch.transaction.run_batch`` runs in a thread of its own with a
``HostBackend``, whose ``run`` hands the job out and then serves the outside's calls on the
job's sandbox until an answer passes the rules. So every rule of the litellm path holds here
because the same code checks it: the sandbox's policy refuses a change as it is made, the
final checks (``job.validate``, ``job.account``) run on the answer exactly as the litellm
backend runs them after its loop.

Steps of one batch:

1. ``HostFolds.begin(holder)``: the batch's thread takes the store lock at once (or
   ``FoldBusy`` names who holds it: the lease file beside the lock says), appends the inbox,
   builds the job (the next pending memories, the scene map, the prompt) and hands it out
   with a batch token and a lease; nothing pending: ``None``;
2. ``call(token, tool, arguments)``: one sandbox tool (read_file, write_to_file,
   replace_in_file), its refusal as the sandbox's ``Error:`` text; every call renews the lease;
3. ``commit(token, answer)``: problems go back as ``FoldProblems`` and the batch stays open
   for a repair; else the transaction commits: one commit with its ledger;
4. ``abort(token)``, or a lease that runs out with no call: the batch fails, nothing is
   written, its memories stay pending.

A process that dies mid-batch wrote nothing (the batch writes only at its commit, in the
write unit of work); the operating system lets the lock go.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scene_engine.core.errors import SceneEngineError
from scene_engine.core.fs import atomic_write_text
from scene_engine.store.store import Store

LEASE = 600.0             # seconds a batch may wait for its next call
BEGIN_WAIT = 120.0        # seconds begin waits for the job to be built
TOOLS = ("read_file", "write_to_file", "replace_in_file")
LEASE_FILE = "lock.lease"  # beside the store lock (ignored by the store's .gitignore)
HOLDER_WAIT = 3.0         # seconds a refused fold_begin waits to learn who holds the store


class FoldBusy(SceneEngineError, RuntimeError):
    """Another batch holds the store: the message says whose, since when and until when."""


class FoldClosed(SceneEngineError, RuntimeError):
    """The batch token names no open batch (never given, committed, aborted or its lease ran
    out): the message says which and that its memories are pending."""


class FoldProblems(SceneEngineError, RuntimeError):
    """The answer or the change set breaks a rule; ``problems`` lists each, the batch stays
    open: change the scenes or the answer and commit again."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("the batch breaks the scene rules; nothing written yet, the batch "
                         "is still open: fix these and commit again:\n- " + "\n- ".join(problems))


class _Ended(SceneEngineError, RuntimeError):
    """Internal: the batch ends without a commit (abort, lease out); nothing is written.
    The batch reports it as any backend failure."""


@dataclass
class _Call:
    kind: str                      # "tool", "run" (a function of the job), "commit", "abort"
    name: str = ""
    arguments: dict = field(default_factory=dict)
    reply: queue.Queue = field(default_factory=lambda: queue.Queue(maxsize=1))


class HostBackend:
    """The ``Backend`` of a batch whose model is outside: ``run(job)`` hands ``job`` to
    ``on_job`` and serves the calls put on ``calls`` until a commit whose answer passes the
    final checks (returned as the ``BackendResult``), an abort or a lease with no call for
    ``lease`` seconds (``_Ended``: the batch fails, nothing written). ``name``: the holder, in
    the commit's trailers."""

    def __init__(self, name: str, lease: float, on_job, on_call, edit: bool = False):
        self.name = name
        self.edit = edit                   # a batch of no memories (run_edit_batch)
        self.lease = lease
        self.calls: queue.Queue[_Call] = queue.Queue()
        self.committing: _Call | None = None
        self.ended: str | None = None      # why the batch ended without a commit
        self._on_job, self._on_call = on_job, on_call

    def run(self, job):
        """The batch's step 4 (docs/DESIGN.md "A batch"), driven from outside."""
        from scene_engine.batch.contract import BackendResult

        job.transcript.add("start", model=self.name, api_base=None,
                           memories=[m.id for m in job.memories],
                           limits={"lease_seconds": self.lease})
        job.transcript.add("prompt", messages=job.messages, tools=list(TOOLS))
        self._on_job(job)
        repairs = 0
        while True:
            try:
                call = self.calls.get(timeout=self.lease)
            except queue.Empty:
                self.ended = f"its lease ran out (no call came for {self.lease:g} s)"
                raise _Ended(self.ended) from None
            self._on_call()
            if call.kind == "abort":
                self.ended = "it was aborted (fold_abort)"
                call.reply.put(("ended", None))
                raise _Ended(self.ended)
            if call.kind == "tool":
                try:
                    result = job.box.execute(call.name, call.arguments)
                    job.transcript.add("tool", id=str(len(job.box.calls)), name=call.name,
                                       arguments=call.arguments, result=result,
                                       refused=result.startswith("Error:"), text_fallback=False)
                except Exception as exc:        # one call's failure ends that call, not the
                    call.reply.put(("error", exc))   # batch: the turn's other edits stay
                    continue
                call.reply.put(("tool", result))
                continue
            if call.kind == "run":
                try:
                    call.reply.put(("run", call.arguments["fn"](job)))
                except Exception as exc:        # said to the caller, the batch goes on
                    call.reply.put(("error", exc))
                continue
            answer = str(call.arguments.get("answer") or "").strip()
            problems = job.validate() if self.edit else self._problems(job, answer)
            if problems:
                repairs += 1
                job.transcript.add("repair", round=repairs, problems=problems,
                                   content="returned to the host with fold_commit's error")
                call.reply.put(("problems", problems))
                continue
            job.transcript.add("reply", call=repairs + 1, seconds=0.0, content=answer,
                               tool_calls=[], finish_reason="stop", prompt_tokens=0,
                               completion_tokens=0, text_fallback=False)
            self.committing = call      # answered once the transaction has committed
            return BackendResult(final_text=answer, steps=len(job.box.calls))

    @staticmethod
    def _problems(job, answer: str) -> list[str]:
        """What the litellm backend checks after its loop (``LLMBackend.run``)."""
        if not answer and not job.box.pending():
            return ["the answer is empty and no scene changed: write the memories into the "
                    "scenes, or account for each one (NO_CHANGE or SKIP lines) in the answer"]
        _, unaccounted = job.account(answer)
        return job.validate() + unaccounted


class HostBatch:
    """One batch run in a thread of its own for ``HostFolds``."""

    def __init__(self, store: Store, holder: str, lease: float, edit: bool = False):
        self.store, self.holder, self.lease, self.edit = store, holder, lease, edit
        self.token = secrets.token_urlsafe(12)
        self.job: Any = None               # the BatchJob, once built
        self.result: Any = None            # the BatchResult, once committed
        self.error: BaseException | None = None
        self.started = datetime.now(UTC)
        self.expires = time.monotonic() + lease
        self.ready = threading.Event()
        self.done = threading.Event()
        self.backend = HostBackend(f"host ({holder})", lease, self._have_job, self._renew,
                                   edit=edit)
        self.thread = threading.Thread(target=self._run, name=f"host-batch-{self.token}",
                                       daemon=True)

    def _have_job(self, job) -> None:
        self.job = job
        self._write_lease()
        self.ready.set()

    def _renew(self) -> None:
        self.expires = time.monotonic() + self.lease
        self._write_lease()

    def _run(self) -> None:
        from scene_engine.batch.transaction import run_batch, run_edit_batch
        from scene_engine.services import persona
        from scene_engine.services.add import drain_inbox

        try:
            if self.edit:
                self.result = run_edit_batch(self.store, self.backend, lock_timeout=0,
                                             persona=persona.in_batch(self.store))
                return
            drain_inbox(self.store, lock_timeout=0)
            self.result = run_batch(self.store, self.backend, attempts=1,
                                    persona=persona.in_batch(self.store), lock_timeout=0)
        except BaseException as exc:    # said to the caller: this thread has no one to tell
            self.error = exc
        finally:
            if self.job is not None:
                with contextlib.suppress(OSError):
                    lease_path(self.store).unlink()
            self.done.set()
            self.ready.set()
            call = self.backend.committing
            if call is not None:
                call.reply.put(("failed", self.error) if self.error else ("committed", None))

    def _write_lease(self) -> None:
        left = max(0.0, self.expires - time.monotonic())
        data = {"holder": self.holder, "pid": os.getpid(), "batch": self.job.number,
                "started": self.started.isoformat(timespec="seconds"),
                "expires": (datetime.now(UTC) + timedelta(seconds=left)).isoformat(
                    timespec="seconds")}
        with contextlib.suppress(OSError):
            atomic_write_text(lease_path(self.store), json.dumps(data) + "\n")

    def ask(self, call: _Call) -> tuple[str, Any]:
        """Hand ``call`` to the batch's thread; its reply. Raises ``FoldClosed`` when the batch
        ended before it answered."""
        if self.done.is_set():
            raise self.closed()
        self.backend.calls.put(call)
        while True:
            try:
                return call.reply.get(timeout=0.2)
            except queue.Empty:
                if self.done.is_set() and self.backend.committing is not call:
                    with contextlib.suppress(queue.Empty):
                        return call.reply.get_nowait()
                    raise self.closed() from None

    def closed(self) -> FoldClosed:
        """Why this batch takes no more calls."""
        number = f"batch {self.job.number}" if self.job is not None else "the batch"
        if self.result is not None:
            return FoldClosed(f"{number} is committed ({self.result.commit[:12]}); call "
                              "fold_begin for the next one")
        why = self.backend.ended or (" ".join(str(self.error).split()) if self.error
                                      else "it ended")
        if self.edit:
            return FoldClosed(f"{number} is over: {why}; nothing of it was written (the next "
                              "command starts a new turn)")
        return FoldClosed(f"{number} is over: {why}; nothing was written and its memories are "
                          "pending: call fold_begin again")


def check_lease(lease) -> float:
    """``lease`` when it is a number of seconds above zero (at most a day), else
    ``InputError``."""
    from scene_engine.core.errors import InputError

    if isinstance(lease, bool) or not isinstance(lease, int | float) or not 0 < lease <= 86400 \
            or lease != lease:
        raise InputError(f"the lease is a number of seconds above 0 and at most 86400, not "
                         f"{lease!r}")
    return float(lease)


class HostFolds:
    """The host-driven batches of one store in this process (at most one at a time; the store
    lock keeps out every other process). ``lease``: seconds a batch waits for its next call
    (docs/DESIGN.md "Host folding")."""

    def __init__(self, store: Store, lease: float = LEASE):
        self.store, self.lease = store, check_lease(lease)
        self._batches: dict[str, HostBatch] = {}
        self._lock = threading.Lock()

    def begin(self, holder: str, edit: bool = False) -> dict | None:
        """Start a batch for ``holder`` (a name for people: the MCP client's); ``edit``: a
        batch of no memories, the holder's own changes (``run_edit_batch``). Returns None
        when nothing is pending (never for ``edit``), else ``{"batch": token, "number", "lease_seconds",
        "memories": [{"id", "content", "created_at", ...}], "scenes": [{"name", "heat",
        "updated", "summary", "pinned"}], "new_scenes_allowed", "instructions": the prompt's
        text}``. Raises ``FoldBusy`` (another batch holds the store) and what the batch's
        start raises (``BatchError``, a journal to repair)."""
        with self._lock:
            live = [b for b in self._batches.values() if not b.done.is_set()]
            if live:
                raise FoldBusy(_busy_text(self.store, live[0].holder))
            batch = HostBatch(self.store, holder, self.lease, edit)
            batch.thread.start()
            if not batch.ready.wait(BEGIN_WAIT):
                raise FoldBusy(f"the batch did not start within {BEGIN_WAIT:g} s")
            if batch.job is None:
                batch.thread.join()
                if batch.error is not None:
                    raise _busy_or(self.store, batch.error)
                return None
            self._batches = {batch.token: batch}
            return describe_job(batch.job, batch.token, self.lease)

    def call(self, token: str, tool: str, arguments: dict) -> str:
        """Run sandbox tool ``tool`` (one of ``TOOLS``) with ``arguments`` in batch ``token``;
        the sandbox's text (a refusal starts with ``Error:``). Raises ``FoldClosed``, or what
        the call raised (the batch goes on)."""
        kind, result = self._batch(token).ask(_Call("tool", tool, arguments))
        if kind == "error":
            raise result
        return result

    def run(self, token: str, fn):
        """``fn(job)`` run in batch ``token``'s thread (the job's sandbox is that thread's),
        its result; what ``fn`` raises is raised here and the batch goes on. Raises
        ``FoldClosed``."""
        kind, result = self._batch(token).ask(_Call("run", arguments={"fn": fn}))
        if kind == "error":
            raise result
        return result

    def commit(self, token: str, answer: str) -> dict:
        """Check and commit batch ``token`` with the model's final ``answer`` (the summary,
        ``NO_CHANGE``/``SKIP`` lines, an optional persona request, as the prompt asks).
        Returns ``{"batch", "commit", "memories", "counts", "summary"}``. Raises
        ``FoldProblems`` (open for repair), ``FoldClosed``, or the batch's own failure
        (``BatchError``: nothing written, memories pending)."""
        batch = self._batch(token)
        kind, value = batch.ask(_Call("commit", arguments={"answer": answer}))
        if kind == "problems":
            raise FoldProblems(value)
        batch.thread.join()
        if batch.error is not None:         # the transaction refused it (a hand edit met)
            raise batch.closed() from batch.error
        result = batch.result
        if result is None:          # an edit batch that changed nothing: no commit
            return {"batch": None, "commit": None, "memories": [], "counts": {},
                    "summary": answer, "persona_refreshed": False}
        return {"batch": result.number, "commit": result.commit, "memories": result.memory_ids,
                "counts": result.counts, "summary": result.summary,
                "persona_refreshed": result.persona_refreshed}

    def abort(self, token: str) -> dict:
        """End batch ``token`` with nothing written; ``{"batch", "pending"}``. Raises
        ``FoldClosed``."""
        batch = self._batch(token)
        batch.ask(_Call("abort"))
        batch.thread.join()
        return {"batch": batch.job.number if batch.job else None,
                "pending": self.store.load_state().pending}

    def _batch(self, token: str) -> HostBatch:
        batch = self._batches.get(str(token))
        if batch is None:
            raise FoldClosed(f"no batch has the token {str(token)[:40]!r} here; call "
                             "fold_begin for one")
        return batch


def describe_job(job, token: str, lease: float) -> dict:
    """What the host needs to do the batch: its token, memories, scene map and prompt."""
    memories = []
    for memory in job.memories:
        item = {"id": memory.id, "content": memory.content,
                "created_at": memory.created_at.isoformat()}
        for key in ("role", "scope", "type"):
            if getattr(memory, key):
                item[key] = getattr(memory, key)
        memories.append(item)
    scenes = [{"name": n, "heat": int(m.get("heat") or 0), "summary": str(m.get("summary") or ""),
               "updated": str(m.get("updated") or "")} for n, m in sorted(job.scene_meta.items())]
    prompt = "\n\n".join(str(m.get("content") or "") for m in job.messages)
    return {"batch": token, "number": job.number, "lease_seconds": lease,
            "memories": memories, "scenes": scenes,
            "new_scenes_allowed": job.context.allowance(),
            "instructions": HOST_NOTE.format(lease=f"{lease:g}") + prompt}


HOST_NOTE = (
    "You fold this batch yourself through the tools read_file, write_to_file and "
    "replace_in_file, each with this batch's token as `batch`; nothing is written until "
    "fold_commit. End with fold_commit(batch, answer): the answer is the final answer the "
    "instructions below describe (a short summary; NO_CHANGE / SKIP lines for memories no "
    "scene takes). A refusal or a rule the batch breaks comes back as a tool error saying "
    "what to fix; fix it and go on. The batch waits {lease} s for each call; fold_abort ends "
    "it with nothing written.\n\n")


def lease_path(store: Store):
    """The lease file of the store's host-driven batch, beside the store lock (the lock's
    busy message reads it too: ``store.lock``)."""
    return store.lock_path.with_name(LEASE_FILE)


def holder_text(store: Store) -> str | None:
    """Who holds the store for a host-driven batch, from its lease file, or None."""
    try:
        data = json.loads(lease_path(store).read_text("utf-8"))
        expires = datetime.fromisoformat(data["expires"])
        holding = int(store.lock_path.with_name("lock.pid").read_text("utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if holding != data.get("pid"):      # left by a process that died: another holds the lock
        return None
    left = (expires - datetime.now(UTC)).total_seconds()
    lease = f"its lease runs {left:.0f} s more" if left > 0 else \
        f"its lease ran out {-left:.0f} s ago (the holder has not let go yet)"
    return (f"{data.get('holder')} (pid {data.get('pid')}) holds it for batch "
            f"{data.get('batch')} since {data.get('started')}; {lease}")


def _busy_text(store: Store, holder: str | None = None) -> str:
    said = holder_text(store)
    if said:
        return f"the store is being folded: {said}. Try again when it is done"
    return (f"the store is being folded by {holder}. Try again when it is done" if holder
            else "the store is busy (another batch or command holds it). Try again soon")


def _busy_or(store: Store, error: BaseException) -> BaseException:
    """A busy store said with the lease's holder (a batch that took the lock a moment ago
    writes its lease file once its job is built: waited for, a little); any other error as
    it is."""
    from scene_engine.store.lock import LockBusyError

    if not isinstance(error, LockBusyError):
        return error
    deadline = time.monotonic() + HOLDER_WAIT
    while holder_text(store) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return FoldBusy(_busy_text(store))

