"""A chart template rendered with stand-ins: the YAML kf2jobset converts in place of Helm's output.

Every choice Helm makes from the values is a *region*: an if/else chain (which branch), a with (its
body or its else), a range (its body once, or not at all; twice when checking). A *variant* picks one
alternative for each region; rendering it writes the template's text as Go's text/template would,
except that each action writing a value writes a stand-in instead:

* a scalar action (`{{ .Values.image }}`, `{{ quote .x }}`, `{{ include "x.fullname" . }}`) writes a
  token of lower-case letters and digits (or, where the job holds a number, a number of its own), the
  same token in every variant, another one in each range iteration and in the second set of tokens;
* an action writing YAML lines (`{{ toYaml .Values.x | nindent 8 }}`, `{{ include "x.labels" . |
  nindent 4 }}`) writes one stand-in line of the shape its place takes (kf2jobset/sources/chart/standins.py),
  or, for a helper of the chart that the conversion must see into, the helper's own text, rendered
  the same way and indented as the pipeline indents it;
* an action writing nothing (`{{- $x := ... }}`, `{{/* ... */}}`, a define) writes a marker comment
  line, which the conversion carries with the lines around it.

Pure: nodes in, text out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .resource_names import PREFIX as RESOURCE_PREFIX
from .gotemplate import (Block, Define, Indented, Out, Silent, Text, declared, helper_call, indented, uses_dot, variables,
                         walk)

SCALAR, BLOCK, LINES, EXPAND = "scalar", "block", "lines", "expand"
# a number stands in where the job holds an integer: three digits (name-length rules are checked for
# pod indexes up to 999), primes unlikely to be any other number of the job, one list per token set
_PRIMES = [n for n in range(211, 1000) if all(n % d for d in range(2, 32))]
NUMBERS = ([n for n in _PRIMES if n > 600][0::2], [n for n in _PRIMES if n > 600][1::2])
# a resource request stands in below every other number: the API server's request <= limit holds for any two
# stand-ins (a rule on two values the chart's values write is judged where the chart is rendered)
REQUESTS = ([n for n in _PRIMES if n < 600][0::2], [n for n in _PRIMES if n < 600][1::2])
MARKER_RE = re.compile(r"^([ \t]*)# (kfq[m][0-9]{4}z)[ \t]*$")


@dataclass
class SlotInfo:
    """An action that writes a value, in one expansion context and range iteration."""

    key: tuple
    node: object  # Out, or an inline Block
    file: str
    form: Indented
    regions: tuple  # ((region key, alternative), ...), outermost first
    scope: tuple  # what `.` is: () the chart's root, else the innermost with/range/helper that rebinds it
    helpers: tuple  # ((name, argument), ...) of the helper expansions it sits in

    @property
    def base(self) -> tuple:
        return self.key[:-1]

    @property
    def line(self) -> int:
        return self.node.action.line if isinstance(self.node, Out) else self.node.line

    @property
    def source(self) -> str:
        """What the action computes, as written (an inline if/range: its whole text)."""
        return self.form.source if isinstance(self.node, Out) else self.node_text

    node_text: str = ""
    binding: tuple | None = None  # the scope its value depends on (a pipeline of variables: their range's)


@dataclass
class RegionInfo:
    key: tuple
    block: Block
    file: str
    regions: tuple
    scope: tuple
    helpers: tuple
    decision: tuple = ()  # what decides its alternative (Program.decision): regions sharing it choose alike

    @property
    def alternatives(self) -> int:
        b = self.block
        return len(b.branches) + (0 if b.branches[-1].keyword == "else" else 1)

    @property
    def line(self) -> int:
        return self.block.line


@dataclass
class Marker:
    key: tuple
    node: object  # Silent or Define
    source: str
    file: str
    regions: tuple


@dataclass
class Plan:
    """Decisions about each action, shared by every variant (keys without the iteration)."""

    kinds: dict = field(default_factory=dict)  # slot base -> SCALAR/BLOCK/LINES/EXPAND
    standins: dict = field(default_factory=dict)  # slot base -> one YAML line with {token} in it
    numbers: set = field(default_factory=set)  # shares (see Program.share) that stand in with numbers
    typed: dict = field(default_factory=dict)  # share -> (word of set 0, word of set 1): a boolean or one of a few words
    counts: dict = field(default_factory=dict)  # share -> (set 0, set 1): a replica count (chart/sizes.py)
    requests: set = field(default_factory=set)  # number shares written as resource requests (REQUESTS)
    resource_names: set = field(default_factory=set)  # shares written as resource names (chart/resource_names.py)


class Program:
    """One template text (a chunk of a file) with the chart's helpers, rendered variant by variant."""

    def __init__(self, nodes: list, text: str, file: str, helpers: dict, taken: str):
        self.nodes, self.text, self.file, self.helpers = nodes, text, file, helpers  # helpers: name -> (Define, file, text)
        self.plan = Plan()
        self.slots: dict[tuple, SlotInfo] = {}
        self.regions: dict[tuple, RegionInfo] = {}
        self.markers: dict[str, Marker] = {}
        self.silents: dict[tuple, list] = {}  # (region key, alternative) -> actions writing nothing in that branch
        self._serial: dict[tuple, int] = {}
        self._numbered: dict[tuple, int] = {}  # share -> its place among the number stand-ins of its kind
        self.share: dict[tuple, tuple] = {}  # slot key -> what decides its token: one per pipeline, scope and item
        self._marker_serial: dict[tuple, int] = {}
        self._ids: dict[int, int] = {}
        self.prefix = "kfq"
        self.reassigned = _reassigned(nodes) | {v for d, _f, _t in helpers.values() for v in _reassigned(d.body)}
        self.per_item = _declared_in_ranges(nodes)  # variables a range sets anew for each item
        self.inline_ids: set = set()  # ids of if/with/range blocks written inside a line: one value each
        self.expanded: dict[tuple, SlotInfo] = {}  # key -> an include of a helper written as the helper's text
        self.expansions: dict[tuple, set] = {}  # key -> the texts it wrote (first token set, every variant)
        self.classify = lambda node, form, source: SCALAR  # the kind of an action nothing was decided for
        self.named: dict = {}  # share -> a resource name written instead of its stand-in (chart/resource_names.py)
        if "kfq" in taken:  # the tokens must be text the chart never writes
            raise ValueError("the template already holds kf2jobset's stand-in prefix 'kfq'")

    # ---- tokens ------------------------------------------------------------------------------------

    def nid(self, node) -> int:
        return self._ids.setdefault(id(node), len(self._ids))

    def token(self, key: tuple, token_set: int):
        """The stand-in of a slot. Actions with the same pipeline in the same scope (and range item) write the
        same value, so they share one: a request and a limit written by one `{{ $gpus | quote }}` stay equal."""
        share = self.share.get(key, key)
        serial = self._serial.setdefault(share, len(self._serial) + 1)
        if share in self.plan.typed:
            return self.plan.typed[share][token_set]
        if share in self.plan.counts:
            return self.plan.counts[share][token_set]
        if self.planned(share, self.plan.numbers):
            low = self.planned(share, self.plan.requests)
            numbers = REQUESTS if low else NUMBERS
            alike = [s for s in self._numbered if self.planned(s, self.plan.requests) == low]
            index = self._numbered.setdefault(share, len(alike))  # numbers apart for up to len(numbers) values
            return numbers[token_set][index % len(numbers[token_set])]
        return f"{self.prefix}{'ab'[token_set]}{serial:04d}z"

    @staticmethod
    def planned(share: tuple, shares: set) -> bool:
        """Whether a share, or the same action in the first item of the ranges it sits in, is one of `shares`:
        a range's later items stand in as its first does (a number, a resource name), with tokens of their own."""
        if share in shares:
            return True
        if share and share[0] == "share":
            return share[:4] + (tuple((d, 0) for d, _ in share[4]),) in shares
        return False

    def serial_of(self, key: tuple) -> int:
        share = self.share.get(key, key)
        return self._serial.setdefault(share, len(self._serial) + 1)

    def iteration_tokens(self, region: tuple) -> dict:
        """token of a range's second item -> the same action's token in its first item (markers too)."""
        def first(key):
            return key[:-1] + (tuple((b, 0) if b == region else (b, i) for b, i in key[-1]),)

        table = {}
        for key in list(self.slots):
            if (region, 1) in key[-1] and first(key) in self.slots:
                table[str(self.token(key, 0))] = str(self.token(first(key), 0))
        by_key = {m.key: t for t, m in self.markers.items()}
        for key, token in by_key.items():
            if (region, 1) in key[-1] and first(key) in by_key:
                table[token] = by_key[first(key)]
        return table

    @staticmethod
    def swap_tokens(line: str, table: dict) -> str:
        if not table:
            return line
        pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, table), key=len, reverse=True)) + r")(?![\w.])")
        return pattern.sub(lambda m: table[m.group(1)], line)

    def tokens(self, token_set: int) -> dict:
        """token text -> slot key, for every slot rendered so far (a choice's word: its string token)."""
        found = self.plan.typed.keys() | self.plan.counts.keys()  # written in the lines by the comparison
        out = {str(self.token(k, token_set)): k for k in self.slots if self.share.get(k, k) not in found}
        out.update({f"{self.prefix}{'ab'[token_set]}{self.serial_of(k):04d}z": k for k in self.slots
                    if self.share.get(k, k) in found})
        return out

    # ---- rendering ---------------------------------------------------------------------------------

    def render(self, choice: dict, token_set: int = 0, iterations: dict | None = None) -> str:
        self._choice, self._set, self._iterations = choice, token_set, iterations or {}
        out: list[str] = []
        self._nodes(self.nodes, out, ctx=(), it=(), regions=(), scope=(), helpers=(), file=self.file, source=self.text)
        return _indent_markers("".join(out))

    def _nodes(self, nodes, out, ctx, it, regions, scope, helpers, file, source):
        for n in nodes:
            if isinstance(n, Text):
                out.append(n.text)
            elif isinstance(n, Out):
                self._out(n, out, ctx, it, regions, scope, helpers, file, source)
            elif isinstance(n, (Silent, Define)):
                self._marker(n, out, ctx, it, regions, file, source)
            elif isinstance(n, Block):
                base = ctx + (self.nid(n),)
                if id(n) in self.inline_ids:
                    key = base + (it,)
                    info = SlotInfo(key, n, file, Indented(_span(n, source), "", 0), regions, scope, helpers,
                                    node_text=_span(n, source))
                    self.slots.setdefault(key, info)
                    out.append(str(self.token(key, self._set)))
                else:
                    self._block(n, base, out, ctx, it, regions, scope, helpers, file, source)

    def _marker(self, n, out, ctx, it, regions, file, source):
        if regions and isinstance(n, Silent):
            # inside a branch: written at the start of its lines (where it runs before what it guards; a marker
            # line there would move with the fields around it)
            kept = self.silents.setdefault(regions[-1], [])
            if all(m.node is not n for m in kept):
                kept.append(Marker(ctx + (self.nid(n),), n, n.source, file, regions))
            return
        key = ctx + (self.nid(n), it)
        serial = self._marker_serial.setdefault(key, len(self._marker_serial) + 1)
        token = f"{self.prefix}m{serial:04d}z"
        text = n.source if isinstance(n, Silent) else source[n.action.start:n.end.end]
        self.markers.setdefault(token, Marker(key, n, text, file, regions))
        at_line_start = not out or "".join(out[-2:]).endswith("\n") or not "".join(out)
        out.append(("" if at_line_start else "\n") + f"# {token}\n")

    def _out(self, n: Out, out, ctx, it, regions, scope, helpers, file, source):
        base = ctx + (self.nid(n),)
        key = base + (it,)
        form = indented(n.pipeline)
        kind = self.plan.kinds.get(base)
        if kind is None:
            kind = self.plan.kinds[base] = self.classify(n, form, source)
        if kind == EXPAND:
            name, arg = helper_call(form.source)
            define, hfile, htext = self.helpers[name]
            inner: list[str] = []
            rebinds = arg not in ("$",) and not (arg == "." and not scope)
            inner_scope = scope + (("helper", base, arg),) if rebinds else scope
            self._nodes(define.body, inner, base, it, regions, inner_scope, helpers + ((name, arg),), hfile, htext)
            written = _apply_indent("".join(inner), form)
            out.append(written)
            if self._set == 0:  # what the include writes here, to be found again in the conversion (chart/fold.py)
                self.expanded.setdefault(key, SlotInfo(key, n, file, form, regions, scope, helpers))
                self.expansions.setdefault(key, set()).add(written)
            return
        if key not in self.slots:
            self.slots[key] = SlotInfo(key, n, file, form, regions, scope, helpers)
            if kind == SCALAR:
                self.share[key] = self._share(n.pipeline, regions, scope, helpers, it)
                self.slots[key].binding = self.share[key][2]
        token = str(self.token(key, self._set))
        share = self.share.get(key, key)
        if self.planned(share, self.plan.resource_names):
            token = self.named.get(share) or RESOURCE_PREFIX + token
        if kind == BLOCK:
            line = self.plan.standins.get(base, "{t}: {t}").format(t=token)
            out.append(_apply_indent(line, form))
        elif kind == LINES:
            out.append(_apply_indent(token, form))
        else:
            out.append(_apply_indent(token, form))  # a key padded by `| indent N` (chart/build.py)

    def decision(self, n: Block, scope: tuple, helpers: tuple, base: tuple) -> tuple:
        """What decides a block's alternative: its kind, its branches' headers and what `.` is for them.
        Blocks with the same decision take the same alternative for every values set (the same `if` in every
        replica type; a volume and its mount under one `if`; two ranges over one map write the same items),
        unless a header reads a variable the template assigns again (`$visit = ...`)."""
        heads = tuple((b.keyword, b.header) for b in n.branches)
        if any(v in self.reassigned for _, h in heads for v in variables(h)):
            return ("own", base)
        return (n.kind, heads, scope, helpers)

    def _share(self, pipeline: str, regions: tuple, scope: tuple, helpers: tuple, it: tuple) -> tuple:
        """What decides a scalar's value: its pipeline, what `.` is, and the item of the ranges it sits in (ranges
        alike: the same item). A pipeline that reads only variables depends on the range that declares them,
        not on the ranges inside it (`{{ $key }}` under an inner range and an if is the outer item's key)."""
        items = tuple((self.regions[b].decision, i) for b, i in it)
        if not uses_dot(pipeline):
            wanted = variables(pipeline)
            ranges = [self.regions[r] for r, _ in regions if self.regions[r].block.kind == "range"]
            binding = [r for r in ranges if declared(r.block.branches[0].header) & wanted]
            if binding:
                keep = ranges.index(binding[-1]) + 1
                scope = scope[:scope.index(("range", binding[-1].decision)) + 1]
                items = items[:keep]
            elif not helpers and not wanted & (self.reassigned | self.per_item):
                # the root (`$.Values.workers`) or a variable set before the range (`$w`): one value for every
                # item, so one stand-in (a replica count stays one in the second item too)
                items = ()
        return ("share", pipeline, scope, helpers, items)

    def _block(self, n: Block, base, out, ctx, it, regions, scope, helpers, file, source):
        info = self.regions.get(base)
        if info is None:
            info = self.regions[base] = RegionInfo(base, n, file, regions, scope, helpers,
                                                   self.decision(n, scope, helpers, base))
        alt = self._choice.get(base, 0)
        if alt >= len(n.branches):
            return  # the `none` alternative of an if/with without else
        branch = n.branches[alt]
        inner = regions + ((base, alt),)
        if n.kind == "range" and alt == 0:
            for i in range(self._iterations.get(base, 1)):
                self._nodes(branch.body, out, ctx, it + ((base, i),), inner, scope + (("range", info.decision),),
                            helpers, file, source)
        elif branch.keyword in ("with", "else with"):
            self._nodes(branch.body, out, ctx, it, inner, scope + (("with", info.decision, alt),), helpers, file, source)
        else:
            self._nodes(branch.body, out, ctx, it, inner, scope, helpers, file, source)


