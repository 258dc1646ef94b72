"""What `--scheduler` makes of a v1 job's runPolicy.schedulingPolicy: Kueue reads the JobSet itself (a queue
label, the pods' priorityClassName); Volcano gets a PodGroup named after the JobSet, as the operator made one,
and pods that point at it. Pure: the JobSet's pod templates are edited in place, the PodGroup is returned."""
from __future__ import annotations

from . import claims as claim
from .claims import pod_path
from .errors import Problem, UnsupportedError
from .model import TrainingJob
from .notes import Note
from .options import ConvertOptions
from .plan import JobSetPlan, gang_without_name
from .yunikorn import yunikorn_findings, yunikorn_task_groups

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def scheduler_objects(job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict, notes: list[Note]) -> list[dict]:
    sp = job.run_policy.scheduling

    if gang_without_name(job, p, options):
        notes.append(Note("JS095", "dropped", f"the operator's gang scheduler held every job together, named after "
                          f"the job; this one has no name yet (generateName, a Katib trial), so no {options.scheduler} "
                          "gang can be written for it and its pods are scheduled one by one",
                          action="pass --name, or add the gang where the name is known", warn=True,
                          claims=(claim.absent("kind", target="PodGroup"),)))
    elif options.scheduler == "scheduler-plugins":  # the operator made its PodGroup for every job
        from .gang import scheduler_plugins_objects

        yunikorn_findings(jobset, notes)
        return scheduler_plugins_objects(job, p, options, jobset, notes)
    elif options.scheduler == "yunikorn":
        yunikorn_task_groups(job, p, jobset, notes)
    yunikorn_findings(jobset, notes)  # templates that name YuniKorn themselves, whatever --scheduler says
    if options.scheduler == "yunikorn" or gang_without_name(job, p, options):
        return []
    if options.scheduler == "none" or (options.scheduler == "kueue" and sp.is_empty()):
        return []  # Volcano: the operator's gang held every job, with or without a schedulingPolicy
    total = sum(r.replicas for r in p.rjobs)
    pods = [rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]]
    priorities = [(pod.get("spec") or {}).get("priorityClassName", sp.priority_class) for pod in pods]  # yours stays
    if sp.priority_class and options.scheduler == "kueue":
        # Kueue reads a JobSet's priority from its pods. (Volcano: the operator set it on the PodGroup only.)
        for pod in pods:
            pod["spec"].setdefault("priorityClassName", sp.priority_class)
    if options.scheduler == "kueue":
        if sp.queue:
            jobset["metadata"].setdefault("labels", {}).setdefault(KUEUE_QUEUE_LABEL, sp.queue)
        notes.append(Note("JS041", "rewritten", "schedulingPolicy for Kueue: queue -> label " + KUEUE_QUEUE_LABEL
                          + ", priorityClass -> pods' priorityClassName", source_path="runPolicy.schedulingPolicy",
                          target_path="metadata.labels", explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
                          claims=(*(claim.equals(f"metadata.labels[{KUEUE_QUEUE_LABEL}]", job.labels.get(KUEUE_QUEUE_LABEL, sp.queue))
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
    # volcano: a PodGroup named after the JobSet, and pods that point at it
    if not p.name:
        raise UnsupportedError(Problem("--scheduler volcano needs a JobSet name for its PodGroup; this job has none (use --name)",
                                       rule="volcano-name"))
    from .gang import min_resources_note, mpi_operator_volcano_group, operator_min_resources

    mpi = job.by_mpi_operator  # mpi-operator's --gang-scheduling=volcano: its own rules (podgroup.go, v0.8)
    for rj, pod in zip(p.rjobs, pods, strict=False):
        if mpi:  # mpi-operator set schedulerName over yours and no task-spec
            pod["spec"]["schedulerName"] = "volcano"
        else:
            pod["spec"].setdefault("schedulerName", "volcano")
        ann = pod.setdefault("metadata", {}).setdefault("annotations", {})
        ann["scheduling.k8s.io/group-name"] = p.name
        if not mpi:
            ann["volcano.sh/task-spec"] = rj.name
    if mpi:
        group, order_free = mpi_operator_volcano_group(job)
    else:
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
                              *(claim.equals(pod_path(rj.name) + ".metadata.annotations[scheduling.k8s.io/group-name]", p.name)
                                for rj in p.rjobs),
                              *(claim.equals(pod_path(rj.name) + ".spec.schedulerName", "volcano" if mpi else
                                             (job.replicas[rj.rtype].template.get("spec") or {}).get("schedulerName", "volcano"))
                                for rj in p.rjobs))))
    return [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": group}]
