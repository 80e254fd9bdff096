"""Many stores past one machine (docs/DESIGN.md "Serving many stores", issue 24).

Real pieces, started here on 127.0.0.1 and stopped by pid: Postgres, ``git daemon``, ``scenes
serve`` and ``scenes worker`` processes. What a user of the service would notice: memories
remembered over HTTP are searchable at once and folded by a worker into the store on the git
server; a token opens one store and no other; a retried remember adds nothing twice; a push
the server refuses (another batch, a person's edit landed first) costs nothing and the batch
runs again on the new head; a job run twice folds nothing twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from servers import GitDaemon, Postgres, free_port, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

SCENES = str(Path(sys.executable).parent / "scenes")
PERSON = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"]


@pytest.fixture(scope="module")
def postgres():
    with Postgres() as pg:
        yield pg


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    with GitDaemon(tmp_path_factory.mktemp("git")) as server:
        yield server


@pytest.fixture
def database(postgres) -> str:
    """A new empty database, its address."""
    return postgres.create(f"t_{uuid.uuid4().hex[:12]}")


def name() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def memories(n: int, start: int = 0, what: str = "Went hiking on trail {i} by the lake.") -> list[dict]:
    return [{"id": f"m{start + i}", "content": what.format(i=start + i),
             "created_at": f"2026-01-{1 + (start + i) % 28:02d}T{(start + i) % 24:02d}:00:00Z"}
            for i in range(n)]


def provision(database: str, daemon: GitDaemon, store: str) -> str:
    done = subprocess.run([SCENES, "provision", store, "--repos", str(daemon.repos),
                           "--database", database, "--git", daemon.base, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["token"]


def work(database: str, daemon: GitDaemon, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    """``scenes worker --once``: folds until the queue is empty."""
    done = subprocess.run([SCENES, "worker", "--database", database, "--git", daemon.base,
                           "--cache", str(cache), "--once", *extra],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def server_clone(daemon: GitDaemon, store: str, into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", f"{daemon.base}{store}.git", str(into)], check=True)
    return into


def ledgers(folder: Path) -> dict[int, list[str]]:
    """batch number -> memory ids of every ledger in the store at ``folder``."""
    found = {}
    for path in sorted((folder / ".scene-engine" / "ledger").glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        found[int(path.stem)] = [m["id"] for m in data["memories"]]
    return found


class Http:
    """``scenes serve`` in a process of its own, and calls to it."""

    def __init__(self, database: str, daemon: GitDaemon, cache: Path):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [SCENES, "serve", "--database", database, "--git", daemon.base, "--port",
             str(self.port), "--cache", str(cache)],
            stdout=subprocess.DEVNULL, stderr=open(cache.parent / "serve.log", "a"))  # noqa: SIM115
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, (cache.parent / "serve.log").read_text()
            try:
                if self.call("GET", "/healthz").status_code == 200:
                    return
            except Exception:
                time.sleep(0.1)
        raise AssertionError("scenes serve did not start")

    def call(self, method: str, path: str, token: str | None = None, body=None):
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        content = body if isinstance(body, bytes | str) or body is None else json.dumps(body)
        return httpx.request(method, f"http://127.0.0.1:{self.port}{path}", headers=headers,
                             content=content, timeout=60)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


@pytest.fixture
def http(database, daemon, tmp_path):
    server = Http(database, daemon, tmp_path / "readers")
    yield server
    server.close()


# ---------------------------------------------------------------- the whole path

def test_remembered_over_http_is_searchable_at_once_then_folded_and_pushed(
        database, daemon, http, tmp_path):
    store = name()
    token = provision(database, daemon, store)
    said = http.call("POST", f"/v1/stores/{store}/remember", token, memories(25))
    assert said.status_code == 200, said.text
    assert said.json()["added"] == 25 and said.json()["fold_queued"] is True

    # Before any worker ran: the memories are found, and status counts them as waiting.
    found = http.call("POST", f"/v1/stores/{store}/search", token,
                      {"query": "trail 7", "memories": True}).json()
    assert "trail 7 " in found["hits"][0]["content"]
    assert http.call("GET", f"/v1/stores/{store}/status", token).json()["inbox"] == 25

    work(database, daemon, tmp_path / "w1")
    status = http.call("GET", f"/v1/stores/{store}/status", token).json()
    assert (status["inbox"], status["pending"], status["batches"]) == (0, 0, 2)
    recalled = http.call("POST", f"/v1/stores/{store}/recall", token,
                         {"query": "where did I go hiking?", "budget": 1500}).json()
    assert "hiking" in recalled["text"].lower() and recalled["passages"]

    # The git server holds the batches, each commit naming its job and attempt.
    clone = server_clone(daemon, store, tmp_path / "look")
    taken = [i for ids in ledgers(clone).values() for i in ids]
    assert sorted(taken) == sorted(m["id"] for m in memories(25))
    log = subprocess.run(["git", "log", "--format=%B%x00"], cwd=clone, capture_output=True,
                         text=True, check=True).stdout
    batch_commits = [c for c in log.split("\x00") if "\nBatch: " in c]
    assert len(batch_commits) == 2 and all("\nJob: " in c and "\nAttempt: 1" in c
                                           for c in batch_commits)
    queue = json.loads(subprocess.run([SCENES, "queue", "--database", database, "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    row = next(r for r in queue["stores"] if r["store"] == store)
    assert (row["inbox"], row["waiting"], row["running"], row["failed"]) == (0, 0, 0, 0)
    assert row["pushes"] >= 1


def test_a_recall_that_finds_nothing_says_so_over_http(database, daemon, http):
    store = name()
    token = provision(database, daemon, store)
    got = http.call("POST", f"/v1/stores/{store}/recall", token, {"query": "where is the van?"})
    assert got.status_code == 200, got.text
    said = got.json()
    assert said["empty"] is True and said["chars"] == 0 and said["text"] == ""
    assert said["note"] == "nothing in memory answers the query: the answer is empty"


def test_a_retried_remember_adds_nothing_twice_and_a_rewrite_is_refused(
        database, daemon, http):
    store = name()
    token = provision(database, daemon, store)
    one = {"id": "x1", "content": "Keeps bees on the roof.", "created_at": "2026-03-01T08:00:00Z"}
    first = http.call("POST", f"/v1/stores/{store}/remember", token, one).json()
    again = http.call("POST", f"/v1/stores/{store}/remember", token, one).json()
    assert (first["added"], again["added"], again["known"]) == (1, 0, 1)
    changed = http.call("POST", f"/v1/stores/{store}/remember", token,
                        [{"id": "y1", "content": "New one."}, dict(one, content="Keeps wasps.")])
    assert changed.status_code == 400 and "never rewritten" in changed.json()["error"]
    bad = http.call("POST", f"/v1/stores/{store}/remember", token, [{"content": ""}])
    assert bad.status_code == 400 and "content" in bad.json()["error"]
    assert "Traceback" not in bad.text
    assert http.call("GET", f"/v1/stores/{store}/status", token).json()["inbox"] == 1


def test_a_token_opens_its_own_store_and_no_other(database, daemon, http):
    mine, theirs = name(), name()
    token = provision(database, daemon, mine)
    other = provision(database, daemon, theirs)
    http.call("POST", f"/v1/stores/{theirs}/remember", other,
              {"content": "Their secret plan.", "created_at": "2026-01-01T00:00:00Z"})
    tricks = [f"/v1/stores/{theirs}/status", f"/v1/stores/{mine}/../{theirs}/status",
              f"/v1/stores/{mine}%2F..%2F{theirs}/status", f"/v1/stores/..%2F{theirs}/status",
              f"/v1/stores/{theirs.upper()}/status", f"/v1/stores/{mine}.git/status",
              "/v1/stores/%2e%2e/status", f"/v1/stores/{theirs}/status?token={token}"]
    for path in tricks:
        got = http.call("GET", path, token)
        assert got.status_code in (403, 404), (path, got.status_code, got.text)
        assert "secret" not in got.text
    for path in (f"/v1/stores/{theirs}/recall", f"/v1/stores/{theirs}/search"):
        got = http.call("POST", path, token, {"query": "secret plan"})
        assert got.status_code == 403 and "secret" not in got.text
    wrote = http.call("POST", f"/v1/stores/{theirs}/remember", token, {"content": "Mine now."})
    assert wrote.status_code == 403
    assert http.call("GET", f"/v1/stores/{theirs}/status", other).json()["inbox"] == 1
    for header in (None, "wrong-token", ""):
        got = http.call("GET", f"/v1/stores/{mine}/status", header)
        assert got.status_code == 401
    assert http.call("GET", f"/v1/stores/{mine}/status", token).status_code == 200


# ---------------------------------------------------------------- the push is the guard

def _settings(database, daemon, cache: Path, batches: int = 5):
    from scene_engine.serving.fold import WorkerSettings

    return WorkerSettings(database, daemon.base, cache, batches_per_job=batches)


def _remember(database: str, store: str, rows: list[dict]) -> None:
    from scene_engine.serving import database as db
    from scene_engine.store.memories import parse_input

    records = []
    for memory in parse_input(json.dumps(rows).encode()):
        record = memory.to_record()
        record.pop("seq", None)
        record.pop("aliases", None)
        records.append(record)
    with db.connect(database) as conn:
        db.put_inbox(conn, store, records)


def _person_edits(daemon: GitDaemon, store: str, folder: Path) -> None:
    """A person clones the store, adds a line to a scene file of their own, pushes."""
    clone = server_clone(daemon, store, folder)
    (clone / "scenes" / "garden.md").write_text(
        "---\nsummary: My garden, by hand.\n---\nTomatoes by the south wall.\n", "utf-8")
    subprocess.run(["git", *PERSON, "add", "-A"], cwd=clone, check=True)
    subprocess.run(["git", *PERSON, "commit", "-qm", "my garden"], cwd=clone, check=True)
    subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=clone, check=True)


def test_a_refused_push_runs_the_batch_again_on_the_new_head(database, daemon, tmp_path,
                                                              monkeypatch):
    from scene_engine.serving import remote
    from scene_engine.serving.fold import fold_store

    store = name()
    provision(database, daemon, store)
    _remember(database, store, memories(12))
    real_push = remote.Clone.push
    pushes = []

    def person_first(self):
        if not pushes:       # just before the worker's first push, a person's edit lands
            _person_edits(daemon, store, tmp_path / "person")
        pushes.append(real_push(self))
        return pushes[-1]

    monkeypatch.setattr(remote.Clone, "push", person_first)
    outcome = fold_store(_settings(database, daemon, tmp_path / "w"), store, job=7)
    assert pushes == [False, True] and outcome.rounds == 2
    look = server_clone(daemon, store, tmp_path / "look")
    assert "Tomatoes by the south wall." in (look / "scenes" / "garden.md").read_text("utf-8")
    assert sorted(i for ids in ledgers(look).values() for i in ids) == \
        sorted(m["id"] for m in memories(12))
    assert list(ledgers(look)) == [1]            # one batch, numbered once
    merges = subprocess.run(["git", "rev-list", "--merges", "HEAD"], cwd=look,
                            capture_output=True, text=True, check=True).stdout
    assert merges == ""
    from scene_engine.serving import database as db

    with db.connect(database) as conn:
        assert db.inbox(conn, store) == []
        row = next(r for r in db.queue_view(conn, "scenes:fold") if r["store"] == store)
    assert (row["rejected_pushes"], row["pushes"]) == (1, 1)


def test_a_push_refused_every_round_fails_the_job_and_lands_nothing(database, daemon,
                                                                    tmp_path, monkeypatch):
    from scene_engine.serving import remote
    from scene_engine.serving.fold import ROUNDS, FoldRefused, fold_store

    store = name()
    provision(database, daemon, store)
    _remember(database, store, memories(5))
    head = remote.server_head(f"{daemon.base}{store}.git")
    monkeypatch.setattr(remote.Clone, "push", lambda self: False)
    with pytest.raises(FoldRefused, match=f"{ROUNDS} times"):
        fold_store(_settings(database, daemon, tmp_path / "w"), store)
    assert remote.server_head(f"{daemon.base}{store}.git") == head
    from scene_engine.serving import database as db

    with db.connect(database) as conn:
        assert len(db.inbox(conn, store)) == 5     # still waiting: nothing was lost


def test_two_workers_on_one_state_can_never_both_land(database, daemon, tmp_path):
    """Worker B prepares its batch on the same head as A (as a worker stopped past its lease
    would); A pushes first; B's push is refused, and B's job then finds nothing left."""
    from scene_engine.services.add import add_memories
    from scene_engine.services.backends import make_backend
    from scene_engine.services.run import run_pending
    from scene_engine.serving import database as db
    from scene_engine.serving.fold import fold_store
    from scene_engine.serving.remote import Clone
    from scene_engine.store.store import open_store

    store = name()
    provision(database, daemon, store)
    _remember(database, store, memories(8))
    late = Clone(tmp_path / "b" / store, f"{daemon.base}{store}.git")
    late.sync()
    with db.connect(database) as conn:
        rows = db.inbox(conn, store)
    opened = open_store(late.path)
    add_memories(opened, "".join(json.dumps(r) + "\n" for r in rows))
    run_pending(opened, make_backend("offline"))

    first = fold_store(_settings(database, daemon, tmp_path / "a"), store)
    assert first.batches == 1
    assert late.push() is False                      # the guard
    second = fold_store(_settings(database, daemon, tmp_path / "b"), store)
    assert (second.added, second.batches) == (0, 0)
    look = server_clone(daemon, store, tmp_path / "look")
    assert list(ledgers(look)) == [1]


def test_a_job_run_twice_folds_nothing_twice(database, daemon, tmp_path, monkeypatch):
    """The worker dies after its push, before it drops the inbox rows: the next job appends
    nothing again and the rows go."""
    from scene_engine.serving import database as db
    from scene_engine.serving.fold import fold_store

    store = name()
    provision(database, daemon, store)
    _remember(database, store, memories(10))
    real_drop = db.drop_inbox

    def dies(*args, **kwargs):
        raise db.ServingError("Postgres went away")

    monkeypatch.setattr(db, "drop_inbox", dies)
    with pytest.raises(db.ServingError):
        fold_store(_settings(database, daemon, tmp_path / "w"), store)
    monkeypatch.setattr(db, "drop_inbox", real_drop)
    again = fold_store(_settings(database, daemon, tmp_path / "w2"), store)
    assert (again.added, again.batches) == (0, 0)
    look = server_clone(daemon, store, tmp_path / "look")
    assert sorted(i for ids in ledgers(look).values() for i in ids) == \
        sorted(m["id"] for m in memories(10))
    with db.connect(database) as conn:
        assert db.inbox(conn, store) == []


# ---------------------------------------------------------------- the queue, by hand

def test_queue_retry_queues_a_failed_job_again(database, daemon, tmp_path):
    store = name()
    provision(database, daemon, store)
    _remember(database, store, memories(3))
    from scene_engine.serving import database as db
    from scene_engine.serving import jobs

    app = jobs.make_app(database, sync=True)
    with app.open(), db.connect(database) as conn:
        jobs.defer_fold(app, conn, store)
        conn.commit()
        conn.execute("UPDATE procrastinate_jobs SET status = 'failed' WHERE args->>'store' = %s",
                     (store,))
    shown = subprocess.run([SCENES, "queue", "--database", database], capture_output=True,
                           text=True, check=True).stdout
    line = next(row for row in shown.splitlines() if row.startswith(store))
    assert line.split()[1:6] == ["3", line.split()[2], "0", "0", "1"]
    retried = subprocess.run([SCENES, "queue", "--database", database, "--retry", "--json"],
                             capture_output=True, text=True, check=True)
    assert json.loads(retried.stdout) == {"queued": 1}
    work(database, daemon, tmp_path / "w")
    look = server_clone(daemon, store, tmp_path / "look")
    assert sorted(i for ids in ledgers(look).values() for i in ids) == ["m0", "m1", "m2"]


def test_the_commands_say_what_is_missing_in_one_line(database, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCENE_ENGINE_")}
    for args in (["serve"], ["worker"], ["queue"]):
        done = subprocess.run([SCENES, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 2 and "--database is required" in done.stderr, done.stderr
    down = "postgresql://postgres@127.0.0.1:1/none"
    done = subprocess.run([SCENES, "queue", "--database", down], capture_output=True, text=True)
    assert done.returncode == 1 and "cannot reach Postgres" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([SCENES, "provision", "../up", "--repos", str(tmp_path), "--database",
                           database, "--git", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "not a store name" in done.stderr


def test_a_worker_started_again_in_its_process_still_knows_its_tasks():
    """After Postgres restarts, ``run_worker`` makes a new app in the same process: it must
    still know the fold job by its name (a namespaced blueprint once renamed them twice)."""
    from scene_engine.serving.jobs import FOLD_TASK, make_app

    first, again = make_app("postgresql://127.0.0.1:1/x"), make_app("postgresql://127.0.0.1:1/x")
    for app in (first, again):
        assert {FOLD_TASK, "scenes:sweep", "scenes:recover"} <= set(app.tasks)


# ---------------------------------------------------------------- MCP over streamable HTTP

def _mcp(url: str, token: str, calls: list[tuple[str, dict]]) -> list:
    """Each tool call's result (JSON, or the error text) through the SDK's own client."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main():
        out = []
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with client, Client(streamable_http_client(url, http_client=client)) as mcp:
            for name, arguments in calls:
                result = await mcp.call_tool(name, arguments)
                text = result.content[0].text if result.content else ""
                out.append(("error", text) if result.is_error else json.loads(text)
                           if text[:1] in "{[" else text)
        return out
    return anyio.run(main)


