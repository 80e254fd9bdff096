"""Serve the page (``scenes ui``, docs/DESIGN.md "The page"): on 127.0.0.1 only, a new
token each start, the port bound before the address is said (port 0: any free one).

Steps: bind the socket, make the token and the application, say the address through
``ready`` (the command prints it), run uvicorn on that socket until Ctrl-C.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable
from pathlib import Path

from scene_engine.core.errors import UnavailableError

HOST = "127.0.0.1"        # never another address: the page has no login but its token


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: one the system picks). Raises
    ``UnavailableError`` when the port is taken or not allowed."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as err:
        sock.close()
        raise UnavailableError(f"cannot serve the page on {HOST}:{port}: {err.strerror or err}"
                               " (give another --port, or 0 for any free one)") from err
    return sock


def url(port: int, token: str) -> str:
    """The address a person opens: ``http://127.0.0.1:PORT/?token=TOKEN``."""
    return f"http://{HOST}:{port}/?token={token}"


def serve(root: Path, port: int, ready: Callable[[str], None]) -> None:
    """Serve the store at ``root`` until interrupted; ``ready(url)`` once the socket listens.
    Raises ``UnavailableError`` as ``bind``."""
    import uvicorn

    from scene_engine.core.weblog import hide_query_strings
    from scene_engine.web.app import make_app

    hide_query_strings()        # the first visit's URL carries the token
    sock = bind(port)
    bound = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    config = uvicorn.Config(make_app(root, token, bound), log_level="warning",
                            access_log=False, server_header=False)
    ready(url(bound, token))
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
