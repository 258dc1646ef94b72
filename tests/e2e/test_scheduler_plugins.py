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
from .stack import GroundTruthStack, wait_for

PG = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
LABEL = "scheduling.x-k8s.io/pod-group"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
FLAG = "scheduler-plugins"  # the stack's --gang-scheduler-name
# fixtures/scheduling/<case>, or a path under fixtures/ (the TrainJob target's gang: tests/e2e/test_trainjob_gang.py)
CASES = [c for c in ("scheduler-plugins", "scheduler-plugins-tfjob", "scheduler-plugins-min-resources",
                     "targets/trainjob/scheduler-plugins-gang")
         if re.search(os.environ.get("KF2JOBSET_GANG_ONLY", ""), c)]
PLURALS = {"PyTorchJob": "pytorchjobs", "TFJob": "tfjobs", "PaddleJob": "paddlejobs"}


@pytest.fixture(scope="module")
def gang_stack() -> Iterator[GroundTruthStack]:
    with running_stack(FLAG) as s:  # the stack flavour runs the operator with --gang-scheduler-name=FLAG
        yield s


def convert(job: dict):
    from kf2jobset.options import ConvertOptions
    from kf2jobset.pipeline import convert_text

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml",
                          ConvertOptions(scheduler="scheduler-plugins", gang_scheduler_name=FLAG))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv


def conversion_parts(job: dict, convert) -> tuple:
    """``job`` (its namespace dropped: each world gets its own) converted, the converted PodGroup, whether its
    minResources sum is free of PriorityClass order (no JS091), the JobSet's pod templates by replicatedJob,
    and the JobSet's pod count."""
    job["metadata"].pop("namespace", None)
    conv = convert(job)
    (pg_model,) = [c for c in conv.companions if c.get("kind") == "PodGroup"]
    order_free = "JS091" not in {n.code for n in conv.notes}
    templates = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    return conv, pg_model, order_free, templates, sum(rj["replicas"] for rj in conv.jobset["spec"]["replicatedJobs"])


def apply_conversion(core, custom, pg_api: tuple, pg_model: dict, jobset: dict, ns: str) -> list:
    """The conversion applied as a user would, in ``ns``: its PodGroup, then the JobSet (through the
    webhooks); returns the pods the Job controller makes for the replicatedJobs that wait for none."""
    pg_obj = dict(pg_model, metadata=dict(pg_model["metadata"], namespace=ns))
    custom.create_namespaced_custom_object(*pg_api[:2], ns, pg_api[2], pg_obj)
    custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", jobset)
    return pods_of(core, ns, sum(rj["replicas"] for rj in jobset["spec"]["replicatedJobs"] if not rj.get("dependsOn")),
                   "the JobSet's pods")


def podgroup_diffs(label: str, real_pg: dict, pg_model: dict, job: dict, jobset: dict, fields: tuple,
                   order_free: bool) -> list[str]:
    """The operator's PodGroup against kf2jobset's: the names (v1's after the job, kf2jobset's after the JobSet),
    ``fields`` of the spec (minResources only where its sum is free of PriorityClass order, JS091), and no
    other spec field set by the operator."""
    print(f"\n{label}: real PodGroup {real_pg['metadata']['name']} {real_pg['spec']} | "
          f"kf2jobset {pg_model['metadata']['name']} {pg_model['spec']}")
    diffs = []
    if real_pg["metadata"]["name"] != job["metadata"]["name"] or pg_model["metadata"]["name"] != jobset["metadata"]["name"]:
        diffs.append(f"PodGroup names: real {real_pg['metadata']['name']!r}, kf2jobset {pg_model['metadata']['name']!r}")
    for f in fields:
        if f == "minResources" and not order_free:
            continue
        if real_pg["spec"].get(f) != pg_model["spec"].get(f):
            diffs.append(f"PodGroup spec.{f}: real {real_pg['spec'].get(f)!r} != kf2jobset {pg_model['spec'].get(f)!r}")
    if set(real_pg["spec"]) - set(fields):
        diffs.append(f"PodGroup spec fields the operator set and the test does not compare: {sorted(set(real_pg['spec']) - set(fields))}")
    return diffs


def pods_of(core, ns: str, n: int, what: str) -> list:
    def pods():
        items = core.list_namespaced_pod(ns).items
        return items if len(items) >= n else None
    return wait_for(pods, timeout=180, what=what)


@pytest.mark.parametrize("case", CASES)
def test_operator_podgroup_and_pods_match_kf2jobset(gang_stack: GroundTruthStack, case: str) -> None:
    from kubernetes import client

    job = yaml.safe_load((FIXTURES / (case if "/" in case else f"scheduling/{case}") / "input.yaml").read_text())
    conv, pg_model, order_free, templates, n = conversion_parts(job, convert)
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
            real_pods = pods_of(core, v1_ns, n, f"{n} operator pods")
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
