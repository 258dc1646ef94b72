"""Target `trainjob`: a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1, Trainer v2.3) per
v1 job: on one of Trainer's built-in ClusterTrainingRuntimes where the job fits it (BUILTINS: a module per
runtime, shared code in builtin.py); else on a ClusterTrainingRuntime of kf2jobset's compat bundle
(bundle_target.py) where the runtime derived from the job is one of the bundle's; else the job is refused
(users usually cannot create runtimes, and a platform vets the ones they may name), saying why
and the ways out. Only with `--trainer-runtime per-job`: a generated namespaced TrainingRuntime that holds
the JobSet kf2jobset built.

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

from .. import claims as claim
from .. import staleness
from ..layout_guard import LAYOUT_ANNOTATION
from ..name_binding import NAME_LITERALS_ANNOTATION, NAMED_FOR_ANNOTATION
from ..name_binding import record as record_names
from ..errors import Location, Problem, UnsupportedError
from ..notes import Note
from ..validate import check_jobset
from ..frameworks import profile
from . import builtin_notes, trainjob_gang
from .builtin import NodeLayout, trainjob_manager
from .builtin_fields import PATCHABLE_POD

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
# The built-in ClusterTrainingRuntime that takes a profile's jobs, by its module here (each module:
# RUNTIME_NAME, misfits, build -> (TrainJob, predicted JobSet), notes, limits; shared code in builtin.py)
BUILTINS = {"pytorch": "torch_distributed", "jax": "jax_distributed", "xgboost": "xgboost_distributed"}


def builtin_module(profile: str):
    """The module of the built-in runtime for `profile`'s jobs, or None (a kind no built-in covers)."""
    from importlib import import_module

    return import_module(f"{__package__}.{BUILTINS[profile]}") if profile in BUILTINS else None


def finish(conversion, options) -> None:
    module = builtin_module(conversion.job.mapping.profile)
    why = _builtin_misfits(conversion, options, module)
    if not why:
        trainjob, predicted = module.build(conversion, options)
        why = module.limits(trainjob)
    size_literals = _without_size_record(conversion)  # after build: a built-in TrainJob reads the record
    if not why:
        candidate = predicted
        if conversion.assumed_name_length and not (predicted["metadata"].get("name") or predicted["metadata"].get("generateName")):
            # named at creation (a Katib trial): checked at the length the plan assumed, as convert_job does
            candidate = {**predicted, "metadata": {**predicted["metadata"], "name": "t" * conversion.assumed_name_length}}
        problems = check_jobset(candidate, version=options.jobset_version)
        if not problems:
            _finish_builtin(conversion, module, trainjob, predicted)
            return
        why = [f"the JobSet Trainer would build from it is refused ({problems[0].message})"]
    if options.trainer_runtime != "per-job":
        from . import bundle_target

        derived, runtime, bundle_why = bundle_target.misfits(conversion, options)
        if runtime is not None:
            kueue = bundle_target.finish(conversion, options, derived, runtime, size_literals)
            trainjob = conversion.output[-1]  # Trainer names its JobSet after it: the hostfile's names are its own
            record_names(trainjob, conversion.companions, trainjob["metadata"].get("name"),
                         trainjob["metadata"].get("namespace"), options.subdomain)
            _check_companions(conversion.companions, conversion.output[-1]["metadata"].get("name"))
            conversion.notes += _trainjob_notes(kueue)
            return
        raise _no_shared_runtime(conversion, module, why, bundle_why)
    _finish_generated(conversion, options, why)


def _no_shared_runtime(conversion, module, builtin_why: list[str], bundle_why: list[str]) -> UnsupportedError:
    """A job no shared runtime takes: a namespaced runtime per job is the user's call (platforms
    vet the runtimes users may name, and users usually cannot create them), never the default."""
    job = conversion.job
    name = job.name or job.generate_name
    return UnsupportedError(Problem(
        f"{job.kind}{f' {name!r}' if name else ''} fits no shared ClusterTrainingRuntime: "
        + (f"not the built-in {module.RUNTIME_NAME!r} (" if module else "") + "; ".join(dict.fromkeys(builtin_why))
        + ("), " if module else ", ") + "not kf2jobset's bundle (" + "; ".join(dict.fromkeys(bundle_why)) + ")",
        Location(path=()), rule="trainjob-no-shared-runtime",
        hint="convert with --trainer-runtime per-job for a namespaced TrainingRuntime of this job's own, "
             "or with --target jobset"))


