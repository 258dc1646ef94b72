"""Running `kubectl kf2jobset` in-process against the test API server, and the real CRDs it needs."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kf2jobset.live.plugin import plugin

from .conftest import SHARED_DIR


REF = SHARED_DIR / "reference"
CORPUS = SHARED_DIR / "corpus"
JOBSET_CRD = REF / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
TRAINING_OPERATOR_CRDS = REF / "kubeflow-crds" / "training-operator"
GROUP = "kubeflow.org"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def need_shared() -> None:
    """Skip, saying why, without the JobSet and Training Operator CRDs and the corpus of ../shared."""
    if not (JOBSET_CRD.is_file() and TRAINING_OPERATOR_CRDS.is_dir() and CORPUS.is_dir()):
        pytest.skip(f"shared reference files / corpus not found under {SHARED_DIR} (needs <repo>/../shared)")


class Result:
    """A plugin run: exit code and both streams."""

    def __init__(self, code: int, stdout: str, stderr: str):
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"


def kf(kubeconfig: str | None, *args: str, env: dict | None = None, via_main: bool = False) -> Result:
    """The plugin in-process (`kubectl kf2jobset ...`; via_main: `kf2jobset live ...`)."""
    argv = list(args) + (["--kubeconfig", kubeconfig] if kubeconfig else [])
    if via_main:
        from kf2jobset.cli import main

        res = CliRunner().invoke(main, ["live", *argv], env=env, catch_exceptions=False)
    else:
        res = CliRunner().invoke(plugin, argv, env=env, catch_exceptions=False, prog_name="kubectl kf2jobset")
    return Result(res.exit_code, res.stdout, res.stderr)
