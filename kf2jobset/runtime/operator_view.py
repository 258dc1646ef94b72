"""What the v1 operator (or mpi-operator) would run for a TrainingJob: its pods and their addresses."""
from __future__ import annotations

import copy
from dataclasses import dataclass

from ..frameworks import profile as get_profile
from ..frameworks.base import OperatorSide
from ..model import TrainingJob, env_target_indexes
from .pods import Pod, Resolver, dns_names


@dataclass
class OperatorWorld:
    job: TrainingJob
    name: str
    namespace: str
    pods: list[Pod]
    resolver: Resolver


def operator_world(job: TrainingJob, *, name: str | None = None, namespace: str | None = None,
                   cluster_domain: str | None = None) -> OperatorWorld:
    name = name or job.name or "job"
    namespace = namespace or job.namespace or "default"
    prof = get_profile(job.mapping.profile)
    pods: list[Pod] = []
    addresses: dict[str, tuple[str, int]] = {}
    mpi_v2 = job.kind == "MPIJob" and not job.is_mpi_v1
    for k, (rtype, spec) in enumerate(job.replicas.items()):
        for i in range(spec.replicas):
            template = copy.deepcopy(spec.template)
            pod_spec = template.setdefault("spec", {})
            side = OperatorSide(job, name, namespace, rtype, i, cluster_domain)
            pod_name = name + "-launcher" if job.kind == "MPIJob" and rtype == "Launcher" else side.host(rtype, i)
            pod = Pod(role=rtype, index=i, name=pod_name, namespace=namespace, ip=f"10.1.{k}.{i}",
                      labels=dict((template.get("metadata") or {}).get("labels") or {}),
                      annotations=dict((template.get("metadata") or {}).get("annotations") or {}),
                      spec=pod_spec)
            pod_spec["restartPolicy"] = "Never" if spec.restart_policy == "ExitCode" else spec.restart_policy
            for idx in env_target_indexes(template, job.mapping.env_containers, job.mapping.default_container):
                c = pod_spec["containers"][idx]
                c["env"] = list(c.get("env") or []) + prof.env(job, rtype, side)
            prof.operator_pod(job, rtype, i, {"spec": pod_spec}, side)
            pod.hostname, pod.subdomain = pod_spec.get("hostname"), pod_spec.get("subdomain")
            pods.append(pod)
            key = (rtype.lower(), i)
            addresses[pod.ip] = key
            if job.kind == "MPIJob":
                addresses[pod.name] = key  # v1: kubectl exec by pod name; v2: the pod hostname
                if mpi_v2:
                    for n in dns_names(f"{pod.name}.{name}", namespace, cluster_domain):
                        addresses[n] = key
            else:
                for n in dns_names(side.host(rtype, i), namespace, cluster_domain):  # per-pod Services
                    addresses[n] = key
    return OperatorWorld(job, name, namespace, pods, Resolver(addresses))
