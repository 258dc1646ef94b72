"""Kubeflow Trainer v2.3.0 on the ``trainer`` stack (tests/e2e/stack.py): what the real controller builds.

The ground truth for kf2jobset's second target (TrainJob ``trainer.kubeflow.org/v1alpha1``):
the unmodified Trainer controller manager with its webhooks on, its CRDs and built-in
ClusterTrainingRuntimes from github.com/kubeflow/trainer/v2@v2.3.0 (``manifests/base``), the JobSet v0.12.0
controller and the Job controller. No pod runs unless a test starts the node agent.

(a) A TrainJob on the built-in ``torch-distributed`` runtime with ``spec.trainer`` becomes a JobSet: one
    ``node`` replicatedJob sized by ``numNodes``, the trainer fields on the ``node`` container, the
    ``PET_*`` env and port the torch plugin adds; how ``PET_NPROC_PER_NODE`` is derived; no ``PET_*`` at
    all without ``spec.trainer``; TrainJob labels are not copied; pod hostnames/subdomain; ``runtimePatches``
    (JobSet metadata, pod metadata and spec fields) land on the JobSet.
(b) A namespaced TrainingRuntime (``trainer.kubeflow.org/framework`` label, no ``mlPolicy``) holding the
    JobSet kf2jobset emits today for fixtures/pytorchjob/master-workers: the TrainJob's JobSet keeps both
    replicatedJobs as written (replicas, dependsOn, env, ports, successPolicy); ``spec.trainer`` does not
    touch a runtime without the trainer ancestor label; a replicatedJob's completions follow its
    parallelism (default 1).
(c) The webhooks (and the CRD's CEL rules) refuse what the real ones refuse; each refused object has an
    admitted twin, so the check can fail both ways. The "unknown replicatedJob/container" patch rules never
    fire (the patch is merged first): such a patch is admitted and adds the job. Suspend/resume conditions,
    runtimePatches rewritable only while suspended, ``spec.trainer`` immutable.
(d) With the node agent running the pods: the torch TrainJob's two nodes rendezvous at ``PET_MASTER_ADDR``
    / ``PET_MASTER_PORT`` and the TrainJob reaches ``Complete``; kf2jobset's converted PyTorchJob in a
    TrainingRuntime runs its DDP probe (every worker reaches the master) and reaches ``Complete`` too; a
    failing pod makes the TrainJob ``Failed`` with the JobSet's reason and message; the real ``torchrun``
    (torch venv of tools/install-frameworks.sh), started with nothing but the script, takes nnodes, nproc,
    node rank and master from the ``PET_*`` values: 2 nodes x 2 processes all_reduce over gloo; real JAX
    on ``jax-distributed`` meets at ``JAX_COORDINATOR_ADDRESS`` (3 processes, allgather).

Without that module in the Go module cache (tests/upstream.py): skipped with that reason. A stack that does
not start: FAIL.
"""
from __future__ import annotations

import json
import re
import time

import pytest
import yaml

from .ddp_probe import DDP_PROBE, check_ddp, last_json
from .frameworks_harness import framework_pythons
from .stack import wait_for
from .trainer_harness import (FRAMEWORK, JS, PY, TJ, conditions, container, converted_jobset, create_runtime, env_map,
                              jobset_of, plain_runtime, rjobs, trainjob, wait_complete)
from .trainer_harness import agent_for, core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)


ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
PET = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")


# ---------------------------------------------------------------------------------------------
# (a) torch-distributed


