"""`--target trainjob`, bundle path: the v1 values no TrainJob carries that do not by themselves keep a job
off a shared runtime of kf2jobset's bundle (decided per field, with evidence: docs/trainjob.md).

- Declared ports (TJ035): no TrainJob field declares a port, and a declared port without hostPort is
  informational, so a job whose ports differ from the runtime's of its framework and shape runs on it.
- Retry limits (TJ033): a Job's backoffLimit is the runtime's (Trainer v2.3 JobSpecPatch holds only the
  pod template), so a job whose runtime differs from one of the bundle's only by a retry limit runs on
  that one, retried as often as it says. A limit of 0 (v1 never retried: a failure ends the job) is not a
  count but a rule, and a shared runtime that retries would run the job again: it stays refused.
- Resources (TJ034): spec.trainer.resourcesPerNode reaches the `node` container of every trainer role (the
  runtime's base is empty, so the role's resources are exactly resourcesPerNode) and no runtime patch sets
  resources. They are the sized role's; a role that asked for no more of anything runs with them
  (over-provisioned: the report says by how much per pod); a role that asked for more stays refused, as it
  would run short.
Pure."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal

from .. import claims as claim
from ..notes import Note
from ..k8s.quantity import canonical, parse_quantity
from .trainer_build import NODE

MAX_INT32 = 2147483647
COMPUTE = ("cpu", "memory", "ephemeral-storage")  # any node has some; other resources are devices (GPUs, NICs, hugepages)


@dataclass(frozen=True)
class RetryChange:
    rjob: str  # the runtime's replicatedJob
    role: str
    v1: int  # the limit the planned Job had (v1's runPolicy.backoffLimit, or no limit)
    runtime: int


@dataclass(frozen=True)
class PortChange:
    rjob: str
    v1: tuple  # the ports the planned node container declared
    runtime: tuple  # the runtime's


def _node(rj: dict) -> dict:
    return rj["template"]["spec"]["template"]["spec"]["containers"][0]


def shape_fit(spec: dict, runtimes, framework: str | None = None) -> tuple:
    """(the runtime, [RetryChange], [PortChange]) of `runtimes` (of `framework`, when given) whose spec equals
    `spec` once each replicatedJob's backoffLimit is the runtime's, where both limits retry (>= 1), and its
    declared ports are the runtime's, where none is bound to the node; else (None, [], [])."""
    for runtime in runtimes:
        if framework is not None and runtime.framework != framework:
            continue
        theirs = runtime.spec
        ours = copy.deepcopy(spec)
        ours_rjobs = ours["template"]["spec"].get("replicatedJobs") or []
        their_rjobs = theirs["template"]["spec"].get("replicatedJobs") or []
        if [r["name"] for r in ours_rjobs] != [r["name"] for r in their_rjobs]:
            continue
        changes, ports = [], []
        for mine, their in zip(ours_rjobs, their_rjobs, strict=False):
            a = mine["template"]["spec"].get("backoffLimit")
            b = their["template"]["spec"].get("backoffLimit")
            if a != b:
                if not (isinstance(a, int) and isinstance(b, int) and a >= 1 and b >= 1):
                    break
                mine["template"]["spec"]["backoffLimit"] = b
                changes.append(RetryChange(mine["name"], mine["name"], a, b))
            pa, pb = _node(mine).get("ports") or [], _node(their).get("ports") or []
            if pa != pb:
                if any(p.get("hostPort") or p.get("hostIP") for p in pa):
                    break
                _node(mine).pop("ports", None)
                if pb:
                    _node(mine)["ports"] = copy.deepcopy(pb)
                ports.append(PortChange(mine["name"], tuple(pa), tuple(pb)))
        else:
            if (changes or ports) and ours == theirs:
                return runtime, changes, ports
    return None, [], []


def port_notes(changes: list, runtime_name: str, roles: dict) -> list[Note]:
    """TJ035 per replicatedJob whose declared ports are the runtime's (`roles`: replicatedJob -> its v1 roles)."""
    out = []

    def shown(ports):
        return ", ".join(f"{p.get('name')} {p.get('containerPort')}" if p.get("name") else str(p.get("containerPort"))
                         for p in ports) or "none"
    for ch in changes:
        names = {str(p.get("name") or p.get("containerPort")) for p in (*ch.v1, *ch.runtime)}
        out.append(Note(
            "TJ035", "approximated",
            f"{roles.get(ch.rjob) or ch.rjob}: declares port{'s' if len(ch.runtime) != 1 else ''} {shown(ch.runtime)} (the runtime "
            f"{runtime_name}'s), not v1's {shown(ch.v1)}: a TrainJob cannot declare ports (neither spec.trainer nor a "
            "runtime patch has them, Trainer v2.3); a declared port is informational: the process listens where it "
            "did and peers reach it by number (the env keeps v1's port)",
            target_path=f"spec.replicatedJobs[{ch.rjob}].template.spec.template.spec.containers[node].ports",
            explains=tuple(("port", n) for n in sorted(names)),
            action="a Service, NetworkPolicy or probe that names the port (targetPort: NAME) must use its number; "
                   "--trainer-runtime per-job keeps v1's declared ports",
            claims=(claim.equals(f"spec.replicatedJobs[{ch.rjob}].template.spec.template.spec.containers[node].ports",
                                 [dict(p) for p in ch.runtime]) if ch.runtime else
                    claim.absent(f"spec.replicatedJobs[{ch.rjob}].template.spec.template.spec.containers[node].ports"),)))
    return out


