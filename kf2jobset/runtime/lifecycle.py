"""Lifecycle rules of each world: who decides success, what a failed pod does, retries, cleanup,
deadline, TTL, suspend, gang scheduling, whole-job restarts, start order.

Both models use one small vocabulary of tokens so that the two worlds can be compared rule by rule:
- `operator_lifecycle(job)` states what the v1 operator (or mpi-operator) did, from the facts in
  reference/training-operator.md §1.6, §2.5, §3.6, §4.4, §5.3, §6.3 and §9.2;
- `jobset_lifecycle(jobset, companions)` reads only the JobSet manifest (and its companion
  objects) and states what the JobSet and Job controllers do (reference/jobset.md §4.6-§4.9).

Job-level rules are `Lifecycle.job[rule]`; per-replica-type rules are `Lifecycle.roles[role][rule]`,
keyed by the lower-case role (= replicatedJob name). Values are tokens or small tuples; `describe`
turns one into a phrase for the report. Pure: no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..frameworks import profile as get_profile
from ..model import TrainingJob

MAX_INT32 = 2147483647
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"

# Per-role rule names, and the job-level ones. A note that explains ("lifecycle", R) covers rule R
# for every replica type (see kf2jobset.report.explain).
ROLE_RULES = ("start", "restartPolicy", "failure", "backoffLimit")
JOB_RULES = ("success", "cleanPodPolicy", "activeDeadlineSeconds", "ttl", "suspend", "schedulingPolicy",
             "restarts", "managedBy")

_PHRASES = {
    # failure: what happens when a pod of this role ends in phase Failed
    "recreate": "the pod is replaced and the job goes on",
    "fail-job": "the whole job fails",
    "exit-code": "exit codes 1-127 fail the job; other failures replace the pod",
    "ignored": "ignored (the job goes on without it)",
    "stuck": "the job is marked Restarting but nothing replaces the pod",
    "launcher-decides": "not replaced; the job fails only if the launcher fails (or the worker is evicted)",
    # cleanPodPolicy: what is deleted when the job finishes
    "keep-all": "nothing is deleted: unfinished pods keep running",
    "delete-active": "running and pending pods are deleted",
    "delete-all": "every pod is deleted",
    "delete-workers": "worker pods are deleted, the launcher Job stays",
    # start
    "at-once": "starts with the others",
    # restarts
    "never": "never",
    # managedBy
    "default": "the built-in controller",
}


def describe(value, rule: str | None = None) -> str:
    """A phrase for a rule value, for the report (no retry limit reads "unlimited", not "none")."""
    if value is None:
        return "unlimited" if rule == "backoffLimit" else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return _PHRASES.get(value, value)
    if isinstance(value, tuple) and value and value[0] in ("all", "any") and len(value) > 1:
        roles = " and ".join(value[1]) or "no"
        text = f"succeeds when {'every' if value[0] == 'all' else 'any'} {roles} pod has succeeded"
        return text + (f", {value[2]}" if len(value) > 2 else "")
    if value == ("never",):
        return "never succeeds"
    if isinstance(value, tuple) and value and value[0] == "after":
        return "starts after " + " and ".join(f"{r} is {s}" for r, s in value[1])
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value)
    return str(value)


@dataclass
class Lifecycle:
    job: dict = field(default_factory=dict)
    roles: dict = field(default_factory=dict)  # role (lower case) -> {rule: value}

    def as_dict(self) -> dict:
        return {"job": self.job, "roles": self.roles}


# ---------------------------------------------------------------- operator side

def operator_lifecycle(job: TrainingJob) -> Lifecycle:
    """What the operator did. The rules common to every kind live here; each framework profile states
    its kind's own (who decides success, start order, failure handling: see `Profile.operator_*`)."""
    prof = get_profile(job.mapping.profile)
    rp = job.run_policy
    out = Lifecycle()
    out.job["success"] = prof.operator_success(job)
    out.job["cleanPodPolicy"] = {"None": "keep-all", "Running": "delete-active", "All": "delete-all"}[rp.clean_pod_policy]
    # The operator only checks the deadline when it reconciles the job: its requeue at the deadline goes to a
    # no-op work queue (FakeWorkQueue.AddAfter), so a job whose pods and object stay unchanged runs past it.
    out.job["activeDeadlineSeconds"] = (
        None if rp.active_deadline_seconds is None
        else (int(rp.active_deadline_seconds), "whole job, enforced only when a pod or job change makes the operator reconcile it")
    )
    # v1 deleted the job object (its pods go with it).
    out.job["ttl"] = None if rp.ttl_seconds_after_finished is None else (int(rp.ttl_seconds_after_finished), "job and its pods")
    out.job["suspend"] = bool(rp.suspend)
    out.job["schedulingPolicy"] = _operator_gang(job)
    out.job["restarts"] = "never"  # v1 never restarts the whole job
    out.job["managedBy"] = "multikueue" if rp.managed_by == MULTIKUEUE else "default"
    if rp.managed_by not in (None, MULTIKUEUE, "kubeflow.org/training-operator", "kubeflow.org/mpi-operator"):
        out.job["managedBy"] = rp.managed_by
    prof.operator_job_rules(job, out.job)

    for rtype, spec in job.replicas.items():
        role = spec.rjob_name
        policy = spec.restart_policy
        failure, retries = prof.operator_failure(job, rtype, policy), prof.operator_retries(job, rtype, policy)
        if rp.backoff_limit == 0 and not job.by_mpi_operator:
            # ReconcileJobs checks the limits before any kind's own rule: with backoffLimit 0 a new Failed pod
            # (any exit code, any restartPolicy) or any container restart fails the job (§1.6 step 4).
            failure, retries = "fail-job", 0
        out.roles[role] = {
            "start": prof.operator_start(job, rtype),
            "restartPolicy": "Never" if policy == "ExitCode" else policy,
            "failure": failure,
            "backoffLimit": retries,
        }
    return out


