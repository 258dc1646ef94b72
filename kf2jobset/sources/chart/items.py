"""What a merged template is made of: lines, and the places where Helm's choices pick lines."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Switch:
    """A region's alternatives: its own control actions around the lines of each."""

    region: tuple  # the region's key
    alts: dict = field(default_factory=dict)  # alternative -> items (lines, Switches, Repeats, Guards, Fails)


@dataclass
class Repeat:
    """A range's first alternative: `head` once when there are items, `body` once per item, `foot` once."""

    region: tuple
    head: list
    body: list
    foot: list
    other: list  # the range's else (or nothing) when it has no items


@dataclass
class Guard:
    """A key whose children are all chosen (`volumeMounts:` over ifs and ranges): written as `on` when one of
    them writes lines, as `off` (nothing, or `resources: {}`) when none does."""

    on: list
    off: list
    children: list  # the items below the key
    # (region key, alternative that writes lines) of each child Switch/Repeat, a Guard, or ("and", (region key, 0),
    # [conditions]) for a branch that writes lines only where its inner branches do
    conditions: list


@dataclass
class Fail:
    message: str


def predict(items: list, choice: dict) -> list | None:
    """The lines the merged template writes for a choice (None: it fails)."""
    out: list = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
            continue
        if isinstance(item, Fail):
            return None
        if isinstance(item, Guard):
            inner = predict(item.children, choice)
            if inner is None:
                return None
            out += (item.on if inner else item.off) + inner
            continue
        alt = choice.get(item.region, 0)
        if isinstance(item, Repeat):
            inner = item.head + item.body + item.foot if alt == 0 else item.other
        else:
            inner = item.alts.get(alt, [])
        lines = predict(inner, choice)
        if lines is None:
            return None
        out += lines
    return out
