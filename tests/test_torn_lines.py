"""One line of the journal that is not a whole record (issue 21): a half-written line at the
end or in the middle, bytes that are not UTF-8, JSON that is not an object. Every other
memory stays findable (a reindex, a fresh clone with no index), and every read that depends
on the journal names the bad line by its line in the file, with ``--json`` too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.mcpserver import tools
from scene_engine.store.store import open_store

runner = CheckedRunner()
MEMORIES = [("m1", "Has a cat named Miso."), ("m2", "Bought a red kayak for the lake."),
            ("m3", "Joined a rowing club on Sundays."), ("m4", "Plays the violin in a trio.")]


def scenes(root: Path, *args: str, stdin: str | None = None):
    result = runner.invoke(app, ["--dir", str(root), *args], input=stdin)
    assert "Traceback" not in result.output
    return result


def make_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    rows = [{"id": i, "content": c, "created_at": f"2026-01-0{n + 1}T09:00:00Z"}
            for n, (i, c) in enumerate(MEMORIES)]
    added = scenes(root, "add", "-", stdin="".join(json.dumps(r) + "\n" for r in rows))
    assert added.exit_code == 0, added.output
    return root


def torn_tail(lines: list[bytes]) -> tuple[list[bytes], int, str]:
    """A half-written line appended after a blank line: line 6 of the file, the 5th record."""
    return lines + [b"", b'{"seq": 4, "id": "m5", "content": "Pai'], 6, ""


def torn_middle(lines: list[bytes]) -> tuple[list[bytes], int, str]:
    return [lines[0], lines[1][:30], *lines[2:]], 2, "m2"


def not_utf8(lines: list[bytes]) -> tuple[list[bytes], int, str]:
    return [lines[0], lines[1].replace(b"kayak", b"kay\xff\xfek"), *lines[2:]], 2, "m2"


def not_an_object(lines: list[bytes]) -> tuple[list[bytes], int, str]:
    return [lines[0], lines[1], b'["seq", 2, "Joined a rowing club"]', lines[3]], 3, "m3"


@pytest.mark.slow
@pytest.mark.parametrize("damage", [torn_tail, torn_middle, not_utf8, not_an_object])
def test_a_bad_journal_line_hides_only_itself_and_every_read_names_it(tmp_path, damage):
    root = make_store(tmp_path)
    journal = root / "memories" / "00000.jsonl"
    lines, bad, lost = damage(journal.read_bytes().rstrip(b"\n").split(b"\n"))
    journal.write_bytes(b"\n".join(lines) + b"\n")
    where = f"memories/00000.jsonl line {bad} "
    kept = [(i, c) for i, c in MEMORIES if i != lost]

    reindex = scenes(root, "reindex")
    assert reindex.exit_code == 0 and where in reindex.stderr, reindex.output
    assert f"{len(kept)} memories" in reindex.stdout
    subprocess.run(["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.org",
                    "commit", "-qam", "synced"], cwd=root, check=True)
    clone = tmp_path / "clone"                  # a fresh clone has no index at all
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)

    for store in (root, clone):
        for memory_id, content in kept:
            word = content.split()[-1].rstrip(".")
            found = scenes(store, "search", "--memories", word)
            assert found.exit_code == 0 and memory_id in found.stdout, found.output
            assert where in found.stderr, found.output
            hits = json.loads(scenes(store, "search", "--memories", word, "--json").stdout)
            assert [h["id"] for h in hits] == [memory_id]
            recall = scenes(store, "recall", word, "--json")
            data = json.loads(recall.stdout)
            assert content in data["text"] and where in data["warning"], recall.output
            mcp = tools.search(open_store(store), word, memories=True)
            assert [h["id"] for h in mcp["hits"]] == [memory_id] and where in mcp["warning"]
            assert where in tools.recall(open_store(store), word)["warning"]
        status = json.loads(scenes(store, "status", "--json").stdout)
        assert [w for w in status["warnings"] if where in w], status
        assert where in scenes(store, "status").stderr
        doctor = scenes(store, "doctor", "--json")
        assert doctor.exit_code == 1
        assert [p for p in json.loads(doctor.stdout)["problems"] if where in p], doctor.stdout
        run = scenes(store, "run")       # a write waits for the line to be fixed, and says so
        assert run.exit_code == 1 and where in run.output, run.output

    subprocess.run(["git", "checkout", "HEAD~1", "--", "memories/00000.jsonl"], cwd=clone,
                   check=True)          # the way back the message gives
    assert scenes(clone, "status", "--json").exit_code == 0
    assert json.loads(scenes(clone, "status", "--json").stdout)["warnings"] == []
    assert scenes(clone, "search", "--memories", "Miso").stderr == ""


def test_a_bad_line_in_the_extraction_ledger_is_named_and_the_rest_still_counts(tmp_path):
    root = make_store(tmp_path)
    ledger = root / ".scene-engine" / "dedupe.jsonl"
    event = {"event": "status", "memory": "m2", "status": "superseded", "by": "m3", "n": 1}
    ledger.write_bytes(json.dumps(event).encode() + b'\n{"event": "que\xff\n')
    where = ".scene-engine/dedupe.jsonl line 2 "

    recall = json.loads(scenes(root, "recall", "kayak", "--json").stdout)
    assert where in recall["warning"]
    assert "kayak" not in recall["text"]          # line 1 still counts: m2 was superseded
    status = json.loads(scenes(root, "status", "--json").stdout)
    assert [w for w in status["warnings"] if where in w], status
    doctor = json.loads(scenes(root, "doctor", "--json").stdout)
    assert [p for p in doctor["problems"] if where in p], doctor
    run = scenes(root, "run")                     # folding needs no review decision
    assert run.exit_code == 0 and where in run.stderr, run.output
    assert json.loads(scenes(root, "status", "--json").stdout)["pending"] == 0


def test_the_watcher_indexes_the_intact_lines_and_logs_the_bad_one(tmp_path, caplog):
    from scene_engine.index.scenes import for_store
    from scene_engine.index.watcher import SceneWatcher

    root = make_store(tmp_path)
    journal = root / "memories" / "00000.jsonl"
    lines, bad, lost = torn_middle(journal.read_bytes().rstrip(b"\n").split(b"\n"))
    journal.write_bytes(b"\n".join(lines) + b"\n")
    store = open_store(root)
    with caplog.at_level("WARNING"), SceneWatcher(root, lambda: for_store(store)) as watcher:
        assert watcher.wait_idle(timeout=30)
    assert any(f"memories/00000.jsonl line {bad} " in r.getMessage() for r in caplog.records)
    with for_store(store) as index:
        found = {h.id for h in index.search_memories("Miso OR violin OR rowing", k=10,
                                                      any_term=True)}
    assert found == {i for i, _ in MEMORIES if i != lost}
