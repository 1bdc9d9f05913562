"""A footer that never cuts a key mid-word: keys that do not fit whole are left out (F1 and the palette list all)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FitFooter(Footer):
    """Textual's compact footer, with the keys that do not fit entirely hidden instead of cut off."""

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        room = self.size.width - sum(self._width(k) for k in palette)
        used, full = 0, False
        for key in keys:
            if key in palette:
                continue
            used += self._width(key)
            full = full or used > room
            key.display = not full

    @staticmethod
    def _width(key: FooterKey) -> int:
        """Cells a compact key takes: its key, a space, its description and the gap after it."""
        return cell_len(key.key_display) + 1 + cell_len(key.description) + 1
