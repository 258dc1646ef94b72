"""Running an MPI case in both worlds (tests/e2e/test_mpi_frameworks.py): the exec broker that stands in for
kubectl exec in v1's launcher, the MPIRunner that creates the v1 job and its conversion with their ConfigMaps
and SSH keys, runs mpirun in each launcher and collects what ranks ran where."""
from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from kf2jobset.frameworks.mpi import DISCOVER_FILE, HOSTFILE_INIT

from ..podnet import ssh_config, sshd_config
from .nodeagent import NodeAgent
from .nodeagent_objects import TERMINAL, is_ready
from .differential_cases import Case, JS, KF
from .differential_runner import Runner, create_priority_classes, create_stand_ins, pod_templates, referenced_objects
from .mpi_runs import (CASE_TIMEOUT, DELIVERY_IMAGES, DISCOVER, MPICH40, MPIOutcome, NAMED, NotRunnable, OMPI41, OMPI5,
                       PROGRAMS, RunResult, SSHD, SYSTEM_PYTHON, V2BETA1, WorldResult, RANK_LINE, RUN_BLOCK, np_of,
                       check_discovery, check_in_place, check_run, command_hostfile, configmap_file, discovered,
                       expected_hosts, launcher_script, placement, resized_jobset, role_of, runs_for, split_command,
                       user_hostfile, with_replicas)


