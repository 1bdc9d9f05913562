"""The command palette's search: a command is found by its title and by what it does (its help and keywords).

Textual's own provider matches the title only, so "export" would not find "Your rights" and "high contrast"
would not find "Theme: pcp-high-contrast". Here a title that fuzzy-matches ranks first; after it every command
whose title, help or keywords hold each word of the query (hyphens count as spaces).
"""

from __future__ import annotations

import re

from textual.command import DiscoveryHit, Hit, Hits
from textual.content import Content
from textual.system_commands import SystemCommandsProvider

# Words people may look for that a command's title and help do not already say.
KEYWORDS = {
    "Your rights": "export download backup erase delete scope audit log receipts privacy",
    "Handoff": "basket bundle copy clipboard chat ledger continue",
    "Reviews": "recommendations tombstone model suggestions",
    "Import": "chats notes export file load",
    "Sync": "machines laptop desktop folder conflicts pair devices",
    "Help": "keys keyboard shortcuts bindings",
    "Quit": "exit close leave",
}


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def described(title: str, help_text: str) -> str:
    """Everything a command can be found by, as one casefolded line of words."""
    return " ".join(words(f"{title} {help_text} {KEYWORDS.get(title, '')}"))


class PcpCommands(SystemCommandsProvider):
    """Every command of this screen and the app (App.get_system_commands), found by title or by what it does."""

    async def discover(self) -> Hits:
        """The empty palette: the app's screens first, in F-key order (f5 Import and f7 Sync are on no footer),
        then every other command by name."""
        from .commands import COMMANDS

        screens = [c.title for c in sorted((c for c in COMMANDS if c.where == "app" and c.keys[:1] == "f"
                                            and c.keys[1:].isdigit()), key=lambda c: int(c.keys[1:]))]
        found = list(self.app.get_system_commands(self.screen))
        first = sorted((c for c in found if c[0] in screens), key=lambda c: screens.index(c[0]))
        for name, help_text, callback, *rest in first + sorted((c for c in found if c[0] not in screens),
                                                               key=lambda c: c[0]):
            if not rest or rest[0]:  # (a command can ask to stay out of the discovery list)
                yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        wanted = words(query)
        for name, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, text=name, help=help_text)
                continue
            haystack = f" {described(name, str(help_text))}"
            if wanted and all(f" {w}" in haystack for w in wanted):  # each word starts a word of the description
                yield Hit(0.3, Content(name), callback, text=name, help=help_text)
