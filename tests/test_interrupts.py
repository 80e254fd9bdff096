"""Ctrl-C and SIGTERM (interrupts.py, recovery.py, cli.py): never a half-done batch, never a
lost hand edit, never a traceback.

Unit tests cover ``interrupts.critical``, recovery's planned hashes (a file a person changed
after the interruption is kept and committed as a hand edit; one holding the batch's planned
text or HEAD's is rolled back; old and torn markers), read-only commands after a dead batch,
and the CLI's one ``interrupted`` line. The slow test sends SIGINT (to the process group, as a
terminal does), SIGTERM (to the engine) and now and then SIGKILL to `scenes run` / `scenes
ingest` at random moments, with a hand edit before every next command. Its plan is seeded
(``SCENE_ENGINE_INTERRUPT_SEED``); the seed and the plan so far are in every failure message.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner
from test_crash import Died, live_seqs, marker_path, memories, scene_problems, wait_for_marker

from scene_engine.batch.transaction import run_batch
from scene_engine.cli import app
from scene_engine.core import interrupts
from scene_engine.services.add import add_memories
from scene_engine.services.backends import make_backend
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.store import recovery
from scene_engine.store.history import commit_hand_edits
from scene_engine.store.memories import Journal
from scene_engine.store.store import Store, init_store, open_store, render_state

CLI = [sys.executable, "-c", "from scene_engine.cli import main; main()"]
SEED = int(os.environ.get("SCENE_ENGINE_INTERRUPT_SEED", "20261201"))
INTERRUPTS = 20
START = 150              # memories before the first interrupt: work left for every run
PER_INGEST = 4           # memories an `ingest` adds
runner = CheckedRunner()


@pytest.fixture(autouse=True)
def short_lock_timeout(monkeypatch):
    """A stuck lock fails the test in seconds, not after the 60 s default."""
    monkeypatch.setenv("SCENE_ENGINE_LOCK_TIMEOUT", "20")


def scene(summary: str, body: str) -> str:
    return f"---\nsummary: {summary}\n---\n{body}\n"


def hand_written_store(tmp_path: Path) -> tuple[Store, git.Repo]:
    """A store with two committed scenes, alpha and beta, and four memories pending."""
    store = init_store(tmp_path / "store")
    add_memories(store, memories(0, 4).encode())
    (store.scenes_dir / "alpha.md").write_text(scene("Alpha.", "Alpha body."), encoding="utf-8")
    (store.scenes_dir / "beta.md").write_text(scene("Beta.", "Beta body."), encoding="utf-8")
    repo = git.Repo(store.root)
    commit_hand_edits(repo)
    return store, repo


def write_planned(store: Store, planned: dict[str, str | None]) -> None:
    """What an apply that died before its commit leaves: every planned file written."""
    for path, text in planned.items():
        target = store.root / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")


def dead_batch_plan(store: Store) -> dict[str, str | None]:
    """A batch's plan: alpha and beta rewritten, gamma created, state advanced."""
    state = store.load_state()
    return {"scenes/alpha.md": scene("Alpha, batch.", "Alpha body.\nAlpha from the batch."),
            "scenes/beta.md": scene("Beta, batch.", "Beta body.\nBeta from the batch."),
            "scenes/gamma.md": scene("Gamma.", "Gamma from the batch."),
            ".scene-engine/state.json": render_state(state.model_copy(
                update={"batch": state.batch + 1, "cursor": state.cursor + 4}))}


def clean(repo: git.Repo) -> str:
    return repo.git.status("--porcelain", "--untracked-files=all")


# ---------------------------------------------------------------- interrupts.critical

