"""Generated ChatGPT-shaped exports for tests that need many conversations (the real ones are in tests/data)."""

from __future__ import annotations


def generated_export(n: int, per: int, prefix: str = "gen", words: str = "the tide at noon.") -> list[dict]:
    """n conversations of `per` messages each, one thread, every message with its time."""
    out = []
    for c in range(n):
        cid = f"{prefix}-{c:04d}"
        mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for m in range(per):
            node = f"{cid}-{m}"
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": "user" if m % 2 == 0 else "assistant"},
                "create_time": 1700000000 + c * 100 + m,
                "content": {"content_type": "text", "parts": [f"Message {m} of conversation {c}: {words}"]}}}
            mapping[parent]["children"].append(node)
            parent = node
        out.append({"id": cid, "title": f"Conversation {c}", "create_time": 1700000000 + c * 100,
                    "current_node": parent, "mapping": mapping})
    return out
