"""kf2jobset's ``--scheduler=volcano`` for MPIJob v2beta1 held to the real mpi-operator v0.8.2 run with
``--gang-scheduling=volcano`` (stack flavour "mpi-operator-volcano", tests/e2e/stack.py: the mpi-operator stack
with the same schema-less Volcano PodGroup CRD as the "volcano" flavour).

mpi-operator makes its PodGroup (VolcanoCtrl.newPodGroup, pkg/controller/podgroup.go) and then its pods at
once: unlike the training operator it does not wait for the group to be Inqueue. The test compares the
PodGroup's spec and each pod's schedulerName and annotations with kf2jobset's, then creates the converted
JobSet and its PodGroup in the same API server and compares the pods the Job controller makes from it. No
scheduler runs: the pods stay Pending. The launcher's PriorityClass exists (the API server refuses a pod that
names a missing one), so mpi-operator's calPGMinResource reads its value as it would in a cluster.
``KF2JOBSET_GANG_ONLY`` (a regex on the case name) narrows the cases.
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
from .stack import GroundTruthStack, wait_for
from .gang_harness import (
    apply_conversion,
    conversion_parts,
    podgroup_diffs,
    pods_of,
)

PG = ("scheduling.volcano.sh", "v1beta1", "podgroups")
GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"
ROLE = "training.kubeflow.org/job-role"  # mpi-operator's launcher / worker label
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
FIXTURE = FIXTURES / "scheduling" / "volcano-mpijob" / "input.yaml"
POLICY = ("    cleanPodPolicy: Running\n",
          "    cleanPodPolicy: Running\n    schedulingPolicy:\n      queue: q2\n      priorityClass: research-low\n"
          "      minAvailable: 2\n      scheduleTimeoutSeconds: 60\n")
# the fixture as written (queue annotation, the launcher's PriorityClass), and with a schedulingPolicy that
# overrides both and asks for a smaller gang than the pods (the launcher and one worker in minResources)
VARIANTS = {"volcano-mpijob": lambda t: t, "volcano-mpijob-policy": lambda t: t.replace(*POLICY)}
CASES = [c for c in VARIANTS if re.search(os.environ.get("KF2JOBSET_GANG_ONLY", ""), c)]
PRIORITY_CLASSES = {"research-high": 100000}


@pytest.fixture(scope="module")
def mpi_volcano_stack() -> Iterator[GroundTruthStack]:
    with running_stack("mpi-operator-volcano") as s:
        yield s


def convert(job: dict):
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml", ConvertOptions(scheduler="volcano"))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv


def gang_fields(pod_spec_scheduler: str | None, annotations: dict | None) -> dict:
    ann = annotations or {}
    return {"schedulerName": pod_spec_scheduler, GROUP_NAME: ann.get(GROUP_NAME), TASK_SPEC: ann.get(TASK_SPEC)}


@pytest.mark.parametrize("case", CASES)
def test_mpi_operator_volcano_podgroup_and_pods_match_kf2jobset(mpi_volcano_stack: GroundTruthStack, case: str) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    job = yaml.safe_load(VARIANTS[case](FIXTURE.read_text()))
    conv, pg_model, order_free, templates, n = conversion_parts(job, convert)
    diffs: list[str] = []

    with mpi_volcano_stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        scheduling = client.SchedulingV1Api(api)
        for pc, value in PRIORITY_CLASSES.items():
            try:
                scheduling.create_priority_class({"metadata": {"name": pc}, "value": value})
            except ApiException as e:
                if e.status != 409:  # made by the other case
                    raise
        v1_ns, js_ns = (f"mpivc-{side}-{uuid.uuid4().hex[:6]}" for side in ("v1", "js"))
        for ns in (v1_ns, js_ns):
            core.create_namespace({"metadata": {"name": ns}})
        try:
            custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", v1_ns, "mpijobs", job)
            real_pg = wait_for(lambda: (custom.list_namespaced_custom_object(*PG[:2], v1_ns, PG[2])["items"] or [None])[0],
                               timeout=120, what="mpi-operator's PodGroup")
            try:
                real_pods = pods_of(core, v1_ns, n, f"{n} mpi-operator pods")
            except TimeoutError:
                print(mpi_volcano_stack.log_tail("mpi-operator", 60))
                raise
            js_pods = apply_conversion(core, custom, PG, pg_model, conv.jobset, js_ns)
        finally:
            for ns in (v1_ns, js_ns):
                core.delete_namespace(ns)  # stays Terminating: no namespace controller runs

    diffs += podgroup_diffs(f"[e2e mpi volcano] {case}", real_pg, pg_model, job, conv.jobset,
                            ("minMember", "queue", "priorityClassName", "minResources"), order_free)

    for pod in real_pods:
        rjob = (pod.metadata.labels or {}).get(ROLE, "")
        tpl = templates.get(rjob)
        if tpl is None:
            diffs.append(f"mpi-operator pod {pod.metadata.name}: no replicatedJob {rjob!r}")
            continue
        real = gang_fields(pod.spec.scheduler_name, pod.metadata.annotations)
        mine = gang_fields(tpl["spec"].get("schedulerName"), (tpl.get("metadata") or {}).get("annotations"))
        # the group is named after the job in v1 and after the JobSet here (the same name unless --name)
        if mine[GROUP_NAME] == conv.jobset["metadata"]["name"]:
            mine[GROUP_NAME] = job["metadata"]["name"]
        print(f"[e2e mpi volcano] pod {pod.metadata.name} ({rjob}): real {real} | kf2jobset {mine}")
        if real != mine:
            diffs.append(f"pod {pod.metadata.name} ({rjob}): real {real} != kf2jobset {mine}")
    for pod in js_pods:
        rjob = (pod.metadata.labels or {}).get(RJOB)
        made = gang_fields(pod.spec.scheduler_name, pod.metadata.annotations)
        want = gang_fields("volcano", {GROUP_NAME: pg_model["metadata"]["name"]})
        if made != want:
            diffs.append(f"JobSet pod {pod.metadata.name} ({rjob}): {made} != {want}")
    assert not diffs, f"{case}: kf2jobset --scheduler=volcano differs from the real mpi-operator:\n" + "\n".join(diffs)
