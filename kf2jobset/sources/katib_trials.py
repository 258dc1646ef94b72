"""Katib Experiments whose trial template is a v1 job written inline (`trialTemplate.trialSpec`, with --katib):
the trial converted (a JobSet; or a TrainJob, its generated TrainingRuntime written beside the Experiment for all
trials) and the fields Katib reads from the trial object (primaryPodLabels, success and failure conditions)
rewritten for what it became. Templates held in ConfigMaps: kf2jobset/sources/katib_configmaps.py."""
from __future__ import annotations

from ..core.convert import convert_job, is_job, unsupported_job_version
from ..core.document_result import DocumentResult, under_path
from ..core.emit import Conversion
from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem, UnsupportedError
from ..frameworks import profile as get_profile
from ..mappings import convertible_mapping, kubeflow_job_kind
from ..notes import Note
from ..options import ConvertOptions
from ..targets import target_of
from ..text.treecopy import copy_tree

KATIB_EXPERIMENT = ("kubeflow.org/v1beta1", "Experiment")
KATIB_TRIAL_SUFFIX = 9  # Katib names trials <experiment>-<8 random characters>


def is_katib_like(doc: dict) -> bool:
    """An Experiment in a kubeflow.org group (any version, stray spaces) whose trialSpec is a Kubeflow job."""
    kind, api = doc.get("kind"), doc.get("apiVersion")
    if not (isinstance(kind, str) and kind.strip() == "Experiment" and isinstance(api, str)
            and api.strip().startswith("kubeflow.org")):
        return False
    spec = doc.get("spec")
    template = spec.get("trialTemplate") if isinstance(spec, dict) else None
    trial = template.get("trialSpec") if isinstance(template, dict) else None
    return kubeflow_job_kind(trial) is not None


def convert_experiment(doc: dict, options: ConvertOptions) -> DocumentResult:
    """Katib Experiment: convert trialTemplate.trialSpec and the fields Katib reads from the trial."""
    path = ("spec", "trialTemplate", "trialSpec")
    spec = doc.get("spec")
    template = spec.get("trialTemplate") if isinstance(spec, dict) else None
    trial = template.get("trialSpec") if isinstance(template, dict) else None
    if not is_job(trial):
        if kubeflow_job_kind(trial):
            return DocumentResult(errors=[under_path(unsupported_job_version(trial), path)])
        return DocumentResult()
    problems = []
    meta = doc.get("metadata")
    for where, value, what in ((("metadata",), meta, "a mapping"),
                               (("metadata", "name"), meta.get("name") if isinstance(meta, dict) else None, "a string"),
                               (("spec", "trialTemplate", "primaryPodLabels"), template.get("primaryPodLabels"), "a mapping")):
        if value is not None and not isinstance(value, dict if what == "a mapping" else str):
            problems.append(Problem(f"Katib Experiment: expected {what}, got {type(value).__name__}", Location(path=where), rule="schema"))
    if problems:
        return DocumentResult(errors=[InvalidJobError(problems)])
    exp_name = (meta or {}).get("name")
    assumed = len(exp_name) + KATIB_TRIAL_SUFFIX if exp_name else None
    named = _trial_stand_in(trial, exp_name, options)
    if named:  # converted under a stand-in of the trial's name, put back by katib_files
        trial = copy_tree(trial)
        trial.setdefault("metadata", {})["name"] = named
    try:
        conv = convert_job(trial, options, assumed_name_length=assumed)
    except Kf2JobSetError as err:
        from .katib_parameters import inline_problems

        return DocumentResult(errors=[under_path(inline_problems(err, trial), path)])
    except RecursionError:
        return DocumentResult(errors=[InvalidJobError(Problem("the trial is nested too deeply to convert", Location(path=path),
                                                              rule="nesting"))])
    out = copy_tree(doc)
    new_template = out["spec"]["trialTemplate"]
    if target_of(options).kind_written == "TrainJob":
        return _katib_trainjob(out, conv, path, meta, named)
    if conv.companions:
        return _companions_refused(conv, path)
    jobset = conv.jobset
    jobset["metadata"].pop("name", None)  # Katib names each trial
    new_template["trialSpec"] = jobset
    _katib_fields(new_template, conv)
    return DocumentResult(outputs=[out], conversions=[conv], embedded_paths=[path])


