"""What the JobSet controller, the Job controller and kubelet would run for a JobSet manifest.

Independent of how the JobSet was produced: it reads only the manifest (and the name/namespace it
is created under), stamps out child Jobs and pods with the labels and annotations the controllers
write (jobset.md §4.2, §4.4), and leaves env resolution to runtime.pods.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass

from .pods import Pod, Resolver, dns_names

JOBSET_KEY_PREFIX = "jobset.sigs.k8s.io/"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


STAND_IN_SUFFIX = "x7k2q"  # what the API server might append to a generateName


def stand_in_name(meta: dict) -> str:
    """The name a JobSet is modelled under: its own, else a generated one (generateName, or none at all:
    a Katib trial, named at creation)."""
    return meta.get("name") or (meta.get("generateName") or "jobset-") + STAND_IN_SUFFIX


@dataclass
class JobSetWorld:
    jobset: dict
    name: str
    namespace: str
    pods: list[Pod]
    resolver: Resolver


def jobset_world(jobset: dict, *, name: str | None = None, namespace: str | None = None,
                 cluster_domain: str | None = None, files: dict | None = None,
                 roles: dict | None = None, containers: dict | None = None) -> JobSetWorld:
    """`roles`: replicatedJob name -> (role, first index), for replicatedJobs that hold part of a
    replica type (kf2jobset's plan.pod_roles); pods are then keyed (role, first index + job-index)
    so they pair with the operator's pods. Or -> [(role, first index, count), ...] for one replicatedJob
    whose pods (in job, then completion order) hold several types (Trainer's `node` Job). Without it a
    pod's role is its replicatedJob name. `containers`: container name -> the v1 container it stands for
    (Trainer's `node`), so containers pair by what they run; or replicatedJob -> such a map."""
    roles = roles or {}
    meta = jobset.get("metadata") or {}
    name = name or stand_in_name(meta)
    namespace = namespace or meta.get("namespace") or "default"
    spec = jobset.get("spec") or {}
    network = spec.get("network") or {}
    dns = network.get("enableDNSHostnames", True)
    subdomain = network.get("subdomain") or name
    rjobs = spec.get("replicatedJobs") or []
    global_replicas = sum(r.get("replicas", 1) for r in rjobs)
    groups: dict[str, int] = {}
    for r in rjobs:
        groups[r.get("groupName", "default")] = groups.get(r.get("groupName", "default"), 0) + r.get("replicas", 1)
    pods: list[Pod] = []
    addresses: dict[str, tuple[str, int]] = {}
    global_index = 0
    group_index: dict[str, int] = {}
    for k, rj in enumerate(rjobs):
        rname = rj["name"]
        replicas = rj.get("replicas", 1)
        group = rj.get("groupName", "default")
        job_spec = (rj.get("template") or {}).get("spec") or {}
        completions = job_spec.get("completions", 1) or 1
        for j in range(replicas):
            job_name = f"{name}-{rname}-{j}"
            controller = {
                JOBSET_KEY_PREFIX + "jobset-name": name,
                JOBSET_KEY_PREFIX + "jobset-uid": "00000000-0000-0000-0000-000000000000",
                JOBSET_KEY_PREFIX + "replicatedjob-name": rname,
                JOBSET_KEY_PREFIX + "replicatedjob-replicas": str(replicas),
                JOBSET_KEY_PREFIX + "global-replicas": str(global_replicas),
                JOBSET_KEY_PREFIX + "job-index": str(j),
                JOBSET_KEY_PREFIX + "job-global-index": str(global_index),
                JOBSET_KEY_PREFIX + "job-key": hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest(),
                JOBSET_KEY_PREFIX + "restart-attempt": "0",
                JOBSET_KEY_PREFIX + "group-name": group,
                JOBSET_KEY_PREFIX + "group-replicas": str(groups[group]),
                JOBSET_KEY_PREFIX + "job-group-index": str(group_index.get(group, 0)),
            }
            global_index += 1
            group_index[group] = group_index.get(group, 0) + 1
            for c in range(completions):
                template = copy.deepcopy(job_spec.get("template") or {})
                tmeta = template.get("metadata") or {}
                pod_spec = template.setdefault("spec", {})
                labels = {**(tmeta.get("labels") or {}), **controller, COMPLETION_INDEX: str(c),
                          "batch.kubernetes.io/job-name": job_name, "job-name": job_name}
                # JobSet's pod webhook records the pod's priority (0 without a PriorityClass; else the class's value).
                priority_class = pod_spec.get("priorityClassName")
                labels[JOBSET_KEY_PREFIX + "priority"] = "0" if not priority_class else f"<priority of {priority_class}>"
                annotations = {**(tmeta.get("annotations") or {}), **controller, COMPLETION_INDEX: str(c)}
                hostname = f"{job_name}-{c}"
                if dns:
                    pod_spec["subdomain"] = subdomain
                pod_spec["hostname"] = hostname
                # The Job controller appends JOB_COMPLETION_INDEX to every container of an Indexed Job.
                # a replicatedJob may have a map of its own ({rjob: {container: v1 name}}: an MPI launcher and its workers)
                cmap = containers.get(rname) if containers and isinstance(containers.get(rname), dict) else containers
                for key in ("initContainers", "containers"):
                    for cont in pod_spec.get(key) or []:
                        if cmap and isinstance(cmap.get(cont.get("name")), str):
                            cont["name"] = cmap[cont["name"]]
                        cont["env"] = list(cont.get("env") or []) + [{"name": "JOB_COMPLETION_INDEX", "value": str(c)}]
                role, index = role_of(roles.get(rname, (rname, 0)), j * completions + c)
                pod = Pod(role=role, index=index, name=f"{hostname}-abcde", namespace=namespace,
                          ip=f"10.2.{k}.{j * completions + c}", labels=labels, annotations=annotations,
                          hostname=hostname, subdomain=subdomain if dns else None, spec=pod_spec)
                pods.append(pod)
                addresses[pod.ip] = pod.key
                if dns:
                    for n in dns_names(f"{hostname}.{subdomain}", namespace, cluster_domain):
                        addresses[n] = pod.key
    return JobSetWorld(jobset, name, namespace, pods, Resolver(addresses))


def jobset_pod_labels(jobset: dict, *, name: str | None = None, namespace: str | None = None,
                      roles: dict | None = None) -> list[tuple[tuple[str, int], dict]]:
    """(pod key, labels) of the pods :func:`jobset_world` makes, without copying their templates (cheap
    for 10 000 replicas). tests/test_selectors.py holds it equal to jobset_world's labels."""
    roles = roles or {}
    meta = jobset.get("metadata") or {}
    name = name or stand_in_name(meta)
    namespace = namespace or meta.get("namespace") or "default"
    rjobs = (jobset.get("spec") or {}).get("replicatedJobs") or []
    global_replicas = sum(r.get("replicas", 1) for r in rjobs)
    groups: dict[str, int] = {}
    for r in rjobs:
        groups[r.get("groupName", "default")] = groups.get(r.get("groupName", "default"), 0) + r.get("replicas", 1)
    out = []
    global_index = 0
    group_index: dict[str, int] = {}
    for rj in rjobs:
        rname, replicas, group = rj["name"], rj.get("replicas", 1), rj.get("groupName", "default")
        job_spec = (rj.get("template") or {}).get("spec") or {}
        completions = job_spec.get("completions", 1) or 1
        template = job_spec.get("template") or {}
        own = (template.get("metadata") or {}).get("labels") or {}
        priority = (template.get("spec") or {}).get("priorityClassName")
        for j in range(replicas):
            job_name = f"{name}-{rname}-{j}"
            controller = {
                JOBSET_KEY_PREFIX + "jobset-name": name, JOBSET_KEY_PREFIX + "jobset-uid": "00000000-0000-0000-0000-000000000000",
                JOBSET_KEY_PREFIX + "replicatedjob-name": rname, JOBSET_KEY_PREFIX + "replicatedjob-replicas": str(replicas),
                JOBSET_KEY_PREFIX + "global-replicas": str(global_replicas), JOBSET_KEY_PREFIX + "job-index": str(j),
                JOBSET_KEY_PREFIX + "job-global-index": str(global_index),
                JOBSET_KEY_PREFIX + "job-key": hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest(),
                JOBSET_KEY_PREFIX + "restart-attempt": "0", JOBSET_KEY_PREFIX + "group-name": group,
                JOBSET_KEY_PREFIX + "group-replicas": str(groups[group]),
                JOBSET_KEY_PREFIX + "job-group-index": str(group_index.get(group, 0)),
            }
            global_index += 1
            group_index[group] = group_index.get(group, 0) + 1
            for c in range(completions):
                labels = {**own, **controller, COMPLETION_INDEX: str(c), "batch.kubernetes.io/job-name": job_name,
                          "job-name": job_name,
                          JOBSET_KEY_PREFIX + "priority": "0" if not priority else f"<priority of {priority}>"}
                role, index = role_of(roles.get(rname, (rname, 0)), j * completions + c)
                out.append(((role.lower(), index), labels))
    return out


def role_of(role: tuple | list, n: int) -> tuple[str, int]:
    """(role, replica index) of the n-th pod of a replicatedJob (see jobset_world's `roles`)."""
    if isinstance(role, tuple):
        return role[0], role[1] + n
    for name, first, count in role:
        if n < count:
            return name, first + n
        n -= count
    return role[-1][0], role[-1][1] + role[-1][2] + n  # more pods than the segments say: keep counting
