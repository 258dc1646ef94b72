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

import dataclasses
import re

from . import gotemplate as gt
from . import standins as si
from .fold import FOLD_RE
from .items import Fail, Guard, Repeat, Switch
from .sizes import Listed, MARK_RE, expression
from .skeleton import BLOCK, LINES, MARKER_RE
from .refusal import Refusal


def write(work, items: list) -> str:
    lines: list[str] = []
    _emit(work, items, (), lines, frozenset())
    return "\n".join(lines)


def _emit(work, items: list, chain: tuple, out: list, known: frozenset) -> None:
    """`known`: conditions that hold where these items are written (their enclosing if or range)."""
    for item in items:
        if isinstance(item, Switch):
            _switch(work, item, chain, out, known)
        elif isinstance(item, Repeat):
            _repeat(work, item, chain, out, known)
        elif isinstance(item, Guard):
            _guard(work, item, chain, out, known)
        elif isinstance(item, Fail):
            message = item.message.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'{{{{- fail "kf2jobset: the post-renderer refuses what these values render: {message}" }}}}')
        else:
            out.append(_line(work, item, chain))


def _switch(work, sw: Switch, chain: tuple, out: list, known: frozenset) -> None:
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
            _silents(work, region, alt, indent, out)
            inner = chain + _scope_of(block, region.decision, alt)
            holds = known | {truth(head)} if alt == 0 and block.kind == "if" else known
        else:
            out.append(f"{indent}{{{{- else }}}}")
            inner, holds = chain, known
        _emit(work, items, inner, out, holds)
    out.append(f"{indent}{{{{- end }}}}")


def _repeat(work, rp: Repeat, chain: tuple, out: list, known: frozenset) -> None:
    """A range: its body once per item; lines that come once for any number of items under `if` of the
    range's collection."""
    region = work.program.regions[rp.region]
    branch = region.block.branches[0]
    head = _header(work, region, branch, chain)
    indent = _first_indent(Switch(rp.region, {0: rp.head + rp.body + rp.foot, 1: rp.other}))
    inner = chain + (("range", region.decision),)
    guarded = bool(rp.head or rp.foot)
    holds = known | {truth(collection(head))}
    if guarded and truth(collection(head)) in known:  # inside `if` of the collection already: never empty
        _emit(work, rp.head, chain, out, holds)
        out.append(f"{indent}{{{{- range {head} }}}}")
        _silents(work, region, 0, indent, out)
        _emit(work, rp.body, inner, out, holds)
        out.append(f"{indent}{{{{- end }}}}")
        _emit(work, rp.foot, chain, out, holds)
        return
    if guarded:
        out.append(f"{indent}{{{{- if {collection(head)} }}}}")
        _emit(work, rp.head, chain, out, holds)
    out.append(f"{indent}{{{{- range {head} }}}}")
    _silents(work, region, 0, indent, out)
    _emit(work, rp.body, inner, out, holds)
    if guarded:
        out.append(f"{indent}{{{{- end }}}}")
        _emit(work, rp.foot, chain, out, holds)
    if rp.other:
        out.append(f"{indent}{{{{- else }}}}")
        _emit(work, rp.other, chain, out, known)
    out.append(f"{indent}{{{{- end }}}}")


def _guard(work, g: Guard, chain: tuple, out: list, known: frozenset) -> None:
    """A key written when one of its children writes lines: `if or` of the children's conditions (just the
    key where one of them holds already: inside `if` of that condition)."""
    conditions = list(dict.fromkeys(_condition_text(work, c, chain) for c in _flat(g.conditions)))
    if any(truth(c) in known for c in conditions):
        out += [_line(work, line, chain) for line in g.on]
        _emit(work, g.children, chain, out, known)
        return
    test = conditions[0] if len(conditions) == 1 else "or " + " ".join(f"({c})" for c in conditions)
    indent = g.on[0][:len(g.on[0]) - len(g.on[0].lstrip(" "))]
    out.append(f"{indent}{{{{- if {test} }}}}")
    out += [_line(work, line, chain) for line in g.on]
    if g.off:
        out.append(f"{indent}{{{{- else }}}}")
        out += [_line(work, line, chain) for line in g.off]
    out.append(f"{indent}{{{{- end }}}}")
    _emit(work, g.children, chain, out, known)


def truth(condition: str) -> str:
    """A condition's truth, spelled one way: `ne (len X) 0` and `gt (len X) 0` hold when `X` does (a map,
    list or string is true when it is not empty)."""
    m = re.fullmatch(r"(?:ne|gt)\s+\(len\s+(.+)\)\s+0", condition.strip())
    return (m.group(1) if m else condition).strip()


def _flat(conditions: list) -> list:
    out = []
    for c in conditions:
        out += _flat(c.conditions) if isinstance(c, Guard) else [c]
    return out


def _condition_text(work, condition, chain: tuple) -> str:
    if condition[0] == "and":  # a branch that writes lines where one of its inner branches does
        _, outer, inner = condition
        texts = list(dict.fromkeys(_condition_text(work, c, chain) for c in _flat(inner)))
        either = texts[0] if len(texts) == 1 else "or " + " ".join(f"({t})" for t in texts)
        return f"and ({_condition_text(work, outer, chain)}) ({either})"
    key, alt = condition
    region = work.program.regions[key]
    head = _header(work, region, region.block.branches[alt], chain)
    return collection(head) if region.block.kind == "range" else head


def collection(header: str) -> str:
    """What a range header ranges over: `$k, $v := PIPE` -> PIPE."""
    code = "".join(t if not q else "\0" * len(t) for q, t in gt.segments(header))
    at = code.find(":=")
    return header[at + 2:].strip() if at >= 0 else header


