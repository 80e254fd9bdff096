"""index: the derived search index, rebuilt from the files at will (docs/DESIGN.md "Index
and watcher").

``analysis`` (how text becomes index terms: stemming, jieba, character pairs; and
``words_zh.txt``), ``scenes`` (``SceneIndex``: SQLite + FTS5 over scenes and memories),
``memories`` (the journal's tables), ``watcher`` (watchdog keeps the index in step with any
editor) and ``refresh`` (bring the index up to date after a write; a failure costs only
freshness).

May import: ``core``, ``store``.
"""
