"""Template placeholders standing for numbers the conversion only copies or leaves out: a gang scheduler's
`schedulingPolicy.minAvailable` / `scheduleTimeoutSeconds` (left out with no --scheduler, JS040) and a
container's resource quantities (copied; the API server checks them once the values are filled in).

The schema types these as numbers, so the text stand-ins of kf2jobset/sources/envsubst.py cannot stand there. They
get number stand-ins instead, different in each of its two conversions; the placeholder is carried only
when both conversions agree once the stand-ins are put back (the conversion did not read the number).

Quantity stand-ins are all one amount within a conversion, each spelled its own way (`10e-1`, `100e-2`, ...):
a rule that compares two of them (a request within its limit, an extended resource's request equal to
it) holds for any values the template gets, and is left to the API server, which sees the real ones.

Pure: dicts and text in and out.
"""
from __future__ import annotations

import dataclasses
import re

INT = "int"
QUANTITY = "quantity"

_INT_FIELDS = {("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
               ("spec", "runPolicy", "schedulingPolicy", "scheduleTimeoutSeconds")}
_CONTAINER_LISTS = ("containers", "initContainers")


def kind(p) -> str | None:
    """INT, QUANTITY, or None: a whole-scalar placeholder (`minAvailable: ${N}`) in one of those fields."""
    if p.in_key or p.in_command or len(p.spellings) != 1 or str(p.text).strip() != p.spellings[0]:
        return None
    path = tuple(p.path)
    if path in _INT_FIELDS:
        return INT
    if (len(path) >= 6 and path[0] == "spec" and path[-3] == "resources" and path[-2] in ("requests", "limits")
            and isinstance(path[-4], int) and path[-5] in _CONTAINER_LISTS):
        return QUANTITY
    return None


def stand_ins(numbers: list, run: int, taken: str) -> dict[str, object]:
    """spelling -> its number in conversion `run` (0 or 1): ints that appear nowhere in the document,
    quantities of one amount spelled apart."""
    out: dict[str, object] = {}
    ints = [p.spellings[0] for p in numbers if kind(p) == INT]
    quantities = [p.spellings[0] for p in numbers if kind(p) == QUANTITY]
    n = 90001 + 2000 * run
    for s in dict.fromkeys(ints):
        while str(n) in taken or n in out.values():
            n += 7
        out[s] = n
    amount, digits = run + 1, 1
    for s in dict.fromkeys(quantities):
        if s in out:
            continue
        while f"{amount * 10 ** digits}e-{digits}" in taken:
            digits += 1
        out[s] = f"{amount * 10 ** digits}e-{digits}"
        digits += 1
    return out


def put_in(doc, numbers: list, table: dict) -> None:
    """The stand-ins written at their placeholders' paths (in place)."""
    for p in numbers:
        node = doc
        for key in p.path[:-1]:
            node = node[key]
        node[p.path[-1]] = table[p.spellings[0]]


def put_back(objects, table: dict):
    """The placeholders back where their stand-ins are (whole values only), in place; returns objects."""
    back = {v: s for s, v in table.items()}

    def swap(v):
        if isinstance(v, (int, str)) and not isinstance(v, bool) and v in back:
            return back[v]
        return None

    def walk(n):
        if isinstance(n, dict):
            for k, v in n.items():
                new = swap(v)
                if new is not None:
                    n[k] = new
                else:
                    walk(v)
        elif isinstance(n, list):
            for i, v in enumerate(n):
                new = swap(v)
                if new is not None:
                    n[i] = new
                else:
                    walk(v)

    if back:
        walk(objects)
    return objects


def words_back(text: str, table: dict) -> str:
    """A message with the stand-ins put back as the placeholders."""
    if not table or not text:
        return text
    back = {str(v): s for s, v in table.items()}
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(t) for t in sorted(back, key=len, reverse=True)) + r")(?![\w.])")
    return pattern.sub(lambda m: back[m.group(1)], text)


def notes_back(notes: list, table: dict) -> None:
    for i, note in enumerate(notes):
        message = words_back(note.message, table)
        action = words_back(note.action, table) if note.action else note.action
        if message != note.message or action != note.action:
            notes[i] = dataclasses.replace(note, message=message, action=action)
