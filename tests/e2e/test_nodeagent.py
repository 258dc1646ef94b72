"""The node agent (tests/e2e/nodeagent.py) on the real stack: pods run, controllers act on their status.

(a) A plain Pod: downward-API env, ``$(VAR)``/``$$`` expansion, ConfigMap/Secret refs, envFrom, a
    ConfigMap volume with items and modes, an emptyDir an init container writes, hostname +
    subdomain behind a headless Service. Its program reports what it sees; phase Succeeded.
(b) ``kf2jobset convert`` of fixtures/pytorchjob/master-workers under the real JobSet + Job
    controllers: every worker resolves MASTER_ADDR to the master pod and connects to it there; the
    JobSet reaches Completed.
(c) The same input as a PyTorchJob under the real v1 operator: init-pytorch waits for the master's
    per-pod Service to resolve, workers reach the master, the master resolves every worker's
    Service, and the PyTorchJob reaches Succeeded.
(d) Deletion: a running pod's process gets SIGTERM and the pod object goes away.
(e) restartPolicy OnFailure: a failing container is restarted (restartCount, lastState) and the
    pod then succeeds.

Not root: skipped (network namespaces need root). Root but namespaces cannot be made: FAIL.
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

from .ddp_probe import DDP_PROBE, check_ddp, last_json, node_agents
from .nodeagent import OWN_COMMAND
from .stack import wait_for


REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "pytorchjob" / "master-workers" / "input.yaml"
JS = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
KF = ("kubeflow.org", "v1", "pytorchjobs")
PY = sys.executable


@pytest.fixture
def agent_for(stack, namespace, netns_ok):
    """``agent_for(programs, **kw)`` -> a started NodeAgent running only this test's namespace."""
    with node_agents(stack.kubeconfig, namespace) as make:
        yield make


def _pod(core, ns: str, name: str) -> dict:
    return core.api_client.sanitize_for_serialization(core.read_namespaced_pod(name, ns))


def _phase(core, ns: str, name: str, phases=("Succeeded", "Failed"), timeout: float = 90) -> dict:
    return wait_for(lambda: (lambda p: p if p["status"].get("phase") in phases else None)(_pod(core, ns, name)),
                    timeout, what=f"pod {name} in {phases}")


# ---------------------------------------------------------------------------------------------
# (a) a plain pod

REPORTER = r"""
import json, os, socket, stat, time
def resolve(name, wait=20):
    deadline = time.time() + wait
    while True:
        try:
            return sorted({a[4][0] for a in socket.getaddrinfo(name, None, socket.AF_INET)})
        except socket.gaierror as e:
            if time.time() > deadline:
                return str(e)
            time.sleep(0.2)
files = {}
for root, _, names in os.walk("/etc/probe-cfg"):
    for n in names:
        p = os.path.join(root, n)
        files[os.path.relpath(p, "/etc/probe-cfg")] = [open(p).read(), oct(stat.S_IMODE(os.stat(p).st_mode))]
ns = os.environ["POD_NS"]
print(json.dumps({
    "hostname": socket.gethostname(),
    "env": dict(os.environ),
    "argv_seen": open("/proc/self/cmdline").read().split("\0")[:2],
    "files": files,
    "init": open("/kf2js-scratch/init.txt").read(),
    "resolve": {n: resolve(n) for n in ["box.grp", "grp", f"box.grp.{ns}.svc.cluster.local", "box", "grp." + ns]},
    "resolve_missing": resolve("nosuch-service", wait=0),
}))
"""


