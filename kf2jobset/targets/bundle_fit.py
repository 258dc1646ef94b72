"""`--target trainjob`, bundle path: the v1 values no TrainJob carries that do not by themselves keep a job
off a shared runtime of kf2jobset's bundle (issue 31: decided per field, with evidence; docs/trainjob.md).

- Retry limits (TJ033): a Job's backoffLimit is the runtime's (Trainer v2.3 JobSpecPatch holds only the
  pod template), so a job whose runtime differs from one of the bundle's only by a retry limit runs on
  that one, retried as often as it says. A limit of 0 (v1 never retried: a failure ends the job) is not a
  count but a rule, and a shared runtime that retries would run the job again: it stays refused.
Pure."""
from __future__ import annotations

import copy
from dataclasses import dataclass

from .. import claims as claim
from ..notes import Note

MAX_INT32 = 2147483647


@dataclass(frozen=True)
class RetryChange:
    rjob: str  # the runtime's replicatedJob
    role: str
    v1: int  # the limit the planned Job had (v1's runPolicy.backoffLimit, or no limit)
    runtime: int


def retry_fit(spec: dict, runtimes) -> tuple:
    """(the runtime, [RetryChange]) of `runtimes` whose spec equals `spec` once each replicatedJob's
    backoffLimit is the runtime's, where both limits retry (>= 1); else (None, [])."""
    for runtime in runtimes:
        theirs = runtime.spec
        ours = copy.deepcopy(spec)
        ours_rjobs = ours["template"]["spec"].get("replicatedJobs") or []
        their_rjobs = theirs["template"]["spec"].get("replicatedJobs") or []
        if [r["name"] for r in ours_rjobs] != [r["name"] for r in their_rjobs]:
            continue
        changes = []
        for mine, their in zip(ours_rjobs, their_rjobs):
            a = mine["template"]["spec"].get("backoffLimit")
            b = their["template"]["spec"].get("backoffLimit")
            if a == b:
                continue
            if not (isinstance(a, int) and isinstance(b, int) and a >= 1 and b >= 1):
                break
            mine["template"]["spec"]["backoffLimit"] = b
            changes.append(RetryChange(mine["name"], mine["name"], a, b))
        else:
            if changes and ours == theirs:
                return runtime, changes
    return None, []


def never_retried(spec: dict, runtimes) -> list[str]:
    """The runtimes `spec` would run on but for a retry limit of 0 on one side (why they stay refused)."""
    out = []
    for runtime in runtimes:
        theirs = runtime.spec
        ours = copy.deepcopy(spec)
        pairs = list(zip(ours["template"]["spec"].get("replicatedJobs") or [],
                         theirs["template"]["spec"].get("replicatedJobs") or []))
        for mine, their in pairs:
            mine["template"]["spec"]["backoffLimit"] = their["template"]["spec"].get("backoffLimit")
        if ours == theirs:
            out.append(runtime.name)
    return out


def _limit(n: int) -> str:
    return "no limit" if n == MAX_INT32 else str(n)


def retry_notes(changes: list, runtime_name: str, restart_policies: dict, roles: dict) -> list[Note]:
    """TJ033 per replicatedJob whose retry limit is the runtime's (`roles`: replicatedJob -> the v1 roles in it)."""
    out = []
    for ch in changes:
        more = ch.runtime > ch.v1
        who = roles.get(ch.rjob) or ch.rjob
        counted = "container restarts" if restart_policies.get(ch.rjob) == "OnFailure" else "failed pods"
        if more:
            change = ("a pod that keeps failing is retried "
                      + ("without limit (until the TrainJob's activeDeadlineSeconds, if any)" if ch.runtime == MAX_INT32
                         else f"up to {ch.runtime} times") + f", where v1 failed the job after {ch.v1}")
        else:
            change = f"the TrainJob fails after {ch.runtime} {counted} in the {ch.rjob} Job, where v1 allowed {_limit(ch.v1)}"
        now = "no retry limit" if ch.runtime == MAX_INT32 else f"retry limit {ch.runtime}"
        out.append(Note(
            "TJ033", "approximated",
            f"{who}: {now} (the runtime {runtime_name}'s; {counted}, counted by the {ch.rjob} Job) where v1's was "
            f"{_limit(ch.v1)}: a TrainJob has no retry-limit field and a runtime patch no Job field (Trainer v2.3), so "
            f"{'more' if more else 'fewer'} retries: {change}; either way the TrainJob stays once it has finished "
            "(Trainer v2.3 has no TrainJob TTL)",
            source_path="spec.runPolicy.backoffLimit",
            target_path=f"spec.replicatedJobs[{ch.rjob}].template.spec.backoffLimit",
            explains=(("lifecycle", "backoffLimit"),),
            action="to keep v1's limit exactly, convert with --trainer-runtime per-job (a namespaced runtime of this "
                   "job's own)" + ("; or set activeDeadlineSeconds to bound a job that keeps failing" if more else ""),
            claims=(claim.equals(f"spec.replicatedJobs[{ch.rjob}].template.spec.backoffLimit", ch.runtime),)))
    return out
