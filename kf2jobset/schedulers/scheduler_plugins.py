"""The operator's other gang scheduler, scheduler-plugins' coscheduling (`--gang-scheduler-name`, any name but
volcano): a `scheduling.x-k8s.io/v1alpha1` PodGroup named after the job, made for every job whether or not it had
a schedulingPolicy, and every pod labelled into it. Pure."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import claims as claim
from ..choices import DEFAULT_GANG_SCHEDULER_NAME
from ..claims import pod_path
from ..notes import Note
from .base import PodGroupKind, Scheduler
from .podgroup_resources import gang_size, min_resources_note, mpi_operator_min_resources, operator_min_resources

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..options import ConvertOptions
    from ..core.plan import JobSetPlan

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # scheduler-plugins' v1alpha1.PodGroupLabel
API_VERSION = "scheduling.x-k8s.io/v1alpha1"
# The flavour's timeout: the Coscheduling plugin's permitWaitingTimeSeconds default, which a PodGroup without
# scheduleTimeoutSeconds (the operator's, unless schedulingPolicy set one) waited
COSCHEDULING_TIMEOUT = 60


class SchedulerPlugins(Scheduler):
    name = "scheduler-plugins"
    named_after_every_job = True
    podgroup = PodGroupKind(API_VERSION, "labels", POD_GROUP_LABEL)
    # the operator flag's documented value, then the name scheduler-plugins' chart runs it under
    pod_scheduler_names = (DEFAULT_GANG_SCHEDULER_NAME, "scheduler-plugins-scheduler")
    trainer_pod_group_policy = {"coscheduling": {"scheduleTimeoutSeconds": COSCHEDULING_TIMEOUT}}
    trainer_adopts_podgroup = True

    def runs_as(self, options: ConvertOptions) -> str | None:
        return options.gang_scheduler_name

    def objects(self, job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict,
                notes: list[Note]) -> list[dict]:
        self.require_name(p, rule="scheduler-plugins-name")
        sp = job.run_policy.scheduling
        name = options.gang_scheduler_name
        pods = [rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]]
        mpi = job.by_mpi_operator  # mpi-operator's --gang-scheduling: its own PodGroup rules (podgroup.go, v0.8)
        for pod in pods:
            if mpi:  # mpi-operator overwrote a schedulerName you set
                pod["spec"]["schedulerName"] = name
            else:  # the training operator kept it
                pod["spec"].setdefault("schedulerName", name)
            pod.setdefault("metadata", {}).setdefault("labels", {})[POD_GROUP_LABEL] = p.name
        min_member = gang_size(job)
        spec: dict = {"minMember": min_member}
        computed = sp.min_resources is None
        if computed:
            resources, order_free = (mpi_operator_min_resources if mpi else operator_min_resources)(job, min_member)
        else:
            resources, order_free = dict(sp.min_resources), True
        if resources:  # a plain ResourceList, omitempty: an empty one is not written
            spec["minResources"] = resources
        if sp.schedule_timeout_seconds is not None or mpi:
            spec["scheduleTimeoutSeconds"] = sp.schedule_timeout_seconds or 0  # mpi-operator wrote 0 when unset
        meta = {"name": p.name, **({"namespace": p.namespace} if p.namespace else {})}
        unread = [f for f, v in (("queue", sp.queue), ("priorityClass", sp.priority_class)) if v]
        notes.append(Note(
            "JS090", "rewritten",
            f"the operator's scheduler-plugins gang: a PodGroup {API_VERSION} named after the JobSet (minMember "
            f"{min_member}"
            f"{', minResources ' + ('computed from the pods as the operator did' if computed else 'as written') if resources else ''}"
            f"{', scheduleTimeoutSeconds' if sp.schedule_timeout_seconds is not None else ''}), and every pod of every "
            f"replicatedJob labelled {POD_GROUP_LABEL}={p.name} with schedulerName {name}"
            + (" (mpi-operator set it over yours; a timeout of 0 when none was given)" if mpi else " unless it sets one")
            + (f"; {' and '.join(unread)} left out, as the operator left them out (scheduler-plugins reads neither)" if unread else ""),
            source_path="runPolicy.schedulingPolicy" if not sp.is_empty() else None, target_path="kind",
            explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
            action=None if name != "scheduler-plugins" else
            "the operator's default name: if your coscheduling scheduler runs under another name (the chart's "
            "scheduler-plugins-scheduler), pass the operator's --gang-scheduler-name value with --gang-scheduler-name",
            claims=(claim.equals("metadata.name", p.name, target="PodGroup"),
                    claim.equals("spec.minMember", min_member, target="PodGroup"),
                    *(claim.equals(f"spec.minResources[{k}]", v, target="PodGroup") for k, v in resources.items()),
                    *(claim.equals(pod_path(rj.name) + f".metadata.labels[{POD_GROUP_LABEL}]", p.name) for rj in p.rjobs),
                    *(claim.equals(pod_path(rj.name) + ".spec.schedulerName",
                                   name if mpi else (job.replicas[rj.rtype].template.get("spec") or {}).get("schedulerName", name))
                      for rj in p.rjobs))))
        if not order_free:
            notes.append(min_resources_note(min_member))
        return [{"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}]


SCHEDULER = SchedulerPlugins()
