"""Kubeflow job document -> TrainingJob, with the operator's validation and defaults made explicit.

Pure: a dict in, a TrainingJob out, or InvalidJobError carrying field paths (the reader adds
file/line/column). Facts: reference/training-operator.md §1.2 (defaulting), §1.3 (validation).
"""
from __future__ import annotations

import re

from ..errors import InvalidJobError, Location, Problem, RejectedJobSetError
from ..frameworks import profile as get_profile
from ..frameworks.base import WITHOUT_WEBHOOK
from ..mappings import KindMapping, WebhookRules
from ..model import DefaultApplied, ReplicaSpec, RunPolicy, SchedulingPolicy, TrainingJob, default_container
from ..text.treecopy import copy_tree

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# Pods per job. Above this a TFJob's TF_CONFIG or an MPI hostfile no longer fits the API server's
# object size limits (1.5 MiB per object in etcd, 1 MiB per ConfigMap), and the operator created one
# pod and one Service per replica; converting (and reporting) stays well under a few seconds.
MAX_REPLICAS = 10_000

# An unknown field written as null (kubectl's `creationTimestamp: null` in pod templates): pruned, nothing lost.
NULL_PRUNED = "unknown null field: the API server prunes it, nothing is lost"


def _problem(path: tuple, message: str, hint: str | None = None, rule: str | None = None) -> Problem:
    return Problem(message, Location(path=path), rule=rule, hint=hint)


def _fractional_problem(doc: dict, issue) -> Problem | None:
    """A fractional number in an int-or-string field (a quantity such as `cpu: 0.5`, a probe port).
    The v1 CRDs type these `x-kubernetes-int-or-string`, so their API server refused the job as
    written (checked on the real one: tools/validator_vs_apiserver.py): an inherited refusal, with
    the spelling that means the same and that both APIs take."""
    if not issue.message.startswith("expected integer or string, got number"):
        return None
    value = doc
    try:
        for key in issue.path:
            value = value[key]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(value, float):
        return None
    port = issue.path and issue.path[-1] == "port"
    finite = value == value and value not in (float("inf"), float("-inf"))
    hint = ("write a whole port number or the port's name" if port else
            "write a quantity such as 1, 500m or 2Gi" if not finite else
            f"write the quantity as a string: \"{value!r}\"" + (f" (or \"{_milli(value)}\")" if _milli(value) else ""))
    return _problem(issue.path, f"{value!r} is a fractional number where the API takes an integer or a string "
                                "(inherited: the v1 CRD's int-or-string schema rejected this job too)", hint=hint, rule="schema")


def _milli(value: float) -> str | None:
    if value != value or value in (float("inf"), float("-inf")):
        return None  # .nan, .inf: no spelling in milli-units
    milli = round(value * 1000, 6)
    return f"{int(milli)}m" if milli == int(milli) and value < 1000 else None


def parse_job(doc: dict, mapping: KindMapping, *, check_schema: bool = True) -> TrainingJob:
    pruned: list[DefaultApplied] = []
    nulls: list = []  # crdnulls.NullField
    jobset_only: list[Problem] = []  # v1 ran it, the JobSet cannot carry it: refused after the v1 rules
    if check_schema:
        doc, pruned, nulls, jobset_only = _as_stored(doc, mapping)
    problems: list[Problem] = []

    meta = doc.get("metadata") or {}
    spec = doc.get("spec") or {}
    field = mapping.replica_specs_field
    raw_specs = spec.get(field)
    if not raw_specs:
        raise InvalidJobError(_problem(("spec", field), f"{mapping.kind} has no {field}: nothing to run", rule="replica-specs"))

    name = meta.get("name")
    if name is not None and not _DNS1035.match(str(name)):
        problems.append(
            _problem(("metadata", "name"), f"name {name!r} is not a DNS-1035 label", rule="dns-1035",
                     hint="lower-case letters, digits and '-', starting with a letter")
        )

    replicas, seen_types, ignored, job_defaults = _replica_specs(raw_specs, mapping, problems)
    problems += _job_wide_problems(mapping, replicas, seen_types)

    framework, fw_problems, fw_defaults = get_profile(mapping.profile).spec_fields(spec, replicas)
    problems += fw_problems
    problems += _port_read_from_missing_container(spec, mapping, replicas)
    job_defaults += fw_defaults
    if problems:
        raise InvalidJobError(problems)
    if jobset_only:
        raise RejectedJobSetError([Problem(f"the JobSet would be rejected: {p.message}", p.location, p.rule, p.hint)
                                   for p in jobset_only])

    # replicatedJobs order: the mapping's order, unknown types (TF only) after it, sorted.
    order = [t for t in mapping.known_types if t in replicas] + sorted(t for t in replicas if t not in mapping.known_types)
    run_policy, rp_defaults = _run_policy(spec, mapping)
    return TrainingJob(
        mapping=mapping,
        api_version=doc["apiVersion"],
        name=str(name) if name is not None else None,
        namespace=meta.get("namespace"),
        generate_name=meta.get("generateName"),
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
        replicas={t: replicas[t] for t in order},
        run_policy=run_policy,
        framework=framework,
        source=doc,
        defaults=job_defaults + rp_defaults,
        pruned=pruned,
        ignored=ignored,
        nulls=nulls,
    )


