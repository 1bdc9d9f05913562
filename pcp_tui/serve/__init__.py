"""`pcp serve`: the app in a browser through textual-serve (web), behind the local-server guard (guard).

The guard is shared with `pcp mcp --http`; nothing here imports Textual at module import.
"""
