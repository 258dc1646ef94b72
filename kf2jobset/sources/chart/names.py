"""A JobSet name the values write, held to JobSet's name-length rules when the chart renders.

The post-renderer refuses a JobSet whose name leaves no room for its child Jobs' and pods' names
(kf2jobset/k8s/validate.py: `<jobset>-<rjob>-<job index>-<pod index>-xxxxx` within 63 characters, the
child Job `<jobset>-<rjob>-<index>` too). A release name only known at install can be that long, so the
converted template checks it where it writes the name: for each replicatedJob, the name's length plus
the rjob's name and the digits of its last index (its count may come from the values) must fit, else
`fail` with the post-renderer's reason. Pure: the base conversion and the template text in, text out.
"""
from __future__ import annotations

import re

from ...targets import target_of

POD_BUDGET = 54  # name + rjob + job index digits + pod index digits, before `-xxxxx` and 4 dashes
JOB_BUDGET = 61  # name + rjob + job index digits, with 2 dashes: at most 63


def guard(work, text: str) -> str:
    """The template with the check written above the JobSet's name (unchanged when the name is fixed)."""
    if not target_of(work.options).writes_the_jobset or not work.conversions:
        return text  # a TrainJob: Trainer names the JobSet, its own rules apply
    jobset = work.conversions[0].jobset
    name = str((jobset.get("metadata") or {}).get("name") or "")
    if not re.search(r"kfq[ab][0-9]{4}z", name):
        return text
    lines = text.split("\n")
    at = _name_line(lines)
    if at is None:
        return text
    value = lines[at].split("name:", 1)[1].strip()
    checks = []
    for rj in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        rname = str(rj.get("name") or "")
        completions = ((rj.get("template") or {}).get("spec") or {}).get("completions") or 1
        fixed = POD_BUDGET - len(rname) - len(str(max(completions - 1, 0)))
        count = _count_of(work, rj.get("replicas", 1))
        digits = f"(len (toString (sub (int ({count})) 1)))" if count else str(len(str(max(rj.get("replicas", 1) - 1, 0))))
        checks.append(f"(gt (add (len $kfname) {digits}) {min(fixed, JOB_BUDGET - len(rname))})")
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip(" "))]
    test = checks[0] if len(checks) == 1 else "or " + " ".join(checks)
    said = ("kf2jobset: JobSet name %s is too long for its child Jobs and pods (JobSet's name-length limits: "
            "the post-renderer refuses it too)")
    lines[at:at] = [f"{indent}{{{{- $kfname := {_printed(value)} }}}}",
                    f'{indent}{{{{- if {test} }}}}{{{{ fail (printf "{said}" $kfname) }}}}{{{{ end }}}}']
    return "\n".join(lines)


def _name_line(lines: list) -> int | None:
    """The JobSet's `metadata.name` line (the first document that is a JobSet)."""
    kind = False
    for i, line in enumerate(lines):
        if line.startswith("kind: JobSet"):
            kind = True
        elif kind and re.match(r"^  name: ", line):
            return i
    return None


def _count_of(work, replicas) -> str | None:
    """The pipeline of a replica count the values write, when `replicas` is its stand-in."""
    p = work.program
    for share, (v0, _) in p.plan.counts.items():
        if replicas == v0:
            key = next(k for k in p.slots if p.share.get(k, k) == share)
            return p.slots[key].source
    return None


def _printed(value: str) -> str:
    """A scalar of the template (`{{ .Release.Name }}-train`) as one Go expression: print of its pieces."""
    if value[:1] in "\"'" and value[-1:] == value[:1]:
        value = value[1:-1]
    pieces = re.split(r"\{\{-?\s*(.*?)\s*-?\}\}", value)
    args = []
    for n, piece in enumerate(pieces):
        if n % 2:
            args.append(f"({piece})")
        elif piece:
            args.append('"' + piece.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return "print " + " ".join(args) if len(args) > 1 else (args[0] if args else '""')