class ExecBroker:
    """The exec API for the kubectl stand-in (see the module docstring), on a Unix socket."""

    def __init__(self, agent: NodeAgent, directory: Path):
        self.agent = agent
        self.path = str(directory / "exec.sock")
        self.calls: list[dict] = []  # {"namespace", "pod", "container", "argv", "exit"}
        self.lock = threading.Lock()
        self.procs: list[subprocess.Popen] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o600)
        self.sock.listen(64)
        self.stopping = False
        threading.Thread(target=self._serve, name="mpi-exec-broker", daemon=True).start()

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _pod(self, namespace: str, name: str) -> dict | None:
        with self.agent.lock:
            return self.agent.pods_informer.store.get((namespace, name))

    def _reply(self, conn, obj: dict) -> None:
        try:
            conn.sendall(json.dumps(obj).encode() + b"\n")
        except OSError:
            pass

    def _handle(self, conn: socket.socket) -> None:
        fds: list[int] = []
        try:
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            req = json.loads(msg)
            if req["op"] == "ready":
                pod = self._pod(req["namespace"], req["pod"])
                self._reply(conn, {"ready": bool(pod and (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod))})
                return
            self._exec(conn, req, fds)
        except Exception as e:  # noqa: BLE001 - the stand-in reports it as an API error
            self._reply(conn, {"error": f"{type(e).__name__}: {e}"})
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            conn.close()

    def _exec(self, conn: socket.socket, req: dict, fds: list[int]) -> None:
        ns, name, container, argv = req["namespace"], req["pod"], req.get("container"), req["argv"]
        call = {"namespace": ns, "pod": name, "container": container, "argv": argv, "exit": None}
        with self.lock:
            self.calls.append(call)
        if self._pod(ns, name) is None:
            self._reply(conn, {"error": f'pods "{name}" not found'})
            return
        pid = self.agent.container_pid(ns, name, container)
        if pid is None:
            self._reply(conn, {"error": f"unable to upgrade connection: container not found or not running in pod {name}"})
            return
        environ = [e for e in Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0") if e]
        proc = subprocess.Popen(["nsenter", "-t", str(pid), "-m", "-u", "-n", "-w", "--", "env", "-i", *environ, *argv],
                                stdin=fds[0], stdout=fds[1], stderr=fds[2], start_new_session=True)
        with self.lock:
            self.procs.append(proc)

        def hangup() -> None:  # the stand-in went away (mpirun killed its agent): end the command
            try:
                conn.recv(1)
            except OSError:
                pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        threading.Thread(target=hangup, daemon=True).start()
        call["exit"] = proc.wait()
        self._reply(conn, {"exit": call["exit"]})
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def execs(self, namespace: str) -> list[dict]:
        with self.lock:
            return [c for c in self.calls if c["namespace"] == namespace]

    def stop(self) -> None:
        self.stopping = True
        self.sock.close()
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()


class MPIRunner:
    def __init__(self, runner: Runner, broker: ExecBroker, files: Path, keys: dict):
        self.runner, self.broker, self.files, self.keys = runner, broker, files, keys
        self.plans: dict = {}  # namespace -> {"launchers", "discovery", "container"}
        self.converted: dict = {}  # case id -> (job, conversion, the file's ConfigMaps as converted)
        self.convert_lock = threading.Lock()
        self.scripts = files / "scripts"
        self.scripts.mkdir(exist_ok=True)
        self.v2beta1: MPIRunner | None = None  # the runner on mpi-operator's stack (the mpi fixture sets it)

    # ---- what each container runs
    def image(self, argv: list[str], launch=None) -> list[str]:
        sshd, ssh = self.ssh_configs(launch)
        prelude = "\n".join([
            "set -e",
            f"mount --bind {shlex.quote(str(self.files / 'openmpi5'))} /usr/local",
            f"mount --bind {shlex.quote(str(sshd))} /etc/ssh/sshd_config",
            f"mount --bind {shlex.quote(str(ssh))} /etc/ssh/ssh_config",
            "mkdir -p /run/sshd",
            'exec "$@"',
        ])
        return ["/bin/sh", "-c", prelude, "kf2js-mpi-image", *argv]

    def ssh_configs(self, launch) -> tuple[Path, Path]:
        """The image's sshd and ssh configuration. An image whose user keeps its keys where the SSH Secret is
        mounted elsewhere than /root/.ssh (mpi-operator's mpiuser images, sshAuthMountPath) reads them
        there; that user does not own the root-owned key, so ssh takes its 0644 mode (the files here are
        given to nobody, as tests/launchers/harness.py does)."""
        secrets = {v["name"] for v in (launch.pod_spec.get("volumes") or [] if launch else []) if "secret" in v}
        volume, where = next(((m["name"], m["mountPath"].rstrip("/")) for m in (launch.spec.get("volumeMounts") or []
                                                                            if launch else []) if m.get("name") in secrets),
                             (None, "/root/.ssh"))
        if where == "/root/.ssh":
            return self.files / "sshd_config", self.files / "ssh_config"
        for f in self.runner.agent.worker(launch.namespace, launch.pod).volumes[volume].glob("*"):
            os.chown(f, 65534, 65534)
        tag = re.sub(r"[^A-Za-z0-9]", "_", where)
        sshd, ssh = self.files / f"sshd_config{tag}", self.files / f"ssh_config{tag}"
        with self.convert_lock:
            if not sshd.exists():
                sshd.write_text(sshd_config(self.files / "hostkey", where))
                ssh.write_text(ssh_config(where))
        return sshd, ssh

    def program(self, launch) -> list[str] | None:
        if launch.image.startswith(DELIVERY_IMAGES):
            return [SYSTEM_PYTHON, "-I", str(PROGRAMS / "mpi_delivery.py"), self.broker.path, SYSTEM_PYTHON,
                    str(PROGRAMS / "mpi_kubectl.py")]
        if launch.init:
            return self.image(launch.command) if launch.container == HOSTFILE_INIT else ["true"]
        role = role_of(launch.labels)
        plan = self.plans.get(launch.namespace)
        if role == "launcher" and plan is not None and launch.container == plan["container"]:
            script = self.scripts / f"{launch.namespace}-{launch.pod}-{launch.restart}.sh"
            runs = runs_for(launch.command, plan["launchers"], plan["discovery"])
            script.write_text(launcher_script(runs, wait_for_hosts=plan.get("wait_for_hosts", False)))
            return self.image(["/bin/sh", str(script)], launch)
        if role == "worker" and not launch.command and KF + "job-role" in launch.labels:
            return self.image(list(SSHD), launch)  # mpi-operator's worker image: sshd is its entrypoint
        return self.image(launch.command or ["sleep", "infinity"], launch)

    # ---- one case
    def convert(self, case: Case):
        """(named job, conversion), once per case and one at a time: converting is CPU work in this
        process, which also answers the pods' DNS, so it is done before the pods run (see ``outcomes``)."""
        with self.convert_lock:
            if case.id not in self.converted:
                job = copy.deepcopy(case.job)
                meta = job.setdefault("metadata", {})
                if not meta.get("name"):
                    meta["name"] = "trial-" + os.urandom(3).hex()  # a Katib trial: Katib names it
                # with the file's ConfigMaps, as the user converts it (their v1 pod names get JS066's Services)
                conv, _, err, configmaps = self.runner.convert_with_peers(job, case.options, case.configmaps,
                                                                          same_names=True)
                assert conv is not None, f"kf2jobset refused the job: {err}"
                self.converted[case.id] = (job, conv, configmaps)
            return self.converted[case.id]

    def run(self, case: Case, launchers=(OMPI41, MPICH40, OMPI5), worlds=("v1", "jobset"), mutate=None) -> MPIOutcome:
        t0 = time.monotonic()
        o = MPIOutcome(case)
        try:
            self._run(case, o, launchers, worlds, mutate)
        except NotRunnable as e:
            o.status, o.detail = "not-runnable", str(e)
        except Exception as e:  # noqa: BLE001 - reported per case
            import traceback

            o.status, o.detail = "failed", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2500:]}"
        o.seconds = time.monotonic() - t0
        return o

    def _run(self, case: Case, o: MPIOutcome, launchers, worlds, mutate) -> None:
        from kubernetes import client

        from kf2jobset.frameworks.mpi import uses_discovery

        job, conv, configmaps_b = self.convert(case)
        jobset, companions = conv.jobset, conv.companions
        if case.resize:
            rtype, new = case.resize
            job = with_replicas(job, rtype, new)
            if case.options.mpi_hostfile == "generated":  # the JobSet of the job as written, edited alike
                jobset = resized_jobset(conv, job, new)
                o.check = check_in_place([jobset, *companions], case.options)
                conv = self.runner.convert(job, case.options)[0]  # read only: the operator's hostfile, -np
            else:  # literal lists: --check names them; the JobSet converted again is what runs
                o.check = check_in_place([resized_jobset(conv, job, new), *companions], case.options)
                conv, _, err = self.runner.convert(job, case.options)
                assert conv is not None, f"kf2jobset refused the resized job: {err}"
                jobset, companions = conv.jobset, conv.companions
        o.notes = {n.code for n in conv.notes}
        o.expected = o.hostfile = expected_hosts(conv)
        c0 = conv.job.replicas["Launcher"].containers[0]
        opts = split_command([str(w) for w in (c0.get("command") or []) + (c0.get("args") or [])])[1]  # or NotRunnable
        o.np = np_of(opts)
        own = command_hostfile(opts)
        if own:
            text = configmap_file(conv.job.replicas["Launcher"].template.get("spec") or {}, c0, own, case.configmaps)
            if text is None:
                raise NotRunnable(f"the launcher's hostfile {own} is not in a ConfigMap of the job's file")
            o.own_hostfile, o.hostfile = own, user_hostfile(text, job["metadata"]["name"])
        discovery = o.discovery = uses_discovery(conv.job)
        plan = {"launchers": launchers, "discovery": discovery, "container": c0.get("name")}
        version = job["apiVersion"].split("/")[1]
        with self.runner.stack.api_client() as api:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            made = []
            if "v1" in worlds:
                ns = self.runner.new_namespace(core, "ma")
                # The node agent projects a ConfigMap volume once (the kubelet re-syncs it about a minute
                # later): the v1 launcher's discover_hosts.sh is read from the API while it runs, see _wait.
                self.plans[ns] = {**plan, "discovery": False, "wait_for_hosts": version != "v1"}
                job_a = copy.deepcopy(job)
                job_a["metadata"]["namespace"] = ns
                own = _create_configmaps(core, ns, case.configmaps)  # the file's own, as written
                refs = {}
                for t in pod_templates(job_a):
                    refs.update(referenced_objects(t.get("spec") or {}))
                create_stand_ins(core, ns, refs, own)
                create_priority_classes(api, [job_a])
                created = custom.create_namespaced_custom_object("kubeflow.org", version, ns, "mpijobs", job_a)
                made.append(("v1", ns, created["metadata"]["name"]))
            if "jobset" in worlds:
                ns = self.runner.new_namespace(core, "mb")
                self.plans[ns] = plan
                jobset, companions = copy.deepcopy(jobset), copy.deepcopy(companions)
                if mutate:
                    mutate(jobset, companions)
                jobset["metadata"]["namespace"] = ns
                secrets = {v["secret"]["secretName"] for t in pod_templates(jobset) for v in (t.get("spec") or {}).get("volumes") or []
                           if "secret" in v}
                for s in secrets:  # the SSH Secret the conversion names, with a key made here
                    core.create_namespaced_secret(ns, {"metadata": {"name": s}, "type": "kubernetes.io/ssh-auth",
                                                       "data": self.keys})
                skip = {("Secret", s) for s in secrets} | _create_configmaps(core, ns, configmaps_b)  # as converted
                for c in companions:  # the hostfile ConfigMap; v1's per-pod Services for the file's ConfigMaps (JS066)
                    c.setdefault("metadata", {})["namespace"] = ns
                    skip.add((c["kind"], c["metadata"]["name"]))
                    assert c["kind"] in ("ConfigMap", "Service"), c["kind"]
                    (core.create_namespaced_config_map if c["kind"] == "ConfigMap" else core.create_namespaced_service)(ns, c)
                refs = {}
                for t in pod_templates(jobset):
                    refs.update(referenced_objects(t.get("spec") or {}))
                create_stand_ins(core, ns, refs, skip)
                create_priority_classes(api, [jobset])
                created = custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", jobset)
                made.append(("jobset", ns, created["metadata"]["name"]))
            try:
                for world, ns, name in made:
                    o.worlds[world] = WorldResult(ns, name)
                self._wait(o, c0.get("name"))
            finally:
                for world, ns, name in made:
                    group, api_version, plural = (("kubeflow.org", version, "mpijobs") if world == "v1"
                                                  else ("jobset.x-k8s.io", "v1alpha2", "jobsets"))
                    try:
                        custom.delete_namespaced_custom_object(group, api_version, ns, plural, name, propagation_policy="Background")
                    except Exception:  # noqa: BLE001
                        pass
        self._judge(o, conv)

    def _launcher_pod(self, ns: str) -> dict | None:
        with self.runner.agent.lock:
            pods = [p for (n, _), p in self.runner.agent.pods_informer.store.items() if n == ns]
        for p in pods:
            labels = p["metadata"].get("labels") or {}
            if role_of(labels) == "launcher":
                return p
        return None

    def _wait(self, o: MPIOutcome, container: str) -> None:
        agent = self.runner.agent
        deadline = time.monotonic() + CASE_TIMEOUT
        pending = dict(o.worlds)
        while pending:
            for world, w in list(pending.items()):
                pod = self._launcher_pod(w.namespace)
                if pod is not None:
                    w.launcher_created = pod["metadata"].get("creationTimestamp", "")
                if world == "jobset":  # when each worker first showed Ready (the JobSet removes them once done)
                    with agent.lock:
                        others = [p for (n, _), p in agent.pods_informer.store.items() if n == w.namespace]
                    for p in others:
                        if (p["metadata"].get("labels") or {}).get(JS + "replicatedjob-name") != "worker":
                            continue
                        for c in (p.get("status") or {}).get("conditions") or []:
                            if c.get("type") == "Ready" and c.get("status") == "True":
                                w.workers_ready.setdefault(p["metadata"]["name"], c.get("lastTransitionTime", ""))
                if world == "v1" and o.discovery and pod is not None and (pod.get("status") or {}).get("phase") == "Running":
                    w.discover_script = self._discover_script(w) or w.discover_script
                if pod is not None and (pod.get("status") or {}).get("phase") in TERMINAL:
                    if world == "v1" and o.discovery and not w.discover_script:
                        w.discover_script = self._discover_script(w)  # the operator stops rewriting it now
                    w.log = agent.log(w.namespace, pod["metadata"]["name"], container)
                    if world == "v1":
                        w.stand_in = self._stand_in(w.namespace, pod["metadata"]["name"])
                    w.execs = self.broker.execs(w.namespace)
                    self._collect(w)
                    del pending[world]
            if pending and time.monotonic() > deadline:
                states = {}
                for world, w in pending.items():
                    with agent.lock:
                        pods = [p for (n, _), p in agent.pods_informer.store.items() if n == w.namespace]
                    states[world] = [(p["metadata"]["name"], (p.get("status") or {}).get("phase")) for p in pods]
                raise AssertionError(f"launcher did not finish within {CASE_TIMEOUT:.0f} s: {states}; agent {agent.events[-5:]}")
            time.sleep(0.3)

    def _stand_in(self, namespace: str, launcher: str) -> str:
        try:
            volume = self.runner.agent.worker(namespace, launcher).volumes.get("mpi-job-kubectl")
        except KeyError:
            return "(the launcher pod is not on this node agent)"
        f = volume / "kubectl" if volume else None
        return f.read_text(errors="replace") if f and f.exists() else "(no kubectl stand-in in the launcher's volume)"

    def _unreached(self, w: WorldResult, want: list[str]) -> str:
        """Why kubexec.sh reached no worker through this world's broker: the stand-in the launcher ran (the broker
        socket and namespace it names), the exec calls for these pods any broker of this runner took, and the API
        server's view of the pods -- so a harness fault and an operator's deed read apart."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        brokers = [self.broker] + ([self.v2beta1.broker] if self.v2beta1 else [])
        calls = [f"{b.path}: {c['namespace']}/{c['pod']} exit {c['exit']}" for b in brokers
                 for c in list(b.calls) if c["pod"] in want]
        pods = []
        with self.runner.stack.api_client() as api:
            for name in want:
                try:
                    p = client.CoreV1Api(api).read_namespaced_pod(name, w.namespace)
                    pods.append(f"{name}: uid {p.metadata.uid} created {p.metadata.creation_timestamp} phase "
                                f"{p.status.phase} deleting {p.metadata.deletion_timestamp}")
                except ApiException as e:
                    pods.append(f"{name}: {e.status} {e.reason}")
        events = [e for e in self.runner.agent.events if any(n in str(e) for n in want)][-10:]
        return (f"\n  this broker: {self.broker.path}, namespace {w.namespace}\n  the stand-in: {w.stand_in.strip()}"
                f"\n  exec calls for {want}: {calls}\n  the API server now: {pods}\n  node agent: {events}")

    def _discover_script(self, w: WorldResult) -> str:
        from kubernetes import client

        with self.runner.stack.api_client() as api:
            cm = client.CoreV1Api(api).read_namespaced_config_map(f"{w.name}-config", w.namespace)
        return (cm.data or {}).get(DISCOVER_FILE, "")

    def _collect(self, w: WorldResult) -> None:
        agent = self.runner.agent
        hostmap = {}
        for x in agent.launches(w.namespace):
            labels = x.labels
            role = role_of(labels)
            index = labels.get(KF + "replica-index") or labels.get(JS + "job-index") or "0"
            if role:
                hostmap[x.hostname.split(".")[0]] = (role, int(index))
            if role == "worker" and not x.init:
                w.sshd_logins += len(re.findall(r"Accepted publickey for root", Path(x.log).read_text(errors="replace")
                                                if x.log and Path(x.log).exists() else ""))
        w.hostmap = hostmap
        w.log = w.log.replace("\0", "")  # PRRTE writes NUL bytes into its messages
        for m in RUN_BLOCK.finditer(w.log):
            label, body, code = m.group(1), m.group(2), int(m.group(3))
            ranks, sizes = {}, set()
            for r in RANK_LINE.finditer(body):
                ranks[int(r.group(1))] = hostmap.get(r.group(3).split(".")[0], r.group(3))
                sizes.add(r.group(2))
            w.runs[label] = RunResult(label, code, body, ranks, sizes,
                                      discovered(body, hostmap) if label == DISCOVER else [], int(m.group(4)))
        if w.discover_script:  # v1: the operator's script as the API had it while the launcher ran, run here
            res = subprocess.run(["/bin/sh", "-c", w.discover_script], capture_output=True, text=True, timeout=30)
            w.runs[DISCOVER] = RunResult(DISCOVER, res.returncode, res.stdout + res.stderr, {}, set(),
                                         hosts=discovered(res.stdout, hostmap))

    def _judge(self, o: MPIOutcome, conv) -> None:
        for world, w in o.worlds.items():
            if not w.runs:
                o.problems.append(f"{world}: the launcher ran nothing; its log:\n{w.log[-2000:]}")
            for label, r in w.runs.items():
                if label == DISCOVER:
                    o.problems += check_discovery(world, o, r)
                else:
                    o.problems += check_run(label, world, o, r)
        v1, js = o.worlds.get("v1"), o.worlds.get("jobset")
        if v1 is not None and conv.job.by_mpi_operator:  # mpi-operator: over SSH too
            if OMPI41 in v1.runs and any(k[0] == "worker" for k, _ in o.hostfile) and not v1.sshd_logins:
                o.problems.append("v1: no worker's sshd accepted a login")
        elif v1 is not None:
            workers = sorted({c["pod"] for c in v1.execs})
            want = sorted(f"{v1.name}-worker-{i}" for k, _ in o.hostfile if k[0] == "worker" for i in [k[1]])
            if OMPI41 in v1.runs and not set(want) <= set(workers):
                o.problems.append(f"v1: kubexec.sh reached {workers}, not every worker {want}{self._unreached(v1, want)}")
        if js is not None and OMPI41 in js.runs and any(k[0] == "worker" for k, _ in o.expected) and not js.sshd_logins:
            o.problems.append("jobset: no worker's sshd accepted a login")
        workers = sum(1 for k, _ in o.expected if k[0] == "worker")
        if js is not None and workers and (len(js.workers_ready) != workers or js.launcher_created < max(js.workers_ready.values())):
            o.problems.append(f"jobset: the launcher pod was created at {js.launcher_created}, not after its {workers} "
                              f"workers were Ready ({js.workers_ready}): dependsOn")
        if v1 is not None and js is not None:
            self._compare_placements(o, v1, js)

    @staticmethod
    def _compare_placements(o: MPIOutcome, v1, js) -> None:
        """Each run's rank placement in both worlds: a difference the report does not name is a problem."""
        for label in sorted(set(v1.runs) | set(js.runs)):
            a, b = v1.runs.get(label), js.runs.get(label)
            if a is None or b is None:
                o.problems.append(f"{label} ran in one world only")
                continue
            pa = (a.hosts if label == DISCOVER else placement(a.ranks)) if a.code == 0 else "fails"
            pb = (b.hosts if label == DISCOVER else placement(b.ranks)) if b.code == 0 else "fails"
            if pa == pb:
                continue
            code = NAMED.get(label)
            named = code if code in o.notes else None
            o.differences.append((label, pa, pb, named))
            if named is None:
                o.problems.append(f"{label}: v1 {pa} vs JobSet {pb}, and the report names no such difference "
                                  f"(notes {sorted(o.notes)})")