def test_torch_distributed_trainjob_becomes_jobset(custom, core, tns):
    name = "torch-two"
    trainer = {"numNodes": 2, "image": "kf2jobset.test/torch:1", "command": ["python", "train.py"],
               "args": ["--epochs", "3"], "env": [{"name": "EPOCHS", "value": "3"}]}
    created = custom.create_namespaced_custom_object(
        *TJ[:2], tns, TJ[2], trainjob(name, trainer=trainer, labels={"kf2jobset.dev/team": "vision"}))
    # admission filled the defaults in
    assert created["spec"]["runtimeRef"] == {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                                             "kind": "ClusterTrainingRuntime"}
    assert created["spec"]["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    assert created["spec"]["suspend"] is False

    js = jobset_of(custom, tns, name)
    (owner,) = js["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("TrainJob", name, created["metadata"]["uid"], True)
    assert "kf2jobset.dev/team" not in (js["metadata"].get("labels") or {})  # TrainJob labels are not copied
    assert js["spec"]["suspend"] is False

    jobs = rjobs(js)
    assert list(jobs) == ["node"]
    node = jobs["node"]
    assert node["replicas"] == 1
    assert node["template"]["metadata"]["labels"][ANCESTOR] == "trainer"
    job_spec = node["template"]["spec"]
    assert job_spec["parallelism"] == job_spec["completions"] == trainer["numNodes"]
    assert job_spec["completionMode"] == "Indexed"

    c = container(node, "node")
    assert c["image"] == trainer["image"] and c["command"] == trainer["command"] and c["args"] == trainer["args"]
    env = env_map(c)
    assert [e["name"] for e in c["env"]][0] == "EPOCHS" and env["EPOCHS"] == "3"  # the user's env first
    assert set(PET) <= set(env), env
    print("\n[trainer] torch-distributed node env: " + json.dumps({k: env[k] for k in PET}))
    assert env["PET_NNODES"] == str(trainer["numNodes"])
    assert env["PET_NODE_RANK"] == {"fieldRef": {"fieldPath": COMPLETION_INDEX}}
    assert env["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"  # <jobset>-<rjob>-<job>-<pod>.<subdomain>
    assert env["PET_MASTER_PORT"].isdigit()
    assert {"containerPort": int(env["PET_MASTER_PORT"]), "protocol": "TCP"} in c["ports"]
    assert env["PET_NPROC_PER_NODE"] == "1"  # no GPU and no CPU resources: the CPU count, at least 1
    assert not any(k.startswith(("MASTER_", "RANK", "WORLD_SIZE")) for k in env)  # torchrun's PET_* only

    # the Job controller makes the pods: hostnames <jobset>-node-0-<index>, subdomain = the JobSet's Service
    pods = wait_for(lambda: (lambda ps: ps if len(ps) == 2 else None)(core.list_namespaced_pod(tns).items), 30,
                    what="the two node pods")
    assert sorted((p.spec.hostname, p.spec.subdomain) for p in pods) == [(f"{name}-node-0-{i}", name) for i in range(2)]
    svc = core.read_namespaced_service(name, tns)
    assert svc.spec.cluster_ip == "None" and svc.spec.publish_not_ready_addresses is True

    snap = core.read_namespaced_config_map(f"{name}-runtime-snapshot", tns)  # the runtime as it was used
    assert snap.metadata.owner_references[0].uid == created["metadata"]["uid"]
    assert yaml.safe_load(snap.data["runtime"])["metadata"]["name"] == "torch-distributed"


@pytest.mark.parametrize("trainer, expected", [
    ({"resourcesPerNode": {"requests": {"cpu": "3"}}}, "3"),  # CPU requests, no GPU: the CPU count
    ({"numProcPerNode": 4}, "4"),
    ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "2"}}}, "auto"),  # a GPU: torchrun decides
], ids=["cpu-requests", "explicit", "gpu"])
def test_torch_nproc_per_node(custom, tns, trainer, expected):
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("nproc", trainer=trainer))
    c = container(rjobs(jobset_of(custom, tns, "nproc"))["node"], "node")
    assert env_map(c)["PET_NPROC_PER_NODE"] == expected
    if "resourcesPerNode" in trainer:  # resourcesPerNode lands on the node container
        assert c["resources"] == trainer["resourcesPerNode"]


def test_torch_without_trainer_gets_no_pet_env(custom, tns):
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("bare"))
    c = container(rjobs(jobset_of(custom, tns, "bare"))["node"], "node")
    # the torch plugin writes PET_* and the port only through spec.trainer: without it, nothing
    assert not any(k.startswith("PET_") for k in env_map(c)), c
    assert not c.get("ports")