def test_plain_pod_env_mounts_dns(api, namespace, agent_for):
    from kubernetes import client

    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}, "data": {"greeting": "hi there", "other": "x=1"}})
    core.create_namespaced_secret(namespace, {"metadata": {"name": "sec"}, "stringData": {"token": "s3cr3t"}})
    core.create_namespaced_service(namespace, {"metadata": {"name": "grp"}, "spec": {
        "clusterIP": "None", "selector": {"app": "probe"}, "ports": [{"name": "p", "port": 80}]}})
    field = lambda path: {"valueFrom": {"fieldRef": {"fieldPath": path}}}  # noqa: E731
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "probe", "labels": {"app": "probe", "tier": "t1"}, "annotations": {"note": "hello"}},
        "spec": {
            "restartPolicy": "Never", "hostname": "box", "subdomain": "grp",
            "initContainers": [{
                "name": "prep", "image": "test/init", "command": ["sh", "-c", "echo init-$(POD_NAME) > /kf2js-scratch/init.txt"],
                "env": [{"name": "POD_NAME", **field("metadata.name")}],
                "volumeMounts": [{"name": "work", "mountPath": "/kf2js-scratch"}],
            }],
            "containers": [{
                "name": "main", "image": "test/reporter:1", "command": ["report", "$(POD_NAME)"],
                "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
                "env": [
                    {"name": "POD_NAME", **field("metadata.name")},
                    {"name": "POD_NS", **field("metadata.namespace")},
                    {"name": "POD_IP", **field("status.podIP")},
                    {"name": "NODE", **field("spec.nodeName")},
                    {"name": "TIER", **field("metadata.labels['tier']")},
                    {"name": "NOTE", **field("metadata.annotations['note']")},
                    {"name": "COMBINED", "value": "$(POD_NAME)/$(TIER)/$(LATER)/$(CM_other)"},
                    {"name": "ESCAPED", "value": "$$(POD_NAME) $$$(TIER)"},
                    {"name": "LATER", "value": "later"},
                    {"name": "FROM_CM", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "greeting"}}},
                    {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "token"}}},
                    {"name": "MISSING_OPT", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "nokey", "optional": True}}},
                ],
                "volumeMounts": [{"name": "cfg", "mountPath": "/etc/probe-cfg"}, {"name": "work", "mountPath": "/kf2js-scratch"}],
            }],
            "volumes": [
                {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 0o440, "items": [
                    {"key": "greeting", "path": "sub/hello.txt", "mode": 0o600}, {"key": "other", "path": "other.txt"}]}},
                {"name": "work", "emptyDir": {}},
            ],
        },
    }
    agent = agent_for({"test/init": OWN_COMMAND, "test/reporter": [PY, "-c", REPORTER]})
    core.create_namespaced_pod(namespace, pod)
    final = _phase(core, namespace, "probe")
    out = agent.log(namespace, "probe", "main")
    print(out)
    assert final["status"]["phase"] == "Succeeded", json.dumps(final["status"], indent=1)
    report = last_json(out)
    ip = final["status"]["podIP"]
    env = report["env"]

    assert report["hostname"] == "box"
    assert final["spec"]["nodeName"] == agent.node_name
    assert env["POD_NAME"] == "probe" and env["POD_NS"] == namespace and env["POD_IP"] == ip
    assert env["NODE"] == agent.node_name and env["TIER"] == "t1" and env["NOTE"] == "hello"
    assert env["COMBINED"] == "probe/t1/$(LATER)/x=1"  # only earlier entries (envFrom counts) expand
    assert env["ESCAPED"] == "$(POD_NAME) $t1"
    assert env["FROM_CM"] == "hi there" and env["FROM_SECRET"] == "s3cr3t"
    assert env["CM_greeting"] == "hi there" and env["CM_other"] == "x=1"
    assert "MISSING_OPT" not in env
    assert env["HOSTNAME"] == "box"
    kube = core.read_namespaced_service("kubernetes", "default")
    assert env["KUBERNETES_SERVICE_HOST"] == kube.spec.cluster_ip  # Service links, as the kubelet adds
    assert report["files"] == {"sub/hello.txt": ["hi there", "0o600"], "other.txt": ["x=1", "0o440"]}
    assert report["init"] == "init-probe\n"  # init container ran first, command $(POD_NAME) expanded
    fqdn = f"box.grp.{namespace}.svc.cluster.local"
    assert report["resolve"] == {"box.grp": [ip], "grp": [ip], fqdn: [ip], "box": [ip], f"grp.{namespace}": [ip]}
    assert isinstance(report["resolve_missing"], str)  # NXDOMAIN: nothing else answers

    (launch,) = [x for x in agent.launches(namespace, "probe") if x.container == "main"]
    assert launch.command == ["report", "probe"] and launch.hostname == "box" and launch.pod_ip == ip
    assert launch.labels == {"app": "probe", "tier": "t1"} and launch.pod_spec["restartPolicy"] == "Never"
    assert [k for k, _ in launch.env][:3] == ["CM_greeting", "CM_other", "POD_NAME"]
    statuses = {s["name"]: s for s in final["status"]["containerStatuses"] + final["status"]["initContainerStatuses"]}
    assert statuses["main"]["state"]["terminated"]["exitCode"] == 0
    assert statuses["main"]["state"]["terminated"]["reason"] == "Completed"
    assert statuses["prep"]["state"]["terminated"]["exitCode"] == 0
    conds = {c["type"]: c["status"] for c in final["status"]["conditions"]}
    assert conds["PodScheduled"] == "True" and conds["Initialized"] == "True" and conds["Ready"] == "False"


# ---------------------------------------------------------------------------------------------
# (b)/(c) the PyTorch fixture, both worlds


