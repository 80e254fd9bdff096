"""web: the page for people, ``scenes ui`` (docs/DESIGN.md "The page").

``app`` (the Starlette application: its routes, each a thin face over one service),
``guard`` (who may ask: the host, the token, the origin, the form's token), ``render``
(scene Markdown to safe HTML, diffs, the pictures as inline SVG), ``templates/`` (Jinja2,
rendered on the server, so every page reads with JavaScript off) and ``static/`` (the
stylesheet, htmx 2 as released on npm, and a small script that keeps merge drafts while a
person moves between pairs). Nothing is fetched from the internet at run time.

Every write a page makes is one the command line makes too, through the same service:
``services.undo.undo_batch``, ``services.review.decide`` and ``services.review.undo_merge``.

May import: ``core``, ``store``, ``services``; Starlette, uvicorn, Jinja2 and markdown-it
only here (and Starlette and uvicorn in ``serving``).
"""
