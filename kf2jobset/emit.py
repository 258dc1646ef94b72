"""JobSetPlan + TrainingJob -> the JobSet dict and its companion objects. Pure: no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field

from .addresses import pod_services, rewrite_pod
from .errors import format_path
from .frameworks import profile as get_profile
from .frameworks.base import EmitContext, OperatorSide
from .images import image_notes
from .model import TrainingJob, env_target_indexes
from .notes import Note
from .choices import SCHEDULERS
from .options import ConvertOptions
from .parse import NULL_PRUNED, v1_webhook_rejections
from .plan import JobSetPlan, plan
from .schedulers.conversion import scheduler_objects, size_literals as scheduler_size_literals
from .sizes import size_contract
from . import name_binding
from .treecopy import copy_tree
from . import claims as claim
from .claims import pod_path

from .jobset_api import API_VERSION  # noqa: E402  (re-exported: emit.API_VERSION)
from .staleness import SOURCE_ANNOTATION  # noqa: E402 (read here and by importers)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBEFLOW_LABEL = "training.kubeflow.org/"
# Labels the JobSet and Job controllers put on every pod (pods carry jobset.sigs.k8s.io/* instead of
# training.kubeflow.org/*); the label notes JS050/JS051 name them.
CONTROLLER_LABELS = (("label", "jobset.sigs.k8s.io/*"), ("label", "batch.kubernetes.io/*"), ("label", "job-name"),
                     ("label", "controller-uid"))


@dataclass
class Conversion:
    """Everything the core produces for one Kubeflow job."""

    job: TrainingJob
    plan: JobSetPlan
    jobset: dict
    companions: list[dict]
    notes: list[Note] = field(default_factory=list)
    upgrade: object = None  # upgrade.Upgrade when the job was written in an older apiVersion
    output: list | None = None  # the objects written, as the target made them (kf2jobset/targets)
    # Set by a target whose objects make a JobSet other than the plan's (Trainer's built-in runtimes):
    # which replicatedJob holds which v1 pod (the report pairs pods by it), and lifecycle rules that
    # live on the target's object rather than on the JobSet (a TrainJob's deadline, its Kueue queue).
    layout: object = None
    lifecycle_overrides: dict = field(default_factory=dict)
    assumed_name_length: int | None = None  # the JobSet was checked for a name this long (no name of its own)
    planned_jobset: dict | None = None  # the plan's JobSet, when a target replaced `jobset` with what runs
    # selectors of other documents of the file rewritten to JobSet labels (selectorfix.PeerEdit)
    peer_edits: list = field(default_factory=list)

    @property
    def objects(self) -> list[dict]:
        return self.output if self.output is not None else [self.jobset, *self.companions]

    @property
    def pods(self):
        """Where the v1 pods are in `jobset`: rjob_names, segments, pod_roles, rjob_names_of (the plan's
        unless a target rebuilt the JobSet)."""
        return self.layout or self.plan


def emit(job: TrainingJob, options: ConvertOptions) -> Conversion:
    p = plan(job, options)
    notes = list(p.notes)
    ctx = EmitContext(job=job, options=options, jobset_name=p.name, rjob_names=p.rjob_names,
                      global_offsets=p.global_offsets, notes=notes, segments=p.segments,
                      start_order=not any(n.code == "JS092" for n in p.notes))
    prof = get_profile(job.mapping.profile)
    prof.notes(job, ctx)  # may raise UnsupportedError (e.g. MPIJob v1 without --accept-mpi-ssh)

    replicated = []
    for rj in p.rjobs:
        pod = _pod_template(job, rj.rtype, rj.pod_restart_policy, ctx, prof, rj.first_index)
        job_spec = {
            "completionMode": "Indexed",
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": rj.backoff_limit,
        }
        if rj.pod_failure_policy:
            job_spec["podFailurePolicy"] = rj.pod_failure_policy
        if rj.active_deadline_seconds is not None:
            job_spec["activeDeadlineSeconds"] = rj.active_deadline_seconds
        job_spec["template"] = pod
        entry = {"name": rj.name, "replicas": rj.replicas}
        if rj.depends_on:
            entry["dependsOn"] = [{"name": n, "status": s} for n, s in rj.depends_on]
        entry["template"] = {"spec": job_spec}
        replicated.append(entry)

    spec: dict = {}
    network = {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    if options.subdomain:
        network["subdomain"] = options.subdomain
    spec["network"] = network
    notes.append(_dns_note(job, p, options))
    success = {"operator": p.success_operator}
    if p.success_targets:
        success["targetReplicatedJobs"] = p.success_targets
    spec["successPolicy"] = success
    if p.startup_in_order:
        spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    _run_policy(job, options, spec, notes)
    spec["replicatedJobs"] = replicated

    jobset = {"apiVersion": API_VERSION, "kind": "JobSet", "metadata": _metadata(job, p, options, notes), "spec": spec}
    companions = (prof.companions(job, ctx) + scheduler_objects(job, p, options, jobset, notes)
                  + pod_services(job, ctx, every_pod=options.v1_pod_services))
    sp = job.run_policy.scheduling
    gang = [f"PodGroup {c['metadata']['name']} {f}" for c in companions if c.get("kind") == "PodGroup"
            for f, computed in (("minMember", sp.min_available is None), ("minResources", sp.min_resources is None))
            if computed and c["spec"].get(f)]  # the operator's defaults, from the replica counts
    size_contract(job, ctx, prof.size_literals(job) + gang + scheduler_size_literals(jobset), jobset)
    name_binding.record(jobset, companions, p.name, p.namespace, options.subdomain)
    return Conversion(job=job, plan=p, jobset=jobset, companions=companions, notes=notes)


def _dns_note(job: TrainingJob, p: JobSetPlan, options: ConvertOptions) -> Note:
    """Pod names and addresses always change form (jobset.md §4.4); the report pairs pods by role and rank."""
    js = p.name or "<jobset>"
    sub = options.subdomain or js
    example = f"{js}-{p.rjobs[0].name}-0-0.{sub}" if p.rjobs else f"{js}-<rjob>-0-0.{sub}"
    if job.mapping.pod_addresses == "podName":
        before = "the v1 launcher reached workers by pod name through kubectl exec"
    elif job.mapping.pod_addresses == "jobService":
        before = "mpi-operator named pods <job>-<role>-<i> under the headless Service <job>"
    else:
        before = "the operator gave each pod its own Service <job>-<type>-<i> (resolvable once the pod was Ready)"
    return Note(
        "JS004", "rewritten",
        f"pods are reached through the JobSet's headless Service as <jobset>-<replicatedJob>-<i>-0.<subdomain> "
        f"(e.g. {example}), also before they are Ready, and their hostname changes to match; {before}. "
        "Addresses kf2jobset injects are rewritten",
        target_path="spec.network", action="v1 pod names in env, command and args are rewritten (JS065); for those in code or images pass "
               "--v1-pod-services or change them",
        explains=(("dns", "*"), ("hostname", "*")),
        claims=(claim.equals("spec.network.enableDNSHostnames", True), claim.equals("spec.network.publishNotReadyAddresses", True),
                claim.equals("spec.network.subdomain", options.subdomain) if options.subdomain else
                claim.absent("spec.network.subdomain"), *(claim.absent(pod_path("*") + f".spec.{f}") for f in ("hostname", "subdomain"))),
    )


def _metadata(job: TrainingJob, p: JobSetPlan, options: ConvertOptions, notes: list[Note]) -> dict:
    meta: dict = {}
    if p.name:
        meta["name"] = p.name
    elif p.generate_name:
        meta["generateName"] = p.generate_name
    if p.namespace:
        meta["namespace"] = p.namespace
    labels = dict(job.labels)
    if labels:
        meta["labels"] = labels
    annotations = {k: v for k, v in job.annotations.items() if k != LAST_APPLIED}
    if LAST_APPLIED in job.annotations:
        notes.append(Note("JS001", "dropped", f"annotation {LAST_APPLIED} described the old object; kubectl writes a new one",
                          source_path=f"metadata.annotations[{LAST_APPLIED}]",
                          claims=(claim.absent(f"metadata.annotations[{LAST_APPLIED}]"),)))
    annotations[SOURCE_ANNOTATION] = f"{job.written_api_version}/{job.kind}" + (f" {job.name}" if job.name else "")
    meta["annotations"] = annotations
    if options.name and job.name and options.name != job.name:
        notes.append(Note("JS002", "rewritten", f"JobSet named {options.name!r} (the {job.kind} was {job.name!r}); "
                          "pod addresses follow the JobSet name", source_path="metadata.name", target_path="metadata.name",
                          explains=(("name", "job"),), claims=(claim.equals("metadata.name", options.name),)))
    return meta


def _pod_template(job: TrainingJob, rtype: str, restart_policy: str, ctx: EmitContext, prof,
                  first_index: int = 0) -> dict:
    spec = job.replicas[rtype]
    template = _drop_nulls(copy_tree(spec.template))
    pod_spec = template.setdefault("spec", {})
    pod_spec["restartPolicy"] = restart_policy
    containers = pod_spec["containers"]
    if spec.port_added:
        _one_entry_per_port(job, rtype, containers, ctx)
    for idx in env_target_indexes(template, job.mapping.env_containers, job.mapping.default_container):
        side = ctx.side(rtype, first_index=first_index)
        injected = prof.env(job, rtype, side)
        ctx.sized.update(side.sized)
        if injected:
            c = containers[idx]
            user = list(c.get("env") or [])
            added = _yield_to_user(job, rtype, idx, c, user, side.helper_env(), injected,
                                   _operator_env_names(job, rtype, prof, first_index), ctx,
                                   pod_path(_rjob_of(ctx, rtype, first_index)) + f".spec.containers[{idx}].env")
            c["env"] = user + added
    prof.jobset_pod(job, rtype, template, ctx)
    _one_entry_per_env_name(job, rtype, pod_spec, ctx, first_index)
    rewrite_pod(job, rtype, template, ctx, _rjob_of(ctx, rtype, first_index), first_index)  # addresses you wrote
    if ctx.options.keep_kubeflow_labels:
        _kubeflow_labels(job, rtype, template, ctx)
    elif rtype == next(iter(job.replicas)) and first_index == 0:
        # mpi-operator sets no replica-type (seen on the real v0.8.2 in tests/e2e/test_differential.py)
        which = ("job-name, operator-name, job-role, replica-index" if job.by_mpi_operator
                 else "job-name, operator-name, replica-type, replica-index, job-role")
        ctx.note(Note("JS051", "dropped", f"the operator's training.kubeflow.org/* pod labels ({which}) are not set; "
                      "selectors, dashboards and log queries that use "
                      "them need the jobset.sigs.k8s.io/* labels instead", target_path="template.metadata.labels",
                      action="use --keep-kubeflow-labels to keep the static ones",
                      explains=(("label", KUBEFLOW_LABEL + "*"), *CONTROLLER_LABELS),
                      claims=tuple(claim.absent(pod_path("*") + f".metadata.labels[{KUBEFLOW_LABEL}{n}]")
                                   for n in which.split(", ") if not _user_label(job, KUBEFLOW_LABEL + n))))
    return template


def _user_label(job: TrainingJob, key: str) -> bool:
    """A pod label the user wrote in some replica template (kept as written)."""
    return any(key in ((s.template.get("metadata") or {}).get("labels") or {}) for s in job.replicas.values())


def _rjob_of(ctx: EmitContext, rtype: str, first_index: int) -> str:
    """The replicatedJob that holds replica `first_index` of `rtype` first (plan: a type may be split)."""
    return next((n for n, first, _ in ctx.segments.get(rtype, []) if first == first_index), ctx.rjob_names[rtype])


def _one_entry_per_port(job: TrainingJob, rtype: str, containers: list[dict], ctx: EmitContext) -> None:
    """The operator's defaulting appended its named port even when the user already listed that number.
    A Pod accepts the pair; a JobSet's pod template may not (`ports` is a list-map keyed on containerPort
    and protocol). Both entries name the same port, so the user's stays and the operator's goes.

    Under v1 the pair had a cost: the operator (v1.6 and later) copied every port of the default
    container into the pod's own Service, which the API server rejected as a duplicate; the pod never
    got its name, and pods that waited for it (PyTorch workers in init-pytorch) waited forever (seen
    on the real v1.9.4: FailedCreateService). The JobSet has no per-pod Services, so the job runs."""
    added = job.mapping.default_port.name
    for c in containers:
        ports = c.get("ports") or []
        ours = next((p for p in ports if isinstance(p, dict) and p.get("name") == added), None)
        if ours is None:
            continue
        key = (ours.get("containerPort"), ours.get("protocol") or "TCP")
        user = next((p for p in ports if p is not ours and isinstance(p, dict)
                     and (p.get("containerPort"), p.get("protocol") or "TCP") == key), None)
        if user is None:
            continue
        c["ports"] = [p for p in ports if p is not ours]
        same = [p for p in c["ports"] if isinstance(p, dict) and p.get("containerPort") == key[0]]
        ctx.note(Note("JS063", "approximated",
                      f"port {key[0]}/{key[1]} of container {c.get('name')!r} in the {rtype} pods: the operator added "
                      f"{added!r} beside your {user.get('name') or 'unnamed'!r} entry for the same port; a JobSet's pod "
                      "template keeps one entry per port and protocol, so yours stays alone. Under v1 (operator v1.6 "
                      "and later) this job never ran as a whole: the operator copied both entries into the pod's own "
                      "Service, the API server rejected it as a duplicate port (event FailedCreateService), and the pods "
                      "that reach this one by name never found it. The JobSet needs no per-pod Service, so it runs",
                      action=f"nothing to do for the JobSet; under v1 the fix was to name the port {added!r}",
                      warn=True, replica_type=rtype,
                      source_path=f"{job.mapping.replica_specs_field}.{rtype}.template.spec.containers[{containers.index(c)}].ports",
                      explains=(("port", added),),
                      claims=(claim.count(pod_path(ctx.rjob_names[rtype]) + f".spec.containers[{containers.index(c)}]"
                                      f".ports[containerPort={key[0]}]", len(same)),
                              claim.absent(pod_path(ctx.rjob_names[rtype]) + f".spec.containers[{containers.index(c)}]"
                                       f".ports[name={added}]") if user.get("name") != added else
                              claim.present(pod_path(ctx.rjob_names[rtype]) + f".spec.containers[{containers.index(c)}].ports"))))


def _operator_env_names(job: TrainingJob, rtype: str, prof, index: int) -> set:
    """Names v1 itself appended to this role's pods (its later entry won over the user's)."""
    side = OperatorSide(job, job.name or "job", job.namespace or "default", rtype, index)
    return {e.get("name") for e in prof.env(job, rtype, side)}


def _yield_to_user(job: TrainingJob, rtype: str, idx: int, container: dict, user: list[dict], helpers: list[dict],
                   injected: list[dict], operator_names: set, ctx: EmitContext, env_path: str) -> list[dict]:
    """What kf2jobset appends after the user's env, minus what v1 never set and the user already sets.

    v1's own variables came after the user's and won (envmerge keeps that). A variable v1 never set
    (PRTE_MCA_* for Open MPI 5, the SSH-model names on an MPIJob v1) was the user's alone: the user's
    entry stays in force and ours is left out. A helper variable (KF2JOBSET_*) the user happens to
    set is renamed instead, since kf2jobset's values read it.
    """
    from .envmerge import fresh_name, retarget, describe

    mine = {e.get("name"): e for e in user if isinstance(e, dict)}
    if not mine:
        return helpers + injected
    taken = set(mine) | {e.get("name") for e in helpers + injected}
    where = f"container {container.get('name')!r} of the {rtype} pods"
    src = f"{job.mapping.replica_specs_field}.{rtype}.template.spec.containers[{idx}].env"
    for h in [h for h in helpers if h.get("name") in mine]:
        new = fresh_name(h["name"], taken)
        taken.add(new)
        old = h["name"]
        helpers = [{**e, "name": new} if e is h else e for e in helpers]
        injected = [{**e, "value": retarget(str(e["value"]), old, new)} if "value" in e else e for e in injected]
        ctx.note(Note("JS062", "rewritten",
                      f"{old} in {where} is yours; kf2jobset's helper variable of that name is {new} here",
                      source_path=f"{src}[{old}]", replica_type=rtype, explains=(("env", new),),
                      claims=(claim.equals(f"{env_path}[{old}]", mine[old]), claim.present(f"{env_path}[{new}]"))))
    kept = []
    for e in injected:
        name = e.get("name")
        if name in mine and name not in operator_names:
            ctx.note(Note("JS062", "unchanged",
                          f"{name} in {where}: your value {describe(mine[name])} stays in force, as under v1 (which never "
                          f"set {name}); kf2jobset would otherwise add {describe(e)}",
                          source_path=f"{src}[{name}]", replica_type=rtype,
                          claims=(claim.equals(f"{env_path}[{name}]", mine[name]),)))
            continue
        kept.append(e)
    return helpers + kept


def _one_entry_per_env_name(job: TrainingJob, rtype: str, pod_spec: dict, ctx: EmitContext, first_index: int) -> None:
    """A JobSet may not repeat an env name; keep the value v1's later entry gave (envmerge)."""
    from .envmerge import describe, merge_env

    rjob = pod_path(_rjob_of(ctx, rtype, first_index))
    for list_field in ("initContainers", "containers"):
        for c, container in enumerate(pod_spec.get(list_field) or []):
            merged, overrides = merge_env(list(container.get("env") or []))
            if not overrides:
                continue
            container["env"] = merged
            where = f"container {container.get('name')!r} of the {rtype} pods"
            src = f"{job.mapping.replica_specs_field}.{rtype}.template.spec.{list_field}[{c}].env"
            for o in overrides:
                mine, theirs = describe(o.shadowed), describe(o.winner)
                if mine == theirs:
                    text = (f"{o.name} in {where}: your value {mine} equals the one v1 appended after it (the later "
                            f"entry wins); the JobSet sets {o.name} once")
                else:
                    text = (f"{o.name} in {where}: your value {mine} was never in effect: v1 appended its own "
                            f"{o.name} after it and the later entry wins; the JobSet sets {o.name} once, as {theirs}")
                if o.renamed_to:
                    text += (f"; your entry is kept as {o.renamed_to} because {', '.join(o.readers)} "
                             f"read{'s' if len(o.readers) == 1 else ''} it before the override (v1 gave them your value)")
                ctx.note(Note("JS061", "rewritten", text, source_path=f"{src}[{o.name}]",
                              target_path=f"template.spec.{list_field}[{c}].env[{o.name}]", replica_type=rtype,
                              action="remove your entry: the value it sets is replaced" if not o.renamed_to else None,
                              warn=mine != theirs,  # a value you wrote is not the one the pods get
                              claims=(claim.count(f"{rjob}.spec.{list_field}[{c}].env[{o.name}]", 1),
                                      claim.equals(f"{rjob}.spec.{list_field}[{c}].env[{o.name}]", o.winner),
                                      *([claim.equals(f"{rjob}.spec.{list_field}[{c}].env[{o.renamed_to}]",
                                                      {**o.shadowed, "name": o.renamed_to})] if o.renamed_to else []))))


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _drop_nulls(node):
    """`key:` with no value means unset to the API server; leave it out of the JobSet."""
    if isinstance(node, dict):
        for k in [k for k, v in node.items() if v is None]:
            del node[k]
        for v in node.values():
            _drop_nulls(v)
    elif isinstance(node, list):
        for v in node:
            _drop_nulls(v)
    return node


