"""ChatGPT data export (`conversations.json`, the export .zip, or one conversation object)."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import Invalid
from ..import_groups import IMPORT_GC_THRESHOLD, fewer_collections
from .base import (ImportReport, NotAnArray, Progress, array_items, decode_at, epoch_to_time, json_object, json_text,
                   parse_json_text, read_json_text, unicode_safe)
from .formats import SAMPLE_LINES, check_file, check_parsed
from .chats import ChatConversation, ChatMessage, conversation_items, helper_answer, write_conversations

TOOL = "pcp-import-chatgpt"
# Content the ChatGPT app never shows: custom instructions and memory injected as context.
HIDDEN_CONTENT_TYPES = {"user_editable_context", "model_editable_context"}
JSON_CHARS_A_SECOND = 50_000_000  # about how fast json.loads reads an export here (for how long to wait for a helper)
HELPER_START_S = 0.25  # about how long the helper takes to start and import its planner (it starts as the file is read)


def import_chatgpt(store: Any, path: str | Path, namespace: str | None = None,
                   progress: Progress | None = None) -> ImportReport:
    """Import every conversation of a ChatGPT export; each conversation is one transaction. A large export's
    conversations are planned in a helper process meanwhile, when a core is free (store/import_helper.py); the
    importer then reads only the conversations it plans itself (`_Export`)."""
    check_file(path, "chatgpt")
    start = getattr(store, "import_helper", None)
    size = Path(path).stat().st_size if Path(path).is_file() else 0  # (no file: read_json_text says so)
    helper = start(__name__, size) if start is not None and size else None  # it starts while the file is read
    try:
        text, label = read_json_text(path)
        if helper is not None and not helper.ask(label, text):  # it parses the text as this does, meanwhile
            helper = None
        report = ImportReport(source="chatgpt", path=str(path))
        export = _Export(text, label, helper) if helper is not None else None
        if export is None or export.items is not None:
            items = export.items if export is not None and export.items is not None else _items(text, label)
            del text
            return write_conversations(store, "chatgpt", TOOL, label,
                                       [functools.partial(_parse_item, index, item) for index, item in enumerate(items)],
                                       len(items), report, namespace, progress, helper)
        del text
        try:
            return write_conversations(store, "chatgpt", TOOL, label, export.conversations(), export.total, report,
                                       namespace, progress, helper, export.settle)
        except _NotJson as exc:
            raise exc.error from None
    finally:
        if helper is not None:
            helper.close()


def _items(text: str, label: str) -> list[Any]:
    """The export's conversations, the whole text parsed (Invalid when it is not JSON or not a ChatGPT export)."""
    with fewer_collections(IMPORT_GC_THRESHOLD):  # (millions of new objects: at the default threshold the parse took 1.7x as long)
        data = parse_json_text(text, label)
    check_parsed(data, "chatgpt", label)
    return conversation_items(data, label, "ChatGPT", ("mapping", "conversation_id"))


class _NotJson(BaseException):
    """The export's text turned out not to be JSON before its first group committed: the import stops, writing
    nothing (a BaseException: no conversation's unit takes it for its own refusal)."""

    def __init__(self, error: Invalid) -> None:
        super().__init__(error.message)
        self.error = error


