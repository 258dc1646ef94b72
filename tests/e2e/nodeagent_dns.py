"""DNS as CoreDNS's kubernetes plugin answers it: the records (from Pods and Services) and one UDP
reply (A records only); the node agent (nodeagent.py) serves them on its bridge address.
"""
from __future__ import annotations

import socket
import struct
from collections import defaultdict
from typing import Callable

from .nodeagent_objects import TERMINAL, is_ready, selects


def dns_records(pods: list[dict], services: list[dict], cluster_domain: str = "cluster.local") -> dict[str, list[str]]:
    """Fully qualified name -> addresses, from the API objects, as CoreDNS's kubernetes plugin answers."""
    recs: dict[str, list[str]] = defaultdict(list)
    by_ns: dict[str, list[dict]] = defaultdict(list)
    for p in pods:
        by_ns[p["metadata"]["namespace"]].append(p)
    for svc in services:
        meta, spec = svc["metadata"], svc.get("spec") or {}
        base = f"{meta['name']}.{meta['namespace']}.svc.{cluster_domain}"
        if spec.get("type") == "ExternalName":
            continue
        if spec.get("clusterIP") not in (None, "", "None"):
            recs[base].append(spec["clusterIP"])
            continue
        for p in by_ns[meta["namespace"]]:
            status, pspec = p.get("status") or {}, p["spec"]
            ip = status.get("podIP")
            if not ip or status.get("phase") in TERMINAL or not selects(spec.get("selector") or {}, p["metadata"].get("labels") or {}):
                continue
            terminating = bool(p["metadata"].get("deletionTimestamp"))
            if not (spec.get("publishNotReadyAddresses") or (is_ready(p) and not terminating)):
                continue
            recs[base].append(ip)
            if pspec.get("hostname") and pspec.get("subdomain") == meta["name"]:
                recs[f"{pspec['hostname']}.{base}"].append(ip)
            else:
                recs[f"{ip.replace('.', '-')}.{base}"].append(ip)
    return {k.lower(): v for k, v in recs.items()}


def dns_answer(query: bytes, lookup: Callable[[str], list[str] | None]) -> bytes | None:
    """A reply to one DNS query (A records only; NODATA for other types of a known name; NXDOMAIN)."""
    if len(query) < 17:
        return None
    qid, flags, qdcount = struct.unpack(">HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    labels, i = [], 12
    while i < len(query) and query[i]:
        n = query[i]
        if n & 0xC0 or i + 1 + n > len(query):
            return None
        labels.append(query[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    if i + 5 > len(query):
        return None
    qtype, qclass = struct.unpack(">HH", query[i + 1:i + 5])
    question = query[12:i + 5]
    ips = lookup(".".join(labels).lower())
    answers = b""
    count = 0
    if ips and qtype in (1, 255) and qclass == 1:
        for ip in ips:
            rr = struct.pack(">HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(ip)
            if 12 + len(question) + len(answers) + len(rr) > 512:
                break
            answers += rr
            count += 1
    rcode = 3 if ips is None else 0
    header = struct.pack(">HHHHHH", qid, 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | rcode, 1, count, 0, 0)
    return header + question + answers
