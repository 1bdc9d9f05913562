"""A vendor's memory of the user, in and out.

In: the text a user copies out of ChatGPT (Settings > Personalization > Manage memories: one saved
memory per line) or Claude (Settings > Capabilities > Memory: sections under headings such as
"**Work context**"), and the `conversations_memory` / `project_memories` of a Claude data export.
Each section becomes one page in `<vendor>:memory` (ChatGPT's list, which has no sections, is one page
"Saved memories"), keyed by vendor and section title, so copying the memory out again revises the same
pages and their history shows how the memory changed. An export's memory and a copied one land on the
same pages.

Out: `memory_profile` renders chosen pages as one plain text, sections as headings and every memory as
one bullet, the form both vendors' memory imports take (pasted into the chat that asks for it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..constants import LIMITS
from ..errors import Forbidden, Invalid
from .base import IMPORT_RULES, ImportReport, Progress

VENDORS = {"chatgpt": "ChatGPT", "claude": "Claude"}
TOOL = "pcp-import-memory"
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+(?P<hash>.+?)|\*\*(?P<bold>[^*]+?)\*\*:?|__(?P<under>[^_]+?)__:?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+")
MAX_SECTIONS = 500


@dataclass
class Section:
    title: str
    items: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(f"- {item}" for item in self.items) + "\n"


def memory_namespace(vendor: str) -> str:
    return f"{vendor}:memory"


def parse_memory_text(text: str, vendor: str) -> list[Section]:
    """Sections of memory items: headings open a section, a bullet or a paragraph is one item
    (ChatGPT's copied list: every non-empty line is one memory)."""
    default = "Saved memories" if vendor == "chatgpt" else "Memory"
    sections: list[Section] = []
    current = Section(default)
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            current.items.append(" ".join(paragraph))
            paragraph.clear()

    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        heading = _HEADING.match(line) if line else None
        if heading:
            end_paragraph()
            if current.items:
                sections.append(current)
            current = Section(" ".join(next(g for g in heading.groups() if g).split()).rstrip(":"))
        elif not line or line.startswith("```"):
            end_paragraph()
        elif _BULLET.match(line) or vendor == "chatgpt":
            end_paragraph()
            item = _BULLET.sub("", line).strip()
            if item:
                current.items.append(item)
        else:
            paragraph.append(line)
    end_paragraph()
    if current.items:
        sections.append(current)
    if len(sections) > MAX_SECTIONS:
        raise Invalid(f"The memory text has {len(sections):,} sections; at most {MAX_SECTIONS} are read; nothing was imported.")
    return sections


def read_memory_file(path: str | Path) -> tuple[str, str]:
    """(text, label) of a copied-out memory: UTF-8 text within the import limit."""
    p = Path(path)
    try:
        if not p.is_file():
            raise Invalid(f"{p}: no such file (save the memory text you copied into a file first).")
        size = p.stat().st_size
        if size > LIMITS["max_import_bytes"]:
            raise Invalid(f"{p.name} is {size:,} bytes; the import limit is {LIMITS['max_import_bytes']:,} bytes.")
        raw = p.read_bytes()
    except OSError as exc:
        raise Invalid(f"{p}: cannot read ({exc.strerror or exc}).") from None
    try:
        return raw.decode("utf-8-sig"), p.name
    except UnicodeDecodeError as exc:
        raise Invalid(f"{p.name}: not UTF-8 text (byte {exc.start}); save the copied memory as UTF-8 text.") from None


def write_sections(unit: Any, vendor: str, sections: Iterable[Section], source_uri: str, observed_at: str | None,
                   namespace: str | None = None, key_prefix: str | None = None,
                   extra_facets: dict[str, Any] | None = None) -> list[Any]:
    """One page per section (inside an open import unit); returns the PageRefs."""
    ns = namespace or memory_namespace(vendor)
    prefix = key_prefix or f"{vendor}-memory"
    refs = []
    for section in sections:
        refs.append(unit.upsert(
            f"{prefix}:{section.title.casefold()}", ns,
            payload={"media_type": "text/markdown", "content": section.text()},
            facets={"title": f"{VENDORS[vendor]} memory: {section.title}", "source": vendor, "kind": "memory",
                    "section": section.title, "items": len(section.items), **(extra_facets or {})},
            source_refs=[{"uri": source_uri, "media_type": "text/plain"}],
            observed_at=observed_at, change_key=[],
        ))
    return refs


def import_memory(store: Any, path: str | Path, vendor: str, namespace: str | None = None,
                  progress: Progress | None = None) -> ImportReport:
    """`pcp import memory FILE --from chatgpt|claude`: the memory text a user copied out, one page per section."""
    if vendor not in VENDORS:
        raise Invalid(f"--from must be one of {', '.join(VENDORS)}, got {vendor!r}.")
    text, label = read_memory_file(path)
    sections = parse_memory_text(text, vendor)
    report = ImportReport(source=f"{vendor}-memory", path=str(path))
    if not sections:
        report.skip(label, "no memory found in the text (one memory per line, or sections under headings)", file=label)
        return report.keep(store)
    with store.import_unit(TOOL, rules=IMPORT_RULES) as unit:
        ns = namespace or unit.ensure_scope(memory_namespace(vendor), display_name=f"{VENDORS[vendor]} memory")
        refs = write_sections(unit, vendor, sections, f"{vendor}-memory:{label}", None, namespace=ns)
    for section, ref in zip(sections, refs, strict=True):
        report.wrote(label, f"{vendor}-memory:{section.title}", ref, {ref.outcome: 1})
    report.notes += len(refs)
    report.add(unit.counts)
    if progress:
        progress(len(refs), len(refs), "memory sections")
    return report.keep(store)


# --- out: one text a vendor's memory import takes -----------------------------------------------------


def memory_profile(store: Any, scopes: list[str] | None = None) -> dict[str, Any]:
    """The chosen scopes' pages (default: every `*:memory` scope) as one text; the owner's alone (it is an export)."""
    from ..bundle import secret_kinds

    if not store.session.is_owner:
        raise Forbidden("Only the owner may export the store.")
    known = _all_scopes(store)
    chosen = list(dict.fromkeys(scopes)) if scopes else [s for s in known if s.endswith(":memory")]
    missing = [s for s in chosen if s not in known]
    if missing:
        raise Invalid(f"No scope {missing[0]} in this store; pcp scopes lists them.")
    if not chosen:
        raise Invalid("No memory to export: import one first (pcp import memory FILE --from chatgpt|claude), or "
                      "name scopes with --scope.")
    lines: list[str] = ["# About me", ""]
    pages = 0
    for ns in chosen:
        for page in _pages_in(store, ns):
            content = ((page["revision"].get("payload") or {}).get("content") or "").strip()
            if not content:
                continue
            title = page["revision"]["facets"].get("section") or page.get("title") or ns
            lines += [f"## {' '.join(str(title).split())}", ""]
            lines += [f"- {item}" for item in _items(content)]
            lines.append("")
            pages += 1
    if not pages:
        raise Invalid("The chosen scopes hold no text to export.")
    text = "\n".join(lines).rstrip("\n") + "\n"
    warnings = [{"code": "possible_secret", "message": f"The profile looks like it holds {kind}; check it before "
                                                       "you hand it to a vendor."} for kind in secret_kinds(text)]
    return {"text": text, "pages": pages, "scopes": chosen, "warnings": warnings}


def _items(content: str) -> list[str]:
    out = []
    for section in parse_memory_text(content, "claude"):
        out += section.items
    return out


def _all_scopes(store: Any) -> list[str]:
    out, cursor = [], None
    while True:
        res = store.list_scopes(limit=200, cursor=cursor)
        out += [s["namespace"] for s in res["scopes"] if s["page_count"]]
        cursor = res.get("next_cursor")
        if not cursor:
            return out


def _pages_in(store: Any, ns: str) -> list[dict[str, Any]]:
    ids, cursor = [], None
    while True:
        res = store.search_pages("", scopes=[ns], mode="temporal", limit=50, cursor=cursor)
        ids += [h["page_id"] for h in res["hits"]]
        cursor = res.get("next_cursor")
        if not cursor:
            break
    pages = []
    for page_id in reversed(ids):  # oldest first, as they were written
        result = store.read_pages([page_id], projections=["manifest", "payload"], max_chars=64000)["results"][0]
        if "error" not in result:
            pages.append(result)
    return pages
