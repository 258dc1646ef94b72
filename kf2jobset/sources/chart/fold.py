"""A helper the conversion had to see into, put back as its include where it still writes its own lines.

The conversion reads what a helper writes (a container's name decides where TF_CONFIG goes), so such an
include is rendered as the helper's text (skeleton.py, EXPAND). Where the merged template still holds
that text unchanged, as one run of lines, and what kf2jobset adds comes after it at the indentation of
the mapping the helper's last item opened (env, ports after `- name: x` / `image: ...`), the run is the
include's own output: it is written as the include again, `nindent` following the column the run now
starts at. Text for text, so the template renders what the merge checked. Where it is not (kf2jobset
changes a line the helper writes, or adds lines inside the helper's last value), the text stays inlined
and the reason is kept for HELM002.

Pure: merged items in, items out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .items import Guard, Repeat, Switch

FOLD_RE = re.compile(r"^( *)(kfqf[0-9]{4}z)$")


@dataclass
class Folding:
    """The runs written as includes again: sentinel token -> the include (a SlotInfo of skeleton.py)."""

    folds: dict = field(default_factory=dict)
    kept: set = field(default_factory=set)  # expansion keys found and folded somewhere
    why: dict = field(default_factory=dict)  # expansion key -> why a run of its text could not be folded


def fold(program, items: list) -> tuple[list, Folding]:
    folding = Folding()
    if not program.expansions:
        return items, folding
    texts = []
    for key, written in program.expansions.items():
        slot = program.expanded[key]
        if slot.form.function not in ("nindent", "indent"):
            folding.why.setdefault(key, f"it is written without indent or nindent ({{{{ {slot.form.source} }}}})")
            continue
        for text in written:
            lines = text.split("\n")[1:] if slot.form.function == "nindent" else text.split("\n")
            while lines and not lines[-1].strip():
                lines.pop()
            if lines:
                texts.append((key, lines))
    # includes writing the same text (one helper in several roles) are found by their text: a run of it is
    # any of them, and what happens to the run happens to each
    by_text: dict = {}
    for key, lines in sorted(texts, key=lambda kl: bool(program.expanded[kl[0]].scope)):  # `.` the root first
        by_text.setdefault(tuple(lines), []).append(key)
    out = _walk(items, [(keys[0], list(lines)) for lines, keys in by_text.items()], folding)
    for keys in by_text.values():
        for key in keys[1:]:
            if keys[0] in folding.kept:
                folding.kept.add(key)
            if keys[0] in folding.why:
                folding.why.setdefault(key, folding.why[keys[0]])
    for key in program.expansions:
        if key not in folding.kept and key not in folding.why:
            folding.why[key] = _changed(items, [lines for k, lines in texts if k == key])
    return out, folding


def _changed(items: list, texts: list) -> str:
    """Which line of the helper's text the conversion changed: the first one the nearest copy lacks."""
    best = None  # (lines matched, the helper's lines)
    for run in _string_runs(items):
        for lines in texts:
            for at in range(len(run)):
                shift = _indent(run[at]) - _indent(lines[0])
                if shift < 0 or run[at].strip() != lines[0].strip():
                    continue
                n = 0
                while n < len(lines) and at + n < len(run) and \
                        run[at + n].rstrip() == ((" " * shift + lines[n]) if lines[n].strip() else "").rstrip():
                    n += 1
                if best is None or n > best[0]:
                    rest = [ln.strip() for ln in run[at + n:]]
                    best = (n, lines, n < len(lines) and n > 0 and lines[n].strip() in rest)
    if best is None:
        first = texts[0][0].strip() if texts else ""
        return f"kf2jobset changes what it writes (its first line `{first}` is not in the conversion as written)"
    n, lines, later = best
    if n >= len(lines):
        return "its lines differ between the values' branches"
    if later:
        return f"kf2jobset writes lines into what it writes, after `{lines[n - 1].strip()}`"
    return f"kf2jobset changes its line `{lines[n].strip()}`"


