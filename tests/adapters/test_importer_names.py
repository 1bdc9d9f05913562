"""Issue 30, item 5: importers make namespaces that pass the rules (pcp-core.md section 2) from whatever names
the files carry: a vault called "My Notes" still imports as it is; a vault or conversation name holding an
invisible or line-breaking character gets a name without it (and a digest, so no two names meet)."""

from __future__ import annotations

import json
import shutil

import import_helpers as h
from store.adapters import import_chatgpt
from store.adapters.markdown import import_markdown
from store.names import new_namespace, refused_character


def _passes(ns: str) -> bool:
    return refused_character(ns) is None and new_namespace(ns) == ns


def test_vault_names_that_pass_stay_and_invisible_characters_are_left_out(store, tmp_path):
    for name in ("My Notes", "My\u200bNotes", "Notes\u202e", "Cafe\u0301"):
        shutil.copytree(h.VAULT, tmp_path / name)
        import_markdown(store, tmp_path / name)
    notes = sorted(ns for ns in h.scopes(store) if ns.startswith("notes:"))
    assert "notes:My Notes" in notes  # as it is: a space is fine
    assert len(notes) == 4 and all(_passes(ns) for ns in notes), notes
    assert [ns for ns in notes if ns.startswith("notes:MyNotes~")] and [ns for ns in notes if ns.startswith("notes:Notes~")]
    assert [ns for ns in notes if ns.startswith("notes:Caf\u00e9~")]  # NFC, with the digest of the name it came from


def test_a_conversation_id_with_a_bidi_override_gets_a_name_that_passes(store, tmp_path):
    data = json.loads((h.EXPORTS / "chatgpt-danny-avila-LibreChat-1.json").read_text(encoding="utf-8"))
    data[0]["id"] = data[0]["conversation_id"] = "\u202eevil-looking-id"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = import_chatgpt(store, path)
    assert report.conversations == 1 and not report.skipped
    [ns] = [ns for ns in h.scopes(store) if ns.startswith("conversation:chatgpt:")]
    assert _passes(ns) and ns.startswith("conversation:chatgpt:evil-looking-id~")
