"""Label selectors in both worlds: which of a job's pods a selector picks under v1 and as a JobSet.

A selector is read into requirements (key, operator, values) as Kubernetes evaluates them
(apimachinery labels.Selector: matchLabels are `In` with one value, requirements are ANDed, `NotIn`
and `DoesNotExist` hold for a pod without the key). Where selectors live: a pod's affinity and
anti-affinity terms (required and preferred) and its topologySpreadConstraints; the selecting objects
a manifest keeps beside a job (Service, PodDisruptionBudget, NetworkPolicy, PodMonitor).

Nothing here decides what to do about a selector; kf2jobset/core/selectorfix.py does, from what
:func:`selected` says about the pods of runtime/operator_view.py and runtime/jobset_view.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

KF = "training.kubeflow.org/"
JS = "jobset.sigs.k8s.io/"

# Pod labels older operators set and the v1 world (training-operator v1.6 and later, mpi-operator
# v0.5 and later) no longer does, read from each operator's Go source at its tags (see
# docs/conversion.md, "Selectors"): a selector on one of them selected none of the v1 world's pods.
RETIRED_KEYS = {
    "group-name": "training-operator up to v1.5 (kubeflow/common up to v0.4.3), tf-operator, pytorch-operator, "
                  "mpi-operator v0.2.3-v0.4 (value kubeflow.org)",
    "job-name": "training-operator up to v1.5 (kubeflow/common up to v0.4.3), pytorch-operator v0.7; a batch Job's pods "
                "carry it too (the Job's name)",
    "replica-type": "training-operator up to v1.5 (kubeflow/common up to v0.4.3)",
    "replica-index": "training-operator up to v1.5 (kubeflow/common up to v0.4.3)",
    "job-role": "training-operator up to v1.5 (kubeflow/common up to v0.4.3)",
    "controller-name": "pytorch-operator v0.7",
    "tf-job-name": "tf-operator v0.x-v1.1",
    "tf-replica-type": "tf-operator v0.x-v1.1",
    "tf-replica-index": "tf-operator v0.x-v1.1",
    "tf-job-role": "tf-operator v0.x-v1.1",
    "pytorch-job-name": "pytorch-operator v0.x",
    "pytorch-replica-type": "pytorch-operator v0.x",
    "pytorch-replica-index": "pytorch-operator v0.x",
    "pytorch-job-role": "pytorch-operator v0.5-v0.6",
    "mpi-job-name": "mpi-operator v0.2.3-v0.4 (kubeflow.org/v1 and v2beta1), training-operator v1.4-v1.5 (MPIJob)",
    "mpi-job-role": "mpi-operator v0.2.3-v0.4",
    "mpi_job_name": "mpi-operator v0.2-v0.3 (kubeflow.org/v1alpha1, v1alpha2)",
    "mpi_role_type": "mpi-operator v0.2-v0.3 (kubeflow.org/v1alpha1, v1alpha2)",
    "group_name": "mpi-operator v0.2-v0.3 (kubeflow.org/v1alpha1, v1alpha2)",
}

# Labels the JobSet and Job controllers set on every pod they create: a template cannot hold them.
CONTROLLER_KEYS = ("job-name", "controller-uid")
CONTROLLER_PREFIXES = (JS, "batch.kubernetes.io/")

# JobSet labels a requirement on an operator label may become, tried in this order.
JOBSET_KEYS = (JS + "job-index", JS + "replicatedjob-name", JS + "job-global-index", JS + "jobset-name", "job-name")

# JobSet labels whose values hold the JobSet's name
NAME_KEYS = (JS + "jobset-name", "job-name", "batch.kubernetes.io/job-name")

# Objects that select pods by label, and where their selectors are: (path, form). `map` is a Service's
# plain map (equality only), `label` a LabelSelector (matchLabels, matchExpressions). `*` is every item.
SELECTING = {
    "Service": ((("spec", "selector"), "map"),),
    "PodDisruptionBudget": ((("spec", "selector"), "label"),),
    "NetworkPolicy": ((("spec", "podSelector"), "label"),
                      (("spec", "ingress", "*", "from", "*", "podSelector"), "label"),
                      (("spec", "egress", "*", "to", "*", "podSelector"), "label")),
    "PodMonitor": ((("spec", "selector"), "label"),),
}
# Objects that select the operator's per-replica Services (not pods): the JobSet has one headless Service.
SERVICE_SELECTING = {"ServiceMonitor": (("spec", "selector"), "label")}
# Workloads whose pod templates may hold affinity terms and topologySpreadConstraints on a job's pods.
POD_TEMPLATES = {
    **{k: ("spec", "template", "spec") for k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")},
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}
PEER_KINDS = (*SELECTING, *SERVICE_SELECTING, *POD_TEMPLATES)
# a file that may hold one of them (a quick test on the text, before anything is parsed)
SELECTING_TEXT = re.compile(r"kind\"?\s*:\s*[\"']?(" + "|".join(PEER_KINDS) + r")\b")


def service_selector(obj: dict) -> Found | None:
    """The Service selector of a ServiceMonitor (SERVICE_SELECTING)."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind not in SERVICE_SELECTING:
        return None
    path, form = SERVICE_SELECTING[kind]
    reqs = requirements(get(obj, path), form)
    name = (obj.get("metadata") or {}).get("name")
    return Found(path, form, reqs, f"{kind} {name} {dotted(path)}") if reqs is not None else None

