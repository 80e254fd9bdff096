"""core: what every layer may use and that knows nothing of stores, scenes or models.

``errors`` (the one error root, ``SceneEngineError``, and exceptions as plain text), ``fs``
(atomic writes, reads that never follow a link), ``interrupts`` (Ctrl-C and SIGTERM held back
around a write and its commit), ``text`` (lexical features), ``when`` (relative time made
absolute), ``plural`` (counts as a person reads them), ``ids`` (memory id ranges as digests cite
them), ``periods`` (the days and periods that lead timeline lines: months, quarters,
years, spans of years), ``checks`` (argument checks in the command line's words), ``weblog`` (access logs without
the query string, where a misplaced token would be).

May import: the standard library and third-party packages only; nothing of scene_engine.
"""
