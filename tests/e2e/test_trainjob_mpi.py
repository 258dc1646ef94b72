"""Real Open MPI on kf2jobset's MPI bundle runtimes, through the real Trainer v2.3.0 controller (
"real ... Open MPI runs complete" as TrainJobs; stack flavour `trainer`).

For MPIJob fixtures on each bundle runtime -- kf2jobset-mpi (mpi-operator v2beta1, ``fixtures/mpijob-v2beta1/
openmpi``), kf2jobset-mpi-mpiuser (mpi-operator's non-root images, ``fixtures/targets/trainjob/mpi-mpiuser``)
and kf2jobset-mpi-v1 (training-operator v1: ``fixtures/mpijob-v1/elastic``, horovodrun with discover_hosts.sh,
and ``fixtures/mpijob-v1/user-hostfile-configmap``, whose launcher reads a hostfile of its own naming v1's pods,
reached through JS066's per-pod Services) -- the job's file is converted with ``--target trainjob`` (the
fixture's args, in this test's namespace), the bundle installed as ``kf2jobset runtimes`` prints it, the SSH
Secret the TrainJob names created with a key made here (never in the repo), the companions (hostfile
ConfigMap, the file's ConfigMaps, Services) and the TrainJob created, and the node agent runs the pods
Trainer's JobSet makes:

* workers run the runtime's command (``/bin/sh -c 'exec /usr/sbin/sshd -De ...'``): the REAL sshd;
* the launcher runs the runtime's ``/bin/sh -c 'exec "$@"' --`` over the v1 command in ``spec.trainer.args``,
  as tests/e2e/test_mpi_frameworks.py runs a launcher: the REAL ``mpirun`` of Open MPI 4.1, then of Open MPI 5
  (the launchers install), each over programs/mpi_rank.sh in place of the training program, with the
  job's own options; the launcher exits with the first failing mpirun's status, so ``Complete`` means
  every mpirun succeeded;
* the images are emulated by mpi_runner.MPIRunner's bind mounts (Open MPI 5 over /usr/local, the image's
  sshd/ssh configuration; keys read at the SSH Secret's mount, sshAuthMountPath). The mpiuser image's own
  ``/home/mpiuser/.sshd_config`` is that configuration (the worker command's ``-f`` path points at it).

Checked: the TrainJob reaches ``Complete``; rank r of every mpirun ran on the pod v1's hostfile order gives
slot r (mpi_runs.expected_hosts of the v1 job, or the command's own hostfile: np, slots and rank -> host
placement as the JobSet conversion's runs are judged, mpi_runs.check_run), every worker with a rank accepted
an SSH login; discover_hosts.sh (elastic Horovod) lists every worker. Resized: ``spec.trainer.numNodes``
edited by hand (one more node): ``kf2jobset convert --check`` fails naming the literal hostfile (TJ028: it
cannot follow numNodes); with the values the record lists edited too (hostfile, the launcher's ``-np`` for
the new slots, ``sized-for``) -- the TrainJob then equals the v1 job resized and converted again --
``--check`` passes and the job runs at the new size with v1's hostfile and ranks for that size. And the check
bites: kf2jobset-mpi's hostfile with its lines reversed runs to ``Complete`` with ranks the check rejects for
both mpiruns.

Knob: ``KF2JOBSET_TJMPI_ONLY=REGEX`` over the case ids (e.g. ``mpiuser``).
"""
from __future__ import annotations

import copy
import os
import re
import shutil
import time
import types
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from ..fixture_cases import fixture_args
from ..templates import case_values, fill
from .mpi_image import image_files, keep_mount_points, release_mount_points
from .mpi_runner import MPIRunner
from .mpi_runs import (DISCOVER, OMPI41, OMPI5, RANK_LINE, RUN_BLOCK, SYSTEM_PYTHON,
                       MPIOutcome, check_run, command_hostfile, configmap_file, expected_hosts, launcher_script, np_of,
                       placement, runs_for, set_np, split_command, user_hostfile, with_replicas)
from .trainer_harness import wait_complete
from .trainer_harness import agent_for, core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import REPO_FIXTURES, create_trainjob_after_its_runtime
from .trainjob_harness import bundle  # noqa: F401 (the fixture)

