"""Structural comparison of the two worlds, pod by pod and rule by rule (deepdiff does the walking).

Pods are paired by role and rank. For each pair the comparison looks at: init containers (by name),
each container's command and args (after `$(VAR)` expansion and address resolution), ports (by
name), volume mounts (by mountPath), the pod restartPolicy, the pod's hostname and how peers reach
it (DNS). Then the lifecycle rules (runtime.lifecycle) and the MPI hostfile.

Every difference is a `Difference(aspect, subject, …)`; the pair (aspect, subject) is the
vocabulary that mapping notes use in `Note.explains`. Text that changed but still means the same
(an address that reaches the same logical pod) is an `Equivalence`, not a difference.
"""
from __future__ import annotations

from dataclasses import dataclass

from .compare import pair_pods
from .jobset_view import JobSetWorld
from .lifecycle import Lifecycle, describe
from .operator_view import OperatorWorld
from .pods import Pod, expand


@dataclass(frozen=True)
class Difference:
    aspect: str  # env, init, container, command, port, mount, restartPolicy, hostname, dns, pod,
    #              start, failure, backoffLimit, lifecycle, hostfile, file, address
    subject: str  # variable, container name, mountPath, rule, role …
    change: str  # missing (only under the operator) | extra (only under JobSet) | changed
    operator: str | None = None  # printable value under the operator
    jobset: str | None = None  # printable value under JobSet
    role: str | None = None  # replica type, operator spelling (Master, Worker …); None = job-wide
    pod: tuple | None = None  # (role lower-case, index)
    container: str | None = None

    @property
    def where(self) -> str:
        if self.pod is not None:
            return f"{self.pod[0]}/{self.pod[1]}" + (f" {self.container}" if self.container else "")
        return (self.role.lower() if self.role else "job") + (f" {self.container}" if self.container else "")


@dataclass(frozen=True)
class Equivalence:
    """Different text, same meaning (e.g. an address that still reaches the same pod)."""

    aspect: str
    subject: str
    operator: str
    jobset: str
    reaches: tuple  # logical pods, e.g. (("master", 0),)
    role: str | None = None
    pod: tuple | None = None
    container: str | None = None


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


# ---------------------------------------------------------------- pod shapes

def _expanded(pod: Pod, container: dict, key: str) -> list[str] | None:
    """command/args as kubelet runs them: $(VAR) expanded against the container's env."""
    raw = container.get(key)
    if raw is None:
        return None
    env = dict(pod.env(container))
    return [expand(str(v), env) for v in raw]


def _container_shape(pod: Pod, c: dict, resolver) -> dict:
    shape = {}
    for key in ("command", "args"):
        words = _expanded(pod, c, key)
        if words is not None:
            shape[key] = [resolver.normalise(w) for w in words]
    ports = {}
    for p in c.get("ports") or []:
        ports[str(p.get("name") or p.get("containerPort"))] = {
            "containerPort": int(p.get("containerPort", 0)), "protocol": p.get("protocol", "TCP")}
    shape["ports"] = ports
    mounts = {}
    for m in c.get("volumeMounts") or []:
        mounts[str(m.get("mountPath"))] = {k: m[k] for k in ("name", "readOnly", "subPath", "subPathExpr") if k in m}
    shape["mounts"] = mounts
    return shape


def pod_shape(pod: Pod, resolver) -> dict:
    init = {}
    for c in pod.containers(init=True):
        s = _container_shape(pod, c, resolver)
        s["image"] = c.get("image")
        init[str(c.get("name"))] = s
    containers = {str(c.get("name")): _container_shape(pod, c, resolver) for c in pod.containers()}
    return {"restartPolicy": pod.spec.get("restartPolicy", "Always"), "init": init, "containers": containers}


def _raw_words(pod: Pod, name: str, key: str, init: bool) -> list[str] | None:
    for c in pod.containers(init=init):
        if c.get("name") == name:
            return _expanded(pod, c, key)
    return None


# ---------------------------------------------------------------- pods

