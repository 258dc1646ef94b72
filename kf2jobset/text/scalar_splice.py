"""A string scalar of a YAML document rewritten in place and in its own style (literal stays literal, folded
becomes literal, quoted and plain become double-quoted), a condition scalar replaced, and the node at a path of a
PyYAML node tree. Every other byte of the document stays."""
from __future__ import annotations

import json
import re

from .yamledit import Edit, quote


def node_at(root, path: tuple):
    """(node, key node) at `path` in a PyYAML node tree; (None, None) when absent."""
    node, key = root, None
    for part in path:
        kind = type(node).__name__
        if kind == "MappingNode":
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if pair is None:
                return None, None
            key, node = pair
        elif kind == "SequenceNode" and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None, None
    return node, key


def scalar_edit(text: str, node, key, content: str):
    """The scalar's new text in its own style: literal stays literal (its chomping and any comment on
    the header line kept), folded becomes literal, quoted and plain become double-quoted."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if node.style not in ("|", ">"):  # quoted or plain: double-quoted (escapes keep every character)
        return Edit(node.start_mark.index, node.end_mark.index, _double_quoted(text, node, content, newline))
    start = node.start_mark.index
    header_end = text.find("\n", start)
    header_end = len(text) if header_end < 0 else header_end
    header = text[start:header_end].rstrip("\r")
    m = re.match(r"[|>]([-+0-9]*)(.*)$", header)
    indicators, rest = (m.group(1), m.group(2)) if m else ("", "")
    chomp = "".join(c for c in indicators if c in "+-")
    digits = "".join(c for c in indicators if c.isdigit())
    body_start = header_end + 1
    lines = text[body_start:node.end_mark.index].splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    if digits and key is not None:
        indent = " " * (key.start_mark.column + int(digits))
    else:
        first = next((ln for ln in lines if ln.strip()), "")
        indent = first[:len(first) - len(first.lstrip(" "))] or " " * (node.start_mark.column + 2)
    body = "".join((indent + ln if ln.strip() else "") + newline for ln in content.rstrip("\r\n").split("\n"))
    body = body.replace("\r" + newline, newline)
    return Edit(start, body_start + len("".join(lines)), "|" + chomp + rest + newline + body)


def _double_quoted(text: str, node, content: str, newline: str) -> str:
    """JSON's escapes are YAML's: one line, or, when the scalar spanned lines, one line per line of the
    content, each ending in an escaped line break (`\\` at the end joins without a space; a leading space
    of the next line is escaped so it is kept)."""
    quoted = json.dumps(content, ensure_ascii=False)
    if node.start_mark.line == node.end_mark.line or "\\n" not in quoted:
        return quoted
    second = text[text.find("\n", node.start_mark.index) + 1:node.end_mark.index]
    indent = second[:len(second) - len(second.lstrip(" "))] or " " * (node.start_mark.column + 2)
    parts = [json.dumps(part, ensure_ascii=False)[1:-1] for part in content.split("\n")]
    lines = []
    for i, part in enumerate(parts):
        piece = part + ("\\n" if i < len(parts) - 1 else "")
        if i == 0:
            lines.append('"' + piece)
        elif piece:
            lines.append(indent + ("\\" if piece[:1] in (" ", "\t") else "") + piece)
    return ("\\" + newline).join(lines) + '"'


def condition_edit(node, value: str):
    if not node.style and _plain_ok(value):  # libyaml says '' for plain, PyYAML None
        return Edit(node.start_mark.index, node.end_mark.index, value)
    return Edit(node.start_mark.index, node.end_mark.index, quote(value, node.style or "'"))


def _plain_ok(value: str) -> bool:
    import yaml

    if ": " in value or " #" in value or value[:1] in "!&*{}[]|>'\"%@`#,?-:":
        return False
    try:
        return yaml.safe_load("k: " + value) == {"k": value}
    except yaml.YAMLError:
        return False
