"""The differential's comparison: what each pod of a world really got (as the node agent saw it), the pods of
the two worlds paired by role and rank, their differences in the report's vocabulary, the label selectors of
both worlds, the runtime models held to the real pods, and the report's claims checked against the real
differences."""
from __future__ import annotations

import copy
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kf2jobset.frameworks.base import HELPER_PREFIX
from kf2jobset.report.explain import covers
from kf2jobset.runtime.compare import JOB_INJECTED
from kf2jobset.runtime.pods import Resolver
from kf2jobset.runtime.selectors import object_selectors, pod_selectors
from kf2jobset.runtime.structure import Difference

from .nodeagent import NodeAgent
from .differential_cases import Case, JS, KF


# Aspects a pod shows; the report's evidence of other aspects (lifecycle, dns, start) is not observable here.
POD_ASPECTS = {"env", "init", "container", "command", "mount", "restartPolicy", "hostname", "label", "file", "hostfile",
               "scheduling", "selector"}


@dataclass
class SeenPod:
    key: tuple
    name: str
    hostname: str
    ip: str
    labels: dict
    restart_policy: str
    scheduling: dict  # schedulerName, priorityClassName
    containers: dict  # name -> {"env": [(n, v)], "command": [...], "mounts": {path: attrs}, "image": str}
    init: dict
    files: dict = field(default_factory=dict)  # (mountPath, relpath) -> (content, mode)
    spec: dict = field(default_factory=dict)  # the pod's spec as created (its affinity, topologySpreadConstraints)


@dataclass
class World:
    namespace: str
    name: str
    pods: dict  # key -> SeenPod
    resolver: Resolver
    dns: dict


@dataclass
class Outcome:
    case: Case
    status: str = "compared"  # compared | rejected | refused | skipped | failed
    detail: str = ""
    jobs_pods: int = 0
    diffs: list = field(default_factory=list)  # [(Difference, explained_by)]
    unexplained: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)  # report claims reality did not show
    selectors: int = 0  # label selectors compared (pod terms and the file's selecting objects)
    gaps: dict = field(default_factory=dict)  # "operator"/"jobset" -> model vs reality
    aspects: set = field(default_factory=set)
    seconds: float = 0.0
    conv_message: str = ""
    kf2jobset_refused: bool = False  # kf2jobset converted nothing (conv_message holds its refusal)


def operator_pod_key(labels: dict) -> tuple | None:
    """(role, rank) of a Training Operator pod from its labels (an MPI v1 launcher has no index: 0)."""
    t, i = labels.get(KF + "replica-type"), labels.get(KF + "replica-index", "0")
    return (t.lower(), int(i)) if t is not None else None


def jobset_pod_key(roles: dict):
    """The (role, rank) of a JobSet pod from its labels, through the conversion's ``pods.pod_roles`` (a
    replicatedJob holding several roles, Trainer's ``node`` Job, is read by its pods' completion index; so is
    a role's one Job of indexed pods)."""
    from kf2jobset.runtime.jobset_view import role_of

    def key(labels: dict) -> tuple | None:
        r, i = labels.get(JS + "replicatedjob-name"), labels.get(JS + "job-index")
        if r is None or i is None:
            return None
        spec = roles.get(r, (r, 0))
        if isinstance(spec, list):
            role, index = role_of(spec, int(labels.get("batch.kubernetes.io/job-completion-index", "0")))
            return (role.lower(), index)
        role, first = spec
        # one pod per Job (kf2jobset's layout: completion index 0), or one Job of indexed pods (a role sized by
        # numNodes on a bundle runtime: job-index 0)
        return (role.lower(), first + int(i) + int(labels.get("batch.kubernetes.io/job-completion-index", "0")))
    return key


def _mount_attrs(m: dict) -> dict:
    return {k: m[k] for k in ("name", "readOnly", "subPath", "subPathExpr") if k in m}


