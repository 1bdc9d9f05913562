"""Write `sessions/2026/05/12/rollout-2026-05-12T09-00-00-<id>.jsonl`: a fork of the vendored real session 019e1625.

No real forked rollout was found under a licence that allows vendoring, so this one is built in the
shape Codex CLI writes a fork in: a new `session_meta` (new id, `forked_from_id` naming the source
session), then the source's history copied line for line up to the turn the fork was made at (the first
answer, "Available tool groups..."), then the fork's own turns: here a new prompt and its answer.
Run from the repository root; the output is committed.
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_ID = "019e1625-789d-76c0-80ab-3724b5ddb799"
SOURCE = (HERE.parent / "codemie-code" / "sessions" / "2026" / "05" / "11" /
          f"rollout-2026-05-11T11-26-55-{SOURCE_ID}.jsonl")
FORK = "019e1aa0-0000-7000-8000-00000000f04c"
OUT = HERE / "sessions" / "2026" / "05" / "12" / f"rollout-2026-05-12T09-00-00-{FORK}.jsonl"


def main() -> None:
    records = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    meta = records[0]
    out = [{"timestamp": "2026-05-12T09:00:00.000Z", "type": "session_meta",
            "payload": {**meta["payload"], "id": FORK, "timestamp": "2026-05-12T09:00:00.000Z",
                        "forked_from_id": SOURCE_ID}}]
    out += records[1:17]  # the copied history, through the first answer
    out.append({"timestamp": "2026-05-12T09:00:05.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "show tools"}]}})
    out.append({"timestamp": "2026-05-12T09:00:09.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "assistant", "phase": "final_answer",
        "content": [{"type": "output_text", "text": "The same tool groups as before: workspace files, shell, "
                                                    "patches and web search."}]}})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in out))


if __name__ == "__main__":
    main()
