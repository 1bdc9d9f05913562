"""The command palette's search: a command is found by its title and by what it does (its help and keywords).

Textual's own provider matches the title only, so "export" would not find "Your rights" and "high contrast"
would not find "Theme: pcp-high-contrast". Here a title that fuzzy-matches ranks first; after it every command
whose title, help or keywords hold each word of the query (hyphens count as spaces).
"""

from __future__ import annotations

import re

from textual.command import Hit, Hits
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