def _as_stored(doc: dict, mapping: KindMapping) -> tuple:
    """The job as the API server stored it, once its schema and the v1 rules passed (InvalidJobError
    otherwise): (doc, fields pruned, nulls dropped, problems only the JobSet has)."""
    from ..k8s.schemas import validate

    pruned: list[DefaultApplied] = []
    issues = validate(doc, mapping.schema)
    unknown = [i.path for i in issues if i.message.startswith("unknown field")]
    problems = [_fractional_problem(doc, i) or _problem(i.path, i.message, rule="schema") for i in issues
                if i.path not in unknown]
    if problems:
        raise InvalidJobError(problems)
    # Then the nulls, as the API server drops them before it validates (crdnulls): every rule below
    # reads the job as it was stored. A null field the schema does not know is an unknown field.
    from ..k8s.crdnulls import pruned_nulls, remove_paths

    nulls, null_unknown = pruned_nulls(doc, mapping.schema)
    unknown += [p for p in null_unknown if not any(p[:len(u)] == u for u in unknown)]
    nulls = [n for n in nulls if not any(n.path[:len(u)] == u for u in unknown)]
    if unknown or nulls:
        # The API server prunes fields its schema does not know; convert what it would have stored.
        doc = copy_tree(doc)
        remove_paths(doc, [n.path for n in nulls])
        for path in unknown:
            _remove(doc, path)
            pruned.append(DefaultApplied(path, None, NULL_PRUNED if path in null_unknown else
                                         "unknown field: the API server prunes it"))
    from ..k8s.podrules import check_v1_job, run_policy_problems

    problems += check_v1_job(doc, mapping)
    jobset_only = run_policy_problems(doc)[1]
    if problems:
        raise InvalidJobError(problems)
    return doc, pruned, nulls, jobset_only


def _replica_specs(raw_specs: dict, mapping: KindMapping, problems: list) -> tuple:
    """Each replica spec read as the operator read it, its type key normalised: (replicas by type, the
    types seen, the types the operator makes no pods for, the defaults applied); problems go to `problems`."""
    field = mapping.replica_specs_field
    job_defaults: list[DefaultApplied] = []
    replicas: dict[str, ReplicaSpec] = {}
    seen_types: set[str] = set()
    ignored: list[DefaultApplied] = []
    pod_names: dict[str, str] = {}  # lower-cased type (the operator's pod and Service names) -> canonical type
    folded = {t.lower(): t for t in mapping.case_normalized_types}
    for key, raw in raw_specs.items():
        path = ("spec", field, key)
        canonical = key
        if key.lower() in folded:
            canonical = folded[key.lower()]
            if canonical != key:
                job_defaults.append(DefaultApplied(path, canonical,
                                                   f"replica type key {key!r} normalised to {canonical!r} as the operator does"))
        if canonical not in mapping.known_types and mapping.unknown_replica_types == "ignore":
            ignored.append(DefaultApplied(path, None, f"{mapping.operator} makes no pods for replica type {key!r}"))
            continue
        problem = _replica_type_problem(key, canonical, path, mapping, replicas, pod_names)
        if problem is not None:
            problems.append(problem)
            continue
        pod_names[canonical.lower()] = canonical
        seen_types.add(canonical)
        spec_obj, spec_problems, spec_defaults = _parse_replica(raw or {}, canonical, key, path, mapping)
        problems += spec_problems
        job_defaults += spec_defaults
        if spec_obj is not None:
            replicas[canonical] = spec_obj
    return replicas, seen_types, ignored, job_defaults


