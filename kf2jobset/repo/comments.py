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
    run: list[Comment] = []
    runs = 0
    located: dict = {}  # the block children of each node _locate visits

    def flush():
        nonlocal runs
        if not run:
            return
        runs += 1
        groups: list[list[Comment]] = []
        for c in run:
            if groups and _continues(groups[-1][0], c):
                groups[-1].append(c)
            else:
                groups.append([c])
        prev_end = None
        for group in groups:
            head = group[0]
            where = _locate(data, head.line, head.column, head.text, located)
            if where is None:
                continue
            path, kcol, after, before = where
            kind, key = classify(head.text)
            texts: list[tuple[int, str]] = []
            for p, c in zip([None, *group], group):
                if p is not None:
                    texts += [(0, "")] * (c.line - p.line - 1)
                texts.append((c.column - kcol, c.text))
            gap = 0 if prev_end is None else head.line - prev_end - 1
            parent = _get(data, path)[2]
            under = after is not None and (texts[0][0] > 0 or (  # deeper than the block's children
                kind == "item" and texts[0][0] == 0 and isinstance(parent, dict)))  # `key:` then `#- item`
            out.append(Lines(path, before, after, kind, key, texts, head.line, runs, gap, under))
            prev_end = group[-1].line
        run.clear()

    import bisect

    for c in layout.comments:
        if c.line < layout.first_content or c.line > last:
            continue
        if c.eol:
            flush()
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
        if run:
            k = bisect.bisect_right(lines_sorted, run[-1].line)
            if k < len(lines_sorted) and lines_sorted[k] < c.line:
                flush()  # content between the two: a new run
        run.append(c)
    flush()
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


# ---- targets: where a source field's information lives in the outputs ------------------------------

@dataclass
class JobPlace:
    """One converted job: where it was in the source document and where its JobSet went."""

    source_prefix: tuple
    output: int  # index in the document's output objects
    target_prefix: tuple
    specs_field: str
    rjob_index: dict  # source replica key (as written) -> index in spec.replicatedJobs
    # a target that writes other objects than the JobSet (TrainJob): JobSet path -> (output offset, path)
    relocate: Any = None


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
                if rel is not None and job.relocate is not None:
                    moved = job.relocate(rel)
                    return None if moved is None else (job.output + moved[0], job.target_prefix + moved[1])
                return None if rel is None else (job.output, job.target_prefix + rel)
        for src, out, tgt in sorted(self.same, key=lambda s: -len(s[0])):
            if path[:len(src)] == src:
                return out, tgt + path[len(src):]
        return None


_RUN_POLICY_MOVES = {"ttlSecondsAfterFinished": ("spec", "ttlSecondsAfterFinished"), "suspend": ("spec", "suspend")}


def _job_rel(rel: tuple, job: JobPlace) -> tuple | None:
    if not rel:
        return ()  # the job itself is the JobSet
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
            place = _place(result.conversions[0], (), 0, (), result.outputs[0])
            from ..targets import comment_relocation

            place.relocate = comment_relocation(result.conversions[0], options)
            pm.jobs.append(place)
        return pm
    if isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) == KATIB_EXPERIMENT:
        pm.same.append(((), 0, ()))
        for conv, path in zip(result.conversions, result.embedded_paths):
            pm.jobs.append(_place(conv, path, 0, path, result.outputs[0]))
        return pm
    from ..appwrapper import COMPONENTS, is_appwrapper

    if is_appwrapper(data):
        pm.same.append(((), 0, ()))
        placed = {path[2]: conv for path, conv in zip(result.embedded_paths, result.conversions)}
        j = 0  # a converted component's companions become components of their own after it
        for i in range(len(data["spec"]["components"])):
            conv = placed.get(i)
            pm.same.append(((*COMPONENTS, i), 0, (*COMPONENTS, j)))
            if conv is not None:
                for rewritten in ("podSets", "podSetInfos"):
                    pm.same.append(((*COMPONENTS, i, rewritten), -1, ()))
                pm.jobs.append(_place(conv, (*COMPONENTS, i, "template"), 0, (*COMPONENTS, j, "template"), conv.jobset))
                j += len(conv.companions)
            j += 1
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
    planned = conv.planned_jobset if conv.planned_jobset is not None else conv.jobset  # the plan's replicatedJobs
    names = [rj.get("name") for rj in (planned.get("spec") or {}).get("replicatedJobs") or []]
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


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic scalars
        return False


