"""Volcano, as the operator used it (`--gang-scheduler-name volcano`): a PodGroup named after the job for every
job, schedulingPolicy or not, and pods that point at it. mpi-operator's `--gang-scheduling=volcano` had rules
of its own (podgroup.go, v0.8), kept for MPIJobs it ran. Pure: the JobSet's pod templates are edited in place,
the PodGroup is returned."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import claims as claim
from ..claims import pod_path
from ..notes import Note
from .base import PodGroupKind, Scheduler
from .podgroup_resources import min_resources_note, mpi_operator_min_resources, operator_min_resources

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..options import ConvertOptions
    from ..core.plan import JobSetPlan

QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"  # volcano's QueueNameAnnotationKey
TASK_SPEC = "volcano.sh/task-spec"


def mpi_operator_volcano_group(job: TrainingJob) -> tuple[dict, bool]:
    """mpi-operator v0.8's VolcanoCtrl.newPodGroup, not the training operator's: minMember minAvailable else
    workers + 1; the queue schedulingPolicy's, else the MPIJob's scheduling.volcano.sh/queue-name annotation, else
    none (the PodGroup CRD defaults it to `default`); priorityClassName schedulingPolicy's, else the launcher
    template's, else the workers'; minResources as written, else calPGMinResource (none for a gang of 0); no
    scheduleTimeoutSeconds. Returns the spec and whether the minResources sum is free of PriorityClass order."""
    sp = job.run_policy.scheduling
    workers = job.replicas["Worker"].replicas if job.has("Worker") else 0
    group: dict = {"minMember": sp.min_available if sp.min_available is not None else workers + 1}
    queue = sp.queue or (job.annotations or {}).get(QUEUE_ANNOTATION)
    if queue:
        group["queue"] = queue
    templates = [(job.replicas[t].template.get("spec") or {}) for t in ("Launcher", "Worker") if job.has(t)]
    priority = sp.priority_class or next((s["priorityClassName"] for s in templates if s.get("priorityClassName")), None)
    if priority:
        group["priorityClassName"] = priority
    order_free = True
    if sp.min_resources is not None:
        group["minResources"] = dict(sp.min_resources)
    elif group["minMember"]:
        resources, order_free = mpi_operator_min_resources(job, group["minMember"])
        if resources:
            group["minResources"] = resources
    return group, order_free


class Volcano(Scheduler):
    name = "volcano"
    named_after_every_job = True
    podgroup = PodGroupKind("scheduling.volcano.sh/v1beta1", "annotations", "scheduling.k8s.io/group-name")
    pod_scheduler_names = ("volcano",)
    trainer_pod_group_policy = {"volcano": {}}
    trainer_queue_annotation = QUEUE_ANNOTATION

    def objects(self, job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict,
                notes: list[Note]) -> list[dict]:
        self.require_name(p, rule="volcano-name")
        sp = job.run_policy.scheduling
        pods = [rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]]
        mpi = job.by_mpi_operator
        for rj, pod in zip(p.rjobs, pods, strict=False):
            if mpi:  # mpi-operator set schedulerName over yours and no task-spec
                pod["spec"]["schedulerName"] = "volcano"
            else:
                pod["spec"].setdefault("schedulerName", "volcano")
            ann = pod.setdefault("metadata", {}).setdefault("annotations", {})
            ann[self.podgroup.key] = p.name
            if not mpi:
                ann[TASK_SPEC] = rj.name
        if mpi:
            group, order_free = mpi_operator_volcano_group(job)
        else:
            total = sum(r.replicas for r in p.rjobs)
            group = {"minMember": sp.min_available if sp.min_available is not None else total, "queue": sp.queue or "default"}
            if sp.priority_class:
                group["priorityClassName"] = sp.priority_class
            order_free = True
            if sp.min_resources:
                group["minResources"] = dict(sp.min_resources)
            else:  # the operator's own sum over the gang's pods (CalcPGMinResources)
                resources, order_free = operator_min_resources(job, group["minMember"])
                if resources:
                    group["minResources"] = resources
        if not order_free:
            notes.append(min_resources_note(group["minMember"]))
        meta = {"name": p.name}
        if p.namespace:
            meta["namespace"] = p.namespace
        notes.append(Note("JS043", "rewritten", "schedulingPolicy for Volcano: a PodGroup named after the JobSet (with the "
                          "priorityClass, as the operator set it); pods use schedulerName volcano and the group-name annotation"
                          + (" (mpi-operator's rules: minMember the workers + 1, the queue also from the MPIJob's "
                             "scheduling.volcano.sh/queue-name annotation, the priority class also from the launcher's or "
                             "workers' template, schedulerName set over yours, no volcano.sh/task-spec)" if mpi else ""),
                          source_path="runPolicy.schedulingPolicy" if not sp.is_empty() else None,
                          explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
                          claims=(claim.equals("metadata.name", p.name, target="PodGroup"),
                                  claim.equals("spec.minMember", group["minMember"], target="PodGroup"),
                                  *(claim.equals("spec.priorityClassName", group["priorityClassName"], target="PodGroup")
                                    for _ in [0] if group.get("priorityClassName")),
                                  *(claim.equals(pod_path(rj.name) + f".metadata.annotations[{self.podgroup.key}]", p.name)
                                    for rj in p.rjobs),
                                  *(claim.equals(pod_path(rj.name) + ".spec.schedulerName", "volcano" if mpi else
                                                 (job.replicas[rj.rtype].template.get("spec") or {}).get("schedulerName", "volcano"))
                                    for rj in p.rjobs))))
        return [{"apiVersion": self.podgroup.api_version, "kind": "PodGroup", "metadata": meta, "spec": group}]


SCHEDULER = Volcano()
