"""The plans of agent sessions made elsewhere than in their turn (issue 31): a helper process's, or this process's
ahead of its turn while the helper plans the session it wants next, so that neither plans a session the other does.

A helper (store/import_helper.py) plans the sessions in order. When the importer wants a session the helper is
still planning, it does not wait idle, nor plan that one too: it tells the helper it takes a session further on
(two past the one the helper is on; the helper skips it) and plans it now, as the helper would (new pages, their
index text made), holding the plan until its turn. Planning ahead needs the sessions made out of turn: a session
source whose `at(index)` makes any session, in any order, the same as in order (claude_code's `_Sessions`)."""

from __future__ import annotations

from typing import Any, Callable, Protocol, cast

from .. import import_helper
from .agents import AgentSession, helper_answer


class Sessions(Protocol):
    read: bytes | None  # every file as read, digested (once `stamp` was asked)

    def __len__(self) -> int: ...
    def at(self, index: int) -> AgentSession | None: ...
    def stamp(self, index: int) -> tuple[tuple[str, str], bytes]: ...


class SharedPlans:
    """The plan of each session made elsewhere, by index (`write_sessions`' `ready`): the helper's, or one this
    process made ahead while the helper planned the session it wanted next (so neither plans a session twice)."""

    def __init__(self, source: str, helper: import_helper.ImportHelper, sessions: Sessions, with_tools: bool) -> None:
        self.source, self.helper, self.sessions, self.with_tools = source, helper, sessions, with_tools
        self.ahead: dict[int, tuple[str, Any]] = {}  # index -> the plan made here, ahead
        self.failed = False  # one failed ahead: the rest is planned in its turn (where it fails as it would have)

    def __call__(self, index: int) -> tuple[str, Any] | None:
        """The plan of the session at `index` made ahead here, or the helper's if it read every file as this process
        did (when the tool wrote to one between the two reads, every session is planned here, from what this
        process read, and the helper is ended); None: plan it now, in order."""
        if index in self.ahead:
            return self.ahead.pop(index)
        answer = self.helper(index, self._plan_ahead)
        if answer is None:
            return None
        stamp = answer[0] if isinstance(answer, tuple) and len(answer) == 2 else None
        if not isinstance(stamp, tuple) or stamp != self.sessions.stamp(index):
            if not isinstance(stamp, tuple) or len(stamp) != 2 or stamp[1] != self.sessions.read:
                self.helper.close()  # (it read other files than this process, or answers no plan: none will do)
            return None
        return cast("tuple[str, Any]", answer[1])

    def _plan_ahead(self, index: int, reserve: Callable[[], None]) -> bool:
        """Plan the session at `index` now, as the helper would (held until its turn; import_helper.AHEAD_AT_MOST)."""
        if self.failed or len(self.ahead) >= import_helper.AHEAD_AT_MOST or index >= len(self.sessions):
            return False
        reserve()
        try:
            self.ahead[index] = helper_answer(self.source, self.sessions.at(index), self.with_tools, self.helper.salt)
        except Exception:  # noqa: BLE001 (planned again in its turn, in order, which says why it fails)
            self.failed = True
            return False
        return True
