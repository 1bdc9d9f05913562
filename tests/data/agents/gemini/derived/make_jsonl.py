"""Write `tmp/<hash>/chats/session-2026-01-16T11-01-37b7abef.jsonl` from the vendored real .json session.

The record sequence is the one Gemini CLI's ChatRecordingService writes (packages/core/src/services/
chatRecordingService.ts): migrating a .json session on resume (the metadata line, then every message),
`$set` after each message, a message written again once its tool calls and tokens are known, `/rewind`
(`$rewindTo` the prompt rewound to), a compression (`$set.messages` with a summary turn and the kept
turns), and a `$set` of the summary. Run from the repository root; the output is committed.
"""

import copy
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
HASH = "907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f"
SOURCE = HERE.parent / "codemie-code" / "tmp" / HASH / "chats" / "session-2026-01-16T11-01-file-ops-37b7abef.json"
OUT = HERE / "tmp" / HASH / "chats" / "session-2026-01-16T11-01-37b7abef.jsonl"


def main() -> None:
    session = json.loads(SOURCE.read_text())
    msgs = session["messages"]
    lines: list[dict] = [{k: session[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated")}]

    def push(msg: dict) -> None:
        if msg["type"] == "gemini" and msg.get("toolCalls"):
            first = copy.deepcopy(msg)  # recordToolCalls writes the message before its tokens are known
            first.pop("tokens", None)
            lines.append(first)
        lines.append(msg)
        lines.append({"$set": {"lastUpdated": msg["timestamp"]}})

    for msg in msgs[:11]:  # up to "add 5 lines of random text" and its answer
        push(msg)
    lines.append({"$rewindTo": msgs[8]["id"]})  # /rewind to before "add 5 lines of random text"
    retry = {"id": "3c0d8f52-6d2e-4c1a-9b7e-0a4f5e6d7c81", "timestamp": "2026-01-16T12:20:00.000Z",
             "type": "user", "content": [{"text": "add 3 lines of random text instead"}]}
    answer = {"id": "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "timestamp": "2026-01-16T12:20:09.000Z",
              "type": "gemini", "content": "I have added 3 lines of random text to `hello.md`.",
              "thoughts": [{"subject": "Appending text", "description": "Three short lines at the end of the file.",
                            "timestamp": "2026-01-16T12:20:05.000Z"}],
              "model": msgs[10].get("model"), "tokens": {"input": 9000, "output": 40, "cached": 0, "total": 9040}}
    push(retry)
    push(answer)
    summary = {"id": "f0e1d2c3-b4a5-4968-8776-655443322110", "timestamp": "2026-01-16T12:25:00.000Z",
               "type": "user", "content": [{"text": "<state_snapshot>\nThe user explored the repository and "
                                                    "created hello.md with random text.\n</state_snapshot>"}]}
    lines.append({"$set": {"messages": [summary, retry, answer], "lastUpdated": "2026-01-16T12:25:00.000Z"}})
    for msg in msgs[11:]:  # "remove 2 and 3 line" and its answer
        push(msg)
    lines.append({"$set": {"summary": "Explore the repository, then create and edit hello.md"}})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


if __name__ == "__main__":
    main()
