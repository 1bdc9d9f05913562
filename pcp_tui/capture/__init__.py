"""`pcp capture`: live capture from coding agents; manage (install, uninstall, status, run), agents (their
config files), hook (what the agent runs: standard library and state only until it forks), state (capture.toml,
logs, locks). Imports store only in the hook's child and in manage; never Textual or Rich.
"""

AGENTS = ("claude-code", "codex", "gemini")  # the agents pcp hooks into (each also one of store.adapters.IMPORTERS)
