"""Target `trainjob`: a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1, Trainer v2.3) per
v1 job, running on a generated namespaced TrainingRuntime that holds the JobSet kf2jobset built.

Why a generated runtime. The JobSet already carries the whole v1 pod contract (env, ranks, start order,
success and failure rules). A TrainingRuntime with no ML policy and no replicatedJob labelled
`trainer.kubeflow.org/trainjob-ancestor-step` is built by Trainer's PlainML path exactly as written:
same replicatedJobs, env, ports, policies; the JobSet takes the TrainJob's name, so every address
kf2jobset derived from the JobSet name still reaches the same pod (held against the real Trainer
v2.3.0 controller in tests/e2e/test_trainjob_target.py). What Trainer does on top:
* parallelism = completions = the Job template's parallelism (default 1) for every replicatedJob: a
  JobSet whose Jobs run several pods must say so in `parallelism`, or the pods are lost;
* the TrainJob's labels are not copied to the JobSet: labels the JobSet needs live in the runtime's
  template metadata, while Kueue's labels stay on the TrainJob (Kueue admits the TrainJob);
* `suspend` and `managedBy` are TrainJob fields (Trainer copies suspend to the JobSet);
* status conditions are Complete/Failed on the TrainJob.

Jobs whose JobSets are identical share one runtime: its name is derived from its content.
"""
from __future__ import annotations

import copy
import hashlib
import json

from ..errors import Location, Problem, UnsupportedError
from ..notes import Note

API_VERSION = "trainer.kubeflow.org/v1alpha1"
GROUP = "trainer.kubeflow.org"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
CREATED_BY = ("app.kubernetes.io/created-by", "kf2jobset")
SOURCE_ANNOTATION = "kf2jobset.dev/source"
# Kueue reads these on the object it admits: the TrainJob (Trainer does not copy TrainJob labels down)
KUEUE_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class")
# objects Trainer creates per TrainJob: a companion of that name would collide
TRAINER_OBJECT_SUFFIXES = ("-runtime-snapshot",)
# the `trainer.kubeflow.org/framework` value per profile (the SDK lists runtimes by it)
FRAMEWORKS = {"pytorch": "torch", "tensorflow": "tensorflow", "mpi": "mpi", "xgboost": "xgboost",
              "paddle": "paddle", "jax": "jax", "mxnet": "mxnet"}