def _read_files(launch, pod_spec: dict) -> dict:
    vols = {v["name"]: v for v in pod_spec.get("volumes") or []}
    out = {}
    for m in launch.spec.get("volumeMounts") or []:
        v = vols.get(m.get("name"), {})
        if not any(k in v for k in ("configMap", "secret", "projected", "downwardAPI")):
            continue
        src = launch.mounts.get(m["mountPath"])
        if not src or not os.path.exists(src):
            continue
        base = Path(src)
        items = [base] if base.is_file() else [p for p in sorted(base.rglob("*")) if p.is_file()]
        for p in items:
            rel = p.name if base.is_file() else str(p.relative_to(base))
            try:
                out[(m["mountPath"], rel)] = (p.read_text(errors="replace"), oct(stat.S_IMODE(p.stat().st_mode)))
            except OSError:
                pass
    return out


def observe(agent: NodeAgent, namespace: str, key_of, containers: dict | None = None) -> dict:
    """`containers`: container name -> the v1 container it runs (Trainer's `node`), to pair them."""
    pods: dict = {}
    containers = containers or {}
    for x in agent.launches(namespace):
        key = key_of(x.labels)
        if key is None:
            continue
        p = pods.get(x.pod)
        if p is None:
            p = pods[x.pod] = SeenPod(key, x.pod, x.hostname, x.pod_ip, dict(x.labels),
                                      x.pod_spec.get("restartPolicy", "Always"),
                                      {k: x.pod_spec.get(k) for k in ("schedulerName", "priorityClassName")}, {}, {},
                                      spec=x.pod_spec)
        bucket = p.init if x.init else p.containers
        own = containers.get(x.labels.get(JS + "replicatedjob-name"))  # a map per replicatedJob (MPI on a bundle runtime)
        cmap = own if isinstance(own, dict) else containers
        cname = x.container if x.init else cmap.get(x.container, x.container)
        if cname in bucket:
            continue  # first start only
        bucket[cname] = {"env": list(x.env), "command": list(x.command), "image": x.image,
                               "mounts": {m["mountPath"]: _mount_attrs(m) for m in x.spec.get("volumeMounts") or []}}
        if not x.init:
            p.files.update(_read_files(x, x.pod_spec))
    return pods


def world_resolver(dns: dict, namespace: str, pods: list[SeenPod], domain: str, by_pod_name: bool,
                   min_labels: int = 1) -> Resolver:
    """Every name the namespace's DNS answers with exactly one pod -> that pod; pod IPs too (and, for
    MPIJob v1, pod names: its launcher reached pods by name through kubectl exec; ``by_pod_name=
    "hostname"``: pod hostnames, for mpi-operator's pods). ``min_labels``:
    labels before ``.<ns>.svc`` that name one pod (v1: its own Service ``<job>-<type>-<i>``, 1;
    JobSet: ``<hostname>.<subdomain>``, 2 -- the Service name alone names every pod, even when there is one)."""
    by_ip = {p.ip: p.key for p in pods}
    names: dict = {ip: k for ip, k in by_ip.items()}
    suffix = f".{namespace}.svc.{domain}"
    for fqdn, ips in dns.items():
        if not fqdn.endswith(suffix) or len(set(ips)) != 1 or ips[0] not in by_ip:
            continue
        short = fqdn[: -len(suffix)]
        if short.count(".") + 1 < min_labels:
            continue
        for n in (short, f"{short}.{namespace}", f"{short}.{namespace}.svc", fqdn):
            names[n] = by_ip[ips[0]]
    if by_pod_name:
        for p in pods:
            names.setdefault(p.hostname if by_pod_name == "hostname" else p.name, p.key)
    return Resolver(names)


def _norm(world: World, value: str) -> str:
    v = world.resolver.normalise(value)
    v = v.replace(world.namespace, "<ns>")
    return v


def _visible(env: list) -> list:
    last = {n: i for i, (n, _) in enumerate(env)}
    return [(n, v) for i, (n, v) in enumerate(env) if last[n] == i and not n.startswith(HELPER_PREFIX) and n not in JOB_INJECTED]


