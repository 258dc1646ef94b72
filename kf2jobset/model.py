"""The typed model of a Kubeflow v1 job after the operator's defaults have been applied.

Parsing makes every implicit default explicit (replicas, restartPolicy, default port, cleanPodPolicy,
framework fields), so nothing downstream depends on what the operator would have filled in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .mappings import KindMapping


@dataclass
class SchedulingPolicy:
    min_available: int | None = None
    queue: str | None = None
    min_resources: dict | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None

    def is_empty(self) -> bool:
        return all(v is None for v in vars(self).values())


@dataclass
class RunPolicy:
    clean_pod_policy: str = "None"
    clean_pod_policy_defaulted: bool = True
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling: SchedulingPolicy = field(default_factory=SchedulingPolicy)
    suspend: bool = False
    managed_by: str | None = None


@dataclass
class ReplicaSpec:
    type: str  # canonical CamelCase type, e.g. "Worker"
    source_key: str  # the map key as written (case may differ)
    replicas: int
    restart_policy: str  # as the operator understood it: Always | OnFailure | Never | ExitCode
    template: dict  # pod template with the operator's port defaulting applied
    replicas_defaulted: bool = False
    restart_policy_defaulted: bool = False
    port_added: bool = False

    @property
    def rjob_name(self) -> str:
        """replicatedJob name: the operator's lower-cased type, as in its pod and Service names."""
        return self.type.lower().replace("/", "-")

    @property
    def containers(self) -> list[dict]:
        return self.template.setdefault("spec", {}).setdefault("containers", [])


@dataclass
class DefaultApplied:
    """One default made explicit during parsing (the report lists them)."""

    path: tuple
    value: Any
    why: str


@dataclass
class TrainingJob:
    mapping: KindMapping
    api_version: str
    name: str | None  # None for Katib trial specs and generateName objects
    namespace: str | None
    generate_name: str | None
    labels: dict
    annotations: dict
    replicas: dict[str, ReplicaSpec]  # canonical type -> spec, in replicatedJobs order
    run_policy: RunPolicy
    framework: dict  # kind-specific spec fields, defaulted (successPolicy, elasticPolicy, slotsPerWorker …)
    source: dict  # the document as read
    defaults: list[DefaultApplied] = field(default_factory=list)
    pruned: list[DefaultApplied] = field(default_factory=list)  # unknown fields the API server would drop
    ignored: list[DefaultApplied] = field(default_factory=list)  # replica specs the operator made no pods for
    nulls: list = field(default_factory=list)  # crdnulls.NullField: `key:` with no value, dropped by the API server
    source_api_version: str | None = None  # the older apiVersion as written, when read as v1 (upgrade.py)

    @property
    def written_api_version(self) -> str:
        """The apiVersion the user wrote (an older one read as v1 keeps its name in messages)."""
        return self.source_api_version or self.api_version

    @property
    def kind(self) -> str:
        return self.mapping.kind

    @property
    def by_mpi_operator(self) -> bool:
        """Run by kubeflow/mpi-operator (MPIJob v2beta1), not the training operator (mappings: `operator`)."""
        return self.mapping.operator == "mpi-operator"

    def has(self, rtype: str) -> bool:
        return rtype in self.replicas

    def total_replicas(self) -> int:
        return sum(r.replicas for r in self.replicas.values())

    def port(self, rtype: str) -> int | None:
        """The rtype's default-named port number (the operator read it per replica type, from the container
        of the default name only: without one, TF's and Paddle's helpers fell back to the default number,
        whatever container 0 declared; the other kinds' helpers failed, and parse refuses those jobs)."""
        spec = self.replicas.get(rtype)
        mp = self.mapping.default_port
        if spec is None or mp is None:
            return mp.number if mp else None
        name = self.mapping.default_container
        container = next((c for c in spec.containers if c.get("name") == name), None) if name else \
            default_container(spec.template, None)
        for p in (container or {}).get("ports") or []:
            if p.get("name") == mp.name:
                return int(p["containerPort"])
        return mp.number

    def display_name(self) -> str:
        return self.name or (self.generate_name + "…" if self.generate_name else "<unnamed>")


def default_container(template: dict, name: str | None) -> dict | None:
    """The container the operator treats as 'the' container: the one named `name`, else index 0."""
    containers = (template.get("spec") or {}).get("containers") or []
    if name:
        for c in containers:
            if c.get("name") == name:
                return c
    return containers[0] if containers else None


def env_target_indexes(template: dict, mode: str, default_name: str | None) -> list[int]:
    """Indexes of the containers that received operator env: all, the default-named one, or the first."""
    containers = (template.get("spec") or {}).get("containers") or []
    if mode == "all":
        return list(range(len(containers)))
    if mode == "first":
        return [0] if containers else []
    for i, c in enumerate(containers):
        if c.get("name") == default_name:
            return [i]
    return []
