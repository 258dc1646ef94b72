"""Gang schedulers beyond Kueue and Volcano: scheduler-plugins' PodGroup as the v1 operator made it
(the minResources sum of CalcPGMinResources, the label and schedulerName), the start order a gang would
deadlock (JS092), YuniKorn's task groups carried and guarded by --check, and --scheduler yunikorn.
The PodGroup and pods are compared with the real operator in tests/e2e/test_scheduler_plugins.py."""
from __future__ import annotations

import json

import pytest
import yaml

from kf2jobset import exitcodes
from kf2jobset.errors import UsageError
from kf2jobset.schedulers.podgroup_resources import operator_min_resources
from kf2jobset.options import ConvertOptions
from kf2jobset.pipeline import convert_text
from kf2jobset.quantity import go_sum

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas

SP = FIXTURES / "scheduling" / "scheduler-plugins"


def _convert(text: str, **opts):
    result = convert_text(text, "job.yaml", ConvertOptions(**opts))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv


def _job(replicas: dict, policy: dict | None = None, kind="PyTorchJob", key="pytorchReplicaSpecs") -> str:
    spec = {key: {t: {"replicas": n, "template": {"spec": {"containers": [dict(name="pytorch", image="i:1", **c)]}}}
                  for t, (n, c) in replicas.items()}}
    if policy is not None:
        spec["runPolicy"] = {"schedulingPolicy": policy}
    return yaml.safe_dump({"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "j"}, "spec": spec})


def test_go_sum_keeps_the_first_format_and_canonicalises():
    assert go_sum(["500m", "500m"]) == "1"
    assert go_sum(["1Gi", "512Mi"]) == "1536Mi"
    assert go_sum([1, "500m"]) == "1500m"
    assert go_sum(["250m"]) == "250m"
    assert go_sum(["nope"]) is None


def test_min_resources_reads_requests_else_limits_of_containers_only():
    text = _job({"Master": (1, {"resources": {"limits": {"cpu": "2"}}}),
                 "Worker": (2, {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "1Gi"}}})})
    assert operator_min_resources(_convert(text).job, 3) == ({"cpu": "4"}, True)
    # an empty requests map is a requests map: the operator then skipped that container's limits
    text = _job({"Master": (1, {"resources": {"requests": {}, "limits": {"cpu": "2"}}})})
    assert operator_min_resources(_convert(text).job, 1) == ({}, True)


def test_a_partial_gang_of_unlike_types_depends_on_an_order_the_operator_did_not_fix():
    text = _job({"Master": (1, {"resources": {"requests": {"cpu": "1"}}}),
                 "Worker": (3, {"resources": {"requests": {"cpu": "2"}}})}, {"minAvailable": 2})
    conv = _convert(text, scheduler="scheduler-plugins")
    (pg,) = conv.companions
    assert pg["spec"] == {"minMember": 2, "minResources": {"cpu": "3"}}
    assert "JS091" in {n.code for n in conv.notes}


def test_scheduler_plugins_labels_every_pod_and_keeps_a_scheduler_you_named():
    conv = _convert((FIXTURES / "scheduling/scheduler-plugins-tfjob/input.yaml").read_text(),
                    scheduler="scheduler-plugins", gang_scheduler_name="scheduler-plugins-scheduler")
    pods = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    assert {n: p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] for n, p in pods.items()} == \
        dict.fromkeys(pods, "wide-deep-gang")
    assert {n: p["spec"]["schedulerName"] for n, p in pods.items()} == \
        {"chief": "scheduler-plugins-scheduler", "ps": "scheduler-plugins-scheduler", "worker": "my-own-scheduler"}
    (pg,) = conv.companions
    # limits only: chief 500m/1Gi + 2 ps 500m/512Mi + 2 workers 1/2Gi
    assert pg["spec"] == {"minMember": 5, "minResources": {"cpu": "3500m", "memory": "6Gi"}, "scheduleTimeoutSeconds": 600}


@pytest.mark.parametrize("scheduler, policy, keeps_order", [
    ("scheduler-plugins", None, False),              # the operator's gang: every pod, for every job
    ("scheduler-plugins", {"minAvailable": 1}, True),  # the master alone is the gang: it can start first
    ("volcano", None, False),                        # Volcano's PodGroup too held every job
    ("volcano", {"queue": "q"}, False),
    ("kueue", {"queue": "q"}, True),
])
def test_a_gang_larger_than_the_first_pods_gives_up_the_start_order(scheduler, policy, keeps_order):
    text = _job({"Master": (1, {}), "Worker": (2, {})}, policy)
    conv = _convert(text, scheduler=scheduler)
    worker = next(rj for rj in conv.jobset["spec"]["replicatedJobs"] if rj["name"] == "worker")
    assert ("dependsOn" in worker) is keeps_order
    assert ("JS092" in {n.code for n in conv.notes}) is not keeps_order


