"""Fixtures for the real-launcher tests (marker `launchers`).

- not root: every test here is skipped, with that reason (network namespaces need root);
- root but `ip netns` does not work: every test FAILS (the harness is broken, not optional);
- a launcher missing: the test fails and names tools/install-launchers.sh;
- the upstream modules absent from the Go module cache (tests/upstream.py): only the corpus cases skip;
- they run with the ground truth, when asked: `python -m pytest tests/launchers` (what .ci/run does,
  with tests/e2e) or KF2JOBSET_E2E=1; a plain `python -m pytest` lists them as skipped with that reason
  (they take about two minutes: the README's test command stays under five).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..asked import not_asked, requested
from .harness import netns_available

REPO = Path(__file__).resolve().parents[2]
LAUNCHERS_DIR = Path(__file__).resolve().parent


def pytest_pycollect_makemodule(module_path: Path, parent) -> pytest.Module | None:
    """Not asked for: each test module is one skip with the reason, not imported."""
    if requested(parent.config, LAUNCHERS_DIR, "launchers"):
        return None
    return not_asked(module_path, parent, "real-launcher tests run with the ground truth: python -m pytest "
                                          "tests/launchers (or KF2JOBSET_E2E=1)")


def launchers_root() -> Path:
    out = subprocess.run(["bash", str(REPO / "tools" / "install-launchers.sh"), "--print-root"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def netns():
    if os.geteuid() != 0:
        pytest.skip("not root: the launcher tests need network namespaces (ip netns), which need root")
    missing = [t for t in ("ip", "unshare", "ssh-keygen", "mount") if shutil.which(t) is None]
    if missing or not Path("/usr/sbin/sshd").exists():
        pytest.fail(f"missing {', '.join(missing) or '/usr/sbin/sshd'}: run tools/install-launchers.sh")
    why = netns_available()
    if why is not None:
        pytest.fail(f"running as root but network namespaces cannot be made ({why}); the launcher tests cannot run")
    return True


@pytest.fixture(scope="session")
def root() -> Path:
    return launchers_root()


def need(path: Path | str) -> str:
    if not Path(path).exists():
        pytest.fail(f"{path} is missing: run tools/install-launchers.sh")
    return str(path)