def test_runtime_patches_land_on_the_jobset(custom, tns):
    patch = {"manager": "kf2jobset.dev/convert", "trainingRuntimeSpec": {"template": {
        "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}, "annotations": {"kf2jobset.dev/a": "1"}},
        "spec": {"replicatedJobs": [{"name": "node", "template": {
            "metadata": {"labels": {"job-label": "1"}},
            "spec": {"template": {
                "metadata": {"labels": {"pod-label": "1"}, "annotations": {"pod-annotation": "1"}},
                "spec": {
                    "serviceAccountName": "trainer-sa",
                    "nodeSelector": {"pool": "gpu"},
                    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                }}}}}]}}}}
    created = custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("patched", trainer={}, patches=[patch]))
    assert created["spec"]["runtimePatches"][0].get("time")  # the defaulter stamps when a manager wrote it
    js = jobset_of(custom, tns, "patched")
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "q"
    assert js["metadata"]["annotations"]["kf2jobset.dev/a"] == "1"
    node = rjobs(js)["node"]
    assert node["template"]["metadata"]["labels"] == {"job-label": "1", ANCESTOR: "trainer"}
    pod = node["template"]["spec"]["template"]
    assert pod["metadata"] == {"labels": {"pod-label": "1"}, "annotations": {"pod-annotation": "1"}}
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "trainer-sa" and spec["nodeSelector"] == {"pool": "gpu"}
    assert spec["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    assert spec["volumes"] == [{"name": "data", "emptyDir": {}}]
    c = container(node, "node")
    assert c["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert set(PET) <= set(env_map(c))  # trainer: {} is enough for the torch plugin


def test_v1_env_through_trainer_env(custom, tns):
    """v1's names are not reserved: they can ride in spec.trainer.env, valueFrom included, ahead of PET_*."""
    name = "v1env"
    index = {"fieldRef": {"apiVersion": "v1", "fieldPath": COMPLETION_INDEX}}
    env = [{"name": "MASTER_ADDR", "value": f"{name}-node-0-0.{name}"}, {"name": "MASTER_PORT", "value": "23456"},
           {"name": "WORLD_SIZE", "value": "2"}, {"name": "RANK", "valueFrom": index},
           {"name": "JOBSET", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}}},
           {"name": "ADDR", "value": "$(JOBSET)-node-0-0.$(JOBSET)"}]
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(name, trainer={"numNodes": 2, "env": env}))
    got = container(rjobs(jobset_of(custom, tns, name))["node"], "node")["env"]
    assert [e["name"] for e in got] == [e["name"] for e in env] + list(PET)  # the user's env first, in order
    for want, have in zip(env, got, strict=False):
        if "valueFrom" in want:  # Trainer rebuilds the EnvVar: fieldRef.apiVersion is dropped (the API default)
            assert have["valueFrom"]["fieldRef"]["fieldPath"] == want["valueFrom"]["fieldRef"]["fieldPath"]
        else:
            assert have == want


@pytest.mark.parametrize("length, builds", [(48, True), (49, False)])
def test_name_length_limit_is_the_jobsets_and_shows_only_at_reconcile(custom, core, tns, length, builds):
    """A TrainJob name may have 63 characters, but the JobSet webhook wants <name>-node-0-0-xxxxx (a pod name)
    within 63: <name> + 15 with one `node` replicatedJob of 1 pod. Too long: the TrainJob is admitted, no
    JobSet appears, no status condition, only an event."""
    name = "t" * (length - 1) + "z"
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(name, trainer={}))
    if builds:
        assert jobset_of(custom, tns, name)["metadata"]["name"] == name
        return

    def refused():
        return [e for e in core.list_namespaced_event(tns).items
                if e.involved_object.name == name and e.reason == "TrainJobResourcesCreationFailed"] or None
    (event, *_) = wait_for(refused, 30, what="a TrainJobResourcesCreationFailed event")
    print(f"\n[trainer] {event.message}")
    assert 'admission webhook "vjobset.kb.io" denied the request' in event.message
    assert "JobSet name is too long" in event.message
    assert not custom.list_namespaced_custom_object(*JS[:2], tns, JS[2])["items"]
    assert "Failed" not in conditions(custom.get_namespaced_custom_object(*TJ[:2], tns, TJ[2], name))