_POD_TERMS = (("affinity", "podAffinity"), ("affinity", "podAntiAffinity"))


@dataclass(frozen=True)
class Req:
    key: str
    op: str  # In | NotIn | Exists | DoesNotExist
    values: tuple = ()
    origin: tuple = ()  # ("matchLabels", key) | ("matchExpressions", i) | ("map", key)

    def holds(self, labels: dict) -> bool:
        has = self.key in labels
        if self.op == "In":
            return has and str(labels[self.key]) in self.values
        if self.op == "NotIn":
            return not has or str(labels[self.key]) not in self.values
        if self.op == "Exists":
            return has
        if self.op == "DoesNotExist":
            return not has
        return False

    def text(self) -> str:
        if self.op == "In" and len(self.values) == 1:
            return f"{self.key}={self.values[0]}"
        if self.op in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.op}"
        return f"{self.key} {self.op} ({','.join(self.values)})"


@dataclass
class Found:
    """A selector at `path` (keys and list indexes) inside `owner` (a pod spec or an object)."""

    path: tuple
    form: str  # map | label
    reqs: list  # [Req]
    what: str  # how the report names the place

    @property
    def keys(self) -> set:
        return {r.key for r in self.reqs}


def requirements(sel, form: str) -> list[Req] | None:
    """The selector's requirements; None when it selects nothing by construction (no Service selector)."""
    if not isinstance(sel, dict):
        return None
    if form == "map":
        return [Req(str(k), "In", (_s(v),), ("map", k)) for k, v in sel.items()] or None
    labels, exprs = sel.get("matchLabels") or {}, sel.get("matchExpressions") or []
    if not isinstance(labels, dict) or not isinstance(exprs, list):
        return None  # not a selector the API server takes (its schema refuses the object): nothing read from it
    out = [Req(str(k), "In", (_s(v),), ("matchLabels", k)) for k, v in labels.items()]
    for i, e in enumerate(exprs):
        if isinstance(e, dict) and e.get("key") is not None:
            out.append(Req(str(e["key"]), str(e.get("operator", "In")), tuple(_s(v) for v in e.get("values") or ()),
                           ("matchExpressions", i)))
    return out


