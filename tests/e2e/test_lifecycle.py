"""Lifecycle tests: who decides success, what a failed pod does, retries, deadline, TTL, suspend,
cleanup and start order, run for real in both worlds and held to the report's lifecycle findings.

Each scenario is a v1 job (PyTorchJob, TFJob, XGBoostJob, MPIJob v1; written here, or a golden
fixture's input where the scenario pins a fix) plus a script of what each pod's process does:
``Scenario.program(role, index, attempt)`` returns a shell text such as ``sleep 1; exit 137``, or
None for ``sleep infinity``; ``attempt`` counts the earlier starts of that role/index (in-place
restarts and re-created pods alike); ``{gate:NAME}`` in the text waits until the test opens that
gate, so a process ends exactly when the scenario says. It runs

* as the v1 job in namespace A: the real Training Operator v1.9.4 (webhooks on);
* as ``kf2jobset convert`` of it in namespace B: the real JobSet v0.12.0 + Job controllers + GC;

with one node agent (tests/e2e/nodeagent.py) running every pod. ``Scenario.observe(side)`` is one
function, applied to both worlds at the same time, that reads only what a user sees: the v1 job's
conditions (Succeeded / Failed) or the JobSet's ``terminalState``/conditions, which pods exist in
which phase (or are deleted), whether the job object is being deleted or gone, and when each
container started. It waits for events (a pod started, exited, was replaced), then gives the
controllers a few seconds to react. It returns one short observation per lifecycle rule the
scenario exercises, named as kf2jobset/runtime/lifecycle.py names them: job rules (success,
cleanPodPolicy, activeDeadlineSeconds, ttl, suspend) and per-replica-type rules as
``rule:role`` (start:worker, restartPolicy:worker -- what a container exit does --, failure:worker
-- what a pod that ends Failed does --, backoffLimit:worker).

The check, both ways, per scenario: the rules whose observations differ between the worlds must be
exactly the rules the kf2jobset report names as lifecycle differences for that conversion
(evidence of aspect ``lifecycle`` with the rule as subject, or aspect start / restartPolicy /
failure / backoffLimit for that role), restricted to the rules the scenario exercises. A real
difference the report does not name fails; a lifecycle difference the report claims that does not
happen fails too. ``expect_v1`` states what the operator is documented to do
(the operator's code: github.com/kubeflow/training-operator@v1.9.4 pkg/controller.v1, the source of what
the project's notes on it say), so a
scenario that did not really exercise its rule cannot pass by accident. ``test_mutations_are_caught``
runs a scenario against a deliberately wrong JobSet and requires the check to fail.

A pod that ends Failed under restartPolicy OnFailure (what an eviction does) comes from the pod's
``activeDeadlineSeconds``, which the node agent enforces like the kubelet.

Run alone: ``python -m pytest tests/e2e/test_lifecycle.py`` (root: the node agent needs network
namespaces). ``KF2JOBSET_LIFECYCLE_ONLY=REGEX`` runs some scenarios, ``KF2JOBSET_LIFECYCLE_PARALLEL=N``
(default 7) sets how many run at once, ``KF2JOBSET_LIFECYCLE_SUMMARY=FILE`` writes every observation,
claim and trace as JSON.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import yaml

from kf2jobset.options import ConvertOptions

from ..conftest import FIXTURES
from .nodeagent import NodeAgent
from .test_differential import JS, KF, KF_PLURAL, Runner, _create_refs, _refs, _templates, jobset_pod_key, operator_pod_key

PARALLEL = int(os.environ.get("KF2JOBSET_LIFECYCLE_PARALLEL", "7"))
ROLE_ASPECTS = ("start", "restartPolicy", "failure", "backoffLimit")
CONTAINER = {"PyTorchJob": "pytorch", "TFJob": "tensorflow", "XGBoostJob": "xgboost", "MPIJob": "mpi",
             "PaddleJob": "paddle", "JAXJob": "jax"}
FIELD = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
         "MPIJob": "mpiReplicaSpecs", "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}


# ---------------------------------------------------------------------------------------------
# manifests


def probe(delay: float) -> dict:
    """A readiness probe that passes from ``delay`` seconds after the container starts."""
    return {"exec": {"command": ["true"]}, "initialDelaySeconds": int(delay), "periodSeconds": 1}


def replica(kind: str, n: int, policy: str, ready_after: float | None = None, **pod) -> dict:
    c = {"name": CONTAINER[kind], "image": "lifecycle/" + CONTAINER[kind]}
    if ready_after is not None:
        c["readinessProbe"] = probe(ready_after)
    return {"replicas": n, "restartPolicy": policy,
            "template": {"spec": {"terminationGracePeriodSeconds": 1, "containers": [c], **pod}}}


def v1job(kind: str, name: str, replicas: dict, run_policy: dict | None = None, **extra) -> dict:
    spec: dict = {FIELD[kind]: replicas, **extra}
    if kind == "MPIJob":
        spec.setdefault("slotsPerWorker", 1)
    if run_policy:
        spec["runPolicy"] = run_policy
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def _fixture(path: str) -> dict:
    """A golden fixture's v1 job (the fixture pins the report text this scenario holds to reality)."""
    return yaml.safe_load((FIXTURES / path / "input.yaml").read_text())


# ---------------------------------------------------------------------------------------------
# one world, as a user sees it


@dataclass
class Start:
    namespace: str
    pod: str
    role: str
    index: int
    restart: int  # the container's restart count in its pod (0: a new pod)
    t: float


