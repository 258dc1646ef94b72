"""v1 jobs held as YAML text inside a string scalar of another object, converted in place.

Two holders are read (what each system itself reads, at the tags named in docs/argo-and-katib-configmaps.md):

* Argo Workflows (`argoproj.io/v1alpha1` Workflow, WorkflowTemplate, ClusterWorkflowTemplate, and
  CronWorkflow under `spec.workflowSpec`): a template's `resource.manifest` string, for the actions
  that send the whole object (`create`, `apply`, `replace`). Kubeflow Pipelines v1 `ResourceOp`
  compiles to exactly this. Argo fills `{{...}}` placeholders into the text before it parses it, so
  they are swapped for envsubst-style stand-ins here and converted by kf2jobset/sources/envsubst.py's rules
  (carried where the value is only copied, an error where conversion needs it), then put back.
  `successCondition`/`failureCondition` (k8s label-selector requirements over gjson paths of the
  created object, evaluated by Argo's executor) are rewritten for JobSet status where they can be.
* Katib trial templates in ConfigMaps (`--katib`): a `data` value whose YAML is a v1 job (Katib reads
  `data[templatePath]` as the trial's text). Experiments whose `trialTemplate.configMap` names such a
  value get the success/failure conditions and primaryPodLabels the inline `--katib` path writes.

Only the text of the scalar (and of the conditions) changes: every other byte of the document stays,
and the scalar keeps its style (a literal block stays a literal block; a folded block becomes literal;
a quoted scalar is written double-quoted). The inner text is converted like a file of its own (the
caller passes pipeline.convert_text: comments, layout, envsubst), so nothing here is duplicated.

A `resource` step and a ConfigMap value hold one object: conversions that need companions (an MPI
hostfile ConfigMap, a Volcano PodGroup, a TrainingRuntime) are refused with the way forward.

Pure: dicts and text in, text and DocumentResults out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .argo_steps import (ARGO_FULL_OBJECT_ACTIONS, ARGO_KINDS, argo_notes, argo_problem, argo_templates, condition_notes,
                         put_back, quote_placeholder_scalars, translate_condition, with_stand_ins)
from ..core.document_result import DocumentResult
from .envsubst import PlaceholderRestorer
from ..errors import Location, Problem, UnsupportedError
from .held_jobs import embedded_jobs, yaml_objects
from . import katib_parameters
from .katib_configmaps import convert_configmap_experiment
from .katib_trials import katib_note
from ..mappings import kubeflow_job_kind
from ..targets import target_of
from ..text import yamledit
from ..text.classify import may_hold_job
from ..text.scalar_splice import condition_edit, node_at, scalar_edit

RULE = "embedded-companions"


@dataclass(frozen=True)
class Holder:
    path: tuple  # of the string scalar, in the outer document
    owner: str  # Workflow, ConfigMap, ...
    argo: bool  # Argo placeholders and conditions apply


def may_hold(data: Any, options) -> bool:
    """Cheap test: could this document hold job text (or be an Experiment reading one)?"""
    if not isinstance(data, dict):
        return False
    kind = data.get("kind")
    if kind in ARGO_KINDS:
        return str(data.get("apiVersion", "")).startswith("argoproj.io/")
    return bool(options.katib) and kind in ("ConfigMap", "Experiment")


def holders(data: dict, options) -> list[Holder]:
    found = []
    kind = data.get("kind")
    if kind in ARGO_KINDS:
        base, templates = argo_templates(data)
        for i, tpl in enumerate(templates):
            resource = tpl.get("resource") if isinstance(tpl, dict) else None
            if not isinstance(resource, dict) or str(resource.get("action", "")).strip() not in ARGO_FULL_OBJECT_ACTIONS:
                continue
            manifest = resource.get("manifest")
            if isinstance(manifest, str) and may_hold_job(manifest):
                found.append(Holder(base + (i, "resource", "manifest"), kind, True))
    elif kind == "ConfigMap" and options.katib and isinstance(data.get("data"), dict):
        for key, value in data["data"].items():
            if isinstance(value, str) and may_hold_job(value) and _job_kind_of(value):
                found.append(Holder(("data", key), kind, False))
    return found


def job_in_text(text: str) -> dict | None:
    """The one object of a YAML text, Argo placeholders as written (None: not one YAML object)."""
    inner, back = with_stand_ins(str(text))
    objects = [o for o in yaml_objects(inner) if o is not None]
    if len(objects) != 1 or not isinstance(objects[0], dict):
        return None
    return PlaceholderRestorer({spelling: "${" + token + "}" for token, spelling in back.items()})(objects[0])


def _job_kind_of(text: str) -> str | None:
    """The Kubeflow job kind of a YAML text (None: not YAML, or not one job)."""
    objects = [o for o in yaml_objects(with_stand_ins(str(text))[0]) if o is not None]
    return kubeflow_job_kind(objects[0]) if len(objects) == 1 else None


def convert_document_text(doc, path: str, options, convert_text: Callable, templates: Callable[[], tuple]):
    """DocumentResult for a document holding job text (or an Experiment reading a ConfigMap template),
    None when it holds none. `convert_text(text, path, options)` converts the inner text like a file;
    `templates()` gives the run's Katib trial templates (trial_templates)."""
    data = doc.data
    if data.get("kind") == "Experiment":
        return convert_configmap_experiment(data, options, templates)
    found = holders(data, options)
    if not found:
        return None

    try:
        root = yamledit.compose(doc.text)
    except Exception:  # parsed already: libyaml should agree; if not, leave it to the usual path
        return None
    result = DocumentResult()
    edits: list = []
    for holder in found:
        node, key = node_at(root, holder.path)
        if node is None or type(node).__name__ != "ScalarNode":
            continue
        _convert_one(doc, path, options, convert_text, holder, node, key, root, result, edits)
    handled = {h.path for h in found}  # converted, or an error names it
    result.unconverted = [e for e in embedded_jobs(data) if e.path not in handled]
    if result.errors or not result.conversions:
        result.conversions = [] if result.errors else result.conversions
        return result if (result.errors or result.unconverted) else None
    result.new_text = yamledit.apply_edits(doc.text, edits)
    return result


