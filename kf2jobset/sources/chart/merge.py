"""The conversions of a template's variants merged into one template.

The base variant takes every region's first alternative (a range: one iteration). For each region,
each other alternative is converted too, and its lines compared with the base's (difflib): the
lines that differ are the region's *footprint* in the conversion. There the merged template holds a
Switch: the region's own control actions around each alternative's lines, the region's inner regions
switched in turn (found the same way in the variant that takes that alternative). A region's footprint
holds its inner regions' footprints; regions whose footprints overlap (a replica type that changes
another's TF_CONFIG) are switched together, one inside the other, over every combination of their
alternatives. A range's body must come out once per item: its conversion with two items must add one
copy of the body's lines (the second item's stand-ins in place of the first's); lines that come once
for any number of items (a key above the items) are kept under `if` of the range's collection.

A combination whose conversion fails (the values make a job the post-renderer refuses, or branches
that exclude each other both taken) writes `fail` there. Last, combinations the merge did not convert
are drawn at random and held to the merged template's prediction; a difference is refused.
"""
from __future__ import annotations

import difflib
import itertools
import random
from dataclasses import dataclass

from ...errors import InputError, Kf2JobSetError
from ...k8s.podrules import INHERITED
from .items import Fail, Repeat, Switch, predict
from .parents import guard_parents
from . import resource_names
from .refusal import Refusal
from .restore import collection, truth
from .standins import TOKEN_RE

MAX_COMBINATIONS = 16  # regions switched together: their alternatives multiplied
CHECKED_COMBINATIONS = 12  # random combinations held to the prediction


def merge(work) -> list:
    base = _base_choice(work)
    v = work.convert(base)
    _usable(work, v)
    work.reference = v.lines
    work.check_choices(v)
    resource_names.check(work, v)
    work.conversions = v.conversions
    segments = _build(work, base, v, _decisions(work, _children(work, None, base)))
    items = [item for _, _, item in segments]

    items = guard_parents(work, base, items)
    _check_predictions(work, base, items)
    return items


# ---- regions ---------------------------------------------------------------------------------------

def _children(work, parent, choice: dict) -> list:
    """Regions directly inside `parent` = (region key, alternative) (None: the top level), in text order."""
    out = []
    for r in work.program.regions.values():
        enclosing = r.regions[-1] if r.regions else None
        if enclosing == parent and _active(r, choice):
            out.append(r)
    return sorted(out, key=lambda r: (r.file != work.program.file, r.line, r.key))


def _decisions(work, regions: list) -> list:
    """Sibling regions grouped by decision: each group takes one alternative together."""
    groups: dict = {}
    for r in regions:
        groups.setdefault(r.decision, []).append(r)
    return list(groups.values())


def _active(region, choice: dict) -> bool:
    return all(choice.get(k, 0) == alt for k, alt in region.regions)


def _base_choice(work) -> dict:
    """Every region's first alternative; when that does not convert (branches that exclude each other
    both taken), the smallest change that does."""
    return _settled(work, {})[0]


def _settled(work, trial: dict, within: set | None = None) -> tuple:
    """A choice and its variant. Where the choice leaves inner branches (of the regions `within`; None: any) at
    their first alternative and those exclude each other (both write one key: `if eq .Values.mode "git"` beside
    `if eq .Values.mode "rsync"`), the smallest change of them that converts; the job itself refused: the
    choice as it is."""
    v = work.convert(trial)
    if v.error is None or not isinstance(v.error, InputError):
        return trial, v
    free = [r for r in work.program.regions.values() if r.key not in trial and _active(r, trial)
            and (within is None or any(k in within for k, _ in r.regions))]
    for r in sorted(free, key=lambda r: (len(r.regions), r.line), reverse=True):
        for alt in range(1, r.alternatives):
            w = work.convert({**trial, r.key: alt})
            if w.error is None:
                return {**trial, r.key: alt}, w
    return trial, v


def _usable(work, v) -> None:
    """A variant whose conversion failed or depends on the stand-ins' values stops the conversion."""
    if v.error is not None:
        raise _error(work, v.error, v.text)
    if v.lines != v.other:
        raise _depends(work, v)