def _kubeflow_labels(job: TrainingJob, rtype: str, template: dict, ctx: EmitContext) -> None:
    meta = template.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    static = {KUBEFLOW_LABEL + "operator-name": job.mapping.operator_name}
    if job.name:
        static[KUBEFLOW_LABEL + "job-name"] = job.name
    if job.by_mpi_operator:
        static[KUBEFLOW_LABEL + "job-role"] = rtype.lower()
    else:
        static[KUBEFLOW_LABEL + "replica-type"] = rtype.lower()
        if rtype in job.mapping.master_role:
            static[KUBEFLOW_LABEL + "job-role"] = "master"
    kept = {k: labels.get(k, v) for k, v in static.items()}  # a label the user wrote keeps its value
    for k, v in static.items():
        labels.setdefault(k, v)
    if rtype == next(iter(job.replicas)) and not any(n.code == "JS050" for n in ctx.notes):
        dropped = "replica-index (a label cannot be computed per pod; use jobset.sigs.k8s.io/job-index)"
        if any(t.endswith("0") for t in job.mapping.master_role):
            dropped += " and job-role=master on worker 0"
        ctx.note(Note("JS050", "dropped", f"--keep-kubeflow-labels keeps the static training.kubeflow.org labels but not {dropped}",
                      target_path="template.metadata.labels",
                      explains=(("label", KUBEFLOW_LABEL + "replica-index"), ("label", KUBEFLOW_LABEL + "job-role"),
                                *CONTROLLER_LABELS),
                      claims=(*(claim.equals(f"{pod_path(ctx.rjob_names[rtype])}.metadata.labels[{k}]", v) for k, v in kept.items()),
                              *(claim.absent(pod_path("*") + f".metadata.labels[{KUBEFLOW_LABEL}replica-index]")
                                for _ in [0] if not _user_label(job, KUBEFLOW_LABEL + "replica-index")))))


