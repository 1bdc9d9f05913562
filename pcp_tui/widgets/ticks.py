"""A checkbox and a selection list whose box is empty when off: Textual draws its X in both states (only the
colour differs), which read as ticked on an erasure dialog (report 21, item 18)."""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.widgets import Checkbox, SelectionList

from ..compat import ToggleButtonHook

OFF = " "


class Tick(ToggleButtonHook, Checkbox):
    def drawn_button(self) -> Content:
        """As Textual draws it (toggle_button.py), with the inner mark only when the box is on."""
        button_style = self.get_visual_style("toggle--button")
        side_style = Style(foreground=button_style.background, background=self.background_colors[1])
        inner = self.BUTTON_INNER if self.value else OFF * len(self.BUTTON_INNER)
        return Content.assemble((self.BUTTON_LEFT, side_style), (inner, button_style), (self.BUTTON_RIGHT, side_style))


class TickList(SelectionList[str]):
    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) > 2 and segments[1].text == Checkbox.BUTTON_INNER:
            index = (segments[1].style.meta if segments[1].style else {}).get("option")
            if index is not None and self.get_option_at_index(index).value not in self.selected:
                segments[1] = Segment(OFF * len(segments[1].text), segments[1].style)
                return Strip(segments, strip.cell_length)
        return strip
