"""Comments of a converted document: who owns each one in the v1 job, and where it goes in the JobSet.

ruamel attaches a comment to the token *before* it, so a comment line written above `Worker:` is
stored at the end of the master's pod template; deep-copying templates then carries it into the
wrong place. Instead, comments are found by position (PyYAML's C scanner gives exact token marks,
so `#` inside block scalars is never mistaken for a comment) and owned by field path:

- an end-of-line comment belongs to the deepest field that starts on its line;
- a comment line belongs to the next field below it (the shallowest field on that line).

After conversion, every ruamel comment is stripped from the output objects and each owned comment is
re-attached to the field that carries the same information in the JobSet (same path for metadata,
`spec.replicatedJobs[i]...` for a replica spec, ...). Comments whose field does not survive are
dropped and counted. Comment lines before the document's first field and after its last one are not
handled here: the pipeline keeps those lines verbatim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

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


def _nodes(data: Any) -> list[_Node]:
    """Every block-style key and sequence item with its position (ruamel `lc`, 0-based)."""
    out: list[_Node] = []

    def block(node) -> bool:
        fa = getattr(node, "fa", None)
        return fa is not None and not fa.flow_style()

    seen: set[int] = set()

    def walk(node, path):
        lc = getattr(node, "lc", None)
        if lc is None or not block(node) or id(node) in seen:  # an alias is walked once, at its anchor
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


@dataclass
class Owned:
    path: tuple
    eol: bool
    lines: list[str]  # comment texts (`# ...`); "" for a blank line inside a comment block
    delta: int = 0  # eol: comment column minus the owner's column


def own(layout: Layout, data: Any) -> list[Owned]:
    """Owners of the comments between the document's first and last content lines."""
    if layout.first_content is None:
        return []
    nodes = _nodes(data)
    if not nodes:
        return []
    by_line: dict[int, list[_Node]] = {}
    for node in nodes:
        by_line.setdefault(node.line, []).append(node)
    lines_sorted = sorted(by_line)
    out: list[Owned] = []
    pending: list[Comment] = []

    def flush(owner: _Node | None):
        if owner is not None and pending:
            texts: list[str] = []
            for prev, c in zip([None, *pending], pending):
                if prev is not None:
                    texts += [""] * (c.line - prev.line - 1)
                texts.append(c.text)
            out.append(Owned(owner.path, False, texts))
        pending.clear()

    import bisect

    for c in layout.comments:
        if c.line < layout.first_content or c.line > layout.last_content:
            continue
        if c.eol:
            here = by_line.get(c.line)
            if here:
                owner = max(here, key=lambda n: (len(n.path), n.column))
            else:
                k = bisect.bisect_left(lines_sorted, c.line) - 1
                if k < 0:
                    continue
                owner = max(by_line[lines_sorted[k]], key=lambda n: (len(n.path), n.column))
            out.append(Owned(owner.path, True, [c.text], c.column - owner.column))
            continue
        if pending and c.line != pending[-1].line + 1:
            # a comment block interrupted by content it does not own: close it at its next field
            nxt = _next(lines_sorted, by_line, pending[-1].line)
            if nxt is not None and nxt.line < c.line:
                flush(nxt)
        pending.append(c)
    if pending:
        flush(_next(lines_sorted, by_line, pending[-1].line))
    return out


def _next(lines_sorted, by_line, line):
    import bisect

    k = bisect.bisect_right(lines_sorted, line)
    if k >= len(lines_sorted):
        return None
    return min(by_line[lines_sorted[k]], key=lambda n: (len(n.path), n.column))


# ---- targets: where a source field's information lives in the outputs ------------------------------

@dataclass
class JobPlace:
    """One converted job: where it was in the source document and where its JobSet went."""

    source_prefix: tuple
    output: int  # index in the document's output objects
    target_prefix: tuple
    specs_field: str
    rjob_index: dict  # source replica key (as written) -> index in spec.replicatedJobs


