"""What a reviewer of a migration PR reads in the report: the markdown "Before you apply" list over several jobs
(a step for one job names that job and gives its own command: its Secret's name and namespace, no `<job>` to fill
in; a step for some jobs names them), every finding of a code's shared variant, and what a converted tree says."""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset.cli.main import main

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


def test_the_summary_of_a_code_says_every_finding_of_the_shared_variant(tmp_path):
    """A job with several findings of one code (JS020 for Master and Worker; JS065 for four args): the by-code row
    (markdown) and entry (text) of a multi-job report say each of them, not only the first."""
    (tmp_path / "tf.yaml").write_text((FIXTURES / "tfjob" / "ps-hosts-args" / "input.yaml").read_text())
    (tmp_path / "pt.yaml").write_text((FIXTURES / "pytorchjob" / "sidecar" / "input.yaml").read_text())
    for fmt in ("markdown", "text"):
        out = CliRunner().invoke(main, ["report", str(tmp_path), "--format", fmt]).stdout
        flat = " ".join(out.split())
        assert "Master: restartPolicy Always" in flat and "Worker: restartPolicy Always" in flat, (fmt, out)
        for where in ("of the PS pods, args[1]", "of the PS pods, args[2]", "of the Worker pods, args[1]",
                      "of the Worker pods, args[2]"):
            assert where in flat, (fmt, where)


def test_a_report_of_a_converted_tree_says_what_it_compares(tmp_path):
    """On a branch whose jobs are converted, "no changes" would read as "nothing changed": the report says that
    it compares v1 jobs and how to run it on the revision before."""
    (tmp_path / "job.yaml").write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    assert CliRunner().invoke(main, ["convert", str(tmp_path), "--in-place"]).exit_code == 0
    out = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert out.exit_code == 0 and "1 file holds objects kf2jobset converted" in out.stderr, out.stderr
    assert "git show REV:FILE | kf2jobset report -" in out.stderr
