"""Files pcp writes beside the store: paths that stay inside their folder, modes only the user can read."""

from __future__ import annotations

import glob
import errno
import os
from typing import Any
import time
from pathlib import Path

from .errors import Invalid


def inside(base: Path, name: str) -> Path:
    """`base / name`, refused unless it is a plain file name that stays inside `base`."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or "\x00" in name or name in (".", ".."):
        raise Invalid(f"{name[:40]!r} is not a safe file name; nothing was written.")
    target = (base / name).resolve()
    if target.parent != base.resolve():
        raise Invalid(f"{name[:40]!r} would be written outside {base}; nothing was written.")
    return target


SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def store_files(db_path: Path) -> list[Path]:
    """The store file and the side files SQLite and pcp keep beside it."""
    return [db_path] + [db_path.with_name(db_path.name + s) for s in SIDE_SUFFIXES]


def refuse_store_target(out: Path, db_path: Path) -> None:
    """Refuse an output path that is the store or one of its side files (it would replace the live data)."""
    target = out.expanduser().resolve()
    for own in store_files(Path(db_path).expanduser().resolve()):
        same = target == own
        if not same and target.exists() and own.exists():
            try:
                same = target.samefile(own)
            except OSError:
                same = False
        if same:
            raise Invalid(f"{out} is the store itself or one of its side files; choose another output path.")


def make_private_dirs(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700; folders that already exist keep their mode."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it first: not ours to change
        os.chmod(path, 0o700)  # whatever the umask


def make_private_file(path: Path) -> None:
    """Create `path` empty as 0600 if it is missing; an existing file of ours is narrowed to 0600."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except FileExistsError:
        pass
    narrow(path)


def narrow(path: Path) -> None:
    """Take group and other bits off an existing file (no-op when missing or not ours)."""
    try:
        mode = path.stat().st_mode
        if path.is_file() and (mode & 0o077):
            os.chmod(path, mode & 0o700)
    except OSError:
        pass


def open_private(path: Path, mode: str = "wb", fresh: bool = False) -> Any:
    """Open a file for writing as 0600 whatever the umask; `fresh`: one that must not exist yet. A link at that
    name is refused, never written through (nor its target's mode changed): `--out` given a link to a file
    elsewhere wrote over that file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | (os.O_EXCL if fresh else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Invalid(f"{path} is a link; pcp never writes through a link: choose another path. "
                          "Nothing was written.") from None
        raise
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""}))


class ExportFolder:
    """The folder a Markdown export writes into, written only inside: never through a link.

    A link directly under it is refused before anything is written (it could point anywhere); folders
    and files are opened relative to the folder's own descriptor without following links, and a file
    that is already there (a link, or a hard link to a file elsewhere) is replaced, never written through.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        for entry in os.scandir(out):
            if entry.is_symlink():
                raise Invalid(f"{out / entry.name} is a link; an export writes only inside {out}: remove the link "
                              "or export to a new folder. Nothing was written.")
        self._fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)

    def close(self) -> None:
        os.close(self._fd)

    def write(self, folder: str, name: str, text: str) -> None:
        """Write `text` to `folder/name` (one level down), replacing whatever entry had that name."""
        try:
            os.mkdir(folder, 0o700, dir_fd=self._fd)
            fresh = True
        except FileExistsError:
            fresh = False
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=self._fd)
        except OSError:
            raise Invalid(f"{self.out / folder} is a link or not a folder; an export writes only inside {self.out}: "
                          "remove it or export to a new folder.") from None
        try:
            if fresh:
                os.fchmod(dfd, 0o700)  # whatever the umask
            try:
                os.unlink(name, dir_fd=dfd)  # a link or a hard link is replaced, its target left alone
            except FileNotFoundError:
                pass
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        finally:
            os.close(dfd)


def folder_warnings(db_path: Path) -> list[str]:
    """Warnings about who else can read the store's folder (for `pcp doctor`)."""
    folder = Path(db_path).parent
    try:
        mode = folder.stat().st_mode & 0o777
    except OSError:
        return []
    if mode & 0o044:
        who = " and ".join(w for w, bit in (("group", 0o040), ("others", 0o004)) if mode & bit)
        return [f"The store's folder {folder} is readable by {who} (mode {mode:o}); "
                f"run `chmod 700 {folder}` so only you can list it."]
    return []


def temp_beside(out: Path) -> Path:
    """The temporary file an export is written to before it replaces `out` (its pid tells a live writer)."""
    return out.with_name(f".{out.name}.{os.getpid()}.{int(time.time() * 1000)}.tmp")


def leftover_temps(out: Path) -> list[Path]:
    """Temporary files of exports to `out` that are still on disk (a killed export leaves one)."""
    try:
        return sorted(p for p in out.parent.glob(f".{glob.escape(out.name)}.*.tmp") if p.is_file())
    except OSError:
        return []


def _writer_alive(tmp: Path) -> bool:
    parts = tmp.name.rsplit(".", 3)
    try:
        pid = int(parts[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_dead_temps(out: Path) -> int:
    """Remove the leftovers of killed exports to `out` (a running export keeps its file); returns how many."""
    removed = 0
    for tmp in leftover_temps(out):
        if not _writer_alive(tmp):
            try:
                tmp.unlink()
                removed += 1
            except OSError:
                pass
    return removed
