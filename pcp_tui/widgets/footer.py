"""A footer that never cuts a key mid-word: keys that do not fit whole are left out (F1 and the palette list all)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FitFooter(Footer):
    """Textual's compact footer, with the keys that do not fit entirely hidden instead of cut off.

    Textual's footer composes its keys again whenever the screen's bindings may have changed (every focus
    change, every `refresh_bindings`): a dozen widgets removed, mounted, styled and laid out, 40-80 ms of
    the loop on a slow machine (bench/tui_bench.py). This one does that only when the keys it would show
    are not the ones it shows.
    """

    _shown: tuple | None = None

    def _keys(self, screen: Screen) -> tuple:
        """What compose would show: each shown binding's key, label, description, action and state."""
        keys = tuple((binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                      binding.group, enabled, tooltip)
                     for (_, binding, enabled, tooltip) in screen.active_bindings.values() if binding.show)
        return keys + (self.show_command_palette, self.compact)

    def bindings_changed(self, screen: Screen) -> None:
        if self._bindings_ready and self.is_attached and screen is self.screen and self.app.app_focus:
            if self._keys(screen) == self._shown:
                return
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        if self.is_attached and self._bindings_ready:
            self._shown = self._keys(self.screen)
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