def compare_pods(op: OperatorWorld, js: JobSetWorld) -> tuple[list[Difference], list[Equivalence]]:
    from deepdiff import DeepDiff  # lazy: ~0.1 s of imports

    diffs: list[Difference] = []
    same: list[Equivalence] = []
    pairs, missing, extra = pair_pods(op, js)
    for key in extra:
        diffs.append(Difference("pod", key[0], "extra", None, f"{key[0]}/{key[1]}", pod=key))
    for pod in missing:
        diffs.append(Difference("pod", pod.role, "missing", f"{pod.key[0]}/{pod.key[1]}", None, role=pod.role, pod=pod.key))
    for pod, other in pairs:
        a, b = pod_shape(pod, op.resolver), pod_shape(other, js.resolver)
        seen = set()
        for path in _paths(DeepDiff(a, b, view="tree", threshold_to_diff_deeper=0)):
            d = _classify(path, a, b, pod)
            if d is None or (d.aspect, d.subject, d.container) in seen:
                continue
            seen.add((d.aspect, d.subject, d.container))
            stale = _stale(d, pod, other, op, js)
            diffs.append(stale or d)
        diffs += _dns(pod, other, op, js)
    return diffs, same


def _paths(tree_diff) -> list[list]:
    """Changed paths in a stable order (deepdiff's result sets do not keep one)."""
    paths = [level.path(output_format="list") for levels in tree_diff.values() for level in levels]
    return sorted(paths, key=lambda p: [str(x) for x in p])


def _get(tree, path):
    for p in path:
        if not isinstance(tree, dict) or p not in tree:
            return None
        tree = tree[p]
    return tree


def _classify(path: list, a: dict, b: dict, pod: Pod) -> Difference | None:
    role, key = pod.role, pod.key

    def diff(aspect, subject, prefix, container=None):
        va, vb = _get(a, prefix), _get(b, prefix)
        change = "missing" if vb is None else "extra" if va is None else "changed"
        return Difference(aspect, subject, change, _show(va), _show(vb), role=role, pod=key, container=container)

    head = path[0]
    if head == "restartPolicy":
        return diff("restartPolicy", role, ["restartPolicy"])
    if head == "init":
        if len(path) < 2:
            return None
        return diff("init", path[1], ["init", path[1]], container=path[1])
    if head == "containers":
        if len(path) < 2:
            return None
        cname = path[1]
        if len(path) == 2:
            return diff("container", cname, ["containers", cname], container=cname)
        field = path[2]
        if field in ("command", "args"):
            # what the process runs: command + args together (the evidence shows the whole argv)
            argv = [(_get(t, ["containers", cname, "command"]) or []) + (_get(t, ["containers", cname, "args"]) or [])
                    for t in (a, b)]
            change = "changed" if all(argv) else "missing" if argv[0] else "extra"
            return Difference("command", role, change, _show(argv[0]) or None, _show(argv[1]) or None,
                              role=role, pod=key, container=cname)
        if field == "ports" and len(path) > 3:
            return diff("port", str(path[3]), ["containers", cname, "ports", path[3]], container=cname)
        if field == "mounts" and len(path) > 3:
            return diff("mount", str(path[3]), ["containers", cname, "mounts", path[3]], container=cname)
        return diff(field, role, ["containers", cname, field], container=cname)
    return Difference(str(head), role, "changed", role=role, pod=key)


def _show(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict):
        if "image" in value:
            return str(value.get("image"))
        if "name" in value and len(value) <= 3:
            return ", ".join(f"{k}={v}" for k, v in value.items())
        if "containerPort" in value:
            return f"{value['containerPort']}/{value['protocol']}"
        return "present"
    return str(value)


def _stale(d: Difference, pod: Pod, other: Pod, op: OperatorWorld, js: JobSetWorld) -> Difference | None:
    """A command word the user wrote, identical in both pods, that names a v1 address no JobSet pod has."""
    if d.aspect != "command" or d.change != "changed":
        return None
    for key in ("command", "args"):
        mine = _raw_words(pod, d.container, key, False) or []
        theirs = _raw_words(other, d.container, key, False) or []
        for word, their_word in zip(mine, theirs, strict=False):
            found = stale_addresses(word, their_word, op, js)
            if found:
                return Difference("address", found[0], "changed", word, their_word, role=d.role, pod=d.pod, container=d.container)
    return None


def stale_addresses(op_value: str, js_value: str, op: OperatorWorld, js: JobSetWorld) -> list[str]:
    """Addresses in a value that reach a pod under the operator but nothing under JobSet."""
    if op_value != js_value:
        return []
    found = [m.group(1) for m in op.resolver._pattern.finditer(op_value)] if op.resolver._pattern else []
    if not found or js.resolver.addresses_in(js_value):
        return []
    return [f for f in found if not f.replace(".", "").isdigit()]


