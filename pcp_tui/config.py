"""The app's own files in the user config dir: config.toml (chosen theme), keymap.toml, themes/."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .commands import KNOWN_IDS


def config_dir() -> Path:
    """<platformdirs user_config_dir("pcp")>, or $PCP_CONFIG_DIR when set (tests, portable setups)."""
    env = os.environ.get("PCP_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("pcp", appauthor=False))


@dataclass
class Settings:
    """What the app remembers between runs."""

    theme: str | None = None
    sync_folder: str | None = None  # the folder the app syncs through (asked the first time)
    problems: list[str] = field(default_factory=list)


def load_settings(folder: Path) -> Settings:
    """config.toml; a broken file gives a problem to report, never an exception."""
    path = folder / "config.toml"
    if not path.exists():
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Settings(problems=[f"{path} could not be read ({exc}); using the defaults."])
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        return Settings(problems=[f"{path}: theme must be a name in quotes; using the default theme."])
    sync_folder = data.get("sync_folder")
    if sync_folder is not None and not isinstance(sync_folder, str):
        return Settings(theme=theme, problems=[f"{path}: sync_folder must be a path in quotes; it is asked again."])
    return Settings(theme=theme, sync_folder=sync_folder)


def save_theme(folder: Path, theme: str) -> str | None:
    """Remember the chosen theme; returns a problem sentence when the file cannot be written."""
    path = folder / "config.toml"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        if path.exists():
            lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.strip().startswith("theme")]
        escaped = theme.replace("\\", "\\\\").replace('"', '\\"')
        path.write_text("\n".join([f'theme = "{escaped}"', *lines]) + "\n", encoding="utf-8")
    except OSError as exc:
        return f"The theme choice could not be saved to {path} ({exc.strerror or exc})."
    return None


def save_sync_folder(folder: Path, sync_folder: str) -> str | None:
    """Remember the sync folder (config.toml `sync_folder`); returns a problem sentence when it cannot be written."""
    path = folder / "config.toml"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        if path.exists():
            lines = [ln for ln in path.read_text(encoding="utf-8").splitlines()
                     if not ln.strip().startswith("sync_folder")]
        escaped = sync_folder.replace("\\", "\\\\").replace('"', '\\"')
        path.write_text("\n".join([*lines, f'sync_folder = "{escaped}"']) + "\n", encoding="utf-8")
    except OSError as exc:
        return f"The sync folder could not be saved to {path} ({exc.strerror or exc})."
    return None


def load_keymap(folder: Path) -> tuple[dict[str, str], list[str]]:
    """keymap.toml: binding id -> keys (comma separated). Returns (keymap, problems)."""
    path = folder / "keymap.toml"
    if not path.exists():
        return {}, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, [f"The keymap {path} could not be read ({exc}); the default keys are in use."]
    if isinstance(data.get("keys"), dict):  # either flat, or under a [keys] table
        data = data["keys"]
    keymap, problems = {}, []
    for binding_id, keys in data.items():
        if binding_id not in KNOWN_IDS:
            problems.append(f"keymap.toml: there is no command {binding_id!r}; see the help screen for the ids.")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f"keymap.toml: {binding_id} needs keys in quotes, e.g. {binding_id} = \"ctrl+k\".")
        else:
            keymap[binding_id] = ",".join(k.strip() for k in keys.split(",") if k.strip())
    return keymap, problems


CHATS_FILE = "chats.toml"  # the last chat handed context, per store: "<store path>" = "label"


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped (TOML refuses them raw)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _chats(folder: Path) -> dict[str, str]:
    try:
        data = tomllib.loads((folder / CHATS_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # no file, or a broken one: nothing remembered (it is a convenience, rewritten on the next copy)
    return {k: v for k, v in data.items() if isinstance(v, str)}


def last_chat(folder: Path, store_path: Path) -> str | None:
    """The chat this store last handed context to (chats.toml), or None."""
    return _chats(folder).get(str(Path(store_path).resolve()))


def save_last_chat(folder: Path, store_path: Path, label: str) -> str | None:
    """Remember the last chat of a store; returns a problem sentence when the file cannot be written."""
    path = folder / CHATS_FILE
    chats = _chats(folder)
    chats[str(Path(store_path).resolve())] = label
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{_toml_string(k)} = {_toml_string(v)}\n" for k, v in chats.items()),
                        encoding="utf-8")
    except OSError as exc:
        return f"The last chat could not be saved to {path} ({exc.strerror or exc})."
    return None
