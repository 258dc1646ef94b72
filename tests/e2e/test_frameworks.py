"""Real frameworks on both sides: what users run, run in the v1 pods and in the JobSet pods, and what
HAPPENS compared.

For every fixture (fixtures/<kind>/<case>/input.yaml with an expected.yaml) and every corpus job of
kind TFJob, PyTorchJob, JAXJob, XGBoostJob and PaddleJob (the cases of tests/e2e/test_differential.py):

* namespace A gets the v1 job (the real Training Operator v1.9.4, webhooks on), namespace B its
  kf2jobset conversion (the real JobSet v0.12.0 + Job controllers); one node agent runs both;
* the main container of every pod (the kind's default container name, else the first) runs a real
  training program of tests/e2e/programs/ in that framework's venv (tools/install-frameworks.sh),
  with the env the kubelet resolved; other containers exit 0 at once (native sidecars sleep);
  init containers run ``true`` (init-pytorch: its own loop, ``getent hosts`` for nslookup):

  - PyTorchJob: ``init_process_group("gloo", "env://")`` + all_reduce + all_gather of hostnames; jobs
    with ``nprocPerNode`` or ``elasticPolicy`` run ``torchrun`` with only the ``PET_*`` env (static
    rendezvous, or elastic c10d at PET_RDZV_ENDPOINT), each child doing the same;
  - TFJob: every TF_CONFIG task serves its address (``tf.distribute.Server``); the lead (chief, else
    master, else worker 0) runs ops pinned to /job:T/task:I of every task that read the identity of
    the process serving there (its TF task and its hostname from its own UTS namespace) and fails when
    the server at T:I is another task; the reported hostnames must be the pods that tasks should be;
  - JAXJob: ``jax.distributed.initialize`` + a cross-process allgather (CPU, gloo);
  - XGBoostJob: rank 0 runs the RabitTracker at MASTER_PORT, every rank joins MASTER_ADDR:MASTER_PORT,
    allreduces and trains 2 rounds;
  - PaddleJob: ``python -m paddle.distributed.launch`` (collective, or parameter-server with a Master);

* each program prints verdict lines (role, index, rank, world size, hostnames of the peers it reached);
  the harness waits for the real terminal status of the v1 job and of the JobSet, maps every hostname
  and address to the pod (role, index) it is in that world, and compares both worlds pod by pod.

A difference (terminal status, a pod's verdicts) is accepted only when the kf2jobset report names it
(:data:`EXPLAINED_BY`); jobs the v1 webhook rejects never run, and kf2jobset must say so (JS080).
:func:`test_mutations_make_the_programs_fail` proves the programs bite: a conversion with a wrong
address or a wrong rank must fail or disagree.

Size as a parameter (issue 30, kf2jobset/sizes.py): :func:`test_programs_rendezvous_at_the_edited_size` runs a
few jobs with a replica edit in both worlds (``resized:``: jobs whose sizes follow the count, the JobSet edited like
the v1 job and not converted again; ``reconverted:``: jobs with literals, the edited v1 job converted again) and
requires one world of the new size with every rank once; :func:`test_literal_sizes_are_guarded` runs the real
``convert --check`` on hand-edited JobSets, and :func:`test_a_stale_hand_edited_jobset_misses_the_edited_size`
runs some of them as they are (``stale:``).

Run alone: ``python -m pytest tests/e2e/test_frameworks.py`` (root; after ``tools/install-frameworks.sh``).
Knobs: ``KF2JOBSET_FW_ONLY=REGEX`` (case ids), ``KF2JOBSET_FW_PARALLEL=N`` (default 4),
``KF2JOBSET_FW_SUMMARY=FILE`` (every case as JSON).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from .. import upstream
from .nodeagent import NodeAgent
from .test_differential import (
    JS,
    jobset_pod_key,
    operator_pod_key,
    KF,
    KF_PLURAL,
    Case,
    Runner,
    _create_refs,
    _priority_classes,
    _refs,
    _rejection,
    V1_STUCK,
    _templates,
    corpus_cases,
    fixture_cases,
    resized,
)

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
KINDS = ("TFJob", "PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob")
# MXJob: tests/e2e/test_mxnet.py runs it with this machinery on the Training Operator v1.8.1 stack
MAIN_CONTAINER = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "XGBoostJob": "xgboost", "PaddleJob": "paddle",
                  "JAXJob": "jax", "MXJob": "mxnet"}
PROGRAM = {"TFJob": ("tensorflow", "tf_prog.py"), "PyTorchJob": ("torch", "torch_prog.py"),
           "XGBoostJob": ("xgboost", "xgb_prog.py"), "PaddleJob": ("paddle", "paddle_prog.py"),
           "JAXJob": ("jax", "jax_prog.py"), "MXJob": ("mxnet", "mx_prog.py")}
PROGRAM_NAME = {"TFJob": "tf.distribute.Server + remote ops", "JAXJob": "jax.distributed + allgather",
                "XGBoostJob": "RabitTracker + allreduce + train", "PaddleJob": "paddle.distributed.launch",
                "MXJob": "kvstore dist_sync push/pull"}
TAG = "KF2JS-VERDICT"
PARALLEL = int(os.environ.get("KF2JOBSET_FW_PARALLEL", "4"))
PROG_TIMEOUT = 120  # seconds a program waits for its peers (rendezvous, connections)
CASE_TIMEOUT = 420.0  # per case, both worlds
MUTATION_TIMEOUT = 30  # the same for a mutated conversion: it is expected to fail
STUCK_GRACE = 15.0  # a side whose every pod already printed its verdict but is not terminal: waited this long

# A real difference -> the report codes any one of which names it (in the conversion's notes or the report's
# findings). Results: (v1 result, JobSet result).
EXPLAINED_BY: dict = {
    # restartPolicy Always: v1 restarts a pod that exited 0 (the job never ends); a Job's OnFailure pod is done
    ("result", "not terminal (Running)", "Succeeded"): ("JS020",),
    # MXTune (no Scheduler, no lone Worker): v1.8.1 sets neither Running nor Succeeded, the job stays Created; the
    # JobSet completes (tests/e2e/test_mxnet.py)
    ("result", "not terminal (Created)", "Succeeded"): ("MX002",),
}


def _cache_root() -> Path:
    base = os.environ.get("KF2JOBSET_CACHE_DIR") or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kf2jobset")
    return Path(base)


def framework_pythons() -> dict:
    """{venv name: python}; where tools/install-frameworks.sh puts them."""
    root = _cache_root()
    out = {n: root / "frameworks" / n / "bin" / "python" for n in ("torch", "tensorflow", "jax", "xgboost")}
    out["paddle"] = root / "launchers" / "paddle" / "bin" / "python"
    return out


BASE = [c for c in fixture_cases() + corpus_cases() if c.job.get("kind") in KINDS]


def only(cases: list) -> list:
    """The cases KF2JOBSET_FW_ONLY selects (all when it is unset)."""
    if os.environ.get("KF2JOBSET_FW_ONLY"):
        cases = [c for c in cases if re.search(os.environ["KF2JOBSET_FW_ONLY"], c.id)]
    return cases


ALL = only(BASE)


def torch_mode(job: dict) -> str:
    spec = job.get("spec") or {}
    return "torchrun" if spec.get("nprocPerNode") is not None or spec.get("elasticPolicy") else "env"


def program_name(case: Case) -> str:
    kind = case.job["kind"]
    if kind == "PyTorchJob":
        spec = case.job.get("spec") or {}
        if spec.get("elasticPolicy"):
            return "torchrun (elastic c10d) + gloo"
        return "torchrun (PET_*) + gloo" if torch_mode(case.job) == "torchrun" else "gloo env:// all_reduce/all_gather"
    if kind == "MXJob":
        types = {k.lower() for k in ((case.job.get("spec") or {}).get("mxReplicaSpecs") or {})}
        if types & {"tuner", "tunerserver", "tunertracker"}:
            return "MXTune rendezvous over MX_CONFIG (stand-in for TVM RPC)"
        if types == {"worker"}:
            return "kvstore local push/pull"
    return PROGRAM_NAME[kind]


# ---------------------------------------------------------------------------------------------
# outcome of one case


@dataclass
class Side:
    namespace: str = ""
    name: str = ""
    result: str = ""  # Succeeded | Failed | stuck (...) | rejected
    message: str = ""
    verdicts: dict = field(default_factory=dict)  # key -> [verdict dict] (first run of the main container)
    logical: dict = field(default_factory=dict)  # key -> sorted normalised verdict strings
    hosts: dict = field(default_factory=dict)  # hostname/ip -> key
    pods: int = 0


@dataclass
class FwOutcome:
    case: Case
    status: str = "ran"  # ran | rejected | failed
    detail: str = ""
    v1: Side = field(default_factory=Side)
    js: Side = field(default_factory=Side)
    diffs: list = field(default_factory=list)  # [(what, v1, jobset, explained_by)]
    codes: set = field(default_factory=set)  # codes of notes + findings
    conv_message: str = ""
    kf2jobset_refused: bool = False  # kf2jobset converted nothing (conv_message holds its refusal)
    seconds: float = 0.0

    @property
    def unexplained(self) -> list:
        return [d for d in self.diffs if d[3] is None]


@dataclass
class Ctx:
    kind: str
    key_of: object
    mode: str
    timeout: int
    pythons: dict


# ---------------------------------------------------------------------------------------------
# verdicts


def parse_verdicts(log: str) -> list[dict]:
    out = []
    # a verdict may follow another process's unfinished stderr write on the same line (C++ logging of
    # torch/gloo writes in pieces): find the tag anywhere and read one JSON value after it
    decoder = json.JSONDecoder()
    for line in log.splitlines():
        at = line.find(TAG + " ")
        if at < 0:
            continue
        try:
            out.append(decoder.raw_decode(line, at + len(TAG) + 1)[0])
        except ValueError:
            pass
    return out


def _logical(side: Side, value):
    """A hostname, an IP or an ``ip:port`` endpoint -> the pod (role/index) it is in this world."""
    if isinstance(value, list):
        return [_logical(side, v) for v in value]
    if isinstance(value, dict):
        return {k: _logical(side, v) for k, v in value.items()}
    if isinstance(value, str):
        host, sep, port = value.rpartition(":") if re.fullmatch(r"[\w.-]+:\d+", value) else (value, "", "")
        key = side.hosts.get(host)
        if key is not None:
            return f"<pod {key[0]}/{key[1]}>"  # ports dropped: launchers pick free ones
    return value


def logical(side: Side, verdicts: list) -> list[str]:
    """A pod's verdicts as compared. torchrun's own report that its children succeeded is left out: it comes
    after theirs, and on a pod that is not the one whose success ends the job it races the job's end (v1 reads
    it or not, as it lands before or after the master's; a JobSet deletes the pod on completion); the children's
    verdicts say it all, and a failed torchrun still counts."""
    return sorted(normalise(side, v) for v in verdicts if not (v.get("launcher") == "torchrun" and v.get("ok")))


def normalise(side: Side, v: dict) -> str:
    v = dict(v)
    for k in ("seconds", "host"):
        v.pop(k, None)
    v = {k: _logical(side, x) for k, x in v.items()}
    if v.get("elastic"):
        # an elastic rendezvous hands node ranks out in arrival order: compare the group, not the order
        for k in ("rank", "node_rank", "local_rank"):
            v.pop(k, None)
        v["peers"] = sorted(v.get("peers") or [])
    if v.get("launcher") == "paddle" and v.get("mode") == "collective":
        # paddle.distributed.launch gives rank 0 to the pod of PADDLE_MASTER and the other ranks in the order
        # the pods registered (so in v1 too): rank 0 and its pod are compared, the rest as a group
        peers = v.get("peers") or []
        v["peers"] = peers[:1] + sorted(peers[1:])
        if v.get("rank") != 0:
            v["rank"] = "<assigned>"
    if v.get("mode") == "ps":
        # paddle's parameter-server launcher numbers trainers and lists endpoints in the order the pods
        # registered with the master: compare the group (and, job-wide, the ids handed out: compare())
        v["servers"], v["trainers"] = sorted(v.get("servers") or []), sorted(v.get("trainers") or [])
        if v.get("trainer_id") is not None:
            v["trainer_id"] = "<assigned>"
    if v.get("framework") == "mxnet" and v.get("dmlc_role") == "worker":
        # ps-lite's scheduler hands kvstore ranks out by node address, not by pod: compare them job-wide
        # (compare()), and the peers (hostnames by rank) as a group
        v["rank"] = "<assigned>"
        v["peers"] = sorted(v.get("peers") or [])
    if v.get("framework") == "mxnet" and "registered" in v:
        v["registered"] = sorted(v["registered"], key=json.dumps)  # MXTune: the tracker's registrations, as a group
    if "error" in v:
        v["error"] = "<failed>"
    return json.dumps(v, sort_keys=True)


def terminal_v1(obj: dict) -> str | None:
    for c in reversed(((obj or {}).get("status") or {}).get("conditions") or []):
        if c.get("status") == "True" and c.get("type") in ("Succeeded", "Failed"):
            return c["type"]
    return None


def terminal_js(obj: dict) -> str | None:
    st = (obj or {}).get("status") or {}
    t = st.get("terminalState")
    if t:
        return {"Completed": "Succeeded"}.get(t, t)
    for c in st.get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Completed", "Failed"):
            return {"Completed": "Succeeded"}.get(c["type"], c["type"])
    return None


def state_v1(obj: dict) -> str:
    conds = [c["type"] for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    return conds[-1] if conds else "no condition"


def state_js(obj: dict) -> str:
    st = (obj or {}).get("status") or {}
    conds = [c["type"] for c in st.get("conditions") or [] if c.get("status") == "True"]
    rj = {r["name"]: {k: r.get(k) for k in ("active", "succeeded", "failed") if r.get(k)} for r in st.get("replicatedJobsStatus") or []}
    return (conds[-1] if conds else "no condition") + f" {rj}"


# ---------------------------------------------------------------------------------------------
# running one case in both worlds


class FrameworkRunner(Runner):
    def __init__(self, stack, agent: NodeAgent, pythons: dict):
        super().__init__(stack, agent)
        self.pythons = pythons
        self.ctx: dict = {}  # namespace -> Ctx
        self.markers = Path(tempfile.mkdtemp(prefix="kf2js-fw-exit-"))  # main container ended -> its sidecars end

    # the agent's program for every container
    def program(self, launch):
        if launch.init:
            if launch.container == "init-pytorch":
                return [w.replace("nslookup", "getent hosts") for w in launch.command]
            return ["sleep", "infinity"] if launch.spec.get("restartPolicy") == "Always" else ["true"]
        ctx = self.ctx.get(launch.namespace)
        if ctx is None:
            return ["sleep", "infinity"]
        names = [c.get("name") for c in launch.pod_spec.get("containers") or []]
        main = MAIN_CONTAINER[ctx.kind] if MAIN_CONTAINER[ctx.kind] in names else names[0]
        marker = self.markers / f"{launch.namespace}.{launch.pod}"
        if launch.container != main:
            # a sidecar of the user's (exporter, proxy): runs (the pod is Ready) until the main container ends
            return [sys.executable, "-c", "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.5)",
                    str(marker)]
        key = ctx.key_of(launch.labels)
        venv, script = PROGRAM[ctx.kind]
        return [str(ctx.pythons[venv]), str(PROGRAMS / script), "--role", key[0], "--index", str(key[1]),
                "--mode", ctx.mode, "--timeout", str(ctx.timeout), "--exit-marker", str(marker)]

    def run_case(self, case: Case, mutate=None, only_jobset: bool = False, timeout: int = PROG_TIMEOUT) -> FwOutcome:
        t0 = time.monotonic()
        out = FwOutcome(case)
        try:
            self._run_case(case, out, mutate, only_jobset, timeout)
        except Exception as e:  # noqa: BLE001 - reported per case
            import traceback

            out.status, out.detail = "failed", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2500:]}"
        out.seconds = time.monotonic() - t0
        return out

    def _run_case(self, case: Case, out: FwOutcome, mutate, only_jobset: bool, timeout: int) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        job = copy.deepcopy(case.job)
        kind = job["kind"]
        meta = job.setdefault("metadata", {})
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = "trial-" + uuid.uuid4().hex[:6]  # a Katib trial: Katib names it
        conv, jr, err = self.convert(job, case.options)  # the job as written
        edited = copy.deepcopy(job)  # a resized case: the v1 job as the user edited it, before the operator sees it
        if case.resize and conv is not None:
            self._resize_v1(case, conv, edited)
        out.conv_message, out.kf2jobset_refused = err, conv is None
        if conv is not None:
            out.conv_message = " ".join(f"{n.code}: {n.message}" for n in conv.notes if n.code == "JS080")
            out.codes = {n.code for n in conv.notes} | {f.code for f in jr.findings}
            if out.codes & set(V1_STUCK) and not only_jobset:
                # v1 never ran this job as a whole (test_differential sees the operator's failed Service
                # and requires the note): run the JobSet world alone, which must work
                only_jobset, out.status = True, "stuck"
        mode = torch_mode(job) if kind == "PyTorchJob" else ""
        plural = KF_PLURAL[kind]
        with self.stack.api_client() as api:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            ns_a = None if only_jobset else self.new_namespace(core, "fa")
            ns_b = self.new_namespace(core, "fb")
            roles = conv.plan.pod_roles if conv is not None else {}

            key_a, key_b = operator_pod_key, jobset_pod_key(roles)

            if ns_a:
                self.ctx[ns_a] = Ctx(kind, key_a, mode, timeout, self.pythons)
            self.ctx[ns_b] = Ctx(kind, key_b, mode, timeout, self.pythons)
            objs = []
            v1_refs: dict = {}
            if ns_a:
                job_a = copy.deepcopy(edited)
                job_a["metadata"]["namespace"] = ns_a
                for t in _templates(job_a):
                    v1_refs.update(_refs(t.get("spec") or {}))
                _create_refs(core, ns_a, v1_refs, set())
                _priority_classes(api, [job_a, conv.jobset] if conv is not None else [job_a])
                try:
                    created = custom.create_namespaced_custom_object("kubeflow.org", "v1", ns_a, plural, job_a)
                except ApiException as e:
                    if e.status in (400, 403, 422) and "denied the request" in (e.body or ""):
                        out.status, out.detail = "rejected", _rejection(e)
                        out.v1.result = out.js.result = "not run"
                        return
                    raise
                out.v1.namespace, out.v1.name = ns_a, created["metadata"]["name"]
                objs.append(("v1", ns_a, out.v1.name))
            if conv is None:
                raise AssertionError(f"the operator accepted the job but kf2jobset refused it: {err}")
            jobset = copy.deepcopy(conv.jobset)
            companions = copy.deepcopy(conv.companions)
            if mutate:
                mutate(jobset, companions)
            model_job = conv.job
            if case.resize:  # the JobSet written for the job as written, its replicas edited by hand
                model_job = self._resize_jobset(case, conv, edited, jobset)
            jobset["metadata"]["namespace"] = ns_b
            comp_names = set()
            for c in companions:
                c.setdefault("metadata", {})["namespace"] = ns_b
                comp_names.add((c["kind"], c["metadata"].get("name")))
            js_refs: dict = {}
            for t in _templates(jobset):
                js_refs.update(_refs(t.get("spec") or {}))
            for t in _templates(job):
                v1_refs.update(_refs(t.get("spec") or {}))
            _create_refs(core, ns_b, v1_refs, comp_names)
            _create_refs(core, ns_b, js_refs, comp_names | set(v1_refs))
            _priority_classes(api, [conv.jobset])
            for c in companions:
                if c["kind"] == "ConfigMap":
                    core.create_namespaced_config_map(ns_b, c)
                else:
                    out.detail += f"companion {c['kind']} not applied (no such API in the stack); "
            created_js = custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", jobset)
            out.js.namespace, out.js.name = ns_b, created_js["metadata"]["name"]
            objs.append(("js", ns_b, out.js.name))
            expected = sum(s.replicas for s in model_job.replicas.values())
            out.v1.pods = out.js.pods = expected
            if conv.job.run_policy.suspend:
                time.sleep(3)
                for _, ns, _n in objs:
                    pods = core.list_namespaced_pod(ns).items
                    assert not pods, f"runPolicy.suspend: {ns} has pods {[p.metadata.name for p in pods]}"
                out.detail += "suspended: no pods in either world; resumed; "
                for which, ns, name in objs:
                    if which == "v1":
                        custom.patch_namespaced_custom_object("kubeflow.org", "v1", ns, plural, name,
                                                              {"spec": {"runPolicy": {"suspend": False}}})
                    else:
                        custom.patch_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", name,
                                                              {"spec": {"suspend": False}})
            sides = [(out.v1, key_a, "v1")] if ns_a else []
            sides.append((out.js, key_b, "js"))
            try:
                self._wait(core, custom, plural, sides, expected)
            finally:
                for which, ns, name in objs:
                    try:
                        if which == "v1":
                            custom.delete_namespaced_custom_object("kubeflow.org", "v1", ns, plural, name,
                                                                   propagation_policy="Background")
                        else:
                            custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", name,
                                                                   propagation_policy="Background")
                    except ApiException:
                        pass
        if not only_jobset:
            compare(out)

    def _read_side(self, side: Side, key_of) -> None:
        pods: dict = {}
        for x in self.agent.launches(side.namespace):
            key = key_of(x.labels)
            if key is None:
                continue
            side.hosts[x.hostname] = key
            side.hosts[x.pod] = key
            if x.pod_ip:
                side.hosts[x.pod_ip] = key
            if not x.init and x.restart == 0 and x.argv[:1] == [str(self.pythons[PROGRAM[self.ctx[side.namespace].kind][0]])]:
                pods[key] = (x.pod, x.container)
        # FQDNs the namespace's DNS answers with one pod's address
        for fqdn, ips in list(self.agent._dns_table.items()):
            if f".{side.namespace}." in fqdn and len(set(ips)) == 1 and ips[0] in side.hosts:
                side.hosts.setdefault(fqdn, side.hosts[ips[0]])
        side.verdicts = {k: parse_verdicts(self.agent.log(side.namespace, pod, ctr, restart=0)) for k, (pod, ctr) in pods.items()}

    def _exited_once(self, core, side: Side) -> bool:
        """Every pod's main container has exited at least once (it may be restarting), or serves for good
        (a TF parameter server)."""
        kind, key_of = self.ctx[side.namespace].kind, self.ctx[side.namespace].key_of
        n = 0
        pods = json.loads(core.list_namespaced_pod(side.namespace, _preload_content=False).data)["items"]
        for p in pods:
            key = key_of(p["metadata"].get("labels") or {})
            if any(v.get("mode") == "serve" and v.get("task", "").startswith("ps:") for v in side.verdicts.get(key) or []):
                n += 1
                continue
            names = [c["name"] for c in p["spec"]["containers"]]
            main = MAIN_CONTAINER[kind] if MAIN_CONTAINER[kind] in names else names[0]
            st = next((c for c in (p.get("status") or {}).get("containerStatuses") or [] if c["name"] == main), None)
            if st is None or not (st.get("restartCount") or "terminated" in (st.get("state") or {})
                                  or "terminated" in (st.get("lastState") or {})):
                return False
            n += 1
        return n >= side.pods

    def _wait(self, core, custom, plural: str, sides: list, expected: int) -> None:
        deadline = time.monotonic() + CASE_TIMEOUT
        quiet_since: dict = {}
        while True:
            pending = False
            for side, key_of, which in sides:
                if side.result:
                    continue
                if which == "v1":
                    obj = custom.get_namespaced_custom_object("kubeflow.org", "v1", side.namespace, plural, side.name)
                    term, state = terminal_v1(obj), state_v1(obj)
                else:
                    obj = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", side.namespace, "jobsets", side.name)
                    term, state = terminal_js(obj), state_js(obj)
                self._read_side(side, key_of)
                if term:
                    side.result, side.message = term, state
                    continue
                if self._exited_once(core, side):
                    quiet_since.setdefault(which, time.monotonic())
                    if time.monotonic() - quiet_since[which] > STUCK_GRACE:
                        side.result, side.message = f"not terminal ({state.split(' ')[0]})", state
                        continue
                else:
                    quiet_since.pop(which, None)
                pending = True
                if time.monotonic() > deadline:
                    side.result, side.message = f"timeout ({state.split(' ')[0]})", state
            if not pending:
                break
            time.sleep(2.0)  # the node agent (and its DNS server) shares this process: poll gently
        time.sleep(0.5)
        for side, key_of, _ in sides:
            self._read_side(side, key_of)
            side.logical = {k: logical(side, vs) for k, vs in side.verdicts.items()}


def compare(out: FwOutcome) -> None:
    def explain(*what):
        for code in EXPLAINED_BY.get(what, ()):
            if code in out.codes:
                return code
        return None

    def base(result):  # "not terminal (Running)" vs "(no condition)": the same outcome
        return result.split(" (")[0]

    if base(out.v1.result) != base(out.js.result):
        out.diffs.append(("result", out.v1.result, out.js.result, explain("result", out.v1.result, out.js.result)))
    ids = [sorted(str(v.get("trainer_id") if v.get("mode") == "ps" else v.get("rank"))
                  for vs in side.verdicts.values() for v in vs if v.get("launcher") == "paddle")
           for side in (out.v1, out.js)]
    if ids[0] != ids[1]:
        out.diffs.append(("paddle ranks / trainer ids", ids[0], ids[1], explain("paddle ranks")))
    mx_ranks = [sorted(str(v.get("rank")) for vs in side.verdicts.values() for v in vs
                       if v.get("framework") == "mxnet" and v.get("dmlc_role") == "worker") for side in (out.v1, out.js)]
    if mx_ranks[0] != mx_ranks[1]:
        out.diffs.append(("mxnet kvstore ranks", mx_ranks[0], mx_ranks[1], explain("mxnet ranks")))
    for key in sorted(set(out.v1.logical) | set(out.js.logical), key=str):
        a, b = out.v1.logical.get(key), out.js.logical.get(key)
        if a != b:
            out.diffs.append((f"verdict {key[0]}/{key[1]}", a, b, explain("verdict")))


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def pythons() -> dict:
    found = framework_pythons()
    missing = {n: str(p) for n, p in found.items() if not os.access(p, os.X_OK)}
    if missing:
        pytest.fail(f"framework venvs missing: {missing}; run `bash tools/install-frameworks.sh` "
                    f"(or set KF2JOBSET_SKIP_E2E=1 to skip the e2e tests)", pytrace=False)
    return found


@pytest.fixture(scope="module")
def fw_runner(stack, netns_ok, pythons):
    holder: dict = {}
    agent = NodeAgent(stack.kubeconfig, {"": lambda launch: holder["r"].program(launch)}, namespaces=set(),
                      scheduler_names=("default-scheduler", "volcano", "yunikorn"), backoff=(1.0, 10.0))
    runner = holder["r"] = FrameworkRunner(stack, agent, pythons)
    agent.start()
    try:
        yield runner
    finally:
        agent.stop()
        shutil.rmtree(agent.workdir, ignore_errors=True)
        shutil.rmtree(runner.markers, ignore_errors=True)


@pytest.fixture(scope="module")
def fw_outcomes(fw_runner) -> dict:
    t0 = time.monotonic()
    cpu0, own0 = _cpu_seconds(), _own_cpu()
    lock = threading.Lock()
    results: dict = {}

    def one(case):
        o = fw_runner.run_case(case)
        with lock:
            results[case.id] = o
        return o

    # the biggest jobs first, so the tail is short
    order = sorted(ALL, key=lambda c: -sum((r or {}).get("replicas", 1) or 1 for k, rs in (c.job.get("spec") or {}).items()
                                           if k.endswith("ReplicaSpecs") for r in (rs or {}).values()))
    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, order))
    wall = time.monotonic() - t0
    print(f"\n[frameworks] {len(ALL)} jobs in {wall:.1f} s (parallel {PARALLEL}; CPU used by this test's processes "
          f"(the stack, the agent, the programs) {_own_cpu() - own0:.0f} s, by the whole machine {_cpu_seconds() - cpu0:.0f} s; "
          f"load {os.getloadavg()[0]:.1f})")
    print(result_table(results.values()))
    path = os.environ.get("KF2JOBSET_FW_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"seconds": wall, "cases": {k: summary(o) for k, o in sorted(results.items())}}, indent=1))
    return results


def _own_cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the programs; the stack's while it runs
    is not counted until it stops)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _cpu_seconds() -> float:
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    return (int(parts[0]) + int(parts[1]) + int(parts[2])) / os.sysconf("SC_CLK_TCK")


def summary(o: FwOutcome) -> dict:
    return {"status": o.status, "program": program_name(o.case), "v1": o.v1.result, "jobset": o.js.result,
            "detail": o.detail[:600], "seconds": round(o.seconds, 1), "diffs": [list(map(str, d)) for d in o.diffs],
            "v1_verdicts": {f"{k[0]}/{k[1]}": v for k, v in o.v1.logical.items()},
            "jobset_verdicts": {f"{k[0]}/{k[1]}": v for k, v in o.js.logical.items()},
            "v1_state": o.v1.message, "jobset_state": o.js.message,
            "errors": [f"{w} {k[0]}/{k[1]}: {v.get('error')}" for w, side in (("v1", o.v1), ("jobset", o.js))
                       for k, vs in side.verdicts.items() for v in vs if v.get("error")]}


def result_table(outs) -> str:
    lines = ["| job | kind | program | v1 result | JobSet result | pods | verdicts equal | s |", "|---|---|---|---|---|---|---|---|"]
    for o in sorted(outs, key=lambda o: (o.case.job["kind"], o.case.id)):
        if o.status == "rejected":
            lines.append(f"| {o.case.id} | {o.case.job['kind']} | none: rejected by the v1 webhook (JS080) | not run | not run | - | - | "
                         f"{o.seconds:.0f} |")
            continue
        eq = "yes" if not [d for d in o.diffs if d[0].startswith("verdict")] else "NO"
        if o.status == "failed":
            eq = "harness failed"
        lines.append(f"| {o.case.id} | {o.case.job['kind']} | {program_name(o.case)} | {o.v1.result} | {o.js.result} | "
                     f"{o.v1.pods} | {eq} | {o.seconds:.0f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


def test_install_script_prints_where_the_venvs_are():
    proc = subprocess.run(["bash", str(REPO / "tools" / "install-frameworks.sh"), "--print-root"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == _cache_root() / "frameworks"


def test_cases_present():
    kinds = {c.job["kind"] for c in ALL}
    if os.environ.get("KF2JOBSET_FW_ONLY"):
        assert ALL or SIZED, "KF2JOBSET_FW_ONLY matches no case"
        return
    assert kinds == set(KINDS), kinds
    if not upstream.corpus_absent():
        assert sum(c.id.startswith("corpus/") for c in ALL) >= 30


@pytest.mark.parametrize("case_id", [c.id for c in ALL])
def test_real_frameworks_behave_alike(fw_outcomes, case_id):
    o = fw_outcomes[case_id]
    assert o.status != "failed", o.detail
    if o.status == "stuck":
        assert len(o.js.verdicts) == o.js.pods and all(o.js.verdicts.values()), (
            f"JobSet: not every pod printed a verdict: {o.js.verdicts}")
        bad = {k: [x for x in v if not x.get("ok")] for k, v in o.js.verdicts.items()}
        assert not any(bad.values()), f"JobSet pods failed: {bad}"
        return
    if o.status == "rejected":
        if o.kf2jobset_refused:  # refused by both worlds: kf2jobset must say v1 did
            assert "inherited" in o.conv_message, (
                f"the v1.9.4 webhook rejects this job ({o.detail}); kf2jobset refuses it without saying v1 did: {o.conv_message}")
            return
        assert "JS080" in o.conv_message, (
            f"the v1.9.4 webhook rejects this job ({o.detail}) but kf2jobset converts it without saying so")
        return
    # every pod of both worlds ran the program (its first run printed at least one verdict)
    for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
        assert len(side.verdicts) == side.pods and all(side.verdicts.values()), (
            f"{what}: not every pod printed a verdict: {side.verdicts}")
    lines = [f"{what}: v1 {a!r}\n   JobSet {b!r}" for what, a, b, why in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)
    # what the programs proved in the v1 world is what the job is for: it must have succeeded there
    # unless the job cannot work in v1 either (then both worlds must agree, checked above)
    if o.v1.result == "Succeeded":
        bad = {k: [x for x in v if not x.get("ok")] for k, v in o.js.verdicts.items()}
        assert not any(bad.values()), f"JobSet pods failed: {bad}"


# ---- mutations: a wrong address or a wrong rank must make the programs fail


def _containers(jobset, rj_name=None):
    for rj in jobset["spec"]["replicatedJobs"]:
        if rj_name is None or rj["name"] == rj_name:
            yield from rj["template"]["spec"]["template"]["spec"]["containers"]


def _env(c, name):
    return next((e for e in c.get("env") or [] if e["name"] == name), None)


def m_master_addr_to_worker(jobset, companions):
    """PyTorch/XGBoost: MASTER_ADDR names worker 0's pod instead of the master's."""
    for c in _containers(jobset):
        e = _env(c, "MASTER_ADDR")
        if e:
            e["value"] = e["value"].replace("-master-0-0", "-worker-0-0")


def m_rank_from_job_index(jobset, companions):
    """PyTorch/XGBoost: RANK read from job-index instead of job-global-index: master 0 and worker 0 are both rank 0."""
    for c in _containers(jobset):
        e = _env(c, "RANK")
        if e and "fieldRef" in (e.get("valueFrom") or {}):
            e["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.labels['jobset.sigs.k8s.io/job-index']"


def m_coordinator_to_worker1(jobset, companions):
    """JAX: COORDINATOR_ADDRESS names worker 1's pod (not process 0)."""
    for c in _containers(jobset):
        e = _env(c, "COORDINATOR_ADDRESS")
        e["value"] = e["value"].replace("-worker-0-0", "-worker-1-0")


