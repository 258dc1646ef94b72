"""The v1 job, and the conversion options, that a converted JobSet was written from, as far as its size-bound
values depend on them: rebuilt from the JobSet itself so that the profile that wrote those values can write
them again, at the old size (to tell whether they are still kf2jobset's) and at the new one.

What is rebuilt: the kind and the job's name (the `kf2jobset.dev/source` record), the namespace, each replica
type with its replicas and a pod template holding only what the profiles read for the size-bound values (the
containers' names, images, ports and resources, the template's annotations), the kind's own spec fields as
the values show them (Profile.fields_from_pods), the gang's schedulingPolicy where a user wrote it, and the
options that change the values (the JobSet's name, subdomain, cluster domain, gang scheduler, JobSet release).
Nothing here is trusted: the caller compares what the profile writes at the old size with what the JobSet
holds, and refuses where they differ. Pure.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, replace

from ..errors import Location, Problem, UnsupportedError
from ..frameworks import profile as get_profile
from ..frameworks.base import LABEL_GLOBAL_REPLICAS
from ..mappings import convertible_mapping
from ..options import ConvertOptions
from ..core.plan import SOLO_SUFFIX
from ..checks.staleness import SIZE_LITERALS_ANNOTATION, SOURCE_ANNOTATION

_DOMAIN = re.compile(r"\.svc\.([a-z0-9]([-a-z0-9.]*[a-z0-9])?)")
_CONTAINER_KEYS = ("name", "image", "ports", "resources")


@dataclass
class Rebuilt:
    """What a converted object was written from."""

    job: dict  # the v1 job, at the sizes the object runs
    options: ConvertOptions
    alternatives: list  # other options the values may have been written under (a cluster domain user text names)
    types: dict  # v1 replica type -> the replicatedJobs that hold its pods, in order
    label: str  # `JobSet NAME` for messages

    def at(self, sizes: dict[str, int], elastic_max: int | None = None) -> dict:
        """The v1 job with these replica counts (v1 type -> replicas) and, for an elastic job, this bound."""
        job = copy.deepcopy(self.job)
        specs = job["spec"][_specs_field(job)]
        for rtype, count in sizes.items():
            specs[rtype]["replicas"] = count
        if elastic_max is not None and isinstance(job["spec"].get("elasticPolicy"), dict):
            job["spec"]["elasticPolicy"]["maxReplicas"] = elastic_max
        return job

    @property
    def sizes(self) -> dict[str, int]:
        specs = self.job["spec"][_specs_field(self.job)]
        return {t: s["replicas"] for t, s in specs.items()}


def _specs_field(job: dict) -> str:
    return convertible_mapping(job["apiVersion"], job["kind"]).replica_specs_field


def refusal(label: str, message: str, path: tuple = (), hint: str | None = None) -> UnsupportedError:
    return UnsupportedError(Problem(f"{label}: {message}", Location(path=path), rule="resize", hint=hint))


def rebuild(jobset: dict, stream: list[dict]) -> Rebuilt:
    """The v1 job and options `jobset` (a JobSet kf2jobset wrote) was converted from; `stream`: the other
    documents beside it (its hostfile ConfigMap, its PodGroup)."""
    meta = jobset.get("metadata") or {}
    ann = meta.get("annotations") or {}
    label = f"JobSet {meta.get('name') or meta.get('generateName') or '(unnamed)'}"
    source = str(ann.get(SOURCE_ANNOTATION) or "")
    api_kind, _, v1_name = source.partition(" ")
    api, _, kind = api_kind.rpartition("/")
    mapping = convertible_mapping(api, kind)
    if mapping is None:
        raise refusal(label, f"its {SOURCE_ANNOTATION} record ({source or 'none'}) names no Kubeflow job kind that "
                      "kf2jobset converts: it was not written by kf2jobset, or the record was edited",
                      ("metadata", "annotations", SOURCE_ANNOTATION))
    prof = get_profile(mapping.profile)
    from ..schedulers.conversion import size_literals as scheduler_counts

    counts = scheduler_counts(jobset) if isinstance((jobset.get("spec") or {}).get("replicatedJobs"), list) else []
    if counts:  # written in the v1 job's pod templates by the user: the conversion never rewrote them
        raise refusal(label, f"its pods carry counts a gang scheduler reads ({', '.join(counts)}), written in the v1 "
                      "job's templates, which resize does not rewrite: edit them with the replicas, or convert the v1 job "
                      "again at the new size")
    rjobs = [r for r in (jobset.get("spec") or {}).get("replicatedJobs") or [] if isinstance(r, dict)]
    types: dict[str, list[str]] = {}
    for r in rjobs:
        rtype = _type_of(mapping, str(r.get("name")))
        if rtype is None:
            raise refusal(label, f"replicatedJob {r.get('name')} is none of the {kind}'s replica types "
                          f"({', '.join(mapping.known_types)}): a replicatedJob added or renamed since the conversion "
                          "cannot be resized", ("spec", "replicatedJobs"))
        types.setdefault(rtype, []).append(r["name"])
    pods = {}
    specs = {}
    for rtype, names in types.items():
        first = next(r for r in rjobs if r["name"] == names[0])
        template = ((first.get("template") or {}).get("spec") or {}).get("template") or {}
        pods[rtype] = template
        specs[rtype] = {"replicas": sum(_replicas(r) for r in rjobs if r["name"] in names),
                        "template": _bare_template(template, prof.template_annotations)}
    spec = {mapping.replica_specs_field: specs}
    fields, option_values = prof.fields_from_pods(pods, stream)
    spec.update(fields)
    options = [replace(o, **option_values) for o in _options(jobset, pods, stream, ann, spec, label)]
    job = {"apiVersion": mapping.api_versions[0], "kind": kind,
           "metadata": {"name": v1_name or meta.get("name")}, "spec": spec}
    if meta.get("namespace"):
        job["metadata"]["namespace"] = meta["namespace"]
    return Rebuilt(job, options[0], options[1:], types, label)


def _type_of(mapping, rjob: str) -> str | None:
    for rtype in mapping.known_types:
        base = rtype.lower().replace("/", "-")
        if rjob in (base, base + SOLO_SUFFIX):
            return rtype
    # a type of the kind's own naming that the operator ran too (TFJob's): its pods and values name it lower case
    return rjob.capitalize() if mapping.allow_unknown_replica_types and rjob.isalnum() else None


def _replicas(rjob: dict) -> int:
    value = rjob.get("replicas", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _bare_template(template: dict, annotations_read: tuple) -> dict:
    """The pod template with what the size-bound values read: containers (name, image, ports, resources), the
    init containers kf2jobset did not add (their resources count in a gang's minResources), the annotations the
    profile reads."""
    spec = template.get("spec") or {}
    out_spec = {"containers": [{k: copy.deepcopy(c[k]) for k in _CONTAINER_KEYS if k in c}
                               for c in spec.get("containers") or [] if isinstance(c, dict)]}
    for c in out_spec["containers"]:
        c.setdefault("image", "image")
    inits = [{k: copy.deepcopy(c[k]) for k in _CONTAINER_KEYS if k in c}
             for c in spec.get("initContainers") or [] if isinstance(c, dict) and "resources" in c
             and not str(c.get("name", "")).startswith("kf2jobset-")]
    if inits:
        out_spec["initContainers"] = inits
    out = {"spec": out_spec}
    annotations = {k: v for k, v in ((template.get("metadata") or {}).get("annotations") or {}).items()
                   if k in annotations_read}
    if annotations:
        out["metadata"] = {"annotations": copy.deepcopy(annotations)}
    return out


def _options(jobset: dict, pods: dict, stream: list[dict], ann: dict, spec: dict, label: str) -> list[ConvertOptions]:
    """The options the values may have been written under, the likeliest first: a cluster domain is read from
    the values, which may also hold user text kf2jobset rewrote in the user's own domain."""
    from ..choices import SCHEDULER_FLAVOURS

    meta = jobset.get("metadata") or {}
    network = (jobset.get("spec") or {}).get("network") or {}
    # every string of the spec and of the ConfigMaps beside it, as one text to search (JSON keeps them apart)
    spec_text = json.dumps(jobset.get("spec"))
    maps_text = json.dumps([d.get("data") for d in stream if isinstance(d, dict) and d.get("kind") == "ConfigMap"])
    domains = {m.group(1) for m in _DOMAIN.finditer(spec_text + maps_text)}
    follows = LABEL_GLOBAL_REPLICAS in spec_text
    starts = any(r.get("dependsOn") for r in (jobset.get("spec") or {}).get("replicatedJobs") or [] if isinstance(r, dict))
    kw: dict = {"name": meta.get("name"), "subdomain": network.get("subdomain"),
                "accept_mpi_ssh": True}
    if not follows and not starts:
        kw["jobset_version"] = (0, 6)  # the values were written as numbers: a release without the size label
    scheduler, gang_name = _scheduler(pods, stream, label, spec, ann, SCHEDULER_FLAVOURS)
    if scheduler:
        kw["scheduler"] = scheduler
    if gang_name:
        kw["gang_scheduler_name"] = gang_name
    return [ConvertOptions(**kw, cluster_domain=d) for d in [*sorted(domains), None]]


def _scheduler(pods: dict, stream: list[dict], label: str, spec: dict, ann: dict, flavours) -> tuple[str | None, str | None]:
    """The gang scheduler the pods name (its PodGroup reference, its schedulerName), and the schedulingPolicy of
    the v1 job where its PodGroup holds values the record does not list as computed (a user wrote them)."""
    from ..schedulers import scheduler as scheduler_of

    recorded = str(ann.get(SIZE_LITERALS_ANNOTATION) or "")
    for flavour in flavours:
        sched = scheduler_of(flavour)
        kind = sched.podgroup
        if kind is None:
            continue
        for template in pods.values():
            ref = ((template.get("metadata") or {}).get(kind.where) or {}).get(kind.key)
            if not ref:
                continue
            group = next((d for d in stream if isinstance(d, dict) and d.get("kind") == "PodGroup"
                          and str(d.get("apiVersion", "")).startswith(kind.group)
                          and (d.get("metadata") or {}).get("name") == ref), None)
            if group is None and f"PodGroup {ref} " in recorded:
                raise refusal(label, f"its PodGroup {ref} holds counts written for the old size (its "
                              f"{SIZE_LITERALS_ANNOTATION} record) and is not among the documents given: give its file too")
            if group is None:  # a reference the user wrote in the v1 job: no gang of kf2jobset's beside it
                continue
            policy = {}
            gspec = group.get("spec") or {}
            if "minMember" in gspec and f"PodGroup {ref} minMember" not in recorded:
                policy["minAvailable"] = gspec["minMember"]
            if "minResources" in gspec and f"PodGroup {ref} minResources" not in recorded:
                policy["minResources"] = copy.deepcopy(gspec["minResources"])
            if gspec.get("queue"):
                policy["queue"] = gspec["queue"]
            if gspec.get("priorityClassName"):
                policy["priorityClass"] = gspec["priorityClassName"]
            if policy:
                spec.setdefault("runPolicy", {})["schedulingPolicy"] = policy
            runs = (template.get("spec") or {}).get("schedulerName")
            return flavour, (runs if runs and runs != sched.runs_as(ConvertOptions(scheduler=flavour)) else None)
    return None, None
