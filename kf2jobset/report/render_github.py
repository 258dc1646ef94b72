"""GitHub Actions workflow commands: one annotation per finding, on the v1 manifest's line.

breaking/unexplained -> ::error, prerequisite/dropped/approximated -> ::warning, rewritten -> ::notice;
unchanged findings are not annotated. Findings of a file are wrapped in a ::group::.
"""
from __future__ import annotations

from .model import Report

_LEVEL = {"unexplained": "error", "breaking": "error", "prerequisite": "warning", "dropped": "warning", "approximated": "warning",
          "rewritten": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    out = []
    for fr in report.files:
        lines = []
        for err in fr.errors:
            props = f"file={_escape_prop(fr.path)}" + (f",line={err.line}" if err.line else "")
            props += f",col={err.column}" if err.line and err.column else ""
            lines.append(f"::error {props},title=kf2jobset::{_escape_data((f'{err.path}: ' if err.path else '') + err.text())}")
        for w in fr.warnings:
            props = f"file={_escape_prop(fr.path)}" + (f",line={w.line}" if w.line else "")
            lines.append(f"::warning {props},title={_escape_prop(f'{w.category}: {w.object}')}::{_escape_data(w.message)}")
        for job in fr.jobs:
            for f in job.findings:
                level = _LEVEL.get(f.category)
                if level is None:
                    continue
                line = f.line or job.line
                props = f"file={_escape_prop(fr.path)}" + (f",line={line}" if line else "")
                if f.line and f.column:
                    props += f",col={f.column}"
                where = f" [{f.pod or f.replica_type}]" if (f.pod or f.replica_type) else ""
                title = f"{f.code} {f.category}{where}: {job.kind} {job.name}"
                text = f.message + (f"\nAction: {f.action}" if f.action else "")
                lines.append(f"::{level} {props},title={_escape_prop(title)}::{_escape_data(text)}")
        if lines:
            out.append(f"::group::kf2jobset {fr.path}")
            out += lines
            out.append("::endgroup::")
    return "\n".join(out) + ("\n" if out else "")
