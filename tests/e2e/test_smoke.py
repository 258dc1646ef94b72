"""Smoke tests of the ground-truth stack (tests/e2e/stack.py).

(a) The real Training Operator v1.9.4: its webhook refuses a lower-case replica key; a valid
    PyTorchJob (master + 2 workers) gets 3 Pods and 3 Services whose labels and env are what the
    operator itself wrote.
(b) The real JobSet v0.12.0 + Job controllers: ``kf2jobset convert`` output is admitted by the
    JobSet webhooks; the JobSet controller creates child Jobs and the Job controller their Pods,
    labelled ``jobset.sigs.k8s.io/*``.

No kubelet runs: Pods stay Pending. That is expected at this stage.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .stack import wait_for

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "pytorchjob" / "master-workers" / "input.yaml"
KF = ("kubeflow.org", "v1", "pytorchjobs")
JS = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
OPERATOR_LABELS = ("job-name", "operator-name", "replica-type", "replica-index", "job-role")


def _pytorchjob(namespace: str, workers: int = 2) -> dict:
    job = yaml.safe_load(FIXTURE.read_text())
    job["metadata"]["namespace"] = namespace
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = workers
    return job


def _env(container) -> dict[str, str]:
    return {e.name: e.value for e in (container.env or [])}


def _at_least(list_items, n: int, what: str, timeout: float = 60.0) -> list:
    """Poll ``list_items()`` until it returns at least ``n`` objects."""
    return wait_for(lambda: (lambda items: items if len(items) >= n else None)(list_items()), timeout, what=what)


def _show(title: str, obj) -> None:
    print(f"\n--- {title}\n{json.dumps(obj, indent=1, sort_keys=True, default=str)}")


def test_operator_webhook_rejects_lowercase_replica_key(api, namespace):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    job = _pytorchjob(namespace)
    specs = job["spec"]["pytorchReplicaSpecs"]
    specs["worker"] = specs.pop("Worker")
    with pytest.raises(ApiException) as exc:
        client.CustomObjectsApi(api).create_namespaced_custom_object(*KF[:2], namespace, KF[2], job)
    body = json.loads(exc.value.body)
    _show("refusal", body)
    # controller-runtime turns a validator's error list into 403 Forbidden (not 422 Invalid)
    assert exc.value.status == 403, body
    msg = body["message"]
    assert 'admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request' in msg
    assert "spec.pytorchReplicaSpecs[worker]" in msg and 'supported values: "Master", "Worker"' in msg


def test_operator_creates_pods_and_services(api, namespace):
    from kubernetes import client

    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    job = _pytorchjob(namespace, workers=2)
    name = job["metadata"]["name"]
    custom.create_namespaced_custom_object(*KF[:2], namespace, KF[2], job)

    pods = _at_least(lambda: core.list_namespaced_pod(namespace).items, 3, "3 pods from the training operator")
    services = _at_least(lambda: core.list_namespaced_service(namespace).items, 3, "3 services from the operator")
    by_name = {p.metadata.name: p for p in pods}
    assert sorted(by_name) == [f"{name}-master-0", f"{name}-worker-0", f"{name}-worker-1"]
    assert sorted(s.metadata.name for s in services) == sorted(by_name)

    facts = {}
    for pname, pod in sorted(by_name.items()):
        pytorch = next(c for c in pod.spec.containers if c.name == "pytorch")
        facts[pname] = {
            "labels": pod.metadata.labels,
            "env": _env(pytorch),
            "initContainers": [c.name for c in pod.spec.init_containers or []],
            "restartPolicy": pod.spec.restart_policy,
            "owner": [(o.kind, o.name, o.controller) for o in pod.metadata.owner_references or []],
            "phase": pod.status.phase,
        }
    _show("pods as the training operator wrote them", facts)
    svc_facts = {
        s.metadata.name: {
            "clusterIP": s.spec.cluster_ip,
            "selector": s.spec.selector,
            "ports": [(p.name, p.port) for p in s.spec.ports or []],
        }
        for s in services
    }
    _show("services", svc_facts)

    for pname, f in facts.items():
        role, index = pname.rsplit("-", 2)[-2:]
        labels = f["labels"]
        for key in OPERATOR_LABELS[:4]:
            assert f"training.kubeflow.org/{key}" in labels, (pname, labels)
        assert labels["training.kubeflow.org/job-name"] == name
        assert labels["training.kubeflow.org/operator-name"] == "pytorchjob-controller"
        assert labels["training.kubeflow.org/replica-type"] == role
        assert labels["training.kubeflow.org/replica-index"] == index
        assert ("training.kubeflow.org/job-role" in labels) == (role == "master"), labels
        env = f["env"]
        assert env["EPOCHS"] == "90"
        assert env["MASTER_ADDR"] == f"{name}-master-0"
        assert env["MASTER_PORT"] == "23456"
        assert env["WORLD_SIZE"] == "3"
        assert env["RANK"] == ("0" if role == "master" else str(int(index) + 1))
        assert env["PYTHONUNBUFFERED"] == "1"
        assert env["PET_MASTER_ADDR"] == env["MASTER_ADDR"] and env["PET_MASTER_PORT"] == env["MASTER_PORT"]
        assert env["PET_NNODES"] == "3" and env["PET_NODE_RANK"] == env["RANK"]
        assert env["PET_NPROC_PER_NODE"] == "auto"
        assert f["phase"] == "Pending"  # no kubelet yet
        assert f["owner"] == [("PyTorchJob", name, True)]
        if role == "worker":
            assert f["initContainers"] == ["init-pytorch"]
    for sname, f in svc_facts.items():
        assert f["clusterIP"] == "None"  # headless, one per pod, selecting exactly that pod
        assert f["ports"] == [("pytorchjob-port", 23456)]
        pod_labels = facts[sname]["labels"]
        assert f["selector"] == {k: pod_labels[k] for k in f["selector"]}
        assert sorted(f["selector"]) == sorted(f"training.kubeflow.org/{k}" for k in OPERATOR_LABELS[:4])


def _converted_jobset(namespace: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "kf2jobset", "convert", str(FIXTURE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    (js,) = [d for d in docs if d["kind"] == "JobSet"]
    js = copy.deepcopy(js)
    js["metadata"]["namespace"] = namespace
    return js


def test_jobset_controllers_create_jobs_and_pods(api, namespace):
    from kubernetes import client

    custom, batch, core = client.CustomObjectsApi(api), client.BatchV1Api(api), client.CoreV1Api(api)
    js = _converted_jobset(namespace)
    name = js["metadata"]["name"]
    created = custom.create_namespaced_custom_object(*JS[:2], namespace, JS[2], js)  # through both webhooks
    assert created["metadata"]["name"] == name
    rjobs = {r["name"]: r for r in created["spec"]["replicatedJobs"]}
    _show("replicatedJobs (name, replicas, dependsOn)", [
        (r["name"], r.get("replicas"), r.get("dependsOn")) for r in created["spec"]["replicatedJobs"]])

    # replicatedJobs without dependsOn get their Jobs at once; the others wait until what they
    # depend on is Ready, which never happens without a kubelet (the Pods stay Pending).
    free = {n for n, r in rjobs.items() if not r.get("dependsOn")}
    waiting = set(rjobs) - free
    expected = sum(rjobs[n].get("replicas", 1) for n in free)

    def child_jobs():
        return batch.list_namespaced_job(namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items

    _at_least(child_jobs, expected, f"Jobs of {name}")
    pods = _at_least(lambda: core.list_namespaced_pod(namespace).items, expected, "pods from the Job controller")
    time.sleep(3)  # give the JobSet controller time to (wrongly) create the dependent Jobs
    jobs = child_jobs()
    made = {j.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] for j in jobs}
    assert made == free and len(jobs) == expected, (made, free, waiting)
    job_facts = {
        j.metadata.name: {
            "labels": {k: v for k, v in (j.metadata.labels or {}).items() if k.startswith("jobset.sigs.k8s.io/")},
            "owner": [(o.kind, o.name) for o in j.metadata.owner_references or []],
            "completionMode": j.spec.completion_mode,
        }
        for j in jobs
    }
    _show("child Jobs", job_facts)
    pod_facts = {
        p.metadata.name: {
            "labels": p.metadata.labels,
            "hostname": p.spec.hostname,
            "subdomain": p.spec.subdomain,
            "owner": [(o.kind, o.name) for o in p.metadata.owner_references or []],
            "phase": p.status.phase,
        }
        for p in pods
    }
    _show("pods from the Job controller", pod_facts)

    for _jname, f in job_facts.items():
        assert f["owner"] == [("JobSet", name)]
        assert f["labels"]["jobset.sigs.k8s.io/jobset-name"] == name
        assert f["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] in rjobs
    for pname, f in pod_facts.items():
        labels = f["labels"]
        assert labels["jobset.sigs.k8s.io/jobset-name"] == name
        rj = labels["jobset.sigs.k8s.io/replicatedjob-name"]
        assert rj in rjobs
        for key in ("job-index", "job-global-index", "job-key", "replicatedjob-replicas", "restart-attempt"):
            assert f"jobset.sigs.k8s.io/{key}" in labels, (pname, key, labels)
        assert labels["batch.kubernetes.io/job-completion-index"] == "0"
        assert f["owner"][0][0] == "Job"
        assert f["hostname"] == f"{name}-{rj}-{labels['jobset.sigs.k8s.io/job-index']}-0"
        assert f["phase"] == "Pending"
