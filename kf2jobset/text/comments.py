"""Comments of a converted document: who owns each one in the v1 job, and where it goes in the JobSet.

ruamel attaches a comment to the token *before* it, so a comment line written above `Worker:` is
stored at the end of the master's pod template; deep-copying templates then carries it into the
wrong place. Instead, comments are found by position (PyYAML's C scanner gives exact token marks,
so `#` inside block scalars is never mistaken for a comment) and owned by position:

- an end-of-line comment belongs to the deepest field that starts on its line;
- a comment line belongs to the block its indentation puts it in: the innermost mapping/sequence
  whose children sit at its column (a comment line sits below the last child of a block and above the
  next; the indentation says which block it continues). Comment lines indented under it (a
  commented-out field's children) go with it. Users keep toggles this way (`#nvidia.com/gpu: 8` among
  `requests:`), so uncommenting the line in the JobSet must mean what it meant in the v1 job.

After conversion, every ruamel comment is stripped from the output objects and each owned comment is
re-attached where its block lives in the JobSet (same path for metadata and the pod template,
`spec.replicatedJobs[i]...` for a replica spec, ...), at the same column relative to the block's
children: before the child that followed it, else after the one before it, else at the block's end.
A commented-out key goes where that field would live in the JobSet (a replica's `#restartPolicy:` in
its pod spec); one with no JobSet counterpart (`runPolicy.backoffLimit`) is dropped and counted, as is
prose above a field that is gone. Comment lines before the document's first field, and the unindented
ones after its last field, are not handled here: the pipeline keeps those lines verbatim.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Sequence

_BREAK = re.compile(r"\r\n|\r|\n|\x85|\u2028|\u2029")  # YAML's line breaks (not str.splitlines')



def split_lines(text: str) -> list[str]:
    """Lines with their breaks, numbered as YAML scanners number them."""
    out, pos = [], 0
    for m in _BREAK.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


@dataclass
class Comment:
    line: int  # 0-based line in the document text
    column: int  # column of `#`
    text: str  # from `#` to the end of the line, without the line break
    eol: bool  # follows content on the same line


@dataclass
class Layout:
    """What the scanner says about one document's text."""

    comments: list[Comment]
    first_content: int | None  # first line holding a token (None: no content)
    last_content: int | None  # last line holding a token
    separator_inline: bool  # the first content token sits on a `---` line (`--- !!map`, `--- |`)


def scan(text: str) -> Layout | None:
    """Comment positions and content extent of one document; None if the scanner rejects it."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with the kubernetes client
        return None
    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    skip = (yaml.StreamStartToken, yaml.StreamEndToken, yaml.DocumentStartToken, yaml.DocumentEndToken,
            yaml.DirectiveToken, yaml.BlockEndToken)
    ends: dict[int, int] = {}  # line -> column after the last token on it
    inside: list[tuple[int, int]] = []  # line ranges covered by multi-line scalars
    first = last = None
    separator_line = None
    try:
        for tok in yaml.scan(text, Loader=loader):
            s, e = tok.start_mark, tok.end_mark
            if isinstance(tok, yaml.DocumentStartToken):
                separator_line = s.line
            if isinstance(tok, skip):
                continue
            if first is None:
                first = s.line
            end_line = e.line if e.column > 0 or e.line == s.line else e.line - 1
            last = end_line if last is None else max(last, end_line)
            if e.line > s.line:
                inside.append((s.line + 1, end_line))
                ends[end_line] = max(ends.get(end_line, 0), e.column if e.line == end_line else 1 << 30)
            ends[s.line] = max(ends.get(s.line, 0), e.column if e.line == s.line else 1 << 30)
    except yaml.YAMLError:
        return None
    covered = set()
    for a, b in inside:
        covered.update(range(a, b + 1))
    comments = []
    for n, line in enumerate(split_lines(text)):
        if n in covered and n not in ends:
            continue
        body = _BREAK.sub("", line)
        start = ends.get(n, 0)
        if start >= len(body):
            continue
        pos = body.find("#", start)
        while pos > 0 and body[pos - 1] not in " \t":
            pos = body.find("#", pos + 1)
        if pos < 0:
            continue
        comments.append(Comment(n, pos, body[pos:].rstrip(" \t"), eol=bool(body[:pos].strip())))
    inline = first is not None and separator_line == first
    return Layout(comments, first, last, inline)


# ---- owners: field paths in the source tree ------------------------------------------------------

@dataclass(frozen=True)
class _Node:
    line: int
    column: int
    path: tuple


def _block(node) -> bool:
    fa = getattr(node, "fa", None)
    return fa is not None and not fa.flow_style()


def _nodes(data: Any) -> list[_Node]:
    """Every block-style key and sequence item with its position (ruamel `lc`, 0-based)."""
    out: list[_Node] = []
    seen: set[int] = set()

    def walk(node, path):
        lc = getattr(node, "lc", None)
        if lc is None or not _block(node) or id(node) in seen:  # an alias is walked once, at its anchor
            return
        seen.add(id(node))
        if isinstance(node, dict):
            for key, value in node.items():
                try:
                    line, col = lc.key(key)
                except (KeyError, TypeError, AttributeError):
                    continue
                out.append(_Node(line, col, path + (key,)))
                walk(value, path + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                try:
                    line, col = lc.item(i)
                except (KeyError, TypeError, AttributeError, IndexError):
                    continue
                out.append(_Node(line, col, path + (i,)))
                walk(value, path + (i,))

    walk(data, ())
    out.sort(key=lambda n: (n.line, len(n.path), n.column))
    return out


def _children(node) -> tuple[int, list[tuple[Any, int]]] | None:
    """(column of the keys / dashes, [(key or index, start line)]) of a non-empty block collection."""
    lc = getattr(node, "lc", None)
    if lc is None or not isinstance(node, (dict, list)) or not node or not _block(node):
        return None
    kids = []
    try:
        if isinstance(node, dict):
            column = None
            for key in node:
                line, col = lc.key(key)
                column = col if column is None else column
                kids.append((key, line))
            return column, kids
        for i in range(len(node)):
            kids.append((i, lc.item(i)[0]))
        return lc.col, kids  # a block sequence starts at its first dash
    except (KeyError, TypeError, AttributeError, IndexError):
        return None


_KEY = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s#'"\[\]{},&*!|>%@`-][^\s:#]*(?::[^\s#]+)*):(?:[ \t]|$)""")
_FIELD = re.compile(r"[a-z][A-Za-z0-9]*\Z|.*[./]")  # a Kubernetes field name or a qualified name