def compare_worlds(op: World, js: World, rename: dict | None = None) -> list[Difference]:
    rename = rename or {}
    out: list[Difference] = []

    def norm(world, v):
        v = _norm(world, str(v))
        for old, new in rename.get(world.namespace, {}).items():
            v = v.replace(old, new)
        return v

    same = _Same(lambda v: norm(op, v), lambda v: norm(js, v))
    for key in sorted(set(op.pods) | set(js.pods), key=str):
        a, b = op.pods.get(key), js.pods.get(key)
        role = key[0]
        if a is None or b is None:
            out.append(Difference("pod", role, "extra" if a is None else "missing",
                                  None if a is None else f"{key[0]}/{key[1]}", None if b is None else f"{key[0]}/{key[1]}",
                                  role=role, pod=key))
            continue
        d = lambda aspect, subject, change, va=None, vb=None, c=None, role=role, key=key: out.append(  # noqa: E731
            Difference(aspect, subject, change, va, vb, role=role, pod=key, container=c))
        _compare_pod(a, b, role, d, same)
    # one Difference per (aspect, subject, pod, container)
    uniq, seen = [], set()
    for x in out:
        k = (x.aspect, x.subject, x.pod, x.container, x.change)
        if k not in seen:
            seen.add(k)
            uniq.append(x)
    return uniq


@dataclass(frozen=True)
class _Same:
    """A value of each world normalised (namespaces, renames) so that the two can be compared."""
    op: Callable
    js: Callable

    def __call__(self, va, vb) -> bool:
        return self.op(va) == self.js(vb)


def _compare_pod(a, b, role: str, d, same: _Same) -> None:
    """One pod of each world, aspect by aspect; `d(aspect, subject, change, va, vb, c)` records a difference."""
    if a.restart_policy != b.restart_policy:
        d("restartPolicy", role, "changed", a.restart_policy, b.restart_policy)
    for k in sorted(set(a.scheduling) | set(b.scheduling)):
        if a.scheduling.get(k) != b.scheduling.get(k):
            d("scheduling", k, "changed", a.scheduling.get(k), b.scheduling.get(k))
    if a.hostname != b.hostname:
        d("hostname", role, "changed", a.hostname, b.hostname)
    for lk in sorted(set(a.labels) | set(b.labels)):
        va, vb = a.labels.get(lk), b.labels.get(lk)
        if va is None or vb is None:
            d("label", lk, "extra" if va is None else "missing", va, vb)
        elif not same(va, vb):
            d("label", lk, "changed", va, vb)
    for kind, ca, cb in (("init", a.init, b.init), ("container", a.containers, b.containers)):
        for cname in sorted(set(ca) | set(cb)):
            x, y = ca.get(cname), cb.get(cname)
            if x is None or y is None:
                d(kind, cname, "extra" if x is None else "missing", x and x["image"], y and y["image"], c=cname)
            else:
                _compare_container(kind, cname, x, y, role, d, same)
    _compare_files(a, b, d, same)


def _compare_container(kind: str, cname: str, x: dict, y: dict, role: str, d, same: _Same) -> None:
    """A container (or init container) present in both pods: command, mounts, env."""
    na = [same.op(w) for w in x["command"]]
    nb = [same.js(w) for w in y["command"]]
    if kind == "init":
        if na != nb or x["image"] != y["image"] or x["mounts"] != y["mounts"]:
            d("init", cname, "changed", " ".join(x["command"]), " ".join(y["command"]), c=cname)
        return
    if na != nb:
        d("command", role, "changed", " ".join(x["command"]), " ".join(y["command"]), c=cname)
    for path in sorted(set(x["mounts"]) | set(y["mounts"])):
        ma, mb = x["mounts"].get(path), y["mounts"].get(path)
        if ma != mb:
            ch = "extra" if ma is None else "missing" if mb is None else "changed"
            d("mount", path, ch, ma and str(ma), mb and str(mb), c=cname)
    ea, eb = _visible(x["env"]), _visible(y["env"])
    ma, mb = dict(ea), dict(eb)
    for n, v in ea:
        if n not in mb:
            d("env", n, "missing", v, None, c=cname)
        elif not same(v, mb[n]):
            d("env", n, "changed", v, mb[n], c=cname)
    for n, v in eb:
        if n not in ma:
            d("env", n, "extra", None, v, c=cname)
    # No order check: the kubelet (pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables) hands
    # the runtime the env from a Go map, so a process sees no defined order in either world.