def _without_size_record(conversion) -> str | None:
    """The sizes kf2jobset's JobSet records for `--check` (SZ002) describe replicatedJobs a TrainJob does not
    have (numNodes is its size): neither the record nor its note goes to the TrainJob or its runtime, nor the
    layout record (layout_guard.py). Returns
    the values the record named (a bundle TrainJob records its own)."""
    ann = (conversion.jobset.get("metadata") or {}).get("annotations") or {}
    ann.pop(staleness.SIZED_FOR_ANNOTATION, None)
    ann.pop(LAYOUT_ANNOTATION, None)  # Trainer builds the JobSet's replicatedJobs: --check guards numNodes instead
    literals = ann.pop(staleness.SIZE_LITERALS_ANNOTATION, None)
    ann.pop(NAMED_FOR_ANNOTATION, None)  # the JobSet's name record (name_binding) describes a JobSet Trainer names itself
    ann.pop(NAME_LITERALS_ANNOTATION, None)
    conversion.notes = [n for n in conversion.notes if n.code != "SZ002"]
    return literals


def _builtin_misfits(conversion, options, module) -> list[str]:
    """Why the job does not run on a built-in runtime (empty: it does)."""
    if options.trainer_runtime == "per-job":
        return ["--trainer-runtime per-job"]
    if module is None:
        return [f"Trainer v2.3 ships no built-in runtime that keeps {conversion.job.kind}'s v1 contract"]
    why = module.misfits(conversion, options)
    unknown = sorted({n.code for n in conversion.notes if n.code not in builtin_notes.REPLACED_NOTES
                      and n.code not in builtin_notes.JOBSET_ONLY_NOTES
                      and not builtin_notes.KEPT_NOTES.match(n.code)})
    if unknown:
        why.append(f"findings {unknown} have no counterpart on a built-in runtime")
    return why


def _finish_builtin(conversion, module, trainjob: dict, predicted: dict) -> None:
    planned_env = _first_container(conversion.jobset).get("env") or []
    layout = NodeLayout(conversion.jobset, conversion.plan)
    kept = [n for n in conversion.notes if builtin_notes.KEPT_NOTES.match(n.code)]
    kueue = {k: v for k, v in (trainjob["metadata"].get("labels") or {}).items() if k in KUEUE_LABELS}
    _check_companions(conversion.companions, trainjob["metadata"].get("name"))
    conversion.planned_jobset = conversion.jobset
    conversion.jobset = predicted
    conversion.layout = layout
    conversion.output = [*conversion.companions, trainjob]
    conversion.notes = kept + _trainjob_notes(kueue)
    conversion.notes += module.notes(conversion, trainjob, predicted, planned_env)
    conversion.notes.append(Note(
        "TJ004", "unchanged",
        f"built-in ClusterTrainingRuntime {module.RUNTIME_NAME!r}: every pod shares one template, so "
        "spec.trainer carries the image, command, resources and the v1 env, and runtimePatches the pod fields",
        target_path="spec.runtimeRef", action="use --trainer-runtime per-job to keep the v1 contract exactly",
        claims=(claim.equals("spec.runtimeRef.kind", "ClusterTrainingRuntime", "TrainJob"),)))
    if "activeDeadlineSeconds" in trainjob["spec"]:
        conversion.lifecycle_overrides["activeDeadlineSeconds"] = (
            trainjob["spec"]["activeDeadlineSeconds"], "the whole TrainJob, from its creation or last resume")
    if kueue.get(KUEUE_LABELS[0]):
        conversion.lifecycle_overrides["schedulingPolicy"] = {"queue": str(kueue[KUEUE_LABELS[0]])}
    trainjob_manager(conversion, trainjob)