def test_mcp_serves_each_token_its_own_store(database, daemon, http, tmp_path):
    import httpx

    mine, theirs = name(), name()
    token, other = provision(database, daemon, mine), provision(database, daemon, theirs)
    url = f"http://127.0.0.1:{http.port}/mcp"
    said = _mcp(url, token, [
        ("remember", {"content": "Parked the van on level 3.", "id": "p1",
                      "created_at": "2026-05-01T10:00:00Z"}),
        ("remember", {"content": "Parked the van on level 3.", "id": "p1",
                      "created_at": "2026-05-01T10:00:00Z"}),
        ("remember", {"content": ""}),
        ("search", {"query": "van level", "memories": True}),
        ("status", {}),
    ])
    assert said[0]["added"] is True and said[1]["added"] is False
    assert said[2][0] == "error" and "content" in said[2][1]
    assert said[3]["hits"][0]["id"] == "p1"
    assert said[4]["inbox"] == 1
    theirs_said = _mcp(url, other, [("search", {"query": "van level", "memories": True}),
                                    ("status", {})])
    assert theirs_said[0]["hits"] == [] and theirs_said[1]["inbox"] == 0
    # One memory is below fold_every: queued by hand (the sweeper would after fold_idle).
    queued = subprocess.run([SCENES, "queue", "--database", database, "--fold", "--store",
                             mine], capture_output=True, text=True, check=True)
    assert "fold job queued" in queued.stdout
    work(database, daemon, tmp_path / "w")
    folded = _mcp(url, token, [("list_scenes", {}), ("recall", {"query": "where is the van?"})])
    assert folded[0]["scenes"] and "level 3" in folded[1]["text"]
    scene = _mcp(url, token, [("read_scene", {"name": folded[0]["scenes"][0]["name"]})])[0]
    assert "level 3" in scene
    accept = {"Accept": "application/json, text/event-stream"}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    for wrong in ({}, {"Authorization": "Bearer nope"}, {"Authorization": token}):
        got = httpx.post(url, json=hello, headers={**accept, **wrong}, timeout=30)
        assert got.status_code == 401, (wrong, got.status_code)


