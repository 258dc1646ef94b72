"""Refuse any JobSet the real API would reject: our JSON Schema (strict, like the API server's
strict field validation) plus the JobSet webhook/CEL rules and the batch/v1 Job rules the child
Jobs must pass. Facts: reference/jobset.md §3.

Each problem names the rule and, where there is one, the fix.
"""
from __future__ import annotations

import re

from ..errors import Location, Problem, RejectedJobSetError
from ..options import LATEST_JOBSET_VERSION
from .objectrules import check_numbers, problem_at
from .podrules import check_jobset_objects
from .schemacheck import normalise
from .quantity import go_string, parse_quantity

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_JOB_NAME_PART = re.compile(r"[-a-z0-9]*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_MANAGED_BY = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[-._a-zA-Z0-9/]+$")
FAILURE_REASONS = {"BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded", "PodFailurePolicy"}
MAX_INT32 = 2147483647
GENERATE_NAME_SUFFIX = 5  # the API server appends 5 random characters

# Fields newer than some JobSet releases (jobset.md §1): path description -> first version.
_VERSIONED = {
    "dependsOn": (0, 8),
    "groupName": (0, 9),
    "volumeClaimPolicies": (0, 11),
    "onJobFailureMessagePatterns": (0, 10),
    "coordinator": (0, 6),
    "ttlSecondsAfterFinished": (0, 5),
    "managedBy": (0, 5),
}


def _digits(n: int) -> int:
    return len(str(n))  # the Go code formats the index as it is: replicas 0 gives "-1"


def _fmt_version(v: tuple[int, int]) -> str:
    return f"v{v[0]}.{v[1]}"


def check_jobset(jobset: dict, *, version: tuple[int, int] = LATEST_JOBSET_VERSION,
                 assumed_name_length: int | None = None) -> list[Problem]:
    """All reasons the API would reject `jobset`. `assumed_name_length` stands in for an unknown name
    (e.g. a Katib trial, named when the trial is created)."""
    from .schemas import validate as schema_validate

    jobset, problems = admitted(jobset)
    if problems:
        return problems
    problems = [Problem(i.message, Location(path=i.path), rule="schema") for i in schema_validate(jobset, "jobset")]
    if problems:
        return problems  # the rules below assume a well-formed object
    problems += _webhook_rules(jobset, version, assumed_name_length)
    problems += _label_values(jobset)
    # core object and pod rules the child Jobs must pass (podrules.py); a replicatedJob with replicas < 1
    # makes no Jobs, so nothing checks its template beyond the JobSet's own schema and webhook
    making = {**jobset, "spec": {**jobset["spec"], "replicatedJobs": [
        r if r.get("replicas", 1) >= 1 else {k: v for k, v in r.items() if k != "template"}
        for r in jobset["spec"].get("replicatedJobs") or []]}}
    problems += check_jobset_objects(making)
    for i, rj in enumerate(jobset["spec"].get("replicatedJobs") or []):
        if rj.get("replicas", 1) < 1:  # int32/int64 ranges still hold: the webhook's Go decoding refuses overflows
            problems += [p for p in check_numbers(rj.get("template"), ("spec", "replicatedJobs", i, "template"))
                         if p.rule == "integer-range"]
    return problems


def validate_jobset(jobset: dict, **kw) -> None:
    problems = check_jobset(jobset, **kw)
    if problems:
        raise RejectedJobSetError(problems)


