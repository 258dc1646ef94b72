"""Refuse any JobSet the real API would reject: our JSON Schema (strict, like the API server's
strict field validation) plus the JobSet webhook/CEL rules and the batch/v1 Job rules the child
Jobs must pass. Facts: reference/jobset.md §3.

Each problem names the rule and, where there is one, the fix.
"""
from __future__ import annotations

import re

from .errors import Location, Problem, RejectedJobSetError
from .options import LATEST_JOBSET_VERSION
from .podrules import check_jobset_objects

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
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
    return len(str(max(n, 0)))


def _fmt_version(v: tuple[int, int]) -> str:
    return f"v{v[0]}.{v[1]}"


def check_jobset(jobset: dict, *, version: tuple[int, int] = LATEST_JOBSET_VERSION,
                 assumed_name_length: int | None = None) -> list[Problem]:
    """All reasons the API would reject `jobset`. `assumed_name_length` stands in for an unknown name
    (e.g. a Katib trial, named when the trial is created)."""
    from .schemas import validate as schema_validate

    problems = [Problem(i.message, Location(path=i.path), rule="schema") for i in schema_validate(jobset, "jobset")]
    if problems:
        return problems  # the rules below assume a well-formed object
    problems += _webhook_rules(jobset, version, assumed_name_length)
    problems += check_jobset_objects(jobset)  # core object and pod rules the child Jobs must pass (podrules.py)
    return problems


def validate_jobset(jobset: dict, **kw) -> None:
    problems = check_jobset(jobset, **kw)
    if problems:
        raise RejectedJobSetError(problems)


def _p(path: tuple, message: str, rule: str, hint: str | None = None) -> Problem:
    return Problem(message, Location(path=path), rule=rule, hint=hint)


