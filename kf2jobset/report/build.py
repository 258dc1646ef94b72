"""Conversions -> Report: run both runtime models, compare them, explain every difference.

Pure apart from nothing: FileResults (from kf2jobset.files.pipeline) in, a Report out.
Both worlds are built from what Kubernetes reads (kf2jobset.text.k8syaml): the operator world from the
v1 document's YAML 1.1 reading, the JobSet world from the reading of the emitted JobSet.
"""
from __future__ import annotations

import re
from functools import partial

from ..text import k8syaml
from ..claims import equals
from ..errors import format_path
from ..frameworks import profile as get_profile
from ..frameworks.base import OperatorSide
from ..runtime.compare import EnvDiff, compare_env
from ..runtime.jobset_view import jobset_world
from ..runtime.lifecycle import jobset_lifecycle, operator_lifecycle
from ..runtime.operator_view import operator_world
from ..runtime.structure import (
    Difference,
    Equivalence,
    compare_files,
    compare_lifecycle,
    compare_pods,
    stale_addresses,
)
from ..targets import target_of
from ..text.yamlio import position
from .explain import explain
from .model import FileError, FileReport, FileWarning, Finding, JobReport, Report, sort_findings

# Numbers kf2jobset itself reads (the others are copied as written, so Kubernetes reads the copy alike).
NUMBERS_READ = {"replicas", "containerPort", "slotsPerWorker", "backoffLimit", "activeDeadlineSeconds",
                "ttlSecondsAfterFinished", "minAvailable", "scheduleTimeoutSeconds", "minReplicas",
                "maxReplicas", "maxRestarts", "rdzvPort", "nProcPerNode", "nprocPerNode"}

_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")
_TOP = ("metadata", "spec", "apiVersion", "kind", "status")


def build_report(results, options, fail_on: str = "breaking") -> Report:
    files = [file_report(r, options) for r in results]
    return Report(files=files, fail_on=fail_on, parameters=parameters(options), runtimes=runtimes_needed(results))


def runtimes_needed(results) -> list[tuple]:
    """The runtimes the TrainJobs of a run name, and how each gets installed: (name, kind, how, TrainJobs)."""
    from ..targets.bundle_catalog import describe
    from ..targets.bundle_gang import GANG_ANNOTATION, parse

    seen: dict = {}
    for r in results:
        for conv in r.conversions:
            for obj in conv.output or ():
                if obj.get("kind") != "TrainJob":
                    continue
                ref = (obj.get("spec") or {}).get("runtimeRef") or {}
                kind = ref.get("kind") or "ClusterTrainingRuntime"
                gang = parse((obj.get("metadata") or {}).get("annotations", {}).get(GANG_ANNOTATION))
                how = describe(ref.get("name"), gang) if kind == "ClusterTrainingRuntime" else "per-job (written beside the TrainJob)"
                key = (ref.get("name"), kind, how)
                seen[key] = (key[0], kind, how, seen.get(key, (0, 0, 0, 0))[3] + 1)
    return sorted(seen.values(), key=lambda r: (r[1] != "ClusterTrainingRuntime", r[0] or ""))


def parameters(options) -> dict:
    return {
        "jobsetVersion": "v{}.{}".format(*options.jobset_version),
        "scheduler": options.scheduler,
        "name": options.name,
        "subdomain": options.subdomain,
        "keepKubeflowLabels": options.keep_kubeflow_labels,
        "sshSecret": options.ssh_secret,
        "acceptMpiSsh": options.accept_mpi_ssh,
        "mpiHostfile": options.mpi_hostfile,
        "clusterDomain": options.cluster_domain,
        "katib": options.katib,
        **({"v1PodServices": True} if options.v1_pod_services else {}),
        # only for a target other than the default, so JobSet reports read as before
        **target_of(options).report_parameters(options),
    }


def file_report(result, options) -> FileReport:
    out = FileReport(path=result.path)
    for err in result.errors:
        for p in err.problems:
            loc = p.location
            msg = p.message + (f" (hint: {p.hint})" if p.hint else "")
            out.errors.append(FileError(msg, loc.line, loc.column, loc.document, getattr(err, "kind", "input"),
                                        format_path(loc.path) if loc.path else None, p.rule or None))
    # the message as the listing words it (it may name the file: `kf2jobset resize FILE ...`)
    out.warnings = [FileWarning(e.category, e.label, e.listing(result.path).split(f": {e.category}: ", 1)[1], e.line,
                                e.listing(result.path)) for e in result.edited]
    for doc, res in zip(result.documents, result.results, strict=False):
        for i, conv in enumerate(res.conversions):
            embedded = _embedded_path(doc.data, conv.job.source, res.embedded_paths, i)
            out.jobs.append(job_report(conv, doc, embedded, options))
    return out


def _embedded_path(data, source, katib_paths, i) -> tuple:
    if data is source or data == source:
        return ()
    if i < len(katib_paths):
        return tuple(katib_paths[i])
    items = data.get("items") if isinstance(data, dict) else None
    if isinstance(items, list):
        for n, item in enumerate(items):
            if item is source or item == source:
                return ("items", n)
    return ()


