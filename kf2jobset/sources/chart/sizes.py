"""Values kf2jobset derives from a replica count the template writes, kept as template expressions.

Under the size contract (docs/conversion.md) a pod count is read from the pod's
`jobset.sigs.k8s.io/global-replicas` label, so most jobs need nothing here: the count only lands in the
replicatedJob's `replicas`. What a label cannot carry is written from the count: a TrainJob's `numNodes` (`1 + workers`), a literal
`WORLD_SIZE`, TF_CONFIG's host lists, an MPI hostfile's lines, the `kf2jobset.dev/sized-for` record.

A replica count stands in with a small number, another in each token set and for each count: (2, 3),
(4, 6), (5, 8), so that a count's items differ in number by 1, 2 or 3 between the sets. Where the two
conversions differ, the difference is read as
* the count itself, or `c + k x count` (`{{ add 1 .Values.workers }}`);
* items added to a list inside a line (`"w-0","w-1"` then `,"w-2"`): written as
  `{{ range $kfi, $_ := until (int COUNT) }}{{ if $kfi }},{{ end }}"w-{{ $kfi }}"{{ end }}`;
* lines added to a block (a hostfile): one line under `range` of `until` the count.
Each is checked against the lines already there (the items 0 .. n-1 written the same way); anything
else is left different, and the conversion is refused as depending on the values.

Pure: a variant's two outputs in, its lines with markers for these expressions out.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

COUNTS = ((2, 3), (4, 6), (5, 8))  # (set 0, set 1) of the first, second and third replica count
_WORD = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")
MARK_RE = re.compile(r"kfq([dlr])([0-9]{4})z")


@dataclass(frozen=True)
class Derived:
    """`c + k * count` where a number was."""

    share: tuple
    c: int
    k: int


@dataclass(frozen=True)
class Listed:
    """A list of `count` items: `first` then `sep` + item for the others; `parts` alternate text and
    index offsets (text, offset, text, offset, ..., text): the item with its index written in."""

    share: tuple
    sep: str
    parts: tuple
    lines: bool = False  # one item per line (a block's lines) instead of items inside a line


class Sizes:
    """The markers found so far (shared by every variant of one chunk)."""

    def __init__(self, prefix: str, counts: dict):
        self.prefix = prefix
        self.counts = counts  # share -> (set 0, set 1)
        self.found: dict[str, object] = {}
        self._by_value: dict[object, str] = {}
        self.numbers: dict = {}  # share -> (set 0, set 1) of the numbers standing in for values (not counts)
        self.products: list = []  # shares of numbers found multiplied into a count-derived number

    def mark(self, kind: str, what) -> str:
        if what not in self._by_value:
            token = f"{self.prefix}{kind}{len(self.found) + 1:04d}z"
            self.found[token] = what
            self._by_value[what] = token
        return self._by_value[what]

    # ---- numbers and lists inside a line -----------------------------------------------------------

    def line(self, a: str, b: str) -> str | None:
        """A line where the two sets differ by count-derived numbers and items: with markers (None: not so)."""
        edits = _edits(a, b)
        if edits == [None]:
            return None
        out, pos = "", 0
        for kind, a1, a2, b1, b2 in edits:
            out += a[pos:a1]
            if kind == "number":
                token = self._number(int(a[a1:a2]), int(b[b1:b2]))
            else:
                found = self._inline_list(out, b[b1:b2])
                token = None
                if found is not None:
                    start, token = found
                    out = out[:start]
            if token is None:
                return None
            out += token
            pos = a2
        return out + a[pos:]

    def _number(self, x0: int, x1: int) -> str | None:
        exact = [share for share, pair in self.counts.items() if pair == (x0, x1)]
        if exact:
            return self.mark("d", Derived(exact[0], 0, 1))
        # a value's number times a count (GPUs per pod x pods): no `c + k x count` of the count alone, though
        # two sets of numbers fit one; the stand-ins are primes, so their multiples say so
        times = [share for share, (n0, n1) in self.numbers.items() if x0 and x0 % n0 == 0 and x1 % n1 == 0]
        if times:
            self.products += [share for share in times if share not in self.products]
            return None
        fits = []
        for share, (a, b) in self.counts.items():
            if (x1 - x0) % (b - a) == 0:
                k = (x1 - x0) // (b - a)
                c = x0 - k * a
                if k >= 1 and c >= 0:
                    fits.append(Derived(share, c, k))
        ones = [f for f in fits if f.k == 1]
        fits = ones if len(ones) == 1 else fits
        if len(fits) != 1:
            return None
        return self.mark("d", fits[0])

    def _inline_list(self, before: str, inserted: str) -> tuple[int, str] | None:
        """Items inserted in a line after the text `before`: (where the list starts in `before`, marker)."""
        for share, (a, b) in self.counts.items():
            n = b - a
            if len(inserted) % n:
                continue
            size = len(inserted) // n
            new = [inserted[k * size:(k + 1) * size] for k in range(n)]
            last = before[len(before) - size:]
            parts = _template(last, a - 1, new[0], a)
            if parts is None or any(_fill(parts, a + k) != new[k] for k in range(n)):
                continue
            for cut in range(0, min(4, size)):
                sep, first = _fill(parts, 0)[:cut], _fill(parts, 0)[cut:]
                block = first + "".join(_fill(parts, i) for i in range(1, a))
                if before.endswith(block) and all(_fill(parts, i).startswith(sep) for i in range(1, b)):
                    listed = Listed(share, sep, _strip_sep(parts, len(sep)))
                    return len(before) - len(block), self.mark("l", listed)
        return None

    # ---- lines added to a block --------------------------------------------------------------------

    def blocks(self, lines: list, other: list):
        """Both outputs with lines added for a count's items (a hostfile) replaced by one marker line."""
        ops = difflib.SequenceMatcher(None, lines, other, autojunk=False).get_opcodes()
        for op, i1, _i2, j1, j2 in reversed(ops):
            if op != "insert":
                continue
            found = self._line_list(lines, i1, other[j1:j2])
            if found is None:
                continue
            share, count, token = found
            a, b = self.counts[share]
            indent = lines[i1 - 1][:len(lines[i1 - 1]) - len(lines[i1 - 1].lstrip(" "))]
            lines[i1 - a:i1] = [indent + token]
            other[j1 - a:j2] = [indent + token]
        return lines, other

    def _line_list(self, lines: list, at: int, inserted: list):
        for share, (a, b) in self.counts.items():
            if len(inserted) != b - a or at < a:
                continue
            parts = _template(lines[at - 1], a - 1, inserted[0], a)
            if parts is None:
                continue
            if lines[at - a:at] == [_fill(parts, i) for i in range(a)] and \
                    inserted == [_fill(parts, i) for i in range(a, b)]:
                return share, a, self.mark("r", Listed(share, "", parts, lines=True))
        return None


