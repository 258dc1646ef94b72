"""The node agent's reading of pod objects, as the kubelet, the scheduler and CoreDNS read them:
keys, readiness, label selection, quantities, the hostname a pod gets. Shared by every part of the
agent (nodeagent.py's docstring describes the whole), so it sits below all of them.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from fractions import Fraction

TERMINAL = ("Succeeded", "Failed")


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_key(pod: dict) -> tuple[str, str]:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]


def is_ready(pod: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or []
    )


def selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[a-zA-Z]*)$")
_SUFFIX = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
           "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(text: str) -> Fraction:
    m = _QUANTITY.match(str(text).strip())
    if not m:
        raise ValueError(f"bad quantity {text!r}")
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def pod_hostname(pod: dict, cluster_domain: str) -> tuple[str, str]:
    """(hostname, domain) as the kubelet derives them; domain is "" without a subdomain."""
    spec, name = pod["spec"], pod["metadata"]["name"]
    host = spec.get("hostname") or name
    if len(host) > 63:
        host = host[:63].rstrip("-.")
    domain = f"{spec['subdomain']}.{pod['metadata']['namespace']}.svc.{cluster_domain}" if spec.get("subdomain") else ""
    return host, domain
