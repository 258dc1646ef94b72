"""Differential tests: every fixture and corpus job runs in both worlds, and every difference the pods
really show must be one the kf2jobset report names.

For each case (fixtures/*/*/input.yaml with an expected.yaml, its ``args`` honoured; every job of
../shared/corpus, found as tests/test_corpus.py finds them):

* namespace A gets the v1 job: the real Training Operator v1.9.4 (webhooks on) creates its pods
  (MPIJob kubeflow.org/v2beta1: the real mpi-operator v0.8.2, on a second stack, see below);
* namespace B gets ``kf2jobset convert`` of the same job (same options) and its companions: the real
  JobSet v0.12.0 + Job controllers create the pods;
* one node agent (tests/e2e/nodeagent.py) runs every container as ``sleep infinity`` (init
  containers ``true``; init-pytorch's nslookup loop with ``getent hosts``; kf2jobset's hostfile init
  container runs its own script) and records what each container was started with.

Pods are paired by role and rank (v1: ``training.kubeflow.org/replica-type`` + ``replica-index``;
mpi-operator: ``training.kubeflow.org/job-role`` launcher/worker + ``replica-index``, which it shifts by
one for workers under ``runLauncherAsWorker``; JobSet: ``replicatedjob-name`` + ``job-index`` through
``conv.plan.pod_roles``) and compared on what
they really got: env after the kubelet's resolution with every address replaced by the logical pod it
resolves to in that namespace's DNS table (pod IPs too), command + args, init containers, volume
mounts and the files of ConfigMap/Secret volumes (content after address resolution, mode), labels,
restartPolicy and hostname. Differences use the report's vocabulary
(:class:`kf2jobset.runtime.structure.Difference`); one is *explained* when a mapping note of the
conversion covers it (``report/explain.covers``, the report's own rule) or an RT010 finding names the
stale address in it. The report's pod-level claims are checked the other way round: a finding whose
evidence says a pod differs must show up as a real difference.

Label selectors (kf2jobset/selectorfix.py): a fixture's Services, PodDisruptionBudgets, NetworkPolicies
and PodMonitors convert with its job (as one file). Every selector of the real v1 pods (pod affinity and
anti-affinity terms, topologySpreadConstraints) and of those objects is handed to the real API server as
a ``label_selector`` in namespace A, its converted form (the JobSet twin pod's term; the object as the
converted file has it) in namespace B, and the two pod sets are compared through the pod keys above
(aspect ``selector``, subject the selector's place as the report names it): kept labels (JS052) and
rewritten selectors (JS053) must pick the twins of the v1 pods; a difference must be one a note names (JS054).

Manifests the v1 webhook rejects never ran: kf2jobset must say so (note JS080), and nothing is
compared.

MXJob belongs to the Training Operator v1.8.1 (removed in v1.9.0): those cases run on a third stack
(``GroundTruthStack(flavour="training-operator-v1.8.1")``: its own etcd + API server, v1.8.1's MXJob CRD,
the v1.8.1 operator with its MXJob webhook, the same JobSet + Job controllers) with its own node agent,
started like the mpi-operator one by the first MXJob case. v1.8.1 validates an MXJob in its controller,
not in its webhook (which only warns): a job it refuses is stored, gets a ``...FailedValidation``
Warning event and never has a pod. Every MXJob fixture kf2jobset refuses (``expected-error.txt``, no
``expected.yaml``) runs there too, and must be refused by v1.8.1 in one of those ways
(:func:`test_refused_mxjobs_were_refused_by_v1`).

MPIJob kubeflow.org/v2beta1 belongs to mpi-operator, whose CRD has the v1 MPIJob CRD's name
(``mpijobs.kubeflow.org``). Those cases run on a second stack (``GroundTruthStack(flavour=
"mpi-operator")``: its own etcd + API server, the mpi-operator CRD, mpi-operator v0.8.2, the same
JobSet + Job controllers) with its own node agent, started by the first v2beta1 case (those cases have their own
thread pool, so they run beside the v1 cases).
Namespace A there gets the MPIJob, namespace B its conversion, as above. mpi-operator generates the
SSH key Secret ``<job>-ssh`` itself; namespace B gets the Secret the conversion names as its action
says (a fresh key pair), so the key files differ by design (note MPI003).

All cases run in parallel inside one module fixture (the node agent and the stack are shared); the
per-case tests then read their result. :func:`test_mutations_are_caught` proves the comparison bites.
:func:`test_runtime_models_match_the_real_pods` holds runtime/operator_view.py and jobset_view.py to
the real pods with the same comparison.

Local knobs: ``KF2JOBSET_DIFF_ONLY=REGEX`` (case ids), ``KF2JOBSET_DIFF_PARALLEL=N`` (default 6),
``KF2JOBSET_DIFF_SUMMARY=FILE`` (every case's differences and what explained them, as JSON).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from kf2jobset.convert import is_job
from kf2jobset.frameworks.base import HELPER_PREFIX
from kf2jobset.options import ConvertOptions, parse_version
from kf2jobset.report.explain import covers
from kf2jobset.runtime.compare import JOB_INJECTED
from kf2jobset.runtime.pods import Resolver
from kf2jobset.runtime.selectors import SELECTING, object_selectors, pod_selectors
from kf2jobset.runtime.structure import Difference
from kf2jobset.yamlio import to_plain

from ..conftest import CORPUS, FIXTURES
from ..templates import case_values, fill
from .nodeagent import OWN_COMMAND, NodeAgent
from .stack import MXJOB_FLAVOUR

KF_PLURAL = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs", "XGBoostJob": "xgboostjobs",
             "PaddleJob": "paddlejobs", "JAXJob": "jaxjobs", "MXJob": "mxjobs"}
KF = "training.kubeflow.org/"
JS = "jobset.sigs.k8s.io/"
PARALLEL = int(os.environ.get("KF2JOBSET_DIFF_PARALLEL", "6"))
POD_TIMEOUT = 150.0
# Aspects a pod shows; the report's evidence of other aspects (lifecycle, dns, start) is not observable here.
POD_ASPECTS = {"env", "init", "container", "command", "mount", "restartPolicy", "hostname", "label", "file", "hostfile",
               "scheduling", "selector"}


# ---------------------------------------------------------------------------------------------
# cases


@dataclass
class Case:
    id: str
    job: dict  # the v1 job (named)
    options: ConvertOptions
    note: str = ""  # why it is not run (e.g. v2beta1)
    refused: bool = False  # kf2jobset refuses it (fixtures/<kind>/<case>/expected-error.txt): v1 must have refused it too
    resize: tuple | None = None  # (replica type, count): the v1 job and the JobSet of the ORIGINAL job edited alike
    # objects of the same file that select pods (Service, PDB, NetworkPolicy, PodMonitor): converted with
    # the job, and their selectors compared in both worlds
    peers: list = field(default_factory=list)
    # the file's ConfigMaps: converted with the job (v1 pod names in them get JS066's Services); the MPI
    # frameworks test creates them in both worlds, so a hostfile of the user's own is really read
    configmaps: list = field(default_factory=list)


def _options(args: list[str]) -> ConvertOptions:
    kw: dict = {}
    for a in args:
        k, _, v = a.partition("=")
        if k == "--katib":
            kw["katib"] = True
        elif k == "--accept-mpi-ssh":
            kw["accept_mpi_ssh"] = True
        elif k == "--keep-kubeflow-labels":
            kw["keep_kubeflow_labels"] = True
        elif k == "--jobset-version":
            kw["jobset_version"] = parse_version(v)
        else:
            kw[k[2:].replace("-", "_")] = v
    return ConvertOptions(**kw)


def _jobs_in(doc) -> list[dict]:
    """v1 jobs of a document: the job itself, or Katib trial templates (named like a trial). A job in an
    older apiVersion is the v1 job kf2jobset reads it as (upgrade.py): that is what the v1 operator runs."""
    if is_job(doc):
        return [_as_v1(doc)]
    out = []
    if isinstance(doc, dict) and doc.get("kind") == "Experiment":
        trial = (((doc.get("spec") or {}).get("trialTemplate") or {}).get("trialSpec"))
        if is_job(trial):
            out.append(trial)
    return out


def _as_v1(doc: dict) -> dict:
    from kf2jobset.mappings import convertible_mapping
    from kf2jobset.upgrade import upgrade

    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    return upgrade(doc, mapping).doc if doc.get("apiVersion") in mapping.upgrade_from else doc


def fixture_cases() -> list[Case]:
    out = []
    for inp in sorted(FIXTURES.glob("*/*/input.yaml")):
        case = inp.parent
        if not (case / "expected.yaml").exists():
            continue
        args = [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")] if (case / "args").exists() else []
        # an envsubst template (fixtures/envsubst) runs as applied: filled with the case's values in both
        # worlds (tests/test_envsubst.py holds that filling the output equals converting the filled input)
        text = fill(inp.read_text(), case_values(case))
        docs = list(yaml.safe_load_all(text))
        jobs = [j for d in docs for j in _jobs_in(d)]
        peers = [d for d in docs if isinstance(d, dict) and d.get("kind") in SELECTING]
        configmaps = [d for d in docs if isinstance(d, dict) and d.get("kind") == "ConfigMap"]
        options = _options(args)
        if options.scheduler == "scheduler-plugins":
            # v1's side of these is the operator run with --gang-scheduler-name, which this stack's operator is
            # not: tests/e2e/test_scheduler_plugins.py holds them against that operator (the v2beta1 one,
            # mpi-operator's own gang rules, is unit-tested only: tests/test_gang.py)
            continue
        for n, job in enumerate(jobs):
            out.append(Case(f"{case.parent.name}/{case.name}" + (f"#{n}" if len(jobs) > 1 else ""), job, options,
                            peers=peers, configmaps=configmaps))
    return out


def corpus_cases() -> list[Case]:
    if not CORPUS.is_dir():
        return []
    from ..test_corpus import OPTIONS, all_jobs

    out, seen = [], {}
    for where, doc in all_jobs():
        for job in _jobs_in(doc):
            base = str(where)
            seen[base] = seen.get(base, 0) + 1
            out.append(Case(f"corpus/{base}" + (f"#{seen[base]}" if seen[base] > 1 else ""), to_plain(job), OPTIONS))
    return out


REFUSED_KINDS = ("MXJob",)  # kinds whose refusal fixtures run against the real operator (see the module docstring)


def refusal_cases() -> list[Case]:
    """Fixtures kf2jobset refuses (expected-error.txt, no expected.yaml) of :data:`REFUSED_KINDS`."""
    out = []
    for inp in sorted(FIXTURES.glob("*/*/input.yaml")):
        case = inp.parent
        if (case / "expected.yaml").exists() or not (case / "expected-error.txt").exists():
            continue
        try:
            docs = list(yaml.safe_load_all(inp.read_text()))
        except yaml.YAMLError:
            continue  # not even YAML: nothing to submit
        jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") in REFUSED_KINDS
                and str(d.get("apiVersion", "")).startswith("kubeflow.org/")]
        args = [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")] if (case / "args").exists() else []
        for n, job in enumerate(jobs):
            out.append(Case(f"{case.parent.name}/{case.name}" + (f"#{n}" if len(jobs) > 1 else ""), job, _options(args),
                            refused=True))
    return out


def trainjob_cases() -> list[Case]:
    """Fixture jobs that `--target trainjob` puts on a shared ClusterTrainingRuntime (Trainer's built-in
    torch-distributed, jax-distributed, xgboost-distributed, or one of kf2jobset's bundle; fixtures/targets/
    trainjob too): the JobSet created for them is the one Trainer builds from the TrainJob (kf2jobset's
    prediction, which tests/e2e/test_trainjob_target.py holds equal to Trainer's own), compared with the v1
    pods like any other. Jobs no shared runtime takes are refused by default and left out (with
    `--trainer-runtime per-job` their JobSet is kf2jobset's own, held by the JobSet cases)."""
    import dataclasses

    from kf2jobset.pipeline import convert_text

    targets = []
    for inp in sorted((FIXTURES / "targets" / "trainjob").glob("*/input.yaml")):
        if {"--katib", "--trainer-runtime"} & set((inp.parent / "args").read_text().split()):
            continue
        jobs = [j for d in yaml.safe_load_all(inp.read_text()) for j in _jobs_in(d)]
        targets += [Case(f"targets/{inp.parent.name}", job, ConvertOptions()) for job in jobs]
    out = []
    for case in fixture_cases() + targets:
        other_stack = case.job.get("apiVersion") == "kubeflow.org/v2beta1" or case.job.get("kind") in REFUSED_KINDS
        if other_stack or case.options.katib:
            continue
        options = dataclasses.replace(case.options, target="trainjob")
        job = copy.deepcopy(case.job)
        meta = job.setdefault("metadata", {})
        if meta.get("generateName") and not meta.get("name"):
            # Trainer writes the name into node 0's address; a name given at creation is held by
            # tests/e2e/test_trainjob_target.py, here the job is named
            meta["name"] = meta.pop("generateName") + "x7k2q"
        result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml", options)
        convs = [c for r in result.results for c in r.conversions]
        if not result.errors and convs and convs[0].layout is not None:
            out.append(Case(f"trainjob:{case.id}", job, options))
    return out


RESIZED_PER_KIND = 3  # fixtures per kind whose size-derived values all follow the count (SZ001, no SZ002)
RESIZED_ALSO = ("pytorchjob/torchrun-one-per-node",)  # beyond those: torchrun with nprocPerNode set (PET_NNODES follows)


def resized_cases() -> list[Case]:
    """Size as a parameter (kf2jobset/sizes.py): a converted JobSet edited by hand, smaller and larger, next
    to the v1 job edited the same way. Fixtures whose conversion writes no size literal (SZ001 without
    SZ002; the others are guarded by --check, tests/test_sizes_check.py), a few per kind, on the v1.9.4 stack."""
    from kf2jobset.convert import convert_job

    out, per_kind = [], {}
    for case in fixture_cases():
        kind = case.job.get("kind")
        group = case.id.split("/")[0]  # the fixture directory: pytorchjob, jaxjob, envsubst, ...
        other_stack = case.job.get("apiVersion") == "kubeflow.org/v2beta1" or kind in REFUSED_KINDS  # mpi-operator, v1.8.1
        if other_stack or case.options.katib or "rejected" in case.id or (
                per_kind.get(group, 0) >= RESIZED_PER_KIND and case.id not in RESIZED_ALSO):
            continue
        try:
            conv = convert_job(copy.deepcopy(case.job), case.options)
        except Exception:  # noqa: BLE001 - a case the plain differential already covers
            continue
        codes = {n.code for n in conv.notes}
        if "SZ001" not in codes or "SZ002" in codes or conv.job.run_policy.suspend:
            continue
        rtype = "Worker" if "Worker" in conv.job.replicas else list(conv.job.replicas)[-1]
        was = conv.job.replicas[rtype].replicas
        first = conv.plan.segments[rtype][-1][1]
        per_kind[group] = per_kind.get(group, 0) + 1
        for new in sorted({max(first + 1, was - 1), was + 2} - {was}):
            out.append(resized(case, rtype, new))
    return out


def resized(case: Case, rtype: str, new: int) -> Case:
    """The case with its replica type set to `new` pods in both worlds (Runner._resize_v1 / _resize_jobset)."""
    return dataclasses.replace(case, id=f"resized:{case.id}:{rtype.lower()}={new}", resize=(rtype, new))


ALL_CASES = fixture_cases() + refusal_cases() + corpus_cases() + trainjob_cases() + resized_cases()
if os.environ.get("KF2JOBSET_DIFF_ONLY"):  # a regex over case ids, for local runs
    ALL_CASES = [c for c in ALL_CASES if re.search(os.environ["KF2JOBSET_DIFF_ONLY"], c.id)]


# ---------------------------------------------------------------------------------------------
# what one pod really got


@dataclass
class SeenPod:
    key: tuple
    name: str
    hostname: str
    ip: str
    labels: dict
    restart_policy: str
    scheduling: dict  # schedulerName, priorityClassName
    containers: dict  # name -> {"env": [(n, v)], "command": [...], "mounts": {path: attrs}, "image": str}
    init: dict
    files: dict = field(default_factory=dict)  # (mountPath, relpath) -> (content, mode)
    spec: dict = field(default_factory=dict)  # the pod's spec as created (its affinity, topologySpreadConstraints)


@dataclass
class World:
    namespace: str
    name: str
    pods: dict  # key -> SeenPod
    resolver: Resolver
    dns: dict


@dataclass
class Outcome:
    case: Case
    status: str = "compared"  # compared | rejected | refused | skipped | failed
    detail: str = ""
    jobs_pods: int = 0
    diffs: list = field(default_factory=list)  # [(Difference, explained_by)]
    unexplained: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)  # report claims reality did not show
    selectors: int = 0  # label selectors compared (pod terms and the file's selecting objects)
    gaps: dict = field(default_factory=dict)  # "operator"/"jobset" -> model vs reality
    aspects: set = field(default_factory=set)
    seconds: float = 0.0
    conv_message: str = ""
    kf2jobset_refused: bool = False  # kf2jobset converted nothing (conv_message holds its refusal)


def operator_pod_key(labels: dict) -> tuple | None:
    """(role, rank) of a Training Operator pod from its labels (an MPI v1 launcher has no index: 0)."""
    t, i = labels.get(KF + "replica-type"), labels.get(KF + "replica-index", "0")
    return (t.lower(), int(i)) if t is not None else None


def jobset_pod_key(roles: dict):
    """The (role, rank) of a JobSet pod from its labels, through the conversion's ``pods.pod_roles`` (a
    replicatedJob holding several roles, Trainer's ``node`` Job, is read by its pods' completion index; so is
    a role's one Job of indexed pods)."""
    from kf2jobset.runtime.jobset_view import role_of

    def key(labels: dict) -> tuple | None:
        r, i = labels.get(JS + "replicatedjob-name"), labels.get(JS + "job-index")
        if r is None or i is None:
            return None
        spec = roles.get(r, (r, 0))
        if isinstance(spec, list):
            role, index = role_of(spec, int(labels.get("batch.kubernetes.io/job-completion-index", "0")))
            return (role.lower(), index)
        role, first = spec
        # one pod per Job (kf2jobset's layout: completion index 0), or one Job of indexed pods (a role sized by
        # numNodes on a bundle runtime: job-index 0)
        return (role.lower(), first + int(i) + int(labels.get("batch.kubernetes.io/job-completion-index", "0")))
    return key


def _mount_attrs(m: dict) -> dict:
    return {k: m[k] for k in ("name", "readOnly", "subPath", "subPathExpr") if k in m}


def _read_files(launch, pod_spec: dict) -> dict:
    vols = {v["name"]: v for v in pod_spec.get("volumes") or []}
    out = {}
    for m in launch.spec.get("volumeMounts") or []:
        v = vols.get(m.get("name"), {})
        if not any(k in v for k in ("configMap", "secret", "projected", "downwardAPI")):
            continue
        src = launch.mounts.get(m["mountPath"])
        if not src or not os.path.exists(src):
            continue
        base = Path(src)
        items = [base] if base.is_file() else [p for p in sorted(base.rglob("*")) if p.is_file()]
        for p in items:
            rel = p.name if base.is_file() else str(p.relative_to(base))
            try:
                out[(m["mountPath"], rel)] = (p.read_text(errors="replace"), oct(stat.S_IMODE(p.stat().st_mode)))
            except OSError:
                pass
    return out


def observe(agent: NodeAgent, namespace: str, key_of, containers: dict | None = None) -> dict:
    """`containers`: container name -> the v1 container it runs (Trainer's `node`), to pair them."""
    pods: dict = {}
    containers = containers or {}
    for x in agent.launches(namespace):
        key = key_of(x.labels)
        if key is None:
            continue
        p = pods.get(x.pod)
        if p is None:
            p = pods[x.pod] = SeenPod(key, x.pod, x.hostname, x.pod_ip, dict(x.labels),
                                      x.pod_spec.get("restartPolicy", "Always"),
                                      {k: x.pod_spec.get(k) for k in ("schedulerName", "priorityClassName")}, {}, {},
                                      spec=x.pod_spec)
        bucket = p.init if x.init else p.containers
        own = containers.get(x.labels.get(JS + "replicatedjob-name"))  # a map per replicatedJob (MPI on a bundle runtime)
        cmap = own if isinstance(own, dict) else containers
        cname = x.container if x.init else cmap.get(x.container, x.container)
        if cname in bucket:
            continue  # first start only
        bucket[cname] = {"env": list(x.env), "command": list(x.command), "image": x.image,
                               "mounts": {m["mountPath"]: _mount_attrs(m) for m in x.spec.get("volumeMounts") or []}}
        if not x.init:
            p.files.update(_read_files(x, x.pod_spec))
    return pods


def world_resolver(dns: dict, namespace: str, pods: list[SeenPod], domain: str, by_pod_name: bool,
                   min_labels: int = 1) -> Resolver:
    """Every name the namespace's DNS answers with exactly one pod -> that pod; pod IPs too (and, for
    MPIJob v1, pod names: its launcher reached pods by name through kubectl exec; ``by_pod_name=
    "hostname"``: pod hostnames, for mpi-operator's pods). ``min_labels``:
    labels before ``.<ns>.svc`` that name one pod (v1: its own Service ``<job>-<type>-<i>``, 1;
    JobSet: ``<hostname>.<subdomain>``, 2 -- the Service name alone names every pod, even when there is one)."""
    by_ip = {p.ip: p.key for p in pods}
    names: dict = {ip: k for ip, k in by_ip.items()}
    suffix = f".{namespace}.svc.{domain}"
    for fqdn, ips in dns.items():
        if not fqdn.endswith(suffix) or len(set(ips)) != 1 or ips[0] not in by_ip:
            continue
        short = fqdn[: -len(suffix)]
        if short.count(".") + 1 < min_labels:
            continue
        for n in (short, f"{short}.{namespace}", f"{short}.{namespace}.svc", fqdn):
            names[n] = by_ip[ips[0]]
    if by_pod_name:
        for p in pods:
            names.setdefault(p.hostname if by_pod_name == "hostname" else p.name, p.key)
    return Resolver(names)


# ---------------------------------------------------------------------------------------------
# comparison


def _norm(world: World, value: str) -> str:
    v = world.resolver.normalise(value)
    v = v.replace(world.namespace, "<ns>")
    return v


def _visible(env: list) -> list:
    last = {n: i for i, (n, _) in enumerate(env)}
    return [(n, v) for i, (n, v) in enumerate(env) if last[n] == i and not n.startswith(HELPER_PREFIX) and n not in JOB_INJECTED]


def compare_worlds(op: World, js: World, rename: dict | None = None) -> list[Difference]:
    rename = rename or {}
    out: list[Difference] = []

    def norm(world, v):
        v = _norm(world, str(v))
        for old, new in rename.get(world.namespace, {}).items():
            v = v.replace(old, new)
        return v

    for key in sorted(set(op.pods) | set(js.pods), key=str):
        a, b = op.pods.get(key), js.pods.get(key)
        role = key[0]
        if a is None or b is None:
            out.append(Difference("pod", role, "extra" if a is None else "missing",
                                  None if a is None else f"{key[0]}/{key[1]}", None if b is None else f"{key[0]}/{key[1]}",
                                  role=role, pod=key))
            continue
        d = lambda aspect, subject, change, va=None, vb=None, c=None: out.append(  # noqa: E731
            Difference(aspect, subject, change, va, vb, role=role, pod=key, container=c))
        if a.restart_policy != b.restart_policy:
            d("restartPolicy", role, "changed", a.restart_policy, b.restart_policy)
        for k in sorted(set(a.scheduling) | set(b.scheduling)):
            if a.scheduling.get(k) != b.scheduling.get(k):
                d("scheduling", k, "changed", a.scheduling.get(k), b.scheduling.get(k))
        if a.hostname != b.hostname:
            d("hostname", role, "changed", a.hostname, b.hostname)
        for lk in sorted(set(a.labels) | set(b.labels)):
            va, vb = a.labels.get(lk), b.labels.get(lk)
            if va is None or vb is None:
                d("label", lk, "extra" if va is None else "missing", va, vb)
            elif norm(op, va) != norm(js, vb):
                d("label", lk, "changed", va, vb)
        for kind, ca, cb in (("init", a.init, b.init), ("container", a.containers, b.containers)):
            for cname in sorted(set(ca) | set(cb)):
                x, y = ca.get(cname), cb.get(cname)
                if x is None or y is None:
                    d(kind, cname, "extra" if x is None else "missing", x and x["image"], y and y["image"], c=cname)
                    continue
                na = [norm(op, w) for w in x["command"]]
                nb = [norm(js, w) for w in y["command"]]
                if kind == "init":
                    if na != nb or x["image"] != y["image"] or x["mounts"] != y["mounts"]:
                        d("init", cname, "changed", " ".join(x["command"]), " ".join(y["command"]), c=cname)
                    continue
                if na != nb:
                    d("command", role, "changed", " ".join(x["command"]), " ".join(y["command"]), c=cname)
                for path in sorted(set(x["mounts"]) | set(y["mounts"])):
                    ma, mb = x["mounts"].get(path), y["mounts"].get(path)
                    if ma != mb:
                        ch = "extra" if ma is None else "missing" if mb is None else "changed"
                        d("mount", path, ch, ma and str(ma), mb and str(mb), c=cname)
                ea, eb = _visible(x["env"]), _visible(y["env"])
                ma, mb = dict(ea), dict(eb)
                for n, v in ea:
                    if n not in mb:
                        d("env", n, "missing", v, None, c=cname)
                    elif norm(op, v) != norm(js, mb[n]):
                        d("env", n, "changed", v, mb[n], c=cname)
                for n, v in eb:
                    if n not in ma:
                        d("env", n, "extra", None, v, c=cname)
                # No order check: the kubelet (pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables) hands
                # the runtime the env from a Go map, so a process sees no defined order in either world.
        # files of ConfigMap/Secret volumes mounted at the same path in both pods
        paths = {p for p, _ in a.files} & {p for p, _ in b.files}
        for path in sorted(paths):
            fa = {r: v for (p, r), v in a.files.items() if p == path}
            fb = {r: v for (p, r), v in b.files.items() if p == path}
            for rel in sorted(set(fa) | set(fb)):
                if rel not in fa or rel not in fb:
                    d("file", rel, "extra" if rel not in fa else "missing", rel if rel in fa else None, rel if rel in fb else None)
                    continue
                (ta, ma_), (tb, mb_) = fa[rel], fb[rel]
                if norm(op, ta) != norm(js, tb):
                    d("hostfile" if rel == "hostfile" else "file", "names" if rel == "hostfile" else rel, "changed", ta, tb)
                elif ma_ != mb_:
                    d("file", rel, "changed", f"mode {ma_}", f"mode {mb_}")
    # one Difference per (aspect, subject, pod, container)
    uniq, seen = [], set()
    for x in out:
        k = (x.aspect, x.subject, x.pod, x.container, x.change)
        if k not in seen:
            seen.add(k)
            uniq.append(x)
    return uniq


# ---- label selectors: the pods each one picks in both worlds


def selector_string(reqs) -> str:
    """A selector's requirements as the API server's label_selector parameter reads them."""
    out = []
    for r in reqs:
        if r.op == "In":
            out.append(f"{r.key} in ({','.join(r.values)})")
        elif r.op == "NotIn":
            out.append(f"{r.key} notin ({','.join(r.values)})")
        elif r.op == "Exists":
            out.append(r.key)
        elif r.op == "DoesNotExist":
            out.append(f"!{r.key}")
    return ",".join(out)


def compare_selectors(op: World, js: World, conv, peers_a: list, peers_b: list, pods_selected) -> tuple[list, int]:
    """For every label selector of the v1 pods (affinity terms, topologySpreadConstraints) and of the file's
    selecting objects, the v1 pods it picks (the real API server evaluates it in namespace A) against the
    JobSet pods its converted form picks in namespace B, paired through the report's pod mapping (pod keys).
    ``pods_selected(namespace, selector) -> pod names``. Returns (differences, selectors compared)."""
    names_a = {p.name: k for k, p in op.pods.items()}
    names_b = {p.name: k for k, p in js.pods.items()}
    rtypes = {t.lower().replace("/", "-"): t for t in conv.job.replicas}
    field = conv.job.mapping.replica_specs_field
    diffs, compared, seen = [], 0, set()

    def picked(ns, reqs, names):
        if not reqs:  # an empty LabelSelector picks every pod (a Service without a selector is never listed)
            return frozenset(names.values())
        return frozenset(names[n] for n in pods_selected(ns, selector_string(reqs)) if n in names)

    def show(keys):
        return ", ".join(f"{r}/{i}" for r, i in sorted(keys)) or "none"

    for key, pod in sorted(op.pods.items(), key=lambda kv: str(kv[0])):
        twin = js.pods.get(key)
        base = f"{field}.{rtypes.get(key[0], key[0])}.template.spec"
        theirs = {f.path: f for f in pod_selectors(twin.spec, base)} if twin else {}
        for f in pod_selectors(pod.spec, base):
            if (f.what, key[0]) in seen:
                continue  # the same template term on every pod of the type: compare it once
            seen.add((f.what, key[0]))
            compared += 1
            a = picked(op.namespace, f.reqs, names_a)
            other = theirs.get(f.path)
            b = picked(js.namespace, other.reqs, names_b) if other else frozenset()
            if a != b:
                diffs.append(Difference("selector", f.what, "changed", show(a), show(b), role=key[0], pod=key))
    for pa, pb in zip(peers_a, peers_b):
        mine, theirs = object_selectors(pa), {f.path: f for f in object_selectors(pb)}
        for f in mine:
            compared += 1
            a = picked(op.namespace, f.reqs, names_a)
            other = theirs.get(f.path)
            b = picked(js.namespace, other.reqs, names_b) if other else frozenset()
            if a != b:
                diffs.append(Difference("selector", f.what, "changed", show(a), show(b)))
    return diffs, compared


# ---- the models against reality: runtime/operator_view.py vs the real operator, jobset_view.py vs JobSet

SERVICE_LINKS = re.compile(r"^KUBERNETES_(SERVICE_|PORT)")
NOT_MODELLED_LABELS = re.compile(r"(^|/)(controller-uid|jobset-uid|job-key)$")  # random per object


def model_world(world, real: World) -> World:
    """A runtime model (OperatorWorld / JobSetWorld) as the SeenPods it predicts."""
    pods = {}
    for p in world.pods:
        def shape(c, init):
            env = p.env(c)
            defined = dict(env)
            from kf2jobset.runtime.pods import expand

            cmd = [expand(str(w), defined) for w in (c.get("command") or []) + (c.get("args") or [])]
            return {"env": env, "command": cmd, "image": c.get("image"),
                    "mounts": {m["mountPath"]: _mount_attrs(m) for m in c.get("volumeMounts") or []}}

        pods[p.key] = SeenPod(p.key, p.name, p.hostname or p.name, p.ip, dict(p.labels), p.spec.get("restartPolicy", "Always"),
                              {"schedulerName": p.spec.get("schedulerName") or "default-scheduler",  # API default
                               "priorityClassName": p.spec.get("priorityClassName")},
                              {c.get("name"): shape(c, False) for c in p.containers()},
                              {c.get("name"): shape(c, True) for c in p.containers(init=True)})
    return World(real.namespace, world.name, pods, world.resolver, {})


def model_gaps(model: World, real: World) -> list[str]:
    """Where a model's pods differ from the real ones (beyond values it cannot know: uids, random suffixes)."""
    real_cmp = copy.copy(real)
    real_cmp.pods = {}
    for k, p in real.pods.items():
        q = copy.deepcopy(p)
        q.labels = {lk: v for lk, v in q.labels.items() if not NOT_MODELLED_LABELS.search(lk)}
        q.files = {}
        for bucket in (q.containers, q.init):
            for c in bucket.values():
                c["env"] = [(n, v) for n, v in c["env"] if not SERVICE_LINKS.match(n)]
        real_cmp.pods[k] = q
    m = copy.copy(model)
    m.pods = {}
    for k, p in model.pods.items():
        q = copy.deepcopy(p)
        q.labels = {lk: v for lk, v in q.labels.items() if not NOT_MODELLED_LABELS.search(lk)}
        real_pod = real.pods.get(k)
        if real_pod is not None:
            q.hostname = q.hostname if q.hostname != q.name else real_pod.hostname  # model pod names carry no random suffix
        m.pods[k] = q
    out = []
    for d in compare_worlds(m, real_cmp):
        if str(d.operator).startswith("<") and str(d.operator).endswith(">"):
            continue  # a value the model never reads: a Secret/ConfigMap key, a PriorityClass's value

        out.append(f"{d.aspect} {d.subject} {d.change} at {d.where}: model {d.operator!r} real {d.jobset!r}")
    return out


def explain_real(d: Difference, notes, findings) -> str | None:
    for note in notes:
        if covers(note, d):
            return note.code
    for f in findings:
        if f.code == "RT010" and any(ev.subject and ev.subject in f"{d.operator} {d.jobset}" for ev in f.evidence):
            return f.code
    return None


def unconfirmed_claims(findings, real: list[Difference]) -> list[str]:
    """Pod-level evidence in the report that reality does not show."""
    seen = {(x.aspect, str(x.subject).lower(), x.where.split(" ")[0]) for x in real}
    seen_roles = {(x.aspect, str(x.subject).lower(), x.pod[0] if x.pod else None) for x in real}
    out = []
    for f in findings:
        for ev in f.evidence:
            if ev.change == "equivalent" or ev.aspect not in POD_ASPECTS:
                continue
            if ev.aspect == "env" and ev.subject == "*order*":
                # the order of definition decides what $(VAR) expands to (compared above, as values); the
                # process gets its env from a Go map, so the order itself is never seen in a pod
                continue
            where = ev.where.split(" ")[0]
            subj = str(ev.subject).lower()
            if ev.aspect in ("file", "hostfile"):
                ok = (ev.aspect, subj, "launcher") in seen_roles
            elif "/" in where:
                ok = (ev.aspect, subj, where) in seen
            else:
                ok = any(a == ev.aspect and s == subj and r == where for a, s, r in seen_roles)
            if not ok:
                out.append(f"{f.code} {ev.aspect} {ev.subject} {ev.change} at {ev.where}: {ev.operator!r} -> {ev.jobset!r}")
    return out


# ---------------------------------------------------------------------------------------------
# running one case


# listens on a TCP port and accepts (then drops) connections: what a readinessProbe tcpSocket needs
_LISTEN = ("import socket, sys\n"
           "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
           "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(64)\n"
           "while True:\n    s.accept()[0].close()\n")


def _probe_port(container: dict) -> int | None:
    """The port of a container's readinessProbe tcpSocket (a named port through its ports), if any."""
    port = ((container.get("readinessProbe") or {}).get("tcpSocket") or {}).get("port")
    if isinstance(port, str) and not port.isdigit():
        port = next((p.get("containerPort") for p in container.get("ports") or [] if p.get("name") == port), None)
    return int(port) if port is not None else None


def _programs(listen_on_probes: bool = False):
    """Containers run ``sleep infinity``. ``listen_on_probes``: a container whose readinessProbe is a
    tcpSocket listens on that port instead, as the server the image runs would (mpi-operator's examples
    probe sshd on 2222; a JobSet launcher waits for its workers to be Ready)."""
    import sys

    from kf2jobset.frameworks.mpi import HOSTFILE_INIT

    def program(launch):
        if launch.init:
            if launch.container == "init-pytorch":
                return [w.replace("nslookup", "getent hosts") for w in launch.command]
            if launch.container == HOSTFILE_INIT:
                return OWN_COMMAND(launch)
            return ["true"]
        port = _probe_port(launch.spec) if listen_on_probes else None
        if port is not None:
            return [sys.executable, "-c", _LISTEN, str(port)]
        return ["sleep", "infinity"]

    return {"": program}


def _refs(spec: dict) -> dict:
    """ConfigMaps/Secrets a pod spec needs: {("ConfigMap"|"Secret", name): set(keys)}."""
    out: dict = {}

    def add(kind, name, key=None):
        if name:
            s = out.setdefault((kind, name), set())
            if key:
                s.add(key)

    for v in spec.get("volumes") or []:
        for kind, fld, nm in (("ConfigMap", "configMap", "name"), ("Secret", "secret", "secretName")):
            if fld in v and not v[fld].get("optional"):
                add(kind, v[fld].get(nm))
                for it in v[fld].get("items") or []:
                    add(kind, v[fld].get(nm), it.get("key"))
        for src in (v.get("projected") or {}).get("sources") or []:
            for kind, fld in (("ConfigMap", "configMap"), ("Secret", "secret")):
                if fld in src and not src[fld].get("optional"):
                    add(kind, src[fld].get("name"))
                    for it in src[fld].get("items") or []:
                        add(kind, src[fld].get("name"), it.get("key"))
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for ef in c.get("envFrom") or []:
            for kind, fld in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                if fld in ef and not ef[fld].get("optional"):
                    add(kind, ef[fld].get("name"))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            for kind, fld in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
                if fld in vf and not vf[fld].get("optional"):
                    add(kind, vf[fld].get("name"), vf[fld].get("key"))
    return out


def _templates(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "JobSet":
        return [((rj.get("template") or {}).get("spec") or {}).get("template") or {} for rj in spec.get("replicatedJobs") or []]
    return [r.get("template") or {} for k, rs in spec.items() if k.endswith("ReplicaSpecs") for r in (rs or {}).values()]


def _create_refs(core, namespace: str, refs: dict, skip: set) -> None:
    from kubernetes.client.rest import ApiException

    for (kind, name), keys in refs.items():
        if (kind, name) in skip:
            continue
        data = {k: f"stand-in for {k}" for k in (keys or {"data"})}
        body = {"metadata": {"name": name}, "data" if kind == "ConfigMap" else "stringData": data}
        try:
            (core.create_namespaced_config_map if kind == "ConfigMap" else core.create_namespaced_secret)(namespace, body)
        except ApiException as e:
            if e.status != 409:
                raise


def _ssh_secret(core, namespace: str, name: str) -> None:
    """The SSH Secret as note MPI003's action makes it: ssh-keygen -t ed25519, type kubernetes.io/ssh-auth."""
    import subprocess
    import tempfile

    if shutil.which("ssh-keygen") is None:
        raise RuntimeError("ssh-keygen not found: needed to create the SSH Secret of an MPIJob v2beta1 conversion")
    with tempfile.TemporaryDirectory() as d:
        key = Path(d) / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        data = {"ssh-privatekey": key.read_text(), "ssh-publickey": Path(f"{key}.pub").read_text()}
    core.create_namespaced_secret(namespace, {"metadata": {"name": name}, "type": "kubernetes.io/ssh-auth",
                                              "stringData": data})


def _priority_classes(api, objs) -> None:
    """PriorityClasses the pods name (the API server refuses a pod naming a missing one); cluster-wide."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    names = {((t.get("spec") or {}).get("priorityClassName")) for o in objs for t in _templates(o)} - {None}
    for name in names:
        try:
            client.SchedulingV1Api(api).create_priority_class({"metadata": {"name": name}, "value": 1000})
        except ApiException as e:
            if e.status != 409:
                raise


# notes that say the v1 job never ran as a whole although its pods were created
V1_STUCK = ("JS063",)


def _failed_services(core, namespace: str) -> list[str]:
    return [e.message for e in core.list_namespaced_event(namespace).items if e.reason == "FailedCreateService"]


def _rejection(e) -> str:
    try:
        return json.loads(e.body).get("message", str(e))
    except Exception:  # noqa: BLE001
        return str(e)


V2BETA1 = "kubeflow.org/v2beta1"
_CONVERT_LOCK = threading.Lock()


def flavour_of(job: dict) -> str:
    """The stack flavour (tests/e2e/stack.py) whose operator runs this v1 job."""
    if job.get("apiVersion") == V2BETA1:
        return "mpi-operator"
    if job.get("kind") == "MXJob":
        return MXJOB_FLAVOUR
    return "training-operator"


class Runner:
    """Runs cases on one stack + node agent. ``others``: {stack flavour: the Runner of that stack, or
    anything whose ``result()`` gives one (:class:`LazyStackRunner`)}, to which the cases of that flavour
    are handed (MPIJob kubeflow.org/v2beta1: "mpi-operator"; MXJob: "training-operator-v1.8.1").
    ``mpi``: the same for "mpi-operator" alone (older callers)."""

    def __init__(self, stack, agent: NodeAgent, mpi=None, others: dict | None = None):
        self.stack, self.agent = stack, agent
        self.others = dict(others or {})
        if mpi is not None:
            self.others["mpi-operator"] = mpi

    @property
    def mpi(self):
        return self.others.get("mpi-operator")

    @property
    def flavour(self) -> str:
        f = getattr(self.stack, "flavour", "training-operator")
        return "training-operator" if f == "volcano" else f  # the volcano stack runs what the main one runs

    @property
    def serves_v2beta1(self) -> bool:
        return self.flavour == "mpi-operator"

    def new_namespace(self, core, tag: str) -> str:
        name = f"d{tag}-{uuid.uuid4().hex[:8]}"
        core.create_namespace({"metadata": {"name": name}})
        with self.agent.lock:
            self.agent.namespaces.add(name)
        return name

    def convert(self, job: dict, options: ConvertOptions):
        conv, jr, err, _ = self.convert_with_peers(job, options, [])
        return conv, jr, err

    def convert_with_peers(self, job: dict, options: ConvertOptions, peers: list, same_names: bool = False):
        """The job converted in one file with `peers` (objects of its file, put in the job's namespace):
        (conversion, job report, error, the peers as the converted file has them: its selecting objects,
        or with `same_names` its objects of the peers' kinds and names, e.g. ConfigMaps)."""
        from kf2jobset.pipeline import convert_text
        from kf2jobset.report.build import build_report

        ns = (job.get("metadata") or {}).get("namespace")
        peers = [copy.deepcopy(p) for p in peers]
        for p in peers:
            p.setdefault("metadata", {})["namespace"] = ns
        text = yaml.safe_dump_all([job, *peers], sort_keys=False)
        with _CONVERT_LOCK:  # kf2jobset is a CLI: one conversion at a time (its caches are not thread-safe)
            result = convert_text(text, "job.yaml", options)
            if result.errors:
                return None, None, "; ".join(str(e) for e in result.errors), []
            (conv,) = [c for r in result.results for c in r.conversions]
            report = build_report([result], options)
        (jr,) = report.files[0].jobs
        names = {(p.get("kind"), (p.get("metadata") or {}).get("name")) for p in peers}
        after = [d for d in yaml.safe_load_all(result.new_text or text) if isinstance(d, dict) and (
            (d.get("kind"), (d.get("metadata") or {}).get("name")) in names if same_names else d.get("kind") in SELECTING)]
        return conv, jr, "", after

    def run(self, case: Case, mutate=None) -> Outcome:
        t0 = time.monotonic()
        out = Outcome(case)
        try:
            other = self.others.get(flavour_of(case.job)) if flavour_of(case.job) != self.flavour else None
            if other is not None:
                other = other.result() if hasattr(other, "result") else other  # raises if it did not start
                return other.run(case, mutate)
            self._run(case, out, mutate)
        except Exception as e:  # noqa: BLE001 - reported per case
            import traceback

            out.status, out.detail = "failed", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2500:]}"
        out.seconds = time.monotonic() - t0
        return out

    def _run(self, case: Case, out: Outcome, mutate) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        job = copy.deepcopy(case.job)
        v2 = job.get("apiVersion") == V2BETA1
        if flavour_of(job) != self.flavour:
            out.status, out.detail = "skipped", (
                f"{job.get('apiVersion')} {job.get('kind')} runs on a {flavour_of(job)} stack; "
                f"this Runner has a {self.flavour} stack and none of that flavour")
            return
        kf_version = "v2beta1" if v2 else "v1"
        launcher_as_worker = v2 and bool((job.get("spec") or {}).get("runLauncherAsWorker"))
        meta = job.setdefault("metadata", {})
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = "trial-" + uuid.uuid4().hex[:6]  # a Katib trial: Katib names it
        with self.stack.api_client() as api:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            ns_a, ns_b = self.new_namespace(core, "a"), self.new_namespace(core, "b")
            job_a = copy.deepcopy(job)
            job_a["metadata"]["namespace"] = ns_a
            job_b = copy.deepcopy(job)
            job_b["metadata"]["namespace"] = ns_b
            conv, jr, err, peers_b = self.convert_with_peers(job_b, case.options, case.peers)  # the job as written
            if case.resize and conv is not None:
                self._resize_v1(case, conv, job_a)  # before the operator sees it
            out.conv_message, out.kf2jobset_refused = err, conv is None
            if conv is not None:
                out.conv_message = " ".join(f"{n.code}: {n.message}" for n in conv.notes if n.code in ("JS080", *V1_STUCK))
            plural = KF_PLURAL[job["kind"]]
            # v1 side first: the webhook decides whether it ever ran
            v1_refs = {}
            for t in _templates(job_a):
                v1_refs.update(_refs(t.get("spec") or {}))
            _create_refs(core, ns_a, v1_refs, set())
            _priority_classes(api, [job_a, conv.jobset] if conv is not None else [job_a])
            try:
                created = custom.create_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, job_a)
            except ApiException as e:
                if e.status in (400, 403, 422) and "denied the request" in (e.body or ""):
                    out.status, out.detail = "rejected", _rejection(e)
                    return
                if case.refused and conv is None and e.status in (400, 422):  # the CRD's schema refused it
                    out.status, out.detail = "refused", f"the API server refused it (HTTP {e.status}): {_rejection(e)}"
                    return
                raise
            name_a = created["metadata"]["name"]
            if conv is None:
                refusal = self._refused_by_controller(core, ns_a, name_a, job["kind"])
                if refusal:
                    out.status, out.detail = "refused", refusal
                    return
                raise AssertionError(f"the operator accepted the job and made pods but kf2jobset refused it: {err}")
            if case.refused:
                raise AssertionError(f"{case.id} has expected-error.txt but kf2jobset converted it")
            jobset = copy.deepcopy(conv.jobset)
            companions = copy.deepcopy(conv.companions)
            if mutate:
                mutate(jobset, companions)
            model_job = conv.job
            if case.resize:
                model_job = self._resize_jobset(case, conv, job_a, jobset)
            jobset["metadata"]["namespace"] = ns_b
            comp_names = set()
            for c in companions:
                c.setdefault("metadata", {})["namespace"] = ns_b
                comp_names.add((c["kind"], c["metadata"].get("name")))
            js_refs = {}
            for t in _templates(jobset):
                js_refs.update(_refs(t.get("spec") or {}))
            _create_refs(core, ns_b, v1_refs, comp_names)
            if v2:  # the SSH Secret MPI003 tells the user to create (mpi-operator generated <job>-ssh in A)
                for (kind, sname) in js_refs:
                    if kind == "Secret" and any(n.code == "MPI003" and repr(sname) in n.message for n in conv.notes):
                        _ssh_secret(core, ns_b, sname)
                        comp_names.add((kind, sname))
            _create_refs(core, ns_b, js_refs, comp_names | set(v1_refs))
            for c in companions:
                if c["kind"] == "ConfigMap":
                    core.create_namespaced_config_map(ns_b, c)
                else:
                    out.detail += f"companion {c['kind']} not applied (no such API in the stack); "
            created_js = custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", jobset)
            name_b = created_js["metadata"]["name"]

            expected = sum(s.replicas for s in model_job.replicas.values())
            out.jobs_pods = expected
            suspended = conv.job.run_policy.suspend
            if suspended:
                time.sleep(4)
                for ns in (ns_a, ns_b):
                    pods = core.list_namespaced_pod(ns).items
                    assert not pods, f"runPolicy.suspend: {ns} has pods {[p.metadata.name for p in pods]}"
                out.detail += "suspended: no pods in either world; resumed to compare; "
                custom.patch_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a,
                                                      {"spec": {"runPolicy": {"suspend": False}}})
                custom.patch_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b,
                                                      {"spec": {"suspend": False}})

            roles = conv.pods.pod_roles
            renamed = getattr(conv.pods, "container_names", None)

            def key_a(labels):
                if v2:  # mpi-operator: job-role, and no replica-type label
                    t, i = labels.get(KF + "job-role"), int(labels.get(KF + "replica-index", "0"))  # launcher: none
                    if t == "worker" and launcher_as_worker:
                        i -= 1  # the launcher holds replica-index 0, worker i has i+1
                    return (t, i) if t in ("launcher", "worker") else None
                return operator_pod_key(labels)

            key_b = jobset_pod_key(roles)

            ctr_count = {(s.lower()): len((spec.template.get("spec") or {}).get("containers") or [])
                         for s, spec in conv.job.replicas.items()}

            def started(ns, key_of):
                per = {}
                for x in self.agent.launches(ns):
                    k = key_of(x.labels)
                    if k is not None and not x.init:
                        per.setdefault((x.pod, k), set()).add(x.container)
                full = [p for (p, k), cs in per.items() if len(cs) >= ctr_count.get(k[0], 1)]
                return len(full) >= expected

            deadline = time.monotonic() + POD_TIMEOUT
            while not (started(ns_a, key_a) and started(ns_b, key_b)):
                failed = _failed_services(core, ns_a)
                if failed and started(ns_b, key_b):
                    # the operator could not create a pod's Service: under v1 the others never reach it
                    out.status, out.detail = "stuck", "; ".join(failed)
                    for call in (lambda: custom.delete_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a),
                                 lambda: custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b)):
                        try:
                            call()
                        except ApiException:
                            pass
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"pods did not all start within {POD_TIMEOUT:.0f} s: v1 {len({x.pod for x in self.agent.launches(ns_a)})}, "
                        f"JobSet {len({x.pod for x in self.agent.launches(ns_b)})} of {expected}; "
                        f"v1 pods {[(p.metadata.name, p.status.phase) for p in core.list_namespaced_pod(ns_a).items]}; "
                        f"JobSet pods {[(p.metadata.name, p.status.phase) for p in core.list_namespaced_pod(ns_b).items]}; "
                        f"agent: {self.agent.events[-5:]}")
                time.sleep(0.5)
            # let Ready reach the API and the agent's DNS table
            domain = case.options.cluster_domain or "cluster.local"
            worlds = {}
            # v1 MPIJob: the launcher reached pods by name (kubectl exec). mpi-operator: pods are
            # <hostname>.<job> under the Service <job> (2 labels), and the bare hostname resolves
            # through the search path mpi-operator adds (and on the pod itself).
            for ns, name, key_of, by_name, min_labels in ((ns_a, name_a, key_a, "hostname" if v2 else job["kind"] == "MPIJob",
                                                           2 if v2 else 1),
                                                          (ns_b, name_b, key_b, False, 2)):
                pods = observe(self.agent, ns, key_of, renamed if ns == ns_b else None)
                ips = {p.ip for p in pods.values()}
                stable_until = time.monotonic() + 30  # under load the agent's DNS table can lag
                while time.monotonic() < stable_until:
                    table = dict(self.agent._dns_table)
                    covered = {ip for k, v in table.items() if k.endswith(f".{ns}.svc.{domain}") for ip in v}
                    if ips <= covered or by_name is True:
                        break
                    time.sleep(0.3)
                table = {k: v for k, v in self.agent._dns_table.items() if f".{ns}." in k}
                pods = observe(self.agent, ns, key_of, renamed if ns == ns_b else None)  # files read while the pods run
                by_key = {p.key: p for p in pods.values()}
                worlds[ns] = World(ns, name, by_key, world_resolver(table, ns, list(by_key.values()), domain, by_name, min_labels), table)
            op, js = worlds[ns_a], worlds[ns_b]
            rename = {}
            if meta.get("generateName"):
                rename = {ns_a: {name_a: "<generated>"}, ns_b: {name_b: "<generated>"}}
            real = compare_worlds(op, js, rename)

            def pods_selected(ns, selector):
                return {p.metadata.name for p in core.list_namespaced_pod(ns, label_selector=selector).items}

            sel_diffs, out.selectors = compare_selectors(op, js, conv, case.peers, peers_b, pods_selected)
            real += sel_diffs
            for d in real:
                why = explain_real(d, conv.notes, jr.findings)
                out.diffs.append((d, why))
                out.aspects.add(d.aspect)
                if why is None:
                    out.unexplained.append(d)
            # the report's per-pod evidence is about the job as converted; a resized job has other pods
            out.unconfirmed = [] if case.resize else unconfirmed_claims(jr.findings, real)
            from kf2jobset.runtime.jobset_view import jobset_world
            from kf2jobset.runtime.operator_view import operator_world

            opm = operator_world(model_job, name=name_a, namespace=ns_a, cluster_domain=case.options.cluster_domain)
            jsm = jobset_world(jobset, name=name_b, namespace=ns_b, cluster_domain=case.options.cluster_domain, roles=roles,
                               containers=renamed)
            out.gaps = {"operator": model_gaps(model_world(opm, op), op), "jobset": model_gaps(model_world(jsm, js), js)}
            # clean up: the pods stop, their sandboxes go
            for call in (lambda: custom.delete_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a,
                                                                        propagation_policy="Background"),
                         lambda: custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b,
                                                                        propagation_policy="Background")):
                try:
                    call()
                except ApiException:
                    pass


    @staticmethod
    def _resize_v1(case: Case, conv, job_a: dict) -> None:
        """The v1 job edited: the replica type's count (before the operator sees it)."""
        rtype, new = case.resize
        specs = next(k for k in job_a["spec"] if k.endswith("ReplicaSpecs"))
        job_a["spec"][specs][conv.job.replicas[rtype].source_key]["replicas"] = new

    @staticmethod
    def _resize_jobset(case: Case, conv, job_a: dict, jobset: dict):
        """The JobSet kf2jobset wrote for the ORIGINAL job edited the same way as the v1 job: the
        replicatedJob holding the type's last pods. Returns the edited v1 job as kf2jobset reads it (for
        the runtime model)."""
        from kf2jobset.convert import convert_job

        rtype, new = case.resize
        name, first, _ = conv.plan.segments[rtype][-1]
        (rjob,) = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name]
        rjob["replicas"] = new - first
        return convert_job(copy.deepcopy(job_a), case.options).job

    def _refused_by_controller(self, core, namespace: str, name: str, kind: str, timeout: float = 30.0) -> str:
        """How the operator refused a stored job (a Warning event whose reason ends in FailedValidation,
        and no pod), or "" when it made pods or said nothing within ``timeout``. The v1.8.1 MXJob
        controller validates in Reconcile (ValidateV1MXJob) and names the event with MPIJob's kind."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pods = core.list_namespaced_pod(namespace).items
            if pods:
                return ""
            events = [e for e in core.list_namespaced_event(namespace).items
                      if e.involved_object and e.involved_object.name == name and e.involved_object.kind == kind
                      and e.type == "Warning" and (e.reason or "").endswith("FailedValidation")]
            if events:
                time.sleep(2)  # a controller that refuses does not make pods a moment later
                if core.list_namespaced_pod(namespace).items:
                    return ""
                return f"the {kind} controller refused it (event {events[0].reason}: {events[0].message})"
            time.sleep(0.5)
        return ""


# ---------------------------------------------------------------------------------------------
# fixtures



class LazyStackRunner:
    """Another stack (tests/e2e/stack.py: flavour "mpi-operator" for MPIJob v2beta1,
    "training-operator-v1.8.1" for MXJob) and its node agent, started by the first :meth:`result` call
    (the first case of that flavour) and shared by the later ones; a stack that did not start raises
    the same error for every case. :meth:`close` stops them.

    They live in a thread of their own until :meth:`close`: the components are started with
    PR_SET_PDEATHSIG, which kills a child when the *thread* that forked it ends, so they must not be
    started from a pool worker that goes away with its pool."""

    def __init__(self, flavour: str = "mpi-operator", subnet: str = "10.247", listen_on_probes: bool = True) -> None:
        self.flavour, self.subnet, self.listen_on_probes = flavour, subnet, listen_on_probes
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._runner: Runner | None = None
        self._error: BaseException | None = None
        self.workdir: Path | None = None

    def result(self) -> Runner:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._live, name=f"{self.flavour}-stack", daemon=True)
                self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"the {self.flavour} stack did not start: {self._error}") from self._error
        return self._runner

    def _live(self) -> None:
        from .stack import start_stack

        stack = agent = None
        try:
            t0 = time.monotonic()
            for attempt in (1, 2):  # on a loaded machine the API server can miss its start-up deadline once
                if self.workdir is not None:
                    shutil.rmtree(self.workdir, ignore_errors=True)
                self.workdir = Path(tempfile.mkdtemp(prefix=f"kf2jobset-e2e-{self.flavour}-"))
                try:
                    stack = start_stack(self.workdir, flavour=self.flavour)  # stops what it started on failure
                    break
                except Exception as e:  # noqa: BLE001
                    if attempt == 2:
                        raise
                    print(f"\n[differential] {self.flavour} stack start failed, retrying once: {str(e)[:300]}")
            agent = NodeAgent(stack.kubeconfig, _programs(listen_on_probes=self.listen_on_probes), namespaces=set(),
                              scheduler_names=("default-scheduler", "volcano", "yunikorn"), backoff=(0.5, 5.0),
                              subnet=self.subnet)  # volcano: the JobSet side of scheduling/volcano-mpijob
            agent.start()
            print(f"\n[differential] {self.flavour} stack up in {stack.startup_seconds:.1f} s, with its node agent "
                  f"{time.monotonic() - t0:.1f} s: {stack.timings}")
            self._runner = Runner(stack, agent)
        except BaseException as e:  # noqa: BLE001 - every v2beta1 case fails with it
            self._error = e
        finally:
            self._ready.set()
        try:
            self._stop.wait()
        finally:
            if agent is not None:
                agent.stop()
                shutil.rmtree(agent.workdir, ignore_errors=True)
            if stack is not None:
                stack.stop()
            if self.workdir is not None:
                if os.environ.get("KF2JOBSET_KEEP_E2E_DIR"):
                    print(f"\nkept {self.flavour} e2e directory: {self.workdir}")
                else:
                    shutil.rmtree(self.workdir, ignore_errors=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=120)


@pytest.fixture(scope="module")
def runner(stack, netns_ok):
    # the other stacks, started by the first case of their flavour
    others = {"mpi-operator": LazyStackRunner("mpi-operator", subnet="10.247"),
              MXJOB_FLAVOUR: LazyStackRunner(MXJOB_FLAVOUR, subnet="10.248", listen_on_probes=False)}
    agent = NodeAgent(stack.kubeconfig, _programs(), namespaces=set(), scheduler_names=("default-scheduler", "volcano", "yunikorn"),
                      backoff=(0.5, 5.0))
    agent.start()
    try:
        yield Runner(stack, agent, others=others)
    finally:
        agent.stop()
        shutil.rmtree(agent.workdir, ignore_errors=True)
        for other in others.values():
            other.close()


@pytest.fixture(scope="module")
def outcomes(runner) -> dict:
    t0 = time.monotonic()
    lock = threading.Lock()
    results: dict = {}

    def one(case):
        o = runner.run(case)
        with lock:
            results[case.id] = o
        return o

    # cases of the other stacks (MPIJob v2beta1: mpi-operator; MXJob: v1.8.1) run in their own pool, so
    # they neither wait for the main cases nor hold main workers while their stack starts
    v2 = [c for c in ALL_CASES if flavour_of(c.job) != runner.flavour]
    for flavour in sorted({flavour_of(c.job) for c in v2}):
        other = runner.others.get(flavour)
        if hasattr(other, "result"):
            # start that stack before the main cases load the machine (its API server has a start-up
            # deadline); if it does not start, every case of it fails with the reason
            try:
                other.result()
            except Exception:  # noqa: BLE001
                pass
    with ThreadPoolExecutor(PARALLEL) as pool, ThreadPoolExecutor(max(1, min(PARALLEL, len(v2)))) as pool2:
        futures = [pool2.submit(one, c) for c in v2] + [pool.submit(one, c) for c in ALL_CASES if c not in v2]
        for f in futures:
            f.result()
    wall = time.monotonic() - t0
    print(f"\n[differential] {len(ALL_CASES)} cases in {wall:.1f} s (parallel {PARALLEL})")
    print(summary_table(results.values()))
    path = os.environ.get("KF2JOBSET_DIFF_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({
            "seconds": wall,
            "cases": {k: {"status": o.status, "detail": o.detail[:400], "pods": o.jobs_pods,
                          "diffs": [[d.aspect, d.subject, d.change, d.where, why] for d, why in o.diffs],
                          "unexplained": [[d.aspect, d.subject, d.change, d.where, d.operator, d.jobset] for d in o.unexplained],
                          "unconfirmed": o.unconfirmed, "gaps": o.gaps, "seconds": round(o.seconds, 1), "conv": o.conv_message,
                          "selectors": o.selectors}
                      for k, o in sorted(results.items())}}, indent=1))
    return results


def summary_table(outs) -> str:
    rows: dict = {}
    for o in outs:
        kind = o.case.job.get("kind", "?") + ("" if o.case.job.get("apiVersion") == "kubeflow.org/v1" else " v2beta1")
        r = rows.setdefault(kind, {"compared": 0, "rejected": 0, "stuck": 0, "refused": 0, "skipped": 0, "failed": 0,
                                   "unexplained": 0, "aspects": set(), "pods": 0, "gaps": 0})
        r[o.status] += 1
        r["unexplained"] += len(o.unexplained)
        r["aspects"] |= o.aspects
        r["gaps"] += sum(len(v) for v in o.gaps.values())
        if o.status == "compared":
            r["pods"] += o.jobs_pods
    lines = ["| kind | jobs compared (pod pairs) | v1 webhook rejected | v1 stuck (a Service failed) | refused by both "
             "| not run | failed | unexplained | model gaps | differences seen (all explained) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for kind, r in sorted(rows.items()):
        lines.append(f"| {kind} | {r['compared']} ({r['pods']}) | {r['rejected']} | {r['stuck']} | {r['refused']} | {r['skipped']} "
                     f"| {r['failed']} | "
                     f"{r['unexplained']} | {r['gaps']} | {', '.join(sorted(r['aspects']))} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if not c.refused])
def test_every_real_difference_is_named_by_the_report(outcomes, case_id):
    o = outcomes[case_id]
    if o.status == "skipped":
        pytest.skip(o.detail)
    assert o.status != "failed", o.detail
    if o.status == "stuck":
        # the operator could not create a pod's Service, so the job never ran as a whole: kf2jobset must say so
        assert any(code in o.conv_message for code in V1_STUCK), (
            f"the v1 operator could not create a Service ({o.detail}) but kf2jobset does not say so")
        return
    if o.status == "rejected":
        # such a job never ran: kf2jobset must say so, by refusing it as inherited or converting it with JS080
        if o.kf2jobset_refused:
            assert "inherited" in o.conv_message, (
                f"the v1 webhook rejects this job ({o.detail}); kf2jobset refuses it without saying v1 did: {o.conv_message}")
            return
        assert "JS080" in o.conv_message, (
            f"the v1 webhook rejects this job ({o.detail}) but kf2jobset converts it without saying so")
        return
    assert o.status != "refused", f"kf2jobset refused it ({o.conv_message}); so did v1: {o.detail}"
    lines = [f"{d.aspect} {d.subject} {d.change} at {d.where}: {d.operator!r} -> {d.jobset!r}" for d in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)
    assert not o.unconfirmed, "report claims reality does not show:\n" + "\n".join(o.unconfirmed)


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if not c.refused])
def test_runtime_models_match_the_real_pods(outcomes, case_id):
    """runtime/operator_view.py against the real operator's pods, runtime/jobset_view.py against the
    real JobSet + Job controllers' pods: the same comparison, the model playing one side."""
    o = outcomes[case_id]
    if o.status != "compared":
        pytest.skip(f"not compared: {o.status}")
    for side in ("operator", "jobset"):
        assert not o.gaps.get(side), f"the {side} model differs from the real pods:\n" + "\n".join(o.gaps[side])


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if c.refused])
def test_refused_mxjobs_were_refused_by_v1(outcomes, case_id):
    """kf2jobset refuses only where the real v1 world refused: the v1.8.1 API server, webhook or
    controller refused each MXJob refusal fixture (no pod), and kf2jobset converted none of them."""
    o = outcomes[case_id]
    assert o.status != "failed", o.detail
    assert o.status in ("refused", "rejected"), f"{case_id}: {o.status}: {o.detail}"


