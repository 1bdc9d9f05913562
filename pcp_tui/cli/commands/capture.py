"""`pcp capture install | uninstall | status | run | hook` (the logic: pcp_tui/capture/)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import click

from .. import base
from ..base import CliError, Group, OneOf, emit_json, fail, globals_of, json_mode, group
from ...capture import AGENTS as AGENT_SOURCES

AGENT = {"metavar": "AGENT", "type": OneOf(*AGENT_SOURCES)}


def register(cli: Group) -> None:
    cli.add_command(capture)


@group(example="pcp capture install claude-code      (this project; asks at a terminal)\n"
                     "pcp capture status\npcp capture uninstall claude-code")
def capture() -> None:
    """Live capture from Claude Code, Codex and Gemini CLI (private by default): secrets redacted, pasted bundles
    and tool output left out."""


def _run(ctx: click.Context, action: str, **args: object) -> int:
    """One capture action as the store's owner (it opens the store itself, only to write what it captures)."""
    g = globals_of(ctx)
    as_json = json_mode(ctx)
    if g.as_model or g.grants:
        raise click.UsageError("pcp capture runs as the store's owner; --as-model and --grant do not apply", ctx)
    if g.db is not None and not str(g.db).strip():
        return fail("invalid", "--db must not be empty", as_json)
    from ...capture import manage as logic

    namespace = SimpleNamespace(capture_command=action, db=g.db, **args)
    try:
        document, text = logic.command(namespace, ask=input if not as_json and base.at_terminal() else None)
    except logic.CaptureError as exc:
        raise CliError("invalid", str(exc)) from None
    if as_json:
        emit_json(document)
    else:
        sys.stdout.write(text)
    return 0


@capture.command(example="pcp capture install claude-code\npcp capture install codex --all")
@click.argument("agent", **AGENT)  # type: ignore[arg-type]
@click.option("--project", is_flag=True, help="capture sessions of the current folder (the default)")
@click.option("--all", "all_", is_flag=True, help="capture sessions of every project")
@click.pass_context
def install(ctx: click.Context, agent: str, project: bool, all_: bool) -> int:
    """Register pcp in the agent's own hook mechanism (its user-level configuration only; a backup is kept and
    the diff shown)."""
    if project and all_:
        raise click.UsageError("--project and --all cannot go together", ctx)
    return _run(ctx, "install", agent=agent, project=project, all=all_)


@capture.command(example="pcp capture uninstall gemini")
@click.argument("agent", **AGENT)  # type: ignore[arg-type]
@click.pass_context
def uninstall(ctx: click.Context, agent: str) -> int:
    """Take pcp's entries out of the agent's configuration."""
    return _run(ctx, "uninstall", agent=agent)


@capture.command(example="pcp capture status --json")
@click.pass_context
def status(ctx: click.Context) -> int:
    """What is installed, which projects, the last runs and errors."""
    return _run(ctx, "status")


@capture.command(name="run", example="pcp capture run            (for a cron, launchd or systemd timer)")
@click.option("--agent", "agents", multiple=True, type=OneOf(*AGENT_SOURCES), metavar="AGENT",
              help="repeatable; default: all three")
@click.pass_context
def run_now(ctx: click.Context, agents: tuple[str, ...]) -> int:
    """Capture what the agents' folders hold that is new (for timers)."""
    return _run(ctx, "run", agent=list(agents) or None)


@capture.command(example="(installed by pcp capture install; the agent runs it after each turn)")
@click.argument("agent", **AGENT)  # type: ignore[arg-type]
@click.argument("payload", required=False)
@click.pass_context
def hook(ctx: click.Context, agent: str, payload: str | None) -> int:
    """What the agent runs after a turn (installed by pcp capture install)."""
    from ...capture.hook import run as run_hook

    return run_hook(agent, payload, globals_of(ctx).db)


def hook_main(argv: list[str]) -> int:
    """`pcp [--db P] capture hook AGENT [PAYLOAD]`, the agent's call: no parser built, exit 0 whatever happens."""
    try:
        at = argv.index("capture")
        db = argv[argv.index("--db") + 1] if "--db" in argv[:at] else None
        rest = argv[at + 2:]
        if not rest or rest[0] not in AGENT_SOURCES:
            return 0
        from ...capture.hook import run as run_hook

        return run_hook(rest[0], rest[1] if len(rest) > 1 else None, db)
    except Exception:  # noqa: BLE001 - the agent must never see a failure of ours
        return 0


def is_hook_call(argv: list[str]) -> bool:
    if "capture" not in argv or "-h" in argv or "--help" in argv:
        return False
    at = argv.index("capture")
    head = argv[:at]
    return argv[at + 1:at + 2] == ["hook"] and (not head or len(head) == 2 and head[0] == "--db")
