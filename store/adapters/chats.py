"""Chat exports as pages: one page per conversation that `contains` one page per message,
replies `responds_to` their parent, every branch kept active, the last-seen branch marked."""

from __future__ import annotations

import functools
import itertools
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, TypeVar, cast

from .. import names
from ..errors import Invalid, LimitExceeded
from ..importing import PageRef, Prepared, prepare
from ..scope_titles import neutral_name
from .base import IMPORT_RULES, ImportReport, Progress
from .agents import first_meaningful_line


@dataclass
class ChatMessage:
    node_id: str
    message_id: str
    parent_id: str | None  # node id of the parent as the export names it (may be absent from the file)
    role: str
    text: str
    observed_at: str | None
    author_name: str | None = None
    model: str | None = None
    binary_refs: list[dict[str, Any]] = field(default_factory=list)
    extra_facets: dict[str, Any] = field(default_factory=dict)
    hidden: bool = False  # system scaffolding the chat app never shows


@dataclass
class ChatConversation:
    conversation_id: str
    title: str
    created_at: str | None
    updated_at: str | None
    messages: list[ChatMessage]
    current_leaf: str | None  # node id of the message the user last saw, if the export says
    extra_facets: dict[str, Any] = field(default_factory=dict)


def conversation_items(data: Any, label: str, source: str, single_keys: tuple[str, ...]) -> list[Any]:
    """The conversations of an export: a list of them, or one conversation object (it has one of `single_keys`)."""
    if isinstance(data, dict) and any(key in data for key in single_keys):
        return [data]
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        return list(data["conversations"])  # a wrapper some tools put around a genuine export
    if isinstance(data, list):
        return data
    raise Invalid(f"{label}: not a {source} export (expected a list of conversations, one conversation, "
                  "or {\"conversations\": [...]}).")


def current_branch(conv: ChatConversation) -> set[str]:
    """Node ids on the path from the last-seen message back to the root."""
    by_id = {m.node_id: m for m in conv.messages}
    path: set[str] = set()
    node = conv.current_leaf
    while node is not None and node in by_id and node not in path:
        path.add(node)
        node = by_id[node].parent_id
    return path


