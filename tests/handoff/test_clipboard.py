"""pcp_tui.clipboard: pyperclip first, then OSC 52 to the terminal only, else file-only, reported honestly."""

from __future__ import annotations

import base64
import io

import pyperclip
import pytest

from pcp_tui import clipboard


class FakeTty(io.BytesIO):
    """A terminal that keeps what was written to it (close keeps the bytes readable)."""

    def close(self) -> None:
        self.kept = self.getvalue()


@pytest.fixture
def no_pyperclip_backend(monkeypatch):
    def fail(text):
        raise pyperclip.PyperclipException("Pyperclip could not find a copy/paste mechanism for your system.")

    monkeypatch.setattr(pyperclip, "copy", fail)
    monkeypatch.setattr(pyperclip, "paste", fail)


@pytest.fixture
def no_tty(monkeypatch, tmp_path):
    monkeypatch.setattr(clipboard, "TTY_PATH", str(tmp_path / "no-such-tty"))


def test_pyperclip_without_backend_and_no_terminal_is_file_only(no_pyperclip_backend, no_tty, capsys):
    report = clipboard.copy_text("hello")
    assert report.path == "file-only"
    assert "pyperclip found no clipboard" in report.detail and "no terminal for OSC 52" in report.detail
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_pyperclip_without_backend_falls_to_osc52_on_the_terminal_only(no_pyperclip_backend, capsys):
    tty = FakeTty()
    report = clipboard.copy_text("héllo\n", tty_opener=lambda: tty)
    assert report.path == "osc52" and "cannot be confirmed" in report.detail
    assert tty.kept == b"\x1b]52;c;" + base64.b64encode("héllo\n".encode()) + b"\x07"
    out, err = capsys.readouterr()
    assert out == "" and err == ""  # never into stdout


def test_a_regular_file_is_not_a_terminal(no_pyperclip_backend, monkeypatch, tmp_path):
    fake = tmp_path / "tty"
    fake.write_bytes(b"")
    monkeypatch.setattr(clipboard, "TTY_PATH", str(fake))
    assert clipboard.copy_text("x").path == "file-only"
    assert fake.read_bytes() == b""


def test_a_pyperclip_copy_that_does_not_read_back_is_not_claimed(monkeypatch, no_tty):
    monkeypatch.setattr(pyperclip, "copy", lambda text: None)
    monkeypatch.setattr(pyperclip, "paste", lambda: "something else")
    report = clipboard.copy_text("hello")
    assert report.path == "file-only" and "does not hold the text" in report.detail


def test_a_working_pyperclip_wins(monkeypatch):
    held = {}
    monkeypatch.setattr(pyperclip, "copy", lambda text: held.update(text=text))
    monkeypatch.setattr(pyperclip, "paste", lambda: held["text"])
    report = clipboard.copy_text("hello", tty_opener=lambda: pytest.fail("OSC 52 must not be tried"))
    assert report.path == "pyperclip"


def test_oversized_text_is_not_sent_by_osc52(no_pyperclip_backend, monkeypatch):
    monkeypatch.setattr(clipboard, "OSC52_MAX_BASE64", 100)
    report = clipboard.copy_text("x" * 200, tty_opener=lambda: pytest.fail("too large for OSC 52"))
    assert report.path == "file-only" and "too large" in report.detail


def test_the_clipboard_callable_returns_the_path_for_the_store(no_pyperclip_backend, no_tty):
    clip = clipboard.Clipboard()
    assert clip("text") == "file-only" and clip.report.path == "file-only"