def _apply_indent(text: str, form: Indented) -> str:
    """What Sprig's indent/nindent do: every line (an empty one too) gets the padding."""
    if not form.function:
        return text
    pad = " " * form.width
    body = pad + text.replace("\n", "\n" + pad)
    return "\n" + body if form.function == "nindent" else body


def _span(block: Block, source: str) -> str:
    return source[block.branches[0].action.start:block.end.end]


def _indent_markers(text: str) -> str:
    """Marker lines take the indentation of the next line with content (so the conversion carries them
    with that line's block); blank lines a marker left are dropped."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        m = MARKER_RE.match(line)
        if not m:
            if line.strip() or not (out and MARKER_RE.match(out[-1])):
                out.append(line)
            continue
        nxt = next((ln for ln in lines[i + 1:] if ln.strip() and not MARKER_RE.match(ln)), "")
        out.append(" " * (len(nxt) - len(nxt.lstrip(" "))) + "# " + m.group(2))
    return "\n".join(out)


def _reassigned(nodes: list) -> set:
    """Variables a template assigns again (`$x = ...`): a condition reading one is not the same decision twice."""
    found = set()
    for n in walk(nodes):
        m = re.match(r"^\s*(\$[A-Za-z0-9_]+)\s*=[^=]", n.source) if isinstance(n, Silent) else None
        if m:
            found.add(m.group(1))
    return found


def _declared_in_ranges(nodes: list) -> set:
    """Variables declared inside a range's body (or by its header): another value for each item."""
    found = set()
    for n in walk(nodes):
        if isinstance(n, Block) and n.kind == "range":
            found |= declared(n.branches[0].header)
            found |= {v for m in walk(n.branches[0].body) if isinstance(m, Silent) for v in declared(m.source)}
    return found


def inline_blocks(nodes: list, source: str) -> set:
    """Ids of if/with/range blocks written inside one line with other text on it (`key: {{ if .x }}a{{ else
    }}b{{ end }}`): values, standing in as one token."""
    found = set()
    for n in walk(nodes):
        if isinstance(n, Block):
            start, end = n.branches[0].action.start, n.end.end
            line_start = source.rfind("\n", 0, start) + 1
            line_end = source.find("\n", end)
            line_end = len(source) if line_end < 0 else line_end
            if "\n" not in source[start:end] and (source[line_start:start] + source[end:line_end]).strip():
                found.add(id(n))
    return found
