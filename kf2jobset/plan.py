"""Layout decisions: replicatedJob order and names, start order, success rule, Job-level retry fields.

Layout: one replicatedJob per replica type, `replicas` = the type's replica count, and ONE pod per
child Job (completions = parallelism = 1), like the operator's one pod per replica. Then:
- the pod of replica i is completion index 0 of Job `<jobset>-<rjob>-<i>`: hostname `<jobset>-<rjob>-<i>-0`;
- `job-index` = i, and `job-global-index` = replicas of earlier replicatedJobs + i, which is
  exactly the operator's RANK when the types are listed in rank order (master first);
- a failed pod is retried by its own Job, as the operator recreated that one pod.

A profile may ask for one replica type's pod 0 to get a replicatedJob of its own (`Profile.solo_first`,
e.g. PaddlePaddle's first pod, whose env differs from its peers'): the type is then two replicatedJobs,
`<type>0` (replicas 1) and `<type>` (replicas n-1, job-index i-1), listed in that order, so the global
index is still the operator's replica index.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import claims as claim
from .claims import pod_path
from .frameworks import profile as get_profile
from .model import TrainingJob, default_container
from .notes import Note
from .options import ConvertOptions
from .schedulers import scheduler

MAX_INT32 = 2147483647
K8S_DEFAULT_BACKOFF = 6


@dataclass
class ReplicatedJobPlan:
    rtype: str
    name: str
    replicas: int
    pod_restart_policy: str  # OnFailure | Never
    backoff_limit: int
    depends_on: list = field(default_factory=list)  # [(rjob name, status)]
    pod_failure_policy: dict | None = None
    active_deadline_seconds: int | None = None
    first_index: int = 0  # the replica index (within rtype) of this replicatedJob's job-index 0


SOLO_SUFFIX = "0"  # name suffix of the replicatedJob that holds a type's pod 0 alone


@dataclass
class JobSetPlan:
    name: str | None
    generate_name: str | None
    namespace: str | None
    rjobs: list[ReplicatedJobPlan]
    success_operator: str
    success_targets: list[str]
    startup_in_order: bool
    notes: list[Note]

    @property
    def rjob_names(self) -> dict:
        """replica type -> its main replicatedJob (the one holding the type's pods 1…n-1 when pod 0 is alone)."""
        return {r.rtype: r.name for r in self.rjobs}

    @property
    def global_offsets(self) -> dict:
        """replica type -> job-global-index of its pod 0."""
        out, total = {}, 0
        for r in self.rjobs:
            out.setdefault(r.rtype, total)
            total += r.replicas
        return out

    @property
    def segments(self) -> dict:
        """replica type -> [(replicatedJob name, first replica index, replicas)], in order."""
        out: dict = {}
        for r in self.rjobs:
            out.setdefault(r.rtype, []).append((r.name, r.first_index, r.replicas))
        return out

    @property
    def pod_roles(self) -> dict:
        """replicatedJob name -> (replica type's lower-case role, replica index of its job-index 0)."""
        return {r.name: (r.rtype.lower().replace("/", "-"), r.first_index) for r in self.rjobs}

    def rjob_names_of(self, rtype: str) -> list[str]:
        return [r.name for r in self.rjobs if r.rtype == rtype]


def _matches(when: dict, job: TrainingJob) -> bool:
    for key, value in when.items():
        if key == "has" and not job.has(value):
            return False
        if key == "elastic" and (job.framework.get("elasticPolicy") is not None) != value:
            return False
        if key == "successPolicy" and job.framework.get("successPolicy") != value:
            return False
        if key == "replicas" and any(_count(job, t) != n for t, n in value.items()):
            return False  # pods per type; an absent type has 0
        if key == "only" and any(_count(job, t) for t in job.replicas if t not in value):
            return False  # no type outside the list has a pod
        if key == "framework" and any(job.framework.get(k) != v for k, v in value.items()):
            return False
    return True


def _count(job: TrainingJob, rtype: str) -> int:
    return job.replicas[rtype].replicas if job.has(rtype) else 0


def gang_without_name(job: TrainingJob, p, options: ConvertOptions) -> bool:
    """A gang the operator made for every job (no schedulingPolicy needed) that cannot be written here: the
    PodGroup or application is named after the job, and it has no name yet. (With a schedulingPolicy the
    job is refused instead: the user asked for that gang.)"""
    return (scheduler(options.scheduler).named_after_every_job and job.run_policy.scheduling.is_empty()
            and not (p.name if p is not None else options.name or job.name))


def gang_blocks_start_order(job: TrainingJob, options: ConvertOptions) -> int | None:
    """The gang's size when a PodGroup kf2jobset writes would deadlock a start order: the gang scheduler binds
    no pod of the group before minMember pods exist, and dependsOn (or InOrder) makes the later types' pods
    only once the earlier ones are Ready. The operator made every pod at once. Else None."""
    sp = job.run_policy.scheduling
    if scheduler(options.scheduler).podgroup is None or gang_without_name(job, None, options):
        return None
    later = {r.type for r in job.mapping.start_order
             if job.has(r.type) and job.has(r.after) and job.replicas[r.after].replicas != 0}
    total = sum(s.replicas for s in job.replicas.values())
    size = sp.min_available if sp.min_available is not None else total
    first = total - sum(job.replicas[t].replicas for t in later)
    return size if later and size > first else None


def plan(job: TrainingJob, options: ConvertOptions) -> JobSetPlan:
    notes: list[Note] = []
    name = options.name or job.name
    rjobs = [_plan_rjob(job, rtype, options, notes) for rtype in job.replicas]
    solo = _solo_first(job)
    if solo is not None:
        rjobs = _split_first(rjobs, solo)
    names = {r.rtype: r.name for r in rjobs}

    in_order = False
    gang = gang_blocks_start_order(job, options)
    for rule in job.mapping.start_order:
        if not (job.has(rule.type) and job.has(rule.after)) or job.replicas[rule.after].replicas == 0:
            continue
        if gang is not None:
            notes.append(Note(
                "JS092", "approximated",
                f"{rule.type} starts with {rule.after}, not after it is {rule.status}: the {options.scheduler} gang binds "
                f"no pod before {gang} pods exist, so holding {rule.type} back (dependsOn) would leave every pod Pending "
                f"for ever. The operator made every pod at once too"
                + (f" ({rule.operator_wait})" if rule.operator_wait else ""),
                source_path="runPolicy.schedulingPolicy", target_path=f"spec.replicatedJobs[{names[rule.type]}]",
                replica_type=rule.type, explains=(("start", rule.type),),
                action=f"make {rule.type} wait for {rule.after} in its own start-up if it must, or lower "
                       "schedulingPolicy.minAvailable to the pods that start first",
                claims=tuple(claim.absent(f"spec.replicatedJobs[{t.name}].dependsOn") for t in rjobs if t.rtype == rule.type)
                + (claim.absent("spec.startupPolicy"),)))
            continue
        targets_of_rule = [r for r in rjobs if r.rtype == rule.type]
        if options.has("dependsOn"):
            for target in targets_of_rule:
                target.depends_on += [(r.name, rule.status) for r in rjobs if r.rtype == rule.after]
        else:
            in_order = True  # replicatedJobs are already listed in start order
        if rule.noted_by_profile is None or not _matches(rule.noted_by_profile, job):
            if options.has("dependsOn"):
                claims = tuple(claim.equals(f"spec.replicatedJobs[{t.name}].dependsOn[{r.name}].status", rule.status)
                               for t in targets_of_rule for r in rjobs if r.rtype == rule.after)
            else:
                claims = (claim.equals("spec.startupPolicy.startupPolicyOrder", "InOrder"),)
            notes.append(Note(
                "JS010", "rewritten" if options.has("dependsOn") else "approximated",
                f"{rule.type} starts after {rule.after} is {rule.status}"
                + ("" if options.has("dependsOn") else " (startupPolicy InOrder: JobSet < v0.8 has no dependsOn)"),
                target_path=f"spec.replicatedJobs[{names[rule.type]}]", replica_type=rule.type,
                explains=(("start", rule.type),), claims=claims,
            ))

    if job.run_policy.backoff_limit is not None:
        notes.append(_backoff_note(job, rjobs))
    rule = next(r for r in job.mapping.success if _matches(r.when, job))
    targets = [r.name for t in rule.targets for r in rjobs if r.rtype == t]
    if not rule.exact:
        # The mapping names the case (`note:`); the kind's profile words it.
        notes.append(get_profile(job.mapping.profile).success_note(job, rule.note, targets))
    return JobSetPlan(
        name=name,
        generate_name=None if name else job.generate_name,
        namespace=job.namespace,
        rjobs=rjobs,
        success_operator=rule.operator,
        success_targets=targets,
        startup_in_order=in_order,
        notes=notes,
    )


def _backoff_note(job: TrainingJob, rjobs: list[ReplicatedJobPlan]) -> Note:
    """JS034: where runPolicy.backoffLimit went, read from the plan that decided each Job's limit."""
    limit = job.run_policy.backoff_limit
    given = [r.name for r in rjobs if r.backoff_limit == limit]
    others = [r for r in rjobs if r.backoff_limit != limit]

    def limit_of(r):
        return f"the {r.name} Job has no limit" if r.backoff_limit == MAX_INT32 else f"the {r.name} Job's limit is {r.backoff_limit}"

    def why(r):
        if job.by_mpi_operator:
            return ("mpi-operator never retried a failed worker pod" if r.backoff_limit == 0 else
                    "the kubelet restarted the worker's container in place without limit")
        if r.backoff_limit == 0:
            return f"under restartPolicy {job.replicas[r.rtype].restart_policy} v1 failed the job on its first failed pod"
        return "v1 set no limit on it"

    rest = "; ".join(f"{limit_of(r)} ({why(r)})" for r in others)
    if job.by_mpi_operator:
        text = (f"backoffLimit {limit}: mpi-operator gave it to the launcher Job only, and so does the JobSet"
                + (f"; {rest}" if rest else ""))
        category = "rewritten"
    else:
        text = (f"backoffLimit {limit}: v1 counted container restarts summed over the whole job (pods under "
                "OnFailure, Always or ExitCode); "
                + ("no child Job carries it" if not given else
                   f"the {given[0]} Job now counts its own pod's failures and restarts against it" if len(given) == 1 else
                   f"the child Jobs of {', '.join(given)} now each count their own pod's failures and restarts against it")
                + (f"; {rest}" if rest else ""))
        category = "approximated"
    return Note("JS034", category, text, source_path="runPolicy.backoffLimit",
                target_path="spec.replicatedJobs[*].template.spec.backoffLimit",
                explains=(("lifecycle", "backoffLimit"),),
                claims=tuple(claim.equals(f"spec.replicatedJobs[{r.name}].template.spec.backoffLimit", r.backoff_limit)
                             for r in rjobs))


def _solo_first(job: TrainingJob) -> str | None:
    rtype = get_profile(job.mapping.profile).solo_first(job)
    if rtype is None or job.replicas[rtype].replicas <= 1:
        return None
    return rtype


def _split_first(rjobs: list[ReplicatedJobPlan], rtype: str) -> list[ReplicatedJobPlan]:
    """`rtype` becomes `<name>0` (its pod 0 alone) followed by `<name>` (pods 1…n-1)."""
    import copy

    out = []
    for r in rjobs:
        if r.rtype != rtype:
            out.append(r)
            continue
        first = copy.deepcopy(r)
        first.name, first.replicas = r.name + SOLO_SUFFIX, 1
        rest = copy.deepcopy(r)
        rest.replicas, rest.first_index = r.replicas - 1, 1
        out += [first, rest]
    return out


def _plan_rjob(job: TrainingJob, rtype: str, options: ConvertOptions, notes: list[Note]) -> ReplicatedJobPlan:
    spec = job.replicas[rtype]
    rp = job.run_policy
    policy = spec.restart_policy
    src = f"{job.mapping.replica_specs_field}.{spec.source_key}.restartPolicy"
    pfp = None
    if policy == "Always":
        pod_policy = "OnFailure"
        notes.append(Note(
            # approximated, not rewritten: a container that exits 0 ran again under v1, and is done now
            "JS020", "approximated",
            f"{rtype}: restartPolicy Always is not allowed in a Job; OnFailure restarts a failing container in place "
            "the same way, but a Job pod that exits 0 is done instead of restarted",
            source_path=src, target_path=f"spec.replicatedJobs[{spec.rjob_name}].template.spec.template.spec.restartPolicy",
            replica_type=rtype, explains=(("restartPolicy", rtype),),
            claims=(claim.equals(pod_path(spec.rjob_name) + ".spec.restartPolicy", "OnFailure"),),
        ))
    elif policy == "ExitCode":
        pod_policy = "Never"
        name = job.mapping.default_container
        # The operator read the exit code of the default-named container only (common pod reconcile,
        # v1.5-v1.9). Without one (a job JS060 describes) it saw its magic 0xbeef, a retryable code, and
        # recreated the pod on every failure: no rule, so the Job retries every failure too. MPIJob v1's
        # own pod reconcile reads no container's exit code (mapping without withoutDefaultContainer).
        if name and job.mapping.without_default_ran is not None:
            container = next((c for c in spec.containers if c.get("name") == name), None)
        else:
            container = default_container(spec.template, name)
        named = container is not None and bool(container.get("name"))
        if named:
            pfp = {"rules": [{
                "action": "FailJob",
                "onExitCodes": {"containerName": container["name"], "operator": "In", "values": list(range(1, 128))},
            }]}
    else:
        pod_policy = policy

    if job.by_mpi_operator and rtype == "Launcher":
        # mpi-operator v2beta1 ran the launcher as a batch Job with runPolicy.backoffLimit (default 6).
        backoff = rp.backoff_limit if rp.backoff_limit is not None else K8S_DEFAULT_BACKOFF
    elif job.by_mpi_operator:
        # mpi-operator made the worker pods itself, never through a Job: runPolicy.backoffLimit never
        # reached them. A failed pod stayed failed (MPI007); OnFailure/Always restarted it in place
        # without limit (the kubelet), which only an unlimited Job backoffLimit keeps.
        backoff = 0 if pod_policy == "Never" and pfp is None else MAX_INT32
    elif pod_policy == "Never" and pfp is None and policy != "ExitCode":
        backoff = 0  # v1: a failed pod under Never failed the job
    elif rp.backoff_limit is not None:
        backoff = rp.backoff_limit
    else:
        backoff = MAX_INT32  # v1 recreated/restarted without limit unless runPolicy.backoffLimit was set
    if policy == "ExitCode":
        rjob = f"spec.replicatedJobs[{spec.rjob_name}].template.spec"
        if pfp is None:
            text = "Never, and the Job retries no failure" if backoff == 0 else "Never, and the Job retries every failure"
            if job.mapping.default_container and job.mapping.without_default_ran is not None:
                text += (f" (v1 read the exit code of a container named {job.mapping.default_container!r} only; "
                         "there is none, so it saw a retryable code on every failure)")
            claims = ()
        else:
            rule = pfp["rules"][0]["onExitCodes"]
            text = (f"Never plus a Job podFailurePolicy: exit codes 1-127 of container {rule['containerName']!r} fail the "
                    "Job (and so the JobSet), " + (
                        "and so does any other failure (runPolicy.backoffLimit 0: the Job retries nothing)" if backoff == 0 else
                        "other failures (exit >= 128, evictions) are retried by the Job under a new pod name, after the "
                        "Job controller's back-off (10 s, doubling up to 6 min)"))
            claims = (claim.equals(f"{rjob}.podFailurePolicy.rules[0].onExitCodes.containerName", rule["containerName"]),
                      claim.equals(f"{rjob}.podFailurePolicy.rules[0].onExitCodes.values", rule["values"]),
                      claim.equals(f"{rjob}.podFailurePolicy.rules[0].action", "FailJob"))
        notes.append(Note(
            "JS021", "rewritten" if backoff == 0 else "approximated",
            f"{rtype}: restartPolicy ExitCode becomes pod restartPolicy {text}; " + (
                "v1 too failed the job on its first failed pod" if backoff == 0 else
                "v1 recreated the pod at once under the same name"), source_path=src, target_path=f"{rjob}.podFailurePolicy",
            replica_type=rtype, explains=(("restartPolicy", rtype),),
            claims=claims + (claim.equals(pod_path(spec.rjob_name) + ".spec.restartPolicy", "Never"),
                             claim.equals(f"{rjob}.backoffLimit", backoff)),
        ))
    return ReplicatedJobPlan(
        rtype=rtype,
        name=spec.rjob_name,
        replicas=spec.replicas,
        pod_restart_policy=pod_policy,
        backoff_limit=backoff,
        pod_failure_policy=pfp,
        active_deadline_seconds=rp.active_deadline_seconds,
    )
