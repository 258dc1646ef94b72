"""Keys whose every child is chosen: `volumeMounts:` above an if, a range and another if.

The post-renderer reads `volumeMounts:` with no item below it as a null, which kf2jobset drops (the
API server would), and `resources:` whose requests and limits both went as `{}`: the key line depends on
whether any child writes a line, which no single branch shows. Such a key is found in the merged
template (a key line followed only by Switches and Repeats that each write lines in one alternative),
the conversion with every child left out says what the line becomes, and the key is written under
`{{- if or (A) (B) ... }}` of the children's own conditions, its other form in the `else`.

Pure: the merged template in, the merged template out (conversions through the shared Work cache).
"""
from __future__ import annotations

import re

from .items import Guard, Repeat, Switch, predict
from .refusal import Refusal

_KEY_LINE = re.compile(r"^\s*(?:-\s+)?[^\s#][^#]*:\s*$")


def guard_parents(work, base: dict, items: list) -> list:
    checks: list = []
    _walk(work, base, items, {}, checks)
    for guard, context in checks:  # each key's every child left out: the conversion agrees with the template
        off: dict = {}
        for child in guard.children:
            _condition(work, child, off)
        choice = {**base, **context, **off}
        w = work.convert(choice)
        if w.error is None and predict(items, choice) != w.lines:
            raise Refusal(f"kf2jobset cannot tell when it writes {guard.on[0].strip()!r}: its children are all chosen "
                          "by branches, and leaving them out changes other lines too")
    return items


def _walk(work, base: dict, items: list, context: dict, checks: list) -> None:
    for item in items:
        if isinstance(item, Switch):
            for alt, content in item.alts.items():
                _walk(work, base, content, {**context, item.region: alt}, checks)
        elif isinstance(item, Repeat):
            for part in (item.head, item.body, item.foot):
                _walk(work, base, part, {**context, item.region: 0}, checks)
            _walk(work, base, item.other, {**context, item.region: 1}, checks)
    i = len(items) - 1
    while i >= 0:  # from the end: a key's children become Guards before the key is looked at
        line = items[i]
        if isinstance(line, str) and _KEY_LINE.match(line):
            ind = _indent(line)
            j = i + 1
            while j < len(items) and not isinstance(items[j], str) and _first_indent(items[j], ind + 1) > ind:
                j += 1
            children = items[i + 1:j]
            if children and (j == len(items) or not isinstance(items[j], str) or _indent(items[j]) <= ind):
                conditions = [c for c in (_condition(work, child, {}) for child in children) if c is not None]
                if len(conditions) == len(children):
                    # the post-renderer reads the key with no line below it as null and drops it; a key whose
                    # own keys (always written, now null) all went is an empty mapping, `key: {}`
                    off = [line.rstrip() + " {}"] if any(isinstance(c, Guard) for c in children) else []
                    guard = Guard([line], off, list(children), conditions)
                    items[i:j] = [guard]
                    checks.append((guard, context))
        i -= 1


def _condition(work, child, off: dict):
    """(region key, the alternative that writes lines) of a child that writes lines in one alternative only;
    `off` gets the alternative that writes none. None: not such a child."""
    if isinstance(child, Repeat):
        if child.other:
            return None
        _off(work, child.region, 1, off)
        return (child.region, 0)
    if isinstance(child, Guard):
        for c in child.children:
            if _condition(work, c, off) is None:
                return None
        return child
    if not isinstance(child, Switch):
        return None
    region = work.program.regions[child.region]
    writing = [a for a in range(region.alternatives) if child.alts.get(a)]
    empty = [a for a in range(region.alternatives) if not child.alts.get(a)]
    if writing != [0] or not empty or region.block.kind not in ("if", "with"):
        return None
    _off(work, child.region, empty[0], off)
    content = [c for c in child.alts[0] if not (isinstance(c, str) and not c.strip())]
    if content and not any(isinstance(c, str) for c in content):
        # the branch writes lines only where its own branches do (`if .Values.tensorboard` around `if
        # .Values.localLogs`): both must hold
        inner = [_condition(work, c, {}) for c in content]
        if all(c is not None for c in inner):
            return ("and", (child.region, 0), inner)
    return (child.region, 0)


def _off(work, key: tuple, alt: int, off: dict) -> None:
    """The region and its siblings that take its alternative with it (one Switch stands for all of them)."""
    region = work.program.regions[key]
    for r in work.program.regions.values():
        if r.decision == region.decision and r.regions == region.regions:
            off[r.key] = alt


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _first_indent(item, default: int) -> int:
    for line in _lines(item):
        if line.strip():
            return _indent(line)
    return default


def _lines(item):
    if isinstance(item, str):
        yield item
    elif isinstance(item, Switch):
        for content in item.alts.values():
            for x in content:
                yield from _lines(x)
    elif isinstance(item, Repeat):
        for x in item.head + item.body + item.foot + item.other:
            yield from _lines(x)
    elif isinstance(item, Guard):
        yield from item.on
        for x in item.children:
            yield from _lines(x)