def test_critical_holds_sigint_back_until_the_section_ends_and_children_inherit_the_block():
    reached_end = False
    with pytest.raises(KeyboardInterrupt), interrupts.critical():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        child = subprocess.run(["grep", "SigBlk", "/proc/self/status"],
                               capture_output=True, text=True)
        reached_end = True
    assert reached_end
    if child.returncode == 0:           # Linux: the child's blocked-signal mask has SIGINT
        assert int(child.stdout.split()[1], 16) & (1 << (signal.SIGINT - 1))
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_critical_defers_a_signal_that_reaches_another_thread():
    """A thread started before the section does not block the signals; the kernel may hand
    a Ctrl-C to it. Python runs the handler in the main thread anyway: it must wait too."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, interrupts._raise_terminated)
    reached_end = False
    try:
        with pytest.raises(interrupts.Terminated), interrupts.critical():
            signal.pthread_kill(thread.ident, signal.SIGTERM)
            time.sleep(0.05)
            sum(range(10_000))          # bytecode boundaries where a handler could run
            reached_end = True
    finally:
        signal.signal(signal.SIGTERM, before)
        done.set()
        thread.join()
    assert reached_end


# ---------------------------------------------------------------- recovery with planned hashes

def test_a_file_changed_after_the_interruption_is_kept_and_committed_as_a_hand_edit(tmp_path):
    store, repo = hand_written_store(tmp_path)
    head = repo.head.commit.hexsha
    state_before = store.state_path.read_text(encoding="utf-8")
    planned = dead_batch_plan(store)
    recovery.begin(store, planned, repo)
    write_planned(store, planned)
    alpha = store.scenes_dir / "alpha.md"
    kept = planned["scenes/alpha.md"] + "Hand note: keep me.\n"
    alpha.write_text(kept, encoding="utf-8")                  # the person, after the crash

    with pytest.warns(recovery.RecoveryWarning, match="scenes/alpha.md") as caught:
        restored = recovery.recover(store, repo)

    assert len(caught) == 1
    assert sorted(restored) == [".scene-engine/state.json", "scenes/beta.md", "scenes/gamma.md"]
    assert alpha.read_text(encoding="utf-8") == kept
    assert repo.git.show("HEAD:scenes/alpha.md") + "\n" == kept
    assert repo.head.commit.parents[0].hexsha == head
    assert repo.head.commit.message.splitlines()[0] == (
        "hand edit: alpha.md (kept after an interrupted batch)")
    assert (store.scenes_dir / "beta.md").read_text(encoding="utf-8") == scene("Beta.",
                                                                             "Beta body.")
    assert not (store.scenes_dir / "gamma.md").exists()
    assert store.state_path.read_text(encoding="utf-8") == state_before
    assert recovery.pending_intent(store) is None
    assert clean(repo) == ""


def test_a_scene_deleted_by_hand_after_the_interruption_stays_deleted(tmp_path):
    store, repo = hand_written_store(tmp_path)
    planned = dead_batch_plan(store)
    recovery.begin(store, planned, repo)
    write_planned(store, planned)
    (store.scenes_dir / "beta.md").unlink()                   # the person, after the crash

    with pytest.warns(recovery.RecoveryWarning, match="scenes/beta.md"):
        recovery.recover(store, repo)

    assert not (store.scenes_dir / "beta.md").exists()
    assert "scenes/beta.md" not in repo.git.ls_files()
    assert clean(repo) == ""


def test_files_holding_the_planned_text_or_heads_are_rolled_back_without_a_word(tmp_path):
    store, repo = hand_written_store(tmp_path)
    head = repo.head.commit.hexsha
    state = store.load_state()
    planned = {"scenes/alpha.md": scene("Alpha, batch.", "Alpha from the batch."),  # written
               "scenes/beta.md": None,                        # deleted by the batch
               "scenes/gamma.md": scene("Gamma.", "Not written before the crash."),
               ".scene-engine/state.json": render_state(state.model_copy(
                   update={"batch": 1}))}
    recovery.begin(store, planned, repo)
    write_planned(store, {k: v for k, v in planned.items() if k != "scenes/gamma.md"})

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = recovery.recover(store, repo)

    assert sorted(restored) == sorted(planned)
    assert repo.head.commit.hexsha == head                    # no hand-edit commit
    assert (store.scenes_dir / "alpha.md").read_text(encoding="utf-8") == scene(
        "Alpha.", "Alpha body.")
    assert (store.scenes_dir / "beta.md").exists()
    assert not (store.scenes_dir / "gamma.md").exists()
    assert store.load_state() == state
    assert clean(repo) == ""


def test_an_old_marker_without_planned_hashes_rolls_back_every_path_as_before(tmp_path):
    store, repo = hand_written_store(tmp_path)
    marker = store.meta_dir / "run" / "intent.json"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"head": repo.head.commit.hexsha, "pid": 1,
                                  "paths": ["scenes/alpha.md", "scenes/gamma.md"]}),
                      encoding="utf-8")
    (store.scenes_dir / "alpha.md").write_text(scene("A.", "Changed."), encoding="utf-8")
    (store.scenes_dir / "gamma.md").write_text(scene("G.", "New."), encoding="utf-8")

    assert sorted(recovery.recover(store, repo)) == ["scenes/alpha.md", "scenes/gamma.md"]

    assert (store.scenes_dir / "alpha.md").read_text(encoding="utf-8") == scene(
        "Alpha.", "Alpha body.")
    assert not (store.scenes_dir / "gamma.md").exists()
    assert recovery.pending_intent(store) is None


@pytest.mark.parametrize("text", ['{"head": "3f2a', "[1, 2]", '{"head": "x", "paths": 7}',
                                  '{"head": "x", "paths": [], "planned": [1]}', "\udcff"])
def test_a_torn_or_foreign_marker_is_dropped_and_touches_nothing(tmp_path, text):
    store, repo = hand_written_store(tmp_path)
    marker = store.meta_dir / "run" / "intent.json"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_bytes(text.encode("utf-8", "surrogateescape"))
    edited = scene("Alpha.", "Alpha body.\nA hand edit not committed yet.")
    (store.scenes_dir / "alpha.md").write_text(edited, encoding="utf-8")

    assert recovery.pending_intent(store) == {"head": None, "paths": []}
    assert recovery.recover(store, repo) == []

    assert not marker.exists()
    assert (store.scenes_dir / "alpha.md").read_text(encoding="utf-8") == edited


def test_begin_refuses_the_old_list_of_paths(tmp_path):
    store, repo = hand_written_store(tmp_path)
    with pytest.raises(TypeError):
        recovery.begin(store, ["scenes/alpha.md"], repo)
    assert recovery.pending_intent(store) is None


# ---------------------------------------------------------------- read-only commands

ZANZIBAR = '{"id": "z1", "content": "Zanzibar kayaking trip with Quentin.", "created_at": 1}\n'


def died_in_the_commit_window(tmp_path, monkeypatch) -> tuple[Path, dict]:
    """A store whose second batch (the Zanzibar memory) applied its scenes and died before
    its state and commit; returns (root, what `status --json` said before that batch)."""
    root = tmp_path / "store"
    store = init_store(root)
    add_memories(store, memories(0, 4).encode())
    # All four folded first (some wait a batch for a scene of their own), so the Zanzibar
    # batch holds only the Zanzibar memory, which opens its own scene.
    run_pending(store, make_backend("offline"))
    add_memories(store, ZANZIBAR.encode())
    before = json.loads(runner.invoke(app, ["--dir", str(root), "status", "--json"]).stdout)

    def die(*args, **kwargs):
        raise Died

    with monkeypatch.context() as patch:
        patch.setattr(Store, "save_state", die)
        with pytest.raises(Died):
            run_batch(store, make_backend("offline"), size=4)
    on_disk = " ".join(p.read_text(encoding="utf-8") for p in (root / "scenes").glob("*.md"))
    assert "Zanzibar" in on_disk and recovery.pending_intent(store) is not None
    return root, before


@pytest.mark.parametrize("command", [["status", "--json"], ["list", "--json"],
                                     ["search", "Zanzibar"],
                                     ["recall", "Zanzibar kayaking", "--json"],
                                     ["log"]])
def test_read_only_commands_roll_back_a_dead_batch_before_showing_anything(
        tmp_path, monkeypatch, command):
    root, before = died_in_the_commit_window(tmp_path, monkeypatch)

    result = runner.invoke(app, ["--dir", str(root), *command])

    assert result.exit_code == 0, result.output
    if command[0] == "recall":       # the memory was added, so it is recalled: as a memory
        from_scenes = [p["text"] for p in json.loads(result.stdout)["passages"]
                       if "scene" in p]
        assert not any("Zanzibar" in text for text in from_scenes)
    else:
        assert "Zanzibar" not in result.stdout
    assert "warning" not in result.stderr
    if command[0] == "status":
        assert json.loads(result.stdout) == before          # the Zanzibar memory is pending
    assert recovery.pending_intent(open_store(root)) is None
    assert "Zanzibar" not in " ".join(p.read_text(encoding="utf-8")
                                      for p in (root / "scenes").glob("*.md"))
    assert clean(git.Repo(root)) == ""


def test_doctor_reports_a_dead_batch_and_leaves_it_for_a_writer(tmp_path, monkeypatch):
    root, _ = died_in_the_commit_window(tmp_path, monkeypatch)
    result = runner.invoke(app, ["--dir", str(root), "doctor"])
    assert result.exit_code == 1
    assert "interrupted batch" in result.stdout
    assert recovery.pending_intent(open_store(root)) is not None


def test_a_busy_store_shows_what_is_there_with_one_warning(tmp_path, monkeypatch):
    root, _ = died_in_the_commit_window(tmp_path, monkeypatch)
    monkeypatch.setattr(recovery, "RECOVER_TIMEOUT", 0.3)
    with open(root / ".scene-engine" / "lock", "a") as held:  # as a live batch would hold it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = runner.invoke(app, ["--dir", str(root), "list"])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "may include part of it" in warned[0]
    assert recovery.pending_intent(open_store(root)) is not None
    assert recovery.ensure_recovered(open_store(root)) is True   # lock free again: recovered


def test_a_store_that_cannot_be_written_shows_what_is_there_with_one_warning(
        tmp_path, monkeypatch):
    root, _ = died_in_the_commit_window(tmp_path, monkeypatch)

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(root / ".scene-engine" / "lock"))

    monkeypatch.setattr("scene_engine.store.lock.store_lock", read_only)
    result = runner.invoke(app, ["--dir", str(root), "status"])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "PermissionError" in warned[0]


def test_no_marker_costs_nothing(tmp_path, monkeypatch):
    store, _ = hand_written_store(tmp_path)

    def no_lock(*args, **kwargs):
        raise AssertionError("took the lock without a marker")

    monkeypatch.setattr("scene_engine.store.lock.store_lock", no_lock)
    assert recovery.ensure_recovered(store) is True


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("signal_exc, code", [(KeyboardInterrupt, 130),
                                              (interrupts.Terminated, 143)])
def test_an_interrupted_run_says_what_stays_in_one_line(tmp_path, monkeypatch, signal_exc, code):
    import scene_engine.services.run as batch

    root = tmp_path / "store"
    add_memories(init_store(root), memories(0, 6).encode())
    real = batch.run_pending

    def two_then_interrupt(store, backend, **kwargs):
        real(store, backend, max_batches=2, size=1, on_batch=kwargs.get("on_batch"))
        raise signal_exc

    monkeypatch.setattr(batch, "run_pending", two_then_interrupt)
    result = runner.invoke(app, ["--dir", str(root), "run"])

    assert result.exit_code == code
    assert [line for line in result.stderr.splitlines() if not line.startswith("batch ")] == [
        "interrupted: the batch in progress was rolled back (nothing of it was written); "
        "2 batches committed before the interrupt stay committed; 4 memories pending"]
    assert "Traceback" not in result.output


def test_other_commands_say_interrupted_and_exit_130(tmp_path, monkeypatch):
    root = tmp_path / "store"
    init_store(root)

    def interrupted(store):
        raise KeyboardInterrupt

    monkeypatch.setattr("scene_engine.services.status.status", interrupted)
    result = runner.invoke(app, ["--dir", str(root), "status"])
    assert result.exit_code == 130
    assert result.stderr == "interrupted\n"


# ---------------------------------------------------------------- signals at random moments

def wait_until_working(root: Path, process: subprocess.Popen) -> None:
    """Until the engine holds the store lock (its pid in ``lock.pid``) or has exited.

    An interrupt during the interpreter's start-up, before ``main()`` runs, gets Python's
    own behaviour (nothing has been touched then); the test aims at the engine's work."""
    pid_file = root / ".scene-engine" / "lock.pid"
    deadline = time.monotonic() + 20
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            if pid_file.read_text(encoding="utf-8").strip() == str(process.pid):
                return
        time.sleep(0.005)


