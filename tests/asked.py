"""The slow suites that run with the ground truth (tests/e2e, tests/launchers) run only when asked: their
directory (or a file in it) named on the command line, their marker selected, or KF2JOBSET_E2E=1."""
from __future__ import annotations

import os
import re
from pathlib import Path


def requested(config, directory: Path, marker: str) -> bool:
    if os.environ.get("KF2JOBSET_E2E") == "1":
        return True
    markexpr = config.option.markexpr or ""
    if re.search(rf"\b{marker}\b", markexpr) and f"not {marker}" not in markexpr:
        return True
    for arg in config.args:
        p = Path(arg.split("::", 1)[0]).resolve()
        if p == directory or directory in p.parents:
            return True
    return False
