"""Gang-scheduled jobs on kf2jobset's bundle: a platform that runs a gang scheduler installs a *flavour* of the
bundle (`kf2jobset runtimes --gang coscheduling|volcano|yunikorn`): the same runtimes under the same names,
with Trainer v2.3's podGroupPolicy (coscheduling, volcano) and the scheduler's name in every pod template
(no TrainJob field sets schedulerName). A v1 job whose pods name one of those schedulers lands on the
runtime of its shape; what is the job's own rides in the TrainJob (the Volcano queue as the JobSet's
`scheduling.volcano.sh/queue-name` annotation, YuniKorn's labels and annotations as pod metadata in
runtimePatches), and what no TrainJob carries is reported field by field (TJ047).

What Trainer v2.3.0 does with podGroupPolicy (pkg/runtime/framework/plugins/{coscheduling,volcano},
pkg/runtime/core/trainingruntime.go, pkg/runtime/runtime.go): a PodGroup named after the TrainJob and owned
by it; minMember the sum of the pod sets' counts (numNodes for the role it sizes, each other role's Job
parallelism: every pod here); minResources that count times one pod's requests (component-helpers
PodRequests on the template after resourcesPerNode is merged: requests only); coscheduling adds
scheduleTimeoutSeconds from the policy and the label `scheduling.x-k8s.io/pod-group: <TrainJob>` on every
pod; Volcano the annotation `scheduling.k8s.io/group-name: <TrainJob>`, the queue from the JobSet
template's `scheduling.volcano.sh/queue-name` annotation (runtime's, then runtimePatches'), and the
priorityClassName of the pod templates. Neither sets schedulerName. Pure."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from decimal import Decimal

from .. import claims as claim
from ..choices import GANG_FLAVOURS
from ..notes import Note
from ..quantity import parse_quantity
from ..schedulers import by_flavour, by_pod_scheduler_name, scheduler
from ..schedulers.base import Scheduler
from .trainjob_gang import _text, trainer_podgroup

GANG_ANNOTATION = "kf2jobset.dev/runtime-gang"  # on the TrainJob: the flavour of the bundle it needs
TASK_SPEC = "volcano.sh/task-spec"
# notes about kf2jobset's companion PodGroup and its pod decoration, which the flavour's gang replaces
REPLACED_NOTES = ("JS043", "JS090", "JS091")


@dataclass(frozen=True)
class Gang:
    """A flavour of the bundle: the gang scheduler and the name its pods use."""
    flavour: str
    scheduler_name: str

    @property
    def value(self) -> str:
        """The TrainJob's GANG_ANNOTATION: the flavour, with the scheduler's name where it is not the flavour's default."""
        return self.flavour if self.scheduler_name == default_name(self.flavour) else f"{self.flavour}/{self.scheduler_name}"

    @property
    def scheduler(self) -> Scheduler:
        return by_flavour(self.flavour)

    @property
    def command(self) -> str:
        extra = "" if self.scheduler_name == default_name(self.flavour) else f" --gang-scheduler-name {self.scheduler_name}"
        return f"kf2jobset runtimes --gang {self.flavour}{extra} | kubectl apply -f -"


def default_name(flavour: str) -> str:
    return by_flavour(flavour).pod_scheduler_names[0]


def parse(value: str | None) -> Gang | None:
    if not value:
        return None
    flavour, _, name = value.partition("/")
    return Gang(flavour, name or default_name(flavour)) if flavour in GANG_FLAVOURS else None


def flavoured(spec: dict, gang: Gang | None) -> dict:
    """A bundle runtime's spec in `gang`'s flavour: podGroupPolicy (coscheduling, volcano) and the scheduler's
    name on every pod template."""
    spec = copy.deepcopy(spec)
    if gang is None:
        return spec
    for rj in spec["template"]["spec"]["replicatedJobs"]:
        rj["template"]["spec"]["template"]["spec"]["schedulerName"] = gang.scheduler_name
    policy = copy.deepcopy(gang.scheduler.trainer_pod_group_policy)
    return {**({"podGroupPolicy": policy} if policy else {}), **spec}


