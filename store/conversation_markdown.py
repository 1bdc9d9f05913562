"""The Markdown export's conversation files: one file per conversation, its messages in reading order.

A conversation is a page that `contains` message pages (pages whose head has a `role` facet), as the
chat and coding-agent importers write them. Its file holds the conversation page, then every message
with its role and date, a reply that does not follow the message before it says which one it answers,
and every other relation is a link to the related page's own file (or its id when that page is not
exported).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from .constants import chunks


@dataclass
class Message:
    pk: int
    page_id: str
    namespace: str
    title: str
    role: str
    date: str
    content: str
    media_type: str | None


def message_pages(db: Any, in_scopes: str) -> dict[int, int]:
    """Message page -> its conversation page (both exported); a message two conversations hold goes to the first."""
    rows = db.execute_sql(
        "SELECT rel.to_page_id, MIN(rel.from_page_id) FROM relation rel "
        "JOIN page p ON p.id = rel.to_page_id JOIN revision r ON r.id = p.head "
        "JOIN page f ON f.id = rel.from_page_id "
        f"WHERE rel.relation_type = 'contains' AND rel.retracted = 0 AND json_extract(r.facets, '$.role') IS NOT NULL "
        f"AND {in_scopes} AND {in_scopes.replace('p.', 'f.')} GROUP BY rel.to_page_id").fetchall()
    return {msg: conv for msg, conv in rows}


def messages_of(db: Any, conversation_pk: int, members: set[int]) -> list[Message]:
    """The conversation's exported messages, parents before replies, else oldest first."""
    rows = db.execute_sql(
        "SELECT p.id, p.page_id, s.namespace, r.title, json_extract(r.facets, '$.role'), "
        "COALESCE(r.observed_at, r.created_at), r.content, r.media_type FROM relation rel "
        "JOIN page p ON p.id = rel.to_page_id JOIN revision r ON r.id = p.head JOIN scope s ON s.id = p.scope_id "
        "WHERE rel.from_page_id = ? AND rel.relation_type = 'contains' AND rel.retracted = 0",
        (conversation_pk,)).fetchall()
    found = {row[0]: Message(row[0], row[1], row[2], row[3] or "", str(row[4]), row[5] or "", row[6] or "", row[7])
             for row in rows if row[0] in members}
    parents = _parents(db, list(found))
    ordered = sorted(found.values(), key=lambda m: (m.date, m.page_id))
    # A reply never comes before what it answers, even when an export gave it an earlier time.
    placed: set[int] = set()
    out: list[Message] = []

    def place(m: Message, trail: set[int]) -> None:
        if m.pk in placed or m.pk in trail:
            return
        parent = parents.get(m.pk)
        if parent in found:
            place(found[parent], trail | {m.pk})
        placed.add(m.pk)
        out.append(m)

    for m in ordered:
        place(m, set())
    return out


def _parents(db: Any, pks: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in chunks(pks):
        for child, parent in db.execute_sql(
                f"SELECT from_page_id, to_page_id FROM relation WHERE relation_type = 'responds_to' AND retracted = 0 "
                f"AND from_page_id IN ({','.join('?' * len(part))})", part).fetchall():
            out.setdefault(child, parent)
    return out


def _other_relations(db: Any, pks: list[int]) -> dict[int, list[tuple[str, str, str, str]]]:
    """Live relations from these pages other than `contains`/`responds_to`: (type, page id, namespace, title)."""
    out: dict[int, list[tuple[str, str, str, str]]] = {}
    for part in chunks(pks):
        for frm, rtype, page_id, ns, title in db.execute_sql(
                "SELECT rel.from_page_id, rel.relation_type, p.page_id, s.namespace, p.title FROM relation rel "
                "JOIN page p ON p.id = rel.to_page_id JOIN scope s ON s.id = p.scope_id "
                f"WHERE rel.retracted = 0 AND rel.relation_type NOT IN ('contains', 'responds_to') "
                f"AND rel.from_page_id IN ({','.join('?' * len(part))}) ORDER BY rel.id", part).fetchall():
            out.setdefault(frm, []).append((rtype, page_id, ns, title or ""))
    return out


def _md(text: str) -> str:
    """Text for a heading or a link label: one line, Markdown's own brackets escaped."""
    return re.sub(r"([\[\]\\`*])", r"\\\1", " ".join(text.split()))  # "_" inside a word is no emphasis


def conversation_body(db: Any, conversation_pk: int, body: str, messages: list[Message],
                      file_of: Callable[[str, str, str], str | None]) -> str:
    """The conversation page's text, then its messages; `file_of(page_id, namespace, title)` is the relative
    path of an exported page's file (None when it is not exported)."""
    number = {m.pk: i for i, m in enumerate(messages, 1)}
    parents = _parents(db, [m.pk for m in messages])
    related = _other_relations(db, [conversation_pk] + [m.pk for m in messages])
    parts = [body.rstrip("\n") + "\n"]
    parts += _relation_lines(related.get(conversation_pk, []), file_of)
    previous: int | None = None
    for m in messages:
        stamp = f" · {m.date}" if m.date else ""
        parts.append(f"\n## {number[m.pk]}. {_md(m.role)}{stamp}\n<a id=\"{m.page_id}\"></a>\n")
        parent = parents.get(m.pk)
        if parent is not None and parent != previous and parent in number:
            parts.append(f"*In reply to [message {number[parent]}](#{_anchor(messages, parent)}).*\n")
        content = m.content
        if m.media_type and m.media_type != "text/markdown" and content:
            content = f"```\n{content}\n```"
        parts.append("\n" + content.rstrip("\n") + "\n" if content.strip() else "\n*(no text)*\n")
        parts += _relation_lines(related.get(m.pk, []), file_of)
        previous = m.pk
    return "".join(parts)


def _anchor(messages: list[Message], pk: int) -> str:
    return next(m.page_id for m in messages if m.pk == pk)


def _relation_lines(relations: list[tuple[str, str, str, str]], file_of: Callable[[str, str, str], str | None]) -> list[str]:
    lines = []
    for rtype, page_id, ns, title in relations:
        target = file_of(page_id, ns, title)
        label = _md(title or page_id)
        shown = f"[{label}]({target})" if target else f"{label} (`{page_id}`, not in this export)"
        lines.append(f"- {_md(rtype)}: {shown}\n")
    return (["\n"] + lines) if lines else []


def front_matter(front: dict[str, Any]) -> str:
    return "---\n" + "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items()) + "\n---\n\n"