def test_custom_subdomain_is_not_in_the_torch_master_address(custom, core, tns):
    """The torch plugin writes <name>-node-0-0.<name> whatever the runtime's network.subdomain: with a custom
    subdomain the pods (and the headless Service) use it, and PET_MASTER_ADDR names a Service that does not exist."""
    rt = _ancestor_runtime()
    rt["metadata"]["name"] = "custom-subdomain"
    rt["spec"]["template"]["spec"]["network"] = {"subdomain": "custom"}
    create_runtime(custom, tns, rt)
    name = "subj"
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(
        name, runtime="custom-subdomain", kind="TrainingRuntime", trainer={"numNodes": 2}))
    env = env_map(container(rjobs(jobset_of(custom, tns, name))["node"], "node"))
    assert env["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"
    pods = wait_for(lambda: (lambda ps: ps if len(ps) == 2 else None)(core.list_namespaced_pod(tns).items), 30,
                    what="the two node pods")
    assert {p.spec.subdomain for p in pods} == {"custom"}
    assert sorted(s.metadata.name for s in core.list_namespaced_service(tns).items) == ["custom"]


# ---------------------------------------------------------------------------------------------
# (b) a plain JobSet template in a namespaced TrainingRuntime


def test_plain_runtime_keeps_both_replicated_jobs(custom, tns):
    js = converted_jobset()
    want = rjobs(js)
    assert list(want) == ["master", "worker"]
    create_runtime(custom, tns, plain_runtime("kf2jobset-pytorch", js))
    name = js["metadata"]["name"]
    # spec.trainer without the ancestor label in the runtime: nothing to apply it to
    tj = trainjob(name, runtime="kf2jobset-pytorch", kind="TrainingRuntime", labels={"team": "vision"},
                  trainer={"numNodes": 7, "image": "ignored:1", "env": [{"name": "IGNORED", "value": "1"}]})
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], tj)
    got = jobset_of(custom, tns, name)
    assert got["metadata"]["labels"] == {"kf2jobset.dev/runtime-label": "kept"}  # the runtime's, not the TrainJob's
    assert got["spec"]["successPolicy"] == js["spec"]["successPolicy"]
    assert {k: got["spec"]["network"][k] for k in js["spec"]["network"]} == js["spec"]["network"]
    have = rjobs(got)
    assert list(have) == list(want)
    for rname, w in want.items():
        h = have[rname]
        assert h["replicas"] == w["replicas"], rname
        assert h.get("dependsOn") == w.get("dependsOn"), rname
        assert ANCESTOR not in (h["template"].get("metadata") or {}).get("labels", {})
        for k, v in w["template"]["spec"].items():
            if k != "template":
                assert h["template"]["spec"][k] == v, (rname, k)
        wpod, hpod = w["template"]["spec"]["template"]["spec"], h["template"]["spec"]["template"]["spec"]
        assert hpod["restartPolicy"] == wpod["restartPolicy"]
        assert [c["name"] for c in hpod["containers"]] == [c["name"] for c in wpod["containers"]]
        for wc, hc in zip(wpod["containers"], hpod["containers"], strict=False):
            assert hc["image"] == wc["image"] and hc["command"] == wc["command"], rname
            assert hc["env"] == wc["env"], rname  # nothing added, nothing reordered: no IGNORED, no PET_* rewrite
            assert hc["ports"] == [dict(p, protocol="TCP") for p in wc["ports"]], rname


def test_plain_runtime_completions_follow_parallelism(custom, tns):
    def rj(name, replicas, job_spec):
        return {"name": name, "replicas": replicas, "template": {"spec": {**job_spec, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}}
    js = {"spec": {"replicatedJobs": [
        rj("only-completions", 2, {"completions": 3}),
        rj("unequal", 1, {"completions": 4, "parallelism": 2}),
        rj("equal", 1, {"completions": 3, "parallelism": 3}),
    ]}}
    create_runtime(custom, tns, plain_runtime("counts", js, framework="tensorflow"))
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("counts", runtime="counts", kind="TrainingRuntime"))
    have = rjobs(jobset_of(custom, tns, "counts"))
    got = {n: (r["replicas"], r["template"]["spec"]["completions"], r["template"]["spec"]["parallelism"])
           for n, r in have.items()}
    print(f"\n[trainer] (replicas, completions, parallelism) after Trainer: {got}")
    # Trainer sets both to the replicatedJob's parallelism (1 when unset); replicas are kept
    assert got == {"only-completions": (2, 1, 1), "unequal": (1, 2, 2), "equal": (1, 3, 3)}


# ---------------------------------------------------------------------------------------------
# (c) admission: what the webhooks (and the CRDs' CEL rules) refuse


def _ancestor_runtime(replicas: int = 1, container_name: str = "node") -> dict:
    rj = {"name": "node", "replicas": replicas, "template": {
        "metadata": {"labels": {ANCESTOR: "trainer"}},
        "spec": {"template": {"spec": {"containers": [{"name": container_name, "image": "x"}]}}}}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
            "metadata": {"name": "probe-runtime", "labels": {FRAMEWORK: "torch"}},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [rj]}}}}


def _patch(manager="kf2jobset.dev/convert", rjob="node", ctr: dict | None = None) -> list:
    spec = {"containers": [{"name": "node", **(ctr or {})}]}
    return [{"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
        {"name": rjob, "template": {"spec": {"template": {"spec": spec}}}}]}}}}]


VOLUME_MOUNT = {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}

