"""What a file is, decided from its path and text alone (no YAML parsing): the repo-mode pre-filter.

A file can only hold a v1 job if it mentions `kubeflow.org` and has a `kind:` key whose value is one
of the job kinds (`kind: PyTorchJob`, `"kind": "PyTorchJob"`, `{kind: PyTorchJob}`); with --katib
also `kind: Experiment`. A JobSet written by kf2jobset does not match: its source annotation names
the old kind without a `kind:` key. Everything else is never parsed.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from ..mappings import JOB_KINDS

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# `kind:` then, possibly on the next line, tags (`!!str`), an anchor, a block scalar indicator, a quote
_KIND = r"""\bkind["']?\s*:\s*(?:(?:![^\s]*|&[^\s]+)\s+)*(?:[|>][-+0-9]*\s+)?["']?\s*(?:{})\b"""
JOB_KIND_RE = re.compile(_KIND.format("|".join(JOB_KINDS)))
# a job kind written any other way (an alias, a complex key...): not after '/', as in the
# `kf2jobset.dev/source: kubeflow.org/v1/PyTorchJob` annotation of a JobSet we wrote
LOOSE_JOB_RE = re.compile(r"(?<![/\w.-])(?:{})(?!\w)".format("|".join(JOB_KINDS)))
KATIB_KIND_RE = re.compile(_KIND.format("Experiment"))
# anything a kustomization (or a JSON6902 patch file) could use to point at a v1 job
V1_REFERENCE_RE = re.compile(r"\b(?:{})\b|[A-Za-z]+ReplicaSpecs\b|kubeflow\.org".format("|".join(JOB_KINDS)))
# A Go template action as Helm writes them: `{{ .Values.x }}`, `{{- include "x" . }}`, `{{ $v }}`,
# `{{ if ... }}`, `{{/* comment */}}`. Argo's `{{inputs.parameters.x}}` / `{{workflow.name}}` /
# `{{=expr}}` are not Helm: those documents are YAML and are read as such.
TEMPLATE_RE = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?:include|template|if|else|end|range|with|define|block|toYaml|toJson|tpl|required|"
    r"default|printf|print|quote|squote|indent|nindent|lookup|fail|tuple|dict|list|trim|upper|lower|b64enc)\b)")

# kinds of file
SKIP = "skip"  # cannot hold a v1 job: never parsed
CANDIDATE = "candidate"  # may hold a v1 job (or a Katib Experiment with --katib)
HELM = "helm"  # a Helm template: never parsed
KUSTOMIZATION = "kustomization"  # a kustomization that mentions v1 kinds or fields
PATCH_LIKE = "patch-like"  # may be a kustomize patch aimed at a v1 job (JSON6902 ops)


def may_hold_job(text: str, katib: bool = False) -> bool:
    if "kubeflow.org" not in text and not ("kubeflow" in text and "\\" in text):  # escaped: "kubeflow\x2eorg"
        return False
    if "\\" in text and '"' in text and "kubeflow" in text:
        return True  # escapes in double quotes can spell anything: parse and look
    return bool(JOB_KIND_RE.search(text) or LOOSE_JOB_RE.search(text) or (katib and KATIB_KIND_RE.search(text)))


def is_helm_template(path: str, text: str | None = None) -> bool:
    """Under a chart's templates/ (a directory next to Chart.yaml), or holding `{{ ... }}`."""
    if _in_chart_templates(os.path.abspath(os.path.dirname(path) or ".")):
        return True
    return text is not None and "{{" in text and bool(TEMPLATE_RE.search(text))


@lru_cache(maxsize=4096)
def _in_chart_templates(directory: str) -> bool:
    p = Path(directory)  # absolute: the cache must not depend on the working directory
    for d in (p, *p.parents):
        if d.name == "templates" and (d.parent / "Chart.yaml").is_file():
            return True
        if (d / "Chart.yaml").is_file():  # inside a chart but not under its templates/
            return False
    return False


def classify(path: str, text: str, katib: bool = False) -> str:
    name = os.path.basename(path)
    if name in KUSTOMIZATION_NAMES:
        return KUSTOMIZATION if V1_REFERENCE_RE.search(text) else SKIP
    job = may_hold_job(text, katib)
    if is_helm_template(path, text if job else None):
        return HELM
    if job:
        return CANDIDATE
    if "ReplicaSpecs" in text and re.search(r"/spec/[A-Za-z]+ReplicaSpecs\b", text):
        return PATCH_LIKE
    return SKIP
