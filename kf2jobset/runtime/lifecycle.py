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


def describe(value) -> str:
    """A phrase for a rule value, for the report."""
    if value is None:
        return "none"
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
    rp = job.run_policy
    kind = job.kind
    mpi_v2 = kind == "MPIJob" and not job.is_mpi_v1
    out = Lifecycle()
    out.job["success"] = _operator_success(job)
    if mpi_v2:
        out.job["cleanPodPolicy"] = "keep-all" if rp.clean_pod_policy == "None" else "delete-workers"
    else:
        out.job["cleanPodPolicy"] = {"None": "keep-all", "Running": "delete-active", "All": "delete-all"}[rp.clean_pod_policy]
    deadline_scope = "launcher Job" if mpi_v2 else "whole job"
    out.job["activeDeadlineSeconds"] = (
        None if rp.active_deadline_seconds is None else (int(rp.active_deadline_seconds), deadline_scope)
    )
    # v1 deleted the job object (its pods go with it); mpi-operator v2beta1 only set it on the launcher Job.
    out.job["ttl"] = None if rp.ttl_seconds_after_finished is None else (
        int(rp.ttl_seconds_after_finished), "launcher Job" if mpi_v2 else "job and its pods")
    out.job["suspend"] = bool(rp.suspend)
    out.job["schedulingPolicy"] = _operator_gang(job)
    out.job["restarts"] = "never"  # v1 never restarts the whole job
    out.job["managedBy"] = "multikueue" if rp.managed_by == MULTIKUEUE else "default"
    if rp.managed_by not in (None, MULTIKUEUE, "kubeflow.org/training-operator", "kubeflow.org/mpi-operator"):
        out.job["managedBy"] = rp.managed_by

    for rtype, spec in job.replicas.items():
        role = spec.rjob_name
        policy = spec.restart_policy
        out.roles[role] = {
            "start": _operator_start(job, rtype),
            "restartPolicy": "Never" if policy == "ExitCode" else policy,
            "failure": _operator_failure(job, rtype, policy),
            "backoffLimit": _operator_retries(job, rtype, policy),
        }
    return out


def _operator_success(job: TrainingJob):
    has = job.has
    kind = job.kind
    fw = job.framework
    if kind == "TFJob":
        chiefs = [t.lower() for t in ("Chief", "Master") if has(t)]
        if chiefs:
            return ("all", tuple(chiefs))
        if has("Worker"):
            if fw.get("successPolicy") == "AllWorkers":
                return ("all", ("worker",))
            return ("all", ("worker",), "or worker 0 exits 0")
        return ("never",)
    if kind == "PyTorchJob":
        if has("Master"):
            return ("all", ("master",))
        return ("any", ("worker",)) if fw.get("elasticPolicy") is not None else ("all", ("worker",))
    if kind == "XGBoostJob":
        return ("all", ("master",))
    if kind == "MPIJob":
        return ("all", ("launcher",))
    if kind == "PaddleJob":
        return ("all", ("master",)) if has("Master") else ("all", ("worker",))
    if kind == "JAXJob":
        return ("all", ("worker",))
    return ("all", tuple(sorted(t.lower() for t in job.replicas)))


def _operator_start(job: TrainingJob, rtype: str):
    # PyTorch workers wait in init-pytorch until the master's per-pod Service resolves; that Service
    # does not publish not-ready addresses, so in effect they wait for the master to be Ready.
    if job.kind == "PyTorchJob" and rtype == "Worker" and job.has("Master"):
        return ("after", (("master", "Ready"),))
    if job.kind == "MPIJob" and rtype == "Launcher" and job.has("Worker") and job.replicas["Worker"].replicas > 0:
        if job.is_mpi_v1:
            # kubectl-delivery blocks until every worker in the hostfile is Running and Ready.
            return ("after", (("worker", "Ready"),))
        if job.framework.get("launcherCreationPolicy") == "WaitForWorkersReady":
            return ("after", (("worker", "Ready"),))
    return "at-once"


def _operator_failure(job: TrainingJob, rtype: str, policy: str) -> str:
    kind = job.kind
    if kind == "MPIJob":
        if job.is_mpi_v1:
            return "stuck" if policy == "ExitCode" else "fail-job"  # pods are never recreated
        return "recreate" if rtype == "Launcher" else "launcher-decides"  # the launcher is a batch Job
    if kind == "XGBoostJob":
        return "exit-code" if policy == "ExitCode" else "fail-job"
    if policy == "ExitCode":
        return "exit-code"
    if policy == "Never":
        if kind == "TFJob" and rtype == "Worker" and job.framework.get("enableDynamicWorker"):
            return "ignored"
        return "fail-job"
    return "recreate"


def _operator_retries(job: TrainingJob, rtype: str, policy: str):
    """How many failures the job absorbs before it fails: None = unlimited, 0 = none."""
    bl = job.run_policy.backoff_limit
    if job.kind == "MPIJob" and not job.is_mpi_v1:
        if rtype == "Launcher":
            return (int(bl) if bl is not None else 6, "per Job")  # the launcher Job's own backoffLimit
        return None
    failure = _operator_failure(job, rtype, policy)
    if failure in ("fail-job", "ignored", "stuck") and policy in ("Never", "ExitCode"):
        return 0
    if policy == "ExitCode":
        # Retries go through pod re-creation, which resets restartCount: unbounded unless backoffLimit is 0.
        return 0 if bl == 0 else None
    if bl is None:
        return None
    return (int(bl), "container restarts, summed over the whole job")


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

def jobset_lifecycle(jobset: dict, companions: list[dict] = ()) -> Lifecycle:
    spec = jobset.get("spec") or {}
    rjobs = spec.get("replicatedJobs") or []
    names = [r.get("name") for r in rjobs]
    out = Lifecycle()
    sp = spec.get("successPolicy") or {"operator": "All"}
    targets = tuple(sp.get("targetReplicatedJobs") or names)
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
    managed = spec.get("managedBy")
    out.job["managedBy"] = "default" if managed in (None, "jobset.sigs.k8s.io/jobset-controller") else (
        "multikueue" if managed == MULTIKUEUE else managed)

    in_order = (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder"
    for k, rj in enumerate(rjobs):
        job_spec = (rj.get("template") or {}).get("spec") or {}
        pod_spec = (job_spec.get("template") or {}).get("spec") or {}
        deps = tuple((d.get("name"), d.get("status")) for d in rj.get("dependsOn") or [])
        if in_order and k > 0:
            # InOrder: an rjob's Jobs are created once every Job of the rjobs before it has started (ready).
            deps = tuple((names[j], "Ready") for j in range(k)) + deps
        failure, retries = _job_failure(job_spec, pod_spec)
        out.roles[rj["name"]] = {
            "start": ("after", deps) if deps else "at-once",
            "restartPolicy": pod_spec.get("restartPolicy", "OnFailure"),
            "failure": failure,
            "backoffLimit": retries,
        }
    return out


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
