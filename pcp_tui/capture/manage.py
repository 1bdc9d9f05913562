"""`pcp capture install | uninstall | status | run | hook`: live capture from coding agents (issue 37).

install    registers pcp's hook in the agent's user-level configuration (capture.agents), shows the
           diff, keeps a backup, records which projects are captured (capture.toml); idempotent
uninstall  takes pcp's entries out: the file is restored byte for byte from the backup when nothing
           else changed since install, else only pcp's entries go and the diff is shown
status     what is installed where, which projects are captured, the last runs and errors
run        imports what the agents' folders hold that was not captured yet (for a timer)
hook       what the agent runs (capture.hook)

Each returns the JSON document `pcp capture ... --json` prints; render_* write it for people.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

from . import agents
from . import state
from . import AGENTS
from .hook import agent_home, capture_one, sessions_root

DISPLAY = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}


class CaptureError(Exception):
    """A capture command that cannot go on (one sentence: what happened and what to do)."""


def pcp_command() -> str:
    """The absolute path of the `pcp` program running now (what the agent will run)."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if here is not None and here.name.startswith("pcp") and here.is_file():
        return os.path.abspath(here)
    found = shutil.which("pcp")
    if found:
        return os.path.abspath(found)
    raise CaptureError("cannot find the pcp program's absolute path; run pcp capture install from an installed pcp.")


def _installs_path() -> Path:
    return state.capture_dir() / "installs.json"