def installed_gang(runtime: dict) -> Gang | None:
    """The flavour an installed runtime object is in (None: the plain bundle, or a runtime not of one flavour)."""
    spec = runtime.get("spec") or {}
    names = {((rj.get("template") or {}).get("spec") or {}).get("template", {}).get("spec", {}).get("schedulerName")
             for rj in ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []}
    policy = spec.get("podGroupPolicy") or {}
    if len(names) != 1 or None in names:
        return None
    name = next(iter(names))
    by_policy = [f for f in GANG_FLAVOURS if set(by_flavour(f).trainer_pod_group_policy or {}) & set(policy)]
    named = by_pod_scheduler_name(name)
    flavour = by_policy[0] if by_policy else named.flavour if named and named.trainer_pod_group_policy is None else None
    return Gang(flavour, name) if flavour else None


# ---------------------------------------------------------------------------------------------
# the job's side


@dataclass
class JobGang:
    gang: Gang
    group: dict | None = None  # kf2jobset's companion PodGroup (what v1's operator made), dropped for Trainer's
    task_spec_dropped: bool = False  # volcano.sh/task-spec left off (one Job holds every role)
    priority_dropped: str | None = None  # schedulingPolicy.priorityClass kf2jobset had put on the pods (YuniKorn)
    notes: list = field(default_factory=list)


def job_gang(conversion, options) -> JobGang | None:
    """The flavour whose scheduler the job's pods name, or None (no gang scheduler, or one no flavour is for:
    bundle.py then says the schedulerName keeps the job off)."""
    names = {((rj["template"]["spec"]["template"].get("spec") or {}).get("schedulerName") or "default-scheduler")
             for rj in conversion.jobset["spec"]["replicatedJobs"]}
    if len(names) != 1:
        return None
    name = next(iter(names))
    chosen = scheduler(options.scheduler)
    found = by_pod_scheduler_name(name) or (chosen if chosen.flavour and name == chosen.runs_as(options) else None)
    return JobGang(Gang(found.flavour, name)) if found and found.flavour else None


def prepared(conversion, options, found: JobGang, drop_task_spec: bool = False):
    """A view of the conversion whose JobSet lacks what the flavour's runtime and Trainer write (the
    schedulerName, the PodGroup's pod label or annotation), for bundle.derive."""
    view = copy.copy(conversion)
    view.jobset = copy.deepcopy(conversion.jobset)
    name = view.jobset["metadata"].get("name")
    sp = conversion.job.run_policy.scheduling
    kind = found.gang.scheduler.podgroup
    for rj, (_rtype, spec) in zip(view.jobset["spec"]["replicatedJobs"], _v1_specs(conversion), strict=False):
        pod = rj["template"]["spec"]["template"]
        pod["spec"].pop("schedulerName", None)
        meta = pod.get("metadata") or {}
        for key in ("labels", "annotations"):
            drop = kind.key if kind and kind.where == key else None
            values = meta.get(key) or {}
            if drop and values.get(drop) == name:
                del values[drop]
            if drop_task_spec and key == "annotations":
                found.task_spec_dropped |= values.pop(TASK_SPEC, None) is not None
            if key in meta and not values:
                del meta[key]
        if "metadata" in pod and not pod["metadata"]:
            del pod["metadata"]
        if (found.gang.flavour == "yunikorn" and sp.priority_class and pod["spec"].get("priorityClassName") == sp.priority_class
                and not (spec.template.get("spec") or {}).get("priorityClassName")):
            del pod["spec"]["priorityClassName"]  # kf2jobset's, from schedulingPolicy (yunikorn.py)
            found.priority_dropped = sp.priority_class
    return view


def _v1_specs(conversion):
    return [(r.rtype, conversion.job.replicas[r.rtype]) for r in conversion.plan.rjobs]


