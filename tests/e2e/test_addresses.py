"""v1 pod addresses written in the manifest (kf2jobset/core/addresses.py, JS065/JS066), proven in both worlds.

Each scenario is one manifest (an Arena-style PyTorchJob, optionally with a ConfigMap of peers), written
for namespace ``{ns}`` the way a user writes it for theirs. It runs

* in namespace A as the v1 job: the real Training Operator v1.9.4 makes the pods and their per-pod
  Services, so ``<job>-master-0`` resolves once the master is Ready;
* in namespace B as ``kf2jobset convert`` of the same manifest written for B: the real JobSet v0.12.0 +
  Job controllers, with the conversion's companions (ConfigMaps, Services);

with one node agent (tests/e2e/nodeagent.py) that runs the init containers' OWN commands (a
``getent hosts`` loop over every written form, a Python socket connect loop to the master's port, a
loop over names read from the ConfigMap) in each pod's network namespace, against DNS computed from the
API objects as CoreDNS answers it. The master's main container listens on its port; the others sleep.

Checked: every worker's init containers end with exit code 0 and its main container starts, in both
worlds. :func:`test_mutations_are_caught` puts the v1 literals back into the JobSet (the conversion
without JS065) and drops the companion Services (without JS066): the init containers must then still be
waiting when the v1 side has long finished them.

Run alone: ``KF2JOBSET_E2E=1 python -m pytest tests/e2e/test_addresses.py`` (root).
"""
from __future__ import annotations

import copy
import sys
import time
import uuid

import pytest
import yaml

from kf2jobset.options import ConvertOptions

from .nodeagent import running_agent
from .nodeagent_launch import OWN_COMMAND

TIMEOUT = 120.0
STUCK_FOR = 25.0  # a mutated JobSet's init containers must still wait this long after v1's finished
TOOLS = "registry.example.com/tools/netutils:1.4"
LISTENS = "registry.example.com/nlp/bert-ft:2.1"
_LISTEN = ("import socket, sys, time\ns = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
           "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(64)\nwhile True:\n    c, _ = s.accept(); c.close()\n")

# (not $PEER: under v1 a worker's Service has no address while that worker waits in init, as this one does)
WAIT_FORMS = ('for h in "$MASTER_ADDR" "$MASTER_NS" "$MASTER_SVC" "$MASTER_FQDN"; do '
              'until getent hosts "$h"; do echo "waiting for $h"; sleep 1; done; done')
CONNECT = ("import socket, sys, time\nwhile True:\n  try: socket.create_connection((sys.argv[1], 23456), 2).close(); break\n"
           "  except OSError: time.sleep(1)")
WAIT_PEERS = "for h in $(cat /etc/peers/peers); do until getent hosts $h; do sleep 1; done; done"


def _pytorchjob(ns: str, worker_pod: dict) -> dict:
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "bert-ft", "namespace": ns},
            "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [
                    {"name": "pytorch", "image": LISTENS, "env": [{"name": "MASTER_ADDR", "value": "bert-ft-master-0"}]}]}}},
                "Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": {"spec": worker_pod}}}}}


def arena(ns: str) -> list[dict]:
    """Arena-style: MASTER_ADDR in every container, init containers included; every written form."""
    return [_pytorchjob(ns, {
        "initContainers": [
            {"name": "wait-master", "image": TOOLS, "command": ["sh", "-c", WAIT_FORMS], "env": [
                {"name": "MASTER_ADDR", "value": "bert-ft-master-0"},
                {"name": "MASTER_NS", "value": f"bert-ft-master-0.{ns}"},
                {"name": "MASTER_SVC", "value": f"bert-ft-master-0.{ns}.svc"},
                {"name": "MASTER_FQDN", "value": f"bert-ft-master-0.{ns}.svc.cluster.local"},
                {"name": "PEER", "value": f"bert-ft-worker-1.{ns}.svc:23456"}]},
            {"name": "connect-master", "image": TOOLS, "command": ["python3", "-c", CONNECT, f"bert-ft-master-0.{ns}.svc"]}],
        "containers": [{"name": "pytorch", "image": "registry.example.com/nlp/bert-ft-worker:2.1",
                        "env": [{"name": "MASTER_ADDR", "value": "bert-ft-master-0"}]}]})]


