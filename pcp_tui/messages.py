"""Messages that thread workers post back to the UI, and the one place that reports worker errors.

Workers never touch widgets: they call the store, then `post_message` one of these.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message
from textual.worker import Worker, WorkerState


class StoreWorkers:
    """Mixin for screens and widgets that run store calls in workers: errors become notifications."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.app.report_error(event.worker.error)  # type: ignore[attr-defined]


class Done(Message):
    """A store call finished: `what` names it, `result` is its plain-data answer."""

    def __init__(self, what: str, result: Any, context: Any = None) -> None:
        super().__init__()
        self.what, self.result, self.context = what, result, context


class Progress(Message):
    """Long work moved on; consecutive reports of one task replace each other in the queue."""

    def __init__(self, task: str, done: int, total: int | None, unit: str = "") -> None:
        super().__init__()
        self.task, self.done, self.total, self.unit = task, done, total, unit

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress) and message.task == self.task


class StoreReady(Message):
    """The store is open (and filled, for the demo); `empty` says whether it holds any page."""

    def __init__(self, store: Any, empty: bool, demo: bool) -> None:
        super().__init__()
        self.store, self.empty, self.demo = store, empty, demo


class OpenPage(Message):
    """Show this page in the inspector (following a relation, a search pick, a recommendation)."""

    def __init__(self, page_id: str) -> None:
        super().__init__()
        self.page_id = page_id


class StoreChanged(Message):
    """Something was written: lists and the inspector should reload what they show."""

    def __init__(self, page_id: str | None = None, removed: bool = False) -> None:
        super().__init__()
        self.page_id, self.removed = page_id, removed
