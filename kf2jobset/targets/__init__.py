"""Output targets: what a converted job is written as.

The core always builds the JobSet that carries the v1 pod contract (emit.py) and validates it; a
target then decides which objects the user gets. One module per target, each with

    finish(conversion, options) -> None

which sets `conversion.output` (the objects written, in apply order) and adds its notes. Front ends
call `finish` through `apply_target` and never branch on the target themselves.
"""
from __future__ import annotations

from importlib import import_module


def apply_target(conversion, options):
    """The conversion with the objects of `options.target` (jobset, trainjob)."""
    import_module(f"{__name__}.{options.target}").finish(conversion, options)
    return conversion


def comment_relocation(conversion, options):
    """Where a JobSet path of the plan's JobSet went among the target's objects, for repo mode's comment
    placement: a function path -> (output index, path) | None, or None when the JobSet is written as is."""
    if options.target == "jobset" or conversion.output is None:
        return None
    return import_module(f"{__name__}.{options.target}").relocate_path(conversion)
