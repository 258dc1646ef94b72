"""Helpers shared by the renderers: headings, evidence summaries, counts in words."""
from __future__ import annotations

from dataclasses import dataclass

from .codes import title
from .model import CATEGORIES, RANK, Evidence, FileReport, Finding, JobReport, Report, fails

# Shown in summaries, worst first; `unchanged` is informational and left out of the headline.
HEADLINE = tuple(reversed(CATEGORIES[1:]))

# Findings whose evidence is repetitive by nature: human formats show one example line.
EXAMPLE_ONLY = ("RT001", "RT002")

ASPECT_WORDS = {
    "env": "env {s}",
    "init": "init container {s}",
    "container": "container {s}",
    "command": "command/args",
    "port": "port {s}",
    "mount": "mount {s}",
    "restartPolicy": "restartPolicy",
    "hostname": "hostname",
    "dns": "address",
    "pod": "pod",
    "lifecycle": "{s}",
    "start": "start order",
    "failure": "when a pod fails",
    "backoffLimit": "retries",
    "hostfile": "hostfile",
    "file": "/etc/mpi/{s}",
    "address": "address {s}",
}


def job_title(job: JobReport) -> str:
    ns = f"{job.namespace}/" if job.namespace else ""
    kind = job.written_kind
    target = f"{kind} {job.jobset}" if job.jobset else f"{kind} (named at creation)"
    inside = f" in {job.embedded_path}" if job.embedded_path else ""
    return f"{job.kind} {ns}{job.name}{inside} -> {target}"


def counts_text(counts: dict, sep: str = ", ") -> str:
    parts = [f"{counts[c]} {c}" for c in HEADLINE if counts.get(c)]
    return sep.join(parts) if parts else "no changes"


def warnings_text(report: Report) -> str | None:
    """`1 resized (warning)`: what the files hold that no --fail-on counts, or None."""
    by: dict[str, int] = {}
    for w in report.warnings:
        by[w.category] = by.get(w.category, 0) + 1
    if not by:
        return None
    n = sum(by.values())
    return ", ".join(f"{k} {c}" for c, k in by.items()) + f" (warning{'s' if n != 1 else ''})"


def group_name(f: Finding) -> str:
    return f.replica_type or "whole job"


def groups(job: JobReport) -> list[tuple[str, list[Finding]]]:
    """Findings by replica type (job-wide first, then the job's replica order), worst first in each."""
    order: list[str] = []
    buckets: dict[str, list[Finding]] = {}
    for f in job.findings:
        g = group_name(f)
        if g not in buckets:
            buckets[g] = []
            order.append(g)
    for f in job.findings:
        buckets[group_name(f)].append(f)
    known = ["whole job"] + list(job.replica_types)
    order.sort(key=lambda g: known.index(g) if g in known else len(known))
    return [(g, sorted(buckets[g], key=lambda f: -f.rank)) for g in order]


def evidence_label(e: Evidence) -> str:
    return ASPECT_WORDS.get(e.aspect, e.aspect + " {s}").format(s=e.subject)


def _pods(wheres: list[str]) -> str:
    """`worker/0, worker/1, worker/2` -> `worker/0-2`."""
    by_role: dict[str, list] = {}
    plain = []
    for w in wheres:
        head = w.split(" ")[0]
        if "/" in head and head.split("/")[1].isdigit():
            role, idx = head.split("/")
            by_role.setdefault(role, []).append(int(idx))
        elif head not in plain:
            plain.append(head)
    out = list(plain)
    for role, idxs in by_role.items():
        idxs = sorted(set(idxs))
        runs, start = [], idxs[0]
        for a, b in zip(idxs, idxs[1:] + [None], strict=False):
            if b != a + 1:
                runs.append(f"{start}" if start == a else f"{start}-{a}")
                start = b
        out.append(f"{role}/{','.join(runs)}")
    return ", ".join(out)


def evidence_lines(f: Finding, limit: int = 4) -> list[str]:
    """One line per kind of difference; pods with the same difference are merged (worker/0-3)."""
    merged: dict[tuple, list[str]] = {}
    for e in f.evidence:
        key = (e.aspect, e.subject, e.change, _shape(e.operator, e.where), _shape(e.jobset, e.where))
        merged.setdefault(key, []).append(e.where)
    lines = []
    for (aspect, subject, change, _, _), wheres in merged.items():
        e = next(x for x in f.evidence if x.aspect == aspect and x.subject == subject and x.change == change and x.where == wheres[0])
        who = _pods(wheres)
        label = evidence_label(e)
        if change == "missing":
            detail = f"{label} only under v1" + (f" ({_clip(e.operator)})" if e.operator and e.operator != subject else "")
        elif change == "extra":
            detail = f"{label} only under JobSet" + (f" ({_clip(e.jobset)})" if e.jobset and e.jobset != subject else "")
        else:
            detail = f"{label}: v1: {_clip(e.operator)}; JobSet: {_clip(e.jobset)}"
        lines.append(f"{who}: {detail}")
    if len(lines) > limit:
        rest = len(lines) - (limit - 1)
        if limit == 1:
            lines = ["e.g. " + lines[0]]
        else:
            lines = lines[: limit - 1] + [f"... and {rest} more (see the JSON report)"]
    return lines


def _shape(value: str | None, where: str) -> str | None:
    """A value with the pod's own name/index blurred, so per-pod variants merge."""
    if value is None:
        return None
    head = where.split(" ")[0]
    if "/" in head:
        role, idx = head.split("/", 1)
        value = value.replace(f"-{role}-{idx}", f"-{role}-#")
    return value


