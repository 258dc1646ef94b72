"""The operator's other gang scheduler, scheduler-plugins' coscheduling (`--gang-scheduler-name` = any name but
volcano): a `scheduling.x-k8s.io/v1alpha1` PodGroup named after the job, made for every job whether or not
it had a schedulingPolicy, and every pod labelled into it. Also the minResources the operator computed for a
PodGroup when schedulingPolicy gave none (Volcano's and scheduler-plugins' alike). Pure."""
from __future__ import annotations

from . import claims as claim
from .claims import pod_path
from .errors import Problem, UnsupportedError
from .model import TrainingJob
from .notes import Note
from .options import ConvertOptions
from .plan import JobSetPlan
from .quantity import go_sum

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # scheduler-plugins' v1alpha1.PodGroupLabel
API_VERSION = "scheduling.x-k8s.io/v1alpha1"


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


VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"  # volcano's QueueNameAnnotationKey


def mpi_operator_volcano_group(job: TrainingJob) -> tuple[dict, bool]:
    """mpi-operator v0.8's VolcanoCtrl.newPodGroup, not the training operator's: minMember minAvailable else
    workers + 1; the queue schedulingPolicy's, else the MPIJob's scheduling.volcano.sh/queue-name annotation, else
    none (the PodGroup CRD defaults it to `default`); priorityClassName schedulingPolicy's, else the launcher
    template's, else the workers'; minResources as written, else calPGMinResource (none for a gang of 0); no
    scheduleTimeoutSeconds. Returns the spec and whether the minResources sum is free of PriorityClass order."""
    sp = job.run_policy.scheduling
    workers = job.replicas["Worker"].replicas if job.has("Worker") else 0
    group: dict = {"minMember": sp.min_available if sp.min_available is not None else workers + 1}
    queue = sp.queue or (job.annotations or {}).get(VOLCANO_QUEUE_ANNOTATION)
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


def _merged(template: dict) -> dict:
    out: dict[str, list] = {}
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            out.setdefault(k, []).append(v)
    return {k: go_sum(v) if len(v) > 1 else v[0] for k, v in out.items()}


def scheduler_plugins_objects(job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict,
                              notes: list[Note]) -> list[dict]:
    if not p.name:
        raise UnsupportedError(Problem("--scheduler scheduler-plugins needs a JobSet name for its PodGroup; this job has "
                                       "none (use --name)", rule="scheduler-plugins-name"))
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


def min_resources_note(min_member: int) -> Note:
    return Note(
        "JS091", "approximated",
        f"minResources is the sum over the first {min_member} pods; the operator took the replica types in the "
        "order of their PriorityClass values (read from the cluster; equal values in Go's random map order), "
        "so its sum could differ from run to run. The PodGroup holds the sum in the job's replica order",
        source_path="runPolicy.schedulingPolicy", target_path="spec.minResources",
        action="set schedulingPolicy.minResources (or the PodGroup's) to the resources the gang needs",
        claims=(claim.present("spec.minResources", target="PodGroup"),))
