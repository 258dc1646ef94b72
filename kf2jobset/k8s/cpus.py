"""How many CPUs this process may use: what --jobs 0 means in repo mode and in the plugin's scan."""
from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs in this process's affinity mask (a container or taskset may allow fewer than the
    machine has); os.cpu_count() where there is no such mask."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
