"""Helpers for the `pcp capture` tests: a fake home folder: the agents' real configuration shapes, real session files, the real
`pcp` program run as a subprocess (as an agent runs it), pcp's config and store inside the test's folder."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waits import wait_for

DATA = Path(__file__).resolve().parents[1] / "data"
CONFIGS = DATA / "capture"
AGENT_DATA = DATA / "agents"
PCP = str(Path(sys.executable).with_name("pcp"))


@dataclass
class Home:
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.root / "pcp-config"

    @property
    def db(self) -> Path:
        return self.root / "store" / "context.db"

    @property
    def project(self) -> Path:
        return self.root / "work" / "project"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "PCP_", "CLAUDE_", "CODEX_"))}
        env.update(HOME=str(self.home), PCP_CONFIG_DIR=str(self.config), PCP_DB=str(self.db))
        return env

    def pcp(self, *args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run the installed `pcp` program (a safety timeout only: no test asserts on time)."""
        return subprocess.run([PCP, *args], input=stdin, capture_output=True, text=True, env=self.env(),
                              cwd=str(cwd or self.project), timeout=120)

    def config_file(self, agent: str) -> Path:
        return {"claude-code": self.home / ".claude" / "settings.json", "codex": self.home / ".codex" / "config.toml",
                "gemini": self.home / ".gemini" / "settings.json"}[agent]

    def log(self) -> list[dict[str, Any]]:
        path = self.config / "capture" / "log.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def runs(self, outcome: str, session: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.log() if r.get("outcome") == outcome and (session is None or r.get("session") == session)]

    def wait_done(self, count: int, session: str | None = None) -> dict[str, Any]:
        """The `count`-th finished import (the hook may have returned before its child finished)."""
        wait_for(lambda: len(self.runs("done", session)) >= count, f"capture run {count} to finish")
        return self.runs("done", session)[count - 1]

    def hook(self, agent: str, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """What the agent does after a turn: Claude Code and Gemini CLI pipe JSON in, Codex passes it last."""
        if agent == "codex":
            return self.pcp("capture", "hook", "codex", json.dumps(event))
        return self.pcp("capture", "hook", agent, stdin=json.dumps(event))

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def message_pages(self) -> dict[str, tuple[str, int]]:
        """source key -> (page id, number of revisions) of every captured page."""
        rows = self.query("SELECT sp.source_key, p.page_id, (SELECT COUNT(*) FROM revision r WHERE r.page_id = p.id) "
                          "FROM source_page sp JOIN page p ON p.id = sp.page_id")
        return {key: (pid, n) for key, pid, n in rows}

    def contents(self) -> str:
        return "\n".join(str(row[0]) for row in self.query("SELECT content FROM revision") if row[0] is not None)

    def titles(self) -> str:
        return "\n".join(str(row[0]) for row in self.query("SELECT title FROM revision"))


def place_config(h: Home, agent: str, name: str) -> bytes:
    """Put a vendored configuration file where the agent keeps it; its bytes."""
    target = h.config_file(agent)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIGS / agent / name, target)
    return target.read_bytes()