class _Export:
    """A ChatGPT export (a JSON array of conversations) whose items are read one at a time, where they are, and
    only when the importer plans one itself: the helper parses the whole text, says where each item starts and
    plans them. Until it has said so (the text is then JSON), the importer reads on from the start itself; and
    before the import's first group commits (`settle`) the text is known to be JSON, from the helper or from a
    whole parse here, so a text that is not JSON writes nothing, as when it is parsed first. Not an array, or
    not JSON near its start: parsed whole at once (`items`)."""

    def __init__(self, text: str, label: str, helper: Any) -> None:
        self.text, self.label, self.helper = text, label, helper
        self.items: list[Any] | None = None  # all of them, the text parsed whole here
        self._starts: list[int] | None = None  # where each item starts (the helper's)
        self._count: int | None = None  # how many, once this read to the end itself
        self._scan = array_items(text)
        self._read = 0  # items this has read in order (from the start, until the helper says where they are)
        self._held: dict[int, Any] = {}  # read in order, not planned yet
        try:
            for _ in range(SAMPLE_LINES):  # what check_parsed looks at
                if not self._more():
                    break
        except (ValueError, RecursionError):  # not an array (or not JSON): read whole, as without a helper
            self.items = _items(text, label)
            return
        try:
            check_parsed([self._held[i] for i in range(self._read)], "chatgpt", label)
        except Invalid:
            self.items = _items(text, label)  # (a text that is not JSON says so first)
            raise

    def _more(self) -> bool:
        """Read the next item in order (False: there is none)."""
        got = next(self._scan, None)
        if got is None:
            self._count = self._read
            return False
        self._held[self._read] = got[1]
        self._read += 1
        return True

    def starts(self) -> list[int] | None:
        if self._starts is None and self.helper is not None:
            self._starts = self.helper.starts()
        return self._starts

    def total(self) -> int | None:
        """How many conversations (None: not known yet)."""
        if self.items is not None:
            return len(self.items)
        starts = self.starts()
        return len(starts) if starts is not None else self._count

    def conversations(self) -> Iterator[Callable[[], Any]]:
        """Each item's parse, in order, as a function (called unless the helper planned that conversation)."""
        index = 0
        while True:
            total = self.total()
            if total is not None and index >= total:
                return
            if total is None and index == self._read:
                try:
                    if not self._more():
                        return
                except (ValueError, RecursionError):
                    self.items = _items(self.text, self.label)  # raises the error a whole parse names
                    continue
            yield functools.partial(self._parse, index)
            index += 1

    def _parse(self, index: int) -> ChatConversation | tuple[str, str]:
        return _parse_item(index, self.item(index))

    def item(self, index: int) -> Any:
        if self.items is not None:
            return self.items[index]
        if index in self._held:
            return self._held.pop(index)
        starts = self.starts()
        if starts is not None:
            try:
                return decode_at(self.text, starts[index])[0]
            except RecursionError:  # (nested near the limit, read deeper in the stack than the helper read it)
                pass
        self.items = _items(self.text, self.label)  # (else items are read in order until the helper says where)
        return self.items[index]

    def settle(self) -> None:
        """Before the import's first group takes the lock: make sure the text is JSON. Wait for the helper to say
        where its items start while it lives, up to about as long as its start and a whole parse here would take;
        else parse it whole here. (No other writer waits meanwhile: the lock is not held.)"""
        if self.total() is not None:
            return
        if self.helper is not None:
            self._starts = self.helper.starts(wait=min(2.0, HELPER_START_S + len(self.text) / JSON_CHARS_A_SECOND))
            if self._starts is not None:
                return
        try:
            self.items = _items(self.text, self.label)
        except Invalid as exc:
            raise _NotJson(exc) from None


def helper_items(text: str, label: str) -> list[Any]:
    """In the import's helper process: the export's conversations, as the import found them."""
    return conversation_items(parse_json_text(text, label), label, "ChatGPT", ("mapping", "conversation_id"))


def helper_spans(text: str, label: str) -> tuple[list[Any], list[int] | None]:
    """In the import's helper process: the export's conversations and where each starts in the text (None: the
    text is not an array; they are then as `helper_items` finds them). Raises where the text is not JSON."""
    try:
        pairs = list(array_items(text))
    except NotAnArray:
        return helper_items(text, label), None
    return [item for _, item in pairs], [start for start, _ in pairs]


def helper_plan(index: int, item: Any, label: str, salt: bytes) -> tuple[str, Any]:
    """In the import's helper process: a conversation's plan with its index text (or the skip it is)."""
    return helper_answer("chatgpt", label, _parse_item(index, item), salt)


def _parse_item(index: int, item: Any) -> ChatConversation | tuple[str, str]:
    if not isinstance(item, dict):
        return (f"chatgpt item {index}", "not a conversation object")
    conv_id = unicode_safe(str(item.get("conversation_id") or item.get("id") or _anonymous_id(item)))
    title = json_text(item.get("title"))
    mapping = item.get("mapping")
    return parse_conversation(conv_id, title, item, mapping if isinstance(mapping, dict) else {})


def _anonymous_id(item: dict[str, Any]) -> str:
    basis = json.dumps([item.get("title"), item.get("create_time")], default=str)
    return "anon-" + hashlib.sha256(basis.encode()).hexdigest()[:16]