def never_retried(spec: dict, runtimes) -> list[str]:
    """The runtimes `spec` would run on but for a retry limit of 0 on one side (why they stay refused)."""
    out = []
    for runtime in runtimes:
        theirs = runtime.spec
        ours = copy.deepcopy(spec)
        pairs = list(zip(ours["template"]["spec"].get("replicatedJobs") or [],
                         theirs["template"]["spec"].get("replicatedJobs") or [], strict=False))
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


# ---------------------------------------------------------------------------------------------
# resources: the sized role's for every role


@dataclass(frozen=True)
class Overprovisioned:
    rjob: str
    v1: dict  # the role's v1 resources ({} for none)
    extra: tuple  # ("requests"|"limits", resource, v1 amount text, now text)


def _effective(res: dict) -> tuple[dict, dict] | None:
    """(requests, limits) as the API server defaults them (a limit without a request is also the request),
    amounts as Decimals; None when an amount is unreadable."""
    res = res or {}
    limits = {k: parse_quantity(v) for k, v in (res.get("limits") or {}).items()}
    requests = {**limits, **{k: parse_quantity(v) for k, v in (res.get("requests") or {}).items()}}
    if any(v is None for v in (*limits.values(), *requests.values())):
        return None
    return requests, limits


def _text(res: dict, key: str, name: str, amount: Decimal) -> str:
    raw = ((res or {}).get(key) or {}).get(name)
    if raw is None and key == "requests":
        raw = ((res or {}).get("limits") or {}).get(name)
    return str(raw) if raw is not None else canonical(amount)


def resources_fit(sized: tuple[str, dict], others: list[tuple[str, dict]]) -> tuple[list[str], list[Overprovisioned]]:
    """(why not, the roles that run over-provisioned) when every role runs `sized`'s resources. A role asks for
    more when it requests more of a resource than the sized role does, or has a higher limit on one the sized
    role limits: with the sized role's it would run short. A role without a limit gets the sized role's."""
    name, res = sized
    base = _effective(res)
    why, over = [], []
    if base is None:
        return [f"the {name}'s resources are unreadable"], []
    for other, theirs in others:
        eff = _effective(theirs)
        if eff is None:
            why.append(f"the {other}'s resources are unreadable")
            continue
        more = [k for k, v in eff[0].items() if v > base[0].get(k, Decimal(0))]
        more += [k for k, v in eff[1].items() if k in base[1] and v > base[1][k] and k not in more]
        if more:
            why.append(f"the {other} asks for more {', '.join(sorted(more))} than the {name} (every role runs the "
                       f"resources of the role numNodes sizes, spec.trainer.resourcesPerNode; the {other} would run short)")
            continue
        extra = []
        for key, i in (("requests", 0), ("limits", 1)):
            for k, v in sorted(base[i].items()):
                was = eff[i].get(k)
                if was is None or was < v:
                    extra.append((key, k, "none" if was is None else _text(theirs, key, k, was), _text(res, key, k, v)))
        over.append(Overprovisioned(other, copy.deepcopy(theirs or {}), tuple(extra)))
    return why, over


def resources_notes(over: list[Overprovisioned], sized_role: str, resources: dict, node_layout: bool) -> list[Note]:
    """TJ034 per over-provisioned role (in one `node` Job, the role's ranks are pods of that Job)."""
    out = []
    for o in over:
        rjob = NODE if node_layout else o.rjob
        held = "; ".join(f"{key}: " + ", ".join(f"{k} {was} -> {now}" for kk, k, was, now in o.extra if kk == key)
                         for key in ("requests", "limits") if any(e[0] == key for e in o.extra))
        devices = sorted({k for _, k, was, _ in o.extra if was == "none" and k not in COMPUTE})
        out.append(Note(
            "TJ034", "approximated",
            f"{o.rjob} runs the {sized_role}'s resources (spec.trainer.resourcesPerNode reaches every trainer role and a "
            f"runtime patch cannot set resources, Trainer v2.3): per {o.rjob} pod, {held or 'the same amounts'}; the "
            f"{o.rjob} holds what it does not use (the scheduler reserves it, a quota counts it) and a limit it did not "
            "have bounds it"
            + (f"; {', '.join(devices)} {'is a device' if len(devices) == 1 else 'are devices'} the {o.rjob} did not ask "
               f"for: it needs a node with {'it' if len(devices) == 1 else 'them'} free, so on a cluster sized for the "
               f"{sized_role}s the TrainJob waits" if devices else ""),
            warn=bool(devices),
            target_path=f"spec.replicatedJobs[{rjob}].template.spec.template.spec.containers[{NODE}].resources",
            action="accept the extra, or convert with --trainer-runtime per-job to keep each role's own resources",
            claims=(claim.equals(f"spec.replicatedJobs[{rjob}].template.spec.template.spec.containers[{NODE}].resources",
                                 resources),)))
    return out
