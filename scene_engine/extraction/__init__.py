"""extraction: L0 -> L1, memories extracted from raw conversations (docs/DESIGN.md
"Extraction").

Modules, one concern each: ``conversation`` (the three file layouts -> messages),
``dateline`` (a transcript's date line, in the forms people write one),
``schema`` (the one pydantic schema and the rules it cannot see), ``offline`` (the
deterministic extractor), ``model`` (the model extractor and its prompt), ``context`` (the
existing memories shown with a block), ``dedupe`` (candidate pairs and adjudication),
``merge`` (merges and their undo), ``events`` (the append-only ledger of status changes, the
queue and merges), ``review`` (the queue a person works through) and ``pipeline`` (a file
in, one commit out), ``courtesy`` (an assistant's pleasantries, never a memory).

May import: ``core``, ``store``, ``llm``, ``index``.
"""
