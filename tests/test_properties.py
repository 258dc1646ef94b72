"""Invariants over generated jobs of every kind.

For each generated v1 job: the JobSet validates; expanding it into pods the way the JobSet and Job
controllers and kubelet would (labels, annotations, fieldRef, $(VAR), JOB_COMPLETION_INDEX) gives
every pod the env the operator would have injected for the same replica, with every address
reaching the pod of the right role and rank; and all of that still holds after a rename.
Differences are allowed only where the conversion made a note that explains them.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kf2jobset.core.convert import convert_job
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.compare import compare_env
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world
from kf2jobset.k8s.validate import check_jobset

from .strategies import ANY_JOB

OPTIONS = ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="generated")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def explained(diff, notes) -> bool:
    covered = {e for n in notes for e in n.explains}
    return ("env", diff.var) in covered


def unexplained(conv, name=None):
    op = operator_world(conv.job, name=name)
    js = jobset_world(conv.jobset, name=name, roles=conv.plan.pod_roles)
    diffs, _ = compare_env(op, js)
    return [d for d in diffs if not explained(d, conv.notes)], op, js


@SETTINGS
@given(ANY_JOB)
def test_output_validates_and_env_contract_holds(doc):
    conv = convert_job(doc, OPTIONS)
    assert check_jobset(conv.jobset) == []
    bad, op, js = unexplained(conv)
    assert bad == [], bad
    # one JobSet pod per operator pod, paired by role and rank
    assert sorted(p.key for p in op.pods) == sorted(p.key for p in js.pods)


@SETTINGS
@given(ANY_JOB, st.from_regex(r"[a-z][a-z0-9]{2,10}", fullmatch=True))
def test_contract_survives_rename(doc, new_name):
    conv = convert_job(doc, OPTIONS)
    bad, _, js = unexplained(conv, name=new_name)
    assert bad == [], bad
    assert all(p.labels["jobset.sigs.k8s.io/jobset-name"] == new_name for p in js.pods)


@SETTINGS
@given(ANY_JOB)
def test_ranks_form_0_to_n_minus_1(doc):
    conv = convert_job(doc, OPTIONS)
    js = jobset_world(conv.jobset, roles=conv.plan.pod_roles)
    env = {p.key: dict(p.env(p.containers()[0])) for p in js.pods}
    kind = conv.job.kind
    # only where the operator injected RANK (a RANK the user wrote elsewhere is the user's own)
    op = operator_world(conv.job)
    injected = {n for p in op.pods for n, _ in p.env(p.containers()[0])} - {
        e["name"] for spec in conv.job.replicas.values() for c in spec.template["spec"]["containers"][:1] for e in c.get("env") or []}
    if kind in ("PyTorchJob", "XGBoostJob") and "RANK" in injected:
        ranks = sorted(int(e["RANK"]) for e in env.values())
        assert ranks == list(range(len(js.pods)))
        if conv.job.has("Master"):
            assert env[("master", 0)]["RANK"] == "0"
        world = int(next(iter(env.values()))["WORLD_SIZE"])
        assert world % len(js.pods) == 0
    if kind == "JAXJob" and "PROCESS_ID" in injected:
        assert sorted(int(e["PROCESS_ID"]) for e in env.values()) == list(range(len(js.pods)))
    if kind == "TFJob" and "TF_CONFIG" in injected:
        import json

        for (role, index), e in env.items():
            task = json.loads(e["TF_CONFIG"])["task"]
            assert (task["type"], task["index"]) == (role, index)
    if kind == "MXJob" and "MX_CONFIG" in injected:
        import json

        for (role, index), e in env.items():
            config = json.loads(e["MX_CONFIG"])
            assert config["task"] == {"type": role, "index": index}
            assert e["DMLC_ROLE"] == role
            if role == "worker" and "DMLC_WORKER_ID" in injected:
                assert e["DMLC_WORKER_ID"] == str(index)


@SETTINGS
@given(ANY_JOB)
def test_every_address_reaches_an_existing_pod_of_the_intended_rank(doc):
    conv = convert_job(doc, OPTIONS)
    op = operator_world(conv.job)
    js = jobset_world(conv.jobset, roles=conv.plan.pod_roles)
    op_pods = {p.key: p for p in op.pods}
    for pod in js.pods:
        twin = op_pods[pod.key]
        for c, c_op in zip(pod.containers(), twin.containers(), strict=False):
            mine = dict(twin.env(c_op))
            for name, value in pod.env(c):
                targets = js.resolver.addresses_in(value)
                if name in mine and targets:
                    assert targets == op.resolver.addresses_in(mine[name]), (name, value, mine[name])