TRIAL_PARAMETER = "${trialParameters."


def _trial_stand_in(trial: dict, exp_name: str | None, options: ConvertOptions) -> str | None:
    """An MPIJob trial on a shared runtime: its hostfile names the trial's pods, so it is converted under a
    stand-in name (its SSH Secret is the one --ssh-secret names, shared by every trial)."""
    from .katib_files import stand_in

    unnamed = not (trial.get("metadata") or {}).get("name") and not (trial.get("metadata") or {}).get("generateName")
    shared = target_of(options).kind_written == "TrainJob" and options.trainer_runtime not in ("per-job", "generated")
    mapping = convertible_mapping(trial.get("apiVersion"), trial.get("kind"))
    names_pods = mapping is not None and get_profile(mapping.profile).pod_names_in_files
    if unnamed and shared and names_pods and options.ssh_secret and options.mpi_hostfile != "generated":
        return stand_in(exp_name)
    return None


def _companions_refused(conv: Conversion, path: tuple) -> DocumentResult:
    return DocumentResult(errors=[UnsupportedError(Problem(
        "a Katib trialSpec holds one object, but this conversion needs companions "
        f"({', '.join(c['kind'] for c in conv.companions)}); use --mpi-hostfile generated / --scheduler kueue",
        Location(path=path), rule="katib-companions"))])


def _katib_trainjob(out: dict, conv: Conversion, path: tuple, meta, named: str | None) -> DocumentResult:
    """Katib v0.19+ runs TrainJob trials (TrainJob is in its default trialResources): the trial is the
    TrainJob; a generated TrainingRuntime, shared by every trial, is written beside the Experiment."""
    runtimes = [o for o in conv.output if o.get("kind") == "TrainingRuntime"]
    (trainjob,) = [o for o in conv.output if o.get("kind") == "TrainJob"]
    import json

    if conv.companions:  # an MPI hostfile: carried in the TrainJob, the trial's name filled in by Katib
        from .katib_files import carry_into_trial

        note = carry_into_trial(out["spec"]["trialTemplate"], conv, trainjob, named)
        if note is None:
            return _companions_refused(conv, path)
        conv.notes.append(note)

    if runtimes and TRIAL_PARAMETER in json.dumps(runtimes[0]):
        return DocumentResult(errors=[UnsupportedError(Problem(
            "this trial needs a generated TrainingRuntime (see TJ004), which every trial shares, and the trial "
            "parameters (${trialParameters.*}) sit in its pod template, where Katib does not substitute them",
            Location(path=path), rule="katib-trainjob-parameters",
            hint="use --target jobset for this Experiment, or make the job fit torch-distributed or a runtime of "
                 "kf2jobset's bundle (kf2jobset runtimes --list; parameters in command, args or env)"))])
    namespace = (meta or {}).get("namespace")
    for runtime in runtimes:
        if namespace and not runtime["metadata"].get("namespace"):
            runtime["metadata"]["namespace"] = namespace  # the trials run in the Experiment's namespace
    trainjob["metadata"].pop("name", None)  # Katib names each trial
    template = out["spec"]["trialTemplate"]
    template["trialSpec"] = trainjob
    builtin = conv.layout is not None
    if builtin:
        # Katib's own defaults for TrainJob trials: rank 0 is completion index 0 of the `node` Job; on a
        # runtime of kf2jobset's bundle, pod 0 of the master's replicatedJob
        primary = getattr(conv.layout, "primary_labels", None)
        selector = primary(conv.job.mapping.master_role) if primary else {
            RJOB_LABEL: "node", "batch.kubernetes.io/job-completion-index": "0"}
        template["primaryPodLabels"] = selector
        if template.get("primaryContainerName"):
            template["primaryContainerName"] = "node"
    else:
        _katib_fields(template, conv)  # the JobSet is kf2jobset's: select its pods as for --target jobset
        conv.notes.pop()  # (its KT001 is about JobSet trials)
        selector = template.get("primaryPodLabels")
    template["successCondition"] = 'status.conditions.#(type=="Complete")#|#(status=="True")#'
    template["failureCondition"] = 'status.conditions.#(type=="Failed")#|#(status=="True")#'
    shown = ", ".join(f"{k}={v}" for k, v in (selector or {}).items())
    conv.notes.append(Note(
        "KT002", "rewritten",
        "Katib trial template: each trial is a TrainJob (Katib v0.19+ runs them: TrainJob is in its default "
        "trialResources); success/failure read the TrainJob's Complete/Failed conditions"
        + (f"; primaryPodLabels select {shown}" if shown else "")
        + ("; the primary container is `node`" if builtin and template.get("primaryContainerName") else "")
        + ("; the generated TrainingRuntime is written beside the Experiment, for all its trials" if runtimes else ""),
        source_path="spec.trialTemplate", target_path="spec.trialTemplate",
        action="Katib before v0.19: add TrainJob.v1alpha1.trainer.kubeflow.org to trialResources (katib-config) and RBAC",
        unchecked="about the Katib Experiment's trialTemplate around the TrainJob; the katib trainjob goldens pin it"))
    return DocumentResult(outputs=[*runtimes, out], conversions=[conv], embedded_paths=[path])


