"""The page for people, ``scenes ui`` (issue 27), served for real by the command on
127.0.0.1 and read over HTTP and in a real headless Chromium (Debian's, driven by
Playwright; nothing downloaded: the tests skip with a message only where no Chromium is
installed, and ``.ci/run`` installs one).

The store is the demo's (offline) with two conversations extracted, so the
review queue holds two pairs. Each test that changes the store gets its own copy and its own
server, stopped by pid; the tests that only read (or are refused) share one, ``reader``.
Screenshots of each page go to $SCENES_UI_SCREENSHOTS, else a temporary folder; the
README's, ``docs/page.png``, is this file's ``scenes.png``.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import git
import pytest

from scene_engine.extraction.pipeline import extract_file
from scene_engine.services.demo import build_demo

SCENES = Path(sys.executable).parent / "scenes"
CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
                 if Path(p).exists()), None)
NO_BROWSER = ("no Chromium here: install Debian's package (apt-get install chromium) and "
              "playwright (pip install -e '.[dev]'); .ci/run installs both")
STANDUP = """2026-11-28
Ana: The release of Orca moved to Friday because QA found a crash on ARM.
Ben: Okay, thanks.
[2026-11-29]
Ben: The release of Orca moved to Friday because QA found a crash on ARM boards.
"""
GARDEN = """2026-11-20
Rui: The tomatoes in the north bed got blight after the long rain this week.
[2026-11-21]
Rui: The tomatoes in the north bed got blight after the long rain.
"""


# ---------------------------------------------------------------- the store and the server

# The demo's scenes the tests open, by what they hold (their names follow the grouping):
# filled by ``made``.
DEMO: dict[str, str] = {}
HOLDS = {"work": "Northwind", "rain": "heavy rain", "liwei": "红烧肉"}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """The demo store with two pairs queued for review, made once per module."""
    root = tmp_path_factory.mktemp("page") / "store"
    store, _, _ = build_demo(root)
    for name, text in (("standup.txt", STANDUP), ("garden.txt", GARDEN)):
        extract_file(store, text.encode(), name)
    for key, words in HOLDS.items():
        DEMO[key] = next(p.stem for p in sorted((root / "scenes").glob("*.md"))
                         if words in p.read_text("utf-8"))
    DEMO["count"] = str(len(list((root / "scenes").glob("*.md"))))
    DEMO["last"] = str(store.load_state().batch)         # the demo's last batch
    return root


@pytest.fixture
def store_root(made, tmp_path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(made, copy, symlinks=True)
    return copy


class Served:
    """``scenes ui --port 0`` on ``root``: its ``url`` (with the token), ``base``, ``token``,
    ``port``; stopped by pid."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen([str(SCENES), "--dir", str(root), "ui", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = [self.proc.stdout.readline() for _ in range(2)]
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", lines[1])
        assert found, (lines, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.port, self.token = int(found.group(1)), found.group(2)
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = lines[1].strip()

    def stop(self) -> str:
        """Stop the server (by its pid); what it said on stderr."""
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        return self.proc.stderr.read()


@pytest.fixture
def served(store_root):
    server = Served(store_root)
    yield server
    said = server.stop()
    assert "Traceback" not in said, said


@pytest.fixture(scope="module")
def reader(made, tmp_path_factory):
    """One server on one copy for the tests that only read or are refused (a server and a
    copy each cost about a second): a test that changes the store takes ``served``."""
    copy = tmp_path_factory.mktemp("reader") / "store"
    shutil.copytree(made, copy, symlinks=True)
    server = Served(copy)
    yield server
    said = server.stop()
    assert "Traceback" not in said, said


def ask(served: Served, method: str, path: str, headers: dict | None = None,
        body: str | None = None, cookie: bool = True) -> tuple[int, dict, str]:
    """One raw HTTP request (the path sent as it is): (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    sent = {"Host": f"127.0.0.1:{served.port}"}
    if cookie:
        sent["Cookie"] = f"scenes_ui_{served.port}={served.token}"
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    sent.update(headers or {})
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for key, value in sent.items():
        conn.putheader(key, value)
    data = body.encode() if body is not None else None
    if data is not None:
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    text = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def form_token(served: Served) -> str:
    """The ``csrf`` value the page's forms carry (read from a page, as a browser would)."""
    _, _, body = ask(served, "GET", "/history")
    found = re.search(r'name="csrf" value="([^"]+)"', body)
    assert found, body[:500]
    return found.group(1)


def head(root: Path) -> str:
    return git.Repo(root).head.commit.hexsha


# ---------------------------------------------------------------- over HTTP: who may ask

def test_without_the_token_the_page_shows_nothing(reader):
    status, _, body = ask(reader, "GET", "/", cookie=False)
    assert status == 403 and "token" in body and "northwind" not in body
    status, _, body = ask(reader, "GET", "/?token=not-the-token", cookie=False)
    assert status == 403 and "northwind" not in body
    status, _, _ = ask(reader, "GET", "/static/page.css", cookie=False)
    assert status == 403


def test_the_token_in_the_url_sets_a_strict_cookie_and_leaves_the_address(reader):
    status, headers, _ = ask(reader, "GET", f"/scene/{DEMO['rain']}?token={reader.token}",
                             cookie=False)
    assert status == 303 and headers["location"] == f"/scene/{DEMO['rain']}"
    cookie = headers["set-cookie"].lower()
    assert f"scenes_ui_{reader.port}={reader.token.lower()}" in cookie
    assert "httponly" in cookie and "samesite=strict" in cookie
    status, _, body = ask(reader, "GET", "/")
    assert status == 200 and DEMO["work"] in body


def test_another_host_name_is_refused(reader):
    # a web page that points its own name at 127.0.0.1 (DNS rebinding)
    status, _, body = ask(reader, "GET", "/", headers={"Host": f"evil.example:{reader.port}"})
    assert status == 400 and "northwind" not in body


def test_a_change_from_another_origin_or_without_the_form_token_is_refused(served,
                                                                           store_root):
    before = head(store_root)
    csrf = form_token(served)
    undo = f"batch={DEMO['last']}&action=undo"
    status, _, body = ask(served, "POST", "/undo", body=f"csrf={csrf}&{undo}",
                          headers={"Origin": "http://evil.example"})
    assert status == 403 and "another site" in body
    status, _, body = ask(served, "POST", "/undo", body=f"csrf={csrf}&{undo}",
                          headers={"Referer": "http://evil.example/history"})
    assert status == 403 and "another site" in body
    status, _, body = ask(served, "POST", "/undo", body=f"csrf={csrf}&{undo}")
    assert status == 403 and "no origin" in body            # neither Origin nor Referer
    status, _, body = ask(served, "POST", "/undo", body=undo, headers={"Origin": served.base})
    assert status == 403 and "token" in body
    status, _, body = ask(served, "POST", "/undo", body=f"csrf={served.token}&{undo}",
                          headers={"Origin": served.base})
    assert status == 403 and "token" in body                # the access token is not the form's
    status, _, body = ask(served, "POST", "/undo", body=f"csrf={csrf}&{undo}", cookie=False,
                          headers={"Origin": served.base})
    assert status == 403
    assert head(store_root) == before           # nothing was undone
    status, headers, _ = ask(served, "POST", "/undo", body=f"csrf={csrf}&{undo}",
                             headers={"Referer": f"{served.base}/history"})
    assert status == 303 and f"batch+{DEMO['last']}+undone" in headers["location"]
    assert head(store_root) != before


def test_no_page_holds_the_access_token(reader):
    for path in ("/", "/history", f"/batch/{DEMO['last']}", "/review", f"/scene/{DEMO['rain']}"):
        status, _, body = ask(reader, "GET", path)
        assert status == 200 and reader.token not in body, path
    csrf = form_token(reader)
    assert csrf and csrf != reader.token and reader.token not in csrf


@pytest.mark.parametrize("path", [
    "/scene/..%2F..%2F.scene-engine%2Fconfig.toml",
    "/scene/../../.scene-engine/config.toml",
    "/scene/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/scene/..",
    "/scene/.scene-engine",
    "/scene/no-such-scene/..%2F..%2Fpersona",
    "/static/..%2F..%2Fapp.py",
    "/static/../app.py",
    "/memory/..%2F..%2Fstate.json",
    "/batch/-1",
    "/review/..%2F..%2Fextraction",
])
def test_path_tricks_in_names_read_no_file(reader, path):
    status, _, body = ask(reader, "GET", path)
    assert 400 <= status < 500, (status, body[:200])
    for secret in ("timezone", "root:", "import ", "make_app", "cursor", "[model]"):
        assert secret not in body, (path, secret)


def test_scene_text_is_shown_never_run(served, store_root):
    scene = store_root / "scenes" / f"{DEMO['rain']}.md"
    scene.write_text(scene.read_text("utf-8") + "\n<script>alert('x')</script>\n"
                     "[click](javascript:alert(1))\n", encoding="utf-8")
    status, _, body = ask(served, "GET", f"/scene/{DEMO['rain']}")
    assert status == 200
    assert "<script>alert" not in body and "&lt;script&gt;alert" in body
    assert 'href="javascript:' not in body


def test_a_huge_scene_opens_as_text_and_hand_added_header_keys_show(served, store_root):
    scene = store_root / "scenes" / f"{DEMO['rain']}.md"
    text = scene.read_text("utf-8").replace("---\n", "---\npinned: true\n", 1)
    line = "- 2020-01-01: Ran <b>five</b> km along the river before work, slowly.\n"
    scene.write_text(text + line * 45_000, encoding="utf-8")            # about 3 MB
    status, _, body = ask(served, "GET", f"/scene/{DEMO['rain']}")   # rendered, it took 4-5 s
    assert status == 200 and "shown as written, not rendered" in body
    assert "&lt;b&gt;five&lt;/b&gt;" in body and "<b>five" not in body
    assert "<dt>pinned</dt>" in body


def test_a_memory_is_dated_in_the_stores_time_zone_on_every_page(served, store_root):
    """Written at 23:30 in California on 30 November: 1 December in the store's zone (UTC),
    as its timeline, the pictures and `scenes trace` say (the list showed 30 November)."""
    memory = {"id": "late-walk", "content": "Walked the dog along the Tagus at night.",
              "created_at": "2026-11-30T23:30:00-08:00"}
    subprocess.run([str(SCENES), "--dir", str(store_root), "add", "-"], check=True,
                   input=json.dumps(memory), capture_output=True, text=True)
    for path in ("/memories", "/memories?q=Tagus+dog", "/memory/late-walk"):
        status, _, body = ask(served, "GET", path)
        assert status == 200 and "2026-12-01" in body, path
        assert "2026-11-30" not in body, path


def test_refusals_are_pages_with_the_reason_not_tracebacks(reader):
    status, _, body = ask(reader, "GET", "/scene/no-such-scene")
    assert status == 404 and "no scene named no-such-scene.md" in body
    status, _, body = ask(reader, "GET", "/batch/999")
    assert status == 404 and "there is no batch 999" in body
    status, _, body = ask(reader, "GET", "/memory/nope")
    assert status == 404 and "no memory has the id" in body
    status, _, body = ask(reader, "POST", "/review/p-nope", headers={"Origin": reader.base},
                          body=f"csrf={form_token(reader)}&action=keep&keep=left")
    assert status in (404, 409) and "no open pair" in body
    status, _, body = ask(reader, "GET", "/memories?q=%22")     # nothing to look for
    assert status in (200, 400) and "Traceback" not in body


def _post(served: Served, path: str, form: str) -> tuple[int, dict, str]:
    return ask(served, "POST", path, headers={"Origin": served.base},
               body=f"csrf={form_token(served)}&{form}")


def test_an_undo_button_seen_before_another_change_does_not_do_the_opposite(served,
                                                                             store_root):
    """Two tabs show "Undo batch N" (the last); the first undoes it; the second is refused, not a
    redo (and the same for "Redo"): the button says which way the person meant."""
    assert _post(served, "/undo", f"batch={DEMO['last']}&action=undo")[0] == 303
    undone = head(store_root)
    status, _, body = _post(served, "/undo", f"batch={DEMO['last']}&action=undo")
    assert status == 409 and f"batch {DEMO['last']} is undone already" in body
    assert head(store_root) == undone                       # nothing changed
    assert _post(served, "/undo", f"batch={DEMO['last']}&action=redo")[0] == 303
    redone = head(store_root)
    status, _, body = _post(served, "/undo", f"batch={DEMO['last']}&action=redo")
    assert status == 409 and f"batch {DEMO['last']} is live already" in body
    assert head(store_root) == redone
    status, _, body = _post(served, "/undo", f"batch={DEMO['last']}")     # which way, unsaid: refused
    assert status == 400 and head(store_root) == redone
    status, _, body = _post(served, "/undo", "action=undo&batch=" + "1" * 200_000)
    assert status == 409 and "is neither a batch number nor a commit" in body   # was a 500:
    assert head(store_root) == redone                   # git's argument list too long
    status, _, body = ask(served, "GET", "/history")
    assert 'name="action" value="undo"' in body


def test_a_scene_timeline_shows_its_digests_too(served, store_root):
    scene = store_root / "scenes" / f"{DEMO['rain']}.md"
    text = scene.read_text("utf-8").replace(
        "## Timeline (UTC)\n", "## Timeline (UTC)\n- 2025-Q3 (digest): 4 Jul–29 Sep ×6: Ran "
        "along the river\n- 2025-10 (digest): 2–30 Oct ×4: Intervals on the track\n", 1)
    assert "(digest)" in text, "the demo scene has a timeline section"
    scene.write_text(text, encoding="utf-8")
    status, _, body = ask(served, "GET", f"/scene/{DEMO['rain']}/timeline")
    assert status == 200
    assert "2025-Q3 (digest)" in body and "Ran along the river" in body
    assert "2025-10 (digest)" in body and "Intervals on the track" in body


def test_an_old_scene_name_leads_to_the_scene_that_took_it_in(served, store_root):
    scene = store_root / "scenes" / f"{DEMO['rain']}.md"
    text = scene.read_text("utf-8")
    scene.write_text(text.replace("---\n", "---\nmerged_from: [rainy-runs.md]\n", 1),
                     encoding="utf-8")
    status, headers, _ = ask(served, "GET", "/scene/rainy-runs/history")
    assert status == 303 and headers["location"].startswith(f"/scene/{DEMO['rain']}.md/history?")
    assert f"renamed+or+merged+into+{DEMO['rain']}.md" in headers["location"]
    status, _, body = ask(served, "GET", "/scene/never-was")
    assert status == 404 and "no scene named never-was.md" in body


def test_search_says_when_it_matched_some_words_or_shows_only_the_best(reader):
    status, _, body = ask(reader, "GET", "/memories?q=Orca+zzyzxq")
    assert status == 200 and "no memory holds all of: Orca, zzyzxq" in body
    status, _, body = ask(reader, "GET", "/memories?q=the")
    assert status == 200 and ("The best 50" in body or " found for" in body)


def test_an_unknown_address_is_a_page_and_messages_show_commands_as_code(reader):
    status, _, body = ask(reader, "GET", "/no/such/page")
    assert status == 404 and "there is no page" in body and "<html" in body
    status, _, body = _post(reader, "/undo", "batch=999&action=undo")   # the service's words
    assert "there is no batch 999; <code>scenes log</code> lists them" in body
    assert "`" not in body.split("<main")[-1]


def test_a_port_in_use_is_said_in_one_line(store_root):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run([str(SCENES), "--dir", str(store_root), "ui", "--port",
                                 str(port)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- in a real browser

# How long a browser step or an expectation may wait for the server: a merge commits, and on
# a loaded 2-core machine that took more than playwright's 5 s (a wait ends as soon as what
# it checks is there, so a long limit costs nothing when all is well).
WAIT_MS = 30_000

try:                 # playwright's expect waits for what it checks
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=WAIT_MS)
except ImportError:  # the browser tests skip, saying what to install
    expect = sync_playwright = None

@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip(NO_BROWSER)
    if sync_playwright is None:
        pytest.skip(NO_BROWSER)
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SCENES_UI_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    opened = context.new_page()
    yield opened
    context.close()


def snap(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


def test_opening_the_page_with_and_without_the_token(page, served, shots):
    page.goto(served.base + "/")
    assert "The link needs its token" in page.content()
    snap(page, shots, "no-token")
    page.goto(served.url)
    assert page.url == served.base + "/"               # the token left the address
    rows = page.locator("table.scenes tbody tr")
    assert rows.count() == int(DEMO["count"])
    assert page.locator("svg.picture").count() == 2
    snap(page, shots, "scenes")


def test_a_scene_its_timeline_history_and_blame(page, served, shots):
    page.goto(served.url)
    page.click(f"table.scenes >> text={DEMO['work']}")
    page.wait_for_url(f"**/scene/{DEMO['work']}.md")
    assert page.locator("article.scene").inner_text().count("Northwind") >= 2
    snap(page, shots, "scene")
    page.click("nav.tabs >> text=Timeline")
    page.wait_for_selector("ol.timeline li")
    assert page.locator("ol.timeline time").first.inner_text() == "2026-01-05"
    snap(page, shots, "timeline")
    page.click("nav.tabs >> text=History")
    page.wait_for_selector("pre.diff .add")
    assert page.locator("section.change h2").first.inner_text().startswith("batch ")
    snap(page, shots, "scene-history")
    page.click("nav.tabs >> text=Who wrote each line")
    page.wait_for_selector("table.blame")
    assert page.locator("table.blame >> text=demo-001").count() >= 1
    snap(page, shots, "blame")


def test_tracing_a_memory_from_a_search(page, served, shots):
    page.goto(served.url)
    page.click("header >> text=Memories")
    page.fill("#q", "half marathon")
    page.click("form.search button")
    page.wait_for_selector("text=found for")
    page.locator("ul.memories li", has_text="Finished the Lisbon").locator("a").click()
    page.wait_for_selector("ol.events")
    assert page.locator("main h1").inner_text() == "Memory demo-017"
    events = page.locator("ol.events").inner_text()
    assert re.search(r"batch \d+: placed", events)
    carried = page.locator("ul.lines").inner_text()
    assert "Finished the Lisbon half marathon in 1:52" in carried
    assert carried.split(" line ")[0] in events          # the scene it was placed in
    snap(page, shots, "memory")


def _queue(page, name: str) -> str:
    with page.expect_navigation():        # not the page before the click: it has a main h1 too
        page.click(f"nav.tabs >> text={name}")
    page.wait_for_selector("main h1")
    return page.locator("main").inner_text()


def test_deciding_pairs_each_way_and_undoing_a_merge(page, served, shots, store_root):
    page.goto(served.url)
    page.click("header >> text=Review")
    page.wait_for_selector("ul.pairs")
    pairs = page.locator("ul.pairs li > a").all_inner_texts()
    assert len(pairs) == 2
    snap(page, shots, "review")
    orca = next(p for p in pairs if "Orca" in page.locator(f"li:has(a:text('{p}'))")
                .inner_text())

    # merge with an edited draft, after a preview
    page.click(f"text={orca}")
    page.wait_for_selector("div.pair")
    assert page.locator("section.memory.left .sources").inner_text().count("standup#") == 1
    page.fill("#title", "Orca release moved to Friday")
    page.fill("#summary", "The Orca release moved to Friday: QA found a crash on ARM boards.")
    page.click("button[value=preview]")
    expect(page.locator("section.preview")).to_be_visible()
    preview = page.locator("section.preview").inner_text()
    assert "Archived" in preview and "Orca release moved to Friday" in preview
    assert page.locator("#title").input_value() == "Orca release moved to Friday"
    snap(page, shots, "pair-preview")
    page.click("button[value=merge]")
    expect(page.locator("p.said")).to_contain_text("merge")
    expect(page.locator("table.done")).to_contain_text("Orca release moved to Friday")
    snap(page, shots, "review-done")

    # undo it: the pair is back in the first queue, and shown
    page.click("button:text('Undo merge')")
    expect(page.locator("p.said")).to_contain_text("waits for your decision again")
    expect(page.locator("ul.pairs")).to_contain_text(orca)

    # keep left, undo; keep right, undo; keep both (final)
    for side in ("left", "right"):
        page.goto(f"{served.base}/review/{orca}")
        # The decision's answer, not the done table (it may still say "kept" from the other
        # side's decision before this one is made): its commit is made by then.
        with page.expect_response(lambda r: r.request.method == "POST", timeout=WAIT_MS):
            page.click(f"section.memory.{side} button")
        expect(page.locator("table.done")).to_contain_text("kept")
        assert f"keep {side}" in git.Repo(store_root).head.commit.message
        page.click("button:text('Undo merge')")
        expect(page.locator("p.said")).to_contain_text("waits for your decision again")
        expect(page.locator("ul.pairs")).to_contain_text(orca)
    page.goto(f"{served.base}/review/{orca}")
    page.click("text=Keep both")
    expect(page.locator("table.done")).to_contain_text("kept both")
    assert orca not in _queue(page, "Needs your decision")


def test_a_merge_undo_refused_while_a_later_change_depends_on_it(page, served, store_root):
    from scene_engine.extraction import events as ledger
    from scene_engine.store.store import open_store

    page.goto(served.url)
    page.goto(served.base + "/review")
    pair = page.locator("ul.pairs li > a").first.inner_text()
    page.goto(f"{served.base}/review/{pair}")
    page.click("section.memory.left button")
    expect(page.locator("p.said")).to_contain_text("merge")
    store = open_store(store_root)
    merge = ledger.read_events(store)[-1]
    ledger.write(store, [], [ledger.new_event("status", memory=merge["keep"],
                                              status="superseded", by="x-newer")],
                 "add: a later correction")
    before = head(store_root)
    page.click("button:text('Undo merge')")
    expect(page.locator("p.refused")).to_contain_text("depends on it")
    assert head(store_root) == before


def test_drafts_are_kept_while_moving_between_pairs(page, served):
    page.goto(served.url)
    page.goto(served.base + "/review")
    first, second = page.locator("ul.pairs li > a").all_inner_texts()
    page.goto(f"{served.base}/review/{first}")
    page.fill("#title", "My own words for the first pair")
    page.goto(f"{served.base}/review/{second}")
    assert page.locator("#title").input_value() != "My own words for the first pair"
    page.goto(f"{served.base}/review/{first}")
    page.wait_for_selector("#title")
    assert page.locator("#title").input_value() == "My own words for the first pair"


def test_undo_from_the_history_refused_on_conflict_then_done(page, served, shots,
                                                             store_root):
    page.goto(served.url)
    page.click("header >> text=History")
    page.wait_for_selector("table.history")
    snap(page, shots, "history")
    before = head(store_root)
    page.click("button:text-is('Undo batch 1')")       # later batches changed its scene
    expect(page.locator("p.refused")).to_contain_text("later commits")
    expect(page.locator("p.refused")).to_contain_text("Undo those commits first")
    assert head(store_root) == before
    snap(page, shots, "undo-refused")
    page.click(f"button:text-is('Undo batch {DEMO['last']}')")
    expect(page.locator("p.said")).to_contain_text(f"batch {DEMO['last']} undone")
    expect(page.locator("tr.undone")).to_have_count(1)
    page.click(f"button:text-is('Redo batch {DEMO['last']}')")
    expect(page.locator("p.said")).to_contain_text(f"batch {DEMO['last']} done again")


def test_a_batch_shows_its_memories_ledger_and_diff(page, served, shots):
    page.goto(served.url)
    page.goto(served.base + "/batch/3")
    assert page.locator("table.ledger tbody tr").count() >= 1
    assert page.locator("table.ledger").inner_text().count("placed") >= 1
    assert page.locator("pre.diff .add").count() >= 1
    snap(page, shots, "batch")


def test_reading_works_with_javascript_off(browser, served, shots):
    context = browser.new_context(java_script_enabled=False,
                                  viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    try:
        page.goto(served.url)
        assert page.locator("table.scenes tbody tr").count() == int(DEMO["count"])
        page.click(f"table.scenes >> text={DEMO['liwei']}")
        page.wait_for_selector("article.scene")
        assert "红烧肉" in page.locator("article.scene").inner_text()
        page.click("nav.tabs >> text=Who wrote each line")
        page.wait_for_selector("table.blame")
        page.click("header >> text=Review")
        page.wait_for_selector("ul.pairs")
        assert page.locator("ul.pairs li > a").count() == 2
        snap(page, shots, "no-javascript")
    finally:
        context.close()
