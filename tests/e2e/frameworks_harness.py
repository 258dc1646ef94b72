"""The real-frameworks tests' machinery (tests/e2e/test_frameworks.py, test_mxnet.py, test_trainer_smoke.py,
test_trainjob_target.py): the frameworks' venvs (tools/install-frameworks.sh), the programs each kind runs
(tests/e2e/programs), their verdicts read from the logs and made comparable across the worlds, and the
FrameworkRunner that runs a case in both worlds until both are terminal."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .differential_cases import Case, KF_PLURAL
from .differential_compare import jobset_pod_key, operator_pod_key
from .differential_runner import (V1_STUCK, Runner, apply_companions, create_priority_classes, create_stand_ins,
                                  place_converted, pod_templates, referenced_objects, rejection_message)
from .nodeagent import NodeAgent, running_agent


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
STUCK_GRACE = 40.0  # a side whose every pod already printed its verdict but is not terminal: waited this long (a loaded
# machine: the JobSet controller may take tens of seconds to mark a finished JobSet)


# A real difference -> the report codes any one of which names it (in the conversion's notes or the report's
# findings). Results: (v1 result, JobSet result).
EXPLAINED_BY: dict = {
    # restartPolicy Always: v1 restarts a pod that exited 0 (the job never ends); a Job's OnFailure pod is done
    ("result", "not terminal (Running)", "Succeeded"): ("JS020",),
    # MXTune (no Scheduler, no lone Worker): v1.8.1 sets neither Running nor Succeeded, the job stays Created; the
    # JobSet completes (tests/e2e/test_mxnet.py)
    ("result", "not terminal (Created)", "Succeeded"): ("MX002",),
}


def venv_cache_root() -> Path:
    base = os.environ.get("KF2JOBSET_CACHE_DIR") or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kf2jobset")
    return Path(base)


def framework_pythons() -> dict:
    """{venv name: python}; where tools/install-frameworks.sh puts them."""
    root = venv_cache_root()
    out = {n: root / "frameworks" / n / "bin" / "python" for n in ("torch", "tensorflow", "jax", "xgboost")}
    out["paddle"] = root / "launchers" / "paddle" / "bin" / "python"
    return out


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

    # one case end to end on the real stack, not split: only a KF2JOBSET_E2E run could check the split
    def _run_case(self, case: Case, out: FwOutcome, mutate, only_jobset: bool, timeout: int) -> None:  # noqa: C901
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
                for t in pod_templates(job_a):
                    v1_refs.update(referenced_objects(t.get("spec") or {}))
                create_stand_ins(core, ns_a, v1_refs, set())
                create_priority_classes(api, [job_a, conv.jobset] if conv is not None else [job_a])
                try:
                    created = custom.create_namespaced_custom_object("kubeflow.org", "v1", ns_a, plural, job_a)
                except ApiException as e:
                    if e.status in (400, 403, 422) and "denied the request" in (e.body or ""):
                        out.status, out.detail = "rejected", rejection_message(e)
                        out.v1.result = out.js.result = "not run"
                        return
                    raise
                out.v1.namespace, out.v1.name = ns_a, created["metadata"]["name"]
                objs.append(("v1", ns_a, out.v1.name))
            if conv is None:
                raise AssertionError(f"the operator accepted the job but kf2jobset refused it: {err}")
            jobset, companions, comp_names, js_refs = place_converted(ns_b, conv, mutate)
            # resized: the JobSet written for the job as written, its replicas edited by hand
            model_job = self._resize_jobset(case, conv, edited, jobset) if case.resize else conv.job
            for t in pod_templates(job):
                v1_refs.update(referenced_objects(t.get("spec") or {}))
            create_stand_ins(core, ns_b, v1_refs, comp_names)
            create_stand_ins(core, ns_b, js_refs, comp_names | set(v1_refs))
            create_priority_classes(api, [conv.jobset])
            out.detail += apply_companions(core, ns_b, companions)
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


def own_cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the programs; the stack's while it runs
    is not counted until it stops)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cpu_seconds() -> float:
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


@contextmanager
def framework_runner(stack, pythons: dict, **agent_kw):
    """A :class:`FrameworkRunner` on ``stack`` with a node agent of its own (``agent_kw``: scheduler names,
    subnet) running every pod's program as the runner says; both cleaned up afterwards."""
    holder: dict = {}
    with running_agent(stack.kubeconfig, {"": lambda launch: holder["r"].program(launch)}, namespaces=set(),
                       backoff=(1.0, 10.0), **agent_kw) as agent:
        runner = holder["r"] = FrameworkRunner(stack, agent, pythons)
        try:
            yield runner
        finally:
            shutil.rmtree(runner.markers, ignore_errors=True)


def run_cases(runner: FrameworkRunner, cases: list, parallel: int) -> dict:
    """case id -> the runner's outcome of each case, ``parallel`` at a time, started in the order given."""
    with ThreadPoolExecutor(parallel) as pool:
        return {case.id: o for case, o in zip(cases, pool.map(runner.run_case, cases), strict=False)}


def check_ran_alike(o: FwOutcome) -> None:
    """Every pod of both worlds ran the program (its first run printed at least one verdict), and the worlds
    differ only where the report says they do."""
    for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
        assert len(side.verdicts) == side.pods and all(side.verdicts.values()), (
            f"{what}: not every pod printed a verdict: {side.verdicts}")
    lines = [f"{what}: v1 {a!r}\n   JobSet {b!r}" for what, a, b, why in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)


def check_jobset_pods_ok(o: FwOutcome) -> None:
    bad = {k: [x for x in v if not x.get("ok")] for k, v in o.js.verdicts.items()}
    assert not any(bad.values()), f"JobSet pods failed: {bad}"