# ---------------------------------------------------------------- found by a new user trying it

def test_an_id_the_journal_knows_is_judged_as_scenes_add_judges_it(database, daemon, http,
                                                                   tmp_path):
    """Folded memories stay known: sent again, nothing is added and no job is queued; sent
    with another content, the whole call is refused (nothing lost silently in a worker); a
    retry without created_at is the same memory (the server stamps a new time on it)."""
    store = name()
    token = provision(database, daemon, store)
    first = [{"id": f"d{i}", "content": f"Bob drinks tea number {i}."} for i in range(20)]
    assert http.call("POST", f"/v1/stores/{store}/remember", token, first).json()["added"] == 20
    work(database, daemon, tmp_path / "w")
    again = http.call("POST", f"/v1/stores/{store}/remember", token, first).json()
    assert (again["added"], again["known"], again["fold_queued"]) == (0, 20, False)
    rewrite = http.call("POST", f"/v1/stores/{store}/remember", token, [
        {"id": "fresh", "content": "Bob likes coffee too."},
        {"id": "d3", "content": "Bob now hates tea."}])
    assert rewrite.status_code == 400, rewrite.text
    assert "'d3' is already known with a different content" in rewrite.json()["error"]
    said = _mcp(f"http://127.0.0.1:{http.port}/mcp", token, [
        ("remember", {"id": "d4", "content": "An MCP rewrite of d4."}),
        ("remember", {"id": "d5", "content": "Bob drinks tea number 5."})])
    assert said[0][0] == "error" and "already known" in said[0][1]
    assert said[1]["added"] is False
    retry = {"id": "r1", "content": "Bob rides a bike."}        # no created_at, sent twice
    assert http.call("POST", f"/v1/stores/{store}/remember", token, retry).json()["added"] == 1
    twice = http.call("POST", f"/v1/stores/{store}/remember", token, retry)
    assert twice.status_code == 200 and twice.json()["known"] == 1, twice.text
    assert http.call("GET", f"/v1/stores/{store}/status", token).json()["inbox"] == 1


