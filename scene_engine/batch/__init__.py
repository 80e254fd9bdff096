"""batch: one batch as a transaction, memories in, scenes out, one git commit (docs/DESIGN.md
"A batch").

``contract`` (what a backend is given and returns: ``BatchJob``, ``BackendResult``, the
``Backend`` and ``ModelBackend`` protocols, ``BatchError``), ``transaction`` (select, build the
job, run the backend, validate, apply and commit under the store lock), ``rules`` (the scene
rules in code), ``conservation`` (no fact and no person's word lost), ``accounting`` (where
each memory went: the ledger), ``prompt`` (the batch prompt), ``transcript`` (a model batch's
exchange, for a person) and ``model_backend`` (a litellm model as a backend).

May import: ``core``, ``store``, ``llm``, ``index``, ``extraction`` (its ledger of merges).
"""
