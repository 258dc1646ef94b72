"""Human text for a terminal. One job: its findings grouped by replica type, worst first. Several
jobs: one entry per code (how many jobs, which, the one action), then per job only what sets it
apart, so that ten alike jobs read as one."""
from __future__ import annotations

import textwrap

from .render_helpers import (
    EXAMPLE_ONLY,
    apart,
    by_code,
    counts_text,
    evidence_lines,
    groups,
    job_names,
    job_title,
    runtime_lines,
    verdict,
    warnings_text,
)
from .model import Report

_COLORS = {
    "unexplained": "\033[1;35m",
    "breaking": "\033[1;31m",
    "prerequisite": "\033[1;34m",
    "dropped": "\033[33m",
    "approximated": "\033[33m",
    "rewritten": "\033[32m",
    "unchanged": "\033[2m",
}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"
WIDTH = 100
LABEL = 13  # width of the category column


class _Style:
    """How one report is laid out: colours on or off, and the indent that lines up with the message column."""

    def __init__(self, color: bool) -> None:
        self.color = color
        self.pad = " " * (4 + LABEL + 7)

    def paint(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.color else text

    def wrap(self, text: str, less: int = 0) -> list[str]:
        return textwrap.wrap(text, WIDTH - len(self.pad) - less, break_on_hyphens=False)

    def entry(self, category: str, code: str, text: str) -> list[str]:
        lead = f"    {self.paint(category.ljust(LABEL), _COLORS[category])}{code:<7}"
        wrapped = self.wrap(text) or [""]
        return [lead + wrapped[0]] + [self.pad + w for w in wrapped[1:]]

    def fix(self, action: str | None) -> list[str]:
        lines = self.wrap(action or "", 5)
        return [self.pad + ("fix: " if i == 0 else "     ") + w for i, w in enumerate(lines)]

    def finding(self, f, group: str) -> list[str]:
        text = (f"[{f.pod}] " if f.pod and f.scope == "pod" and group != "whole job" else "") + f.message
        lines = self.entry(f.category, f.code, text)
        if f.source_path:
            lines.append(self.pad + self.paint(f"at {f.source_path}" + (f", line {f.line}" if f.line else ""), _DIM))
        for line in evidence_lines(f, limit=1 if f.code in EXAMPLE_ONLY else 4):
            lines.append(self.pad + self.paint("- " + line, _DIM))
        return lines + self.fix(f.action)


def render(report: Report, *, color: bool = False) -> str:
    style = _Style(color)
    out = _file_lines(report, style)
    if len(report.jobs) > 1:
        out += _by_code_lines(report, style, blank_first=bool(out))
    else:
        out += _per_job_lines(report, style, blank_first=bool(out))
    out += _footer_lines(report, style)
    return "\n".join(out) + "\n"


def _file_lines(report: Report, style: _Style) -> list[str]:
    """Per file: its errors and warnings, or that it held no jobs."""
    out: list[str] = []
    for fr in report.files:
        for err in fr.errors:
            out.append(style.paint(f"{err.where(fr.path)}: error: {err.text()}", _COLORS["breaking"]))
        for w in fr.warnings:
            out.append(style.paint(f"warning: {w.listing}", _COLORS["approximated"]))
        if not fr.jobs and not fr.errors and len(report.jobs) <= 1:
            out.append(style.paint(f"{fr.path}: no Kubeflow jobs", _DIM))
    return out


def _by_code_lines(report: Report, style: _Style, *, blank_first: bool) -> list[str]:
    """Several jobs: one entry per code, then per job only what sets it apart."""
    jobs = report.jobs
    pad = style.pad
    summaries = by_code(report)
    out = [""] if blank_first else []
    out.append(style.paint(f"Findings by code, {len(jobs)} jobs (per pod: --format json)", _BOLD))
    for s in summaries:
        n = len(s.jobs)
        out += style.entry(s.category, s.code, s.message)
        for more in s.more:  # the shared variant's other findings of the code
            out += [pad + w for w in style.wrap(more)]
        who = f"all {n} jobs" if n == len(jobs) else f"{n} job{'s' if n != 1 else ''}: {job_names(s.jobs)}"
        if len(s.shared) < n:
            who += f" ({n - len(s.shared)} differ, below)"
        out += [pad + style.paint(w, _DIM) for w in style.wrap(who)]
        out += style.fix(s.action)
    for fr, job, findings in apart(report, summaries):
        out.append("")
        head = f"{fr.path}:{job.line}: " if job.line else f"{fr.path}: "
        out.append(style.paint(head + job_title(job), _BOLD) + style.paint("  (what sets it apart)", _DIM))
        for f in sorted(findings, key=lambda f: (-f.rank, f.code)):
            out += style.finding(f, f.replica_type or "whole job")
    return out


def _per_job_lines(report: Report, style: _Style, *, blank_first: bool) -> list[str]:
    """At most one job: its findings grouped by replica type."""
    out: list[str] = []
    for fr in report.files:
        for job in fr.jobs:
            if out or blank_first:
                out.append("")
            head = f"{fr.path}:{job.line}: " if job.line else f"{fr.path}: "
            out.append(style.paint(head + job_title(job), _BOLD))
            out.append("  " + counts_text(job.counts()))
            for name, findings in groups(job):
                out.append(f"  {name}")
                for f in findings:
                    out += style.finding(f, name)
    return out


def _footer_lines(report: Report, style: _Style) -> list[str]:
    """The totals and verdict, the runtimes the TrainJobs need, and where a code is explained."""
    jobs = report.jobs
    files = len(report.files)
    warned = warnings_text(report)
    summary = (f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} in {files} file{'s' if files != 1 else ''}: "
               f"{counts_text(report.counts())}; {warned + '; ' if warned else ''}{verdict(report)}")
    out = ["", style.paint(summary, _BOLD)]
    if report.runtimes:
        out.append("Runtimes the TrainJobs need:")
        out += [f"  {line}" for line in runtime_lines(report.runtimes)]
    worst = min((f for job in jobs for f in job.findings), key=lambda f: (-f.rank, f.code), default=None)
    if worst is not None:
        out.append(style.paint(f"What a code means: kf2jobset explain CODE (e.g. kf2jobset explain {worst.code})", _DIM))
    return out