def test_pretty_json_and_deep_nesting_are_read_or_refused_in_one_line(database, daemon, http,
                                                                      tmp_path):
    store = name()
    token = provision(database, daemon, store)
    pretty = json.dumps({"content": "A pretty-printed memory.", "id": "pp"}, indent=2)
    got = http.call("POST", f"/v1/stores/{store}/remember", token, pretty)
    assert got.status_code == 200 and got.json()["added"] == 1, got.text
    deep = "[" * 100_000 + "]" * 100_000
    got = http.call("POST", f"/v1/stores/{store}/remember", token, deep)
    assert got.status_code == 400 and "nested too deeply" in got.json()["error"]
    got = http.call("POST", f"/v1/stores/{store}/recall", token, deep)
    assert got.status_code == 400 and "Traceback" not in got.text
    got = http.call("POST", f"/v1/stores/{store}/search", token,
                    {"query": "pretty", "memories": "false"})
    assert got.status_code == 400 and "true or false" in got.json()["error"]
    for method, path in (("GET", "/v1/nothing"), ("GET", f"/v1/stores/{store}/recall"),
                         ("GET", f"/v1/stores/{store}/status/")):
        got = http.call(method, path, token)
        assert got.status_code in (404, 405) and "error" in got.json(), (path, got.text)
    local = tmp_path / "local"
    subprocess.run([SCENES, "--dir", str(local), "init"], check=True, capture_output=True)
    done = subprocess.run([SCENES, "--dir", str(local), "add", "-"], input=deep, text=True,
                          capture_output=True)
    assert done.returncode == 2 and "nested too deeply" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([SCENES, "--dir", str(local), "add", "-"], input=pretty, text=True,
                          capture_output=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_postgres_away_is_503_on_every_route_and_the_worker_says_it_in_one_line(
        postgres, daemon, tmp_path):
    database = postgres.create(f"t_{uuid.uuid4().hex[:12]}")
    store = name()
    token = provision(database, daemon, store)
    http = Http(database, daemon, tmp_path / "readers")
    worker = subprocess.Popen([SCENES, "worker", "--database", database, "--git", daemon.base,
                               "--cache", str(tmp_path / "w")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert http.call("GET", f"/v1/stores/{store}/status", token).status_code == 200
        postgres.stop()
        try:
            for method, path, body in (("GET", f"/v1/stores/{store}/status", None),
                                       ("POST", f"/v1/stores/{store}/remember",
                                        {"content": "x"})):
                got = http.call(method, path, token, body)
                assert got.status_code == 503 and "database" in got.json()["error"], got.text
            got = http.call("POST", "/mcp", token, {
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "0"}}})
            assert got.status_code == 503, got.text    # not "invalid token": it is not
            time.sleep(3)
        finally:
            postgres.start()
        # Back: a client that retries on 503, as told, gets its answer within seconds.
        deadline = time.monotonic() + 60
        while http.call("GET", f"/v1/stores/{store}/status", token).status_code != 200:
            assert time.monotonic() < deadline, "the front-end never came back"
            time.sleep(1)
    finally:
        http.close()
        worker.terminate()
        said = worker.communicate(timeout=60)[1]
    assert "Traceback" not in said and "stopped: ;" not in said, said
    assert "worker" in said.splitlines()[0]


def test_provision_leaves_nothing_behind_when_it_fails_and_a_token_can_be_renewed(
        database, daemon, http):
    store = name()
    failed = subprocess.run([SCENES, "provision", store, "--repos", str(daemon.repos),
                             "--database", database, "--git", "git://127.0.0.1:1/"],
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert not (daemon.repos / f"{store}.git").exists()
    token = provision(database, daemon, store)               # the same command, again: made
    renewed = subprocess.run([SCENES, "provision", store, "--new-token", "--database",
                              database, "--json"], capture_output=True, text=True, check=True)
    new = json.loads(renewed.stdout)["token"]
    assert http.call("GET", f"/v1/stores/{store}/status", token).status_code == 401
    assert http.call("GET", f"/v1/stores/{store}/status", new).status_code == 200
    nosuch = subprocess.run([SCENES, "queue", "--database", database, "--retry", "--store",
                             "nosuch"], capture_output=True, text=True)
    assert nosuch.returncode == 2 and "no store named 'nosuch'" in nosuch.stderr
    bad_url = subprocess.run([SCENES, "queue", "--database", "notaurl"], capture_output=True,
                             text=True)
    assert bad_url.returncode == 2 and "postgresql://USER@HOST" in bad_url.stderr


def test_a_push_a_hook_refuses_fails_the_job_with_the_servers_words(database, daemon, tmp_path):
    """Not the guard (the server's main did not move): the job fails and is retried with
    backoff, the queue shows its tries, the worker's log says what the server said, and the
    push is not counted as refused."""
    store = name()
    provision(database, daemon, store)
    hook = daemon.repos / f"{store}.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'quota exceeded for this store' >&2\nexit 1\n")
    hook.chmod(0o755)
    _remember(database, store, memories(3))
    subprocess.run([SCENES, "queue", "--database", database, "--fold", "--store", store],
                   check=True, capture_output=True)
    done = work(database, daemon, tmp_path / "w")
    assert "quota exceeded for this store" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    queue = json.loads(subprocess.run([SCENES, "queue", "--database", database, "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    row = next(r for r in queue["stores"] if r["store"] == store)
    assert row["attempts"] >= 1 and row["waiting"] == 1 and not row["rejected_pushes"]
    assert row["inbox"] == 3


def test_the_sweeper_asks_the_git_server_about_a_bounded_rotating_share_of_stores(database):
    """However many stores there are, a sweep looks at HEADS_PER_SWEEP heads, the ones
    checked longest ago first, so every store's head is looked at in turn."""
    from scene_engine.serving import database as db
    from scene_engine.serving.jobs import HEADS_PER_SWEEP, migrate

    migrate(database)
    names = [f"r{i:03d}" for i in range(HEADS_PER_SWEEP * 2 + 5)]
    with db.connect(database) as conn:
        for each in names:
            db.add_store(conn, each, f"token-{each}")
        seen: list[str] = []
        for _ in range(3):
            share = list(db.last_commits(conn, HEADS_PER_SWEEP))
            assert len(share) == HEADS_PER_SWEEP and not set(share) & set(seen[-HEADS_PER_SWEEP:])
            seen += share
            db.heads_checked(conn, share)
    assert set(names) <= set(seen)


def test_http_refuses_as_scenes_add_does_and_an_oversized_body_is_413(database, daemon, http,
                                                                       tmp_path):
    store = name()
    token = provision(database, daemon, store)
    local = tmp_path / "local"
    subprocess.run([SCENES, "--dir", str(local), "init"], check=True, capture_output=True)
    for bad in ('{"content": "An unterminated memory',          # the CLI says the column
                '[{"content": "ok"},\n {"content": "cut}]',
                '[{"content": "ok"}, {"id": 1}]'):               # record 2, not line 1
        got = http.call("POST", f"/v1/stores/{store}/remember", token, bad)
        done = subprocess.run([SCENES, "--dir", str(local), "add", "-"], input=bad, text=True,
                              capture_output=True)
        assert done.returncode == got.json()["exit_code"] == 2 and got.status_code == 400
        assert got.json()["error"] == done.stderr.strip().removeprefix("error: "), bad
    assert "column 13" in http.call("POST", f"/v1/stores/{store}/remember", token,
                                    '{"content": "An unterminated memory').json()["error"]
    big = b'{"content": "' + b"x" * (50 * 2**20) + b'"}'
    got = http.call("POST", f"/v1/stores/{store}/remember", token, big)
    assert got.status_code == 413 and "larger than" in got.json()["error"], got.text

    def chunks():                   # no Content-Length: refused while it streams in
        for _ in range(20):
            yield b"x" * 2**20
    import httpx

    got = httpx.post(f"http://127.0.0.1:{http.port}/v1/stores/{store}/remember",
                     headers={"Authorization": f"Bearer {token}"}, content=chunks(), timeout=60)
    assert got.status_code == 413, got.text
    assert http.call("GET", f"/v1/stores/{store}/status", token).json()["inbox"] == 0
