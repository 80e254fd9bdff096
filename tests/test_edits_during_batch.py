"""A line a person types into a scene while a batch is being saved stays theirs (a newcomer's
trial: lines typed during `scenes run` were lost, or taken into the engine's commit and then
condensed as if the engine had written them). docs/DESIGN.md "A batch", step 8."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.store import history

runner = CheckedRunner()
TYPED = "- 2026-12-30: a line the person typed while the batch was saved"


def cli(root, *args, stdin=None):
    return runner.invoke(app, ["--dir", str(root), *args], input=stdin)


def add(root, *contents, day="2026-03-0"):
    rows = [{"id": f"m{day}{i}", "content": c, "created_at": f"{day}{i % 9 + 1}T10:00:00+00:00"}
            for i, c in enumerate(contents)]
    assert cli(root, "add", "-", stdin="\n".join(json.dumps(r) for r in rows)).exit_code == 0


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    add(root, "Started a pottery class on Tuesdays at the community studio.",
        "Made my first pottery bowl at the studio; it came out lopsided.",
        "The pottery teacher showed me how to centre clay on the wheel.")
    assert cli(root, "run").exit_code == 0
    return root


def test_a_line_typed_after_the_write_is_not_in_the_batch_commit_and_stays_the_persons(
        store, monkeypatch):
    add(store, "Glazed two pottery mugs in blue at the studio.",
        "Fired the pottery mugs in the studio kiln; one cracked.", day="2026-04-0")
    real = history.commit_files
    typed_into = []

    def person_types_then_commit(repo, message, files, *args, **kwargs):
        if message.startswith("batch") and not typed_into:
            scene = sorted(f for f in files if f.startswith("scenes/")
                           and (store / f).exists())[0]
            with open(store / scene, "a", encoding="utf-8") as file:
                file.write(TYPED + "\n")
            typed_into.append(scene)
        return real(repo, message, files, *args, **kwargs)

    monkeypatch.setattr(history, "commit_files", person_types_then_commit)
    assert cli(store, "run").exit_code == 0
    monkeypatch.undo()
    (scene,) = typed_into
    repo = git.Repo(store)
    recent = list(repo.iter_commits(max_count=5))
    batch = next(c for c in recent if c.message.startswith("batch"))
    assert TYPED not in (batch.tree / scene).data_stream.read().decode()   # not the engine's
    assert TYPED in (store / scene).read_text("utf-8")                      # kept on disk
    # Committed as the person's hand edit (the run commits them when it ends), as typed.
    hand = [c for c in recent[:recent.index(batch)] if c.summary == f"hand edit: {scene[7:]}"]
    assert hand and TYPED in (hand[0].tree / scene).data_stream.read().decode()

    # The next batch keeps the line as the person typed it.
    add(store, "Signed up for the advanced pottery course in May.", day="2026-04-1")
    assert cli(store, "run").exit_code == 0
    assert TYPED in (store / scene).read_text("utf-8")
    assert "ok" in cli(store, "doctor").output


def test_the_batch_commit_holds_exactly_what_the_batch_wrote(store):
    add(store, "Bought a second-hand pottery wheel for the balcony.", day="2026-05-0")
    assert cli(store, "run").exit_code == 0
    repo = git.Repo(store)
    assert repo.head.commit.message.startswith("batch")
    assert not repo.git.status("--porcelain")      # what is on disk is what was committed
    assert not repo.git.diff("HEAD")


def test_a_line_typed_while_the_backend_works_makes_the_batch_run_again_on_it(
        store, monkeypatch):
    from scene_engine.offline.backend import OfflineBackend

    add(store, "Glazed two pottery mugs in blue at the studio.",
        "Fired the pottery mugs in the studio kiln; one cracked.", day="2026-04-0")
    (scene,) = sorted((store / "scenes").glob("*.md"))
    real = OfflineBackend.run
    attempts = []

    def person_types_then_fold(self, job):
        if not attempts:                 # after the batch read the scenes, before it writes
            with open(scene, "a", encoding="utf-8") as file:
                file.write(TYPED + "\n")
        attempts.append(job.number)
        return real(self, job)

    monkeypatch.setattr(OfflineBackend, "run", person_types_then_fold)
    assert cli(store, "run").exit_code == 0
    assert len(attempts) == 2            # the first attempt's write conflicted: run again
    lines = scene.read_text("utf-8").splitlines()
    assert TYPED in lines                # as typed: no full stop added, not rolled up
    assert "Fired the pottery mugs" in scene.read_text("utf-8")
    repo = git.Repo(store)
    recent = list(repo.iter_commits(max_count=4))
    assert recent[0].message.startswith("batch") and "typed" not in recent[0].message
    assert recent[1].summary == f"hand edit: {scene.name}"
    assert TYPED in (recent[1].tree / f"scenes/{scene.name}").data_stream.read().decode()


def test_no_scene_the_batch_read_is_written_over_a_line_typed_since(tmp_path):
    # Only the few scenes shown in a model's prompt had the text the batch read as their
    # baseline; any other was checked against the file as the backend read it later, so a
    # line typed in between passed as the engine's (the batch's authorship had not seen it).
    from sandbox import ConflictError
    from scene_engine.batch.transaction import RELATED_SCENES, build_job
    from scene_engine.store.memories import Memory
    from scene_engine.store.store import open_store

    root = tmp_path / "s"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    topics = ["pottery studio clay", "garden tomatoes", "marathon training", "piano lessons",
              "tax return", "kitchen renovation"]
    for topic in topics:
        (root / "scenes" / f"{topic.split()[0]}.md").write_text(
            f"---\nsummary: {topic}\n---\n## Timeline (UTC)\n- 2026-01-02: Notes on {topic}.\n",
            "utf-8")
    history.commit_files(git.Repo(root), "hand edit: import",
                         [f"scenes/{t.split()[0]}.md" for t in topics], by_person=True)
    store = open_store(root)
    memory = Memory(seq=1, id="p1", content="Made a lopsided bowl at the pottery studio clay "
                    "class.", created_at=datetime(2026, 3, 1, tzinfo=UTC))
    job = build_job(store, 1, [memory])
    unshown = sorted(n for n in job.scene_texts if n not in job.context.shown)
    assert len(unshown) >= len(topics) - RELATED_SCENES
    name = unshown[0]
    with open(root / "scenes" / name, "a", encoding="utf-8") as file:
        file.write(TYPED + "\n")
    read = job.box.execute("read_file", {"path": name})
    assert TYPED in read                 # the backend reads the file as it is now
    job.box.execute("write_to_file", {"path": name, "content": read + "- 2026-03-01: more\n"})
    with pytest.raises(ConflictError):
        job.box.apply()
    assert (root / "scenes" / name).read_text("utf-8").endswith(TYPED + "\n")


def test_a_persons_commit_that_took_a_batchs_files_is_named_by_doctor_with_its_fix(store):
    # A backup plugin's `git add -A; git commit` beside a run can take a batch's files into
    # the person's commit: doctor says the memories belong to no batch, and what fixes it.
    import subprocess

    add(store, "Glazed two pottery mugs in blue at the studio.", day="2026-04-0")
    assert cli(store, "run").exit_code == 0
    person = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
              "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org"}
    for command in (["git", "reset", "-q", "--soft", "HEAD~1"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "-m", "vault backup"]):
        subprocess.run(command, cwd=store, check=True, env={**os.environ, **person})
    doctor = cli(store, "doctor")
    assert doctor.exit_code == 1
    assert "belongs to no live batch" in doctor.output and "`scenes repair`" in doctor.output
    assert cli(store, "repair").exit_code == 0
    assert cli(store, "doctor").exit_code == 0


def _git(root, *args):
    person = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.org",
              "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.org"}
    import subprocess

    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **person})


def test_a_scene_untracked_in_the_persons_index_is_left_so_with_no_empty_commit(store):
    (scene,) = sorted((store / "scenes").glob("*.md"))
    head = git.Repo(store).head.commit.hexsha
    assert _git(store, "rm", "-q", "--cached", f"scenes/{scene.name}").returncode == 0
    assert cli(store, "run").exit_code == 0          # nothing pending: only hand edits
    assert git.Repo(store).head.commit.hexsha == head  # no "hand edit" commit of no change
    staged = _git(store, "diff", "--cached", "--name-status").stdout
    assert staged.strip() == f"D\tscenes/{scene.name}"   # the person's index as they left it


def test_a_conflict_git_has_not_resolved_stops_the_batch_and_is_left_as_it_is(store):
    (scene,) = sorted((store / "scenes").glob("*.md"))
    with open(scene, "a", encoding="utf-8") as file:
        file.write("- 2026-05-01: a line of mine, stashed\n")
    assert _git(store, "stash", "-q").returncode == 0
    with open(scene, "a", encoding="utf-8") as file:
        file.write("- 2026-05-01: another line, committed\n")
    assert _git(store, "commit", "-qam", "my own commit").returncode == 0
    assert _git(store, "stash", "pop").returncode != 0       # a conflict: no merge under way
    assert _git(store, "status", "--porcelain").stdout.startswith("UU")
    add(store, "Glazed two pottery mugs in blue at the studio.", day="2026-06-0")
    result = cli(store, "run")
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "conflict git has not resolved" in errors[0], result.output
    assert _git(store, "status", "--porcelain").stdout.startswith("UU")   # still theirs
    assert "<<<<<<<" in scene.read_text("utf-8")
    log = _git(store, "log", "--format=%s", "-3").stdout
    assert "hand edit" not in log.splitlines()[0]


def test_a_name_or_line_holding_control_characters_stays_one_line_where_one_line_is_a_record(
        store):
    # A newcomer's scene named "new<newline>line.md" split its row of `scenes list` (one
    # tab-separated line a scene) and the hand edit's commit subject.
    odd = store / "scenes" / "new\nline\t.md"
    odd.write_text("---\nsummary: odd\n---\n## Notes\n- a line with \x1b[31mred\x1b[0m\n",
                   "utf-8")
    assert cli(store, "run").exit_code == 0          # commits it as a hand edit
    subject = git.Repo(store).head.commit.message.split("\n", 1)[0]
    assert subject.startswith("hand edit:") and "new\\nline\\t.md" in subject
    listed = cli(store, "list").stdout.splitlines()
    scenes = sorted((store / "scenes").glob("*.md"))
    assert len(listed) == 1 + len(scenes)            # the header, then one line a scene
    assert any(line.startswith("new\\nline\\t.md\t") for line in listed)
    blamed = cli(store, "blame", "new\nline\t").stdout
    assert "\x1b" not in blamed and "\\x1b[31mred" in blamed


def test_a_scene_this_user_may_not_read_is_left_alone_with_the_reason(store, monkeypatch):
    # A newcomer's `chmod 000` scene (as a user without root's override) failed every batch
    # with git's raw output, and list called it "not readable as UTF-8". Root reads any
    # file, so the refusal is simulated where the engine asks.
    import scene_engine.batch.transaction as transaction
    import scene_engine.services.listing as listing
    import scene_engine.store.history as store_history

    locked = store / "scenes" / "locked.md"
    locked.write_text("---\nsummary: private\n---\n- 2026-01-01: mine\n", "utf-8")
    real_read, real_access = transaction.read_regular_text, os.access

    def refused(path, *args, **kwargs):
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(path, *args, **kwargs)

    def access(path, mode, *args, **kwargs):
        return Path(path).name != "locked.md" and real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(transaction, "read_regular_text", refused)
    monkeypatch.setattr(store_history.os, "access", access)
    add(store, "Glazed two pottery mugs in blue at the studio.", day="2026-04-0")
    with pytest.warns(UserWarning, match="locked.md alone: it cannot be read"):
        from scene_engine.batch.transaction import run_batch
        from scene_engine.services.backends import make_backend
        from scene_engine.store.store import open_store

        assert run_batch(open_store(store), make_backend("offline")) is not None
    assert "locked.md" not in git.Repo(store).git.ls_files()      # never committed
    import scene_engine.store.scene as scene_module

    real_scene = scene_module.read_scene
    monkeypatch.setattr(scene_module, "read_scene", lambda path, *a, **k: refused(path) if
                        Path(path).name == "locked.md" else real_scene(path, *a, **k))
    monkeypatch.setattr(listing.os, "access", access)
    listed = cli(store, "list").stdout
    assert "locked.md\t0\t\t(cannot be opened: no permission to read it" in listed


def test_a_scene_deleted_while_the_backend_works_makes_the_batch_run_again(store, monkeypatch):
    # A newcomer's `rm` of a scene during `scenes run` stopped the run: the backend's write
    # of the scene it had read was refused ("does not exist").
    from scene_engine.offline.backend import OfflineBackend

    add(store, "Glazed two pottery mugs in blue at the studio.",
        "Fired the pottery mugs in the studio kiln; one cracked.", day="2026-04-0")
    (scene,) = sorted((store / "scenes").glob("*.md"))
    real = OfflineBackend.run
    attempts = []

    def person_deletes_then_fold(self, job):
        attempts.append(job.number)
        if len(attempts) == 1:
            job.box.execute("read_file", {"path": scene.name})
            scene.unlink()
        return real(self, job)

    monkeypatch.setattr(OfflineBackend, "run", person_deletes_then_fold)
    result = cli(store, "run")
    assert result.exit_code == 0, result.output
    assert len(attempts) >= 2
    subjects = git.Repo(store).git.log("--format=%s", "-4")
    assert f"hand edit: {scene.name}" in subjects                # the deletion is theirs
    assert cli(store, "status", "--json").exit_code == 0
    assert json.loads(cli(store, "status", "--json").stdout)["pending"] == 0


def test_a_batch_waits_out_another_gits_short_hold_on_the_index(store):
    # A backup plugin's commit holds .git/index.lock for milliseconds; a run that met it
    # stopped ("another git is at work").
    import threading

    from scene_engine.batch.transaction import run_batch
    from scene_engine.services.backends import make_backend
    from scene_engine.store.store import open_store

    add(store, "Glazed two pottery mugs in blue at the studio.", day="2026-04-0")
    opened, backend = open_store(store), make_backend("offline")
    lock = store / ".git" / "index.lock"
    held = open(lock, "w")  # noqa: SIM115 - held open as a git at work holds it, past this block

    def release():
        held.close()
        lock.unlink()

    released = threading.Timer(0.3, release)
    released.start()
    try:
        assert run_batch(opened, backend) is not None
    finally:
        released.join()
    assert not lock.exists()
    assert json.loads(cli(store, "status", "--json").stdout)["pending"] == 0


def test_what_a_terminal_would_obey_is_shown_not_obeyed_in_every_face(store):
    # A second newcomer: search split a record on a name's newline and printed a line's
    # window-title sequence raw; doctor split its problem lines; show printed CR, BEL and
    # the one-character CSI (U+009B); trace said a byte of another encoding as \udce9.
    import subprocess
    import sys

    weird = store / "scenes" / "we\x1b[31mird\tna\nme.md"
    weird.write_text("---\nsummary: fine\n---\n- 2026-12-30: esc line \x1b]0;TITLE\x07 osc\n",
                     "utf-8")
    odd = store / "scenes" / "cr.md"
    odd.write_text("---\nsummary: ok\n---\n- 2026-12-30: carriage\rreturn, bell\x07, "
                   "\x9b31m c1 osc\n", "utf-8")
    assert cli(store, "run").exit_code == 0
    found = cli(store, "search", "osc").stdout
    assert "\x1b" not in found and "\x07" not in found and "\x9b" not in found
    for line in found.splitlines():
        assert line.startswith(("    ", "we\\x1b[31mird\\tna\\nme.md (heat", "cr.md (heat")) \
            or not line.strip() or "match" in line, line
    doctor = cli(store, "doctor").stdout
    assert all(line.startswith(("problem: ", "doctor: ")) for line in doctor.splitlines())
    shown = cli(store, "show", "cr").stdout
    assert "carriage\\rreturn, bell\\x07, \\x9b31m" in shown and "\r" not in shown
    command = [sys.executable, "-c", "from scene_engine.cli.entry import main; main()"]
    done = subprocess.run([*command, "--dir", str(store), "trace", b"caf\xe9"],
                          capture_output=True)
    assert b"caf\\xe9" in done.stderr and b"udce9" not in done.stderr, done.stderr
