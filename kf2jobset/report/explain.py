"""Runtime differences + mapping notes -> findings. This is where the invariant lives.

Every difference the runtime comparison finds must be accounted for:
- by a mapping note whose `explains` covers it (the note's finding then lists it as evidence), or
- by the comparison itself, for the two cases that need no decision from kf2jobset: text that
  changed but reaches the same pods (RT001, RT002: rewritten), and a value the user wrote that
  names a v1 address which no longer exists (RT010: breaking).
Anything else becomes an `unexplained` finding (RT9xx): a gap in kf2jobset, never silently dropped.

Matching rule: a note explains a difference when one of its (aspect, subject) pairs equals the
difference's (subject compared case-insensitively, "*" matches any subject, "prefix/*" any label
under that prefix), or when the note
explains ("lifecycle", R) and the difference is the per-replica-type rule R. A note that names a
replica type only explains differences of that type.
"""
from __future__ import annotations

from ..claims import pod_path, present
from ..notes import Note
from ..runtime.lifecycle import ROLE_RULES
from ..runtime.structure import Difference, Equivalence
from .model import Evidence, Finding, RANK

UNEXPLAINED_CODES = {
    "env": "RT901", "init": "RT902", "container": "RT903", "command": "RT904", "port": "RT905",
    "mount": "RT906", "restartPolicy": "RT907", "hostname": "RT908", "dns": "RT909", "pod": "RT910",
    "lifecycle": "RT911", "start": "RT911", "failure": "RT911", "backoffLimit": "RT911",
    "hostfile": "RT912", "file": "RT912",
}

DERIVED = ("derived from the emitted JobSet by the runtime comparison (report/build.py reads the JobSet's pods, "
           "env and /etc/mpi files); its evidence holds the JobSet-side values")

_CHANGE_WORDS = {"missing": "only under the operator", "extra": "only under JobSet", "changed": "differs"}


def covers(note: Note, d: Difference) -> bool:
    if note.replica_type and d.role and note.replica_type.lower() != d.role.lower():
        return False
    for aspect, subject in note.explains:
        if aspect == d.aspect and (subject == "*" or str(subject).lower() == str(d.subject).lower()):
            return True
        if aspect == d.aspect and str(subject).endswith("/*") and str(d.subject).startswith(str(subject)[:-1]):
            return True  # a label prefix: "training.kubeflow.org/*"
        if aspect == "lifecycle" and subject == d.aspect and d.aspect in ROLE_RULES:
            return True
    return False


def evidence(d: Difference) -> Evidence:
    return Evidence(d.aspect, d.subject, d.change, d.where, d.operator, d.jobset)


def explain(notes: list[Note], diffs: list[Difference], equivalences: list[Equivalence],
            rjob_names: dict, pod_roles: dict, pod_rjob=None, containers: dict | None = None) -> list[Finding]:
    """`rjob_names`: replica type -> replicatedJob name; `pod_roles`: lower-case role -> replica type;
    `pod_rjob`: (role, index) -> the replicatedJob that holds that pod (a type may span two);
    `containers`: v1 container name -> the JobSet's, where they differ (Trainer's `node`)."""
    findings: list[Finding] = []
    by_note: dict[int, Finding] = {}
    order = sorted(range(len(notes)), key=lambda i: -_rank(notes[i].category))
    for i, note in enumerate(notes):
        f = Finding(note.code, note.category, note.message, replica_type=note.replica_type,
                    source_path=note.source_path, target_path=note.target_path, action=note.action,
                    claims=note.claims, unchecked=note.unchecked)
        by_note[i] = f
        findings.append(f)

    stale: dict[tuple, Finding] = {}
    unexplained: dict[tuple, Finding] = {}
    for d in diffs:
        if d.aspect == "address":
            key = (d.subject, d.role)
            f = stale.get(key)
            if f is None:
                f = Finding(
                    "RT010", "breaking",
                    f"`{d.subject}` was the v1 address of a pod; no such name exists under the JobSet, "
                    "and this value was written by you, so kf2jobset left it as it was",
                    replica_type=d.role, container=d.container,
                    action="use the JobSet hostname (<jobset>-<replicatedJob>-<index>-0.<subdomain>) or read "
                           "the address from the env kf2jobset injects (e.g. $(MASTER_ADDR))",
                    unchecked=DERIVED,
                )
                stale[key] = f
                findings.append(f)
            f.evidence.append(evidence(d))
            continue
        match = next((by_note[i] for i in order if covers(notes[i], d)), None)
        if match is not None:
            match.evidence.append(evidence(d))
            continue
        key = (d.aspect, d.subject, d.role, d.change)
        f = unexplained.get(key)
        if f is None:
            f = Finding(
                UNEXPLAINED_CODES.get(d.aspect, "RT999"), "unexplained",
                f"{_label(d)} {_CHANGE_WORDS.get(d.change, d.change)} and no mapping note explains why",
                replica_type=d.role, container=d.container,
                action="report this to kf2jobset (it is a gap in the converter) and check the pod by hand",
                unchecked=DERIVED,
            )
            unexplained[key] = f
            findings.append(f)
        f.evidence.append(evidence(d))

    findings += _equivalence_findings(equivalences, rjob_names, pod_rjob, containers or {})
    for f in findings:
        if len({ev.where.split(" ")[0] for ev in f.evidence}) == 1 and f.evidence and "/" in f.evidence[0].where:
            f.pod = f.evidence[0].where.split(" ")[0]
    return findings


