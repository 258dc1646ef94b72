"""A variant's conversion with its mapping keys in the base variant's order.

kf2jobset writes a field it adds to (a container's `env`) where the job had it, or at the end when
the job had none: a range that writes every item of `env` moves `env` below `ports` when it has no
items. Kubernetes reads a mapping without its order (and the differential compares documents as
data), so the merge compares variants with each mapping's keys in the base's order: the range then
changes only its own lines. Works on the block YAML kf2jobset writes: a key or `- ` item owns the
lines below it that are indented deeper (and the comment lines just above it); a sequence may sit at
its key's own indentation. Lists keep their order; keys inside a list item are ordered when the
item's first line matches one item of the base's list.

Pure: lines in, lines out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_KEY = re.compile(r"^(\s*)(?:-\s+)?([^\s#'\"][^:#]*?|\"[^\"]*\"|'[^']*'):(?:\s|$)")


@dataclass
class Node:
    start: int  # first line (its comment lines included)
    head: int  # the line with its key or dash
    end: int
    key: str | None  # a mapping key; None for a list item
    first: str  # the head line, stripped (an item's identity)
    children: list = field(default_factory=list)


class _Lines:
    """Each line's indentation, whether it is blank (or a comment) and whether it opens a list item."""

    def __init__(self, lines: list):
        self.lines = lines
        self.indent = [len(ln) - len(ln.lstrip(" ")) for ln in lines]
        self.blank = [not ln.strip() or ln.lstrip().startswith("#") for ln in lines]
        self.item = [ln.lstrip(" ").startswith("- ") or ln.strip() == "-" for ln in lines]
        self.marker = [ln.startswith(("---", "...")) for ln in lines]


def parse(info: _Lines, start: int, end: int) -> list:
    """The sibling nodes in lines[start:end] (all at the indentation of the first one with content)."""
    lines = info.lines
    nodes: list = []
    i = start
    indent = None
    pending = start
    while i < end:
        if info.blank[i] or info.marker[i]:
            if info.marker[i]:
                pending = i + 1
            i += 1
            continue
        ind = info.indent[i]
        if indent is None:
            indent = ind
        if ind < indent:
            break
        item = info.item[i]
        opens = not item and _opens(lines[i])
        j = i + 1
        while j < end and (info.blank[j] or info.indent[j] > ind or (opens and info.item[j] and info.indent[j] == ind)):
            j += 1
        stop = j  # trailing comment/blank lines belong to the next node
        while stop > i + 1 and info.blank[stop - 1]:
            stop -= 1
        m = None if item else _KEY.match(lines[i])
        node = Node(pending, i, stop, m.group(2).strip() if m else None, lines[i].strip())
        if i + 1 < stop and (item or not _scalar_block(lines[i])):
            node.children = parse(info, i + 1, stop)
        nodes.append(node)
        pending = stop
        i = stop
    return nodes


def _opens(line: str) -> bool:
    """A key line whose value is on the lines below (so `- ` items at its own indentation are its)."""
    return bool(re.search(r":\s*(#.*)?$", line))


def _scalar_block(line: str) -> bool:
    return bool(re.search(r":\s*[|>][-+0-9]*\s*(#.*)?$", line))


def reorder_like(lines: list, reference: list) -> list:
    """`lines` with every mapping's keys in the order `reference` has them."""
    if lines == reference:
        return lines
    out = list(lines)
    _reorder(out, parse(_Lines(lines), 0, len(lines)), reference, parse(_Lines(reference), 0, len(reference)), lines)
    return out


def _reorder(out: list, nodes: list, reference: list, ref_nodes: list, lines: list) -> None:
    by_key = {n.key: n for n in ref_nodes if n.key is not None}
    if by_key and all(n.key is not None for n in nodes) and len({n.key for n in nodes}) == len(nodes):
        rank = {k: i for i, k in enumerate(k for k in (n.key for n in ref_nodes) if k is not None)}
        keyed, last = [], -1.0
        for pos, n in enumerate(nodes):
            r = rank.get(n.key)
            last = float(r) if r is not None else last + 0.001
            keyed.append((last, pos, n))
        ordered = [n for _, _, n in sorted(keyed, key=lambda t: (t[0], t[1]))]
        if ordered != nodes and nodes:
            start, end = nodes[0].start, nodes[-1].end
            block = [line for n in ordered for line in lines[n.start:n.end]]
            if len(block) == end - start:
                out[start:end] = block
                # positions moved: recurse on the reordered text
                moved = parse(_Lines(out), start, end)
                for n in moved:
                    match = by_key.get(n.key)
                    if match is not None:
                        _reorder(out, n.children, reference, match.children, list(out))
                return
    firsts = {}
    for n in ref_nodes:
        firsts.setdefault(n.first if n.key is None else ("key", n.key), []).append(n)
    for n in nodes:
        ident = n.first if n.key is None else ("key", n.key)
        match = firsts.get(ident)
        if match and len(match) == 1 and n.children:
            _reorder(out, n.children, reference, match[0].children, lines)
