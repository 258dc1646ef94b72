"""A node agent for the e2e stack: scheduler + kubelet + CoreDNS, played by one small Python module.

Test harness only (not part of kf2jobset). The ground-truth stack (tests/e2e/stack.py) has an API
server, the Job controller, the v1 Training Operator and the JobSet controller, but nothing runs
Pods. :class:`NodeAgent` does, so those controllers act on real pod status:

* **Node + scheduler.** It registers one Node (Ready, InternalIP = its bridge address) and binds
  every Pending pod it may run to it with the ``pods/binding`` subresource, as kube-scheduler would:
  not while ``spec.schedulingGates`` is non-empty, not pods for another ``schedulerName``, not pods
  being deleted. Node selectors, affinity, taints and resources are not evaluated (one node).
* **Pod sandbox.** Each pod gets a network namespace with ``eth0`` (a veth on a bridge that lives
  in the agent's own "switch" namespace, 10.246.0.0/16, nothing routed elsewhere), its own address,
  its hostname (``spec.hostname`` or the pod name, truncated like the kubelet; ``setHostnameAsFQDN``)
  in a UTS namespace of each container, and the kubelet's ``/etc/hosts`` (localhost lines, the pod's
  own ``IP  host.subdomain.ns.svc.<domain>  host`` line, ``hostAliases``) and ``/etc/resolv.conf``
  (``dnsPolicy``/``dnsConfig``: ``search <ns>.svc.<d> svc.<d> <d>``, ``ndots:5``).
* **DNS (CoreDNS).** A tiny DNS server (UDP, A records) on the bridge address answers from the API
  objects, recomputed on every Pod/Service change, the way CoreDNS's kubernetes plugin does:
  ClusterIP Service -> its ClusterIP (not reachable: there is no kube-proxy); headless Service with
  a selector -> the selected pods' addresses that are ready (all of them that have an address and
  are not terminal with ``publishNotReadyAddresses``; a terminating pod is never ready) and, per such
  endpoint, ``<hostname>.<svc>.<ns>.svc.<d>`` when the pod's ``hostname`` is set and its
  ``subdomain`` is the Service's name (else ``<a-b-c-d>.<svc>...``); ``a-b-c-d.<ns>.pod.<d>``.
  Names are looked up through the pod's own search path by the real resolver (glibc, ``getent``).
  Simplified: no SRV/PTR/CNAME (ExternalName) records, headless Services without a selector have no
  endpoints (no Endpoints controller), no upstream: other names are NXDOMAIN, answers are cut to fit
  512 bytes (about 28 addresses) without the TC bit.
* **Env, exactly like the kubelet** (:func:`container_env`): ``envFrom`` (ConfigMap/Secret, prefix,
  optional) then ``env`` in order; ``value`` is ``$(VAR)``-expanded against the entries defined
  before it and the Service link variables (``$$`` -> ``$``, unknown references kept as written, via
  ``kf2jobset.runtime.pods.expand``); ``valueFrom`` is never expanded: ``fieldRef`` (name, namespace,
  uid, labels/annotations['k'], spec.nodeName, spec.serviceAccountName, status.hostIP(s),
  status.podIP(s)), ``resourceFieldRef`` (limits/requests, divisor; an unset limit is the node's
  allocatable), ``configMapKeyRef``/``secretKeyRef`` read from the API (optional honoured; a
  missing one keeps the container waiting in ``CreateContainerConfigError`` and is retried); Service
  link variables (``enableServiceLinks``, plus the master ``kubernetes`` Service) come last unless
  already defined. The process gets that env plus what a runtime adds (``PATH``, ``HOME=/root``,
  ``HOSTNAME``; the container's env wins). ``command``/``args`` are expanded the same way.
* **Volumes.** ConfigMap and Secret (``items``, ``defaultMode``/``mode``, ``optional``; plain files,
  not the kubelet's ``..data`` symlink layout; a missing non-optional source keeps the pod in
  ``ContainerCreating``), emptyDir (shared by the pod's containers), downwardAPI and projected
  (configMap/secret/downwardAPI sources; serviceAccountToken is skipped). Other kinds (PVC,
  hostPath, ...) are empty directories, listed in :attr:`PodWorker.substituted`. ``subPath`` and
  ``readOnly`` are honoured. Mounts are bind mounts in the container's private mount namespace; a
  mount point missing on this machine is created (empty) and left in place (another agent may be using it).
* **Containers** do not run images. The test maps an image (exact, or the longest matching prefix)
  to a program: an argv list, or a callable ``f(launch) -> argv | None`` that sees the
  :class:`Launch` (resolved env, expanded command, hostname, pod IP, mounts). Unmapped: init
  containers run ``true``, others ``default_program`` (``sleep infinity``). :data:`OWN_COMMAND` runs
  the container's own command + args.
* **Lifecycle.** Volumes, then init containers one at a time in order (a failing one is retried
  unless ``restartPolicy: Never``, which fails the pod; an init container with ``restartPolicy:
  Always`` is a sidecar: started, then the next one), then all containers. ``restartPolicy``
  Always/OnFailure/Never decides restarts, with a back-off of ``backoff`` seconds (default 1 s,
  doubling to 10 s; the kubelet uses 10 s to 5 min). Exit codes are the process's (128+N when killed
  by signal N). The phase follows the kubelet's rules (Pending / Running / Succeeded / Failed).
* **Readiness.** A container is ready when it runs and its ``readinessProbe`` (exec, tcpSocket,
  httpGet; initialDelaySeconds, periodSeconds, timeoutSeconds, success/failureThreshold) passes;
  without a probe it is ready once started. Simplified: probes run in the pod loop (one at a time),
  startup and liveness probes, lifecycle hooks and grpc probes are not run, readiness gates are
  honoured only as conditions already present in the status.
* **Status** (``pods/status``, strategic merge patch): ``podIP(s)``, ``hostIP(s)``, ``startTime``,
  ``phase``, conditions ``PodScheduled``/``PodReadyToStartContainers``/``Initialized``/
  ``ContainersReady``/``Ready``, ``initContainerStatuses`` and ``containerStatuses`` (waiting /
  running / terminated with exit code, reason Completed/Error, ``lastState``, ``restartCount``).
* **Pod deadline.** ``spec.activeDeadlineSeconds``, counted from ``startTime``: the pod fails
  (phase Failed, reason ``DeadlineExceeded``) and its containers are stopped, whatever its
  ``restartPolicy``, as the kubelet's active-deadline handler does. Tests use it where a pod must
  end Failed under ``OnFailure`` (what an eviction does).
* **Deletion.** A pod with ``deletionTimestamp``: SIGTERM to each container's main process, SIGKILL
  to what is left after the grace period (``deletionGracePeriodSeconds``), final status, then the
  kubelet's ``DELETE`` with grace 0 and the pod's UID as precondition. Finalizers are left to their
  owners (the Job controller removes its own). A terminal pod's processes and namespace are removed
  at once (the kubelet tears the sandbox down too); its record, logs and status stay.

Watches: Pods and Services, each a list + watch from the list's resourceVersion (bookmarks on),
re-listed on ``410 Gone``. Everything the agent starts is a process group it owns, in namespaces it
named; :meth:`NodeAgent.stop` ends them by id, deletes the namespaces and the Node.

Needs root (network namespaces, bind mounts), ``ip`` (iproute2), ``unshare``, ``mount``, ``bash``.
For tests: :meth:`NodeAgent.exec` (like ``kubectl exec``), :meth:`NodeAgent.container_pid` (to enter a
running container's namespaces), :meth:`NodeAgent.log`,
:meth:`NodeAgent.launches` (what each container was started with), :meth:`NodeAgent.lookup` (the
DNS table).
"""
from __future__ import annotations

