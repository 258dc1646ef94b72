"""One Kubeflow job in, its Conversion out (the JobSet or what the target writes, companions, notes): the
pure core's entry. No I/O.

`convert_job` reads the job (an older apiVersion as the v1 job it meant, envsubst placeholders through
stand-ins), parses, plans, emits and checks what the API server would refuse; `unsupported_job_version` names
a job kind in a version that is not converted. Whole documents (a List, a Katib Experiment, an AppWrapper)
go through kf2jobset/core/document_routing.py. Shells call these and do the reading, writing and exit codes.
"""
from __future__ import annotations

from typing import Any

from .emit import Conversion, emit
from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem, RejectedJobSetError, UnsupportedError, format_path
from ..mappings import convertible_mapping, kubeflow_job_kind, readable_versions
from .. import claims as claim
from ..notes import Note
from ..options import ConvertOptions
from .parse import parse_job
from ..targets import apply_target
from ..k8s.podrules import check_configmap
from ..k8s.validate import check_jobset

TEMPLATE_NAME_LENGTH = 20


def is_job(doc: Any) -> bool:
    return isinstance(doc, dict) and convertible_mapping(doc.get("apiVersion"), doc.get("kind")) is not None


def convert_job(doc: dict, options: ConvertOptions, *, assumed_name_length: int | None = None) -> Conversion:
    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    if mapping is None:
        raise UnsupportedError(Problem(f"not a Kubeflow job kind: {doc.get('apiVersion')}/{doc.get('kind')}", rule="not-a-job"))
    from ..text.k8syaml import as_kubernetes_reads, kubernetes_value, readings

    doc = as_kubernetes_reads(doc)
    k8s_readings = readings(doc) if hasattr(doc, "ca") else []  # only YAML text has plain scalars
    if k8s_readings:
        # Kubernetes reads YAML 1.1 (`010` is 8, `on` is true); convert what the operator was given.
        # (This drops the document's comments, which only live on the round-trip types.)
        doc = kubernetes_value(doc)
    from ..sources import envsubst

    placeholders = envsubst.find(doc) if _mentions_dollar(doc) else []
    if envsubst.is_template(placeholders):
        # Converted with stand-ins for the placeholders, which are put back (kf2jobset/sources/envsubst.py).
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
        from ..upgrade import upgrade

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


def unsupported_job_version(doc: dict) -> Kf2JobSetError:
    """A Kubeflow job kind in a kubeflow.org group that we do not convert: never passed through silently."""
    import re

    kind = kubeflow_job_kind(doc)
    api = doc.get("apiVersion")
    supported = ", ".join(readable_versions(kind))
    written = str(doc.get("kind")).strip()
    if written != kind:  # the letters differ: kinds are case-sensitive, so the API server serves no such kind
        return InvalidJobError(Problem(
            f"{written!r} is not a kind the API server serves (kubectl apply fails: no matches for kind \"{written}\" "
            f"in version \"{str(api).strip()}\"), so this object was never created: kinds are case-sensitive, and the "
            f"Kubeflow kind is {kind}", Location(path=("kind",)), rule="kind",
            hint=f"write kind: {kind} if this is the {kind} it was meant to be, then convert"))
    if (not isinstance(api, str) or api.strip() != api or kind != doc.get("kind")
            or not re.fullmatch(r"(?:[a-z0-9-]+\.)*kubeflow\.org/v[0-9]+(?:(?:alpha|beta)[0-9]+)?", api)):
        return InvalidJobError(Problem(
            f"{str(doc.get('kind'))!r} with apiVersion {str(api)!r} is not an API the server serves (stray characters?); "
            f"{kind} is converted from {supported}", Location(path=("apiVersion",)), rule="api-version"))
    return UnsupportedError(Problem(
        f"{kind} {api} is not supported: kf2jobset converts {kind} {supported} only",
        Location(path=("apiVersion",)), rule="api-version",
        hint="write the job in one of those versions first"))