@dataclass
class PathMap:
    jobs: list[JobPlace] = field(default_factory=list)
    # (source prefix, output index, target prefix) for parts carried over as they were (Katib
    # experiment fields, untouched List items); the longest prefix wins.
    same: list[tuple[tuple, int, tuple]] = field(default_factory=list)

    def target(self, path: tuple) -> tuple[int, tuple] | None:
        for job in sorted(self.jobs, key=lambda j: -len(j.source_prefix)):
            n = len(job.source_prefix)
            if path[:n] == job.source_prefix:
                rel = _job_rel(path[n:], job)
                return None if rel is None else (job.output, job.target_prefix + rel)
        for src, out, tgt in sorted(self.same, key=lambda s: -len(s[0])):
            if path[:len(src)] == src:
                return out, tgt + path[len(src):]
        return None


_RUN_POLICY_MOVES = {"ttlSecondsAfterFinished": ("spec", "ttlSecondsAfterFinished"), "suspend": ("spec", "suspend")}


def _job_rel(rel: tuple, job: JobPlace) -> tuple | None:
    if len(rel) >= 2 and rel[0] == "spec" and rel[1] == job.specs_field:
        if len(rel) == 2:
            return ("spec", "replicatedJobs")
        idx = job.rjob_index.get(rel[2])
        if idx is None:
            return None
        base = ("spec", "replicatedJobs", idx)
        rest = rel[3:]
        if not rest:
            return base
        if rest[0] == "replicas" and len(rest) == 1:
            return base + ("replicas",)
        if rest[0] == "template":
            return base + ("template", "spec", "template") + rest[1:]
        if rest == ("restartPolicy",):
            return base + ("template", "spec", "template", "spec", "restartPolicy")
        return None
    if len(rel) >= 2 and rel[:2] == ("spec", "runPolicy"):
        if len(rel) == 3 and rel[2] in _RUN_POLICY_MOVES:
            return _RUN_POLICY_MOVES[rel[2]]
        return None
    if rel[:1] in (("apiVersion",), ("kind",), ("metadata",), ("spec",)) and (rel[0] != "spec" or len(rel) == 1):
        return rel
    return None


def path_map(data: Any, result, options) -> PathMap:
    """Source->target prefixes for one converted document (a job, a Katib Experiment or a List)."""
    from ..convert import KATIB_EXPERIMENT, is_job

    pm = PathMap()
    if is_job(data):
        if result.conversions:
            pm.jobs.append(_place(result.conversions[0], (), 0, (), result.outputs[0]))
        return pm
    if isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) == KATIB_EXPERIMENT:
        pm.same.append(((), 0, ()))
        for conv, path in zip(result.conversions, result.embedded_paths):
            pm.jobs.append(_place(conv, path, 0, path, result.outputs[0]))
        return pm
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        out_items = result.outputs[0].get("items") if result.outputs else None
        if not isinstance(out_items, list):
            return pm
        pm.same.append(((), 0, ()))  # apiVersion, kind, metadata of the List itself
        convs = iter(result.conversions)
        j = 0
        for i, item in enumerate(data["items"]):
            if is_job(item):
                conv = next(convs, None)
                if conv is None or j >= len(out_items) or out_items[j] is not conv.jobset:
                    pm.same.append((("items",), -1, ()))  # lost track: drop comments of the items
                    return pm
                pm.jobs.append(_place(conv, ("items", i), 0, ("items", j), conv.jobset))
                j += len(conv.objects)
            else:
                if j >= len(out_items) or out_items[j] is not item:
                    pm.same.append((("items",), -1, ()))
                    return pm
                pm.same.append((("items", i), 0, ("items", j)))
                j += 1
        return pm
    return pm


def _place(conv, source_prefix, output, target_prefix, jobset_holder) -> JobPlace:
    names = [rj.get("name") for rj in (conv.jobset.get("spec") or {}).get("replicatedJobs") or []]
    index = {}
    for rtype, spec in conv.job.replicas.items():
        name = conv.plan.rjob_names.get(rtype)
        if name in names:
            index[spec.source_key] = names.index(name)
    return JobPlace(source_prefix, output, target_prefix, conv.job.mapping.replica_specs_field, index)


# ---- attaching -----------------------------------------------------------------------------------

def commented(obj: Any) -> Any:
    """dict/list -> CommentedMap/CommentedSeq (kept if already), every old comment removed."""
    from ruamel.yaml.comments import Comment, CommentedMap, CommentedSeq, merge_attrib

    return _commented(obj, Comment, CommentedMap, CommentedSeq, merge_attrib)