# Katib reads these from the trial object; v1 values name v1 labels and conditions.
_TYPE_KEYS = ("training.kubeflow.org/replica-type", "replica-type")
_ROLE_KEYS = ("training.kubeflow.org/job-role", "job-role", "mpi-job-role")
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
INDEX_LABEL = "jobset.sigs.k8s.io/job-index"


def _katib_fields(template: dict, conv: Conversion) -> None:
    selector = katib_trial_fields(template, conv.plan.rjob_names, conv.job.mapping.master_role)
    conv.notes.append(katib_note(selector))


def katib_trial_fields(template: dict, names: dict, master_role) -> dict | None:
    """Set the fields Katib reads from the trial for a JobSet trial (`names`: replica type -> replicatedJob);
    also used for Experiments whose trial template sits in a ConfigMap (kf2jobset/sources/katib_configmaps.py)."""
    labels = template.get("primaryPodLabels")
    selector = None

    def master():
        for entry in master_role:
            if entry.endswith("0") and entry[:-1] in names:
                return {RJOB_LABEL: names[entry[:-1]], INDEX_LABEL: "0"}
            if entry in names:
                return {RJOB_LABEL: names[entry]}
        return None

    if not labels:
        # Katib's default for Kubeflow kinds is job-role=master; JobSet pods carry no such label.
        selector = master()
    elif isinstance(labels, dict):
        for key, value in labels.items():
            v = str(value).lower()
            if key in _TYPE_KEYS:
                t = next((t for t in names if t.lower() == v), None)
                selector = {RJOB_LABEL: names[t]} if t else selector
            elif key in _ROLE_KEYS:
                t = next((t for t in names if t.lower() == v), None)
                selector = {RJOB_LABEL: names[t]} if t else master() if v == "master" else selector
    if selector:
        template["primaryPodLabels"] = selector
    # gjson queries over the trial object, in the form Katib's own defaults use.
    template["successCondition"] = 'status.conditions.#(type=="Completed")#|#(status=="True")#'
    template["failureCondition"] = 'status.conditions.#(type=="Failed")#|#(status=="True")#'
    return selector


def katib_note(selector):
    shown = ", ".join(f"{k}={v}" for k, v in (selector or {}).items())
    return Note("KT001", "prerequisite",
                "Katib trial template: success/failure conditions read the JobSet's Completed/Failed conditions"
                + (f"; primaryPodLabels select {shown}" if selector else ""),
                source_path="spec.trialTemplate", target_path="spec.trialTemplate",
                action="add JobSet.v1alpha2.jobset.x-k8s.io to Katib's trialResources (katib-config) and RBAC",
                warn=True,  # the Experiment does not run until the cluster is changed: print it
                unchecked="about the Katib Experiment's trialTemplate around the JobSet, not the JobSet itself; "
                "the katib goldens (fixtures/katib) pin it")
