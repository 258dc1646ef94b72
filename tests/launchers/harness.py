"""A small pod runtime for converted JobSets: each pod its own network namespace, hostname and mounts.

What it reproduces, and from where:
- pods, labels and env: `kf2jobset.runtime.jobset_view` (the same pod expansion the report uses),
  env resolved the kubelet way by `kf2jobset.runtime.pods` with the pod's real address here;
- addresses: one network namespace per pod (`ip netns`), a veth to a bridge that lives in a switch
  namespace of its own, 10.244.0.0/24, no route anywhere else;
- names: `/etc/netns/<ns>/hosts`, which `ip netns exec` binds over /etc/hosts: the kubelet's own
  line, every pod's headless-Service names (<host>.<subdomain>[.<ns>[.svc[.<cluster domain>]]]), and
  short pod hostnames only where the pod's dnsConfig search path would find them; no nameserver;
- hostname: `unshare --uts` then `hostname`;
- volumes: Secret, ConfigMap (items and modes) and emptyDir volumes materialised in a temp dir and
  bind-mounted at each container's mountPath in the pod's private mount namespace;
- init containers run first, in order, then the main container (or a command the test gives).

Everything it starts is a process group it owns; `close()` ends them by id and deletes the namespaces.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.pods import Pod, expand

from ..podnet import (  # noqa: F401 - HarnessError, run, netns_available are used by the tests too
    HarnessError,
    add_pod_netns,
    delete_netns,
    exec_line,
    make_switch,
    netns_available,
    project,
    run,
    ssh_config,
    sshd_config,
    write_netns_etc,
)

SUBNET = "10.244.0"
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"



@dataclass
class Proc:
    pod: Pod
    popen: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass
class Cluster:
    """One JobSet's pods on this machine. Use as a context manager."""

    jobset: dict
    companions: list = field(default_factory=list)
    secrets: dict = field(default_factory=dict)  # Secret name -> {key: bytes}
    roles: dict | None = None  # conv.plan.pod_roles, to name pods by role and replica index
    namespace: str | None = None
    mounts_over_usr_local: str | None = None  # an "image": a prefix with MPI in bin/ and lib/
    cluster_domain: str = "cluster.local"  # the kubelet's --cluster-domain

    _count = 0

    def __post_init__(self):
        self.world = jobset_world(self.jobset, namespace=self.namespace, roles=self.roles)
        Cluster._count += 1
        self.tag = f"k{os.getpid() % 1000}c{Cluster._count % 100}"  # unique per cluster, <= 15-char links
        self.tmp = Path(tempfile.mkdtemp(prefix="kf2js-pods-"))
        self.procs: list[Proc] = []
        self.netns: list[str] = []
        self.created: list[Path] = []
        self.substituted: list[str] = []  # volumes of other kinds, mounted as empty directories
        self.switch = f"{self.tag}sw"
        for n, pod in enumerate(self.world.pods):
            pod.ip = f"{SUBNET}.{n + 10}"

    # ------------------------------------------------------------ setup
    def __enter__(self):
        try:
            self._network()
            hostkey = self.tmp / "ssh_host_ed25519_key"
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hostkey)])
        except Exception:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def ns(self, pod: Pod) -> str:
        return f"{self.tag}p{self.world.pods.index(pod)}"

    def _network(self) -> None:
        self.netns.append(self.switch)
        make_switch(self.switch)
        for n, pod in enumerate(self.world.pods):
            ns = self.ns(pod)
            self.netns.append(ns)
            add_pod_netns(self.switch, ns, f"{self.tag}v{n}", f"{pod.ip}/24")
            # no nameserver: nothing leaves
            write_netns_etc(ns, self.hosts_file(pod), "options timeout:1 attempts:1\n")

    def hosts_file(self, pod: Pod) -> str:
        """/etc/hosts as kubelet writes it, plus the answers kube-dns would give this pod."""
        ns, domain = self.world.namespace, self.cluster_domain
        searches = ((pod.spec.get("dnsConfig") or {}).get("searches") or [])
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
        for other in self.world.pods:
            names = []
            if other is pod:
                names += [f"{pod.hostname}.{pod.subdomain}.{ns}.svc.{domain}", pod.hostname] if pod.subdomain else [pod.hostname]
            if other.subdomain:
                base = f"{other.hostname}.{other.subdomain}"
                names += [base, f"{base}.{ns}", f"{base}.{ns}.svc", f"{base}.{ns}.svc.{domain}"]
                if f"{other.subdomain}.{ns}.svc.{domain}" in searches and other is not pod:
                    names.append(other.hostname)  # the short name, through the search path mpi-operator adds
            names = list(dict.fromkeys(names))
            if names:
                lines.append(f"{other.ip}\t" + " ".join(names))
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ volumes
    def _volume_dir(self, pod: Pod, volume: dict) -> Path:
        d = self.tmp / self.ns(pod) / "vol" / volume["name"]
        if d.exists():
            return d
        d.mkdir(parents=True)
        if "secret" in volume:
            src = volume["secret"]
            data = self.secrets.get(src["secretName"])
            if data is None:
                raise HarnessError(f"Secret {src['secretName']!r} does not exist (the pod would stay ContainerCreating)")
            project(d, data, src.get("items"), src.get("defaultMode", 0o644))
            if "defaultMode" not in src:
                # Kubernetes' 0644 is left only for images that run as a non-root user (mpi-operator's
                # mpiuser); their process does not own the root-owned key, so ssh accepts its mode.
                for f in d.rglob("*"):
                    os.chown(f, 65534, 65534)
        elif "configMap" in volume:
            src = volume["configMap"]
            cm = next((c for c in self.companions if c.get("kind") == "ConfigMap"
                       and c["metadata"]["name"] == src["name"]), None)
            if cm is None:
                raise HarnessError(f"ConfigMap {src['name']!r} does not exist (the pod would stay ContainerCreating)")
            data = {k: v.encode() for k, v in (cm.get("data") or {}).items()}
            project(d, data, src.get("items"), src.get("defaultMode", 0o644))
        elif "emptyDir" not in volume:
            # A data volume (PVC, hostPath …): an empty directory stands in; the probes never read it.
            self.substituted.append(volume["name"])
        return d

    def _ssh_dir(self, pod: Pod, container: dict) -> str:
        """Where this container has the SSH Secret: the image's user keeps its keys there."""
        volumes = {v["name"]: v for v in pod.spec.get("volumes") or []}
        for m in container.get("volumeMounts") or []:
            if "secret" in volumes.get(m["name"], {}):
                return m["mountPath"]
        return "/root/.ssh"

    def _ssh_configs(self, pod: Pod, container: dict) -> tuple[Path, Path]:
        d = self._ssh_dir(pod, container)
        sshd = self.tmp / f"sshd_config-{abs(hash(d))}"
        ssh = self.tmp / f"ssh_config-{abs(hash(d))}"
        # An image whose user's home holds the Secret's mount (mpi-operator's mpiuser images do this).
        sshd.write_text(sshd_config(self.tmp / "ssh_host_ed25519_key", d, accept_env=True))
        ssh.write_text(ssh_config(d))
        return sshd, ssh

    def _mkdirs(self, target: str) -> None:
        missing = []
        p = Path(target)
        while not p.exists():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):
            d.mkdir()
            self.created.append(d)

    def _mount_lines(self, pod: Pod, container: dict) -> list[str]:
        volumes = {v["name"]: v for v in pod.spec.get("volumes") or []}
        lines = [f"hostname {shlex.quote(pod.hostname)}"]
        sshd, ssh = self._ssh_configs(pod, container)
        for path, name in ((sshd, "/etc/ssh/sshd_config"), (ssh, "/etc/ssh/ssh_config")):
            lines.append(f"mount --bind {shlex.quote(str(path))} {name}")
        if self.mounts_over_usr_local:
            lines.append(f"mount --bind {shlex.quote(self.mounts_over_usr_local)} /usr/local")
        for m in container.get("volumeMounts") or []:
            src = self._volume_dir(pod, volumes[m["name"]])
            target = m["mountPath"]
            self._mkdirs(target)  # the mount point: an empty directory on this machine, removed by close()
            lines.append(f"mount --bind {shlex.quote(str(src))} {shlex.quote(target)}")
        lines.append("mkdir -p /run/sshd")
        return lines

    # ------------------------------------------------------------ processes
    def env(self, pod: Pod, container: dict, extra: dict | None = None) -> dict:
        base = {"PATH": BASE_PATH, "HOME": "/root", "HOSTNAME": pod.hostname,
                "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        base.update(dict(pod.env(container)))
        base.update(extra or {})
        return base

    def command(self, pod: Pod, container: dict) -> list[str]:
        """command + args as kubelet runs them ($(VAR) expanded against the container's env)."""
        env = dict(pod.env(container))
        return [expand(str(w), env) for w in (container.get("command") or []) + (container.get("args") or [])]

    def start(self, pod: Pod, argv: list[str] | None = None, extra_env: dict | None = None,
              container: str | None = None, run_init: bool = True, cwd: str | None = None) -> Proc:
        """Start the pod: init containers, then `argv` (default: the main container's own command)."""
        containers = pod.containers()
        c = next((x for x in containers if x.get("name") == container), containers[0])
        script = ["set -e"] + self._mount_lines(pod, c)
        if run_init:
            for init in pod.containers(init=True):
                script += [line for line in self._mount_lines(pod, init) if line.startswith("mount --bind") and "/etc/ssh" not in line]
                script.append(exec_line(self.env(pod, init), self.command(pod, init), exec_=False))
        argv = argv or self.command(pod, c)
        if not argv:
            raise HarnessError(f"{pod.hostname}: the container has no command (the image's entrypoint is not modelled)")
        if argv[0].endswith("sshd") and "-f" in argv[:-1]:
            # The image's own sshd config file: this machine's stand-in for it.
            target = argv[argv.index("-f") + 1]
            if not Path(target).exists():
                self._mkdirs(str(Path(target).parent))
                Path(target).touch()
                self.created.append(Path(target))
            sshd, _ = self._ssh_configs(pod, c)
            script.append(f"mount --bind {shlex.quote(str(sshd))} {shlex.quote(target)}")
        if cwd:
            script.append(f"cd {shlex.quote(cwd)}")
        script.append(exec_line(self.env(pod, c, extra_env), argv))
        log = self.tmp / f"{self.ns(pod)}-{len(self.procs)}.log"
        with open(log, "wb") as out:
            popen = subprocess.Popen(
                ["ip", "netns", "exec", self.ns(pod), "unshare", "--uts", "--fork", "--", "/bin/sh", "-c", "\n".join(script)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        proc = Proc(pod, popen, log)
        self.procs.append(proc)
        return proc

    def wait_port(self, pod: Pod, port: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = run(["ip", "netns", "exec", self.ns(pod), "sh", "-c",
                       f"cat /proc/net/tcp | awk '$4 == \"0A\"' | grep -qi ':{port:04X} '"], check=False)
            if res.returncode == 0:
                return
            time.sleep(0.1)
        raise HarnessError(f"{pod.hostname}: nothing listens on port {port} after {timeout}s")

    def wait(self, proc: Proc, timeout: float) -> int | None:
        """The exit code, or None if it is still running after `timeout` seconds."""
        try:
            return proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def exec(self, pod: Pod, argv: list[str], container: str | None = None, timeout: float = 30,
             extra_env: dict | None = None) -> subprocess.CompletedProcess:
        """Run a command in the pod like `kubectl exec` (same mounts, env and hostname)."""
        proc = self.start(pod, argv, extra_env=extra_env, container=container, run_init=True)
        code = self.wait(proc, timeout)
        if code is None:
            self._kill(proc)
        return subprocess.CompletedProcess(argv, code if code is not None else -9, proc.output(), "")

    # ------------------------------------------------------------ teardown
    def _kill(self, proc: Proc) -> None:
        if proc.popen.poll() is None:
            try:
                os.killpg(proc.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.popen.wait()

    def close(self) -> None:
        for proc in self.procs:
            self._kill(proc)
        for ns in self.netns:
            # also kills processes still inside (sshd sessions that left our process group)
            delete_netns(ns)
        self.netns = []
        for d in reversed(self.created):
            try:
                d.unlink() if d.is_file() else d.rmdir()
            except OSError:
                pass
        self.created = []
        shutil.rmtree(self.tmp, ignore_errors=True)

    def pods(self, role: str) -> list[Pod]:
        return sorted((p for p in self.world.pods if p.key[0] == role), key=lambda p: p.index)


def ssh_secret(tmp: Path) -> dict:
    """A kubernetes.io/ssh-auth Secret's data, with a key made here for the test."""
    key = tmp / "id"
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
    return {"ssh-privatekey": key.read_bytes(), "ssh-publickey": (tmp / "id.pub").read_bytes()}