def m_process_id_constant(jobset, companions):
    """JAX: every pod PROCESS_ID 0."""
    for c in _containers(jobset):
        e = _env(c, "PROCESS_ID")
        e.pop("valueFrom", None)
        e["value"] = "0"


def m_tf_host_to_other_pod(jobset, companions):
    """TF: the worker-1 address of TF_CONFIG names worker 0's pod."""
    for c in _containers(jobset):
        e = _env(c, "TF_CONFIG")
        if e:
            cfg = e["value"]
            a, b = "-worker-0-0.", "-worker-1-0."
            e["value"] = cfg.replace(b, a)


def m_tf_task_index_constant(jobset, companions):
    """TF: every worker pod says it is task worker:0 (two pods with the same task index)."""
    for c in _containers(jobset, "worker"):
        e = _env(c, "TF_CONFIG")
        if e:
            e["value"] = e["value"].replace('"index":$(KF2JOBSET_JOB_INDEX)', '"index":0')


MUTATIONS = [
    ("pytorchjob/master-workers", m_master_addr_to_worker, "address"),
    ("pytorchjob/master-workers", m_rank_from_job_index, "rank"),
    ("xgboostjob/master-workers", m_master_addr_to_worker, "address"),
    ("xgboostjob/master-workers", m_rank_from_job_index, "rank"),
    ("jaxjob/workers", m_coordinator_to_worker1, "address"),
    ("jaxjob/workers", m_process_id_constant, "rank"),
    ("tfjob/worker-only", m_tf_host_to_other_pod, "address"),
    ("tfjob/worker-only", m_tf_task_index_constant, "rank"),
]