def _run_policy(job: TrainingJob, options: ConvertOptions, spec: dict, notes: list[Note]) -> None:
    """runPolicy on the JobSet spec, then the notes on what v1 did with the rest of the job, in this order
    (the report lists them so)."""
    rp = job.run_policy
    _lifetime(rp, spec, notes)
    notes.append(_clean_pod_policy_note(rp))
    if rp.active_deadline_seconds is not None:
        notes.append(_deadline_note(job))
    if not rp.scheduling.is_empty() and options.scheduler == "none":
        notes.append(_scheduling_dropped_note(job))
    notes += _fields_v1_never_saw(job)
    notes += _default_container_notes(job)
    notes += _webhook_notes(job)


def _lifetime(rp, spec: dict, notes: list[Note]) -> None:
    """suspend, ttlSecondsAfterFinished and a MultiKueue managedBy carry over; another managedBy named the operator."""
    if rp.suspend:
        spec["suspend"] = True
    if rp.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = rp.ttl_seconds_after_finished
        notes.append(Note("JS032", "rewritten", "ttlSecondsAfterFinished deletes the JobSet (and with it its Jobs and pods) "
                          "that long after it finishes, as v1 deleted the job", source_path="runPolicy.ttlSecondsAfterFinished",
                          target_path="spec.ttlSecondsAfterFinished", explains=(("lifecycle", "ttl"),),
                          claims=(claim.equals("spec.ttlSecondsAfterFinished", rp.ttl_seconds_after_finished),)))
    if rp.managed_by:
        if rp.managed_by == "kueue.x-k8s.io/multikueue":
            spec["managedBy"] = rp.managed_by
        else:
            notes.append(Note("JS035", "rewritten", f"managedBy {rp.managed_by!r} named the Kubeflow operator; the JobSet is "
                              "reconciled by the JobSet controller", source_path="runPolicy.managedBy",
                              explains=(("lifecycle", "managedBy"),),
                              claims=(claim.absent("spec.managedBy"),)))


