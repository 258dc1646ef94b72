"""Any parsed document to its DocumentResult: a v1 job (a renderer's annotations set aside and given back to
what it became), a `kind: List`, a Katib Experiment (kf2jobset/sources/katib_trials.py), an AppWrapper v1beta2, or
something left alone (the jobs held inside it named). Errors are collected with their paths, never printed."""
from __future__ import annotations

import copy
from typing import Any

from . import renderer_annotations
from .convert import convert_job, is_job, unsupported_job_version
from .document_result import DocumentResult, under_path
from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem
from ..sources.held_jobs import embedded_jobs
from ..sources.katib_trials import KATIB_EXPERIMENT, convert_experiment, is_katib_like
from ..mappings import kubeflow_job_kind
from ..options import ConvertOptions
from ..targets import target_of


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
        return convert_experiment(doc, options)
    if options.katib and is_katib_like(doc):
        return DocumentResult(errors=[InvalidJobError(Problem(
            f"Experiment with apiVersion {doc.get('apiVersion')!r} holds a Kubeflow job; Katib serves {KATIB_EXPERIMENT[0]}",
            Location(path=("apiVersion",)), rule="api-version"))])
    from ..sources.appwrapper import is_appwrapper

    if is_appwrapper(doc):
        return _convert_appwrapper(doc, options)
    return DocumentResult(unconverted=embedded_jobs(doc))


def _convert_appwrapper(doc: dict, options: ConvertOptions) -> DocumentResult:
    """AppWrapper v1beta2: each component whose template is a v1 job gets the JobSet in its place
    (kf2jobset/sources/appwrapper.py: podSets, companions as components of their own)."""
    from ..sources import appwrapper

    result = DocumentResult()
    components = []
    for i, comp in enumerate(doc["spec"]["components"]):
        template = comp.get("template") if isinstance(comp, dict) else None
        path = (*appwrapper.COMPONENTS, i, "template")
        if not is_job(template):
            if kubeflow_job_kind(template):
                result.errors.append(under_path(unsupported_job_version(template), path))
            components.append(comp)
            continue
        if not target_of(options).embeddable:
            result.errors.append(appwrapper.trainjob_refusal(path))
            continue
        try:
            conv = convert_job(template, options)
        except Kf2JobSetError as err:
            result.errors.append(under_path(err, path))
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


def _convert_list(doc: dict, options: ConvertOptions) -> DocumentResult:
    result = DocumentResult()
    items = []
    for i, item in enumerate(doc["items"]):
        sub = convert_document(item, options)
        for err in sub.errors:
            result.errors.append(under_path(err, ("items", i)))
        result.conversions += sub.conversions
        # where each item's jobs are: what --check and the report cite (an item's own lines, not the List's)
        inner = sub.embedded_paths if len(sub.embedded_paths) == len(sub.conversions) else [()] * len(sub.conversions)
        result.embedded_paths += [("items", i, *path) for path in inner]
        items += sub.outputs if sub.outputs is not None else [item]
    if result.conversions and not result.errors:
        out = copy.copy(doc)
        out["items"] = items
        result.outputs = [out]
    return result
