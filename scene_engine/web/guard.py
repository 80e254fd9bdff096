"""Who may use the page (docs/DESIGN.md "The page": served on 127.0.0.1 with a token).

The rules, in the order a request meets them:

1. The ``Host`` header names this server (127.0.0.1, localhost or [::1] at its port): a web
   page that points a name of its own at 127.0.0.1 (DNS rebinding) is refused.
2. The token: in the URL ``scenes ui`` printed (``?token=``), or in the cookie the first
   such visit sets (HttpOnly, SameSite=Strict), compared in constant time. A visit with the
   token in its URL is sent on to the same page without it, so the token is not left in the
   address bar, the history or a ``Referer``.
3. A request that changes something (any method but GET and HEAD) says where it comes
   from, and it is this server: its ``Origin``, or without one its ``Referer`` (a request
   with neither is refused: a browser sends ``Origin`` with every form it posts); and its form
   carries the page's form token (``csrf``). That token is not the access token: it is an
   HMAC of it with a secret this process drew at its start (``form_token``), so a page's
   HTML, saved or shared, holds no key to the store, and a new ``scenes ui`` makes every old
   form stale.

A refusal is a short page with status 403 (or 400 for a bad host) that says what to do.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "scenes_ui"     # + "_PORT": cookies are per host, not per port, so two stores'
                         # pages open at once would each log the other out
SAFE_METHODS = ("GET", "HEAD")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


# Drawn once a process: the form token of a page is an HMAC of its access token with it.
_FORM_SECRET = secrets.token_bytes(32)


def form_token(token: str) -> str:
    """The ``csrf`` value the page's forms carry for access token ``token``: derived from it
    (HMAC-SHA256 with this process's secret), never the token itself."""
    return hmac.new(_FORM_SECRET, token.encode(), hashlib.sha256).hexdigest()


def same(given: str | None, token: str) -> bool:
    """True when ``given`` is ``token`` (constant time: the comparison says nothing of how
    much of a guess was right)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _refusal(status: int, title: str, text: str) -> Response:
    page = ("<!doctype html><html lang='en'><meta charset='utf-8'><title>scenes ui: "
            f"{title}</title><body style='font-family:sans-serif;max-width:40em;margin:3em "
            f"auto'><h1>{title}</h1><p>{text}</p></body></html>")
    return HTMLResponse(page, status_code=status)


class Guard:
    """ASGI middleware that applies the rules above before ``app`` sees a request.

    ``token``: the secret the URL carries. ``port``: the port served (the ``Host`` rule);
    None accepts any port of a local host (tests that call the app in process)."""

    def __init__(self, app: ASGIApp, token: str, port: int | None = None):
        self.app = app
        self.token = token
        self.port = port
        self.cookie = f"{COOKIE}_{port}" if port is not None else COOKIE

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        refused = self._refused(request)
        if refused is not None:
            return await refused(scope, receive, send)
        given = request.query_params.get("token")
        if request.method in SAFE_METHODS and same(given, self.token):
            return await self._without_token(request)(scope, receive, send)
        scope.setdefault("state", {})["token"] = self.token
        await self.app(scope, receive, send)

    def _refused(self, request: Request) -> Response | None:
        if not self._host_ok(request.headers.get("host", "")):
            return _refusal(400, "Not this server",
                            "This page answers only at the address <code>scenes ui</code> "
                            "printed (127.0.0.1).")
        if not (same(request.query_params.get("token"), self.token)
                or same(request.cookies.get(self.cookie), self.token)):
            return _refusal(403, "The link needs its token",
                            "Open the whole address <code>scenes ui</code> printed, with its "
                            "<code>?token=</code>: without it the page shows nothing.")
        if request.method not in SAFE_METHODS:
            return self._from_here(request)
        return None

    def _from_here(self, request: Request) -> Response | None:
        """None when a change comes from this server's own page (rule 3), else the refusal."""
        origin = request.headers.get("origin")
        if origin is None:
            referer = urlsplit(request.headers.get("referer", ""))
            origin = f"{referer.scheme}://{referer.netloc}" if referer.netloc else None
        if origin is None:
            return _refusal(403, "Refused: no origin",
                            "A change must say which page asked for it (the browser's "
                            "<code>Origin</code> or <code>Referer</code>); use the page's "
                            "own buttons.")
        if origin != self._origin(request):
            return _refusal(403, "Refused: another site",
                            "A change can be asked only from this page itself.")
        return None

    def _host_ok(self, host: str) -> bool:
        if self.port is not None:
            return host in {f"{name}:{self.port}" for name in LOCAL_HOSTS}
        name = host if host.endswith("]") else host.rsplit(":", 1)[0]
        return name in LOCAL_HOSTS

    @staticmethod
    def _origin(request: Request) -> str:
        return f"{request.url.scheme}://{request.headers.get('host', '')}"

    def _without_token(self, request: Request) -> Response:
        """The same page without ``token`` in its URL, the cookie set."""
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        url = URL(path=request.url.path, query=urlencode(rest) if rest else "")
        response = RedirectResponse(str(url), status_code=303)
        response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
        return response


def form_token_ok(request: Request, form: dict) -> bool:
    """True when a posted ``form`` carries the page's form token as ``csrf`` (rule 3)."""
    token = request.scope.get("state", {}).get("token", "")
    return bool(token) and same(form.get("csrf"), form_token(token))
