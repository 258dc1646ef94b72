"""What `convert --check` lists: every Kubeflow job still in the tree, one line each, with why it is there.

A line is `FILE:LINE: KIND NAME (APIVERSION): CATEGORY: details`; the summary counts the lines by
category, and the exit code follows (an error outranks them; any line left: 1; none: 0).
Besides jobs, --check lists kustomize patches still aimed at v1 jobs and stale --out-dir copies.
"""
from __future__ import annotations

import re

from ..categories import DECISION, EMBEDDED, HELM, ORDER, PATCH, REFUSED, RENAMED, RESIZED, STALE, TEMPLATE, TO_CONVERT  # noqa: F401 (used by importers too)
from ..errors import format_path
from ..checks.edit_checks import edited_objects
from ..text.classify import has_job_evidence, kinds_in
from ..text.yamlio import position

_PLURAL = {DECISION: "need a decision", PATCH: "kustomize patches", STALE: "stale copies"}


def counted(counts: dict) -> str:
    """`6 left: 2 to convert, 1 needs a decision, ...` (nonzero categories only)."""
    total = sum(counts.values())
    parts = [f"{counts[c]} {c if counts[c] == 1 else _PLURAL.get(c, c)}" for c in ORDER if counts.get(c)]
    return f"{total} left" + (": " + ", ".join(parts) if parts else "")


def job_label(obj, fallback_kind: str = "job") -> str:
    """`PyTorchJob train (kubeflow.org/v1)` for a parsed job document."""
    if not isinstance(obj, dict):
        return fallback_kind
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "(unnamed)"
    return f"{obj.get('kind')} {name} ({str(obj.get('apiVersion', '')).strip()})"


def error_category(err) -> str:
    from ..sources.brace_templates import RULE as TEMPLATE_RULE
    from ..sources.envsubst import RULE

    rules = {p.rule for p in err.problems}
    if rules and rules <= {RULE, TEMPLATE_RULE}:
        return TEMPLATE
    if err.kind == "unsupported" and "api-version" not in rules:
        return DECISION
    return REFUSED


def error_detail(err) -> str:
    p = err.problems[0]
    detail = p.message + (f" (hint: {p.hint})" if p.hint else "")
    more = len(err.problems) - 1
    return detail + (f" (+{more} more problem{'s' if more != 1 else ''} in this job)" if more else "")


def doc_line(doc) -> int:
    return doc.start()[0]


CONVERT_AGAIN = "kf2jobset convert --in-place"


def convert_again(options) -> str:
    """The command a `to convert` line names: --in-place with the run's own options (--target trainjob ...)."""
    import shlex

    from ..options import command_line

    return shlex.join([*CONVERT_AGAIN.split(), *command_line(options)])