def _replica_type_problem(key: str, canonical: str, path: tuple, mapping: KindMapping, replicas: dict,
                          pod_names: dict) -> Problem | None:
    """Why the operator would not take a replica type key: unknown to the kind, or a second spelling of
    a type already read."""
    if canonical not in mapping.known_types and not mapping.allow_unknown_replica_types:
        return _problem(path, f"unknown replica type {key!r} for {mapping.kind}",
                        hint="allowed: " + ", ".join(mapping.known_types), rule="replica-type")
    if canonical in replicas:
        return _problem(path, f"replica type {canonical!r} given twice (keys differ only in case)", rule="replica-type")
    if canonical.lower() in pod_names:
        # e.g. MXJob Tuner and tuner (not camel-cased by the operator): both named their pods <job>-tuner-<i>
        return _problem(path, f"replica types {pod_names[canonical.lower()]!r} and {canonical!r} differ only in "
                        f"case: the operator named the pods of both <job>-{canonical.lower()}-<i>",
                        rule="replica-type", hint="rename or merge one of them")
    return None


def _job_wide_problems(mapping: KindMapping, replicas: dict, seen_types: set) -> list[Problem]:
    """The rules on the replica specs together: the pod total, the types required, those exclusive."""
    field = mapping.replica_specs_field
    problems = []
    total = sum(r.replicas for r in replicas.values())
    if total > MAX_REPLICAS:
        problems.append(_problem(("spec", field), f"{total} pods in one job: kf2jobset converts at most {MAX_REPLICAS:,} "
                                 "(the API server's object size limits are reached first: TF_CONFIG, MPI hostfile)",
                                 rule="replicas", hint="split the job, or lower replicas"))
    for rule in mapping.replica_types:
        if rule.required and rule.type not in seen_types:
            problems.append(_problem(("spec", field), f"{mapping.kind} needs a {rule.type} replica spec", rule="replica-type"))
    for group in mapping.mutually_exclusive:
        present = [t for t in group if t in replicas]
        if len(present) > 1:
            problems.append(_problem(("spec", field), f"at most one of {', '.join(group)} may be set", rule="replica-type"))
    return problems


def _port_read_from_missing_container(spec: dict, mapping: KindMapping, replicas: dict) -> list[Problem]:
    """A replica type without a container of the default name whose port every pod's env read
    (mapping `withoutDefaultContainer.portReadFrom`): the operator's helper found no port and no
    release created a pod (audit: docs/ground-truth.md, "No container of the default name")."""
    default = mapping.default_container
    out: list[Problem] = []
    for read in mapping.port_read_from:
        if read.when == "elasticWithoutRdzvPort" and not (isinstance(spec.get("elasticPolicy"), dict)
                                                         and spec["elasticPolicy"].get("rdzvPort") is None):
            continue
        if read.when == "morePodsThanOne" and sum(r.replicas for r in replicas.values()) <= 1:
            continue
        for r in replicas.values():
            if read.type not in ("*", r.type) or any(c.get("name") == default for c in r.containers):
                continue
            out.append(_problem(("spec", mapping.replica_specs_field, r.source_key, "template", "spec", "containers"),
                                f"{r.type} has no container named {default!r}: every pod's {read.reads} takes that "
                                f"container's port, so no release ran this {mapping.kind} ({mapping.never_ran_versions}) "
                                "(inherited: no v1 operator created a pod for it)",
                                rule="default-container", hint=f"name the main container {default!r}"))
    return out


def _remove(doc: dict, path: tuple) -> None:
    node = doc
    for part in path[:-1]:
        node = node[part]
    node.pop(path[-1], None)