def _clean_pod_policy_note(rp) -> Note:
    """What happens to the pods when the job finishes: no JobSet field, the controllers' behaviour."""
    clean = rp.clean_pod_policy
    src = "runPolicy.cleanPodPolicy"
    if clean == "None":
        return Note(
            "JS030", "approximated",
            "cleanPodPolicy None" + (" (the default)" if rp.clean_pod_policy_defaulted else "")
            + ": v1 left unfinished pods (e.g. PS servers, workers after the master succeeded) running after the job "
            "finished; a JobSet deletes its still-active Jobs as soon as it completes or fails",
            source_path=src, target_path="(JobSet controller behaviour)",
            action="nothing to do unless something relied on pods outliving the job",
            explains=(("lifecycle", "cleanPodPolicy"),), unchecked=CONTROLLER_BEHAVIOUR,
        )
    if clean == "Running":
        return Note("JS031", "rewritten", "cleanPodPolicy Running: the JobSet deletes still-active Jobs when it finishes, "
                    "as v1 deleted running pods", source_path=src, explains=(("lifecycle", "cleanPodPolicy"),),
                    unchecked=CONTROLLER_BEHAVIOUR)
    ttl = rp.ttl_seconds_after_finished
    return Note("JS036", "approximated", "cleanPodPolicy All: finished pods stay until the JobSet is deleted"
                + ("; set ttlSecondsAfterFinished to remove them" if ttl is None else
                   f", here by its ttlSecondsAfterFinished ({ttl} s after it finishes)"), source_path=src,
                action="add runPolicy.ttlSecondsAfterFinished" if ttl is None else None,
                explains=(("lifecycle", "cleanPodPolicy"),),
                claims=(claim.absent("spec.ttlSecondsAfterFinished") if ttl is None else
                        claim.equals("spec.ttlSecondsAfterFinished", ttl),))