def _convert_one(doc, path, options, convert_text, holder: Holder, node, key, root, result, edits) -> None:
    value = node.value
    # Argo's `{{...}}` and Katib's `${trialParameters.x}` are filled in as text before the YAML is read: converted
    # through envsubst stand-ins, put back after
    inner, back = with_stand_ins(value) if holder.argo else katib_parameters.with_stand_ins(value)
    said = argo_problem if holder.argo else katib_parameters.parameter_problem
    where = _Where(doc, node, key, said)
    if not target_of(options).embeddable:
        # Argo: a TrainJob's outcome is only in its conditions list, which Argo's label-selector conditions
        # cannot query (and a generated runtime cannot join the step); Katib ConfigMaps: not written yet
        result.errors.append(UnsupportedError(where.problem(_trainjob_problem(holder, value), holder.path, back)))
        return
    inner_result = convert_text(inner, path, options)
    if inner_result.errors:
        for err in inner_result.errors:
            result.errors.append(type(err)([where.problem(p, holder.path, back) for p in err.problems]))
        return
    convs = inner_result.conversions
    if not convs or inner_result.new_text is None:
        return
    companions = [c for conv in convs for c in conv.companions]
    if companions or len(convs) > 1 or sum(len(r.outputs or []) for r in inner_result.results if r.changed) > 1:
        result.errors.append(UnsupportedError(where.problem(_companion_problem(holder, companions), holder.path, back)))
        return
    conv = convs[0]
    if back:
        conv.notes[:] = argo_notes(conv.notes, back) if holder.argo else katib_parameters.parameter_notes(conv.notes, back)
        PlaceholderRestorer({spelling: "${" + token + "}" for token, spelling in back.items()})(
            (conv.job, conv.plan, conv.notes, conv.jobset, conv.companions))
    if holder.owner == "ConfigMap":
        conv.notes.append(katib_note(None))
    new_text = put_back(inner_result.new_text, back)
    edits.append(scalar_edit(doc.text, node, key, quote_placeholder_scalars(new_text) if back else new_text))
    if holder.argo and _job_kind_of(value):  # (a Katib Experiment created by the step keeps its conditions)
        resource, _ = node_at(root, holder.path[:-1])
        conditions = {}
        for field_name in ("successCondition", "failureCondition"):
            cond = yamledit.get(resource, field_name)
            if yamledit.scalar(cond) is not None:
                conditions[field_name] = cond
        rewritten = {f: translate_condition(f, c.value) for f, c in conditions.items()}
        conv.notes += condition_notes({f: (conditions[f].value, new) for f, new in rewritten.items()}, holder.path[:-1])
        edits += [condition_edit(conditions[f], new) for f, new in rewritten.items() if new is not None]
    result.conversions.append(conv)
    result.embedded_paths.append(holder.path)


