"""The merged conversion written as a template: stand-ins replaced by the actions they stand for.

* A scalar token becomes `{{ PIPELINE }}` (read from the root, `$.Values...`, when it now sits inside a
  with/range it was not in);
* a YAML-lines stand-in line becomes `{{- SOURCE | nindent N }}` with N the column the line now starts
  at (so a block that moved deeper with the pod template is indented with it), `indent` keeping its
  column-0 form;
* a marker line becomes the action that writes nothing, trimmed so the line vanishes;
* a region's alternatives are wrapped in the region's own actions: `{{- if A }} … {{- else if B }} …
  {{- else }} … {{- end }}`, `{{- with X }}`, `{{- range … }}`; each starts with `{{-`, which eats the
  line break before it, and its lines start with one, so a line appears exactly when Helm picks it.

Pure: the merged template in, text out.
"""
from __future__ import annotations

import re

from . import gotemplate as gt
from . import standins as si
from .merge import Switch
from .skeleton import BLOCK, LINES, MARKER_RE
from .refusal import Refusal


def write(work, items: list) -> str:
    lines: list[str] = []
    _emit(work, items, (), lines)
    return "\n".join(lines)


def _emit(work, items: list, chain: tuple, out: list) -> None:
    for item in items:
        if isinstance(item, Switch):
            _switch(work, item, chain, out)
        else:
            out.append(_line(work, item, chain))


def _switch(work, sw: Switch, chain: tuple, out: list) -> None:
    region = work.program.regions[sw.region]
    block = region.block
    indent = _first_indent(sw)
    n = len(block.branches)
    has_none = block.branches[-1].keyword != "else"
    last = max((a for a, items in sw.alts.items() if items), default=0)
    for alt in range(n + (1 if has_none else 0)):
        items = sw.alts.get(alt, [])
        if alt > 0 and alt > last:
            break  # nothing left to write: the remaining alternatives write nothing
        if alt < n:
            branch = block.branches[alt]
            head = _header(work, region, branch, chain)
            keyword = branch.keyword if alt > 0 else block.kind
            out.append(f"{indent}{{{{- {keyword}{' ' + head if head else ''} }}}}")
            inner = chain + _scope_of(block, sw.region, alt)
        else:
            out.append(f"{indent}{{{{- else }}}}")
            inner = chain
        _emit(work, items, inner, out)
    out.append(f"{indent}{{{{- end }}}}")


def _scope_of(block, key, alt) -> tuple:
    if block.kind == "range" and alt == 0:
        return (("range", key),)
    if alt < len(block.branches) and block.branches[alt].keyword in ("with", "else with"):
        return (("with", key, alt),)
    return ()


def _header(work, region, branch, chain: tuple) -> str:
    head = branch.header
    if region.scope == chain:
        return head
    if not region.scope:
        return gt.rooted(head)
    raise Refusal(f"{{{{ {branch.action.body} }}}} decides lines that kf2jobset writes outside the with/range it "
                  "sits in", branch.action.line, region.file)


def _first_indent(sw: Switch) -> str:
    for items in sw.alts.values():
        for item in items:
            if isinstance(item, str) and item.strip():
                return item[:len(item) - len(item.lstrip(" "))]
            if isinstance(item, Switch):
                return _first_indent(item)
    return ""


def _line(work, line: str, chain: tuple) -> str:
    p = work.program
    m = MARKER_RE.match(line)
    if m:
        marker = p.markers.get(m.group(2))
        if marker is None:
            return line
        return m.group(1) + _silent(marker)
    found = si.TOKEN_RE.findall(line)
    tokens = p.tokens(0)
    for t in found:
        key = tokens.get(t)
        if key is None:
            continue
        kind = p.plan.kinds.get(key[:2])
        if kind in (BLOCK, LINES):
            return _block_line(work, line, t, key, chain)
    line = si.TOKEN_RE.sub(lambda m: _action(work, tokens.get(m.group(0)), chain) if m.group(0) in tokens else m.group(0), line)
    numbers = {str(p.token(k, 0)): k for k in p.slots if k[:2] in p.plan.numbers}
    if numbers:
        line = re.sub(r"(?<![\w.])(" + "|".join(sorted(numbers, key=len, reverse=True)) + r")(?![\w.])",
                      lambda m: _action(work, numbers[m.group(1)], chain), line)
    return line


def _silent(marker) -> str:
    node = marker.node
    if hasattr(node, "end"):  # a define, written back whole
        return marker.source
    body = node.action.body
    return f"{{{{- {body}}}}}" if body.startswith("/*") else f"{{{{- {body} }}}}"


def _action(work, key, chain: tuple) -> str:
    slot = work.program.slots[key]
    return "{{ " + _pipeline(slot, slot.source, chain) + " }}" if not _is_span(slot) else _span_text(slot, chain)


def _is_span(slot) -> bool:
    return not hasattr(slot.node, "pipeline")


def _span_text(slot, chain: tuple) -> str:
    if slot.scope == chain or not slot.scope and not gt.uses_dot(slot.node_text):
        return slot.node_text
    raise Refusal(f"{slot.node_text} is used outside the with/range it reads `.` from", slot.line, slot.file)


def _pipeline(slot, source: str, chain: tuple) -> str:
    if slot.scope == chain:
        return source
    if not slot.scope:
        return gt.rooted(source)
    raise Refusal(f"{{{{ {slot.source} }}}} (it reads `.` from a with/range or a helper's argument) lands where "
                  "`.` is something else", slot.line, slot.file)


def _block_line(work, line: str, token: str, key, chain: tuple) -> str:
    """A YAML-lines stand-in (or a text line of one, inside a block scalar) back to its action, indented
    at the column the line now starts at."""
    p = work.program
    slot = p.slots[key]
    base = key[:2]
    indent = line[:len(line) - len(line.lstrip(" "))]
    expected = p.plan.standins.get(base, "{t}: {t}").format(t=token) \
        if p.plan.kinds[base] == BLOCK else token
    if line.strip() != expected:
        raise Refusal(f"kf2jobset changes what {{{{ {slot.source} }}}} writes (its lines end up as "
                      f"{work.restore_text(line.strip())!r})", slot.line, slot.file)
    source = _pipeline(slot, slot.form.source, chain)
    width = len(indent)
    function = slot.form.function or ("indent" if width else "")
    if function == "nindent":
        return f"{indent}{{{{- {source} | nindent {width} }}}}"
    if function == "indent":
        return f"{{{{ {source} | indent {width} }}}}"
    return f"{{{{ {source} }}}}"
