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

The agent is split along the parts above: nodeagent_objects.py (pod keys, readiness, quantities,
hostnames), nodeagent_env.py (the kubelet's env), nodeagent_dns.py (CoreDNS's records and replies),
nodeagent_watch.py (the informers), nodeagent_runtime.py (sandbox, volumes, processes: the CRI
runtime's part), nodeagent_pod.py (the pod lifecycle and status: the kubelet's pod worker),
nodeagent_launch.py (programs and the record of each container start); this module is the Node,
the scheduler, the DNS server and the control loop that ties them together.
"""
from __future__ import annotations

import base64
import ctypes
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..podnet import HarnessError, delete_netns, make_switch, netns_available
from .nodeagent_dns import dns_answer, dns_records
from .nodeagent_env import container_env
from .nodeagent_launch import OWN_COMMAND, Launch, Program
from .nodeagent_objects import TERMINAL, now_iso, pod_key
from .nodeagent_pod import PodWorker
from .nodeagent_watch import Informer

__all__ = ["NodeAgent", "Launch", "OWN_COMMAND", "container_env", "dns_records", "netns_available", "running_agent"]

CLONE_NEWNET = 0x40000000


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


@contextmanager
def running_agent(kubeconfig: str, programs: dict[str, Program] | None = None, **kw):
    """A started :class:`NodeAgent` (``kw`` as its constructor takes them); stopped, and its work directory
    removed, afterwards."""
    agent = NodeAgent(kubeconfig, programs, **kw)
    agent.start()
    try:
        yield agent
    finally:
        agent.stop()
        shutil.rmtree(agent.workdir, ignore_errors=True)
