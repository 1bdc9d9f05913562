"""Agent transcripts with lone surrogates (a `\\ud800` escape: a tool that cut a UTF-16 pair in two) in their
session ids, message ids, working folder and text import whole: each one is kept as its escape and the report
says so, where a surrogate in an id or a folder stopped the whole import with a raw UnicodeEncodeError."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from store import Store
from store.adapters import import_claude_code

DATA = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code"


def _pages(db: Path) -> int:
    with Store.open(db) as st:
        return st._db.execute_sql("SELECT COUNT(*) FROM page").fetchone()[0]


def test_lone_surrogates_in_a_claude_code_transcript_are_kept_as_escapes_and_nothing_is_lost(tmp_path):
    clean, hostile = tmp_path / "clean", tmp_path / "hostile"
    shutil.copytree(DATA, clean)
    shutil.copytree(DATA, hostile)
    target = sorted(hostile.rglob("*.jsonl"))[0]
    lines, changed = [], 0
    for line in target.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        if isinstance(record, dict) and record.get("sessionId"):
            record["sessionId"] += "\ud800"
            record["uuid"] = f"{record.get('uuid')}\udc01"
            if isinstance(record.get("cwd"), str):
                record["cwd"] += "\ud802"
            message = record.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                message["content"] += " cut pair \ud83d"
            changed += 1
        lines.append(json.dumps(record))  # (json.dumps writes each lone surrogate as its \u escape)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert changed > 3

    with Store.open(tmp_path / "clean.db") as st:
        import_claude_code(st, clean)
    with Store.open(tmp_path / "hostile.db") as st:
        report = import_claude_code(st, hostile)
        keys = [r[0] for r in st._db.execute_sql("SELECT source_key FROM source_page").fetchall()]
    reasons = [s["reason"] for s in report.skipped if s["item"].endswith(target.name)]
    assert any(f"{changed} line(s) held lone surrogates" in r for r in reasons), report.skipped
    assert _pages(tmp_path / "hostile.db") == _pages(tmp_path / "clean.db")  # every message kept
    assert any("\\ud800" in key for key in keys) and any("\\udc01" in key for key in keys)  # the ids, as escapes
