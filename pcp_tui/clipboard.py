"""Putting a handoff on the user's clipboard from the command line (shared spec handoff.md, "Copying").

pyperclip first, and only a copy that reads back is a copy; then OSC 52, written only
to the terminal this process is attached to (`/dev/tty`), never to stdout (which may
carry JSON or a pipe); otherwise nothing, and the caller says so: the store has
already written the text to a file in `handoffs/`. The answer names the path that
worked: "pyperclip", "osc52" (sent to a terminal; delivery cannot be confirmed) or
"file-only".
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import BinaryIO, Callable

TTY_PATH = "/dev/tty"
# Terminals cap OSC 52 payloads (xterm and tmux at a few hundred KB by default); beyond
# this a sequence is more likely dropped than delivered, so it is not sent at all.
OSC52_MAX_BASE64 = 1_000_000


@dataclass(frozen=True)
class ClipboardReport:
    """Which path worked ("pyperclip" | "osc52" | "file-only") and, for people, what happened."""

    path: str
    detail: str


def open_tty() -> BinaryIO:
    """The controlling terminal for writing; OSError when there is none (SSH without a tty, CI, cron)."""
    fd = os.open(TTY_PATH, os.O_WRONLY | os.O_NOCTTY)
    if not os.isatty(fd):
        os.close(fd)
        raise OSError(f"{TTY_PATH} is not a terminal")
    return os.fdopen(fd, "wb", buffering=0)


def osc52_sequence(text: str) -> bytes:
    """The OSC 52 "set clipboard" escape sequence for `text`."""
    return b"\x1b]52;c;" + base64.b64encode(text.encode("utf-8")) + b"\x07"


def pyperclip_copy(text: str) -> tuple[bool, str]:
    """Copy through pyperclip (the desktop clipboard): (done, why not)."""
    try:
        import pyperclip
    except ImportError:
        return False, "pyperclip is not installed"
    try:
        pyperclip.copy(text)
        back = pyperclip.paste()
    except pyperclip.PyperclipException as exc:
        return False, f"pyperclip found no clipboard ({' '.join(str(exc).split())[:160]})"
    except Exception as exc:  # noqa: BLE001 - any failure means no copy; say why and fall through
        return False, f"pyperclip failed ({type(exc).__name__}: {' '.join(str(exc).split())[:160]})"
    if back != text and str(back).replace("\r\n", "\n") != text.replace("\r\n", "\n"):
        return False, "pyperclip did not raise, but the clipboard does not hold the text"
    return True, "copied to the clipboard with pyperclip"


def copy_text(text: str, tty_opener: Callable[[], BinaryIO] | None = None,
              use_pyperclip: bool = True) -> ClipboardReport:
    """Copy `text` by the first path that works; never claims a copy that did not happen."""
    reasons = []
    if use_pyperclip:
        ok, why = pyperclip_copy(text)
        if ok:
            return ClipboardReport("pyperclip", why)
        reasons.append(why)
    sequence = osc52_sequence(text)
    if len(sequence) > OSC52_MAX_BASE64:
        reasons.append(f"the text is too large for OSC 52 ({len(sequence):,} bytes encoded)")
    else:
        try:
            with (tty_opener or open_tty)() as tty:
                tty.write(sequence)
                tty.flush()
        except OSError as exc:
            reasons.append(f"no terminal for OSC 52 ({exc.strerror or exc})")
        else:
            return ClipboardReport("osc52", "sent to the terminal's clipboard with OSC 52 (delivery cannot be "
                                            "confirmed: the terminal must allow OSC 52)")
    return ClipboardReport("file-only", "not copied to a clipboard: " + "; ".join(reasons))


class Clipboard:
    """The clipboard function `Store.copy` takes: returns the path used and keeps the report for people."""

    def __init__(self, tty_opener: Callable[[], BinaryIO] | None = None, use_pyperclip: bool = True) -> None:
        self.tty_opener = tty_opener
        self.use_pyperclip = use_pyperclip
        self.report: ClipboardReport | None = None

    def __call__(self, text: str) -> str:
        self.report = copy_text(text, self.tty_opener, self.use_pyperclip)
        return self.report.path
