"""Markdown for a pull-request comment: counts first, then the findings.

One job: findings that need a decision (breaking, prerequisite, dropped, approximated, unexplained)
come first in a table, worst first and by replica type; changes that keep their meaning (rewritten,
unchanged) and the runtime evidence are folded into <details> blocks so the comment stays short.
Several jobs: what to do before applying, then one row per code (how many jobs, which, the one
action), then per job only what sets it apart from those rows: ten alike jobs read as one.
"""
from __future__ import annotations

from .render_helpers import (EXAMPLE_ONLY, HEADLINE, apart, by_code, evidence_lines, generic, job_names, job_title,
                     runtime_lines, verdict, warnings_text)
from .model import RANK, Report

_MARK = {
    "unexplained": "🟣 unexplained",
    "breaking": "🔴 breaking",
    "prerequisite": "🔵 prerequisite",
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
    kinds = sorted({j.written_kind for f in report.files for j in f.jobs}) or ["JobSet"]
    out = [f"## kf2jobset: what changes when these jobs run as {' and '.join(k + 's' for k in kinds)}", ""]
    headline = " · ".join(f"**{counts[c]}** {_MARK[c].split(' ', 1)[0]} {c}" for c in HEADLINE if counts.get(c))
    warned = warnings_text(report)
    out.append(f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} in {len(report.files)} file"
               f"{'s' if len(report.files) != 1 else ''}: {headline or 'no changes'}"
               f"{'; ⚠️ ' + warned if warned else ''}. Result: {verdict(report)}.")
    out.append("")
    if warned:  # edits since conversion that no conversion repairs: before anything the jobs need
        out += ["### Warnings", ""]
        out += [f"- ⚠️ `{_cell(fr.path)}`" + (f" line {w.line}" if w.line else "") + f": {_cell(w.object)}: "
                f"{_cell(w.category)}: {_cell(w.message)}" for fr in report.files for w in fr.warnings]
        out.append("")
    if report.runtimes:
        out += ["Runtimes the TrainJobs need:", ""]
        out += [f"- {_cell(line)}" for line in runtime_lines(report.runtimes)]
        out.append("")
    if len(jobs) > 1:
        return "\n".join(out + _several(report)).rstrip("\n") + "\n"
    out += _one_by_one(report)
    return "\n".join(out).rstrip("\n") + "\n"


def _errors(fr) -> list[str]:
    out = []
    for err in fr.errors:
        where = f"`{_cell(fr.path)}`" + (f" line {err.line}" if err.line else "") + (
            f", column {err.column}" if err.line and err.column else "") + (
            f", document {err.document + 1}" if err.document is not None else "") + (
            f", at `{_cell(err.path)}`" if err.path else "")
        out += [f"> **Error** in {where}: {_cell(err.text())}", ""]
    return out


def _code_rows(summaries, total: int) -> list[str]:
    rows = ["| | code | jobs | what changes |", "|---|---|---|---|"]
    for s in summaries:
        n = len(s.jobs)
        who = f"all {n}" if n == total else f"{n}: {_cell(job_names(s.jobs))}"
        what = _cell(s.message) + "".join(f"<br>{_cell(m)}" for m in s.more)
        if len(s.shared) < n:
            k = n - len(s.shared)
            what += f"<br>({k} job{'s differ' if k != 1 else ' differs'}: see below)"
        if s.action:
            what += f"<br>**Action:** {_cell(s.action)}"
        rows.append(f"| {_MARK[s.category]} | `{s.code}` | {who} | {what} |")
    return rows