def peers(ns: str) -> list[dict]:
    """A ConfigMap of the same file names the master (two forms); the workers' init container reads it."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bert-peers", "namespace": ns},
          "data": {"peers": f"bert-ft-master-0\nbert-ft-master-0.{ns}.svc.cluster.local\n"}}
    return [cm, _pytorchjob(ns, {
        "initContainers": [{"name": "wait-peers", "image": TOOLS, "command": ["sh", "-c", WAIT_PEERS],
                            "volumeMounts": [{"name": "peers", "mountPath": "/etc/peers"}]}],
        "containers": [{"name": "pytorch", "image": "registry.example.com/nlp/bert-ft-worker:2.1"}],
        "volumes": [{"name": "peers", "configMap": {"name": "bert-peers"}}]})]


SCENARIOS = {"init-wait-and-connect": (arena, "JS065"), "configmap-peers": (peers, "JS066")}


def _render(make, ns: str) -> str:
    return yaml.safe_dump_all(make(ns), sort_keys=False)


def _program(launch):
    if launch.image == TOOLS:
        return OWN_COMMAND(launch)
    if launch.image == LISTENS and not launch.init:
        return [sys.executable, "-c", _LISTEN, "23456"]
    return ["true"] if launch.init else ["sleep", "infinity"]


@pytest.fixture(scope="module")
def agent(stack, netns_ok):
    with running_agent(stack.kubeconfig, {"": _program}, namespaces=set(), backoff=(0.5, 5.0), subnet="10.249") as a:
        yield a


def _namespace(core, agent, tag: str) -> str:
    name = f"addr{tag}-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    with agent.lock:
        agent.namespaces.add(name)
    return name


def _convert(text: str):
    from kf2jobset.files.pipeline import convert_text

    result = convert_text(text, "job.yaml", ConvertOptions())
    assert not result.errors, result.errors
    (conv,) = result.conversions
    return conv


def _apply_v1(core, custom, ns: str, text: str) -> None:
    for doc in yaml.safe_load_all(text):
        if doc["kind"] == "ConfigMap":
            core.create_namespaced_config_map(ns, doc)
        else:
            custom.create_namespaced_custom_object("kubeflow.org", "v1", ns, "pytorchjobs", doc)


def _apply_jobset(core, custom, ns: str, text: str, jobset: dict, companions: list) -> None:
    for doc in yaml.safe_load_all(text):
        if doc["kind"] == "ConfigMap":  # the file's own ConfigMap passes through
            core.create_namespaced_config_map(ns, doc)
    for c in companions:
        c = copy.deepcopy(c)
        c["metadata"]["namespace"] = ns
        if c["kind"] == "Service":
            core.create_namespaced_service(ns, c)
        elif c["kind"] == "ConfigMap":
            core.create_namespaced_config_map(ns, c)
    jobset = copy.deepcopy(jobset)
    jobset["metadata"]["namespace"] = ns
    custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", jobset)


def _workers(core, ns: str) -> list:
    return [p for p in core.list_namespaced_pod(ns).items if "worker" in p.metadata.name]


def _initialized(pod) -> bool:
    statuses = pod.status.init_container_statuses or []
    return bool(statuses) and all(s.state and s.state.terminated and s.state.terminated.exit_code == 0 for s in statuses)


def _main_started(agent, ns: str, pod_name: str) -> bool:
    return any(x.pod == pod_name and not x.init for x in agent.launches(ns))


def _wait_initialized(core, agent, ns: str, timeout: float) -> tuple[bool, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pods = _workers(core, ns)
        if len(pods) == 2 and all(_initialized(p) and _main_started(agent, ns, p.metadata.name) for p in pods):
            return True, ""
        time.sleep(0.5)
    pods = _workers(core, ns)
    return False, "; ".join(f"{p.metadata.name}: {[(s.name, s.state.to_dict()) for s in p.status.init_container_statuses or []]}"
                            for p in pods) + f"; agent: {agent.events[-4:]}"


def _run(stack, agent, text: str, mutate=None) -> dict:
    from kubernetes import client

    with stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        ns_a, ns_b = _namespace(core, agent, "a"), _namespace(core, agent, "b")
        text_a, text_b = _render(text, ns_a), _render(text, ns_b)
        conv = _convert(text_b)
        jobset, companions = copy.deepcopy(conv.jobset), copy.deepcopy(conv.companions)
        if mutate:
            mutate(jobset, companions)
        _apply_v1(core, custom, ns_a, text_a)
        _apply_jobset(core, custom, ns_b, text_b, jobset, companions)
        v1_ok, v1_why = _wait_initialized(core, agent, ns_a, TIMEOUT)
        js_ok, js_why = _wait_initialized(core, agent, ns_b, STUCK_FOR if (mutate and v1_ok) else TIMEOUT)
        logs = {x.container: x.log for x in agent.launches(ns_b) if x.init}
        for group, version, plural, ns in (("kubeflow.org", "v1", "pytorchjobs", ns_a),
                                           ("jobset.x-k8s.io", "v1alpha2", "jobsets", ns_b)):
            for obj in custom.list_namespaced_custom_object(group, version, ns, plural)["items"]:
                try:
                    custom.delete_namespaced_custom_object(group, version, ns, plural, obj["metadata"]["name"],
                                                           propagation_policy="Background")
                except client.rest.ApiException:
                    pass
        return {"v1": (v1_ok, v1_why), "jobset": (js_ok, js_why), "conv": conv, "logs": logs}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_written_addresses_resolve_in_both_worlds(stack, agent, scenario):
    text, code = SCENARIOS[scenario]
    out = _run(stack, agent, text)
    assert code in {n.code for n in out["conv"].notes}
    assert out["v1"][0], f"v1: the init containers did not finish: {out['v1'][1]}"
    assert out["jobset"][0], f"JobSet: the init containers did not finish: {out['jobset'][1]}\n{out['logs']}"
    print(f"\n[{scenario}] v1 and JobSet workers: init containers exited 0, trainers started")


def _literals_back(jobset, companions):
    """The conversion without JS065: the v1 names as written."""
    def undo(node):
        if isinstance(node, dict):
            return {k: undo(v) for k, v in node.items()}
        if isinstance(node, list):
            return [undo(v) for v in node]
        if isinstance(node, str):
            return (node.replace("$(KF2JOBSET_JOBSET_NAME)-master-0-0.$(KF2JOBSET_JOBSET_NAME)", "bert-ft-master-0")
                    .replace("$(KF2JOBSET_JOBSET_NAME)-worker-1-0.$(KF2JOBSET_JOBSET_NAME)", "bert-ft-worker-1"))
        return node
    for rj in jobset["spec"]["replicatedJobs"]:
        if rj["name"] == "worker":
            pod = rj["template"]["spec"]["template"]["spec"]
            pod["initContainers"] = undo(pod["initContainers"])


def _no_services(jobset, companions):
    """The conversion without JS066."""
    companions[:] = [c for c in companions if c["kind"] != "Service"]


@pytest.mark.parametrize("scenario, mutate", [("init-wait-and-connect", _literals_back), ("configmap-peers", _no_services)])
def test_mutations_are_caught(stack, agent, scenario, mutate):
    out = _run(stack, agent, SCENARIOS[scenario][0], mutate)
    assert out["v1"][0], f"v1: the init containers did not finish: {out['v1'][1]}"
    assert not out["jobset"][0], f"{mutate.__name__}: the JobSet's init containers finished anyway"