def _deadline_note(job: TrainingJob) -> Note:
    """activeDeadlineSeconds: every child Job gets it, counted from that Job's start."""
    if job.by_mpi_operator:
        text = ("activeDeadlineSeconds: v1 measured it for the whole job; a JobSet has no such field, so every child "
                "Job gets it and each Job's clock starts when that Job starts")
    else:
        # the operator's requeue at the deadline goes to a no-op work queue: it checks only when it reconciles
        text = ("activeDeadlineSeconds: the v1 operator counted it for the whole job but checked it only when a pod or "
                "job change made it reconcile the job, so a job whose pods ran steadily could outlive it; a JobSet has "
                "no such field, so every child Job gets it and the Job controller fails each Job at its deadline, "
                "counted from that Job's start")
    return Note("JS033", "approximated", text,
                source_path="runPolicy.activeDeadlineSeconds",
                target_path="spec.replicatedJobs[*].template.spec.activeDeadlineSeconds",
                action=None if job.by_mpi_operator else
                "raise or remove the deadline if the job used to run past it",
                explains=(("lifecycle", "activeDeadlineSeconds"),),
                claims=(claim.equals("spec.replicatedJobs[*].template.spec.activeDeadlineSeconds",
                                     job.run_policy.active_deadline_seconds),))