def _string_runs(items: list):
    run = []
    for item in items:
        if isinstance(item, str):
            run.append(item)
            continue
        if run:
            yield run
            run = []
        parts = list(item.alts.values()) if isinstance(item, Switch) else \
            [item.head + item.body + item.foot, item.other] if isinstance(item, Repeat) else \
            [item.on + item.children] if isinstance(item, Guard) else []
        for part in parts:
            yield from _string_runs(part)
    if run:
        yield run


def _walk(items: list, texts: list, folding: Folding) -> list:
    out = []
    for item in items:
        if isinstance(item, Switch):
            item = Switch(item.region, {alt: _walk(inner, texts, folding) for alt, inner in item.alts.items()})
        elif isinstance(item, Repeat):
            item = Repeat(item.region, *(_walk(part, texts, folding) for part in (item.head, item.body, item.foot,
                                                                                   item.other)))
        elif isinstance(item, Guard):
            item = Guard(item.on, item.off, _walk(item.children, texts, folding), item.conditions)
        out.append(item)
    return _runs(out, texts, folding)


def _runs(items: list, texts: list, folding: Folding) -> list:
    out, i = [], 0
    while i < len(items):
        for key, lines in texts:
            shift = _match(items, i, lines)
            if shift is None:
                continue
            after = _first_lines(items[i + len(lines):])
            problem = next(filter(None, (_inside(lines, shift, line) for line in after)), None)
            if problem:
                folding.why[key] = problem
                continue
            token = f"kfqf{len(folding.folds) + 1:04d}z"
            folding.folds[token] = key
            folding.kept.add(key)
            out.append(" " * (_indent(lines[0]) + shift) + token)
            i += len(lines)
            break
        else:
            out.append(items[i])
            i += 1
    return out


def _match(items: list, at: int, lines: list) -> int | None:
    """The columns the helper's text moved right by where it starts at `at` (None: it does not)."""
    if at + len(lines) > len(items) or not all(isinstance(x, str) for x in items[at:at + len(lines)]):
        return None
    first = items[at]
    shift = _indent(first) - _indent(lines[0])
    if shift < 0 or not lines[0].strip():
        return None
    pad = " " * shift
    for got, want in zip(items[at:at + len(lines)], lines, strict=False):
        if got.rstrip() != (pad + want if want.strip() else "").rstrip():
            return None
    return shift


def _first_lines(items: list) -> list:
    """The line that comes next after a run, for each way Helm may pick the items that follow it."""
    for n, item in enumerate(items):
        rest = items[n + 1:]
        if isinstance(item, str):
            if item.strip():
                return [item]
        elif isinstance(item, Switch):
            # an alternative may write nothing (an `if` without else): what follows the Switch too
            return [ln for inner in item.alts.values() for ln in _first_lines(inner + rest)] + _first_lines(rest)
        elif isinstance(item, Repeat):
            return _first_lines(item.head + item.body + item.foot + rest) + _first_lines(item.other + rest)
        elif isinstance(item, Guard):
            return _first_lines(item.on + item.children + rest) + _first_lines(item.off + rest)
    return []


def _inside(lines: list, shift: int, after) -> str | None:
    """Why the line after the run belongs to the helper's last value (None: it continues the mapping the
    helper's last item opened, or comes after the helper's lines altogether)."""
    if not isinstance(after, str) or not after.strip():
        return None
    last = [ln for ln in lines if ln.strip() and _indent(ln) <= _indent(lines[0])][-1]
    keys = _indent(last) + (2 if last.lstrip().startswith("- ") else 0) + shift
    col = _indent(after)
    if col > keys or (col == keys and after.lstrip().startswith("-")):
        final = lines[-1].strip()
        return f"kf2jobset adds lines inside the last value it writes (after `{final}`)"
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
