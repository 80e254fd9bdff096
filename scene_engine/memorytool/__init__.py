"""memorytool: Anthropic's memory tool (``memory_20250818``) on a store, a thin face over
``services.memory_tool`` for applications that call Claude with the anthropic SDK
(docs/DESIGN.md "Host folding").

``sdk`` holds ``SceneMemoryTool``, the SDK's ``BetaAbstractMemoryTool`` whose six commands
go to the store's scenes through the sandbox, and whose ``flush()`` commits a turn's changes
as one batch.

May import: ``services``, ``core``, ``store``; the anthropic SDK only here (the ``anthropic``
extra).
"""