def parse_conversation(conv_id: str, title: str, item: dict[str, Any], mapping: dict[str, Any]) -> ChatConversation:
    messages = []
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            continue
        msg = node.get("message")
        if not isinstance(msg, dict):
            continue  # the empty root node
        parent = node.get("parent")
        messages.append(_message(unicode_safe(str(node_id)), msg,
                                 unicode_safe(str(parent)) if parent is not None else None))
    # A parent may be a message-less root node that exists in the mapping: that is a thread start.
    present = {unicode_safe(str(k)) for k in mapping}
    roots = {unicode_safe(str(k)) for k, n in mapping.items()
             if isinstance(n, dict) and not isinstance(n.get("message"), dict)}
    for m in messages:
        if m.parent_id in roots:
            m.parent_id = None
        elif m.parent_id is not None and m.parent_id not in present:
            pass  # dangling: chats.py hangs it off the conversation with a facet
    current = item.get("current_node")
    return ChatConversation(
        conversation_id=conv_id,
        title=title,
        created_at=epoch_to_time(item.get("create_time")),
        updated_at=epoch_to_time(item.get("update_time")),
        messages=messages,
        current_leaf=unicode_safe(str(current)) if current is not None else _last_leaf(messages),
        extra_facets={**{k: item[k] for k in ("default_model_slug", "gizmo_id") if isinstance(item.get(k), str)},
                      **({"archived": True} if item.get("is_archived") is True else {})},
    )


def _last_leaf(messages: list[ChatMessage]) -> str | None:
    """Without current_node, the newest message that no one answers stands for the branch last seen."""
    parents = {m.parent_id for m in messages}
    leaves = [m for m in messages if m.node_id not in parents]
    if not leaves:
        return None
    return max(leaves, key=lambda m: (m.observed_at or "", m.node_id)).node_id


def _message(node_id: str, msg: dict[str, Any], parent: str | None) -> ChatMessage:
    author = json_object(msg.get("author"))
    role = str(author.get("role") or "unknown")
    content = json_object(msg.get("content"))
    metadata = json_object(msg.get("metadata"))
    ctype = content.get("content_type") or ("text" if "parts" in content else "unknown")
    text, refs = content_text(content, ctype)
    text, refs = _with_metadata(text, refs, metadata)
    hidden = (
        ctype in HIDDEN_CONTENT_TYPES
        or bool(metadata.get("is_visually_hidden_from_conversation"))
        or bool(metadata.get("is_user_system_message"))
        or (role == "system" and not text.strip())
    )
    facets: dict[str, Any] = {"content_type": ctype}
    recipient = msg.get("recipient")
    if isinstance(recipient, str) and recipient != "all":
        facets["recipient"] = recipient
    for key in ("status",):
        if isinstance(msg.get(key), str) and msg[key] != "finished_successfully":
            facets[key] = msg[key]
    finish = metadata.get("finish_details")
    if isinstance(finish, dict) and finish.get("type") not in (None, "stop"):
        facets["finish"] = finish.get("type")
    if isinstance(msg.get("channel"), str):
        facets["channel"] = msg["channel"]
    return ChatMessage(
        node_id=node_id,
        message_id=unicode_safe(str(msg.get("id") or node_id)),
        parent_id=parent,
        role=role,
        text=text,
        observed_at=epoch_to_time(msg.get("create_time")) or epoch_to_time(msg.get("update_time")),
        author_name=author.get("name") if isinstance(author.get("name"), str) else None,
        model=metadata.get("model_slug") if isinstance(metadata.get("model_slug"), str) else None,
        binary_refs=refs,
        extra_facets=facets,
        hidden=hidden,
    )