def _mid(cid, fn) -> str:
    return f"{cid}:{fn.__name__}"


@pytest.fixture(scope="module")
def mutation_outcomes(fw_runner, fw_outcomes) -> dict:
    """Every mutation's JobSet side, all at once (each waits out its programs' timeouts)."""
    by_id = {c.id: c for c in ALL}
    todo = [(cid, fn) for cid, fn, _ in MUTATIONS if cid in by_id]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max(1, len(todo))) as pool:
        outs = list(pool.map(lambda m: fw_runner.run_case(by_id[m[0]], mutate=m[1], only_jobset=True,
                                                          timeout=MUTATION_TIMEOUT), todo))
    print(f"\n[frameworks] {len(todo)} mutations in {time.monotonic() - t0:.1f} s")
    return {_mid(cid, fn): o for (cid, fn), o in zip(todo, outs)}


@pytest.mark.parametrize("mutation", [_mid(cid, fn) for cid, fn, _ in MUTATIONS])
def test_mutations_make_the_programs_fail(fw_outcomes, mutation_outcomes, mutation):
    cid, name = mutation.split(":")
    if cid not in fw_outcomes:
        pytest.fail(f"{cid} is not among the cases run (KF2JOBSET_FW_ONLY?)")
    base = fw_outcomes[cid]
    assert base.status == "ran" and base.v1.result == "Succeeded" == base.js.result, (
        f"the unmutated {cid} must succeed in both worlds first: {summary(base)}")
    o = mutation_outcomes[mutation]
    assert o.status == "ran", o.detail
    failed = [k for k, vs in o.js.verdicts.items() if not vs or any(not v.get("ok") for v in vs)]
    differ = [k for k in base.js.logical if logical(o.js, o.js.verdicts.get(k, [])) != base.js.logical[k]]
    print(f"{mutation}: JobSet {o.js.result}; pods failed {failed}; verdicts changed {differ}; "
          f"errors {[v.get('error', '')[:160] for vs in o.js.verdicts.values() for v in vs if v.get('error')][:3]}")
    assert o.js.result != "Succeeded" or failed or differ, (
        f"{name} on {cid}: the programs did not notice: {o.js.result}, verdicts {o.js.verdicts}")
    assert failed or differ, f"{name} on {cid}: no pod failed and no verdict changed ({o.js.result})"


