"""Converted JobSets whose replicatedJobs were reshaped by hand in ways the injected values do not follow.

A value that follows the size (SZ001) reads the pod's `jobset.sigs.k8s.io/global-replicas` label, the
sum of every replicatedJob's pods; a rank reads `job-global-index`, one per Job, counted in list order (the
Jobs of the replicatedJobs listed before, then its own); a task index or process id reads `job-index`; an
address names a pod by its replicatedJob (`$(KF2JOBSET_JOBSET_NAME)-master-0-0...`). So an edit that keeps the
replicas but changes the layout breaks them silently: a replicatedJob added beside the ranks (its pods are
counted in WORLD_SIZE, or claim indexes the values gave others), replicatedJobs reordered or one added before
the ranks (the ranks move to other pods), a replicatedJob renamed or removed (addresses name pods that no
longer exist), a Job made to run several pods (they share one index: ranks and task indexes repeat). Where
values read the layout, the conversion records the replicatedJobs, in order (`kf2jobset.dev/replicated-jobs`;
a JobSet converted before it was written there reads the order of `kf2jobset.dev/sized-for`); the rest is read
from the JobSet itself. `convert --check` lists such a JobSet as `reshaped`, every other mode warns (as
`resized`, kf2jobset/checks/staleness.py).

Light to import: the YAML reader is loaded only for a file that holds kf2jobset's source record.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ..categories import RESHAPED
from .staleness import SIZED_FOR_ANNOTATION, SOURCE_ANNOTATION, parse_sized_for

LAYOUT_ANNOTATION = "kf2jobset.dev/replicated-jobs"
_GLOBAL_REPLICAS = "jobset.sigs.k8s.io/global-replicas"
_GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
_INDEXES = (_GLOBAL_INDEX, _JOB_INDEX)  # a pod's identity: its rank, task index, process id
# a pod of the JobSet named through the name variable kf2jobset writes: <jobset>-<replicatedJob>-<job>-<pod>
_POD_ADDRESS = re.compile(r"\$\(KF2JOBSET_JOBSET_NAME\)-([a-z0-9]([-a-z0-9]*[a-z0-9])?)-\d+-\d+")


def layout_record(jobset: dict) -> str:
    """The annotation's value: the replicatedJobs, in order, whose layout the values were written for."""
    return ",".join(r["name"] for r in jobset["spec"]["replicatedJobs"])


def reads_layout(jobset: dict) -> bool:
    """The values depend on the replicatedJobs' layout: they read the size label or an index label, or name a
    replicatedJob's pods (TF_CONFIG's cluster, MASTER_ADDR, ...). The conversion records the layout for these."""
    rjobs = jobset["spec"]["replicatedJobs"]
    return (any(label in p for p in _field_refs(rjobs) for label in (_GLOBAL_REPLICAS, *_INDEXES))
            or any(map(_POD_ADDRESS.search, _strings(rjobs))))


