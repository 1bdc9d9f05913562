"""Write `-Users-user-Work-entire-devenv-cli/<session>.jsonl` from the vendored real session ce24e94d (entireio-cli).

No real transcript of the later Claude Code 2.1 shape was found under a licence that allows vendoring,
so this one is built from the real 2.1.37 session in the shape the later 2.1 versions write (issue 29):
- every assistant message (`message.id`) starts with a record holding only an empty, signed thinking
  block (the thinking is redacted), before the records of its text and tool calls;
- an `attachment` record sits in the `parentUuid` chain between each prompt and the answer;
- one prompt record is written twice (the same uuid), as a resumed file can hold it.
The session id and every uuid are new (derived from the old ones), so it is a session of its own.
Run from the repository root; the output is committed.
"""

import json
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "entireio-cli" / "-Users-user-Work-entire-devenv-cli" / "ce24e94d-ea12-40cb-9b87-ceb55770af78.jsonl"
SESSION = str(uuid.uuid5(uuid.NAMESPACE_URL, "pcp-tests:claude-code:later-2.1"))
OUT = HERE / "-Users-user-Work-entire-devenv-cli" / f"{SESSION}.jsonl"


def new_id(old: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pcp-tests:{old}"))


def main() -> None:
    records = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    out: list[dict] = []
    seen_ids: set[str] = set()
    after: dict[str, str] = {}  # old uuid -> the uuid the next record in the chain must name instead
    for rec in records:
        rec = json.loads(json.dumps(rec).replace("ce24e94d-ea12-40cb-9b87-ceb55770af78", SESSION))
        parent = rec.get("parentUuid")
        if parent:
            rec["parentUuid"] = new_id(after.get(parent, parent)) if parent not in after else after[parent]
        if rec.get("uuid"):
            old = rec["uuid"]
            rec["uuid"] = new_id(old)
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        if rec.get("type") == "assistant" and msg.get("id") and msg["id"] not in seen_ids:
            seen_ids.add(msg["id"])
            first = json.loads(json.dumps(rec))
            first["uuid"] = new_id("thinking:" + msg["id"])
            first["message"]["content"] = [{"type": "thinking", "thinking": "", "signature": "EpIBCkYIChgCKkB" + msg["id"][-12:]}]
            first["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
            out.append(first)
            rec["parentUuid"] = first["uuid"]
        out.append(rec)
        content = msg.get("content")
        if rec.get("type") == "user" and isinstance(content, str) and not content.startswith("<") and not rec.get("isMeta"):
            attachment = {"parentUuid": rec["uuid"], "isSidechain": False, "type": "attachment",
                          "attachment": {"type": "todo_reminder", "content": [], "itemCount": 0},
                          "uuid": new_id("attachment:" + rec["uuid"]), "timestamp": rec["timestamp"],
                          "sessionId": SESSION, "cwd": rec.get("cwd"), "version": rec.get("version")}
            out.append(attachment)
            after[old] = attachment["uuid"]
            out.append(rec)  # the prompt written a second time (same uuid)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in out))


if __name__ == "__main__":
    main()
