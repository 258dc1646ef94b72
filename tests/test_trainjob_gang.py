"""--target trainjob --scheduler scheduler-plugins: Trainer v2.3's podGroupPolicy.coscheduling where the PodGroup
its CoScheduling plugin makes is the operator's, else the JobSet target's companion PodGroup
(kf2jobset/targets/trainjob_gang.py). The PodGroup Trainer makes from such a runtime is compared with the real
Trainer in tests/e2e/test_trainjob_gang.py."""
from __future__ import annotations

from decimal import Decimal

import yaml

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.targets.trainjob_gang import pod_requests

from .conftest import FIXTURES

CASE = FIXTURES / "targets" / "trainjob" / "scheduler-plugins-gang" / "input.yaml"
LABEL = "scheduling.x-k8s.io/pod-group"


def convert(text: str):
    result = convert_text(text, "job.yaml", ConvertOptions(target="trainjob", scheduler="scheduler-plugins", trainer_runtime="per-job"))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    kinds = {o["kind"]: o for o in conv.objects}
    return conv, kinds, {n.code: n for n in conv.notes}


def test_a_gang_trainer_makes_alike_is_asked_of_trainer():
    conv, kinds, notes = convert(CASE.read_text())
    runtime = kinds["TrainingRuntime"]
    assert runtime["spec"]["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    assert "PodGroup" not in kinds and "JS090" not in notes and notes["TJ050"].category == "rewritten"
    for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]
        assert LABEL not in (pod.get("metadata") or {}).get("labels", {})  # Trainer's, with the TrainJob's name
        assert pod["spec"]["schedulerName"] == "scheduler-plugins"  # v1's, which Trainer does not set
    assert "minResources cpu=32, memory=128Gi, nvidia.com/gpu=8" in notes["TJ050"].message
    # the JobSet the report compares with v1 still has the label: Trainer puts it on every pod
    assert {rj["template"]["spec"]["template"]["metadata"]["labels"][LABEL]
            for rj in conv.jobset["spec"]["replicatedJobs"]} == {"ddp-2node"}


def test_without_a_timeout_trainer_writes_its_default():
    _, kinds, notes = convert(CASE.read_text().replace("    schedulingPolicy:\n      scheduleTimeoutSeconds: 120\n", ""))
    assert kinds["TrainingRuntime"]["spec"]["podGroupPolicy"] == {"coscheduling": {}}
    assert notes["TJ050"].category == "approximated" and "scheduleTimeoutSeconds 60, Trainer's default" in notes["TJ050"].message


def _worker_limits_only(text: str) -> str:
    head, sep, tail = text.rpartition("                requests:\n")
    return head + "                limits:\n" + tail.split("                limits:\n")[0]


def test_a_gang_trainer_would_count_otherwise_keeps_the_companion():
    text = CASE.read_text()
    replaced = {
        "Trainer counts 2 pods": text.replace("    Worker:\n      replicas: 1", "    Worker:\n      replicas: 3"),
        "minAvailable 1": text.replace("scheduleTimeoutSeconds: 120", "scheduleTimeoutSeconds: 120\n      minAvailable: 1"),
        # the worker asks through limits only: v1 summed its limits, Trainer reads requests only
        "Trainer would sum minResources": _worker_limits_only(text),
    }
    for why, variant in replaced.items():
        assert variant != text, why
        _, kinds, notes = convert(variant)
        assert "podGroupPolicy" not in kinds["TrainingRuntime"]["spec"], why
        assert kinds["PodGroup"]["metadata"]["name"] == "ddp-2node" and "JS090" in notes, why
        assert why in notes["TJ051"].message, (why, notes["TJ051"].message)


def test_the_jobset_target_is_unchanged():
    result = convert_text(CASE.read_text(), "job.yaml", ConvertOptions(scheduler="scheduler-plugins"))
    (conv,) = [c for r in result.results for c in r.conversions]
    assert [o["kind"] for o in conv.objects] == ["JobSet", "PodGroup"]
    assert not {"TJ050", "TJ051"} & {n.code for n in conv.notes}


def test_pod_requests_follow_component_helpers():
    """Containers' requests summed (limits unread), a regular init container counts by its peak, a sidecar
    (restartPolicy Always) adds to everything after it, the overhead is added."""
    spec = yaml.safe_load("""
containers:
  - {resources: {requests: {cpu: "1", memory: 1Gi}, limits: {nvidia.com/gpu: "1"}}}
  - {resources: {requests: {cpu: 500m}}}
initContainers:
  - {restartPolicy: Always, resources: {requests: {cpu: 250m}}}
  - {resources: {requests: {cpu: "3", memory: 512Mi}}}
overhead: {cpu: 100m}
""")
    got = pod_requests(spec)
    # containers 1.5 + sidecar 0.25 = 1.75; the init container runs beside the sidecar: 3.25; + overhead
    assert got == {"cpu": Decimal("3.35"), "memory": Decimal(2**30)}
