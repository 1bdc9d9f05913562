"""Write `tmp/<hash>/chats/session-2026-01-10T20-00-fa4593e0.jsonl` from the vendored real session fa4593e0 (entireio-cli).

No real JSON Lines session with these records was found under a licence that allows vendoring, so this
one is built from the real .json session in the shape issue 29 describes and Gemini CLI writes:
- the tool output sent back to the model recorded as a `user` turn whose text is
  `[Function Response: <tool>]` followed by the output (older Gemini CLI versions);
- "System: Please continue." (the turn Gemini CLI sends by itself after an empty answer), real in the source;
- an `info` notice (the real one of session f7633853) inside a `$set.messages` batch.
The session id is new, so it is a session of its own. Run from the repository root; the output is committed.
"""

import copy
import json
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
HASH = "7e8989f71805c3147f6be9b7a71de2a156f8face69f9380beeeb8a777414f21c"
REAL = HERE.parent / "entireio-cli" / "tmp" / HASH / "chats"
SOURCE = REAL / "session-2026-01-10T20-00-fa4593e0.json"
NOTICE = REAL / "session-2026-01-15T20-51-f7633853.json"
SESSION = "fa4593e0-0000-4000-8000-00000000d21e"
OUT = HERE / "tmp" / HASH / "chats" / "session-2026-01-10T20-00-fa4593e0.jsonl"


def renamed(msg: dict) -> dict:
    """The message under an id of its own (the real session keeps the real ids)."""
    return {**msg, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "pcp-tests:gemini:" + msg["id"]))}


def main() -> None:
    session = json.loads(SOURCE.read_text())
    info = renamed(next(m for m in json.loads(NOTICE.read_text())["messages"] if m["type"] == "info"))
    msgs = [renamed(m) for m in session["messages"]]
    lines: list[dict] = [{"sessionId": SESSION, "projectHash": session["projectHash"], "startTime": session["startTime"],
                          "lastUpdated": session["lastUpdated"]}]
    for msg in msgs:
        lines.append(msg)
        lines.append({"$set": {"lastUpdated": msg["timestamp"]}})
        for call in msg.get("toolCalls") or []:  # the tool's output, sent back as a user turn
            output = call["result"][0]["functionResponse"]["response"]["output"]
            lines.append({"id": call["id"] + "-response", "timestamp": call["timestamp"], "type": "user",
                          "content": f"[Function Response: {call['name']}]{output}"})
    batch = [copy.deepcopy(m) for m in msgs[-2:]]
    batch.insert(1, {**info, "timestamp": msgs[-1]["timestamp"]})
    lines.append({"$set": {"messages": batch, "lastUpdated": msgs[-1]["timestamp"]}})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


if __name__ == "__main__":
    main()