def _several(report: Report) -> list[str]:
    jobs = report.jobs
    total = len(jobs)
    out = []
    for fr in report.files:
        out += _errors(fr)
    summaries = by_code(report)
    before = [s for s in summaries if s.category in ("breaking", "prerequisite") and s.action]
    if before:
        out += ["### Before you apply", ""]
        for s in before:
            n = len(s.jobs)
            if n == 1:  # one job: its name, and its own action (no <job> left to fill in)
                who, action = s.jobs[0][1].name, s.example.action or s.action
            else:
                who = f"all {n} jobs" if n == total else f"{n} jobs: {job_names(s.jobs)}"
                action = s.action
            out.append(f"- `{s.code}` ({_cell(who)}): {_cell(action)}")
        out.append("")
    attention = [s for s in summaries if RANK[s.category] >= ATTENTION]
    calm = [s for s in summaries if RANK[s.category] < ATTENTION]
    out += ["### Findings by code", ""]
    out += _code_rows(attention, total) if attention else ["Nothing needs a decision: every change keeps its meaning."]
    out.append("")
    if calm:
        out.append(f"<details><summary>{len(calm)} code{'s' if len(calm) != 1 else ''} for changes that keep their meaning</summary>")
        out += [""] + _code_rows(calm, total) + ["", "</details>", ""]
    out += ["### Jobs", "", "| file | job | JobSet | " + " | ".join(HEADLINE) + " |", "|---|---|---|" + "---:|" * len(HEADLINE)]
    for fr in report.files:
        for j in fr.jobs:
            c = j.counts()
            out.append(f"| `{_cell(fr.path)}` | {j.kind} `{_cell(j.name)}` | `{_cell(j.jobset or '(generated)')}` | "
                       + " | ".join(str(c[k]) if c[k] else "" for k in HEADLINE) + " |")
    out.append("")
    own = apart(report, summaries)
    if own:
        out += ["### What sets a job apart", ""]
        for fr, job, findings in own:
            out.append(f"#### `{fr.path}`" + (f" (line {job.line})" if job.line else "")
                       + f": {_cell(job_title(job)).replace(' -&gt; ', ' → ')}")
            out += [""] + _rows(sorted(findings, key=lambda f: (-f.rank, f.code)), fr.path) + [""]
    examples = [s for s in summaries if s.example.evidence]
    if examples:
        out.append("<details><summary>Runtime evidence, one job per code (every pod of every job: --format json)</summary>")
        out.append("")
        for s in examples:
            lines = evidence_lines(s.example, limit=1 if s.code in EXAMPLE_ONLY else 3)
            out.append(f"- `{s.code}` (e.g. `{_cell(s.example_job.name)}`): " + _cell(generic(lines[0], s.example_job)))
            out += [f"  - {_cell(generic(line, s.example_job))}" for line in lines[1:]]
        out += ["", "</details>", ""]
    defaults: dict[tuple, int] = {}
    for j in jobs:
        for d in j.defaults:
            defaults[d] = defaults.get(d, 0) + 1
    if defaults:
        out.append(f"<details><summary>{len(defaults)} operator default{'s' if len(defaults) != 1 else ''} made explicit</summary>")
        out.append("")
        out += [f"- `{_cell(p)}` = `{_cell(v)}`: {_cell(w)} ({n} job{'s' if n != 1 else ''})" for (p, v, w), n in defaults.items()]
        out += ["", "</details>", ""]
    return out


def _one_by_one(report: Report) -> list[str]:
    out = []
    for fr in report.files:
        out += _errors(fr)
        if not fr.jobs and not fr.errors:
            out += [f"`{fr.path}`: no Kubeflow jobs.", ""]
        for job in fr.jobs:
            out.append(f"### `{fr.path}`" + (f" (line {job.line})" if job.line else "")
                       + f": {_cell(job_title(job)).replace(' -&gt; ', ' → ')}")
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
                out.append(f"<details><summary>{len(calm)} "
                           f"{'change that keeps its' if len(calm) == 1 else 'changes that keep their'} meaning</summary>")
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
                out.append(f"<details><summary>{len(job.defaults)} "
                           f"operator default{'s' if len(job.defaults) != 1 else ''} made explicit</summary>")
                out.append("")
                out += [f"- `{_cell(p)}` = `{_cell(v)}`: {_cell(w)}" for p, v, w in job.defaults]
                out += ["", "</details>", ""]
    return out
