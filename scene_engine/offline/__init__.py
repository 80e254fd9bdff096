"""offline: the deterministic backend, no network, held to the same rules as a model
(docs/DESIGN.md "Backends").

``backend`` (``OfflineBackend``: routes, writes and accounts for a batch through the
sandbox), ``words`` (what a memory is about, in its own language's words), ``areas`` (areas
of a life, in English and Chinese), ``routing`` (which scene a memory belongs to),
``timeline`` (a scene as dated entries), ``threads`` (open plans and questions), ``rollup``
(digests instead of loss) and ``prose`` (summaries a person reads).

May import: ``core``, ``store``, ``index`` (its analysers), ``batch`` (the contract and the
rules it is held to).
"""