def _rank(category: str) -> int:
    return RANK[category]


def _label(d: Difference) -> str:
    a, s = d.aspect, d.subject
    return {
        "env": f"env {s}",
        "init": f"init container {s}",
        "container": f"container {s}",
        "command": "command/args",
        "port": f"port {s}",
        "mount": f"volume mount {s}",
        "restartPolicy": "pod restartPolicy",
        "hostname": "pod hostname",
        "dns": "pod address",
        "pod": "pod",
        "lifecycle": f"lifecycle rule {s}",
        "start": "start order",
        "failure": "failed-pod handling",
        "backoffLimit": "retry limit",
        "hostfile": "MPI hostfile",
        "file": f"file /etc/mpi/{s}",
    }.get(a, f"{a} {s}")


def _reaches(pods: tuple) -> str:
    names = []
    for role, index in pods:
        n = f"{role}/{index}"
        if n not in names:
            names.append(n)
    return ", ".join(names)


def _equivalence_findings(equivalences: list[Equivalence], rjob_names: dict, pod_rjob=None,
                          containers: dict | None = None) -> list[Finding]:
    """One finding per changed variable (or file), merging variables that changed identically."""
    groups: dict[tuple, list[Equivalence]] = {}
    for e in equivalences:
        groups.setdefault((e.aspect, e.subject), []).append(e)
    merged: dict[tuple, list[list[Equivalence]]] = {}
    for (aspect, _), members in groups.items():
        shape = (aspect, tuple((m.pod, m.container, m.operator, m.jobset) for m in members))
        merged.setdefault(shape, []).append(members)
    out = []
    for batches in merged.values():
        first = batches[0]
        subjects = [b[0].subject for b in batches]
        roles = {m.role for m in first}
        uniform = len({(m.operator, m.jobset) for m in first}) == 1
        rjobs = {pod_rjob(m.pod) for m in first if m.pod} if pod_rjob else set()
        f = _equivalence_finding(first[0], subjects, roles.pop() if len(roles) == 1 else None, rjob_names,
                                 tuple(r for m in first for r in m.reaches), uniform,
                                 rjobs.pop() if len(rjobs) == 1 and None not in rjobs else None, containers or {})
        for m in first:
            where = (f"{m.pod[0]}/{m.pod[1]}" + (f" {m.container}" if m.container else "")) if m.pod else (m.role or "job").lower()
            f.evidence.append(Evidence(m.aspect, ", ".join(subjects), "equivalent", where, m.operator, m.jobset))
        out.append(f)
    return out


def _equivalence_finding(e: Equivalence, subjects: list, role, rjob_names: dict, reaches: tuple,
                         uniform: bool = True, rjob: str | None = None, containers: dict | None = None) -> Finding:
    reach = _reaches(reaches)
    plural = "s" if len(set(reaches)) > 1 else ""
    names = ", ".join(subjects)
    if e.aspect == "env":
        verb = "they resolve" if len(subjects) > 1 else "it resolves"
        if uniform and len(e.operator) + len(e.jobset) <= 110:
            text = f"`{e.operator}` becomes `{e.jobset}`; {verb} to the same logical pod{plural} {reach} under JobSet DNS"
        else:
            text = (f"every address in {'them' if len(subjects) > 1 else 'it'} changes form and still reaches the same "
                    f"logical pod{plural} ({reach}) under JobSet DNS")
        rjob = rjob or rjob_names.get(role, "*")
        container = (containers or {}).get(e.container, e.container)
        return Finding(
            "RT001", "rewritten", f"{names}: {text}",
            replica_type=role, container=e.container,
            target_path=f"spec.replicatedJobs[{rjob}].template.spec.template.spec.containers[{container}].env[{names}]",
            # the values are read from the JobSet's pods (evidence); that each variable is set there is checkable
            claims=tuple(present(f"{pod_path(rjob)}.spec.containers[{container}].env[{n}]") for n in subjects),
        )
    return Finding(
        "RT002", "rewritten",
        f"/etc/mpi/{names}: the host names change form, but each line reaches the same pod{plural} ({reach})",
        replica_type=role, target_path="ConfigMap/hostfile", unchecked=DERIVED,
    )