# (id, plural, refused, admitted twin, who refuses ("webhook name" or "schema"), message fragment)
ADMISSION = [
    ("runtime-trainer-replicas", "trainingruntimes", _ancestor_runtime(replicas=2), _ancestor_runtime(),
     "validator.trainingruntime.trainer.kubeflow.org", "always must be 1"),
    ("runtime-trainer-no-node-container", "trainingruntimes", _ancestor_runtime(container_name="trainer"),
     _ancestor_runtime(), "validator.trainingruntime.trainer.kubeflow.org",
     "must contain the required container for the ancestor: trainer"),
    ("torch-reserved-env", "trainjobs", trainjob("probe", trainer={"env": [{"name": "PET_NNODES", "value": "2"}]}),
     trainjob("probe", trainer={"env": [{"name": "NNODES", "value": "2"}]}),
     "validator.trainjob.trainer.kubeflow.org", "must not have reserved envs"),
    ("xgboost-reserved-env", "trainjobs",
     trainjob("probe", runtime="xgboost-distributed", trainer={"env": [{"name": "DMLC_TASK_ID", "value": "0"}]}),
     trainjob("probe", runtime="xgboost-distributed", trainer={"env": [{"name": "TASK_ID", "value": "0"}]}),
     "validator.trainjob.trainer.kubeflow.org", "DMLC_TASK_ID is reserved for the XGBoost runtime"),
    ("mpi-reserved-env", "trainjobs",
     trainjob("probe", runtime="deepspeed-distributed",
              trainer={"env": [{"name": "OMPI_MCA_orte_default_hostfile", "value": "/h"}]}),
     trainjob("probe", runtime="deepspeed-distributed", trainer={"env": [{"name": "HOSTFILE", "value": "/h"}]}),
     "validator.trainjob.trainer.kubeflow.org", "must not have reserved envs"),
    ("patch-env-on-node", "trainjobs", trainjob("probe", patches=_patch(ctr={"env": [{"name": "A", "value": "1"}]})),
     trainjob("probe", patches=_patch(ctr=VOLUME_MOUNT)),
     "validator.trainjob.trainer.kubeflow.org", "must not have envs for the dataset-initializer, model-initializer, node"),
    ("patch-manager-not-domain-prefixed", "trainjobs", trainjob("probe", patches=_patch(manager="kf2jobset", ctr=VOLUME_MOUNT)),
     trainjob("probe", patches=_patch(ctr=VOLUME_MOUNT)),
     "validator.trainjob.trainer.kubeflow.org", "spec.runtimePatches.manager"),
    ("runtime-missing", "trainjobs", trainjob("probe", runtime="no-such-runtime"), trainjob("probe"),
     "validator.trainjob.trainer.kubeflow.org", "must be created before the TrainJob is created"),
    ("runtime-kind-unsupported", "trainjobs", trainjob("probe", kind="JobSet"), trainjob("probe", kind="ClusterTrainingRuntime"),
     "validator.trainjob.trainer.kubeflow.org", "unsupported runtime: JobSet.trainer.kubeflow.org"),
    ("name-not-rfc1035", "trainjobs", trainjob("1probe"), trainjob("probe1"),
     "schema", "metadata.name must match RFC 1035 DNS label format"),
    ("two-ml-policies", "trainingruntimes",
     {**_ancestor_runtime(), "spec": {**_ancestor_runtime()["spec"], "mlPolicy": {"torch": {}, "jax": {}}}},
     _ancestor_runtime(), "schema", "Only one of the policy can be configured"),
]


@pytest.mark.parametrize("plural, refused, admitted, who, fragment", [a[1:] for a in ADMISSION], ids=[a[0] for a in ADMISSION])
def test_admission_refuses_what_trainer_refuses(custom, tns, plural, refused, admitted, who, fragment):
    from kubernetes.client.rest import ApiException

    group, version = TJ[:2]
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(group, version, tns, plural, refused, dry_run="All")
    message = json.loads(err.value.body).get("message", "")
    print(f"\n[trainer] refused: {message}")
    if who == "schema":
        assert err.value.status == 422 and "admission webhook" not in message, message
    else:
        assert f'admission webhook "{who}" denied the request' in message, message
    assert fragment in message, message
    custom.create_namespaced_custom_object(group, version, tns, plural, admitted, dry_run="All")  # the twin passes