def job_report(conv, doc, embedded: tuple, options) -> JobReport:
    job = conv.job
    source = _subtree(doc.data, embedded) if embedded else doc.data
    if source is None:
        source = job.source
    meta = conv.jobset.get("metadata") or {}
    report = JobReport(
        kind=job.kind, api_version=job.written_api_version, name=job.display_name(), namespace=job.namespace,
        jobset=meta.get("name"), document=doc.index,
        line=position(doc.data, embedded, doc.start_line)[0] if embedded else doc.start()[0],
        embedded_path=format_path(embedded) if embedded else None,
        replica_types=list(job.replicas),
        written_kind=target_of(options).kind_written,
    )
    findings: list[Finding] = []

    # How Kubernetes reads the scalars of the v1 job (YAML 1.1), and the worlds built from that.
    readings = k8syaml.readings(source) if hasattr(source, "ca") else []  # JSON/API objects have no plain scalars
    # convert_job already parsed the Kubernetes reading of the job, and the dumper quotes every string
    # YAML 1.1 would not keep as text, so both worlds below are what Kubernetes runs.
    findings += _reading_findings(readings, conv)
    op_job = job
    jobset = conv.jobset
    companions = conv.companions

    op = operator_world(op_job, cluster_domain=options.cluster_domain)
    # Pods are paired by role and replica index, also where one replica type spans two replicatedJobs.
    js = jobset_world(jobset, cluster_domain=options.cluster_domain, roles=conv.pods.pod_roles,
                      containers=getattr(conv.pods, "container_names", None))
    roles = {spec.rjob_name: t for t, spec in op_job.replicas.items()}
    pod_roles = {p.key[0]: p.role for p in op.pods}

    diffs: list[Difference] = []
    same: list[Equivalence] = []
    env_diffs, env_same = compare_env(op, js)
    for e in env_diffs:
        d = _env_difference(e, pod_roles, op, js)
        if d is not None:
            diffs.append(d)
    for m in env_same:
        same.append(Equivalence("env", m.var, m.operator_value, m.jobset_value, m.addresses,
                                role=pod_roles.get(m.pod[0]), pod=m.pod, container=m.container))
    d, s = compare_pods(op, js)
    diffs += d
    same += s
    lifecycle_roles = {n: tuple(s[0] for s in r) if isinstance(r, list) else r[0] for n, r in conv.pods.pod_roles.items()}
    target_lifecycle = jobset_lifecycle(jobset, companions, lifecycle_roles)
    target_lifecycle.job.update(conv.lifecycle_overrides)
    diffs += compare_lifecycle(operator_lifecycle(op_job), target_lifecycle, roles)
    d, s = compare_files(_operator_files(op_job, op, options), _jobset_files(op_job, js, companions), op, js)
    diffs += d
    same += s

    def pod_rjob(pod: tuple):
        """(role, index) -> the replicatedJob holding that pod."""
        for name, first, count in conv.pods.segments.get(pod_roles.get(pod[0]), []):
            if first <= pod[1] < first + count:
                return name
        return None

    names = getattr(conv.pods, "container_names", None) or {}
    renamed = {v1: ours for m in [names, *(v for v in names.values() if isinstance(v, dict))]
               for ours, v1 in m.items() if isinstance(v1, str)}
    findings += explain(conv.notes, diffs, same, conv.pods.rjob_names, pod_roles, pod_rjob, renamed)
    for f in findings:
        if conv.upgrade is not None and f.source_path and not f.source_path.startswith("("):
            f.source_path = conv.upgrade.old_path_text(f.source_path)  # where it was written in the older version
        _locate(f, doc, embedded)
    report.findings = sort_findings(findings, list(job.replicas))
    report.defaults = [(format_path(d.path), str(d.value), d.why) for d in job.defaults]
    return report




def _subtree(data, path):
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _env_difference(e: EnvDiff, pod_roles: dict, op, js) -> Difference | None:
    if e.change in ("pod-missing", "pod-extra", "container-missing"):
        return None  # compare_pods reports pods and containers
    role = pod_roles.get(e.pod[0])
    if e.change == "value":
        found = stale_addresses(e.operator_value, e.jobset_value, op, js)
        if found:
            return Difference("address", found[0], "changed", e.operator_value, e.jobset_value, role=role, pod=e.pod, container=e.container)
        return Difference("env", e.var, "changed", e.operator_value, e.jobset_value, role=role, pod=e.pod, container=e.container)
    if e.change == "order":
        return Difference("env", "*order*", "changed", e.operator_value, e.jobset_value, role=role, pod=e.pod, container=e.container)
    return Difference("env", e.var, e.change, e.operator_value, e.jobset_value, role=role, pod=e.pod, container=e.container)


def _operator_files(job, op, options) -> dict:
    """Files the operator mounted into the job's pods (the MPI launcher's /etc/mpi): the profile says which."""
    side_of = partial(OperatorSide, job, op.name, op.namespace, cluster_domain=options.cluster_domain)
    return get_profile(job.mapping.profile).operator_files(job, side_of)


