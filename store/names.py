"""What a new namespace may be (pcp-core.md section 2): NFC, no invisible or line-breaking characters,
and not a look-alike of a scope that already exists.

A look-alike is found the way Unicode TR39 finds confusable identifiers: two names whose skeletons are
equal look the same to a reader. The skeleton is the NFD form with default-ignorable characters
removed, each character replaced by its prototype from Unicode's confusables.txt (store/data, with
its licence), then NFD again. Existing scopes are never renamed: a store holding names that would now
be refused reports them (`pcp doctor`).
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

from .errors import Conflict, Invalid

# Control, format (zero-width, bidi, soft hyphen), line and paragraph separators, and lone surrogates.
REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible format character (zero-width, bidi)",
                      "Zl": "a line separator", "Zp": "a paragraph separator", "Cs": "a lone surrogate"}

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties): removed before the skeleton is taken.
_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
_LINE = re.compile(r"^([0-9A-F]{4,6})\s*;\s*([0-9A-F ]+?)\s*;")


class LookAlike(Conflict):
    """A new namespace that reads the same as an existing scope's (the owner may confirm it)."""

    def __init__(self, message: str, existing: str, namespace: str | None = None) -> None:
        super().__init__(message)
        self.existing = existing
        self.namespace = namespace  # the new name, when the caller did not choose it (a scope of an export file)


def refused_character(namespace: str) -> str | None:
    """Why `namespace` may not be a new scope's name (its first refused character), or None."""
    for ch in namespace:
        what = REFUSED_CATEGORIES.get(unicodedata.category(ch))
        if what:
            return f"{codepoint(ch)}, {what}"
    return None


def codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}" + (f" {unicodedata.name(ch)}" if unicodedata.name(ch, "") else "")


def shown(namespace: str) -> str:
    """A namespace as one printable line: refused characters and non-ASCII letters as \\u escapes."""
    return "".join(ch if ch.isascii() and ch.isprintable() else f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF
                   else f"\\U{ord(ch):08x}" for ch in namespace)


def nfc(namespace: str) -> str:
    return namespace if namespace.isascii() else unicodedata.normalize("NFC", namespace)


def new_namespace(namespace: str) -> str:
    """The name a new scope gets: `namespace` in NFC; Invalid when it holds a refused character."""
    why = refused_character(namespace)
    if why:
        raise Invalid(f"The namespace {shown(namespace)} holds {why}; a namespace may not hold control, format "
                      "(zero-width, bidi) or line characters. Choose a name without it.")
    return nfc(namespace)


def importable(text: str, always: bool = False) -> str:
    """`text` as part of a name an importer makes (a vault's or a conversation's): as it is when a new scope
    could be named with it, else in NFC without the refused characters and with a digest of the exact text
    after "~" (so two texts never share one). `always` adds the digest anyway (a look-alike of another scope)."""
    if not always and refused_character(text) is None and nfc(text) == text:
        return text
    kept = "".join(ch for ch in nfc(text) if refused_character(ch) is None).strip() or "unnamed"
    return f"{kept}~{digest(text)}"


@lru_cache(maxsize=1)
def _prototypes() -> dict[int, str | None]:
    """confusables.txt as a str.translate table (default-ignorable characters map to nothing)."""
    text = resources.files("store").joinpath("data/confusables.txt").read_text(encoding="utf-8-sig")
    out: dict[int, str | None] = {}
    for line in text.splitlines():
        found = _LINE.match(line)
        if found:
            out[int(found.group(1), 16)] = "".join(chr(int(c, 16)) for c in found.group(2).split())
    for lo, hi in _IGNORABLE:
        out.update(dict.fromkeys(range(lo, hi + 1)))
    return out


def skeleton(namespace: str) -> str:
    """The TR39 skeleton: equal skeletons read the same (`project:alpha`, `project:аlpha`, `project:ａlpha`)."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", namespace).translate(_prototypes()))


def digest(text: str, chars: int = 10) -> str:
    """A short digest of the exact text (what keeps two lossy renderings of different names apart)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


class SkeletonIndex:
    """The skeletons of a store's scopes, kept up to date from the scope table (shared by one Store).

    Rows newer than the last one read are read by id. A name left from a scope deleted since does no
    harm (a match is confirmed against the table before it refuses anything); when the last row read is
    gone or holds another name (its id taken again), the index is read anew."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_skeleton: dict[str, set[str]] = {}
        self._mark: tuple[int, str] = (0, "")  # the last scope row read: (id, namespace)

    def look_alike(self, db: Any, namespace: str) -> str | None:
        """An existing scope other than `namespace` whose skeleton equals its skeleton, or None."""
        key = skeleton(namespace)
        with self._lock:
            last, name = self._mark
            if last and db.execute_sql("SELECT namespace FROM scope WHERE id = ?", (last,)).fetchone() != (name,):
                self._by_skeleton, self._mark, last = {}, (0, ""), 0
            for row_id, row_name in db.execute_sql("SELECT id, namespace FROM scope WHERE id > ? ORDER BY id",
                                                   (last,)):
                self._by_skeleton.setdefault(skeleton(row_name), set()).add(row_name)
                self._mark = (row_id, row_name)
            found = sorted(self._by_skeleton.get(key, set()) - {namespace})
        if not found:
            return None
        marks = ",".join("?" * len(found))
        rows = db.execute_sql(f"SELECT namespace FROM scope WHERE namespace IN ({marks}) ORDER BY namespace",
                              found).fetchall()
        return rows[0][0] if rows else None


def refused_scopes(names: Iterable[str]) -> list[dict[str, str]]:
    """Existing scopes a new scope could not be named like now: {namespace (escaped), why} (for `pcp doctor`)."""
    whys: dict[str, list[str]] = {}
    by_skeleton: dict[str, list[str]] = {}
    for name in names:
        why = refused_character(name)
        if why:
            whys.setdefault(name, []).append(f"holds {why}")
        elif nfc(name) != name:
            whys.setdefault(name, []).append("is not in NFC (Unicode's composed form)")
        by_skeleton.setdefault(skeleton(name), []).append(name)
    for group in by_skeleton.values():
        first, *others = sorted(group, key=lambda n: (n in whys, n))  # a name with no other fault is the original
        for name in others:
            whys.setdefault(name, []).append(f"looks like {shown(first)}")
    return [{"namespace": shown(name), "why": "; ".join(why)} for name, why in sorted(whys.items())]
