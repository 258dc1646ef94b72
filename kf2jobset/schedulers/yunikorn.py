"""YuniKorn, which the operator never talked to: users put `schedulerName: yunikorn`, an application id, a
queue and task groups (`yunikorn.apache.org/task-groups`, each with a minMember) on the pod templates
themselves, and YuniKorn read them from the pods (k8shim v1.9 utils.GetApplicationIDFromPod,
cache.GetTaskGroupsFromAnnotation). The JobSet carries those fields as written; this module says whether the
gang still forms, records task-group sizes tied to the replicas for `--check`, and, for `--scheduler
yunikorn`, writes schedulingPolicy as those fields. Pure."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import claims as claim
from ..claims import pod_path
from ..notes import Note
from ..k8s.quantity import go_sum
from .base import Scheduler

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..options import ConvertOptions
    from ..core.plan import JobSetPlan

SCHEDULER_NAME = "yunikorn"
APP_ID_KEYS = ("yunikorn.apache.org/app-id", "applicationId", "spark-app-selector")  # labels, in YuniKorn's order
APP_ID_ANNOTATION = "yunikorn.apache.org/app-id"
QUEUE_LABEL = "yunikorn.apache.org/queue"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
POLICY_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"


def _meta(template: dict, key: str) -> dict:
    return (template.get("metadata") or {}).get(key) or {}


def app_id(template: dict) -> str | None:
    labels, ann = _meta(template, "labels"), _meta(template, "annotations")
    return labels.get(APP_ID_KEYS[0]) or ann.get(APP_ID_ANNOTATION) or labels.get(APP_ID_KEYS[1]) or labels.get(APP_ID_KEYS[2])


def _task_groups(text) -> list[dict] | None:
    try:
        groups = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        return None
    return groups


def _templates(jobset: dict) -> list[tuple[str, int, dict]]:
    return [(rj["name"], rj.get("replicas", 1), rj["template"]["spec"]["template"]) for rj in jobset["spec"]["replicatedJobs"]]


def _yunikorn_templates(jobset: dict) -> list[tuple[str, int, dict]]:
    return [t for t in _templates(jobset) if (t[2].get("spec") or {}).get("schedulerName") == SCHEDULER_NAME]


def task_group_literals(jobset: dict) -> list[str]:
    """Task groups whose minMember is the number of pods that name them: a count the operator never
    updated either, but one that a replica edit of the JobSet leaves stale (SZ002 records it)."""
    return [f"{TASK_GROUPS} {g} minMember" for g, (want, pods) in _group_sizes(jobset).items() if want == pods]


def _group_sizes(jobset: dict) -> dict[str, tuple[int, int]]:
    """task group -> (its minMember, pods whose template names it), from the first definition found."""
    yk = _yunikorn_templates(jobset)
    defined: dict[str, int] = {}
    for _, _, t in yk:
        for g in _task_groups(_meta(t, "annotations").get(TASK_GROUPS)) or []:
            if isinstance(g.get("name"), str) and type(g.get("minMember")) is int:
                defined.setdefault(g["name"], g["minMember"])
    return {name: (want, sum(n for _, n, t in yk if _meta(t, "annotations").get(TASK_GROUP_NAME) == name))
            for name, want in defined.items()}


def yunikorn_findings(jobset: dict, notes: list[Note]) -> None:
    """What carries over for pods that YuniKorn schedules (JS093): it reads everything from the pods, which the
    JobSet's templates give as the v1 templates gave them, so the application and its gang form as under v1."""
    yk = _yunikorn_templates(jobset)
    if not yk:
        return
    every = [t for t in _templates(jobset) if t[1]]
    ids = {name: app_id(t) for name, n, t in every}
    with_groups = [name for name, n, t in yk if n and TASK_GROUPS in _meta(t, "annotations")]
    split = len(set(ids.values())) > 1 or len(yk) < len(every)
    findings = []
    if split:
        findings.append("the replicatedJobs do not share one YuniKorn application (" + ", ".join(
            f"{name}: {v or 'none'}" for name, v in ids.items()) + "; a pod without an id gets YuniKorn's generated "
            "one, per namespace or per pod), so they never formed one gang, under v1 or now")
    else:
        value = next(iter(ids.values()), None)
        findings.append(f"every pod of every child Job carries application id {value!r}, so they form one application"
                        if value else "no pod names an application: YuniKorn's admission controller gives them its "
                        "generated id (one per namespace, or one per pod), as it did under v1")
    if with_groups and len(with_groups) < len(every):
        findings.append(f"only {', '.join(with_groups)} carry {TASK_GROUPS}: YuniKorn reads it from the first pod it "
                        "sees, which neither the operator nor the JobSet controller orders")
    for name, (want, pods) in _group_sizes(jobset).items():
        if want == pods:
            findings.append(f"task group {name}'s minMember {want} is its pods' count: recorded for --check (SZ002)")
        else:
            findings.append(f"task group {name}'s minMember {want} differs from the {pods} pods that name it, as under v1")
    notes.append(Note(
        "JS093", "approximated" if split else "unchanged",
        "YuniKorn reads its application, queue and task groups from the pods; the JobSet's templates carry them "
        "as written: " + "; ".join(findings),
        warn=split, explains=(("scheduling", "*"),),
        claims=tuple(claim.equals(pod_path(name) + ".spec.schedulerName", SCHEDULER_NAME) for name, _, _ in yk)))


def _pod_request(template: dict) -> dict:
    """One pod's requests (limits where a container has no requests, as the API server defaults them): what a
    placeholder must hold for the real pod to take its place."""
    per: dict[str, list] = {}
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            per.setdefault(k, []).append(v)
    return {k: go_sum(v) for k, v in sorted(per.items())}


