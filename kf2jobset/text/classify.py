r"""What a file is, decided from its path and text alone (no YAML parsing): the repo-mode pre-filter.

A file can only hold a v1 job if it mentions `kubeflow.org` and names one of the job kinds as a word
(`kind: PyTorchJob`, `"kind": "PyTorchJob"`, `{kind: PyTorchJob}`, an alias, a complex key...); with
--katib also `kind: Experiment`. Both are looked for in the text as YAML and JSON would read it:
the escapes of double-quoted scalars (`\x2e`, `\u002e`, `\U0000002e`, `\/`, an escaped line
break) are decoded first, wherever they are — a superset of what a parser would decode, so no job
is missed, and nothing else (a backslash in a regex, a script) makes a file a candidate. A JobSet
written by kf2jobset does not match: its source annotation names the old kind after a `/`.
Everything else is never parsed.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from .filenames import is_doc_name
from ..mappings import JOB_KINDS

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# `kind:` then, possibly on the next line, tags (`!!str`), an anchor, a block scalar indicator, a quote
_KIND = r"""\bkind["']?\s*:\s*(?:(?:![^\s]*|&[^\s]+)\s+)*(?:[|>][-+0-9]*\s+)?["']?\s*(?:{})\b"""
JOB_KIND_RE = re.compile(_KIND.format("|".join(JOB_KINDS)))
# a job kind in other letter case (`kind: PytorchJob`): no API server serves it, and it is named, not passed over
FOLDED_JOB_KIND_RE = re.compile(_KIND.format("(?i:{})".format("|".join(JOB_KINDS))))
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
# What only Helm gives a template: its objects (`.Values`, `.Release`, `.Chart`, `.Files`, `.Capabilities`) and
# `include`. A `{{ }}` file without them, outside a chart, is a Go text/template or Jinja file a program renders
# (kf2jobset/sources/brace_templates.py), converted through stand-ins.
HELM_ACTION_RE = re.compile(r"\{\{-?[^}]*(?:\.(?:Values|Release|Chart|Files|Capabilities)\b|\binclude\s+\")")

# kinds of file
SKIP = "skip"  # cannot hold a v1 job: never parsed
CANDIDATE = "candidate"  # may hold a v1 job (or a Katib Experiment with --katib)
HELM = "helm"  # a Helm template: never parsed
KUSTOMIZATION = "kustomization"  # a kustomization that mentions v1 kinds or fields
PATCH_LIKE = "patch-like"  # may be a kustomize patch aimed at a v1 job (JSON6902 ops)
MARKDOWN = "markdown"  # a Markdown file that mentions a job: its fenced YAML blocks are candidates


# The escapes of YAML double-quoted scalars (JSON's are a subset) that can spell the characters of a
# group or a kind: hex/Unicode code points, `\/`, and an escaped line break (joins the lines, the
# next line's leading blanks dropped).
_ESCAPE_RE = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(/)|(?:\r\n|\r|\n)[ \t]*)")


def _decoded_escape(m: re.Match) -> str:
    code = m.group(1) or m.group(2) or m.group(3)
    if code is None:
        return "/" if m.group(4) else ""
    try:
        return chr(int(code, 16))
    except ValueError:  # beyond U+10FFFF: not a character, keep the text
        return m.group(0)


def unescaped(text: str) -> str:
    """`text` with the escapes above decoded (no backslash: `text` itself, at no cost)."""
    return _ESCAPE_RE.sub(_decoded_escape, text) if "\\" in text else text


def may_hold_job(text: str, katib: bool = False) -> bool:
    text = unescaped(text)
    if "kubeflow.org" not in text:
        return False
    return bool(JOB_KIND_RE.search(text) or LOOSE_JOB_RE.search(text) or (katib and KATIB_KIND_RE.search(text))
                or FOLDED_JOB_KIND_RE.search(text))


_COMMENT_LINE_RE = re.compile(r"^[ \t]*#.*$", re.M)


def has_job_evidence(text: str, katib: bool = False) -> bool:
    """Stricter than may_hold_job, for text that did not parse: a `kind` key whose value is a job kind
    (or Experiment with --katib) outside comment lines, and `kubeflow.org`. A file without it that
    is not YAML cannot hold a job and is skipped, not failed."""
    text = _COMMENT_LINE_RE.sub("", unescaped(text))
    return "kubeflow.org" in text and bool(JOB_KIND_RE.search(text) or (katib and KATIB_KIND_RE.search(text)))


def is_helm_template(path: str, text: str | None = None) -> bool:
    """Under a chart's templates/ (a directory next to Chart.yaml), or holding `{{ ... }}` that only Helm fills in."""
    if _in_chart_templates(os.path.abspath(os.path.dirname(path) or ".")):
        return True
    return text is not None and "{{" in text and bool(HELM_ACTION_RE.search(text))


@lru_cache(maxsize=4096)
def _in_chart_templates(directory: str) -> bool:
    p = Path(directory)  # absolute: the cache must not depend on the working directory
    for d in (p, *p.parents):
        if d.name == "templates" and (d.parent / "Chart.yaml").is_file():
            return True
        if (d / "Chart.yaml").is_file():  # inside a chart but not under its templates/
            return False
    return False


def chart_of(path: str) -> str | None:
    """The chart directory (holding Chart.yaml) whose templates/ holds this file, or None."""
    p = Path(os.path.abspath(os.path.dirname(path) or "."))
    for d in (p, *p.parents):
        if d.name == "templates" and (d.parent / "Chart.yaml").is_file():
            return str(d.parent)
        if (d / "Chart.yaml").is_file():
            return None
    return None


def classify(path: str, text: str, katib: bool = False) -> str:
    name = os.path.basename(path)
    if name in KUSTOMIZATION_NAMES:
        return KUSTOMIZATION if V1_REFERENCE_RE.search(text) else SKIP
    if is_doc_name(name):  # docs: blocks are looked at one by one (markdown.py)
        return MARKDOWN if may_hold_job(text, katib) else SKIP
    job = may_hold_job(text, katib)
    if is_helm_template(path, text if job else None):
        return HELM
    if job:
        return CANDIDATE
    if "ReplicaSpecs" in text and re.search(r"/spec/[A-Za-z]+ReplicaSpecs\b", text):
        return PATCH_LIKE
    return SKIP


def kinds_in(text: str) -> list[tuple[int, str]]:
    """(line, kind) of every `kind: <job kind>` in unparsed text (Helm templates, blocked files)."""
    return [(text.count("\n", 0, m.start()) + 1, re.findall(r"\w+", m.group(0))[-1]) for m in JOB_KIND_RE.finditer(text)]
