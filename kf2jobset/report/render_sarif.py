"""SARIF 2.1.0 for code scanning: one rule per finding code, one result per finding that changes
something (unchanged findings are left out). Locations point at the v1 manifest line."""
from __future__ import annotations

import json

from ..version import __version__
from .codes import codes, title
from .model import SEVERITY, Report

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFO_URI = "https://github.com/kf2jobset/kf2jobset"


def as_dict(report: Report) -> dict:
    rules: dict[str, dict] = {}
    results = []
    for fr in report.files:
        for err in fr.errors:
            rule = _rule(rules, "KF2JOBSET-ERROR", "input could not be converted", "error", "error")
            results.append({
                "ruleId": rule["id"], "ruleIndex": list(rules).index(rule["id"]), "level": "error",
                "message": {"text": (f"{err.path}: " if err.path else "") + err.text()},
                "locations": [_location(fr.path, err.line, err.column)],
            })
        for job in fr.jobs:
            for f in job.findings:
                if f.category == "unchanged":
                    continue
                rule = _rule(rules, f.code, title(f.code), SEVERITY[f.category], f.category)
                text = f.message + (f" Action: {f.action}" if f.action else "")
                props = {"category": f.category, "job": f"{job.kind}/{job.name}"}
                for key, value in (("replicaType", f.replica_type), ("pod", f.pod), ("sourcePath", f.source_path),
                                   ("targetPath", f.target_path), ("jobset", job.jobset)):
                    if value:
                        props[key] = value
                results.append({
                    "ruleId": f.code,
                    "ruleIndex": list(rules).index(f.code),
                    "level": SEVERITY[f.category],
                    "message": {"text": text},
                    "locations": [_location(fr.path, f.line or job.line, f.column if f.line else None)],
                    "partialFingerprints": {
                        "kf2jobset/v1": f"{fr.path}|{job.kind}/{job.name}|{f.code}|{f.replica_type or ''}|{f.pod or ''}"},
                    "properties": props,
                })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kf2jobset", "version": __version__, "informationUri": INFO_URI,
                                "rules": list(rules.values())}},
            "results": results,
            "columnKind": "unicodeCodePoints",
            "properties": {"failOn": report.fail_on, "parameters": dict(report.parameters)},
        }],
    }


def _rule(rules: dict, code: str, text: str, level: str, category: str) -> dict:
    if code not in rules:
        rules[code] = {
            "id": code,
            "name": "".join(w.capitalize() for w in text.replace("/", " ").replace("-", " ").split() if w.isalnum())[:60] or code,
            "shortDescription": {"text": text},
            "defaultConfiguration": {"level": level},
            "properties": {"category": category},
        }
        if code in codes():  # the long form (`kf2jobset explain CODE`): code scanning shows it as the rule's help
            from .codebook import long_form, markdown_entry

            entry = codes()[code]
            rules[code]["fullDescription"] = {"text": f"{entry.v1} {entry.now}"}
            rules[code]["help"] = {"text": long_form(code), "markdown": markdown_entry(code)}
    return rules[code]


def _location(path: str, line: int | None, column: int | None) -> dict:
    loc: dict = {"artifactLocation": {"uri": path.replace("\\", "/")}}
    if line:
        region = {"startLine": line}
        if column:
            region["startColumn"] = column
        loc["region"] = region
    return {"physicalLocation": loc}


def render(report: Report) -> str:
    return json.dumps(as_dict(report), indent=2, ensure_ascii=False) + "\n"
