"""A folder of Markdown notes (an Obsidian vault): one page per note, wikilinks as relations.

Pass 1 writes every note (one transaction each), pass 2 its relations (one transaction
each), so a link always finds its target page. Link targets resolve the way Obsidian
resolves them: by note name without `.md`, case-insensitively; of two notes with the
same name the one in the linking note's folder wins, else the one with the shortest
path; a target with a `/` resolves by path. `.canvas` files become pages too (their
JSON as payload), so links to them resolve and their file cards and `[[links]]` count.
"""

from __future__ import annotations

import mimetypes
import os
import posixpath
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from .. import names
from ..errors import Invalid, LimitExceeded, PcpError
from ..ids import format_time
from ..importing import PageRef
from ..jsonsafe import loads
from .base import ImportReport, Progress
from .frontmatter import FrontMatterError, parse_front_matter, split_front_matter

TOOL = "pcp-import-markdown"
NOTE_SUFFIX = ".md"
CANVAS_SUFFIX = ".canvas"
PAGE_SUFFIXES = (NOTE_SUFFIX, CANVAS_SUFFIX)

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# [text](target) and ![alt](target); the target is a relative path (URLs are skipped).
_MD_LINK = re.compile(r"(!?)\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Obsidian tags: `#` at the start or after whitespace, then letters, digits, _ - /; not only digits.
_TAG = re.compile(r"(?<!\S)#([\w\-/]+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_COMMENT = re.compile(r"%%.*?%%|<!--.*?-->", re.S)
_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,10})\Z")
# Attachments Obsidian knows besides what `mimetypes` names.
_KNOWN_EXTENSIONS = {
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "mp3", "webm", "wav", "m4a", "ogg", "3gp", "flac",
    "mp4", "ogv", "mov", "mkv", "pdf", "excalidraw", "base",
}


@dataclass
class _File:
    rel: str  # relative POSIX path inside the vault
    path: Path
    kind: str  # note | canvas | attachment
    real: Path | None = None  # the file read: `path`, or where a link inside the vault points


