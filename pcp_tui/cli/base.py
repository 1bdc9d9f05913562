"""What every `pcp` command shares: the errors, the option value types, the command classes, the output.

Usage problems are click's `UsageError` (exit 2, code `usage`); bad option values and unreadable files are
`CliError` (exit 1, code `invalid` unless said); the store's own errors are `PcpError` (exit 1).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

import click

PROG = "pcp"
INDENT = 2


class CliError(Exception):
    """An operation error found by the command line itself (a bad option value, an unreadable file): exit 1."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class Globals:
    """The options before the subcommand (shared/spec/cli.md "Global options")."""

    db: str | None = None
    json: bool = False
    as_model: str | None = None
    grants: list[str] = field(default_factory=list)


def globals_of(ctx: click.Context) -> Globals:
    found = ctx.find_object(Globals)
    return found if found is not None else Globals()


def json_mode(ctx: click.Context) -> bool:
    """--json before the subcommand or after it."""
    return globals_of(ctx).json or bool(ctx.meta.get("pcp.json"))


def _late_json(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--json after the subcommand's name (as before it)."""
    if value:
        ctx.meta["pcp.json"] = True


# --- option value types (a bad value is `invalid`, exit 1, as the contract says) --------------------------


class _Checked(click.ParamType[Any]):
    """A type whose refusal is an operation error (CliError), not a usage error."""

    def check(self, value: str, flag: str) -> Any:
        raise NotImplementedError

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        flag = param.opts[0] if param is not None and param.opts else self.name.upper()
        if param is not None and not param.opts:  # an argument: its metavar
            flag = param.human_readable_name
        return self.check(value, flag)


class AtLeast(_Checked):
    name = "integer"

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def check(self, value: str, flag: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise CliError("invalid", f"{flag} must be an integer, got {value!r}") from None
        if number < self.minimum:
            raise CliError("invalid", f"{flag} must be at least {self.minimum}, got {number}")
        return number


class Timestamp(_Checked):
    """RFC 3339, checked by the store's own rule (store.ids.parse_time)."""

    name = "timestamp"

    def check(self, value: str, flag: str) -> str:
        from store import Invalid, ids

        try:
            ids.parse_time(value, flag)
        except Invalid as exc:
            raise CliError("invalid", exc.message) from None
        return value.strip()


class OneOf(_Checked):
    """One of `allowed`, or of what `choices()` gives when a value is checked (a list kept elsewhere)."""

    name = "choice"

    def __init__(self, *allowed: str, choices: Callable[[], Iterable[str]] | None = None) -> None:
        self.allowed = allowed
        self.choices = choices

    def check(self, value: str, flag: str) -> str:
        allowed = tuple(self.choices()) if self.choices is not None else self.allowed
        if value not in allowed:
            shown = value if len(value) <= 60 else value[:60] + "…"  # a hostile value is named, never echoed whole
            raise CliError("invalid", f"{flag} must be one of {', '.join(allowed)}, got {shown!r}")
        return value


class JsonObject(_Checked):
    name = "json"

    def check(self, value: str, flag: str) -> dict[str, Any]:
        try:
            facets = json.loads(value)
        except RecursionError:
            raise CliError("invalid", f"{flag} is nested too deeply to read") from None
        except ValueError as exc:
            raise CliError("invalid", f"{flag} is not valid JSON: {exc}") from None
        if not isinstance(facets, dict):
            raise CliError("invalid", f"{flag} must be a JSON object")
        return facets


class Relation(_Checked):
    name = "relation"

    def check(self, value: str, flag: str) -> dict[str, str]:
        rtype, sep, target = value.rpartition(":")
        if not sep or not rtype.strip() or not target.strip():
            raise CliError("invalid", f"{flag} must be TYPE:ID, got {value!r}")
        return {"relation_type": rtype.strip(), "to": target.strip()}


class CommaList(_Checked):
    name = "list"

    def check(self, value: str, flag: str) -> list[str]:
        return [part.strip() for part in value.split(",") if part.strip()]


def flat(lists: Any) -> list[str]:
    """Repeated comma lists as one list."""
    return [item for chunk in lists or () for item in chunk]


def given(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


# --- the command classes -----------------------------------------------------------------------------


class _Usage:
    """argparse's wording, which scripts and the contract tests know: `usage: pcp ...`, `pcp X: error: ...`."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        pieces = self.collect_usage_pieces(ctx)  # type: ignore[attr-defined]  # (a mixin: click.Command follows it)
        formatter.write_usage(ctx.command_path, " ".join(pieces), prefix="usage: ")

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        example = getattr(self, "example", None)
        if example:
            formatter.write_paragraph()
            formatter.write_text("Example:")
            with formatter.indentation():
                for line in example.splitlines():  # as written: an example is never re-wrapped
                    formatter.write(f"{'':>{formatter.current_indent}}{line}\n")
        super().format_epilog(ctx, formatter)  # type: ignore[misc]  # (a mixin: click.Command follows it)


class Command(_Usage, click.Command):
    """A `pcp` subcommand: it also takes --json after its name, and `example` is shown by --help."""

    def __init__(self, *args: Any, example: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(*args, **kwargs)
        self.example = example
        self.params.append(click.Option(["--json", "json_out"], is_flag=True, hidden=True, expose_value=False,
                                        callback=_late_json, help="print exactly one JSON document"))


class Group(_Usage, click.Group):
    command_class = Command

    def __init__(self, *args: Any, example: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(*args, **kwargs)
        self.example = example


Group.group_class = Group


# --- output --------------------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    return str(value)


def emit_json(document: Any) -> None:
    try:
        text = json.dumps(document, ensure_ascii=False, indent=INDENT, default=_json_default)
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:  # a stdout that cannot take UTF-8: escape instead of failing
        sys.stdout.write(json.dumps(document, ensure_ascii=True, indent=INDENT, default=_json_default) + "\n")
    sys.stdout.flush()


def fail(code: str, message: str, as_json: bool) -> int:
    message = str(message) if message else code
    if as_json:
        emit_json({"error": {"code": code, "message": message}})
    else:
        sys.stderr.write(f"{PROG}: error: {' '.join(message.split())} ({code})\n")
        sys.stderr.flush()
    return 1


def note(message: str) -> None:
    """A remark for a person (never with --json): one line on stderr."""
    sys.stderr.write(f"{PROG}: {message}\n")
    sys.stderr.flush()


def at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def undecodable(params: dict[str, Any], paths: frozenset[str]) -> str | None:
    """The first argument whose text is not valid UTF-8 (Python keeps such bytes as lone surrogates)."""
    for name, value in sorted(params.items()):
        if name in paths:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as exc:
                    bad = os.fsencode(item[exc.start])
                    return (f"The {name.replace('_', '-')} argument is not valid UTF-8 text (byte 0x{bad[0]:02x}); "
                            "pass UTF-8.")
    return None


T = TypeVar("T")


def present(value: T | None, flag: str) -> T:
    """A value the usage checks made sure of (--reason with --yes, DIR without --with): the type checker's
    proof, and a one-line refusal should a check ever miss it."""
    if value is None:
        raise CliError("invalid", f"{flag} is required here.")
    return value


def command(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Command]:
    """click.command with pcp's Command class (--json after the name, an example in --help)."""
    return click.command(*args, cls=Command, **kwargs)


def group(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Group]:
    """click.group with pcp's Group class."""
    return click.group(*args, cls=Group, **kwargs)