class Side:
    """One world of a scenario: the v1 job or the JobSet, its pods and its containers' starts."""

    def __init__(self, world: str, api, namespace: str, name: str, key_of, programs: "Programs", t0: float):
        from kubernetes import client

        self.world, self.namespace, self.name, self.key_of = world, namespace, name, key_of
        self.core, self.custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        self.programs, self.t0 = programs, t0
        self.kind = ""
        self.plural = ""
        self.trace: list[str] = []  # what observe saw, for failure messages

    # ---- the job object
    def _read(self) -> dict | None:
        from kubernetes.client.rest import ApiException

        try:
            if self.world == "v1":
                return self.custom.get_namespaced_custom_object("kubeflow.org", "v1", self.namespace, self.plural, self.name)
            return self.custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", self.namespace, "jobsets", self.name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def deletion_started(self) -> bool:
        obj = self._read()
        return obj is None or bool((obj.get("metadata") or {}).get("deletionTimestamp"))

    def status(self) -> str:
        """Succeeded | Failed | active | deleted."""
        obj = self._read()
        if obj is None:
            return "deleted"
        st = obj.get("status") or {}
        conds = {c.get("type"): c for c in st.get("conditions") or [] if c.get("status") == "True"}
        if self.world == "v1":
            for t in ("Succeeded", "Failed"):
                if t in conds:
                    return t
            return "active"
        terminal = st.get("terminalState")
        if terminal == "Completed" or "Completed" in conds:
            return "Succeeded"
        if terminal == "Failed" or "Failed" in conds:
            return "Failed"
        return "active"

    def wait_done(self, timeout: float) -> tuple[str, float]:
        """(status, seconds since creation) once Succeeded/Failed/deleted, or ("active", timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.status()
            if s != "active":
                return s, time.monotonic() - self.t0
            time.sleep(0.25)
        return "active", time.monotonic() - self.t0

    def sleep_until(self, seconds_after_creation: float) -> None:
        time.sleep(max(0.0, self.t0 + seconds_after_creation - time.monotonic()))

    def wait_for(self, predicate, what: str, timeout: float | None = None):
        """Poll until ``predicate()`` is truthy; on a timeout note it and go on (the observation then shows it)."""
        deadline = time.monotonic() + (EVENT_TIMEOUT if timeout is None else timeout)
        while time.monotonic() < deadline:
            v = predicate()
            if v:
                return v
            time.sleep(0.25)
        self.note(f"timed out waiting for: {what}")
        return None

    def open_gate(self, name: str) -> None:
        self.note(f"gate {name} opened")
        self.programs.gate_path(self.namespace, name).touch()

    def touch(self) -> None:
        """An update of the job object (an annotation), nothing else."""
        body = {"metadata": {"annotations": {"kf2jobset.test/touched": str(time.time())}}}
        if self.world == "v1":
            self.custom.patch_namespaced_custom_object("kubeflow.org", "v1", self.namespace, self.plural, self.name, body)
        else:
            self.custom.patch_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", self.namespace, "jobsets", self.name, body)

    def suspend(self, value: bool) -> None:
        if self.world == "v1":
            self.custom.patch_namespaced_custom_object("kubeflow.org", "v1", self.namespace, self.plural, self.name,
                                                       {"spec": {"runPolicy": {"suspend": value}}})
        else:
            self.custom.patch_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", self.namespace, "jobsets", self.name,
                                                       {"spec": {"suspend": value}})

    # ---- pods
    def pods(self, role: str | None = None) -> list[tuple]:
        """(role, index, name, phase) of pods that exist and are not being deleted."""
        out = []
        for p in self.core.list_namespaced_pod(self.namespace).items:
            key = self.key_of(p.metadata.labels or {})
            if key is None or p.metadata.deletion_timestamp is not None:
                continue
            if role is None or key[0] == role:
                out.append((key[0], key[1], p.metadata.name, p.status.phase))
        return out

    def pod_states(self, role: str) -> str:
        """What is left of a role's pods: e.g. "2 unfinished" (Pending/Running), "1 Succeeded", "none"."""
        counts: dict = {}
        for _, _, _, phase in self.pods(role):
            phase = "unfinished" if phase in ("Pending", "Running") else phase  # what cleanPodPolicy Running deletes
            counts[phase] = counts.get(phase, 0) + 1
        return ", ".join(f"{n} {ph}" for ph, n in sorted(counts.items())) or "none"

    def starts(self, role: str | None = None) -> list[Start]:
        return [s for s in self.programs.starts(self.namespace) if role is None or s.role == role]

    def first_start(self, role: str) -> float | None:
        ts = [s.t for s in self.starts(role)]
        return min(ts) if ts else None

    def note(self, text: str) -> None:
        self.trace.append(f"{time.monotonic() - self.t0:5.1f}s {text}")

    def snapshot(self) -> str:
        """Every pod with its phase and its containers' states (for failure messages)."""
        out = []
        for p in self.core.list_namespaced_pod(self.namespace).items:
            cs = []
            for c in (p.status.init_container_statuses or []) + (p.status.container_statuses or []):
                st = c.state
                what = ("running" if st.running else f"exit {st.terminated.exit_code}" if st.terminated
                        else (st.waiting.reason if st.waiting else "?"))
                cs.append(f"{c.name}:{what}/r{c.restart_count}")
            out.append(f"{p.metadata.name} {p.status.phase}{' deleting' if p.metadata.deletion_timestamp else ''} "
                       f"[{' '.join(cs)}]")
        obj = self._read()
        conds = [(c.get("type"), c.get("status"), c.get("reason")) for c in ((obj or {}).get("status") or {}).get("conditions") or []]
        return f"object {'gone' if obj is None else conds}; pods: {'; '.join(out) or 'none'}"


# ---------------------------------------------------------------------------------------------
# what the containers run


@dataclass
class Entry:
    scenario: "Scenario"
    key_of: Callable
    workers: int = 0  # MPI v1: how many worker pods kubectl-delivery waits for


