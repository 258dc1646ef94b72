"""The pure core: documents in, JobSets (+ companions, notes) out. No I/O.

`convert_job` handles one Kubeflow job; `convert_document` handles any document (a job, a Katib
Experiment, a `kind: List`, or something we leave alone). Shells call these and do the reading,
writing and exit codes.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .emit import Conversion, emit
from .errors import InvalidJobError, Kf2JobSetError, Location, Problem, UnsupportedError, format_path
from .frameworks import profile as get_profile
from .mappings import convertible_mapping, kubeflow_job_kind, readable_versions
from . import renderer_annotations
from . import claims as claim
from .notes import Note
from .options import ConvertOptions
from .parse import parse_job
from .targets import apply_target, target_of
from .podrules import check_configmap
from .treecopy import copy_tree
from .validate import check_jobset
from .errors import RejectedJobSetError

KATIB_EXPERIMENT = ("kubeflow.org/v1beta1", "Experiment")
KATIB_TRIAL_SUFFIX = 9  # Katib names trials <experiment>-<8 random characters>
TEMPLATE_NAME_LENGTH = 20


def is_job(doc: Any) -> bool:
    return isinstance(doc, dict) and convertible_mapping(doc.get("apiVersion"), doc.get("kind")) is not None


def convert_job(doc: dict, options: ConvertOptions, *, assumed_name_length: int | None = None) -> Conversion:
    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    if mapping is None:
        raise UnsupportedError(Problem(f"not a Kubeflow job kind: {doc.get('apiVersion')}/{doc.get('kind')}", rule="not-a-job"))
    from .k8syaml import as_kubernetes_reads, kubernetes_value, readings

    doc = as_kubernetes_reads(doc)
    k8s_readings = readings(doc) if hasattr(doc, "ca") else []  # only YAML text has plain scalars
    if k8s_readings:
        # Kubernetes reads YAML 1.1 (`010` is 8, `on` is true); convert what the operator was given.
        # (This drops the document's comments, which only live on the round-trip types.)
        doc = kubernetes_value(doc)
    from . import envsubst

    placeholders = envsubst.find(doc) if _mentions_dollar(doc) else []
    if envsubst.is_template(placeholders):
        # Converted with stand-ins for the placeholders, which are put back (kf2jobset/envsubst.py).
        return envsubst.convert_template(
            doc, placeholders,
            lambda d: apply_target(_convert_checked(d, mapping, options, assumed_name_length, k8s_readings), options),
            check_name=lambda jobset, n: _name_fits(jobset, n, options))
    return apply_target(_convert_checked(doc, mapping, options, assumed_name_length, k8s_readings), options)


def _mentions_dollar(doc) -> bool:
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(isinstance(k, str) and "$" in k for k in node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and "$" in node:
            return True
    return False


def _name_fits(jobset: dict, length: int, options: ConvertOptions) -> bool:
    candidate = {**jobset, "metadata": {**jobset["metadata"], "name": "t" * length}}
    return not [p for p in check_jobset(candidate, version=options.jobset_version) if p.rule in _NAME_RULES]


def _convert_checked(doc: dict, mapping, options: ConvertOptions, assumed_name_length: int | None, k8s_readings) -> Conversion:
    upgraded = None
    if doc.get("apiVersion") in mapping.upgrade_from:
        # An older apiVersion: read as the v1 job it meant; errors point into the document as written.
        from .upgrade import upgrade

        try:
            upgraded = upgrade(doc, mapping)
        except InvalidJobError as err:
            raise _explain_readings(err, k8s_readings) from None
    try:
        job = parse_job(upgraded.doc if upgraded else doc, mapping)
    except InvalidJobError as err:
        raise _explain_readings(upgraded.relocate(err) if upgraded else err, k8s_readings) from None
    if upgraded:
        job.source_api_version = upgraded.source_api_version
        job.source = doc  # the document as read: the report finds it (e.g. in a List) and its lines
    try:
        conversion = emit(job, options)
    except Kf2JobSetError as err:
        raise upgraded.relocate(err) if upgraded else err from None
    if upgraded:
        conversion.notes[:0] = upgraded.notes
        conversion.upgrade = upgraded
    from .selectorfix import fix_selectors

    fix_selectors(conversion, options)  # selectors on the operator's labels pick the same pods
    meta = conversion.jobset["metadata"]
    if assumed_name_length is None and not meta.get("name") and not meta.get("generateName"):
        # A template (Katib trial, pipeline step): whoever creates it picks the name.
        assumed_name_length = TEMPLATE_NAME_LENGTH
        conversion.notes.append(Note(
            "JS003", "approximated",
            f"this job has no name (a template?): name-length rules were checked for a {TEMPLATE_NAME_LENGTH}-character name",
            source_path="metadata", action="check the name it will be created with against the JobSet limits",
            claims=(claim.absent("metadata.name"), claim.absent("metadata.generateName")),
        ))
    candidate = conversion.jobset
    if assumed_name_length and not candidate["metadata"].get("name") and not candidate["metadata"].get("generateName"):
        # Named later (a Katib trial): check it with a stand-in name of the length it will have.
        candidate = {**candidate, "metadata": {**candidate["metadata"], "name": "t" * assumed_name_length}}
    if candidate is not conversion.jobset:
        conversion.assumed_name_length = assumed_name_length
    problems = check_jobset(candidate, version=options.jobset_version)
    problems += _check_companions(conversion.companions)
    if problems:
        # Paths point into the emitted JobSet; say so, since the user edits the v1 job.
        raise RejectedJobSetError([
            Problem(f"the JobSet would be rejected: {p.message} (at JobSet {format_path(p.location.path)})",
                    Location(path=_NAME_PATH if p.rule in _NAME_RULES and (doc.get("metadata") or {}).get("name") else ()),
                    p.rule, p.hint)
            for p in problems
        ])
    return conversion


def _check_companions(companions) -> list[Problem]:
    out = []
    for c in companions:
        if c.get("kind") == "ConfigMap":
            out += [Problem(f"{c['kind']} {(c.get('metadata') or {}).get('name')}: {p.message}", p.location, p.rule, p.hint)
                    for p in check_configmap(c)]
    return out


def _explain_readings(err: InvalidJobError, k8s_readings) -> InvalidJobError:
    by_path = {tuple(r.path): r for r in k8s_readings}
    problems = []
    for p in err.problems:
        r = by_path.get(tuple(p.location.path))
        hint = f"{r.describe()}; quote it if you mean the text" if r else p.hint
        problems.append(Problem(p.message, p.location, p.rule, hint))
    return InvalidJobError(problems)


_NAME_RULES = {"jobset-name", "job-name-length", "pod-name-length"}
_NAME_PATH = ("metadata", "name")


@dataclass
class DocumentResult:
    """What happened to one document. `outputs` None = pass it through unchanged."""

    outputs: list[dict] | None = None
    conversions: list[Conversion] = field(default_factory=list)
    errors: list[Kf2JobSetError] = field(default_factory=list)
    # paths (within this document) of embedded jobs, parallel to conversions/errors for Katib/List
    embedded_paths: list[tuple] = field(default_factory=list)
    # v1 jobs inside objects kf2jobset does not rewrite (AppWrapper components, ConfigMap values):
    # never converted silently, never passed silently either — the shells name each one
    unconverted: list["EmbeddedJob"] = field(default_factory=list)
    # the document's own text with job text converted inside a string scalar (kf2jobset/jobs_in_strings.py):
    # written as it is, instead of dumping `outputs`
    new_text: str | None = None

    @property
    def changed(self) -> bool:
        return self.outputs is not None or self.new_text is not None


def convert_document(doc: Any, options: ConvertOptions) -> DocumentResult:
    """Convert one parsed document. Errors are collected (with paths), never printed."""
    if not isinstance(doc, dict):
        return DocumentResult()
    if is_job(doc):
        carried, doc = renderer_annotations.split(doc)  # a renderer's (kustomize, Helm 4) annotations: not the job's
        try:
            conv = convert_job(doc, options)
        except Kf2JobSetError as err:
            return DocumentResult(errors=[err])
        except RecursionError:  # bounded at the parse boundary; a last guard, never a traceback
            return DocumentResult(errors=[InvalidJobError(Problem("the document is nested too deeply to convert", Location(),
                                                                  rule="nesting"))])
        return DocumentResult(outputs=[renderer_annotations.give_back(o, carried) for o in conv.objects], conversions=[conv])
    if kubeflow_job_kind(doc):
        return DocumentResult(errors=[unsupported_job_version(doc)])
    if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        return _convert_list(doc, options)
    if options.katib and (doc.get("apiVersion"), doc.get("kind")) == KATIB_EXPERIMENT:
        return _convert_katib(doc, options)
    if options.katib and _katib_like(doc):
        return DocumentResult(errors=[InvalidJobError(Problem(
            f"Experiment with apiVersion {doc.get('apiVersion')!r} holds a Kubeflow job; Katib serves {KATIB_EXPERIMENT[0]}",
            Location(path=("apiVersion",)), rule="api-version"))])
    from .appwrapper import is_appwrapper

    if is_appwrapper(doc):
        return _convert_appwrapper(doc, options)
    return DocumentResult(unconverted=embedded_jobs(doc))


def _convert_appwrapper(doc: dict, options: ConvertOptions) -> DocumentResult:
    """AppWrapper v1beta2: each component whose template is a v1 job gets the JobSet in its place
    (kf2jobset/appwrapper.py: podSets, companions as components of their own)."""
    from . import appwrapper

    result = DocumentResult()
    components = []
    for i, comp in enumerate(doc["spec"]["components"]):
        template = comp.get("template") if isinstance(comp, dict) else None
        path = (*appwrapper.COMPONENTS, i, "template")
        if not is_job(template):
            if kubeflow_job_kind(template):
                result.errors.append(_prefix(unsupported_job_version(template), path))
            components.append(comp)
            continue
        if not target_of(options).embeddable:
            result.errors.append(appwrapper.trainjob_refusal(path))
            continue
        try:
            conv = convert_job(template, options)
        except Kf2JobSetError as err:
            result.errors.append(_prefix(err, path))
            continue
        except RecursionError:
            result.errors.append(InvalidJobError(Problem("the component is nested too deeply to convert", Location(path=path),
                                                         rule="nesting")))
            continue
        try:
            components += appwrapper.rewrite_component(comp, conv, i)
        except Kf2JobSetError as err:  # its podSets name no replica: paths are the AppWrapper's already
            result.errors.append(err)
            continue
        result.conversions.append(conv)
        result.embedded_paths.append(path)
    if result.conversions and not result.errors:
        out = copy.copy(doc)
        out["spec"] = copy.copy(doc["spec"])
        out["spec"]["components"] = components
        result.outputs = [out]
    return result


@dataclass(frozen=True)
class EmbeddedJob:
    path: tuple
    kind: str
    api_version: str
    owner: str  # the kind of the object that holds it

    def message(self) -> str:
        where = format_path(self.path, empty="")
        article = "an" if self.owner[:1] in "AEIOU" else "a"
        advice = {
            "AppWrapper": "convert the job (kf2jobset convert) and put the JobSet in the component's place "
                          "(AppWrapper runs JobSets)",
            "ConfigMap": "pass --katib to convert Katib trial templates held in ConfigMap values (and the Experiments "
                         "of the same run that read them)",
            **{k: "only create/apply/replace steps are converted: point this step at the JobSet by hand "
                  "(jobset.x-k8s.io/v1alpha2, kind JobSet, same name)" for k in ARGO_KINDS},
        }.get(self.owner, "convert it by hand")
        return (f"{where} holds a {self.kind} ({self.api_version}) inside {article} {self.owner}: jobs embedded there are not "
                f"converted automatically; {advice}")


def embedded_jobs(doc: dict) -> list[EmbeddedJob]:
    """Kubeflow v1 jobs held inside other objects: AppWrapper components (workload.codeflare.dev
    v1beta2 `spec.components[].template`, v1beta1 `spec.resources.GenericItems[].generictemplate`) and
    ConfigMap values holding a job's YAML (Katib trial templates)."""
    kind = doc.get("kind")
    found: list[EmbeddedJob] = []

    def add(path, obj, owner):
        job_kind = kubeflow_job_kind(obj)
        if job_kind:
            found.append(EmbeddedJob(path, job_kind, str(obj.get("apiVersion")).strip(), owner))

    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    if kind == "AppWrapper":  # v1beta2 components are converted (_convert_appwrapper); older forms are listed
        for i, comp in enumerate(spec.get("components") or []):
            if isinstance(comp, dict):
                add(("spec", "components", i, "template"), comp.get("template"), "AppWrapper")
        items = (spec.get("resources") or {}).get("GenericItems") if isinstance(spec.get("resources"), dict) else None
        for i, item in enumerate(items or []):
            if isinstance(item, dict):
                add(("spec", "resources", "GenericItems", i, "generictemplate"), item.get("generictemplate"), "AppWrapper")
    elif kind in ARGO_KINDS and str(doc.get("apiVersion", "")).startswith("argoproj.io/"):
        base, templates = argo_templates(doc)  # a CronWorkflow's are under spec.workflowSpec
        for i, tpl in enumerate(templates):
            manifest = (tpl.get("resource") or {}).get("manifest") if isinstance(tpl, dict) and isinstance(
                tpl.get("resource"), dict) else None
            if isinstance(manifest, str) and "kubeflow.org" in manifest:
                for obj in yaml_objects(str(manifest)) or [_kind_lines(str(manifest))]:
                    add(base + (i, "resource", "manifest"), obj, kind)
    elif kind == "ConfigMap" and isinstance(doc.get("data"), dict):
        for key, value in doc["data"].items():
            if isinstance(value, str) and "kubeflow.org" in value and len(value) < 1_000_000:
                for obj in yaml_objects(str(value)):
                    add(("data", str(key)), obj, "ConfigMap")
    return found