def test_gang_scheduler_name_is_the_scheduler_plugins_flag():
    with pytest.raises(UsageError):
        ConvertOptions(scheduler="volcano", gang_scheduler_name="other")
    with pytest.raises(UsageError):
        ConvertOptions(scheduler="scheduler-plugins", gang_scheduler_name="Volcano")


@pytest.mark.parametrize("scheduler", ["volcano", "scheduler-plugins", "yunikorn"])
def test_a_job_without_a_name_keeps_no_gang_or_is_refused_when_it_asked_for_one(scheduler):
    """The operator's gang was named after the job; a generateName job or Katib trial has no name here. With no
    schedulingPolicy it converts without a gang (JS095); with one the user asked for the gang: refused."""
    text = _job({"Master": (1, {}), "Worker": (2, {})}).replace("name: j\n", "generateName: j-\n")
    conv = _convert(text, scheduler=scheduler)
    assert not conv.companions and "JS095" in {n.code for n in conv.notes}
    assert next(rj for rj in conv.jobset["spec"]["replicatedJobs"] if rj["name"] == "worker")["dependsOn"]
    text = _job({"Worker": (2, {})}, {"minAvailable": 2}).replace("name: j\n", "generateName: j-\n")
    result = convert_text(text, "job.yaml", ConvertOptions(scheduler=scheduler))
    assert result.errors and "use --name" in str(result.errors[0]), scheduler


def test_yunikorn_task_groups_of_the_replica_count_are_guarded_by_check(tmp_path):
    work, text = converted_in_place(tmp_path, (FIXTURES / "scheduling/yunikorn-tfjob/input.yaml").read_text())
    assert "yunikorn.apache.org/task-groups worker minMember" in text
    assert "applicationId: tf_job_20240521_001" in text
    (work / "job.yaml").write_text(set_replicas(text, "worker", 6))
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.FINDINGS and "task-groups worker minMember" in res.stdout, res.stdout


