"""The markdown report's "Before you apply" list, over several jobs: a step for one job names that job and gives its
own command (its Secret's name and namespace, no `<job>` to fill in); a step for some jobs names them."""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset.cli import main

from .conftest import FIXTURES


def test_a_step_for_one_job_names_it_and_gives_its_own_command(tmp_path):
    (tmp_path / "mpi.yaml").write_text((FIXTURES / "mpijob-v1" / "user-hostfile-configmap" / "input.yaml").read_text())
    (tmp_path / "ddp.yaml").write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    out = CliRunner().invoke(main, ["report", str(tmp_path), "--accept-mpi-ssh", "--format", "markdown"])
    assert out.exit_code in (0, 1), out.output
    steps = out.stdout.split("### Before you apply", 1)[1].split("###", 1)[0]
    (secret,) = [ln for ln in steps.splitlines() if "create secret generic" in ln]
    assert secret.startswith("- `MPI001` (ring-allreduce): "), secret
    assert "kubectl -n hpc create secret generic ring-allreduce-ssh " in secret and "&lt;job&gt;" not in secret, secret
