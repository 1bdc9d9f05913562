"""Archive, suppress, tombstone: three different ways to step a page back, none of them erasing."""

from __future__ import annotations

from typing import Any

from . import ids, index
from .constants import LIMITS
from . import validate as v
from .core import Call, Part, operation
from .errors import Conflict, Forbidden, Invalid, NotFound
from .reads import clamp, effective_status
from .types import (Recommendation, RecommendationList, RecommendResult, SuppressionContextList, SuppressResult,
                    TransitionResult, UnsuppressResult)

# operation -> (permission, statuses it may start from, status it leads to)
TRANSITIONS = {
    "archive_page": ("archive", ("active",), "archived"),
    "restore_page": ("archive", ("archived",), "active"),
    "tombstone_page": ("tombstone", ("active", "archived"), "tombstoned"),
    "untombstone_page": ("tombstone", ("tombstoned",), None),  # back to the status before the tombstone
}


class LifecycleOps(Part):
    """Archive, restore, tombstone, recommendations and suppressions."""

    def _transition(self, call: Call, page_id: str, reason: str) -> TransitionResult:
        permission, sources, target = TRANSITIONS[call.operation]
        why = v.reason(reason)
        page = self._page_row(page_id, call, permission)
        if page.status not in sources:
            raise Conflict(
                f"Page {page.page_id} is {page.status}; {call.operation.replace('_page', '')} applies to "
                f"{' or '.join(sources)} pages."
            )
        m = self._m
        if target is None:
            last = (
                m.LifecycleEvent.select(m.LifecycleEvent.from_status)
                .where((m.LifecycleEvent.page == page.id) & (m.LifecycleEvent.to_status == "tombstoned"))
                .order_by(m.LifecycleEvent.id.desc()).first()
            )
            target = last.from_status if last else "active"
        stamp = ids.now()
        event_id = ids.new_id("evt")
        m.LifecycleEvent.create(
            event_id=event_id, page=page.id, from_status=page.status, to_status=target,
            actor_type=self.session.actor_type, actor_id=self.session.principal_id, reason=why, created_at=stamp,
        )
        if (page.status == "tombstoned") != (target == "tombstoned"):
            # A tombstoned page's text leaves the search statistics (a session without audit learns nothing of it).
            index.set_counted(self._db.cursor(), self._salt, page.id, counted=target != "tombstoned")
        m.Page.update(status=target, updated_at=stamp).where(m.Page.id == page.id).execute()
        call.counts["pages"] = 1
        return {"page_id": page.page_id, "lifecycle_status": effective_status(target, page.superseded), "event_id": event_id}

    @operation("archive_page", write=True)
    def archive_page(self, call: Call, page_id: str, reason: str) -> TransitionResult:
        """Take a page out of ordinary search; it stays readable by id."""
        return self._transition(call, page_id, reason)

    @operation("restore_page", write=True)
    def restore_page(self, call: Call, page_id: str, reason: str) -> TransitionResult:
        """Bring an archived page back into search."""
        return self._transition(call, page_id, reason)

    @operation("tombstone_page", write=True)
    def tombstone_page(self, call: Call, page_id: str, reason: str) -> TransitionResult:
        """Withdraw a page from every search, list and bundle; history stays, reversible."""
        return self._transition(call, page_id, reason)

    @operation("untombstone_page", write=True)
    def untombstone_page(self, call: Call, page_id: str, reason: str) -> TransitionResult:
        """Undo a tombstone."""
        return self._transition(call, page_id, reason)

    @operation("recommend_tombstone", write=True)
    def recommend_tombstone(self, call: Call, page_id: str, reason: str) -> RecommendResult:
        """Record a recommendation (from a model) that the user tombstone a page; nothing is withdrawn."""
        why = v.reason(reason)
        page = self._page_row(page_id, call, "read")
        ns = page.scope.namespace
        # A model may hold a `tombstone` grant it can never exercise: that grant is what lets it recommend.
        if not (self.session.granted("tombstone", ns) or any(self.session.allows(p, ns) for p in ("write", "revise", "suppress"))):
            raise Forbidden(f"Recommending a tombstone in scope {ns} needs a tombstone, write, revise or suppress grant there.")
        rec_id = ids.new_id("rec")
        self._m.Recommendation.create(
            recommendation_id=rec_id, page=page.id, reason=why, actor_type=self.session.actor_type,
            actor_id=self.session.principal_id, created_at=ids.now(),
        )
        return {"recommendation_id": rec_id, "page_id": page.page_id, "status": "pending"}

    @operation("dismiss_recommendation", write=True)
    def dismiss_recommendation(self, call: Call, recommendation_id: str) -> RecommendResult:
        """The owner keeps the page a model recommended withdrawing: the recommendation is closed as dismissed
        (its audit event records the decision) and waits no more; the page is not touched. A model's
        `supersedes` is dismissed by unlinking it instead."""
        if not self.session.is_owner:
            raise Forbidden("Only the owner decides on a recommendation; a model client can only make one.")
        m = self._m
        rec = m.Recommendation.get_or_none((m.Recommendation.recommendation_id == recommendation_id)
                                           & (m.Recommendation.status == "pending"))
        if rec is None:
            raise NotFound(f"No pending recommendation {recommendation_id} (decided already, or its page erased).")
        rec.status = "dismissed"
        rec.save()
        page = m.Page.get_by_id(rec.page_id)
        call.scopes.add(page.scope.namespace)
        return {"recommendation_id": recommendation_id, "page_id": page.page_id, "status": "dismissed"}

    @operation("list_recommendations")
    def list_recommendations(self, call: Call, status: str = "pending", limit: int = 50) -> RecommendationList:
        """What models ask the owner to review, newest first: tombstone recommendations and, while
        pending, every model's live `supersedes` the owner has not confirmed with one of its own.

        A supersedes item (`action: "supersedes"`) names the page it would supersede (`page_id`),
        the newer page (`from_page_id`) and the model's `relation_id`; the owner confirms it by
        linking the same two pages with `supersedes` itself, or dismisses it by unlinking it.
        """
        self._require_somewhere("tombstone")
        m = self._m
        size = max(1, min(limit, 100))
        rows = (
            m.Recommendation.select(m.Recommendation, m.Page).join(m.Page)
            .where(m.Recommendation.status == status).order_by(m.Recommendation.id.desc()).limit(size)
        )
        items: list[Recommendation] = [
            {"recommendation_id": r.recommendation_id, "page_id": r.page.page_id, "action": r.action, "reason": r.reason,
             "actor": {"actor_type": r.actor_type, "actor_id": r.actor_id}, "status": r.status, "created_at": r.created_at}
            for r in rows
        ]
        if status == "pending":
            found = self._db.execute_sql(
                "SELECT r.relation_id, tp.page_id, fp.page_id, r.actor_type, r.actor_id, r.created_at FROM relation r "
                "JOIN page fp ON fp.id = r.from_page_id JOIN page tp ON tp.id = r.to_page_id "
                "WHERE r.relation_type = 'supersedes' AND r.retracted = 0 AND r.actor_type = 'model' "
                "AND NOT EXISTS (SELECT 1 FROM relation o WHERE o.from_page_id = r.from_page_id "
                "AND o.to_page_id = r.to_page_id AND o.relation_type = 'supersedes' AND o.retracted = 0 "
                "AND o.actor_type != 'model') ORDER BY r.id DESC LIMIT ?", (size,)).fetchall()
            items += [
                {"recommendation_id": rel_id, "relation_id": rel_id, "page_id": to_pid, "from_page_id": from_pid,
                 "action": "supersedes", "reason": f"{from_pid} supersedes this page",
                 "actor": {"actor_type": actor_type, "actor_id": actor_id}, "status": "pending", "created_at": created}
                for rel_id, to_pid, from_pid, actor_type, actor_id, created in found
            ]
            items = sorted(items, key=lambda r: r["created_at"], reverse=True)[:size]
        return {"recommendations": items}

    @operation("suppress_pages", write=True)
    def suppress_pages(self, call: Call, page_ids: Any, context_id: str, reason: str | None = None,
                       expires_at: str | None = None) -> SuppressResult:
        """Hide pages from searches and bundles that pass this context id, and only there."""
        ctx = self._context(context_id)
        reason = v.optional_reason(reason)
        expires = v.optional_time(expires_at, "expires_at")
        pages = [self._page_row(pid, call, "suppress") for pid in self._page_list(page_ids)]
        m = self._m
        stamp = ids.now()
        key = self._context_key(ctx)
        for page in pages:
            m.Suppression.insert(
                page=page.id, context_id=key, reason=reason, expires_at=expires, actor_type=self.session.actor_type,
                actor_id=self.session.principal_id, created_at=stamp,
            ).on_conflict(
                conflict_target=[m.Suppression.context_id, m.Suppression.page],
                update={m.Suppression.reason: reason, m.Suppression.expires_at: expires, m.Suppression.created_at: stamp},
            ).execute()
        call.counts["pages"] = len(pages)
        return {"context_id": ctx, "suppressed": [p.page_id for p in pages]}

    @operation("unsuppress_pages", write=True)
    def unsuppress_pages(self, call: Call, page_ids: Any, context_id: str) -> UnsuppressResult:
        """Lift the suppressions of these pages in this context."""
        ctx = self._context(context_id)
        pages = [self._page_row(pid, call, "suppress") for pid in self._page_list(page_ids)]
        m = self._m
        done = []
        for page in pages:
            if m.Suppression.delete().where((m.Suppression.page == page.id)
                                            & (m.Suppression.context_id == self._context_key(ctx))).execute():
                done.append(page.page_id)
        call.counts["pages"] = len(done)
        return {"context_id": ctx, "unsuppressed": done}

    @operation("suppression_contexts")
    def suppression_contexts(self, call: Call, limit: int | None = None) -> SuppressionContextList:
        """The contexts this caller has pages suppressed in now, the most recently used first, with how many pages
        each hides: what a front end offers when it asks for a context id. A model client sees only its own
        contexts (as it named them); the owner sees the ones it made (a client's are qualified, not the owner's)."""
        size = clamp(limit, LIMITS["default_hits"], LIMITS["max_list"])
        mine = self._context_key("")  # "" for the owner; "<principal>/" for a client
        rows = self._db.execute_sql(
            "SELECT context_id, COUNT(*), MAX(created_at) FROM suppression WHERE (expires_at IS NULL OR expires_at > ?) "
            "AND actor_type = ? AND actor_id = ? AND substr(context_id, 1, ?) = ? GROUP BY context_id "
            "ORDER BY MAX(created_at) DESC, context_id LIMIT ?",
            (ids.now(), self.session.actor_type, self.session.principal_id, len(mine), mine, size)).fetchall()
        call.counts["contexts"] = len(rows)
        return {"contexts": [{"context_id": r[0][len(mine):], "pages": r[1], "last_at": r[2]} for r in rows]}

    @staticmethod
    def _context(context_id: Any) -> str:
        if not isinstance(context_id, str) or not context_id.strip() or len(context_id) > 200:
            raise Invalid("A suppression needs a context id (a task, conversation or query id) of at most 200 characters.")
        return context_id

    @staticmethod
    def _page_list(page_ids: Any) -> list[str]:
        items = [page_ids] if isinstance(page_ids, str) else list(page_ids or [])
        if not items:
            raise Invalid("Name at least one page.")
        return list(dict.fromkeys(items))