def test_mxjob_cases_present():
    """Every fixtures/mxjob case is collected (and so run on the v1.8.1 stack)."""
    if os.environ.get("KF2JOBSET_DIFF_ONLY"):
        pytest.skip("KF2JOBSET_DIFF_ONLY narrows the cases")
    dirs = sorted(p.parent.name for p in FIXTURES.glob("mxjob/*/input.yaml"))
    assert dirs, f"no fixtures under {FIXTURES / 'mxjob'}: MXJob would go untested against v1.8.1"
    ids = {c.id.split("#")[0] for c in ALL_CASES}
    assert {f"mxjob/{d}" for d in dirs} <= ids, sorted({f"mxjob/{d}" for d in dirs} - ids)
    assert all(flavour_of(c.job) == MXJOB_FLAVOUR for c in ALL_CASES if c.job.get("kind") == "MXJob")


def test_corpus_present():
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: the corpus cases were not collected")
    assert len(corpus_cases()) >= 45


# ---- mutations: a wrong conversion must be caught


def _master_addr_to_worker(jobset, companions):
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                if e["name"] == "MASTER_ADDR":
                    e["value"] = e["value"].replace("-master-0-0", "-worker-0-0")


def _swap_tf_hosts(jobset, companions):
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                if e["name"] == "TF_CONFIG":
                    v = e["value"]
                    a, b = "-worker-0-0.", "-worker-1-0."
                    e["value"] = v.replace(a, "\0").replace(b, a).replace("\0", b)


