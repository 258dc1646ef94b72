"""The gang schedulers `--scheduler` names, one module each (base.Scheduler); the registry is
choices.SCHEDULER_FLAVOURS, and a scheduler's module is named after it (`scheduler-plugins`: scheduler_plugins)."""
from __future__ import annotations

import importlib

from ..choices import SCHEDULERS
from .base import Scheduler


def scheduler(name: str) -> Scheduler:
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}").SCHEDULER


def every() -> list[Scheduler]:
    return [scheduler(name) for name in SCHEDULERS]


def by_flavour(flavour: str) -> Scheduler | None:
    return next((s for s in every() if s.flavour == flavour), None)


def by_pod_scheduler_name(name: str) -> Scheduler | None:
    """The scheduler whose flavour serves pods with this schedulerName (its documented names)."""
    return next((s for s in every() if name in s.pod_scheduler_names), None)
