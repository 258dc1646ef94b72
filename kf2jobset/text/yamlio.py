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

from ..errors import InputError, Location, Problem
from ..mappings import kubeflow_job_kind
from .yamlstrict import strict_loader

_SEPARATOR = re.compile(r"^---(?:[ \t\r\n]|$)")  # \r: CRLF files
_END = re.compile(r"^\.\.\.(?:[ \t\r\n]|$)")


@dataclass
class Document:
    index: int  # 0-based position in the stream
    text: str  # exact text, including its leading `---` line if any
    start_line: int  # 0-based line of `text` in the file
    data: Any = None  # parsed content (ruamel round-trip types), None for an empty document
    error: InputError | None = None

    def start(self) -> tuple[int, int]:
        """1-based line and column of the document's content in the file: its root node, after the
        leading comments, blank lines and `---` (not `start_line`, which is where its text begins, a
        licence header's first line), so a message about the whole document points at the job."""
        line, col = position(self.data, (), self.start_line)
        if line is not None:
            return line, col
        n = first_content_line(self.text)  # not parsed (a YAML error), or built in code
        text = (self.text.splitlines() or [""])[n]
        body = text[3:] if _SEPARATOR.match(text) else text  # `--- {apiVersion: ...}`
        return self.start_line + n + 1, len(text) - len(body.lstrip()) + 1


_MARKER_LINE = re.compile(r"^(?:---|\.\.\.)(?:\s+#.*)?$")


def first_content_line(text: str) -> int:
    """Index of a document's first content line: blank lines, comments and bare `---`/`...` markers
    (with or without a comment) come before it; `--- {a: 1}` is content. 0 when there is none."""
    for n, line in enumerate(text.splitlines()):
        s = line.strip()
        if s and not s.startswith("#") and not _MARKER_LINE.match(s):
            return n
    return 0


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
        if _SEPARATOR.match(line):
            rest = line[3:].strip()
            if rest and not rest.startswith("#"):  # `--- {apiVersion: ...}`: content on the separator line
                return True
            continue
        if (stripped and not stripped.startswith("#") and not _END.match(line)
                and not line.startswith("%")):  # a %YAML/%TAG directive belongs to the next document
            return True
    return False


def _loader():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    return yaml


def selected_documents(parsed: list[Document], select) -> list[Document]:
    """A parse made for several readers (``select`` any of theirs), as one reader's own parse_documents(select=)
    would have built it: the documents it does not select keep `data` None."""
    import dataclasses

    return [d if d.data is None or select(d.text) else dataclasses.replace(d, data=None) for d in parsed]


def parse_documents(text: str, file: str | None = None, select=None, *, without_comments: bool = False) -> list[Document]:
    """Split and parse; a document that fails to parse carries an InputError with its position.

    `select(doc_text) -> bool` (optional): documents it rejects are only syntax-checked with
    PyYAML's C parser when available (several times faster) and keep `data` None; if that check
    fails they are parsed normally, so errors are always ruamel's.

    `without_comments`: the caller does not need ruamel's comments on the objects (the converter
    places comments by position): valid documents are then built from libyaml's nodes (yamlread),
    falling back to ruamel's loader for anything that builder refuses."""
    docs = split_documents(text)
    yaml = None
    strict = strict_loader()
    for doc in docs:
        if not _has_content(doc.text.splitlines()):
            if any(_END.match(line) for line in doc.text.splitlines()):  # `...` without a document
                strict_error, _, _ = strict(doc.text)
                if strict_error is not None:
                    doc.error = _yaml_error(strict_error, file, doc)
            continue
        limit = check_limits(doc.text)  # before anything builds a tree (bombs, deep nesting)
        if limit is not None:
            message, line, col = limit
            doc.error = InputError(Problem(message, Location(file, doc.index, doc.start_line + line + 1, col + 1)))
            continue
        # Every document must load as Kubernetes reads YAML (1.1, aliases resolved, core tags checked):
        # a document we pass through untouched must not make the output unreadable.
        strict_error, strict_data, roots = strict(doc.text)
        if select is not None and strict_error is None and not select(doc.text) and not _may_be_job(strict_data):
            continue
        if without_comments and strict_error is None and len(roots) == 1:
            built = _build_from_nodes(roots[0], doc.text)
            if built is not _NOT_BUILT:
                doc.data = built
                continue
        if yaml is None:
            yaml = _loader()
        try:
            loaded = list(yaml.load_all(doc.text))
        except RecursionError:  # limits are checked with PyYAML; without libyaml the pure parser may recurse
            doc.error = InputError(Problem(f"nesting too deep (more than {MAX_DEPTH} levels)",
                                           Location(file, doc.index, *doc.start())))
            continue
        except Exception as exc:  # ruamel raises several unrelated types for bad input
            doc.error = _yaml_error(exc, file, doc)
            continue
        if strict_error is not None:
            doc.error = _yaml_error(strict_error, file, doc)
            continue
        loaded = [d for d in loaded if d is not None]
        if "!" in doc.text:
            loaded = [_resolve_core_tags(d) for d in loaded]
        doc.data = loaded[0] if loaded else None
        if len(loaded) > 1:  # a separator our line scan could not see (e.g. inside a flow)
            doc.error = InputError(Problem("more than one YAML document in one block", Location(file, doc.index, *doc.start())))
    return docs


