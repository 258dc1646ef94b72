"""One env entry per name, with the values v1 pods really ran with.

The operator appended its variables after the user's on a Pod, where a name may repeat: the kubelet
folds the list into a map, so the later entry wins, while a `$(NAME)` written between the two saw
the earlier one. A JobSet's pod template may not repeat a name (`env` is a list-map keyed on
`name`). So for every name that repeats, only the last entry keeps the name; an earlier one is
dropped when nothing reads it before it is overridden, and otherwise renamed
(`KF2JOBSET_SHADOWED_<NAME>`) with those `$(NAME)` references pointing at the new name, so every
variable resolves to exactly the value it had under v1. Pure: lists of dicts in, out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SHADOW_PREFIX = "KF2JOBSET_SHADOWED_"
_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


@dataclass(frozen=True)
class Override:
    """An env entry that a later entry with the same name replaced (so it was never in effect)."""

    name: str
    shadowed: dict
    winner: dict
    renamed_to: str | None  # set when entries in between read the shadowed value
    readers: tuple[str, ...]  # names of the entries whose `$(name)` was pointed at renamed_to


def references(value: str, name: str) -> bool:
    return any(m.group(1) == name for m in _REF.finditer(value))


def retarget(value: str, name: str, new: str) -> str:
    return _REF.sub(lambda m: f"$({new})" if m.group(1) == name else m.group(0), value)


def merge_env(entries: list[dict]) -> tuple[list[dict], list[Override]]:
    """`entries` with each repeated name collapsed as described above, and what was overridden."""
    if len({e.get("name") for e in entries}) == len(entries):
        return entries, []
    out = [dict(e) for e in entries]
    overrides: list[Override] = []
    taken = {e.get("name") for e in entries}
    for i in range(len(out)):
        entry = out[i]
        if entry is None:
            continue
        name = entry.get("name")
        later = next((j for j in range(i + 1, len(out)) if out[j] is not None and out[j].get("name") == name), None)
        if later is None:
            continue
        # the overriding entry itself may read the old value too (A=$(A)-suffix)
        readers = [j for j in range(i + 1, later + 1)
                   if out[j] is not None and "value" in out[j] and references(str(out[j]["value"]), name)]
        winner = _final(out, later, name)
        if not readers:
            out[i] = None
            overrides.append(Override(name, entry, winner, None, ()))
            continue
        new = fresh_name(SHADOW_PREFIX + str(name), taken)
        taken.add(new)
        out[i] = {**entry, "name": new}
        for j in readers:
            out[j] = {**out[j], "value": retarget(str(out[j]["value"]), name, new)}
        overrides.append(Override(name, entry, winner, new, tuple(out[j].get("name") for j in readers)))
    return [e for e in out if e is not None], overrides


def _final(entries: list, start: int, name) -> dict:
    last = start
    for j in range(start + 1, len(entries)):
        if entries[j] is not None and entries[j].get("name") == name:
            last = j
    return entries[last]


def fresh_name(base: str, taken: set) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def describe(entry: dict) -> str:
    """An entry's value for messages; references to Secrets are named, never read."""
    if "valueFrom" in entry:
        src = entry.get("valueFrom") or {}
        for kind in ("fieldRef", "secretKeyRef", "configMapKeyRef", "resourceFieldRef"):
            if kind in src:
                ref = src[kind] or {}
                what = ref.get("fieldPath") or ref.get("resource") or f"{ref.get('name')}/{ref.get('key')}"
                return f"{kind} {what}"
        return "valueFrom"
    return repr(str(entry.get("value", "")))