def _scheduling_dropped_note(job: TrainingJob) -> Note:
    """schedulingPolicy without --scheduler: left out, and what was in it named."""
    scheduling = job.run_policy.scheduling
    fields = ", ".join(k for k in ("queue", "priorityClass", "minAvailable", "minResources", "scheduleTimeoutSeconds")
                       if getattr(scheduling, _snake(k), None) not in (None, {}, ""))
    return Note("JS040", "dropped", "schedulingPolicy is only read by a gang scheduler and none was named, so "
                f"it is left out ({fields or 'schedulingPolicy'})",
                source_path="runPolicy.schedulingPolicy", action=f"pass --scheduler ({', '.join(SCHEDULERS[1:])}) to map it",
                explains=(("lifecycle", "schedulingPolicy"),), warn=True,
                claims=(claim.absent("kind", target="PodGroup"),
                        *(claim.absent(pod_path("*") + ".spec.priorityClassName")
                          for _ in [0] if scheduling.priority_class and not _user_pod_field(job, "priorityClassName"))))


def _fields_v1_never_saw(job: TrainingJob) -> list[Note]:
    """Fields the API server pruned, nulls it dropped, images the kubelet could not parse, replica specs the
    operator ignored: v1 ran without them, so does the JobSet."""
    notes = []
    for pruned in job.pruned:
        where, claims = format_path(pruned.path), _dropped_claims(job, pruned.path)
        unchecked = None if claims else "the pruned field is outside the pod templates: the JobSet has no field that could carry it"
        if pruned.why == NULL_PRUNED:  # kubectl writes `creationTimestamp: null` into templates: nothing to fix
            notes.append(Note("JS070", "unchanged", f"unknown field {where} is null: the API server prunes it, and nothing "
                              "is lost", source_path=where, claims=claims, unchecked=unchecked))
        else:
            notes.append(Note("JS070", "dropped", f"unknown field {where}: the API server prunes it, so the operator never "
                              "saw it", source_path=where, action="remove or fix the field",
                              warn=True,  # a typo (resources.request) leaves the job without what it meant
                              claims=claims, unchecked=unchecked))
    for null in job.nulls:
        notes.append(_null_note(job, null))
    notes += image_notes(job)
    for ignored in job.ignored:
        notes.append(Note("JS071", "dropped", f"replica spec {format_path(ignored.path)}: {ignored.why} (it validates "
                          f"only {' and '.join(job.mapping.known_types)}), so the job ran without it; the JobSet has "
                          "no replicatedJob for it either", source_path=format_path(ignored.path),
                          action="remove the replica spec, or give it a job of its own",
                          claims=(claim.absent(f"spec.replicatedJobs[{str(ignored.path[-1]).lower()}]"),)))
    return notes


