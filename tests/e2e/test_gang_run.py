"""All-or-nothing, with a real gang scheduler: kube-scheduler v1.36.3 with scheduler-plugins' Coscheduling
plugin (tools/testcoscheduling, built by tools/install-ground-truth.sh coscheduling-scheduler; not in the
default set: `KF2JOBSET_GANG_RUN=1` asks for it) on the "scheduler-plugins" stack.

Node objects stand in for nodes (no kubelet: a pod that is bound gets spec.nodeName and stays Pending). The
v1 PyTorchJob (the real operator, --gang-scheduler-name=scheduler-plugins) and its JobSet conversion
(`--scheduler scheduler-plugins`, PodGroup applied beside it) each need 4 pods of 1 CPU. With nodes for 3
of them, no pod of either gang is bound (none waits half-placed past the permit timeout). Then, the jobs made
again on nodes for all 8 pods, every pod of both gangs is bound. The TrainJob target's gang (Trainer's own
PodGroup, TJ050) is run the same way on the "trainer" stack.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml

from ..apiserver_harness import free_ports, spawn, stop
from .gang_harness import PG, convert_for_gang
from .stack import start_stack, wait_for
from .stack_binaries import INSTALL_SCRIPT

pytestmark = pytest.mark.skipif(not os.environ.get("KF2JOBSET_GANG_RUN"),
                                reason="the coscheduling scheduler run is not in the default set: KF2JOBSET_GANG_RUN=1 runs it")
PERMIT_WAIT = 10  # seconds a reserved pod waits for its gang before the plugin rejects it


def _job(name: str) -> dict:
    pod = {"spec": {"containers": [{"name": "pytorch", "image": "registry.example.com/t:1",
                                    "resources": {"requests": {"cpu": "1"}}}]}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": pod},
                                             "Worker": {"replicas": 3, "template": pod}}}}


def _node(name: str) -> dict:
    cap = {"cpu": "1", "memory": "8Gi", "pods": "10"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": cap, "allocatable": cap,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def _scheduler_config(workdir: Path, kubeconfig: str) -> Path:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "leaderElection": {"leaderElect": False}, "clientConnection": {"kubeconfig": kubeconfig},
           "profiles": [{"schedulerName": "scheduler-plugins",
                         "plugins": {"queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                                     **{p: {"enabled": [{"name": "Coscheduling"}]}
                                        for p in ("preFilter", "postFilter", "permit", "reserve")}},
                         "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": PERMIT_WAIT}}]}]}
    path = workdir / "scheduler-config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _start_scheduler(binary: str, workdir: Path, kubeconfig: str) -> subprocess.Popen:
    (port,) = free_ports(1)
    return spawn([binary, f"--config={_scheduler_config(workdir, kubeconfig)}", "--bind-address=127.0.0.1",
                  f"--secure-port={port}", f"--cert-dir={workdir / 'sched-certs'}"], workdir / "coscheduling-scheduler.log")


def _scheduler_binary() -> str:
    binary = subprocess.run(["bash", str(INSTALL_SCRIPT), "coscheduling-scheduler"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=3600)
    assert binary.returncode == 0, binary.stderr[-3000:]
    return binary.stdout.strip().splitlines()[-1]


def _add_node(core, name: str) -> None:
    """A Ready node, without the not-ready taint admission puts on a new node (the node lifecycle controller
    would lift it; none runs here)."""
    core.create_node(_node(name))
    core.patch_node(name, {"spec": {"taints": None}})


def _tried(core, ns: str, n: int) -> bool:
    """All n pods exist and the scheduler has said it cannot place them."""
    items = core.list_namespaced_pod(ns).items
    return len(items) == n and all(any(c.type == "PodScheduled" and c.status == "False"
                                       for c in (p.status.conditions or [])) for p in items)


class GangRun:
    """A stack of `flavour` and the coscheduling scheduler on it, stopped (and its directory removed) on exit;
    the scheduler's log is printed when the test fails."""

    def __init__(self, flavour: str, prefix: str) -> None:
        self.flavour, self.binary = flavour, _scheduler_binary()
        self.workdir = Path(tempfile.mkdtemp(prefix=prefix))
        self.stack = self.sched = None

    def start_scheduler(self) -> None:
        self.sched = _start_scheduler(self.binary, self.workdir, self.stack.kubeconfig)

    def stop_scheduler(self) -> None:
        stop(self.sched)
        self.sched = None

    def __enter__(self) -> "GangRun":
        try:
            self.stack = start_stack(self.workdir, flavour=self.flavour)
            self.start_scheduler()
        except BaseException:
            self.__exit__(None)
            raise
        return self

    def __exit__(self, kind, *_) -> None:
        log = self.workdir / "coscheduling-scheduler.log"
        if kind is not None:
            print(log.read_text(errors="replace")[-4000:] if log.exists() else "no scheduler log")
        if self.sched is not None:
            stop(self.sched)
        if self.stack is not None:
            self.stack.stop()
        if not os.environ.get("KF2JOBSET_KEEP_E2E_DIR"):
            shutil.rmtree(self.workdir, ignore_errors=True)


