"""Validation of caller input against the envelope rules (pcp-core.md sections 1 and 8)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from . import ids
from .core import LIMITS, dumps
from .errors import Invalid, LimitExceeded, shown
from .jsonsafe import depth_of, loads

OPERATIONS = ("ingest", "write", "revise", "derive", "import")
ACTOR_TYPES = ("user", "model", "tool", "system")
SOURCE_REF_KEYS = {"uri", "locator", "media_type", "content_digest"}


_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_text(value: str, what: str) -> str:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate, e.g. from a JSON escape like \\ud800)."""
    if not value.isascii() and _SURROGATE.search(value):  # isascii() reads a flag: no scan for ASCII text
        raise Invalid(f"{what} holds a lone surrogate (text that is not valid Unicode); it cannot be stored.")
    return value


def bounded(value: str, limit_key: str, what: str) -> str:
    """Refuse text over its limit in LIMITS as `limit` (the message never echoes the text)."""
    limit = LIMITS[limit_key]  # type: ignore[literal-required]
    limit = limit[1] if isinstance(limit, list) else limit
    if len(value) > limit:
        raise LimitExceeded(f"{what} has {len(value):,} characters; the limit is {limit:,}.")
    return value


def query(value: Any) -> str:
    """A search query: text within max_query_chars."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid("The query must be text.")
    return unicode_text(bounded(value, "max_query_chars", "The query"), "The query")


def media_type_text(value: Any, what: str = "The payload media type") -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{what} must be a non-empty string such as text/markdown.")
    return unicode_text(bounded(value, "media_type_chars", what), what)


def content_digest(content: str | None) -> str | None:
    if content is None:
        return None
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def body_digest(body: Any) -> str:
    return hashlib.sha256(dumps(body).encode("utf-8")).hexdigest()


@lru_cache(maxsize=64)
def _key_json(key: str) -> str:
    return dumps(key)


def body_digest_of(members: dict[str, str]) -> str:
    """`body_digest` of an object given as its members' JSON (`dumps` of each value), so a
    value already encoded (a page's facets) is not encoded again."""
    text = "{" + ",".join([_key_json(key) + ":" + members[key] for key in sorted(members)]) + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def namespace(value: Any) -> str:
    lo, hi = LIMITS["namespace_chars"]
    if not isinstance(value, str) or not (lo <= len(value) <= hi) or value != value.strip():
        raise Invalid(f"A namespace must be {lo} to {hi} characters without surrounding spaces (e.g. project:alpha).")
    return unicode_text(value, "A namespace")


def relation_type(value: Any) -> str:
    lo, hi = LIMITS["relation_type_chars"]
    if not isinstance(value, str) or not (lo <= len(value) <= hi) or not value.strip():
        raise Invalid(f"A relation type must be {lo} to {hi} characters (e.g. derived_from).")
    return value


def payload(value: Any, content: Any = None, media_type: Any = None) -> dict[str, Any] | None:
    """Normalise `payload` or (`content`, `media_type`) into {media_type, content} or None."""
    if value is not None and content is not None:
        raise Invalid("Give either payload or content, not both.")
    if value is None and content is None:
        return None
    if value is not None:
        if not isinstance(value, dict) or set(value) - {"media_type", "content"}:
            raise Invalid("payload must be an object with media_type and content.")
        content, media_type = value.get("content"), value.get("media_type", media_type)
    if not isinstance(content, str):
        raise Invalid("Payload content must be text.")
    if len(content) > LIMITS["max_payload_chars"]:
        raise LimitExceeded(
            f"The payload has {len(content):,} characters; the limit is {LIMITS['max_payload_chars']:,}."
        )
    if media_type is None:
        media_type = "text/markdown"
    media_type = media_type_text(media_type)
    if "\x00" in content:
        raise Invalid("Payload content may not contain NUL characters.")
    unicode_text(content, "Payload content")
    return {"media_type": media_type, "content": content}


def source_refs(value: Any, stored: bool = False) -> list[dict[str, Any]]:
    """Checked source refs. `stored`: refs a pcp export carries, which may hold a locator an older pcp kept as
    text (reads show it as {"value": ...}); anything new must give a JSON object."""
    return source_refs_with_json(value, stored)[0]


def source_refs_with_json(value: Any, stored: bool = False) -> tuple[list[dict[str, Any]], str]:
    """The checked source refs and their stored JSON ("[]" for none), encoded once."""
    if value is None:
        return [], "[]"
    if not isinstance(value, list):
        raise Invalid("source_refs must be a list of objects with a uri.")
    if len(value) > LIMITS["max_source_refs"]:
        raise LimitExceeded(f"{len(value):,} source refs given; the limit is {LIMITS['max_source_refs']}.")
    out = []
    for ref in value:
        if isinstance(ref, str):
            ref = {"uri": ref}
        if not isinstance(ref, dict) or not isinstance(ref.get("uri"), str) or not ref["uri"].strip():
            raise Invalid("Every source ref needs a non-empty uri.")
        unknown = set(ref) - SOURCE_REF_KEYS
        if unknown:
            raise Invalid(f"Unknown source ref field {', '.join(sorted(unknown))}; allowed: uri, locator, media_type, content_digest.")
        for key in ("media_type", "content_digest"):
            if key in ref and not isinstance(ref[key], str):
                raise Invalid(f"Source ref {key} must be a string.")
        bounded(ref["uri"], "max_uri_chars", "A source ref uri")
        if "media_type" in ref:
            media_type_text(ref["media_type"], "A source ref media_type")
        if "content_digest" in ref:
            bounded(ref["content_digest"], "max_uri_chars", "A source ref content_digest")
        if "locator" in ref and not isinstance(ref["locator"], dict) and not stored:
            raise Invalid('A source ref locator must be a JSON object of your own keys, e.g. {"line": 3}.')
        if depth_of(ref.get("locator"), LIMITS["max_json_depth"]) > LIMITS["max_json_depth"]:
            raise Invalid(f"A source ref locator may nest at most {LIMITS['max_json_depth']} levels.")
        out.append(dict(ref))
    if not out:
        return out, "[]"
    text = dumps(out)
    unicode_text(text, "A source ref")
    return out, text


def facets(value: Any) -> dict[str, Any]:
    return facets_with_json(value)[0]


def facets_with_json(value: Any) -> tuple[dict[str, Any], str]:
    """The checked facets and their stored JSON (written once, not again by the caller)."""
    if value is None:
        return {}, "{}"
    if isinstance(value, str):
        try:
            value = loads(value, "The facets")
        except ValueError:
            raise Invalid("Facets must be a JSON object, e.g. {\"title\": \"Notes\"}.") from None
    if not isinstance(value, dict):
        raise Invalid("Facets must be a JSON object, e.g. {\"title\": \"Notes\"}.")
    if depth_of(value, LIMITS["max_json_depth"]) > LIMITS["max_json_depth"]:
        raise Invalid(f"Facets may nest at most {LIMITS['max_json_depth']} levels of arrays or objects.")
    if "title" in value and not isinstance(value["title"], str):
        raise Invalid("The title facet must be a string.")
    if "summary" in value and not isinstance(value["summary"], str):
        raise Invalid("The summary facet must be a string.")
    if "keywords" in value and (
        not isinstance(value["keywords"], list) or not all(isinstance(k, str) for k in value["keywords"])
    ):
        raise Invalid("The keywords facet must be a list of strings.")
    if "title" in value:
        bounded(value["title"], "max_title_chars", "The title")
    if "summary" in value:
        bounded(value["summary"], "max_summary_chars", "The summary")
    if len(value.get("keywords") or ()) > LIMITS["max_keywords"]:
        raise LimitExceeded(f"{len(value['keywords']):,} keywords given; the limit is {LIMITS['max_keywords']}.")
    for keyword in value.get("keywords") or ():
        bounded(keyword, "max_keyword_chars", "A keyword")
    try:
        text = dumps(value)
    except (TypeError, ValueError):
        raise Invalid("Facets must contain only JSON values.") from None
    bounded(text, "max_facets_chars", "The facets (as JSON)")
    unicode_text(text, "The facets")
    return value, text


def provenance(value: Any) -> list[dict[str, Any]]:
    """Caller-given provenance events (operation, input_revision_ids, tool_or_model?)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("provenance must be a list of events.")
    out = []
    for event in value:
        if not isinstance(event, dict):
            raise Invalid("Every provenance event must be an object.")
        op = event.get("operation", "derive")
        if op not in OPERATIONS:
            raise Invalid(f"Provenance operation {shown(op)} is not one of {', '.join(OPERATIONS)}.")
        inputs = event.get("input_revision_ids", [])
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            raise Invalid("input_revision_ids must be a list of revision ids.")
        if len(inputs) > LIMITS["max_provenance_inputs"]:
            raise LimitExceeded(
                f"A provenance event lists {len(inputs)} inputs; the limit is {LIMITS['max_provenance_inputs']}."
            )
        tool = event.get("tool_or_model")
        if tool is not None and not isinstance(tool, str):
            raise Invalid("tool_or_model must be a string.")
        unknown = set(event) - {"operation", "input_revision_ids", "tool_or_model", "actor_type", "actor_id", "timestamp"}
        if unknown:
            raise Invalid(f"Unknown provenance field {', '.join(sorted(unknown))}.")
        out.append({"operation": op, "input_revision_ids": list(dict.fromkeys(inputs)), "tool_or_model": tool})
    return out


def optional_time(value: Any, field: str) -> str | None:
    return None if value is None else ids.parse_time(value, field)


def idempotency_key(value: Any, required: bool = False) -> str | None:
    if value is None or value == "":
        if required:
            raise Invalid("This operation needs an idempotency key so that retries never duplicate history.")
        return None
    if not isinstance(value, str) or len(value) > 200:
        raise Invalid("An idempotency key must be a string of at most 200 characters.")
    return value


def reason(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("Give a reason (a short sentence) for this change.")
    return unicode_text(bounded(value, "max_reason_chars", "The reason"), "The reason")


def optional_reason(value: Any) -> str | None:
    """A reason that may be left out (a suppression's)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid("A reason must be text.")
    return unicode_text(bounded(value, "max_reason_chars", "The reason"), "The reason")
