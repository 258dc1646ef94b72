"""Kueue reads the JobSet itself: the queue as a label on it, the priority from its pods' priorityClassName.
It admits every pod of the JobSet together, so the operator's gang sizes have no place. Pure."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import claims as claim
from ..claims import pod_path
from ..notes import Note
from .base import Scheduler

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..options import ConvertOptions
    from ..plan import JobSetPlan

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


class Kueue(Scheduler):
    name = "kueue"

    def objects(self, job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict,
                notes: list[Note]) -> list[dict]:
        sp = job.run_policy.scheduling
        if sp.is_empty():
            return []
        total = sum(r.replicas for r in p.rjobs)
        pods = [rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]]
        priorities = [(pod.get("spec") or {}).get("priorityClassName", sp.priority_class) for pod in pods]  # yours stays
        if sp.priority_class:  # Kueue reads a JobSet's priority from its pods
            for pod in pods:
                pod["spec"].setdefault("priorityClassName", sp.priority_class)
        if sp.queue:
            jobset["metadata"].setdefault("labels", {}).setdefault(QUEUE_LABEL, sp.queue)
        notes.append(Note("JS041", "rewritten", "schedulingPolicy for Kueue: queue -> label " + QUEUE_LABEL
                          + ", priorityClass -> pods' priorityClassName", source_path="runPolicy.schedulingPolicy",
                          target_path="metadata.labels", explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
                          claims=(*(claim.equals(f"metadata.labels[{QUEUE_LABEL}]", job.labels.get(QUEUE_LABEL, sp.queue))
                                    for _ in [0] if sp.queue),
                                  *(claim.equals(pod_path(rj.name) + ".spec.priorityClassName", pc)
                                    for rj, pc in zip(p.rjobs, priorities, strict=False) if pc))))
        dropped = [f for f, v in (("minAvailable", sp.min_available if sp.min_available not in (None, total) else None),
                                  ("minResources", sp.min_resources), ("scheduleTimeoutSeconds", sp.schedule_timeout_seconds)) if v]
        if dropped:
            notes.append(Note("JS042", "dropped", f"Kueue admits every pod of the JobSet together; {', '.join(dropped)} has no Kueue "
                              "equivalent (see Kueue waitForPodsReady)", source_path="runPolicy.schedulingPolicy",
                              claims=(claim.absent("kind", target="PodGroup"),)))
        return []


SCHEDULER = Kueue()
