"""Stable JSON: the document described by schemas/report.schema.json (reportVersion 1).

Keys are camelCase; every finding carries its code, category, severity and whether it fails the
run under --fail-on. Adding fields is backwards compatible; renaming or removing one bumps
reportVersion.
"""
from __future__ import annotations

import json

from ..version import __version__
from .model import CATEGORIES, Report, fails

REPORT_VERSION = 1
SCHEMA_ID = "https://kf2jobset.dev/schemas/report.schema.json"


def as_dict(report: Report) -> dict:
    files = []
    for fr in report.files:
        jobs = []
        for j in fr.jobs:
            jobs.append({
                "kind": j.kind,
                "apiVersion": j.api_version,
                "name": j.name,
                "namespace": j.namespace,
                "jobset": j.jobset,
                **({"writtenKind": j.written_kind} if j.written_kind != "JobSet" else {}),
                "document": j.document,
                "line": j.line,
                "embeddedPath": j.embedded_path,
                "replicaTypes": list(j.replica_types),
                "counts": j.counts(),
                "worst": j.worst(),
                "defaults": [{"path": p, "value": v, "why": w} for p, v, w in j.defaults],
                "findings": [_finding(f, report) for f in j.findings],
            })
        files.append({
            "path": fr.path,
            "errors": [{"message": e.message, "kind": e.kind, "document": e.document, "line": e.line, "column": e.column,
                        "path": e.path, "rule": e.rule} for e in fr.errors],
            "jobs": jobs,
            **({"warnings": [{"category": w.category, "object": w.object, "line": w.line, "message": w.message}
                             for w in fr.warnings]} if fr.warnings else {}),
        })
    counts = report.counts()
    return {
        "$schema": SCHEMA_ID,
        "reportVersion": REPORT_VERSION,
        "tool": {"name": "kf2jobset", "version": __version__},
        "failOn": report.fail_on,
        "parameters": dict(report.parameters),
        "summary": {
            "files": len(report.files),
            "jobs": len(report.jobs),
            "errors": len(report.errors),
            "counts": {c: counts[c] for c in CATEGORIES},
            "worst": report.worst(),
            "failing": len(report.failing()),
            **({"warnings": len(report.warnings)} if report.warnings else {}),
        },
        "files": files,
        **({"runtimes": [{"name": n, "kind": k, "install": how, "trainJobs": c} for n, k, how, c in report.runtimes]}
           if report.runtimes else {}),
    }


def _finding(f, report: Report) -> dict:
    return {
        "code": f.code,
        "category": f.category,
        "severity": f.severity,
        "fails": fails(f.category, report.fail_on),
        "scope": f.scope,
        "replicaType": f.replica_type,
        "pod": f.pod,
        "container": f.container,
        "message": f.message,
        "sourcePath": f.source_path,
        "targetPath": f.target_path,
        "line": f.line,
        "column": f.column,
        "action": f.action,
        "evidence": [
            {"aspect": e.aspect, "subject": e.subject, "change": e.change, "where": e.where,
             "operator": e.operator, "jobset": e.jobset}
            for e in f.evidence
        ],
    }


def render(report: Report) -> str:
    return json.dumps(as_dict(report), indent=2, ensure_ascii=False) + "\n"