def tree_order(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Parents before children (roots first, siblings by time), whatever order the export uses."""
    by_id = {m.node_id: m for m in messages}
    children: dict[str | None, list[ChatMessage]] = {}
    for m in messages:
        parent = m.parent_id if m.parent_id in by_id else None
        children.setdefault(parent, []).append(m)
    for kids in children.values():
        kids.sort(key=lambda m: (m.observed_at or "", m.node_id))
    out: list[ChatMessage] = []
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        m = stack.pop()
        if m.node_id in seen:
            continue
        seen.add(m.node_id)
        out.append(m)
        stack.extend(reversed(children.get(m.node_id, [])))
    # Nodes caught in a parent cycle (malformed export) still come in, as roots.
    out.extend(m for m in messages if m.node_id not in seen)
    return out


Conversation = ChatConversation | tuple[str, str]  # a tuple: (item, reason) of a skip
# A conversation made ready by a helper process (store/import_helper.py): its plan, or a skip, by the export item's index.
# ("plan", Planned.wire()) or ("skip", (item, reason)); None: not there, parse and plan it here.
Ready = Callable[[int], "tuple[str, Any] | None"]
PLAN_AHEAD_S = 2.0  # at most this long planning ahead while an export read as it goes is not known to be JSON


Total = int | Callable[[], "int | None"]  # how many conversations, or a function that says so once it is known


def write_conversations(
    store: Any, source: str, tool: str, label: str, conversations: Iterable[Conversation | Callable[[], Conversation]],
    total: Total, report: ImportReport, namespace: str | None, progress: Progress | None, ready: Ready | None = None,
    settle: Callable[[], None] | None = None,
) -> ImportReport:
    """Write every conversation as one unit, the units committed in groups of about half a second
    (Store.bulk_loading); a (item, reason) tuple is a skip. A conversation may come as a function that parses it:
    it is called unless `ready` has the conversation of that export index planned already (by a helper).
    `settle` is called before the first group commits and at the end (an export read as it goes: it makes sure
    the text is JSON; what it raises rolls back what is not committed); progress waits for `total` to be known."""
    with store.bulk_loading(settle=settle) if settle is not None else store.bulk_loading():
        return _write_conversations(store, source, tool, label, conversations, total, report, namespace, progress,
                                    ready, settle)


def _write_conversations(
    store: Any, source: str, tool: str, label: str, conversations: Iterable[Conversation | Callable[[], Conversation]],
    total: Total, report: ImportReport, namespace: str | None, progress: Progress | None, ready: Ready | None,
    settle: Callable[[], None] | None,
) -> ImportReport:
    parent_ns = f"import:{source}"
    if namespace is None:
        with store.import_unit(tool, rules=IMPORT_RULES) as unit:
            unit.ensure_scope(parent_ns, display_name=f"{source.capitalize()} imports")
    done = 0
    unsaid: list[int] = []  # conversations done, not reported to `progress` yet (the total was not known)

    def planned() -> Iterator[tuple[Any, Planned | tuple[str, str]]]:
        for index, item in enumerate(conversations):
            answer = ready(index) if ready is not None and callable(item) else None
            conv = (answer[1] if answer[0] == "skip" else Planned.from_wire(answer[1])) if answer is not None \
                else item() if callable(item) else item
            yield item, conv if isinstance(conv, (tuple, Planned)) else plan_conversation(source, label, conv)

    plans: Iterator[tuple[Any, Planned | tuple[str, str]]] = planned()
    if settle is not None and callable(total):
        # An export read as it goes: nothing is written before it is known to be JSON (`settle`, before the first
        # group takes the lock). Until then (its helper parsing it), the conversations are planned here, ahead.
        held, until = [], time.monotonic() + PLAN_AHEAD_S
        while total() is None and time.monotonic() < until:
            got = next(plans, None)
            if got is None:
                break
            held.append(got)
        plans = itertools.chain(held, plans)
    for item, plan in plans:
        done += 1
        if isinstance(plan, tuple):
            report.skip(*plan)
        else:
            again = functools.partial(_plan_again, source, label, item) if callable(item) and plan.df is not None else None
            try:
                _write_one(store, source, tool, label, plan, report, namespace, parent_ns, again)
            except (Invalid, LimitExceeded) as exc:  # the conversation's own page was refused; the others go on
                report.skip(f"{source} conversation {plan.conversation_id} ({(plan.title or 'untitled')[:80]})",
                            exc.message)
        if progress:
            unsaid.append(done)
            _progress(progress, unsaid, total)
    if settle is not None:
        settle()
    if progress:
        _progress(progress, unsaid, total)  # (the counts that waited for the total)
    return report.keep(store)


def _progress(progress: Progress, unsaid: list[int], total: Total) -> None:
    """progress(done, total) for the counts not reported yet, in order, once the total is known."""
    known = total() if callable(total) else total
    if known is not None:
        for done in unsaid:
            progress(done, known, "conversations")
        unsaid.clear()


def chain_unlinked(messages: list[ChatMessage]) -> None:
    """Messages of which none names a parent are one thread in time order, not unrelated roots."""
    if len(messages) > 1 and all(m.parent_id is None for m in messages):
        ordered = sorted(enumerate(messages), key=lambda pair: (pair[1].observed_at or "", pair[0]))
        for (_, before), (_, after) in zip(ordered, ordered[1:], strict=False):
            after.parent_id = before.node_id


Refused = tuple[str, str]  # (the error's class name, its message): a page prepare() refused


@dataclass
class Planned:
    """A conversation made ready for writing: every page checked and encoded (`prepare`), in the order they are
    written, without the store. Made here, or in a helper process with the pages' index text and their statistics
    (`df`, `docs`, `terms`: of every page with `ready` index text, all of the conversation's scope)."""

    conversation_id: str
    title: str
    created_at: str | None
    conv_key: str
    conv_page: Prepared | Refused
    messages: list[tuple[str, str, Prepared | Refused]]  # (node id, source key, page) of the visible ones, tree order
    parents: dict[str, str | None]  # node id -> its parent's node id, for every message (hidden ones too)
    visible: int
    hidden: int
    empty: int
    df: Counter[str] | None = None
    docs: int = 0
    terms: int = 0

    def wire(self) -> tuple[Any, ...]:
        """The plan as plain values (a helper's answer), its pages as `Prepared.wire` (for new pages only)."""
        return (self.conversation_id, self.title, self.created_at, self.conv_key,
                self.conv_page.wire() if isinstance(self.conv_page, Prepared) else self.conv_page,
                [(node, key, page.wire() if isinstance(page, Prepared) else page) for node, key, page in self.messages],
                self.parents, self.visible, self.hidden, self.empty, self.df, self.docs, self.terms)

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> Planned:
        conv_id, title, created, conv_key, conv_page, messages, parents, visible, hidden, empty, df, docs, terms = wire
        from_wire = Prepared.from_wire
        return cls(conv_id, title, created, conv_key, from_wire(conv_page) if len(conv_page) > 2 else conv_page,
                   [(node, key, from_wire(page) if len(page) > 2 else page) for node, key, page in messages],
                   parents, visible, hidden, empty, df, docs, terms)


def _prepared(df: Counter[str] | None, salt: bytes | None, **page: Any) -> Prepared | Refused:
    try:
        return prepare(**page, salt=salt, df=df)
    except (Invalid, LimitExceeded) as exc:
        return (type(exc).__name__, exc.message)


def _landed(unit: Any, key: str, ns: str, page: Prepared | Refused, counted_elsewhere: bool) -> PageRef:
    if isinstance(page, tuple):
        raise (LimitExceeded if page[0] == "LimitExceeded" else Invalid)(page[1])
    ref: PageRef = unit.land(key, ns, page, counted_elsewhere)
    return ref


def plan_conversation(source: str, label: str, conv: ChatConversation, salt: bytes | None = None) -> Planned:
    """Every page of a conversation checked and encoded; with `salt` (a helper) also their index text, counted."""
    chain_unlinked(conv.messages)
    visible = [m for m in conv.messages if not m.hidden and (m.text.strip() or m.binary_refs)]
    hidden = sum(1 for m in conv.messages if m.hidden)
    empty = sum(1 for m in conv.messages if not m.hidden and not (m.text.strip() or m.binary_refs))
    visible_ids = {m.node_id for m in visible}
    on_branch = current_branch(conv)
    node_ids = {m.node_id for m in conv.messages}
    models = sorted({m.model for m in conv.messages if m.model})
    df: Counter[str] | None = Counter() if salt is not None else None
    conv_page = _prepared(
        df, salt, payload={"media_type": "text/markdown", "content": _conversation_text(source, conv, models)},
        facets={"title": conv.title or f"Untitled {source} conversation", "source": source,
                "conversation_id": conv.conversation_id, "models": models, "created": conv.created_at,
                **({"updated": conv.updated_at} if conv.updated_at else {}),
                **({"empty": True} if not visible else {}), **conv.extra_facets},
        source_refs=[_file_ref(source, label, conv.conversation_id, None)],
        observed_at=conv.created_at, change_key=[])
    messages: list[tuple[str, str, Prepared | Refused]] = []
    for msg in tree_order(conv.messages):
        if msg.node_id not in visible_ids:
            continue
        facets = {
            "title": _message_title(msg),
            "role": msg.role,
            "conversation_id": conv.conversation_id,
            "message_id": msg.message_id,
            "current_branch": msg.node_id in on_branch,
            **({"author_name": msg.author_name} if msg.author_name else {}),
            **({"model": msg.model} if msg.model else {}),
            **msg.extra_facets,
        }
        if msg.parent_id is not None and msg.parent_id not in node_ids:
            facets["missing_parent_id"] = msg.parent_id
        messages.append((msg.node_id, f"{source}:{conv.conversation_id}:{msg.node_id}", _prepared(
            df, salt, payload={"media_type": "text/markdown", "content": msg.text} if msg.text.strip() else None,
            facets=facets, source_refs=[_file_ref(source, label, conv.conversation_id, msg), *msg.binary_refs],
            observed_at=msg.observed_at or conv.created_at, change_key=msg.binary_refs)))
    ready = [p for p in [conv_page, *(m[2] for m in messages)] if isinstance(p, Prepared) and p.ready is not None]
    return Planned(conv.conversation_id, conv.title, conv.created_at, f"{source}:{conv.conversation_id}", conv_page,
                   messages, {m.node_id: m.parent_id for m in conv.messages}, len(visible), hidden, empty, df,
                   len(ready), sum(p.ready[4] for p in ready if p.ready is not None))


def _plan_again(source: str, label: str, parse: Callable[[], Conversation]) -> Planned:
    return plan_conversation(source, label, cast(ChatConversation, parse()))


def helper_answer(source: str, label: str, conv: ChatConversation | tuple[str, str], salt: bytes) -> tuple[str, Any]:
    """A helper's answer for one export item: its plan (with index text), or the skip it is."""
    if isinstance(conv, tuple):
        return ("skip", conv)
    plan = plan_conversation(source, label, conv, salt)
    if plan.df is not None:  # in term order: the importer's sort of a group's statistics rows then merges runs
        plan.df = Counter(dict(sorted(plan.df.items())))
    return ("plan", plan.wire())


def _write_one(store: Any, source: str, tool: str, label: str, plan: Planned, report: ImportReport,
               namespace: str | None, parent_ns: str, again: Callable[[], Planned] | None = None) -> None:
    """One conversation as one unit. A plan made for new pages only (a helper's) that meets pages already in the
    store is made `again` here, whole."""
    if not plan.visible:
        report.hidden_skipped += plan.hidden
    ns = namespace or f"conversation:{source}:{plan.conversation_id}"
    with store.import_unit(tool, rules=IMPORT_RULES) as unit:
        if namespace is None:
            if not unit.exists(ns):  # a conversation imported before keeps its scope; a new one a name that passes
                ns = f"conversation:{source}:{names.importable(plan.conversation_id)}"
            # Never the conversation's title (message text): the scope outlives its pages (store/scope_titles.py).
            neutral = neutral_name(source, "conversation", plan.created_at)
            try:
                ns = unit.ensure_scope(ns, display_name=neutral, parent=parent_ns)
            except names.LookAlike:
                ns = unit.ensure_scope(f"conversation:{source}:{names.importable(plan.conversation_id, always=True)}",
                                       display_name=neutral, parent=parent_ns)
        keys = [plan.conv_key] + [key for _, key, _ in plan.messages]
        unit.prefetch(keys)
        # Index text made by a helper is used when every page is new (all are then created and counted as one).
        elsewhere = plan.df is not None and unit.all_new(keys)
        if plan.df is not None and not elsewhere:
            if again is None:
                raise ValueError("a plan for new pages met pages in the store, and cannot be made again")
            plan = again()
        if elsewhere and _landable(plan):
            conv_ref, refused = _land_new(unit, source, ns, plan, report)
        else:
            conv_ref, refused = _land_each(unit, source, ns, plan, report, elsewhere)
    if not plan.visible:
        report.skip(f"{source} conversation {plan.conversation_id} ({plan.title or 'untitled'})",
                    "no readable messages: kept as an empty conversation page", file=label, page_id=conv_ref.page_id)
    report.wrote(label, plan.conv_key, conv_ref, unit.counts)
    report.conversations += 1
    report.messages += plan.visible - refused
    report.hidden_skipped += plan.hidden if plan.visible else 0
    report.empty_skipped += plan.empty
    report.add(unit.counts)


def _land_each(unit: Any, source: str, ns: str, plan: Planned, report: ImportReport, elsewhere: bool
               ) -> tuple[PageRef, int]:
    """The conversation's pages written one by one, each message related as it lands; (its page, messages refused)."""
    conv_ref = _landed(unit, plan.conv_key, ns, plan.conv_page, elsewhere)
    refs: dict[str, PageRef] = {}
    refused = 0
    for node_id, key, page in plan.messages:
        parent = _nearest_written(node_id, plan.parents, refs)
        try:
            ref = _landed(unit, key, ns, page, elsewhere)
        except (Invalid, LimitExceeded) as exc:  # refused before any of its rows: skip it, keep the rest
            report.skip(f"{source} message {plan.conversation_id}:{node_id}", exc.message)
            refused += 1
            continue
        refs[node_id] = ref
        unit.relate(conv_ref, "contains", ref)
        if parent is not None:
            unit.relate(ref, "responds_to", parent)
    if elsewhere and plan.df is not None:
        unit.index_ready(ns, plan.df, plan.docs, plan.terms)
    return conv_ref, refused


def _landable(plan: Planned) -> bool:
    """Whether every page of a plan has a payload or a source ref (a page with neither is refused as it lands)."""
    return all(isinstance(page, tuple) or page.payload is not None or page.refs_json != "[]"
               for page in [plan.conv_page, *(p for _, _, p in plan.messages)])


def _land_new(unit: Any, source: str, ns: str, plan: Planned, report: ImportReport) -> tuple[PageRef, int]:
    """`_land_each` of a conversation whose pages are all new and were analysed elsewhere: its pages and
    relations in one pass (ImportUnit.land_new); a message prepare() refused is skipped as there."""
    conv_page = plan.conv_page
    if isinstance(conv_page, tuple):
        _landed(unit, plan.conv_key, ns, conv_page, True)  # raises what it was refused with
    assert isinstance(conv_page, Prepared) and plan.df is not None
    pages: list[tuple[str, Prepared]] = [(plan.conv_key, conv_page)]
    relations: list[tuple[int, str, int]] = []
    place: dict[str, int] = {}
    refused = 0
    for node_id, key, page in plan.messages:
        if isinstance(page, tuple):
            report.skip(f"{source} message {plan.conversation_id}:{node_id}", page[1])
            refused += 1
            continue
        parent = _nearest_written(node_id, plan.parents, place)  # (before its own place: a cycle of parents)
        n = place[node_id] = len(pages)
        pages.append((key, page))
        relations.append((0, "contains", n))
        if parent is not None:
            relations.append((n, "responds_to", parent))
    refs: list[PageRef] = unit.land_new(ns, pages, relations, plan.df, plan.docs, plan.terms)
    return refs[0], refused


T = TypeVar("T")


def _nearest_written(node_id: str, parents: dict[str, str | None], written: Mapping[str, T]) -> T | None:
    """What `written` holds for the closest ancestor that became a page (its ref, or its place among the pages
    landed together); hidden scaffolding in between is stepped over, and a cycle of parents ends the walk."""
    seen = set()
    node = parents.get(node_id)
    while node is not None and node in parents and node not in seen:
        seen.add(node)
        if node in written:
            return written[node]
        node = parents[node]
    return None


def _file_ref(source: str, label: str, conversation_id: str, msg: ChatMessage | None) -> dict[str, Any]:
    locator: dict[str, Any] = {"file": label, "conversation_id": conversation_id}
    uri = f"{source}-export:{label}#conversation={conversation_id}"
    if msg is not None:
        locator.update({"message_id": msg.message_id, "node_id": msg.node_id})
        uri += f"&message={msg.message_id}"
    return {"uri": uri, "locator": locator, "media_type": "application/json"}


def _message_title(msg: ChatMessage) -> str:
    """The first line that says something (not a code fence, a bare `Output:` or `Thinking:` label)."""
    first = first_meaningful_line(msg.text) or next((line.strip() for line in msg.text.splitlines() if line.strip()
                                                      and not line.strip().startswith("```")), "")
    if not first and msg.binary_refs:
        first = f"[{len(msg.binary_refs)} attachment(s)]"
    first = first.lstrip("#").strip()
    return f"{msg.role}: {first[:100]}"


def _conversation_text(source: str, conv: ChatConversation, models: list[str]) -> str:
    # Only what does not change as the conversation grows, so a re-import adds just the new messages.
    lines = [f"# {conv.title or 'Untitled conversation'}", ""]
    lines.append(f"{source.capitalize()} conversation `{conv.conversation_id}`.")
    if conv.created_at:
        lines.append(f"Started {conv.created_at}.")
    if models:
        lines.append("Models: " + ", ".join(models) + ".")
    return "\n".join(lines) + "\n"
