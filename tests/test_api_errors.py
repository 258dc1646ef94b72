"""Errors and notes reach Python callers in Python's words: the keyword that makes a decision where the CLI
names its flag, each problem's path, rule and hint as fields; the same texts, one table of flags
(options.FLAGS), so a message never has two wordings to keep in step."""
from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

import kf2jobset
from kf2jobset.cli.main import main
from kf2jobset.options import FLAGS, keyword_spelling

from .conftest import REPO

MPI_V1 = REPO / "fixtures" / "mpijob-v1" / "accepted" / "input.yaml"


def _job(path) -> dict:
    return yaml.safe_load(path.read_text())


def _cli_error(*args: str) -> str:
    return CliRunner().invoke(main, ["convert", *args]).stderr


def test_a_decision_is_named_by_its_keyword():
    with pytest.raises(kf2jobset.UnsupportedError) as err:
        kf2jobset.convert_job(_job(MPI_V1))
    (problem,) = err.value.problems
    assert problem.rule == "mpi-exec-to-ssh" and problem.path == ("apiVersion",)
    assert problem.hint == "re-run with accept_mpi_ssh=True to accept this breaking change"
    assert "--accept-mpi-ssh" in _cli_error(str(MPI_V1))  # the CLI keeps its flag
    assert kf2jobset.convert_job(_job(MPI_V1), accept_mpi_ssh=True).primary["kind"] == "JobSet"


def test_option_values_are_named_as_keywords():
    with pytest.raises(kf2jobset.UsageError) as err:
        kf2jobset.convert_job(_job(MPI_V1), target="TrainJob")
    assert str(err.value).startswith("target='TrainJob': choose one of jobset, trainjob")
    with pytest.raises(kf2jobset.UsageError, match=r"jobset_version='0\.5': JobSet releases before v0\.6"):
        kf2jobset.convert_yaml(MPI_V1.read_text(), jobset_version="0.5")


def test_a_refusal_of_the_trainjob_target_names_trainer_runtime():
    job = _job(REPO / "fixtures" / "tfjob" / "chief-ps-workers" / "input.yaml")
    with pytest.raises(kf2jobset.UnsupportedError) as err:
        kf2jobset.convert_job(job, target="trainjob")
    hint = err.value.problems[0].hint
    assert "trainer_runtime='per-job'" in hint and "target='jobset'" in hint and "--" not in hint


def test_notes_name_keywords_too():
    job = _job(REPO / "fixtures" / "pytorchjob" / "master-workers" / "input.yaml")
    notes = {n.code: n for n in kf2jobset.convert_job(job).notes}
    assert notes["JS051"].action == "use keep_kubeflow_labels=True to keep the static ones"
    assert all("--" not in (n.action or "") for n in notes.values())


def test_the_spelling_reads_values_only_where_they_are_values():
    assert keyword_spelling("pass --ssh-secret NAME, or create <job>-ssh") == "pass ssh_secret='NAME', or create <job>-ssh"
    assert keyword_spelling("use --mpi-hostfile generated / --scheduler kueue") == \
        "use mpi_hostfile='generated' / scheduler='kueue'"
    assert keyword_spelling("rename the job, or --name for a single job") == "rename the job, or name=... for a single job"
    # a quoted command and the operator's own flag keep their spelling
    command = "install it: kf2jobset runtimes --gang coscheduling --gang-scheduler-name sp | kubectl apply -f -"
    assert keyword_spelling(command) == command
    assert keyword_spelling("the operator's --gang-scheduler-name value with --gang-scheduler-name") == \
        "the operator's --gang-scheduler-name value with gang_scheduler_name=..."
    own = {"--context": "context=...", "--dry-run=none": "dry_run=False"}
    assert keyword_spelling("use --context, or --name; checked with --dry-run=none", own) == \
        "use context=..., or name=...; checked with dry_run=False"


def test_every_flag_has_its_keyword():
    assert set(FLAGS) == {f for f in FLAGS if keyword_spelling(FLAGS[f]).startswith(f + "=")}


def test_an_error_keeps_its_type_fields_and_location():
    text = MPI_V1.read_text()
    with pytest.raises(kf2jobset.UnsupportedError) as err:
        kf2jobset.convert_yaml(text, path="jobs/mpi.yaml")
    (problem,) = err.value.problems
    assert (problem.location.file, problem.location.line, problem.rule) == ("jobs/mpi.yaml", 1, "mpi-exec-to-ssh")
    assert "accept_mpi_ssh=True" in str(err.value) and "--accept" not in str(err.value)
