"""A container's environment exactly as the kubelet computes it (envFrom, env with $(VAR) expansion,
fieldRef/resourceFieldRef/configMapKeyRef/secretKeyRef, Service link variables); see nodeagent.py's
docstring. Pure: pod, container, services and a reader in, [(name, value)] out, so
tests/e2e/test_nodeagent.py can hold it to the real kubelet without running a pod.
"""
from __future__ import annotations

import math
import re
from typing import Callable

from kf2jobset.runtime.pods import expand

from ..podnet import HarnessError
from .nodeagent_objects import quantity


class MissingRef(Exception):
    """A ConfigMap/Secret (key) the container needs does not exist yet (kubelet: it waits and retries)."""


def service_env(services: list[dict], namespace: str, enable_links: bool) -> dict[str, str]:
    """The Service link variables: the pod's namespace (if enabled) and the master ``kubernetes`` Service."""
    chosen: dict[str, dict] = {}
    for svc in services:
        spec, meta = svc.get("spec") or {}, svc["metadata"]
        if spec.get("clusterIP") in (None, "", "None"):
            continue
        if meta["namespace"] == "default" and meta["name"] == "kubernetes":
            chosen.setdefault(meta["name"], svc)
        elif meta["namespace"] == namespace and enable_links:
            chosen[meta["name"]] = svc
    out: dict[str, str] = {}
    for name, svc in chosen.items():
        spec = svc["spec"]
        ip, ports = spec["clusterIP"], spec.get("ports") or []
        prefix = name.upper().replace("-", "_")
        out[f"{prefix}_SERVICE_HOST"] = ip
        if ports:
            out[f"{prefix}_SERVICE_PORT"] = str(ports[0]["port"])
        for p in ports:
            if p.get("name"):
                out[f"{prefix}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}"] = str(p["port"])
        if ports:
            out[f"{prefix}_PORT"] = f"{ports[0].get('protocol', 'TCP').lower()}://{ip}:{ports[0]['port']}"
        for p in ports:
            proto = p.get("protocol", "TCP")
            base = f"{prefix}_PORT_{p['port']}_{proto.upper()}"
            out[base] = f"{proto.lower()}://{ip}:{p['port']}"
            out[f"{base}_PROTO"] = proto.lower()
            out[f"{base}_PORT"] = str(p["port"])
            out[f"{base}_ADDR"] = ip
    return out


def field_ref(path: str, pod: dict, pod_ip: str, host_ip: str) -> str:
    meta, spec = pod["metadata"], pod["spec"]
    m = re.match(r"^metadata\.(labels|annotations)\['(.+)'\]$", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    values = {
        "metadata.name": meta["name"],
        "metadata.namespace": meta["namespace"],
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
    }
    if path not in values:
        raise HarnessError(f"fieldRef {path!r} is not supported by the node agent")
    return values[path]


def resource_ref(ref: dict, container: dict, allocatable: dict) -> str:
    resource = ref["resource"]  # limits.cpu, requests.memory, ...
    kind, _, name = resource.partition(".")
    res = container.get("resources") or {}
    raw = (res.get(kind) or {}).get(name)
    if raw is None and kind == "requests":
        raw = (res.get("limits") or {}).get(name)
    if raw is None:
        raw = allocatable.get(name, "0") if kind == "limits" else "0"
    divisor = quantity(ref.get("divisor") or "1")
    return str(math.ceil(quantity(raw) / divisor))


def container_env(pod: dict, container: dict, *, services: list[dict], read: Callable[[str, str, str], dict | None],
                  pod_ip: str, host_ip: str, allocatable: dict | None = None) -> list[tuple[str, str]]:
    """The container's environment as the kubelet computes it (see the module docstring).

    ``read(kind, namespace, name)`` returns the ConfigMap/Secret data as {key: str} (Secrets
    decoded) or None when it does not exist. Raises :class:`MissingRef` for a missing,
    non-optional reference.
    """
    ns = pod["metadata"]["namespace"]
    links = service_env(services, ns, pod["spec"].get("enableServiceLinks", True))
    env: dict[str, str] = {}

    def source(kind: str, ref: dict) -> dict | None:
        data = read(kind, ns, ref.get("name", ""))
        if data is None and not ref.get("optional"):
            raise MissingRef(f"{kind} {ref.get('name')!r} not found")
        return data

    for ef in container.get("envFrom") or []:
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if key in ef:
                for k, v in (source(kind, ef[key]) or {}).items():
                    env[ef.get("prefix", "") + k] = v
    for e in container.get("env") or []:
        name, value, src = e["name"], e.get("value") or "", e.get("valueFrom")
        if value:
            value = expand(value, {**links, **env})
        elif src:
            if "fieldRef" in src:
                value = field_ref(src["fieldRef"]["fieldPath"], pod, pod_ip, host_ip)
            elif "resourceFieldRef" in src:
                value = resource_ref(src["resourceFieldRef"], container, allocatable or {})
            else:
                kind, ref = ("ConfigMap", src["configMapKeyRef"]) if "configMapKeyRef" in src else ("Secret", src["secretKeyRef"])
                data = source(kind, ref)
                if data is None or ref["key"] not in data:
                    if ref.get("optional"):
                        continue
                    raise MissingRef(f"{kind} {ref.get('name')!r} has no key {ref['key']!r}")
                value = data[ref["key"]]
        env[name] = value
    return list(env.items()) + [(k, v) for k, v in links.items() if k not in env]