def _companion_problem(holder: Holder, companions: list) -> Problem:
    kinds = ", ".join(dict.fromkeys(c.get("kind", "?") for c in companions)) or "several objects"
    if holder.owner == "ConfigMap":
        what = "a Katib trial template holds one object"
        forward = "use --mpi-hostfile generated / --scheduler kueue, or keep the trial template inline (trialSpec)"
    else:
        what = "an Argo resource step creates one object (kubectl's -o json of several is a List the executor cannot wait on)"
        forward = "use --mpi-hostfile generated / --scheduler kueue so the JobSet needs none"
    return Problem(f"{what}, but this conversion also needs {kinds}", Location(), RULE, forward)


def _trainjob_problem(holder: Holder, text: str) -> Problem:
    if holder.owner == "ConfigMap":
        sized = katib_parameters.sizes_the_job(text)
        return Problem("--target trainjob: Katib trial templates held in ConfigMaps are converted to JobSets only (so far)",
                       Location(), "katib-configmap-trainjob",
                       "convert them with --target jobset" + (
                           f"; keep this one in its ConfigMap: {sized} sizes the job, and an inline trialSpec would keep "
                           "it a string (Katib writes that out as JSON before it fills parameters in)" if sized else
                           ", or move the template inline (trialTemplate.trialSpec), where --target trainjob writes "
                           "TrainJob trials"))
    return Problem("--target trainjob: an Argo resource step waits on conditions Argo reads as label-selector "
                   "requirements, and a TrainJob says how it ended only in its conditions list, which they cannot "
                   "query (its generated TrainingRuntime could not join the step either)", Location(), RULE,
                   "convert the step with --target jobset (status.terminalState is a field)")


class _Where:
    """Maps a position in the scalar's text to the outer file."""

    def __init__(self, doc, node, key, said: Callable = argo_problem):
        self.doc, self.node, self.said = doc, node, said
        self.block = node.style in ("|", ">")
        text = doc.text
        start = node.start_mark.index
        self.body_line = text.count("\n", 0, start) + 1  # 0-based line (in doc.text) of the first body line
        body = text[text.find("\n", start) + 1:node.end_mark.index] if self.block else ""
        first = next((ln for ln in body.splitlines() if ln.strip()), "")
        self.indent = len(first) - len(first.lstrip(" "))

    def problem(self, p: Problem, prefix: tuple, back: dict) -> Problem:
        loc = p.location
        if self.block and loc.line is not None:
            line = self.doc.start_line + self.body_line + loc.line
            col = self.indent + (loc.column or 1)
        else:
            line = self.doc.start_line + self.node.start_mark.line + 1
            col = self.node.start_mark.column + 1
        p = self.said(p, back) if back else p
        return Problem(p.message, Location(loc.file, self.doc.index, line, col, tuple(prefix) + tuple(loc.path)),
                       p.rule, p.hint)