def test_v1_job_and_jobset_start_all_or_nothing() -> None:
    from kubernetes import client

    with GangRun("scheduler-plugins", "kf2jobset-e2e-gangrun-") as run, run.stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        v1_ns, js_ns = (f"gangrun-{s}-{uuid.uuid4().hex[:6]}" for s in ("v1", "js"))
        for ns in (v1_ns, js_ns):
            core.create_namespace({"metadata": {"name": ns}})
        for i in range(3):  # room for 3 of a gang's 4 pods
            _add_node(core, f"node-{i}")
        job = _job("gang")
        conv = convert_for_gang(job)
        custom.create_namespaced_custom_object("kubeflow.org", "v1", v1_ns, "pytorchjobs", job)
        (pg,) = [c for c in conv.companions if c["kind"] == "PodGroup"]
        custom.create_namespaced_custom_object(*PG[:2], js_ns, PG[2], dict(pg, metadata=dict(pg["metadata"], namespace=js_ns)))
        custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", js_ns, "jobsets", conv.jobset)

        def pods(ns):
            return core.list_namespaced_pod(ns).items

        for ns in (v1_ns, js_ns):
            wait_for(lambda ns=ns: _tried(core, ns, 4), timeout=240, interval=1, what=f"the scheduler to try the gang in {ns}")
        time.sleep(2 * PERMIT_WAIT)  # past the permit wait: a partial gang would have been bound by now
        bound = {ns: sorted(p.metadata.name for p in pods(ns) if p.spec.node_name) for ns in (v1_ns, js_ns)}
        print(f"\n[e2e gang run] 3 nodes of 1 CPU, two gangs of 4 pods: bound {bound}")
        assert bound == {v1_ns: [], js_ns: []}, f"a gang started in part: {bound}"

        # Coscheduling moves a gang it rejected for want of room back to the queue on pod and PodGroup events only
        # (it registers no node events), so the second half makes both jobs afresh, the scheduler stopped until
        # every pod exists: it then sees each gang whole, on nodes for all 8 pods.
        run.stop_scheduler()
        custom.delete_namespaced_custom_object("kubeflow.org", "v1", v1_ns, "pytorchjobs", "gang")
        custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", js_ns, "jobsets", "gang")
        for ns in (v1_ns, js_ns):  # the garbage collector removes the pods (ownerReferences)
            wait_for(lambda ns=ns: not pods(ns), timeout=300, interval=2, what=f"the first gang's pods gone from {ns}")
        custom.delete_namespaced_custom_object(*PG[:2], js_ns, PG[2], "gang")
        for i in range(3, 8):  # room for both gangs
            _add_node(core, f"node-{i}")
        custom.create_namespaced_custom_object("kubeflow.org", "v1", v1_ns, "pytorchjobs", job)
        custom.create_namespaced_custom_object(*PG[:2], js_ns, PG[2], dict(pg, metadata=dict(pg["metadata"], namespace=js_ns)))
        custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", js_ns, "jobsets", conv.jobset)
        for ns in (v1_ns, js_ns):
            wait_for(lambda ns=ns: len(pods(ns)) == 4, timeout=240, interval=1, what=f"the second gang's 4 pods in {ns}")
        run.start_scheduler()
        t0 = time.monotonic()
        for ns in (v1_ns, js_ns):
            wait_for(lambda ns=ns: len(pods(ns)) == 4 and all(p.spec.node_name for p in pods(ns)), timeout=300, interval=1,
                     what=f"every pod of the gang in {ns} bound")
        print(f"[e2e gang run] 8 nodes: both gangs bound whole within {time.monotonic() - t0:.0f} s: "
              f"{ {ns: sorted((p.metadata.name, p.spec.node_name) for p in pods(ns)) for ns in (v1_ns, js_ns)} }")


