"""The slow suites that run with the ground truth (tests/e2e, tests/launchers) run only when asked: their
directory (or a file in it) named on the command line, their marker selected, or KF2JOBSET_E2E=1."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest


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


class NotAsked(pytest.Module):
    """A test module of a suite not asked for: one skipped item with the reason, the module never imported
    (the e2e modules build their case lists at import, converting every fixture: seconds of a default run
    spent on tests that are skipped anyway)."""

    reason = ""

    def collect(self):
        item = NotAskedItem.from_parent(self, name="not-asked")
        item.add_marker(pytest.mark.skip(reason=self.reason))
        return [item]


class NotAskedItem(pytest.Item):
    def runtest(self) -> None:  # never called: its skip marker holds it
        raise AssertionError("a test of a suite not asked for ran")

    def reportinfo(self):
        return self.path, 0, self.name


def not_asked(module_path: Path, parent, reason: str) -> NotAsked | None:
    """For pytest_pycollect_makemodule: the stand-in of a test module (test_*.py) of a suite not asked for."""
    if not module_path.name.startswith("test_"):
        return None
    module = NotAsked.from_parent(parent, path=module_path)
    module.reason = reason
    return module
