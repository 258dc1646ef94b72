"""Jobs written as templates for a program: placeholders that a script fills in before applying.

Not envsubst (kf2jobset/sources/envsubst.py reads `${VAR}`): hand-made slots such as `replicas:
template-num-nodes`, `name: ...`, `namespace: <namespace>`, `image: <ACCOUNT>.dkr.ecr...`, and a
key whose value a `#<name>` comment ate (`name: #<name>` is a null followed by a comment). The file
is not the job that ran; the program's output was. kf2jobset says so: an error at a placeholder
names it and says the file looks like a template for a program; a file that converts anyway gets a
printed TPL003 naming every placeholder, so the JobSet is not taken for the finished job.

Pure: a document's parsed data and text in, placeholders and reworded problems / a note out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import Kf2JobSetError, Problem
from ..notes import Note
from ..errors import format_path

ANGLE = re.compile(r"<[A-Za-z_][A-Za-z0-9_.-]*>")  # <namespace>, <ACCOUNT>, <your-bucket>
ELLIPSIS = ("...", "…")
_COMMENT_SLOT = re.compile(r":\s*#\s*(<[^>\s]+>|\{\{[^}]*\}\}|\.\.\.)\s*$")  # `name: #<name>`
_NOT_NUMBER = re.compile(r"^expected integer, got string '([^']*)'")
# a string standing where a number belongs: a joined identifier (template-num-nodes, num_workers) or
# an upper-case name (NUM_NODES); `two` is a mistake, not a slot
_SLOT_WORD = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+|[A-Z][A-Z0-9_]+)$")
_FREE_TEXT = ("command", "args", "annotations")  # shell text and notes: `<` there is not a slot
INHERITED = " (inherited: the v1 API server or the operator's pods rejected this too)"
WHY = "this file looks like a template for a program, which fills in its placeholders before applying it"


@dataclass(frozen=True)
class Slot:
    path: tuple
    text: str  # the placeholder as written
    how: str  # "value" (a string), "comment" (a null whose comment names it), "number" (in an integer field)

    def describe(self, at: tuple = ()) -> str:
        if tuple(at) != self.path and self.how != "number":
            return f"{self.text!r} at {format_path(self.path, empty='')} looks like a placeholder"
        if self.how == "comment":
            return f"no value: the comment #{self.text} after the key looks like a placeholder"
        if self.how == "number":
            return f"{self.text!r} where an integer belongs looks like a placeholder"
        return f"{self.text!r} looks like a placeholder"


def find(data, text: str, start_line: int = 0) -> list[Slot]:
    """Placeholders in one document (data as parsed, text its exact text)."""
    slots: list[Slot] = []
    lines = text.splitlines()

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _FREE_TEXT:
                    continue
                if v is None:
                    hit = _comment_slot(node, k, lines)
                    if hit:
                        slots.append(Slot(path + (k,), hit, "comment"))
                else:
                    walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + (i,))
        elif isinstance(node, str):
            if node.strip() in ELLIPSIS:
                slots.append(Slot(path, node.strip(), "value"))
            elif "${" not in node and "{{" not in node:
                for m in dict.fromkeys(ANGLE.findall(node)):
                    slots.append(Slot(path, m, "value"))

    walk(data, ())
    return slots


def _comment_slot(mapping, key, lines: list[str]) -> str | None:
    lc = getattr(mapping, "lc", None)
    try:
        line = lc.key(key)[0]
    except Exception:  # built in code: no positions
        return None
    if 0 <= line < len(lines):
        m = _COMMENT_SLOT.search(lines[line])
        return m.group(1) if m else None
    return None


def hint(slots: list[Slot]) -> str:
    shown = ", ".join(repr(t) for t in dict.fromkeys(s.text for s in slots))
    return f"{WHY} ({shown}): convert the file the program writes, or fill the placeholders in first"


def explain(err: Kf2JobSetError, slots: list[Slot]) -> Kf2JobSetError:
    """The errors of a template's conversion: one at (or just above) a placeholder names it, says what
    the file is, and drops "inherited" (the placeholder never reached an API server: the program's
    value did). A string in an integer field is itself such a placeholder. When no error is at a
    placeholder, the first error still says the file looks like a template."""
    problems, hit = [], False
    for pr in err.problems:
        path = tuple(pr.location.path)
        mine = [s for s in slots if path and s.path[:len(path)] == path and len(s.path) - len(path) <= 1]
        mine = mine or [s for s in slots if len(s.text) > 2 and s.text in pr.message]  # a name's slot in a pod name
        m = _NOT_NUMBER.match(pr.message)
        if not mine and m and _SLOT_WORD.match(m.group(1)):
            mine = [Slot(path, m.group(1), "number")]
        if mine:
            hit = True
            problems.append(Problem(f"{mine[0].describe(path)}: {pr.message.replace(INHERITED, '')}", pr.location, pr.rule,
                                    hint(mine + [s for s in slots if s not in mine])))
        else:
            problems.append(pr)
    if not hit and slots:
        first = problems[0]
        problems[0] = Problem(first.message, first.location, first.rule,
                              (first.hint + "; " if first.hint else "") + hint(slots))
    return type(err)(problems)


def note(slots: list[Slot]) -> Note:
    """TPL003: the file converted, but it holds placeholders (printed: the JobSet is no finished job)."""
    where = "; ".join(f"{format_path(s.path, empty='')}: no value but the comment #{s.text}" if s.how == "comment" else
                      f"{s.text!r} at {format_path(s.path, empty='')}" for s in slots[:6]) + ("; and more" if len(slots) > 6 else "")
    return Note("TPL003", "unchanged", f"{WHY} ({where}); the JobSet carries them as written",
                source_path=format_path(slots[0].path, empty=""),
                action="convert the file the program writes, or fill the placeholders in first", warn=True,
                unchecked="a placeholder is text the program replaces; the JobSet holds the same text, so no "
                          "claim about the JobSet tells the template from the finished job")
