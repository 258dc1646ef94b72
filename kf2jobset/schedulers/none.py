"""No gang scheduler named: schedulingPolicy is left out (emit says what was in it, JS040)."""
from __future__ import annotations

from .base import Scheduler


class NoScheduler(Scheduler):
    name = "none"


SCHEDULER = NoScheduler()