def wait_for_group(pgid: int) -> None:
    """Until no process of the group is left (an orphaned git child finishes on its own)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    raise AssertionError("children of the interrupted engine did not exit")


def send(process: subprocess.Popen, kind: str, rng: random.Random) -> None:
    """SIGINT to the whole group, as a terminal's Ctrl-C; SIGTERM to the engine, as `kill`;
    SIGKILL to either."""
    with contextlib.suppress(ProcessLookupError):    # it may have finished already
        if kind == "SIGINT":
            os.killpg(process.pid, signal.SIGINT)
        elif kind == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        elif rng.random() < 0.5:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()


def temp_files(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in root.rglob(".*.tmp") if ".git" not in p.parts]


def hand_edit(root: Path, rng: random.Random, note: str) -> str | None:
    """Append ``note`` as a line to a scene, as a person would: after a SIGKILL mostly to
    one the dead batch wrote. Returns the scene's path, or None when there is no scene."""
    intent = recovery.pending_intent(open_store(root)) or {}
    written = [p for p in intent.get("paths", [])
               if p.startswith("scenes/") and (root / p).is_file()]
    every = sorted(f"scenes/{p.name}" for p in (root / "scenes").glob("*.md"))
    choices = written if written and rng.random() < 0.7 else every
    if not choices:
        return None
    path = rng.choice(choices)
    text = (root / path).read_text(encoding="utf-8")
    (root / path).write_text(text + ("" if text.endswith("\n") else "\n") + note + "\n",
                             encoding="utf-8")
    return path