def _first_container(jobset: dict) -> dict:
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def _finish_generated(conversion, options, why: list[str]) -> None:
    jobset = conversion.jobset
    meta = jobset.get("metadata") or {}
    spec = copy.deepcopy(jobset["spec"])
    _check_pod_counts(spec)
    pod_group_policy = trainjob_gang.pod_group_policy(conversion, options, spec)
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
    framework = profile(conversion.job.mapping.profile).runtime_framework
    digest = hashlib.sha256(json.dumps([framework, template, *([pod_group_policy] if pod_group_policy else [])],
                                       sort_keys=True).encode()).hexdigest()[:10]
    runtime_name = f"kf2jobset-{framework}-{digest}"
    namespace = meta.get("namespace")
    runtime = {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {"name": runtime_name, **({"namespace": namespace} if namespace else {}),
                     "labels": {FRAMEWORK_LABEL: framework, CREATED_BY[0]: CREATED_BY[1]}},
        "spec": {**({"podGroupPolicy": pod_group_policy} if pod_group_policy else {}), "template": template},
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
    # the runtime's pods name the job (the hostfile, the PodGroup, YuniKorn's application): Trainer names its JobSet
    # after the TrainJob, so the TrainJob records them
    record_names(trainjob, conversion.companions, meta.get("name"), meta.get("namespace"), options.subdomain, [runtime])
    _check_companions(conversion.companions, meta.get("name"))
    trainjob_manager(conversion, trainjob)
    # the runtime first: Trainer's webhook refuses a TrainJob whose runtime does not exist yet
    conversion.output = [runtime, *conversion.companions, trainjob]
    conversion.notes += [_runtime_note(runtime_name), *_trainjob_notes(kueue)]
    conversion.notes.append(Note(
        "TJ004", "unchanged", "generated TrainingRuntime, not a built-in one: " + "; ".join(why),
        target_path="spec.runtimeRef", unchecked=_WHY))


def _check_pod_counts(spec: dict) -> None:
    """Trainer sets completions to parallelism (default 1) on every Job it builds."""
    for _i, rj in enumerate(spec.get("replicatedJobs") or []):
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


_WHY = ("about the TrainJob and TrainingRuntime around the JobSet, checked by tests/test_target_trainjob.py and on the real Trainer "
        "(tests/e2e/test_trainjob_target.py)")


def _runtime_note(runtime_name: str) -> Note:
    return Note("TJ001", "rewritten",
                f"the JobSet is the template of the generated TrainingRuntime {runtime_name!r} (no ML policy, no "
                "trainer-ancestor label), which Trainer builds as written under the TrainJob's name; jobs whose "
                "JobSets are identical share the runtime",
                target_path="spec.runtimeRef",
                action="apply the TrainingRuntime before the TrainJob, in the same namespace (the file lists it "
                       "first); if Trainer's webhook still says the runtime must be created first, apply again: it "
                       "reads runtimes from a cache that lags a moment",
                unchecked=_WHY)


def _trainjob_notes(kueue: dict) -> list[Note]:
    """What every TrainJob changes, whichever runtime it runs on: its conditions, and Kueue's labels."""
    notes = [
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
            "(Trainer copies no TrainJob label to the JobSet)", target_path="metadata.labels",
            explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
            claims=tuple(claim.equals(f"metadata.labels[{k}]", v, "TrainJob") for k, v in sorted(kueue.items()))))
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
# where the plan's JobSet fields went (repo mode moves comments with them)

_TRAINER_FIELDS = {"image": "image", "command": "command", "args": "args", "env": "env", "resources": "resourcesPerNode"}


def relocate_path(conversion):
    """JobSet path -> (index in conversion.output, path there) | None (the field has no single place)."""
    out = conversion.output
    trainjob = next(i for i, o in enumerate(out) if o.get("kind") == "TrainJob")
    runtime = next((i for i, o in enumerate(out) if o.get("kind") == "TrainingRuntime"), None)

    def on_trainjob(path):
        if path[:1] in ((), ("apiVersion",), ("kind",), ("metadata",)) or path in (("spec", "suspend"), ("spec", "managedBy")):
            return trainjob, path
        return None

    if runtime is not None:  # generated runtime: the JobSet's spec is the runtime's template
        def generated(path):
            return on_trainjob(path) or ((runtime, ("spec", "template") + path) if path[:1] == ("spec",) else None)
        return generated

    patch = ("spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0,
             "template", "spec", "template")

    def builtin(path):  # one pod template for every node: the first replicatedJob's stands for all
        if path[:3] != ("spec", "replicatedJobs", 0):
            return on_trainjob(path)
        pod = path[3:]
        if pod[:3] != ("template", "spec", "template"):
            return None
        pod = pod[3:]
        if pod[:1] == ("metadata",):
            return trainjob, patch + pod
        if pod[:3] == ("spec", "containers", 0) and len(pod) > 3:
            field = pod[3]
            if field in _TRAINER_FIELDS:
                return trainjob, ("spec", "trainer", _TRAINER_FIELDS[field]) + pod[4:]
            if field in ("volumeMounts", "securityContext"):
                return trainjob, patch + ("spec", "containers", 0) + pod[3:]
            return None
        if len(pod) > 1 and pod[0] == "spec" and pod[1] in PATCHABLE_POD:
            return trainjob, patch + pod
        return None
    return builtin