def _default_container_notes(job: TrainingJob) -> list[Note]:
    """Replica types without a container of the kind's default name: v1 ran them as the mapping says."""
    notes = []
    default = job.mapping.default_container
    if default and job.mapping.without_default_ran:
        missing = [s.type for s in job.replicas.values() if not any(c.get("name") == default for c in s.containers)]
        if missing:
            notes.append(Note("JS060", "approximated", f"{', '.join(missing)}: no container is named {default!r}; "
                              f"{job.mapping.without_default_ran}", source_path=f"{job.mapping.replica_specs_field}",
                              action=f"rename the main container to {default!r}",
                              claims=tuple(claim.absent(pod_path(job.replicas[t].rjob_name) + f".spec.containers[{default}]")
                                           for t in missing)))
    return notes


def _webhook_notes(job: TrainingJob) -> list[Note]:
    """A job the operator's validating webhook (v1.8+) rejects: it ran only on the releases before it."""
    notes = []
    rejected = v1_webhook_rejections(job)
    if rejected:
        reasons = "; ".join(f"{path}: {why} ({ran})" for path, why, ran in rejected)
        notes.append(Note("JS080", "approximated", f"the Training Operator's validating webhook (on since v1.8) rejects this "
                          f"{job.kind}, so it never ran there: {reasons}. The JobSet runs it as the releases that ran it did",
                          source_path=rejected[0][0].removeprefix("spec."),
                          action="check which operator release really ran this job; under v1.8+ it was refused when applied",
                          warn=True, unchecked="about which operator versions accepted the v1 job; the JobSet is the "
                          "conversion of what it says (every other note's claims hold it to that)"))
    return notes