class Programs:
    """The node agent's program for every container of these tests (a callable, see nodeagent.py)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: dict[str, Entry] = {}
        self._starts: list[Start] = []
        self.api_factory = None  # set by the fixture: a new kubernetes ApiClient
        self.stopping = threading.Event()
        self.gates = Path(tempfile.mkdtemp(prefix="kf2js-lifecycle-gates-"))

    def gate_path(self, namespace: str, name: str) -> Path:
        d = self.gates / namespace
        d.mkdir(exist_ok=True)
        return d / name

    def _gates(self, namespace: str, text: str) -> str:
        """``{gate:NAME}``: wait until the test opens that gate (a file on this machine, seen by the pods)."""
        return re.sub(r"\{gate:([a-z0-9-]+)\}",
                      lambda m: f"until [ -e {self.gate_path(namespace, m.group(1))} ]; do sleep 0.2; done", text)

    def register(self, namespace: str, entry: Entry) -> None:
        with self.lock:
            self.entries[namespace] = entry

    def starts(self, namespace: str) -> list[Start]:
        with self.lock:
            return [s for s in self._starts if s.namespace == namespace]

    def __call__(self, launch) -> list[str]:
        entry = self.entries.get(launch.namespace)
        if launch.init:
            if launch.container == "init-pytorch":  # its nslookup loop, with the resolver the pods have
                return [w.replace("nslookup", "getent hosts") for w in launch.command]
            if launch.container == "kubectl-delivery" and entry is not None:
                self._wait_workers_ready(launch.namespace, entry)
            return ["true"]
        if entry is None:
            return ["sleep", "infinity"]
        key = entry.key_of(launch.labels)
        if key is None:
            return ["sleep", "infinity"]
        with self.lock:
            attempt = sum(1 for s in self._starts if s.namespace == launch.namespace and (s.role, s.index) == key)
            self._starts.append(Start(launch.namespace, launch.pod, key[0], key[1], launch.restart, time.monotonic()))
        text = entry.scenario.program(key[0], key[1], attempt)
        return ["sh", "-c", self._gates(launch.namespace, text)] if text else ["sleep", "infinity"]

    def _wait_workers_ready(self, namespace: str, entry: Entry, timeout: float = 90.0) -> None:
        """What the kubectl-delivery image does before the MPIJob v1 launcher starts: block until every
        worker pod listed in the hostfile is Running and Ready (github.com/kubeflow/mpi-operator@v0.3.0
        cmd/kubectl-delivery/app/server.go)."""
        from kubernetes import client

        deadline = time.monotonic() + timeout
        with self.api_factory() as api:
            core = client.CoreV1Api(api)
            while time.monotonic() < deadline and not self.stopping.is_set():
                ready = 0
                for p in core.list_namespaced_pod(namespace, label_selector=KF + "replica-type=worker").items:
                    conds = {c.type: c.status for c in p.status.conditions or []}
                    if p.status.phase == "Running" and conds.get("Ready") == "True" and p.metadata.deletion_timestamp is None:
                        ready += 1
                if ready >= entry.workers:
                    return
                time.sleep(0.3)


# ---------------------------------------------------------------------------------------------
# scenarios
#
# Observations wait for events (a pod started, exited, was replaced), never for a fixed moment
# after creation: the machine is shared, and a pod may take seconds to start. Once the event is
# seen, SETTLE seconds give the controllers time to react. Processes that must not end on their
# own wait on a gate ("{gate:NAME}" in a program), which observe opens (Side.open_gate).

SETTLE = 8.0
EVENT_TIMEOUT = 90.0


@dataclass
class Scenario:
    id: str
    job: dict
    rules: tuple  # lifecycle rules this scenario exercises (observe returns one value for each)
    observe: Callable[[Side], dict]
    program: Callable[[str, int, int], str | None]
    expect_v1: dict  # what the operator does (its code: training-operator@v1.9.4 pkg/controller.v1, pkg/common)
    options: ConvertOptions = field(default_factory=ConvertOptions)
    why: str = ""


def run_forever(role, index, attempt):
    return None


def start_order(s: Side, role: str, after: str, ready_after: float) -> str:
    """Did ``role``'s first container start once ``after`` was Ready (its probe passes ``ready_after`` s
    after it starts), or with it?"""
    a, b = s.first_start(after), s.first_start(role)
    if a is None or b is None:
        return f"{role} or {after} never started"
    s.note(f"{after} started at {a - s.t0:.1f}s, {role} at {b - s.t0:.1f}s")
    return f"after {after} is Ready" if b - a >= ready_after - 0.5 else "at once"


def role_starts(s: Side, role: str) -> str:
    st = s.starts(role)
    pods = sum(1 for x in st if x.restart == 0)
    return f"{len(st)} {role} start(s) in {pods} pod(s)"


# -- who decides success; cleanPodPolicy None; PyTorch start order

MASTER_READY_AFTER = 5  # wide enough that "at once" (the no-dependsOn mutation) never looks like "after Ready"


def _pt_master_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "master" else None


def _obs_pt_master(s: Side) -> dict:
    s.wait_for(lambda: len({x.index for x in s.starts("worker")}) == 2, "both workers started")
    out = {"start:worker": start_order(s, "worker", "master", MASTER_READY_AFTER)}
    s.open_gate("finish")
    s.wait_for(lambda: s.status() != "active" or any(p[3] == "Succeeded" for p in s.pods("master")), "the master exited")
    st, t = s.wait_done(SETTLE)
    workers = s.pod_states("worker")
    s.note(f"{st} at {t:.1f}s; workers then: {workers}")
    out["success"] = f"{st} when the master exits 0 (the workers never exit)"
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: master {s.pod_states('master')}; worker {s.pod_states('worker')}"
    return out


PT_MASTER = Scenario(
    "pytorch-master-decides",
    v1job("PyTorchJob", "pt-master", {"Master": replica("PyTorchJob", 1, "OnFailure", ready_after=MASTER_READY_AFTER),
                                      "Worker": replica("PyTorchJob", 2, "OnFailure")}),
    ("success", "cleanPodPolicy", "start:worker"), _obs_pt_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: master 1 Succeeded; worker 2 unfinished",
     "start:worker": "after master is Ready"},
    why="§3.6: the master alone decides; cleanPodPolicy None (default) leaves workers running; §3.3 init-pytorch",
)


# -- XGBoost: the master decides

def _obs_xgb_master(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"master", "worker"}, "every replica type started")
    s.open_gate("finish")
    s.wait_for(lambda: s.status() != "active" or any(p[3] == "Succeeded" for p in s.pods("master")), "the master exited")
    st, t = s.wait_done(SETTLE)
    out = {"success": f"{st} when the master exits 0 (the workers never exit)"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


PADDLE_MASTER = Scenario(
    "paddle-master-decides",
    v1job("PaddleJob", "pd-master", {"Master": replica("PaddleJob", 1, "OnFailure"),
                                     "Worker": replica("PaddleJob", 2, "OnFailure")}),
    ("success", "cleanPodPolicy"), _obs_xgb_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="§7/§9.2: a PaddleJob with a Master succeeds when the master has",
)

XGB_MASTER = Scenario(
    "xgboost-master-decides",
    v1job("XGBoostJob", "xgb-master", {"Master": replica("XGBoostJob", 1, "OnFailure"),
                                       "Worker": replica("XGBoostJob", 2, "OnFailure")}),
    ("success", "cleanPodPolicy"), _obs_xgb_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="§4.4: the master decides; cleanPodPolicy None leaves the workers running",
)


# -- restartPolicy Always: an exit 0 is restarted too

def _always_program(role, index, attempt):
    return "sleep 1; exit 0" if index == 0 and attempt == 0 else None


def _obs_always(s: Side) -> dict:
    def w0():
        return [x for x in s.starts("worker") if x.index == 0]
    s.wait_for(lambda: len(w0()) >= 2 or any(p[1] == 0 and p[3] == "Succeeded" for p in s.pods("worker")),
               "worker 0 exited 0 and was restarted or is done")
    time.sleep(SETTLE / 2)
    return {"restartPolicy:worker": f"worker 0 exits 0: {'restarted in place' if len(w0()) >= 2 else 'done (Succeeded)'}; "
                                    f"the job {s.status()}"}


ALWAYS = Scenario(
    "pytorch-always-exit-0",
    v1job("PyTorchJob", "pt-always", {"Worker": replica("PyTorchJob", 2, "Always")}),
    ("restartPolicy:worker",), _obs_always, _always_program,
    {"restartPolicy:worker": "worker 0 exits 0: restarted in place; the job active"},
    why="§1.4.3/§1.6: the pod keeps restartPolicy Always, so the kubelet restarts even a clean exit",
)


# -- TFJob without chief: worker 0 exiting 0 ends the job

def _tf_worker0_program(role, index, attempt):
    return "{gate:finish}; exit 0" if index == 0 else None


def _obs_tf_worker0(s: Side) -> dict:
    s.wait_for(lambda: len({x.index for x in s.starts("worker")}) == 2, "both workers started")
    s.open_gate("finish")
    s.wait_for(lambda: any(p[1] == 0 and p[3] == "Succeeded" for p in s.pods("worker")) or s.status() != "active",
               "worker 0 exited")
    st, t = s.wait_done(SETTLE)
    s.note(f"{st} at {t:.1f}s")
    return {"success": f"{st} after worker 0 exits 0 while worker 1 runs" if st != "active"
            else "still running after worker 0 exits 0 (worker 1 runs)"}


TF_WORKER0 = Scenario(
    "tfjob-worker0-decides",
    v1job("TFJob", "tf-w0", {"Worker": replica("TFJob", 2, "OnFailure")}),
    ("success",), _obs_tf_worker0, _tf_worker0_program,
    {"success": "Succeeded after worker 0 exits 0 while worker 1 runs"},
    why="§2.5: no chief: worker 0 exiting 0 succeeds the job (successPolicy default)",
)


# -- TFJob with a chief and PS: the chief decides, PS keep running

def _tf_chief_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "chief" else None


def _obs_tf_chief(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"chief", "ps", "worker"}, "every replica type started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out = {"success": f"{st} when the chief exits 0 (PS and workers never exit)"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: ps {s.pod_states('ps')}; worker {s.pod_states('worker')}"
    return out


TF_CHIEF = Scenario(
    "tfjob-chief-decides",
    v1job("TFJob", "tf-chief", {"Chief": replica("TFJob", 1, "OnFailure"), "PS": replica("TFJob", 1, "OnFailure"),
                                "Worker": replica("TFJob", 1, "OnFailure")}),
    ("success", "cleanPodPolicy"), _obs_tf_chief, _tf_chief_program,
    {"success": "Succeeded when the chief exits 0 (PS and workers never exit)",
     "cleanPodPolicy": "after the job: ps 1 unfinished; worker 1 unfinished"},
    why="§2.5: Chief decides; PS servers keep running under cleanPodPolicy None",
)


# -- PyTorch worker-only, elastic: any worker

def _elastic_program(role, index, attempt):
    return "{gate:finish}; exit 0" if index == 1 else None


def _obs_elastic(s: Side) -> dict:
    s.wait_for(lambda: len({x.index for x in s.starts("worker")}) == 3, "every worker started")
    s.open_gate("finish")
    s.wait_for(lambda: any(p[1] == 1 and p[3] == "Succeeded" for p in s.pods("worker")) or s.status() != "active",
               "worker 1 exited")
    st, t = s.wait_done(SETTLE)
    return {"success": f"{st} after worker 1 exits 0" if st != "active" else "still running after worker 1 exits 0"}


ELASTIC = Scenario(
    "pytorch-elastic-any-worker",
    v1job("PyTorchJob", "pt-elastic", {"Worker": replica("PyTorchJob", 3, "OnFailure")},
          elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d"}),
    ("success",), _obs_elastic, _elastic_program,
    {"success": "Succeeded after worker 1 exits 0"},
    why="§3.6: elastic worker-only PyTorchJob succeeds when any worker has succeeded",
)


# -- PyTorch worker-only, not elastic: every worker

def _all_workers_program(role, index, attempt):
    return "{gate:first}; exit 0" if index == 0 else "{gate:second}; exit 0"


def _obs_all_workers(s: Side) -> dict:
    s.wait_for(lambda: len({x.index for x in s.starts("worker")}) == 2, "both workers started")
    s.open_gate("first")
    s.wait_for(lambda: any(p[1] == 0 and p[3] == "Succeeded" for p in s.pods("worker")) or s.status() != "active",
               "worker 0 exited")
    first, _ = s.wait_done(SETTLE / 2)
    s.open_gate("second")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{first} after worker 0, {st} at {t:.1f}s")
    return {"success": f"{first} after worker 0 exits 0; {st} after worker 1 exits 0"}


ALL_WORKERS = Scenario(
    "pytorch-worker-only-all-workers",
    v1job("PyTorchJob", "pt-workers", {"Worker": replica("PyTorchJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§3.6: a worker-only PyTorchJob succeeds when every worker has succeeded",
)


JAX_ALL_WORKERS = Scenario(
    "jax-all-workers",
    v1job("JAXJob", "jax-workers", {"Worker": replica("JAXJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§8/§9.2: a JAXJob succeeds when every worker has",
)

PADDLE_ALL_WORKERS = Scenario(
    "paddle-worker-only-all-workers",
    v1job("PaddleJob", "pd-workers", {"Worker": replica("PaddleJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§7/§9.2: a worker-only PaddleJob succeeds when every worker has (the JobSet splits worker 0 into a "
        "replicatedJob of its own; both are success targets)",
)


# -- restartPolicy Never: one failed pod fails the job

def _never_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" else None


def _obs_never(s: Side) -> dict:
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out = {"failure:worker": f"{st}; {role_starts(s, 'worker')}"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: master {s.pod_states('master')}"
    return out


NEVER = Scenario(
    "pytorch-never-worker-fails",
    v1job("PyTorchJob", "pt-never", {"Master": replica("PyTorchJob", 1, "Never"),
                                     "Worker": replica("PyTorchJob", 1, "Never")}),
    ("failure:worker", "cleanPodPolicy"), _obs_never, _never_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)", "cleanPodPolicy": "after the job: master 1 unfinished"},
    why="§3.6: a failed pod under Never fails the job; cleanPodPolicy None keeps the master running",
)


# -- XGBoost, Never: a failed worker fails the job

NEVER_XGB = Scenario(
    "xgboost-never-worker-fails",
    v1job("XGBoostJob", "xgb-never", {"Master": replica("XGBoostJob", 1, "Never"),
                                      "Worker": replica("XGBoostJob", 1, "Never")}),
    ("failure:worker", "cleanPodPolicy"), _obs_never, _never_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)", "cleanPodPolicy": "after the job: master 1 unfinished"},
    why="§4.4: any Failed pod fails an XGBoostJob",
)


# -- restartPolicy OnFailure: the container is restarted in place

def _onfailure_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and attempt == 0 else None


def _obs_onfailure(s: Side) -> dict:
    s.wait_for(lambda: len(s.starts("worker")) >= 2 or s.status() != "active", "the worker restarted")
    st, t = s.wait_done(SETTLE)
    return {"restartPolicy:worker": f"{st}; {role_starts(s, 'worker')}"}


ONFAILURE = Scenario(
    "pytorch-onfailure-restart",
    v1job("PyTorchJob", "pt-onfail", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                      "Worker": replica("PyTorchJob", 1, "OnFailure")}),
    ("restartPolicy:worker",), _obs_onfailure, _onfailure_program,
    {"restartPolicy:worker": "active; 2 worker start(s) in 1 pod(s)"},
    why="§1.6: under OnFailure the kubelet restarts the container; the pod never fails, no backoffLimit set",
)

ONFAILURE_XGB = Scenario(
    "xgboost-onfailure-restart",
    v1job("XGBoostJob", "xgb-onfail", {"Master": replica("XGBoostJob", 1, "OnFailure"),
                                       "Worker": replica("XGBoostJob", 1, "OnFailure")}),
    ("restartPolicy:worker",), _obs_onfailure, _onfailure_program,
    {"restartPolicy:worker": "active; 2 worker start(s) in 1 pod(s)"},
    why="§1.6: an exit under OnFailure is an in-place restart; the pod stays Running, so XGBoost's rule never fires",
)


# -- restartPolicy ExitCode: 137 is retried (new pod), 1 is permanent

def _exitcode_program(role, index, attempt):
    if role != "worker":
        return None
    return "sleep 1; exit 137" if attempt == 0 else "sleep 1; exit 1"


def _obs_exitcode(s: Side) -> dict:
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    return {"failure:worker": f"{st}; {role_starts(s, 'worker')}"}


EXITCODE = Scenario(
    "pytorch-exitcode-137-then-1",
    v1job("PyTorchJob", "pt-exitcode", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                        "Worker": replica("PyTorchJob", 1, "ExitCode")}),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§1.6: ExitCode: 137 (retryable) re-creates the pod, exit 1 (permanent) fails the job",
)

EXITCODE_TF = Scenario(
    "tfjob-exitcode-137-then-1",
    v1job("TFJob", "tf-exitcode", {"Chief": replica("TFJob", 1, "OnFailure"),
                                   "Worker": replica("TFJob", 1, "ExitCode")}),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§1.6/§2.5: ExitCode: 137 re-creates the pod (Restarting), exit 1 fails the job",
)


EXITCODE_XGB = Scenario(
    "xgboost-exitcode-137-then-1",
    v1job("XGBoostJob", "xgb-exitcode", {"Master": replica("XGBoostJob", 1, "OnFailure"),
                                         "Worker": replica("XGBoostJob", 1, "ExitCode")}),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§4.4 + §1.6: an ExitCode type is Restarting on 137 (pod re-created), exit 1 is permanent",
)

EXITCODE_NO_RETRY = Scenario(
    "pytorch-exitcode-137-backofflimit-0",
    _fixture("pytorchjob/exitcode-no-retry"),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)"},
    why="§1.6 step 4(a): with backoffLimit 0 a new Failed pod fails the job, even a retryable exit code",
)


def _mpi_exit_program(code):
    def program(role, index, attempt):
        return f"sleep 1; exit {code}" if role == "worker" and index == 0 and attempt == 0 else None
    return program


def _obs_mpi_exitcode(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or len([x for x in s.starts("worker") if x.index == 0]) >= 2,
               "the job ended or worker 0 started again", timeout=25)
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s")
    return {"failure:worker": f"{st}; {len([x for x in s.starts('worker') if x.index == 0])} start(s) of worker 0"}


MPI_EXITCODE_137 = Scenario(
    "mpijob-v1-exitcode-137",
    _fixture("mpijob-v1/exitcode"),
    ("failure:worker",), _obs_mpi_exitcode, _mpi_exit_program(137),
    {"failure:worker": "active; 1 start(s) of worker 0"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: under ExitCode a Failed pod marks the MPIJob Restarting, but nothing re-creates it",
)

MPI_EXITCODE_1 = Scenario(
    "mpijob-v1-exitcode-1",
    _fixture("mpijob-v1/exitcode"),
    ("failure:worker",), _obs_mpi_exitcode, _mpi_exit_program(1),
    {"failure:worker": "active; 1 start(s) of worker 0"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: under ExitCode the MPIJob is Restarting even for a permanent code (the common permanent-code "
        "rule is in ReconcilePods, which MPIJob v1 replaces)",
)


# -- TFJob enableDynamicWorker: a failed worker is ignored

def _tf_dynamic_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and index == 1 else None


def _obs_tf_dynamic(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or any(p[1] == 1 and p[3] == "Failed" for p in s.pods("worker")),
               "worker 1 failed")
    st, t = s.wait_done(SETTLE)
    return {"failure:worker": f"{st} after worker 1 exits 1"}


TF_DYNAMIC = Scenario(
    "tfjob-dynamic-worker-fails",
    v1job("TFJob", "tf-dynamic", {"Chief": replica("TFJob", 1, "Never"), "Worker": replica("TFJob", 2, "Never")},
          enableDynamicWorker=True),
    ("failure:worker",), _obs_tf_dynamic, _tf_dynamic_program,
    {"failure:worker": "active after worker 1 exits 1"},
    why="§2.5: with enableDynamicWorker a Worker failure is ignored",
)


# -- a pod that ends Failed under OnFailure (pod deadline, as an eviction does)

def _obs_pod_failed(s: Side) -> dict:
    # the Job controller re-creates a failed pod after its back-off (10 s), the operator at once
    s.wait_for(lambda: s.status() != "active" or sum(1 for x in s.starts("worker") if x.restart == 0) >= 2,
               "the job ended or the failed worker pod was replaced")
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    replaced = sum(1 for x in s.starts("worker") if x.restart == 0) >= 2
    return {"failure:worker": st if st != "active" else f"active, the failed worker pod {'' if replaced else 'not '}replaced"}


def _failed_pod_replicas(kind):
    return {"Master": replica(kind, 1, "OnFailure"),
            "Worker": replica(kind, 1, "OnFailure", activeDeadlineSeconds=3)}


XGB_POD_FAILED = Scenario(
    "xgboost-onfailure-pod-failed",
    v1job("XGBoostJob", "xgb-podfail", _failed_pod_replicas("XGBoostJob")),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "Failed"},
    why="§4.4: any Failed pod fails an XGBoostJob unless its type is ExitCode (pod deadline makes it Failed)",
)

MPI_POD_FAILED = Scenario(
    "mpijob-v1-onfailure-pod-failed",
    v1job("MPIJob", "mpi-podfail", {"Launcher": replica("MPIJob", 1, "OnFailure"),
                                    "Worker": replica("MPIJob", 1, "OnFailure", activeDeadlineSeconds=3)}),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "Failed"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: any Failed launcher or worker pod fails an MPIJob v1 (unless ExitCode)",
)

PT_POD_FAILED = Scenario(
    "pytorch-onfailure-pod-failed",
    v1job("PyTorchJob", "pt-podfail", _failed_pod_replicas("PyTorchJob")),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "active, the failed worker pod replaced"},
    why="§1.6/§3.6: a Failed pod under OnFailure is deleted and re-created (Restarting)",
)


# -- backoffLimit: v1 sums container restarts over the whole job

def _backoff_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and attempt == 0 else None


def _obs_backoff(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or {x.index for x in s.starts("worker") if x.restart > 0} == {0, 1},
               "both workers restarted once")
    st, t = s.wait_done(SETTLE)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    return {"backoffLimit:worker": f"{st} after each of 2 workers restarted once (backoffLimit 2)"}


BACKOFF = Scenario(
    "pytorch-backofflimit-summed",
    v1job("PyTorchJob", "pt-backoff", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                       "Worker": replica("PyTorchJob", 2, "OnFailure")},
          run_policy={"backoffLimit": 2}),
    ("backoffLimit:worker",), _obs_backoff, _backoff_program,
    {"backoffLimit:worker": "Failed after each of 2 workers restarted once (backoffLimit 2)"},
    why="§1.6 step 4(b): the sum of restartCount over running pods reaching backoffLimit fails the job",
)


# -- backoffLimit under ExitCode: v1 re-creates pods without counting them

def _always_137(role, index, attempt):
    return "sleep 1; exit 137" if role == "worker" else None


def _obs_backoff_exitcode(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or len(s.starts("worker")) >= 3, "the job ended or 3 worker pods ran")
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    return {"backoffLimit:worker": f"{st} while the worker keeps exiting 137 (backoffLimit 1)"
            + (", its pod re-created each time" if st == "active" else "")}


BACKOFF_EXITCODE = Scenario(
    "pytorch-backofflimit-exitcode-137",
    v1job("PyTorchJob", "pt-backoff-ec", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                          "Worker": replica("PyTorchJob", 1, "ExitCode")},
          run_policy={"backoffLimit": 1}),
    ("backoffLimit:worker",), _obs_backoff_exitcode, _always_137,
    {"backoffLimit:worker": "active while the worker keeps exiting 137 (backoffLimit 1), its pod re-created each time"},
    why="§1.6 step 4: re-created pods start at restartCount 0, so ExitCode retries are not bounded by backoffLimit >= 1",
)


# -- activeDeadlineSeconds

DEADLINE_S = 12  # fixtures/pytorchjob/active-deadline's job, with this deadline


def _obs_deadline(s: Side) -> dict:
    s.wait_for(lambda: {x.index for x in s.starts("worker")} >= {0, 1} or s.status() != "active",
               "every pod started")
    settled = max((x.t for x in s.starts()), default=s.t0) - s.t0
    s.note(f"pods settled at {settled:.1f}s")
    assert settled < DEADLINE_S - 3, (f"{s.world}: the pods took {settled:.0f} s to start, too close to the "
                                      f"{DEADLINE_S} s deadline for a clean observation (machine overloaded?)")
    s.sleep_until(DEADLINE_S + SETTLE)
    at_deadline = s.status()
    # any change to the job makes the operator reconcile it (its watch on the job has no update filter)
    s.touch()
    st, t = s.wait_done(SETTLE)
    s.note(f"{at_deadline} at {DEADLINE_S + SETTLE}s; {st} after a touch, at {t:.1f}s")
    out = {"activeDeadlineSeconds": f"{DEADLINE_S + SETTLE:.0f} s after creation: {at_deadline}; after an update "
                                    f"of the job object: {st}"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


def _with_deadline(job: dict, seconds: int) -> dict:
    job = copy.deepcopy(job)
    job["spec"]["runPolicy"]["activeDeadlineSeconds"] = seconds
    return job


DEADLINE = Scenario(
    "pytorch-active-deadline",
    _with_deadline(_fixture("pytorchjob/active-deadline"), DEADLINE_S),
    ("activeDeadlineSeconds", "cleanPodPolicy"), _obs_deadline, run_forever,
    {"activeDeadlineSeconds": f"{DEADLINE_S + SETTLE:.0f} s after creation: active; after an update of the job "
                              f"object: Failed",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="the operator's code, not §1.6: the deadline is checked only when the job is reconciled (its "
        "WorkQueue.AddAfter is a no-op FakeWorkQueue); then v1.9.4 applies cleanPodPolicy (None: pods keep running)",
)


# -- MPIJob v1: the launcher starts once the workers are Ready; the launcher decides

def _mpi_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "launcher" else None


def _obs_mpi(s: Side) -> dict:
    s.wait_for(lambda: s.first_start("launcher") is not None, "the launcher started")
    out = {"start:launcher": start_order(s, "launcher", "worker", 3)}
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out["success"] = f"{st} when the launcher exits 0"
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


MPI = Scenario(
    "mpijob-v1-launcher",
    v1job("MPIJob", "mpi-order", {"Launcher": replica("MPIJob", 1, "Never"),
                                  "Worker": replica("MPIJob", 2, "Never", ready_after=3)}),
    ("start:launcher", "success", "cleanPodPolicy"), _obs_mpi, _mpi_program,
    {"start:launcher": "after worker is Ready", "success": "Succeeded when the launcher exits 0",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.2: kubectl-delivery blocks the launcher until every worker is Ready; §5.3 the launcher decides",
)


# -- suspend

def _obs_suspend(s: Side) -> dict:
    s.sleep_until(5)
    before = len(s.pods())
    s.suspend(False)
    s.wait_for(lambda: sum(1 for p in s.pods() if p[3] == "Running") >= 2, "both pods running after resume")
    after = sum(1 for p in s.pods() if p[3] == "Running")
    s.suspend(True)
    s.wait_for(lambda: not s.pods(), "every pod deleted after suspending again", timeout=30)
    left = len(s.pods())
    return {"suspend": f"{before} pods while suspended; {after} running after resume; "
                       f"{'every pod' if not left else f'{after - left} pod(s)'} deleted when suspended again"}


SUSPEND = Scenario(
    "pytorch-suspend-resume",
    v1job("PyTorchJob", "pt-suspend", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                       "Worker": replica("PyTorchJob", 1, "OnFailure")},
          run_policy={"suspend": True}),
    ("suspend",), _obs_suspend, run_forever,
    {"suspend": "0 pods while suspended; 2 running after resume; every pod deleted when suspended again"},
    why="§1.6 step 3: a suspended job has no pods (suspending deletes them); resuming creates them",
)


# -- ttlSecondsAfterFinished

TTL_S = 3


def _master_exits(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "master" else None


def _obs_ttl(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"master", "worker"}, "every pod started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    started = s.wait_for(s.deletion_started, "the job's deletion", timeout=TTL_S + 25)
    deleting = time.monotonic() - s.t0
    s.note(f"{st} at {t:.1f}s, deletion started at {deleting:.1f}s")
    # a JobSet is deleted in the foreground: it goes once its Jobs and pods have gone
    s.wait_for(lambda: s.status() == "deleted" and not s.pods(), "the job and its pods gone", timeout=40)
    s.note(f"object and pods gone at {time.monotonic() - s.t0:.1f}s")
    if not started:
        return {"ttl": f"{st}; the job not deleted {TTL_S + 25} s after it finished"}
    # the finish is seen by polling (late under load), the deletion too: "about ttl" spans that lag,
    # and still tells an immediate deletion (under 1 s) from a TTL one
    when = (f"about ttl ({TTL_S} s) after it finished" if TTL_S - 2 <= deleting - t <= TTL_S + 15
            else f"{deleting - t:.0f}s after it finished")
    return {"ttl": f"{st}; the job's deletion started {when}; then the job and {'all' if not s.pods() else 'not all'} "
                   f"of its pods gone"}


TTL = Scenario(
    "pytorch-ttl",
    v1job("PyTorchJob", "pt-ttl", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                   "Worker": replica("PyTorchJob", 1, "OnFailure")},
          run_policy={"ttlSecondsAfterFinished": TTL_S}),
    ("ttl",), _obs_ttl, _master_exits,
    {"ttl": f"Succeeded; the job's deletion started about ttl ({TTL_S} s) after it finished; then the job and all of "
            "its pods gone"},
    why="§1.6 step 2: the operator deletes the job ttl seconds after completionTime; its pods go with it",
)


# -- cleanPodPolicy Running / All

def _obs_clean(s: Side) -> dict:
    s.wait_for(lambda: len({(x.role, x.index) for x in s.starts()}) >= 3, "every pod started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    time.sleep(SETTLE / 2)
    return {"cleanPodPolicy": f"{st}; then master {s.pod_states('master')}; worker {s.pod_states('worker')}"}


def _clean_scenario(policy: str, expect: str) -> Scenario:
    return Scenario(
        f"pytorch-cleanpodpolicy-{policy.lower()}",
        v1job("PyTorchJob", f"pt-clean-{policy.lower()}", {"Master": replica("PyTorchJob", 1, "OnFailure"),
                                                          "Worker": replica("PyTorchJob", 2, "OnFailure")},
              run_policy={"cleanPodPolicy": policy}),
        ("cleanPodPolicy",), _obs_clean, _master_exits,
        {"cleanPodPolicy": expect},
        why=f"§1.6 step 2: cleanPodPolicy {policy} once the job has finished",
    )


CLEAN_RUNNING = _clean_scenario("Running", "Succeeded; then master 1 Succeeded; worker none")
CLEAN_ALL = _clean_scenario("All", "Succeeded; then master none; worker none")


SCENARIOS = [PT_MASTER, XGB_MASTER, PADDLE_MASTER, ALWAYS, TF_WORKER0, TF_CHIEF, ELASTIC, ALL_WORKERS, JAX_ALL_WORKERS,
             PADDLE_ALL_WORKERS, NEVER, NEVER_XGB, ONFAILURE, ONFAILURE_XGB, EXITCODE,
             EXITCODE_TF, EXITCODE_XGB, EXITCODE_NO_RETRY, MPI_EXITCODE_137, MPI_EXITCODE_1, TF_DYNAMIC, XGB_POD_FAILED,
             MPI_POD_FAILED, PT_POD_FAILED, BACKOFF, BACKOFF_EXITCODE, DEADLINE, MPI, SUSPEND, TTL, CLEAN_RUNNING, CLEAN_ALL]
if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
    SCENARIOS = [s for s in SCENARIOS if re.search(os.environ["KF2JOBSET_LIFECYCLE_ONLY"], s.id)]

# ---------------------------------------------------------------------------------------------
# running one scenario in both worlds


@dataclass
class Result:
    scenario: Scenario
    error: str = ""
    v1: dict = field(default_factory=dict)
    jobset: dict = field(default_factory=dict)
    claims: dict = field(default_factory=dict)  # rule -> ["CODE: operator -> jobset", ...] (all rules)
    trace: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def differ(self) -> set:
        return {r for r in self.scenario.rules if self.v1.get(r) != self.jobset.get(r)}

    @property
    def claimed(self) -> set:
        return {r for r in self.claims if r in self.scenario.rules}


def report_claims(jr) -> dict:
    """The report's lifecycle differences: rule -> what it says (finding code, both worlds' rule)."""
    out: dict = {}
    for f in jr.findings:
        for ev in f.evidence:
            if ev.aspect == "lifecycle":
                rule = str(ev.subject)
            elif ev.aspect in ROLE_ASPECTS:
                rule = f"{ev.aspect}:{ev.where}"  # a per-replica-type rule: where is the role (worker, launcher)
            else:
                continue
            out.setdefault(rule, []).append(f"{f.code} {ev.where}: {ev.operator} -> {ev.jobset}")
    return out


class LifecycleRunner(Runner):
    def __init__(self, stack, agent, programs: Programs):
        super().__init__(stack, agent)
        self.programs = programs
        self.convert_lock = threading.Lock()

    def convert(self, job, options):
        # one conversion at a time: kf2jobset's lazily compiled schema checks are not thread-safe
        # (IndexError in kf2jobset/schemacheck.py when two threads compile the same schema)
        with self.convert_lock:
            return super().convert(job, options)

    def run_scenario(self, sc: Scenario, mutate=None) -> Result:
        t0 = time.monotonic()
        res = Result(sc)
        try:
            self._run_scenario(sc, res, mutate)
        except Exception as e:  # noqa: BLE001 - reported per scenario
            import traceback

            res.error = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}"
        res.seconds = time.monotonic() - t0
        return res

    def _run_scenario(self, sc: Scenario, res: Result, mutate=None) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        job = copy.deepcopy(sc.job)
        job["metadata"]["name"] = f"{job['metadata']['name']}-{uuid.uuid4().hex[:4]}"
        kind = job["kind"]
        plural = KF_PLURAL[kind]
        with self.stack.api_client() as api:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            ns_a, ns_b = self.new_namespace(core, "la"), self.new_namespace(core, "lb")
            job_a, job_b = copy.deepcopy(job), copy.deepcopy(job)
            job_a["metadata"]["namespace"], job_b["metadata"]["namespace"] = ns_a, ns_b
            conv, jr, err = self.convert(job_b, sc.options)
            assert conv is not None, f"kf2jobset refused the scenario's job: {err}"
            res.claims = report_claims(jr)
            roles = conv.plan.pod_roles

            key_a, key_b = operator_pod_key, jobset_pod_key(roles)

            workers = sum(s.get("replicas", 1) for t, s in job["spec"][FIELD[kind]].items() if t == "Worker")
            self.programs.register(ns_a, Entry(sc, key_a, workers))
            self.programs.register(ns_b, Entry(sc, key_b, workers))

            jobset = copy.deepcopy(conv.jobset)
            if mutate is not None:
                mutate(jobset)  # the report stays the one of the real conversion
            jobset["metadata"]["namespace"] = ns_b
            names = set()
            for c in conv.companions:
                names.add((c["kind"], c["metadata"].get("name")))
            refs_a, refs_b = {}, {}
            for t in _templates(job_a):
                refs_a.update(_refs(t.get("spec") or {}))
            for t in _templates(jobset):
                refs_b.update(_refs(t.get("spec") or {}))
            _create_refs(core, ns_a, refs_a, set())
            _create_refs(core, ns_b, refs_b, names)
            for c in conv.companions:
                c = copy.deepcopy(c)
                c["metadata"]["namespace"] = ns_b
                assert c["kind"] == "ConfigMap", f"companion {c['kind']} cannot be applied in the stack"
                core.create_namespaced_config_map(ns_b, c)

            # both at (nearly) the same moment, each side timed from its own creation
            custom.create_namespaced_custom_object("kubeflow.org", "v1", ns_a, plural, job_a)
            t_a = time.monotonic()
            custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", jobset)
            t_b = time.monotonic()
            sides = []
            for world, ns, name, key_of, t in (("v1", ns_a, job_a["metadata"]["name"], key_a, t_a),
                                               ("jobset", ns_b, jobset["metadata"]["name"], key_b, t_b)):
                s = Side(world, api, ns, name, key_of, self.programs, t)
                s.kind, s.plural = kind, plural
                sides.append(s)
            try:
                with ThreadPoolExecutor(2) as pool:
                    v1, js = pool.map(sc.observe, sides)
            finally:
                for s in sides:
                    try:
                        s.note("at the end: " + s.snapshot())
                    except Exception as e:  # noqa: BLE001 - a diagnostic only
                        s.note(f"no snapshot: {e}")
                res.trace = {s.world: s.trace for s in sides}
                for call in (lambda: custom.delete_namespaced_custom_object("kubeflow.org", "v1", ns_a, plural,
                                                                            job_a["metadata"]["name"],
                                                                            propagation_policy="Background"),
                             lambda: custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets",
                                                                            jobset["metadata"]["name"],
                                                                            propagation_policy="Background")):
                    try:
                        call()
                    except ApiException:
                        pass
            res.v1, res.jobset = v1, js


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def lifecycle_runner(stack, netns_ok):
    programs = Programs()
    programs.api_factory = stack.api_client
    agent = NodeAgent(stack.kubeconfig, {"": programs}, namespaces=set(), backoff=(0.5, 2.0))
    agent.start()
    try:
        yield LifecycleRunner(stack, agent, programs)
    finally:
        programs.stopping.set()
        agent.stop()
        shutil.rmtree(agent.workdir, ignore_errors=True)
        shutil.rmtree(programs.gates, ignore_errors=True)


# ---- mutations: a JobSet that behaves differently from what the report says must be caught


def _no_success_policy(jobset):
    jobset["spec"].pop("successPolicy", None)  # every Job must now succeed


def _no_depends_on(jobset):
    for rj in jobset["spec"]["replicatedJobs"]:
        rj.pop("dependsOn", None)  # workers start with the master


MUTATIONS = [("pytorch-master-decides", _no_success_policy, "success"),
             ("pytorch-master-decides", _no_depends_on, "start:worker")]
if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
    MUTATIONS = [m for m in MUTATIONS if re.search(os.environ["KF2JOBSET_LIFECYCLE_ONLY"], m[0])]


@pytest.fixture(scope="module")
def results(lifecycle_runner) -> dict:
    """Every scenario, and every mutation (keyed "mutation:<scenario>:<function>"), run at once."""
    t0 = time.monotonic()
    by_id = {s.id: s for s in SCENARIOS}
    jobs = [(s.id, s, None) for s in SCENARIOS] + [
        (f"mutation:{sid}:{fn.__name__}", by_id[sid], fn) for sid, fn, _ in MUTATIONS if sid in by_id]
    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = list(pool.map(lambda j: (j[0], lifecycle_runner.run_scenario(j[1], j[2])), jobs))
    out = dict(runs)
    wall = time.monotonic() - t0
    print(f"\n[lifecycle] {len(SCENARIOS)} scenarios + {len(out) - len(SCENARIOS)} mutations in {wall:.1f} s "
          f"(parallel {PARALLEL}); slowest: "
          + ", ".join(f"{k} {r.seconds:.0f}s" for k, r in sorted(out.items(), key=lambda kv: -kv[1].seconds)[:3]))
    print(table(r for k, r in out.items() if not k.startswith("mutation:")))
    path = os.environ.get("KF2JOBSET_LIFECYCLE_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"seconds": wall, "scenarios": {
            k: {"kind": r.scenario.job["kind"], "rules": list(r.scenario.rules), "v1": r.v1, "jobset": r.jobset,
                "claims": r.claims, "trace": r.trace, "seconds": round(r.seconds, 1), "error": r.error[-1500:]}
            for k, r in out.items()}}, indent=1))
    return out


def table(results) -> str:
    lines = ["| scenario | kind | rule | v1 (operator) | JobSet | report |", "|---|---|---|---|---|---|"]
    for r in results:
        for rule in r.scenario.rules:
            claim = "; ".join(r.claims.get(rule, [])) or "same"
            lines.append(f"| {r.scenario.id} | {r.scenario.job['kind']} | {rule} | {r.v1.get(rule, '?')} | "
                         f"{r.jobset.get(rule, '?')} | {claim} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("scenario_id", [s.id for s in SCENARIOS])
def test_lifecycle_differences_are_the_reports(results, scenario_id):
    r = results[scenario_id]
    assert not r.error, r.error
    trace = json.dumps(r.trace, indent=1)
    wrong = {k: (v, r.v1.get(k)) for k, v in r.scenario.expect_v1.items() if r.v1.get(k) != v}
    assert not wrong, (f"the operator did not do what its code says ({r.scenario.why}): "
                       f"rule: (expected, seen) {wrong}\ntrace: {trace}")
    unnamed = r.differ - r.claimed
    assert not unnamed, "real lifecycle differences the report does not name:\n" + "\n".join(
        f"  {rule}: v1 {r.v1.get(rule)!r} / JobSet {r.jobset.get(rule)!r}" for rule in sorted(unnamed)) + f"\ntrace: {trace}"
    unseen = r.claimed - r.differ
    assert not unseen, "lifecycle differences the report claims that did not happen:\n" + "\n".join(
        f"  {rule}: report {r.claims[rule]}; both worlds: {r.v1.get(rule)!r}" for rule in sorted(unseen)) + f"\ntrace: {trace}"


@pytest.mark.parametrize("scenario_id, mutate, rule", MUTATIONS, ids=[f"{m[0]}:{m[1].__name__}" for m in MUTATIONS])
def test_mutations_are_caught(results, scenario_id, mutate, rule):
    """The same scenario with a JobSet that does not do what the conversion says: the check must bite."""
    r = results[f"mutation:{scenario_id}:{mutate.__name__}"]
    assert not r.error, r.error
    assert rule in r.differ - r.claimed, (f"{mutate.__name__} was not caught: differences {sorted(r.differ)}, "
                                          f"claimed {sorted(r.claimed)}; v1 {r.v1}; JobSet {r.jobset}")


def test_scenarios_cover_the_issue():
    """Every kind whose rules differ and every rule of the issue is exercised by some scenario."""
    kinds = {s.job["kind"] for s in SCENARIOS}
    rules = {r for s in SCENARIOS for r in s.rules}
    if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
        pytest.skip("KF2JOBSET_LIFECYCLE_ONLY selects a subset")
    assert kinds >= {"PyTorchJob", "TFJob", "XGBoostJob", "MPIJob", "PaddleJob", "JAXJob"}
    rules = {r.split(":")[0] for r in rules}
    assert rules >= {"success", "failure", "restartPolicy", "start", "suspend", "backoffLimit", "activeDeadlineSeconds",
                     "ttl", "cleanPodPolicy"}