@dataclass
class _Parsed:
    file: _File
    text: str
    facets: dict[str, Any]
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (relation type, raw target, kind: link|embed|path)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (relation type, target rel path)
    attachment_refs: list[dict[str, Any]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    observed_at: str | None = None


def import_markdown(store: Any, path: str | Path, namespace: str | None = None,
                    progress: Progress | None = None) -> ImportReport:
    """Import a folder of Markdown notes; each note (then each note's links) is one transaction."""
    root = Path(path).expanduser()
    if not root.exists():
        raise Invalid(f"{root}: no such folder.")
    if not root.is_dir():
        raise Invalid(f"{root}: not a folder; give the folder of notes (the vault), not one file.")
    root = root.resolve()
    vault = root.name or "vault"
    report = ImportReport(source="markdown")
    files = _scan(root, report)
    index = _Index(files)

    parsed: list[_Parsed] = []
    for f in files:
        if f.kind == "attachment":
            continue
        item = _parse_file(f, vault, report)
        if item is not None:
            parsed.append(item)
    for item in parsed:
        _resolve_links(item, index, vault)
        if item.unresolved:
            item.facets["unresolved_links"] = item.unresolved
    embedded = {ref["locator"]["path"] for item in parsed for ref in item.attachment_refs if ref["locator"].get("path")}
    for f in files:
        if f.kind == "attachment" and f.rel not in embedded:
            report.skip(f"vault:{f.rel}", "not a note; no note links to or embeds it")

    ns = namespace or f"notes:{vault}"
    parent_ns = "import:markdown"
    if namespace is None:
        with store.import_unit(TOOL) as unit:
            unit.ensure_scope(parent_ns, display_name="Markdown imports")
            if not unit.exists(ns):  # a vault imported before keeps its scope; a new one gets a name that passes
                ns = f"notes:{names.importable(vault)}"
            try:
                ns = unit.ensure_scope(ns, display_name=vault, parent=parent_ns)
            except names.LookAlike:  # reads like another scope's name: the vault's name with its digest
                ns = unit.ensure_scope(f"notes:{names.importable(vault, always=True)}", display_name=vault,
                                       parent=parent_ns)

    # Pass 1: the pages.
    refs: dict[str, PageRef] = {}
    total = len(parsed)
    for done, item in enumerate(parsed, 1):
        f = item.file
        media_type = "text/markdown" if f.kind == "note" else "application/json"
        file_ref = {"uri": f.path.as_uri(), "locator": {"vault": vault, "path": f.rel}, "media_type": media_type}
        try:
            with store.import_unit(TOOL) as unit:
                refs[f.rel] = unit.upsert(
                    f"markdown:{vault}:{f.rel}", ns,
                    payload={"media_type": media_type, "content": item.text},
                    source_refs=[file_ref, *item.attachment_refs], facets=item.facets,
                    observed_at=item.observed_at, change_key=item.attachment_refs,
                )
            report.notes += 1
            report.add(unit.counts)
        except (Invalid, LimitExceeded) as exc:
            report.skip(f.rel, exc.message)
        if progress:
            progress(done, total, "notes")

    # Pass 2: the relations, now that every target exists.
    linking = [item for item in parsed if item.relations and item.file.rel in refs]
    for done, item in enumerate(linking, 1):
        source = refs[item.file.rel]
        with store.import_unit(TOOL) as unit:
            for rtype, target in item.relations:
                if target in refs:
                    unit.relate(source, rtype, refs[target])
        report.add(unit.counts)
        if progress:
            progress(done, len(linking), "links")
    return report


# --- the folder ---

def _scan(root: Path, report: ImportReport) -> list[_File]:
    out: list[_File] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        keep = []
        for d in sorted(dirnames):
            if not _representable(d):
                report.skip(f"vault:{prefix}{_shown(d)}/", "folder name is not valid UTF-8; its notes were not read")
            elif d.startswith("."):
                report.skip(f"vault:{prefix}{d}/", "hidden folder (app settings, trash or version control), not notes")
            elif (here / d).is_symlink():
                report.skip(f"vault:{prefix}{d}/", "a link to a folder; pcp does not follow folder links")
            else:
                keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = prefix + name
            if not _representable(name):
                report.skip(f"vault:{prefix}{_shown(name)}", "file name is not valid UTF-8; not read")
                continue
            if name.startswith("."):
                report.skip(f"vault:{rel}", "hidden file, not a note")
                continue
            real, why = _regular_inside(here / name, root)
            if real is None:
                report.skip(f"vault:{rel}", why)
                continue
            lower = name.lower()
            kind = "note" if lower.endswith(NOTE_SUFFIX) else "canvas" if lower.endswith(CANVAS_SUFFIX) else "attachment"
            out.append(_File(rel, here / name, kind, real))
    out.sort(key=lambda f: f.rel)
    return out


def _representable(name: str) -> bool:
    """A name that came from the disk as valid UTF-8 (os.walk keeps other bytes as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(name: str) -> str:
    return os.fsencode(name).decode("utf-8", "replace")


def _regular_inside(path: Path, root: Path) -> tuple[Path | None, str]:
    """The regular file to read for `path` (a link's target if it stays in the vault), or None and why not."""
    try:
        real = path.resolve(strict=True)
        mode = real.stat().st_mode
    except (OSError, RuntimeError):
        return None, "a broken link or unreadable entry"
    if real != root and root not in real.parents:
        return None, "a link to outside the vault; pcp never reads files outside the folder it imports"
    if not stat.S_ISREG(mode):
        return None, "not a regular file (a pipe, socket or device); not read"
    return real, ""


def _read_regular(f: _File) -> tuple[bytes, float]:
    """Read a scanned file without blocking on a pipe or following a link swapped in since the scan."""
    fd = os.open(f.real or f.path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file any more")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(), info.st_mtime
    finally:
        os.close(fd)


class _Index:
    """Where link targets point: notes by name, every file by file name and by path (all case-folded)."""

    def __init__(self, files: list[_File]) -> None:
        self.kind = {f.rel: f.kind for f in files}
        self.notes_by_name: dict[str, list[str]] = {}
        self.files_by_name: dict[str, list[str]] = {}
        self.by_path: dict[str, str] = {}
        for f in files:
            name = f.rel.rsplit("/", 1)[-1]
            self.files_by_name.setdefault(name.casefold(), []).append(f.rel)
            self.by_path[f.rel.casefold()] = f.rel
            if f.kind == "note":
                self.notes_by_name.setdefault(name[: -len(NOTE_SUFFIX)].casefold(), []).append(f.rel)

    def resolve(self, target: str, from_rel: str) -> str | None:
        folder = posixpath.dirname(from_rel)
        t = target.replace("\\", "/").strip()
        if t.startswith("./") or t.startswith("../"):
            t = posixpath.normpath(posixpath.join(folder, t))
            if t.startswith("../"):
                return None
        t = t.lstrip("/")
        if not t:
            return None
        key = t.casefold()
        if "/" in t:
            for candidate in (key, key + NOTE_SUFFIX):
                if candidate in self.by_path:
                    return self.by_path[candidate]
            # A partial path: the tail of some file's path.
            tails = [rel for path, rel in self.by_path.items()
                     if path.endswith("/" + key) or (path.endswith("/" + key + NOTE_SUFFIX) and self.kind[rel] == "note")]
            return _pick(tails, folder)
        if key.endswith(NOTE_SUFFIX) and key[: -len(NOTE_SUFFIX)] in self.notes_by_name:
            return _pick(self.notes_by_name[key[: -len(NOTE_SUFFIX)]], folder)
        if key in self.notes_by_name:
            return _pick(self.notes_by_name[key], folder)
        if key in self.files_by_name:
            return _pick(self.files_by_name[key], folder)
        return None


def _pick(candidates: list[str], folder: str) -> str | None:
    """Of notes sharing a name: the one in the linking note's folder, else the shortest path."""
    if not candidates:
        return None
    same = [c for c in candidates if posixpath.dirname(c) == folder]
    if same:
        return same[0]
    return min(candidates, key=lambda c: (c.count("/"), len(c), c))


# --- one file ---

def _parse_file(f: _File, vault: str, report: ImportReport) -> _Parsed | None:
    try:
        raw, mtime = _read_regular(f)
    except OSError as exc:
        report.skip(f.rel, f"cannot read ({exc.strerror or exc})")
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        report.skip(f.rel, f"not UTF-8 text (byte {exc.start})")
        return None
    name = f.rel.rsplit("/", 1)[-1]
    observed = format_time(datetime.fromtimestamp(mtime, tz=timezone.utc))
    if f.kind == "canvas":
        return _parse_canvas(f, text, name, observed, report)
    stem = name[: -len(NOTE_SUFFIX)]
    block, body = split_front_matter(text)
    front: dict[str, Any] = {}
    facets: dict[str, Any] = {"title": stem, "path": f.rel}
    if block is not None:
        try:
            front = parse_front_matter(block)
        except (FrontMatterError, ValueError, IndexError, RecursionError) as exc:  # never crash on a note
            facets["front_matter_raw"] = block
            report.skip(f"front matter of {f.rel}", f"not parsed ({exc}); kept raw in facets front_matter_raw")
    title = front.get("title")
    if isinstance(title, (str, int, float)) and not isinstance(title, bool) and str(title).strip():
        facets["title"] = str(title).strip()
    if front:
        facets["front_matter"] = front
    visible = mask_code(body)
    keywords = _front_matter_tags(front) + inline_tags(visible)
    if keywords:
        facets["keywords"] = list(dict.fromkeys(keywords))
    item = _Parsed(f, text, facets, observed_at=observed)
    # Wikilinks in front matter values are links too (Obsidian properties show them as links).
    item.links = wikilinks((block or "") + "\n" + visible) + markdown_links(visible)
    return item


def _parse_canvas(f: _File, text: str, name: str, observed: str, report: ImportReport) -> _Parsed:
    facets: dict[str, Any] = {"title": name[: -len(CANVAS_SUFFIX)], "path": f.rel, "kind": "canvas"}
    item = _Parsed(f, text, facets, observed_at=observed)
    try:
        data = loads(text, f.rel)
    except (ValueError, PcpError) as exc:
        report.skip(f"links of {f.rel}", f"not a JSON canvas ({exc}); imported as text without its links")
        return item
    nodes = data.get("nodes") if isinstance(data, dict) else None
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, dict):
            continue
        if node.get("type") == "file" and isinstance(node.get("file"), str) and node["file"].strip():
            item.links.append(("uses", node["file"], "path"))
        elif node.get("type") == "text" and isinstance(node.get("text"), str):
            item.links.extend(wikilinks(mask_code(node["text"])))
    return item


def _front_matter_tags(front: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("tags", "tag"):
        value = front.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        for entry in items:
            if isinstance(entry, (str, int, float)) and not isinstance(entry, bool):
                out.extend(t.lstrip("#") for t in re.split(r"[,\s]+", str(entry)) if t.lstrip("#"))
    return out


def mask_code(text: str) -> str:
    """The text with fenced code blocks, inline code and comments blanked out (same length)."""
    lines = text.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                lines[i] = " " * len(line)
        else:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            lines[i] = " " * len(line)
    out = "\n".join(lines)
    out = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)
    return _INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)


def inline_tags(text: str) -> list[str]:
    """`#tags` of (already code-masked) text: not headings, not escaped, not only digits."""
    out = []
    for m in _TAG.finditer(text):
        tag = m.group(1).rstrip("/")
        if tag and re.search(r"[^\d/]", tag):
            out.append(tag)
    return out


def wikilinks(text: str) -> list[tuple[str, str, str]]:
    """(relation type, target, kind) of every `[[...]]`: links_to for links, uses for `![[embeds]]`."""
    out = []
    for m in _WIKILINK.finditer(text):
        inner = m.group(2)
        target = inner.split("|", 1)[0].rstrip("\\")
        target = target.split("#", 1)[0].strip()
        if target:  # `[[#Heading]]` points inside the note itself
            out.append(("uses" if m.group(1) else "links_to", target, "embed" if m.group(1) else "link"))
    return out


def markdown_links(text: str) -> list[tuple[str, str, str]]:
    """Markdown links and images with a relative target ([x](Note.md), ![](img.png)); URLs are not files."""
    out = []
    for m in _MD_LINK.finditer(text):
        target = m.group(2).strip("<>")
        if _SCHEME.match(target) or target.startswith("#"):
            continue
        target = unquote(target.split("#", 1)[0]).strip()
        if target:
            out.append(("uses" if m.group(1) else "links_to", target, "mdlink"))
    return out


def _resolve_links(item: _Parsed, index: _Index, vault: str) -> None:
    seen_rel: set[tuple[str, str]] = set()
    seen_refs: set[str] = set()
    unresolved: list[str] = []
    for rtype, target, kind in item.links:
        if kind == "mdlink":  # a path relative to the note, else to the vault
            rel = index.resolve(target if target.startswith(("./", "../")) else "./" + target, item.file.rel)
            if rel is None and not target.startswith(("./", "../")):
                rel = index.resolve(target, item.file.rel)
        elif kind == "path":  # a canvas file card names a vault path
            rel = index.by_path.get(target.strip().lstrip("/").casefold())
        else:
            rel = index.resolve(target, item.file.rel)
        if rel is not None and index.kind[rel] != "attachment":
            if rel != item.file.rel and (rtype, rel) not in seen_rel:
                seen_rel.add((rtype, rel))
                item.relations.append((rtype, rel))
            continue
        shown = _clean_target(target)
        if rel is not None or _is_attachment_name(shown.rsplit("/", 1)[-1]):
            uri = f"vault:{rel or shown}"
            if uri not in seen_refs:
                seen_refs.add(uri)
                locator: dict[str, Any] = {"vault": vault, "path": rel} if rel else {"vault": vault, "missing": True}
                item.attachment_refs.append({"uri": uri, "locator": locator, "media_type": _media_type(shown)})
            continue
        if shown.lower().endswith(NOTE_SUFFIX):
            shown = shown[: -len(NOTE_SUFFIX)]
        if shown not in unresolved:
            unresolved.append(shown)
    item.unresolved = unresolved


def _clean_target(target: str) -> str:
    t = target.replace("\\", "/").strip()
    while t.startswith("./"):
        t = t[2:]
    return t.lstrip("/")


def _is_attachment_name(name: str) -> bool:
    m = _EXTENSION.search(name)
    if not m or " " in m.group(0):
        return False
    ext = m.group(1).lower()
    if ext in ("md", "canvas"):
        return False
    return ext in _KNOWN_EXTENSIONS or mimetypes.guess_type("x." + ext)[0] is not None


def _media_type(name: str) -> str:
    guessed = mimetypes.guess_type(name)[0]
    if guessed:
        return guessed
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {"flac": "audio/flac", "m4a": "audio/mp4", "webp": "image/webp", "avif": "image/avif",
            "mkv": "video/x-matroska", "ogv": "video/ogg", "3gp": "video/3gpp"}.get(ext, "application/octet-stream")