# ---- size as a parameter (issue 30): the programs rendezvous at the size the replicas were edited to

TORCHRUN_CPU = "corpus/training-operator/examples/pytorch/cpu-demo/demo.yaml"  # nprocPerNode "2": WORLD_SIZE is pods x 2
# Jobs whose size-derived values all follow the count (SZ001 without SZ002), smaller and larger than written: the
# v1 job and the JobSet kf2jobset wrote for the job as written edited alike (replicas only; the JobSet is not
# converted again), as test_differential's resized cases. Few and small: every process imports its framework
FOLLOWS = [("pytorchjob/env-override", 1), ("pytorchjob/torchrun-one-per-node", 2), ("jaxjob/workers", 3),
           ("jaxjob/env-override", 4), ("paddlejob/worker-only", 2), ("paddlejob/worker-only", 4)]
# Jobs with literals (SZ002), the worker count edited, and the literal `convert --check` must name in the JobSet
# edited by hand (test_literal_sizes_are_guarded, the real CLI)
CHECKED = [("xgboostjob/master-workers", 2, "WORKER_ADDRS"), ("xgboostjob/master-workers", 5, "WORKER_ADDRS"),
           ("tfjob/worker-only", 3, "TF_CONFIG"), (TORCHRUN_CPU, 2, "WORLD_SIZE")]
