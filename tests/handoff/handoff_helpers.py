"""Shared data and helpers for the handoff tests (shared spec handoff.md).

Fixed data: a small hand-made `pcp export` file (ids, owner and times chosen here) is
imported into a fresh store, and the store clock is pinned, so bundle text is the
same byte for byte on every run. Every test gets its own database file under tmp_path.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

FIXED_NOW = "2026-02-01T10:00:00.000Z"
OWNER = "usr_01J50000000000000000000001"


def fixed_id(prefix: str, n: int) -> str:
    """A valid, fixed id: prefix + a 26-character Crockford ULID made of digits."""
    return f"{prefix}_01J5{n:022d}"


P1, P2, P3, P4 = (fixed_id("pg", n) for n in (1, 2, 3, 4))
R1, R2, R3, R4 = (fixed_id("rev", n) for n in (1, 2, 3, 4))

CHAPTER = (
    "# Chapter 3 outline\n"
    "\n"
    "Compactness first, then the product theorem.\n"
    "\n"
    "```python\n"
    "def tychonoff(spaces):\n"
    "    return all(s.compact for s in spaces)\n"
    "```\n"
)
CJK = "有限乘积保持紧致性的证明\n先证明两个空间的情形，再归纳。\n"
LONG = "".join(f"Line {i:03d} of the long lecture notes on nets and filters, kept for the budget tests.\n"
               for i in range(1, 121))

PAGES = [
    # (page id, revision id, namespace, payload content or None, facets, source refs, observed_at, created_at)
    (P1, R1, "project:thesis", CHAPTER, {"title": "Chapter 3 outline", "summary": "Outline of chapter 3: compactness."},
     [{"uri": "https://example.org/notes/ch3"}, {"uri": "file:///home/u/thesis/ch3.md", "locator": "L1-L8"}],
     "2026-01-15T08:30:00.000Z", "2026-01-20T09:00:00.000Z"),
    (P2, R2, "project:thesis", CJK, {}, [], None, "2026-01-21T09:00:00.000Z"),
    (P3, R3, "project:thesis", None, {"title": "Lecture recording"}, [{"uri": "https://example.org/rec/7"}],
     None, "2026-01-22T09:00:00.000Z"),
    (P4, R4, "project:thesis", LONG, {"title": "Long lecture notes", "summary": "Nets and filters, 120 lines."},
     [], None, "2026-01-23T09:00:00.000Z"),
]


def _export_lines() -> list[dict]:
    lines: list[dict] = [{"kind": "pcp.export.v1", "owner_id": OWNER, "exported_at": FIXED_NOW,
                          "counts": {"scopes": 1, "pages": len(PAGES), "revisions": len(PAGES)}, "scopes": None}]
    lines.append({"kind": "scope", "namespace": "project:thesis", "display_name": "Thesis", "description": None,
                  "parent": None, "visibility": "private", "owner_id": OWNER,
                  "created_at": "2026-01-10T09:00:00.000Z", "updated_at": "2026-01-10T09:00:00.000Z"})
    for pid, rid, ns, _content, _facets, _refs, _observed, created in PAGES:
        lines.append({"kind": "page", "page_id": pid, "namespace": ns, "created_at": created, "updated_at": created,
                      "status": "active", "head_revision_id": rid, "actor_type": "user"})
    for pid, rid, ns, content, facets, refs, observed, created in PAGES:
        payload = None if content is None else {"media_type": "text/markdown", "content": content}
        digest = None if content is None else "sha256:" + hashlib.sha256(content.encode()).hexdigest()
        lines.append({"kind": "revision", "page_id": pid, "revision_id": rid, "previous_revision_id": None,
                      "owner_id": OWNER, "namespace": ns, "visibility": "private", "lifecycle_status": "active",
                      "created_at": created, "observed_at": observed, "valid_from": None, "valid_to": None,
                      "created_by": {"actor_type": "user", "actor_id": "owner"}, "payload": payload,
                      "source_refs": refs, "facets": facets,
                      "provenance": [{"operation": "write", "actor_type": "user", "actor_id": "owner",
                                      "timestamp": created, "input_revision_ids": []}],
                      "content_digest": digest})
    return lines


def write_fixed_export(path: Path) -> Path:
    """The hand-made export file, closed by its digest line as `pcp export` writes it."""
    data = b"".join((json.dumps(o, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()
                    for o in _export_lines())
    end = {"kind": "pcp.export.end", "sha256": hashlib.sha256(data).hexdigest()}
    path.write_bytes(data + (json.dumps(end, separators=(",", ":")) + "\n").encode())
    return path


def body_of(text: str) -> str:
    """A bundle's body: the text before its trailer line, including the line break before it."""
    end = text.rstrip("\n").rfind("\n") + 1
    assert text[end:].startswith("pcp-bundle v1 sha256:")
    return text[:end]


def trailer_digests(text: str) -> tuple[str, str | None]:
    last = text.rstrip("\n").rsplit("\n", 1)[-1].split()
    assert last[:2] == ["pcp-bundle", "v1"]
    return last[2], (last[4] if len(last) > 4 else None)


def write(st, ns: str, content: str, **kw) -> dict:
    return st.write_page(ns, content=content, **kw)
