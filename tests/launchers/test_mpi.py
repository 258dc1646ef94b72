"""mpirun over SSH on converted MPIJobs: Open MPI 4.1 (Debian) and 5 (PyPI), MPICH 4.0 (Debian) and 5
(PyPI), Intel MPI (PyPI impi-rt). Each rank must run on the pod the operator's hostfile put it on.

The launcher runs `mpirun -np <slots> <probe>` with the launcher container's env, mounts and init
containers (not the example's own program, which is not installed here); workers run their
container's command (sshd). The expected placement is derived from the v1 job, not from the output.
"""
from __future__ import annotations

import copy

import pytest

from .common import PROBE, check_placement, convert, hostfile_hosts, mpi_cases, tmpdir
from .conftest import need
from .harness import Cluster

pytestmark = pytest.mark.launchers

# implementation -> (image prefix mounted at /usr/local, [(name, mpirun)])
IMPLEMENTATIONS = {
    "OpenMPI": ("openmpi5", [("Open MPI 4.1", "/usr/bin/mpirun.openmpi"), ("Open MPI 5", "/usr/local/bin/mpirun")]),
    "MPICH": ("mpich5", [("MPICH 4.0", "/usr/bin/mpiexec.mpich"), ("MPICH 5", "/usr/local/bin/mpiexec")]),
    "Intel": ("impi", [("Intel MPI", "/usr/local/bin/mpiexec.hydra")]),
}


def implementation(source: dict) -> str:
    return source["spec"].get("mpiImplementation") or "OpenMPI"


def expected_hosts(conv) -> list[tuple[str, int]]:
    """What the operator's hostfile listed, as JobSet pod hostnames: (hostname, slots) in order."""
    spec = conv.source["spec"]
    slots = int(spec.get("slotsPerWorker") or 1)
    name = conv.jobset["metadata"]["name"]
    rjobs = {rj["name"]: rj for rj in conv.jobset["spec"]["replicatedJobs"]}
    hosts = []
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
    if conv.source["apiVersion"] == "kubeflow.org/v1":
        gpu = any("gpu" in k for c in launcher for k in ((c.get("resources") or {}).get("limits") or {}))
    else:
        gpu = bool(spec.get("runLauncherAsWorker"))
    if gpu:
        hosts.append((f"{name}-launcher-0-0", slots))
    workers = rjobs.get("worker", {}).get("replicas", 0)
    hosts += [(f"{name}-worker-{i}-0", slots) for i in range(workers)]
    return hosts


def sshd_port(conv) -> int:
    """The port the workers' own sshd command listens on (`sshd -De -p 2222`), else 22."""
    for spec in conv.pod_spec.values():
        words = [str(w) for w in (spec["containers"][0].get("command") or []) + (spec["containers"][0].get("args") or [])]
        if words and words[0].endswith("sshd") and "-p" in words[:-1]:
            return int(words[words.index("-p") + 1])
    return 22


def start_workers(cl: Cluster, port: int = 22) -> None:
    workers = cl.pods("worker")
    for w in workers:
        cl.start(w)
    for w in workers:
        cl.wait_port(w, port)


def cluster_domain(args) -> str:
    """The cluster's DNS domain the conversion was told about (--cluster-domain), else Kubernetes' default."""
    given = [a.split("=", 1)[1] for a in args if a.startswith("--cluster-domain=")]
    return given[-1] if given else "cluster.local"


def run_mpi(conv, root, runs=None, mutate_companions=None, *, namespace=None, domain="cluster.local",
            timeout: float = 60) -> dict:
    """Run each of the implementation's mpiruns in one cluster (pods in `namespace`, default: the
    JobSet's own or `default`); {name: (exit code, output, hostfile)}."""
    impl = implementation(conv.source)
    prefix, versions = IMPLEMENTATIONS[impl]
    companions = copy.deepcopy(conv.companions)
    if mutate_companions:
        mutate_companions(companions)
    np = sum(s for _, s in expected_hosts(conv))
    out = {}
    with Cluster(conv.jobset, companions, conv.secrets(tmpdir()), mounts_over_usr_local=need(root / prefix),
                 namespace=namespace, cluster_domain=domain) as cl:
        start_workers(cl, sshd_port(conv))
        launcher = cl.pods("launcher")[0]
        hostfile = cl.exec(launcher, ["cat", "/etc/mpi/hostfile"])
        assert hostfile.returncode == 0, hostfile.stdout
        for label, mpirun in versions:
            if runs and label not in runs:
                continue
            # This machine has 2 cores; the jobs ask for up to 16 slots per pod. Binding is not under test.
            binding = ["--bind-to", "none"] if "openmpi" in mpirun or impl == "OpenMPI" else []
            res = cl.exec(launcher, [mpirun, "-np", str(np), *binding, *PROBE], timeout=timeout)
            out[label] = (res.returncode, res.stdout, hostfile.stdout)
    return out


