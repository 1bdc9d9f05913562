"""Encryption at rest: `pcp encrypt` (and `--rotate`), `pcp decrypt` (README "Encryption at rest").

The store is converted while closed (store/encryption.py), so these commands never open it through run_store;
they run as the owner only."""

from __future__ import annotations

from typing import Any

import click

from ..base import CliError, Group, command, emit_json, fail, globals_of, json_mode


def register(cli: Group) -> None:
    for cmd in (encrypt, decrypt):
        cli.add_command(cmd)


def _convert(ctx: click.Context, name: str, **options: Any) -> int:
    from store import PcpError

    from ... import encrypt as conversions

    g = globals_of(ctx)
    as_json = json_mode(ctx)
    if g.as_model or g.grants:
        raise click.UsageError(f"only the store's owner runs pcp {name}; drop --as-model and --grant", ctx)
    try:
        result = conversions.main_command(name, g.db, quiet=as_json, **options)
    except PcpError as exc:
        return fail(getattr(exc, "code", "invalid"), getattr(exc, "message", None) or str(exc), as_json)
    except CliError as exc:
        return fail(exc.code, exc.message, as_json)
    except OSError as exc:
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        return fail("invalid", f"{exc.strerror or exc}{where}", as_json)
    if as_json:
        emit_json(result)
    else:
        conversions.render(result)
    return 0


@command(example="pcp encrypt                 (the key wrapped by the OS keychain)\n"
                  "pcp encrypt --passphrase    (asked twice, or read from $PCP_PASSPHRASE_FILE)\n"
                  "pcp encrypt --rotate")
@click.option("--passphrase", is_flag=True, help="wrap the key with a passphrase, not the OS keychain")
@click.option("--rotate", is_flag=True,
              help="re-encrypt an encrypted store under a new key and destroy pcp's copies of the old one")
@click.pass_context
def encrypt(ctx: click.Context, passphrase: bool, rotate: bool) -> int:
    """Encrypt the store at rest (SQLCipher; needs pip install 'pcp[encrypt]').

    Copies the store into an encrypted file under a new random key, verifies it, swaps it in and overwrites the
    plain file (an SSD or a snapshot may still keep its old blocks). The key is wrapped by the OS keychain, or
    with --passphrase by a passphrase. An interrupted run resumes where it stopped."""
    return _convert(ctx, "encrypt", passphrase=passphrase, rotate=rotate)


@command(example="pcp decrypt")
@click.pass_context
def decrypt(ctx: click.Context) -> int:
    """Turn an encrypted store back into plain SQLite.

    Copies the store into a plain SQLite file, verifies it, swaps it in, and destroys the key file and its
    keychain entry."""
    return _convert(ctx, "decrypt")
