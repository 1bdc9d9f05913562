"""The `pcp` command (shared/spec/cli.md): `main` maps outcomes to exit statuses (main.py), the commands live in
`commands/`, one module per family, on click; `base` holds the errors, option types and command classes, `run`
opens the store and prints, `options` the option groups several commands share. No module here imports Textual."""

from . import base
from .base import CliError
from .commands.app import mcp_store_path
from .main import main, pcp

__all__ = ["base", "CliError", "main", "mcp_store_path", "pcp"]