import base64
import ctypes
import json
import math
import os
import re
import shlex
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Callable, Union

from kf2jobset.runtime.pods import expand

from ..podnet import HarnessError, add_pod_netns, delete_netns, exec_line, make_switch, netns_available, project, run, write_netns_etc

__all__ = ["NodeAgent", "Launch", "OWN_COMMAND", "container_env", "dns_records", "netns_available"]

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CLONE_NEWNET = 0x40000000
TERMINAL = ("Succeeded", "Failed")

Program = Union[list, tuple, Callable[["Launch"], "list[str] | None"]]


def OWN_COMMAND(launch: "Launch") -> list[str]:  # noqa: N802 - a constant-like program
    """A program that runs the container's own command + args (after ``$(VAR)`` expansion)."""
    return launch.command


class MissingRef(Exception):
    """A ConfigMap/Secret (key) the container needs does not exist yet (kubelet: it waits and retries)."""


# ---------------------------------------------------------------------------------------------
# small helpers


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


# ---------------------------------------------------------------------------------------------
# env, exactly like the kubelet


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


# ---------------------------------------------------------------------------------------------
# DNS: the records CoreDNS would serve, and a tiny server for them


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


# ---------------------------------------------------------------------------------------------
# what a container was started with


@dataclass
class Launch:
    """One container start: what the kubelet would have handed the runtime (and what ran)."""

    namespace: str
    pod: str
    container: str
    image: str
    init: bool
    restart: int
    hostname: str
    pod_ip: str
    env: list  # [(name, value)] in the kubelet's order of definition (no runtime additions)
    command: list  # command + args after $(VAR) expansion (what the image would have run)
    argv: list = field(default_factory=list)  # what the agent ran instead
    mounts: dict = field(default_factory=dict)  # mountPath -> source directory/file on this machine
    working_dir: str = ""
    spec: dict = field(default_factory=dict)  # the container as the API has it
    log: str = ""
    labels: dict = field(default_factory=dict)  # the pod's labels when the container started
    pod_spec: dict = field(default_factory=dict)  # the pod's spec (restartPolicy, volumes, ...)


# ---------------------------------------------------------------------------------------------
# the watch


class Informer(threading.Thread):
    """list + watch one resource (all namespaces) into ``store``; re-lists on 410 Gone."""

    def __init__(self, agent: "NodeAgent", kind: str, list_fn_name: str):
        super().__init__(name=f"nodeagent-{kind}", daemon=True)
        self.agent, self.kind, self.list_fn_name = agent, kind, list_fn_name
        self.store: dict[tuple[str, str], dict] = {}
        self.synced = threading.Event()
        self.relists = 0

    def run(self) -> None:
        from kubernetes import client, watch
        from kubernetes.client.rest import ApiException

        api = self.agent.new_client()
        list_fn = getattr(client.CoreV1Api(api), self.list_fn_name)
        rv = None
        while not self.agent.stopping.is_set():
            try:
                if rv is None:
                    resp = list_fn(_preload_content=False, _request_timeout=60)
                    body = json.loads(resp.data)
                    self.relists += 1
                    items = {pod_key(o): o for o in body["items"]}
                    with self.agent.lock:
                        gone = [self.store[k] for k in self.store if k not in items]
                        self.store.clear()
                        self.store.update(items)
                    for o in gone:
                        self.agent.on_deleted(self.kind, o)
                    rv = body["metadata"]["resourceVersion"]
                    self.synced.set()
                    self.agent.kick()
                w = watch.Watch()
                for ev in w.stream(list_fn, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=30,
                                   deserialize=False, _request_timeout=60):
                    obj = ev["object"]
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if ev["type"] == "BOOKMARK":
                        continue
                    with self.agent.lock:
                        if ev["type"] == "DELETED":
                            self.store.pop(pod_key(obj), None)
                        else:
                            self.store[pod_key(obj)] = obj
                    if ev["type"] == "DELETED":
                        self.agent.on_deleted(self.kind, obj)
                    self.agent.kick()
                    if self.agent.stopping.is_set():
                        w.stop()
            except ApiException as e:
                if e.status == 410:
                    rv = None  # too old: list again
                    continue
                self.agent.note(f"{self.kind} watch: {e.status} {e.reason}")
                time.sleep(0.5)
            except Exception as e:  # noqa: BLE001 - connection reset, server stopping: retry
                if self.agent.stopping.is_set():
                    return
                self.agent.note(f"{self.kind} watch: {type(e).__name__}: {e}")
                time.sleep(0.5)


# ---------------------------------------------------------------------------------------------
# one pod


