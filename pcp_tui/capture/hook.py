"""`pcp capture hook AGENT`: what a coding agent runs after a turn (installed by `pcp capture install`).

It never blocks or fails the agent: it exits 0 whatever happens, prints nothing (Gemini CLI would
read stdout as its answer), and returns within BUDGET seconds of the process start, interpreter
start included. The import runs in a forked child that leaves the agent's pipes and session at
once; the hook waits for it until the budget is spent, then returns and lets it finish alone (the
next hook, or `pcp capture run`, picks up whatever a failed child left). Until the fork only the
standard library and capture.state are imported; the store is imported by the child.

What each agent hands over (the documented hook input):
    claude-code  JSON on stdin: session_id, transcript_path, cwd, hook_event_name (Stop, SessionEnd)
    gemini       JSON on stdin: session_id, transcript_path, cwd, hook_event_name (AfterAgent, SessionEnd)
    codex        JSON as the last argument (notify): type agent-turn-complete, thread-id, cwd
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from . import state

BUDGET = 1.5  # seconds from process start to return (the bound is 2 s; the rest is for the exit on a busy machine)
MAX_PAYLOAD = 1 << 20
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def agent_home(agent: str) -> Path:
    """The agent's own folder (its user-level configuration and sessions), as the agent finds it."""
    if agent == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(base).expanduser() if base else Path.home() / ".claude"
    if agent == "codex":
        base = os.environ.get("CODEX_HOME")
        return Path(base).expanduser() if base else Path.home() / ".codex"
    return Path.home() / ".gemini"


def sessions_root(agent: str) -> Path:
    return agent_home(agent) / {"claude-code": "projects", "codex": "sessions", "gemini": "tmp"}[agent]


class Refused(Exception):
    """The hook input is not something to capture (one short reason, never its content)."""


def read_event(agent: str, payload_arg: str | None) -> dict[str, Any]:
    """The hook input as a dict, bounded; Refused when there is none or it is not a JSON object."""
    if agent == "codex":
        raw = (payload_arg or "").encode("utf-8", "surrogateescape")
    else:
        stream = sys.stdin
        if stream is None or stream.isatty():
            raise Refused("no hook input on stdin")
        raw = stream.buffer.read(MAX_PAYLOAD + 1)
    if len(raw) > MAX_PAYLOAD:
        raise Refused("hook input over 1 MB")
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        raise Refused("hook input is not JSON") from None
    if not isinstance(event, dict):
        raise Refused("hook input is not a JSON object")
    return event


def transcript_of(agent: str, event: dict[str, Any]) -> Path:
    """The session file the event names, which must be a regular file in the agent's sessions folder."""
    root = sessions_root(agent).resolve()
    if agent == "codex":
        if event.get("type") != "agent-turn-complete":
            raise Refused("not an agent-turn-complete notification")
        thread = event.get("thread-id")
        if not isinstance(thread, str) or not _SAFE_ID.match(thread):
            raise Refused("no valid thread-id")
        path = _codex_rollout(root, thread)
    else:
        given = event.get("transcript_path")
        if not isinstance(given, str) or not given or "\x00" in given:
            raise Refused("no transcript_path")
        path = Path(given).expanduser()
    try:
        path = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise Refused("the transcript file does not exist") from None
    if not path.is_relative_to(root):
        raise Refused(f"the transcript is outside {sessions_root(agent)}")  # a hostile payload reads nothing else
    if not path.is_file():
        raise Refused("the transcript is not a regular file")
    return path


def _codex_rollout(root: Path, thread: str) -> Path:
    """Codex names a rollout file after its thread id: sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
    Today's and yesterday's folders first (a turn just ended); the whole tree only if not there."""
    days = {time.strftime("%Y/%m/%d", time.localtime(time.time() - d * 86400)) for d in (0, 1)}
    days |= {time.strftime("%Y/%m/%d", time.gmtime(time.time() - d * 86400)) for d in (0, 1)}
    for day in sorted(days, reverse=True):
        for p in (root / day).glob(f"rollout-*-{thread}.jsonl"):
            return p
    for p in root.rglob(f"rollout-*-{thread}.jsonl"):
        return p
    raise Refused("no rollout file for this thread-id")


