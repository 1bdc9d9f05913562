"""`pcp register CLIENT`: write the MCP server entry for `pcp mcp` into a client's user-level config.

Each client's file and entry shape follow its own documentation (checked 2026-12-05):

- Claude Code: `~/.claude.json`, top-level `mcpServers` (the "user" scope `claude mcp add --scope user`
  writes), entry `{"type": "stdio", "command", "args", "env"}` (code.claude.com/docs/en/mcp).
- Claude Desktop: `claude_desktop_config.json` (macOS `~/Library/Application Support/Claude/`, Windows
  `%APPDATA%\\Claude\\`; on Linux, which has no official app, `~/.config/Claude/`), `mcpServers`, entry
  `{"command", "args"}` (modelcontextprotocol.io quickstart for Claude Desktop users).
- Codex CLI: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`, table `[mcp_servers.NAME]` with
  `command` and `args` (github.com/openai/codex docs/config.md, "MCP servers").
- Gemini CLI: `~/.gemini/settings.json`, `mcpServers`, entry `{"command", "args"}` (google-gemini/gemini-cli
  docs/tools/mcp-server.md).

What is granted is chosen by the user: never `*`, read-only permissions unless `--write NS` names the one
scope a model may write in. Nothing here imports Textual.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

CLIENTS = ("claude-code", "claude-desktop", "codex", "gemini")
CODING_AGENTS = {"claude-code": "claude-code", "codex": "codex", "gemini": "gemini"}
READ_PERMS = ("search", "read", "list_scopes")
ALLOWED_READ = {"search", "read", "list_scopes", "audit"}  # audit only when asked for by name
WRITE_PERMS = ("search", "read", "list_scopes", "write", "revise", "link", "suppress", "manage_scope")
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CONFIG_BYTES = 32 * 1024 * 1024  # a client config larger than this is not one we should rewrite


class RegisterError(Exception):
    """A refusal with one line for the user; `code` is the CLI error code, `usage` makes it exit 2."""

    def __init__(self, message: str, code: str = "invalid", usage: bool = False) -> None:
        super().__init__(message)
        self.message, self.code, self.usage = message, code, usage


@dataclass
class Group:
    """A set of scopes one grant covers, as the importers lay them out."""

    pattern: str
    pages: int = 0
    scopes: int = 0
    what: str = ""


@dataclass
class Plan:
    client: str
    path: Path
    name: str
    entry: dict[str, Any]
    grants: list[str]
    old_text: str | None
    new_text: str
    written: bool = False
    backup: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"{self.path} (before)", f"{self.path} (after)"))

    def to_dict(self) -> dict[str, Any]:
        return {"client": self.client, "config": str(self.path), "server_name": self.name, "entry": self.entry,
                "grants": self.grants, "changed": self.changed, "written": self.written,
                "backup": str(self.backup) if self.backup else None, "diff": self.diff(), "notes": self.notes}


# --- where each client keeps its config -------------------------------------------------------------


def config_path(client: str, home: Path | None = None, env: dict[str, str] | None = None,
                platform: str | None = None) -> Path:
    """The user-level config file of `client` on this machine."""
    env = dict(os.environ) if env is None else env
    home = home or Path(env.get("HOME") or Path.home())
    platform = platform or sys.platform
    if client == "claude-code":
        base = env.get("CLAUDE_CONFIG_DIR")
        return Path(base) / ".claude.json" if base else home / ".claude.json"
    if client == "claude-desktop":
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if platform.startswith("win"):
            return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"
    if client == "codex":
        return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "gemini":
        return home / ".gemini" / "settings.json"
    raise RegisterError(f"CLIENT must be one of {', '.join(CLIENTS)}, got {client!r}.", usage=True)


def pcp_command() -> list[str]:
    """How a client starts this pcp: the absolute path of the `pcp` script installed beside this Python,
    else the one on PATH, else this Python running the CLI module (a client's PATH is not the shell's)."""
    beside = Path(sys.executable).parent / ("pcp.exe" if os.name == "nt" else "pcp")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("pcp")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "pcp_tui.cli"]


# --- scope groups -------------------------------------------------------------------------------------


def group_of(namespace: str) -> str:
    """The grant pattern that covers `namespace` together with its siblings from the same import."""
    parts = namespace.split(":")
    if parts[0] == "conversation" and len(parts) >= 3:
        return f"conversation:{parts[1]}:*"
    if parts[0] == "agent" and len(parts) >= 4:
        return namespace.rsplit(":", 1)[0] + ":*"  # one project's sessions
    if parts[0] == "project":
        return "project:*"
    if len(parts) >= 3 and parts[1] == "project":
        return f"{parts[0]}:project:*"  # a vendor's projects (claude:project:<name>)
    return namespace


GROUP_WHAT = {
    "conversation": "chat conversations", "notes": "notes", "agent": "coding-agent sessions", "project": "your projects",
}


def scope_groups(scopes: Iterable[dict[str, Any]]) -> list[Group]:
    """Scopes that hold pages, gathered into the groups a grant names (largest first, then by name)."""
    groups: dict[str, Group] = {}
    for scope in scopes:
        count = int(scope.get("page_count") or 0)
        if count <= 0:
            continue  # a tree folder such as import:chatgpt holds no pages: nothing to grant there
        pattern = group_of(str(scope["namespace"]))
        g = groups.setdefault(pattern, Group(pattern, what=_what(pattern)))
        g.pages += count
        g.scopes += 1
    return sorted(groups.values(), key=lambda g: (g.pattern != "project:*", g.pattern))


def _what(pattern: str) -> str:
    head = pattern.split(":", 1)[0]
    if pattern.endswith(":memory"):
        return "memory"
    if ":project:" in pattern:
        return "vendor projects"
    return GROUP_WHAT.get(head, "")


def all_scopes(st: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = st.list_scopes(limit=200, cursor=cursor)
        out += page["scopes"]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def preselected(client: str, groups: list[Group], cwd: str | None) -> list[str]:
    """`project:*` and, for a coding agent, its own sessions of the current project; nothing else."""
    chosen = ["project:*"]
    tool = CODING_AGENTS.get(client)
    if tool and cwd:
        from store.adapters.agents import project_slug

        chosen.append(f"agent:{tool}:{project_slug(cwd, '')}:*")
    present = {g.pattern for g in groups}
    return [p for p in chosen if p in present or p == "project:*"]


# --- grants -------------------------------------------------------------------------------------------


def grant_specs(patterns: Iterable[str], write_ns: str | None) -> list[str]:
    """`NS=perms` for `pcp mcp --grant`: read permissions, plus write in the one named scope."""
    specs: list[str] = []
    seen: set[str] = set()
    for raw in patterns:
        ns, sep, perms = raw.partition("=")
        ns = ns.strip()
        if not ns:
            raise RegisterError(f"Grant {raw!r} names no namespace; give NS or NS=search,read.", usage=True)
        if ns == "*" or ns.strip("*") == "":
            raise RegisterError("pcp register never grants every scope (*); name the groups, e.g. "
                                "--grant 'conversation:chatgpt:*'.", usage=True)
        if ns.startswith("import:"):
            raise RegisterError(f"{ns} is a folder of the app's tree and holds no pages; grant what the import "
                                "made instead (conversation:chatgpt:*, conversation:claude:*, notes:<vault>, "
                                "agent:<tool>:<project>:*).", usage=True)
        wanted = [p.strip() for p in perms.split(",") if p.strip()] if sep else list(READ_PERMS)
        bad = sorted(set(wanted) - ALLOWED_READ)
        if bad:
            raise RegisterError(f"Grant {raw!r} asks for {', '.join(bad)}: pcp register grants only "
                                f"{', '.join(sorted(ALLOWED_READ))}; write goes with --toolset write --write NS.",
                                usage=True)
        if ns not in seen:
            seen.add(ns)
            specs.append(f"{ns}={','.join(wanted)}")
    if write_ns is not None:
        ns = write_ns.strip()
        if not ns or "*" in ns or ns.startswith("import:"):
            raise RegisterError("--write names one scope (no *), e.g. --write project:scratch.", usage=True)
        specs = [s for s in specs if s.partition("=")[0] != ns] + [f"{ns}={','.join(WRITE_PERMS)}"]
    if not specs:
        raise RegisterError("No scope chosen: nothing would be granted, so nothing was written.", usage=True)
    return specs


def server_args(db: Path, client_id: str, grants: list[str], toolset: str) -> list[str]:
    args = ["--db", str(db), "mcp", "--client-id", client_id]
    for spec in grants:
        args += ["--grant", spec]
    if toolset == "write":
        args += ["--toolset", "write"]
    return args


# --- the entry in each format --------------------------------------------------------------------------


def entry_for(client: str, command: list[str], args: list[str]) -> dict[str, Any]:
    full = command[1:] + args
    if client == "claude-code":
        return {"type": "stdio", "command": command[0], "args": full, "env": {}}
    return {"command": command[0], "args": full}


def _read_text(path: Path) -> str | None:
    try:
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise RegisterError(f"{path} is not a plain file; pcp register does not write through it.")
        if not path.exists():
            return None
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise RegisterError(f"{path} is larger than {MAX_CONFIG_BYTES:,} bytes; edit it by hand.")
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise RegisterError(f"{path} is not UTF-8 text; fix or move it, then register again.") from None
    except OSError as exc:
        raise RegisterError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def merged_json(old: str | None, path: Path, name: str, entry: dict[str, Any]) -> str:
    data: Any = {}
    if old is not None and old.strip():
        try:
            data = json.loads(old)
        except ValueError as exc:
            raise RegisterError(f"{path} is not valid JSON ({exc}); fix it, then register again "
                                "(nothing was written).") from None
    if not isinstance(data, dict):
        raise RegisterError(f"{path} does not hold a JSON object; fix it, then register again.")
    servers = data.get("mcpServers")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise RegisterError(f"{path}: mcpServers is not an object; fix it, then register again.")
    data["mcpServers"] = {**servers, name: entry}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_TABLE = re.compile(r"^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$")


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON's escapes are TOML basic-string escapes


def merged_toml(old: str | None, path: Path, name: str, entry: dict[str, Any]) -> str:
    """The Codex config with `[mcp_servers.NAME]` (and its sub-tables) replaced or appended; the rest kept as it was."""
    text = old or ""
    if text.strip():
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RegisterError(f"{path} is not valid TOML ({exc}); fix it, then register again "
                                "(nothing was written).") from None
    own = {f"mcp_servers.{name}", f'mcp_servers."{name}"'}
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        m = _TABLE.match(line)
        if m:
            header = m.group(1).replace(" ", "")
            skipping = header in own or any(header.startswith(o + ".") for o in own)
        if not skipping:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    block = [f"[mcp_servers.{name}]", f"command = {_toml_string(entry['command'])}",
             "args = [" + ", ".join(_toml_string(a) for a in entry["args"]) + "]"]
    new = "\n".join(kept + ([""] if kept else []) + block) + "\n"
    try:
        parsed = tomllib.loads(new)  # what we write must read back as the entry
    except tomllib.TOMLDecodeError:
        parsed = {}  # e.g. an inline `pcp = {...}` under [mcp_servers]: not ours to rewrite
    if parsed.get("mcp_servers", {}).get(name) != {"command": entry["command"], "args": entry["args"]}:
        raise RegisterError(f"{path}: the existing [mcp_servers] layout could not be updated safely; "
                            "edit it by hand (pcp register --print shows the entry).")
    return new


def plan(client: str, path: Path, name: str, entry: dict[str, Any], grants: list[str]) -> Plan:
    if not SERVER_NAME.fullmatch(name):
        raise RegisterError(f"--name must be 1-64 letters, digits, - or _, got {name!r}.", usage=True)
    old = _read_text(path)
    merge = merged_toml if client == "codex" else merged_json
    return Plan(client, path, name, entry, grants, old, merge(old, path, name, entry))


def write(p: Plan, now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> Plan:
    """Write the new config beside the old one and rename it over (a backup of the old one first)."""
    if not p.changed:
        return p
    try:
        p.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        mode = p.path.stat().st_mode & 0o777 if p.path.exists() else 0o600
        if p.old_text is not None:
            stamp = now().strftime("%Y%m%dT%H%M%SZ")
            p.backup = p.path.with_name(f"{p.path.name}.pcp-backup-{stamp}")
            fd = os.open(p.backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(p.old_text)
        tmp = p.path.with_name(f".{p.path.name}.pcp-{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(p.new_text)
            os.replace(tmp, p.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except FileExistsError as exc:
        raise RegisterError(f"{exc.filename} already exists; run pcp register again in a second.") from None
    except OSError as exc:
        raise RegisterError(f"Cannot write {p.path}: {exc.strerror or exc} (the old file is unchanged).") from None
    p.written = True
    return p


# --- choosing in a terminal -----------------------------------------------------------------------------


def choose(groups: list[Group], marked: list[str], ask: Callable[[str], str], say: Callable[[str], None]) -> list[str]:
    """List the groups with page counts, the marked ones ticked; the answer picks by number."""
    options = list(groups)
    if not any(g.pattern == "project:*" for g in options):
        options.insert(0, Group("project:*", what="your projects (none yet)"))
    say("Scopes in this store (a model sees only what you grant):")
    for i, g in enumerate(options, 1):
        tick = "x" if g.pattern in marked else " "
        detail = f"{g.pages:,} page{'s' if g.pages != 1 else ''}" + (f" in {g.scopes:,} scopes" if g.scopes > 1 else "")
        say(f"  [{tick}] {i:>2}. {g.pattern:<48} {detail}{' · ' + g.what if g.what else ''}")
    answer = ask("Grant which? Numbers separated by spaces (Enter keeps the ticked ones, 0 for none): ").strip()
    if not answer:
        return [g.pattern for g in options if g.pattern in marked]
    picked: list[str] = []
    for token in re.split(r"[\s,]+", answer):
        if token == "0":
            continue
        if not token.isdigit() or not 1 <= int(token) <= len(options):
            raise RegisterError(f"{token!r} is not one of the numbers 1-{len(options)}; nothing was written.")
        pattern = options[int(token) - 1].pattern
        if pattern not in picked:
            picked.append(pattern)
    return picked


# --- the whole command ------------------------------------------------------------------------------------


def register(client: str, db: Path, *, grants: list[str], write_ns: str | None, toolset: str, name: str,
             client_id: str | None, config: str | None, print_only: bool, interactive: bool,
             ask: Callable[[str], str] = input, say: Callable[[str], None] = print, cwd: str | None = None) -> Plan:
    """Choose the grants (asked in a terminal, else from `grants`), build the entry, write it unless `print_only`."""
    if client not in CLIENTS:
        raise RegisterError(f"CLIENT must be one of {', '.join(CLIENTS)}, got {client!r}.", usage=True)
    if toolset == "write" and write_ns is None:
        raise RegisterError("--toolset write needs --write NS: the one scope the model may write in.", usage=True)
    if write_ns is not None and toolset != "write":
        raise RegisterError("--write NS goes with --toolset write.", usage=True)
    if not db.is_file():  # a model server never creates a store; registering one for a store that is not there helps no one
        raise RegisterError(f"no store at {db}; import or write something first (pcp import ...), or pass --db.",
                            code="not_found")
    chosen = list(grants)
    if not chosen:
        if not interactive:
            raise RegisterError("not at a terminal: name what to grant with --grant NS (repeatable), e.g. "
                                "--grant 'conversation:chatgpt:*'; pcp scopes lists them.", usage=True)
        import store

        st = store.Store.open(db)
        try:
            groups = scope_groups(all_scopes(st))
        finally:
            st.close()
        chosen = choose(groups, preselected(client, groups, cwd or os.getcwd()), ask, say)
    specs = grant_specs(chosen, write_ns)
    entry = entry_for(client, pcp_command(), server_args(db.resolve(), client_id or client, specs, toolset))
    p = plan(client, Path(config).expanduser() if config else config_path(client), name, entry, specs)
    if not print_only:
        write(p)
    return p
