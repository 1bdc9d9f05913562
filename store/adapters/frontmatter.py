"""YAML front matter of Markdown notes: a practical subset, standard library only.

Understood: block mappings (nested by indentation), block sequences (`- item`, also
`- key: value` items and sequences at the parent key's indentation), flow sequences
`[a, b]` (one line), simple flow mappings `{a: 1}`, plain scalars (null, booleans,
integers, floats, everything else a string), single- and double-quoted strings, block
scalars (`|`, `>`), comments. Obsidian-isms stay strings: a wikilink `[[Note]]` (in YAML
a nested flow sequence) and a template `{{description}}` (a nonsense flow mapping).

Anything else (anchors, aliases, tags, multi-line flow collections or quoted strings,
tabs in indentation, a top level that is not a mapping) raises FrontMatterError: the
caller keeps the block raw.
"""

from __future__ import annotations

import json
import re
from typing import Any


class FrontMatterError(ValueError):
    """The block is outside the subset this parser understands."""


_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?((\d+\.\d*|\.\d+)([eE][-+]?\d+)?|\d+[eE][-+]?\d+)\Z")
_WIKILINK = re.compile(r"\[\[[^\[\]\n]*\]\]\Z")
_TEMPLATE = re.compile(r"\{\{.*\}\}\Z")
_BLOCK_SCALAR = re.compile(r"[|>][-+]?\d?\Z")


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(front matter block or None, body). The block sits between a first line `---` and the next `---`/`...`."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:])
    return None, text  # never closed: not front matter


def parse_front_matter(block: str) -> dict[str, Any]:
    """The front matter block as a JSON-ready dict; FrontMatterError when outside the subset."""
    parser = _Parser(block)
    if parser.at_end():
        return {}
    indent, content = parser.peek()
    if content.startswith("- ") or content == "-":
        raise FrontMatterError("the front matter is a list, not keys and values")
    value = parser.mapping(indent)
    if not parser.at_end():
        line_no = parser.lines[parser.i][2]
        raise FrontMatterError(f"unexpected indentation at line {line_no}")
    return value


