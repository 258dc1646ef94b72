"""options.command_line: the flags a hint repeats (`--check`'s "run kf2jobset convert --in-place ..."), read back
by the CLI's own option parser, give the same options — else following the hint writes another output."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from kf2jobset.choices import MPI_HOSTFILE_MODES, SCHEDULERS, TARGETS, TRAINER_RUNTIMES
from kf2jobset.cli.shared_options import options_from_args
from kf2jobset.options import FLAGS, ConvertOptions, command_line

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)


@st.composite
def options(draw) -> ConvertOptions:
    scheduler = draw(st.sampled_from(SCHEDULERS))
    gang_name = ConvertOptions.gang_scheduler_name  # the flag goes with --scheduler scheduler-plugins only
    if scheduler == "scheduler-plugins":
        gang_name = draw(NAMES.filter(lambda n: n != "volcano"))
    return ConvertOptions(
        jobset_version=(0, draw(st.integers(6, 12))), scheduler=scheduler, gang_scheduler_name=gang_name,
        name=draw(st.none() | NAMES), subdomain=draw(st.none() | NAMES), keep_kubeflow_labels=draw(st.booleans()),
        ssh_secret=draw(st.none() | NAMES), accept_mpi_ssh=draw(st.booleans()),
        mpi_hostfile=draw(st.sampled_from(MPI_HOSTFILE_MODES)), cluster_domain=draw(st.none() | NAMES),
        v1_pod_services=draw(st.booleans()), katib=draw(st.booleans()), target=draw(st.sampled_from(TARGETS)),
        trainer_runtime=draw(st.sampled_from(TRAINER_RUNTIMES)))


@settings(max_examples=150, deadline=None)
@given(options())
def test_the_flags_read_back_give_the_same_options(opts):
    assert options_from_args(command_line(opts)) == opts


def test_every_flag_is_one_the_cli_takes_and_every_cli_option_has_its_flag():
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    help_text = CliRunner().invoke(main, ["convert", "--help"]).output
    for flag in FLAGS.values():
        assert flag in help_text
    user_set = {f.name for f in dataclasses.fields(ConvertOptions)} - {
        "katib_trial_templates", "sibling_configmaps", "selector_peers"}  # filled by the pipeline
    assert user_set == set(FLAGS)


def test_check_names_the_runs_own_target_and_following_it_leaves_nothing(tmp_path):
    """The hint of `--check --target trainjob`, run as printed, writes a TrainJob (not a JobSet), and the
    same check then finds nothing left."""
    import shlex

    from .jobs import pytorchjob_yaml

    (tmp_path / "train.yaml").write_text(pytorchjob_yaml("ddp", workers=1))
    run = [sys.executable, "-m", "kf2jobset"]
    check = subprocess.run([*run, "convert", "train.yaml", "--check", "--target", "trainjob"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert check.returncode == 1, check.stdout + check.stderr
    (line,) = [ln for ln in check.stdout.splitlines() if "to convert" in ln]
    hint = line.split("to convert: run ", 1)[1]
    assert shlex.split(hint) == ["kf2jobset", "convert", "--in-place", "--target", "trainjob"]
    done = subprocess.run([*run, *shlex.split(hint)[1:], "train.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "kind: TrainJob" in (tmp_path / "train.yaml").read_text()
    again = subprocess.run([*run, "convert", "train.yaml", "--check", "--target", "trainjob"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert again.returncode == 0 and "0 left" in again.stderr + again.stdout, again.stdout + again.stderr