def process_age() -> float:
    """Seconds since this process started (interpreter start included); an estimate where /proc is missing."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.3


def run(agent: str, payload_arg: str | None, db: str | None) -> int:
    """The hook. Always 0."""
    record: dict[str, Any] = {"agent": agent, "kind": "hook"}
    try:
        event = read_event(agent, payload_arg)
        record["event"] = str(event.get("hook_event_name") or event.get("type") or "")[:40]
        sid = event.get("session_id") if agent != "codex" else event.get("thread-id")
        record["session"] = sid if isinstance(sid, str) and _SAFE_ID.match(sid) else None
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        why_not = state.load_policy().decide(cwd)
        if why_not:
            state.log({**record, "outcome": "skipped", "why": why_not})
            return 0
        path = transcript_of(agent, event)
        record["file"] = str(path)
        mark = state.file_mark(path)
        if mark is not None and state.load_seen().get(str(path)) == mark:
            state.log({**record, "outcome": "unchanged"})
            return 0
        return _fork_and_wait(agent, path, db, record)
    except Refused as exc:
        state.log({**record, "outcome": "skipped", "why": str(exc)})
    except Exception as exc:  # noqa: BLE001 - the agent must never see a failure of ours
        state.log({**record, "outcome": "error", "error": _one_line(exc)})
    return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _fork_and_wait(agent: str, path: Path, db: str | None, record: dict[str, Any]) -> int:
    if not hasattr(os, "fork"):  # no fork (Windows): the work is done here, within no bound
        capture_one(agent, path, db, record)
        return 0
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: leave the agent's pipes and session, do the work, say when it is done
        status = 1
        try:
            os.close(read_end)
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.close(null)
            status = 0 if capture_one(agent, path, db, record) else 1
            os.write(write_end, b"done")
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        import select

        remaining = BUDGET - process_age()
        ready = select.select([read_end], [], [], max(0.0, remaining))[0] if remaining > 0 else []
        if not ready:
            state.log({**record, "outcome": "detached", "child": pid,
                       "why": "the import takes longer than the hook may; it goes on alone"})
        else:  # "done", or the pipe closed because the child ended (it logged why): reap it
            os.read(read_end, 16)
            os.waitpid(pid, 0)
    finally:
        os.close(read_end)
    return 0


def capture_one(agent: str, path: Path, db: str | None, record: dict[str, Any], skip_if_seen: bool = True) -> bool:
    """Import one session file (or folder) into the store, logged; True when it landed. Never raises."""
    started = time.monotonic()
    mark = state.file_mark(path)
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    try:
        lock = open(state.lock_path(path), "a")  # noqa: SIM115 - held for the whole import
        try:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another hook on the same session: after it, not beside it
            if skip_if_seen and mark is not None and state.load_seen().get(str(path)) == mark:
                state.log({**record, "outcome": "unchanged", "ms": _ms(started)})
                return True
            result = _import(agent, path, db)
        finally:
            lock.close()
    except Exception as exc:  # noqa: BLE001 - logged; the next hook tries again
        state.log({**record, "outcome": "error", "error": _one_line(exc), "ms": _ms(started)})
        return False
    if mark is not None and path.is_file():
        state.mark_seen(path, mark)
    spent = os.times()  # a forked child's own CPU time (its parent's start-up is not in it)
    state.log({**record, "outcome": "done", "ms": _ms(started), "cpu_ms": int((spent.user + spent.system) * 1000),
               "store": result.pop("store"), **result})
    return True


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _import(agent: str, path: Path, db: str | None) -> dict[str, Any]:
    import store
    from store.capture import capture_session
    from store.paths import chosen_path

    where = str(chosen_path(db))
    Path(where).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = store.Store.open(where)  # capture writes, so a missing store is created
    try:
        summary = capture_session(st, agent, path)
    finally:
        st.close()
    summary.pop("import_id", None)
    summary.pop("agent", None)
    return {**summary, "store": where}