def _match_item(src: list, i: int, out: list) -> int | None:
    """Index in `out` of the item that source item `i` became: the same item (where it was, else
    anywhere), else the item with its `name` (a container kf2jobset rewrote), else the same index
    when nothing was inserted or removed."""
    item = src[i]
    if i < len(out) and _same(out[i], item):
        return i
    for j, o in enumerate(out):
        if _same(o, item):
            return j
    if isinstance(item, dict) and item.get("name") is not None:
        for j, o in enumerate(out):
            if isinstance(o, dict) and o.get("name") == item.get("name"):
                return j
    return i if len(out) == len(src) and i < len(out) else None


def _settle(source: Any, src_path: tuple, out_obj: Any, out_path: tuple) -> tuple | None:
    """`out_path` with its sequence indices checked against the items themselves: where the output
    is the source carried over (the common tail of both paths), kf2jobset may have added or merged
    items (env, volumes, containers). None: the source item has no counterpart."""
    n = 0
    while n < min(len(src_path), len(out_path)) and src_path[-1 - n] == out_path[-1 - n]:
        n += 1
    if n == 0 or source is None:
        return out_path
    found_s, _, s = _get(source, src_path[:len(src_path) - n])
    found_o, _, o = _get(out_obj, out_path[:len(out_path) - n])
    if not (found_s and found_o):
        return out_path
    fixed = list(out_path[:len(out_path) - n])
    for part in src_path[len(src_path) - n:]:
        if isinstance(part, int):
            if not (isinstance(s, list) and isinstance(o, list) and 0 <= part < len(s)):
                return out_path
            j = _match_item(s, part, o)
            if j is None:
                return None
            s, o = s[part], o[j]
            fixed.append(j)
        else:
            if not (isinstance(s, dict) and isinstance(o, dict) and part in s and part in o):
                return out_path
            s, o = s[part], o[part]
            fixed.append(part)
    return tuple(fixed)


class _Targets:
    """Source path -> (output index, path in that output), with sequence indices settled."""

    def __init__(self, outputs: list, pm: PathMap, source: Any):
        self.outputs, self.pm, self.source = outputs, pm, source
        self.memo: dict[tuple, Any] = {}

    def __call__(self, path: tuple) -> tuple[int, tuple] | None:
        if path not in self.memo:
            self.memo[path] = self._target(path)
        return self.memo[path]

    def _target(self, path: tuple) -> tuple[int, tuple] | None:
        where = self.pm.target(path)
        if where is None or where[0] < 0 or where[0] >= len(self.outputs):
            return None
        fixed = _settle(self.source, path, self.outputs[where[0]], where[1])
        return None if fixed is None else (where[0], fixed)

    def node(self, where) -> tuple[bool, Any]:
        found, _, node = _get(self.outputs[where[0]], where[1])
        return found, node


def _children_column(obj: Any, path: tuple, node: Any, style) -> int | None:
    """Output column of the keys / dashes of the non-empty block collection at `path`."""
    if not isinstance(node, (dict, list)) or not node or _is_flow(node):
        return None
    first = next(iter(node)) if isinstance(node, dict) else 0
    return _column(obj, path + (first,), style)


def _next_slot(obj: Any, path: tuple) -> tuple | None:
    """(parent path, key) of the node written right after the subtree at `path`; None: the document ends."""
    for i in range(len(path), 0, -1):
        ppath, key = path[:i - 1], path[i - 1]
        found, _, parent = _get(obj, ppath)
        if not found:
            return None
        if isinstance(parent, dict):
            keys = list(parent)
            j = keys.index(key)
            if j + 1 < len(keys):
                return ppath, keys[j + 1]
        elif isinstance(parent, list) and key + 1 < len(parent):
            return ppath, key + 1
    return None


