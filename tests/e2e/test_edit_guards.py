"""The `convert --check` edit guards held against real runs: what a hand edit of a converted JobSet that the
check names really does to the job, and that what the check asks for instead really runs.

* ``renamed`` (kf2jobset/checks/name_binding.py): fixtures/mpijob-v2beta1/openmpi converted (the hostfile ConfigMap),
  the JobSet's ``metadata.name`` changed by hand. The real JobSet v0.12.0 + Job controllers run it with the
  real Open MPI 4.1 the MPI e2e uses (its harness: tests/e2e/mpi_runner.py, the JobSet world alone, on the
  training-operator stack): the hostfile still names the old JobSet's pods, so mpirun reaches no worker and
  fails. The v1 job converted again with ``--name NEW`` passes --check and its ranks land where the
  operator's hostfile puts them (``expected_hosts``: slotsPerWorker per worker, in order); so do those of the
  ``--mpi-hostfile generated`` conversion renamed by hand, the check's other way out (it passes --check).
* a fine edit (``resized-generated``): the same job converted with ``--mpi-hostfile generated``, its worker
  replicas (and the launcher's -np) edited by hand to one more worker: --check passes, and the ranks land on
  every worker of the new size.
* ``reshaped`` (kf2jobset/checks/layout_guard.py): fixtures/pytorchjob/master-workers converted, a replicatedJob of
  one pod (a sleep container) added by hand. With real torch (the frameworks venv, tests/e2e/programs/
  torch_prog.py through tests/e2e/frameworks_harness.py) every rank reads WORLD_SIZE 5 (the JobSet's
  global-replicas label counts the added pod) and ``init_process_group`` waits for a rank that never
  comes: every rank fails at its timeout and the JobSet does not succeed. The same JobSet without the
  edit succeeds with every rank ok.

Each case starts its own harness (node agent), and runs its two JobSets at once in their own namespaces.
Run alone: ``python -m pytest tests/e2e/test_edit_guards.py`` (root; the stack, tools/install-launchers.sh,
tools/install-frameworks.sh). ``KF2JOBSET_GUARDS_ONLY=REGEX`` selects the cases (``renamed``, ``reshaped``).
"""
from __future__ import annotations

import copy
import dataclasses
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from .differential_cases import JS, fixture_cases
from .frameworks_harness import (MUTATION_TIMEOUT, check_jobset_pods_ok, framework_pythons, framework_runner)
from .mpi_runner import mpi_mount_points, running_mpi
from .mpi_runs import OMPI41, check_in_place, fill, placement

ONLY = os.environ.get("KF2JOBSET_GUARDS_ONLY", "")
RENAMED_CASE = "mpijob-v2beta1/openmpi"
RESHAPED_CASE = "pytorchjob/master-workers"
ADDED = "metrics"  # the replicatedJob added by hand beside the ranks


def selected(name: str):
    """A case KF2JOBSET_GUARDS_ONLY leaves out is skipped before its harness starts."""
    return pytest.mark.skipif(bool(ONLY) and not re.search(ONLY, name), reason=f"KF2JOBSET_GUARDS_ONLY={ONLY} leaves out {name}")


def _case(case_id: str):
    case = next((c for c in fixture_cases() if c.id == case_id), None)
    assert case is not None, f"fixture {case_id} is gone: this module runs it"
    return case


@pytest.fixture(scope="module")
def mpi(stack, netns_ok):
    with running_mpi(stack, mpi_mount_points([_case(RENAMED_CASE)])) as mr:
        yield mr


@pytest.fixture
def torch_runner(stack, netns_ok):
    pythons = framework_pythons()
    if not os.access(pythons["torch"], os.X_OK):
        pytest.fail(f"no torch venv at {pythons['torch']}: run `bash tools/install-frameworks.sh`", pytrace=False)
    # a subnet of its own: the MPI cases' node agent (module scope) still runs
    with framework_runner(stack, pythons, subnet="10.250") as runner:
        harness = runner.program

        def program(launch):  # the added pod runs its own command (a sleep), every other one the harness's program
            if launch.labels.get(JS + "replicatedjob-name") == ADDED:
                return launch.command
            return harness(launch)

        runner.program = program
        yield runner


