"""Curating the selected page from the main screen: revise, link, archive, suppress, tombstone, delete.

Every destructive step first shows a ConfirmScreen (or the DeleteScreen) that says what will happen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.screen import Screen

from .. import reading
from ..messages import ContextsKnown, LifecycleChanged, ReviseLoaded, StoreWorkers, Suppressed, Unlinked, Unsuppressed
from ..shared import lifecycle_change
from ..widgets.inspector import Inspector
from ..widgets.page_list import PageList
from ..widgets.relations import RelationList
from .confirm import FormScreen
from .delete import DeleteScreen
from .link import LinkScreen
from .revise import BOX_LIMIT, ReviseScreen

if TYPE_CHECKING:
    from store.types import Receipt, Revision, WriteResult

EXPLAIN = {
    "archive": "It leaves ordinary search and the default page list (the Status filter 'archived' shows it); it stays "
               "readable by id and can be restored. Nothing is erased.",
    "restore": "It comes back into ordinary search and the default page list.",
    "tombstone": "It is withdrawn from every search, list and handoff bundle. Its history, provenance and relations "
                 "stay intact and readable by you; you can untombstone it. Nothing is erased.",
    "untombstone": "It comes back with the status it had before the tombstone.",
}


def lifecycle_sentence(op: str, title: str, status: str) -> str:
    """What a lifecycle step did, naming the page: `Archived “Garden notes”: ...`."""
    done = {"archive": "it left the default list and ordinary search (Status filter: archived)",
            "restore": f"it is {status} again", "tombstone": "it is withdrawn from every search, list and bundle",
            "untombstone": f"it is {status} again"}.get(op, f"now {status}")
    return f"{op.capitalize()}d “{title}”: {done}."


class CurateActions(StoreWorkers, Screen[None]):
    """Base of the main screen: the actions on the page shown in the inspector (which it must compose)."""

    list_highlighted: str | None = None  # the page the list last said is under its cursor (the screen sets it)

    def _title_of(self, page_id: str) -> str:
        """The page's title as shown (the inspector's page, else its list row), else its id."""
        page = self.query_one(Inspector).page
        if page is not None and page["full"]["revision"]["page_id"] == page_id:
            return reading.title_of(page["full"]["revision"])
        row = next((r for r in self.query_one(PageList).rows if r["page_id"] == page_id), None)
        return (row.get("title") if row else None) or page_id

    def _selected_envelope(self) -> Revision | None:
        """The page under the cursor as the inspector has read it; None (said) when none is selected, or while the
        inspector is still reading the one the cursor moved to: a key pressed right after a move must never act
        on the page before it (it revised, suppressed or deleted the previous page)."""
        inspector = self.query_one(Inspector)
        page = inspector.page
        listed = self.query_one(PageList).current
        if listed is not None and listed["page_id"] != self.list_highlighted:
            # The list's cursor moved in the same read of the terminal as this key: its message naming the new
            # page has not reached the inspector yet (it comes after the key's binding ran).
            self.notify("The page under the cursor is still being read: press the key again in a moment.",
                        severity="warning")
            return None
        if inspector.page_id is None:
            self.notify("Select a page first.", severity="warning")
            return None
        if page is None or page["full"]["revision"]["page_id"] != inspector.page_id:
            self.notify("The page under the cursor is still being read: press the key again in a moment.",
                        severity="warning")
            return None
        return page["full"]["revision"]

    def action_revise(self) -> None:
        self._open_revise(False)

    def action_revise_in_editor(self) -> None:
        self._open_revise(True)

    def _open_revise(self, editor: bool) -> None:
        env = self._selected_envelope()
        if env is None:
            return
        payload = env.get("payload")
        if payload is None or "content" not in payload:
            self.notify("This page has no text payload to edit.", severity="warning")
            return
        self._load_for_revise(env, editor)

    @work(thread=True, exclusive=True, exit_on_error=False, group="revise-load")
    def _load_for_revise(self, env: dict[str, Any], editor: bool) -> None:
        """The whole current text (the inspector holds at most one read budget of it): a revise never writes
        back a cut text."""
        content = reading.whole_content(self.app.opened_store, env["revision_id"])
        self.post_message(ReviseLoaded(env, content, editor))

    @on(ReviseLoaded)
    def _revise_loaded(self, message: ReviseLoaded) -> None:
        message.stop()
        if not message.editor and len(message.content) > BOX_LIMIT:
            self.notify(f"This page has {len(message.content):,} characters, more than the edit box takes "
                        f"({BOX_LIMIT:,}); press {self.app.key_display('revise_editor')} to revise it in your "
                        "$EDITOR.", title="Revise", severity="warning", timeout=10)
            return
        env = {**message.envelope, "payload": {**message.envelope["payload"], "content": message.content}}
        self.app.push_screen(ReviseScreen(env, open_editor=message.editor), self._after_revise)

    def _after_revise(self, result: WriteResult | None) -> None:
        if result:
            # (the short id, as the Revisions tab names it: one line, so at 80x24 the toast covers less of the diff)
            self.notify(f"Revised: new revision …{result['revision_id'][-6:]}.", title="Revise")
            self.app.announce_change(result["page_id"])

    def action_link(self) -> None:
        env = self._selected_envelope()
        if env is not None:
            self.app.push_screen(LinkScreen(env["page_id"], reading.title_of(env)),
                                 self._after_link)

    def _after_link(self, result: dict[str, Any] | None) -> None:
        if result:
            target = result.get("to_title") or result["to_page_id"]
            self.notify(f"Linked “{result.get('from_title') or result['from_page_id']}” "
                        f"─{result['relation_type']}─▶ “{target}”.", title="Link")
            self.app.announce_change(result["from_page_id"])

    def action_archive(self) -> None:
        env = self._selected_envelope()
        if env is not None:
            op = "restore" if env["lifecycle_status"] == "archived" else "archive"
            self._confirm_lifecycle(env, op)

    def action_tombstone(self) -> None:
        env = self._selected_envelope()
        if env is not None:
            op = "untombstone" if env["lifecycle_status"] == "tombstoned" else "tombstone"
            self._confirm_lifecycle(env, op)

    def _confirm_lifecycle(self, env: Revision, op: str) -> None:
        title = reading.title_of(env)
        screen = FormScreen(f"{op.capitalize()} “{title}”?", f"{title} ({env['page_id']})\n\n{EXPLAIN[op]}",
                               confirm_label=op.capitalize(), danger=op in ("archive", "tombstone"),
                               fields=[("reason", "Reason (recorded with the lifecycle event)", f"{op}d in the pcp app")])

        def answered(yes: bool | None) -> None:
            if yes:
                self._lifecycle(op, env["page_id"], screen.answers["reason"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curate")
    def _lifecycle(self, op: str, page_id: str, reason: str) -> None:
        result = lifecycle_change(self.app.opened_store, op)(page_id, reason)
        self.post_message(LifecycleChanged(op, result))

    def action_suppress(self) -> None:
        env = self._selected_envelope()
        if env is not None:
            self._read_contexts(env)  # the dialog opens once the contexts in use are known (off the loop)

    @work(thread=True, exclusive=True, exit_on_error=False, group="contexts")
    def _read_contexts(self, env: Revision) -> None:
        self.post_message(ContextsKnown(env, self.app.opened_store.suppression_contexts(limit=20)["contexts"]))

    @on(ContextsKnown)
    def _contexts_known(self, message: ContextsKnown) -> None:
        """The suppress dialog, offering the contexts in use (the newest first in the field, the others completed
        as you type) and saying where a context id comes from: a new user could not tell what to type."""
        message.stop()
        env, known = message.envelope, [c["context_id"] for c in message.contexts]
        title = reading.title_of(env)
        in_use = " · ".join(f"{c['context_id']} ({c['pages']} page{'s' if c['pages'] != 1 else ''})"
                            for c in message.contexts[:4])
        more = len(message.contexts) - 4
        where = (f"Contexts in use: {in_use}{f' and {more} more' if more > 0 else ''} (type to complete, → takes it)."
                 if in_use else "No context is in use yet; name one, e.g. task:thesis or chat:thesis-help.")
        screen = FormScreen(
            f"Suppress “{title}” for one context?",
            f"{title} ({env['page_id']})\n\nSearches and bundles that pass this context id (a chat, task or query id; "
            "`pcp search --context ID`) will not show it. Nothing else changes: no revision, no status change, "
            f"nothing global.\n{where}",
            confirm_label="Suppress", danger=False,
            fields=[("context", "Context id", known[0] if known else ""), ("reason", "Reason", "not relevant here")],
            suggest={"context": known})

        def answered(yes: bool | None) -> None:
            if yes:
                self._suppress(env["page_id"], screen.answers["context"], screen.answers["reason"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curate")
    def _suppress(self, page_id: str, context: str, reason: str) -> None:
        result = self.app.opened_store.suppress_pages([page_id], context, reason=reason)
        self.post_message(Suppressed(result))

    def action_unsuppress(self) -> None:
        env = self._selected_envelope()
        if env is None:
            return
        title = reading.title_of(env)
        page = self.query_one(Inspector).page
        life = (page["full"].get("lifecycle") if page else None) or {"events": [], "suppressions": []}
        here = [s["context_id"] for s in life["suppressions"]]  # (the page's own contexts, newest first)
        where = (f"It is suppressed in: {', '.join(here[:4])}{' …' if len(here) > 4 else ''}." if here
                 else "It is suppressed in no context.")
        screen = FormScreen(
            f"Show “{title}” again in one context?",
            f"{title} ({env['page_id']})\n\nSearches and bundles that pass this context id show the page again.\n{where}",
            confirm_label="Unsuppress", danger=False, fields=[("context", "Context id", here[0] if here else "")],
            suggest={"context": here})

        def answered(yes: bool | None) -> None:
            if yes:
                self._unsuppress(env["page_id"], screen.answers["context"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curate")
    def _unsuppress(self, page_id: str, context: str) -> None:
        self.post_message(Unsuppressed(self.app.opened_store.unsuppress_pages([page_id], context)))

    @on(Unsuppressed)
    def _unsuppressed(self, message: Unsuppressed) -> None:
        message.stop()
        result = message.result
        if result["unsuppressed"]:
            self.notify(f"Shown again in context {result['context_id']}.", title="Unsuppress")
            self.app.announce_change(result["unsuppressed"][0])
        else:
            self.notify(f"It was not suppressed in context {result['context_id']}; nothing changed.",
                        title="Unsuppress", severity="warning")

    def action_unlink(self) -> None:
        env = self._selected_envelope()
        if env is None:
            return
        shown = self.query(RelationList)  # none before the Relations tab's widgets are mounted
        relation = shown.first().highlighted_relation if shown else None
        if relation is None:
            self.notify("Open the Relations tab (4) and highlight the relation to retract first.", severity="warning")
            return
        title = reading.title_of(env)
        other = relation["other_title"]
        arrow = f"{title} ─{relation['relation_type']}─▶ {other}" if relation["from_page_id"] == env["page_id"] \
            else f"{other} ─{relation['relation_type']}─▶ {title}"
        screen = FormScreen(
            "Retract this relation?",
            f"{arrow}\n\nThe relation is hidden from then on; the retraction is recorded with who, when and why. "
            "Both pages stay as they are.",
            confirm_label="Unlink", fields=[("reason", "Reason (recorded with the retraction)", "unlinked in the pcp app")])

        def answered(yes: bool | None) -> None:
            if yes:
                self._unlink(relation, screen.answers["reason"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curate")
    def _unlink(self, relation: dict[str, Any], reason: str) -> None:
        self.post_message(Unlinked(self.app.opened_store.unlink(relation["relation_id"], reason), relation))

    @on(Unlinked)
    def _unlinked(self, message: Unlinked) -> None:
        message.stop()
        rel = message.relation
        self.notify(f"Unlinked: {rel['relation_type']} {rel['other_title']}.", title="Unlink")
        self.app.announce_change(rel["from_page_id"])

    def action_delete(self) -> None:
        env = self._selected_envelope()
        if env is not None:
            self.app.push_screen(DeleteScreen(env["page_id"], reading.title_of(env), follow=self._deleting),
                                 self._after_delete)

    def _deleting(self, page_ids: list[str], receipt: Receipt | None) -> None:
        """While the delete dialog is up: the pages about to go are let go of (no receipt yet), then, erased,
        they leave the list and every view (StoreChanged)."""
        self.query_one(Inspector).withhold(set(page_ids))  # (until the dialog closes: removed rows move the cursor)
        if receipt is None:
            return
        for page_id in page_ids:
            self.query_one(PageList).remove_row(page_id)
        self.app.forget_pages(page_ids)
        self.app.announce_change(None, removed=True)

    def _after_delete(self, receipt: Receipt | None) -> None:
        self.query_one(Inspector).withhold(set())  # (a delete that failed: its page is shown again)
        if receipt:
            self.notify(f"Erased; receipt {receipt['receipt_id']}.", title="Deleted")

    @on(LifecycleChanged)
    def _lifecycle_changed(self, message: LifecycleChanged) -> None:
        message.stop()
        result = message.result
        self.query_one(PageList).update_row(result["page_id"], lifecycle_status=result["lifecycle_status"])
        self.notify(lifecycle_sentence(message.op, self._title_of(result["page_id"]), result["lifecycle_status"]),
                    title="Lifecycle")
        self.app.announce_change(result["page_id"])

    @on(Suppressed)
    def _suppressed(self, message: Suppressed) -> None:
        message.stop()
        self.notify(f"Suppressed in context {message.result['context_id']}.", title="Suppress")
        self.app.announce_change()