def _edits(a: str, b: str) -> list:
    """(kind, a1, a2, b1, b2) in characters: `number` where a number became another, `insert` where text was
    added, each insertion slid to the right as far as the text allows (`"w-1"` + `,"w-2"` before `]`, not
    `-1"` + `,"w-2` inside the item), so that it starts at an item's boundary. Anything else: []."""
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    ca = [0]
    for w in wa:
        ca.append(ca[-1] + len(w))
    cb = [0]
    for w in wb:
        cb.append(cb[-1] + len(w))
    edits = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == 1 and j2 - j1 == 1 and wa[i1].isdigit() and wb[j1].isdigit():
            edits.append(["number", ca[i1], ca[i2], cb[j1], cb[j2]])
        elif op == "insert":
            edits.append(["insert", ca[i1], ca[i1], cb[j1], cb[j2]])
        else:
            return [None]
    for n, e in enumerate(edits):
        if e[0] != "insert":
            continue
        limit = edits[n + 1][1] if n + 1 < len(edits) else len(a)
        while e[1] < limit and a[e[1]] == b[e[3]]:
            e[1] += 1
            e[2] += 1
            e[3] += 1
            e[4] += 1
    return [tuple(e) for e in edits]


def _template(previous: str, i: int, following: str, j: int) -> tuple | None:
    """The item's text with its index taken out, from two neighbouring items (indexes i and j = i + 1):
    (text, offset, text, ...) or None when they differ anywhere but in their index."""
    wa, wb = _WORD.findall(previous), _WORD.findall(following)
    if len(wa) != len(wb):
        return None
    parts: list = [""]
    for x, y in zip(wa, wb, strict=False):
        if x == y:
            parts[-1] += x
        elif x.isdigit() and y.isdigit() and int(y) - int(x) == j - i and int(x) - i >= 0:
            parts += [int(x) - i, ""]
        else:
            return None
    return tuple(parts) if len(parts) > 1 else None


def _fill(parts: tuple, i: int) -> str:
    return "".join(p if n % 2 == 0 else str(i + p) for n, p in enumerate(parts))


def _strip_sep(parts: tuple, cut: int) -> tuple:
    return (parts[0][cut:],) + parts[1:]


def expression(what, pipeline: str) -> str:
    """The template text standing for a marker (`pipeline`: the count's own, as written)."""
    count = f"(int ({pipeline}))"
    if isinstance(what, Derived) and (what.c, what.k) == (0, 1):
        return "{{ " + pipeline + " }}"  # the count itself, as the template writes it
    if isinstance(what, Derived):
        value = count if what.k == 1 else f"(mul {what.k} {count})"
        return "{{ " + (f"add {what.c} {value}" if what.c else value) + " }}"
    item = "".join(p if n % 2 == 0 else ("{{ $kfi }}" if p == 0 else f"{{{{ add $kfi {p} }}}}")
                   for n, p in enumerate(what.parts))
    if what.lines:
        return f"{{{{- range $kfi, $_ := until {count} }}}}\n{item}\n{{{{- end }}}}"
    sep = "{{ if $kfi }}" + what.sep + "{{ end }}" if what.sep else ""
    return f"{{{{ range $kfi, $_ := until {count} }}}}{sep}{item}{{{{ end }}}}"
