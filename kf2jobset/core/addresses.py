"""Pod addresses the user wrote: v1's names for the job's own pods, found and pointed at the same pods.

Under v1 every pod of a Training Operator job had a headless Service of its own named like the pod,
`<job>-<lower(type)>-<i>` (training-operator.md §1.5), so a manifest could name a peer by it anywhere:
an init container's env or wait loop, `--ps_hosts=` in args, a hostfile in a ConfigMap. mpi-operator
v2beta1 named pods `<job>-worker-<i>` / `<job>-launcher` under one headless Service `<job>`
(`<pod>.<job>[.<ns>[.svc[.<domain>]]]`); an MPIJob v1 launcher reached workers by bare pod name
(kubectl exec). None of those names exists under the JobSet.

A hostname is matched whole, with the job's exact name, a replica type the job has and an index it
ran (the names `OperatorSide.host` gives, so v1's naming lives in one place); a namespace suffix must
be the manifest's namespace (any, when the manifest has none) and is kept as written. Then:

* env values, `command` and `args` of every container and init container (where the kubelet expands
  `$(VAR)`): rewritten to the JobSet hostname of the same logical pod, built like the injected
  addresses (`JobSetSide.host`: `$(KF2JOBSET_JOBSET_NAME)-<rjob>-<j>-0.<subdomain>`), with the helper
  variable defined first in that container (JS065);
* ConfigMaps of the same file (no `$(VAR)` there, and the document passes through untouched): v1's
  per-pod Services are offered as companions selecting the same pods by the JobSet's labels (JS066),
  and names a Service cannot give back (mpi-operator's `<pod>.<job>` hostnames) are listed (JS067).

`--v1-pod-services` offers those Services for every pod, for addresses kf2jobset cannot see (code,
images). Pure: no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import claims as claim
from ..claims import pod_path
from ..frameworks.base import HELPER_VARS, JOBSET_NAME_VAR, LABEL_JOBSET_NAME, LABEL_JOB_INDEX, LABEL_RJOB_NAME, OperatorSide, field_env
from ..model import default_container
from ..notes import Note

DEFAULT_DOMAIN = "cluster.local"
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
# Characters that continue a hostname: a match must not be part of a longer name or word.
# A single `/` before it is a path segment (gs://bucket/<job>-worker-0/...), `//` a URL's host.
_BEFORE = r"(?<![A-Za-z0-9_.-])(?<![^/]/)(?<!^/)"
_AFTER = r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9_])"
FIELDS = ("initContainers", "containers")


@dataclass(frozen=True)
class Found:
    """One v1 address in a text: the whole hostname, the pod it named, and the suffix after its base."""

    text: str
    start: int
    end: int
    rtype: str
    index: int
    suffix: str  # ".<ns>", ".<ns>.svc", ".<ns>.svc.<domain>" or ""
    service_form: bool  # True: a per-pod Service name (a companion Service can answer it)


def _types(job) -> dict:
    return {rtype.lower(): rtype for rtype in job.replicas}


def pattern(job, cluster_domain: str | None):
    """The regex of this job's v1 pod addresses (None: the job has no name, so no literal address)."""
    if not job.name:
        return None
    name = re.escape(job.name)
    # cluster.local answers too (runtime/pods.dns_names: the names the v1 world resolved)
    domain = "|".join(re.escape(d) for d in dict.fromkeys((DEFAULT_DOMAIN, cluster_domain or DEFAULT_DOMAIN)))
    ns = re.escape(job.namespace) if job.namespace else _DNS_LABEL
    suffix = rf"(?P<suffix>\.(?P<ns>{ns})(?:\.svc(?:\.(?:{domain}))?)?)?"
    index = r"(?P<index>0|[1-9][0-9]{0,5})"
    named = _named_pods(job)
    indexed = [t for t in sorted(_types(job), key=len, reverse=True) if _types(job)[t] not in named.values()]
    pods = ([rf"{name}-(?P<type>{'|'.join(re.escape(t) for t in indexed)})-{index}"] if indexed else []) + \
        (["(?P<named>" + "|".join(re.escape(n) for n in sorted(named, key=len, reverse=True)) + ")"] if named else [])
    pod = "(?:" + "|".join(pods) + ")"
    reached = job.mapping.pod_addresses
    if reached == "podName":
        return re.compile(_BEFORE + rf"(?P<base>{pod})" + _AFTER)  # kubectl exec by bare pod name
    if reached == "jobService":
        return re.compile(_BEFORE + rf"(?P<base>{pod}\.{name}){suffix}" + _AFTER)
    return re.compile(_BEFORE + rf"(?P<base>{pod}){suffix}" + _AFTER)


