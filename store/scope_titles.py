"""Imported conversations' scopes: a neutral stored name, and the conversation's title read live beside it.

A scope is never named after message text (issue 28): the display name an importer stores says where a
conversation came from and when ("ChatGPT conversation, 2024-05-03"), because a scope outlives its
pages, travels in every export and sync file, and nothing erases it when its pages are erased. What a
conversation is about is the title of its conversation page, which `list_scopes` reads at listing time
(`live_titles`), so an erased title goes with its page.

Which page that is follows from the namespace the importers give such scopes:
- `conversation:<source>:<conversation id>` (store/adapters/chats.py): the page of source key
  `<source>:<conversation id>`;
- `agent:<source>:<project>:<session id>` (store/adapters/agents.py): the page of source key
  `<source>:session:<session id>` (the session's main thread), else, for a session whose main thread
  had no message, the first of its other threads' pages (`<source>:session:<session id>:...`).
"""

from __future__ import annotations

from typing import Any, Iterable


SOURCE_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "claude-code": "Claude Code", "codex": "Codex",
                "gemini": "Gemini"}


def source_name(source: str) -> str:
    """How a source is called in a scope's name."""
    return SOURCE_NAMES.get(source, source.capitalize())


def neutral_name(source: str, kind: str, started: str | None) -> str:
    """The stored display name of a conversation or session scope: its source and the day it began."""
    day = started[:10] if started and len(started) >= 10 and started[4:5] == "-" else ""
    return f"{source_name(source)} {kind}, {day}" if day else f"{source_name(source)} {kind}, undated"


def title_page_key(namespace: str) -> tuple[str, str] | None:
    """(source key of the conversation page, kind) of a conversation or session scope; None for another scope."""
    parts = namespace.split(":")
    if parts[0] == "conversation" and len(parts) >= 3 and all(parts[1:]):
        return namespace.split(":", 1)[1], "conversation"
    if parts[0] == "agent" and len(parts) == 4 and all(parts[1:]):
        return f"{parts[1]}:session:{parts[3]}", "session"
    return None


def _conversation_pages(db: Any, scopes: Iterable[tuple[int, str]]) -> dict[int, tuple[str, str]]:
    """scope pk -> (title, observed or created time) of its conversation page, for conversation and
    session scopes whose conversation page is there (and not tombstoned)."""
    found: dict[int, tuple[bool, int, str, str]] = {}  # scope pk -> (not the exact key, page pk, title, time)
    for pk, namespace in scopes:
        key = title_page_key(namespace)
        if key is None:
            continue
        after = [key[0] + ":", key[0] + ";"] if key[1] == "session" else ["", ""]  # its other threads' keys
        for source_key, page_pk, title, time in db.execute_sql(
            "SELECT sp.source_key, p.id, p.title, COALESCE(r.observed_at, p.created_at) FROM source_page sp "
            "JOIN page p ON p.id = sp.page_id JOIN revision r ON r.id = p.head "
            "WHERE (sp.source_key = ? OR (sp.source_key > ? AND sp.source_key < ?)) AND p.scope_id = ? "
            "AND p.status != 'tombstoned'", (key[0], *after, pk),
        ).fetchall():
            rank = (source_key != key[0], page_pk, title or "", time or "")
            if pk not in found or rank < found[pk]:
                found[pk] = rank
    return {pk: (title, time) for pk, (_, _, title, time) in found.items()}


def live_titles(db: Any, scopes: Iterable[tuple[int, str]]) -> dict[int, str]:
    """scope pk -> the current title of its conversation page, for the (scope pk, namespace) pairs given;
    the caller passes only scopes the session may read in."""
    return {pk: title for pk, (title, _) in _conversation_pages(db, scopes).items() if title}


def rename_titled_scopes(db: Any) -> int:
    """Schema 7: give conversation and session scopes an importer named after their title a neutral name
    (the day from their conversation page, else the scope's own); returns how many were renamed."""
    rows = db.execute_sql(
        "SELECT id, namespace, display_name, parent, created_at FROM scope "
        "WHERE namespace LIKE 'conversation:%' OR namespace LIKE 'agent:%'").fetchall()
    made: list[tuple[int, str, str, str, str]] = []
    for pk, namespace, display_name, parent, _ in rows:
        key = title_page_key(namespace)
        if key is None:
            continue
        source = namespace.split(":")[1]
        # Only what an importer made: a chat import's conversation scopes hang under import:<source>,
        # a session's under agent:<source>:<project>.
        if parent == (f"import:{source}" if key[1] == "conversation" else namespace.rsplit(":", 1)[0]):
            made.append((pk, namespace, display_name, source, key[1]))
    pages = _conversation_pages(db, [(pk, ns) for pk, ns, _, _, _ in made])
    created = {r[0]: r[4] for r in rows}
    renamed = 0
    for pk, _, display_name, source, kind in made:
        name = neutral_name(source, kind, pages[pk][1] if pk in pages else created[pk])
        if display_name != name:
            db.execute_sql("UPDATE scope SET display_name = ? WHERE id = ?", (name, pk))
            renamed += 1
    return renamed