def test_converted_jobset_completes(api, namespace, agent_for):
    from kubernetes import client

    custom = client.CustomObjectsApi(api)
    out = subprocess.run([PY, "-m", "kf2jobset", "convert", str(FIXTURE)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    (js,) = [d for d in yaml.safe_load_all(out.stdout) if d and d["kind"] == "JobSet"]
    js = copy.deepcopy(js)
    js["metadata"]["namespace"] = namespace
    name = js["metadata"]["name"]
    agent = agent_for({"registry.example.com/vision/resnet": [PY, "-c", DDP_PROBE]})
    t0 = time.monotonic()
    custom.create_namespaced_custom_object(*JS[:2], namespace, JS[2], js)

    def completed():
        obj = custom.get_namespaced_custom_object(*JS[:2], namespace, JS[2], name)
        conds = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}
        if conds.get("Failed") == "True":
            raise AssertionError(f"JobSet failed: {json.dumps(obj['status'], indent=1)}")
        return obj if conds.get("Completed") == "True" else None

    final = wait_for(completed, 180, interval=0.5, what=f"JobSet {name} Completed")
    print(f"\nJobSet Completed after {time.monotonic() - t0:.1f}s: {json.dumps(final['status'], indent=1)}")
    master = f"{name}-master-0-0"
    workers = [f"{name}-worker-{i}-0" for i in range(3)]
    m = check_ddp(agent, namespace, master, workers)
    assert m["master_addr"] == f"{master}.{name}"
    assert final["status"].get("terminalState") == "Completed"


def _init_with_getent(launch) -> list[str]:
    """init-pytorch's own loop, with `nslookup` (not on this machine) replaced by the resolver's `getent hosts`."""
    return [w.replace("nslookup", "getent hosts") for w in launch.command]


def test_operator_pytorchjob_succeeds(api, namespace, agent_for):
    from kubernetes import client

    custom = client.CustomObjectsApi(api)
    job = yaml.safe_load(FIXTURE.read_text())
    job["metadata"]["namespace"] = namespace
    name = job["metadata"]["name"]
    agent = agent_for({"registry.example.com/vision/resnet": [PY, "-c", DDP_PROBE], "alpine": _init_with_getent})
    t0 = time.monotonic()
    custom.create_namespaced_custom_object(*KF[:2], namespace, KF[2], job)

    def succeeded():
        obj = custom.get_namespaced_custom_object(*KF[:2], namespace, KF[2], name)
        conds = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}
        if conds.get("Failed") == "True":
            raise AssertionError(f"PyTorchJob failed: {json.dumps(obj['status'], indent=1)}")
        return obj if conds.get("Succeeded") == "True" else None

    final = wait_for(succeeded, 180, interval=0.5, what=f"PyTorchJob {name} Succeeded")
    print(f"\nPyTorchJob Succeeded after {time.monotonic() - t0:.1f}s: {json.dumps(final['status'], indent=1)}")
    master = f"{name}-master-0"
    workers = [f"{name}-worker-{i}" for i in range(3)]
    m = check_ddp(agent, namespace, master, workers)
    assert m["master_addr"] == master  # the per-pod Service of the master, through the search path
    for w in workers:
        inits = [x for x in agent.launches(namespace, w) if x.init]
        assert [x.container for x in inits] == ["init-pytorch"], inits
        assert any("getent hosts" in a for a in inits[0].argv)
        assert agent.log(namespace, w, "init-pytorch").count(agent.worker(namespace, master).ip) >= 1


# ---------------------------------------------------------------------------------------------
# (d) deletion, (e) restarts

def test_deleted_pod_is_stopped_and_removed(api, namespace, agent_for, tmp_path):
    from kubernetes import client

    core = client.CoreV1Api(api)
    marker = tmp_path / "got-term"
    prog = [PY, "-c", f"import signal,time,sys\ndef h(*a):\n open({str(marker)!r},'w').write('TERM'); sys.exit(0)\n"
            "signal.signal(signal.SIGTERM, h)\nprint('up', flush=True)\nwhile True: time.sleep(1)"]
    agent = agent_for({"test/sleeper": prog})
    core.create_namespaced_pod(namespace, {"metadata": {"name": "sleeper"}, "spec": {
        "terminationGracePeriodSeconds": 5, "containers": [{"name": "c", "image": "test/sleeper"}]}})
    _phase(core, namespace, "sleeper", phases=("Running",), timeout=60)
    wait_for(lambda: "up" in agent.log(namespace, "sleeper"), 30, what="program up")
    worker = agent.worker(namespace, "sleeper")
    core.delete_namespaced_pod("sleeper", namespace)

    def gone():
        try:
            core.read_namespaced_pod("sleeper", namespace)
            return False
        except client.rest.ApiException as e:
            return e.status == 404

    wait_for(gone, 30, what="pod deleted by the agent")
    assert marker.read_text() == "TERM"  # graceful: the program saw SIGTERM
    assert worker.done.wait(10) and not worker.sandbox


def test_restart_on_failure(api, namespace, agent_for, tmp_path):
    from kubernetes import client

    core = client.CoreV1Api(api)
    counter = tmp_path / "runs"
    prog = [PY, "-c", f"import pathlib,sys\np=pathlib.Path({str(counter)!r})\nn=len(p.read_text()) if p.exists() else 0\n"
            "p.write_text('x'*(n+1))\nsys.exit(3 if n == 0 else 0)"]
    agent = agent_for({"test/flaky": prog}, backoff=(0.2, 1.0))
    core.create_namespaced_pod(namespace, {"metadata": {"name": "flaky"}, "spec": {
        "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "test/flaky"}]}})
    final = _phase(core, namespace, "flaky", timeout=60)
    (st,) = final["status"]["containerStatuses"]
    assert final["status"]["phase"] == "Succeeded", st
    assert st["restartCount"] == 1 and st["lastState"]["terminated"]["exitCode"] == 3
    assert st["state"]["terminated"]["exitCode"] == 0
    assert [x.restart for x in agent.launches(namespace, "flaky")] == [0, 1]
