"""Running one store operation for a command: open the store as the right principal, run, print, close.

The store's errors and bad values become one line (or the JSON error) and exit 1; the rendering is Rich for
people, one JSON document with --json.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from .base import PROG, CliError, emit_json, fail, globals_of, json_mode, undecodable

# Arguments that name files: they may hold any bytes (the store never keeps them), so no UTF-8 check.
PATH_PARAMS = frozenset({"db", "file", "path", "out", "source", "folder", "with_db", "json_out"})

Op = Callable[[Any], Any]


def all_params(ctx: click.Context) -> dict[str, Any]:
    """The parameters of the command and of every group above it."""
    params: dict[str, Any] = {}
    while ctx is not None:
        for name, value in ctx.params.items():
            params.setdefault(name, value)
        ctx = ctx.parent  # type: ignore[assignment]
    return params


def run_store(ctx: click.Context, op: Op, render: str | Callable[[Any], str], *, creates: bool = False,
              exit_status: Callable[[Any], int] | None = None) -> int:
    """Open the store (creating it only when `creates`), run `op(store)`, print its result; the exit status.

    `render` names the function of pcp_tui.render that draws the result for people, or picks one from it."""
    import store

    g = globals_of(ctx)
    as_json = json_mode(ctx)
    if g.grants and not g.as_model:
        raise click.UsageError("--grant needs --as-model", ctx)
    try:
        session = None
        if g.as_model:
            session = store.AccessSession.model_client(g.as_model, store.AccessSession.parse_grants(g.grants))
        path = store.paths.chosen_path(g.db)
        from ..encrypt import install_prompt

        install_prompt()  # an encrypted store wrapped by a passphrase asks it here, at a terminal
        st = store.Store.open(path, session=session, create=creates)
        try:
            _refuse_undecodable(st, ctx)
            finish_index_upgrade(st, as_json)
            result = op(st)
        finally:
            with contextlib.suppress(Exception):
                st.close()
    except store.PcpError as exc:
        return fail(getattr(exc, "code", "invalid"), getattr(exc, "message", None) or str(exc), as_json)
    except CliError as exc:
        return fail(exc.code, exc.message, as_json)
    except BrokenPipeError:
        raise
    except OSError as exc:
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        return fail("invalid", f"{exc.strerror or exc}{where}", as_json)
    except ValueError as exc:  # a value the store could not parse
        return fail("invalid", str(exc), as_json)
    show(result, render, as_json)
    return exit_status(result) if exit_status else 0


def show(result: Any, render: str | Callable[[Any], str], as_json: bool) -> None:
    if as_json:
        emit_json(result)
        return
    from . import render as draw

    name = render if isinstance(render, str) else render(result)
    getattr(draw, name)(draw.make_console(), result)


def _refuse_undecodable(st: Any, ctx: click.Context) -> None:
    message = undecodable(all_params(ctx), PATH_PARAMS)
    if message is not None:
        from store import Invalid
        from store.refusal import audit_refusal

        raise audit_refusal(st, ctx.info_name.replace("-", "_") if ctx.info_name else "pcp", Invalid(message))


@contextlib.contextmanager
def progress(ctx: click.Context, description: str) -> Iterator[Callable[..., None] | None]:
    """A Rich progress bar on stderr for people at a terminal; None (no callback) otherwise."""
    if json_mode(ctx) or not sys.stderr.isatty():
        yield None
        return
    from . import render

    with render.progress(description) as update:
        yield update


def finish_index_upgrade(st: Any, as_json: bool) -> None:
    """A store written by an older pcp is re-indexed before its first command (resumable if cut short).

    A person at a terminal sees a progress bar on stderr; a script sees two lines there (none with --json)."""
    if st.index_upgrade_status() is None:
        return
    import store

    owner = st.with_session(store.AccessSession.owner())  # the user running pcp owns the file
    if sys.stderr.isatty():
        from . import render

        with render.progress("upgrading the search index") as update:
            owner.upgrade_index(progress=update)
        return
    if not as_json:
        sys.stderr.write(f"{PROG}: upgrading the search index of this store (a store written by an older pcp)…\n")
        sys.stderr.flush()
    result = owner.upgrade_index()
    if not as_json:
        sys.stderr.write(f"{PROG}: search index upgraded ({result['total']:,} revisions).\n")
        sys.stderr.flush()


def write_out(st: Any, out: str, text: str) -> None:
    """Write `text` to the file `--out` names: 0600, never the store or its side files, never through a link."""
    from store.files import open_private, refuse_store_target

    refuse_store_target(Path(out), st.path)
    try:
        with open_private(Path(out), "w") as fh:
            fh.write(text)
    except OSError as exc:
        raise CliError("invalid", f"cannot write {out!r}: {exc.strerror or exc}") from None


def existing_store(db: str | None) -> Path:
    """The store a command that never creates one works on (--db, $PCP_DB, the default): it must be there."""
    from store import PcpError, paths

    try:
        path = paths.chosen_path(db)
        paths.require_store(path, create=False)
    except PcpError as exc:
        raise CliError(exc.code, exc.message) from None
    return path


def read_text(file: str | None, stdin: bool, content: str | None) -> str | None:
    """The content from --content, --file or --stdin (None when none is given)."""
    if content is not None:
        return content
    if file is not None:
        try:
            with open(file, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise CliError("invalid", f"cannot read {file!r}: {exc.strerror or exc}") from None
        return decode(data, repr(file))
    if stdin:
        return read_stdin()
    return None


def read_stdin() -> str:
    stream = sys.stdin
    if stream is None:
        raise CliError("invalid", "standard input is not available")
    raw = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    return decode(raw, "standard input") if isinstance(raw, bytes) else raw


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError("invalid", f"{what} is not UTF-8 text (byte {exc.start})") from None