def test_trainjob_gang_starts_all_or_nothing() -> None:
    """The TrainJob target's gang (TJ050): a TrainJob whose generated runtime asks Trainer for the PodGroup
    (podGroupPolicy.coscheduling), a master and a worker of 1 CPU, on the "trainer" stack. On a node for one of
    them neither is bound; made again on nodes for both, both are."""
    from kubernetes import client

    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    from .trainjob_harness import create_trainjob_after_its_runtime

    job = _job("tjgang")
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 1
    options = ConvertOptions(target="trainjob", scheduler="scheduler-plugins", trainer_runtime="per-job")
    result = convert_text(yaml.safe_dump(job), "job.yaml", options)
    (conv,) = [c for r in result.results for c in r.conversions]
    objects = {o["kind"]: o for o in conv.objects}
    assert "PodGroup" not in objects and "podGroupPolicy" in objects["TrainingRuntime"]["spec"]
    with GangRun("trainer", "kf2jobset-e2e-gangrun-tj-") as run, run.stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        ns = f"gangrun-tj-{uuid.uuid4().hex[:6]}"
        core.create_namespace({"metadata": {"name": ns}})

        def create():
            for kind in ("TrainingRuntime", "TrainJob"):
                create_trainjob_after_its_runtime(custom, core, dict(objects[kind], metadata=dict(
                    objects[kind]["metadata"], namespace=ns)), ns)

        def pods():
            return core.list_namespaced_pod(ns).items

        _add_node(core, "node-0")  # room for 1 of the gang's 2 pods
        create()
        wait_for(lambda: _tried(core, ns, 2), timeout=240, interval=1, what="the scheduler to try the TrainJob's gang")
        time.sleep(2 * PERMIT_WAIT)
        bound = sorted(p.metadata.name for p in pods() if p.spec.node_name)
        pg = custom.get_namespaced_custom_object(*PG[:2], ns, PG[2], "tjgang")
        print(f"\n[e2e gang run] TrainJob, 1 node of 1 CPU, Trainer's PodGroup {pg['spec']}: bound {bound}")
        assert bound == [], f"the TrainJob's gang started in part: {bound}"

        run.stop_scheduler()  # as above: made again, the scheduler stopped until every pod exists
        custom.delete_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", ns, "trainjobs", "tjgang")
        custom.delete_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", ns, "trainingruntimes",
                                               objects["TrainingRuntime"]["metadata"]["name"])
        wait_for(lambda: not pods() and not custom.list_namespaced_custom_object(*PG[:2], ns, PG[2])["items"],
                 timeout=300, interval=2, what="the first TrainJob's pods and PodGroup gone (owned by it)")
        _add_node(core, "node-1")
        create()
        wait_for(lambda: len(pods()) == 2, timeout=240, interval=1, what="the second TrainJob's 2 pods")
        run.start_scheduler()
        wait_for(lambda: len(pods()) == 2 and all(p.spec.node_name for p in pods()), timeout=300, interval=1,
                 what="both pods of the TrainJob's gang bound")
        print(f"[e2e gang run] TrainJob, 2 nodes: bound {sorted((p.metadata.name, p.spec.node_name) for p in pods())}")
