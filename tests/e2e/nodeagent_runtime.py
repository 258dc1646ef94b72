"""The node agent's container runtime (what a CRI runtime does for the kubelet): a pod's sandbox (its
network namespace, /etc/hosts, /etc/resolv.conf), its volumes made into directories, each container
started as a process group in the sandbox with its own UTS and mount namespaces, exec, signals and
teardown. The pod lifecycle that drives it (when to start, restart, stop) is nodeagent_pod.py's.
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..podnet import add_pod_netns, delete_netns, exec_line, project, write_netns_etc
from .nodeagent_env import MissingRef, container_env, field_ref, resource_ref
from .nodeagent_objects import now_iso

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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



class PodRuntime:
    """The runtime half of a PodWorker (mixed into it: the same pod, directory and agent)."""

    # ---- sandbox
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

    def _teardown(self) -> None:
        for c in self.inits + self.mains:
            self._signal(c, signal.SIGKILL, group=True)
            if c.popen is not None:
                c.popen.wait()
        if self.sandbox:
            delete_netns(self.netns)
            self.sandbox = False
