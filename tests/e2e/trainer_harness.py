"""The Trainer v2.3.0 stack for the TrainJob tests (tests/e2e/test_trainer_smoke.py, test_trainjob_target.py):
its fixtures (the stack, an API client, a namespace per test, node agents), the resources' names, and waiting
for what the Trainer controller builds."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .. import upstream
from ..apiserver_harness import temporary_namespace
from .conftest import running_stack
from .ddp_probe import node_agents
from .stack import TRAINER_FLAVOUR, wait_for

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "pytorchjob" / "master-workers" / "input.yaml"  # the PyTorchJob converted
PY = sys.executable
FRAMEWORK = "trainer.kubeflow.org/framework"
TJ = ("trainer.kubeflow.org", "v1alpha1", "trainjobs")
TR = ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes")
JS = ("jobset.x-k8s.io", "v1alpha2", "jobsets")


@pytest.fixture(scope="module")
def trainer_stack():
    upstream.need("trainer")
    with running_stack(TRAINER_FLAVOUR) as stack:
        yield stack


@pytest.fixture
def tapi(trainer_stack):
    with trainer_stack.api_client() as api:
        yield api


@pytest.fixture
def tns(tapi, request):
    with temporary_namespace(tapi, request.node.name) as name:
        yield name


@pytest.fixture
def custom(tapi):
    from kubernetes import client

    return client.CustomObjectsApi(tapi)


@pytest.fixture
def core(tapi):
    from kubernetes import client

    return client.CoreV1Api(tapi)


def jobset_of(custom, ns: str, name: str, timeout: float = 30) -> dict:
    from kubernetes.client.rest import ApiException

    def get():
        try:
            return custom.get_namespaced_custom_object(*JS[:2], ns, JS[2], name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise
    return wait_for(get, timeout, what=f"JobSet {ns}/{name} built by the Trainer controller")


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


@pytest.fixture
def agent_for(trainer_stack, tns, netns_ok):
    """``agent_for(programs)`` -> a started NodeAgent running only this test's namespace."""
    with node_agents(trainer_stack.kubeconfig, tns) as make:
        yield lambda programs: make(programs, subnet="10.248")


def wait_complete(custom, ns: str, name: str, timeout: float = 180, agent=None) -> dict:
    def done():
        obj = custom.get_namespaced_custom_object(*TJ[:2], ns, TJ[2], name)
        conds = conditions(obj)
        if conds.get("Failed", {}).get("status") == "True":
            logs = "".join(f"\n--- {x.pod}/{x.container}:\n{agent.log(ns, x.pod, x.container)[-2000:]}"
                           for x in (agent.launches(ns) if agent else []))
            raise AssertionError(f"TrainJob failed: {json.dumps(obj['status'], indent=1)}{logs}")
        return obj if conds.get("Complete", {}).get("status") == "True" else None
    return wait_for(done, timeout, interval=0.5, what=f"TrainJob {name} Complete")


def trainjob(name: str, runtime: str = "torch-distributed", kind: str | None = None, trainer: dict | None = None,
             patches: list | None = None, labels: dict | None = None) -> dict:
    spec: dict = {"runtimeRef": {"name": runtime, **({"kind": kind} if kind else {})}}
    if trainer is not None:
        spec["trainer"] = trainer
    if patches is not None:
        spec["runtimePatches"] = patches
    meta: dict = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta, "spec": spec}


def create_runtime(custom, ns: str, runtime: dict) -> dict:
    """Create a namespaced TrainingRuntime and wait until Trainer's webhook sees it. The webhook looks runtimes up
    in the controller's informer cache, which lags the API server: a TrainJob created right after its runtime can
    be refused with "must be created before the TrainJob". The condition waited on is that refusal's absence for a
    server-side dry-run TrainJob naming the runtime (dry-run goes through the webhooks, stores nothing)."""
    from kubernetes.client.rest import ApiException

    created = custom.create_namespaced_custom_object(*TR[:2], ns, TR[2], runtime)
    probe = trainjob("cache-probe", runtime=runtime["metadata"]["name"], kind="TrainingRuntime")

    def seen():
        try:
            custom.create_namespaced_custom_object(*TJ[:2], ns, TJ[2], probe, dry_run="All")
        except ApiException as e:
            if "must be created before the TrainJob" in str(e.body):
                return None
            raise
        return True
    wait_for(seen, 30, interval=0.2, what=f"Trainer's webhook to see TrainingRuntime {ns}/{runtime['metadata']['name']}")
    return created


def rjobs(js: dict) -> dict[str, dict]:
    return {r["name"]: r for r in js["spec"]["replicatedJobs"]}


def container(rjob: dict, name: str) -> dict:
    (c,) = [c for c in rjob["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return c


def env_map(c: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env") or []}


def converted_jobset() -> dict:
    """What kf2jobset emits today for the master + 3 workers PyTorchJob fixture (the JobSet only)."""
    out = subprocess.run([PY, "-m", "kf2jobset", "convert", str(FIXTURE)], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    (js,) = [d for d in yaml.safe_load_all(out.stdout) if d and d["kind"] == "JobSet"]
    return js


def plain_runtime(name: str, js: dict, framework: str = "torch") -> dict:
    """A TrainingRuntime without mlPolicy (Trainer's PlainML path) holding a JobSet's spec as its template."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
        "metadata": {"name": name, "labels": {FRAMEWORK: framework}},
        "spec": {"template": {"metadata": {"labels": {"kf2jobset.dev/runtime-label": "kept"}},
                              "spec": copy.deepcopy(js["spec"])}},
    }
