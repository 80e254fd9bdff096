"""mcpserver: the MCP server (``scenes mcp``), a thin face over ``services`` for agents
(docs/DESIGN.md "MCP").

``tools`` (the tools as plain functions over a store, testable without the protocol) and
``server`` (their registration with the official MCP SDK, the transports, the bearer token).

May import: ``services``, ``core``, and the layers below for types; the MCP SDK only here.
"""