# case id -> (fixture, the bundle runtime it lands on)
CASES = {"mpi": ("mpijob-v2beta1/openmpi", "kf2jobset-mpi"),
         "mpiuser": ("targets/trainjob/mpi-mpiuser", "kf2jobset-mpi-mpiuser"),
         "mpi-v1": ("mpijob-v1/elastic", "kf2jobset-mpi-v1"),
         "mpi-v1-own-hostfile": ("mpijob-v1/user-hostfile-configmap", "kf2jobset-mpi-v1")}
RESIZED = ("mpi", "mpiuser", "mpi-v1")  # the own hostfile names v1's pods: nothing of kf2jobset's sizes it
ONLY = os.environ.get("KF2JOBSET_TJMPI_ONLY", "")
# the check bites: kf2jobset's hostfile with its worker lines swapped runs, and its ranks are not v1's
MUTATED = "mpi-hostfile-swapped"
IDS = [i for i in [*CASES, *(f"{c}-numNodes-edited" for c in RESIZED), MUTATED] if re.search(ONLY, i)]
TIMEOUT = 600  # a TrainJob to Complete: the machine is loaded, two mpiruns of up to 2 min each
ACCEPTED = re.compile(r"Accepted publickey for root")
# The pods' mount points on this machine, kept while this module runs (mpi_image.keep_mount_points).
MOUNT_POINTS = ("/etc/mpi", "/root/.ssh", "/home/mpiuser/.ssh", "/etc/ring")


