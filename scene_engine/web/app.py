"""The page's routes (docs/DESIGN.md "The page"): each reads or writes through one service,
renders a server-side template, and shows a refusal as the message the command line prints.

Routes: ``/`` (the scenes list with both pictures), ``/scene/{name}`` (rendered), its
``/timeline``, ``/history`` (each batch's diff) and ``/blame``; ``/history`` (batches, hand
edits and undos) and ``POST /undo``; ``/batch/{n}`` (memories, ledger, diff);
``/memories`` (search the journal) and ``/memory/{id}`` (the trace); ``/review`` (the three
queues), ``/review/{pair}`` (the pair side by side), ``POST /review/{pair}`` (decide or
preview) and ``POST /review-undo`` (undo a merge).

A write answers with a redirect (303) to the page that shows its result, so reloading that
page never asks twice; a refused write shows the page again with the refusal (409) and the
person's draft kept.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scene_engine.core.errors import InputError, NotUtf8Error, SceneEngineError
from scene_engine.core.fs import escape_undecodable
from scene_engine.core.plural import count
from scene_engine.web import render
from scene_engine.web.guard import Guard, form_token, form_token_ok

HERE = Path(__file__).parent
MEMORIES_SHOWN = 50          # the memories page without a query: the newest this many
HISTORY_SHOWN = 200          # the history page: the newest this many entries
RENDER_LIMIT = 300_000       # characters of a scene rendered as Markdown (3 MB took 4 s)
TRACE_KINDS = {"batch": "batch", "undo": "undo", "hand edit": "hand edit"}


def _environment(tz) -> Environment:
    """The templates and their filters; ``tz``: the store's time zone (``day``, ``when``)."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["markdown"] = render.markdown
    env.filters["said"] = render.said
    env.filters["diff_lines"] = render.diff_lines
    env.filters["short"] = lambda sha: (sha or "")[:8]
    env.filters["day"] = lambda text: render.local(text, tz, minutes=False)
    env.filters["when"] = lambda text: render.local(text, tz)
    env.filters["scene_name"] = lambda name: name[:-3] if name.endswith(".md") else name
    return env


