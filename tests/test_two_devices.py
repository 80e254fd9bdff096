"""Two copies of one store merged with git, as docs/guides/notes.md's "Two devices" says (issue 21).

Real clones, a real ``git pull``, the person's choices scripted: the journal's conflict kept
on both sides (in either order), ``.scene-engine/`` taken from either side; then ``scenes
repair`` and ``scenes run``. Every memory must end in exactly one batch in effect, in a scene
that states it, and ``doctor`` must be clean.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner

from scene_engine.batch.accounting import Ledger
from scene_engine.cli import app
from scene_engine.store import history

runner = CheckedRunner()
PERSON = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"]
ON_B = [("b1", "Bought a red kayak for the lake."), ("b2", "Joined a rowing club on Sundays."),
        ("b3", "Paddled across the lake at dawn with the rowing club.")]
ON_A = [("a1", "Ordered a standing desk for the office."),
        ("a2", "Started learning the cello with a teacher.")]


def sh(folder: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *PERSON, *args], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0 or not check, done.stderr
    return done.stdout


def ok(*args: str, stdin: str | None = None):
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exit_code == 0, result.output
    return result


def jsonl(rows: list[tuple[str, str]], day: int) -> str:
    return "".join(json.dumps({"id": i, "content": c,
                               "created_at": f"2026-02-{day + n:02d}T09:00:00Z"}) + "\n"
                   for n, (i, c) in enumerate(rows))


def queue_pair(root: Path, pair: str, left: str, right: str) -> None:
    """An event in the extraction ledger (``dedupe.jsonl``), as a review queue writes it."""
    from scene_engine.extraction.events import new_event, write
    from scene_engine.store.store import open_store

    write(open_store(root), [], [new_event("queued", pair=pair, left=left, right=right,
                                           reason="similar", similarity=0.9)],
          f"extract: queue {pair}")


def two_devices(tmp_path: Path, a_folds: bool, review: bool = False) -> tuple[Path, Path]:
    """Device A (returned first) and a clone B: both add memories after the clone; B folds
    its own (two batches), A folds its own too when ``a_folds``; with ``review`` each queues
    a pair of its memories for review (the extraction ledger)."""
    one, two = tmp_path / "a", tmp_path / "b"
    one.mkdir()
    sh(one, "init", "-q", "-b", "main")
    ok("init", str(one))
    ok("--dir", str(one), "ingest", "-", stdin=jsonl([("base", "Has a cat named Miso.")], 1))
    subprocess.run(["git", "clone", "-q", str(one), str(two)], check=True)
    ok("--dir", str(two), "add", "-", stdin=jsonl(ON_B, 2))
    ok("--dir", str(two), "run", "--batch-size", "2")
    if review:
        queue_pair(two, "p-b", "b1", "b3")
    ok("--dir", str(one), "add", "-", stdin=jsonl(ON_A, 10))
    if a_folds:
        ok("--dir", str(one), "run")
    if review:
        queue_pair(one, "p-a", "a1", "a2")
    return one, two


def merge(one: Path, two: Path, state_from: str, a_lines_first: bool) -> None:
    """Pull B into A and resolve as the README says: each JSONL file of the journal and the
    extraction ledger keeps both sides (A's new lines first or B's), every other conflicted
    file and ``state.json`` come from ``state_from`` ("A" = this device, "B" = the other)."""
    sh(one, "pull", "-q", "--no-rebase", "--no-edit", str(two), "main", check=False)
    for path in sh(one, "diff", "--name-only", "--diff-filter=U").split():
        if path.endswith(".jsonl"):
            base = sh(one, "show", f":1:{path}", check=False).splitlines()
            ours = [line for line in sh(one, "show", f":2:{path}").splitlines()
                    if line not in base]
            theirs = [line for line in sh(one, "show", f":3:{path}").splitlines()
                      if line not in base]
            lines = base + (ours + theirs if a_lines_first else theirs + ours)
            (one / path).write_text("".join(line + "\n" for line in lines))
        else:
            sh(one, "checkout", "--ours" if state_from == "A" else "--theirs", "--", path)
    # git may merge state.json cleanly into a mix of both; the person takes one side whole.
    sh(one, "checkout", "HEAD" if state_from == "A" else "MERGE_HEAD", "--",
       ".scene-engine/state.json")
    sh(one, "add", "-A")
    sh(one, "commit", "-q", "-m", "vault backup: merge")


def live_ledger_ids(root: Path) -> Counter:
    """How many batches in effect took each memory id (from their ledgers in git)."""
    repo = git.Repo(root)
    found: Counter = Counter()
    for commit in history.live_batches(repo).values():
        path = history.trailers(commit.message)["Ledger"]
        ledger = Ledger.parse((commit.tree / path).data_stream.read().decode())
        found.update(e.id for e in ledger.entries)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("a_folds", [False, True], ids=["B-folded", "both-folded"])
@pytest.mark.parametrize("a_lines_first", [True, False], ids=["A-lines-first", "B-lines-first"])
@pytest.mark.parametrize("state_from", ["A", "B"], ids=["A-state", "B-state"])
def test_every_memory_is_folded_exactly_once_whatever_side_the_merge_kept(
        tmp_path, state_from, a_lines_first, a_folds):
    one, two = two_devices(tmp_path, a_folds)
    merge(one, two, state_from, a_lines_first)

    refused = runner.invoke(app, ["--dir", str(one), "run"])
    assert refused.exit_code == 1 and "scenes repair" in refused.output, refused.output
    repaired = json.loads(ok("--dir", str(one), "repair", "--json").stdout)
    assert repaired["repaired"] and repaired["memories"] == 6, repaired
    ok("--dir", str(one), "run")

    doctor = runner.invoke(app, ["--dir", str(one), "doctor"])
    assert doctor.exit_code == 0, doctor.output
    ids = ["base", *(i for i, _ in ON_B), *(i for i, _ in ON_A)]
    assert live_ledger_ids(one) == Counter(ids)          # each in one batch in effect, once
    status = json.loads(ok("--dir", str(one), "status", "--json").stdout)
    assert status["memories"] == 6 and status["pending"] == 0
    contents = dict(ON_A + ON_B)
    for memory_id, content in contents.items():
        trace = json.loads(ok("--dir", str(one), "trace", memory_id, "--json").stdout)
        assert trace["status"] == "processed", trace
        # The scene its batch names states this memory (not the other device's line).
        assert trace["lines"] and all(content.split()[1] in row["text"]
                                      for row in trace["lines"]), (memory_id, trace)
    assert json.loads(ok("--dir", str(one), "repair", "--json").stdout)["repaired"] is False


@pytest.mark.slow
@pytest.mark.parametrize("a_lines_first", [True, False], ids=["A-lines-first", "B-lines-first"])
def test_both_review_queues_survive_when_the_extraction_ledger_keeps_both_sides(
        tmp_path, a_lines_first):
    one, two = two_devices(tmp_path, a_folds=True, review=True)
    merge(one, two, "B", a_lines_first)
    ok("--dir", str(one), "repair")
    ok("--dir", str(one), "run")
    doctor = runner.invoke(app, ["--dir", str(one), "doctor"])
    assert doctor.exit_code == 0, doctor.output
    queued = [json.loads(line) for line in
              (one / ".scene-engine" / "dedupe.jsonl").read_text().splitlines()]
    assert sorted(e["pair"] for e in queued) == ["p-a", "p-b"]
    assert [e["n"] for e in queued] == [1, 2]                 # numbered anew, one each
    assert live_ledger_ids(one) == Counter(["base", "a1", "a2", "b1", "b2", "b3"])


@pytest.mark.slow
def test_doctor_flags_a_ledger_that_names_another_memory_than_its_journal_line(tmp_path):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=jsonl(ON_A[:1], 1))
    ok("--dir", str(root), "add", "-", stdin=jsonl(ON_A[1:], 2))
    # The two lines swap memories but keep their numbers (as a renumbering that ignored
    # what each batch took leaves them): the numbering is whole, the ledger is not.
    journal = root / "memories" / "00000.jsonl"
    first, second = (json.loads(line) for line in journal.read_text().splitlines())
    swapped = [{**second, "seq": 0}, {**first, "seq": 1}]
    journal.write_text("".join(json.dumps(r) + "\n" for r in swapped))
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "journal edited by hand")

    doctor = runner.invoke(app, ["--dir", str(root), "doctor", "--json"])
    assert doctor.exit_code == 1, doctor.output
    problems = json.loads(doctor.stdout)["problems"]
    assert any("batch 1 took memory a1 as #0" in p and "a2" in p for p in problems), problems
    a2 = json.loads(ok("--dir", str(root), "trace", "a2", "--json").stdout)
    assert not [e for e in a2["events"] if e["kind"] == "batch"], a2   # batch 1 took a1

    repaired = json.loads(ok("--dir", str(root), "repair", "--json").stdout)
    assert repaired["repaired"] and repaired["pending_again"] == 1, repaired
    ok("--dir", str(root), "run")
    assert runner.invoke(app, ["--dir", str(root), "doctor"]).exit_code == 0
    assert live_ledger_ids(root) == Counter(["a1", "a2"])


def test_status_warns_while_a_merged_journal_waits_for_repair(tmp_path):
    one, two = two_devices(tmp_path, a_folds=False)
    merge(one, two, "A", a_lines_first=True)
    shown = runner.invoke(app, ["--dir", str(one), "status", "--json"])
    assert shown.exit_code == 0, shown.output
    warnings = json.loads(shown.stdout)["warnings"]
    assert any("out of step" in w and "scenes repair" in w for w in warnings), warnings
    ok("--dir", str(one), "repair")
    assert json.loads(ok("--dir", str(one), "status", "--json").stdout)["warnings"] == []


def test_a_kept_ledger_that_is_neither_side_s_stops_repair_and_names_the_file(tmp_path):
    one, two = two_devices(tmp_path, a_folds=True)
    merge(one, two, "A", a_lines_first=True)
    ledger = one / ".scene-engine" / "ledger" / "000002.json"
    ledger.write_text(ledger.read_text()[:40])           # torn in the merge
    sh(one, "commit", "-q", "-am", "vault backup")
    head = sh(one, "rev-parse", "HEAD")
    refused = runner.invoke(app, ["--dir", str(one), "repair"])
    assert refused.exit_code == 1, refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)
    assert "000002.json is neither copy's ledger" in refused.stderr, refused.output
    assert sh(one, "rev-parse", "HEAD") == head                     # nothing written
    side = refused.stderr.split("SHA one of ")[1].split(",")[0].strip()
    sh(one, "checkout", side, "--", ".scene-engine/ledger/000002.json")
    sh(one, "commit", "-q", "-am", "took one side's ledger")
    ok("--dir", str(one), "repair")
    ok("--dir", str(one), "run")
    assert runner.invoke(app, ["--dir", str(one), "doctor"]).exit_code == 0
    assert set(live_ledger_ids(one).values()) == {1}               # each memory folded once
    assert set(live_ledger_ids(one)) == {"base", *(i for i, _ in ON_A), *(i for i, _ in ON_B)}


def test_doctor_reads_the_ledger_file_as_it_is_not_only_as_its_batch_committed_it(tmp_path):
    root = tmp_path / "store"
    ok("init", str(root))
    ok("--dir", str(root), "ingest", "-", stdin=jsonl(ON_A, 1))
    path = root / ".scene-engine" / "ledger" / "000001.json"
    first = ON_A[0][0]
    path.write_text(path.read_text().replace(f'"seq": 0, "id": "{first}"',
                                             f'"seq": 1, "id": "{first}"'))
    sh(root, "commit", "-q", "-am", "ledger edited by hand")
    doctor = runner.invoke(app, ["--dir", str(root), "doctor", "--json"])
    assert doctor.exit_code == 1, doctor.output
    problems = json.loads(doctor.stdout)["problems"]
    assert any("000001.json differs from what batch 1 committed" in p for p in problems), problems
    assert any(f"took memory {first} as #1" in p for p in problems), problems


@pytest.mark.parametrize("a_folds", [False, True], ids=["B-folded", "both-folded"])
def test_a_merge_committed_with_its_conflict_markers_is_repaired_keeping_both_sides(
        tmp_path, a_folds):
    one, two = two_devices(tmp_path, a_folds=a_folds)
    sh(one, "pull", "-q", "--no-rebase", "--no-edit", str(two), "main", check=False)
    sh(one, "add", "-A")                   # as an editor's git plugin commits: markers and all
    sh(one, "commit", "-q", "-m", "vault backup")
    found = runner.invoke(app, ["--dir", str(one), "search", "cello", "--memories"])
    assert found.exit_code == 0 and "conflict marker" in found.stderr, found.output
    assert "scenes repair" in found.stderr and "git checkout" not in found.stderr, found.stderr
    shown = runner.invoke(app, ["--dir", str(one), "status", "--json"])   # state.json too
    assert "conflict markers" in shown.output and "scenes repair" in shown.output, shown.output
    repaired = runner.invoke(app, ["--dir", str(one), "repair", "--json"])
    assert repaired.exit_code == 0, repaired.output
    assert "conflict markers" in json.loads(repaired.stdout)["problem"]
    ok("--dir", str(one), "run")
    assert runner.invoke(app, ["--dir", str(one), "doctor"]).exit_code == 0
    every = {"base", *(i for i, _ in ON_A), *(i for i, _ in ON_B)}
    assert live_ledger_ids(one) == Counter(every)                  # each folded exactly once
    for memory_id, words in [*ON_A, *ON_B]:
        hits = json.loads(ok("--dir", str(one), "search", words.split()[-1].strip("."),
                             "--memories", "--json").stdout)
        assert memory_id in {h["id"] for h in hits}, (memory_id, hits)