def _parse_replica(raw: dict, rtype: str, key: str, path: tuple, mapping: KindMapping):
    problems: list[Problem] = []
    defaults: list[DefaultApplied] = []
    rule = mapping.rule(rtype)
    template = copy_tree(raw.get("template") or {})
    containers = (template.get("spec") or {}).get("containers") or []
    if not containers:
        problems.append(_problem(path + ("template", "spec", "containers"), f"{rtype} has no containers", rule="containers"))
    for i, c in enumerate(containers):
        if not c.get("image"):
            problems.append(_problem(path + ("template", "spec", "containers", i, "image"), "container has no image", rule="containers"))

    replicas_defaulted = raw.get("replicas") is None
    n = (rule.default_replicas if rule else 1) if replicas_defaulted else int(raw["replicas"])
    if n > MAX_REPLICAS or n < 0:
        problems.append(_problem(path + ("replicas",), f"replicas {n} is outside 0..{MAX_REPLICAS:,}, the most kf2jobset converts "
                                 "(the API server's object size limits are reached first: TF_CONFIG, MPI hostfile)",
                                 rule="replicas", hint="split the job, or lower replicas"))
        return None, problems, defaults
    if replicas_defaulted:
        defaults.append(DefaultApplied(path + ("replicas",), n, "operator default"))
    if rule:
        problems += _replica_count_problems(rule, n, rtype, path, mapping, replicas_defaulted)

    policy = raw.get("restartPolicy")
    policy_defaulted = not policy
    if policy_defaulted:
        policy = mapping.default_restart(rtype)
        defaults.append(DefaultApplied(path + ("restartPolicy",), policy, "operator default"))
    elif policy not in mapping.allowed_restart_policies:
        problems.append(
            _problem(path + ("restartPolicy",), f"restartPolicy {policy} is not accepted by this operator",
                     hint="allowed: " + ", ".join(mapping.allowed_restart_policies), rule="restart-policy")
        )

    port_added = _add_default_port(template, containers, path, mapping, defaults)
    if problems:
        return None, problems, defaults
    return (
        ReplicaSpec(
            type=rtype, source_key=key, replicas=n, restart_policy=policy, template=template,
            replicas_defaulted=replicas_defaulted, restart_policy_defaulted=policy_defaulted, port_added=port_added,
        ),
        problems,
        defaults,
    )


def _replica_count_problems(rule, n: int, rtype: str, path: tuple, mapping: KindMapping,
                            replicas_defaulted: bool) -> list[Problem]:
    """The kind's bounds on one replica type's count (exactly, at least, at most)."""
    problems = []
    if rule.exact_replicas is not None and n != rule.exact_replicas:
        problems.append(_problem(path + ("replicas",), f"{rtype} replicas must be exactly {rule.exact_replicas}, got {n}",
                                 rule="replicas"))
    if rule.min_replicas is not None and n < rule.min_replicas:
        got = f": it is unset, and {mapping.operator}'s default is {n}" if replicas_defaulted else f", got {n}"
        problems.append(_problem(path + ("replicas",), f"{rtype} replicas must be at least {rule.min_replicas}{got}",
                                 rule="replicas"))
    if rule.max_replicas is not None and n > rule.max_replicas:
        problems.append(_problem(path + ("replicas",), f"{rtype} replicas must be at most {rule.max_replicas}, got {n}",
                                 rule="replicas"))
    return problems


def _add_default_port(template: dict, containers: list, path: tuple, mapping: KindMapping, defaults: list) -> bool:
    """The operator's port added to the default container of `template` (in place) where no port of its
    name is there; the default is recorded in `defaults`. True when added."""
    mp = mapping.default_port
    if mp is None or not containers:
        return False
    target = default_container(template, mapping.default_container)
    ports = (target.get("ports") if target is not None else None) or []
    if any(p.get("name") == mp.name for p in ports):
        return False
    ports.append({"name": mp.name, "containerPort": mp.number})
    if target is not None:
        target["ports"] = ports  # `ports: null` is unset to the API server
    idx = containers.index(target)
    defaults.append(DefaultApplied(path + ("template", "spec", "containers", idx, "ports"), f"{mp.name}:{mp.number}",
                                   "operator adds its port to the default container"))
    return True