def yunikorn_task_groups(job: TrainingJob, p: JobSetPlan, jobset: dict, notes: list[Note]) -> list[dict]:
    """`--scheduler yunikorn`: schedulingPolicy as YuniKorn reads it from the pods. A task group per
    replicatedJob (minMember: its pods, filled in rank order up to minAvailable), the application id the
    templates agree on (else the JobSet's name), the queue label, the pods' priorityClassName,
    scheduleTimeoutSeconds as the placeholder timeout. What you wrote on the templates stays."""
    sp = job.run_policy.scheduling
    pods = {rj["name"]: rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]}
    left = sp.min_available if sp.min_available is not None else sum(r.replicas for r in p.rjobs)
    groups = []
    for rj in p.rjobs:
        n = max(0, min(rj.replicas, left))
        left -= n
        if not n:
            continue
        spec = pods[rj.name].get("spec") or {}
        group = {"name": rj.name, "minMember": n, "minResource": _pod_request(pods[rj.name])}
        for f in ("nodeSelector", "tolerations", "affinity"):  # placeholders land where the pods may
            if spec.get(f):
                group[f] = spec[f]
        groups.append(group)
    text = json.dumps(groups, separators=(",", ":"))
    named = {g["name"] for g in groups}
    # pods that name no application join the one the others name, if they agree on one: the JobSet's name
    # would split the gang in two applications
    written = {app_id(pods[rj.name]) for rj in p.rjobs} - {None}
    application = next(iter(written)) if len(written) == 1 else p.name
    for rj in p.rjobs:
        pod = pods[rj.name]
        pod["spec"].setdefault("schedulerName", SCHEDULER_NAME)
        if sp.priority_class:
            pod["spec"].setdefault("priorityClassName", sp.priority_class)
        labels = pod.setdefault("metadata", {}).setdefault("labels", {})
        ann = pod["metadata"].setdefault("annotations", {})
        if app_id(pod) is None:
            labels[APP_ID_KEYS[0]] = application
        if sp.queue and not (labels.get(QUEUE_LABEL) or labels.get("queue") or ann.get(QUEUE_LABEL)):
            labels[QUEUE_LABEL] = sp.queue
        if TASK_GROUPS not in ann:
            ann[TASK_GROUPS] = text
            if rj.name in named:
                ann.setdefault(TASK_GROUP_NAME, rj.name)
        if sp.schedule_timeout_seconds is not None:
            ann.setdefault(POLICY_PARAMETERS, f"placeholderTimeoutInSeconds={sp.schedule_timeout_seconds}")
    sizes = ", ".join(f"{g['name']} x{g['minMember']}" for g in groups)
    partial = sp.min_available is not None and sp.min_available < sum(r.replicas for r in p.rjobs)
    notes.append(Note(
        "JS094", "approximated" if partial else "rewritten",
        f"schedulingPolicy for YuniKorn: the pods use schedulerName yunikorn, application id {application} ("
        + ("the one your templates name" if written else "the JobSet's name")
        + f") and one task group per replicatedJob ({sizes}) "
        "in yunikorn.apache.org/task-groups"
        + (", the queue label" if sp.queue else "") + (", the pods' priorityClassName" if sp.priority_class else "")
        + (", placeholderTimeoutInSeconds" if sp.schedule_timeout_seconds is not None else "")
        + (f"; minAvailable {sp.min_available} is met by the first pods in rank order (task groups are per type)" if partial else "")
        + ". YuniKorn's default Soft style schedules pod by pod once the placeholders time out (15 min by default); "
        "v1's gang schedulers never did",
        source_path="runPolicy.schedulingPolicy",
        explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*"), ("label", "yunikorn.apache.org/*")),
        action="add gangSchedulingStyle=Hard to yunikorn.apache.org/schedulingPolicyParameters to fail instead",
        claims=tuple(claim.equals(pod_path(rj.name) + ".spec.schedulerName",
                                  (job.replicas[rj.rtype].template.get("spec") or {}).get("schedulerName", SCHEDULER_NAME))
                     for rj in p.rjobs)
        + tuple(claim.present(pod_path(rj.name) + f".metadata.annotations[{TASK_GROUPS}]") for rj in p.rjobs)))
    return []


class YuniKorn(Scheduler):
    name = SCHEDULER_NAME
    named_after_every_job = True  # the application id --scheduler yunikorn writes is the job's name
    pod_scheduler_names = (SCHEDULER_NAME,)

    def objects(self, job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict,
                notes: list[Note]) -> list[dict]:
        self.require_name(p, rule="yunikorn-name", what="the application id")
        return yunikorn_task_groups(job, p, jobset, notes)

    def pod_findings(self, jobset: dict, notes: list[Note]) -> None:
        yunikorn_findings(jobset, notes)

    def size_literals(self, jobset: dict) -> list[str]:
        return task_group_literals(jobset)

    def trainer_notes(self, scheduler_name: str) -> list[Note]:
        return [Note(
            "TJ048", "rewritten",
            "YuniKorn reads the application, queue and task groups from the pods: schedulerName yunikorn is the "
            "runtime's (its yunikorn flavour), the labels and annotations v1's templates had (or --scheduler yunikorn "
            "wrote) are the TrainJob's, as pod metadata in runtimePatches, so every pod of the JobSet Trainer builds "
            "carries them as v1's did",
            target_path="spec.runtimePatches", explains=(("scheduling", "*"), ("lifecycle", "schedulingPolicy")),
            claims=(claim.equals("spec.replicatedJobs[*].template.spec.template.spec.schedulerName", SCHEDULER_NAME),))]


SCHEDULER = YuniKorn()
