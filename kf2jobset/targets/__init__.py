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