def _run_policy(spec: dict, mapping: KindMapping) -> tuple[RunPolicy, list[DefaultApplied]]:
    rp = spec.get("runPolicy") or {}
    defaults = []
    clean = rp.get("cleanPodPolicy")
    if mapping.top_level_clean_pod_policy and spec.get("cleanPodPolicy") and not clean:
        clean = spec.get("cleanPodPolicy")  # deprecated top-level copy; runPolicy wins when both are set
    defaulted = clean is None
    if defaulted:
        clean = "None"
        defaults.append(DefaultApplied(("spec", "runPolicy", "cleanPodPolicy"), "None", "operator default since v1.6"))
    sp = rp.get("schedulingPolicy") or {}
    return (
        RunPolicy(
            clean_pod_policy=clean,
            clean_pod_policy_defaulted=defaulted,
            ttl_seconds_after_finished=rp.get("ttlSecondsAfterFinished"),
            active_deadline_seconds=rp.get("activeDeadlineSeconds"),
            backoff_limit=rp.get("backoffLimit"),
            scheduling=SchedulingPolicy(
                min_available=sp.get("minAvailable"),
                queue=sp.get("queue"),
                min_resources=dict(sp["minResources"]) if sp.get("minResources") else None,
                priority_class=sp.get("priorityClass"),
                schedule_timeout_seconds=sp.get("scheduleTimeoutSeconds"),
            ),
            suspend=bool(rp.get("suspend", False)),
            managed_by=rp.get("managedBy"),
        ),
        defaults,
    )


# The Training Operator's validating webhooks (on by default since v1.8; checked against the real
# v1.9.4 in tests/e2e/test_differential.py). Kinds whose mapping says `validatingWebhook: false` had none
# that rejected anything (MPIJob; MXJob's v1.8.1 webhook only warned); a kind's own rules are its
# mapping's `validatingWebhook:` entries and its profile's webhook_rejections.
# Refusing an unset Master count (mapping validatingWebhook.setToOne): what the releases before it did.
_SET_TO_ONE_RAN = "v1.5-v1.7 ran it (their validation let an unset count default to 1), and so did v1.8+ without the webhook"
_MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def v1_webhook_rejections(job) -> list[tuple[str, str, str]]:
    """(field path, reason, which releases ran it anyway) for each rule of the v1.9.4 validating webhook
    this job breaks: such a job was refused by the API server under v1.8+; the third part says, as read
    at each tag (docs/ground-truth.md, "No container of the default name" and "Who ran a job the webhook
    rejects"), which other releases ran it."""
    if not job.mapping.validating_webhook:
        return []
    rules = job.mapping.webhook or WebhookRules()
    field = job.mapping.replica_specs_field
    out: list[tuple[str, str, str]] = []
    allowed = rules.replica_types
    for spec in job.replicas.values():
        path = f"spec.{field}.{spec.source_key}"
        if allowed and spec.source_key not in allowed:
            out.append((path, f"replica type {spec.source_key!r} is not one of {', '.join(allowed)} (exact spelling)",
                        rules.other_spelling_ran or WITHOUT_WEBHOOK))
        default = job.mapping.default_container
        if default and not any(c.get("name") == default for c in (spec.template.get("spec") or {}).get("containers") or []):
            out.append((f"{path}.template.spec.containers", f"no container is named {default!r}",
                        "v1.6-v1.7 refused it too; the releases that made its pods never made that type's Services (JS060)"))
        if spec.type in rules.set_to_one and (spec.replicas_defaulted or spec.replicas != 1):
            out.append((f"{path}.replicas", f"{spec.type} replicas must be set, to 1", _SET_TO_ONE_RAN))
    keys = {s.source_key for s in job.replicas.values()}
    out += [(f"spec.{field}.{rtype}", message, ran) for rtype, (message, ran) in rules.required.items() if rtype not in keys]
    out += get_profile(job.mapping.profile).webhook_rejections(job)
    if job.run_policy.managed_by and job.run_policy.managed_by not in _MANAGED_BY:
        out.append(("spec.runPolicy.managedBy", f"{job.run_policy.managed_by!r} is not one of {', '.join(_MANAGED_BY)}",
                    "v1.5-v1.8 ran it (their CRDs pruned runPolicy.managedBy); v1.9 without the webhook left it to that manager"))
    return out