@pytest.mark.slow
def test_sigint_and_sigterm_at_random_moments_leave_no_half_batch_and_keep_hand_edits(tmp_path):
    rng = random.Random(SEED)
    root = tmp_path / "store"
    add_memories(init_store(root), memories(0, START).encode())
    offered = START
    plan: list[str] = []
    notes: dict[str, str] = {}
    seen = {"finished first": 0, "sent inside a write": 0, "marker after SIGKILL": 0,
            "edit kept by recovery": 0}

    def where() -> str:
        return f"seed={SEED} interrupts so far: {plan}"

    for number in range(INTERRUPTS):
        if rng.random() < 0.25:
            source = tmp_path / f"ingest-{number}.jsonl"
            source.write_text(memories(offered, PER_INGEST), encoding="utf-8")
            offered += PER_INGEST
            args = ["ingest", str(source)]
        else:
            args = ["run"]
        kind = rng.choices(["SIGINT", "SIGTERM", "SIGKILL"], weights=[40, 40, 20])[0]
        delay = round(rng.uniform(0.0, 0.6), 3)
        process = subprocess.Popen([*CLI, "--dir", str(root), *args, "--batch-size", "1"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True, text=True)
        wait_until_working(root, process)
        # Every third interrupt is aimed at a write under way (its marker is there), so some
        # land inside a batch whatever the machine's speed; the others come after ``delay``.
        if number % 3 == 2:
            wait_for_marker(root, process)
        else:
            time.sleep(delay)
        seen["sent inside a write"] += marker_path(root).exists()
        send(process, kind, rng)
        _, err = process.communicate(timeout=60)
        wait_for_group(process.pid)
        plan.append(f"{args[0]}/{kind}@{delay}s->{process.returncode}")

        assert "Traceback" not in err, f"{where()}: {err}"
        expected = {"SIGINT": 130, "SIGTERM": 143, "SIGKILL": -9}[kind]
        assert process.returncode in (0, expected), f"{where()}: {err}"
        seen["finished first"] += process.returncode == 0
        seen["marker after SIGKILL"] += recovery.pending_intent(open_store(root)) is not None
        if kind != "SIGKILL":
            said = [line for line in err.splitlines() if line.startswith("interrupted")]
            assert len(said) == (process.returncode != 0), f"{where()}: {err}"
            assert temp_files(root) == [], f"{where()}: {err}"
            assert recovery.pending_intent(open_store(root)) is None, f"{where()}: {err}"
        assert scene_problems(root) == [], f"{where()}: a scene file is not whole"

        note = f"Hand note {number}: keep me."
        path = hand_edit(root, rng, note)
        next_args = ["status"] if rng.random() < 0.5 else ["run", "--max-batches", "1",
                                                          "--batch-size", "1"]
        after = subprocess.run([*CLI, "--dir", str(root), *next_args], capture_output=True,
                               text=True, timeout=60)
        plan.append(f"hand edit {path} + {next_args[0]}")
        seen["edit kept by recovery"] += "kept as you left it" in after.stderr
        assert after.returncode == 0, f"{where()}: {after.stderr}"
        assert "Traceback" not in after.stderr, where()
        assert recovery.pending_intent(open_store(root)) is None, where()
        if path is None:
            continue
        notes[note] = path
        assert note in (root / path).read_text(encoding="utf-8"), f"{where()}: {after.stderr}"
        if next_args[0] == "run":
            repo = git.Repo(root)
            assert clean(repo) == "", where()
            assert note in repo.git.show(f"HEAD:{path}"), where()
            assert temp_files(root) == [], where()

    # The loop saw what it claims: signals that reached a batch while it was writing.
    assert seen["sent inside a write"] >= 1, f"{where()}: no interrupt landed inside a batch"
    everything = tmp_path / "all.jsonl"
    everything.write_text(memories(0, offered), encoding="utf-8")
    final = subprocess.run([*CLI, "--dir", str(root), "ingest", str(everything),
                            "--batch-size", "10"], capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, f"{where()}: {final.stderr}"
    doctor = subprocess.run([*CLI, "--dir", str(root), "doctor"], capture_output=True,
                            text=True, timeout=60)
    assert doctor.returncode == 0, f"{where()}: {doctor.stdout}"
    assert check_store(open_store(root)) == []
    journal = Journal(root / "memories").all()
    assert sorted(m.id for m in journal) == [f"m{i:04d}" for i in range(offered)], where()
    assert sorted(live_seqs(root)) == list(range(offered)), where()
    repo = git.Repo(root)
    assert clean(repo) == "" and temp_files(root) == [], where()
    committed = repo.git.grep("-h", "Hand note", "HEAD", "--", "scenes")
    for note in notes:                 # every person's line survived, and is committed
        assert note in committed, f"{where()}: {note} ({notes[note]}) lost"
    print(f"interrupt test: seed {SEED}, {INTERRUPTS} interrupts {seen}, {offered} memories; {plan}")


@pytest.mark.parametrize("command", ["add", "ingest"])
def test_an_interrupt_landing_after_an_add_committed_says_the_memories_were_added(
        tmp_path, monkeypatch, command):
    root = tmp_path / "store"
    init_store(root)
    real_end = recovery.end

    def end_then_interrupt(store):
        real_end(store)
        raise KeyboardInterrupt      # the held-back Ctrl-C, delivered as the section ends

    monkeypatch.setattr(recovery, "end", end_then_interrupt)
    result = CheckedRunner().invoke(app, ["--dir", str(root), command, "-"], input=memories(0, 3))
    assert open_store(root).load_state().next_seq == 3
    if command == "add":
        assert result.exit_code == 0, result.output
        assert "added 3 memories (the add was committed before the interrupt)" in result.output
    else:
        assert result.exit_code == 130
        assert "interrupted: 3 memories were added; no batch ran" in result.output


def test_an_interrupt_before_an_add_committed_says_nothing_was_added(tmp_path, monkeypatch):
    root = tmp_path / "store"
    init_store(root)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(recovery, "begin", interrupted)
    result = CheckedRunner().invoke(app, ["--dir", str(root), "add", "-"], input=memories(0, 3))
    assert result.exit_code == 130 and "interrupted: nothing was added" in result.output
    assert open_store(root).load_state().next_seq == 0


def test_a_git_error_caused_by_the_same_ctrl_c_is_reported_as_the_interrupt(
        tmp_path, monkeypatch):
    from scene_engine.batch.contract import BatchError
    from scene_engine.services import run as batch

    root = tmp_path / "store"
    add_memories(init_store(root), memories(0, 2).encode())

    def git_killed_by_ctrl_c(*args, **kwargs):
        monkeypatch.setattr(interrupts, "_received", [signal.SIGINT])   # the handler ran
        raise BatchError("batch 1: git commit failed: killed by signal 2")

    monkeypatch.setattr(batch, "run_pending", git_killed_by_ctrl_c)
    result = CheckedRunner().invoke(app, ["--dir", str(root), "run"])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output and "git commit failed" not in result.output