ARGO_KINDS = ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow")


def argo_templates(data: dict) -> tuple[tuple, list]:
    """(path of the templates list, the list) of a Workflow-like object; CronWorkflow nests it."""
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    if data.get("kind") == "CronWorkflow":
        inner = spec.get("workflowSpec") if isinstance(spec.get("workflowSpec"), dict) else {}
        return ("spec", "workflowSpec", "templates"), inner.get("templates") if isinstance(inner.get("templates"), list) else []
    return ("spec", "templates"), spec.get("templates") if isinstance(spec.get("templates"), list) else []


def _kind_lines(text: str) -> dict:
    """apiVersion/kind read line by line, for a manifest whose `{{...}}` placeholders are not YAML."""
    import re

    found = {}
    for key in ("apiVersion", "kind"):
        m = re.search(rf"(?m)^{key}:\s*['\"]?([^'\"\s#]+)", text)
        if m:
            found[key] = m.group(1)
    return found


def yaml_objects(text: str) -> list:
    """The documents of a YAML string, or [] if it is not YAML (a ConfigMap value may be anything)."""
    import yaml

    try:
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except Exception:  # not YAML, or YAML we cannot read: not a job we could name
        return []


def _katib_like(doc: dict) -> bool:
    """An Experiment in a kubeflow.org group (any version, stray spaces) whose trialSpec is a Kubeflow job."""
    kind, api = doc.get("kind"), doc.get("apiVersion")
    if not (isinstance(kind, str) and kind.strip() == "Experiment" and isinstance(api, str)
            and api.strip().startswith("kubeflow.org")):
        return False
    spec = doc.get("spec")
    template = spec.get("trialTemplate") if isinstance(spec, dict) else None
    trial = template.get("trialSpec") if isinstance(template, dict) else None
    return kubeflow_job_kind(trial) is not None