def file_lines(path: str, result, template: bool = False, again: str = CONVERT_AGAIN) -> list[tuple[str, str]]:
    """(category, line) for every job of a converted file: jobs that convert, jobs that did not (with
    their error), documents that did not parse but name a job kind, and jobs embedded in other objects.
    ``again``: the command that converts them (convert_again)."""
    out: list[tuple[str, str]] = []
    held_back = bool(result.errors)
    located = iter(result.errors)  # in document order: a parse error, or each of res.errors with its line
    for i, (doc, res) in enumerate(zip(result.documents, result.results, strict=False)):
        line = doc_line(doc)
        if doc.error is not None:
            err = next(located, doc.error)
            if has_job_evidence(doc.text):
                kinds = kinds_in(doc.text)
                where = err.problems[0].location
                at = f"{where.line}:{where.column}" if where.line and where.column else where.line or line
                cat = TEMPLATE if template else REFUSED
                out.append((cat, f"{path}:{at}: {kinds[0][1] if kinds else 'job'} (document {i + 1}): {cat}: "
                                 f"{err.problems[0].message}"))
            continue
        embedded = res.embedded_paths if len(res.embedded_paths) == len(res.conversions) else [()] * len(res.conversions)
        for n, (conv, inside) in enumerate(zip(res.conversions, embedded, strict=False)):
            at = position(doc.data, inside, doc.start_line)[0] if inside else None  # a job inside an AppWrapper, a Katib trial
            label = f"{conv.job.kind} {conv.job.name or conv.job.generate_name or '(unnamed)'} ({conv.job.written_api_version})"
            if res.new_text is not None and n < len(res.embedded_paths):  # job text in a string scalar: its line
                label += f" in {format_path(res.embedded_paths[n])}"
                at = position(doc.data, res.embedded_paths[n], doc.start_line)[0] or doc_line(doc)
            if held_back:
                why = f"{TO_CONVERT}: once this file's other problems are fixed (see stderr)"
            elif template:
                why = f"{TO_CONVERT}: a template, its placeholders are kept; run {again}"
            else:
                why = f"{TO_CONVERT}: run {again}"
            out.append((TO_CONVERT, f"{path}:{at or line}: {label}: {why}"))
        for err in res.errors:
            item = _item(doc.data, err.problems[0].location.path)
            err = next(located, err)
            where = err.problems[0].location
            at = f"{where.line}:{where.column}" if where.line and where.column else where.line or line
            cat = error_category(err)
            out.append((cat, f"{path}:{at}: {job_label(item)}: {cat}: {error_detail(err)}"))
        if res.changed and not res.conversions and not res.errors and isinstance(doc.data, dict) \
                and doc.data.get("kind") == "Experiment":  # it reads a trial template converted in a ConfigMap
            ref = ((doc.data.get("spec") or {}).get("trialTemplate") or {}).get("configMap") or {}
            out.append((TO_CONVERT, f"{path}:{line}: {job_label(doc.data)}: {TO_CONVERT}: its trial template "
                                    f"{ref.get('configMapName')}/{ref.get('templatePath')} is (or becomes) a JobSet and "
                                    f"its Katib fields follow: run {again}{'' if '--katib' in again.split() else ' --katib'}"))
        for emb in res.unconverted:
            at, _ = position(doc.data, emb.path, doc.start_line)
            out.append((EMBEDDED, f"{path}:{at or line}: {emb.kind} ({emb.api_version}): {EMBEDDED}: {emb.message()}"))
    extra = getattr(result, "left_lines", None)  # Markdown: jobs in blocks that are never rewritten
    if extra:
        out = sorted(out + extra, key=lambda entry: int(re.match(r"\d*", entry[1][len(path) + 1:]).group() or 0))
    return out


def _item(data, path) -> object:
    """The job an error is about: the document, or the List item / Katib trial its path starts in."""
    if isinstance(data, dict) and path and path[0] == "items" and len(path) > 1 and isinstance(data.get("items"), list):
        items = data["items"]
        if isinstance(path[1], int) and 0 <= path[1] < len(items):
            return items[path[1]]
    if isinstance(data, dict) and data.get("kind") == "AppWrapper" and len(path) > 3 and path[:2] == ("spec", "components"):
        comps = (data.get("spec") or {}).get("components")
        if isinstance(comps, list) and isinstance(path[2], int) and 0 <= path[2] < len(comps) and isinstance(comps[path[2]], dict):
            return comps[path[2]].get("template")
    held = data
    for part in path or ():  # job text inside a string scalar (an Argo manifest, a ConfigMap value)
        held = held.get(part) if isinstance(held, dict) else held[part] if isinstance(held, list) and \
            isinstance(part, int) and part < len(held) else None
        if isinstance(held, str):
            from ..sources.jobs_in_strings import job_in_text

            return job_in_text(held) or data
    if isinstance(data, dict) and data.get("kind") == "Experiment":
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        template = spec.get("trialTemplate") if isinstance(spec.get("trialTemplate"), dict) else {}
        if isinstance(template.get("trialSpec"), dict):
            return template["trialSpec"]
    return data


def edited_lines(path: str, text: str) -> list[tuple[str, str]]:
    """Converted objects of a file an edit left stale: resized, reshaped, renamed (staleness.edited_objects)."""
    return [(e.category, e.listing(path)) for e in edited_objects(text)]


def unparsed_lines(path: str, text: str, category: str, detail: str) -> list[tuple[str, str]]:
    """Jobs of a file that is not parsed (a Helm template, a file held back with its kustomize unit):
    one line per `kind: <job kind>`, or one for the file when the kind is written some other way."""
    kinds = kinds_in(text)
    if not kinds:
        return [(category, f"{path}: a Kubeflow job: {category}: {detail}")]
    return [(category, f"{path}:{line}: {kind}: {category}: {detail}") for line, kind in kinds]