def _clip(value: str | None, width: int = 90) -> str:
    if value is None:
        return "(none)"
    value = value.replace("\n", "\\n")
    return value if len(value) <= width else value[: width - 3] + "..."


def location(f: Finding, path: str) -> str | None:
    if not f.source_path:
        return None
    return f"{path}:{f.line}" if f.line else path


def verdict(report: Report) -> str:
    failing = report.failing()
    if report.errors:
        return f"{len(report.errors)} error(s): some input could not be converted"
    if failing:
        return f"{len(failing)} finding(s) at or above --fail-on {report.fail_on}"
    return f"nothing at or above --fail-on {report.fail_on}"


def fails_for(f: Finding, report: Report) -> bool:
    return fails(f.category, report.fail_on)


def file_jobs(report: Report) -> list[tuple[FileReport, JobReport]]:
    return [(fr, j) for fr in report.files for j in fr.jobs]


# ---------------------------------------------------------------------------------------------
# several jobs: one summary row per code, then only what sets a job apart


@dataclass
class CodeSummary:
    """One finding code across the report's jobs: the variant most jobs share, and who has the code."""

    code: str
    category: str  # the worst category the code has in any job
    jobs: list  # [(FileReport, JobReport)] that have the code, in report order
    example: Finding  # the first finding of the shared variant (message/action with job names as <job>)
    example_job: JobReport
    message: str
    action: str | None
    shared: set  # ids of the jobs whose findings of this code are the shared variant
    more: tuple = ()  # the shared variant's other findings of this code (Worker beside Master, args[2] beside args[1])


def job_id(fr: FileReport, job: JobReport) -> tuple:
    return (fr.path, job.document, job.embedded_path or "")


def generic(text: str | None, job: JobReport) -> str | None:
    """The text with the job's own names written as <job>, so that jobs alike read alike."""
    if not text:
        return text
    for name in sorted({n for n in (job.jobset, job.name) if n and len(n) > 2}, key=len, reverse=True):
        text = text.replace(name, "<job>")
    return text


def _variant(findings: list[Finding], job: JobReport) -> tuple:
    if findings[0].code in EXAMPLE_ONLY:  # "reaches the same pods (worker/0-3)": alike whatever the pod count
        return tuple(sorted(f.category for f in findings))
    return tuple(sorted((f.category, f.replica_type or "", f.pod or "", generic(f.message, job) or "",
                         generic(f.action, job) or "") for f in findings))


def _located(f: Finding, job: JobReport) -> str:
    """A finding's message with the pod it is about, when it names one (as the per-job view shows it)."""
    text = generic(f.message, job) or ""
    return f"[{f.pod}] {text}" if f.pod and f.scope == "pod" else text


def by_code(report: Report) -> list[CodeSummary]:
    """Codes worst first (then by code); each with its most common variant across jobs."""
    per_code: dict[str, list] = {}
    for fr, job in file_jobs(report):
        mine: dict[str, list[Finding]] = {}
        for f in job.findings:
            mine.setdefault(f.code, []).append(f)
        for code, findings in mine.items():
            per_code.setdefault(code, []).append((fr, job, findings))
    out = []
    for code, entries in per_code.items():
        variants: dict[tuple, list] = {}
        for fr, job, findings in entries:
            variants.setdefault(_variant(findings, job), []).append((fr, job, findings))
        shared = max(variants.values(), key=len)  # ties: the first seen (dicts keep order)
        fr0, job0, findings0 = shared[0]
        example = sorted(findings0, key=lambda f: -f.rank)[0]
        worst = max((f for _, _, fs in entries for f in fs), key=lambda f: f.rank).category
        message = title(code) if code in EXAMPLE_ONLY else generic(example.message, job0) or ""
        others = () if code in EXAMPLE_ONLY else tuple(dict.fromkeys(
            m for m in (_located(f, job0) for f in sorted(findings0, key=lambda f: -f.rank)[1:]) if m and m != message))
        out.append(CodeSummary(code, worst, [(fr, job) for fr, job, _ in entries], example, job0,
                               message, generic(example.action, job0),
                               {job_id(fr, job) for fr, job, _ in shared}, others))
    return sorted(out, key=lambda s: (-RANK[s.category], s.code))


def apart(report: Report, summaries: list[CodeSummary]) -> list[tuple[FileReport, JobReport, list[Finding]]]:
    """Per job, the findings the summary does not already say (a code whose variant differs from the shared one)."""
    shared = {s.code: s.shared for s in summaries}
    out = []
    for fr, job in file_jobs(report):
        own = [f for f in job.findings if job_id(fr, job) not in shared.get(f.code, set())]
        if own:
            out.append((fr, job, own))
    return out


def job_names(jobs: list, limit: int = 6) -> str:
    names = [j.name for _, j in jobs]
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")

def runtime_lines(runtimes) -> list[str]:
    """One line per ClusterTrainingRuntime named, one for all the per-job runtimes (also the Markdown's)."""
    def jobs(n):
        return f"{n} TrainJob{'s' if n != 1 else ''}"

    out = [f"{name}: {how}, {jobs(n)}" for name, kind, how, n in runtimes if kind == "ClusterTrainingRuntime"]
    own = [n for _, kind, _, n in runtimes if kind != "ClusterTrainingRuntime"]
    if own:
        out.append(f"{len(own)} per-job TrainingRuntimes, written beside their TrainJobs ({jobs(sum(own))})"
                   if len(own) > 1 or own[0] > 1 else "1 per-job TrainingRuntime, written beside the TrainJob")
    return out