# ---------------------------------------------------------------------------------------------
# renamed


@selected("renamed")
def test_a_renamed_mpi_jobset_loses_its_hosts(mpi):
    case = _case(RENAMED_CASE)
    job, conv, _ = mpi.convert(case)
    new = f"{job['metadata']['name']}-renamed"

    def rename(jobset, companions):  # what a user does: the JobSet's name only, the ConfigMap as written
        jobset["metadata"]["name"] = new

    renamed = copy.deepcopy(conv.jobset)
    rename(renamed, [])
    code, out = check_in_place([renamed, *conv.companions], case.options)
    print(f"\n[guards] --check on the renamed JobSet: rc {code}\n{out}")
    assert code == 1 and ": renamed: " in out and f"--name {new}" in out, out

    again = dataclasses.replace(case, id=f"{case.id}[--name {new}]", options=dataclasses.replace(case.options, name=new))
    _, conv2, _ = mpi.convert(again)
    assert conv2.jobset["metadata"]["name"] == new
    code2, out2 = check_in_place([conv2.jobset, *conv2.companions], again.options)
    assert code2 == 0 and "renamed" not in out2, out2

    # the message's other way: with --mpi-hostfile generated the launcher writes the hostfile from its own pod's
    # name, so the same rename by hand is fine (--check passes) and runs
    generated = dataclasses.replace(case, id=f"{case.id}[generated]",
                                    options=dataclasses.replace(case.options, mpi_hostfile="generated"))
    _, conv3, _ = mpi.convert(generated)
    renamed3 = copy.deepcopy(conv3.jobset)
    rename(renamed3, [])
    code3, out3 = check_in_place([renamed3, *conv3.companions], generated.options)
    assert code3 == 0 and "renamed" not in out3, out3

    with ThreadPoolExecutor(3) as pool:
        broken, fixed, gen = pool.map(lambda a: mpi.run(a[0], launchers=(OMPI41,), worlds=("jobset",), mutate=a[1]),
                                      [(case, rename), (again, None), (generated, rename)])
    assert {o.status for o in (broken, fixed, gen)} == {"ran"}, (broken.detail, fixed.detail, gen.detail)
    b = broken.worlds["jobset"].runs[OMPI41]
    print(f"[guards] renamed JobSet {broken.worlds['jobset'].name}: {OMPI41} rc {b.code}, ranks per pod "
          f"{placement(b.ranks)} ({broken.seconds:.0f} s); mpirun said:\n{b.output.strip()[:700]}\n...\n{b.output.strip()[-500:]}")
    assert b.code != 0, f"the renamed JobSet's mpirun succeeded: ranks {placement(b.ranks)}\n{b.output[-1500:]}"
    assert f"{job['metadata']['name']}-worker-" in b.output, f"mpirun did not try the old JobSet's hosts:\n{b.output[-1500:]}"
    assert not any(isinstance(k, tuple) and k[0] == "worker" for k in b.ranks.values()), placement(b.ranks)
    assert broken.worlds["jobset"].sshd_logins == 0, "a worker's sshd accepted the renamed launcher"

    f = fixed.worlds["jobset"].runs[OMPI41]
    want = fill(fixed.expected, fixed.np)
    print(f"[guards] converted again with --name {new}: {OMPI41} rc {f.code}, ranks per pod {placement(f.ranks)} "
          f"({fixed.seconds:.0f} s); the operator's hostfile: {placement(want)}")
    assert not fixed.problems, "\n\n".join(fixed.problems)
    assert f.code == 0 and f.ranks == want and any(k[0] == "worker" for k in want.values()), (placement(f.ranks), placement(want))

    g = gen.worlds["jobset"].runs[OMPI41]
    print(f"[guards] renamed by hand, generated hostfile: {OMPI41} rc {g.code}, ranks per pod {placement(g.ranks)} "
          f"({gen.seconds:.0f} s)")
    assert not gen.problems, "\n\n".join(gen.problems)
    assert g.code == 0 and g.ranks == fill(gen.expected, gen.np) == want, (placement(g.ranks), placement(want))


# ---------------------------------------------------------------------------------------------
# a fine edit: the worker replicas, with the hostfile the launcher writes at start