# Mount points on this machine that the MPI pods use, kept while MPI pods run (mpi_image.keep_mount_points).
def mpi_mount_points(cases) -> tuple:
    """The image's (/etc/mpi, /opt/kube, /root/.ssh), where the launchers mount the ConfigMaps of their job's file
    (/etc/ring for a hostfile of its own), and the SSH Secret of MPIJob v2beta1 pods (sshAuthMountPath)."""
    out = ["/etc/mpi", "/opt/kube", "/root/.ssh"]
    out += [c.job["spec"]["sshAuthMountPath"] for c in cases if c.job["apiVersion"] == V2BETA1
            and c.job["spec"].get("sshAuthMountPath")]
    for c in cases:
        names = {(cm.get("metadata") or {}).get("name") for cm in c.configmaps}
        for t in pod_templates(c.job):
            spec = t.get("spec") or {}
            vols = {v.get("name") for v in spec.get("volumes") or [] if (v.get("configMap") or {}).get("name") in names}
            out += [m["mountPath"] for ctr in spec.get("containers") or [] for m in ctr.get("volumeMounts") or []
                    if m.get("name") in vols and not m.get("subPath")]
    return tuple(dict.fromkeys(out))


@contextlib.contextmanager
def running_mpi(stack, mount_points: tuple, mpi_operator: bool = False):
    """An :class:`MPIRunner` on ``stack`` with a node agent and exec broker of its own, the MPI image's files and
    ``mount_points`` kept; with ``mpi_operator``, ``.v2beta1`` runs on mpi-operator's stack (started here).
    Fails the test when the launchers (tools/install-launchers.sh) are missing."""
    import pytest

    from tests.launchers.conftest import launchers_root

    from .mpi_image import image_files, keep_mount_points, release_mount_points  # it imports this module

    missing = [p for p in ("/usr/bin/mpirun.openmpi", "/usr/bin/mpiexec.hydra", "/usr/sbin/sshd", "/usr/bin/nsenter",
                           SYSTEM_PYTHON) if not Path(p).exists()]
    o5 = launchers_root() / "openmpi5"
    if not (o5 / "bin" / "mpirun").exists():
        missing.append(str(o5 / "bin" / "mpirun"))
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run tools/install-launchers.sh", pytrace=False)
    files, keys = image_files(o5, "kf2js-mpi-")
    kept = keep_mount_points(mount_points)
    agent = NodeAgent(stack.kubeconfig, {}, namespaces=set(), backoff=(0.5, 5.0))
    broker = ExecBroker(agent, files)
    mr = MPIRunner(Runner(stack, agent), broker, files, keys)
    agent.programs[""] = mr.program
    agent.start()
    later = contextlib.ExitStack()
    try:
        if mpi_operator:
            from .conftest import running_stack

            stack2 = later.enter_context(running_stack("mpi-operator"))
            agent2 = NodeAgent(stack2.kubeconfig, {}, namespaces=set(), backoff=(0.5, 5.0), subnet="10.247")
            (files / "v2beta1").mkdir()
            broker2 = ExecBroker(agent2, files / "v2beta1")
            later.callback(broker2.stop)
            mr.v2beta1 = MPIRunner(Runner(stack2, agent2), broker2, files, keys)
            agent2.programs[""] = mr.v2beta1.program
            agent2.start()
            later.callback(lambda: (agent2.stop(), shutil.rmtree(agent2.workdir, ignore_errors=True)))
        yield mr
    finally:
        later.close()
        broker.stop()
        agent.stop()
        release_mount_points(kept)
        shutil.rmtree(agent.workdir, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)