def _drop_read_label(jobset, companions):
    """The rank comes from the job-global-index label through the downward API; read a label that is not there."""
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                ref = ((e.get("valueFrom") or {}).get("fieldRef") or {})
                if "job-global-index" in ref.get("fieldPath", ""):
                    ref["fieldPath"] = "metadata.labels['kf2jobset.test/removed']"


def _hostfile_worker_twice(jobset, companions):
    """MPIJob v2beta1 (mpi-operator stack): the hostfile names worker 0 where worker 1 belongs."""
    for c in companions:
        if c["kind"] == "ConfigMap" and "hostfile" in (c.get("data") or {}):
            c["data"]["hostfile"] = c["data"]["hostfile"].replace("-worker-1-0.", "-worker-0-0.")


def _drop_kept_labels(jobset, companions):
    """The operator's labels kf2jobset keeps for a selector (JS052) left off: the workers' anti-affinity picks nothing."""
    for rj in jobset["spec"]["replicatedJobs"]:
        labels = (rj["template"]["spec"]["template"].get("metadata") or {}).get("labels") or {}
        for k in [k for k in labels if k.startswith(KF)]:
            del labels[k]


MUTATIONS = [
    ("pytorchjob/master-workers", _master_addr_to_worker, ("env", "MASTER_ADDR")),
    ("tfjob/chief-ps-workers", _swap_tf_hosts, ("env", "TF_CONFIG")),
    ("pytorchjob/master-workers", _drop_read_label, ("env", "RANK")),
    ("mpijob-v2beta1/openmpi", _hostfile_worker_twice, ("hostfile", "names")),
    ("mpijob-v2beta1/anti-affinity", _drop_kept_labels,
     ("selector", "mpiReplicaSpecs.Worker.template.spec.affinity.podAntiAffinity"
                  ".requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector")),
]