@selected("resized-generated")
def test_resizing_a_generated_hostfile_jobset_passes_and_runs(mpi):
    case = _case(RENAMED_CASE)
    new = case.job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] + 1
    fine = dataclasses.replace(case, id=f"resized:{case.id}:worker={new}[generated]", resize=("Worker", new),
                               options=dataclasses.replace(case.options, mpi_hostfile="generated"))
    # the runner edits the JobSet written for the job as written (replicas, -np) and runs --check on it
    o = mpi.run(fine, launchers=(OMPI41,), worlds=("jobset",))
    assert o.status == "ran", o.detail
    code, out = o.check
    print(f"\n[guards] --check on the JobSet resized by hand to {new} workers (generated hostfile): rc {code}\n{out}")
    assert code == 0 and "resized" not in out and "reshaped" not in out, out
    r, want = o.worlds["jobset"].runs[OMPI41], fill(o.expected, o.np)
    print(f"[guards] {OMPI41} rc {r.code}, ranks per pod {placement(r.ranks)} ({o.seconds:.0f} s); the operator's "
          f"hostfile at {new} workers: {placement(want)}")
    assert not o.problems, "\n\n".join(o.problems)
    assert r.code == 0 and r.ranks == want and {k for k in want.values() if k[0] == "worker"} == {
        ("worker", i) for i in range(new)}, (placement(r.ranks), placement(want))


# ---------------------------------------------------------------------------------------------
# reshaped


def add_replicated_job(jobset, companions):
    """A replicatedJob of one pod added by hand beside the ranks (a metrics exporter, here a sleep)."""
    jobset["spec"]["replicatedJobs"].append({"name": ADDED, "replicas": 1, "template": {"spec": {
        "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": ADDED, "image": "busybox:1.36", "command": ["sleep", "20"]}]}}}}})


@selected("reshaped")
def test_an_added_replicated_job_breaks_the_torch_rendezvous(torch_runner):
    case = _case(RESHAPED_CASE)
    conv, _, err = torch_runner.convert(copy.deepcopy(case.job), case.options)
    assert conv is not None, err
    edited = copy.deepcopy(conv.jobset)
    add_replicated_job(edited, [])
    code, out = check_in_place([edited, *conv.companions], case.options)
    print(f"\n[guards] --check on the reshaped JobSet: rc {code}\n{out}")
    assert code == 1 and ": reshaped: " in out and f"replicatedJob {ADDED} added" in out, out
    code0, out0 = check_in_place([conv.jobset, *conv.companions], case.options)
    assert code0 == 0 and "reshaped" not in out0, out0

    # the edited one with the programs' short timeout: it is expected to fail, and the wait is for that
    with ThreadPoolExecutor(2) as pool:
        broken, whole = pool.map(lambda a: torch_runner.run_case(case, mutate=a[0], only_jobset=True, timeout=a[1]),
                                 [(add_replicated_job, MUTATION_TIMEOUT), (None, 120)])
    assert broken.status == "ran" and whole.status == "ran", (broken.detail, whole.detail)
    ranks = broken.js.verdicts
    print(f"[guards] reshaped JobSet: {broken.js.result} ({broken.seconds:.0f} s); the ranks said "
          f"{ {k: [(v.get('ok'), v.get('world'), (v.get('error') or '')[:160]) for v in vs] for k, vs in ranks.items()} }")
    assert len(ranks) == 4 and all(ranks.values()), f"not every rank printed a verdict: {ranks}"
    assert all(not v["ok"] and v.get("world") == "5" for vs in ranks.values() for v in vs), ranks
    # rank 0 serves the rendezvous store: torch says how many of WORLD_SIZE came
    assert any("4/5 clients joined" in (v.get("error") or "") for v in ranks[("master", 0)]), ranks[("master", 0)]
    assert broken.js.result != "Succeeded", broken.js.message

    print(f"[guards] the JobSet as converted: {whole.js.result} ({whole.seconds:.0f} s)")
    check_jobset_pods_ok(whole)
    assert whole.js.result == "Succeeded", whole.js.message
    assert all(v.get("world") == 4 for vs in whole.js.verdicts.values() for v in vs), whole.js.verdicts
