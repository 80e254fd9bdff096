"""The MCP server (``scenes mcp``): agents remember and recall through the Model Context
Protocol. ``tools``: the tools as plain functions over a store; ``server``: their registration
with the official MCP SDK and the transports."""
