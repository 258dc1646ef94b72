"""The size of a PodGroup as the operators wrote it: minMember, and the minResources they computed when
schedulingPolicy gave none (the training operator's for Volcano and scheduler-plugins alike, mpi-operator's
own). Pure."""
from __future__ import annotations

from .. import claims as claim
from ..errors import Problem, UnsupportedError
from typing import TYPE_CHECKING

from ..notes import Note
from ..quantity import go_sum

if TYPE_CHECKING:
    from ..model import TrainingJob


def gang_size(job: TrainingJob) -> int:
    """The operator's minMember: schedulingPolicy.minAvailable, else every pod of the job."""
    sp = job.run_policy.scheduling
    return sp.min_available if sp.min_available is not None else sum(s.replicas for s in job.replicas.values())


def _pod_resources(template: dict) -> list[tuple[str, object]]:
    """(name, quantity) of one pod as AddResourceList read it: each container's requests, or its limits
    when the container has no requests map at all. Init containers and overhead were not counted."""
    out = []
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        chosen = res.get("requests") if res.get("requests") is not None else res.get("limits")
        out += list((chosen or {}).items())
    return out


def operator_min_resources(job: TrainingJob, min_member: int) -> tuple[dict, bool]:
    """CalcPGMinResources: the resources of the first `min_member` pods, replica types ordered by the value of
    their PriorityClass (looked up in the cluster; ties in Go map order). Returns the sums and whether that
    order could change them (fewer pods than the job's, types whose pods differ): then the job's own order
    is used, which is one of the orders the operator could take."""
    specs = list(job.replicas.values())
    per_pod = [_pod_resources(s.template) for s in specs]
    counted, left = [], min_member
    for spec, res in zip(specs, per_pod, strict=False):
        n = max(0, min(spec.replicas, left))
        left -= n
        counted += res * n
    sums: dict[str, list] = {}
    for name, q in counted:
        sums.setdefault(name, []).append(q)
    total = sum(s.replicas for s in specs)
    order_free = min_member >= total or len({tuple(sorted(map(str, r))) for r, s in zip(per_pod, specs, strict=False) if s.replicas}) <= 1
    out = {}
    for name in sorted(sums):
        text = go_sum(sums[name])
        if text is None:
            raise UnsupportedError(Problem(f"resources {name!r}: {sums[name]!r} is not a quantity the operator could read",
                                           rule="gang-min-resources"))
        out[name] = text
    return out, order_free


def mpi_operator_min_resources(job: TrainingJob, min_member: int) -> tuple[dict, bool]:
    """mpi-operator v0.8's calPGMinResource: per container its requests, and its limits for names it requests
    nothing of, times the replicas; with more pods than the gang, the workers count minMember-1 when the
    launcher's and workers' PriorityClasses tie (the launcher first), else the lower one does."""
    specs = {t: s for t, s in job.replicas.items() if t in ("Launcher", "Worker")}
    counts = {t: s.replicas for t, s in specs.items()}
    names = {(s.template.get("spec") or {}).get("priorityClassName") for s in specs.values()}
    per_pod = {t: sorted(_merged(s.template).items()) for t, s in specs.items()}
    order_free = True
    if sum(counts.values()) > min_member and "Worker" in counts:
        counts["Worker"] = min_member - 1  # the tie: workers are the lower priority
        order_free = len(names) == 1 or len({tuple(map(str, v)) for v in per_pod.values()}) == 1
    sums: dict[str, list] = {}
    for t in specs:
        for name, q in per_pod[t]:
            sums.setdefault(name, []).extend([q] * max(0, counts[t]))
    return {k: go_sum(v) for k, v in sorted(sums.items()) if v}, order_free


def _merged(template: dict) -> dict:
    out: dict[str, list] = {}
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            out.setdefault(k, []).append(v)
    return {k: go_sum(v) if len(v) > 1 else v[0] for k, v in out.items()}


def min_resources_note(min_member: int) -> Note:
    return Note(
        "JS091", "approximated",
        f"minResources is the sum over the first {min_member} pods; the operator took the replica types in the "
        "order of their PriorityClass values (read from the cluster; equal values in Go's random map order), "
        "so its sum could differ from run to run. The PodGroup holds the sum in the job's replica order",
        source_path="runPolicy.schedulingPolicy", target_path="spec.minResources",
        action="set schedulingPolicy.minResources (or the PodGroup's) to the resources the gang needs",
        claims=(claim.present("spec.minResources", target="PodGroup"),))