def patch_metadata(found: JobGang, conversion, jobset_meta: dict) -> None:
    """What of the gang is the job's and rides in the TrainJob: the Volcano queue v1's PodGroup had, as the
    annotation Trainer's Volcano plugin reads from the JobSet template (runtimePatches metadata)."""
    chosen = found.gang.scheduler
    found.group = next((c for c in conversion.companions if c.get("kind") == "PodGroup"
                        and c.get("apiVersion") == chosen.podgroup.api_version), None) if chosen.podgroup else None
    queue = ((found.group or {}).get("spec") or {}).get("queue")
    if chosen.trainer_queue_annotation and queue:
        jobset_meta.setdefault("annotations", {})[chosen.trainer_queue_annotation] = queue


def without_podgroup_sizes(literals: list[str]) -> list[str]:
    """The size record without the companion PodGroup's counts (SZ002): Trainer's PodGroup counts the pods."""
    kept = [x.strip() for text in literals for x in text.split(",") if not x.strip().startswith("PodGroup ")]
    return [", ".join(kept)] if kept else []


def notes(found: JobGang, conversion, options, trainjob: dict, predicted: dict) -> list[Note]:
    """The gang's findings; drops the companion PodGroup Trainer's replaces."""
    gang = found.gang
    chosen = gang.scheduler
    out = [Note(
        "TJ046", "prerequisite",
        f"the runtime must be the {gang.flavour} flavour of kf2jobset's bundle (same name, with "
        + ("podGroupPolicy." + gang.flavour + " and " if chosen.trainer_pod_group_policy else "")
        + f"schedulerName {gang.scheduler_name} in its pod templates): the TrainJob records it in {GANG_ANNOTATION}",
        target_path=f"metadata.annotations[{GANG_ANNOTATION}]",
        action=f"have the platform install that flavour: {gang.command}; kubectl kf2jobset apply checks it",
        claims=(claim.equals(f"metadata.annotations[{GANG_ANNOTATION}]", gang.value, "TrainJob"),
                claim.equals("spec.replicatedJobs[*].template.spec.template.spec.schedulerName", gang.scheduler_name)))]
    if chosen.podgroup is None:
        out += chosen.trainer_notes(gang.scheduler_name)
    else:
        out += _podgroup_notes(found, conversion, trainjob, predicted)
    told = chosen.name if chosen.named_after_every_job and chosen.podgroup else None
    if told and options.scheduler != told:
        out.append(Note(
            "TJ049", "approximated",
            f"the pods name {gang.scheduler_name}, and kf2jobset was not told the operator made a PodGroup for the job "
            f"(--scheduler {told}); on the {gang.flavour} "
            "flavour Trainer makes one for every TrainJob, so the pods start all together where v1's may have started "
            "one by one",
            warn=True, explains=(("scheduling", "*"),),
            action=f"pass --scheduler {told} if the operator ran with that --gang-scheduler-name (then the report "
                   "compares the gangs); else --trainer-runtime per-job",
            claims=_marked(gang, trainjob), unchecked=None if _marked(gang, trainjob) else _UNNAMED))
    if found.priority_dropped:
        out.append(_field_note(
            "priorityClassName", f"schedulingPolicy.priorityClass {found.priority_dropped}, which --scheduler yunikorn put "
            "on the pods, is left out: a TrainJob cannot set a pod's priorityClassName, so YuniKorn schedules and "
            "preempts the pods at the default priority", claims=(claim.absent(
                "spec.replicatedJobs[*].template.spec.template.spec.priorityClassName"),)))
    return out