def _error(work, err: Kf2JobSetError, text: str) -> Exception:
    """An error about a stand-in (it names one, or sits at or below where one the variant's `text` writes stands)
    is kf2jobset needing the value (a Refusal); any other error is the job's, as the post-renderer would report
    it. Text that is not YAML (a key written twice) comes from branches taken together, whatever the values: the
    job's too."""
    if isinstance(err, InputError):
        return err
    docs = _documents(text)
    for pr in err.problems:
        message = work.restore_text(pr.message)
        path = tuple(pr.location.path or ())
        at = [key for where, key in work.paths.items() if where and path[:len(where)] == where
              and _written(docs, where, str(work.program.token(key, 0)))]
        if message != pr.message or at:
            slot = work.program.slots[at[0]] if at else None
            said = f" ({{{{ {slot.source} }}}} writes it)" if slot else ""
            message = message.replace(INHERITED, "")  # about kf2jobset's stand-in, which no API server saw
            return Refusal(f"kf2jobset needs the value where the template writes it{said}: {message}",
                           slot.line if slot else None, slot.file if slot else None, at[0] if at else None)
    return err


def _documents(text: str) -> list | None:
    import yaml

    try:
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return None


def _written(docs: list | None, where: tuple, token: str) -> bool:
    """Whether a variant writes the stand-in where the plan saw it (another branch may write that field)."""
    if docs is None:
        return True
    for doc in docs:
        node = doc
        for part in where:
            if isinstance(node, dict) and part in node:
                node, found = node[part], True
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node, found = node[part], True
            else:
                found = False
                break
        if found and token in str(node):
            return True
    return False


def _depends(work, v) -> Refusal:
    import re

    for op, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, v.lines, v.other, autojunk=False).get_opcodes():
        if op != "equal" and any(re.search(r"\bkf2jobset-[a-z]+-[0-9a-f]{10}\b", x) for x in v.lines[i1:i2]):
            return Refusal("--target trainjob writes a TrainingRuntime named by a digest of its content, and its content "
                           "holds values the template writes (a TrainJob fits Trainer's built-in runtime only when every "
                           "pod has one template): convert with --target jobset")
        if op != "equal" and work.sizes.products:
            p = work.program
            key = next(k for k in p.slots if p.share.get(k, k) == work.sizes.products[0])
            shown = work.restore_text(" / ".join(x.strip() for x in v.lines[i1:i2][:2]))
            return Refusal(f"{{{{ {p.slots[key].source} }}}} is multiplied by a replica count in what kf2jobset "
                           f"writes (near: {shown}), which a stand-in for the values cannot follow: write that value "
                           "in the template as it is", p.slots[key].line, p.slots[key].file, key)
        if op != "equal":
            shown = work.restore_text(" / ".join(x.strip() for x in v.lines[i1:i2][:2]))
            return Refusal(f"the conversion depends on the values the template writes (near: {shown}): with other "
                           "values kf2jobset writes other text there")
    return Refusal("the conversion depends on the values the template writes")


# ---- building --------------------------------------------------------------------------------------

def _build(work, choice: dict, v, decisions: list) -> list:
    """Segments (start, end, item) covering v.lines: lines, and a Switch or Repeat over each footprint.
    `decisions`: lists of sibling regions that take one alternative together."""
    groups = _groups(work, choice, v, decisions)
    placed = []
    for group in groups:
        placed += _switches(work, choice, v, group)
    placed.sort(key=lambda t: (t[0], t[1]))
    out, pos = [], 0
    for start, end, item in placed:
        if start < pos:
            raise Refusal("the lines of two branches overlap in the conversion")
        out += [(i, i + 1, v.lines[i]) for i in range(pos, start)]
        out.append((start, end, item))
        pos = end
    out += [(i, i + 1, v.lines[i]) for i in range(pos, len(v.lines))]
    return out


@dataclass
class _Group:
    regions: list  # decisions: each a list of regions taking one alternative
    ranges: list  # merged footprint ranges in the base's lines
    inner: list  # segments of the base variant with the regions' inner regions switched
    variants: dict  # alternatives tuple -> Variant
    trials: dict  # alternatives tuple -> the choice its variant was converted with (chart/merge.py _settled)


def _groups(work, choice: dict, v, decisions: list) -> list:
    groups = []
    for d in decisions:
        groups.append(_group(work, choice, v, [d]))
    merged = True
    while merged:  # regions whose footprints overlap are switched together
        merged = False
        for a, b in itertools.combinations(range(len(groups)), 2):
            if _overlap(groups[a].ranges, groups[b].ranges):
                members = groups[a].regions + groups[b].regions
                groups[a] = _group(work, choice, v, members)
                del groups[b]
                merged = True
                break
    return groups