CONTROLLER_BEHAVIOUR = ("what the v1 operator and the JobSet controller do when the job finishes; the JobSet has "
                        "no field for it (the runtime comparison holds both sides: report/build.py)")


def _user_pod_field(job: TrainingJob, field: str) -> bool:
    return any(field in (s.template.get("spec") or {}) for s in job.replicas.values())


def _null_note(job: TrainingJob, null) -> Note:
    """JS072: `key:` with no value, dropped by the API server before it validated the job (crdnulls)."""
    where, key = format_path(null.path), null.path[-1]
    if null.default is not None:
        ran = f"the CRD's default {null.default!r} in its place, as for an unwritten {key}"
    elif null.holds == "value":
        ran = f"no {key}" + (" (a null limit is no limit)" if "limits" in null.path else "")
    else:
        ran = f"no {key} (a null {null.holds} is an empty one)"
    claims = _dropped_claims(job, null.path) if null.default is None else ()
    return Note("JS072", "dropped", f"{where} has no value: the API server drops a null the CRD schema does not allow "
                "before it validates, so v1 stored the job without the key and ran it with " + ran + "; the JobSet "
                "leaves the key out as well", source_path=where, action=f"give {key} a value, or remove the key",
                warn=null.holds == "value" and null.default is None, claims=claims,
                unchecked=None if claims else "the key is outside the pod templates, or the API server put a default "
                "in its place: the JobSet has no field that shows the null")


def _dropped_claims(job: TrainingJob, path: tuple) -> tuple:
    """A pruned field inside a replica's pod template has a JobSet place it must not reach; elsewhere it has none."""
    specs = job.mapping.replica_specs_field
    if len(path) > 4 and path[0] == "spec" and path[1] == specs and path[3] == "template":
        spec = next((s for s in job.replicas.values() if s.source_key == path[2]), None)
        if spec is not None:
            rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[4:])
            return (claim.absent(pod_path(spec.rjob_name) + rest),)
    return ()