def _silents(work, region, alt: int, indent: str, out: list) -> None:
    """The actions that write nothing in this branch (`$visit = "true"`), of the region and of the regions alike
    that this one Switch stands for, first in the branch: they run before the lines they sat among."""
    written = set()
    for r in work.program.regions.values():
        if r.decision == region.decision:  # one Switch may stand for its alikes elsewhere (a volume and its mount)
            for m in work.program.silents.get((r.key, alt), []):
                line = _silent(m)
                if line not in written:
                    written.add(line)
                    out.append(f"{indent}{line}")


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
            if isinstance(item, Repeat):
                return _first_indent(Switch(item.region, {0: item.head + item.body + item.foot}))
    return ""


def _line(work, line: str, chain: tuple) -> str:
    p = work.program
    folded = FOLD_RE.match(line)
    if folded and folded.group(2) in work.folding.folds:
        return _include(work, p.expanded[work.folding.folds[folded.group(2)]], len(folded.group(1)), chain)
    m = MARKER_RE.match(line)
    if m:
        marker = p.markers.get(m.group(2))
        if marker is None:
            return line
        return m.group(1) + _silent(marker)
    sized = _sized(work, line, chain)
    if sized is not None:
        return sized
    found = si.TOKEN_RE.findall(line)
    tokens = p.tokens(0)
    for t in found:
        key = tokens.get(t)
        if key is None:
            continue
        kind = p.plan.kinds.get(key[:-1])
        if kind in (BLOCK, LINES):
            return _block_line(work, line, t, key, chain)
    line = si.TOKEN_RE.sub(lambda m: _action(work, tokens.get(m.group(0)), chain) if m.group(0) in tokens else m.group(0), line)
    numbers = {str(p.token(k, 0)): k for k in p.slots if p.share.get(k, k) in p.plan.numbers}
    if numbers:
        line = re.sub(r"(?<![\w.])(" + "|".join(sorted(numbers, key=len, reverse=True)) + r")(?![\w.])",
                      lambda m: _action(work, numbers[m.group(1)], chain), line)
    return line


def _sized(work, line: str, chain: tuple) -> str | None:
    """Values derived from a replica count (chart/sizes.py): an expression, or a block of lines under
    `range` of `until` the count. None: the line holds none."""
    if "kfq" not in line or not MARK_RE.search(line):
        return None
    found = work.sizes.found

    def count_of(what) -> str:
        key = next(k for k in work.program.slots if work.program.share.get(k, k) == what.share)
        return _pipeline(work.program.slots[key], work.program.slots[key].source, chain)

    def written(what):
        """The marker's expression; an item's own actions read from the root (`.` is the range's item)."""
        if isinstance(what, Listed):
            inner = chain + (("until",),)
            what = dataclasses.replace(what, parts=tuple(
                _line(work, part, inner) if n % 2 == 0 else part for n, part in enumerate(what.parts)))
        return expression(what, count_of(what))

    m = MARK_RE.search(line)
    if m.group(1) == "r":
        indent = line[:len(line) - len(line.lstrip(" "))]
        range_line, item, end = written(found[m.group(0)]).split("\n")
        return "\n".join([indent + range_line, item, indent + end])
    pieces = MARK_RE.split(line)  # text, kind, serial, text, ...
    out = []
    for n in range(0, len(pieces), 3):
        out.append(_line(work, pieces[n], chain))
        if n + 2 < len(pieces):
            out.append(written(found[f"kfq{pieces[n + 1]}{pieces[n + 2]}z"]))
    return "".join(out)


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
    binding = slot.binding if slot.binding is not None else slot.scope
    if slot.scope == chain or (not gt.uses_dot(source) and all(e in chain for e in binding if e[0] == "range")):
        return source  # the same `.`; or no `.` and the ranges declaring its variables enclose it here too
    if not slot.scope:
        return gt.rooted(source)
    raise Refusal(f"{{{{ {slot.source} }}}} (it reads `.` from a with/range or a helper's argument) lands where "
                  "`.` is something else", slot.line, slot.file)


def _block_line(work, line: str, token: str, key, chain: tuple) -> str:
    """A YAML-lines stand-in (or a text line of one, inside a block scalar) back to its action, indented
    at the column the line now starts at."""
    p = work.program
    slot = p.slots[key]
    base = key[:-1]
    indent = line[:len(line) - len(line.lstrip(" "))]
    expected = p.plan.standins.get(base, "{t}: {t}").format(t=token) \
        if p.plan.kinds[base] == BLOCK else token
    if line.strip() != expected and not _same_yaml(line.strip(), expected):
        raise Refusal(f"kf2jobset changes what {{{{ {slot.source} }}}} writes (its lines end up as "
                      f"{work.restore_text(line.strip())!r})", slot.line, slot.file, key)
    source = _pipeline(slot, slot.form.source, chain)
    width = len(indent)
    function = slot.form.function or ("indent" if width else "")
    if function == "nindent":
        return f"{indent}{{{{- {source} | nindent {width} }}}}"
    if function == "indent":
        return f"{{{{ {source} | indent {width} }}}}"
    return f"{{{{ {source} }}}}"


def _include(work, slot, width: int, chain: tuple) -> str:
    """A helper's text folded back (chart/fold.py): its include, indented at the column its lines start at."""
    source = _pipeline(slot, slot.form.source, chain)
    if slot.form.function == "nindent":
        return f"{' ' * width}{{{{- {source} | nindent {width} }}}}"
    return f"{{{{ {source} | indent {width} }}}}"


def _same_yaml(a: str, b: str) -> bool:
    """The writer may spell a flow stand-in its own way (`[name: x]` for `[{name: x}]`)."""
    import yaml

    try:
        return yaml.safe_load(a) == yaml.safe_load(b)
    except yaml.YAMLError:
        return False