def _named_pods(job) -> dict:
    """v1 pod name -> type, for the types whose one pod the operator named itself (the MPI launcher)."""
    return {job.mapping.pod_name(job.name, t, 0): t for t in job.replicas if t in job.mapping.named_pods}


def find(text: str, job, cluster_domain: str | None = None, compiled=None) -> list[Found]:
    """Every address of one of this job's v1 pods in `text` (whole hostnames only)."""
    rx = compiled if compiled is not None else pattern(job, cluster_domain)
    if rx is None or not isinstance(text, str) or job.name not in text:
        return []
    types, named = _types(job), _named_pods(job)
    service_form = job.mapping.pod_addresses != "jobService"  # a name a per-pod Service can answer
    out = []
    for m in rx.finditer(text):
        if m.groupdict().get("named"):
            rtype, index = named[m.group("named")], 0
        else:
            rtype, index = types.get(m.group("type").lower(), m.group("type")), int(m.group("index"))
        spec = job.replicas.get(rtype)
        if spec is None or index >= spec.replicas:
            continue  # a pod this job never had
        side = OperatorSide(job, job.name, job.namespace or "default", rtype, index, cluster_domain)
        expected = side.host(rtype, index) if service_form else f"{side.host(rtype, index)}.{job.name}"
        if m.group("base") != expected:
            continue
        suffix = m.groupdict().get("suffix") or ""
        out.append(Found(m.group(0), m.start(), m.end(), rtype, index, suffix, service_form))
    return out


def replace(text: str, found: list[Found], host) -> str:
    """`text` with each found address replaced by `host(rtype, index)` + its suffix as written."""
    out, last = [], 0
    for f in found:
        out += [text[last:f.start], host(f.rtype, f.index) + f.suffix]
        last = f.end
    return "".join(out + [text[last:]])


# ---------------------------------------------------------------- pod templates

def rewrite_pod(job, rtype: str, template: dict, ctx, rjob: str, first_index: int = 0) -> None:
    """Rewrite the v1 addresses in env values, command and args of the template's containers (JS065)."""
    rx = pattern(job, ctx.options.cluster_domain)
    if rx is None:
        return
    spec = template.get("spec") or {}
    src_field = job.mapping.replica_specs_field
    for field in FIELDS:
        for c, container in enumerate(spec.get(field) or []):
            env = container.get("env") or []
            static = _user_defines_helper(env)
            if static and not ctx.jobset_name:
                continue
            side = ctx.side(rtype, static=static, first_index=first_index)
            host = lambda t, i, side=side: side.host(t, i, "short")  # noqa: E731
            changes = []  # (source path, target path, old, new)
            for e in env:
                value = e.get("value") if isinstance(e, dict) else None
                found = find(value, job, ctx.options.cluster_domain, rx)
                if found:
                    e["value"] = replace(value, found, host)
                    changes.append((f"env[{e.get('name')}]", value, e["value"], found))
            for key in ("command", "args"):
                words = container.get(key)
                if not isinstance(words, list):
                    continue
                for w, word in enumerate(words):
                    found = find(word, job, ctx.options.cluster_domain, rx)
                    if found:
                        words[w] = replace(word, found, host)
                        changes.append((f"{key}[{w}]", word, words[w], found))
            if not changes:
                continue
            if not static:
                _helper_first(container)
            where = f"{'init container' if field == 'initContainers' else 'container'} {container.get('name')!r} of the {rtype} pods"
            for place, _old, new, found in changes:
                names = ", ".join(sorted({f.text for f in found}))
                target = f"{pod_path(rjob)}.spec.{field}[{c}].{place}"
                ctx.note(Note(
                    "JS065", "rewritten",
                    f"{where}, {place}: {names} was the v1 address of "
                    + ", ".join(sorted({f"{f.rtype} {f.index}" for f in found}))
                    + f" ({_v1_kind_of_name(job)}); now {new!r}, the JobSet hostname of the same pod"
                    + (" (built from the pod's own jobset-name label, like the injected addresses)" if not static else
                       f" (with the JobSet name written out: your {JOBSET_NAME_VAR} is yours)"),
                    source_path=f"{src_field}.{rtype}.template.spec.{field}[{c}].{place}",
                    target_path=f"template.spec.{field}[{c}].{place}", replica_type=rtype,
                    claims=(claim.equals(target + (".value" if place.startswith("env[") else ""), new),
                            *([claim.present(f"{pod_path(rjob)}.spec.{field}[{c}].env[{JOBSET_NAME_VAR}]")]
                              if not static else []))))


