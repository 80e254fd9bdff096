"""index: the derived search index, rebuilt from the files at will (docs/DESIGN.md "Index
and watcher").

``analysis`` (how text becomes index terms: stemming, jieba, character pairs; and
``words_zh.txt``), ``scenes`` (``SceneIndex``: SQLite + FTS5 over scenes and memories),
``memories`` (the journal's tables), ``watcher`` (watchdog keeps the index in step with any
editor), ``refresh`` (bring the index up to date after a write; a failure costs only
freshness), ``dense`` (what a text means: the bundled sentence encoder, or the semantic
extra's larger model; vectors beside the index in ``vectors/<model>.sqlite``, cached by
text, a search by meaning; imports numpy and the encoder only when used), ``encoder_cache``
(the encoder loaded in a fraction of its time from a prepared copy in the user's cache),
``wal`` (the SQLite files are put in WAL mode waiting for another process that opens them
too) and ``sqlite_rows`` (one ``SELECT ... IN`` over any number of values, a chunk a query).

May import: ``core``, ``store``.
"""