def _s(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def matches(reqs: list[Req], labels: dict) -> bool:
    return all(r.holds(labels) for r in reqs)


def selected(reqs: list[Req], pods) -> frozenset:
    """Keys (role, index) of the pods the requirements select."""
    return frozenset(p.key for p in pods if matches(reqs, p.labels))


def pod_selectors(pod_spec: dict, what: str) -> list[Found]:
    """The label selectors of a pod spec: affinity terms and topologySpreadConstraints."""
    out = []
    if not isinstance(pod_spec, dict):
        return out
    for a, b in _POD_TERMS:
        terms = ((pod_spec.get(a) or {}).get(b) or {})
        for i, t in enumerate(terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            _add(out, t, (a, b, "requiredDuringSchedulingIgnoredDuringExecution", i, "labelSelector"), what)
        for i, t in enumerate(terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            _add(out, (t or {}).get("podAffinityTerm"),
                 (a, b, "preferredDuringSchedulingIgnoredDuringExecution", i, "podAffinityTerm", "labelSelector"), what)
    for i, t in enumerate(pod_spec.get("topologySpreadConstraints") or []):
        _add(out, t, ("topologySpreadConstraints", i, "labelSelector"), what)
    return out


def _add(out: list, holder, path: tuple, what: str) -> None:
    if isinstance(holder, dict):
        reqs = requirements(holder.get("labelSelector"), "label")
        if reqs is not None:
            out.append(Found(path, "label", reqs, f"{what}.{dotted(path)}"))


def object_selectors(obj: dict) -> list[Found]:
    """The pod selectors of a selecting object (SELECTING)."""
    out = []
    kind = obj.get("kind") if isinstance(obj, dict) else None
    name = ((obj or {}).get("metadata") or {}).get("name") if kind else None
    for path, form in SELECTING.get(kind, ()):
        for concrete, sel in walk(obj, path):
            reqs = requirements(sel, form)
            if reqs is not None:
                out.append(Found(concrete, form, reqs, f"{kind} {name} {dotted(concrete)}"))
    paths = [POD_TEMPLATES[kind]] if kind in POD_TEMPLATES else []
    if kind and not paths:  # a Kubeflow job (another one of the file): its replicas' pod templates
        paths = [("spec", k, "*", "template", "spec") for k in ((obj.get("spec") or {}) if isinstance(obj.get("spec"), dict) else {})
                 if str(k).endswith("ReplicaSpecs")]
    for path in paths:
        for concrete, pod_spec in walk(obj, path):
            for f in pod_selectors(pod_spec, ""):
                full = concrete + f.path
                out.append(Found(full, f.form, f.reqs, f"{kind} {name} {dotted(full)}"))
    return out


def walk(obj, path: tuple, done: tuple = ()):
    if not path:
        yield done, obj
        return
    head, rest = path[0], path[1:]
    if head == "*":
        pairs = enumerate(obj) if isinstance(obj, list) else obj.items() if isinstance(obj, dict) else ()
        for i, item in pairs:
            yield from walk(item, rest, done + (i,))
    elif isinstance(obj, dict) and head in obj:
        yield from walk(obj[head], rest, done + (head,))


def get(obj, path: tuple):
    for p in path:
        if isinstance(p, int):
            obj = obj[p] if isinstance(obj, list) and p < len(obj) else None
        else:
            obj = obj.get(p) if isinstance(obj, dict) else None
    return obj


def dotted(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p))
    return out


def operator_keys(key: str) -> bool:
    """A label only an operator or a controller sets: what a selector loses in the move."""
    return key.startswith(KF) or key in RETIRED_KEYS or key in CONTROLLER_KEYS or key.startswith(CONTROLLER_PREFIXES)


def templatable(key: str) -> bool:
    return not (key in CONTROLLER_KEYS or key.startswith(CONTROLLER_PREFIXES))


def candidates(req: Req, op_pods, js_pods, form_origin: str) -> list[Req]:
    """Requirements on JobSet labels that pick, among the job's pods, the JobSet twins of the v1 pods
    `req` picks (a NotIn/DoesNotExist: that leave out the twins of those it leaves out)."""
    chosen = {p.key for p in op_pods if req.holds(p.labels)}
    out = []
    if req.op == "Exists" and chosen == {p.key for p in op_pods}:
        out.append(Req(JS + "jobset-name", "Exists", (), req.origin))  # every pod of the job, as every pod of v1's
    keys = ((req.key,) if req.key in CONTROLLER_KEYS else ()) + JOBSET_KEYS
    for key in keys:
        if req.op in ("In", "Exists"):
            vals = sorted({str(p.labels[key]) for p in js_pods if p.key in chosen and key in p.labels})
            if not vals or any(key not in p.labels for p in js_pods if p.key in chosen):
                continue
            if form_origin in ("map", "matchLabels") and len(vals) != 1:
                continue
            out.append(Req(key, "In", tuple(vals), req.origin))
        elif form_origin == "matchExpressions":
            left = sorted({str(p.labels[key]) for p in js_pods if p.key not in chosen and key in p.labels})
            if left:
                out.append(Req(key, "NotIn", tuple(left), req.origin))
    return out
