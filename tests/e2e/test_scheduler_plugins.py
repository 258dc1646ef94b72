"""kf2jobset's ``--scheduler=scheduler-plugins`` output held to the real Training Operator v1.9.4 run with
``--gang-scheduler-name=scheduler-plugins`` (stack flavour "scheduler-plugins", tests/e2e/stack.py), with the
real PodGroup CRD of the scheduler-plugins module the operator is built with (read from the Go module cache).

The operator makes its PodGroup and, for scheduler-plugins, its pods at once (SchedulerPluginsControl never
delays them). The test compares the PodGroup's spec and each pod's label and schedulerName with kf2jobset's,
then creates the converted JobSet and its PodGroup in the same API server (the CRD's schema and the JobSet
webhooks accept them) and compares the pods the Job controller makes from the JobSet. No scheduler runs: the
pods stay Pending. ``KF2JOBSET_GANG_ONLY`` (a regex on the fixture case name) narrows the cases.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

import pytest
import yaml

from ..conftest import FIXTURES
from .conftest import running_stack
from .gang_harness import (FLAG, PG, apply_conversion, conversion_parts, convert_for_gang, nudge_job, operator_said,
                           podgroup_diffs, pods_of)
from .stack import GroundTruthStack, wait_for

LABEL = "scheduling.x-k8s.io/pod-group"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
# fixtures/scheduling/<case>, or a path under fixtures/ (the TrainJob target's gang: tests/e2e/test_trainjob_gang.py)
CASES = [c for c in ("scheduler-plugins", "scheduler-plugins-tfjob", "scheduler-plugins-min-resources",
                     "targets/trainjob/scheduler-plugins-gang", "targets/trainjob/gang-coscheduling-tfjob",
                     "targets/trainjob/gang-volcano-pytorch")
         if re.search(os.environ.get("KF2JOBSET_GANG_ONLY", ""), c)]
PLURALS = {"PyTorchJob": "pytorchjobs", "TFJob": "tfjobs", "PaddleJob": "paddlejobs"}


@pytest.fixture(scope="module")
def gang_stack() -> Iterator[GroundTruthStack]:
    with running_stack(FLAG) as s:  # the stack flavour runs the operator with --gang-scheduler-name=FLAG
        yield s


@pytest.mark.parametrize("case", CASES)
def test_operator_podgroup_and_pods_match_kf2jobset(gang_stack: GroundTruthStack, case: str) -> None:
    from kubernetes import client

    job = yaml.safe_load((FIXTURES / (case if "/" in case else f"scheduling/{case}") / "input.yaml").read_text())
    conv, pg_model, order_free, templates, n = conversion_parts(job, convert_for_gang)
    diffs: list[str] = []

    with gang_stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        v1_ns, js_ns = (f"gang-{side}-{uuid.uuid4().hex[:6]}" for side in ("v1", "js"))
        for ns in (v1_ns, js_ns):
            core.create_namespace({"metadata": {"name": ns}})
        try:
            custom.create_namespaced_custom_object("kubeflow.org", "v1", v1_ns, PLURALS[job["kind"]], job)
            real_pg = wait_for(lambda: (custom.list_namespaced_custom_object(*PG[:2], v1_ns, PG[2])["items"] or [None])[0],
                               timeout=120, what="the operator's PodGroup")
            real_pods = pods_of(core, v1_ns, n, f"{n} operator pods",
                                nudge=nudge_job(custom, ("kubeflow.org", "v1"), v1_ns, PLURALS[job["kind"]], job["metadata"]["name"]),
                                explain=lambda: operator_said(gang_stack, custom, v1_ns, job))
            # the conversion, applied as a user would: the PodGroup (real CRD schema) and the JobSet (webhooks)
            js_pods = apply_conversion(core, custom, PG, pg_model, conv.jobset, js_ns)
            stored_pg = custom.get_namespaced_custom_object(*PG[:2], js_ns, PG[2], pg_model["metadata"]["name"])
        finally:
            for ns in (v1_ns, js_ns):
                core.delete_namespace(ns)  # stays Terminating: no namespace controller runs

    diffs += podgroup_diffs(f"[e2e gang] {case}", real_pg, pg_model, job, conv.jobset,
                            ("minMember", "minResources", "scheduleTimeoutSeconds"), order_free)
    if stored_pg["spec"] != pg_model["spec"]:
        diffs.append(f"the API server stored kf2jobset's PodGroup as {stored_pg['spec']} (pruned or defaulted)")

    for pod in real_pods:
        rjob = (pod.metadata.labels or {}).get(REPLICA_TYPE, "").lower()
        tpl = templates.get(rjob)
        if tpl is None:
            diffs.append(f"operator pod {pod.metadata.name}: no replicatedJob {rjob!r}")
            continue
        real = {"schedulerName": pod.spec.scheduler_name, LABEL: (pod.metadata.labels or {}).get(LABEL)}
        mine = {"schedulerName": tpl["spec"].get("schedulerName"), LABEL: tpl["metadata"]["labels"].get(LABEL)}
        # the group is named after the job in v1 and after the JobSet here (the same name unless --name)
        if real != {**mine, LABEL: job["metadata"]["name"] if mine[LABEL] == conv.jobset["metadata"]["name"] else mine[LABEL]}:
            diffs.append(f"pod {pod.metadata.name} ({rjob}): real {real} != kf2jobset {mine}")
    for pod in js_pods:
        rjob = (pod.metadata.labels or {}).get(RJOB)
        made = {"schedulerName": pod.spec.scheduler_name, LABEL: (pod.metadata.labels or {}).get(LABEL)}
        want = {"schedulerName": templates[rjob]["spec"].get("schedulerName"), LABEL: pg_model["metadata"]["name"]}
        if made != want:
            diffs.append(f"JobSet pod {pod.metadata.name}: {made} != {want}")
    assert not diffs, f"{case}: kf2jobset --scheduler=scheduler-plugins differs from the real operator:\n" + "\n".join(diffs)
