"""Where the tests find the real tools they hold kf2jobset to: kustomize and Helm, built from the Go modules
tools/kustomize, tools/helm3 and tools/helm4 by tools/install-ground-truth.sh (cached)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

KUSTOMIZE_VERSION = "v5.7.1"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def kustomize_binary() -> str:
    """Real kustomize: $KF2JOBSET_KUSTOMIZE, else built once from tools/kustomize (Go; cached)."""
    given = os.environ.get("KF2JOBSET_KUSTOMIZE")
    if given:
        return given
    script = REPO / "tools" / "install-ground-truth.sh"
    print(f"\n[kf2jobset tests] building kustomize {KUSTOMIZE_VERSION} from tools/kustomize if not cached "
          "(about 1 min the first time)...", file=sys.__stderr__, flush=True)
    proc = subprocess.run(["bash", str(script), "kustomize"], capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        pytest.fail(f"could not build real kustomize (needs Go and the Go module proxy): {proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1]


def helm_binary(name: str) -> str:
    """Real Helm (``helm3`` or ``helm4``): $KF2JOBSET_HELM3/4, else the cached build; a skip names the
    command that builds it, and under CI=true a missing binary fails."""
    given = os.environ.get(f"KF2JOBSET_{name.upper()}")
    if given:
        return given
    proc = subprocess.run(["bash", str(REPO / "tools" / "install-ground-truth.sh"), "--print-paths", name],
                          capture_output=True, text=True, timeout=60)
    path = proc.stdout.strip().rpartition("=")[2]
    if proc.returncode != 0 or not path or not os.access(path, os.X_OK):
        reason = f"{name} not built: run `bash tools/install-ground-truth.sh {name}` (about 2.5 min cold)"
        if IN_CI:
            pytest.fail(f"ground truth missing in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    return path


def helm_env(tmp_path: Path) -> dict:
    """Helm's homes in tmp; `kf2jobset` on PATH is this checkout's (a wrapper, not an installed one)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "kf2jobset"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m kf2jobset \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "HELM_CACHE_HOME": str(tmp_path / "cache"), "HELM_CONFIG_HOME": str(tmp_path / "config"),
            "HELM_DATA_HOME": str(tmp_path / "data"), "HELM_PLUGINS": str(tmp_path / "plugins")}