def _compare_files(a, b, d, same: _Same) -> None:
    """Files of ConfigMap/Secret volumes mounted at the same path in both pods."""
    paths = {p for p, _ in a.files} & {p for p, _ in b.files}
    for path in sorted(paths):
        fa = {r: v for (p, r), v in a.files.items() if p == path}
        fb = {r: v for (p, r), v in b.files.items() if p == path}
        for rel in sorted(set(fa) | set(fb)):
            if rel not in fa or rel not in fb:
                d("file", rel, "extra" if rel not in fa else "missing", rel if rel in fa else None, rel if rel in fb else None)
                continue
            (ta, ma_), (tb, mb_) = fa[rel], fb[rel]
            if not same(ta, tb):
                d("hostfile" if rel == "hostfile" else "file", "names" if rel == "hostfile" else rel, "changed", ta, tb)
            elif ma_ != mb_:
                d("file", rel, "changed", f"mode {ma_}", f"mode {mb_}")


def selector_string(reqs) -> str:
    """A selector's requirements as the API server's label_selector parameter reads them."""
    out = []
    for r in reqs:
        if r.op == "In":
            out.append(f"{r.key} in ({','.join(r.values)})")
        elif r.op == "NotIn":
            out.append(f"{r.key} notin ({','.join(r.values)})")
        elif r.op == "Exists":
            out.append(r.key)
        elif r.op == "DoesNotExist":
            out.append(f"!{r.key}")
    return ",".join(out)


def compare_selectors(op: World, js: World, conv, peers_a: list, peers_b: list, pods_selected) -> tuple[list, int]:
    """For every label selector of the v1 pods (affinity terms, topologySpreadConstraints) and of the file's
    selecting objects, the v1 pods it picks (the real API server evaluates it in namespace A) against the
    JobSet pods its converted form picks in namespace B, paired through the report's pod mapping (pod keys).
    ``pods_selected(namespace, selector) -> pod names``. Returns (differences, selectors compared)."""
    names_a = {p.name: k for k, p in op.pods.items()}
    names_b = {p.name: k for k, p in js.pods.items()}
    rtypes = {t.lower().replace("/", "-"): t for t in conv.job.replicas}
    field = conv.job.mapping.replica_specs_field
    diffs, compared, seen = [], 0, set()

    def picked(ns, reqs, names):
        if not reqs:  # an empty LabelSelector picks every pod (a Service without a selector is never listed)
            return frozenset(names.values())
        return frozenset(names[n] for n in pods_selected(ns, selector_string(reqs)) if n in names)

    def show(keys):
        return ", ".join(f"{r}/{i}" for r, i in sorted(keys)) or "none"

    for key, pod in sorted(op.pods.items(), key=lambda kv: str(kv[0])):
        twin = js.pods.get(key)
        base = f"{field}.{rtypes.get(key[0], key[0])}.template.spec"
        theirs = {f.path: f for f in pod_selectors(twin.spec, base)} if twin else {}
        for f in pod_selectors(pod.spec, base):
            if (f.what, key[0]) in seen:
                continue  # the same template term on every pod of the type: compare it once
            seen.add((f.what, key[0]))
            compared += 1
            a = picked(op.namespace, f.reqs, names_a)
            other = theirs.get(f.path)
            b = picked(js.namespace, other.reqs, names_b) if other else frozenset()
            if a != b:
                diffs.append(Difference("selector", f.what, "changed", show(a), show(b), role=key[0], pod=key))
    for pa, pb in zip(peers_a, peers_b, strict=False):
        mine, theirs = object_selectors(pa), {f.path: f for f in object_selectors(pb)}
        for f in mine:
            compared += 1
            a = picked(op.namespace, f.reqs, names_a)
            other = theirs.get(f.path)
            b = picked(js.namespace, other.reqs, names_b) if other else frozenset()
            if a != b:
                diffs.append(Difference("selector", f.what, "changed", show(a), show(b)))
    return diffs, compared


SERVICE_LINKS = re.compile(r"^KUBERNETES_(SERVICE_|PORT)")
NOT_MODELLED_LABELS = re.compile(r"(^|/)(controller-uid|jobset-uid|job-key)$")  # random per object


