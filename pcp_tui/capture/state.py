"""What capture keeps between runs, in pcp's config folder (never in a project folder):

    capture.toml            which projects are captured: `all`, `projects`, `exclude` (the user may edit it)
    capture/log.jsonl       one line per hook or run: when, which agent and session, what happened, counts;
                            never message text (mode 0600, cut to its last lines when it grows)
    capture/seen.json       per session file: the size and time it had when it was last captured
    capture/installs.json   what `pcp capture install` changed: the file, its backup, the bytes it wrote
    capture/backups/        the agent configuration files as they were before install
    capture/locks/          one lock per session file, so two hooks never import one session at once

A project opts out with a file named `.pcp-no-capture` in it (or in any folder above it).
Light on purpose: the hook imports this before it knows whether there is work to do.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

OPT_OUT_FILE = ".pcp-no-capture"
LOG_MAX_BYTES = 512 * 1024
LOG_KEEP_LINES = 1000


def config_dir() -> Path:
    """pcp's config folder: $PCP_CONFIG_DIR, else the platform's user config dir (as pcp_tui.config)."""
    env = os.environ.get("PCP_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("pcp", appauthor=False))


def capture_dir() -> Path:
    return config_dir() / "capture"


def private_dir(path: Path) -> Path:
    """Create `path` (mode 0700) if needed."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Write a file of mode 0600 atomically (a temporary file renamed over it)."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# --- which projects are captured ---


@dataclass
class Policy:
    """capture.toml: everything (`all`), or the listed project folders; never the excluded ones."""

    all: bool = False
    projects: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    problem: str | None = None  # the file could not be read: nothing is captured until it is fixed

    def decide(self, cwd: str | None) -> str | None:
        """None when a session run in `cwd` is captured; else why not (a few words, no path)."""
        if self.problem:
            return "capture.toml cannot be read"
        if not cwd or not os.path.isabs(cwd):
            return "the agent named no project folder"
        folder = Path(os.path.normpath(cwd))
        if any((p / OPT_OUT_FILE).exists() for p in (folder, *folder.parents)):
            return f"the project opts out ({OPT_OUT_FILE})"
        if any(_within(folder, e) for e in self.exclude):
            return "the project is excluded in capture.toml"
        if self.all or any(_within(folder, p) for p in self.projects):
            return None
        return "not a captured project (pcp capture install --project, or --all)"


def _within(folder: Path, root: str) -> bool:
    try:
        return folder.is_relative_to(Path(os.path.normpath(os.path.expanduser(root))))
    except (TypeError, ValueError):
        return False


def policy_path() -> Path:
    return config_dir() / "capture.toml"


def load_policy() -> Policy:
    path = policy_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Policy()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Policy(problem=f"{path} cannot be read ({exc}); fix or remove it.")
    lists = {k: data.get(k, []) for k in ("projects", "exclude")}
    if not isinstance(data.get("all", False), bool) or not all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in lists.values()):
        return Policy(problem=f"{path}: `all` must be true or false, `projects` and `exclude` lists of paths.")
    return Policy(all=data.get("all", False), projects=lists["projects"], exclude=lists["exclude"])


def save_policy(policy: Policy) -> None:
    def strings(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(s, ensure_ascii=False) for s in items) + "]"

    text = ("# Which projects pcp captures from coding agents (pcp capture install / uninstall write it).\n"
            f"# A project also opts out with a file named {OPT_OUT_FILE} in it.\n"
            f"all = {'true' if policy.all else 'false'}\n"
            f"projects = {strings(policy.projects)}\n"
            f"exclude = {strings(policy.exclude)}\n")
    write_private(policy_path(), text.encode("utf-8"))


# --- the run log ---


def log_path() -> Path:
    return capture_dir() / "log.jsonl"


def log(record: dict[str, Any]) -> None:
    """Append one record (counts and names only). Never raises: a hook must not fail on its log."""
    try:
        path = log_path()
        private_dir(path.parent)
        line = json.dumps({"at": now(), **record}, ensure_ascii=False, sort_keys=True) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > LOG_MAX_BYTES:
            lines = path.read_bytes().splitlines(keepends=True)[-LOG_KEEP_LINES:]
            write_private(path, b"".join(lines))
    except OSError:
        pass


def read_log(limit: int = 20) -> list[dict[str, Any]]:
    """The last `limit` records, oldest first (lines that do not parse are left out)."""
    try:
        lines = log_path().read_bytes().splitlines()
    except OSError:
        return []
    out = []
    for raw in lines[-limit:]:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


# --- what was captured already ---


def _seen_path() -> Path:
    return capture_dir() / "seen.json"


def load_seen() -> dict[str, list[int]]:
    try:
        data = json.loads(_seen_path().read_bytes())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2} if isinstance(data, dict) else {}


def file_mark(path: Path) -> list[int] | None:
    """[size, mtime in ns] of a session file; None when it cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def mark_seen(path: Path, mark: list[int]) -> None:
    """Remember that `path` was captured as it was at `mark` (never raises)."""
    try:
        seen = load_seen()
        seen[str(path)] = mark
        write_private(_seen_path(), json.dumps(seen, sort_keys=True).encode())
    except OSError:
        pass


def lock_path(path: Path) -> Path:
    import hashlib

    return private_dir(capture_dir() / "locks") / (hashlib.sha256(str(path).encode()).hexdigest()[:32] + ".lock")
