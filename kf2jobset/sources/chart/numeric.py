"""Strings the conversion reads as numbers when they are numbers: found by converting a variant again with
digits where its string stand-ins were.

A string field may hold a number as text, and the conversion may read it so: PyTorchJob's
`nprocPerNode: "2"` makes WORLD_SIZE pods x 2 (training-operator v1.9 pytorch/envvar.go), while "auto"
leaves it the pod count. A string stand-in (`kfqa0001z`) is never such a number, so the branch a number
takes would never be seen: the converted template would silently write the other contract. Each
variant is converted once more with every quoted string stand-in written as digits; where the job then
differs in more than those digits, the stand-in that makes the difference is refused, named with its
field. A stand-in whose digits make the job invalid is not probed again (a name must start with a letter).

Pure: a variant's text and conversion in, a Refusal out.
"""
from __future__ import annotations

import re

from ...errors import Kf2JobSetError, format_path
from . import gotemplate as gt
from . import standins as si
from .refusal import Refusal
from .skeleton import SCALAR

# four-digit primes: no other stand-in (three-digit numbers, small replica counts) is one of them
PROBES = [n for n in range(1009, 2000) if all(n % d for d in range(2, 45))]
_QUOTING = re.compile(r"^(?:s?quote\b|printf\s+\"%q\")")


def probe(work, text: str, first: str) -> None:
    """Convert `text` (a variant rendered with the first token set, converted to `first`) with digits for
    its quoted string stand-ins; a stand-in whose digits change more than themselves is refused."""
    found = _candidates(work, text)
    if not found:
        return
    if not _differs(work, text, first, found):
        return
    # which one: each alone
    differs = list(found) if len(found) == 1 else [t for t in found if _differs(work, text, first, {t: found[t]})]
    if not differs:
        return
    token = differs[0]
    seen = found[token][0]
    key = work.program.tokens(0)[token]
    slot = work.program.slots[key]
    where = format_path(seen.path, empty="the document")
    raise Refusal(f"{{{{ {slot.source} }}}} writes {where}, a string kf2jobset reads as a number when it is one "
                  f"(with a number there it writes other lines: {_near(work, text, first, {token: found[token]})}), which a stand-in "
                  "for the values cannot follow: write that value in the template as it is", slot.line, slot.file, key)


def _candidates(work, text: str) -> dict:
    """token -> its occurrences, for string stand-ins that are whole scalars a value can make numeric text
    (quoted in the template, or by the pipeline's quote)."""
    p = work.program
    tokens = p.tokens(0)
    try:
        _, seen = si.locate(text)
    except Exception:  # noqa: BLE001 - the variant was converted, so this does not happen; nothing to probe
        return {}
    out: dict = {}
    for s in seen:
        key = tokens.get(s.token)
        if key is None or p.plan.kinds.get(key[:-1], SCALAR) != SCALAR or not hasattr(p.slots[key].node, "pipeline"):
            continue
        share = p.share.get(key, key)
        if share in p.plan.typed or share in p.plan.counts or share in p.plan.numbers or share in work.unprobed:
            continue
        out.setdefault(s.token, []).append(s)
    return {t: ss for t, ss in out.items() if all(_numeric_text(p.slots[tokens[t]], s) for s in ss)}


def _numeric_text(slot, s: si.Seen) -> bool:
    if s.role != "value" or s.style not in ("", '"', "'"):
        return False
    if s.style:
        return True
    commands = gt.split_pipeline(slot.form.source)
    return any(_QUOTING.match(c) for c in commands)  # `{{ x | quote }}`: a number comes out as text


def _render(text: str, found: dict) -> tuple[str, dict]:
    """The text with digits for the tokens (quoted where the token stood bare), and digits -> token."""
    digits = {t: str(PROBES[n % len(PROBES)]) for n, t in enumerate(sorted(found))}
    for t, d in digits.items():
        bare = found[t][0].style == ""
        text = re.sub(rf"(?<![\w.]){t}(?![\w.])", f'"{d}"' if bare else d, text)
    return text, {d: t for t, d in digits.items()}


def _differs(work, text: str, first: str, found: dict) -> bool:
    import yaml

    probed, back = _render(text, found)
    out = work._run(probed)
    if isinstance(out, Kf2JobSetError):
        if len(found) == 1:  # its digits make an invalid job: the post-renderer would say so; not probed again
            key = work.program.tokens(0)[next(iter(found))]
            work.unprobed.add(work.program.share.get(key, key))
        return False
    pattern = re.compile(r"(?<![\w.])(" + "|".join(back) + r")(?![\w.])")

    def mapped(node):
        if isinstance(node, str):
            return pattern.sub(lambda m: back[m.group(1)], node)
        if isinstance(node, dict):
            return {mapped(k): mapped(v) for k, v in node.items()}
        if isinstance(node, list):
            return [mapped(v) for v in node]
        return node

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [mapped(d) for d in yaml.load_all(out[0], Loader=loader)] != list(yaml.load_all(first, Loader=loader))


def _near(work, text: str, first: str, found: dict) -> str:
    """The first line the stand-in's digits change, as the number makes it (the digits: the action)."""
    import difflib

    probed, back = _render(text, found)
    out = work._run(probed)
    if isinstance(out, Kf2JobSetError):
        return "it is refused"
    lines = first.split("\n")
    other = out[0].split("\n")
    changed = [ln.strip() for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, other, autojunk=False)
               .get_opcodes() if op != "equal" for ln in other[j1:j2] or lines[i1:i2]]
    pattern = re.compile(r"(?<![\w.])(" + "|".join(back) + r")(?![\w.])")
    shown = next((ln for ln in changed if pattern.search(ln)), changed[0] if changed else "")  # the value's own line
    return work.restore_text(pattern.sub(lambda m: back[m.group(1)], shown)) if shown else "elsewhere"
