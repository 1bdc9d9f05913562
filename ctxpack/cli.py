"""The `ctxpack` command line (also `python -m ctxpack`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from . import selftest
from .chunking import encode_text
from .errors import ContextPackError
from .measure import MEETING_TITLE, format_table, measure_rounds, meeting_utterances
from .pack import DEFAULT_MAX_CHUNK_BYTES, ContextPack, ContextPackDelta, apply_delta


class CommandError(Exception):
    """A failure to report on one line with exit status 1."""


def _read(path: str, what: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise CommandError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None


def _write(path: str, data: bytes) -> None:
    try:
        if path == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # never leave a half-written pack behind
    except OSError as exc:
        raise CommandError(f"cannot write {path!r}: {exc.strerror or exc}") from None


def _cmd_pack(args: argparse.Namespace) -> int:
    data = _read(args.input, "input")
    pack = ContextPack.from_content(data, args.max_chunk_bytes)
    _write(args.out, pack.to_bytes())
    return 0


def _cmd_delta(args: argparse.Namespace) -> int:
    _no_double_stdin(args.base, args.target)
    base = ContextPack.from_bytes(_read(args.base, "base pack"))
    target = ContextPack.from_bytes(_read(args.target, "target pack"))
    _write(args.out, ContextPackDelta.between(base, target).to_bytes())
    return 0


def _cmd_apply(args: argparse.Namespace) -> int:
    _no_double_stdin(args.base, args.delta, args.check)
    base = ContextPack.from_bytes(_read(args.base, "base pack"))
    delta = ContextPackDelta.from_bytes(_read(args.delta, "delta"))
    rebuilt = apply_delta(base, delta)
    if args.check is not None:
        expected = _read(args.check, "check file")
        if b"".join(rebuilt.chunks) != expected:
            raise CommandError(f"check failed: the rebuilt content differs from {args.check!r}; nothing written")
    _write(args.out, rebuilt.to_bytes())
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    pack = ContextPack.from_bytes(_read(args.pack, "pack"), strict=not args.lenient)
    print(f"ok digest={pack.digest} chunks={len(pack.chunks)} total_bytes={pack.total_bytes} byte_count={pack.byte_count}")
    return 0


def _cmd_measure(args: argparse.Namespace) -> int:
    if args.input is None:
        lines, header = meeting_utterances(args.rounds if args.rounds is not None else 40), MEETING_TITLE
    else:
        text = encode_text(_read(args.input, "transcript")).decode("utf-8")
        # Only LF ends a line (a CR stays inside it), as in split_content.
        lines, header = [line + "\n" for line in text.split("\n")], ""
        if lines[-1] == "\n":
            lines.pop()
        else:
            lines[-1] = lines[-1][:-1]
        if args.rounds is not None:
            lines = lines[: args.rounds]
    if not lines:
        raise CommandError("nothing to measure: the transcript has no lines")
    print(format_table(measure_rounds(lines, header, args.max_chunk_bytes)))
    return 0


def _cmd_selftest(args: argparse.Namespace) -> int:
    return 0 if selftest.run() else 1


def _no_double_stdin(*paths: str | None) -> None:
    if sum(1 for p in paths if p == "-") > 1:
        raise _Usage("only one input can be read from stdin ('-')")


class _Usage(Exception):
    pass


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value!r}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxpack", description="Verifiable chunked context packs (ctxpack v1).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("selftest", help="check every rule of the format against this implementation")
    p.set_defaults(func=_cmd_selftest)

    p = sub.add_parser("pack", help="pack a UTF-8 text file")
    p.add_argument("--input", default="-", help="text file, or - for stdin (default)")
    p.add_argument("--out", default="-", help="pack file, or - for stdout (default)")
    p.add_argument("--max-chunk-bytes", type=int, default=DEFAULT_MAX_CHUNK_BYTES)
    p.set_defaults(func=_cmd_pack)

    p = sub.add_parser("delta", help="compute the delta from a base pack to a target pack")
    p.add_argument("--base", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--out", default="-")
    p.set_defaults(func=_cmd_delta)

    p = sub.add_parser("apply", help="rebuild the target pack from a base pack and a delta")
    p.add_argument("--base", required=True)
    p.add_argument("--delta", required=True)
    p.add_argument("--out", default="-")
    p.add_argument("--check", help="text file the rebuilt content must equal byte for byte")
    p.set_defaults(func=_cmd_apply)

    p = sub.add_parser("verify", help="verify a pack and print its digest and sizes")
    p.add_argument("--pack", default="-")
    p.add_argument("--lenient", action="store_true", help="accept non-canonical JSON (every other check still runs)")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("measure", help="compare full packs, deltas and gzip over an append-only transcript")
    p.add_argument("--rounds", type=_positive_int, default=None, help="rounds to replay (default 40, or every line of --input)")
    p.add_argument("--input", help="transcript file: one line appended per round")
    p.add_argument("--max-chunk-bytes", type=int, default=DEFAULT_MAX_CHUNK_BYTES)
    p.set_defaults(func=_cmd_measure)
    return parser


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error
        return int(exc.code or 0)
    try:
        code: int = args.func(args)
        return code
    except ContextPackError as exc:
        print(f"ctxpack: error [{exc.code}]: {_one_line(exc.message)}", file=sys.stderr)
        return 1
    except CommandError as exc:
        print(f"ctxpack: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except _Usage as exc:
        print(f"ctxpack: usage error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("ctxpack: interrupted", file=sys.stderr)
        return 130

