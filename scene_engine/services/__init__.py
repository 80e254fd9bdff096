"""services: every operation a person or an agent asks for, one function each; the command
line and the MCP server are thin faces over these (docs/DESIGN.md "Layers of the code").

``add`` (validate and append memories, drain the inbox), ``run`` (the batches until nothing
is pending, with the persona kept fresh), ``backends`` (which backend the options and the
settings choose), ``status``, ``listing`` (scenes as a person sees them), ``search``,
``persona``, ``folding`` (batches in the background, the inbox joined at once), ``undo``,
``trace`` and blame, ``doctor``, ``repair`` (the journal after a git merge), ``extract``
(conversations in), ``demo`` and ``faults`` (library failures said in one line), ``pages`` (what the page,
``scenes ui``, reads that no one command prints whole: a batch, a scene's history, the
pictures' data).

May import: every layer below (``core``, ``store``, ``llm``, ``index``, ``extraction``,
``batch``, ``offline``, ``recall``); never ``mcpserver`` or ``cli``, and never Typer, Rich or
the MCP SDK.
"""