def _commented(obj: Any, ca_type, map_type, seq_type, merge_attrib) -> Any:
    if isinstance(obj, dict):
        if isinstance(obj, map_type):
            setattr(obj, ca_type.attrib, ca_type())
            if getattr(obj, merge_attrib, None):  # assigning every key makes merged keys the map's own
                for k in list(obj.keys()):
                    obj[k] = _commented(obj[k], ca_type, map_type, seq_type, merge_attrib)
                return obj
            for k, v in list(dict.items(obj)):  # ruamel's own views iterate slowly
                new = _commented(v, ca_type, map_type, seq_type, merge_attrib)
                if new is not v:
                    obj[k] = new
            return obj
        out = map_type()
        for k, v in obj.items():
            out[k] = _commented(v, ca_type, map_type, seq_type, merge_attrib)
        return out
    if isinstance(obj, list):
        if isinstance(obj, seq_type):
            setattr(obj, ca_type.attrib, ca_type())
            for i, v in enumerate(obj):
                new = _commented(v, ca_type, map_type, seq_type, merge_attrib)
                if new is not v:
                    obj[i] = new
            return obj
        out = seq_type()
        out.extend(_commented(v, ca_type, map_type, seq_type, merge_attrib) for v in obj)
        return out
    return obj


def _get(obj: Any, path: Sequence) -> tuple[bool, Any, Any]:
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


def _is_flow(node) -> bool:
    fa = getattr(node, "fa", None)
    return fa is not None and fa.flow_style()


def _column(obj: Any, path: Sequence, style) -> int | None:
    """Output column of the key (map) or dash (sequence item) at `path`; None inside flow style.

    Follows ruamel's block layout for `yaml.indent(mapping, sequence, offset)`: a nested map's keys
    sit `mapping` columns right of its key, a nested sequence's dashes `offset` columns right of it,
    and an item's content `sequence - offset` columns right of its dash."""
    indent = 0  # keys of the current map / dashes of the current sequence
    node, col = obj, 0
    for part in path:
        if _is_flow(node):
            return None
        col = indent
        child = node[part]
        base = indent if isinstance(node, dict) else indent + (style.sequence - style.offset)
        if isinstance(child, dict):
            indent = base + (style.mapping if isinstance(node, dict) else 0)
        elif isinstance(child, list):
            indent = base + (style.offset if isinstance(node, dict) else 0)
        node = child
    return col


def attach(outputs: list, owned: Iterable[Owned], pm: PathMap, style) -> int:
    """Attach owned comments to the outputs (already `commented`); returns how many were dropped."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    dropped = 0
    for item in owned:
        where = pm.target(item.path)
        if where is None or where[0] < 0 or where[0] >= len(outputs) or not where[1]:
            dropped += len([t for t in item.lines if t])
            continue
        out_index, path = where
        found, parent, node = _get(outputs[out_index], path)
        if item.eol and found and isinstance(parent, list) and isinstance(node, dict) and node and not _is_flow(node):
            path = path + (next(iter(node)),)  # `- key: value  # c`: the comment goes on the item's first line
            found, parent, node = _get(outputs[out_index], path)
        if not found or parent is None or _is_flow(parent) or not hasattr(parent, "ca"):
            dropped += len([t for t in item.lines if t])
            continue
        key = path[-1]
        col = _column(outputs[out_index], path, style)
        if col is None:
            dropped += len([t for t in item.lines if t])
            continue
        entry = parent.ca.items.setdefault(key, [None, None, None, None])
        if item.eol:
            target_col = col + (style.sequence - style.offset if isinstance(key, int) else 0)
            mark = CommentMark(max(target_col + item.delta, 0))
            token = CommentToken(item.lines[0], mark)
            if isinstance(parent, list):
                entry[0] = token
            else:
                entry[2] = token
        else:
            tokens = entry[1] if entry[1] is not None else []
            for text in item.lines:
                tokens.append(CommentToken((text + "\n") if text else "\n", CommentMark(col)))
            entry[1] = tokens
    return dropped
