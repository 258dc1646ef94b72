"""What the size-derived literals of a converted JobSet (or TrainJob) describe, read back from the values.

The profile that wrote them declares them (Profile.size_values): a TF_CONFIG's host lists, a hostfile's
lines, WORKER_ADDRS, a WORLD_SIZE written as a number, Paddle's one-pod replicatedJob. Here each is found
on the object (every container's env, the ConfigMaps its pods mount, a TrainJob's trainer env) and held
against the object's own sizes, whatever kf2jobset.dev/sized-for says: a value whose size is not the
object's is stale. A value read from a label (valueFrom) follows the size and is never read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..frameworks.base import HOSTS, PODS, ROLE, SOLO, JobSetSide

_BOUND = re.compile(r"(\d+):(\d+)")  # an elastic job's node count, min:max (PET_NNODES)


@dataclass
class Reading:
    stale: list = field(default_factory=list)  # "TF_CONFIG lists 3 worker pods, the JobSet runs 5"
    renamed: list = field(default_factory=list)  # values naming the pods of a replicatedJob the object lacks
    gone: list = field(default_factory=list)  # those replicatedJobs' names
    read: set = field(default_factory=set)  # the declared values found on the object
    first: str | None = None  # the replicatedJob of the first stale value (where --check points)

    def add(self, text: str, rjob: str | None = None) -> None:
        if text not in self.stale:
            self.stale.append(text)
            self.first = self.first or rjob


def profile_of(source) -> object | None:
    """The profile of the v1 kind `kf2jobset.dev/source` names (`kubeflow.org/v1/TFJob wide-deep`)."""
    from ..frameworks import profile
    from ..mappings import convertible_mapping

    api_kind = str(source or "").split(" ")[0]
    api, _, kind = api_kind.rpartition("/")
    mapping = convertible_mapping(api, kind)
    return profile(mapping.profile) if mapping is not None else None


def _pod_specs(data: dict) -> list[tuple[str, dict]]:
    """(replicatedJob name, pod spec) of each replicatedJob of a JobSet."""
    rjobs = (data.get("spec") or {}).get("replicatedJobs") or []
    out = []
    for r in rjobs:
        pod = (((r.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") if isinstance(r, dict) else None
        if isinstance(pod, dict):
            out.append((r.get("name"), pod))
    return out


def _envs(pod: dict) -> list[dict]:
    """Each container's env as {name: literal value} (init containers too: the MPI hostfile writer)."""
    out = []
    for c in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
        env = c.get("env") if isinstance(c, dict) else None
        out.append({e["name"]: e.get("value") for e in env or [] if isinstance(e, dict) and "name" in e
                    and "valueFrom" not in e})
    return out


def _mounted(pod: dict, configmaps: dict) -> list[dict]:
    """The data of the ConfigMaps of the same stream the pod mounts."""
    names = [(v.get("configMap") or {}).get("name") for v in pod.get("volumes") or [] if isinstance(v, dict)]
    return [configmaps[n] for n in names if n in configmaps]


def _count(value) -> int | None:
    return int(value) if isinstance(value, (int, str)) and str(value).strip().isdigit() else None


def _hosts(reading: Reading, name: str, text: str, names: tuple, replicas: dict, kind: str) -> None:
    named: dict[str, set] = {}
    for rjob, job_index, pod in JobSetSide.pods_named(text, names):
        named.setdefault(rjob, set()).add((job_index, pod))
    for rjob, pods in named.items():
        if rjob not in replicas:
            said = f"{name} names {len(pods)} pod{'s' if len(pods) != 1 else ''} of replicatedJob {rjob}, which the {kind} no longer has"
            if said not in reading.renamed:
                reading.renamed.append(said)
                reading.gone.append(rjob)
        elif len(pods) != _count(replicas[rjob]):  # a placeholder (${N}) is no size a literal list can match
            reading.add(f"{name} lists {len(pods)} {rjob} pod{'s' if len(pods) != 1 else ''}, the {kind} runs "
                        f"{replicas[rjob]}", rjob)


def _factor(env: dict, times: str | None, fallback) -> int | None:
    """What a pod count is multiplied by: the integer of env `times` (the operator multiplied by nprocPerNode
    only when it was one: 1 otherwise), else `fallback` (a TrainJob's numProcPerNode, the record's factor)."""
    if not times:
        return 1
    if times in env:
        return _count(env[times]) or 1
    return _count(fallback)


def _pods(reading: Reading, value, env: dict, times: str | None, pods, kind: str, name: str, factor: int,
          rjob: str | None = None) -> None:
    count = _count(value)
    if count is None or (isinstance(pods, int) and count == pods * factor):
        return
    if factor == 1:
        reading.add(f"{name} counts {count} pods, the {kind} runs {pods}", rjob)
    else:
        reading.add(f"{name} is {count} ({count / factor:g} pods x {times} {factor}), the {kind} runs {pods} pods"
                    + (f" ({pods * factor})" if isinstance(pods, int) else ""), rjob)


@dataclass
class _JobSetSizes:
    """What a JobSet's values are held against."""
    replicas: dict  # replicatedJob name -> its replicas as written
    pods: object  # the pod count, or the replicas joined with " + " where one is a placeholder (${N})
    names: tuple  # the names the JobSet may have been written under in literal addresses
    said: dict  # value name -> the size-literals record's `(pods x TIMES N)` match
    bounds: dict = field(default_factory=dict)  # an elastic bound (name, min, max) -> the replicatedJobs joining it