# KF2JOBSET_MPI_DNSPROBE=FILE: ask the node agent's DNS for a known name every 0.2 s, latency to FILE.
DNS_PROBE = r'''
import socket, struct, sys, time
server, path = sys.argv[1], sys.argv[2]
name = b"".join(bytes([len(p)]) + p.encode() for p in "kubernetes.default.svc.cluster.local".split("."))
q = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + name + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
with open(path, "w", buffering=1) as f:
    while True:
        t = time.monotonic(); s.sendto(q, (server, 53))
        try:
            s.recvfrom(512); f.write(f"{time.time():.1f} {time.monotonic() - t:.3f}\n")
        except socket.timeout:
            f.write(f"{time.time():.1f} timeout\n")
        time.sleep(0.2)
'''


def _create_configmaps(core, namespace: str, configmaps: list) -> set:
    """The job's file's own ConfigMaps, created in `namespace`; their (kind, name)s."""
    made = set()
    for cm in configmaps:
        body = copy.deepcopy(cm)
        body.setdefault("metadata", {})["namespace"] = namespace
        core.create_namespaced_config_map(namespace, body)
        made.add(("ConfigMap", body["metadata"]["name"]))
    return made


def ssh_keys(d: Path) -> dict:
    import base64

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id")], check=True)
    return {"ssh-privatekey": base64.b64encode((d / "id").read_bytes()).decode(),
            "ssh-publickey": base64.b64encode((d / "id.pub").read_bytes()).decode()}