# ... of which the v1 job edited and converted again, what the check tells the user to do, runs in both worlds
# (TF's conversion at other sizes runs among the fixtures: tfjob/selecting-objects has 3 workers)
RECONVERTED = [("xgboostjob/master-workers", 2), ("xgboostjob/master-workers", 5), (TORCHRUN_CPU, 2)]
# ... and the hand-edited JobSet run as it is (the JobSet world only, the programs' timeouts short): it must not
# rendezvous at the new size, or the check guards nothing. Not the nprocPerNode one: torchrun reads only the PET_*
# variables, which follow the size; its literal WORLD_SIZE misleads only a program that reads WORLD_SIZE itself
STALE = [("xgboostjob/master-workers", 2), ("tfjob/worker-only", 3)]


@dataclass
class SizeCase:
    how: str  # follows | reconverted | stale
    case: Case
    edited: dict  # the v1 job with the new replicas


def _edited(job: dict, rtype: str, new: int) -> dict:
    job = copy.deepcopy(job)
    specs = job["spec"][next(k for k in job["spec"] if k.endswith("ReplicaSpecs"))]
    specs[next(k for k in specs if k.lower() == rtype.lower())]["replicas"] = new
    return job


def size_cases() -> list[SizeCase]:
    by_id = {c.id: c for c in BASE}
    out = [SizeCase("follows", resized(by_id[cid], "Worker", n), _edited(by_id[cid].job, "Worker", n)) for cid, n in FOLLOWS]
    for cid, n in RECONVERTED:
        if cid in by_id:  # the corpus one needs the upstream modules (test_literal_sizes_are_guarded says so)
            job = _edited(by_id[cid].job, "Worker", n)
            out.append(SizeCase("reconverted", dataclasses.replace(by_id[cid], id=f"reconverted:{cid}:worker={n}", job=job),
                                job))
    for cid, n in STALE:
        case = resized(by_id[cid], "Worker", n)
        out.append(SizeCase("stale", dataclasses.replace(case, id=case.id.replace("resized:", "stale:", 1)),
                            _edited(by_id[cid].job, "Worker", n)))
    return out