def _body(text: str) -> str:
    """A comment's text without its `#`s."""
    return text.lstrip("#")


def _inner_indent(text: str) -> int:
    body = _body(text)
    return len(text) - len(body) + len(body) - len(body.lstrip(" \t"))


def classify(text: str) -> tuple[str, Any]:
    """("key", name) for a commented-out `name: ...` field, ("item", None) for a commented-out
    sequence item, ("prose", None) for anything else."""
    body = _body(text).strip()
    if body == "-" or body.startswith("- "):
        return "item", None
    m = _KEY.match(body)
    if not m:
        return "prose", None
    try:
        import yaml

        value = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader)
    except Exception:
        return "prose", None
    if not isinstance(value, dict) or len(value) != 1:
        return "prose", None
    key = next(iter(value))
    if not isinstance(key, str) or not _FIELD.match(key):
        return "prose", None
    return "key", key


@dataclass
class Owned:
    """An end-of-line comment: it stays on the line of the field at `path`."""

    path: tuple
    eol: bool
    lines: list[str]
    delta: int = 0  # comment column minus the owner's column


@dataclass
class Lines:
    """A commented-out field (its first line and the lines its indentation puts under it) or a prose
    comment, owned by the block collection its indentation puts it in."""

    block: tuple  # path of the owning mapping/sequence in the source
    before: Any  # key/index of the block's child that follows it (None: it ends the block)
    after: Any  # key/index of the child that precedes it (None: it starts the block)
    kind: str  # "key" | "item" | "prose" (classify)
    key: Any  # the field name of a commented-out key
    lines: list[tuple[int, str]]  # (column relative to the block's children, text); (0, "") a blank line
    line: int  # source line of the first comment
    run: int  # comment lines with nothing but blank lines between them form a run
    gap: int  # blank lines between this and the previous group of its run
    under_after: bool = False  # it continues the child before it (`limits:` over `#  cpu: 4`, `args:` over `#- x`)


def _locate(data: Any, line: int, column: int, text: str, cache: dict | None = None):
    """The innermost block collection that a comment line at (line, column) sits in by indentation:
    (path, column of its children, child before, child after), or None."""
    cache = {} if cache is None else cache

    def children(node):
        if id(node) not in cache:
            cache[id(node)] = (_children(node), node)  # the node is kept so that its id stays its own
        return cache[id(node)][0]

    node, path = data, ()
    top = children(node)
    if top is None:
        return None
    seen = {id(node)}
    while True:
        kcol, kids = children(node) or top
        before = after = None
        for key, kline in kids:
            if kline < line:
                after = key
            else:
                before = key
                break
        if after is not None:
            value = node[after]
            inner = children(value) if id(value) not in seen else None
            if inner is not None:
                vcol, vkids = inner
                if line < vkids[0][1] or column > vcol or (column == vcol and (
                        vcol > kcol or classify(text)[0] == "item")):  # `key:\n- item`: dashes at the key's column
                    seen.add(id(value))
                    node, path = value, path + (after,)
                    continue
        return path, kcol, after, before


