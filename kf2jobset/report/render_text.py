"""Human text for a terminal: per file and job, findings grouped by replica type, worst first."""
from __future__ import annotations

import textwrap

from .common import (
    EXAMPLE_ONLY,
    counts_text,
    evidence_lines,
    groups,
    job_title,
    verdict,
)
from .model import Report

_COLORS = {
    "unexplained": "\033[1;35m",
    "breaking": "\033[1;31m",
    "dropped": "\033[33m",
    "approximated": "\033[33m",
    "rewritten": "\033[32m",
    "unchanged": "\033[2m",
}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"
WIDTH = 100
LABEL = 13  # width of the category column


def render(report: Report, *, color: bool = False) -> str:
    def paint(text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if color else text

    out: list[str] = []
    for fr in report.files:
        for err in fr.errors:
            out.append(paint(f"{err.where(fr.path)}: error: {err.text()}", _COLORS["breaking"]))
        if not fr.jobs and not fr.errors:
            out.append(paint(f"{fr.path}: no Kubeflow jobs", _DIM))
        for job in fr.jobs:
            if out:
                out.append("")
            head = f"{fr.path}:{job.line}: " if job.line else f"{fr.path}: "
            out.append(paint(head + job_title(job), _BOLD))
            out.append("  " + counts_text(job.counts()))
            for name, findings in groups(job):
                out.append(f"  {name}")
                for f in findings:
                    label = f.category.ljust(LABEL)
                    lead = f"    {paint(label, _COLORS[f.category])}{f.code:<7}"
                    pad = " " * (4 + LABEL + 7)
                    text = (f"[{f.pod}] " if f.pod and f.scope == "pod" and name != "whole job" else "") + f.message
                    wrapped = textwrap.wrap(text, WIDTH - len(pad), break_on_hyphens=False) or [""]
                    out.append(lead + wrapped[0])
                    out += [pad + w for w in wrapped[1:]]
                    if f.source_path:
                        out.append(pad + paint(f"at {f.source_path}" + (f", line {f.line}" if f.line else ""), _DIM))
                    for line in evidence_lines(f, limit=1 if f.code in EXAMPLE_ONLY else 4):
                        out.append(pad + paint("- " + line, _DIM))
                    if f.action:
                        for i, w in enumerate(textwrap.wrap(f.action, WIDTH - len(pad) - 5, break_on_hyphens=False)):
                            out.append(pad + ("fix: " if i == 0 else "     ") + w)
    jobs = report.jobs
    files = len(report.files)
    out.append("")
    summary = (f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} in {files} file{'s' if files != 1 else ''}: "
               f"{counts_text(report.counts())}; {verdict(report)}")
    out.append(paint(summary, _BOLD))
    return "\n".join(out) + "\n"
