"""What the MPI frameworks test runs and how it judges it (tests/e2e/test_mpi_frameworks.py): the mpirun command
of a launcher split into launcher and arguments, the run scripts, the hosts and ranks each world should show
(from the hostfile the conversion or the user wrote), and the checks of each run's ranks and placement."""
from __future__ import annotations

import copy
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kf2jobset.frameworks.mpi import DISCOVER_FILE
from kf2jobset.options import ConvertOptions
from kf2jobset.text.yamlio import to_plain

from ..conftest import REPO
from .differential_cases import Case, JS, KF


PROGRAMS = Path(__file__).resolve().parent / "programs"
PARALLEL = int(os.environ.get("KF2JOBSET_MPI_PARALLEL", "6"))
CASE_TIMEOUT = 300.0
RUN_TIMEOUT = 120  # generous: the machine is loaded (a run takes 1-10 s; see mpi_rank.sh for the runs that never ended)
SYSTEM_PYTHON = "/usr/bin/python3"
DELIVERY_IMAGES = ("ghcr.io/kubeflow/training-v1/kubectl-delivery", "kubeflow/kubectl-delivery")
RANK = ["/bin/sh", str(PROGRAMS / "mpi_rank.sh")]
SSHD = ("/usr/sbin/sshd", "-De")  # what kf2jobset gives a worker without a command, and MPI worker images run
CORES = os.cpu_count() or 1
V2BETA1 = "kubeflow.org/v2beta1"
ONLY = os.environ.get("KF2JOBSET_MPI_ONLY", "")  # a regex over case ids, for local runs


OMPI41, OMPI5, MPICH40 = "Open MPI 4.1", "Open MPI 5", "MPICH 4.0"
OMPI5_AS_WRITTEN = "Open MPI 5, as written"
DISCOVER = "discover_hosts.sh"
BINARIES = {OMPI41: "/usr/bin/mpirun.openmpi", MPICH40: "/usr/bin/mpiexec.hydra", OMPI5: "/usr/local/bin/mpirun"}
# Run label -> the report's note that names a difference between the worlds in that run (none other may differ).
NAMED = {OMPI5: "MPI009", DISCOVER: "MPI004"}
_ONE_DASH = re.compile(r"^-(bind-to|map-by|rank-by)$")
RANK_LINE = re.compile(r"KF2RANK rank=(\d+) size=(\S+) host=(\S+)")
RUN_BLOCK = re.compile(r"^KF2RUN begin (.+?)\n(.*?)^KF2RUN end \1 rc=(\d+) s=(\d+)$", re.S | re.M)




class NotRunnable(Exception):
    pass


# mpirun options followed by a value (those the fixtures and corpus use)
_VALUED = {"-np", "-n", "--np", "-c", "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-x", "--mca", "-mca",
           "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-rank-by", "-H", "--host", "-host"}


def np_of(words: list[str]) -> int:
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
        return tool, ["-np", str(np_of(command[1:prog]))], command[prog:]
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
            out.append((label, [BINARIES[MPICH40], "-np", str(np_of(opts)), *RANK]))
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
    stand_in: str = ""  # v1: the kubectl stand-in the launcher's kubectl-delivery wrote (its broker and namespace)


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
    from kf2jobset.frameworks.mpi import is_gpu_launcher, kubectl_exec

    job = conv.job
    slots = int(job.framework["slotsPerWorker"])
    first = is_gpu_launcher(job) if kubectl_exec(job) else job.framework.get("runLauncherAsWorker")
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


def with_replicas(job: dict, rtype: str, new: int) -> dict:
    """The v1 job with `new` replicas of `rtype`, and its launcher's -np the slots of that size (the edit
    a user makes with it: otherwise mpirun asks for the ranks of the old size)."""
    from kf2jobset.core.convert import convert_job

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
    set_np(spec["containers"][0], np_of([str(w) for k in ("command", "args") for w in c0.get(k) or []]))
    return jobset


def check_in_place(objects: list, options: ConvertOptions) -> tuple[int, str]:
    """`kf2jobset convert --check` (the pre-commit hook's command) over a file holding `objects`."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "job.yaml").write_text(yaml.safe_dump_all([to_plain(o) for o in objects], sort_keys=False))
        args = ["--accept-mpi-ssh", f"--mpi-hostfile={options.mpi_hostfile}"]
        res = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", "--check", *args, d],
                             capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    return res.returncode, res.stdout + res.stderr