@dataclass(frozen=True)
class Reshaped:
    category: ClassVar[str] = RESHAPED
    line: int  # 1-based line of the JobSet document
    label: str  # JobSet NAME (APIVERSION)
    problems: tuple  # one sentence each
    source: str | None  # the v1 job it was converted from (kf2jobset.dev/source)

    def listing(self, path: str) -> str:
        """`FILE:LINE: KIND NAME (APIVERSION): reshaped: ...`, as --check lists it and the other modes warn."""
        return f"{path}:{self.line}: {self.label}: {RESHAPED}: {self.message()}"

    def message(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return ("; ".join(self.problems) + ": keep the replicatedJobs kf2jobset wrote (one pod per Job, their names), "
                f"or convert the v1 job{where} again after changing it")


def may_hold_layout(text: str) -> bool:
    return SOURCE_ANNOTATION in text


def _walk(node):
    """Every node of a parsed YAML tree."""
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from _walk(child)


def _strings(node) -> list[str]:
    return [n for n in _walk(node) if isinstance(n, str)]


def _field_refs(node) -> set[str]:
    """Every fieldRef.fieldPath under ``node``."""
    return {n["fieldRef"]["fieldPath"] for n in _walk(node) if isinstance(n, dict) and isinstance(n.get("fieldRef"), dict)
            and isinstance(n["fieldRef"].get("fieldPath"), str)}


def problems_of(jobset: dict, services: frozenset = frozenset(), renames_said: bool = False) -> list[str]:
    """What the layout edits broke, one sentence each (empty: nothing). ``services``: the names of the Services
    beside it (v1's per-pod names that a companion Service serves, JS066, still resolve). ``renames_said``: the
    size check (staleness.py) already named a renamed replicatedJob of this JobSet: not said twice."""
    spec = jobset.get("spec") if isinstance(jobset.get("spec"), dict) else {}
    rjobs = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict) and isinstance(r.get("name"), str)]
    names = [r["name"] for r in rjobs]
    meta = jobset.get("metadata") if isinstance(jobset.get("metadata"), dict) else {}
    ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    out: list[str] = _record_problems(rjobs, _recorded(ann), renames_said)
    referenced: dict[str, None] = {}
    for s in _strings(rjobs):
        for m in _POD_ADDRESS.finditer(s):
            referenced.setdefault(m.group(1))
    gone = [n for n in referenced if n not in names and not any(n.startswith(f"{x}-") for x in names)]
    if gone and not renames_said:
        out.append(f"addresses name pods of replicatedJob {', '.join(gone)}, which the JobSet no longer has "
                   "(renamed or removed)")
    sizes = {r["name"]: _count(r.get("replicas")) for r in rjobs}
    v1_names = _v1_pod_names(ann.get(SOURCE_ANNOTATION), sizes, _program_strings(rjobs)) - services
    if v1_names:
        out.append(f"values name {', '.join(sorted(v1_names))}: the v1 operator's per-pod names, which nothing serves "
                   "beside the JobSet (write $(KF2JOBSET_JOBSET_NAME)-<replicatedJob>-0-<index>.$(KF2JOBSET_JOBSET_NAME), "
                   "as the conversion does, or add v1's per-pod Services: --v1-pod-services)")
    for r in rjobs:
        job = (r.get("template") or {}).get("spec") if isinstance(r.get("template"), dict) else None
        if not isinstance(job, dict):
            continue
        pods = max(_count(job.get("completions")), _count(job.get("parallelism")))
        shared = _indexes_read(job.get("template"))
        if pods > 1 and shared:
            what = "the ranks read from it repeat" if shared[0] == _GLOBAL_INDEX else \
                "the index read from it (a task index, a process id) repeats: two pods claim one identity"
            out.append(f"replicatedJob {r['name']} runs {pods} pods per Job: they share one {shared[0].split('/')[-1]}, so {what}")
    return out


def _recorded(ann: dict) -> list[str]:
    """The replicatedJobs, in order, the values were written for: the layout record, or (a JobSet converted before
    the record was written for it) the names of the size record, which lists them in the same order."""
    if ann.get(LAYOUT_ANNOTATION):
        return [n.strip() for n in str(ann[LAYOUT_ANNOTATION]).split(",") if n.strip()]
    return list(parse_sized_for(ann[SIZED_FOR_ANNOTATION]) or {}) if ann.get(SIZED_FOR_ANNOTATION) else []


def _indexes_read(node) -> list[str]:
    """The index labels (job-global-index first) the pods under ``node`` read."""
    refs = _field_refs(node)
    return [label for label in _INDEXES if any(label in p for p in refs)]


def _record_problems(rjobs: list, recorded: list[str], renames_said: bool) -> list[str]:
    """What the edits of the recorded layout broke: replicatedJobs added, removed, renamed, reordered."""
    if not recorded:
        return []
    names = [r["name"] for r in rjobs]
    out: list[str] = []
    added = [n for n in names if n not in recorded]
    removed = [n for n in recorded if n not in names]
    if removed and renames_said:  # the size check named the rename: nothing more to say about the set
        added = removed = []
    counts = any(_GLOBAL_REPLICAS in p for p in _field_refs(rjobs))
    if added and removed:
        out.append(f"replicatedJob {', '.join(removed)} renamed or replaced ({', '.join(added)}): the values were "
                   f"written for replicatedJobs {', '.join(recorded)}")
    elif added and counts:
        out.append(f"replicatedJob {', '.join(added)} added beside {', '.join(recorded)}: the pod count the "
                   f"values read ({_GLOBAL_REPLICAS}) now counts {'its' if len(added) == 1 else 'their'} pods too")
    elif removed and counts:
        out.append(f"replicatedJob {', '.join(removed)} removed: the pod count the values read "
                   f"({_GLOBAL_REPLICAS}) no longer counts {'its' if len(removed) == 1 else 'their'} pods")
    by_name = {r["name"]: r for r in rjobs}
    if added and not removed and not counts:  # a copy of a replicatedJob kf2jobset wrote carries its identity
        claiming = [n for n in added if _indexes_read(by_name[n])]
        if claiming:
            labels = sorted({label.split("/")[-1] for n in claiming for label in _indexes_read(by_name[n])})
            out.append(f"replicatedJob {', '.join(claiming)} added beside {', '.join(recorded)}: "
                       f"{'its' if len(claiming) == 1 else 'their'} pods read {', '.join(labels)}, the identity the values "
                       f"give the pods of {', '.join(recorded)}, so they claim ranks or indexes that other pods hold or "
                       "that no value counts")
    # job-global-index counts the Jobs of the replicatedJobs listed before: a rank moves when those change
    ranked = [n for n in names if n in recorded and _GLOBAL_INDEX in _indexes_read(by_name[n])]
    kept = [n for n in names if n in recorded]
    kept_then = [n for n in recorded if n in names]

    def before(order: list[str], name: str) -> set[str]:
        return set(order[:order.index(name)])

    moved = [n for n in ranked if before(kept, n) != before(kept_then, n)]
    if moved:
        out.append(f"replicatedJobs reordered ({', '.join(kept)}; the values were written for {', '.join(kept_then)}): "
                   f"ranks follow the list order ({_GLOBAL_INDEX} counts the Jobs listed before), so the pods of "
                   f"{', '.join(moved)} take ranks other than those the values were written for")
    pushed = {n: [a for a in names[:names.index(n)] if a in added] for n in ranked} if not removed else {}
    for n, ahead in pushed.items():
        if ahead:
            out.append(f"replicatedJob {', '.join(ahead)} added before {n}: ranks follow the list order ({_GLOBAL_INDEX}), "
                       f"so the ranks of {n}'s pods shift by {'its' if len(ahead) == 1 else 'their'} Jobs")
    return out


