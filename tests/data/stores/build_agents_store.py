"""Write the store main's agent importers make of every vendored transcript (tests/data/stores/README.md)."""
import sys
from pathlib import Path

from store import Store
from store.adapters import import_claude_code, import_codex, import_gemini

out, agents = Path(sys.argv[1]), Path(sys.argv[2])
if out.exists():
    out.unlink()
with Store.open(out) as st:
    for name, importer in (("claude-code", import_claude_code), ("codex", import_codex), ("gemini", import_gemini)):
        print(name, importer(st, agents / name).created)
