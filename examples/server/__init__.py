"""The mrtr-state example MCP server (see ``app.py``; run it with ``python examples/server``)."""
