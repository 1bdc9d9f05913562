"""Registering pcp in each coding agent's own user-level configuration, and taking it out again.

Followed (the documented shapes, December 2026):
- Claude Code: `hooks` in ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json), events `Stop`
  and `SessionEnd`, each `[{"hooks": [{"type": "command", "command": ..., "timeout": seconds}]}]`; the
  hook input (session_id, transcript_path, cwd) comes as JSON on stdin (Claude Code's hooks reference, as
  SchemaStore's claude-code-settings schema and test files encode it).
- Codex CLI: `notify = [program, args...]` at the top level of ~/.codex/config.toml ($CODEX_HOME); Codex
  runs it after each turn with the JSON notification (type agent-turn-complete, thread-id, cwd) as the last
  argument (openai/codex docs/config.md, "notify").
- Gemini CLI: `hooks` in ~/.gemini/settings.json, events `AfterAgent` and `SessionEnd`, each
  `[{"hooks": [{"type": "command", "name": ..., "command": ..., "timeout": milliseconds}]}]`; input JSON on
  stdin (google-gemini/gemini-cli docs/hooks/reference.md).

Only pcp's own entries are ever added or removed; every other byte of the file stays. JSON files are
written back with two-space indents (as Claude Code and Gemini CLI write them); the TOML file is
edited as text: one line, with a comment naming pcp, before the first table.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hook import agent_home

HOOK_EVENTS = {"claude-code": ("Stop", "SessionEnd"), "gemini": ("AfterAgent", "SessionEnd")}
HOOK_NAME = "pcp-capture"
CODEX_MARK = "# pcp capture: imports each finished turn into your pcp store (pcp capture uninstall codex)"


class ConfigError(Exception):
    """The agent's configuration cannot be changed safely (one sentence: what and what to do)."""


def config_file(agent: str) -> Path:
    return agent_home(agent) / ("config.toml" if agent == "codex" else "settings.json")


def hook_argv(pcp: str, agent: str, db: str | None) -> list[str]:
    """The installed command: pcp's absolute path, the store if one was named, `capture hook AGENT`."""
    return [pcp, *(["--db", db] if db else []), "capture", "hook", agent]


def is_ours(argv: list[str], agent: str) -> bool:
    """Whether a command is pcp's capture hook for `agent` (whatever pcp path or store it names)."""
    return len(argv) >= 4 and argv[-3:] == ["capture", "hook", agent] and Path(argv[0]).name.startswith("pcp")


def _split(command: Any) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return []


@dataclass
class Change:
    """A configuration file before and after (None: the file does not exist)."""

    path: Path
    before: bytes | None
    after: bytes | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        def lines(data: bytes | None) -> list[str]:
            return data.decode("utf-8", "replace").splitlines(keepends=True) if data else []

        return "".join(difflib.unified_diff(lines(self.before), lines(self.after), f"{self.path} (before)",
                                            f"{self.path} (after)"))


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read ({exc.strerror or exc}); check its permissions.") from None


# --- JSON settings (Claude Code, Gemini CLI) ---


