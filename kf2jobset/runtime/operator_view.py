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
    by_mpi_operator = job.by_mpi_operator
    for k, (rtype, spec) in enumerate(job.replicas.items()):
        for i in range(spec.replicas):
            template = copy.deepcopy(spec.template)
            pod_spec = template.setdefault("spec", {})
            side = OperatorSide(job, name, namespace, rtype, i, cluster_domain)
            pod_name = job.mapping.pod_name(name, rtype, i)
            labels = dict((template.get("metadata") or {}).get("labels") or {})
            labels.update(mpi_operator_labels(job, name, rtype, i) if by_mpi_operator else operator_labels(job, name, rtype, i))
            pod = Pod(role=rtype, index=i, name=pod_name, namespace=namespace, ip=f"10.1.{k}.{i}",
                      labels=labels,
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
            reached = job.mapping.pod_addresses
            if reached in ("podName", "jobService"):
                addresses[pod.name] = key  # kubectl exec by pod name, or the pod's hostname
                if reached == "jobService":
                    for n in dns_names(f"{pod.name}.{name}", namespace, cluster_domain):
                        addresses[n] = key
            else:
                for n in dns_names(side.host(rtype, i), namespace, cluster_domain):  # per-pod Services
                    addresses[n] = key
    return OperatorWorld(job, name, namespace, pods, Resolver(addresses))


def operator_pod_labels(job: TrainingJob, *, name: str | None = None) -> list[tuple[tuple[str, int], dict]]:
    """(pod key, labels) of the pods :func:`operator_world` makes, without their env (cheap for 10 000
    replicas: the selectors of kf2jobset/core/selectorfix.py need labels only)."""
    name = name or job.name or "job"
    out = []
    for rtype, spec in job.replicas.items():
        own = dict((spec.template.get("metadata") or {}).get("labels") or {})
        for i in range(spec.replicas):
            labels = dict(own)
            labels.update(mpi_operator_labels(job, name, rtype, i) if job.by_mpi_operator else operator_labels(job, name, rtype, i))
            out.append(((rtype.lower(), i), labels))
    return out


KF = "training.kubeflow.org/"


def operator_labels(job: TrainingJob, name: str, rtype: str, index: int) -> dict:
    """The labels the v1 Training Operator puts on each pod (over the template's; seen on the real
    v1.9.4 in tests/e2e/test_differential.py): job-name, operator-name, replica-type (lower case),
    replica-index (not on a pod the mapping names itself: the MPIJob launcher) and job-role=master on the pod its IsMasterRole picks."""
    labels = {KF + "job-name": name, KF + "operator-name": job.mapping.operator_name, KF + "replica-type": rtype.lower()}
    if rtype not in job.mapping.named_pods:  # made outside the replica reconciler
        labels[KF + "replica-index"] = str(index)
    if is_master_role(job, rtype, index):
        labels[KF + "job-role"] = "master"
    return labels


def mpi_operator_labels(job: TrainingJob, name: str, rtype: str, index: int) -> dict:
    """The labels mpi-operator v0.8 puts on its pods (over the template's; seen on the real v0.8.2 in
    tests/e2e/test_differential.py): job-name, operator-name and job-role (launcher/worker), no
    replica-type; replica-index on workers (i, or i+1 under runLauncherAsWorker, when the launcher
    has 0). The launcher is the pod of the batch Job <job>-launcher, so it also carries the Job
    controller's job-name labels (and a random controller-uid, not modelled)."""
    labels = {KF + "job-name": name, KF + "operator-name": job.mapping.operator_name, KF + "job-role": rtype.lower()}
    shift = 1 if job.framework.get("runLauncherAsWorker") else 0
    if rtype == "Launcher":
        if shift:
            labels[KF + "replica-index"] = "0"
        labels["batch.kubernetes.io/job-name"] = labels["job-name"] = f"{name}-launcher"
    else:
        labels[KF + "replica-index"] = str(index + shift)
    return labels


def is_master_role(job: TrainingJob, rtype: str, index: int) -> bool:
    """The operator's IsMasterRole, from the mapping's masterRole list: types (Chief, Master, Launcher)
    when the job has one of them, else the listed <Type><index> (TF/PyTorch/JAX worker 0)."""
    roles = job.mapping.master_role
    types = [r for r in roles if not r[-1].isdigit()]
    if any(t in job.replicas for t in types):
        return rtype in types
    return f"{rtype}{index}" in roles