def _webhook_rules(js: dict, version: tuple[int, int], assumed_name_length: int | None) -> list[Problem]:
    out: list[Problem] = []
    meta = js.get("metadata") or {}
    spec = js.get("spec") or {}
    rjobs = spec.get("replicatedJobs") or []
    name = meta.get("name")
    name_len = None
    if name:
        name_len = len(name)
        if not _DNS1035.match(name) or len(name) > 63:
            out.append(_p(("metadata", "name"), f"JobSet name {name!r} must be a DNS-1035 label (a-z, 0-9, '-', starting with a letter, at most 63)",
                          "jobset-name", "pick another name with --name"))
    elif meta.get("generateName"):
        name_len = len(meta["generateName"]) + GENERATE_NAME_SUFFIX
    elif assumed_name_length is not None:
        name_len = assumed_name_length

    for key, first in _VERSIONED.items():
        if version >= first:
            continue
        where = _find_key(spec, key)
        if where is not None:
            out.append(_p(("spec",) + where, f"{key} needs JobSet {_fmt_version(first)} or newer (target: {_fmt_version(version)})",
                          "jobset-version", "raise --jobset-version or drop the feature"))

    sub = (spec.get("network") or {}).get("subdomain")
    if sub and (not _DNS1123_SUB.match(sub) or not _DNS1035.match(sub) or len(sub) > 63):
        out.append(_p(("spec", "network", "subdomain"), f"subdomain {sub!r} must be a DNS-1035 label of at most 63 characters",
                      "network-subdomain", "use --subdomain with a short lower-case name"))
    managed = spec.get("managedBy")
    if managed and (len(managed) > 63 or not _MANAGED_BY.match(managed)):
        out.append(_p(("spec", "managedBy"), f"managedBy {managed!r} must be a domain-prefixed path of at most 63 characters", "managed-by"))

    names = [r.get("name") for r in rjobs]
    seen: set = set()
    has_depends = False
    too_long: list[tuple[int, Problem]] = []  # (longest JobSet name that would fit, problem)
    for i, rj in enumerate(rjobs):
        path = ("spec", "replicatedJobs", i)
        rname = rj.get("name") or ""
        if rname in seen:
            out.append(_p(path + ("name",), f"replicatedJob name {rname!r} is used twice", "unique-rjob"))
        seen.add(rname)
        if not _DNS1035.match(rname):
            out.append(_p(path + ("name",), f"replicatedJob name {rname!r} must be a DNS-1035 label", "rjob-name"))
        group = rj.get("groupName")
        if group is not None and (not _DNS1035.match(group) or len(group) > 63):
            out.append(_p(path + ("groupName",), f"groupName {group!r} must be a DNS-1035 label", "group-name"))
        replicas = rj.get("replicas", 1)
        job_spec = (rj.get("template") or {}).get("spec") or {}
        parallelism = job_spec.get("parallelism", 1)
        completions = job_spec.get("completions")
        if replicas * parallelism > MAX_INT32:
            out.append(_p(path, "replicas x parallelism exceeds 2147483647", "pod-count"))
        if name_len is not None:
            dj = _digits(replicas - 1)
            job_name_len = name_len + len(rname) + dj + 2
            if job_name_len > 63:
                fit = 63 - len(rname) - dj - 2
                too_long.append((fit, _p(path + ("name",), f"child Job name <jobset>-{rname}-{replicas - 1} would be {job_name_len} characters (max 63)",
                                         "job-name-length", _shorten(fit))))
            indexed = job_spec.get("completionMode", "Indexed") == "Indexed"
            if indexed and completions is not None:
                dp = _digits(completions - 1)
                budget = name_len + len(rname) + dj + dp
                if budget > 54:
                    fit = 54 - len(rname) - dj - dp
                    too_long.append((fit, _p(path + ("name",), f"pod names <jobset>-{rname}-<job>-<index>-xxxxx would be {budget + 9} characters (max 63)",
                                             "pod-name-length", _shorten(fit))))
        deps = rj.get("dependsOn") or []
        if deps:
            has_depends = True
            if i == 0:
                out.append(_p(path + ("dependsOn",), "the first replicatedJob cannot have dependsOn", "depends-on-first"))
            for d, dep in enumerate(deps):
                if dep.get("name") not in names[:i]:
                    out.append(_p(path + ("dependsOn", d, "name"), f"dependsOn {dep.get('name')!r} must name a replicatedJob listed earlier",
                                  "depends-on-order"))
        out += _job_rules(job_spec, path + ("template", "spec"))

    if too_long:
        # every replicatedJob has its own limit; the one that matters is the tightest
        out.append(min(too_long, key=lambda t: t[0])[1])
    if has_depends and (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder":
        out.append(_p(("spec", "startupPolicy"), "StartupPolicy and DependsOn APIs are mutually exclusive", "startup-vs-depends-on"))
    targets = (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []
    for t, target in enumerate(targets):
        if target not in names:
            out.append(_p(("spec", "successPolicy", "targetReplicatedJobs", t), f"successPolicy targets unknown replicatedJob {target!r}",
                          "success-target"))
    fp = spec.get("failurePolicy") or {}
    rule_names: set = set()
    for r, rule in enumerate(fp.get("rules") or []):
        rpath = ("spec", "failurePolicy", "rules", r)
        rn = rule.get("name") or ""
        if not (1 <= len(rn) <= 128) or not _RULE_NAME.match(rn):
            out.append(_p(rpath + ("name",), f"failure policy rule name {rn!r} is invalid", "failure-rule-name"))
        if rn in rule_names:
            out.append(_p(rpath + ("name",), f"failure policy rule name {rn!r} is used twice", "failure-rule-name"))
        rule_names.add(rn)
        for t in rule.get("targetReplicatedJobs") or []:
            if t not in names:
                out.append(_p(rpath + ("targetReplicatedJobs",), f"rule targets unknown replicatedJob {t!r}", "failure-target"))
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in FAILURE_REASONS:
                out.append(_p(rpath + ("onJobFailureReasons",), f"unknown Job failure reason {reason!r}", "failure-reason"))
        if str(rule.get("action", "")).startswith("RestartJob") and rule.get("action") not in ("RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts"):
            out.append(_p(rpath + ("action",), "RestartJob actions need the alpha RestartJob feature gate", "feature-gate"))
    if fp.get("restartStrategy") == "InPlaceRestart":
        out.append(_p(("spec", "failurePolicy", "restartStrategy"), "InPlaceRestart needs the alpha InPlaceRestart feature gate", "feature-gate"))
    return out


def _shorten(fit: int) -> str:
    return f"use a JobSet name of at most {fit} characters (rename the job, or --name for a single job)"


def _job_rules(job_spec: dict, path: tuple) -> list[Problem]:
    """batch/v1 rules a child Job must pass (else the JobSet is accepted but its Jobs never appear)."""
    out = []
    pod_spec = ((job_spec.get("template") or {}).get("spec")) or {}
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        out.append(_p(path + ("template", "spec", "restartPolicy"), f"a Job pod's restartPolicy must be OnFailure or Never, not {policy!r}", "job-restart-policy"))
    if job_spec.get("podFailurePolicy") and policy != "Never":
        out.append(_p(path + ("podFailurePolicy",), "podFailurePolicy requires pod restartPolicy Never", "pod-failure-policy"))
    if job_spec.get("completionMode", "Indexed") == "Indexed" and job_spec.get("completions") is None:
        out.append(_p(path + ("completions",), "an Indexed Job needs completions", "indexed-completions"))
    containers = {c.get("name") for c in pod_spec.get("containers") or []}
    for r, rule in enumerate((job_spec.get("podFailurePolicy") or {}).get("rules") or []):
        cname = (rule.get("onExitCodes") or {}).get("containerName")
        if cname and cname not in containers:
            out.append(_p(path + ("podFailurePolicy", "rules", r, "onExitCodes", "containerName"), f"no container named {cname!r}", "pod-failure-policy"))
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
