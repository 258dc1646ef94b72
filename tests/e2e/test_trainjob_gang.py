"""kf2jobset's ``--target trainjob --scheduler scheduler-plugins`` held to the real Trainer v2.3.0 (stack flavour
"trainer", which installs the PodGroup CRD of the scheduler-plugins release Trainer pins before Trainer starts).

Where kf2jobset asks Trainer for the gang (podGroupPolicy.coscheduling, TJ050), the PodGroup Trainer makes must
be the one the operator made: the companion PodGroup ``--target jobset`` writes for the same job, which
tests/e2e/test_scheduler_plugins.py holds to the real operator (this fixture is one of its cases). Its timeout
is v1's, or Trainer's default of 60 where v1 had none; Trainer owns it; the pods carry its label and v1's
schedulerName. Where kf2jobset does not (TJ051: a replicatedJob of several pods), the test shows why: the same
runtime with podGroupPolicy added by hand gets a PodGroup that counts one pod per replicatedJob. No scheduler
runs: the pods stay Pending.
"""

from __future__ import annotations

import copy

import pytest

from kf2jobset.options import ConvertOptions
from kf2jobset.pipeline import convert_text
from kf2jobset.quantity import parse_quantity

from ..conftest import FIXTURES
from .stack import wait_for
from .trainer_harness import core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import create_trainjob_after_its_runtime, named_in

CASE = FIXTURES / "targets" / "trainjob" / "scheduler-plugins-gang" / "input.yaml"
PG = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
LABEL = "scheduling.x-k8s.io/pod-group"
NO_TIMEOUT = ("    schedulingPolicy:\n      scheduleTimeoutSeconds: 120\n", "")
THREE_WORKERS = ("    Worker:\n      replicas: 1", "    Worker:\n      replicas: 3")


def _objects(text: str, target: str) -> dict[str, dict]:
    result = convert_text(text, "job.yaml", ConvertOptions(target=target, scheduler="scheduler-plugins", trainer_runtime="per-job"))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return {o["kind"]: o for o in conv.objects}


def _apply(custom, core, objects: dict[str, dict], ns: str) -> tuple[dict, list]:
    """The runtime, then the TrainJob; the PodGroup Trainer makes and the pods of the JobSet it builds."""
    for kind in ("TrainingRuntime", "TrainJob"):
        create_trainjob_after_its_runtime(custom, core, named_in(objects[kind], ns), ns)
    name = objects["TrainJob"]["metadata"]["name"]
    pg = wait_for(lambda: next(iter(custom.list_namespaced_custom_object(*PG[:2], ns, PG[2])["items"]), None),
                  timeout=120, what="Trainer's PodGroup")
    n = sum(rj.get("replicas", 1) for rj in objects["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"])
    pods = wait_for(lambda: (lambda items: items if len(items) >= n else None)(core.list_namespaced_pod(ns).items),
                    timeout=180, what=f"{n} pods of TrainJob {name}")
    return pg, pods


def _amounts(resources: dict | None) -> dict:
    return {k: parse_quantity(v) for k, v in (resources or {}).items()}


@pytest.mark.parametrize("variant", ["timeout", "no-timeout"])
def test_trainer_makes_the_podgroup_the_operator_made(custom, core, tns, variant):  # noqa: F811
    text = CASE.read_text() if variant == "timeout" else CASE.read_text().replace(*NO_TIMEOUT)
    objects = _objects(text, "trainjob")
    assert "PodGroup" not in objects and "coscheduling" in objects["TrainingRuntime"]["spec"]["podGroupPolicy"]
    operator = _objects(text, "jobset")["PodGroup"]["spec"]  # held to the real operator: test_scheduler_plugins.py
    pg, pods = _apply(custom, core, objects, tns)
    name = objects["TrainJob"]["metadata"]["name"]
    print(f"\n[e2e trainjob gang] {variant}: Trainer's PodGroup {pg['metadata']['name']} {pg['spec']} | operator's {operator}")
    assert pg["metadata"]["name"] == name
    assert [(o["kind"], o["name"], o.get("controller")) for o in pg["metadata"]["ownerReferences"]] == [("TrainJob", name, True)]
    assert pg["spec"]["minMember"] == operator["minMember"]
    assert _amounts(pg["spec"].get("minResources")) == _amounts(operator.get("minResources"))
    assert pg["spec"]["scheduleTimeoutSeconds"] == operator.get("scheduleTimeoutSeconds", 60)  # 60: Trainer's default
    for pod in pods:
        assert (pod.metadata.labels or {}).get(LABEL) == name, pod.metadata.name
        assert pod.spec.scheduler_name == "scheduler-plugins", pod.metadata.name  # v1's, kept in the runtime


def test_trainer_counts_one_pod_per_replicated_job(custom, core, tns):  # noqa: F811
    """Why kf2jobset keeps the companion PodGroup for a replicatedJob of several pods (TJ051)."""
    text = CASE.read_text().replace(*THREE_WORKERS)
    objects = _objects(text, "trainjob")
    assert "PodGroup" in objects and "podGroupPolicy" not in objects["TrainingRuntime"]["spec"]
    forced = copy.deepcopy(objects)
    forced["TrainingRuntime"]["spec"]["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    forced["TrainingRuntime"]["metadata"]["name"] += "-forced"
    forced["TrainJob"]["spec"]["runtimeRef"]["name"] = forced["TrainingRuntime"]["metadata"]["name"]
    pg, pods = _apply(custom, core, forced, tns)
    print(f"\n[e2e trainjob gang] forced podGroupPolicy, 1 master + 3 workers: Trainer's PodGroup {pg['spec']}")
    assert len(pods) == 4 and pg["spec"]["minMember"] == 2  # one per replicatedJob, where v1's gang held 4