def read_sizes(data: dict, configmaps: dict, profile, names: tuple, entries=()) -> Reading:
    """Every declared value of `profile` found on `data` (a JobSet or TrainJob) against its sizes.
    `configmaps`: name -> data of the stream's ConfigMaps; `names`: the names the JobSet may have been
    written under in literal addresses (its own, the v1 job's); `entries`: the size-literals record, whose
    `WORLD_SIZE (pods x nprocPerNode 8)` says the factor where no env carries it."""
    reading = Reading()
    said = {e.split(" (")[0]: re.search(r"\(pods x \S+ (\d+)\)", e) for e in entries}
    if data.get("kind") == "TrainJob":
        _read_trainjob(reading, data, profile, said)
        return reading
    rjobs = [r for r in (data.get("spec") or {}).get("replicatedJobs") or [] if isinstance(r, dict)]
    replicas = {r.get("name"): r.get("replicas", 1) for r in rjobs}
    counts = [_count(n) for n in replicas.values()]
    # a placeholder among the replicas (${N}): a pod count no literal can match
    pods = sum(counts) if None not in counts else " + ".join(str(n) for n in replicas.values())
    sizes = _JobSetSizes(replicas, pods, names, said)
    for rjob, pod in _pod_specs(data):
        envs = _envs(pod)
        files = _mounted(pod, configmaps)
        for value in profile.size_values:
            if value.shape == SOLO:
                _read_solo(reading, value, pod, rjob, replicas)
                continue
            for env in envs:
                for key in value.holders:
                    if key in env and env[key] is not None:
                        _read_env_value(reading, value, env, key, rjob, sizes)
            if value.shape == HOSTS:
                _read_mounted_hosts(reading, value, files, sizes)
    _check_bounds(reading, sizes)
    return reading


def _read_trainjob(reading: Reading, data: dict, profile, said: dict) -> None:
    """A TrainJob's nodes are laid out by the runtime: only pod counts are read, from the trainer's env."""
    trainer = (data.get("spec") or {}).get("trainer") or {}
    nodes = _count(trainer.get("numNodes", 1))
    env = _envs({"containers": [trainer]})[0]
    for value in profile.size_values:
        found = [k for k in value.holders if k in env]
        recorded = said.get(value.name)
        factor = _factor(env, value.times, trainer.get("numProcPerNode") or (recorded and recorded.group(1)))
        if value.shape == PODS and found and nodes is not None and factor is not None:
            reading.read.add(value.name)
            _pods(reading, env[found[0]], env, value.times, nodes, "TrainJob", value.name, factor)


def _read_solo(reading: Reading, value, pod: dict, rjob: str, replicas: dict) -> None:
    """The env's presence marks the one-pod replicatedJob (it is a valueFrom, so no literal is read)."""
    named = {e.get("name") for c in pod.get("containers") or [] if isinstance(c, dict)
             for e in c.get("env") or [] if isinstance(e, dict)}
    if named & set(value.holders):
        reading.read.add(value.name)
        if _count(replicas[rjob]) != 1:
            reading.add(f"the {rjob} replicatedJob's layout is for one pod (it reads {value.holders[0]}, "
                        f"its own IP, as the rendezvous host), the JobSet runs {replicas[rjob]} there (the type's other "
                        "replicatedJob takes the rest)", rjob)


def _read_env_value(reading: Reading, value, env: dict, key: str, rjob: str, sizes: _JobSetSizes) -> None:
    """One env literal of a declared value held against the JobSet's sizes (an elastic bound is
    gathered in `sizes.bounds`, checked once every replicatedJob joining it is known)."""
    replicas = sizes.replicas
    recorded = sizes.said.get(value.name)
    factor = _factor(env, value.times, recorded and recorded.group(1))
    if value.shape != PODS or factor is not None:
        reading.read.add(value.name)
    bound = _BOUND.fullmatch(str(env[key])) if value.shape == PODS else None
    if bound:  # an elastic rendezvous: the pods that join it must fit min:max
        reading.read.add(value.name)
        sizes.bounds.setdefault((value.name, int(bound.group(1)), int(bound.group(2))), []).append(rjob)
    elif value.shape == HOSTS:
        _hosts(reading, value.name, env[key], sizes.names, replicas, "JobSet")
    elif value.shape == PODS and factor is not None:
        _pods(reading, env[key], env, value.times, sizes.pods, "JobSet", value.name, factor, rjob)
    elif value.shape == ROLE and value.role in replicas and _count(env[key]) is not None \
            and _count(env[key]) != _count(replicas[value.role]):
        reading.add(f"{value.name} counts {env[key]} {value.role} pod{'' if env[key] == '1' else 's'}, the JobSet runs "
                    f"{replicas[value.role]}", value.role)


def _read_mounted_hosts(reading: Reading, value, files: list, sizes: _JobSetSizes) -> None:
    """Host lists held in the ConfigMaps the pod mounts (a hostfile)."""
    for cm in files:
        for key in value.holders:
            if isinstance(cm.get(key), str):
                reading.read.add(value.name)
                _hosts(reading, value.name, cm[key], sizes.names, sizes.replicas, "JobSet")


def _check_bounds(reading: Reading, sizes: _JobSetSizes) -> None:
    """Each elastic bound against the pods of the replicatedJobs that join it."""
    for (name, lo, hi), joining in sizes.bounds.items():
        counts = [_count(sizes.replicas[r]) for r in dict.fromkeys(joining)]
        joined = sum(counts) if None not in counts else None
        if joined is not None and joined > hi:
            reading.add(f"{name} bounds the rendezvous at {lo}:{hi} nodes, the JobSet runs {joined} pods that join it: "
                        f"past {hi} a pod cannot join (torchrun fails it)", joining[0])
        elif joined is not None and joined < lo:
            reading.add(f"{name} bounds the rendezvous at {lo}:{hi} nodes, the JobSet runs {joined} pods that join it: "
                        f"below {lo} the rendezvous never completes", joining[0])