def test_scheduler_yunikorn_writes_task_groups_from_schedulingPolicy():
    conv = _convert((FIXTURES / "scheduling/yunikorn-pytorchjob/input.yaml").read_text(), scheduler="yunikorn")
    pods = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    groups = json.loads(pods["master"]["metadata"]["annotations"]["yunikorn.apache.org/task-groups"])
    assert [(g["name"], g["minMember"], g["minResource"]) for g in groups] == [
        ("master", 1, {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}),
        ("worker", 3, {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"})]
    assert groups[1]["tolerations"][0]["key"] == "nvidia.com/gpu"
    for name, pod in pods.items():
        assert pod["spec"]["schedulerName"] == "yunikorn" and pod["spec"]["priorityClassName"] == "training-high"
        assert pod["metadata"]["labels"] == {"yunikorn.apache.org/app-id": "bert-pretrain",
                                             "yunikorn.apache.org/queue": "root.nlp.batch"}
        ann = pod["metadata"]["annotations"]
        assert ann["yunikorn.apache.org/task-group-name"] == name
        assert ann["yunikorn.apache.org/schedulingPolicyParameters"] == "placeholderTimeoutInSeconds=900"
    # YuniKorn's placeholders hold the gang, so the workers may still wait for the master
    assert next(rj for rj in conv.jobset["spec"]["replicatedJobs"] if rj["name"] == "worker")["dependsOn"]


def test_scheduler_yunikorn_joins_pods_without_an_id_to_the_application_the_others_name():
    """The launcher's labels were pruned (yunikorn-split): under --scheduler yunikorn it joins the workers'
    application rather than one named after the JobSet, which would split the gang in two."""
    conv = _convert((FIXTURES / "scheduling/yunikorn-split/input.yaml").read_text(), scheduler="yunikorn")
    pods = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    assert pods["worker"]["metadata"]["labels"]["applicationId"] == "mpi_job_pi"
    assert pods["launcher"]["metadata"]["labels"] == {"yunikorn.apache.org/app-id": "mpi_job_pi"}
    (note,) = [n for n in conv.notes if n.code == "JS094"]
    assert "application id mpi_job_pi (the one your templates name)" in note.message
    # when the templates name none, the JobSet's name joins them
    text = (FIXTURES / "scheduling/yunikorn-split/input.yaml").read_text().replace("applicationId: mpi_job_pi", "tier: x")
    conv = _convert(text, scheduler="yunikorn")
    assert {rj["template"]["spec"]["template"]["metadata"]["labels"].get("yunikorn.apache.org/app-id")
            for rj in conv.jobset["spec"]["replicatedJobs"]} == {"pi"}


def test_mpi_operator_made_its_own_podgroup():
    """mpi-operator v0.8 (podgroup.go): the schedulerName set over yours, a timeout of 0 when none was given,
    and minResources per resource (requests, else limits) with the launcher counted first."""
    text = (FIXTURES / "scheduling/scheduler-plugins-mpijob/input.yaml").read_text()
    text = text.replace('      minResources:\n        cpu: "6"\n        nvidia.com/gpu: "2"\n', "")
    text = text.replace("      scheduleTimeoutSeconds: 300\n", "").replace("minAvailable: 3", "minAvailable: 2")
    text = text.replace("          containers:\n            - name: launcher", "          schedulerName: mine\n"
                        "          containers:\n            - name: launcher")
    conv = _convert(text, scheduler="scheduler-plugins", accept_mpi_ssh=True)
    (pg,) = [c for c in conv.companions if c["kind"] == "PodGroup"]
    assert pg["spec"] == {"minMember": 2, "minResources": {"nvidia.com/gpu": "1"}, "scheduleTimeoutSeconds": 0}
    assert {rj["template"]["spec"]["template"]["spec"]["schedulerName"] for rj in conv.jobset["spec"]["replicatedJobs"]} \
        == {"scheduler-plugins"}


def _volcano_mpi(text: str):
    conv = _convert(text, scheduler="volcano")
    (pg,) = [c for c in conv.companions if c["kind"] == "PodGroup"]
    pods = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    return conv, pg, pods


def test_volcano_for_mpijob_v2beta1_follows_mpi_operators_podgroup():
    """mpi-operator v0.8's VolcanoCtrl (podgroup.go), not the training operator's: the queue from the MPIJob's
    annotation, the priority class from the launcher's template, minResources per pod (requests, else limits),
    schedulerName set over the user's, the group-name annotation and no volcano.sh/task-spec."""
    conv, pg, pods = _volcano_mpi((FIXTURES / "scheduling/volcano-mpijob/input.yaml").read_text())
    assert pg["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert pg["metadata"] == {"name": "nccl-allreduce", "namespace": "research"}
    assert pg["spec"] == {"minMember": 3, "queue": "gpu-queue", "priorityClassName": "research-high",
                          "minResources": {"cpu": "64500m", "memory": "513Gi", "nvidia.com/gpu": "16"}}
    for pod in pods.values():
        assert pod["spec"]["schedulerName"] == "volcano"  # the worker's default-scheduler too, as mpi-operator did
        assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "nccl-allreduce"}
    (note,) = [n for n in conv.notes if n.code == "JS043"]
    assert "mpi-operator's rules" in note.message


def test_volcano_for_mpijob_v2beta1_schedulingPolicy_wins_and_a_smaller_gang_counts_the_launcher_first():
    text = (FIXTURES / "scheduling/volcano-mpijob/input.yaml").read_text().replace(
        "    cleanPodPolicy: Running\n",
        "    cleanPodPolicy: Running\n    schedulingPolicy:\n      queue: q2\n      priorityClass: low\n"
        "      minAvailable: 2\n      scheduleTimeoutSeconds: 60\n")
    _, pg, _ = _volcano_mpi(text)
    # launcher + 1 worker (equal priorities in the cluster: the workers are the lower); no timeout for Volcano
    assert pg["spec"] == {"minMember": 2, "queue": "q2", "priorityClassName": "low",
                          "minResources": {"cpu": "32500m", "memory": "257Gi", "nvidia.com/gpu": "8"}}
    _, pg, _ = _volcano_mpi(text.replace("minAvailable: 2", "minAvailable: 0"))
    assert pg["spec"] == {"minMember": 0, "queue": "q2", "priorityClassName": "low"}  # no sum for a gang of 0
    bare = text.replace("    schedulingPolicy:\n      queue: q2\n      priorityClass: low\n", "    schedulingPolicy:\n")
    bare = bare.replace("  annotations:\n    scheduling.volcano.sh/queue-name: gpu-queue\n", "")
    bare = bare.replace("          priorityClassName: research-high\n", "")
    _, pg, _ = _volcano_mpi(bare)
    assert "queue" not in pg["spec"] and "priorityClassName" not in pg["spec"]  # the CRD defaults the queue
    _, pg, _ = _volcano_mpi(bare.replace("          schedulerName: default-scheduler\n",
                                         "          schedulerName: default-scheduler\n          priorityClassName: w\n"))
    assert pg["spec"]["priorityClassName"] == "w"  # the workers' when the launcher names none
