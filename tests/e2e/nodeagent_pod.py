"""The node agent's pod lifecycle (the kubelet's pod worker): init containers in order, sidecars,
restarts with back-off, readiness probes, the pod phase, the active deadline, graceful deletion and
the pod status written to the API. The processes themselves are PodRuntime's (nodeagent_runtime.py).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kf2jobset.runtime.pods import expand

from .nodeagent_env import MissingRef, container_env
from .nodeagent_launch import Launch
from .nodeagent_objects import TERMINAL, now_iso, pod_hostname, pod_key
from .nodeagent_runtime import Ctr, PodRuntime

if TYPE_CHECKING:
    from .nodeagent import NodeAgent


class PodWorker(PodRuntime, threading.Thread):
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
            if self._past_deadline(now):
                return
            for c in self.inits + self.mains:
                changed |= self._reap(c)
            changed |= self._restart_sidecars(now)
            stepped, done = self._init_step(policy, now) if not self.initialized else self._main_step(policy, now)
            if done:
                return
            if changed or stepped:
                self._write_status()
            self._wait(0.1)

    def _past_deadline(self, now: float) -> bool:
        """The kubelet's activeDeadlineHandler: past activeDeadlineSeconds the pod fails, its containers are stopped."""
        deadline = self.pod["spec"].get("activeDeadlineSeconds")
        if deadline is None or now - self.started < float(deadline):
            return False
        self.phase, self.reason = "Failed", "DeadlineExceeded"
        self.message = f"Pod was active on the node longer than the specified deadline ({deadline} s)"
        self._finish()
        return True

    def _restart_sidecars(self, now: float) -> bool:
        """Sidecars always come back; True when one changed."""
        changed = False
        for c in self.inits:
            if c.sidecar and c.state == "terminated":
                self._restart_later(c)
                changed = True
            if c.sidecar and c.started_once and c.state == "waiting" and now >= c.next_start:
                self._start(c)
                changed = True
        return changed

    def _init_step(self, policy: str, now: float) -> tuple[bool, bool]:
        """The init containers in order, each to completion (a sidecar only started): (changed, pod finished)."""
        changed = False
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
                    return changed, True
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
        return changed, False

    def _main_step(self, policy: str, now: float) -> tuple[bool, bool]:
        """The main containers restarted as the policy says, probed, and the pod's phase: (changed, pod finished)."""
        changed = False
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
            return changed, True
        if phase != self.phase:
            self.phase, changed = phase, True
        return changed, False

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

    # ---- ending
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