@pytest.mark.parametrize("path,args", mpi_cases())
def test_ranks_land_on_the_hostfile_workers(netns, root, path, args):
    conv = convert(path, args)
    expected = expected_hosts(conv)
    runs = None
    if sshd_port(conv) != 22 and implementation(conv.source) == "OpenMPI":
        # The workers' sshd listens elsewhere: only PRTE_MCA_plm_ssh_args (Open MPI 5) carries the user's
        # port; the OMPI_MCA_plm_rsh_args Open MPI 4.1 reads is mpi-operator's own (JS061), under v1 too.
        runs = {"Open MPI 5"}
    results = run_mpi(conv, root, runs=runs, domain=cluster_domain(args))
    assert results, "no implementation ran"
    for label, (code, output, hostfile) in results.items():
        assert hostfile_hosts(hostfile) == expected, f"{label}: /etc/mpi/hostfile is\n{hostfile}"
        assert code == 0, f"{label}: mpirun exited {code}\n{output[-3000:]}"
        check_placement(output, expected)


@pytest.mark.parametrize("case", ["mpijob-v2beta1/openmpi", "mpijob-v2beta1/init-reads-operator-volumes"])
def test_generated_hostfile_mode_places_ranks_alike(netns, root, case):
    """--mpi-hostfile generated: the launcher's init container writes the files; same placement. The
    files exist before the user's own init containers run (init-reads-operator-volumes sorts the
    hostfile in one: under v1 the operator's ConfigMap was there before the pod started)."""
    path = __import__("tests.launchers.common", fromlist=["FIXTURES"]).FIXTURES / case / "input.yaml"
    conv = convert(path, ["--mpi-hostfile=generated"])
    inits = [c["name"] for c in conv.pod_spec["launcher"].get("initContainers", [])]
    assert inits[0] == "kf2jobset-hostfile", inits
    assert not conv.companions, "generated mode has no ConfigMap"
    for label, (code, output, _) in run_mpi(conv, root).items():
        assert code == 0, f"{label}: {output[-3000:]}"
        check_placement(output, expected_hosts(conv))


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("case", ["mpijob-v2beta1/generated-hostfile", "mpijob-v2beta1/intel", "mpijob-v2beta1/mpich",
                                  "mpijob-v2beta1/launcher-as-worker", "mpijob-v1/gpu-launcher"])
def test_generated_hostfile_follows_a_replica_edit(netns, root, case, workers):
    """--mpi-hostfile generated, the converted JobSet's workers edited from 2 to `workers` (never
    re-converted): the init container writes the hostfile for the new size in the flavour's format
    (Open MPI slots=N, Intel MPI and MPICH host:N, the launcher first with runLauncherAsWorker or a v1 GPU
    launcher), and every mpirun puts each rank where the operator's hostfile would for the v1 job
    edited alike (SZ001)."""
    from .common import FIXTURES, fixture_args

    args = fixture_args(FIXTURES / case) + ["--mpi-hostfile=generated"]
    if case.startswith("mpijob-v1/") and "--accept-mpi-ssh" not in args:
        args.append("--accept-mpi-ssh")
    conv = convert(FIXTURES / case / "input.yaml", args)
    assert "kf2jobset.dev/sized-for" not in (conv.jobset["metadata"].get("annotations") or {})  # nothing literal
    worker = next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == "worker")
    assert worker["replicas"] == 2 != workers
    worker["replicas"] = workers
    expected = expected_hosts(conv)
    assert sum(1 for h, _ in expected if "-worker-" in h) == workers
    results = run_mpi(conv, root)
    assert results, "no implementation ran"
    for label, (code, output, hostfile) in results.items():
        assert hostfile_hosts(hostfile) == expected, f"{label}: /etc/mpi/hostfile is\n{hostfile}"
        assert code == 0, f"{label}: mpirun exited {code}\n{output[-3000:]}"
        check_placement(output, expected)