SIZED = [s for s in size_cases() if only([s.case])]  # KF2JOBSET_FW_ONLY selects them too (ids resized:, reconverted:, stale:)
SIZED_BY_ID = {s.case.id: s for s in SIZED}


def wanted(job: dict) -> list:
    """What the programs of the edited job must report, once each: the ranks 0..n-1 of one world of n processes
    (one per pod; nprocPerNode each under torchrun when it is a number), or for TF every task of the cluster."""
    specs = job["spec"][next(k for k in job["spec"] if k.endswith("ReplicaSpecs"))]
    count = {t: (s or {}).get("replicas") or 1 for t, s in specs.items()}  # v1's default is 1
    if job["kind"] == "TFJob":
        return sorted(f"{t.lower()}:{i}" for t, n in count.items() if t.lower() != "evaluator" for i in range(n))
    nproc = str(job["spec"].get("nprocPerNode") or "1")
    per_pod = int(nproc) if job["kind"] == "PyTorchJob" and torch_mode(job) == "torchrun" and nproc.isdigit() else 1
    return list(range(sum(count.values()) * per_pod))


def size_problems(side: Side, kind: str, want: list) -> list[str]:
    """Why the programs of one world did not run as one job of the new size ([] when every pod printed verdicts,
    all ok, and every process saw a world of len(want) in which the ids of `want` appear once each)."""
    problems = []
    if len(side.verdicts) != side.pods or not all(side.verdicts.values()):
        problems.append(f"{side.pods} pods, verdicts from {sorted(k for k, v in side.verdicts.items() if v)}")
    failed = [f"{k[0]}/{k[1]}: {v.get('error') or v}" for k, vs in sorted(side.verdicts.items()) for v in vs if not v.get("ok")]
    if failed:
        problems.append("failed: " + "; ".join(failed)[:800])
    every = [v for vs in side.verdicts.values() for v in vs if v.get("ok")]
    if kind == "TFJob":  # the lead reached every task of its TF_CONFIG, and each pod serves one of them
        outside = sorted(v["task"] for v in every if v.get("mode") == "not-in-cluster")
        tasks = sorted(v["task"] for v in every if v.get("mode") in ("serve", "lead"))
        leads = [v for v in every if v.get("mode") == "lead"]
        reached = sorted(leads[0]["peers"]) if len(leads) == 1 else f"{len(leads)} leads"
        if outside:
            problems.append(f"pods whose task is outside their TF_CONFIG cluster: {outside}")
        if tasks != want or reached != want:
            problems.append(f"tasks served {tasks}, reached by the lead {reached}; want {want}")
        return problems
    ranked = [v for v in every if isinstance(v.get("rank"), int) and isinstance(v.get("world"), int)]
    ranks, worlds = sorted(v["rank"] for v in ranked), sorted({v["world"] for v in ranked})
    if worlds != [len(want)] or ranks != want:
        problems.append(f"world sizes {worlds}, ranks {ranks}; want one world of {len(want)}, ranks {want}")
    return problems