def test_patches_for_unknown_jobs_or_containers_are_admitted_and_add_them(custom, core, tns):
    """The webhook's "must not have replicated job / container that doesn't exist in the runtime" rules look
    at the runtime template *after* the patches were merged into it (strategic merge, keyed by name), so
    they never fire: the patch adds a replicatedJob (or a container) with only what the patch says."""
    sidecar = {"name": "sidecar", **VOLUME_MOUNT}
    patches = _patch(rjob="worker", ctr=VOLUME_MOUNT)
    patches[0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"].append(
        {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [sidecar]}}}}})
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("unknown", trainer={}, patches=patches))
    have = rjobs(jobset_of(custom, tns, "unknown"))
    # an added job sorts as if it were the runtime's first (Trainer restores the runtime's order by name)
    assert sorted(have) == ["node", "worker"]
    assert [c["name"] for c in have["worker"]["template"]["spec"]["template"]["spec"]["containers"]] == ["node"]
    assert "image" not in container(have["worker"], "node")
    # the added container is merged in by name (observed: placed before the runtime's node container)
    assert sorted(c["name"] for c in have["node"]["template"]["spec"]["template"]["spec"]["containers"]) == ["node", "sidecar"]
    assert "image" not in container(have["node"], "sidecar")

    def job_refused():  # the JobSet controller cannot make those Jobs (no image): an event says so
        events = [e for e in core.list_namespaced_event(tns).items if e.reason == "JobCreationFailed"]
        return events or None
    events = wait_for(job_refused, 30, what="a JobCreationFailed event")
    print(f"\n[trainer] {events[0].message}")
    assert any("image: Required value" in e.message for e in events)


def test_suspend_resume_and_what_an_update_may_change(custom, tns):
    from kubernetes.client.rest import ApiException

    suspended = trainjob("sus", trainer={"numNodes": 1})
    suspended["spec"] = {**suspended["spec"], "suspend": True}
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], suspended)
    assert jobset_of(custom, tns, "sus")["spec"]["suspend"] is True  # spec.suspend is copied to the JobSet

    def cond(status):
        def get():
            c = conditions(custom.get_namespaced_custom_object(*TJ[:2], tns, TJ[2], "sus")).get("Suspended")
            return c if c and c["status"] == status else None
        return wait_for(get, 30, what=f"Suspended={status}")
    c = cond("True")
    assert (c["reason"], c["message"]) == ("Suspended", "TrainJob is suspended")
    # while suspended a manager may rewrite its runtimePatches
    custom.patch_namespaced_custom_object(*TJ[:2], tns, TJ[2], "sus", {"spec": {"runtimePatches": [
        {"manager": "kf2jobset.dev/convert", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"l": "1"}}}}}]}})
    custom.patch_namespaced_custom_object(*TJ[:2], tns, TJ[2], "sus", {"spec": {"suspend": False}})
    c = cond("False")
    assert (c["reason"], c["message"]) == ("Resumed", "TrainJob is resumed")
    js = wait_for(lambda: (lambda j: j if j["spec"]["suspend"] is False else None)(jobset_of(custom, tns, "sus")), 30,
                  what="the JobSet resumed")
    assert js["metadata"]["labels"]["l"] == "1"  # a suspended JobSet is rebuilt from the patched runtime

    with pytest.raises(ApiException) as err:  # spec.trainer is immutable (CEL)
        custom.patch_namespaced_custom_object(*TJ[:2], tns, TJ[2], "sus", {"spec": {"trainer": {"numNodes": 2}}})
    assert err.value.status == 422 and "field is immutable" in err.value.body
    with pytest.raises(ApiException) as err:  # runtimePatches: only when suspended before or after the update
        custom.patch_namespaced_custom_object(*TJ[:2], tns, TJ[2], "sus", {"spec": {"runtimePatches": [
            {"manager": "kf2jobset.dev/convert"}]}})
    message = json.loads(err.value.body)["message"]
    assert 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request' in message
    assert "RuntimePatches can only be modified when the TrainJob is suspended" in message


# ---------------------------------------------------------------------------------------------
# (d) pods run (node agent): TrainJob status Complete


# test_nodeagent's DDP probe (a v1-style script: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), fed from the
# PET_* values Trainer injected and nothing else
TORCH_PROBE = "\n".join([
    "import os",
    "for v1, pet in (('RANK', 'PET_NODE_RANK'), ('WORLD_SIZE', 'PET_NNODES'), ('MASTER_ADDR', 'PET_MASTER_ADDR'),",
    "                ('MASTER_PORT', 'PET_MASTER_PORT')):",
    "    os.environ[v1] = os.environ[pet]",
]) + "\n" + DDP_PROBE


