"""One note per start order, and retry limits in words that say what they are.

mpi-operator's launcherCreationPolicy decides what the JobSet's dependsOn is: with AtStartup (the default)
the launcher was made with the workers, so waiting for them is a change (MPI006, approximated); with
WaitForWorkersReady it is v1's own order (JS010, rewritten). Never both: one dependsOn, one finding. A
retry limit that is not there reads "unlimited" (it once read "none", which says the opposite), and a
worker pod mpi-operator never replaced (restartPolicy Never) is not retried in either world.
"""
from __future__ import annotations

import copy

import pytest
import yaml

from kf2jobset.mappings import _from_data

from .conftest import FIXTURES
from .report_helpers import report_for


def _openmpi(policy: str | None, worker_restart: str | None = None) -> str:
    doc = yaml.safe_load((FIXTURES / "mpijob-v2beta1/openmpi/input.yaml").read_text())
    doc = copy.deepcopy(doc)
    if policy is not None:
        doc["spec"]["launcherCreationPolicy"] = policy
    if worker_restart is not None:
        doc["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = worker_restart
    return yaml.safe_dump(doc)


def _findings(text: str):
    report = report_for(text, accept_mpi_ssh=True)
    (job,) = report.jobs
    return job.findings


@pytest.mark.parametrize("policy, code, category", [
    (None, "MPI006", "approximated"),  # AtStartup by default
    ("AtStartup", "MPI006", "approximated"),
    ("WaitForWorkersReady", "JS010", "rewritten"),
])
def test_the_launchers_wait_is_one_finding_and_says_whether_v1_waited(policy, code, category):
    start = [f for f in _findings(_openmpi(policy)) if f.code in ("JS010", "MPI006")]
    assert [(f.code, f.category) for f in start] == [(code, category)]


def test_retry_limits_read_unlimited_or_a_number():
    never = [e for f in _findings(_openmpi(None, "Never")) for e in f.evidence if e.aspect == "backoffLimit"]
    assert not [e for e in never if e.subject == "Worker"], never  # not replaced in v1, backoffLimit 0 here: alike
    # A v1 PyTorchJob with OnFailure pods and no backoffLimit restarted them without limit; the JobSet's Jobs
    # retry a counted number of times.
    text = (FIXTURES / "pytorchjob/v1beta2-deadline/input.yaml").read_text()
    limits = {(e.subject, e.operator, e.jobset) for f in _findings(text) for e in f.evidence if e.aspect == "backoffLimit"}
    assert limits and {op for _, op, _ in limits} == {"unlimited"}, limits
    assert all(js.endswith("per Job") for _, _, js in limits), limits


def test_a_misspelt_start_order_condition_is_refused_when_the_mapping_loads():
    base = {"kind": "X", "apiVersions": ["kubeflow.org/v1"], "replicaSpecsField": "xReplicaSpecs", "profile": "x",
            "operatorName": "x", "defaultRestartPolicy": "Never", "envContainers": "all",
            "replicaTypes": [{"type": "Worker"}, {"type": "Launcher"}],
            "success": [{"operator": "All", "targets": ["Launcher"], "exact": True}]}
    rule = {"type": "Launcher", "after": "Worker", "status": "Ready"}
    assert _from_data({**base, "startOrder": [rule]}, "x.yaml").start_order[0].noted_by_profile is None
    assert _from_data({**base, "startOrder": [{**rule, "notedByProfile": True}]}, "x.yaml").start_order[0].noted_by_profile == {}
    with pytest.raises(ValueError, match="notedByProfile condition framwork is not one of"):
        _from_data({**base, "startOrder": [{**rule, "notedByProfile": {"framwork": {"a": 1}}}]}, "x.yaml")