def trailing_end(layout: Layout, lines: list[str], data: Any) -> int:
    """First line of the document's verbatim tail: comment lines right after the last field that are
    indented (they belong to a block) are owned like any other; the rest (a file trailer at column 0,
    blank lines, `...`) stays as it is."""
    end = layout.last_content + 1
    if layout.last_content is None:
        return len(lines)
    top = _children(data)
    root = top[0] if top else 0
    by_line = {c.line: c for c in layout.comments}
    n, found = end, end
    while n < len(lines):
        c = by_line.get(n)
        if c is not None and not c.eol and c.column > root:
            found = n + 1
        elif c is not None or _BREAK.sub("", lines[n]).strip():
            break
        n += 1
    return found


def own(layout: Layout, data: Any, until: int | None = None) -> list:
    """Owners of the comments after the document's first content line (up to line `until`, the
    verbatim tail): Owned for end-of-line comments, Lines for comment lines."""
    if layout.first_content is None:
        return []
    nodes = _nodes(data)
    if not nodes:
        return []
    last = layout.last_content if until is None else until - 1
    by_line: dict[int, list[_Node]] = {}
    for node in nodes:
        by_line.setdefault(node.line, []).append(node)
    lines_sorted = sorted(by_line)
    out: list = []
    runs = 0
    located: dict = {}  # the block children of each node _locate visits
    for event in _comment_events(layout, last, lines_sorted):
        if isinstance(event, Comment):
            owner = _eol_owner(by_line, lines_sorted, event.line)
            if owner is not None:
                out.append(Owned(owner.path, True, [event.text], event.column - owner.column))
        else:
            runs += 1
            out += _run_lines(data, event, runs, located)
    return out


def _comment_events(layout: Layout, last: int, lines_sorted: list[int]):
    """The comments from the first content line to `last`, in order: an end-of-line comment alone, comment
    lines as runs (a run ends at content between two comment lines, or at an end-of-line comment)."""
    run: list[Comment] = []
    for c in layout.comments:
        if c.line < layout.first_content or c.line > last:
            continue
        if c.eol:
            if run:
                yield run
                run = []
            yield c
            continue
        if run:
            k = bisect.bisect_right(lines_sorted, run[-1].line)
            if k < len(lines_sorted) and lines_sorted[k] < c.line:
                yield run  # content between the two: a new run
                run = []
        run.append(c)
    if run:
        yield run


def _eol_owner(by_line: dict, lines_sorted: list[int], line: int):
    """The deepest node starting on `line`, else on the nearest content line above it (None: there is none)."""
    here = by_line.get(line)
    if not here:
        k = bisect.bisect_left(lines_sorted, line) - 1
        if k < 0:
            return None
        here = by_line[lines_sorted[k]]
    return max(here, key=lambda n: (len(n.path), n.column))


def _comment_groups(run: list[Comment]) -> list[list[Comment]]:
    """A run's comment lines split into commented-out fields, each with the lines indented under it."""
    groups: list[list[Comment]] = []
    for c in run:
        if groups and _continues(groups[-1][0], c):
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _run_lines(data: Any, run: list[Comment], runs: int, located: dict) -> list:
    """A Lines owner for each group of a run of comment lines that sits in a block of `data`."""
    out = []
    prev_end = None
    for group in _comment_groups(run):
        head = group[0]
        where = _locate(data, head.line, head.column, head.text, located)
        if where is None:
            continue
        path, kcol, after, before = where
        kind, key = classify(head.text)
        texts: list[tuple[int, str]] = []
        for p, c in zip([None, *group], group, strict=False):
            if p is not None:
                texts += [(0, "")] * (c.line - p.line - 1)
            texts.append((c.column - kcol, c.text))
        gap = 0 if prev_end is None else head.line - prev_end - 1
        parent = get_path(data, path)[2]
        under = after is not None and (texts[0][0] > 0 or (  # deeper than the block's children
            kind == "item" and texts[0][0] == 0 and isinstance(parent, dict)))  # `key:` then `#- item`
        out.append(Lines(path, before, after, kind, key, texts, head.line, runs, gap, under))
        prev_end = group[-1].line
    return out


def _continues(head: Comment, c: Comment) -> bool:
    """Is comment line `c` part of the commented-out field that `head` starts (indented under it)?"""
    if c.column != head.column:
        return c.column > head.column
    hi, ci = _inner_indent(head.text), _inner_indent(c.text)
    body = _body(head.text).strip()
    if body.startswith("- "):  # an item: what is under it starts at its content's column
        return ci >= hi + 1 + len(body[1:]) - len(body[1:].lstrip(" "))
    if ci != hi:
        return ci > hi
    # `#command:` then `#- sh`: a sequence at its key's column
    head_body = _COMMENT_TAIL.sub("", _body(head.text))
    return head_body.endswith(":") and classify(c.text)[0] == "item" and classify(head.text)[0] == "key"


_COMMENT_TAIL = re.compile(r"(?:\s+#.*)?\s*$")


def get_path(obj: Any, path: Sequence) -> tuple[bool, Any, Any]:
    """(found, parent, node) for a path."""
    parent, node = None, obj
    for part in path:
        parent = node
        if isinstance(node, dict) and not isinstance(part, int) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False, None, None
    return True, parent, node
