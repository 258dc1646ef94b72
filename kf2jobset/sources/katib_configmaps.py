"""Katib trial templates held as a v1 job's YAML in a ConfigMap value (`--katib`), and the Experiments whose
`trialTemplate.configMap` names one: the shape of each template's conversion (gathered over the whole run,
before any file converts), and Katib's fields in the Experiment updated for it. The value's text itself is
converted in place by kf2jobset/sources/jobs_in_strings.py."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..core.convert import convert_job, is_job
from ..core.document_result import DocumentResult
from ..core.emit import SOURCE_ANNOTATION
from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem
from .held_jobs import yaml_objects
from .katib_parameters import with_stand_ins
from .katib_trials import KATIB_EXPERIMENT, katib_trial_fields
from ..mappings import convertible_mapping
from ..text.treecopy import copy_tree


@dataclass(frozen=True)
class TrialTemplate:
    """A v1 job in a ConfigMap value, as an Experiment's trialTemplate.configMap names it."""

    namespace: str | None
    name: str
    key: str
    rjob_names: tuple  # ((replica type, replicatedJob name), ...) of its conversion
    master_role: tuple  # the mapping's master_role entries


def trial_templates(datas, options) -> tuple:
    """Every ConfigMap value (of the given parsed documents) holding a v1 job that converts."""
    found = []
    for data in datas:
        if not isinstance(data, dict) or data.get("kind") != "ConfigMap" or not isinstance(data.get("data"), dict):
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        for key, value in data["data"].items():
            if not isinstance(value, str) or "kubeflow.org" not in value:
                continue
            objects = yaml_objects(with_stand_ins(str(value))[0])  # a replica count from a trial parameter is a number
            if len(objects) == 1 and _converted_shape(objects[0]) is not None:  # converted by an earlier run
                names, master_role = _converted_shape(objects[0])
                found.append(TrialTemplate(meta.get("namespace"), str(meta.get("name")), str(key), names, master_role))
                continue
            if len(objects) != 1 or not is_job(objects[0]):
                continue
            try:
                conv = convert_job(objects[0], options)
            except (Kf2JobSetError, RecursionError):
                continue
            found.append(TrialTemplate(meta.get("namespace"), str(meta.get("name")), str(key),
                                       tuple(conv.plan.rjob_names.items()), tuple(conv.job.mapping.master_role)))
    return tuple(found)


def _converted_shape(obj) -> tuple | None:
    """(rjob_names, master_role) of a JobSet kf2jobset wrote (its source annotation names the v1 kind), so that
    an Experiment converted in a later run than its template still gets Katib's fields."""
    if not isinstance(obj, dict) or obj.get("kind") != "JobSet":
        return None
    source = ((obj.get("metadata") or {}).get("annotations") or {}).get(SOURCE_ANNOTATION)
    m = re.fullmatch(r"(\S+)/(\w+)(?: .*)?", str(source or ""))
    mapping = convertible_mapping(m.group(1), m.group(2)) if m else None
    rjobs = [rj.get("name") for rj in (obj.get("spec") or {}).get("replicatedJobs") or [] if isinstance(rj, dict)]
    if mapping is None:
        return None
    names = tuple((rule.type, name) for rule in mapping.replica_types for name in rjobs if name == rule.type.lower())
    return (names, tuple(mapping.master_role)) if names else None


def trial_templates_in_texts(texts, options) -> tuple:
    """trial_templates over whole files (libyaml; files that do not load are skipped: they fail later)."""
    import yaml

    datas = []
    for text in texts:
        try:
            datas += list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except Exception:  # reported when the file itself is converted
            continue
    return trial_templates(datas, options)


def convert_configmap_experiment(data: dict, options, templates: Callable[[], tuple]):
    """An Experiment whose trialTemplate.configMap names a converted template: Katib's fields updated."""
    if (data.get("apiVersion"), data.get("kind")) != KATIB_EXPERIMENT:
        return None
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    template = spec.get("trialTemplate") if isinstance(spec.get("trialTemplate"), dict) else None
    ref = template.get("configMap") if template else None
    if not isinstance(ref, dict) or template.get("trialSpec") is not None:
        return None
    name, path = ref.get("configMapName"), ref.get("templatePath")
    namespace = ref.get("configMapNamespace") or (data.get("metadata") or {}).get("namespace")
    matches = {(t.rjob_names, t.master_role) for t in templates()
               if t.name == name and t.key == path and (not namespace or not t.namespace or t.namespace == namespace)}
    if not matches:
        return None
    if len(matches) > 1:
        return DocumentResult(errors=[InvalidJobError(Problem(
            f"trialTemplate.configMap names {name}/{path}, and this run holds differently shaped templates under that "
            "name: kf2jobset cannot tell which one Katib reads", Location(path=("spec", "trialTemplate", "configMap")),
            rule="katib-configmap", hint="set configMapNamespace, or convert the Experiment with its own ConfigMap"))])
    names, master_role = next(iter(matches))
    out = copy_tree(data)
    katib_trial_fields(out["spec"]["trialTemplate"], dict(names), master_role)
    if out == data:
        return None
    return DocumentResult(outputs=[out])
