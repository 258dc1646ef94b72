"""Kubeflow v1 jobs held inside other objects (AppWrapper components, Argo resource steps, ConfigMap values),
found and named (EmbeddedJob): never converted silently, never passed silently either. Also the reading of YAML
held in a string they share."""
from __future__ import annotations

from dataclasses import dataclass

from .argo_steps import ARGO_KINDS, argo_templates
from ..errors import format_path
from ..mappings import kubeflow_job_kind


@dataclass(frozen=True)
class EmbeddedJob:
    path: tuple
    kind: str
    api_version: str
    owner: str  # the kind of the object that holds it
    written: str = ""  # the kind as written, where its letters differ from `kind` (no API server serves it)

    def message(self) -> str:
        where = format_path(self.path, empty="")
        article = "an" if self.owner[:1] in "AEIOU" else "a"
        advice = {
            "AppWrapper": "convert the job (kf2jobset convert) and put the JobSet in the component's place "
                          "(AppWrapper runs JobSets)",
            "ConfigMap": "pass --katib to convert Katib trial templates held in ConfigMap values (and the Experiments "
                         "of the same run that read them)",
            "Template": "an OpenShift Template's objects are created by `oc process`, with its parameters filled in: "
                        "convert the job it renders (oc process -f FILE --local -p NAME=VALUE ... | kf2jobset convert -) "
                        "and put the JobSet in the Template in the job's place, or convert the object by hand",
            **{k: "only create/apply/replace steps are converted: point this step at the JobSet by hand "
                  "(jobset.x-k8s.io/v1alpha2, kind JobSet, same name)" for k in ARGO_KINDS},
        }.get(self.owner, "convert it by hand")
        what = (f"{self.written} ({self.api_version}, a kind no API server serves: it is spelt {self.kind})" if self.written
                else f"{self.kind} ({self.api_version})")
        return (f"{where} holds a {what} inside {article} {self.owner}: jobs embedded there are not "
                f"converted automatically; {advice}")


def embedded_jobs(doc: dict) -> list[EmbeddedJob]:
    """Kubeflow v1 jobs held inside other objects: AppWrapper components (workload.codeflare.dev
    v1beta2 `spec.components[].template`, v1beta1 `spec.resources.GenericItems[].generictemplate`), Argo
    resource steps, OpenShift Template `objects` and ConfigMap values holding a job's YAML (Katib trial
    templates)."""
    kind = doc.get("kind")
    found: list[EmbeddedJob] = []

    def add(path, obj, owner):
        job_kind = kubeflow_job_kind(obj)
        if job_kind:
            written = str(obj.get("kind")).strip()
            found.append(EmbeddedJob(path, job_kind, str(obj.get("apiVersion")).strip(), owner,
                                     written if written != job_kind else ""))

    if kind == "AppWrapper":  # v1beta2 components are converted (_convert_appwrapper); older forms are listed
        _appwrapper_jobs(doc, add)
    elif kind in ARGO_KINDS and str(doc.get("apiVersion", "")).startswith("argoproj.io/"):
        _argo_jobs(doc, add)
    elif kind == "Template" and _openshift(doc) and isinstance(doc.get("objects"), list):
        for i, obj in enumerate(doc["objects"]):
            if isinstance(obj, dict):
                add(("objects", i), obj, "Template")
    elif kind == "ConfigMap" and isinstance(doc.get("data"), dict):
        for key, value in doc["data"].items():
            if isinstance(value, str) and "kubeflow.org" in value and len(value) < 1_000_000:
                for obj in yaml_objects(str(value)):
                    add(("data", str(key)), obj, "ConfigMap")
    return found


def _appwrapper_jobs(doc: dict, add) -> None:
    """An AppWrapper's components (v1beta2) and generic items (v1beta1), each handed to `add`."""
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    for i, comp in enumerate(spec.get("components") or []):
        if isinstance(comp, dict):
            add(("spec", "components", i, "template"), comp.get("template"), "AppWrapper")
    items = (spec.get("resources") or {}).get("GenericItems") if isinstance(spec.get("resources"), dict) else None
    for i, item in enumerate(items or []):
        if isinstance(item, dict):
            add(("spec", "resources", "GenericItems", i, "generictemplate"), item.get("generictemplate"), "AppWrapper")


def _argo_jobs(doc: dict, add) -> None:
    """The objects of an Argo workflow's resource-step manifests that name kubeflow.org, each handed to `add`
    (a manifest whose placeholders are not YAML is read line by line for its apiVersion and kind)."""
    base, templates = argo_templates(doc)  # a CronWorkflow's are under spec.workflowSpec
    for i, tpl in enumerate(templates):
        manifest = (tpl.get("resource") or {}).get("manifest") if isinstance(tpl, dict) and isinstance(
            tpl.get("resource"), dict) else None
        if isinstance(manifest, str) and "kubeflow.org" in manifest:
            for obj in yaml_objects(str(manifest)) or [_kind_lines(str(manifest))]:
                add(base + (i, "resource", "manifest"), obj, doc.get("kind"))


def _openshift(doc: dict) -> bool:
    """template.openshift.io/v1, or the bare `v1` of OpenShift 3's Templates."""
    version = str(doc.get("apiVersion", ""))
    return version.startswith("template.openshift.io/") or version == "v1"


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
