"""offline: the deterministic backend, no network, held to the same rules as a model
(docs/DESIGN.md "Backends").

``backend`` (``OfflineBackend``: groups, writes and accounts for a batch through the
sandbox), ``meaning`` (what a batch's texts mean, as vectors: the sentence encoder and the
person's own words), ``grouping`` (which scene each memory belongs to, decided over the
batch, the scenes and what is pending after it), ``naming`` (what a scene is called),
``words`` and ``nouns`` (a memory's words and nouns in its own language), ``timeline`` (a
scene as dated entries), ``threads`` (open plans and questions), ``rollup`` (digests
instead of loss) and ``prose`` (summaries a person reads). docs/DESIGN.md "Meaning and
grouping".

May import: ``core``, ``store``, ``index`` (its analysers), ``batch`` (the contract and the
rules it is held to).
"""