_NOT_BUILT = object()


def _build_from_nodes(root, text: str):
    from .yamlread import NotReadable, build, may_read

    if root is None or not may_read(text):
        return _NOT_BUILT
    try:
        return build(root, text)
    except NotReadable:
        return _NOT_BUILT


MAX_DEPTH = 100  # nested mappings/sequences; Kubernetes objects need about 30
MAX_ALIAS_NODES = 10_000  # nodes that aliases may add, or as many as the document has itself if more


_INDENT = re.compile(r"^[ ]*", re.M)
_BRACKET = re.compile(r"[\[\]{}]")


def _depth_bound(text: str) -> int:
    """An upper bound of the nesting depth: block levels need indentation (a sequence may share its
    key's column), flow levels need brackets."""
    indent = max((m.end() - m.start() for m in _INDENT.finditer(text)), default=0)
    depth = deepest = 0
    for m in _BRACKET.finditer(text):
        depth += 1 if m.group() in "[{" else -1
        deepest = max(deepest, depth)
    return 2 * (indent + 1) + deepest


class _Expansion:
    """One document's nodes counted as its events come: the nesting, the size of each anchored node, and
    what aliases add against what the document holds itself."""

    def __init__(self):
        self.stack: list[list] = []  # per open collection: [anchor, nodes in it]
        self.anchors: dict = {}
        self.own = self.aliased = 0

    def opened(self, event):
        self.own += 1
        self.stack.append([event.anchor, 1])
        if len(self.stack) > MAX_DEPTH:
            m = event.start_mark
            return f"nesting too deep: more than {MAX_DEPTH} levels of mappings/sequences", m.line, m.column
        return None

    def closed(self) -> None:
        anchor, size = self.stack.pop()
        if anchor is not None:
            self.anchors[anchor] = size
        if self.stack:
            self.stack[-1][1] += size

    def scalar(self, event) -> None:
        self.own += 1
        if event.anchor is not None:
            self.anchors[event.anchor] = 1
        if self.stack:
            self.stack[-1][1] += 1

    def alias(self, event):
        size = self.anchors.get(event.anchor, 1)
        self.aliased += size
        if self.stack:
            self.stack[-1][1] += size
        if self.aliased > max(MAX_ALIAS_NODES, self.own):
            m = event.start_mark
            return (f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes (a \"billion laughs\" document?); "
                    "write the values out", m.line, m.column)
        return None


def check_limits(text: str):
    """Bounded expansion, checked on the event stream before anything builds a tree: nesting depth
    at most MAX_DEPTH, and aliases adding at most max(MAX_ALIAS_NODES, the document's own nodes)
    when expanded ("billion laughs"). Returns (message, line, column) 0-based, or None. Syntax
    errors are left to the real parser (None)."""
    if "*" not in text and _depth_bound(text) < MAX_DEPTH:
        return None  # no aliases, and cannot nest that deep: skip the scan
    try:
        import yaml as pyyaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        return None
    loader = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
    expansion = _Expansion()
    try:
        for event in pyyaml.parse(text, Loader=loader):
            kind = type(event).__name__
            found = None
            if kind in ("MappingStartEvent", "SequenceStartEvent"):
                found = expansion.opened(event)
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                expansion.closed()
            elif kind == "ScalarEvent":
                expansion.scalar(event)
            elif kind == "AliasEvent":
                found = expansion.alias(event)
            elif kind == "DocumentEndEvent":
                expansion = _Expansion()
            if found is not None:
                return found
    except pyyaml.YAMLError:
        return None
    except RecursionError:  # pragma: no cover - the pure parser on pathological input
        return f"nesting too deep: more than {MAX_DEPTH} levels of mappings/sequences", 0, 0
    return None


_CORE = "tag:yaml.org,2002:"


def _resolve_core_tags(node):
    """ruamel keeps `!!str PyTorchJob` as a TaggedScalar; Kubernetes reads the plain value. Resolve
    the core scalar tags in place (other tags are left to the schema checks)."""
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(node, TaggedScalar):
        tag = str(getattr(node.tag, "value", node.tag) or "")
        value = node.value
        try:
            if tag == _CORE + "str":
                return str(value)
            if tag == _CORE + "int":
                return int(str(value).replace("_", ""), 0)
            if tag == _CORE + "float":
                return float(str(value).replace("_", ""))
            if tag == _CORE + "null":
                return None
        except ValueError:
            return node
        return node
    if isinstance(node, dict):
        for key in list(node.keys()):
            value = node[key]
            new = _resolve_core_tags(value)
            if new is not value:
                node[key] = new
    elif isinstance(node, list):
        for i, value in enumerate(node):
            new = _resolve_core_tags(value)
            if new is not value:
                node[i] = new
    return node


def _may_be_job(data) -> bool:
    """What a strict load found: a Kubeflow job kind in a kubeflow.org group (any version), a
    Katib Experiment or a List (which may hold one). Such documents are always converted or refused."""
    for d in data or ():
        if isinstance(d, dict) and (kubeflow_job_kind(d) or d.get("kind") in ("List", "Experiment")):
            return True
    return False


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
        if obj.endswith("\n") and not obj.endswith("\n\n") and not any(line != line.rstrip() for line in obj.splitlines()):
            return LiteralScalarString(obj)
        return obj
    anchor = getattr(obj, "yaml_anchor", None)
    if anchor is not None and anchor() is not None:
        # Anchor names come from the input, and a copied node repeats its name: let the dumper name
        # the anchors it needs (shared nodes) itself, so that every name is defined once.
        obj.yaml_set_anchor(None)
    if type(obj) is str and _YAML11_NON_STRING.match(obj):
        # ruamel writes YAML 1.2, where `on`/`no`/`1:20` are plain strings; Kubernetes reads YAML 1.1,
        # where they are booleans or numbers. Quote them so the text stays text.
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return DoubleQuotedScalarString(obj)
    if isinstance(obj, dict):
        if getattr(obj, "merge", None):  # assigning every key makes merged keys the map's own
            for k in list(obj.keys()):
                obj[k] = _prepare(obj[k])
            return obj
        for k, v in list(dict.items(obj)):  # ruamel's own views iterate slowly
            new = _prepare(v)
            if new is not v:
                obj[k] = new
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
    """YAML text for new objects, each starting with `---`: ruamel's round-trip layout, written
    directly (yamlwriter) when the object allows it, else by ruamel itself."""
    pieces = []
    for obj in objects:
        pieces.append("---\n")
        pieces.append(_dump_one(_prepare(obj), style))
    text = "".join(pieces)
    return text.replace("\n", style.newline) if style.newline != "\n" else text


FAST_WRITER = True  # tests switch it off to compare with ruamel


def _dump_one(obj: Any, style: Style) -> str:
    if FAST_WRITER:
        from .yamlwriter import NotWritable, write_document

        try:
            return write_document(obj, style.mapping, style.sequence, style.offset)
        except NotWritable:
            pass
    return dump_with_ruamel(obj, style)


def dump_with_ruamel(obj: Any, style: Style) -> str:
    """One prepared object as ruamel's round-trip dumper writes it (no `---`, `\n` line ends)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
    out = io.StringIO()
    yaml.dump(obj, out)
    return out.getvalue()


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
