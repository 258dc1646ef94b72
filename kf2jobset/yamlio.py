"""YAML streams as documents with their exact source text, positions, and a dumper for new objects.

A stream is cut into documents on `---` lines before any parsing, so every document keeps its own
bytes (untouched documents are written back verbatim) and one broken document is reported alone.
Positions are 1-based lines/columns in the whole file.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any, Sequence

from .errors import InputError, Location, Problem

_SEPARATOR = re.compile(r"^---(?:[ \t\r\n]|$)")  # \r: CRLF files
_END = re.compile(r"^\.\.\.(?:[ \t\r\n]|$)")


@dataclass
class Document:
    index: int  # 0-based position in the stream
    text: str  # exact text, including its leading `---` line if any
    start_line: int  # 0-based line of `text` in the file
    data: Any = None  # parsed content (ruamel round-trip types), None for an empty document
    error: InputError | None = None


def split_documents(text: str) -> list[Document]:
    """Cut a stream into documents. Text before the first `---` (licence headers) is its own
    document only if it holds content; otherwise it is kept as the first document's prefix."""
    lines = text.splitlines(keepends=True)
    chunks: list[tuple[int, list[str]]] = [(0, [])]
    ended = False
    for n, line in enumerate(lines):
        if _SEPARATOR.match(line):
            if chunks[-1][1] and (ended or _has_content(chunks[-1][1])):
                chunks.append((n, []))
            ended = False
        elif _END.match(line):
            ended = True
        chunks[-1][1].append(line)
    return [Document(i, "".join(body), start) for i, (start, body) in enumerate(chunks)]


def _has_content(lines: Sequence[str]) -> bool:
    for line in lines:
        stripped = line.strip()
        if (stripped and not stripped.startswith("#") and not _SEPARATOR.match(line) and not _END.match(line)
                and not line.startswith("%")):  # a %YAML/%TAG directive belongs to the next document
            return True
    return False


def _loader():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    return yaml


def parse_documents(text: str, file: str | None = None, select=None) -> list[Document]:
    """Split and parse; a document that fails to parse carries an InputError with its position.

    `select(doc_text) -> bool` (optional): documents it rejects are only syntax-checked with
    PyYAML's C parser when available (several times faster) and keep `data` None; if that check
    fails they are parsed normally, so errors are always ruamel's."""
    docs = split_documents(text)
    yaml = _loader()
    fast_check = _c_syntax_check() if select is not None else None
    for doc in docs:
        if not _has_content(doc.text.splitlines()):
            continue
        if fast_check is not None and not select(doc.text) and fast_check(doc.text):
            continue
        try:
            loaded = list(yaml.load_all(doc.text))
        except Exception as exc:  # ruamel raises several unrelated types for bad input
            doc.error = _yaml_error(exc, file, doc)
            continue
        loaded = [d for d in loaded if d is not None]
        if len(loaded) > 1:  # a separator our line scan could not see (e.g. inside a flow)
            doc.error = InputError(Problem("more than one YAML document in one block", Location(file, doc.index, doc.start_line + 1)))
        doc.data = loaded[0] if loaded else None
    return docs


def _c_syntax_check():
    """A function telling whether a document parses with PyYAML's C parser, or None without libyaml."""
    try:
        import yaml as pyyaml

        loader = pyyaml.CSafeLoader
    except (ImportError, AttributeError):
        return None

    def ok(text: str) -> bool:
        try:
            for _event in pyyaml.parse(text, Loader=loader):
                pass
            return True
        except Exception:
            return False

    return ok


def _yaml_error(exc: Exception, file: str | None, doc: Document) -> InputError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = col = None
    if mark is not None:
        lines = doc.text.splitlines()
        if mark.line >= len(lines) and lines:
            # "end of stream" errors point past the last line; show the end of the last line instead
            line, col = doc.start_line + len(lines), len(lines[-1]) + 1
        else:
            line, col = doc.start_line + mark.line + 1, mark.column + 1
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    msg = f"invalid YAML: {problem}" + (f" ({context})" if context and context != problem else "")
    return InputError(Problem(msg, Location(file, doc.index, line, col)))


def position(node: Any, path: Sequence, start_line: int = 0) -> tuple[int | None, int | None]:
    """1-based line/column of the deepest element of `path` found in a ruamel node tree."""
    best: tuple[int | None, int | None] = (None, None)
    for part in path:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(part, int) and isinstance(node, list):
                if lc is not None:
                    line, col = lc.item(part)
                    best = (line, col)
                node = node[part]
            elif isinstance(node, dict) and part in node:
                if lc is not None:
                    line, col = lc.key(part)
                    best = (line, col)
                node = node[part]
            else:
                break
        except Exception:  # lc info is absent on nodes built in code
            break
    if best[0] is None:
        lc = getattr(node, "lc", None)
        if lc is not None and getattr(lc, "line", None) is not None:
            best = (lc.line, lc.col)
    if best[0] is None:
        return (None, None)
    return (start_line + best[0] + 1, best[1] + 1)


@dataclass(frozen=True)
class Style:
    mapping: int = 2
    sequence: int = 4
    offset: int = 2
    newline: str = "\n"


def detect_style(text: str) -> Style:
    """Indentation style of a file: kubectl style (`- ` flush with the parent key) or indented dashes."""
    newline = "\r\n" if "\r\n" in text else "\n"
    prev_key_indent = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped.endswith(":") and not stripped.startswith("- ") and not stripped.startswith("#"):
            prev_key_indent = indent
            continue
        if stripped.startswith("- ") and prev_key_indent is not None:
            if indent == prev_key_indent:
                return Style(2, 2, 0, newline)
            return Style(2, indent - prev_key_indent + 2, indent - prev_key_indent, newline)
        prev_key_indent = None
    return Style(newline=newline)


_YAML11_NON_STRING = re.compile(r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+)$")


def _prepare(obj: Any) -> Any:
    """Multi-line strings as literal blocks; long integer lists (exit codes) in flow style."""
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(obj, str) and "\n" in obj and not isinstance(obj, LiteralScalarString):
        if obj.endswith("\n") and not obj.endswith("\n\n") and not any(l != l.rstrip() for l in obj.splitlines()):
            return LiteralScalarString(obj)
        return obj
    if type(obj) is str and _YAML11_NON_STRING.match(obj):
        # ruamel writes YAML 1.2, where `on`/`no`/`1:20` are plain strings; Kubernetes reads YAML 1.1,
        # where they are booleans or numbers. Quote them so the text stays text.
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return DoubleQuotedScalarString(obj)
    if isinstance(obj, dict):
        for k in list(obj.keys()):
            obj[k] = _prepare(obj[k])
        return obj
    if isinstance(obj, list):
        items = [_prepare(v) for v in obj]
        if len(items) > 8 and all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            seq = CommentedSeq(items)
            seq.fa.set_flow_style()
            return seq
        for i, item in enumerate(items):
            if item is not obj[i]:  # item-wise: slice assignment would drop ruamel's comment slots
                obj[i] = item
        return obj
    return obj


def dump_documents(objects: Sequence[Any], style: Style = Style()) -> str:
    """YAML text for new objects, each starting with `---`."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
    out = io.StringIO()
    for obj in objects:
        out.write("---\n")
        yaml.dump(_prepare(obj), out)
    text = out.getvalue()
    return text.replace("\n", style.newline) if style.newline != "\n" else text


def to_plain(obj: Any) -> Any:
    """ruamel round-trip types -> plain dict/list/str/int/float/bool (for JSON and comparisons)."""
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, str):
        return str(obj)
    return obj
