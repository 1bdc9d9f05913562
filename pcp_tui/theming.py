"""Themes as data files: the shipped ones (package `pcp_tui.themes`) and the user's (<config dir>/themes/).

(The loader lives here because `pcp_tui.themes` is the data package itself.) A theme file is TOML
or JSON with Textual's theme fields plus a `variables` table; the app-specific variables below
are declared with defaults so every theme may omit them. A broken file is reported, then skipped.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "pcp-dark"

# App-specific colours; every colour the app draws comes from a theme variable.
VARIABLE_DEFAULTS: dict[str, str] = {
    "lifecycle-active": "#4EBF71",
    "lifecycle-superseded": "#8A8A8A",
    "lifecycle-archived": "#D7A13A",
    "lifecycle-tombstoned": "#C0506A",
    "diff-added": "#7CD992",
    "diff-added-background": "#173D24",
    "diff-removed": "#F08A9B",
    "diff-removed-background": "#4A1A24",
    "diff-header": "#6FB3F2",
    "search-match": "#FFD75F",
    "basket-mark": "#FFA62B",
    "graph-node": "#6FB3F2",
    "graph-edge": "#8A8A8A",
    "graph-root": "#FFA62B",
}

COLOUR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
                 "surface", "panel", "boost")


@dataclass
class LoadedThemes:
    themes: list[Theme] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_theme(data: Any, origin: str) -> Theme:
    """A Theme from a decoded theme file; ValueError with a readable sentence when it is not one."""
    if not isinstance(data, dict):
        raise ValueError(f"{origin} is not a table of theme fields")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{origin} has no name")
    if not isinstance(data.get("primary"), str):
        raise ValueError(f"{origin} has no primary colour")
    kwargs: dict[str, Any] = {"name": name.strip()}
    for key in COLOUR_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        _check_colour(value, f"{origin}: {key}")
        kwargs[key] = value
    for key, kind in (("dark", bool), ("luminosity_spread", (int, float)), ("text_alpha", (int, float))):
        if key in data:
            if not isinstance(data[key], kind):
                raise ValueError(f"{origin}: {key} has the wrong type")
            kwargs[key] = data[key]
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items()):
        raise ValueError(f"{origin}: variables must be a table of names to quoted values")
    for key, value in variables.items():
        if key in VARIABLE_DEFAULTS:
            _check_colour(value, f"{origin}: variables.{key}")
    kwargs["variables"] = dict(variables)
    return Theme(**kwargs)


def _check_colour(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a colour in quotes")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"{where} is not a colour ({value!r})") from None


def _decode(text: str, suffix: str) -> Any:
    return json.loads(text) if suffix == ".json" else tomllib.loads(text)


def load_file(path: Path) -> Theme:
    """One theme file (TOML or JSON)."""
    try:
        data = _decode(path.read_text(encoding="utf-8"), path.suffix.lower())
    except (OSError, UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path.name} could not be read ({exc})") from None
    return parse_theme(data, path.name)


def shipped_folder() -> Traversable | None:
    """Where the shipped theme files are, the same from a wheel, an editable install and a source checkout.

    Installed, the top-level themes/ folder is the package `pcp_tui.themes` (pyproject maps it). A source
    checkout run from its root (`python -m pcp_tui.launch`, as `pcp serve` spawns it) imports the pcp_tui/
    beside it, which has no such subpackage: there the themes are the themes/ folder next to pcp_tui/.
    """
    try:
        return resources.files("pcp_tui.themes")
    except ModuleNotFoundError:
        folder = Path(__file__).resolve().parent.parent / "themes"
        return folder if folder.is_dir() else None


def shipped_themes() -> LoadedThemes:
    """The themes that ship with the app (pcp_tui.themes, or themes/ in a source checkout)."""
    out = LoadedThemes()
    folder = shipped_folder()
    if folder is None:
        out.problems.append("The shipped themes were not found; using Textual's own theme.")
        return out
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".toml", ".json")):
            try:
                out.themes.append(parse_theme(_decode(entry.read_text(encoding="utf-8"), Path(entry.name).suffix),
                                              entry.name))
            except (ValueError, tomllib.TOMLDecodeError) as exc:
                out.problems.append(f"The shipped theme {entry.name} is broken ({exc}).")
    return out


def user_themes(config_folder: Path) -> LoadedThemes:
    """Themes the user put in <config dir>/themes/ (a broken one becomes a problem to report)."""
    out = LoadedThemes()
    folder = config_folder / "themes"
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in (".toml", ".json"):
            continue
        try:
            out.themes.append(load_file(path))
        except ValueError as exc:
            out.problems.append(f"Theme file {exc}; it was skipped.")
    return out