@dataclass
class Ctr:
    spec: dict
    init: bool
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    popen: subprocess.Popen | None = None
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    restarts: int = 0
    last: dict | None = None  # lastState.terminated
    ready: bool = False
    next_start: float = 0.0
    backoff: float = 0.0
    cid: str = ""
    probe_next: float = 0.0
    probe_ok: int = 0
    probe_fail: int = 0
    started_once: bool = False

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def sidecar(self) -> bool:
        return self.init and self.spec.get("restartPolicy") == "Always"

    def status(self) -> dict:
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated":
            state = {"terminated": self.terminated()}
        else:
            state = {"waiting": {"reason": self.reason, **({"message": self.message} if self.message else {})}}
        out = {
            "name": self.name,
            "image": self.spec.get("image", ""),
            "imageID": "",
            "ready": self.ready,
            "restartCount": self.restarts,
            "started": self.state == "running",
            "state": state,
            "lastState": {"terminated": self.last} if self.last else {},
        }
        if self.cid:
            out["containerID"] = self.cid
        return out

    def terminated(self) -> dict:
        return {
            "exitCode": self.exit_code,
            "reason": "Completed" if self.exit_code == 0 else "Error",
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "containerID": self.cid,
        }


class PodWorker(threading.Thread):
    """Runs one pod bound to the agent's node, from sandbox to teardown (the kubelet's pod worker)."""

    def __init__(self, agent: "NodeAgent", pod: dict, n: int):
        ns, name = pod_key(pod)
        super().__init__(name=f"pod-{ns}/{name}", daemon=True)
        self.agent, self.pod, self.uid = agent, pod, pod["metadata"]["uid"]
        self.key = (ns, name)
        self.netns = f"{agent.tag}p{n}"
        self.peer = f"{agent.tag}v{n}"
        self.ip = agent.address(n)
        self.hostname, self.domain = pod_hostname(pod, agent.cluster_domain)
        if pod["spec"].get("setHostnameAsFQDN") and self.domain:
            self.hostname = f"{self.hostname}.{self.domain}"
        self.dir = agent.workdir / "pods" / f"{ns}_{name}_{self.uid[:8]}"
        self.inits = [Ctr(c, True) for c in pod["spec"].get("initContainers") or []]
        self.mains = [Ctr(c, False, reason="PodInitializing" if self.inits else "ContainerCreating")
                      for c in pod["spec"].get("containers") or []]
        self.initialized = not [c for c in self.inits if not c.sidecar]
        self.sandbox = False
        self.start_time = ""
        self.started = 0.0  # monotonic time of start_time (spec.activeDeadlineSeconds counts from it)
        self.phase = "Pending"
        self.reason = self.message = ""  # status.reason/message of a pod the kubelet failed (DeadlineExceeded)
        self.volumes: dict[str, Path] = {}
        self.substituted: list[str] = []
        self.deleting = threading.Event()
        self.gone = threading.Event()  # the API object is gone: stop at once
        self.wake = threading.Event()
        self.done = threading.Event()
        self.error = ""
        self.counter = 0
        self._times: dict[str, tuple[bool, str]] = {}

    # ---- called by the agent
    def update(self, pod: dict) -> None:
        self.pod = pod
        if pod["metadata"].get("deletionTimestamp"):
            self.deleting.set()
        self.wake.set()

    # ---- the loop
    def run(self) -> None:
        try:
            self._sandbox()
            while not self._volumes():
                if self._wait(1.0):
                    break
            self._loop()
        except Exception as e:  # noqa: BLE001 - report and leave the pod as it is
            self.error = f"{type(e).__name__}: {e}"
            self.agent.note(f"pod {self.key}: {self.error}")
        finally:
            self._teardown()
            self.done.set()

    def _wait(self, seconds: float) -> bool:
        """Sleep until woken; True when the pod is going away."""
        self.wake.wait(seconds)
        self.wake.clear()
        return self.deleting.is_set() or self.gone.is_set() or self.agent.stopping.is_set()

    def _sandbox(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        add_pod_netns(self.agent.switch, self.netns, self.peer, f"{self.ip}/{self.agent.prefix_len}")
        write_netns_etc(self.netns, self.hosts_file(), self.resolv_conf())
        self.sandbox = True
        self.start_time = now_iso()
        self.started = time.monotonic()
        self._write_status()

    def hosts_file(self) -> str:
        lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                 "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
        host = self.hostname.split(".")[0]
        lines.append(f"{self.ip}\t{host}.{self.domain}\t{host}" if self.domain else f"{self.ip}\t{host}")
        aliases = self.pod["spec"].get("hostAliases") or []
        if aliases:
            lines.append("\n# Entries added by HostAliases.")
            lines += [f"{a['ip']}\t" + "\t".join(a.get("hostnames") or []) for a in aliases]
        return "\n".join(lines) + "\n"

    def resolv_conf(self) -> str:
        spec, d = self.pod["spec"], self.agent.cluster_domain
        policy, cfg = spec.get("dnsPolicy", "ClusterFirst"), spec.get("dnsConfig") or {}
        servers, searches, options = [], [], {}
        if policy in ("ClusterFirst", "ClusterFirstWithHostNet"):
            servers = [self.agent.dns_ip]
            searches = [f"{self.key[0]}.svc.{d}", f"svc.{d}", d]
            options = {"ndots": "5"}
        servers += cfg.get("nameservers") or []
        searches += [s for s in cfg.get("searches") or [] if s not in searches]
        for o in cfg.get("options") or []:
            options[o["name"]] = o.get("value")
        out = [f"search {' '.join(searches)}"] if searches else []
        out += [f"nameserver {s}" for s in servers[:3]]
        opts = [k if v is None else f"{k}:{v}" for k, v in options.items()]
        out.append("options " + " ".join(opts + ["timeout:1", "attempts:2"]))
        return "\n".join(out) + "\n"

    # ---- volumes
    def _volumes(self) -> bool:
        """Materialise every volume; False while a ConfigMap/Secret is missing (pod stays ContainerCreating)."""
        try:
            for v in self.pod["spec"].get("volumes") or []:
                if v["name"] not in self.volumes:
                    self.volumes[v["name"]] = self._volume(v)
            return True
        except MissingRef as e:
            for c in self.inits + self.mains:
                c.message = str(e)
            self._write_status()
            return False

    def _volume(self, v: dict) -> Path:
        d = self.dir / "volumes" / v["name"]
        tmp = self.dir / "volumes" / f".{v['name']}.tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        if "configMap" in v or "secret" in v:
            self._project_source(tmp, v)
        elif "downwardAPI" in v:
            self._downward(tmp, v["downwardAPI"].get("items") or [], v["downwardAPI"].get("defaultMode", 0o644))
        elif "projected" in v:
            mode = v["projected"].get("defaultMode", 0o644)
            for src in v["projected"].get("sources") or []:
                if "downwardAPI" in src:
                    self._downward(tmp, src["downwardAPI"].get("items") or [], mode)
                elif "configMap" in src or "secret" in src:
                    self._project_source(tmp, {**src, **{k: {"defaultMode": mode, **src[k]} for k in ("configMap", "secret") if k in src}})
        elif "emptyDir" not in v:
            self.substituted.append(v["name"])
        tmp.rename(d)
        return d

    def _project_source(self, d: Path, v: dict) -> None:
        kind, src = ("ConfigMap", v["configMap"]) if "configMap" in v else ("Secret", v["secret"])
        name = src.get("name") or src.get("secretName", "")
        data = self.agent.read_data(kind, self.key[0], name, binary=True)
        if data is None:
            if src.get("optional"):
                return
            raise MissingRef(f"{kind} {name!r} not found (volume {v.get('name')!r})")
        project(d, data, src.get("items"), src.get("defaultMode", 0o644))

    def _downward(self, d: Path, items: list, default_mode: int) -> None:
        meta = self.pod["metadata"]
        for item in items:
            path = (item.get("fieldRef") or {}).get("fieldPath", "")
            if path in ("metadata.labels", "metadata.annotations"):
                src = meta.get(path.split(".")[1]) or {}
                text = "\n".join(f'{k}="{v}"' for k, v in sorted(src.items()))
            elif "fieldRef" in item:
                text = field_ref(path, self.pod, self.ip, self.agent.node_ip)
            else:
                c = next(c for c in self.pod["spec"]["containers"] if c["name"] == item["resourceFieldRef"].get("containerName"))
                text = resource_ref(item["resourceFieldRef"], c, self.agent.allocatable)
            f = d / item["path"]
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
            os.chmod(f, item.get("mode", default_mode))

    # ---- containers
    def _script(self, spec: dict, env: dict, argv: list[str]) -> tuple[str, dict]:
        mounts: dict[str, str] = {}
        lines = ["set -e", f"hostname {shlex.quote(self.hostname)}"]
        for m in spec.get("volumeMounts") or []:
            src = self.volumes[m["name"]]
            if m.get("subPath"):
                src = src / m["subPath"]
                if not src.exists():
                    src.mkdir(parents=True)
            target = m["mountPath"]
            self.agent.mount_point(target, is_file=src.is_file())
            lines.append(f"mount --bind {shlex.quote(str(src))} {shlex.quote(target)}")
            if m.get("readOnly"):
                lines.append(f"mount -o remount,bind,ro {shlex.quote(target)}")
            mounts[target] = str(src)
        if spec.get("workingDir"):
            lines.append(f"cd {shlex.quote(spec['workingDir'])} 2>/dev/null || cd /")
        base = {"PATH": BASE_PATH, "HOME": "/root", "HOSTNAME": self.hostname}
        lines.append(exec_line({**base, **env}, argv))
        return "\n".join(lines), mounts

    def _spawn(self, script: str, log: Path) -> subprocess.Popen:
        with open(log, "ab") as out:
            # ip netns exec: the pod's network namespace, its hosts/resolv.conf, a private mount
            # namespace; unshare --uts: the container's own hostname. Both exec, so the Popen's
            # pid and exit status are the program's.
            return subprocess.Popen(
                ["ip", "netns", "exec", self.netns, "unshare", "--uts", "--", "/bin/sh", "-c", script],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def _start(self, c: Ctr) -> None:
        try:
            env = container_env(self.pod, c.spec, services=self.agent.services(), read=self.agent.read_data,
                                pod_ip=self.ip, host_ip=self.agent.node_ip, allocatable=self.agent.allocatable)
        except MissingRef as e:
            c.state, c.reason, c.message, c.next_start = "waiting", "CreateContainerConfigError", str(e), time.monotonic() + 1
            return
        envd = dict(env)
        command = [expand(str(w), envd) for w in (c.spec.get("command") or []) + (c.spec.get("args") or [])]
        launch = Launch(self.key[0], self.key[1], c.name, c.spec.get("image", ""), c.init, c.restarts, self.hostname,
                        self.ip, env, command, working_dir=c.spec.get("workingDir", ""), spec=c.spec,
                        labels=dict(self.pod["metadata"].get("labels") or {}), pod_spec=self.pod["spec"])
        launch.argv = list(self.agent.program_for(launch))
        script, launch.mounts = self._script(c.spec, envd, launch.argv)
        self.counter += 1
        log = self.dir / f"{c.name}-{c.restarts}.log"
        launch.log = str(log)
        c.popen = self._spawn(script, log)
        c.cid = f"kf2js://{self.uid[:8]}-{c.name}-{self.counter}"
        c.state, c.reason, c.message, c.started_at, c.ready = "running", "", "", now_iso(), False
        c.started_once = True
        c.probe_next = time.monotonic() + float((c.spec.get("readinessProbe") or {}).get("initialDelaySeconds", 0))
        c.probe_ok = c.probe_fail = 0
        self.agent.record(launch)

    def _reap(self, c: Ctr) -> bool:
        if c.state != "running" or c.popen is None or c.popen.poll() is None:
            return False
        code = c.popen.returncode
        c.exit_code = 128 - code if code < 0 else code
        c.finished_at, c.state, c.ready = now_iso(), "terminated", False
        try:  # what the container's main process left behind dies with it
            os.killpg(c.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return True

    def _restart_later(self, c: Ctr) -> None:
        c.last = c.terminated()
        c.restarts += 1
        lo, hi = self.agent.backoff
        c.backoff = min(hi, c.backoff * 2) if c.backoff else lo
        c.state, c.reason, c.message, c.next_start = "waiting", "CrashLoopBackOff", "", time.monotonic() + c.backoff
        c.exit_code = None

    def _loop(self) -> None:
        policy = self.pod["spec"].get("restartPolicy", "Always")
        while True:
            if self.gone.is_set() or self.agent.stopping.is_set():
                return
            if self.deleting.is_set():
                self._terminate()
                return
            now, changed = time.monotonic(), False
            deadline = self.pod["spec"].get("activeDeadlineSeconds")
            if deadline is not None and now - self.started >= float(deadline):
                # the kubelet's activeDeadlineHandler: the pod fails, its containers are stopped
                self.phase, self.reason = "Failed", "DeadlineExceeded"
                self.message = f"Pod was active on the node longer than the specified deadline ({deadline} s)"
                self._finish()
                return
            for c in self.inits + self.mains:
                changed |= self._reap(c)
            for c in self.inits:  # sidecars always come back
                if c.sidecar and c.state == "terminated":
                    self._restart_later(c)
                    changed = True
                if c.sidecar and c.started_once and c.state == "waiting" and now >= c.next_start:
                    self._start(c)
                    changed = True
            if not self.initialized:
                for c in self.inits:
                    if c.sidecar:  # started once: on to the next init container
                        if not c.started_once and now >= c.next_start:
                            self._start(c)
                            changed = True
                        if not c.started_once:
                            break
                        continue
                    if c.state == "terminated" and c.exit_code == 0:
                        continue
                    if c.state == "terminated":
                        if policy == "Never":
                            self.phase = "Failed"
                            self._finish()
                            return
                        self._restart_later(c)
                        changed = True
                    if c.state == "waiting" and now >= c.next_start:
                        self._start(c)
                        changed = True
                    break
                else:
                    self.initialized = True
                    for c in self.mains:
                        c.reason = "ContainerCreating"
                    changed = True
            else:
                for c in self.mains:
                    if c.state == "terminated" and (policy == "Always" or (policy == "OnFailure" and c.exit_code != 0)):
                        self._restart_later(c)
                        changed = True
                    if c.state == "waiting" and now >= c.next_start:
                        self._start(c)
                        changed = True
                for c in self.inits + self.mains:
                    changed |= self._probe(c, now)
                phase = self._phase(policy, terminal=False)
                if phase in TERMINAL:
                    self.phase = phase
                    self._finish()
                    return
                if phase != self.phase:
                    self.phase, changed = phase, True
            if changed:
                self._write_status()
            self._wait(0.1)

    def _phase(self, policy: str, terminal: bool) -> str:
        """The kubelet's getPhase for the main containers."""
        if not self.initialized and not terminal:
            return "Pending"
        running = waiting = stopped = succeeded = 0
        for c in self.mains:
            if c.state == "running":
                running += 1
            elif c.state == "terminated":
                stopped += 1
                succeeded += c.exit_code == 0
            elif c.last is not None:
                stopped += 1
            else:
                waiting += 1
        if waiting and not terminal:
            return "Pending"
        if running and not terminal:
            return "Running"
        if terminal:
            return "Succeeded" if stopped and succeeded == stopped and not running and not waiting else "Failed"
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"

    def _probe(self, c: Ctr, now: float) -> bool:
        if c.state != "running" or c.init and not c.sidecar:
            return False
        probe = c.spec.get("readinessProbe")
        if not probe:
            if not c.ready:
                c.ready = True
                return True
            return False
        if now < c.probe_next:
            return False
        c.probe_next = now + float(probe.get("periodSeconds", 10))
        ok = self._run_probe(c, probe)
        c.probe_ok, c.probe_fail = (c.probe_ok + 1, 0) if ok else (0, c.probe_fail + 1)
        before = c.ready
        if ok and c.probe_ok >= int(probe.get("successThreshold", 1)):
            c.ready = True
        elif not ok and c.probe_fail >= int(probe.get("failureThreshold", 3)):
            c.ready = False
        return c.ready != before

    def _run_probe(self, c: Ctr, probe: dict) -> bool:
        timeout = float(probe.get("timeoutSeconds", 1))
        ports = {p.get("name"): p["containerPort"] for p in c.spec.get("ports") or [] if p.get("name")}
        try:
            if "exec" in probe:
                res = self.exec(probe["exec"].get("command") or [], container=c.name, timeout=timeout)
                return res.returncode == 0
            if "tcpSocket" in probe or "httpGet" in probe:
                p = probe.get("tcpSocket") or probe["httpGet"]
                port = ports.get(p["port"], p["port"]) if isinstance(p["port"], str) else p["port"]
                host = p.get("host") or self.ip
                if "tcpSocket" in probe:
                    cmd = ["bash", "-c", f"exec 3<>/dev/tcp/{host}/{port}"]
                else:
                    scheme = p.get("scheme", "HTTP").lower()
                    cmd = ["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", str(timeout),
                           f"{scheme}://{host}:{port}{p.get('path', '/')}"]
                res = subprocess.run(["ip", "netns", "exec", self.netns, *cmd], capture_output=True, text=True,
                                     timeout=timeout + 1, stdin=subprocess.DEVNULL)
                if "tcpSocket" in probe:
                    return res.returncode == 0
                return res.stdout.strip().isdigit() and 200 <= int(res.stdout.strip()) < 400
        except subprocess.TimeoutExpired:
            return False
        return True  # grpc and unknown handlers: not modelled, counted as passing

    # ---- exec, like kubectl exec
    def exec(self, argv: list[str], container: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
        spec = next((c.spec for c in self.mains + self.inits if c.name == container), self.mains[0].spec)
        env = dict(container_env(self.pod, spec, services=self.agent.services(), read=self.agent.read_data,
                                 pod_ip=self.ip, host_ip=self.agent.node_ip, allocatable=self.agent.allocatable))
        script, _ = self._script(spec, env, argv)
        proc = subprocess.Popen(["ip", "netns", "exec", self.netns, "unshare", "--uts", "--", "/bin/sh", "-c", script],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                start_new_session=True, text=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    # ---- ending
    def _signal(self, c: Ctr, sig: int, group: bool) -> None:
        if c.popen is not None and c.popen.poll() is None:
            try:
                (os.killpg if group else os.kill)(c.popen.pid, sig)
            except ProcessLookupError:
                pass

    def _stop_all(self, grace: float) -> None:
        running = [c for c in self.inits + self.mains if c.state == "running"]
        for c in running:
            self._signal(c, signal.SIGTERM, group=False)  # the container's PID 1 only, as a runtime does
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(c.popen.poll() is None for c in running):
            time.sleep(0.05)
        for c in running:
            self._signal(c, signal.SIGKILL, group=True)
            if c.popen is not None:
                c.popen.wait()
            self._reap(c)

    def _finish(self) -> None:
        """Terminal phase: stop what still runs (sidecars), write the final status."""
        self._stop_all(grace=float(self.pod["spec"].get("terminationGracePeriodSeconds", 30)))
        for c in self.inits + self.mains:
            c.ready = False
        self._write_status()

    def _terminate(self) -> None:
        """Graceful deletion: SIGTERM, SIGKILL after the grace period, final status, DELETE grace 0."""
        grace = self.pod["metadata"].get("deletionGracePeriodSeconds")
        if grace is None:
            grace = self.pod["spec"].get("terminationGracePeriodSeconds", 30)
        self._stop_all(grace=float(grace))
        for c in self.inits + self.mains:
            c.ready = False
        if self.phase not in TERMINAL:
            self.phase = self._phase(self.pod["spec"].get("restartPolicy", "Always"), terminal=True)
        self._write_status()
        self.agent.delete_pod(self.pod)

    def _teardown(self) -> None:
        for c in self.inits + self.mains:
            self._signal(c, signal.SIGKILL, group=True)
            if c.popen is not None:
                c.popen.wait()
        if self.sandbox:
            delete_netns(self.netns)
            self.sandbox = False

    # ---- status
    def status(self) -> dict:
        def cond(type_: str, ok: bool, reason: str = "") -> dict:
            c = {"type": type_, "status": "True" if ok else "False", "lastTransitionTime": self._cond_time(type_, ok)}
            if reason and not ok:
                c["reason"] = reason
            return c

        terminal = self.phase in TERMINAL
        gates = [g["conditionType"] for g in self.pod["spec"].get("readinessGates") or []]
        present = {c["type"]: c.get("status") for c in (self.pod.get("status") or {}).get("conditions") or []}
        containers_ready = bool(self.mains) and all(c.ready for c in self.mains) and self.initialized
        ready = containers_ready and all(present.get(g) == "True" for g in gates)
        inits_done = self.initialized or terminal and all(c.state == "terminated" and c.exit_code == 0 for c in self.inits if not c.sidecar)
        status = {
            "phase": self.phase,
            "hostIP": self.agent.node_ip,
            "hostIPs": [{"ip": self.agent.node_ip}],
            "conditions": [
                cond("PodReadyToStartContainers", self.sandbox or terminal),
                cond("Initialized", inits_done, "ContainersNotInitialized"),
                cond("ContainersReady", containers_ready, "PodCompleted" if terminal else "ContainersNotReady"),
                cond("Ready", ready, "PodCompleted" if terminal else "ContainersNotReady"),
                cond("PodScheduled", True),
            ],
            "containerStatuses": [c.status() for c in self.mains],
        }
        if self.inits:
            status["initContainerStatuses"] = [c.status() for c in self.inits]
        if self.sandbox or terminal:
            status["podIP"], status["podIPs"] = self.ip, [{"ip": self.ip}]
        if self.start_time:
            status["startTime"] = self.start_time
        if self.reason:
            status["reason"], status["message"] = self.reason, self.message
        return status

    def _cond_time(self, type_: str, ok: bool) -> str:
        prev = self._times.get(type_)
        if prev is None or prev[0] != ok:
            self._times[type_] = (ok, now_iso())
        return self._times[type_][1]

    def _write_status(self) -> None:
        self.agent.patch_status(self.pod, self.status())


# ---------------------------------------------------------------------------------------------
# the agent


class NodeAgent:
    """Scheduler + kubelet + CoreDNS for one Node on the test API server (see the module docstring).

    ``programs``: image (exact, or a prefix: the longest matching key wins) -> argv list or
    ``f(launch) -> argv | None``. ``namespaces``: only pods in these namespaces are bound and run
    (None: all). Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    _count = 0

    def __init__(self, kubeconfig: str, programs: dict[str, Program] | None = None, *,
                 default_program: Program = ("sleep", "infinity"), namespaces: set[str] | None = None,
                 node_name: str | None = None, cluster_domain: str = "cluster.local",
                 scheduler_names: tuple[str, ...] = ("default-scheduler",), backoff: tuple[float, float] = (1.0, 10.0),
                 subnet: str = "10.246", workdir: Path | None = None) -> None:
        NodeAgent._count += 1
        self.kubeconfig = kubeconfig
        self.programs = dict(programs or {})
        self.default_program = default_program
        self.namespaces = set(namespaces) if namespaces is not None else None
        self.tag = f"na{os.getpid() % 1000}{NodeAgent._count % 100}"  # keeps interface names <= 15 chars
        self.node_name = node_name or f"kf2js-node-{self.tag}"
        self.cluster_domain = cluster_domain
        self.scheduler_names = scheduler_names
        self.backoff = backoff
        self.subnet, self.prefix_len = subnet, 16
        self.node_ip = self.dns_ip = f"{subnet}.0.1"
        self.switch = f"{self.tag}sw"
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kf2js-nodeagent-"))
        self.allocatable = {"cpu": str(os.cpu_count() or 1), "memory": "8Gi", "pods": "110", "ephemeral-storage": "10Gi"}
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.dirty = threading.Event()
        self.workers: dict[str, PodWorker] = {}  # pod uid -> worker
        self.bound: set[str] = set()
        self.events: list[str] = []
        self._launches: list[Launch] = []
        self._mount_points: list[Path] = []
        self._pod_count = 0
        self._threads: list[threading.Thread] = []
        self.api = None
        self.pods_informer = Informer(self, "Pod", "list_pod_for_all_namespaces")
        self.services_informer = Informer(self, "Service", "list_service_for_all_namespaces")

    # ---- client
    def new_client(self):
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
        cfg.connection_pool_maxsize = 32
        return client.ApiClient(cfg)

    def note(self, text: str) -> None:
        self.events.append(f"{time.strftime('%H:%M:%S')} {text}")

    # ---- lifecycle
    def __enter__(self) -> "NodeAgent":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 30.0) -> None:
        why = netns_available()
        if why:
            raise HarnessError(f"network namespaces unavailable: {why}")
        self.api = self.new_client()
        try:
            make_switch(self.switch, f"{self.node_ip}/{self.prefix_len}")
            self._register_node()
            self._start_dns()
            for t in (self.pods_informer, self.services_informer):
                t.start()
            deadline = time.monotonic() + timeout
            for t in (self.pods_informer, self.services_informer):
                if not t.synced.wait(max(0.0, deadline - time.monotonic())):
                    raise HarnessError(f"{t.kind} list did not complete in {timeout}s: {self.events[-3:]}")
            loop = threading.Thread(target=self._control_loop, name="nodeagent-loop", daemon=True)
            loop.start()
            self._threads.append(loop)
        except BaseException:
            self.stop()
            raise

    def stop(self, delete_node: bool = True) -> None:
        self.stopping.set()
        self.dirty.set()
        with self.lock:
            workers = list(self.workers.values())
        for w in workers:
            w.wake.set()
        for w in workers:
            w.join(timeout=15)
        delete_netns(self.switch)
        # Mount points it created stay (empty): removing one would detach it from the pods of any other
        # agent running at the same time (rmdir of a mount point unmounts it in every mount namespace).
        self._mount_points = []
        if self.api is not None and delete_node:
            from kubernetes import client

            try:
                client.CoreV1Api(self.api).delete_node(self.node_name, _preload_content=False)
            except Exception:  # noqa: BLE001 - the API server may already be gone
                pass

    # ---- node
    def _register_node(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        core = client.CoreV1Api(self.api)
        body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": self.node_name, "labels": {
            "kubernetes.io/hostname": self.node_name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}}}
        try:
            core.create_node(body, _preload_content=False)
        except ApiException as e:
            if e.status != 409:
                raise
        status = {"status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kf2jobset node agent",
                            "lastHeartbeatTime": now_iso(), "lastTransitionTime": now_iso()}],
            "addresses": [{"type": "InternalIP", "address": self.node_ip}, {"type": "Hostname", "address": self.node_name}],
            "capacity": self.allocatable, "allocatable": self.allocatable,
            "nodeInfo": {"kubeletVersion": "v1.36.3-kf2jobset-nodeagent", "operatingSystem": "linux", "architecture": "amd64",
                         "containerRuntimeVersion": "kf2jobset://processes", "kernelVersion": os.uname().release,
                         "osImage": "node agent", "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": ""},
        }}
        core.patch_node_status(self.node_name, status, _preload_content=False,
                               _content_type="application/strategic-merge-patch+json")

    # ---- DNS
    def _start_dns(self) -> None:
        ready, failure = threading.Event(), []
        self._dns_table: dict[str, list[str]] = {}

        def serve() -> None:
            try:  # this thread (only) moves into the switch namespace, where the bridge address is
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(f"/run/netns/{self.switch}", os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns")
                finally:
                    os.close(fd)
                sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                sock.bind((self.dns_ip, 53))
                sock.settimeout(0.5)
            except Exception as e:  # noqa: BLE001
                failure.append(e)
                ready.set()
                return
            ready.set()
            with sock:
                while not self.stopping.is_set():
                    try:
                        data, addr = sock.recvfrom(4096)
                    except socket.timeout:
                        continue
                    reply = dns_answer(data, self.lookup)
                    if reply:
                        sock.sendto(reply, addr)

        t = threading.Thread(target=serve, name="nodeagent-dns", daemon=True)
        t.start()
        self._threads.append(t)
        ready.wait(10)
        if failure:
            raise HarnessError(f"DNS server: {failure[0]}")

    def lookup(self, name: str) -> list[str] | None:
        """Addresses for a fully qualified name ([] = the name exists without A records; None = NXDOMAIN)."""
        name = name.lower().rstrip(".")
        ips = self._dns_table.get(name)
        if ips is not None:
            return ips
        m = re.match(rf"^(\d+)-(\d+)-(\d+)-(\d+)\.[a-z0-9-]+\.pod\.{re.escape(self.cluster_domain)}$", name)
        if m:
            return [".".join(m.groups())]
        suffix = "." + name
        if name == self.cluster_domain or any(k.endswith(suffix) for k in self._dns_table):
            return []
        return None

    # ---- the control loop: schedule, start/stop workers, DNS table
    def kick(self) -> None:
        self.dirty.set()

    def services(self) -> list[dict]:
        with self.lock:
            return list(self.services_informer.store.values())

    def _control_loop(self) -> None:
        while not self.stopping.is_set():
            self.dirty.wait(1.0)
            self.dirty.clear()
            if self.stopping.is_set():
                return
            with self.lock:
                pods = list(self.pods_informer.store.values())
                services = list(self.services_informer.store.values())
            self._dns_table = dns_records(pods, services, self.cluster_domain)
            for pod in pods:
                try:
                    self._sync(pod)
                except Exception as e:  # noqa: BLE001 - keep serving the other pods
                    self.note(f"sync {pod_key(pod)}: {type(e).__name__}: {e}")

    def _mine(self, pod: dict) -> bool:
        return self.namespaces is None or pod["metadata"]["namespace"] in self.namespaces

    def _sync(self, pod: dict) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        uid = meta["uid"]
        if not self._mine(pod):
            return
        if not spec.get("nodeName"):
            if (uid not in self.bound and not spec.get("schedulingGates") and not meta.get("deletionTimestamp")
                    and spec.get("schedulerName", "default-scheduler") in self.scheduler_names):
                self._bind(pod)
            return
        if spec["nodeName"] != self.node_name:
            return
        worker = self.workers.get(uid)
        if worker is not None:
            if worker.pod is not pod:
                worker.update(pod)
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            return
        if meta.get("deletionTimestamp"):
            self.delete_pod(pod)  # never started here: nothing to stop
            return
        self._pod_count += 1
        worker = PodWorker(self, pod, self._pod_count)
        self.workers[uid] = worker
        worker.start()

    def _bind(self, pod: dict) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ns, name = pod_key(pod)
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "uid": pod["metadata"]["uid"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": self.node_name}}
        try:
            client.CoreV1Api(self.api).create_namespaced_pod_binding(name, ns, body, _preload_content=False)
            self.bound.add(pod["metadata"]["uid"])
        except ApiException as e:
            if e.status in (404, 409):
                self.bound.add(pod["metadata"]["uid"])
            else:
                self.note(f"bind {ns}/{name}: {e.status} {e.reason}")

    def on_deleted(self, kind: str, obj: dict) -> None:
        if kind != "Pod":
            return
        worker = self.workers.get(obj["metadata"]["uid"])
        if worker is not None:
            worker.gone.set()
            worker.wake.set()

    # ---- API writes
    def patch_status(self, pod: dict, status: dict) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ns, name = pod_key(pod)
        for attempt in range(5):
            try:
                client.CoreV1Api(self.api).patch_namespaced_pod_status(
                    name, ns, {"metadata": {"uid": pod["metadata"]["uid"]}, "status": status}, _preload_content=False,
                    _content_type="application/strategic-merge-patch+json")
                return
            except ApiException as e:
                if e.status == 404:
                    return
                self.note(f"status {ns}/{name}: {e.status} {e.reason} {e.body[:300] if e.body else ''}")
                time.sleep(0.2 * (attempt + 1))

    def delete_pod(self, pod: dict) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ns, name = pod_key(pod)
        try:
            client.CoreV1Api(self.api).delete_namespaced_pod(
                name, ns, body={"gracePeriodSeconds": 0, "preconditions": {"uid": pod["metadata"]["uid"]}},
                _preload_content=False)
        except ApiException as e:
            if e.status not in (404, 409):
                self.note(f"delete {ns}/{name}: {e.status} {e.reason}")

    def read_data(self, kind: str, namespace: str, name: str, binary: bool = False) -> dict | None:
        """A ConfigMap's or Secret's data (Secrets base64-decoded); None when it does not exist."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        core = client.CoreV1Api(self.api)
        read = core.read_namespaced_config_map if kind == "ConfigMap" else core.read_namespaced_secret
        try:
            obj = json.loads(read(name, namespace, _preload_content=False).data)
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        if kind == "Secret":
            data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        else:
            data = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
            data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
        if binary:
            return data
        return {k: v.decode("utf-8", "replace") for k, v in data.items() if kind == "Secret" or k in (obj.get("data") or {})}

    # ---- programs, addresses, mount points
    def program_for(self, launch: Launch) -> list[str]:
        key = launch.image if launch.image in self.programs else max(
            (k for k in self.programs if launch.image.startswith(k)), key=len, default=None)
        prog = self.programs.get(key) if key is not None else None
        argv = prog(launch) if callable(prog) else prog
        if argv is None:
            argv = ["true"] if launch.init and launch.spec.get("restartPolicy") != "Always" else self.default_program
            argv = argv(launch) if callable(argv) else argv
        return [str(a) for a in argv]

    def address(self, n: int) -> str:
        n += 1  # .0.1 is the node
        hi, lo = divmod(n, 254)
        return f"{self.subnet}.{hi}.{lo + 1}"

    def mount_point(self, target: str, is_file: bool) -> None:
        """Create a missing mount point (an empty dir or file) on this machine; it stays after :meth:`stop`."""
        with self.lock:
            missing, p = [], Path(target)
            while not p.exists():
                missing.append(p)
                p = p.parent
            for i, d in enumerate(reversed(missing)):
                if is_file and i == len(missing) - 1:
                    d.touch()
                else:
                    d.mkdir()
                self._mount_points.append(d)

    def record(self, launch: Launch) -> None:
        with self.lock:
            self._launches.append(launch)

    # ---- for tests
    def worker(self, namespace: str, name: str) -> PodWorker:
        with self.lock:
            found = [w for w in self.workers.values() if w.key == (namespace, name)]
        if not found:
            raise KeyError(f"pod {namespace}/{name} does not run on {self.node_name}")
        return found[-1]

    def launches(self, namespace: str | None = None, pod: str | None = None) -> list[Launch]:
        with self.lock:
            return [x for x in self._launches if (namespace is None or x.namespace == namespace)
                    and (pod is None or x.pod == pod)]

    def container_pid(self, namespace: str, name: str, container: str | None = None) -> int | None:
        """The host pid of a running container's main process (its first container by default), or None.

        Its mount, UTS and network namespaces and ``/proc/<pid>/environ`` are the container's: an exec
        that enters them (``nsenter -t <pid> -m -u -n``) runs where ``kubectl exec`` would. Used by the
        kubectl stand-in of tests/e2e/test_mpi_frameworks.py (MPIJob v1's kubexec.sh).
        """
        try:
            w = self.worker(namespace, name)
        except KeyError:
            return None
        c = next((c for c in w.mains if container in (None, c.name)), None)
        if c is None or c.state != "running" or c.popen is None or c.popen.poll() is not None:
            return None
        return c.popen.pid

    def exec(self, namespace: str, name: str, argv: list[str], container: str | None = None,
             timeout: float = 30) -> subprocess.CompletedProcess:
        """Run argv in a running pod like ``kubectl exec`` (its network, hostname, mounts and env)."""
        w = self.worker(namespace, name)
        if not w.sandbox:
            raise HarnessError(f"pod {namespace}/{name} has no sandbox (not started, or finished)")
        return w.exec(argv, container=container, timeout=timeout)

    def log(self, namespace: str, name: str, container: str | None = None, restart: int | None = None) -> str:
        """A container's output (the last start, or the given restart count)."""
        found = [x for x in self.launches(namespace, name) if container in (None, x.container)
                 and restart in (None, x.restart)]
        if not found:
            return ""
        p = Path(found[-1].log)
        return p.read_text(errors="replace") if p.exists() else ""
