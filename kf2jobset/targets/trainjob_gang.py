"""`--target trainjob --scheduler scheduler-plugins` on a generated TrainingRuntime: Trainer v2.3's own
`podGroupPolicy.coscheduling` where the PodGroup it makes is the one the v1 operator made, else the companion
PodGroup the JobSet target writes (kf2jobset/schedulers/scheduler_plugins.py).

What Trainer's CoScheduling plugin does (pkg/runtime/framework/plugins/coscheduling at v2.3.0): a
`scheduling.x-k8s.io/v1alpha1` PodGroup named after the TrainJob and owned by it; minMember the sum of each
replicatedJob's pod count, which Trainer takes from the Job's parallelism, not the replicatedJob's replicas
(pkg/runtime/core/trainingruntime.go); minResources that count times one pod's requests as
component-helpers' PodRequests sums them (containers' requests only, init containers by their maximum,
sidecars added, overhead added); scheduleTimeoutSeconds from the policy (the CRD defaults it to 60); the label
`scheduling.x-k8s.io/pod-group: <TrainJob>` on every pod, and no schedulerName. Pure."""
from __future__ import annotations

from decimal import Decimal

from .. import claims as claim
from ..schedulers import scheduler
from ..schedulers.scheduler_plugins import POD_GROUP_LABEL
from ..notes import Note
from ..quantity import canonical, parse_quantity

TRAINER_DEFAULT_TIMEOUT = 60  # CoschedulingPodGroupPolicySource.scheduleTimeoutSeconds' CRD default


def _requests(container: dict) -> dict[str, Decimal]:
    return {k: parse_quantity(v) or Decimal(0) for k, v in ((container.get("resources") or {}).get("requests") or {}).items()}


def _plus(total: dict[str, Decimal], other: dict[str, Decimal]) -> None:
    for k, v in other.items():
        total[k] = total.get(k, Decimal(0)) + v


def _at_least(total: dict[str, Decimal], other: dict[str, Decimal]) -> None:
    for k, v in other.items():
        total[k] = max(total.get(k, Decimal(0)), v)


def pod_requests(pod_spec: dict) -> dict[str, Decimal]:
    """One pod's requests as Trainer computes them for its PodGroup (component-helpers resource.PodRequests):
    limits are not read, since the runtime's template is not a pod the API server has defaulted."""
    total: dict[str, Decimal] = {}
    for c in pod_spec.get("containers") or []:
        _plus(total, _requests(c))
    sidecars: dict[str, Decimal] = {}
    peak: dict[str, Decimal] = {}
    for c in pod_spec.get("initContainers") or []:
        own = _requests(c)
        if c.get("restartPolicy") == "Always":  # a sidecar runs beside the containers
            _plus(total, own)
            _plus(sidecars, own)
            during = dict(sidecars)
        else:
            during = dict(own)
            _plus(during, sidecars)
        _at_least(peak, during)
    _at_least(total, peak)
    _plus(total, {k: parse_quantity(v) or Decimal(0) for k, v in (pod_spec.get("overhead") or {}).items()})
    return total


def trainer_podgroup(spec: dict) -> tuple[int, dict[str, Decimal], int]:
    """(minMember, minResources) of the PodGroup Trainer would make from the runtime's JobSet spec, and the pods
    that JobSet runs."""
    members, pods, resources = 0, 0, {}
    for rj in spec.get("replicatedJobs") or []:
        job = (rj.get("template") or {}).get("spec") or {}
        count = max(int(job.get("parallelism", 1)), 1)
        members += count
        pods += count * int(rj.get("replicas", 1))
        for k, v in pod_requests((job.get("template") or {}).get("spec") or {}).items():
            resources[k] = resources.get(k, Decimal(0)) + v * count
    return members, {k: v for k, v in resources.items() if v}, pods


def _text(resources: dict[str, Decimal], like: dict[str, str]) -> str:
    """Amounts as Quantity strings, binary where v1's PodGroup wrote that resource in a binary format."""
    return ", ".join(f"{k}={canonical(v, binary=str(like.get(k, '')).endswith('i'))}"
                     for k, v in sorted(resources.items())) or "none"


