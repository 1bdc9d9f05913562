"""The current Claude.ai data export: several archives instead of one.

Settings > Privacy > Export data now sends a manifest (`manifest-....json`) that lists one archive per
category, each downloaded on its own: `conversations-000.zip` (`conversations.json`, split into
`-001`, ... when large), `memories-000.zip` (`memories/<account>.json`: one object with
`conversations_memory`, `project_memories` {project uuid: text} and `memory_files`), `projects-000.zip`
(`projects/<uuid>.json`: name, description, `prompt_template`, `docs` with their text),
`light_metadata-000.zip` (account details and login history: never imported), and others pcp does not
read (design chats). The older export is one zip with `conversations.json`, `projects.json`, and a
`memories.json` that is a JSON array of the same memory objects.

`pcp import claude` takes the manifest (the archives are read from its folder), the folder holding the
archives, one archive, a zip holding the archives, or the older single zip; the manifest's own keys are
not published, so every `*.zip` name it mentions is looked for beside it and a missing one is reported.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from .. import names
from ..constants import LIMITS
from ..errors import Invalid, LimitExceeded
from ..jsonsafe import loads
from .base import IMPORT_RULES, ImportReport, epoch_to_time, json_text
from .memory import parse_memory_text, write_sections

TOOL = "pcp-import-claude"
ARCHIVE = re.compile(r"(?P<category>[a-z_]+)-\d{3}\.zip$")
NOT_READ = {"light_metadata": "account details and login history are not imported",
            "design_chats": "design chats are not imported yet"}
MAX_MEMBERS = 20_000
MAX_DEPTH_NOTE = "an archive inside an archive inside an archive is not read"


@dataclass
class ExportParts:
    """What the archives of one export hold, gathered."""

    label: str
    conversations: list[Any] = field(default_factory=list)
    memories: list[dict[str, Any]] = field(default_factory=list)
    projects: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    budget: int = field(default_factory=lambda: LIMITS["max_import_bytes"])

    @property
    def is_layout(self) -> bool:
        return bool(self.memories or self.projects or len(self.read) > 1)


def looks_like_manifest(data: Any) -> bool:
    return isinstance(data, dict) and "chat_messages" not in data and bool(_archive_names(data))


def _archive_names(data: Any, depth: int = 0) -> list[str]:
    """Every `<category>-NNN.zip` the manifest names (in a URL or a file name), in order, once."""
    found: list[str] = []
    if depth > 8:
        return found
    if isinstance(data, str):
        tail = data.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if ARCHIVE.fullmatch(tail):
            found.append(tail)
    elif isinstance(data, dict):
        for value in list(data.values())[:10_000]:
            found += _archive_names(value, depth + 1)
    elif isinstance(data, list):
        for value in data[:10_000]:
            found += _archive_names(value, depth + 1)
    return list(dict.fromkeys(found))


def gather(path: Path, manifest: Any | None = None) -> ExportParts:
    """Read the archives of an export from `path` (a manifest, a folder, or a zip)."""
    parts = ExportParts(label=path.name)
    if manifest is not None:
        for name in _archive_names(manifest):
            beside = path.parent / name
            category = ARCHIVE.fullmatch(name).group("category")  # type: ignore[union-attr]  # names matched it
            if category in NOT_READ:
                parts.skipped.append((name, NOT_READ[category]))
            elif beside.is_file() and not beside.is_symlink():
                _read_archive(parts, beside.name, beside.read_bytes() if _fits(parts, beside) else b"", 0)
            else:
                parts.skipped.append((name, "not found beside the manifest: download it into the same folder "
                                            "(each download link works once; export again if it was used)"))
        return parts
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.is_file() and not child.is_symlink() and ARCHIVE.fullmatch(child.name) and _fits(parts, child):
                _read_archive(parts, child.name, child.read_bytes(), 0)
        if not parts.read:
            raise Invalid(f"{path}: no Claude export archives (conversations-000.zip, memories-000.zip, ...) in "
                          "this folder.")
        return parts
    if _fits(parts, path):
        _read_archive(parts, path.name, path.read_bytes(), 0)
    return parts


def _fits(parts: ExportParts, p: Path) -> bool:
    size = p.stat().st_size
    if size > parts.budget:
        raise LimitExceeded(f"{p.name} is {size:,} bytes; what is left of the import limit is {parts.budget:,} "
                            "bytes; nothing was imported.")
    return True


def _take(parts: ExportParts, label: str, size: int) -> None:
    parts.budget -= size
    if parts.budget < 0:
        raise LimitExceeded(f"{label}: the export's archives unpack to more than the import limit "
                            f"({LIMITS['max_import_bytes']:,} bytes); nothing was imported.")


def _read_archive(parts: ExportParts, label: str, data: bytes, depth: int) -> None:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise Invalid(f"{label}: damaged zip archive (download it again).") from None
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        if len(infos) > MAX_MEMBERS:
            raise LimitExceeded(f"{label} holds {len(infos):,} files; at most {MAX_MEMBERS:,} are read.")
        parts.read.append(label)
        for info in infos:
            member = PurePosixPath(info.filename)
            where = f"{label}!{info.filename}"
            category = ARCHIVE.fullmatch(member.name)
            if category:
                if category.group("category") in NOT_READ:
                    parts.skipped.append((where, NOT_READ[category.group("category")]))
                elif depth >= 1:
                    parts.skipped.append((where, MAX_DEPTH_NOTE))
                else:
                    _read_archive(parts, where, _member(zf, info, where, parts), depth + 1)
                continue
            kind = _kind(member)
            if kind is None:
                if member.suffix == ".json" and member.name not in ("users.json",):
                    parts.skipped.append((where, "not a part of the export pcp reads"))
                elif member.name == "users.json":
                    parts.skipped.append((where, NOT_READ["light_metadata"]))
                continue
            value = _json(_member(zf, info, where, parts), where)
            if kind == "conversations":
                if not isinstance(value, list):
                    raise Invalid(f"{where}: not a list of conversations.")
                parts.conversations += value
            elif kind == "memories":
                for obj in value if isinstance(value, list) else [value]:
                    if isinstance(obj, dict):
                        parts.memories.append({**obj, "_where": where})
                    else:
                        parts.skipped.append((where, "a memory entry that is not an object"))
            elif kind == "projects":
                for obj in value if isinstance(value, list) else [value]:
                    if isinstance(obj, dict) and obj.get("uuid"):
                        parts.projects.append({**obj, "_where": where})
                    else:
                        parts.skipped.append((where, "a project without a uuid"))


def _kind(member: PurePosixPath) -> str | None:
    if member.name == "conversations.json":
        return "conversations"
    if member.name == "memories.json" or (member.parent.name == "memories" and member.suffix == ".json"):
        return "memories"
    if member.name == "projects.json" or (member.parent.name == "projects" and member.suffix == ".json"):
        return "projects"
    return None


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, parts: ExportParts) -> bytes:
    _take(parts, where, info.file_size)  # checked before inflating a byte
    out = bytearray()
    with zf.open(info) as fh:
        while chunk := fh.read(1 << 20):
            out += chunk
            if len(out) > info.file_size:  # a size in a zip header can lie
                _take(parts, where, len(out) - info.file_size)
    return bytes(out)


def _json(raw: bytes, where: str) -> Any:
    try:
        return loads(raw.decode("utf-8-sig"), where)
    except UnicodeDecodeError as exc:
        raise Invalid(f"{where}: not UTF-8 text (byte {exc.start}).") from None
    except ValueError as exc:
        raise Invalid(f"{where}: malformed JSON ({exc}).") from None


# --- writing ---------------------------------------------------------------------------------------------


def write_projects_and_memories(store: Any, parts: ExportParts, report: ImportReport) -> None:
    """Projects (their page, instructions and documents) into `claude:project:<name>`, the memory into
    `claude:memory` (a project's memory into its project's scope); one transaction per project."""
    project_ns: dict[str, str] = {}
    project_memories: dict[str, tuple[str, str]] = {}
    for memory in parts.memories:
        for uuid, text in (memory.get("project_memories") or {}).items() if isinstance(
                memory.get("project_memories"), dict) else []:
            if isinstance(text, str) and text.strip():
                project_memories[str(uuid)] = (text, memory["_where"])
    for project in parts.projects:
        try:
            project_ns[str(project["uuid"])] = _write_project(store, parts, project, project_memories, report)
        except (Invalid, LimitExceeded) as exc:
            report.skip(f"claude project {project.get('uuid')} ({json_text(project.get('name'))[:80]})", exc.message,
                        file=project["_where"])
    with store.import_unit(TOOL, rules=IMPORT_RULES) as unit:
        wrote = False
        for memory in parts.memories:
            text = memory.get("conversations_memory")
            where = memory["_where"]
            if isinstance(text, str) and text.strip():
                ns = unit.ensure_scope("claude:memory", display_name="Claude memory", parent="import:claude")
                refs = write_sections(unit, "claude", parse_memory_text(text, "claude"), f"claude-export:{where}", None,
                                      namespace=ns)
                for ref in refs:
                    report.wrote(where, "claude-memory", ref, {ref.outcome: 1})
                report.notes += len(refs)
                wrote = True
            for file in _memory_files(memory.get("memory_files")):
                ns = unit.ensure_scope("claude:memory", display_name="Claude memory", parent="import:claude")
                ref = unit.upsert(f"claude-memory-file:{file[0]}", ns,
                                  payload={"media_type": "text/markdown", "content": file[1]},
                                  facets={"title": f"Claude memory file: {file[0]}", "source": "claude",
                                          "kind": "memory", "path": file[0]},
                                  source_refs=[{"uri": f"claude-export:{where}#memory_file={file[0]}"}], change_key=[])
                report.wrote(where, f"claude-memory-file:{file[0]}", ref, {ref.outcome: 1})
                report.notes += 1
                wrote = True
            for uuid, (text, at) in project_memories.items():
                if uuid in project_ns:
                    continue  # written with its project
                ns = unit.ensure_scope("claude:memory", display_name="Claude memory", parent="import:claude")
                sections = parse_memory_text(text, "claude")
                refs = write_sections(unit, "claude", sections, f"claude-export:{at}#project={uuid}", None,
                                      namespace=ns, key_prefix=f"claude-memory:project:{uuid}",
                                      extra_facets={"project_uuid": uuid})
                report.notes += len(refs)
                wrote = True
            project_memories.clear()
        if wrote:
            report.add(unit.counts)


def _memory_files(value: Any) -> Iterator[tuple[str, str]]:
    """(path, text) of Claude's memory files: a list of {path|name, content|text} or a {path: text} map."""
    if isinstance(value, dict):
        items: list[Any] = [{"path": k, "content": v} for k, v in value.items()]
    elif isinstance(value, list):
        items = value
    else:
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        path = next((item[k] for k in ("path", "name", "file_name", "filename") if isinstance(item.get(k), str)), None)
        text = next((item[k] for k in ("content", "text") if isinstance(item.get(k), str)), None)
        if path and text and text.strip():
            yield path, text


