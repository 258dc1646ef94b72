"""A copy of the package to extend in a test (a toy kind, a toy scheduler), and its real CLI run on it."""
from __future__ import annotations

import shutil
import subprocess
import sys

from .conftest import REPO


def copy_package(tmp_path):
    root = tmp_path / "checkout"
    for part in ("kf2jobset", "mappings", "schemas"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run_cli(root, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kf2jobset", *args], cwd=root, input=stdin, capture_output=True,
                          text=True, timeout=120)
