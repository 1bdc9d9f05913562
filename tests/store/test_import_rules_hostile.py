"""An importer reading back the rules version a stored page names: a crafted version string is not a crash."""

from __future__ import annotations

from types import SimpleNamespace

from store.importing import ImportUnit


def test_a_rules_version_that_is_a_superscript_digit_counts_as_unnamed():
    unit = ImportUnit.__new__(ImportUnit)
    unit.actor, unit.rules = ("tool", "pcp-import-chatgpt"), 2
    # A page can carry any provenance text (an imported pcp export, a synced store): "²" passes isdigit().
    previous = SimpleNamespace(provenance=[{"operation": "import", "tool_or_model": "pcp-import-chatgpt/²"}])
    assert unit._revised_by(previous) == "pcp-import-chatgpt/2: importer upgrade from pcp-import-chatgpt/1"
    previous = SimpleNamespace(provenance=[{"operation": "import", "tool_or_model": "pcp-import-chatgpt/2"}])
    assert unit._revised_by(previous) == "pcp-import-chatgpt/2"
