"""The command line never prints a control character of stored text to the terminal (render.SafeConsole)."""

from __future__ import annotations

import io

from rich.text import Text

from pcp_tui.cli import render


def test_stored_escape_sequences_are_printed_as_symbols_and_styles_still_work():
    out = io.StringIO()
    console = render.SafeConsole(file=out, force_terminal=True, color_system="standard", width=80,
                                 markup=False, emoji=False, highlight=False)
    render.read(console, {"results": [{"requested_id": "pg_x", "title": "T \x1b]2;PWNED\x07", "revision": {
        "page_id": "pg_x", "revision_id": "rev_x", "namespace": "user:me", "lifecycle_status": "active",
        "created_at": "2026-12-01T00:00:00Z", "created_by": {"actor_type": "user", "actor_id": "owner"},
        "payload": {"content": "body \x1b]52;c;ZXZpbA==\x07 \x1b[2J end", "media_type": "text/plain"}}}]})
    console.print(Text("styled", style="red"))
    printed = out.getvalue()
    assert "␛]52;c;ZXZpbA==" in printed and "␛[2J" in printed and "end" in printed
    assert "\x1b]" not in printed and "\x1b[2J" not in printed and "\x07" not in printed
    assert "\x1b[31mstyled" in printed  # Rich's own styles still reach the terminal


def test_the_cli_console_is_the_safe_one():
    assert isinstance(render.make_console(), render.SafeConsole)