def _group(work, choice: dict, v, members: list) -> _Group:
    combos = list(itertools.product(*[range(d[0].alternatives) for d in members]))
    if len(combos) > MAX_COMBINATIONS:
        raise Refusal(_named(work, [d[0] for d in members]) + ": too many branches change the same lines of the conversion")
    base_combo = tuple(choice.get(d[0].key, 0) for d in members)
    inner = _build(work, choice, v, _decisions(work, [c for d in members for r in d
                                                      for c in _children(work, (r.key, choice.get(r.key, 0)), choice)]))
    ranges = [(s, e) for s, e, item in inner if not isinstance(item, str)]
    variants, trials = {base_combo: v}, {base_combo: choice}
    for combo in combos:
        if combo == base_combo:
            continue
        trials[combo], w = _settled(work, _with(choice, members, combo), {r.key for d in members for r in d})
        variants[combo] = w
        if w.error is None:
            if w.lines != w.other:
                raise _depends(work, w)
            ranges += _hunks(v.lines, w.lines)
    for d in members:
        if d[0].block.kind == "range":
            ranges += _range_extent(work, choice, v, d)
    merged = _merged(ranges)
    if not merged and any(w.error is not None for w in variants.values()):
        merged = [(0, len(v.lines))]  # a branch whose leaving out fails the whole document
    return _Group(members, merged, inner, variants, trials)


def _with(choice: dict, members: list, combo: tuple) -> dict:
    return {**choice, **{r.key: a for d, a in zip(members, combo, strict=False) for r in d}}


def _range_extent(work, choice, v, ranges: list) -> list:
    """Where the second item of ranges alike would go: those lines belong to their footprint too."""
    two = work.convert(choice, {r.key: 2 for r in ranges})
    if two.error is not None or two.lines is None:
        return []
    return _hunks(v.lines, _back_to_first(work, ranges, two.lines))


def _switches(work, choice: dict, v, group: _Group) -> list:
    out = []
    for start, end in group.ranges:
        item = _switch_at(work, choice, v, group, 0, start, end, ())
        out.append((start, end, item))
    return out


def _switch_at(work, choice, v, group: _Group, depth: int, start: int, end: int, prefix: tuple):
    """The switch of group.regions[depth] over lines [start, end) of the base, the outer members' alternatives
    fixed to `prefix`."""
    region = group.regions[depth][0]
    alts = {}
    for alt in range(region.alternatives):
        combo = prefix + (alt,)
        if depth + 1 < len(group.regions):
            alts[alt] = [_switch_at(work, choice, v, group, depth + 1, start, end, combo)]
        else:
            alts[alt] = _content(work, choice, v, group, combo, start, end)
    if region.block.kind == "range":
        return _sized(_repeat(work, choice, v, group.regions[depth], alts, start, end), end - start)
    return _sized(Switch(region.key, alts), end - start)


def _content(work, choice, v, group: _Group, combo: tuple, start: int, end: int) -> list:
    base_combo = tuple(choice.get(d[0].key, 0) for d in group.regions)
    if combo == base_combo:
        return _slice(group.inner, start, end)
    w = group.variants[combo]
    if w.error is not None:
        said = _error(work, w.error, w.text)
        if isinstance(said, Refusal):
            raise said  # a stand-in's fault, not the values'
        return [Fail(_fail_message(work, w.error))]
    ops = difflib.SequenceMatcher(None, v.lines, w.lines, autojunk=False).get_opcodes()
    s, e = _mapped(ops, start), _mapped(ops, end)
    trial = group.trials[combo]
    inner = [c for d, a in zip(group.regions, combo, strict=False) for r in d for c in _children(work, (r.key, a), trial)]
    return _slice(_build(work, trial, w, _decisions(work, inner)), s, e)


def _repeat(work, choice, v, ranges: list, alts: dict, start: int, end: int):
    """A range's switch over lines [start, end): its item's lines found by converting two items (in every
    range alike among its siblings, so that a volume's item and its mount's stay together)."""
    region = ranges[0]
    said = f"{{{{ {region.block.branches[0].action.body} }}}}"
    two = work.convert(choice, {r.key: 2 for r in ranges})
    if two.error is not None:
        raise Refusal(f"{said}: with two items the conversion fails ({_fail_message(work, two.error)})",
                      region.line, region.file)
    lines = _back_to_first(work, ranges, two.lines)
    ops = difflib.SequenceMatcher(None, v.lines, lines, autojunk=False).get_opcodes()
    mine = [(op, i1, i2, j1, j2) for op, i1, i2, j1, j2 in ops if op != "equal" and start <= i1 and i2 <= end]
    if len(mine) != 1 or mine[0][0] != "insert":
        raise Refusal(f"{said}: its items change other lines of the conversion", region.line, region.file)
    _, at, _, j1, j2 = mine[0]
    copy = lines[j1:j2]
    n = len(copy)
    if v.lines[at - n:at] == copy and start <= at - n:
        body = (at - n, at)
    elif v.lines[at:at + n] == copy and at + n <= end:
        body = (at, at + n)
    else:
        raise Refusal(f"{said}: the lines of its second item are not a copy of the first's", region.line, region.file)
    head, middle, foot = _slice_items(alts[0], start, end, body)
    return Repeat(region.key, head, middle, foot, alts.get(1, []))


