"""Claude.ai export (`conversations.json`, the export .zip, or one conversation as the web API serves it)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any, Iterator

from ..errors import Invalid
from . import claude_export
from .agents import tool_input_text
from .base import ImportReport, Progress, epoch_to_time, json_text, read_json_export
from .formats import check_file, check_parsed
from .chats import ChatConversation, ChatMessage, conversation_items, write_conversations

TOOL = "pcp-import-claude"
NO_PARENT = "00000000-0000-4000-8000-000000000000"
ROLES = {"human": "user", "assistant": "assistant"}
# Claude exports name an attachment's kind by its extension ("pdf", "txt"): the media types they stand for.
FILE_TYPES = {
    "pdf": "application/pdf", "txt": "text/plain", "text": "text/plain", "md": "text/markdown",
    "markdown": "text/markdown", "csv": "text/csv", "tsv": "text/tab-separated-values", "json": "application/json",
    "html": "text/html", "htm": "text/html", "xml": "application/xml", "py": "text/x-python",
    "js": "text/javascript", "ts": "text/x-typescript", "docx": "application/vnd.openxmlformats-officedocument."
    "wordprocessingml.document", "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation", "doc": "application/msword",
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
}


# Claude.ai wrote its artifact reasoning into the answer's text as <antThinking>...</antThinking>: it is
# thinking, stored like a thinking block (a "Thinking:" paragraph where it stood), never as raw tags.
ANT_THINKING = re.compile(r"<antThinking>(.*?)</antThinking>", re.DOTALL)


def thinking_untagged(text: str) -> str:
    return ANT_THINKING.sub(lambda m: "Thinking:\n\n" + m.group(1).strip(), text)


def import_claude(store: Any, path: str | Path, namespace: str | None = None,
                  progress: Progress | None = None) -> ImportReport:
    """Import every conversation of a Claude export; each conversation is one transaction. The current export
    (a manifest, a folder of archives, one archive) also brings its projects and memory (claude_export.py)."""
    check_file(path, "claude")
    p = Path(path)
    report = ImportReport(source="claude", path=str(path))
    if p.is_dir() or _archives_inside(p):
        parts = claude_export.gather(p)
    else:
        data, label = read_json_export(path)
        if claude_export.looks_like_manifest(data):
            parts = claude_export.gather(p, manifest=data)
        elif _memory_shaped(data):
            parts = claude_export.ExportParts(label=label, memories=[
                {**m, "_where": label} for m in (data if isinstance(data, list) else [data])])
        else:
            check_parsed(data, "claude", label)
            items = conversation_items(data, label, "Claude", ("chat_messages",))
            return write_conversations(store, "claude", TOOL, label, _parse_all(items), len(items), report, namespace,
                                       progress)
    if namespace is not None and (parts.projects or parts.memories):
        raise Invalid("--namespace applies to conversations only: this export also holds projects or memory, which "
                      "go to claude:project:<name> and claude:memory; import it without --namespace.")
    for item, reason in parts.skipped:
        report.skip(item, reason, file=parts.label)
    claude_export.write_projects_and_memories(store, parts, report)
    items = parts.conversations
    return write_conversations(store, "claude", TOOL, parts.label, _parse_all(items), len(items), report, namespace,
                               progress)


def _archives_inside(p: Path) -> bool:
    """A zip of the current layout: category archives, memories/ or projects/ inside (not the old single zip)."""
    try:
        if not zipfile.is_zipfile(p):
            return False
        with zipfile.ZipFile(p) as zf:
            return any(claude_export.ARCHIVE.fullmatch(n.rsplit("/", 1)[-1]) or n.startswith(("memories/", "projects/"))
                       or n.rsplit("/", 1)[-1] in ("memories.json", "projects.json") for n in zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _memory_shaped(data: Any) -> bool:
    objs = data if isinstance(data, list) else [data]
    return bool(objs) and all(isinstance(o, dict) and ("conversations_memory" in o or "project_memories" in o)
                              for o in objs)


def _parse_all(items: list[Any]) -> Iterator[ChatConversation | tuple[str, str]]:
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("uuid"):
            yield (f"claude item {index}", "not a conversation object (no uuid)")
            continue
        conv_id = str(item["uuid"])
        title = json_text(item.get("name"))
        raw = item.get("chat_messages")
        yield parse_conversation(conv_id, title, item, raw if isinstance(raw, list) else [])


def parse_conversation(conv_id: str, title: str, item: dict[str, Any], raw: list[Any]) -> ChatConversation:
    entries = [m for m in raw if isinstance(m, dict) and m.get("uuid")]
    # Exports do not keep messages in order: time first, then the export's own index.
    ordered = sorted(
        enumerate(entries),
        key=lambda pair: (str(pair[1].get("created_at") or ""), _index(pair[1]), pair[0]),
    )
    has_tree = any("parent_message_uuid" in m for m in entries)
    messages: list[ChatMessage] = []
    previous: str | None = None
    for _, entry in ordered:
        node = str(entry["uuid"])
        if has_tree:
            parent = entry.get("parent_message_uuid")
            parent = None if parent in (None, "", NO_PARENT) else str(parent)
        else:
            parent = previous  # the old export shape is one linear thread
        messages.append(_message(node, entry, parent, item.get("model")))
        previous = node
    leaf = item.get("current_leaf_message_uuid")
    if not leaf and messages:
        leaf = messages[-1].node_id if not has_tree else max(messages, key=lambda m: m.observed_at or "").node_id
    return ChatConversation(
        conversation_id=conv_id,
        title=title,
        created_at=epoch_to_time(item.get("created_at")),
        updated_at=epoch_to_time(item.get("updated_at")),
        messages=messages,
        current_leaf=str(leaf) if leaf else None,
        extra_facets={k: item[k] for k in ("summary",) if isinstance(item.get(k), str) and item[k]},
    )


def _index(entry: dict[str, Any]) -> int:
    value = entry.get("index")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _message(node: str, entry: dict[str, Any], parent: str | None, model: Any) -> ChatMessage:
    sender = str(entry.get("sender") or "unknown")
    text = blocks_text(entry.get("content"))
    if not text.strip() and isinstance(entry.get("text"), str):
        text = thinking_untagged(entry["text"])
    refs: list[dict[str, Any]] = []
    for att in entry.get("attachments") or []:
        if not isinstance(att, dict):
            continue
        name = att.get("file_name") or "attachment"
        extracted = att.get("extracted_content")
        if isinstance(extracted, str) and extracted.strip():
            text += f"\n\nAttachment {name}:\n```\n{extracted}\n```"
        refs.append({"uri": f"claude-attachment:{att.get('id') or name}",
                     "media_type": media_type(att.get("file_type"), name),
                     "locator": {k: att[k] for k in ("file_name", "file_size") if k in att}})
    attached = {str(att.get("file_name")) for att in entry.get("attachments") or [] if isinstance(att, dict)
                and att.get("file_name")}
    for key in ("files", "files_v2"):
        for f in entry.get(key) or []:
            if not isinstance(f, dict):
                continue
            ident = f.get("file_uuid") or f.get("uuid") or f.get("file_name")
            if not ident or f.get("file_name") in attached:  # the same file, already referenced as an attachment
                continue
            ref = {"uri": f"claude-file:{ident}",
                   "media_type": "image/*" if f.get("file_kind") == "image" else media_type(None, f.get("file_name")),
                   "locator": {k: f[k] for k in ("file_name", "file_kind") if k in f}}
            if not any(r["uri"] == ref["uri"] for r in refs):
                refs.append(ref)
    facets: dict[str, Any] = {}
    if entry.get("truncated"):
        facets["truncated"] = True
    if isinstance(entry.get("stop_reason"), str) and entry["stop_reason"] not in ("stop_sequence", "end_turn"):
        facets["stop_reason"] = entry["stop_reason"]
    return ChatMessage(
        node_id=node,
        message_id=node,
        parent_id=parent,
        role=ROLES.get(sender, sender),
        text=text.strip("\n") if text else "",
        observed_at=epoch_to_time(entry.get("created_at")) or epoch_to_time(entry.get("updated_at")),
        model=model if isinstance(model, str) and sender == "assistant" else None,
        binary_refs=refs,
        extra_facets=facets,
    )


def media_type(file_type: Any, name: Any) -> str:
    """A real media type for Claude's `file_type` (an extension, or already a media type), else by the name."""
    kind = file_type.strip().lower() if isinstance(file_type, str) else ""
    if "/" in kind:
        return kind
    if not kind and isinstance(name, str) and "." in name:
        kind = name.rsplit(".", 1)[1].lower()
    return FILE_TYPES.get(kind.lstrip("."), "application/octet-stream")


def blocks_text(content: Any) -> str:
    """The readable text of a message's content blocks (text, thinking, tool use and results)."""
    if not isinstance(content, list):
        return ""
    pieces = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(thinking_untagged(block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            pieces.append("Thinking:\n\n" + block["thinking"])
        elif kind == "tool_use":  # artifacts are documents and code written for the user: decoded, searchable
            pieces.append(f"Tool call `{block.get('name', 'tool')}`:\n\n{tool_input_text(block.get('input'))}")
        elif kind == "tool_result":
            inner = block.get("content")
            inner_text = blocks_text(inner) if isinstance(inner, list) else (inner if isinstance(inner, str) else "")
            pieces.append("Tool result:\n" + inner_text)
        else:
            rest = {k: v for k, v in block.items() if k not in ("start_timestamp", "stop_timestamp")}
            pieces.append(f"```json\n{json.dumps(rest, ensure_ascii=False)}\n```")
    return "\n\n".join(p for p in pieces if p)