def _write_project(store: Any, parts: ExportParts, project: dict[str, Any],
                   memories: dict[str, tuple[str, str]], report: ImportReport) -> str:
    uuid = str(project["uuid"])
    name = json_text(project.get("name")).strip() or f"project {uuid[:8]}"
    where = project["_where"]
    lines = [f"# {name}", ""]
    if json_text(project.get("description")).strip():
        lines += [json_text(project["description"]).strip(), ""]
    if json_text(project.get("prompt_template")).strip():
        lines += ["## Instructions", "", json_text(project["prompt_template"]).strip(), ""]
    docs = [d for d in project.get("docs") or [] if isinstance(d, dict)]
    with store.import_unit(TOOL, rules=IMPORT_RULES) as unit:
        wanted = f"claude:project:{names.importable(name)}"
        try:
            ns = unit.ensure_scope(wanted, display_name=name, parent="import:claude")
        except names.LookAlike:
            ns = unit.ensure_scope(f"claude:project:{names.importable(name, always=True)}", display_name=name,
                                   parent="import:claude")
        created = epoch_to_time(project.get("created_at"))
        ref = unit.upsert(
            f"claude:project:{uuid}", ns, payload={"media_type": "text/markdown", "content": "\n".join(lines)},
            facets={"title": f"Claude project: {name}", "source": "claude", "kind": "project", "project_uuid": uuid,
                    "created": created, **({"updated": epoch_to_time(project["updated_at"])}
                                           if project.get("updated_at") else {}),
                    "instructions": bool(json_text(project.get("prompt_template")).strip()), "documents": len(docs)},
            source_refs=[{"uri": f"claude-export:{where}#project={uuid}", "media_type": "application/json"}],
            observed_at=created, change_key=[])
        report.wrote(where, f"claude:project:{uuid}", ref, {ref.outcome: 1})
        report.notes += 1
        for index, doc in enumerate(docs):
            content = json_text(doc.get("content"))
            filename = json_text(doc.get("filename")) or json_text(doc.get("file_name")) or f"document {index + 1}"
            if not content.strip():
                report.skip(f"{where}: document {filename}", "no text in the export (only its name)", file=where)
                continue
            key = str(doc.get("uuid") or filename)
            doc_ref = unit.upsert(
                f"claude:project:{uuid}:doc:{key}", ns,
                payload={"media_type": "text/markdown" if filename.endswith(".md") else "text/plain", "content": content},
                facets={"title": filename, "source": "claude", "kind": "project_document", "project_uuid": uuid},
                source_refs=[{"uri": f"claude-export:{where}#project={uuid}&doc={key}", "media_type": "text/plain"}],
                observed_at=epoch_to_time(doc.get("created_at")) or created, change_key=[])
            unit.relate(ref, "contains", doc_ref)
            report.notes += 1
        if uuid in memories:
            text, at = memories.pop(uuid)
            for mem_ref in write_sections(unit, "claude", parse_memory_text(text, "claude"),
                                          f"claude-export:{at}#project={uuid}", None, namespace=ns,
                                          key_prefix=f"claude-memory:project:{uuid}",
                                          extra_facets={"project_uuid": uuid}):
                unit.relate(ref, "contains", mem_ref)
                report.notes += 1
    report.add(unit.counts)
    return str(ns)
