"""Revising a page: edit in a TextArea (or $EDITOR); a concurrent change is a Conflict and the draft is kept."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from store.types import WriteResult
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from .. import commands, reading
from ..messages import ReviseConflicted, Revised, StoreWorkers
from ..shared import revised_facets
from ..widgets.fields import Editor, Field
from .confirm import key_hint
from .typed import after_typing


# Longer texts are not put in the edit box (a TextArea lays out every line: seconds of a blocked loop for a long
# page); they are revised in $EDITOR only, the dialog holding the draft.
BOX_LIMIT = 100_000
SUFFIX = {"text/markdown": ".md", "text/plain": ".txt", "application/json": ".json", "text/x-python": ".py"}


def run_editor(argv: list[str], editor: str) -> str | None:
    """Run the editor on the draft file; None when it exited cleanly, else what went wrong (never raises)."""
    try:
        done = subprocess.run(argv, check=False)
    except Exception as exc:  # noqa: BLE001 - missing program, no permission, bad argument: all become a message
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        return f"{editor} could not start ({reason}); the draft in the box is unchanged."
    if done.returncode != 0:
        return f"{editor} exited with status {done.returncode}; the draft in the box is unchanged."
    return None


class ReviseScreen(StoreWorkers, ModalScreen[WriteResult | None]):
    """Dismisses with revise_page's answer, or None when cancelled."""

    COMMAND_SCOPE = "revise"
    BINDINGS = commands.bindings("revise")

    def __init__(self, envelope: dict[str, Any], *, open_editor: bool = False) -> None:
        super().__init__()
        self.envelope = envelope
        self.expected = envelope["revision_id"]
        self.title_before = reading.title_of(envelope)
        self.open_editor = open_editor
        self.conflicted = False
        self.original = (envelope.get("payload") or {}).get("content") or ""  # the whole text (curate.py)
        self.boxed = len(self.original) <= BOX_LIMIT
        self._draft = self.original  # the draft when it is not in the box

    def compose(self) -> ComposeResult:
        env = self.envelope
        payload = env.get("payload") or {}
        with Vertical(id="dialog", classes="dialog full"):
            yield Static(Content.assemble(("Revise ", "bold"), (self.title_before, "bold"),
                                          (f"  on top of {self.expected}", "dim")), id="revise-head")
            yield Static("", id="conflict")
            yield Label("Title")
            yield Field(value=(env.get("facets") or {}).get("title") or "", id="title",
                        placeholder="(no title facet: the first line is the title)")
            yield Label(f"Content ({payload.get('media_type') or 'text/markdown'})")
            if self.boxed:
                yield Editor(self.original, id="body", soft_wrap=True, show_line_numbers=False)
            else:
                yield Static(self._draft_note(), id="body-note")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Edit in $EDITOR", id="editor")
                yield Button("Save revision", id="save", variant="primary")
            yield Static(key_hint(self.app, [("revise.save", "Save"), ("revise.editor", "$EDITOR (then Save)"),
                                             ("revise.cancel", "Cancel"), ("help", "Keys")]), classes="dialog-keys")

    def on_mount(self) -> None:
        self.query_one("#conflict", Static).display = False
        if self.boxed:
            body = self.query_one("#body", Editor)
            body.move_cursor(body.document.end)  # what is typed straight away adds to the page, not before its title
            body.focus()
        if self.open_editor or not self.boxed:
            self.call_after_refresh(self.action_editor)

    def _draft_note(self) -> str:
        changed = "unchanged" if self._draft == self.original else f"edited: now {len(self._draft):,} characters"
        return (f"This page has {len(self.original):,} characters, too many for an edit box: it is revised in your "
                f"$EDITOR, whole ({changed}). {self.app.key_display('revise.editor')} opens the draft again, "
                f"{self.app.key_display('revise.save')} saves it.")

    @property
    def draft(self) -> str:
        return self.query_one("#body", Editor).text if self.boxed else self._draft

    def _set_draft(self, text: str) -> None:
        if self.boxed:
            self.query_one("#body", Editor).text = text
        else:
            self._draft = text
            self.query_one("#body-note", Static).update(self._draft_note())

    @after_typing
    def action_save(self) -> None:
        title = self.query_one("#title", Field).value.strip()
        facets = None
        old_facets = dict(self.envelope.get("facets") or {})
        if not title and old_facets.get("title"):
            self.notify("A page needs its title: type one, or Cancel to keep the page as it is.", title="Revise",
                        severity="warning")
            self.query_one("#title", Field).focus()
            return
        if not self.conflicted and title == (old_facets.get("title") or "") and self.draft == self.original:
            self.notify("Nothing changed, so no revision was written.", title="Revise")
            return
        if title != (old_facets.get("title") or ""):  # (an empty title was refused above when there was one)
            facets = revised_facets(old_facets, title=title)
        self.query_one("#save", Button).disabled = True
        self._save(self.envelope["page_id"], self.expected, self.draft, facets)

    @work(thread=True, exclusive=True, exit_on_error=False, group="revise")
    def _save(self, page_id: str, expected: str, content: str, facets: dict[str, Any] | None) -> None:
        from store import Conflict

        store = self.app.opened_store
        kwargs: dict[str, Any] = {"content": content}
        if facets is not None:
            kwargs["facets"] = facets
        try:
            result = store.revise_page(page_id, expected, **kwargs)
        except Conflict as exc:
            current = store.read_pages([page_id], projections=("manifest",))["results"][0]["revision"]
            self.post_message(ReviseConflicted(exc.message, current))
            return
        self.post_message(Revised(result))

    @on(Revised)
    def _revised(self, message: Revised) -> None:
        message.stop()
        self.query_one("#save", Button).disabled = False
        self.dismiss(message.result)

    @on(ReviseConflicted)
    def _conflicted(self, message: ReviseConflicted) -> None:
        message.stop()
        self.query_one("#save", Button).disabled = False
        self.conflicted = True
        self.expected = message.current["revision_id"]  # saving again puts the draft on top of the new head
        banner = self.query_one("#conflict", Static)
        banner.display = True
        banner.update(Content.assemble(
            ("The page changed while you were editing. ", "bold $error"), message.text + "\n",
            "Your draft is kept below. Save again (ctrl+s) to write it on top of the new revision "
            f"{self.expected}, or Cancel to drop it."))
        self.notify("The page changed meanwhile; your draft is kept.", title="Conflict", severity="warning")

    def action_editor(self) -> None:
        """Suspend the app and continue the draft in $VISUAL / $EDITOR; any failure comes back as a message."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        media = (self.envelope.get("payload") or {}).get("media_type") or "text/markdown"
        try:
            command = shlex.split(editor)
        except ValueError as exc:
            self.notify(f"$EDITOR ({editor}) cannot be read: {exc}. Edit in the box instead.", title="Editor",
                        severity="error", timeout=8)
            return
        from ..encrypt import editor_draft_folder

        store = getattr(self.app, "store", None)
        base, refusal = editor_draft_folder(getattr(store, "path", None))
        if refusal is not None:
            self.notify(refusal, title="Editor", severity="error", timeout=8)
            return
        # The folder is 0700 and the draft 0600; an encrypted store's draft lives in memory (tmpfs) only,
        # and the folder is removed with it when the editor is done.
        with tempfile.TemporaryDirectory(prefix="pcp-revise-", dir=base) as folder:
            path = Path(folder) / ("draft" + SUFFIX.get(media, ".txt"))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:  # newline="": every \r stays as it is
                fh.write(self.draft)
            failure = None
            try:
                with self.app.suspend():
                    # Nothing may leave this block by an exception: Textual resumes the screen only when it ends.
                    failure = run_editor([*command, str(path)], editor)
            except Exception as exc:  # noqa: BLE001 - no terminal to hand over (web, tests): say so
                failure = f"Cannot open {editor} here ({type(exc).__name__}); edit in the box instead."
            if failure is None:
                try:
                    with open(path, encoding="utf-8", newline="") as fh:
                        text = fh.read()
                except (OSError, UnicodeDecodeError) as exc:
                    failure = f"The draft could not be read back ({exc}); the box keeps the draft as it was."
                else:
                    changed = text != self.draft
                    self._set_draft(text)
                    # (back in the dialog, nothing saved yet: report 21, you could not tell a save was still due)
                    save = self.app.key_display("revise.save")
                    name = os.path.basename(command[0]) if command else editor
                    self.notify(f"Back from {name}: the draft is here, not saved yet; {save} saves it." if changed
                                else f"Back from {name}: the draft is unchanged; nothing to save.",
                                title="Editor")
                    return
        self.notify(failure, title="Editor", severity="error", timeout=8)
        if self.boxed:
            self.query_one("#body", Editor).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        {"save": self.action_save, "cancel": self.action_cancel, "editor": self.action_editor}[event.button.id or ""]()
