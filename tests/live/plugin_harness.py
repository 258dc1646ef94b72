"""Running `kubectl kf2jobset` in-process against the test API server, and the real CRDs it needs."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kf2jobset.live.plugin import plugin

GROUP = "kubeflow.org"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


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
        from kf2jobset.cli.main import main

        res = CliRunner().invoke(main, ["live", *argv], env=env, catch_exceptions=False)
    else:
        res = CliRunner().invoke(plugin, argv, env=env, catch_exceptions=False, prog_name="kubectl kf2jobset")
    return Result(res.exit_code, res.stdout, res.stderr)
