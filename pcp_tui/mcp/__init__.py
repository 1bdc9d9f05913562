"""`pcp mcp`: the MCP server (server, tools' text, schemas, the SDK wiring, HTTP, token) and `pcp register`.

Imports store and the MCP SDK, never Textual (tests/test_layers.py).
"""