def _load_json(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        raise ConfigError(f"{path} is not valid JSON; fix it (the agent would not read it either), then try again.") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then try again.")
    return value


def _dump_json(value: dict[str, Any], like: bytes | None = None) -> bytes:
    """JSON as the file had it: its indent (two spaces when it had none) and its final line break."""
    indent: int | str = 2
    found = re.search(rb"^\{[ \t]*\r?\n([ \t]+)\S", like or b"")
    if found:
        lead = found.group(1).decode()
        indent = lead if "\t" in lead else len(lead)
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return (text + ("" if like and not like.endswith(b"\n") else "\n")).encode("utf-8")


def _our_entry(agent: str, argv: list[str]) -> dict[str, Any]:
    command = shlex.join(argv)
    if agent == "gemini":
        return {"name": HOOK_NAME, "type": "command", "command": command, "timeout": 10000,
                "description": "pcp: capture this session into your pcp store"}
    return {"type": "command", "command": command, "timeout": 10}


def _json_has(settings: dict[str, Any], agent: str) -> bool:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return all(any(is_ours(_split(h.get("command")), agent) for g in hooks.get(event) or [] if isinstance(g, dict)
                   for h in g.get("hooks") or [] if isinstance(h, dict)) for event in HOOK_EVENTS[agent])


def _json_has_command(settings: dict[str, Any], agent: str, command: str) -> bool:
    hooks = settings.get("hooks")
    return isinstance(hooks, dict) and all(
        any(h.get("command") == command for g in hooks.get(event) or [] if isinstance(g, dict)
            for h in g.get("hooks") or [] if isinstance(h, dict)) for event in HOOK_EVENTS[agent])


def _json_without(settings: dict[str, Any], agent: str) -> dict[str, Any]:
    """`settings` with pcp's hook entries taken out (and a group, event or `hooks` left empty by that)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in HOOK_EVENTS[agent]:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"] if not (isinstance(h, dict) and is_ours(_split(h.get("command")), agent))]
            if kept or len(kept) == len(group["hooks"]):
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def _json_with(settings: dict[str, Any], agent: str, argv: list[str]) -> dict[str, Any]:
    out = _json_without(settings, agent)  # an older entry (another pcp path or store) is replaced
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("`hooks` in the agent's settings is not an object; fix it, then try again.")
    for event in HOOK_EVENTS[agent]:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"`hooks.{event}` in the agent's settings is not a list; fix it, then try again.")
        groups.append({"hooks": [_our_entry(agent, argv)]})
    return out


# --- TOML (Codex) ---

_TABLE = re.compile(rb"^[ \t]*\[", re.M)
_NOTIFY = re.compile(rb"^[ \t]*notify[ \t]*=", re.M)


def _codex_lines(argv: list[str]) -> bytes:
    return (CODEX_MARK + "\nnotify = " + json.dumps(argv, ensure_ascii=False) + "\n").encode("utf-8")


def _codex_with(path: Path, data: bytes | None, argv: list[str]) -> bytes:
    text = _codex_without(data or b"")
    first_table = _TABLE.search(text)
    top = text[:first_table.start()] if first_table else text
    if _NOTIFY.search(top):
        raise ConfigError(f"{path} already has a notify program and Codex runs only one; remove it (or run it from "
                          "a script of yours), then run pcp capture install codex again.")
    ours = _codex_lines(argv)
    if first_table is None:
        return text + (b"" if not text or text.endswith(b"\n") else b"\n") + ours
    # Root keys must come before the first table; the comment lines right above that table stay with it.
    at = first_table.start()
    while at > 0:
        previous = text.rfind(b"\n", 0, at - 1) + 1
        if not text[previous:at].lstrip().startswith(b"#"):
            break
        at = previous
    return text[:at] + ours + b"\n" + text[at:]


def _codex_without(data: bytes) -> bytes:
    """The file with pcp's lines (the comment, the notify line after it, and the blank line install added) taken out."""
    mark = CODEX_MARK.encode("utf-8") + b"\n"
    start = data.find(mark)
    if start < 0:
        return data
    end = start + len(mark)
    line_end = data.find(b"\n", end)
    line = data[end:line_end + 1 if line_end >= 0 else len(data)]
    if _NOTIFY.match(line) and is_ours(_notify_argv(line), "codex"):
        end += len(line)
    else:
        return data  # the comment alone (the user changed the line under it): leave both
    if data[end:end + 1] == b"\n":  # the blank line install put after its lines
        end += 1
    return data[:start] + data[end:]


def _notify_argv(line: bytes) -> list[str]:
    try:
        value = json.loads(line.split(b"=", 1)[1])
    except (ValueError, IndexError):
        return []
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else []


def _codex_has(data: bytes | None) -> bool:
    return data is not None and _codex_without(data) != data


# --- the three operations ---


def installed(agent: str) -> bool:
    """Whether the agent's configuration holds pcp's hook now."""
    path = config_file(agent)
    data = read_bytes(path)
    if agent == "codex":
        return _codex_has(data)
    try:
        return _json_has(_load_json(path, data), agent)
    except ConfigError:
        return False


def plan_install(agent: str, argv: list[str]) -> Change:
    """The file with pcp's hook in it (the same bytes when it is there already: install is idempotent)."""
    path = config_file(agent)
    before = read_bytes(path)
    if agent == "codex":
        if _codex_has(before) and _codex_lines(argv) in (before or b""):
            return Change(path, before, before)
        return Change(path, before, _codex_with(path, before, argv))
    settings = _load_json(path, before)
    if _json_has_command(settings, agent, shlex.join(argv)):
        return Change(path, before, before)
    return Change(path, before, _dump_json(_json_with(settings, agent, argv), before))


def plan_remove(agent: str, current: bytes | None) -> bytes | None:
    """`current` without pcp's entries (None stays None)."""
    if current is None:
        return None
    if agent == "codex":
        return _codex_without(current)
    path = config_file(agent)
    settings = _load_json(path, current)
    if not _json_has(settings, agent) and _json_without(settings, agent) == settings:
        return current
    return _dump_json(_json_without(settings, agent), current)


def hooks_disabled(agent: str) -> str | None:
    """A sentence when the agent's settings switch hooks off (pcp never changes that setting)."""
    if agent == "codex":
        return None
    path = config_file(agent)
    try:
        settings = _load_json(path, read_bytes(path))
    except ConfigError as exc:
        return str(exc)
    if agent == "claude-code" and settings.get("disableAllHooks") is True:
        return f"{path} has disableAllHooks: true, so Claude Code runs no hook."
    config = settings.get("hooksConfig")
    if agent == "gemini" and isinstance(config, dict) and config.get("enabled") is False:
        return f"{path} has hooksConfig.enabled: false, so Gemini CLI runs no hook."
    return None
