"""kf2jobset's ``--scheduler=volcano`` output held to the real Training Operator v1.9.4 run with
``--gang-scheduler-name=volcano`` (stack flavour "volcano", tests/e2e/stack.py).

The operator creates the PodGroup first and, for Volcano, creates no pod while the PodGroup's
``status.phase`` is empty or Pending (VolcanoControl.DelayPodCreationDueToPodGroup). No Volcano
scheduler runs here, so the test itself moves the PodGroup to ``Inqueue`` (status subresource), as
Volcano would once the job fits its queue. No node agent: the pods stay Pending, which is enough —
the operator sets schedulerName and the annotations when it creates them.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterator

import pytest
import yaml

from ..conftest import FIXTURES
from .conftest import running_stack
from .stack import GroundTruthStack, wait_for
from .differential_cases import options_from_args

# with a schedulingPolicy, and without one (the operator's gang anyway); fixtures/scheduling/<case>, or a path under
# fixtures/ converted with its args but --target (the bundle's volcano flavour: tests/e2e/test_trainjob_gang.py)
CASES = [c for c in ("volcano", "volcano-every-job", "targets/trainjob/gang-volcano-pytorch")
         if re.search(os.environ.get("KF2JOBSET_GANG_ONLY", ""), c)]
PLURALS = {"PyTorchJob": "pytorchjobs", "TFJob": "tfjobs"}
PG = ("scheduling.volcano.sh", "v1beta1", "podgroups")
GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"
REPLICA_TYPE = "training.kubeflow.org/replica-type"


@pytest.fixture(scope="module")
def volcano_stack() -> Iterator[GroundTruthStack]:
    with running_stack("volcano") as s:
        yield s


def _convert(job: dict, args: list[str]):
    from kf2jobset.files.pipeline import convert_text

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml", options_from_args(args))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv


@pytest.mark.parametrize("case", CASES)
def test_operator_volcano_pods_and_podgroup_match_kf2jobset(volcano_stack: GroundTruthStack, case: str) -> None:
    from kubernetes import client

    case_dir = FIXTURES / (case if "/" in case else f"scheduling/{case}")
    job = yaml.safe_load((case_dir / "input.yaml").read_text())
    job["metadata"].pop("namespace", None)  # each run gets its own
    args = [a for a in (case_dir / "args").read_text().splitlines() if a.strip() and not a.startswith("#")
            and a not in ("--target", "trainjob")]
    conv = _convert(job, args)
    (pg_model,) = [c for c in conv.companions if c.get("kind") == "PodGroup"]
    templates = {
        rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]
    }

    with volcano_stack.api_client() as api:
        core = client.CoreV1Api(api)
        custom = client.CustomObjectsApi(api)
        ns = f"volcano-{uuid.uuid4().hex[:8]}"
        core.create_namespace({"metadata": {"name": ns}})
        try:
            custom.create_namespaced_custom_object("kubeflow.org", "v1", ns, PLURALS[job["kind"]], job)

            def podgroup():
                items = custom.list_namespaced_custom_object(*PG[:2], ns, PG[2])["items"]
                return items[0] if items else None

            pg = wait_for(podgroup, timeout=60, what="the operator's PodGroup")
            # no Volcano scheduler: admit the group as Volcano would, or the operator never creates pods
            custom.patch_namespaced_custom_object_status(*PG[:2], ns, PG[2], pg["metadata"]["name"],
                                                         {"status": {"phase": "Inqueue"}})
            specs = next(v for k, v in job["spec"].items() if k.endswith("ReplicaSpecs"))
            n = sum(int(s.get("replicas", 1)) for s in specs.values())

            def pods():
                items = core.list_namespaced_pod(ns).items
                return items if len(items) >= n else None

            try:
                real_pods = wait_for(pods, timeout=60, what=f"{n} operator pods")
            except TimeoutError:
                print(volcano_stack.log_tail("training-operator", 60))
                raise
            pg = podgroup()
        finally:
            core.delete_namespace(ns)  # stays Terminating: no namespace controller runs

        print("\n[e2e volcano] real PodGroup:", json.dumps({"name": pg["metadata"]["name"], "spec": pg["spec"]}, indent=1))
        print("[e2e volcano] kf2jobset PodGroup:", json.dumps({"name": pg_model["metadata"]["name"], "spec": pg_model["spec"]}, indent=1))

        diffs: list[str] = []
        if pg["metadata"]["name"] != pg_model["metadata"]["name"]:
            diffs.append(f"PodGroup name: real {pg['metadata']['name']!r} != kf2jobset {pg_model['metadata']['name']!r}")
        for f in ("minMember", "queue", "priorityClassName", "minResources"):
            real, mine = pg["spec"].get(f), pg_model["spec"].get(f)
            if real != mine:
                diffs.append(f"PodGroup spec.{f}: real {real!r} != kf2jobset {mine!r}")
        extra = set(pg["spec"]) - {"minMember", "queue", "priorityClassName", "minResources"}
        if extra:
            diffs.append(f"PodGroup spec fields set by the operator and not compared: {sorted(extra)}")

        for pod in sorted(real_pods, key=lambda p: p.metadata.name):
            rtype = (pod.metadata.labels or {}).get(REPLICA_TYPE, "")
            tpl = templates.get(rtype.lower())
            ann = pod.metadata.annotations or {}
            observed = {
                "schedulerName": pod.spec.scheduler_name,
                GROUP_NAME: ann.get(GROUP_NAME),
                TASK_SPEC: ann.get(TASK_SPEC),
                "priorityClassName": pod.spec.priority_class_name,
            }
            if tpl is None:
                diffs.append(f"pod {pod.metadata.name}: no replicatedJob {rtype.lower()!r} in kf2jobset's JobSet")
                continue
            tann = (tpl.get("metadata") or {}).get("annotations") or {}
            modelled = {
                "schedulerName": tpl["spec"].get("schedulerName"),
                GROUP_NAME: tann.get(GROUP_NAME),
                TASK_SPEC: tann.get(TASK_SPEC),
                "priorityClassName": tpl["spec"].get("priorityClassName"),
            }
            print(f"[e2e volcano] pod {pod.metadata.name} (replica {rtype}): real {observed} | kf2jobset {modelled}")
            for k in observed:
                if observed[k] != modelled[k]:
                    diffs.append(f"pod {pod.metadata.name} {k}: real {observed[k]!r} != kf2jobset {modelled[k]!r}")

    assert not diffs, "kf2jobset --scheduler=volcano differs from the real operator:\n" + "\n".join(diffs)
