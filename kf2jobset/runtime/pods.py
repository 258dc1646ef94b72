"""A pod as a runtime sees it, and the env resolution kubelet performs.

Env resolution follows Kubernetes: fieldRef values come from the pod's metadata/status, secret and
ConfigMap references stay references (their values are never read or printed), then `$(VAR)` is
expanded against the variables defined earlier in the same container (`$$` escapes `$`; unknown
references stay as written).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")
_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


@dataclass
class Pod:
    role: str  # replica type as the operator named it (Worker, Master …) or the replicatedJob name
    index: int  # replica index within the role
    name: str
    namespace: str
    ip: str
    labels: dict = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    hostname: str | None = None
    subdomain: str | None = None
    spec: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (self.role.lower(), self.index)

    def containers(self, init: bool = False) -> list[dict]:
        return list(self.spec.get("initContainers" if init else "containers") or [])

    def env(self, container: dict, extra: list[dict] = ()) -> list[tuple[str, str]]:
        return resolve_env(list(container.get("env") or []) + list(extra), self)


def field_value(path: str, pod: Pod) -> str:
    m = _FIELD.match(path)
    if m:
        source = pod.labels if m.group(1) == "labels" else pod.annotations
        return str(source.get(m.group(2), ""))
    return {
        "metadata.name": pod.name,
        "metadata.namespace": pod.namespace,
        "status.podIP": pod.ip,
        "status.podIPs": pod.ip,
        "spec.nodeName": "<node>",
        "spec.serviceAccountName": pod.spec.get("serviceAccountName", "default"),
        "status.hostIP": "<host-ip>",
        "metadata.uid": "<uid>",
    }.get(path, f"<field:{path}>")


def expand(value: str, defined: dict) -> str:
    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return defined[name] if name in defined else m.group(0)

    return _REF.sub(sub, value)


def resolve_env(entries: list[dict], pod: Pod) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    defined: dict = {}
    for e in entries:
        name = e.get("name")
        if "valueFrom" in e:
            src = e["valueFrom"] or {}
            if "fieldRef" in src:
                value = field_value(src["fieldRef"].get("fieldPath", ""), pod)
            elif "secretKeyRef" in src:
                ref = src["secretKeyRef"]
                value = f"<secret {ref.get('name')}/{ref.get('key')}>"
            elif "configMapKeyRef" in src:
                ref = src["configMapKeyRef"]
                value = f"<configmap {ref.get('name')}/{ref.get('key')}>"
            elif "resourceFieldRef" in src:
                value = f"<resource {src['resourceFieldRef'].get('resource')}>"
            else:
                value = "<valueFrom>"
        else:
            value = expand(str(e.get("value", "")), defined)
        defined[name] = value
        out.append((name, value))
    return out


class Resolver:
    """Maps every address a world offers (DNS names, pod IPs) to the logical pod it reaches. A name after
    a single `/` is a path segment (gs://bucket/<pod>/...), not an address; `//` starts a URL's host."""

    def __init__(self, names: dict[str, tuple[str, int]]):
        self.names = names
        ordered = sorted(names, key=len, reverse=True)
        self._pattern = re.compile(
            r"(?<![A-Za-z0-9.-])(?<![^/]/)(?<!^/)(" + "|".join(re.escape(n) for n in ordered) + r")(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
        ) if ordered else None

    def normalise(self, value: str) -> str:
        """Replace each address by `<pod role/index>` so both worlds' values can be compared."""
        if self._pattern is None:
            return value
        return self._pattern.sub(lambda m: "<pod {}/{}>".format(*self.names[m.group(1)]), value)

    def addresses_in(self, value: str) -> list[tuple[str, int]]:
        if self._pattern is None:
            return []
        return [self.names[m.group(1)] for m in self._pattern.finditer(value)]


def dns_names(host: str, namespace: str, cluster_domain: str | None) -> list[str]:
    """The names kube-dns answers for a (headless-Service-backed) host in `namespace`."""
    names = [host, f"{host}.{namespace}", f"{host}.{namespace}.svc", f"{host}.{namespace}.svc.cluster.local"]
    if cluster_domain and cluster_domain != "cluster.local":
        names.append(f"{host}.{namespace}.svc.{cluster_domain}")
    return names
