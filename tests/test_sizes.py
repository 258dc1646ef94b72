"""Size as a parameter: a converted JobSet edited like a v1 job.

For generated jobs of every kind, the replica count of one type is changed to another size, smaller
and larger, in the v1 job and, separately, in the JobSet kf2jobset wrote for the ORIGINAL job (the
JobSet is edited, never re-converted). The JobSet world of the edited JobSet must give every pod the
env the operator gave the pods of the edited v1 job, except for the values the conversion declared
literal (SZ002, recorded on the JobSet for `--check`); a JobSet without such literals must match
exactly. A mutation (the label read changed to the job-index) shows the comparison can fail.
"""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kf2jobset.core.convert import convert_job
from kf2jobset.errors import InvalidJobError
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.compare import compare_env
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION, parse_sized_for, sized_for

from .jobs import pytorchjob
from .strategies import ANY_JOB

OPTIONS = ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="generated")
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def resize_target(conv) -> str:
    """The replica type people resize: workers where there are any, else the last type."""
    types = [t for t in conv.job.replicas if conv.job.replicas[t].replicas > 0]
    return "Worker" if "Worker" in types else types[-1]


def resized(conv, doc: dict, rtype: str, new: int):
    """(the v1 job with `rtype` at `new` replicas, converted only to read it; the ORIGINAL JobSet edited
    the same way: the replicatedJob holding the type's last pods gets the difference)."""
    v1 = copy.deepcopy(doc)
    specs = next(k for k in v1["spec"] if k.endswith("ReplicaSpecs"))
    v1["spec"][specs][conv.job.replicas[rtype].source_key]["replicas"] = new
    jobset = copy.deepcopy(conv.jobset)
    name, first, _ = conv.plan.segments[rtype][-1]
    rjob = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name)
    rjob["replicas"] = new - first
    return convert_job(v1, OPTIONS).job, jobset


def differences(conv, job, jobset) -> list:
    op = operator_world(job)
    js = jobset_world(jobset, roles=conv.plan.pod_roles)
    diffs, _ = compare_env(op, js)
    return diffs


def explained_by_names(diff, names: set[str]) -> bool:
    return diff.var in names


@SETTINGS
@given(ANY_JOB, st.integers(min_value=1, max_value=6))
def test_a_replica_edit_is_followed_or_guarded(doc, new):
    conv = convert_job(doc, OPTIONS)
    rtype = resize_target(conv)
    first = conv.plan.segments[rtype][-1][1]
    if new <= first:
        new = first + 1  # the edited replicatedJob keeps at least one pod
    try:
        job, jobset = resized(conv, doc, rtype, new)
    except InvalidJobError:
        assume(False)  # a size v1 refused too (Chief, Master or Launcher above 1)
    codes = {n.code for n in conv.notes}
    ann = conv.jobset["metadata"].get("annotations") or {}
    if "SZ002" not in codes:
        # nothing literal: the edited JobSet is the edited v1 job, pod by pod, value by value
        assert SIZED_FOR_ANNOTATION not in ann
        diffs = [d for d in differences(conv, job, jobset)
                 if not any(("env", d.var) in n.explains for n in conv.notes if n.code != "SZ001")]
        assert diffs == [], (conv.job.kind, rtype, new, diffs)
        return
    # literals: the record is what was written, and the edited JobSet no longer matches it
    assert parse_sized_for(ann[SIZED_FOR_ANNOTATION]) == parse_sized_for(sized_for(conv.jobset))
    assert ann[SIZE_LITERALS_ANNOTATION]
    if new != conv.job.replicas[rtype].replicas:
        assert parse_sized_for(sized_for(jobset)) != parse_sized_for(ann[SIZED_FOR_ANNOTATION])


def test_sizes_follow_for_pytorch_jax_paddle_every_size():
    """Deterministic sweep: sizes 1..8 of the worker type, for the kinds whose whole contract follows."""
    cases = {
        "PyTorchJob": ("pytorchReplicaSpecs", "pytorch", {"Master": 1, "Worker": 3}),
        "JAXJob": ("jaxReplicaSpecs", "jax", {"Worker": 3}),
        "PaddleJob": ("paddleReplicaSpecs", "paddle", {"Worker": 3}),
    }
    for kind, (field, container, counts) in cases.items():
        doc = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "sweep", "namespace": "ml"},
               "spec": {field: {t: {"replicas": n, "template": {"spec": {"containers": [
                   {"name": container, "image": "example.com/x:1"}]}}} for t, n in counts.items()}}}
        conv = convert_job(doc, OPTIONS)
        assert "SZ001" in {n.code for n in conv.notes} and "SZ002" not in {n.code for n in conv.notes}, kind
        first = conv.plan.segments["Worker"][-1][1]
        for new in range(first + 1, 9):
            job, jobset = resized(conv, doc, "Worker", new)
            diffs = [d for d in differences(conv, job, jobset)
                     if not any(("env", d.var) in n.explains for n in conv.notes if n.code != "SZ001")]
            assert diffs == [], (kind, new, diffs)


def test_mutation_a_literal_size_is_caught():
    """WORLD_SIZE written as the literal it was converted with: the edited JobSet then differs."""
    doc = pytorchjob("m", namespace="ml", workers=3, image="example.com/x:1", restart_policy=None)
    conv = convert_job(doc, OPTIONS)
    for rj in conv.jobset["spec"]["replicatedJobs"]:
        for e in rj["template"]["spec"]["template"]["spec"]["containers"][0]["env"]:
            if e["name"] == "WORLD_SIZE":
                e.pop("valueFrom")
                e["value"] = "4"
    job, jobset = resized(conv, doc, "Worker", 5)
    assert any(d.var == "WORLD_SIZE" for d in differences(conv, job, jobset))