def model_world(world, real: World) -> World:
    """A runtime model (OperatorWorld / JobSetWorld) as the SeenPods it predicts."""
    pods = {}
    for p in world.pods:
        def shape(c, init, p=p):
            env = p.env(c)
            defined = dict(env)
            from kf2jobset.runtime.pods import expand

            cmd = [expand(str(w), defined) for w in (c.get("command") or []) + (c.get("args") or [])]
            return {"env": env, "command": cmd, "image": c.get("image"),
                    "mounts": {m["mountPath"]: _mount_attrs(m) for m in c.get("volumeMounts") or []}}

        pods[p.key] = SeenPod(p.key, p.name, p.hostname or p.name, p.ip, dict(p.labels), p.spec.get("restartPolicy", "Always"),
                              {"schedulerName": p.spec.get("schedulerName") or "default-scheduler",  # API default
                               "priorityClassName": p.spec.get("priorityClassName")},
                              {c.get("name"): shape(c, False) for c in p.containers()},
                              {c.get("name"): shape(c, True) for c in p.containers(init=True)})
    return World(real.namespace, world.name, pods, world.resolver, {})


def model_gaps(model: World, real: World) -> list[str]:
    """Where a model's pods differ from the real ones (beyond values it cannot know: uids, random suffixes)."""
    real_cmp = copy.copy(real)
    real_cmp.pods = {}
    for k, p in real.pods.items():
        q = copy.deepcopy(p)
        q.labels = {lk: v for lk, v in q.labels.items() if not NOT_MODELLED_LABELS.search(lk)}
        q.files = {}
        for bucket in (q.containers, q.init):
            for c in bucket.values():
                c["env"] = [(n, v) for n, v in c["env"] if not SERVICE_LINKS.match(n)]
        real_cmp.pods[k] = q
    m = copy.copy(model)
    m.pods = {}
    for k, p in model.pods.items():
        q = copy.deepcopy(p)
        q.labels = {lk: v for lk, v in q.labels.items() if not NOT_MODELLED_LABELS.search(lk)}
        real_pod = real.pods.get(k)
        if real_pod is not None:
            q.hostname = q.hostname if q.hostname != q.name else real_pod.hostname  # model pod names carry no random suffix
        m.pods[k] = q
    out = []
    for d in compare_worlds(m, real_cmp):
        if str(d.operator).startswith("<") and str(d.operator).endswith(">"):
            continue  # a value the model never reads: a Secret/ConfigMap key, a PriorityClass's value

        out.append(f"{d.aspect} {d.subject} {d.change} at {d.where}: model {d.operator!r} real {d.jobset!r}")
    return out


def explain_real(d: Difference, notes, findings) -> str | None:
    for note in notes:
        if covers(note, d):
            return note.code
    for f in findings:
        if f.code == "RT010" and any(ev.subject and ev.subject in f"{d.operator} {d.jobset}" for ev in f.evidence):
            return f.code
    return None


def unconfirmed_claims(findings, real: list[Difference]) -> list[str]:
    """Pod-level evidence in the report that reality does not show."""
    seen = {(x.aspect, str(x.subject).lower(), x.where.split(" ")[0]) for x in real}
    seen_roles = {(x.aspect, str(x.subject).lower(), x.pod[0] if x.pod else None) for x in real}
    out = []
    for f in findings:
        for ev in f.evidence:
            if ev.change == "equivalent" or ev.aspect not in POD_ASPECTS:
                continue
            if ev.aspect == "env" and ev.subject == "*order*":
                # the order of definition decides what $(VAR) expands to (compared above, as values); the
                # process gets its env from a Go map, so the order itself is never seen in a pod
                continue
            where = ev.where.split(" ")[0]
            subj = str(ev.subject).lower()
            if ev.aspect in ("file", "hostfile"):
                ok = (ev.aspect, subj, "launcher") in seen_roles
            elif "/" in where:
                ok = (ev.aspect, subj, where) in seen
            else:
                ok = any(a == ev.aspect and s == subj and r == where for a, s, r in seen_roles)
            if not ok:
                out.append(f"{f.code} {ev.aspect} {ev.subject} {ev.change} at {ev.where}: {ev.operator!r} -> {ev.jobset!r}")
    return out