def _podgroup_notes(found: JobGang, conversion, trainjob: dict, predicted: dict) -> list[Note]:
    gang, name = found.gang, trainjob["metadata"].get("name") or "<name>"
    members, resources, _ = trainer_podgroup(predicted["spec"])
    v1 = (found.group or {}).get("spec") or {}
    chosen = gang.scheduler
    kind, key = f"{chosen.podgroup.api_version} PodGroup", chosen.podgroup.key
    if found.group is not None:
        conversion.companions.remove(found.group)
    out = [Note(
        "TJ045", "rewritten",
        f"the gang is Trainer's, from the runtime's podGroupPolicy.{gang.flavour}: a {kind} named {name} (the "
        f"TrainJob's name, as v1's was the job's), owned by the TrainJob, with minMember {members} (every pod) and "
        f"minResources {_text(resources, v1.get('minResources') or {})}; every pod carries {key}={name} and the "
        f"runtime's schedulerName {gang.scheduler_name}"
        + (f"; the queue is the TrainJob's, the JobSet annotation {chosen.trainer_queue_annotation}"
           if v1.get("queue") and chosen.trainer_queue_annotation else "")
        + (", in place of the PodGroup kf2jobset writes beside a JobSet" if found.group is not None else ""),
        source_path="runPolicy.schedulingPolicy" if not conversion.job.run_policy.scheduling.is_empty() else None,
        target_path="spec.runtimeRef", explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
        claims=(claim.absent("kind", "PodGroup"), *_marked(gang, trainjob)))]
    if found.group is None:
        return out
    conversion.lifecycle_overrides["schedulingPolicy"] = {
        "minAvailable": members, **({"queue": v1["queue"]} if v1.get("queue") else {}),
        **({"minResources": _text(resources, v1.get("minResources") or {}).replace(", ", ",")} if resources else {})}
    if v1.get("minMember") != members:
        out.append(_field_note(
            "minAvailable", f"v1's gang was minAvailable {v1.get('minMember')} of the {members} pods; Trainer's PodGroup "
            f"holds every pod, so where only {v1.get('minMember')} fit the TrainJob waits while v1's job started",
            warn=True))
    mine = {k: parse_quantity(v) for k, v in (v1.get("minResources") or {}).items()}
    if {k: v for k, v in mine.items() if v} != {k: v for k, v in resources.items() if v}:
        written = v1.get("minResources") or {}
        out.append(_field_note(
            "minResources", f"Trainer sums minResources {_text(resources, written)} (every pod's requests, limits not "
            f"read), v1's PodGroup had {_text({k: v or Decimal(0) for k, v in mine.items()}, written)}"))
    runtime_timeout = ((chosen.trainer_pod_group_policy or {}).get(gang.flavour) or {}).get("scheduleTimeoutSeconds")
    timeout = v1.get("scheduleTimeoutSeconds") or runtime_timeout  # 0 or none: the plugin's default wait
    if runtime_timeout is not None and timeout != runtime_timeout:
        out.append(_field_note(
            "scheduleTimeoutSeconds", f"v1's PodGroup waited {timeout} s for the gang; the flavour's runtime says "
            f"{runtime_timeout} s for every job (podGroupPolicy is the runtime's; a TrainJob cannot set it)"))
    if v1.get("priorityClassName"):
        out.append(_field_note(
            "priorityClassName", f"v1's PodGroup had priorityClassName {v1['priorityClassName']}; Trainer takes it from the "
            "runtime's pod templates, which a TrainJob cannot set, so Volcano orders the gang at the default priority"))
    if found.task_spec_dropped:
        out.append(_field_note(
            "volcano.sh/task-spec", "one Job holds every role, so one pod template cannot name each role's task; "
            "Volcano groups a PodGroup's pods into tasks by it, for per-task minimums (minTaskMember, which the operator "
            "set none of) and task-level plugins such as task-topology, so all pods are one task here",
            claims=(claim.absent(f"spec.replicatedJobs[*].template.spec.template.metadata.annotations[{TASK_SPEC}]"),)))
    return out


_UNNAMED = "the TrainJob is named at creation (a trial): the pods' mark carries that name"


def _marked(gang: Gang, trainjob: dict) -> tuple:
    """The claim that every pod carries the PodGroup's name as Trainer's plugin marks it (a named TrainJob)."""
    name = trainjob["metadata"].get("name")
    kind = gang.scheduler.podgroup
    return (claim.equals(f"spec.replicatedJobs[*].template.spec.template.metadata.{kind.mark}", name),) if name and kind else ()


def _field_note(what: str, why: str, warn: bool = False, claims: tuple = ()) -> Note:
    return Note(
        "TJ047", "approximated", f"{what}: {why}", source_path="runPolicy.schedulingPolicy", warn=warn,
        explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
        action="--trainer-runtime per-job keeps the gang exactly (a namespaced runtime of the job's own)",
        claims=claims)
