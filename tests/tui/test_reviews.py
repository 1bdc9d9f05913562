"""Reviews (f4): only the owner decides, and keeping the page is a decision too (report 8: only the model's
choice, tombstone, was offered)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from helpers import audit_since, said, settle, until
from pcp_tui.screens.recommendations import RecommendationsScreen

SIZE = (120, 40)


async def test_d_dismisses_a_recommendation_and_keeps_the_page(demo_store, make_app):
    store, refs = demo_store
    pending = store.list_recommendations()["recommendations"]
    assert len(pending) == 1 and pending[0]["action"] == "tombstone"
    page = pending[0]["page_id"]
    mark = store.audit_log(limit=1)["events"][0]["event_id"]
    app = make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "1 tombstone recommendation" in str(app.screen.query_one("#status-line").render())
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, RecommendationsScreen), "the reviews")
        await settle(app, pilot)
        assert "d Dismiss" in str(app.screen.query_one(".dialog-keys").render())
        await pilot.press("d")
        table = app.screen.query_one(DataTable)
        await until(pilot, lambda: "No pending recommendations." in str(table.get_row_at(0)[0]), "the list emptied")
        assert any("Dismissed" in s for s in said(app))
        await pilot.press("escape")
        await settle(app, pilot)
        assert "recommendation" not in str(app.screen.query_one("#status-line").render())
    assert store.list_recommendations()["recommendations"] == []
    assert store.list_recommendations(status="dismissed")["recommendations"][0]["page_id"] == page
    head = store.read_pages([page], projections=("manifest",))["results"][0]["revision"]
    assert head["lifecycle_status"] == "active"  # the page is kept as it was
    assert "dismiss_recommendation" in {e["operation"] for e in audit_since(store, mark)}


def test_only_the_owner_dismisses_and_only_once(demo_store):
    from store import AccessSession, Forbidden, NotFound

    store, refs = demo_store
    rec = store.list_recommendations()["recommendations"][0]
    namespace = store.read_pages([rec["page_id"]], projections=("manifest",))["results"][0]["revision"]["namespace"]
    model = store.with_session(AccessSession.model_client("claude-desktop", {namespace: {"search", "read",
                                                                                          "tombstone"}}))
    with pytest.raises(Forbidden):
        model.dismiss_recommendation(rec["recommendation_id"])
    assert store.list_recommendations()["recommendations"] == [rec]
    assert store.dismiss_recommendation(rec["recommendation_id"])["status"] == "dismissed"
    with pytest.raises(NotFound):
        store.dismiss_recommendation(rec["recommendation_id"])
