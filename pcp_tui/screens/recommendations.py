"""Pending recommendations from model clients for the owner to review: tombstones and supersedes."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from .. import commands, reading
from ..messages import OpenPage, RecommendationsLoaded, StoreChanged, StoreWorkers, Tombstoned
from .confirm import ConfirmScreen, FormScreen, key_hint
from .curate import lifecycle_sentence


class RecommendationsScreen(StoreWorkers, ModalScreen[None]):
    """Each row: the page, who recommends withdrawing it and why; t tombstones (after a confirmation)."""

    COMMAND_SCOPE = "reviews"
    BINDINGS = commands.bindings("reviews")

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog full"):
            yield Static(Content.styled("Recommendations", "bold"), classes="dialog-title")
            yield Static(Content("Models may recommend withdrawing a page, or mark one as superseded by a newer "
                                 "page; only you decide. Enter shows the page, t tombstones it, d dismisses the "
                                 "recommendation and keeps the page, s confirms a supersedes as your own."), classes="dialog-body")
            yield DataTable(id="reviews-table", cursor_type="row")
            yield Static("", id="review-detail", classes="detail")  # the highlighted row in full (reasons wrap)
            yield Static(key_hint(self.app, [("reviews.open", "Open"), ("reviews.tombstone", "Tombstone"),
                                             ("reviews.dismiss", "Dismiss"),
                                             ("reviews.confirm", "Confirm supersedes"), ("reviews.back", "Close"),
                                             ("help", "Keys")]), classes="dialog-keys")

    def on_mount(self) -> None:
        self.app.subscribe_store_changes(self)
        self.query_one(DataTable).add_columns("page", "action", "status", "recommended by", "when", "reason")
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="reviews")
    def _load(self) -> None:
        from store import NotFound

        store = self.app.opened_store
        recs = store.list_recommendations()["recommendations"]
        found = {}
        wanted = {r["page_id"] for r in recs} | {r["from_page_id"] for r in recs if r.get("from_page_id")}
        for batch in reading.chunks(list(wanted)):
            try:
                results = store.read_pages(batch, projections=("manifest",))["results"]
            except NotFound:  # every page of the batch was erased
                continue
            for res in results:
                if "revision" in res:
                    found[res["revision"]["page_id"]] = res["revision"]

        def title(page_id: str) -> str:
            return reading.title_of(found[page_id]) if page_id in found else page_id

        # A recommendation whose page is already tombstoned (or erased) waits for nothing: it is not listed.
        rows = [{**r, "title": title(r["page_id"]), "page_status": found[r["page_id"]]["lifecycle_status"],
                 **({"reason": f"superseded by “{title(r['from_page_id'])}”"} if r.get("from_page_id") else {})}
                for r in recs if r["page_id"] in found and found[r["page_id"]]["lifecycle_status"] != "tombstoned"]
        self.post_message(RecommendationsLoaded(rows))

    @on(RecommendationsLoaded)
    def _show_rows(self, message: RecommendationsLoaded) -> None:
        message.stop()
        self.rows = message.rows
        table = self.query_one(DataTable)
        table.clear()
        for r in self.rows:
            table.add_row(r["title"], r.get("action", "tombstone"), r["page_status"],
                          f"{r['actor']['actor_type']}:{r['actor']['actor_id']}", r["created_at"][:16], r["reason"])
        if not self.rows:
            table.add_row("No pending recommendations.", "", "", "", "", "")
        table.focus()

    @on(Tombstoned)
    def _tombstoned(self, message: Tombstoned) -> None:
        message.stop()
        name = message.result.get("title") or message.result["page_id"]  # the page's title, as elsewhere
        if message.result.get("action") == "supersedes":
            self.notify(f"Confirmed: “{name}” is superseded.", title="Supersedes")
        elif message.result.get("action") == "dismissed":
            self.notify(f"Dismissed: “{name}” stays as it is.", title="Reviews")
        else:
            self.notify(lifecycle_sentence("tombstone", name, "tombstoned"), title="Tombstone")
        self.app.announce_change(message.result["page_id"])  # this list reloads through it too

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        message.stop()
        if not message.audit_only:
            self._load()

    def _current(self) -> dict[str, Any] | None:
        row = self.query_one(DataTable).cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def action_open(self) -> None:
        rec = self._current()
        if rec:
            self.dismiss(None)
            self.app.screen.post_message(OpenPage(rec["page_id"]))

    def action_tombstone(self) -> None:
        rec = self._current()
        if rec is None:
            return
        screen = FormScreen(
            f"Tombstone “{rec['title']}”?",
            f"{rec['actor']['actor_id']} recommends it: {rec['reason']}\n\nThe page is withdrawn from every search, "
            "list and bundle; its history stays and you can untombstone it. Nothing is erased.",
            confirm_label="Tombstone", fields=[("reason", "Reason", f"recommended by {rec['actor']['actor_id']}")])

        def answered(yes: bool | None) -> None:
            if yes:
                self._tombstone(rec["page_id"], screen.answers["reason"], rec["title"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reviews-tombstone")
    def _tombstone(self, page_id: str, reason: str, title: str) -> None:
        self.post_message(Tombstoned({**self.app.opened_store.tombstone_page(page_id, reason), "title": title}))

    def action_confirm(self) -> None:
        rec = self._current()
        if rec is None or rec.get("action") != "supersedes":
            self.notify("Only a supersedes recommendation can be confirmed.", title="Confirm")
            return
        screen = ConfirmScreen(
            f"Confirm that “{rec['title']}” is superseded?",
            f"{rec['actor']['actor_id']} linked it as {rec['reason']}.\n\nYou add your own supersedes link: the page "
            "leaves default search but stays readable, and unlinking it brings the page back.",
            confirm_label="Confirm")

        def answered(yes: bool | None) -> None:
            if yes:
                self._confirm(rec["from_page_id"], rec["page_id"], rec["title"])

        self.app.push_screen(screen, answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reviews-confirm")
    def _confirm(self, from_page_id: str, page_id: str, title: str) -> None:
        self.app.opened_store.link_pages(from_page_id, "supersedes", page_id)
        self.post_message(Tombstoned({"page_id": page_id, "action": "supersedes", "title": title}))

    def action_dismiss_recommendation(self) -> None:
        """The owner keeps the page: nothing asks first (nothing is withdrawn or erased; the model may ask again)."""
        rec = self._current()
        if rec is not None:
            self._dismiss_rec(rec)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reviews-dismiss")
    def _dismiss_rec(self, rec: dict[str, Any]) -> None:
        store = self.app.opened_store
        if rec.get("action") == "supersedes":
            store.unlink(rec["relation_id"], "dismissed in the pcp app: the page is not superseded")
        else:
            store.dismiss_recommendation(rec["recommendation_id"])
        self.post_message(Tombstoned({"page_id": rec["page_id"], "action": "dismissed", "title": rec["title"]}))

    def action_back(self) -> None:
        self.dismiss(None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted recommendation in full under the table: the columns cut long reasons."""
        event.stop()
        rec = self.rows[event.cursor_row] if 0 <= event.cursor_row < len(self.rows) else None
        detail = self.query_one("#review-detail", Static)
        if rec is None:
            detail.update("")
            return
        who = f"{rec['actor']['actor_type']}:{rec['actor']['actor_id']}"
        detail.update(Content.assemble((rec["title"], "bold"), f"  ({rec['page_id']}, {rec['page_status']})\n",
                                       f"{rec.get('action', 'tombstone')} recommended by {who} at "
                                       f"{rec['created_at'][:19]}: ", (rec["reason"], "italic")))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()