@pytest.fixture(scope="module")
def images(netns_ok):
    """The emulated image's files (mpi_runner.MPIRunner reads them): Open MPI 5, sshd/ssh config, a host key,
    and the user's SSH key for the Secret."""
    from tests.launchers.conftest import launchers_root

    o5 = launchers_root() / "openmpi5"
    missing = [p for p in ("/usr/bin/mpirun.openmpi", "/usr/sbin/sshd", SYSTEM_PYTHON, str(o5 / "bin" / "mpirun"))
               if not Path(p).exists()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run tools/install-launchers.sh", pytrace=False)
    files, keys = image_files(o5, "kf2js-tjmpi-")
    kept = keep_mount_points(MOUNT_POINTS)
    try:
        yield files, keys
    finally:
        release_mount_points(kept)
        shutil.rmtree(files, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)


def v1_file(case: Path, ns: str) -> tuple[list[dict], list[str]]:
    """The fixture's documents (the MPIJob first, then its ConfigMaps), placed in `ns` (the hostfile then names
    pods there), and the fixture's args."""
    docs = [d for d in yaml.safe_load_all(fill((case / "input.yaml").read_text(), case_values(case))) if d]
    for d in docs:
        d["metadata"]["namespace"] = ns
    docs.sort(key=lambda d: d.get("kind") != "MPIJob")
    assert [d["kind"] for d in docs].count("MPIJob") == 1
    return docs, [a for a in fixture_args(case) if a not in ("--target", "trainjob")]


def to_trainjob(docs: list[dict], args: list[str]) -> list[dict]:
    result = CliRunner().invoke(main, ["convert", "-", *args, "--target", "trainjob"], input=yaml.safe_dump_all(docs),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def check(objects: list[dict], tmp: Path) -> tuple[int, str]:
    """`kf2jobset convert --check` (the pre-commit hook's command) over a file holding `objects`."""
    (tmp / "job.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    result = CliRunner().invoke(main, ["convert", "--check", "--target", "trainjob", str(tmp)])
    return result.exit_code, result.output


def launcher_program(mr: MPIRunner, launchers: tuple):
    """What each container of the TrainJob's pods runs (see the module docstring)."""
    def program(launch) -> list[str]:
        argv = list(launch.command)
        if argv[:4] == ["/bin/sh", "-c", 'exec "$@"', "--"]:  # the launcher: its v1 command, mpirun for real
            script = mr.scripts / f"{launch.namespace}-{launch.pod}-{launch.restart}.sh"
            text = launcher_script(runs_for(argv[4:], launchers, "/etc/mpi/discover_hosts.sh" in argv))
            # the launcher's status is the first failing run's (launcher_script itself ends `exit 0`)
            failing = text.replace("; rc=$?\n", "; rc=$?; [ $rc -eq 0 ] || failed=${failed:-$rc}\n")
            assert failing != text and text.endswith("exit 0\n"), text
            script.write_text(failing[:-len("exit 0\n")] + "exit ${failed:-0}\n")
            return mr.image(["/bin/sh", str(script)], launch)
        assert argv[:2] == ["/bin/sh", "-c"] and argv[2].startswith("exec /usr/sbin/sshd -De"), argv
        sshd, _ = mr.ssh_configs(launch)  # the image's sshd configuration, also where `-f` points (mpiuser)
        return mr.image(["/bin/sh", "-c", argv[2].replace("/home/mpiuser/.sshd_config", str(sshd)), *argv[3:]], launch)
    return program


def hostmap_of(agent, ns: str, name: str) -> dict:
    """Pod hostname -> (role, index) in Trainer's layout: <name>-<replicatedJob>-0-<completion index>."""
    out = {}
    for x in agent.launches(ns):
        m = re.match(rf"^{re.escape(name)}-(worker|launcher)-0-(\d+)$", x.hostname)
        assert m, f"{x.hostname} is not a pod of Trainer's layout for {name}"
        out[x.hostname] = (m.group(1), int(m.group(2)))
    return out


@pytest.mark.parametrize("case_id", IDS)
def test_real_open_mpi_runs_a_converted_mpijob_on_its_bundle_runtime(custom, core, tns, agent_for, bundle, images,
                                                                     tmp_path, case_id):
    from kubernetes import client

    from kf2jobset.core.convert import convert_job
    from kf2jobset.frameworks.mpi import uses_discovery
    from kf2jobset.options import ConvertOptions

    files, keys = images
    fixture, runtime = CASES[case_id.removesuffix("-numNodes-edited").removesuffix("-hostfile-swapped")]
    docs, args = v1_file(REPO_FIXTURES / fixture, tns)
    job, configmaps = docs[0], docs[1:]
    out = to_trainjob(docs, args)
    (trainjob,) = [o for o in out if o["kind"] == "TrainJob"]
    assert trainjob["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                              "name": runtime} and runtime in bundle
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    workers = job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
    assert nodes == workers
    if case_id.endswith("-numNodes-edited"):
        edited = copy.deepcopy(trainjob)
        edited["spec"]["trainer"]["numNodes"] = nodes + 1  # the size knob, edited by hand
        code, said = check([*(o for o in out if o is not trainjob), edited], tmp_path)
        # the hostfile lists the workers by name: it cannot follow numNodes, and --check says so (TJ028)
        assert code == 1 and ": resized: " in said and "/etc/mpi/hostfile" in said, said
        # then the values the record lists, by hand: -np for the new slots (as mpi_runs.with_replicas edits v1's),
        # sized-for; the hostfile is v1's at that size. That TrainJob is the v1 job resized and converted again.
        job = with_replicas(job, "Worker", nodes + 1)
        out = to_trainjob([job, *configmaps], args)
        again = next(o for o in out if o["kind"] == "TrainJob")
        set_np({"args": edited["spec"]["trainer"]["args"]}, np_of(split_command(
            [str(w) for w in again["spec"]["trainer"]["args"]])[1]))
        edited["metadata"]["annotations"]["kf2jobset.dev/sized-for"] = f"numNodes={nodes + 1}"
        assert edited == again
        out = [o if o["kind"] != "TrainJob" else edited for o in out]
        trainjob, nodes = edited, nodes + 1
        code, said = check(out, tmp_path)
        assert code == 0 and "resized" not in said, said
    if case_id == MUTATED:
        hostfile = next(o for o in out if o["kind"] == "ConfigMap" and "hostfile" in o.get("data", {}))["data"]
        hostfile["hostfile"] = "".join(reversed(hostfile["hostfile"].splitlines(keepends=True)))
    conv = convert_job(copy.deepcopy(job), ConvertOptions(accept_mpi_ssh=True))
    o = MPIOutcome(case=None, expected=expected_hosts(conv))
    opts = split_command([str(w) for w in trainjob["spec"]["trainer"]["args"]])[1]
    o.np, o.own_hostfile = np_of(opts), command_hostfile(opts) or ""
    o.hostfile = o.expected  # v1's hostfile order: the operator's, or the one the launcher's command names
    if o.own_hostfile:  # in a ConfigMap of the file; its hosts are v1's pod names (JS066's Services)
        c0 = conv.job.replicas["Launcher"].containers[0]
        text = configmap_file(conv.job.replicas["Launcher"].template.get("spec") or {}, c0, o.own_hostfile, configmaps)
        o.hostfile = user_hostfile(text, job["metadata"]["name"])
    discovery = uses_discovery(conv.job)
    assert len(o.expected) == nodes and {k[0] for k, _ in o.expected} == {"worker"}

    launchers = (OMPI41, OMPI5)
    agent = agent_for({})
    mr = MPIRunner(types.SimpleNamespace(agent=agent), None, files, keys)
    agent.programs[""] = launcher_program(mr, launchers)
    name = trainjob["metadata"]["name"]
    secrets = {v["secret"]["secretName"] for p in trainjob["spec"]["runtimePatches"]
               for r in p["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
               for v in r["template"]["spec"]["template"]["spec"].get("volumes") or [] if "secret" in v}
    assert secrets == {f"{name}-ssh"}
    for s in secrets:  # the SSH Secret the user provides (MPI001/MPI003), with a key made here
        core.create_namespaced_secret(tns, client.V1Secret(metadata=client.V1ObjectMeta(name=s),
                                                           type="kubernetes.io/ssh-auth", data=keys))
    t0 = time.monotonic()
    for obj in out:  # the file's ConfigMaps, kf2jobset's hostfile ConfigMap and per-pod Services, the TrainJob
        assert obj["kind"] in ("ConfigMap", "Service", "TrainJob"), obj["kind"]
        obj = copy.deepcopy(obj)
        obj["metadata"]["namespace"] = tns
        if obj["kind"] == "Service":
            core.create_namespaced_service(tns, obj)
        else:
            create_trainjob_after_its_runtime(custom, core, obj, tns)
    wait_complete(custom, tns, name, timeout=TIMEOUT, agent=agent)
    took = time.monotonic() - t0

    hostmap = hostmap_of(agent, tns, name)
    assert sorted(hostmap.values()) == [("launcher", 0)] + [("worker", i) for i in range(nodes)]
    starts = [x for x in agent.launches(tns) if hostmap[x.hostname][0] == "launcher"]
    assert len(starts) == 1, f"the launcher ran {len(starts)} times (a failed mpirun is retried): {agent.events[-10:]}"
    launcher = starts[0]
    log = agent.log(tns, launcher.pod, launcher.container).replace("\0", "")
    runs = {m.group(1): m for m in RUN_BLOCK.finditer(log)}
    assert set(runs) == set(launchers) | ({DISCOVER} if discovery else set()), log[-3000:]
    problems, shown = [], {}
    for label in launchers:
        m = runs[label]
        lines = list(RANK_LINE.finditer(m.group(2)))
        ranks = {int(r.group(1)): hostmap.get(r.group(3).split(".")[0], r.group(3)) for r in lines}
        sizes = {r.group(2) for r in lines}
        result = types.SimpleNamespace(code=int(m.group(3)), ranks=ranks, sizes=sizes, output=m.group(2))
        problems += check_run(label, "jobset", o, result)  # the hostfile's slots in order, np ranks
        shown[label] = placement(ranks)
    if discovery:  # every worker by its hostfile name, slots as v1's operator printed them
        printed = [ln.strip() for ln in runs[DISCOVER].group(2).splitlines() if ln.strip()]
        want = [ln.split()[0] + ":" + ln.split("=")[1] for ln in
                next(c for c in out if c["kind"] == "ConfigMap")["data"]["hostfile"].splitlines()]
        assert printed == want, runs[DISCOVER].group(0)
    print(f"\n[{runtime}] {case_id}: TrainJob {name} with numNodes {nodes} Complete in {took:.1f} s; np {o.np}; "
          + "; ".join(f"{label} ranks per pod {p}" for label, p in shown.items()))
    if case_id == MUTATED:
        assert [p.split(":")[0] for p in problems] == [f"jobset {label}" for label in launchers], problems
        return
    assert not problems, "\n\n".join(problems)
    with_ranks = {k for p in shown.values() for k in p}
    for x in agent.launches(tns):
        key = hostmap[x.hostname]
        if key[0] == "worker" and key in with_ranks:
            logins = len(ACCEPTED.findall(Path(x.log).read_text(errors="replace") if x.log else ""))
            assert logins, f"{x.pod}: its sshd accepted no login\n{agent.log(tns, x.pod, x.container)[-1500:]}"