def _v1_kind_of_name(job) -> str:
    if job.mapping.pod_addresses == "podName":
        return "the pod name the launcher reached through kubectl exec"
    if job.mapping.pod_addresses == "jobService":
        return f"mpi-operator's hostname under its headless Service {job.name}"
    return "the operator's per-pod Service"


def _user_defines_helper(env: list) -> bool:
    """The container already has a KF2JOBSET_JOBSET_NAME that is not kf2jobset's fieldRef (yours)."""
    ours = field_env(JOBSET_NAME_VAR, HELPER_VARS[JOBSET_NAME_VAR])
    return any(isinstance(e, dict) and e.get("name") == JOBSET_NAME_VAR and e != ours for e in env)


def _helper_first(container: dict) -> None:
    """`$(VAR)` in an env value reads only entries defined before it: the helper goes first."""
    env = list(container.get("env") or [])
    ours = field_env(JOBSET_NAME_VAR, HELPER_VARS[JOBSET_NAME_VAR])
    env = [e for e in env if e != ours]
    container["env"] = [ours] + env


# ---------------------------------------------------------------- ConfigMaps and companion Services

def configmap_addresses(job, configmaps, cluster_domain: str | None) -> list[tuple[str, str, list[Found]]]:
    """(ConfigMap name, data key, addresses) for this job's v1 addresses in the file's ConfigMaps of its namespace."""
    rx = pattern(job, cluster_domain)
    if rx is None:
        return []
    out = []
    for cm in configmaps:
        meta = cm.get("metadata") or {}
        if (meta.get("namespace") or None) != (job.namespace or None) and meta.get("namespace") and job.namespace:
            continue
        data = cm.get("data") or {}
        if not isinstance(data, dict):
            continue
        for key, value in data.items():
            found = find(value, job, cluster_domain, rx)
            if found:
                out.append((str(meta.get("name")), str(key), found))
    return out