def _jobset_files(job, js, companions) -> dict:
    """The same files as the JobSet's pods find them."""
    return get_profile(job.mapping.profile).jobset_files(js, companions)


def _reading_claims(r, conv) -> dict:
    """Where the scalar went in the JobSet, holding what Kubernetes read from the v1 text."""
    job, path = conv.job, tuple(r.path)
    target = None
    if r.kind != "key" and len(path) == 3 and path[0] == "metadata" and path[1] in ("labels", "annotations"):
        target = [f"metadata.{path[1]}[{path[2]}]"]
    elif r.kind != "key" and len(path) > 3 and path[:2] == ("spec", job.mapping.replica_specs_field):
        spec = next((s for s in job.replicas.values() if s.source_key == path[2]), None)
        rjobs = conv.pods.rjob_names_of(spec.type) if spec else []
        rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[4:])
        if path[3] == "template" and rjobs:
            target = [f"spec.replicatedJobs[{n}].template.spec.template{rest}" for n in rjobs]
        elif path[3:] == ("replicas",) and len(rjobs) == 1:
            target = [f"spec.replicatedJobs[{rjobs[0]}].replicas"]
    if target is None:
        return {"unchecked": "the scalar sits where the JobSet has no place named after it (a key, a run field, "
                             "a framework field); the conversion read it the Kubernetes way (tests/test_report_k8syaml.py)"}

    return {"claims": tuple(equals(t, r.kubernetes) for t in target)}


def _reading_findings(readings, conv) -> list[Finding]:
    out = []
    for r in readings:
        path = format_path(r.path)
        claimed = _reading_claims(r, conv)
        if r.kind == "octal" and r.path and r.path[-1] in NUMBERS_READ:
            out.append(Finding("K8S002", "rewritten",
                               f"{path}: {r.describe()}; kf2jobset converts with {r.kubernetes}, as the operator ran it",
                               source_path=path, action=f"write it as {r.kubernetes} (decimal) so every reader agrees",
                               **claimed))
        elif r.kind == "octal":
            f = Finding("K8S002", "unchanged",
                        f"{path}: {r.describe()}; the JobSet keeps the text, so Kubernetes reads it alike",
                        source_path=path, action=f"write 0o{r.text.lstrip('0')} or {r.kubernetes} to make the intent explicit",
                        **claimed)
            out.append(f)
        else:
            out.append(Finding("K8S001", "unchanged",
                               f"{path}: {r.describe()}; the JobSet keeps the text, so Kubernetes reads it alike",
                               source_path=path, action=f"quote it ('{r.text}') if you mean the text", **claimed))
    return out



# ---------------------------------------------------------------- locations

def split_path(text: str) -> list:
    out = []
    for m in _TOKEN.finditer(text):
        if m.group(1) is not None:
            out.append(m.group(1))
        else:
            inner = m.group(2)
            out.append(int(inner) if inner.isdigit() else inner)
    return out


def _resolve(node, parts: list) -> tuple:
    """The path as keys that exist in the document (case-insensitive for replica types)."""
    fixed = []
    for part in parts:
        if isinstance(node, dict):
            if part not in node and isinstance(part, str):
                part = next((k for k in node if str(k).lower() == part.lower()), part)
            if part not in node:
                if isinstance(part, str):
                    # a container by name: [pytorch]
                    break
                break
            fixed.append(part)
            node = node[part]
        elif isinstance(node, list):
            if isinstance(part, int) and part < len(node):
                fixed.append(part)
                node = node[part]
                continue
            idx = next((i for i, v in enumerate(node) if isinstance(v, dict) and v.get("name") == part), None)
            if idx is None:
                break
            fixed.append(idx)
            node = node[idx]
        else:
            break
    return tuple(fixed)


def _locate(f: Finding, doc, embedded: tuple) -> None:
    if not f.source_path or f.source_path.startswith("("):
        return
    parts = split_path(f.source_path)
    text = f.source_path
    if parts and parts[0] not in _TOP:
        parts = ["spec"] + parts
        text = "spec." + text
    base = _subtree(doc.data, embedded) if embedded else doc.data
    if embedded and isinstance(base, str):  # job text inside a string scalar (kf2jobset/sources/jobs_in_strings.py): its line
        f.source_path = f"{format_path(embedded)}.{text}"
        f.line, f.column = position(doc.data, tuple(embedded), doc.start_line)
        return
    fixed = _resolve(base, parts)
    if embedded:
        outer = _resolve(doc.data, parts)
        if len(fixed) < len(parts) and len(outer) == len(parts):
            embedded = ()  # a note about the wrapper (e.g. the Katib Experiment), not the job inside it
            fixed = outer
    f.source_path = f"{format_path(embedded)}.{text}" if embedded else text
    line, col = position(doc.data, tuple(embedded) + fixed, doc.start_line)
    if line is not None:
        f.line, f.column = line, col
