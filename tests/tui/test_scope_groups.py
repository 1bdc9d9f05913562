"""Issue 35, item 4a: imported conversations and sessions in the scope tree grouped by source, then month (chats)
or project (agents); a conversation's row is its conversation page's title, read live; sibling rows never read
(or get cut) alike, at 160x48 and at 80x24 (^s shows the folded tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import settle, until
from textual.geometry import Region

from pcp_tui.widgets.scope_tree import ScopeTree
from store.adapters import import_chatgpt, import_claude, import_claude_code

DATA = Path(__file__).resolve().parents[1] / "data"
CHATS = [DATA / "exports" / name for name in ("chatgpt-danny-avila-LibreChat-1.json",
                                                "chatgpt-danny-avila-LibreChat-2.json",
                                                "chatgpt-0xsalt-chatgpt_conversation_extractor-1.json")]
CLAUDE = DATA / "exports" / "claude-simonw-claude-to-sqlite-2.json"
SESSIONS = [DATA / "agents" / "claude-code" / "kfischer-okarin", DATA / "agents" / "claude-code" / "entireio-cli"]


def imported(store) -> dict[str, dict]:
    for path in CHATS:
        import_chatgpt(store, path)
    import_claude(store, CLAUDE)
    for path in SESSIONS:
        import_claude_code(store, path)
    return {s["namespace"]: s for s in store.list_scopes(limit=1000)["scopes"]}


def walk(node) -> list:
    out, stack = [], [node]
    while stack:
        node = stack.pop()
        out.append(node)
        stack += reversed(list(node.children))
    return out


def shows_title(label: str, title: str) -> bool:
    """The row's name is the title: whole, after a short id (two siblings with one title), or with a beginning it
    shares with a sibling elided (`I'd…CLI hook`)."""
    name = label.rsplit("  ", 1)[0]
    name = name.split(" · ", 1)[1] if " · " in name and " · " not in title else name
    if name == title[:80]:
        return True
    first, _, rest = name.partition("…")
    return bool(rest) and title.split(" ", 1)[0].startswith(first) and rest in title


def scope_node(tree: ScopeTree, namespace: str):
    return next(n for n in walk(tree.root) if (n.data or {}).get("namespace") == namespace)


def row_text(tree: ScopeTree, node) -> str:
    """The node's row as the tree draws it now (guides, label cut at the tree's width)."""
    tree.scroll_to_line(node.line, animate=False)
    y = node.line - round(tree.scroll_offset.y)
    lines = tree.render_lines(Region(0, y, tree.scrollable_content_region.width, 1))
    return lines[0].text.rstrip()


async def test_imports_are_grouped_by_source_then_month_or_project_and_rows_never_read_alike(empty_store, make_app):
    store = empty_store
    scopes = imported(store)
    chats = [n for n in scopes if n.startswith("conversation:")]
    sessions = [n for n in scopes if n.startswith("agent:") and n.count(":") == 3]
    assert len(chats) >= 8 and len(sessions) >= 10  # real files: enough rows to crowd a tree
    for size in ((160, 48), (80, 24)):
        app = make_app(store)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("ctrl+s")  # at 80x24 the tree is folded away until asked for
            await settle(app, pilot)
            tree = app.screen.query_one(ScopeTree)
            for node in walk(tree.root):
                node.expand()
            await settle(app, pilot)
            for namespace in chats:
                node = scope_node(tree, namespace)
                month, source = node.parent, namespace.split(":")[1]
                day = scopes[namespace]["display_name"].rsplit(", ", 1)[1]
                # under a month of its source: import:<source> › YYYY-MM, never one long list of conversations
                assert month.data["kind"] == "group" and str(month.label).split()[0] == day[:7], str(month.label)
                assert month.parent.data.get("namespace") == f"import:{source}"
                title = scopes[namespace].get("title")
                if title:  # its row is its conversation page's title (the id is in the line under the tree)
                    assert shows_title(str(node.label), title), (str(node.label), title)
            for namespace in sessions:
                node = scope_node(tree, namespace)
                project = namespace.rsplit(":", 1)[0]
                assert node.parent.data.get("namespace") == project
                assert node.parent.parent.data.get("namespace") == project.rsplit(":", 1)[0]  # agent:<source>
                assert namespace not in str(node.label) and not str(node.label).startswith("agent:")
            for node in walk(tree.root):
                kids = list(node.children)
                rows = [row_text(tree, kid) for kid in kids]
                # what a sibling row shows (guides and cut included) tells it from every other
                assert len(set(rows)) == len(rows), (size, rows)
                labels = [str(kid.label).rsplit("  ", 1)[0] for kid in kids]
                starts = [label[:12] for label in labels]
                assert len(set(starts)) == len(starts), (size, labels)  # apart within 12 characters


async def test_a_conversation_row_follows_its_title_when_another_process_renames_it(empty_store, make_app):
    store = empty_store
    scopes = imported(store)
    namespace = next(n for n, s in sorted(scopes.items()) if n.startswith("conversation:") and s.get("title"))
    page = next(p for p in store.list_pages(scopes=[namespace], limit=200)["pages"]
                if p["title"] == scopes[namespace]["title"])
    app = make_app(store, watch_interval=0.05)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        assert shows_title(str(scope_node(tree, namespace).label), scopes[namespace]["title"])
        subprocess.run([sys.executable, "-m", "pcp_tui.cli", "--db", str(store.path), "revise", page["page_id"],
                        "--expected", page["revision_id"], "--title", "Renamed by the CLI"],
                       check=True, capture_output=True)
        await until(pilot, lambda: str(scope_node(tree, namespace).label).startswith("Renamed by the CLI"),
                    "the row to show the new title")


async def test_conversations_without_an_import_scope_are_grouped_by_source_then_month(empty_store, make_app):
    """A store whose conversation scopes hang under no import scope (made before imports had one, or by hand):
    the `conversation` group shows a row per source, then its months, not every conversation at the top."""
    store = empty_store
    days = {"chatgpt": ["2024-05-03", "2024-05-20", "2024-06-01"], "claude": ["2024-05-07"]}
    for source, dates in days.items():
        for n, day in enumerate(dates):
            namespace = f"conversation:{source}:c{n}"
            store.create_scope(namespace, display_name=f"{source.capitalize()} conversation, {day}")
            store.write_page(namespace, content=f"# Chat {n}", facets={"title": f"Chat {source} {n}"})
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(ScopeTree)
        group = next(n for n in tree.root.children if n.data["kind"] == "prefix" and n.data["prefix"] == "conversation")
        sources = [str(n.label).rsplit("  ", 1)[0] for n in group.children]
        assert sources == ["ChatGPT chats", "Claude chats"]
        months = [str(n.label).rsplit("  ", 1)[0] for n in group.children[0].children]
        assert months == ["2024-06", "2024-05"]  # newest first
        assert [str(n.label).rsplit("  ", 1)[0] for n in group.children[0].children[1].children] == \
            ["c1", "c0"]  # no conversation page of an importer: its short id, newest first
        tree.move_cursor(group.children[0].children[1])
        tree.action_select_cursor()
        await settle(app, pilot)
        assert sorted(app.screen.scopes) == ["conversation:chatgpt:c0", "conversation:chatgpt:c1"]
