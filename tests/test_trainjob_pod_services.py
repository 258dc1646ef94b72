"""v1's per-pod Services (JS066) beside a TrainJob on kf2jobset's bundle select the pod of the same v1 rank in
the JobSet Trainer builds: there a role's pods are one Job (every one jobset.sigs.k8s.io/job-index 0), told
apart by the Job controller's completion-index label. (Selecting by job-index, as beside a JobSet, resolved
`<job>-worker-1` to nothing and `<job>-worker-0` to every worker: tests/e2e/test_trainjob_mpi.py ran it.)"""
from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES
from .fixture_cases import fixture_args

COMPLETION = "batch.kubernetes.io/job-completion-index"


def _converted(case: str, *extra: str) -> list[dict]:
    path = FIXTURES / case
    result = CliRunner().invoke(main, ["convert", str(path / "input.yaml"), *fixture_args(path), "--target", "trainjob",
                                       *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


@pytest.mark.parametrize("case, extra, ranks", [
    # MPIJob v1 on kf2jobset-mpi-v1: the workers are the worker Job's pods, v1's worker i its completion index i
    ("mpijob-v1/user-hostfile-configmap", (), {"worker": lambda i: ("worker", i)}),
    # a PyTorchJob on kf2jobset-pytorch: one `node` Job, the master rank 0 and worker i rank i + 1
    ("targets/trainjob/pytorch-bundle", ("--v1-pod-services",),
     {"master": lambda i: ("node", i), "worker": lambda i: ("node", i + 1)}),
])
def test_per_pod_services_select_the_pod_of_the_same_rank_in_trainers_layout(case, extra, ranks):
    out = _converted(case, *extra)
    (trainjob,) = [o for o in out if o["kind"] == "TrainJob"]
    assert trainjob["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime"
    name = trainjob["metadata"]["name"]
    services = [o for o in out if o["kind"] == "Service"]
    assert len(services) >= 2
    for svc in services:
        m = re.fullmatch(rf"{re.escape(name)}-(\w+)-(\d+)", svc["metadata"]["name"])
        rjob, index = ranks[m.group(1)](int(m.group(2)))
        assert svc["spec"]["selector"] == {"jobset.sigs.k8s.io/jobset-name": name,
                                           "jobset.sigs.k8s.io/replicatedjob-name": rjob,
                                           "jobset.sigs.k8s.io/job-index": "0", COMPLETION: str(index)}


def test_the_report_says_how_the_services_select():
    result = CliRunner().invoke(main, ["report", "--format", "json", "--fail-on", "never", "--target", "trainjob", "--accept-mpi-ssh",
                                       str(FIXTURES / "mpijob-v1" / "user-hostfile-configmap" / "input.yaml")])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "worker completion index 1" in text and COMPLETION in text and "job-index 1" not in text