@pytest.fixture(scope="module")
def size_outcomes(fw_runner) -> dict:
    """Every size case at once: the stale ones (mostly waiting out their programs' timeouts) beside the others."""
    t0, own0 = time.monotonic(), _own_cpu()
    stale = [s for s in SIZED if s.how == "stale"]
    with ThreadPoolExecutor(PARALLEL) as pool, ThreadPoolExecutor(max(1, len(stale))) as waiting:
        futures = {s.case.id: waiting.submit(fw_runner.run_case, s.case, only_jobset=True, timeout=MUTATION_TIMEOUT)
                   for s in stale}
        # the most processes first, so the tail is short
        for s in sorted((s for s in SIZED if s.how != "stale"), key=lambda s: -len(wanted(s.edited))):
            futures[s.case.id] = pool.submit(fw_runner.run_case, s.case)
        results = {k: f.result() for k, f in futures.items()}
    print(f"\n[frameworks] {len(results)} size cases in {time.monotonic() - t0:.1f} s (parallel {PARALLEL} + {len(stale)} stale; "
          f"CPU of the programs that ended {_own_cpu() - own0:.0f} s; load {os.getloadavg()[0]:.1f})")
    print(result_table(results.values()))
    for cid, o in sorted(results.items()):
        s = SIZED_BY_ID[cid]
        for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
            if side.namespace:
                print(f"{cid} {what}: {side.result}; {'; '.join(size_problems(side, s.edited['kind'], wanted(s.edited))) or 'at the new size'}")
    return results