def _last_leaf_column(obj: Any, path: tuple, style) -> int | None:
    """If the last thing written inside the subtree at `path` is a multi-line string (a block scalar),
    the column a comment line after it must not exceed (deeper, it would be read as the string's text)."""
    node = _get(obj, path)[2]
    while isinstance(node, (dict, list)) and node and not _is_flow(node):
        key = next(reversed(node)) if isinstance(node, dict) else len(node) - 1
        path, node = path + (key,), node[key]
    if isinstance(node, str) and "\n" in node and path:
        return _column(obj, path, style)
    return None


def attach(outputs: list, owned: Iterable, pm: PathMap, style, source: Any = None) -> tuple[int, dict[int, list[tuple[int, str]]]]:
    """Attach owned comments to the outputs (already `commented`). Returns how many comment lines
    had no place to go, and the comment lines that go after the last line of each output."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    targets = _Targets(outputs, pm, source)
    dropped = 0
    slots: dict[tuple, list] = {}  # (output, parent path, key) or (output,) -> [(order, group)]
    owned = list(owned)
    for item in owned:
        if isinstance(item, Lines):
            _restore_empty(item, targets)  # before any place is computed: it adds a key
    targets.memo.clear()
    for item in owned:
        if isinstance(item, Lines):
            placed = _place_lines(item, targets, style)
            if placed is None:
                dropped += len([t for _, t in item.lines if t])
            else:
                slot, order, rows = placed
                slots.setdefault(slot, []).append((order, item, rows))
            continue
        where = targets(item.path)
        if where is None or not where[1]:
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
        target_col = col + (style.sequence - style.offset if isinstance(key, int) else 0)
        token = CommentToken(item.lines[0], CommentMark(max(target_col + item.delta, 0)))
        if isinstance(parent, list):
            entry[0] = token
        else:
            entry[2] = token
    trailing: dict[int, list[tuple[int, str]]] = {}
    for slot, entries in slots.items():
        entries.sort(key=lambda e: e[0])
        rows: list[tuple[int, str]] = []
        prev = None
        for _, item, item_rows in entries:
            if prev is not None and prev.run == item.run and item.gap:
                rows += [(0, "")] * item.gap
            rows += item_rows
            prev = item
        if len(slot) == 1:
            trailing[slot[0]] = rows
            continue
        out_index, ppath, key = slot
        parent = _get(outputs[out_index], ppath)[2]
        entry = parent.ca.items.setdefault(key, [None, None, None, None])
        tokens = entry[1] if entry[1] is not None else []
        for col, text in rows:
            tokens.append(CommentToken((text + "\n") if text else "\n", CommentMark(col)))
        entry[1] = tokens
    return dropped, trailing


def _place_lines(item: Lines, targets: _Targets, style):
    """(slot, order, [(column, text)]) for a Lines group, or None when it has no place to go.

    Prose above a field goes wherever that field went (gone: the comment is too). Otherwise the
    group goes to its block's counterpart in the output (for a commented-out key: the block where
    that field lives in the JobSet), before the child that followed it in v1, else after the one
    that preceded it, else at the block's end, at the same column relative to the block's children."""
    if item.kind == "prose" and item.before is not None:
        nxt = targets(item.block + (item.before,))
        if nxt is None or not nxt[1] or not targets.node(nxt)[0]:
            return None
        obj = targets.outputs[nxt[0]]
        col = _column(obj, nxt[1], style)
        if col is None:
            return None
        slot = (nxt[0], nxt[1][:-1], nxt[1][-1])
        return slot, (1, -len(slot[1]), item.line), _rows(item, col, _slot_limit(obj, slot, style))
    block = _target_block(item, targets)
    if block is None:
        return None
    out_index, tpath = block
    obj = targets.outputs[out_index]
    cols = _children_column(obj, tpath, _get(obj, tpath)[2], style)
    if cols is None:
        return None

    def child(key):
        return _child(item, targets, block, key)

    before, after = child(item.before), child(item.after)
    if item.under_after and after is not None:
        filled = _filled(item, targets, out_index, tpath + (after,), style)
        if filled is not None:
            return filled
    if before is not None and not (item.under_after and after is not None):
        slot = (out_index, tpath, before)
    else:
        nxt = _next_slot(obj, tpath + (after,) if after is not None else tpath)
        slot = (out_index,) if nxt is None else (out_index, *nxt)
    order = (1 if len(slot) == 3 and slot[1] == tpath else 0, -len(tpath), item.line)
    return slot, order, _rows(item, cols, _slot_limit(obj, slot, style))


def _filled(item: Lines, targets: _Targets, out_index: int, path: tuple, style):
    """A comment under a key that is empty in v1 (`env:` over `#- name: X`) and that kf2jobset filled
    (its own env entries come after the user's): the comment goes above the first of them, as the
    first of the key's children."""
    obj = targets.outputs[out_index]
    found, _, value = _get(targets.source, item.block + (item.after,))
    node = _get(obj, path)[2]
    if not found or value is not None or not isinstance(node, (dict, list)) or not node:
        return None
    col = _children_column(obj, path, node, style)
    if col is None:
        return None
    first = next(iter(node)) if isinstance(node, dict) else 0
    slot = (out_index, path, first)
    return slot, (1, -len(path), item.line), _rows(item, col - item.lines[0][0], None)


def _child(item: Lines, targets: _Targets, block: tuple, key) -> Any:
    """The output key/index, inside the output block, of the source block's child `key` (None: not there)."""
    t = None if key is None else targets(item.block + (key,))
    if t is None or t[0] != block[0] or t[1][:-1] != block[1] or not targets.node(t)[0]:
        return None
    return t[1][-1]


def _restore_empty(item: Lines, targets: _Targets) -> None:
    """The comment continues a key whose value is empty in v1 (`limits:` above `#  cpu: 4`), which the
    JobSet leaves out (null and absent mean the same): put the empty key back so that uncommenting the
    lines gives them their key again."""
    if item.kind == "prose" and item.before is not None or not item.under_after:
        return
    block = _target_block(item, targets)
    if block is None or _child(item, targets, block, item.after) is not None:
        return
    node = _get(targets.outputs[block[0]], block[1])[2]
    found, _, value = _get(targets.source, item.block + (item.after,))
    where = targets.pm.target(item.block + (item.after,))
    if not found or value is not None or where is None or (where[0], where[1][:-1]) != block or \
            not isinstance(node, dict) or not hasattr(node, "insert") or where[1][-1] in node:
        return
    src_parent = _get(targets.source, item.block)[2]
    keys = list(src_parent)
    position = 0
    for earlier in reversed(keys[:keys.index(item.after)]):
        out_key = _child(item, targets, block, earlier)
        if out_key is not None and out_key in node:
            position = list(node).index(out_key) + 1
            break
    node.insert(position, where[1][-1], None)


def _target_block(item: Lines, targets: _Targets) -> tuple[int, tuple] | None:
    if item.kind == "key" and isinstance(item.key, str):
        field_at = targets.pm.target(item.block + (item.key,))
        if field_at is None or not field_at[1]:
            return None  # the field has no place in the JobSet: neither has the commented-out line
        parent = (field_at[0], field_at[1][:-1])
        own = targets.pm.target(item.block)
        if own is not None and own == parent:
            parent = targets(item.block)  # the block itself, its sequence indices settled
        if parent is not None and 0 <= parent[0] < len(targets.outputs):
            found, node = targets.node(parent)
            if found and isinstance(node, dict) and node and not _is_flow(node):
                return parent
    where = targets(item.block)
    if where is None or not targets.node(where)[0]:
        return None
    return where


def _slot_limit(obj: Any, slot: tuple, style) -> int | None:
    """The deepest column a comment line may take in `slot` (after a block scalar, deeper is its text)."""
    if len(slot) == 1:
        return _last_leaf_column(obj, (), style)
    _, ppath, key = slot
    parent = _get(obj, ppath)[2]
    keys = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
    k = keys.index(key)
    return None if k == 0 else _last_leaf_column(obj, ppath + (keys[k - 1],), style)


def _rows(item: Lines, base: int, limit: int | None) -> list[tuple[int, str]]:
    rows = []
    for rel, text in item.lines:
        if not text:
            rows.append((0, ""))
            continue
        col = max(base + rel, 0)
        if limit is not None:
            col = min(col, limit)
        rows.append((col, text))
    return rows
