"""A footer that never cuts a key mid-word: keys that do not fit whole are left out (F1 and the palette list all)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual.screen import Screen
from textual.widgets import Footer

from ..compat import footer_parts, set_footer_key_enabled

if TYPE_CHECKING:
    from ..compat import FooterKeyType

FooterKey, KeyGroup = footer_parts()


ALWAYS_SHOWN = frozenset({"help", "quit"})  # at any width: how to get help and how to leave


class FitFooter(Footer):
    """Textual's compact footer, with the keys that do not fit entirely hidden instead of cut off.

    Textual's footer composes its keys again whenever the screen's bindings may have changed (every focus
    change, every `refresh_bindings`): a dozen widgets removed, mounted, styled and laid out, 40-80 ms of
    the loop on a slow machine (bench/tui_bench.py). This one does nothing when the keys it would show are
    the ones it shows, and otherwise changes the key widgets it has in place (removing or adding only the
    difference); it composes again only for grouped keys or a change of the palette key or compact mode.
    """

    _shown: tuple[Any, ...] | None = None

    def _keys(self, screen: Screen[Any]) -> tuple[Any, ...]:
        """What compose would show: each shown binding's key, label, description, action and state."""
        keys = tuple((binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                      binding.group, enabled, tooltip)
                     for (_, binding, enabled, tooltip) in screen.active_bindings.values() if binding.show)
        return keys + (self.show_command_palette, self.compact)

    @staticmethod
    def _plain(keys: tuple[Any, ...]) -> list[tuple[Any, ...]] | None:
        """Of `_keys`, what compose would show (the first binding of each action, in order), or None when any
        is grouped (compose draws groups with widgets of their own)."""
        first: dict[str, tuple[Any, ...]] = {}
        for key, display, description, action, group, enabled, tooltip in keys[:-2]:
            if group is not None:
                return None
            first.setdefault(action, (key, display, description, action, enabled, tooltip))
        return list(first.values())

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self._bindings_ready and self.is_attached and screen is self.screen and self.app.app_focus:
            keys = self._keys(screen)
            if keys == self._shown:
                return
            if self._shown is not None and keys[-2:] == self._shown[-2:] and self._in_place(keys):
                return
        super().bindings_changed(screen)

    def _in_place(self, keys: tuple[Any, ...]) -> bool:
        plain = self._plain(keys)
        if plain is None or self.query(KeyGroup):
            return False
        widgets = list(self.query(FooterKey))
        palette = [w for w in widgets if w.has_class("-command-palette")]
        shown = [w for w in widgets if w not in palette]
        for widget, (key, display, description, action, enabled, tooltip) in zip(shown, plain, strict=False):
            widget.key, widget.key_display, widget.description, widget.action = key, display, description, action
            set_footer_key_enabled(widget, enabled)
            widget.set_class(not enabled, "-disabled")
            widget.tooltip = tooltip or None
            widget.display = True
            widget.refresh(layout=True)
        for widget in shown[len(plain):]:
            widget.remove()
        more = [FooterKey(key, display, description, action, disabled=not enabled, tooltip=tooltip)
                .data_bind(compact=Footer.compact) for (key, display, description, action, enabled, tooltip)
                in plain[len(shown):]]
        if more:
            self.mount_all(more, before=palette[0] if palette else None)
        self.styles.grid_size_columns = len(plain)
        self._shown = keys
        self.call_after_refresh(self._fit)
        return True

    async def recompose(self) -> None:
        if self.is_attached and self._bindings_ready:
            self._shown = self._keys(self.screen)
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Keys that do not fit whole are hidden, from the right; help, quit and the keys the screen pins (what
        acts on the selection) are always kept, and the others share what room they leave."""
        if not self.is_attached:
            return  # (a screen closed before its footer was fitted)
        keys = list(self.query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        pins = ALWAYS_SHOWN | set(getattr(self.screen, "footer_pins", lambda: ())())
        pinned = [k for k in keys if k not in palette and k.action in pins]
        room = self.size.width - sum(self._width(k) for k in palette) - sum(self._width(k) for k in pinned)
        used, full = 0, False
        for key in keys:
            if key in palette:
                continue
            if key in pinned:
                key.display = True
                continue
            used += self._width(key)
            full = full or used > room
            key.display = not full

    @staticmethod
    def _width(key: FooterKeyType) -> int:
        """Cells a compact key takes: its key, a space, its description and the gap after it."""
        return cell_len(key.key_display) + 1 + cell_len(key.description) + 1