def test_size_cases_are_the_differentials():
    """The jobs resized here are resized alike in tests/e2e/test_differential.py, where every pod's env is compared."""
    from .test_differential import resized_cases

    ids = {c.id.rsplit(":", 1)[0] for c in resized_cases()}
    assert [cid for cid, n in FOLLOWS if f"resized:{cid}" not in ids] == []


@pytest.mark.parametrize("case_id", [s.case.id for s in SIZED if s.how != "stale"])
def test_programs_rendezvous_at_the_edited_size(size_outcomes, case_id):
    s, o = SIZED_BY_ID[case_id], size_outcomes[case_id]
    assert o.status == "ran", o.detail
    if s.how == "follows":  # what makes the edit alone enough
        assert "SZ001" in o.codes and "SZ002" not in o.codes, sorted(o.codes)
    else:
        assert "SZ002" in o.codes, sorted(o.codes)
    want = wanted(s.edited)
    for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
        problems = size_problems(side, s.edited["kind"], want)
        assert not problems, f"{what} ({side.result}): " + "; ".join(problems)
        assert side.result == "Succeeded", f"{what}: {side.result} ({side.message})"
    lines = [f"{what}: v1 {a!r}\n   JobSet {b!r}" for what, a, b, why in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)


@pytest.mark.parametrize("case_id", [s.case.id for s in SIZED if s.how == "stale"])
def test_a_stale_hand_edited_jobset_misses_the_edited_size(size_outcomes, case_id):
    s, o = SIZED_BY_ID[case_id], size_outcomes[case_id]
    assert o.status == "ran", o.detail
    assert "SZ002" in o.codes, sorted(o.codes)
    problems = size_problems(o.js, s.edited["kind"], wanted(s.edited))
    print(f"{case_id}: JobSet {o.js.result}: {problems}")
    assert problems, f"the hand-edited JobSet ran as one job of the new size ({o.js.result}): its literals did not matter"


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kf2jobset", *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))


def test_literal_sizes_are_guarded(tmp_path):
    """The real CLI, on a tree of the CHECKED jobs (one run per step): the JobSets converted in place (no alarm on
    them: tests/test_sizes_check.py), their worker replicas edited by hand, fail `convert --check`, one line per
    file naming its stale values; the v1 jobs edited and converted again pass it, and are the JobSets the
    reconverted cases run."""
    from kf2jobset import exitcodes
    from kf2jobset.pipeline import convert_text
    from kf2jobset.yamlio import to_plain

    from ..test_sizes_check import set_replicas

    by_id = {c.id: c for c in BASE}
    missing = [cid for cid, _, _ in CHECKED if cid not in by_id]
    checked = [(n, by_id[cid], new, literal) for n, (cid, new, literal) in enumerate(CHECKED) if cid in by_id]
    tree = tmp_path / "repo"
    tree.mkdir()
    for n, case, _, _ in checked:
        (tree / f"job{n}.yaml").write_text(yaml.safe_dump(case.job, sort_keys=False))
    first = _cli("convert", "--in-place", tree)
    assert first.returncode == 0, first.stderr
    was = {}
    for n, case, new, _ in checked:
        path = tree / f"job{n}.yaml"
        (rjob,) = [r for r in yaml.safe_load(path.read_text())["spec"]["replicatedJobs"] if r["name"] == "worker"]
        was[n] = rjob["replicas"]
        path.write_text(set_replicas(path.read_text(), "worker", new))
    res = _cli("convert", "--check", tree)
    assert res.returncode == exitcodes.FINDINGS, res.stdout + res.stderr
    lines = {int(re.search(r"job(\d+)\.yaml:", line).group(1)): line for line in res.stdout.splitlines()}
    assert sorted(lines) == [n for n, *_ in checked], res.stdout
    for n, case, new, literal in checked:
        line = lines[n]
        assert ": resized: " in line and f"worker {was[n]} -> {new}" in line, line
        assert literal in line and "again with the new replicas" in line, line
    # what the message asks for: the v1 jobs with the new replicas, converted again
    for n, case, new, _ in checked:
        (tree / f"job{n}.yaml").write_text(yaml.safe_dump(_edited(case.job, "Worker", new), sort_keys=False))
    again = _cli("convert", "--in-place", tree)
    assert again.returncode == 0, again.stderr
    res = _cli("convert", "--check", tree)
    assert res.returncode == 0 and "resized" not in res.stdout, res.stdout + res.stderr
    for n, case, new, _ in checked:
        edited = yaml.safe_dump(_edited(case.job, "Worker", new), sort_keys=False)
        (conv,) = [c for r in convert_text(edited, "job.yaml", case.options).results for c in r.conversions]
        assert yaml.safe_load((tree / f"job{n}.yaml").read_text()) == to_plain(conv.jobset), (
            f"{case.id}: the reconverted case does not run the JobSet the CLI writes")
    if missing:
        pytest.skip(f"checked all but {missing}: {upstream.corpus_absent()}")