def test_torch_trainjob_runs_to_complete(custom, tns, agent_for):
    name, image = "torch-run", "kf2jobset.test/torch-probe:1"
    agent = agent_for({image: [PY, "-c", TORCH_PROBE]})
    t0 = time.monotonic()
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(
        name, trainer={"numNodes": 2, "image": image, "env": [{"name": "EPOCHS", "value": "1"}]}))
    final = wait_complete(custom, tns, name)
    print(f"\n[trainer] TrainJob Complete after {time.monotonic() - t0:.1f}s: {json.dumps(final['status'], indent=1)}")
    js = custom.get_namespaced_custom_object(*JS[:2], tns, JS[2], name)
    js_done = conditions(js)["Completed"]
    tj_done = conditions(final)["Complete"]
    assert js_done["status"] == "True"
    assert (tj_done["reason"], tj_done["message"]) == (js_done["reason"], js_done["message"])  # copied from the JobSet
    (node_status,) = final["status"]["jobsStatus"]
    assert node_status["name"] == "node" and node_status["succeeded"] == 1 and node_status["failed"] == 0

    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    assert sorted(runs) == [f"{name}-node-0-0", f"{name}-node-0-1"], sorted(runs)
    reports = {h: last_json(agent.log(tns, r.pod, "node")) for h, r in runs.items()}
    master_ip = runs[f"{name}-node-0-0"].pod_ip
    for h, r in reports.items():
        env = dict(runs[h].env)
        assert env["PET_NNODES"] == "2" and env["EPOCHS"] == "1", env
        assert r["hostname"] == h and r["master_ip"] == master_ip, r  # PET_MASTER_ADDR reaches node 0
        assert str(r["rank"]) == env["PET_NODE_RANK"] == h.rsplit("-", 1)[1]  # rank = completion index = pod index
    worker = reports[f"{name}-node-0-1"]
    assert reports[f"{name}-node-0-0"]["peers"]["1"]["peer_ip"] == worker["own_ip"] == runs[f"{name}-node-0-1"].pod_ip


def test_converted_pytorchjob_in_a_training_runtime_runs_to_complete(custom, tns, agent_for):
    js = converted_jobset()
    name = js["metadata"]["name"]
    create_runtime(custom, tns, plain_runtime("kf2jobset-pytorch", js))
    agent = agent_for({"registry.example.com/vision/resnet": [PY, "-c", DDP_PROBE]})
    t0 = time.monotonic()
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(name, runtime="kf2jobset-pytorch", kind="TrainingRuntime"))
    final = wait_complete(custom, tns, name)
    print(f"\n[trainer] converted PyTorchJob as a TrainJob Complete after {time.monotonic() - t0:.1f}s")
    master = f"{name}-master-0-0"
    m = check_ddp(agent, tns, master, [f"{name}-worker-{i}-0" for i in range(3)])
    assert m["master_addr"] == f"{master}.{name}"  # the JobSet is named after the TrainJob: addresses hold
    # successPolicy targets master (v1: the master's success is the job's): Complete once the master Job succeeded
    jobs = {s["name"]: s for s in final["status"]["jobsStatus"]}
    assert sorted(jobs) == ["master", "worker"] and jobs["master"]["succeeded"] == 1


def test_failing_trainjob_is_failed(custom, tns, agent_for):
    js = {"spec": {"replicatedJobs": [{"name": "trainer", "replicas": 1, "template": {"spec": {
        "backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never",
                                                 "containers": [{"name": "c", "image": "kf2jobset.test/fail:1"}]}}}}}]}}
    create_runtime(custom, tns, plain_runtime("fails", js, framework="tensorflow"))
    agent_for({"kf2jobset.test/fail": ["sh", "-c", "exit 3"]})
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob("fails", runtime="fails", kind="TrainingRuntime"))

    def failed():
        obj = custom.get_namespaced_custom_object(*TJ[:2], tns, TJ[2], "fails")
        c = conditions(obj).get("Failed")
        return obj if c and c["status"] == "True" else None
    final = wait_for(failed, 120, interval=0.5, what="TrainJob fails Failed")
    js_failed = conditions(custom.get_namespaced_custom_object(*JS[:2], tns, JS[2], "fails"))["Failed"]
    tj_failed = conditions(final)["Failed"]
    print(f"\n[trainer] Failed: {tj_failed}")
    assert (tj_failed["reason"], tj_failed["message"]) == (js_failed["reason"], js_failed["message"])  # the JobSet's
    assert "Complete" not in conditions(final)


TORCHRUN_SCRIPT = r"""
import json, os, socket
import torch
import torch.distributed as dist
dist.init_process_group("gloo")  # env:// as torchrun sets it up from the PET_* values
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
names = [None] * dist.get_world_size()
dist.all_gather_object(names, socket.gethostname())
line = "KF2JS-TORCHRUN " + json.dumps({"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": t.item(),
      "group_rank": int(os.environ["GROUP_RANK"]), "local_rank": int(os.environ["LOCAL_RANK"]), "hosts": names})
os.write(1, (line + "\n").encode())  # one write: the node's processes share the stdout pipe
dist.destroy_process_group()
"""


