"""Where the stacks' binaries come from (tools/install-ground-truth.sh builds them from the Go modules in tools/,
cached) and where an upstream module the stacks read (CRDs, webhook configurations) is in the Go module cache
(tests/upstream.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .. import upstream
from ..apiserver_harness import REPO_ROOT
from ..tool_errors import ToolUnavailable

TOOLS = REPO_ROOT / "tools"
INSTALL_SCRIPT = TOOLS / "install-ground-truth.sh"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "training-operator", "jobset-controller")


def _script(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(INSTALL_SCRIPT), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def locate_binaries(build: bool = True, components: Iterable[str] = COMPONENTS) -> dict[str, str]:
    """Paths of the binaries (default: the five of the v1 stack; :data:`MPI_COMPONENTS` for the
    mpi-operator stack); builds the missing ones (Go needed) unless ``build`` is False."""
    components = tuple(components)
    if not shutil.which("bash"):
        raise ToolUnavailable("bash not found (tools/install-ground-truth.sh needs it)")
    proc = _script("--print-paths", timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{INSTALL_SCRIPT.name} --print-paths failed:\n{proc.stderr[-3000:]}")
    paths = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    missing = [n for n in components if not os.access(paths.get(n, ""), os.X_OK)]
    if not missing:
        return paths
    if not build:
        raise ToolUnavailable(f"not built: {', '.join(missing)} (run tools/install-ground-truth.sh)")
    if shutil.which("go") is None:
        raise ToolUnavailable(
            f"Go toolchain not found: `go` (>= 1.26) is not on PATH, so {', '.join(missing)} cannot be "
            f"built from the project-owned modules under tools/ (see tools/README-ground-truth.md)"
        )
    proc = _script(*missing, timeout=60 * 60)  # cold: a few minutes per component on 2 cores
    if proc.returncode != 0:
        raise RuntimeError(
            f"tools/install-ground-truth.sh {' '.join(missing)} failed (exit {proc.returncode}):\n"
            + proc.stderr[-4000:]
        )
    return locate_binaries(build=False, components=components)


def module_dir(name: str) -> Path:
    """The directory of upstream module `name` (tools/upstream-modules.txt) in the Go module cache, or
    ToolUnavailable naming the command that downloads it (tests/upstream.py)."""
    reason = upstream.absent(name)
    if reason:
        raise ToolUnavailable(reason)
    return upstream.module_dir(name)