def content_text(content: dict[str, Any], ctype: str) -> tuple[str, list[dict[str, Any]]]:
    """Searchable text and binary source refs of one message's content, whatever its type."""
    refs: list[dict[str, Any]] = []
    if ctype in ("text", "multimodal_text") or "parts" in content and ctype not in ("code", "execution_output"):
        pieces = []
        for part in content.get("parts") or []:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                piece, ref = _part(part)
                if piece:
                    pieces.append(piece)
                if ref:
                    refs.append(ref)
        return "\n\n".join(p for p in pieces if p), refs
    if ctype == "code":
        lang = content.get("language") if content.get("language") not in (None, "unknown") else ""
        return f"```{lang}\n{content.get('text', '')}\n```", refs
    if ctype == "execution_output":
        return f"Output:\n```\n{content.get('text', '')}\n```", refs
    if ctype == "tether_browsing_display":
        pieces = [s for s in (content.get("summary"), content.get("result")) if isinstance(s, str) and s]
        return "\n\n".join(pieces), refs
    if ctype == "tether_quote":
        url = content.get("url")
        if isinstance(url, str) and url:
            refs.append({"uri": url, "media_type": "text/html"})
        head = " - ".join(s for s in (content.get("title"), content.get("domain")) if isinstance(s, str) and s)
        return "\n\n".join(s for s in (head, content.get("text")) if isinstance(s, str) and s), refs
    if ctype == "thoughts":
        pieces = []
        for thought in content.get("thoughts") or []:
            if isinstance(thought, dict):
                pieces.append("\n".join(s for s in (thought.get("summary"), thought.get("content")) if isinstance(s, str) and s))
        return "Thinking:\n\n" + "\n\n".join(p for p in pieces if p), refs
    if ctype == "reasoning_recap":
        return str(content.get("content") or ""), refs
    if ctype == "system_error":
        return f"Error ({content.get('name', 'system')}): {content.get('text', '')}", refs
    if ctype in HIDDEN_CONTENT_TYPES:
        pieces = [v for k, v in content.items() if k != "content_type" and isinstance(v, str) and v]
        return "\n\n".join(pieces), refs
    # An unknown kind of content: keep all of it as JSON rather than drop it.
    rest = {k: v for k, v in content.items() if k != "content_type"}
    return (f"```json\n{json.dumps(rest, ensure_ascii=False, indent=1)}\n```" if rest else ""), refs


def _part(part: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    ptype = part.get("content_type", "")
    pointer = part.get("asset_pointer")
    if isinstance(pointer, str) and pointer:
        media = "image/*" if "image" in ptype else ("audio/*" if "audio" in ptype else "application/octet-stream")
        locator = {k: part[k] for k in ("width", "height", "size_bytes", "content_type") if k in part}
        return "", {"uri": pointer, "media_type": media, "locator": locator}
    if isinstance(part.get("text"), str):
        return part["text"], None
    return f"```json\n{json.dumps(part, ensure_ascii=False)}\n```", None


def _with_metadata(text: str, refs: list[dict[str, Any]], metadata: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Citations and attachments are part of what a message says or carries."""
    sources = []
    for cite in metadata.get("citations") or []:
        meta = json_object(cite.get("metadata")) if isinstance(cite, dict) else {}
        url, title = meta.get("url"), meta.get("title")
        if isinstance(url, str) and url:
            sources.append(f"- [{title or url}]({url})")
            refs.append({"uri": url, "media_type": "text/html"})
    cite_meta = metadata.get("_cite_metadata")
    if isinstance(cite_meta, dict):
        for item in cite_meta.get("metadata_list") or []:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                sources.append(f"- [{item.get('title') or item['url']}]({item['url']})")
    if sources:
        text = (text + "\n\nSources:\n" + "\n".join(dict.fromkeys(sources))).strip()
    aggregate = json_object(metadata.get("aggregate_result"))
    for out in aggregate.get("messages") or []:  # Code Interpreter output: images it drew (file-service://)
        if isinstance(out, dict) and isinstance(out.get("image_url"), str) and out["image_url"]:
            refs.append({"uri": out["image_url"], "media_type": "image/*",
                         "locator": {k: out[k] for k in ("width", "height") if k in out}})
    for att in metadata.get("attachments") or []:
        if isinstance(att, dict) and (att.get("id") or att.get("name")):
            refs.append({
                "uri": f"chatgpt-attachment:{att.get('id') or att.get('name')}",
                "media_type": att.get("mime_type") or att.get("mimeType") or "application/octet-stream",
                "locator": {k: att[k] for k in ("name", "size", "width", "height") if k in att},
            })
    unique = []
    for ref in refs:
        if ref not in unique:
            unique.append(ref)
    return text, unique
