"""The JobSet Kubeflow Trainer v2.3.0 builds from a runtime and a TrainJob, for runtimes without an ML
source (PlainML): what the shared runtimes of kf2jobset's bundle are. Pure; held against the real
controller in tests/e2e/test_trainjob_target.py.

Read at tag v2.3.0 (docs/trainjob.md, "What a shared runtime can and cannot do"):
- runtimePatches merge into the runtime's template, in order, as a strategic merge patch
  (core/trainingruntime.go mergeRuntimePatches); their metadata labels and annotations go on the JobSet;
- each replicatedJob's pod count is its Job's parallelism (default 1), or mlPolicy.numNodes for one
  labelled trainer when the runtime has an mlPolicy; the TrainJob's numNodes replaces the count of the
  first trainer replicatedJob (plugins/plainml); parallelism = completions = count (plugins/jobset);
- resourcesPerNode merges into the `node` container of every trainer replicatedJob (only with an mlPolicy);
- every trainer replicatedJob gets replicas 1, and on its `node` container the trainer image, command,
  args, and the trainer env upserted after the runtime's (builder.go Trainer).
"""
from __future__ import annotations

import copy

from ..k8s.jobset_api import API_VERSION as JOBSET_API
from .builtin import ANCESTOR_LABEL, NODE  # noqa: F401  (bundle.py takes them from here too)
from .builtin import upsert_env as builtin_upsert_env

TRAINER = "trainer"
# strategic-merge keys of the lists a runtime patch reaches (k8s.io/api core/v1, jobset v1alpha2)
MERGE_KEYS = {"replicatedJobs": "name", "containers": "name", "initContainers": "name", "volumes": "name",
              "env": "name", "volumeMounts": "mountPath", "imagePullSecrets": "name", "schedulingGates": "name",
              "ports": "containerPort"}


class UnsupportedRuntime(ValueError):
    """A runtime with an ML source: its plugin writes more than this model knows."""


def merge(base, patch, key: str | None = None):
    """Strategic merge of `patch` into `base` (maps merge; lists with a merge key merge by it, others are replaced)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v, k) if k in base else copy.deepcopy(v)
        return out
    if isinstance(base, list) and isinstance(patch, list) and key in MERGE_KEYS:
        mk = MERGE_KEYS[key]
        out = [copy.deepcopy(x) for x in base]
        for item in patch:
            at = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(mk) == item.get(mk)), None)
            if at is None:
                out.append(copy.deepcopy(item))
            else:
                out[at] = merge(out[at], item, None)
        return out
    return copy.deepcopy(patch)


def upsert_env(env: list, extra: list) -> list:
    """pkg/apply UpsertEnvVars: a variable of the same name is replaced where it stands, a new one appended.
    A fieldRef keeps only its fieldPath (apply.EnvVar)."""
    copied = []
    for e in extra:
        e = copy.deepcopy(e)
        ref = (e.get("valueFrom") or {}).get("fieldRef")
        if ref is not None:
            e["valueFrom"]["fieldRef"] = {"fieldPath": ref["fieldPath"]}
        copied.append(e)
    return builtin_upsert_env(env, copied)


def _ancestor(rjob: dict) -> str | None:
    return (((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)


def build(runtime: dict, trainjob: dict) -> dict:
    """The JobSet Trainer builds for `trainjob` on `runtime` (a TrainingRuntime or ClusterTrainingRuntime
    object), before the API server's defaulting; named as the TrainJob is (name or generateName)."""
    rspec = runtime.get("spec") or {}
    ml = rspec.get("mlPolicy")
    if ml and any(k in ml for k in ("torch", "mpi", "jax", "xgboost", "flux")):
        raise UnsupportedRuntime(f"runtime {runtime['metadata']['name']!r} has an ML source: not modelled here")
    tspec = trainjob.get("spec") or {}
    spec, labels, annotations = _patched_template(rspec, tspec)
    _set_counts_and_trainer(spec, ml, tspec.get("trainer") or {})
    _pod_group_policy(rspec.get("podGroupPolicy") or {}, spec, trainjob)
    if "suspend" in tspec:
        spec["suspend"] = tspec["suspend"]
    tmeta = trainjob.get("metadata") or {}
    meta = {k: tmeta[k] for k in ("name", "generateName", "namespace") if tmeta.get(k)}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": meta, "spec": spec}


def _patched_template(rspec: dict, tspec: dict) -> tuple[dict, dict, dict]:
    """The runtime's JobSet spec with the TrainJob's runtimePatches merged in, its replicatedJobs in the
    runtime's order (new ones last); and the labels and annotations for the JobSet."""
    template = copy.deepcopy(rspec.get("template") or {})
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    annotations = dict((template.get("metadata") or {}).get("annotations") or {})
    spec = template.get("spec") or {}
    order = [r["name"] for r in spec.get("replicatedJobs") or []]
    for patch in tspec.get("runtimePatches") or []:
        tpl = ((patch.get("trainingRuntimeSpec") or {}).get("template")) or {}
        labels.update((tpl.get("metadata") or {}).get("labels") or {})
        annotations.update((tpl.get("metadata") or {}).get("annotations") or {})
        if tpl.get("spec"):
            spec = merge(spec, tpl["spec"])
    spec["replicatedJobs"] = sorted(spec.get("replicatedJobs") or [],
                                    key=lambda r: order.index(r["name"]) if r["name"] in order else len(order))
    return spec, labels, annotations


def _set_counts_and_trainer(spec: dict, ml: dict | None, trainer: dict) -> None:
    """Each replicatedJob's pod count as parallelism and completions; the trainer ones get replicas 1 and
    the trainer's settings on their `node` container."""
    first = True
    for rj in spec["replicatedJobs"]:
        job = rj.setdefault("template", {}).setdefault("spec", {})
        count = job.get("parallelism", 1)
        if _ancestor(rj) == TRAINER:
            if ml is not None:
                count = ml.get("numNodes", 1)
            if first and trainer.get("numNodes") is not None:
                count = trainer["numNodes"]
            first = False
            rj["replicas"] = 1
            for c in ((job.get("template") or {}).get("spec") or {}).get("containers") or []:
                if c.get("name") == NODE:
                    _set_trainer_node(c, ml, trainer)
        job["parallelism"] = job["completions"] = max(count, 1)


def _set_trainer_node(c: dict, ml: dict | None, trainer: dict) -> None:
    if ml is not None and trainer.get("resourcesPerNode"):
        c["resources"] = merge(c.get("resources") or {}, trainer["resourcesPerNode"])
    for k in ("image", "command", "args"):
        if trainer.get(k) is not None:
            c[k] = copy.deepcopy(trainer[k])
    if trainer.get("env"):
        c["env"] = upsert_env(c.get("env") or [], trainer["env"])


# what Trainer's podGroupPolicy plugins put on every pod (EnforcePodGroupPolicy): the PodGroup's name, the TrainJob's
POD_GROUP_MARKS = {"coscheduling": ("labels", "scheduling.x-k8s.io/pod-group"),
                   "volcano": ("annotations", "scheduling.k8s.io/group-name")}


def _pod_group_policy(policy: dict, spec: dict, trainjob: dict) -> None:
    name = (trainjob.get("metadata") or {}).get("name")
    for source, (where, key) in POD_GROUP_MARKS.items():
        if source in policy and name:
            for rj in spec["replicatedJobs"]:
                pod = rj["template"]["spec"].setdefault("template", {})
                pod.setdefault("metadata", {}).setdefault(where, {})[key] = name
