import sys
from pathlib import Path
from store import Store
from store.adapters import import_chatgpt, import_claude, import_claude_code
out = Path(sys.argv[1]); data = Path(sys.argv[2])
if out.exists(): out.unlink()
with Store.open(out) as st:
    for f in sorted((data / "exports").glob("chatgpt-*.json")):
        print(f.name, import_chatgpt(st, f).created)
    for f in sorted((data / "exports").glob("claude-*.json")):
        print(f.name, import_claude(st, f).created)
    print("claude-code", import_claude_code(st, data / "agents" / "claude-code" / "kfischer-okarin").created)