def pod_group_policy(conversion, options, spec: dict) -> dict | None:
    """The runtime's podGroupPolicy when Trainer's PodGroup is the operator's: the companion PodGroup and the
    templates' pod-group label are then dropped (Trainer makes both) and JS090 becomes TJ050. Otherwise None,
    and TJ051 says why the companion stays. `spec` is the runtime's copy of the JobSet spec, edited in place."""
    chosen = scheduler(options.scheduler)
    if not chosen.trainer_adopts_podgroup:
        return None
    group = next((c for c in conversion.companions if c.get("kind") == "PodGroup"
                  and c.get("apiVersion") == chosen.podgroup.api_version), None)
    if group is None:
        return None
    v1 = group.get("spec") or {}
    members, resources, pods = trainer_podgroup(spec)
    v1_resources = {k: parse_quantity(v) for k, v in (v1.get("minResources") or {}).items()}
    why = []
    if members != v1["minMember"]:
        why.append(f"Trainer counts {members} pods (each Job's parallelism, not the replicatedJob's replicas) of the "
                   f"{pods} the JobSet runs" if members != pods else
                   f"Trainer's PodGroup holds every pod ({members}), v1's gang was minAvailable {v1['minMember']}")
    if resources != {k: v for k, v in v1_resources.items() if v}:
        written = v1.get("minResources") or {}
        why.append(f"Trainer would sum minResources {_text(resources, written)} (requests only, init containers by "
                   f"their peak), v1's PodGroup has {_text(v1_resources, written)}")
    if why:
        conversion.notes.append(Note(
            "TJ051", "unchanged",
            "the PodGroup stays kf2jobset's companion, as for the JobSet target (no owner: delete it with the "
            "TrainJob); Trainer's podGroupPolicy.coscheduling would make another gang: " + "; ".join(why),
            target_path="kind", claims=(claim.absent("spec.podGroupPolicy", "TrainingRuntime"),
                                        claim.present("spec.minMember", "PodGroup"))))
        return None
    name = group["metadata"]["name"]
    for rj in spec.get("replicatedJobs") or []:
        meta = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("metadata") or {}
        if (meta.get("labels") or {}).get(POD_GROUP_LABEL) == name:  # Trainer's, from the TrainJob's name
            del meta["labels"][POD_GROUP_LABEL]
            if not meta["labels"]:
                del meta["labels"]
    conversion.companions.remove(group)
    timeout = v1.get("scheduleTimeoutSeconds")
    policy = {"coscheduling": {"scheduleTimeoutSeconds": timeout} if timeout is not None else {}}
    schedulers = sorted({(((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get(
        "schedulerName", "default-scheduler") for rj in spec.get("replicatedJobs") or []})
    conversion.notes = [n for n in conversion.notes if n.code != "JS090"]
    conversion.notes.append(Note(
        "TJ050", "rewritten" if timeout is not None else "approximated",
        f"the operator's scheduler-plugins gang through Trainer's podGroupPolicy.coscheduling: Trainer makes the "
        f"PodGroup {name} (the TrainJob's name) with minMember {members} and minResources "
        f"{_text(resources, v1.get('minResources') or {})}, as "
        f"the operator did, labels every pod {POD_GROUP_LABEL}={name}, and owns the PodGroup (deleted with the "
        "TrainJob). It differs in: no schedulerName (the runtime's pod templates keep "
        f"{', '.join(schedulers)}, as v1's pods had it); no minAvailable (every pod, which is v1's gang here); "
        + (f"scheduleTimeoutSeconds {timeout}, as v1's PodGroup" if timeout is not None else
           f"scheduleTimeoutSeconds {TRAINER_DEFAULT_TIMEOUT}, Trainer's default, where v1's PodGroup had none "
           "(the Coscheduling plugin then waited its permitWaitingTimeSeconds, 60 unless configured)"),
        source_path="runPolicy.schedulingPolicy" if not conversion.job.run_policy.scheduling.is_empty() else None,
        target_path="spec.podGroupPolicy",
        explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
        action="install scheduler-plugins' PodGroup CRD before Trainer starts: its CoScheduling plugin watches "
               "PodGroups only if the CRD is there at start-up",
        claims=(claim.present("spec.podGroupPolicy.coscheduling", "TrainingRuntime"),
                claim.absent("kind", "PodGroup"),
                *(claim.equals("spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds", timeout, "TrainingRuntime")
                  for _ in [0] if timeout is not None))))
    conversion.lifecycle_overrides["schedulingPolicy"] = {
        "minAvailable": members, **({"minResources": ",".join(f"{k}={v}" for k, v in sorted(v1["minResources"].items()))}
                                    if v1.get("minResources") else {})}
    return policy