def test_real_torchrun_reads_the_pet_env(custom, tns, agent_for, tmp_path):
    """torch's own torchrun (tools/install-frameworks.sh venv), given no arguments but the script: it takes
    nnodes, nproc_per_node, node_rank, master_addr and master_port from the PET_* Trainer injected."""
    py = framework_pythons()["torch"]
    if not py.exists():
        pytest.fail(f"{py} missing: run `bash tools/install-frameworks.sh` (or KF2JOBSET_SKIP_E2E=1)", pytrace=False)
    script = tmp_path / "train.py"
    script.write_text(TORCHRUN_SCRIPT)
    name, image, nodes, nproc = "torchrun", "kf2jobset.test/torchrun:1", 2, 2
    agent = agent_for({image: [str(py), "-m", "torch.distributed.run", str(script)]})
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(
        name, trainer={"numNodes": nodes, "numProcPerNode": nproc, "image": image}))
    wait_complete(custom, tns, name, timeout=300, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    assert sorted(runs) == [f"{name}-node-0-{i}" for i in range(nodes)]
    reports = []
    for host, run in runs.items():
        # the processes of a node share one log: read each report by its marker, not by line
        lines = re.findall(r"KF2JS-TORCHRUN (\{[^{}]*\})", agent.log(tns, run.pod, "node"))
        assert len(lines) == nproc, agent.log(tns, run.pod, "node")[-3000:]
        for r in map(json.loads, lines):
            assert r["group_rank"] == int(dict(run.env)["PET_NODE_RANK"]) == int(host.rsplit("-", 1)[1])
            reports.append(r)
    world = nodes * nproc
    assert sorted(r["rank"] for r in reports) == list(range(world))  # global rank = node rank * nproc + local rank
    assert all(r["world"] == world and r["sum"] == world * (world + 1) / 2 for r in reports)
    for r in reports:
        assert r["rank"] == r["group_rank"] * nproc + r["local_rank"]
        assert r["hosts"] == [f"{name}-node-0-{i // nproc}" for i in range(world)]


JAX_SCRIPT = r"""
import json, os, socket
import jax
import numpy as np
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_cpu_collectives_implementation", "gloo")
# jax reads JAX_COORDINATOR_ADDRESS itself; the process count and id are Trainer's names, passed on here
jax.distributed.initialize(num_processes=int(os.environ["JAX_NUM_PROCESSES"]), process_id=int(os.environ["JAX_PROCESS_ID"]))
from jax._src import distributed as jax_distributed  # where initialize() keeps the address it used
from jax.experimental import multihost_utils
ids = np.asarray(multihost_utils.process_allgather(np.array([jax.process_index()], dtype=np.int32))).ravel().tolist()
print("KF2JS-JAX " + json.dumps({"index": jax.process_index(), "count": jax.process_count(), "ids": ids,
      "coordinator": jax_distributed.global_state.coordinator_address, "host": socket.gethostname()}), flush=True)
multihost_utils.sync_global_devices("kf2js-done")
jax.distributed.shutdown()
"""


def test_real_jax_on_jax_distributed(custom, tns, agent_for, tmp_path):
    """JAX (frameworks venv) on the built-in jax-distributed runtime: 3 processes meet at the coordinator
    address Trainer wrote and allgather their ids."""
    py = framework_pythons()["jax"]
    if not py.exists():
        pytest.fail(f"{py} missing: run `bash tools/install-frameworks.sh` (or KF2JOBSET_SKIP_E2E=1)", pytrace=False)
    script = tmp_path / "jax_train.py"
    script.write_text(JAX_SCRIPT)
    name, image, nodes = "jaxrun", "kf2jobset.test/jax:1", 3
    agent = agent_for({image: [str(py), str(script)]})
    custom.create_namespaced_custom_object(*TJ[:2], tns, TJ[2], trainjob(
        name, runtime="jax-distributed", trainer={"numNodes": nodes, "image": image}))
    wait_complete(custom, tns, name, timeout=300, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    assert sorted(runs) == [f"{name}-node-0-{i}" for i in range(nodes)]
    for host, run in runs.items():
        env = dict(run.env)
        (line,) = [ln.split("KF2JS-JAX ", 1)[1] for ln in agent.log(tns, run.pod, "node").splitlines() if "KF2JS-JAX " in ln]
        r = json.loads(line)
        assert r["coordinator"] == env["JAX_COORDINATOR_ADDRESS"] == f"{name}-node-0-0.{name}:29500"
        assert r["index"] == int(env["JAX_PROCESS_ID"]) == int(host.rsplit("-", 1)[1]) and r["host"] == host
        assert r["count"] == int(env["JAX_NUM_PROCESSES"]) == nodes and r["ids"] == list(range(nodes))
