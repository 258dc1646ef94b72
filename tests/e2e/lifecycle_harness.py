"""The lifecycle tests' machinery: v1 jobs written for a scenario, a Scenario (what each pod's process does, what
to observe), a Side (one world as a user sees it: the job's state, its pods, when each container started), the
node agent's Programs with their gates, and the LifecycleRunner that runs a scenario in both worlds and sets the
observed differences beside the report's lifecycle claims (tests/e2e/test_lifecycle.py)."""
from __future__ import annotations

import copy
import os
import re
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from kf2jobset.options import ConvertOptions

from ..conftest import FIXTURES
from .differential_cases import KF, KF_PLURAL
from .differential_compare import jobset_pod_key, operator_pod_key
from .differential_runner import Runner, create_stand_ins, pod_templates, referenced_objects


PARALLEL = int(os.environ.get("KF2JOBSET_LIFECYCLE_PARALLEL", "7"))
ROLE_ASPECTS = ("start", "restartPolicy", "failure", "backoffLimit")
CONTAINER = {"PyTorchJob": "pytorch", "TFJob": "tensorflow", "XGBoostJob": "xgboost", "MPIJob": "mpi",
             "PaddleJob": "paddle", "JAXJob": "jax"}
FIELD = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
         "MPIJob": "mpiReplicaSpecs", "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}


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


def lead_and_workers(kind: str, name: str, workers: int = 1, policy: str = "OnFailure", *, lead: str = "Master",
                     lead_policy: str = "OnFailure", run_policy: dict | None = None) -> dict:
    """A v1 job of one ``lead`` (Master, Chief) under ``lead_policy`` and ``workers`` Workers under ``policy``."""
    return v1job(kind, name, {lead: replica(kind, 1, lead_policy), "Worker": replica(kind, workers, policy)},
                 run_policy=run_policy)


def fixture_job(path: str) -> dict:
    """A golden fixture's v1 job (the fixture pins the report text this scenario holds to reality)."""
    return yaml.safe_load((FIXTURES / path / "input.yaml").read_text())


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

    def wait_started(self, n: int, role: str = "worker"):
        """Until ``n`` pods (indexes) of ``role`` have started."""
        return self.wait_for(lambda: len({x.index for x in self.starts(role)}) == n, f"{n} {role} pods started")

    def wait_exited(self, index: int, role: str = "worker"):
        """Until pod ``index`` of ``role`` has Succeeded, or the job is no longer active."""
        return self.wait_for(lambda: self.status() != "active" or any(p[1] == index and p[3] == "Succeeded" for p in self.pods(role)),
                             f"{role} {index} exited")

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
        # (IndexError in kf2jobset/k8s/schemacheck.py when two threads compile the same schema)
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
            for t in pod_templates(job_a):
                refs_a.update(referenced_objects(t.get("spec") or {}))
            for t in pod_templates(jobset):
                refs_b.update(referenced_objects(t.get("spec") or {}))
            create_stand_ins(core, ns_a, refs_a, set())
            create_stand_ins(core, ns_b, refs_b, names)
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