def _operator_gang(job: TrainingJob) -> dict:
    sp = job.run_policy.scheduling
    out = {}
    queue = sp.queue or job.labels.get(KUEUE_QUEUE_LABEL)
    if queue:
        out["queue"] = str(queue)
    if sp.priority_class:
        out["priorityClass"] = str(sp.priority_class)
    if sp.min_available is not None:
        out["minAvailable"] = int(sp.min_available)
    if sp.min_resources:
        out["minResources"] = ",".join(f"{k}={v}" for k, v in sorted(sp.min_resources.items()))
    if sp.schedule_timeout_seconds is not None:
        out["scheduleTimeoutSeconds"] = int(sp.schedule_timeout_seconds)
    return out


# ---------------------------------------------------------------- JobSet side

def managed_by_rule(managed, own_controller: str) -> str:
    """Who reconciles the object, as the lifecycle compares it: its own controller (unset or named), MultiKueue,
    or another manager by name (a JobSet's spec.managedBy, a TrainJob's: the controller that runs the job)."""
    return "default" if managed in (None, own_controller) else "multikueue" if managed == MULTIKUEUE else managed


def jobset_lifecycle(jobset: dict, companions: list[dict] = (), roles: dict | None = None) -> Lifecycle:
    """`roles`: replicatedJob name -> role, for replicatedJobs that together hold one replica type
    (kf2jobset's plan.pod_roles); their rules are read as that role's, "differs" when they disagree."""
    spec = jobset.get("spec") or {}
    rjobs = spec.get("replicatedJobs") or []
    names = [r.get("name") for r in rjobs]
    # a replicatedJob may hold several roles (Trainer's `node` Job: the master and the workers)
    alias = {n: _as_tuple((roles or {}).get(n, n)) for n in names}

    def as_roles(items):
        out_names = []
        for n in items:
            for role in alias.get(n, (n,)):
                if role not in out_names:
                    out_names.append(role)
        return tuple(out_names)

    out = Lifecycle()
    sp = spec.get("successPolicy") or {"operator": "All"}
    # a Job that succeeds once its index 0 has (a Job successPolicy) is decided by the role of pod 0 alone
    first_only = {r.get("name") for r in rjobs if _index_zero_decides((r.get("template") or {}).get("spec") or {})}
    targets = as_roles([n for n in sp.get("targetReplicatedJobs") or names if n not in first_only]) + tuple(
        alias[n][0] for n in sp.get("targetReplicatedJobs") or names if n in first_only and alias.get(n))
    out.job["success"] = (str(sp.get("operator", "All")).lower(), targets)
    out.job["cleanPodPolicy"] = "delete-active"  # a finished JobSet deletes its still-active Jobs
    deadlines = {(r.get("template") or {}).get("spec", {}).get("activeDeadlineSeconds") for r in rjobs}
    if deadlines == {None}:
        out.job["activeDeadlineSeconds"] = None
    elif len(deadlines) == 1:
        out.job["activeDeadlineSeconds"] = (int(next(iter(deadlines))), "each child Job, from its own start")
    else:
        out.job["activeDeadlineSeconds"] = ("differs per replicatedJob",)
    ttl = spec.get("ttlSecondsAfterFinished")
    out.job["ttl"] = None if ttl is None else (int(ttl), "job and its pods")
    out.job["suspend"] = bool(spec.get("suspend", False))
    out.job["schedulingPolicy"] = _jobset_gang(jobset, companions)
    fp = spec.get("failurePolicy")
    out.job["restarts"] = "never" if not fp else (int(fp.get("maxRestarts", 0)), "whole-JobSet restarts")
    out.job["managedBy"] = managed_by_rule(spec.get("managedBy"), "jobset.sigs.k8s.io/jobset-controller")

    in_order = (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder"
    for k, rj in enumerate(rjobs):
        job_spec = (rj.get("template") or {}).get("spec") or {}
        pod_spec = (job_spec.get("template") or {}).get("spec") or {}
        deps = tuple((d.get("name"), d.get("status")) for d in rj.get("dependsOn") or [])
        if in_order and k > 0:
            # InOrder: an rjob's Jobs are created once every Job of the rjobs before it has started (ready).
            deps = tuple((names[j], "Ready") for j in range(k)) + deps
        failure, retries = _job_failure(job_spec, pod_spec)
        for role in alias[rj["name"]]:
            # A replicatedJob listed after another part of its own role waits for nothing of its own role.
            waits = tuple(dict.fromkeys((r, st) for n, st in deps for r in alias.get(n, (n,)) if r != role))
            rules = {
                "start": ("after", waits) if waits else "at-once",
                "restartPolicy": pod_spec.get("restartPolicy", "OnFailure"),
                "failure": failure,
                "backoffLimit": retries,
            }
            if role in out.roles:
                for rule, value in rules.items():
                    if out.roles[role][rule] != value:
                        out.roles[role][rule] = ("differs per replicatedJob", out.roles[role][rule], value)
            else:
                out.roles[role] = rules
    return out


def _index_zero_decides(job_spec: dict) -> bool:
    """The Job's successPolicy: it succeeds as soon as completion index 0 has (Trainer bundle's node Job)."""
    rules = (job_spec.get("successPolicy") or {}).get("rules") or []
    return bool(rules) and all(r.get("succeededIndexes") == "0" and "succeededCount" not in r for r in rules)


def _as_tuple(role) -> tuple:
    return role if isinstance(role, tuple) else (role,)


def _job_failure(job_spec: dict, pod_spec: dict):
    backoff = job_spec.get("backoffLimit", 6)
    exit_rule = False
    for rule in (job_spec.get("podFailurePolicy") or {}).get("rules") or []:
        codes = rule.get("onExitCodes") or {}
        if rule.get("action") == "FailJob" and codes.get("operator") == "In" and set(codes.get("values") or []) >= set(range(1, 128)):
            exit_rule = True
    if exit_rule:
        failure = "exit-code" if backoff > 0 else "fail-job"
    else:
        failure = "fail-job" if backoff == 0 else "recreate"
    if backoff == 0:
        retries = 0
    elif backoff >= MAX_INT32:
        retries = None
    else:
        retries = (int(backoff), "per Job")
    return failure, retries


def _jobset_gang(jobset: dict, companions) -> dict:
    out = {}
    labels = (jobset.get("metadata") or {}).get("labels") or {}
    if labels.get(KUEUE_QUEUE_LABEL):
        out["queue"] = str(labels[KUEUE_QUEUE_LABEL])
    name = (jobset.get("metadata") or {}).get("name")
    for obj in companions or ():
        if obj.get("kind") == "PodGroup" and (obj.get("metadata") or {}).get("name") == name:
            g = obj.get("spec") or {}
            if g.get("queue"):
                out["queue"] = str(g["queue"])
            if g.get("priorityClassName"):
                out["priorityClass"] = str(g["priorityClassName"])
            if g.get("minMember") is not None:
                out["minAvailable"] = int(g["minMember"])
            if g.get("minResources"):
                out["minResources"] = ",".join(f"{k}={v}" for k, v in sorted(g["minResources"].items()))
    return out
