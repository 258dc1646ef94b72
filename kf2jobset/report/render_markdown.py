"""Markdown for a pull-request comment: counts first, then one section per job.

Per job, findings that need a decision (breaking, dropped, approximated, unexplained) come first in
a table, worst first and by replica type; changes that keep their meaning (rewritten, unchanged)
and the runtime evidence are folded into <details> blocks so the comment stays short.
"""
from __future__ import annotations

from .common import EXAMPLE_ONLY, HEADLINE, evidence_lines, job_title, verdict
from .model import RANK, Report

_MARK = {
    "unexplained": "🟣 unexplained",
    "breaking": "🔴 breaking",
    "dropped": "🟠 dropped",
    "approximated": "🟡 approximated",
    "rewritten": "🟢 rewritten",
    "unchanged": "⚪ unchanged",
}
ATTENTION = RANK["approximated"]


def _cell(text: str | None) -> str:
    if not text:
        return ""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


def _where(f) -> str:
    if f.pod and f.scope == "pod":
        return f"{f.replica_type} `{f.pod}`" if f.replica_type else f"`{f.pod}`"
    return f.replica_type or "job"


def _rows(findings, path: str) -> list[str]:
    rows = ["| | code | where | what changes |", "|---|---|---|---|"]
    for f in findings:
        what = _cell(f.message)
        if f.source_path:
            what += f"<br>at `{_cell(f.source_path)}`" + (f" (line {f.line})" if f.line else "")
        if f.action:
            what += f"<br>**Action:** {_cell(f.action)}"
        rows.append(f"| {_MARK[f.category]} | `{f.code}` | {_where(f)} | {what} |")
    return rows


def _order(job):
    types = ["whole job"] + list(job.replica_types)

    def key(f):
        g = f.replica_type or "whole job"
        return (-f.rank, types.index(g) if g in types else len(types), f.code)

    return sorted(job.findings, key=key)


def render(report: Report) -> str:
    counts = report.counts()
    jobs = report.jobs
    out = ["## kf2jobset: what changes when these jobs run as JobSets", ""]
    headline = " · ".join(f"**{counts[c]}** {_MARK[c].split(' ', 1)[0]} {c}" for c in HEADLINE if counts.get(c))
    out.append(f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} in {len(report.files)} file"
               f"{'s' if len(report.files) != 1 else ''}: {headline or 'no changes'}. Result: {verdict(report)}.")
    out.append("")
    if len(jobs) > 1:
        out += ["| file | job | JobSet | " + " | ".join(HEADLINE) + " |", "|---|---|---|" + "---:|" * len(HEADLINE)]
        for fr in report.files:
            for j in fr.jobs:
                c = j.counts()
                out.append(f"| `{_cell(fr.path)}` | {j.kind} `{_cell(j.name)}` | `{_cell(j.jobset or '(generated)')}` | "
                           + " | ".join(str(c[k]) if c[k] else "" for k in HEADLINE) + " |")
        out.append("")
    for fr in report.files:
        for err in fr.errors:
            where = f"`{_cell(fr.path)}`" + (f" line {err.line}" if err.line else "") + (
                f", column {err.column}" if err.line and err.column else "") + (
                f", document {err.document + 1}" if err.document is not None else "") + (
                f", at `{_cell(err.path)}`" if err.path else "")
            out += [f"> **Error** in {where}: {_cell(err.text())}", ""]
        if not fr.jobs and not fr.errors:
            out += [f"`{fr.path}`: no Kubeflow jobs.", ""]
        for job in fr.jobs:
            out.append(f"### `{fr.path}`" + (f" (line {job.line})" if job.line else "") + f": {_cell(job_title(job)).replace(' -&gt; ', ' → ')}")
            out.append("")
            ordered = _order(job)
            attention = [f for f in ordered if f.rank >= ATTENTION]
            calm = [f for f in ordered if f.rank < ATTENTION]
            if attention:
                out += _rows(attention, fr.path)
            else:
                out.append("Nothing here needs a decision: every change keeps its meaning.")
            out.append("")
            if calm:
                out.append(f"<details><summary>{len(calm)} {'change that keeps its' if len(calm) == 1 else 'changes that keep their'} meaning</summary>")
                out.append("")
                out += _rows(calm, fr.path)
                out += ["", "</details>", ""]
            with_evidence = [f for f in ordered if f.evidence]
            if with_evidence:
                total = sum(len(f.evidence) for f in with_evidence)
                out.append(f"<details><summary>Runtime evidence: {total} pod-level difference{'s' if total != 1 else ''}</summary>")
                out.append("")
                for f in with_evidence:
                    lines = evidence_lines(f, limit=1 if f.code in EXAMPLE_ONLY else 6)
                    out.append(f"- `{f.code}`: " + _cell(lines[0]))
                    out += [f"  - {_cell(line)}" for line in lines[1:]]
                out += ["", "</details>", ""]
            if job.defaults:
                out.append(f"<details><summary>{len(job.defaults)} operator default{'s' if len(job.defaults) != 1 else ''} made explicit</summary>")
                out.append("")
                out += [f"- `{_cell(p)}` = `{_cell(v)}`: {_cell(w)}" for p, v, w in job.defaults]
                out += ["", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"
