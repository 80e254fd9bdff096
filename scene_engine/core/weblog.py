"""Access logs that never hold a secret: uvicorn's access lines without the query string.

A token belongs in a header (``Authorization: Bearer``) or the page's cookie, but a person or a
client may put it in the URL (``/mcp?token=...``, the page's first ``/?token=...``); uvicorn's
access line prints the whole URL, so the token would sit in a terminal's scrollback or a log
file. Every server the engine starts (``scenes mcp --http``, ``scenes serve``, ``scenes ui``)
installs ``hide_query_strings`` before it serves.
"""

from __future__ import annotations

import logging

ACCESS_LOGGER = "uvicorn.access"


class NoQueryString(logging.Filter):
    """Drops the query string from an access record's path. uvicorn logs
    ``'%s - "%s %s HTTP/%s" %d'`` with ``(client, method, path and query, version, status)``."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def hide_query_strings() -> None:
    """Install ``NoQueryString`` on uvicorn's access logger (once; the logger keeps it when
    uvicorn configures its handlers)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, NoQueryString) for f in logger.filters):
        logger.addFilter(NoQueryString())