def unsupported_job_version(doc: dict) -> Kf2JobSetError:
    """A Kubeflow job kind in a kubeflow.org group that we do not convert: never passed through silently."""
    import re

    kind = kubeflow_job_kind(doc)
    api = doc.get("apiVersion")
    supported = ", ".join(readable_versions(kind))
    if (not isinstance(api, str) or api.strip() != api or kind != doc.get("kind")
            or not re.fullmatch(r"(?:[a-z0-9-]+\.)*kubeflow\.org/v[0-9]+(?:(?:alpha|beta)[0-9]+)?", api)):
        return InvalidJobError(Problem(
            f"{str(doc.get('kind'))!r} with apiVersion {str(api)!r} is not an API the server serves (stray characters?); "
            f"{kind} is converted from {supported}", Location(path=("apiVersion",)), rule="api-version"))
    return UnsupportedError(Problem(
        f"{kind} {api} is not supported: kf2jobset converts {kind} {supported} only",
        Location(path=("apiVersion",)), rule="api-version",
        hint="write the job in one of those versions first"))


def _convert_list(doc: dict, options: ConvertOptions) -> DocumentResult:
    result = DocumentResult()
    items = []
    for i, item in enumerate(doc["items"]):
        sub = convert_document(item, options)
        for err in sub.errors:
            result.errors.append(_prefix(err, ("items", i)))
        result.conversions += sub.conversions
        items += sub.outputs if sub.outputs is not None else [item]
    if result.conversions and not result.errors:
        out = copy.copy(doc)
        out["items"] = items
        result.outputs = [out]
    return result


def _prefix(err: Kf2JobSetError, prefix: tuple) -> Kf2JobSetError:
    fixed = [Problem(p.message, Location(p.location.file, p.location.document, p.location.line, p.location.column,
                                         prefix + tuple(p.location.path)), p.rule, p.hint) for p in err.problems]
    return type(err)(fixed)


def _convert_katib(doc: dict, options: ConvertOptions) -> DocumentResult:
    """Katib Experiment: convert trialTemplate.trialSpec and the fields Katib reads from the trial."""
    path = ("spec", "trialTemplate", "trialSpec")
    spec = doc.get("spec")
    template = spec.get("trialTemplate") if isinstance(spec, dict) else None
    trial = template.get("trialSpec") if isinstance(template, dict) else None
    if not is_job(trial):
        if kubeflow_job_kind(trial):
            return DocumentResult(errors=[_prefix(unsupported_job_version(trial), path)])
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
        return DocumentResult(errors=[_prefix(err, path)])
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
    also used for Experiments whose trial template sits in a ConfigMap (kf2jobset/jobs_in_strings.py)."""
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
