"""The conversions of a template's variants merged into one template: lines every variant shares, and
for each region the lines that differ between its alternatives, under that region's own actions."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Kf2JobSetError
from .refusal import Refusal


@dataclass
class Switch:
    region: tuple  # the region's key
    alts: dict = field(default_factory=dict)  # alternative -> items (lines and Switches)


def merge(work) -> list:
    p = work.program
    base = work.convert({})
    _usable(work, base)
    if p.regions:
        first = min(p.regions.values(), key=lambda r: r.line)
        raise Refusal(f"{{{{ {first.block.branches[0].action.body} }}}}: whole-line actions are not converted yet",
                      first.line, first.file)
    work.conversions = base.conversions
    return list(base.lines)


def _usable(work, v) -> None:
    """A variant whose conversion failed or depends on the stand-ins' values stops the conversion."""
    if v.error is not None:
        raise _error(work, v.error)
    if v.lines != v.other:
        raise _depends(work, v)


def _error(work, err: Kf2JobSetError) -> Exception:
    """An error about a stand-in is kf2jobset needing the value (a Refusal); any other error is the job's,
    as the post-renderer would report it."""
    problems = []
    about_values = False
    for pr in err.problems:
        message = work.restore_text(pr.message)
        if message != pr.message:
            about_values = True
        problems.append((pr, message))
    if about_values:
        pr, message = next((x for x in problems if x[1] != x[0].message))
        return Refusal(f"kf2jobset needs the value where the template writes it: {message}")
    return err


def _depends(work, v) -> Refusal:
    import difflib

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, v.lines, v.other, autojunk=False).get_opcodes():
        if op != "equal":
            shown = work.restore_text(" / ".join(x.strip() for x in v.lines[i1:i2][:2]))
            return Refusal(f"the conversion depends on the values the template writes (near: {shown}): with other "
                           "values kf2jobset writes other text there")
    return Refusal("the conversion depends on the values the template writes")