def finish(conversion, options) -> None:
    jobset = conversion.jobset
    meta = jobset.get("metadata") or {}
    spec = copy.deepcopy(jobset["spec"])
    _check_pod_counts(spec)
    suspend = spec.pop("suspend", None)
    managed_by = spec.pop("managedBy", None)
    labels = dict(meta.get("labels") or {})
    annotations = dict(meta.get("annotations") or {})
    kueue = {k: labels.pop(k) for k in KUEUE_LABELS if k in labels}
    # the job's own name stays off the runtime (on the TrainJob), so alike jobs share one
    shared = {k: v for k, v in annotations.items() if k != SOURCE_ANNOTATION}

    template: dict = {}
    if labels or shared:
        template["metadata"] = {k: v for k, v in (("labels", labels), ("annotations", shared)) if v}
    template["spec"] = spec
    framework = FRAMEWORKS[conversion.job.mapping.profile]
    digest = hashlib.sha256(json.dumps([framework, template], sort_keys=True).encode()).hexdigest()[:10]
    runtime_name = f"kf2jobset-{framework}-{digest}"
    namespace = meta.get("namespace")
    runtime = {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {"name": runtime_name, **({"namespace": namespace} if namespace else {}),
                     "labels": {FRAMEWORK_LABEL: framework, CREATED_BY[0]: CREATED_BY[1]}},
        "spec": {"template": template},
    }
    train_meta = {k: meta[k] for k in ("name", "generateName", "namespace") if meta.get(k)}
    if labels or kueue:
        train_meta["labels"] = {**labels, **kueue}
    if annotations:
        train_meta["annotations"] = annotations
    train_spec: dict = {"runtimeRef": {"apiGroup": GROUP, "kind": "TrainingRuntime", "name": runtime_name}}
    if suspend is not None:
        train_spec["suspend"] = suspend
    if managed_by:
        train_spec["managedBy"] = managed_by
    trainjob = {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": train_meta, "spec": train_spec}
    _check_companions(conversion.companions, meta.get("name"))
    # the runtime first: Trainer's webhook refuses a TrainJob whose runtime does not exist yet
    conversion.output = [runtime, *conversion.companions, trainjob]
    conversion.notes += _notes(runtime_name, kueue, suspend)
    conversion.notes.append(_path_note(conversion.job, options))


def _check_pod_counts(spec: dict) -> None:
    """Trainer sets completions to parallelism (default 1) on every Job it builds."""
    for i, rj in enumerate(spec.get("replicatedJobs") or []):
        job = ((rj.get("template") or {}).get("spec") or {})
        parallelism, completions = job.get("parallelism", 1), job.get("completions", job.get("parallelism", 1))
        if parallelism != completions:
            raise UnsupportedError(Problem(
                f"replicatedJob {rj.get('name')!r} runs {completions} completions with parallelism {parallelism}; "
                "Trainer builds every Job with completions = parallelism, so the TrainJob would run other pods",
                Location(path=()), rule="trainjob-pod-count", hint="use --target jobset for this job"))
        labels = ((rj.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if ANCESTOR_LABEL in labels:
            raise UnsupportedError(Problem(
                f"replicatedJob {rj.get('name')!r} carries the label {ANCESTOR_LABEL}, which makes Trainer rewrite "
                "its Job (replicas, image, command, env)", Location(path=()), rule="trainjob-ancestor-label",
                hint="remove the label from the v1 job's template"))


def _check_companions(companions: list[dict], name: str | None) -> None:
    for obj in companions:
        cname = (obj.get("metadata") or {}).get("name") or ""
        if name and any(cname == name + s for s in TRAINER_OBJECT_SUFFIXES):
            raise UnsupportedError(Problem(
                f"{obj.get('kind')} {cname!r} has the name Trainer gives an object of its own for TrainJob {name!r}",
                Location(path=()), rule="trainjob-object-name", hint="use --target jobset for this job"))


_WHY = "about the TrainJob and TrainingRuntime around the JobSet, checked by tests/test_target_trainjob.py and on the real Trainer (tests/e2e/test_trainjob_target.py)"


def _notes(runtime_name: str, kueue: dict, suspend) -> list[Note]:
    notes = [
        Note("TJ001", "rewritten",
             f"the JobSet is the template of the generated TrainingRuntime {runtime_name!r} (no ML policy, no "
             "trainer-ancestor label), which Trainer builds as written under the TrainJob's name; jobs whose "
             "JobSets are identical share the runtime",
             target_path="spec.runtimeRef",
             action="apply the TrainingRuntime before the TrainJob, in the same namespace (the file lists it "
                    "first); if Trainer's webhook still says the runtime must be created first, apply again: it "
                    "reads runtimes from a cache that lags a moment",
             unchecked=_WHY),
        Note("TJ002", "rewritten",
             "the TrainJob reports the outcome as condition Complete or Failed (v1: Succeeded or Failed; the "
             "JobSet it owns: Completed or Failed)",
             target_path="status.conditions",
             action="watch the TrainJob: kubectl wait --for=condition=Complete trainjob/<name>", unchecked=_WHY),
    ]
    if kueue:
        notes.append(Note(
            "TJ003", "rewritten",
            f"{', '.join(sorted(kueue))} on the TrainJob, not on the JobSet: Kueue admits the TrainJob "
            "(Trainer copies no TrainJob label to the JobSet)", target_path="metadata.labels", unchecked=_WHY))
    return notes


def share_runtimes(outputs: list[list[dict]]) -> int:
    """Drop a TrainingRuntime already written earlier in the same output (same namespace and name, so the
    same content): a file of alike jobs carries one runtime. Returns how many were dropped."""
    seen, dropped = set(), 0
    for objects in outputs:
        for obj in list(objects):
            if obj.get("kind") == "TrainingRuntime" and obj.get("apiVersion") == API_VERSION:
                key = ((obj.get("metadata") or {}).get("namespace"), obj["metadata"]["name"])
                if key in seen:
                    objects.remove(obj)
                    dropped += 1
                seen.add(key)
    return dropped


# ---------------------------------------------------------------------------------------------
# which jobs a built-in runtime could carry (said in the report; the built-in path is not written yet)

# What Trainer v2.3 lets a TrainJob set on a built-in runtime's pods: spec.trainer for the `node`
# container, runtimePatches for these pod fields and a container's volumeMounts/securityContext.
_PATCHABLE_POD = {"containers", "volumes", "nodeSelector", "affinity", "tolerations", "serviceAccountName",
                  "imagePullSecrets", "securityContext", "schedulingGates", "terminationGracePeriodSeconds",
                  "restartPolicy"}
_SETTABLE_CONTAINER = {"name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext",
                       "ports"}
_TORCH_RESERVED = {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}


def torch_distributed_misfits(job, options) -> list[str]:
    """Why a PyTorchJob cannot run on the built-in `torch-distributed` runtime with its v1 contract kept
    (empty: it could). One `node` Job of identical pods, ranked by completion index, so rank 0 stays v1's
    master only when master and workers share one template; no Job-level field can be set."""
    why = []
    if job.framework.get("elasticPolicy"):
        why.append("elasticPolicy (Trainer has no elastic training)")
    types = list(job.replicas)
    if set(types) - {"Master", "Worker"}:
        why.append(f"replica types {sorted(set(types) - {'Master', 'Worker'})}")
    templates = [job.replicas[t].template for t in types]
    if any(t != templates[0] for t in templates[1:]):
        why.append("Master and Worker templates differ (Trainer runs one template for every node)")
    if any(job.replicas[t].restart_policy not in ("OnFailure", "Always") for t in types):
        why.append("restartPolicy Never/ExitCode (a built-in runtime's Jobs retry with Kubernetes' defaults)")
    rp = job.run_policy
    if rp.backoff_limit is not None or rp.ttl_seconds_after_finished is not None:
        why.append("runPolicy.backoffLimit/ttlSecondsAfterFinished (Job and JobSet fields a TrainJob cannot set)")
    if options.subdomain:
        why.append("--subdomain (Trainer's torch plugin writes the master address with the TrainJob's name)")
    pod = (templates[0] or {}).get("spec") or {}
    extra = sorted(set(pod) - _PATCHABLE_POD)
    if extra:
        why.append(f"pod fields {extra} (not settable through runtimePatches)")
    if pod.get("initContainers") or len(pod.get("containers") or []) != 1:
        why.append("init or sidecar containers (a TrainJob can add none)")
    for c in (pod.get("containers") or [])[:1]:
        extra = sorted(set(c) - _SETTABLE_CONTAINER)
        if extra:
            why.append(f"container fields {extra} (not settable on the node container)")
        reserved = sorted({e.get("name") for e in c.get("env") or []} & _TORCH_RESERVED)
        if reserved:
            why.append(f"env {reserved} (reserved by Trainer's torch plugin)")
    return why


def _path_note(job, options) -> Note:
    if job.mapping.profile != "pytorch":
        reason = f"Trainer v2.3 ships no built-in runtime that keeps {job.kind}'s v1 contract"
    else:
        misfits = torch_distributed_misfits(job, options)
        reason = ("its shape fits the built-in torch-distributed runtime (but for retries: Kubernetes' default "
                  "backoffLimit 6 where v1 restarted without limit), which kf2jobset does not write yet; the "
                  "generated runtime keeps v1's contract exactly" if not misfits else
                  "torch-distributed cannot carry: " + "; ".join(misfits))
    return Note("TJ004", "unchanged", f"generated TrainingRuntime, not a built-in one: {reason}",
                target_path="spec.runtimeRef", unchecked=_WHY)
