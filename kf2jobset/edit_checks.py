"""Converted objects an edit left stale, by the three checks that read them: sizes (`resized`, staleness.py), the
replicatedJobs' layout (`reshaped`, layout_guard.py), the name or namespace (`renamed`, name_binding.py).
`convert --check` lists them, every other mode warns; the stream is parsed once for the three.

Light to import (the hook reads every staged file): the checks and the YAML reader load only for a file that
may hold such an object.
"""
from __future__ import annotations

from . import staleness


def may_hold_edit(text: str) -> bool:
    """A file that may hold a converted object an edit left stale (any of the three checks)."""
    from .name_binding import may_hold_record as may_hold_names

    return staleness.may_hold_record(text) or may_hold_names(text)


def edited_objects(text: str) -> list:
    """Every converted object of the stream an edit left stale, each with its `category` and `listing(path)`: sizes
    (resized), the replicatedJobs' layout (reshaped, layout_guard.py), the name or namespace (renamed,
    name_binding.py). The stream is parsed once for the three; a rename the size check names is not said again."""
    if not may_hold_edit(text):
        return []
    from . import layout_guard, name_binding
    from .yamlio import parse_documents

    selects = (staleness.select, layout_guard.select, name_binding.select)
    parsed = parse_documents(text, select=lambda t: any(s(t) for s in selects), without_comments=True)
    resized = staleness.resized_jobsets(text, parsed) if staleness.may_hold_record(text) else []
    renames = frozenset(r.label for r in resized if r.renamed)
    reshaped = layout_guard.reshaped_jobsets(text, renames, parsed) if layout_guard.may_hold_layout(text) else []
    renamed = name_binding.renamed_jobsets(text, parsed) if name_binding.may_hold_record(text) else []
    return [*resized, *reshaped, *renamed]