# fixtures whose pods or file select the job's pods by label: every one of them has its selectors compared
SELECTOR_FIXTURES = ("mpijob-v2beta1/anti-affinity", "mpijob-v1/anti-affinity", "pytorchjob/topology-spread",
                     "tfjob/selecting-objects")


@pytest.mark.parametrize("case_id", [c for c in SELECTOR_FIXTURES if c in {x.id for x in ALL_CASES}])
def test_selectors_were_compared(outcomes, case_id):
    """Each label selector of the v1 pods and of the file's selecting objects was evaluated in both worlds
    (the differences, if any, are held to the report by test_every_real_difference_is_named_by_the_report)."""
    o = outcomes[case_id]
    assert o.status == "compared", (o.status, o.detail)
    assert o.selectors > 0, f"{case_id}: no selector compared"



def test_mutations_are_caught(runner):
    by_id = {c.id: c for c in fixture_cases()}  # not narrowed by KF2JOBSET_DIFF_ONLY
    cases = [(by_id[cid], fn, want) for cid, fn, want in MUTATIONS]
    with ThreadPoolExecutor(len(cases)) as pool:
        outs = list(pool.map(lambda c: runner.run(c[0], mutate=c[1]), cases))
    for (case, fn, want), o in zip(cases, outs):
        assert o.status == "compared", (fn.__name__, o.detail)
        caught = [(d.aspect, d.subject) for d in o.unexplained]
        assert want in caught, f"{fn.__name__} on {case.id} was not caught: unexplained {caught}"