def pod_services(job, ctx, every_pod: bool) -> list[dict]:
    """v1's per-pod Services (headless, named like v1's, the default container's named ports) that select
    the JobSet's pods by its labels; for the pods named in the file's ConfigMaps, or every pod."""
    if not ctx.jobset_name or not job.name:
        return []
    opts = ctx.options
    in_configmaps = configmap_addresses(job, opts.sibling_configmaps, opts.cluster_domain)
    wanted: dict[tuple, list[str]] = {}
    unservable: list[tuple] = []
    for cm, key, found in in_configmaps:
        for f in found:
            if f.service_form:
                wanted.setdefault((f.rtype, f.index), []).append(f"ConfigMap {cm} data[{key}]")
            else:
                unservable.append((cm, key, f))
    if every_pod:
        for rtype, spec in job.replicas.items():
            for i in range(spec.replicas):
                if job.mapping.pod_addresses != "jobService":
                    wanted.setdefault((rtype, i), [])
    _unservable_note(job, ctx, unservable)
    services, named, claims = [], [], []
    for (rtype, i), places in sorted(wanted.items(), key=lambda kv: (list(job.replicas).index(kv[0][0]), kv[0][1])):
        side = OperatorSide(job, job.name, job.namespace or "default", rtype, i, opts.cluster_domain)
        name = side.host(rtype, i)
        rjob, j = ctx.side(rtype).locate(rtype, i)
        selector = {LABEL_JOBSET_NAME: ctx.jobset_name, LABEL_RJOB_NAME: rjob, LABEL_JOB_INDEX: str(j)}
        meta = {"name": name}
        if job.namespace:
            meta["namespace"] = job.namespace
        meta["labels"] = {LABEL_JOBSET_NAME: ctx.jobset_name}
        svc_spec = {"clusterIP": "None", "selector": selector}
        ports = _named_ports(job, rtype)
        if ports:
            svc_spec["ports"] = ports
        services.append({"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": svc_spec})
        named.append(f"{name} ({rtype} {i} = {rjob} job-index {j}"
                     + (", named in " + ", ".join(dict.fromkeys(places)) if places else "") + ")")
        claims += [claim.equals("spec.selector", selector, target=f"Service/{name}"),
                   claim.equals("spec.clusterIP", "None", target=f"Service/{name}")]
    if not services:
        return []
    why = "for every pod (--v1-pod-services)" if every_pod else "for the pods your ConfigMaps name"
    if job.mapping.pod_addresses == "podName":
        ctx.note(Note(
            "JS066", "rewritten",
            f"{len(services)} Service(s) {why}, named like the pods the v1 launcher reached by name through kubectl exec: "
            + "; ".join(named) + ". Each is headless and selects the JobSet's pod of the same rank by its "
            "jobset.sigs.k8s.io labels, so the bare pod names resolve for SSH (the launcher starts once the workers "
            "are Ready)", source_path=job.mapping.replica_specs_field,
            action="delete the Services with the JobSet (they have no owner; kubectl kf2jobset apply makes the JobSet "
                   "their owner)", claims=tuple(claims)))
        return services
    ctx.note(Note(
        "JS066", "prerequisite",
        f"{len(services)} of v1's per-pod Services offered as companions {why}: " + "; ".join(named)
        + ". Each is headless, named as under v1 and selects the JobSet's pod of the same rank by its "
        "jobset.sigs.k8s.io labels, so the v1 name resolves as it did (once the pod is Ready); the v1 "
        "operator's Services of those names must be gone first",
        source_path=job.mapping.replica_specs_field,
        action="delete the v1 job (its Services go with it) before applying; where you can edit the text, "
               "the JobSet hostname needs no Service", claims=tuple(claims)))
    return services


def _named_ports(job, rtype: str) -> list[dict]:
    """v1 gave the per-pod Service one port per named containerPort of the default container."""
    c = default_container(job.replicas[rtype].template, job.mapping.default_container) or {}
    out, seen = [], set()
    for p in c.get("ports") or []:
        if isinstance(p, dict) and p.get("name") and p.get("containerPort") is not None and p["name"] not in seen:
            seen.add(p["name"])
            out.append({"name": p["name"], "port": int(p["containerPort"])})
    return out


def _unservable_note(job, ctx, unservable: list[tuple]) -> None:
    for cm, key, f in unservable:
        jobset_host = ctx.side(f.rtype, static=True).host(f.rtype, f.index, "short") + f.suffix
        ctx.note(Note(
            "JS067", "breaking",
            f"ConfigMap {cm} data[{key}] names {f.text}, mpi-operator's hostname of {f.rtype} {f.index} under its "
            f"headless Service {job.name}; no Service can give that name back (a pod's hostname record needs the "
            "pod's own hostname and subdomain), so it resolves to nothing under the JobSet",
            replica_type=f.rtype,
            action=f"write {jobset_host} there (the JobSet hostname of the same pod)",
            unchecked="about a ConfigMap kf2jobset passes through untouched"))