def _program_strings(rjobs: list) -> list[str]:
    """What the containers run and read: command, args and env values (where a host name is an address; a label
    selector's `job-name: <jobset>-<replicatedJob>-<i>` is the JobSet's own child Job, the same shape)."""
    out: list[str] = []
    for node in _walk(rjobs):
        if isinstance(node, dict) and isinstance(node.get("image"), str):  # a container
            out += _strings([node.get("command"), node.get("args")])
            out += [e["value"] for e in node.get("env") or [] if isinstance(e, dict) and isinstance(e.get("value"), str)]
    return out


def _v1_pod_names(source, sizes: dict[str, int], strings: list[str]) -> set[str]:
    """`<v1 job>-<type>-<i>` host names of pods v1 ran (its per-pod Services; i below the replicas) in the values:
    added by hand after the conversion, which rewrites them (JS065). The v1 job's name: the source record's last word.
    A host name stands alone or after `=`, `,`, `@`, `//` (a path segment `/x/` or a longer word is not one)."""
    v1 = str(source or "").split()[-1:]
    if not v1 or not sizes:
        return set()
    pattern = re.compile(rf"(?:^|(?<=[\s=,'\"@])|(?<=//)){re.escape(v1[0])}-({'|'.join(map(re.escape, sizes))})-(\d+)(?![-\w])")
    return {m.group(0) for s in strings for m in pattern.finditer(s) if int(m.group(2)) < sizes[m.group(1)]}


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def select(text: str) -> bool:
    return may_hold_layout(text) or "Service" in text  # Services beside it may serve v1's per-pod names


def reshaped_jobsets(text: str, renames_said: frozenset = frozenset(), parsed: list | None = None) -> list[Reshaped]:
    """Every JobSet of the stream that kf2jobset converted and whose layout an edit broke. ``renames_said``: the
    labels (`JobSet NAME (APIVERSION)`) of those the size check names a renamed replicatedJob of."""
    from ..text.yamlio import parse_documents, position, selected_documents

    out = []
    docs = selected_documents(parsed, select) if parsed is not None else parse_documents(text, select=select, without_comments=True)
    services = frozenset(str((d.data.get("metadata") or {}).get("name")) for d in docs
                         if isinstance(d.data, dict) and d.data.get("kind") == "Service"
                         and isinstance(d.data.get("metadata"), dict))
    for doc in docs:
        data = doc.data
        if doc.error is not None or not isinstance(data, dict) or data.get("kind") != "JobSet":
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        if SOURCE_ANNOTATION not in ann:
            continue
        label = f"JobSet {meta.get('name') or meta.get('generateName') or '(unnamed)'} ({data.get('apiVersion')})"
        found = problems_of(data, services, label in renames_said)
        if not found:
            continue
        line = position(data, ("spec", "replicatedJobs"), doc.start_line)[0]
        out.append(Reshaped(line or doc.start()[0], label, tuple(found), ann.get(SOURCE_ANNOTATION)))
    return out
