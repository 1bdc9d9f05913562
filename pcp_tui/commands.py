"""Every command of the app, declared once: it feeds the bindings, the footer, the command palette and help.

A command's `id` is its binding id, so a user keymap (`keymap.toml`: id = "keys") can remap it.
`where` names the screen whose actions run it ("app" for the application itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class Command:
    """One thing a person can do, with its default keys and where it applies."""

    id: str
    keys: str
    title: str
    help: str
    action: str
    where: str = "main"
    footer: bool = True
    priority: bool = False
    key_display: str | None = None

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.title, show=self.footer, priority=self.priority, id=self.id,
                       key_display=self.key_display, tooltip=self.help)


COMMANDS: tuple[Command, ...] = (
    # the application
    Command("quit", "ctrl+q", "Quit", "Leave the app", "quit", "app", priority=True),
    Command("command_palette", "ctrl+p", "Palette", "Open the command palette (every action)", "command_palette",
            "app", footer=False, priority=True),
    Command("help", "f1", "Help", "Show every key of this screen (in a dialog: that dialog's keys)", "help", "app",
            priority=True),  # modal dialogs leave out the app's other bindings; F1 must reach them too
    Command("rights", "f2", "Your rights", "Export everything, delete a whole scope, read the audit log", "rights", "app"),
    Command("handoff", "f3", "Handoff", "The basket: preview, copy to a chat, continue a chat, the ledger", "handoff", "app"),
    Command("recommendations", "f4", "Reviews", "Pending tombstone recommendations from models", "recommendations", "app",
            footer=False),
    Command("import", "f5", "Import", "Import chats, notes or an export into this store", "import", "app", footer=False),
    Command("demo", "f6", "Demo store", "Switch to the demo store (your own store is left alone)", "demo", "app",
            footer=False),
    Command("sync", "f7", "Sync", "Sync with your other stores through a folder: last sync, conflicts, sync now",
            "sync", "app", footer=False),
    # browsing (the main screen)
    Command("search", "slash", "Search", "Focus the search box (find pages as you type)", "focus_search",
            key_display="/"),
    Command("search_mode", "ctrl+t", "Search mode",
            "Switch the search mode: auto (relevance, any word), text (every word), exact (substring)",
            "cycle_search_mode", footer=False),
    Command("semantic", "ctrl+g", "Meaning",
            "Turn the semantic channel of auto search on or off: the best word matches re-ordered by meaning "
            "(pip install 'pcp[semantic]')", "toggle_semantic", footer=False),
    Command("focus_scopes", "ctrl+s", "Scopes", "Focus the scope tree", "focus_scopes", footer=False),
    Command("sidebar", "ctrl+b", "Sidebar", "Show or hide the scope tree (hidden by default on narrow screens)",
            "toggle_sidebar", footer=False),
    Command("focus_pages", "ctrl+l", "Pages", "Focus the page list", "focus_pages", footer=False),
    Command("all_scopes", "0", "All scopes", "Show the pages of every scope", "all_scopes", footer=False),
    Command("sort", "o", "Sort", "Sort the page list: newest first, oldest first, or by title", "cycle_order", footer=False),
    Command("status_filter", "f", "Status", "Filter pages by lifecycle status", "cycle_status"),
    Command("actor_filter", "w", "Author", "Filter pages by who wrote them (user, model, tool, system)", "cycle_actor",
            footer=False),
    Command("dates", "d", "Dates", "Filter pages by when it happened (observed, else stored): from a day, before a day",
            "dates", footer=False),
    Command("refresh", "ctrl+r", "Refresh", "Reload scopes and pages", "refresh", footer=False),
    Command("basket", "space", "Basket", "Put the page in the handoff basket, or take it out", "toggle_basket"),
    Command("tab_content", "1", "Content", "Show the page content", "tab('content')", footer=False),
    Command("tab_revisions", "2", "Revisions", "Show the revisions and their diff", "tab('revisions')", footer=False),
    Command("tab_provenance", "3", "Provenance", "Show where this revision came from", "tab('provenance')", footer=False),
    Command("tab_relations", "4", "Relations", "Show relations and the neighbourhood graph", "tab('relations')",
            footer=False),
    Command("tab_facets", "5", "Facets", "Show the facets", "tab('facets')", footer=False),
    Command("tab_raw", "6", "Raw", "Show the raw JSON (as `pcp read --json`)", "tab('raw')", footer=False),
    Command("diff_layout", "v", "Diff layout", "Show the diff unified or side by side", "toggle_diff", footer=False),
    Command("graph_hops", "h", "Graph depth", "Draw the neighbourhood graph 1, 2 or 3 hops deep (Relations tab)",
            "graph_hops", footer=False),
    Command("graph_type", "g", "Graph type",
            "Draw the graph for one relation type, the next each time, then every type again (Relations tab)",
            "graph_type", footer=False),
    # curating the selected page
    Command("revise", "e", "Revise", "Edit the page into a new revision", "revise"),
    Command("revise_editor", "E", "Revise in $EDITOR", "Edit the page in your $EDITOR", "revise_in_editor",
            footer=False),
    Command("link", "l", "Link", "Link this page to another one (picked by search)", "link", footer=False),
    Command("archive", "a", "Archive", "Archive the page, or restore it", "archive"),
    Command("unlink", "U", "Unlink", "Retract the relation highlighted in the Relations tab (asks first)", "unlink",
            footer=False),
    Command("unsuppress", "S", "Unsuppress", "Show the page again in one context where it was suppressed",
            "unsuppress", footer=False),
    Command("suppress", "s", "Suppress", "Hide the page from one context (a chat or task)", "suppress", footer=False),
    Command("tombstone", "t", "Tombstone", "Withdraw the page, or bring it back", "tombstone"),
    Command("delete", "D", "Delete", "Erase the page for good, or every selected page (plan, typed confirmation, "
            "receipt)", "delete"),
    # the selection for a bulk deletion (its own, apart from the handoff basket)
    Command("select", "m", "Select", "Select the page for deleting many at once, or unselect it (✓)", "toggle_select",
            footer=False),
    Command("select_matching", "M", "Select matching",
            "Select every page matching the current search and filters (search mode text or exact)",
            "select_matching", footer=False),
    Command("clear_selection", "escape", "Clear selection", "Unselect every selected page (nothing is erased)",
            "clear_selection"),  # in the footer only while there is a selection
    Command("clear_search", "escape", "Clear search", "Clear the search (from the list; esc in the search box "
            "goes to the list first)", "clear_search"),  # in the footer only while a search is set, no selection
    # the search box on the main screen
    Command("search.leave", "escape,down", "To the list", "Leave the search box for the results (the list); "
            "esc again there clears the search", "leave", "search", footer=False, key_display="esc/↓"),
    # confirmation dialogs (focus starts on Cancel)
    Command("confirm.yes", "y", "Yes", "Do what the dialog describes", "answer(True)", "confirm"),
    Command("confirm.no", "n,escape", "No", "Cancel; nothing changes", "answer(False)", "confirm", key_display="n/esc"),
    # confirmation dialogs that take text (focus starts in the first field; no bare letters)
    Command("form.confirm", "ctrl+s", "Confirm", "Do what the dialog describes (Enter in the last field too)",
            "answer(True)", "form", priority=True),
    Command("form.cancel", "escape", "Cancel", "Cancel; nothing changes", "answer(False)", "form"),
    # the delete dialog
    Command("delete.cascade", "ctrl+k", "Cascade", "Also erase the pages derived from this one", "toggle_cascade",
            "delete", priority=True),  # over the field's own ctrl+k (delete to the end)
    Command("delete.cancel", "escape", "Cancel", "Close; nothing is erased (after a delete: close the receipt)",
            "cancel", "delete"),
    # the bulk delete dialog (many pages at once)
    Command("bulk_delete.resume", "ctrl+r", "Resume", "Continue a stopped deletion with the pages it has left",
            "resume", "bulk_delete", priority=True),
    Command("bulk_delete.cancel", "escape", "Cancel / Stop",
            "Close (nothing is erased); while erasing, stop after the current batch (whole pages only)",
            "cancel", "bulk_delete"),
    # the revise dialog
    Command("revise.save", "ctrl+s", "Save", "Write the draft as a new revision", "save", "revise", priority=True),
    Command("revise.editor", "ctrl+e", "$EDITOR", "Continue the draft in your $EDITOR", "editor", "revise",
            priority=True),
    Command("revise.cancel", "escape", "Cancel", "Close without writing (the draft is dropped)", "cancel", "revise"),
    # the link dialog
    Command("link.find", "ctrl+f", "Find", "Search for the page to link to", "find", "link", priority=True),
    Command("link.save", "ctrl+s", "Link", "Create the relation to the chosen page", "save", "link", priority=True),
    Command("link.cancel", "escape", "Cancel", "Close without linking", "cancel", "link"),
    # the rights screen
    Command("rights.export", "ctrl+x", "Export", "Export everything or the chosen scopes", "export", "rights",
            priority=True),
    Command("rights.more", "ctrl+n", "More audit", "Load the next page of the audit log", "more_audit", "rights",
            priority=True),
    Command("rights.resume", "r", "Resume", "Resume the highlighted stopped deletion (Receipts tab): it erases the "
            "rest of its recorded set", "resume_deletion", "rights"),
    Command("rights.back", "escape", "Back", "Back to the pages", "back", "rights"),
    Command("rights.tab_export", "1", "Export tab", "Show the Export tab (write everything out)", "show_tab('export')",
            "rights", footer=False),
    Command("rights.tab_scope", "2", "Delete a scope tab", "Show the tab that erases a whole scope",
            "show_tab('delete-scope')", "rights", footer=False),
    Command("rights.tab_audit", "3", "Audit log tab", "Show the audit log: who did what, when, with what answer",
            "show_tab('audit')", "rights", footer=False),
    Command("rights.tab_receipts", "4", "Receipts tab", "Show the deletion receipts", "show_tab('receipts')",
            "rights", footer=False),
    # the handoff screen
    Command("handoff.preview", "ctrl+r", "Preview", "Build the bundle again and show size, tokens, warnings and cuts",
            "preview", "handoff", priority=True),
    Command("handoff.copy", "ctrl+y", "Copy", "Copy the bundle for the chat named by the label", "copy", "handoff",
            priority=True),
    Command("handoff.continue", "ctrl+o", "Continue chat", "Copy only what is new for the chat named by the label",
            "continue_chat", "handoff", priority=True),
    Command("handoff.label", "ctrl+l", "Label", "Type the chat's label (known chats are offered as you type; "
            "Enter on a Ledger row picks one)", "focus_label", "handoff", priority=True),
    Command("handoff.remove", "delete", "Remove", "Take the highlighted page out of the basket", "remove", "handoff"),
    Command("handoff.clear", "ctrl+w", "Empty basket", "Take every page out of the basket", "clear", "handoff",
            footer=False),
    Command("handoff.back", "escape", "Back", "Back to the pages", "back", "handoff"),
    Command("handoff.tab_preview", "1", "Preview tab", "Show the Preview tab (the bundle's size, tokens and text)",
            "show_tab('preview')", "handoff", footer=False),
    Command("handoff.tab_ledger", "2", "Ledger tab", "Show the Ledger tab: the chats handed each basket page",
            "show_tab('ledger')", "handoff", footer=False),
    # reviews of model recommendations
    Command("reviews.tombstone", "t", "Tombstone", "Tombstone the recommended page (asks first)", "tombstone",
            "reviews"),
    Command("reviews.confirm", "s", "Confirm", "Confirm a model's supersedes as your own (asks first)", "confirm",
            "reviews"),
    Command("reviews.dismiss", "d", "Dismiss", "Keep the page: the recommendation is closed as dismissed (a model's "
            "supersedes is unlinked)", "dismiss_recommendation", "reviews"),
    Command("reviews.open", "enter", "Open", "Show the page", "open", "reviews"),
    Command("reviews.back", "escape", "Back", "Close", "back", "reviews"),
    # the welcome / import screen
    Command("welcome.import", "ctrl+s", "Import", "Run the import", "run_import", "welcome", priority=True),
    Command("welcome.demo", "ctrl+d", "Demo", "Open the demo store instead", "app.demo", "welcome", priority=True),
    Command("welcome.back", "escape", "Back", "Back to the pages (when the store has any)", "back", "welcome"),
    # the sync dialog
    Command("sync.run", "ctrl+s", "Sync now", "Sync through the folder (asked the first time, then remembered)",
            "run_sync", "sync", priority=True),
    Command("sync.folder", "ctrl+f", "Folder", "Choose the folder this store syncs through", "choose_folder", "sync",
            priority=True),
    Command("sync.pair", "ctrl+o", "Offer pairing", "Show a one-time code that pairs another store through the folder",
            "pair", "sync", priority=True),
    Command("sync.join", "ctrl+t", "Type a code", "Pair this store with the one that showed a code, then sync",
            "join", "sync", priority=True),
    Command("sync.open", "enter", "Open", "Show the highlighted page with a conflict", "open", "sync"),
    Command("sync.back", "escape", "Close", "Close (once a sync under way is done)", "back", "sync"),
    # help
    Command("help.close", "escape,f1", "Close", "Close the help", "close", "help"),
)


def bindings(where: str) -> list[BindingType]:
    """The bindings of one screen (or of the app)."""
    return [c.binding() for c in COMMANDS if c.where == where]


def for_screen(where: str | None) -> list[Command]:
    """Commands usable on a screen: its own and the application's."""
    return [c for c in COMMANDS if c.where in ("app", where)]


def by_id(command_id: str) -> Command:
    return next(c for c in COMMANDS if c.id == command_id)


KNOWN_IDS = frozenset(c.id for c in COMMANDS)