def _slice_items(items: list, start: int, end: int, body: tuple) -> tuple:
    """items cover lines [start, end): cut them at the body's bounds (a Switch may not straddle them)."""
    pos = start
    head, middle, foot = [], [], []
    for item in items:
        span = _span_of(item)
        target = head if pos < body[0] else middle if pos < body[1] else foot
        if target is head and pos + span > body[0] or target is middle and pos + span > body[1]:
            raise Refusal("a branch straddles the lines of a range's item")
        target.append(item)
        pos += span
    return head, middle, foot


def _span_of(item) -> int:
    if isinstance(item, str):
        return 1
    return getattr(item, "span", 1)


def _back_to_first(work, ranges: list, lines: list) -> list:
    """A conversion with two items, the second item's stand-ins written as the first's."""
    table = {}
    for r in ranges:
        table.update(work.program.iteration_tokens(r.key))
    return [work.program.swap_tokens(line, table) for line in lines]


def _fail_message(work, err: Kf2JobSetError) -> str:
    p = err.problems[0]
    text = TOKEN_RE.sub("<value>", work.restore_text(p.message) if isinstance(err, InputError) else p.message)
    return text.replace("{{", "<").replace("}}", ">")


# ---- line ranges -----------------------------------------------------------------------------------

def _hunks(a: list, b: list) -> list:
    return [(i1, i2) for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            if op != "equal"]


def _merged(ranges: list) -> list:
    out: list = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _overlap(a: list, b: list) -> bool:
    return any(s1 < e2 and s2 < e1 or (s1 == s2 and (s1 == e1 or s2 == e2)) for s1, e1 in a for s2, e2 in b)


def _mapped(ops, i: int) -> int:
    """Where line i of the base sits in the other variant (i never falls strictly inside a hunk)."""
    for op, i1, i2, j1, _j2 in ops:
        if i1 <= i < i2 or (i == i1 == i2):
            return j1 + (i - i1) if op == "equal" else j1
    return ops[-1][4] if ops else 0


def _slice(segments: list, start: int, end: int) -> list:
    out = []
    for s, e, item in segments:
        if s >= start and e <= end and (s < e or start <= s < end or s == start == end):
            out.append(_sized(item, e - s))
        elif s < end and e > start:
            raise Refusal("a branch straddles the lines of another one in the conversion")
    return out


def _sized(item, span: int):
    if not isinstance(item, str):
        item.span = span
    return item


def _named(work, regions) -> str:
    return ", ".join(f"{{{{ {r.block.branches[0].action.body} }}}} (line {r.line})" for r in regions)


# ---- the prediction, held to more combinations -----------------------------------------------------

def _consistent(work, choice: dict) -> dict:
    """The choice with every `if X`, `with X` and `range X` (no else) taking the alternative of the outermost of
    them: Go decides all three by whether X is empty (`if .Values.affinity.required` around `range
    .Values.affinity.required`: its items are never none), so no values set takes them apart."""
    taken: dict = {}
    out = dict(choice)
    for r in sorted(work.program.regions.values(), key=lambda r: (len(r.regions), r.line)):
        b = r.block
        if len(b.branches) != 1 or b.kind not in ("if", "with", "range"):
            continue
        head = b.branches[0].header
        said = (truth(collection(head) if b.kind == "range" else head), r.scope, r.helpers)
        out[r.key] = taken.setdefault(said, out.get(r.key, 0))
    return out


def _check_predictions(work, base: dict, items: list) -> None:
    regions = list(work.program.regions.values())
    if not regions:
        return
    by_decision: dict = {}
    for r in regions:
        by_decision.setdefault(r.decision, []).append(r)
    rng = random.Random(32)
    tried = set()
    for _ in range(CHECKED_COMBINATIONS):
        picks = {d: rng.randrange(rs[0].alternatives) for d, rs in by_decision.items()}
        choice = _consistent(work, {r.key: picks[d] for d, rs in by_decision.items() for r in rs})
        key = tuple(sorted(choice.items(), key=repr))
        if key in tried:
            continue
        tried.add(key)
        w = work.convert(choice)
        if w.error is not None:
            continue  # branches that exclude each other, or values the post-renderer refuses too
        if w.lines != w.other:
            raise _depends(work, w)
        want = predict(items, choice)
        if want != w.lines:
            changed = [r for r in regions if choice[r.key] != base.get(r.key, 0)]
            raise Refusal(f"branches {_named(work, changed[:3])} change the conversion together in ways kf2jobset "
                          "cannot place")
