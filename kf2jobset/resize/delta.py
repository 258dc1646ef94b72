"""What changes between two conversions of one job, and where that is in an object the user has edited since.

Paths name list items that have a `name` by it (`Named("worker")`), so that an env variable, a container or a
replicatedJob is found however the user's edits moved it in its list; other list items by index. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass

MISSING = object()  # no value at a path: one side of a change lacks the key or item


@dataclass(frozen=True)
class Named:
    name: str

    def __str__(self) -> str:
        return f"[{self.name}]"


@dataclass(frozen=True)
class Change:
    path: tuple  # of keys, Named items and indexes
    old: object  # the value the conversion at the old size wrote (MISSING: none)
    new: object  # the value the conversion at the new size writes (MISSING: none)


def _named(items: list) -> dict | None:
    """name -> item of a list whose items are all dicts with distinct string names; None otherwise."""
    if not items or not all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items):
        return None
    names = [i["name"] for i in items]
    return dict(zip(names, items, strict=True)) if len(set(names)) == len(names) else None


def changes(old, new, path: tuple = ()) -> list[Change]:
    """Every value that differs between `old` and `new`, as deep as both sides have the same shape."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in [*old, *(k for k in new if k not in old)]:
            out += changes(old.get(key, MISSING), new.get(key, MISSING), (*path, key))
        return out
    if isinstance(old, list) and isinstance(new, list):
        a, b = _named(old), _named(new)
        if a is not None and b is not None:
            out = []
            for name in [*a, *(n for n in b if n not in a)]:
                out += changes(a.get(name, MISSING), b.get(name, MISSING), (*path, Named(name)))
            return out
        if len(old) == len(new):
            out = []
            for i, (x, y) in enumerate(zip(old, new, strict=True)):
                out += changes(x, y, (*path, i))
            return out
    if _same(old, new):
        return []
    return [Change(path, old, new)]


def _same(a, b) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                              and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def locate(obj, path: tuple) -> tuple | None:
    """The plain path (keys and indexes) of `path` in `obj`, or None where something on it is absent."""
    out = []
    node = obj
    for part in path:
        if isinstance(part, Named):
            if not isinstance(node, list):
                return None
            index = next((i for i, item in enumerate(node) if isinstance(item, dict) and item.get("name") == part.name), None)
            if index is None:
                return None
            out.append(index)
            node = node[index]
        elif isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return None
            out.append(part)
            node = node[part]
        else:
            if not isinstance(node, dict) or part not in node:
                return None
            out.append(part)
            node = node[part]
    return tuple(out)


def value_at(obj, plain: tuple):
    for part in plain:
        obj = obj[part]
    return obj


def equal(found, written) -> bool:
    """Whether a value found on the object is the one kf2jobset wrote (a number and its string are not one)."""
    return _same(found, written)


def spell(path: tuple) -> str:
    """A path for a message: `spec.replicatedJobs[worker].template...env[TF_CONFIG].value`."""
    out = ""
    for part in path:
        if isinstance(part, (Named, int)):
            out += f"[{part.name if isinstance(part, Named) else part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
