"""Surgical edits of YAML text: PyYAML nodes give exact character positions, and edits are spliced
into the original string from the end backwards, so every byte outside an edit stays as it was."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass


def compose(text: str):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.compose(text, Loader=loader)


def get(node, key: str):
    if node is None or type(node).__name__ != "MappingNode":
        return None
    for k, v in node.value:
        if getattr(k, "value", None) == key:
            return v
    return None


def scalar(node) -> str | None:
    return node.value if node is not None and type(node).__name__ == "ScalarNode" else None


def items(node) -> list:
    return list(node.value) if node is not None and type(node).__name__ == "SequenceNode" else []


def pos(node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


@dataclass
class Edit:
    start: int
    end: int
    text: str


def apply_edits(text: str, edits: list[Edit]) -> str:
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:e.start] + e.text + text[e.end:]
    return text


_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_/.~][A-Za-z0-9_/.~-]*")


def quote(value: str, style) -> str:
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    return value if _PLAIN_SAFE.fullmatch(value) else "'" + value.replace("'", "''") + "'"


def scalar_edit(node, value: str) -> Edit:
    return Edit(node.start_mark.index, node.end_mark.index, quote(value, node.style))


def embed(text: str, node, content: str) -> Edit:
    """Replace an inline patch string (a `|` block or a one-line scalar) with new content."""
    if node.style in ("|", ">"):
        start = node.start_mark.index
        header_end = text.index("\n", start) if "\n" in text[start:] else len(text)
        header = text[start:header_end].rstrip("\r")
        if not header.startswith("|"):
            header = "|-"
        body_start = header_end + 1
        region = text[body_start:node.end_mark.index]
        lines = region.splitlines(keepends=True)
        while lines and not lines[-1].strip():
            lines.pop()
        first = next((ln for ln in lines if ln.strip()), "")
        indent = first[:len(first) - len(first.lstrip(" "))] or " " * (node.start_mark.column + 2)
        newline = "\r\n" if "\r\n" in text else "\n"
        new_lines = content.rstrip("\n").split("\n")
        body = "".join((indent + ln if ln else "") + newline for ln in new_lines)
        return Edit(start, body_start + len("".join(lines)), header + newline + body)
    return Edit(node.start_mark.index, node.end_mark.index, quote(content.strip(), node.style or "'"))