def _dns(pod: Pod, other: Pod, op: OperatorWorld, js: JobSetWorld) -> list[Difference]:
    out = []
    mine_host = pod.hostname or pod.name
    their_host = other.hostname or other.name
    if mine_host != their_host:
        out.append(Difference("hostname", pod.role, "changed", mine_host, their_host, role=pod.role, pod=pod.key))
    a, b = _operator_reach(pod, op), _jobset_reach(other, js)
    if a != b:
        out.append(Difference("dns", pod.role, "changed", a, b, role=pod.role, pod=pod.key))
    return out


def _names(resolver, key) -> list[str]:
    return sorted((n for n, k in resolver.names.items() if k == key and not n[0].isdigit()), key=len)


def _operator_reach(pod: Pod, op: OperatorWorld) -> str:
    job = op.job
    if job.mapping.pod_addresses == "podName":
        return f"no DNS name; the launcher reaches it by pod name {pod.name} through kubectl exec"
    names = _names(op.resolver, pod.key)
    if job.mapping.pod_addresses == "jobService":
        when = "before it is Ready" if job.framework.get("runLauncherAsWorker") else "once it is Ready"
        return f"{names[0] if names else pod.name} (headless Service {op.name}), resolvable {when}"
    return f"{names[0] if names else pod.name} (its own Service), resolvable once it is Ready"


def _jobset_reach(pod: Pod, js: JobSetWorld) -> str:
    network = (js.jobset.get("spec") or {}).get("network") or {}
    if not pod.subdomain:
        return "no DNS name (enableDNSHostnames is false)"
    ready = network.get("publishNotReadyAddresses", True)
    when = "before it is Ready" if ready else "once it is Ready"
    return f"{pod.hostname}.{pod.subdomain} (headless Service {pod.subdomain}), resolvable {when}"


# ---------------------------------------------------------------- lifecycle

def compare_lifecycle(op: Lifecycle, js: Lifecycle, roles: dict) -> list[Difference]:
    """`roles` maps the lower-case role to the operator's spelling (Master, Worker …)."""
    from deepdiff import DeepDiff

    out, seen = [], set()
    a, b = op.as_dict(), js.as_dict()
    for path in _paths(DeepDiff(a, b, view="tree", threshold_to_diff_deeper=0)):
        if path[0] == "job" and len(path) > 1:
            rule = path[1]
            key = ("lifecycle", rule, None)
            va, vb = a["job"].get(rule), b["job"].get(rule)
            d = Difference("lifecycle", rule, "changed", describe(va, rule), describe(vb, rule))
        elif path[0] == "roles" and len(path) > 1:
            role = path[1]
            if len(path) == 2:
                key = ("role", role, None)
                present = role in a["roles"]
                d = Difference("pod", roles.get(role, role), "missing" if present else "extra",
                               role if present else None, None if present else role, role=roles.get(role, role))
            else:
                rule = path[2]
                key = (rule, role, None)
                va, vb = a["roles"][role].get(rule), b["roles"][role].get(rule)
                d = Difference(rule, roles.get(role, role), "changed", describe(va, rule), describe(vb, rule), role=roles.get(role, role))
        else:
            continue
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    return out


# ---------------------------------------------------------------- files (MPI hostfile)

def compare_files(op_files: dict, js_files: dict, op: OperatorWorld, js: JobSetWorld) -> tuple[list[Difference], list[Equivalence]]:
    """Files the launcher reads under /etc/mpi: name -> content (None = present, content not modelled)."""
    diffs, same = [], []
    for name in sorted(set(op_files) | set(js_files)):
        if name not in js_files:
            diffs.append(Difference("file", name, "missing", name, None, role="Launcher"))
            continue
        if name not in op_files:
            diffs.append(Difference("file", name, "extra", None, name, role="Launcher"))
            continue
        a, b = op_files[name], js_files[name]
        if a is None or b is None or a == b:
            continue
        na, nb = op.resolver.normalise(a), js.resolver.normalise(b)
        if na == nb:
            same.append(Equivalence("hostfile", name, a, b, tuple(op.resolver.addresses_in(a)), role="Launcher"))
        else:
            diffs.append(Difference("hostfile", "names", "changed", a, b, role="Launcher"))
    return diffs, same
