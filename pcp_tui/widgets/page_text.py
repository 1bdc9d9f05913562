"""What the inspector draws of a page besides its widgets: the lines that say its lifecycle state, the highlighter
language of code, and Markdown as the Content tab renders it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markdown import Markdown as RichMarkdown
from textual.content import Content

if TYPE_CHECKING:
    from store.types import PageLifecycle, ReadItem

CODE_LANGUAGES = {
    "application/json": "json", "application/javascript": "javascript", "text/javascript": "javascript",
    "application/x-python": "python", "application/x-sh": "bash", "text/x-shellscript": "bash",
    "application/toml": "toml", "application/yaml": "yaml", "application/xml": "xml", "text/xml": "xml",
    "text/html": "html", "text/css": "css", "application/sql": "sql", "text/x-c++": "cpp", "text/x-c": "c",
}

def lifecycle_notes(full: ReadItem) -> Content | None:
    """`archived by user:owner on 2026-03-01: “done with it”` and `⊘ suppressed in chat:x (reason)`, or None."""
    env = full["revision"]
    life: PageLifecycle = full.get("lifecycle") or {"events": [], "suppressions": []}
    lines: list[Content] = []
    status = env["lifecycle_status"]
    steps = life["events"]
    if status in ("archived", "tombstoned") and steps and steps[0]["to_status"] == status:
        step = steps[0]
        who = step["created_by"]
        lines.append(Content.assemble((status, f"bold $lifecycle-{status}"),
                                      f" by {who['actor_type']}:{who['actor_id']} on {step['created_at'][:10]}: ",
                                      (f"“{step['reason']}”", "italic")))
    elif status == "superseded":
        lines.append(Content.assemble(("superseded", "bold $lifecycle-superseded"),
                                      ": a newer page supersedes it (Relations tab, 4)"))
    for sup in life["suppressions"][:3]:
        reason = f" ({sup['reason']})" if sup.get("reason") else ""
        expires = sup.get("expires_at")
        until = f" until {expires[:10]}" if expires else ""
        lines.append(Content.assemble(("⊘ suppressed", "bold $warning"), f" in {sup['context_id']}{until}{reason}"))
    more = len(life["suppressions"]) - 3
    if more > 0:
        lines.append(Content.styled(f"… suppressed in {more} more context{'s' if more != 1 else ''}", "dim"))
    if full.get("conflict_revision_ids"):  # concurrent revisions from another of the owner's stores (sync)
        n = len(full["conflict_revision_ids"])
        lines.append(Content.assemble(("⚠ conflict", "bold $warning"),
                                      f": {n} concurrent revision{'s' if n != 1 else ''} from another of your stores "
                                      "besides this one (Revisions, 2); revise (e) to resolve"))
    return Content("\n").join(lines) if lines else None


def code_language(media_type: str | None) -> str | None:
    """The highlighter language of a code media type (text/x-python -> python), else None."""
    if not media_type:
        return None
    base = media_type.split(";")[0].strip().lower()
    if base in CODE_LANGUAGES:
        return CODE_LANGUAGES[base]
    if base.startswith("text/x-"):
        return base[len("text/x-"):]
    if base.endswith(("+json", "+xml")):
        return base.rsplit("+", 1)[1]
    return None


def markdown(text: str) -> RichMarkdown:
    return RichMarkdown(text, code_theme="ansi_dark", hyperlinks=False)