def test_mutation_hostfile_line_dropped_is_caught(netns, root):
    """Dropping the last hostfile line must make the placement check fail (the tests can fail)."""
    from .common import FIXTURES

    conv = convert(FIXTURES / "mpijob-v2beta1/openmpi/input.yaml")

    def drop_last_line(companions):
        cm = next(c for c in companions if c["kind"] == "ConfigMap")
        lines = cm["data"]["hostfile"].splitlines(keepends=True)
        cm["data"]["hostfile"] = "".join(lines[:-1])

    results = run_mpi(conv, root, runs={"Open MPI 4.1"}, mutate_companions=drop_last_line)
    code, output, hostfile = results["Open MPI 4.1"]
    assert len(hostfile_hosts(hostfile)) == len(expected_hosts(conv)) - 1
    with pytest.raises(AssertionError):
        assert code == 0, output
        check_placement(output, expected_hosts(conv))


def test_without_prte_variables_open_mpi_5_ignores_the_hostfile(netns, root):
    """Why PRTE_MCA_prte_default_hostfile is there: without it Open MPI 5 runs no rank on a worker."""
    from .common import FIXTURES

    conv = convert(FIXTURES / "mpijob-v2beta1/openmpi/input.yaml")
    for spec in conv.pod_spec.values():
        for c in spec["containers"]:
            c["env"] = [e for e in c.get("env") or [] if not e["name"].startswith("PRTE_MCA_")]
    code, output, _ = run_mpi(conv, root, runs={"Open MPI 5"})["Open MPI 5"]
    workers = {h for h, _ in expected_hosts(conv)}
    assert code != 0 or not any(f"host={w}" in output for w in workers), output[-3000:]
    with pytest.raises(AssertionError):
        assert code == 0, output
        check_placement(output, expected_hosts(conv))


def test_open_mpi_5_reaches_sshd_on_the_port_the_user_set(netns, root):
    """The user's PRTE_MCA_plm_ssh_args (sshd on 2222, as with hostNetwork) stays in
    force. With kf2jobset's own value in its place, as before the fix, Open MPI 5 dials port 22 and fails."""
    from .common import FIXTURES

    conv = convert(FIXTURES / "mpijob-v2beta1/hostnetwork-sshd-port/input.yaml")
    assert sshd_port(conv) == 2222
    code, output, _ = run_mpi(conv, root, runs={"Open MPI 5"})["Open MPI 5"]
    assert code == 0, output[-3000:]
    check_placement(output, expected_hosts(conv))
    for spec in conv.pod_spec.values():
        for c in spec["containers"]:
            for e in c.get("env") or []:
                if e["name"] == "PRTE_MCA_plm_ssh_args":
                    e["value"] = "-o ConnectionAttempts=10"
    code, output, _ = run_mpi(conv, root, runs={"Open MPI 5"}, timeout=30)["Open MPI 5"]
    assert code != 0, f"Open MPI 5 reached sshd on 2222 without the user's port:\n{output[-3000:]}"


def test_namespaceless_mpich_reaches_its_launcher_only_in_namespace_default(netns, root):
    """MPI014: a manifest without a namespace gets a DNS search path naming `default`. MPICH's
    workers dial the launcher by its short hostname, so the job runs in `default` and fails in any
    other namespace, which is why convert warns. (MPICH 4.0 only: the claim is the same for all.)"""
    from .common import FIXTURES

    conv = convert(FIXTURES / "mpijob-v2beta1/mpich/input.yaml")
    assert "MPI014" in conv.stderr, conv.stderr
    expected = expected_hosts(conv)
    code, output, _ = run_mpi(conv, root, runs={"MPICH 4.0"}, namespace="default")["MPICH 4.0"]
    assert code == 0, output[-3000:]
    check_placement(output, expected)
    # the workers' proxies cannot resolve the launcher, and mpiexec waits for them for good
    code, output, _ = run_mpi(conv, root, runs={"MPICH 4.0"}, namespace="ml", timeout=10)["MPICH 4.0"]
    launcher = f"{conv.jobset['metadata']['name']}-launcher-0-0"
    assert code != 0, f"MPICH ran in namespace ml with a search path naming default:\n{output[-3000:]}"
    assert f"unable to get host address for {launcher}" in output, output[-3000:]