class Page:
    """The page of one store. ``root``: the store's folder; ``token``: the secret of the
    URL; ``port``: the port served (the ``Host`` check; None in process)."""

    def __init__(self, root: Path, token: str, port: int | None = None):
        self.root = root
        self.token = token
        self.port = port
        self.env = _environment(self.store().config.tz)   # read once: a new zone, a restart

    # -- plumbing ---------------------------------------------------------------------

    def store(self):
        from scene_engine.store.store import open_store

        return open_store(self.root)

    def html(self, request: Request, template: str, status: int = 200, **context: Any
             ) -> HTMLResponse:
        said = request.query_params.get("said", "")
        page = self.env.get_template(template).render(
            request=request, csrf=form_token(self.token), said=said, section=template.split(".")[0],
            **context)
        # git's diffs and blame carry a person's stray byte as a lone surrogate: \xNN
        return HTMLResponse(escape_undecodable(page), status_code=status)

    def refusal(self, request: Request, err: BaseException, status: int = 400) -> HTMLResponse:
        return self.html(request, "message.html", status=status,
                         title={404: "Not found", 500: "Something went wrong"}.get(
                             status, "Refused"),
                         message=_one_line(err))

    async def read(self, request: Request, template: str,
                   load: Callable[[], dict | Response]) -> Response:
        """``load()`` in a worker thread (services block), then ``template`` with what it
        gives (a ``Response`` it gives, a redirect, is the answer as it is); a
        ``SceneEngineError`` is the refusal page (404 for a thing not found)."""
        try:
            context = await run_in_threadpool(_quietly, load)
        except SceneEngineError as err:
            return self.refusal(request, err, 404 if _not_found(err) else 400)
        if isinstance(context, Response):
            return context
        return self.html(request, template, **context)

    # -- scenes -----------------------------------------------------------------------

    async def scenes(self, request: Request) -> Response:
        def load() -> dict:
            from scene_engine.services import listing, pages, status

            store = self.store()
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                rows = listing.scene_rows(store)
            heat, days = pages.heat_over_batches(store), pages.memories_per_day(store)
            return {"rows": rows, "counts": status.status(store),
                    "warnings": [str(w.message) for w in said],
                    "heat_svg": render.heat_svg(heat), "days_svg": render.days_svg(days),
                    "heat_caption": _heat_caption(heat), "days_caption": _days_caption(days)}
        return await self.read(request, "scenes.html", load)

    async def scene(self, request: Request) -> Response:
        name, view = request.path_params["name"], request.path_params.get("view", "read")
        if view not in ("read", "timeline", "history", "blame"):
            return self.refusal(request, InputError(f"no view {view!r} of a scene"), 404)

        def load() -> dict | Response:
            from scene_engine.services import listing, pages, trace
            from scene_engine.store.scene import parse_scene

            store = self.store()
            found = listing.match_scene(store, name)
            if found is None:
                into = listing.taken_in_by(store, name)
                if into is not None:    # an old name (a ledger's, a trace's link): where it went
                    return _redirect(f"/scene/{quote(into, safe='')}"
                                     + ("" if view == "read" else f"/{view}"),
                                     said=f"{name} was renamed or merged into {into}")
                found = listing.find_scene(store, name, "the scenes list")   # raises: none
            try:
                text, undecodable = listing.scene_text(store, found), ""
            except NotUtf8Error as err:  # a person's bytes: shown escaped, said, never a 500
                text, undecodable = listing.scene_escaped(store, found), str(err)
            scene = parse_scene(text, found)
            context: dict[str, Any] = {"name": found, "scene": scene, "view": view,
                                       "render_limit": RENDER_LIMIT,
                                       "undecodable": undecodable}
            if view == "timeline":
                context["timeline"] = render.timeline(scene.body)
            elif view == "history":
                context["history"] = pages.scene_history(store, found)
            elif view == "blame":
                context["blame"] = trace.blame_scene(store, found)
            return context
        return await self.read(request, "scene.html", load)

    # -- history ----------------------------------------------------------------------

    async def history(self, request: Request) -> Response:
        def load() -> dict:
            from scene_engine.services.history import log

            return {"entries": log(self.store(), limit=HISTORY_SHOWN), "shown": HISTORY_SHOWN}
        return await self.read(request, "history.html", load)

    async def batch(self, request: Request) -> Response:
        number = request.path_params["number"]

        def load() -> dict:
            from scene_engine.services.pages import batch_detail

            return {"batch": batch_detail(self.store(), number)}
        return await self.read(request, "batch.html", load)

    async def undo(self, request: Request) -> Response:
        form = dict(await request.form())
        if not form_token_ok(request, form):
            return self.refusal(request, InputError("the form lacks this page's token"), 403)
        target = str(form.get("batch", "")).strip()
        if not target.isdigit():
            return self.refusal(request, InputError("say which batch to undo (a number)"))
        expect = str(form.get("action", ""))
        if expect not in ("undo", "redo"):
            return self.refusal(request, InputError("say whether to undo or redo the batch"))
        try:
            result = await run_in_threadpool(_quietly, lambda: _undo(self.store(), target,
                                                                     expect))
        except SceneEngineError as err:
            return self.html(request, "history.html", status=409, refused=_one_line(err),
                             entries=await run_in_threadpool(_quietly, self._log_or_none),
                             shown=HISTORY_SHOWN)
        return _redirect("/history", said=result)

    def _log_or_none(self) -> list[dict]:
        from scene_engine.services.history import log

        try:
            return log(self.store(), limit=HISTORY_SHOWN)
        except SceneEngineError:
            return []

    # -- memories ---------------------------------------------------------------------

    async def memories(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()

        def load() -> dict:
            from scene_engine.services.search import search

            store = self.store()
            if not query:
                return {"query": "", "hits": None, "newest": _newest_memories(store)}
            found = search(store.root, query, k=MEMORIES_SHOWN, memories=True)
            return {"query": query, "hits": found.as_json(), "newest": [],
                    "warnings": found.warnings, "heading": found.heading,
                    "capped": len(found.hits) >= MEMORIES_SHOWN}
        return await self.read(request, "memories.html", load)

    async def memory(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]

        def load() -> dict:
            from scene_engine.services.trace import describe_event, trace_memory

            found = trace_memory(self.store(), memory_id).to_json()
            return {"trace": found, "described": [describe_event(e) for e in found["events"]]}
        return await self.read(request, "memory.html", load)

    # -- review -----------------------------------------------------------------------

    async def review(self, request: Request, refused: str = "", status: int = 200
                     ) -> Response:
        queue = request.query_params.get("queue", "decide")

        def load() -> dict:
            return _queues(self.store())
        try:
            context = await run_in_threadpool(_quietly, load)
        except SceneEngineError as err:
            return self.refusal(request, err)
        if queue not in ("decide", "model", "done"):
            queue = "decide"
        return self.html(request, "review.html", status=status, queue=queue,
                         refused=refused, **context)

    async def pair(self, request: Request, refused: str = "", draft: dict | None = None,
                   plan: dict | None = None, status: int = 200) -> Response:
        pair_id = request.path_params["pair"]

        def load() -> dict:
            from scene_engine.services import review

            store = self.store()
            found = [p for p in review.pending_pairs(store) if p["pair"] == pair_id]
            if not found:
                raise InputError(f"no open pair {pair_id!r}: it was decided, or never "
                                 "queued (the review page lists them)")
            return {"pair": found[0]}
        try:
            context = await run_in_threadpool(_quietly, load)
        except SceneEngineError as err:
            return self.refusal(request, err, 404)
        return self.html(request, "pair.html", status=status, refused=refused,
                         draft=draft or _draft(context["pair"]), plan=plan, **context)

    async def decide(self, request: Request) -> Response:
        from scene_engine.services import review

        form = {k: str(v) for k, v in (await request.form()).items()}
        if not form_token_ok(request, form):
            return self.refusal(request, InputError("the form lacks this page's token"), 403)
        pair_id = request.path_params["pair"]
        action = form.get("action", "")
        merge = action in ("merge", "preview")
        keep = form.get("keep") or None
        title, summary = (form.get("title"), form.get("summary")) if merge else (None, None)
        draft = {"title": form.get("title", ""), "summary": form.get("summary", ""),
                 "keep": form.get("keep", "left")}
        try:
            if action == "preview":
                plan = await run_in_threadpool(_quietly, lambda: review.preview(
                    self.store(), pair_id, keep, True, title, summary))
                return await self.pair(request, draft=draft, plan=plan)
            if action not in ("keep", "merge"):
                raise InputError("say keep (left, right or both), merge or preview")
            event = await run_in_threadpool(_quietly, lambda: review.decide(
                self.store(), pair_id, keep, merge, title, summary))
        except SceneEngineError as err:
            return await self.pair(request, refused=_one_line(err), draft=draft, status=409)
        said = (f"{pair_id}: kept both" if event["event"] == "kept_both" else
                f"{pair_id}: merge {event['merge']} made; the done queue can undo it")
        return _redirect("/review", said=said, queue="done", pair=pair_id)

    async def undo_merge(self, request: Request) -> Response:
        from scene_engine.services import review

        form = {k: str(v) for k, v in (await request.form()).items()}
        if not form_token_ok(request, form):
            return self.refusal(request, InputError("the form lacks this page's token"), 403)
        merge_id = form.get("merge", "")
        try:
            event = await run_in_threadpool(_quietly, lambda: review.undo_merge(
                self.store(), merge_id))
        except SceneEngineError as err:
            return await self.review(request, refused=_one_line(err), status=409)
        return _redirect("/review", said=f"merge {event['merge']} undone: its pair waits "
                                          "for your decision again", queue="decide")


def _heat_caption(heat: dict) -> str:
    """What the heat picture shows, its caps said (``services.pages``)."""
    from scene_engine.services.pages import HEAT_BATCHES, HEAT_SCENES

    batches = heat["batches"]
    if not batches:
        return ""
    span = f"batch {batches[0]}" if len(batches) == 1 else \
        f"batches {batches[0]}–{batches[-1]}"
    capped = f" (the newest {HEAT_BATCHES} live batches)" if len(batches) >= HEAT_BATCHES else ""
    scenes = f"the {len(heat['heat'])} hottest scenes" if len(heat["heat"]) >= HEAT_SCENES \
        else "each scene"
    return f"Heat of {scenes} after each batch, {span}{capped}"


def _days_caption(days: list[dict]) -> str:
    """What the memories-per-day picture shows, its cap said."""
    from scene_engine.services.pages import DAYS

    if not days:
        return ""
    capped = f" (the newest {DAYS} days that have any; older ones not drawn)" \
        if len(days) >= DAYS else ""
    return (f"Memories per day they were written, folded and pending, {days[0]['day']} to "
            f"{days[-1]['day']}{capped}")


def _undo(store, target: str, expect) -> str:
    """``scenes undo N`` through its service, refused unless it does ``expect`` (the button
    said "Undo" or "Redo"); the line the command line prints."""
    from scene_engine.services.undo import undo_batch

    result = undo_batch(store, target, expect=expect)
    what = {"undo": "undone", "redo": "done again"}.get(result["action"], result["action"])
    batch = f"batch {result['batch']}" if result["batch"] is not None else \
        f"commit {result['target'][:8]}"
    return f"{batch} {what}: {count(result['memories'], 'memory')} {result['fate']}"


def _queues(store) -> dict:
    """The three queues of the review page: ``decide`` (open pairs a model judged unsure,
    or that no model saw: offline), ``model`` (open pairs whose adjudication failed: the
    model was asked and gave no verdict), ``done`` (decided, newest first)."""
    from scene_engine.services import review

    pairs = review.pending_pairs(store)
    failed = [p for p in pairs if str(p["reason"]).startswith("adjudication failed")]
    done = review.decided(store)
    titles = _titles(store, {i for row in done for i in (row["left"], row["right"],
                                                         row["created"]) if i})
    return {"decide": [p for p in pairs if p not in failed], "model": failed, "done": done,
            "titles": titles}


def _titles(store, ids: set[str]) -> dict[str, str]:
    from scene_engine.store.memories import Journal

    journal = Journal(store.memories_dir)
    found = {}
    for memory_id in ids:
        memory = journal.find(memory_id)
        if memory is not None:
            found[memory_id] = memory.title or memory.content[:80]
    return found


def _newest_memories(store) -> list[dict]:
    from scene_engine.store.memories import Journal

    state = store.load_state()
    seqs = list(range(max(0, state.next_seq - MEMORIES_SHOWN), state.next_seq))
    rows = [{"id": m.id, "content": m.content, "created_at": m.created_at.isoformat(),
             "scope": m.scope, "status": m.status}
            for m in Journal(store.memories_dir).read(seqs)]
    rows.reverse()
    return rows


def _draft(pair: dict) -> dict:
    """A merge draft to start from: the left title, both texts (a person edits it)."""
    left, right = pair["left"], pair["right"]
    summary = left["summary"] if left["summary"] == right["summary"] else \
        f"{left['summary']}\n{right['summary']}"
    return {"title": left["title"] or "", "summary": summary, "keep": "left"}


def _quietly(load: Callable[[], Any]) -> Any:
    """``load()`` with the library warnings a page shows itself kept off the terminal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load()


def _not_found(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, LookupError) or text.startswith(("no scene", "no memory",
                                                            "there is no", "no open pair"))


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _redirect(path: str, **query: str) -> RedirectResponse:
    return RedirectResponse(f"{path}?{urlencode(query)}", status_code=303)


class Contained:
    """ASGI middleware: an error no service names becomes one line on the terminal and a
    page that says so (500), never a traceback; nothing was written by the page (every
    write is one service call that keeps the store whole)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:  # noqa: BLE001 - the last place anything can be said
            print(f"scenes ui: {scope.get('method', '')} {scope.get('path', '')}: "
                  f"{type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
            if not started:
                await HTMLResponse(SERVER_ERROR, status_code=500)(scope, receive, send)


SERVER_ERROR = ("<!doctype html><meta charset='utf-8'><title>scenes ui: error</title>"
                "<h1>Something went wrong</h1><p>The page could not be made; the terminal "
                "running <code>scenes ui</code> says why in one line. Nothing was written."
                "</p>")


def make_app(root: Path, token: str, port: int | None = None) -> Starlette:
    """The ASGI application of the store at ``root``, guarded by ``token`` (``web.guard``);
    ``port``: the port served (None: any, for tests in process)."""
    page = Page(root, token, port)
    routes = [
        Route("/", page.scenes),
        Route("/scene/{name}", page.scene),
        Route("/scene/{name}/{view}", page.scene),
        Route("/history", page.history),
        Route("/undo", page.undo, methods=["POST"]),
        Route("/batch/{number:int}", page.batch),
        Route("/memories", page.memories),
        Route("/memory/{memory_id}", page.memory),
        Route("/review", page.review),
        Route("/review-undo", page.undo_merge, methods=["POST"]),
        Route("/review/{pair}", page.pair),
        Route("/review/{pair}", page.decide, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    async def no_such_page(request: Request, exc: Exception) -> Response:
        return page.refusal(request, InputError(
            f"there is no page {request.url.path!r}: the links above lead to what there is"),
            404)
    return Starlette(routes=routes, exception_handlers={404: no_such_page},
                     middleware=[Middleware(Contained),
                                 Middleware(Guard, token=token, port=port)])