class _Parser:
    def __init__(self, block: str) -> None:
        self.raw = block.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.lines: list[tuple[int, str, int]] = []  # (indent, content, line number) of significant lines
        for number, line in enumerate(self.raw, 1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            lead = line[: len(line) - len(line.lstrip())]
            if "\t" in lead:
                raise FrontMatterError(f"a tab in the indentation at line {number}")
            self.lines.append((len(lead), line.rstrip(), number))
        self.i = 0

    def at_end(self) -> bool:
        return self.i >= len(self.lines)

    def peek(self) -> tuple[int, str]:
        indent, line, _ = self.lines[self.i]
        return indent, line[indent:]

    # --- block structures ---

    def mapping(self, indent: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while not self.at_end():
            ind, content = self.peek()
            if ind < indent:
                break
            if ind > indent:
                raise FrontMatterError(f"unexpected indentation at line {self.lines[self.i][2]}")
            if content.startswith("- ") or content == "-":
                break
            key, rest = _split_key(content, self.lines[self.i][2])
            self.i += 1
            out[key] = self._value_after_key(indent, rest)
        return out

    def _value_after_key(self, indent: int, rest: str) -> Any:
        rest = _strip_comment(rest)
        if rest == "":
            if self.at_end():
                return None
            ind, content = self.peek()
            if ind > indent:
                return self.block(ind)
            if ind == indent and (content.startswith("- ") or content == "-"):
                return self.sequence(indent)
            return None
        if _BLOCK_SCALAR.match(rest):
            return self.block_scalar(indent, rest)
        return inline_value(rest)

    def block(self, indent: int) -> Any:
        _, content = self.peek()
        if content.startswith("- ") or content == "-":
            return self.sequence(indent)
        return self.mapping(indent)

    def sequence(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while not self.at_end():
            ind, content = self.peek()
            if ind != indent or not (content.startswith("- ") or content == "-"):
                if ind > indent:
                    raise FrontMatterError(f"unexpected indentation at line {self.lines[self.i][2]}")
                break
            item = content[1:].lstrip(" ")
            number = self.lines[self.i][2]
            if not item or item.startswith("#"):
                self.i += 1
                if not self.at_end() and self.peek()[0] > indent:
                    out.append(self.block(self.peek()[0]))
                else:
                    out.append(None)
                continue
            offset = indent + (len(content) - len(item))
            if item.startswith("- ") or item == "-" or _looks_like_key(item):
                # `- - x` or `- key: value`: the item is a block that starts in this line's column.
                self.lines[self.i] = (offset, " " * offset + item, number)
                out.append(self.block(offset))
                continue
            self.i += 1
            out.append(inline_value(item))
        return out

    def block_scalar(self, indent: int, header: str) -> str:
        start = self.lines[self.i - 1][2]  # the key's line number; the scalar is the raw lines after it
        body: list[str] = []
        n = start
        while n < len(self.raw):
            line = self.raw[n]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
            n += 1
        while self.i < len(self.lines) and self.lines[self.i][2] <= n:
            self.i += 1
        while body and not body[-1].strip():
            body.pop()
        widths = [len(line) - len(line.lstrip()) for line in body if line.strip()]
        cut = min(widths) if widths else 0
        lines = [line[cut:] if line.strip() else "" for line in body]
        if header.startswith(">"):
            text = ""
            for line in lines:
                if not line:
                    text += "\n"
                elif text and not text.endswith("\n"):
                    text += " " + line
                else:
                    text += line
        else:
            text = "\n".join(lines)
        return text if "-" in header else text + "\n" if text else text


def _looks_like_key(item: str) -> bool:
    if item[0] in "[{\"'":
        return False
    idx = item.find(": ")
    return idx > 0 or (item.endswith(":") and len(item) > 1)


def _split_key(content: str, number: int) -> tuple[str, str]:
    if content[0] in "\"'":
        key, end = _quoted(content, 0)
        rest = content[end:].lstrip(" ")
        if not rest.startswith(":"):
            raise FrontMatterError(f"expected ':' after the key at line {number}")
        return key, rest[1:].strip()
    if content[0] in "[{&*!|>%@`?":
        raise FrontMatterError(f"unsupported YAML at line {number}")
    idx = content.find(": ")
    if idx < 0:
        if content.endswith(":"):
            idx = len(content) - 1
        else:
            raise FrontMatterError(f"line {number} is not 'key: value'")
    key = content[:idx].strip()
    if not key:
        raise FrontMatterError(f"an empty key at line {number}")
    return key, content[idx + 1:].strip()


def _strip_comment(text: str) -> str:
    """Drop a trailing ` # comment` outside quotes and brackets."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'" and (i == 0 or text[i - 1] in " [,{"):
            quote = ch
        elif ch == "#" and i > 0 and text[i - 1] in " \t":
            return text[:i].rstrip()
    return text.strip()


def _quoted(text: str, start: int) -> tuple[str, int]:
    """A quoted string starting at text[start]; (value, index after the closing quote)."""
    q = text[start]
    i = start + 1
    if q == "'":
        out = []
        while i < len(text):
            if text[i] == "'":
                if i + 1 < len(text) and text[i + 1] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), i + 1
            out.append(text[i])
            i += 1
        raise FrontMatterError("a single-quoted string is not closed on its line")
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            inner = text[start + 1:i]
            try:
                return json.loads('"' + inner.replace("\\'", "'") + '"'), i + 1
            except ValueError:
                raise FrontMatterError("a double-quoted string has an escape outside the subset") from None
        i += 1
    raise FrontMatterError("a double-quoted string is not closed on its line")


def inline_value(text: str) -> Any:
    """A value written on the key's line: quoted, flow collection, wikilink, template or plain scalar."""
    text = _strip_comment(text)
    if not text:
        return None
    if text[0] in "\"'":
        value, end = _quoted(text, 0)
        if text[end:].strip():
            raise FrontMatterError(f"text after a quoted string: {text[end:].strip()!r}")
        return value
    if _WIKILINK.match(text) or _TEMPLATE.match(text):
        return text
    if text[0] == "[":
        value, end = _flow(text, 0)
        if text[end:].strip():
            raise FrontMatterError(f"text after a list: {text[end:].strip()!r}")
        return value
    if text[0] == "{":
        value, end = _flow(text, 0)
        if text[end:].strip():
            raise FrontMatterError(f"text after a mapping: {text[end:].strip()!r}")
        return value
    if text[0] in "&*!%@`":
        raise FrontMatterError(f"unsupported YAML value {text!r} (anchors, aliases and tags are not supported)")
    return plain_scalar(text)


def plain_scalar(text: str) -> Any:
    text = text.strip()
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _flow(text: str, start: int) -> tuple[Any, int]:
    """A flow sequence `[...]` or mapping `{...}` on one line; (value, index after it)."""
    closing = "]" if text[start] == "[" else "}"
    items: list[str] = []
    depth, quote, begin, i = 0, None, start + 1, start + 1
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'" and text[begin:i].strip() == "":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            if depth == 0:
                if ch != closing:
                    raise FrontMatterError("mismatched brackets")
                items.append(text[begin:i])
                break
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[begin:i])
            begin = i + 1
        i += 1
    else:
        raise FrontMatterError("a flow collection is not closed on its line")
    items = [s.strip() for s in items]
    if items and items[-1] == "":
        items.pop()  # trailing comma, or the empty collection
    if any(s == "" for s in items):
        raise FrontMatterError("an empty item in a flow collection")
    if closing == "]":
        return [_flow_item(s) for s in items], i + 1
    out: dict[str, Any] = {}
    for s in items:
        if s[0] in "\"'":
            key, end = _quoted(s, 0)
            rest = s[end:].lstrip()
            if not rest.startswith(":"):
                raise FrontMatterError(f"flow mapping entry {s!r} has no ':'")
            out[key] = _flow_item(rest[1:].strip())
        else:
            key, sep, rest = s.partition(":")
            if not sep or not key.strip():
                raise FrontMatterError(f"flow mapping entry {s!r} has no ':'")
            out[key.strip()] = _flow_item(rest.strip())
    return out, i + 1


def _flow_item(s: str) -> Any:
    if s == "":
        raise FrontMatterError("an empty item in a flow collection")
    if _WIKILINK.match(s) or _TEMPLATE.match(s):
        return s
    if s[0] in "[{":
        value, end = _flow(s, 0)
        if s[end:].strip():
            raise FrontMatterError(f"text after a nested collection: {s[end:].strip()!r}")
        return value
    if s[0] in "\"'":
        value, end = _quoted(s, 0)
        if s[end:].strip():
            raise FrontMatterError(f"text after a quoted string: {s[end:].strip()!r}")
        return value
    if s[0] in "&*!%@`":
        raise FrontMatterError(f"unsupported YAML value {s!r}")
    return plain_scalar(s)
