"""serving: many stores past one machine (docs/DESIGN.md "Serving many stores").

A store is a bare git repository on a git server, memories wait in a Postgres inbox, and fold
jobs run on procrastinate workers; the push of a batch without force is what makes it count.

``database`` (the connection, our tables beside procrastinate's, the inbox, the store
registry and its tokens, the per-store counters), ``remote`` (bare repositories, the clone
cache, fetch-and-reset, the push as guard), ``jobs`` (the procrastinate app: the fold job per
store, the sweeper, the stalled-job recovery), ``fold`` (one fold job: inbox rows into the
journal with the add path, the batch code, the push, the rounds after a rejected push),
``front`` (what a front-end serves: remember, recall, search, status, over readers' clones
stamped with the commit they were built from plus the inbox) and ``http`` (the HTTP face of
``front``, a store per token).

May import: every layer below ``mcpserver`` (``core`` .. ``services``); psycopg, procrastinate,
Starlette and uvicorn only here. Imported only by ``cli`` (its commands ``serve``, ``worker``,
``queue`` and ``provision``); a single-machine user never loads it.
"""