def _installs() -> dict[str, Any]:
    try:
        data = json.loads(_installs_path().read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_installs(data: dict[str, Any]) -> None:
    state.write_private(_installs_path(), json.dumps(data, indent=2, sort_keys=True).encode())


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _write_config(path: Path, data: bytes | None) -> None:
    """Write (or, for None, remove) an agent's configuration file atomically, keeping its mode."""
    if data is None:
        path.unlink(missing_ok=True)
        return
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.pcp-{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _project_root(cwd: str) -> str:
    return os.path.normpath(os.path.abspath(cwd))


def install(agent: str, *, scope: str | None, cwd: str, db: str | None,
            ask: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Register pcp's hook for `agent`; `scope` is "project" (cwd), "all", or None (ask, else project)."""
    project = _project_root(cwd)
    policy = state.load_policy()
    if policy.problem:  # before anything is written
        raise CaptureError(policy.problem)
    if scope is None:
        scope = "project"
        if ask is not None:
            answer = ask(f"Capture {DISPLAY[agent]} sessions of this project only ({project}) or of all projects? "
                         "[P]roject / [a]ll: ").strip().lower()
            scope = "all" if answer in ("a", "all") else "project"
    # The store named now (--db, else $PCP_DB) goes into the command: the agent may run without that variable.
    from store import paths

    named = paths.named_path(db)
    argv = agents.hook_argv(pcp_command(), agent, str(named.absolute()) if named else None)
    try:
        change = agents.plan_install(agent, argv)
    except agents.ConfigError as exc:
        raise CaptureError(str(exc)) from None
    installs = _installs()
    record = installs.get(agent) if isinstance(installs.get(agent), dict) else None
    backup: str | None = record.get("backup") if record else None
    if change.changed:
        if record is None or record.get("written") != _sha(change.before):
            backup = _backup(agent, change.before)  # the file as it is now, before pcp's change
            record = {"file": str(change.path), "existed": change.before is not None, "backup": backup}
        _write_config(change.path, change.after)
        installs[agent] = {**record, "written": _sha(change.after), "at": state.now(), "command": argv}
        _save_installs(installs)
    if scope == "all":
        policy.all = True
    elif project not in policy.projects:
        policy.projects.append(project)
    state.save_policy(policy)
    return {"agent": agent, "file": str(change.path), "changed": change.changed, "diff": change.diff(),
            "backup": backup, "command": argv, "scope": scope, "project": project if scope == "project" else None,
            "all_projects": policy.all, "projects": policy.projects, "warning": agents.hooks_disabled(agent)}


def _backup(agent: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    name = f"{agent}-{state.now().replace(':', '')}-{os.getpid()}.{'toml' if agent == 'codex' else 'json'}"
    path = state.private_dir(state.capture_dir() / "backups") / name
    state.write_private(path, data)
    return str(path)


def uninstall(agent: str) -> dict[str, Any]:
    """Take pcp's entries out of `agent`'s configuration (byte for byte the backup when nothing else changed)."""
    path = agents.config_file(agent)
    try:
        current = agents.read_bytes(path)
        without = agents.plan_remove(agent, current)
    except agents.ConfigError as exc:
        raise CaptureError(str(exc)) from None
    installs = _installs()
    record = installs.get(agent) if isinstance(installs.get(agent), dict) else None
    how = "nothing to remove"
    after = current
    if without != current:
        if record and record.get("written") == _sha(current):
            backup = record.get("backup")
            if backup is None and not record.get("existed"):
                after, how = None, "restored (the file did not exist before install)"
            else:
                try:
                    after = Path(str(backup)).read_bytes()
                except OSError:
                    after, how = without, "pcp's entries removed (the backup is gone)"
                else:
                    how = "restored from the backup, byte for byte"
        elif record:
            after, how = without, "pcp's entries removed; your later changes are kept"
        else:
            after, how = without, "pcp's entries removed (no record of the install here, so no backup to restore)"
        _write_config(path, after)
    change = agents.Change(path, current, after)
    if record is not None:
        installs.pop(agent, None)
        _save_installs(installs)
    return {"agent": agent, "file": str(path), "changed": change.changed, "how": how, "diff": change.diff(),
            "backup": record.get("backup") if record else None}


def status(limit: int = 10) -> dict[str, Any]:
    """What is installed where, which projects are captured, the last runs and the last errors."""
    installs = _installs()
    policy = state.load_policy()
    out_agents = []
    for agent in AGENTS:
        try:
            present = agents.installed(agent)
        except agents.ConfigError:
            present = False
        record = installs.get(agent)
        record = record if isinstance(record, dict) else {}
        out_agents.append({"agent": agent, "installed": present, "file": str(agents.config_file(agent)),
                           "backup": record.get("backup"), "command": record.get("command"),
                           "warning": agents.hooks_disabled(agent) if present else None})
    runs = state.read_log(200)
    errors = [r for r in runs if r.get("outcome") == "error"]
    return {"agents": out_agents, "all_projects": policy.all, "projects": policy.projects, "exclude": policy.exclude,
            "policy_problem": policy.problem, "opt_out_file": state.OPT_OUT_FILE, "log": str(state.log_path()),
            "runs": runs[-limit:], "errors": errors[-limit:]}


# --- pcp capture run ---


def _first_cwd(path: Path, keys: tuple[str, ...] = ("cwd",)) -> str | None:
    """The first `cwd` a session file names in its first 256 KB (session files put it near the top)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256 * 1024)
    except OSError:
        return None
    for line in head.split(b"\n"):
        if b'"cwd"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        for holder in (rec, rec.get("payload") if isinstance(rec, dict) else None):
            if isinstance(holder, dict) and isinstance(holder.get("cwd"), str):
                return str(holder["cwd"])
    return None


def _units(agent: str) -> list[tuple[Path, list[Path], str | None]]:
    """(what to import, the files it reads, its project folder) for every session the agent keeps."""
    root = sessions_root(agent)
    if not root.is_dir():
        return []
    units: list[tuple[Path, list[Path], str | None]] = []
    if agent == "codex":
        for f in sorted(root.rglob("rollout-*.jsonl")):
            units.append((f, [f], _first_cwd(f)))
    elif agent == "claude-code":
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            files = sorted(folder.rglob("*.jsonl"))
            cwd = next((c for c in (_first_cwd(f) for f in files) if c), None)
            if files:
                units.append((folder, files, cwd))
    else:
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            files = sorted(p for p in (folder / "chats").rglob("*.json*") if p.suffix in (".json", ".jsonl"))
            try:
                root_of: str | None = (folder / ".project_root").read_text(encoding="utf-8").strip() or None
            except (OSError, UnicodeDecodeError):
                root_of = None
            if files:
                units.append((folder, files, root_of))
    return units


def run(db: str | None, only: tuple[str, ...] = AGENTS) -> dict[str, Any]:
    """Capture every session the agents' folders hold that changed since it was last captured."""
    policy = state.load_policy()
    if policy.problem:
        raise CaptureError(policy.problem)
    seen = state.load_seen()
    done: list[dict[str, Any]] = []
    skipped = unchanged = failed = 0
    for agent in only:
        for target, files, cwd in _units(agent):
            if policy.decide(cwd):
                skipped += 1
                continue
            marks = {str(f): state.file_mark(f) for f in files}
            if all(seen.get(k) == m for k, m in marks.items()):
                unchanged += 1
                continue
            record = {"agent": agent, "kind": "run", "file": str(target)}
            if capture_one(agent, target, db, record, skip_if_seen=False):
                for f, mark in marks.items():
                    if mark is not None:
                        state.mark_seen(Path(f), mark)
                done.append({"agent": agent, "path": str(target)})
            else:
                failed += 1
    last = {(r.get("file"), r.get("agent")): r for r in state.read_log(500) if r.get("kind") == "run"}
    for item in done:
        item.update({k: v for k, v in (last.get((item["path"], item["agent"])) or {}).items()
                     if k in ("created", "unchanged", "revised", "redacted", "bundles_not_captured")})
    from store import paths

    return {"store": str(paths.chosen_path(db)), "captured": done, "unchanged": unchanged, "skipped_projects": skipped,
            "failed": failed, "log": str(state.log_path())}


def agent_folders() -> dict[str, str]:
    return {a: str(agent_home(a)) for a in AGENTS}


# --- the command line ---


def command(args: Any, ask: Callable[[str], str] | None) -> tuple[dict[str, Any], str]:
    """Run `pcp capture ACTION` (not `hook`): (the JSON document, the text for people)."""
    action = args.capture_command
    if action == "install":
        scope = "all" if args.all else "project" if args.project else None
        result = install(args.agent, scope=scope, cwd=os.getcwd(), db=args.db, ask=ask)
        return result, render_install(result)
    if action == "uninstall":
        result = uninstall(args.agent)
        return result, render_uninstall(result)
    if action == "status":
        result = status()
        return result, render_status(result)
    result = run(args.db, tuple(args.agent or AGENTS))
    return result, render_run(result)


def render_install(r: dict[str, Any]) -> str:
    lines = []
    if r["changed"]:
        lines += [r["diff"].rstrip("\n"), "", f"Installed: {DISPLAY[r['agent']]} now runs pcp after each turn ({r['file']})."]
        lines.append(f"Backup of the file as it was: {r['backup']}" if r["backup"] else
                     "The file did not exist before; uninstall removes it again.")
    else:
        lines.append(f"Already installed in {r['file']}; nothing changed.")
    lines.append("Captured: every project." if r["all_projects"] else
                 "Captured projects: " + ", ".join(r["projects"]) + " (pcp capture install --all for every project).")
    if r.get("warning"):
        lines.append(f"Note: {r['warning']}")
    lines.append(f"Undo with: pcp capture uninstall {r['agent']}")
    return "\n".join(lines) + "\n"


def render_uninstall(r: dict[str, Any]) -> str:
    if not r["changed"]:
        return f"pcp is not installed in {r['file']}; nothing changed.\n"
    return (r["diff"].rstrip("\n") + "\n\n" if r["diff"] else "") + f"Uninstalled from {r['file']}: {r['how']}.\n"


def _run_line(r: dict[str, Any]) -> str:
    counts = ""
    if r.get("outcome") == "done":
        counts = f" {r.get('created', 0)} new, {r.get('unchanged', 0)} unchanged"
        if r.get("redacted"):
            counts += ", redacted " + ", ".join(f"{n}x {k}" for k, n in r["redacted"].items())
        if r.get("bundles_not_captured"):
            counts += f", {r['bundles_not_captured']} pasted bundle(s) left out"
    why = f" ({r.get('why') or r.get('error')})" if r.get("why") or r.get("error") else ""
    return f"  {r.get('at', '?')}  {r.get('agent', '?'):<11} {r.get('kind', '?'):<4} {r.get('outcome', '?')}{counts}{why}"


def render_status(r: dict[str, Any]) -> str:
    lines = ["Agents:"]
    for a in r["agents"]:
        lines.append(f"  {DISPLAY[a['agent']]:<12} {'installed' if a['installed'] else 'not installed':<14} {a['file']}")
        if a.get("warning"):
            lines.append(f"    note: {a['warning']}")
    if r["policy_problem"]:
        lines.append(f"Projects: {r['policy_problem']}")
    else:
        lines.append("Projects: every project" if r["all_projects"] else
                     "Projects: " + (", ".join(r["projects"]) or "none yet"))
    if r["exclude"]:
        lines.append("Excluded: " + ", ".join(r["exclude"]))
    lines.append(f"A project opts out with a file named {r['opt_out_file']} in it.")
    lines.append(f"Last runs ({r['log']}):")
    lines += [_run_line(x) for x in r["runs"]] or ["  none yet"]
    if r["errors"]:
        lines.append("Last errors:")
        lines += [_run_line(x) for x in r["errors"]]
    return "\n".join(lines) + "\n"


def render_run(r: dict[str, Any]) -> str:
    lines = [f"Captured into {r['store']}:"]
    for item in r["captured"]:
        lines.append(f"  {item['agent']:<11} {item['path']}: {item.get('created', 0)} new")
    if not r["captured"]:
        lines.append("  nothing new")
    lines.append(f"{r['unchanged']} unchanged, {r['skipped_projects']} in projects not captured, {r['failed']} failed "
                 f"(see pcp capture status).")
    return "\n".join(lines) + "\n"