def _webhook_rules(js: dict, version: tuple[int, int], assumed_name_length: int | None) -> list[Problem]:
    meta = js.get("metadata") or {}
    spec = js.get("spec") or {}
    rjobs = spec.get("replicatedJobs") or []
    names = [r.get("name") for r in rjobs]
    name_len, out = _name_rules(meta, assumed_name_length)
    out += _version_rules(spec, version)
    out += _network_and_manager_rules(spec)
    out += _replicated_jobs_rules(rjobs, names, version, name_len)
    has_depends = any(rj.get("dependsOn") for rj in rjobs)
    if has_depends and (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder":
        out.append(problem_at(("spec", "startupPolicy"), "StartupPolicy and DependsOn APIs are mutually exclusive",
                              "startup-vs-depends-on"))
    targets = (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []
    for t, target in enumerate(targets):
        if target not in names:
            out.append(problem_at(("spec", "successPolicy", "targetReplicatedJobs", t),
                                  f"successPolicy targets unknown replicatedJob {target!r}", "success-target"))
    fp = spec.get("failurePolicy") or {}
    out += _failure_rules(fp.get("rules") or [], names)
    out += _coordinator_rules(spec, meta, name_len)
    if fp.get("restartStrategy") == "InPlaceRestart":
        out.append(problem_at(("spec", "failurePolicy", "restartStrategy"), "InPlaceRestart needs the alpha InPlaceRestart feature gate",
                              "feature-gate"))
    return out


def _name_rules(meta: dict, assumed_name_length: int | None) -> tuple[int | None, list[Problem]]:
    """The JobSet's name, and the length the child Job and pod names are built from (None: unknown)."""
    name = meta.get("name")
    if name:
        if not _DNS1035.fullmatch(name) or len(name) > 63:
            return len(name), [problem_at(("metadata", "name"), f"JobSet name {name!r} must be a DNS-1035 label "
                                          "(a-z, 0-9, '-', starting with a letter, at most 63)",
                                          "jobset-name", "pick another name with --name")]
        return len(name), []
    if meta.get("generateName"):
        return len(meta["generateName"]) + GENERATE_NAME_SUFFIX, []
    if assumed_name_length is not None:
        return assumed_name_length, []
    # (an empty name passes the schema's "name or generateName" but not the API server)
    return None, [problem_at(("metadata", "name"), "a JobSet needs a name or a generateName", "jobset-name")]


def _version_rules(spec: dict, version: tuple[int, int]) -> list[Problem]:
    out = []
    for key, first in _VERSIONED.items():
        if version >= first:
            continue
        where = _find_key(spec, key)
        if where is not None:
            out.append(problem_at(("spec",) + where, f"{key} needs JobSet {_fmt_version(first)} or newer (target: {_fmt_version(version)})",
                          "jobset-version", "raise --jobset-version or drop the feature"))
    return out


def _network_and_manager_rules(spec: dict) -> list[Problem]:
    out = []
    sub = (spec.get("network") or {}).get("subdomain")
    if sub and (not _DNS1123_SUB.fullmatch(sub) or not _DNS1035.fullmatch(sub) or len(sub) > 63):
        out.append(problem_at(("spec", "network", "subdomain"), f"subdomain {sub!r} must be a DNS-1035 label of at most 63 characters",
                      "network-subdomain", "use --subdomain with a short lower-case name"))
    managed = spec.get("managedBy")
    if managed and (len(managed) > 63 or not _MANAGED_BY.fullmatch(managed)):
        out.append(problem_at(("spec", "managedBy"), f"managedBy {managed!r} must be a domain-prefixed path of at most 63 characters",
                              "managed-by"))
    return out


def _replicated_jobs_rules(rjobs: list, names: list, version: tuple[int, int], name_len: int | None) -> list[Problem]:
    out: list[Problem] = []
    seen: set = set()
    too_long: list[tuple[int, Problem]] = []  # (longest JobSet name that would fit, problem)
    for i, rj in enumerate(rjobs):
        path = ("spec", "replicatedJobs", i)
        rname = rj.get("name") or ""
        if rname in seen:
            out.append(problem_at(path + ("name",), f"replicatedJob name {rname!r} is used twice", "unique-rjob"))
        seen.add(rname)
        out += _replicated_job_fields(rj, rname, path, version)
        if name_len is not None:
            too_long += _child_name_lengths(rj, rname, path, name_len)
        out += _depends_on_rules(rj.get("dependsOn") or [], i, names, path)
        if rj.get("replicas", 1) >= 1:  # a replicatedJob with no Jobs meets no batch/v1 rules (the real server)
            out += _job_rules((rj.get("template") or {}).get("spec") or {}, path + ("template", "spec"))
    if too_long:
        # every replicatedJob has its own limit; the one that matters is the tightest
        out.append(min(too_long, key=lambda t: t[0])[1])
    return out


def _replicated_job_fields(rj: dict, rname: str, path: tuple, version: tuple[int, int]) -> list[Problem]:
    out = []
    if not _JOB_NAME_PART.fullmatch(rname) or (not _LABEL_VALUE.fullmatch(rname) and rj.get("replicas", 1) >= 1):
        # the webhook checks the child Job name <jobset>-<rjob>-<n> (DNS-1035); each child Job carries it
        # as a label value (a replicatedJob with replicas < 1 has no Jobs)
        out.append(problem_at(path + ("name",), f"replicatedJob name {rname!r} must be lower-case letters, digits and '-', "
                                        "starting and ending with a letter or digit", "rjob-name"))
    group = rj.get("groupName")
    if group is not None and (not _DNS1035.fullmatch(group) or len(group) > 63):
        out.append(problem_at(path + ("groupName",), f"groupName {group!r} must be a DNS-1035 label", "group-name"))
    replicas = rj.get("replicas", 1)
    if replicas < 0 and version > (0, 12):  # the CRD's minimum 0 came after v0.12.0 (jobset #1279)
        out.append(problem_at(path + ("replicas",), f"replicas must not be negative, got {replicas}", "replicas"))
    parallelism = ((rj.get("template") or {}).get("spec") or {}).get("parallelism", 1)
    if replicas * parallelism > MAX_INT32:
        out.append(problem_at(path, "replicas x parallelism exceeds 2147483647", "pod-count"))
    return out


def _child_name_lengths(rj: dict, rname: str, path: tuple, name_len: int) -> list[tuple[int, Problem]]:
    """The child Job and pod names a replicatedJob makes, where too long: (longest JobSet name that fits, problem)."""
    out = []
    replicas = rj.get("replicas", 1)
    job_spec = (rj.get("template") or {}).get("spec") or {}
    completions = job_spec.get("completions")
    dj = _digits(replicas - 1)
    job_name_len = name_len + len(rname) + dj + 2
    if job_name_len > 63:
        fit = 63 - len(rname) - dj - 2
        out.append((fit, problem_at(path + ("name",),
                                    f"child Job name <jobset>-{rname}-{replicas - 1} would be {job_name_len} characters "
                                    "(max 63)",
                                    "job-name-length", _shorten(fit))))
    indexed = job_spec.get("completionMode", "Indexed") == "Indexed"
    if indexed and completions is not None:
        dp = _digits(completions - 1)
        budget = name_len + len(rname) + dj + dp
        if budget > 54:
            fit = 54 - len(rname) - dj - dp
            out.append((fit, problem_at(path + ("name",),
                                        f"pod names <jobset>-{rname}-<job>-<index>-xxxxx would be {budget + 9} characters "
                                        "(max 63)",
                                        "pod-name-length", _shorten(fit))))
    return out


def _depends_on_rules(deps: list, i: int, names: list, path: tuple) -> list[Problem]:
    out = []
    if deps and i == 0:
        out.append(problem_at(path + ("dependsOn",), "the first replicatedJob cannot have dependsOn", "depends-on-first"))
    for d, dep in enumerate(deps):
        if dep.get("name") not in names[:i + 1]:  # (the webhook lets a replicatedJob name itself)
            out.append(problem_at(path + ("dependsOn", d, "name"),
                                  f"dependsOn {dep.get('name')!r} must name a replicatedJob listed earlier", "depends-on-order"))
    return out


def _failure_rules(rules: list, names: list) -> list[Problem]:
    out = []
    rule_names: set = set()
    for r, rule in enumerate(rules):
        rpath = ("spec", "failurePolicy", "rules", r)
        rn = rule.get("name") or ""
        if not (1 <= len(rn) <= 128) or not _RULE_NAME.fullmatch(rn):
            out.append(problem_at(rpath + ("name",), f"failure policy rule name {rn!r} is invalid", "failure-rule-name"))
        if rn in rule_names:
            out.append(problem_at(rpath + ("name",), f"failure policy rule name {rn!r} is used twice", "failure-rule-name"))
        rule_names.add(rn)
        for t in rule.get("targetReplicatedJobs") or []:
            if t not in names:
                out.append(problem_at(rpath + ("targetReplicatedJobs",), f"rule targets unknown replicatedJob {t!r}", "failure-target"))
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in FAILURE_REASONS:
                out.append(problem_at(rpath + ("onJobFailureReasons",), f"unknown Job failure reason {reason!r}", "failure-reason"))
        if (str(rule.get("action", "")).startswith("RestartJob")
                and rule.get("action") not in ("RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts")):
            out.append(problem_at(rpath + ("action",), "RestartJob actions need the alpha RestartJob feature gate", "feature-gate"))
    return out


def _label_values(js: dict) -> list[Problem]:
    """The counts the controller writes as labels on each child Job (global-replicas, group-replicas,
    job-global-index, job-group-index) must be label values: a negative replicas elsewhere (v0.12.0
    admits it) makes some of them negative, and the Job API refuses those Jobs."""
    rjobs = js["spec"].get("replicatedJobs") or []
    total = sum(r.get("replicas", 1) for r in rjobs)
    out = []
    earlier, group_earlier = 0, {}
    for i, rj in enumerate(rjobs):
        replicas, group = rj.get("replicas", 1), rj.get("groupName", "default")
        in_group = sum(r.get("replicas", 1) for r in rjobs if r.get("groupName", "default") == group)
        g_earlier = group_earlier.get(group, 0)
        if replicas >= 1 and min(total, in_group, earlier, g_earlier) < 0:
            out.append(problem_at(("spec", "replicatedJobs", i, "replicas"), "a negative replicas makes the Job counts the controller "
                          "writes as labels (global and group replicas and indexes) negative, which label values cannot be",
                          "replicas"))
        earlier += replicas
        group_earlier[group] = g_earlier + replicas
    return out


def _coordinator_rules(spec: dict, meta: dict, name_len: int | None) -> list[Problem]:
    """spec.coordinator: an existing replicatedJob, indexes in range, an Indexed Job with completions,
    and the endpoint `<jobset>-<rjob>-<job>-<pod>.<subdomain>` (a label value on every pod) valid."""
    coord = spec.get("coordinator")
    if not isinstance(coord, dict):
        return []
    path = ("spec", "coordinator")
    rjobs = {r.get("name"): r for r in spec.get("replicatedJobs") or [] if isinstance(r, dict)}
    target = rjobs.get(coord.get("replicatedJob"))
    job_index, pod_index = coord.get("jobIndex", 0), coord.get("podIndex", 0)
    if target is None:
        return [problem_at(path + ("replicatedJob",), f"coordinator replicatedJob {coord.get('replicatedJob')!r} does not exist",
                           "coordinator")]
    out = []
    job_spec = (target.get("template") or {}).get("spec") or {}
    completions = job_spec.get("completions")
    if not 0 <= job_index < target.get("replicas", 1):
        out.append(problem_at(path + ("jobIndex",), f"coordinator jobIndex {job_index} is not a Job of {target.get('name')!r}",
                              "coordinator"))
    elif job_spec.get("completionMode", "Indexed") != "Indexed" or completions is None:
        out.append(problem_at(path, "the coordinator's Job must be Indexed with completions set", "coordinator"))
    elif not 0 <= pod_index < completions:
        out.append(problem_at(path + ("podIndex",), f"coordinator podIndex {pod_index} is not a pod of the Job (completions {completions})",
                      "coordinator"))
    name = meta.get("name") or ("x" * name_len if name_len else None)
    if name is not None:
        subdomain = (spec.get("network") or {}).get("subdomain") or name
        endpoint = f"{name}-{coord.get('replicatedJob')}-{job_index}-{pod_index}.{subdomain}"
        if len(endpoint) > 63 or not _LABEL_VALUE.fullmatch(endpoint):
            out.append(problem_at(path, f"the coordinator label value {endpoint!r} would be invalid (a label value: at most 63 "
                                "characters)", "coordinator", "shorten the JobSet, replicatedJob or subdomain name"))
    return out


def _shorten(fit: int) -> str:
    return f"use a JobSet name of at most {fit} characters (rename the job, or --name for a single job)"


def _job_rules(job_spec: dict, path: tuple) -> list[Problem]:
    """batch/v1 rules a child Job must pass (else the JobSet is accepted but its Jobs never appear)."""
    out = []
    pod_spec = ((job_spec.get("template") or {}).get("spec")) or {}
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        out.append(problem_at(path + ("template", "spec", "restartPolicy"),
                              f"a Job pod's restartPolicy must be OnFailure or Never, not {policy!r}", "job-restart-policy"))
    if job_spec.get("podFailurePolicy") and policy != "Never":
        out.append(problem_at(path + ("podFailurePolicy",), "podFailurePolicy requires pod restartPolicy Never", "pod-failure-policy"))
    if job_spec.get("completionMode", "Indexed") == "Indexed" and job_spec.get("completions") is None:
        out.append(problem_at(path + ("completions",), "an Indexed Job needs completions", "indexed-completions"))
    containers = {c.get("name") for c in pod_spec.get("containers") or []}
    for r, rule in enumerate((job_spec.get("podFailurePolicy") or {}).get("rules") or []):
        cname = (rule.get("onExitCodes") or {}).get("containerName")
        if cname and cname not in containers:
            out.append(problem_at(path + ("podFailurePolicy", "rules", r, "onExitCodes", "containerName"), f"no container named {cname!r}",
                                  "pod-failure-policy"))
    return out


def _find_key(obj, key: str, path: tuple = ()):
    """Path of the first `key` in the JobSet-specific part of the spec (not inside pod templates)."""
    if isinstance(obj, dict):
        if key in obj:
            return path + (key,)
        for k, v in obj.items():
            if k == "template":
                continue
            found = _find_key(v, key, path + (k,))
            if found is not None:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find_key(v, key, path + (i,))
            if found is not None:
                return found
    return None


# ---------------------------------------------------------------------------------------------
# what the JobSet mutating webhook (mjobset.kb.io) hands on to validation

_QUANTITY_MAPS = ("limits", "requests")


def admitted(jobset: dict) -> tuple[dict, list[Problem]]:
    """The JobSet as the API server validates it: null fields unset, then what JobSet's mutating
    webhook (controller-runtime's defaulter) does before the schema is checked. It decodes the
    object into Go types, so a quantity Go's ParseQuantity refuses denies the request; it fills its
    defaults (completionMode Indexed, pod restartPolicy OnFailure, network, success/startup policy,
    failure rule names, claim retention); and only when a default changed something does it send a
    patch from the request to the re-encoded object, which also rewrites every quantity as Go's
    canonical string (`cpu: 0.5` becomes "500m"). Without a patch a number stays a number, and the
    schema refuses a fractional one. Facts: jobset v0.12.0 pkg/webhooks (Default), controller-runtime
    v0.24.0 defaulter_custom.go (no patch when the object is DeepEqual after defaulting); held by
    tools/validator_vs_apiserver.py."""
    view = normalise(jobset)
    spec = view.get("spec") if isinstance(view, dict) else None
    if not isinstance(spec, dict):
        return view, []
    rjobs = spec.get("replicatedJobs")
    rjobs = rjobs if isinstance(rjobs, list) else []
    # every default is applied (no short-circuit): `changed` only says whether any of them did something
    changed, pods = _default_job_specs(rjobs)
    changed |= _default_network_and_policies(spec)
    changed |= _default_failure_rule_names(spec)
    claims_changed, claims = _default_claim_policies(spec)
    changed |= claims_changed
    if changed:  # the patch carries Go's zero value of a required field without omitempty
        for rj in rjobs:
            if isinstance(rj, dict) and "name" not in rj:
                rj["name"] = ""
    problems: list[Problem] = []
    for pod_spec, path in pods:
        problems += _pod_quantities(pod_spec, path, changed)
    for resources, path in claims:
        problems += _quantity_maps(resources, path, changed)
    return view, problems


def _default_job_specs(rjobs: list) -> tuple[bool, list[tuple[dict, tuple]]]:
    """Each Job's completionMode and pod restartPolicy defaults; (changed, the pod specs and their paths)."""
    changed = False
    pods: list[tuple[dict, tuple]] = []
    for i, rj in enumerate(rjobs):
        job_spec = _dict_at(rj, "template", "spec")
        if job_spec is None:
            continue
        path = ("spec", "replicatedJobs", i, "template", "spec")
        if "completionMode" not in job_spec:
            job_spec["completionMode"], changed = "Indexed", True
        pod_spec = _dict_at(job_spec, "template", "spec")
        if pod_spec is not None:
            if pod_spec.get("restartPolicy") in (None, ""):
                pod_spec["restartPolicy"], changed = "OnFailure", True
            pods.append((pod_spec, path + ("template", "spec")))
    return changed, pods


def _default_network_and_policies(spec: dict) -> bool:
    changed = False
    if isinstance(spec.get("network", {}), dict):
        network = spec.setdefault("network", {})
        for key in ("enableDNSHostnames", "publishNotReadyAddresses"):
            if key not in network:
                network[key], changed = True, True
    for key, default in (("successPolicy", {"operator": "All"}), ("startupPolicy", {"startupPolicyOrder": "AnyOrder"})):
        if key not in spec:
            spec[key], changed = default, True
    return changed


def _default_failure_rule_names(spec: dict) -> bool:
    changed = False
    rules = _dict_at(spec, "failurePolicy")
    if rules is not None and isinstance(rules.get("rules"), list):
        for r, rule in enumerate(rules["rules"]):
            if isinstance(rule, dict) and rule.get("name") in (None, ""):
                rule["name"], changed = f"failurePolicyRule{r}", True
    return changed


def _default_claim_policies(spec: dict) -> tuple[bool, list[tuple[dict | None, tuple]]]:
    """Each volumeClaimPolicy's retentionPolicy default; (changed, the claim templates' resources and their paths)."""
    changed = False
    policies = spec.get("volumeClaimPolicies")
    claims = []
    for i, policy in enumerate(policies if isinstance(policies, list) else []):
        if not isinstance(policy, dict):
            continue
        if "retentionPolicy" not in policy:
            policy["retentionPolicy"], changed = {"whenDeleted": "Delete"}, True
        for t, template in enumerate(policy.get("templates") or [] if isinstance(policy.get("templates"), list) else []):
            claims.append((_dict_at(template, "spec", "resources"),
                           ("spec", "volumeClaimPolicies", i, "templates", t, "spec", "resources")))
    return changed, claims


def _dict_at(node, *keys):
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def _quantity(holder: dict, key, path: tuple, rewrite: bool) -> list[Problem]:
    value = holder.get(key)
    if value is None or isinstance(value, (bool, dict, list)):
        return []  # absent, or a type the schema reports
    amount = parse_quantity(value)
    if amount is None:
        return [problem_at(path, f"quantity {value!r} is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi): the JobSet webhook cannot "
                         "read it and denies the request", "quantity")]
    if rewrite:
        holder[key] = go_string(value)  # what the webhook's patch writes: Go's String() of it
    return []


def _quantity_maps(resources, path: tuple, rewrite: bool) -> list[Problem]:
    out: list[Problem] = []
    for part in _QUANTITY_MAPS:
        block = _dict_at(resources, part)
        for name in list(block or ()):
            out += _quantity(block, name, path + (part, name), rewrite)
    return out


def _divisors(items, path: tuple, rewrite: bool) -> list[Problem]:
    out: list[Problem] = []
    for k, item in enumerate(items if isinstance(items, list) else []):
        ref = _dict_at(item, "resourceFieldRef") if isinstance(item, dict) else None
        if ref is not None:
            out += _quantity(ref, "divisor", path + (k, "resourceFieldRef", "divisor"), rewrite)
    return out


def _pod_quantities(pod: dict, path: tuple, rewrite: bool) -> list[Problem]:
    out = _quantity_maps(pod.get("resources"), path + ("resources",), rewrite)
    overhead = _dict_at(pod, "overhead")
    for name in list(overhead or ()):
        out += _quantity(overhead, name, path + ("overhead", name), rewrite)
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c, container in enumerate(pod.get(field) or [] if isinstance(pod.get(field), list) else []):
            if not isinstance(container, dict):
                continue
            cpath = path + (field, c)
            out += _quantity_maps(container.get("resources"), cpath + ("resources",), rewrite)
            env = container.get("env")
            for e, var in enumerate(env if isinstance(env, list) else []):
                ref = _dict_at(var, "valueFrom", "resourceFieldRef")
                if ref is not None:
                    out += _quantity(ref, "divisor", cpath + ("env", e, "valueFrom", "resourceFieldRef", "divisor"), rewrite)
    volumes = pod.get("volumes")
    for v, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(volume, dict):
            continue
        vpath = path + ("volumes", v)
        empty = _dict_at(volume, "emptyDir")
        if empty is not None:
            out += _quantity(empty, "sizeLimit", vpath + ("emptyDir", "sizeLimit"), rewrite)
        downward = _dict_at(volume, "downwardAPI")
        if downward is not None:
            out += _divisors(downward.get("items"), vpath + ("downwardAPI", "items"), rewrite)
        sources = (_dict_at(volume, "projected") or {}).get("sources")
        for s_, source in enumerate(sources if isinstance(sources, list) else []):
            items = (_dict_at(source, "downwardAPI") or {}).get("items")
            out += _divisors(items, vpath + ("projected", "sources", s_, "downwardAPI", "items"), rewrite)
        claim = _dict_at(volume, "ephemeral", "volumeClaimTemplate", "spec", "resources")
        out += _quantity_maps(claim, vpath + ("ephemeral", "volumeClaimTemplate", "spec", "resources"), rewrite)
    return out
