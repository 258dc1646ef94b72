"""Real frameworks on both sides: what users run, run in the v1 pods and in the JobSet pods, and what
HAPPENS compared.

For every fixture (fixtures/<kind>/<case>/input.yaml with an expected.yaml) and every corpus job of
kind TFJob, PyTorchJob, JAXJob, XGBoostJob and PaddleJob (the cases of tests/e2e/test_differential.py):

* namespace A gets the v1 job (the real Training Operator v1.9.4, webhooks on), namespace B its
  kf2jobset conversion (the real JobSet v0.12.0 + Job controllers); one node agent runs both;
* the main container of every pod (the kind's default container name, else the first) runs a real
  training program of tests/e2e/programs/ in that framework's venv (tools/install-frameworks.sh),
  with the env the kubelet resolved; other containers exit 0 at once (native sidecars sleep);
  init containers run ``true`` (init-pytorch: its own loop, ``getent hosts`` for nslookup):

  - PyTorchJob: ``init_process_group("gloo", "env://")`` + all_reduce + all_gather of hostnames; jobs
    with ``nprocPerNode`` or ``elasticPolicy`` run ``torchrun`` with only the ``PET_*`` env (static
    rendezvous, or elastic c10d at PET_RDZV_ENDPOINT), each child doing the same;
  - TFJob: every TF_CONFIG task serves its address (``tf.distribute.Server``); the lead (chief, else
    master, else worker 0) runs ops pinned to /job:T/task:I of every task that read the identity of
    the process serving there (its TF task and its hostname from its own UTS namespace) and fails when
    the server at T:I is another task; the reported hostnames must be the pods that tasks should be;
  - JAXJob: ``jax.distributed.initialize`` + a cross-process allgather (CPU, gloo);
  - XGBoostJob: rank 0 runs the RabitTracker at MASTER_PORT, every rank joins MASTER_ADDR:MASTER_PORT,
    allreduces and trains 2 rounds;
  - PaddleJob: ``python -m paddle.distributed.launch`` (collective, or parameter-server with a Master);

* each program prints verdict lines (role, index, rank, world size, hostnames of the peers it reached);
  the harness waits for the real terminal status of the v1 job and of the JobSet, maps every hostname
  and address to the pod (role, index) it is in that world, and compares both worlds pod by pod.

A difference (terminal status, a pod's verdicts) is accepted only when the kf2jobset report names it
(:data:`EXPLAINED_BY`); jobs the v1 webhook rejects never run, and kf2jobset must say so (JS080).
:func:`test_mutations_make_the_programs_fail` proves the programs bite: a conversion with a wrong
address or a wrong rank must fail or disagree.

Size as a parameter (kf2jobset/checks/sizes.py): :func:`test_programs_rendezvous_at_the_edited_size` runs a
few jobs with a replica edit in both worlds (``resized:``: jobs whose sizes follow the count, the JobSet edited like
the v1 job and not converted again; ``reconverted:``: jobs with literals, the edited v1 job converted again) and
requires one world of the new size with every rank once; :func:`test_literal_sizes_are_guarded` runs the real
``convert --check`` on hand-edited JobSets, and :func:`test_a_stale_hand_edited_jobset_misses_the_edited_size`
runs some of them as they are (``stale:``).

Run alone: ``python -m pytest tests/e2e/test_frameworks.py`` (root; after ``tools/install-frameworks.sh``).
Knobs: ``KF2JOBSET_FW_ONLY=REGEX`` (case ids), ``KF2JOBSET_FW_PARALLEL=N`` (default 4),
``KF2JOBSET_FW_SUMMARY=FILE`` (every case as JSON).
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from .. import upstream
from .differential_cases import Case, corpus_cases, fixture_cases, resized
from .differential_runner import check_rejection_said
from .frameworks_harness import (KINDS, MUTATION_TIMEOUT, PARALLEL, REPO, Side, check_jobset_pods_ok,
                                 check_ran_alike, cpu_seconds, framework_runner, run_cases,
                                 framework_pythons, logical, own_cpu_seconds, result_table, summary, torch_mode,
                                 venv_cache_root)


BASE = [c for c in fixture_cases() + corpus_cases() if c.job.get("kind") in KINDS]


def only(cases: list) -> list:
    """The cases KF2JOBSET_FW_ONLY selects (all when it is unset)."""
    if os.environ.get("KF2JOBSET_FW_ONLY"):
        cases = [c for c in cases if re.search(os.environ["KF2JOBSET_FW_ONLY"], c.id)]
    return cases


ALL = only(BASE)


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def pythons() -> dict:
    found = framework_pythons()
    missing = {n: str(p) for n, p in found.items() if not os.access(p, os.X_OK)}
    if missing:
        pytest.fail(f"framework venvs missing: {missing}; run `bash tools/install-frameworks.sh` "
                    f"(or set KF2JOBSET_SKIP_E2E=1 to skip the e2e tests)", pytrace=False)
    return found


@pytest.fixture(scope="module")
def fw_runner(stack, netns_ok, pythons):
    with framework_runner(stack, pythons, scheduler_names=("default-scheduler", "volcano", "yunikorn")) as runner:
        yield runner


@pytest.fixture(scope="module")
def fw_outcomes(fw_runner) -> dict:
    t0 = time.monotonic()
    cpu0, own0 = cpu_seconds(), own_cpu_seconds()
    # the biggest jobs first, so the tail is short
    order = sorted(ALL, key=lambda c: -sum((r or {}).get("replicas", 1) or 1 for k, rs in (c.job.get("spec") or {}).items()
                                           if k.endswith("ReplicaSpecs") for r in (rs or {}).values()))
    results = run_cases(fw_runner, order, PARALLEL)
    wall = time.monotonic() - t0
    print(f"\n[frameworks] {len(ALL)} jobs in {wall:.1f} s (parallel {PARALLEL}; CPU used by this test's processes "
          f"(the stack, the agent, the programs) {own_cpu_seconds() - own0:.0f} s, by the whole machine {cpu_seconds() - cpu0:.0f} s; "
          f"load {os.getloadavg()[0]:.1f})")
    print(result_table(results.values()))
    path = os.environ.get("KF2JOBSET_FW_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"seconds": wall, "cases": {k: summary(o) for k, o in sorted(results.items())}}, indent=1))
    return results


# ---------------------------------------------------------------------------------------------
# tests


def test_install_script_prints_where_the_venvs_are():
    proc = subprocess.run(["bash", str(REPO / "tools" / "install-frameworks.sh"), "--print-root"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == venv_cache_root() / "frameworks"


def test_cases_present():
    kinds = {c.job["kind"] for c in ALL}
    if os.environ.get("KF2JOBSET_FW_ONLY"):
        assert ALL or SIZED, "KF2JOBSET_FW_ONLY matches no case"
        return
    assert kinds == set(KINDS), kinds
    if not upstream.corpus_absent():
        assert sum(c.id.startswith("corpus/") for c in ALL) >= 30


@pytest.mark.parametrize("case_id", [c.id for c in ALL])
def test_real_frameworks_behave_alike(fw_outcomes, case_id):
    o = fw_outcomes[case_id]
    assert o.status != "failed", o.detail
    if o.status == "stuck":
        assert len(o.js.verdicts) == o.js.pods and all(o.js.verdicts.values()), (
            f"JobSet: not every pod printed a verdict: {o.js.verdicts}")
        check_jobset_pods_ok(o)
        return
    if o.status == "rejected":
        check_rejection_said(o, "v1.9.4")
        return
    check_ran_alike(o)
    # what the programs proved in the v1 world is what the job is for: it must have succeeded there
    # unless the job cannot work in v1 either (then both worlds must agree, checked above)
    if o.v1.result == "Succeeded":
        check_jobset_pods_ok(o)


# ---- mutations: a wrong address or a wrong rank must make the programs fail


def _containers(jobset, rj_name=None):
    for rj in jobset["spec"]["replicatedJobs"]:
        if rj_name is None or rj["name"] == rj_name:
            yield from rj["template"]["spec"]["template"]["spec"]["containers"]


def _env(c, name):
    return next((e for e in c.get("env") or [] if e["name"] == name), None)


def m_master_addr_to_worker(jobset, companions):
    """PyTorch/XGBoost: MASTER_ADDR names worker 0's pod instead of the master's."""
    for c in _containers(jobset):
        e = _env(c, "MASTER_ADDR")
        if e:
            e["value"] = e["value"].replace("-master-0-0", "-worker-0-0")


def m_rank_from_job_index(jobset, companions):
    """PyTorch/XGBoost: RANK read from job-index instead of job-global-index: master 0 and worker 0 are both rank 0."""
    for c in _containers(jobset):
        e = _env(c, "RANK")
        if e and "fieldRef" in (e.get("valueFrom") or {}):
            e["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.labels['jobset.sigs.k8s.io/job-index']"


def m_coordinator_to_worker1(jobset, companions):
    """JAX: COORDINATOR_ADDRESS names worker 1's pod (not process 0)."""
    for c in _containers(jobset):
        e = _env(c, "COORDINATOR_ADDRESS")
        e["value"] = e["value"].replace("-worker-0-0", "-worker-1-0")


def m_process_id_constant(jobset, companions):
    """JAX: every pod PROCESS_ID 0."""
    for c in _containers(jobset):
        e = _env(c, "PROCESS_ID")
        e.pop("valueFrom", None)
        e["value"] = "0"


def m_tf_host_to_other_pod(jobset, companions):
    """TF: the worker-1 address of TF_CONFIG names worker 0's pod."""
    for c in _containers(jobset):
        e = _env(c, "TF_CONFIG")
        if e:
            cfg = e["value"]
            a, b = "-worker-0-0.", "-worker-1-0."
            e["value"] = cfg.replace(b, a)


def m_tf_task_index_constant(jobset, companions):
    """TF: every worker pod says it is task worker:0 (two pods with the same task index)."""
    for c in _containers(jobset, "worker"):
        e = _env(c, "TF_CONFIG")
        if e:
            e["value"] = e["value"].replace('"index":$(KF2JOBSET_JOB_INDEX)', '"index":0')


MUTATIONS = [
    ("pytorchjob/master-workers", m_master_addr_to_worker, "address"),
    ("pytorchjob/master-workers", m_rank_from_job_index, "rank"),
    ("xgboostjob/master-workers", m_master_addr_to_worker, "address"),
    ("xgboostjob/master-workers", m_rank_from_job_index, "rank"),
    ("jaxjob/workers", m_coordinator_to_worker1, "address"),
    ("jaxjob/workers", m_process_id_constant, "rank"),
    ("tfjob/worker-only", m_tf_host_to_other_pod, "address"),
    ("tfjob/worker-only", m_tf_task_index_constant, "rank"),
]


def _mid(cid, fn) -> str:
    return f"{cid}:{fn.__name__}"


@pytest.fixture(scope="module")
def mutation_outcomes(fw_runner, fw_outcomes) -> dict:
    """Every mutation's JobSet side, all at once (each waits out its programs' timeouts)."""
    by_id = {c.id: c for c in ALL}
    todo = [(cid, fn) for cid, fn, _ in MUTATIONS if cid in by_id]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max(1, len(todo))) as pool:
        outs = list(pool.map(lambda m: fw_runner.run_case(by_id[m[0]], mutate=m[1], only_jobset=True,
                                                          timeout=MUTATION_TIMEOUT), todo))
    print(f"\n[frameworks] {len(todo)} mutations in {time.monotonic() - t0:.1f} s")
    return {_mid(cid, fn): o for (cid, fn), o in zip(todo, outs, strict=False)}


@pytest.mark.parametrize("mutation", [_mid(cid, fn) for cid, fn, _ in MUTATIONS])
def test_mutations_make_the_programs_fail(fw_outcomes, mutation_outcomes, mutation):
    cid, name = mutation.split(":")
    if cid not in fw_outcomes:
        pytest.fail(f"{cid} is not among the cases run (KF2JOBSET_FW_ONLY?)")
    base = fw_outcomes[cid]
    assert base.status == "ran" and base.v1.result == "Succeeded" == base.js.result, (
        f"the unmutated {cid} must succeed in both worlds first: {summary(base)}")
    o = mutation_outcomes[mutation]
    assert o.status == "ran", o.detail
    failed = [k for k, vs in o.js.verdicts.items() if not vs or any(not v.get("ok") for v in vs)]
    differ = [k for k in base.js.logical if logical(o.js, o.js.verdicts.get(k, [])) != base.js.logical[k]]
    print(f"{mutation}: JobSet {o.js.result}; pods failed {failed}; verdicts changed {differ}; "
          f"errors {[v.get('error', '')[:160] for vs in o.js.verdicts.values() for v in vs if v.get('error')][:3]}")
    assert o.js.result != "Succeeded" or failed or differ, (
        f"{name} on {cid}: the programs did not notice: {o.js.result}, verdicts {o.js.verdicts}")
    assert failed or differ, f"{name} on {cid}: no pod failed and no verdict changed ({o.js.result})"


# ---- size as a parameter: the programs rendezvous at the size the replicas were edited to

TORCHRUN_CPU = "corpus/training-operator/examples/pytorch/cpu-demo/demo.yaml"  # nprocPerNode "2": WORLD_SIZE is pods x 2
# Jobs whose size-derived values all follow the count (SZ001 without SZ002), smaller and larger than written: the
# v1 job and the JobSet kf2jobset wrote for the job as written edited alike (replicas only; the JobSet is not
# converted again), as test_differential's resized cases. Few and small: every process imports its framework
FOLLOWS = [("pytorchjob/env-override", 1), ("pytorchjob/torchrun-one-per-node", 2), ("jaxjob/workers", 3),
           ("jaxjob/env-override", 4), ("paddlejob/worker-only", 2), ("paddlejob/worker-only", 4)]
# Jobs with literals (SZ002), the worker count edited, and the literal `convert --check` must name in the JobSet
# edited by hand (test_literal_sizes_are_guarded, the real CLI)
CHECKED = [("xgboostjob/master-workers", 2, "WORKER_ADDRS"), ("xgboostjob/master-workers", 5, "WORKER_ADDRS"),
           ("tfjob/worker-only", 3, "TF_CONFIG"), (TORCHRUN_CPU, 2, "WORLD_SIZE")]
# ... of which the v1 job edited and converted again, what the check tells the user to do, runs in both worlds
# (TF's conversion at other sizes runs among the fixtures: tfjob/selecting-objects has 3 workers)
RECONVERTED = [("xgboostjob/master-workers", 2), ("xgboostjob/master-workers", 5), (TORCHRUN_CPU, 2)]
# ... and the hand-edited JobSet run as it is (the JobSet world only, the programs' timeouts short): it must not
# rendezvous at the new size, or the check guards nothing. Not the nprocPerNode one: torchrun reads only the PET_*
# variables, which follow the size; its literal WORLD_SIZE misleads only a program that reads WORLD_SIZE itself
STALE = [("xgboostjob/master-workers", 2), ("tfjob/worker-only", 3)]


@dataclass
class SizeCase:
    how: str  # follows | reconverted | stale
    case: Case
    edited: dict  # the v1 job with the new replicas


def _edited(job: dict, rtype: str, new: int) -> dict:
    job = copy.deepcopy(job)
    specs = job["spec"][next(k for k in job["spec"] if k.endswith("ReplicaSpecs"))]
    specs[next(k for k in specs if k.lower() == rtype.lower())]["replicas"] = new
    return job


def size_cases() -> list[SizeCase]:
    by_id = {c.id: c for c in BASE}
    out = [SizeCase("follows", resized(by_id[cid], "Worker", n), _edited(by_id[cid].job, "Worker", n)) for cid, n in FOLLOWS]
    for cid, n in RECONVERTED:
        if cid in by_id:  # the corpus one needs the upstream modules (test_literal_sizes_are_guarded says so)
            job = _edited(by_id[cid].job, "Worker", n)
            out.append(SizeCase("reconverted", dataclasses.replace(by_id[cid], id=f"reconverted:{cid}:worker={n}", job=job),
                                job))
    for cid, n in STALE:
        case = resized(by_id[cid], "Worker", n)
        out.append(SizeCase("stale", dataclasses.replace(case, id=case.id.replace("resized:", "stale:", 1)),
                            _edited(by_id[cid].job, "Worker", n)))
    return out


SIZED = [s for s in size_cases() if only([s.case])]  # KF2JOBSET_FW_ONLY selects them too (ids resized:, reconverted:, stale:)
SIZED_BY_ID = {s.case.id: s for s in SIZED}


def wanted(job: dict) -> list:
    """What the programs of the edited job must report, once each: the ranks 0..n-1 of one world of n processes
    (one per pod; nprocPerNode each under torchrun when it is a number), or for TF every task of the cluster."""
    specs = job["spec"][next(k for k in job["spec"] if k.endswith("ReplicaSpecs"))]
    count = {t: (s or {}).get("replicas") or 1 for t, s in specs.items()}  # v1's default is 1
    if job["kind"] == "TFJob":
        return sorted(f"{t.lower()}:{i}" for t, n in count.items() if t.lower() != "evaluator" for i in range(n))
    nproc = str(job["spec"].get("nprocPerNode") or "1")
    per_pod = int(nproc) if job["kind"] == "PyTorchJob" and torch_mode(job) == "torchrun" and nproc.isdigit() else 1
    return list(range(sum(count.values()) * per_pod))


def size_problems(side: Side, kind: str, want: list) -> list[str]:
    """Why the programs of one world did not run as one job of the new size ([] when every pod printed verdicts,
    all ok, and every process saw a world of len(want) in which the ids of `want` appear once each)."""
    problems = []
    if len(side.verdicts) != side.pods or not all(side.verdicts.values()):
        problems.append(f"{side.pods} pods, verdicts from {sorted(k for k, v in side.verdicts.items() if v)}")
    failed = [f"{k[0]}/{k[1]}: {v.get('error') or v}" for k, vs in sorted(side.verdicts.items()) for v in vs if not v.get("ok")]
    if failed:
        problems.append("failed: " + "; ".join(failed)[:800])
    every = [v for vs in side.verdicts.values() for v in vs if v.get("ok")]
    if kind == "TFJob":  # the lead reached every task of its TF_CONFIG, and each pod serves one of them
        outside = sorted(v["task"] for v in every if v.get("mode") == "not-in-cluster")
        tasks = sorted(v["task"] for v in every if v.get("mode") in ("serve", "lead"))
        leads = [v for v in every if v.get("mode") == "lead"]
        reached = sorted(leads[0]["peers"]) if len(leads) == 1 else f"{len(leads)} leads"
        if outside:
            problems.append(f"pods whose task is outside their TF_CONFIG cluster: {outside}")
        if tasks != want or reached != want:
            problems.append(f"tasks served {tasks}, reached by the lead {reached}; want {want}")
        return problems
    ranked = [v for v in every if isinstance(v.get("rank"), int) and isinstance(v.get("world"), int)]
    ranks, worlds = sorted(v["rank"] for v in ranked), sorted({v["world"] for v in ranked})
    if worlds != [len(want)] or ranks != want:
        problems.append(f"world sizes {worlds}, ranks {ranks}; want one world of {len(want)}, ranks {want}")
    return problems


@pytest.fixture(scope="module")
def size_outcomes(fw_runner) -> dict:
    """Every size case at once: the stale ones (mostly waiting out their programs' timeouts) beside the others."""
    t0, own0 = time.monotonic(), own_cpu_seconds()
    stale = [s for s in SIZED if s.how == "stale"]
    with ThreadPoolExecutor(PARALLEL) as pool, ThreadPoolExecutor(max(1, len(stale))) as waiting:
        futures = {s.case.id: waiting.submit(fw_runner.run_case, s.case, only_jobset=True, timeout=MUTATION_TIMEOUT)
                   for s in stale}
        # the most processes first, so the tail is short
        for s in sorted((s for s in SIZED if s.how != "stale"), key=lambda s: -len(wanted(s.edited))):
            futures[s.case.id] = pool.submit(fw_runner.run_case, s.case)
        results = {k: f.result() for k, f in futures.items()}
    print(f"\n[frameworks] {len(results)} size cases in {time.monotonic() - t0:.1f} s (parallel {PARALLEL} + {len(stale)} stale; "
          f"CPU of the programs that ended {own_cpu_seconds() - own0:.0f} s; load {os.getloadavg()[0]:.1f})")
    print(result_table(results.values()))
    for cid, o in sorted(results.items()):
        s = SIZED_BY_ID[cid]
        for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
            if side.namespace:
                problems = '; '.join(size_problems(side, s.edited['kind'], wanted(s.edited)))
                print(f"{cid} {what}: {side.result}; {problems or 'at the new size'}")
    return results


def test_size_cases_are_the_differentials():
    """The jobs resized here are resized alike in tests/e2e/test_differential.py, where every pod's env is compared."""
    from .differential_cases import resized_cases

    ids = {c.id.rsplit(":", 1)[0] for c in resized_cases()}
    assert [cid for cid, n in FOLLOWS if f"resized:{cid}" not in ids] == []


@pytest.mark.parametrize("case_id", [s.case.id for s in SIZED if s.how != "stale"])
def test_programs_rendezvous_at_the_edited_size(size_outcomes, case_id):
    s, o = SIZED_BY_ID[case_id], size_outcomes[case_id]
    assert o.status == "ran", o.detail
    if s.how == "follows":  # what makes the edit alone enough
        assert "SZ001" in o.codes and "SZ002" not in o.codes, sorted(o.codes)
    else:
        assert "SZ002" in o.codes, sorted(o.codes)
    want = wanted(s.edited)
    for side, what in ((o.v1, "v1"), (o.js, "JobSet")):
        problems = size_problems(side, s.edited["kind"], want)
        assert not problems, f"{what} ({side.result}): " + "; ".join(problems)
        assert side.result == "Succeeded", f"{what}: {side.result} ({side.message})"
    lines = [f"{what}: v1 {a!r}\n   JobSet {b!r}" for what, a, b, why in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)


@pytest.mark.parametrize("case_id", [s.case.id for s in SIZED if s.how == "stale"])
def test_a_stale_hand_edited_jobset_misses_the_edited_size(size_outcomes, case_id):
    s, o = SIZED_BY_ID[case_id], size_outcomes[case_id]
    assert o.status == "ran", o.detail
    assert "SZ002" in o.codes, sorted(o.codes)
    problems = size_problems(o.js, s.edited["kind"], wanted(s.edited))
    print(f"{case_id}: JobSet {o.js.result}: {problems}")
    assert problems, f"the hand-edited JobSet ran as one job of the new size ({o.js.result}): its literals did not matter"


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kf2jobset", *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))


def test_literal_sizes_are_guarded(tmp_path):
    """The real CLI, on a tree of the CHECKED jobs (one run per step): the JobSets converted in place (no alarm on
    them: tests/test_sizes_check.py), their worker replicas edited by hand, fail `convert --check`, one line per
    file naming its stale values; the v1 jobs edited and converted again pass it, and are the JobSets the
    reconverted cases run."""
    from kf2jobset import exitcodes
    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.text.yamlio import to_plain

    from ..jobset_edits import set_replicas

    by_id = {c.id: c for c in BASE}
    missing = [cid for cid, _, _ in CHECKED if cid not in by_id]
    checked = [(n, by_id[cid], new, literal) for n, (cid, new, literal) in enumerate(CHECKED) if cid in by_id]
    tree = tmp_path / "repo"
    tree.mkdir()
    for n, case, _, _ in checked:
        (tree / f"job{n}.yaml").write_text(yaml.safe_dump(case.job, sort_keys=False))
    first = _cli("convert", "--in-place", tree)
    assert first.returncode == 0, first.stderr
    was = {}
    for n, _case, new, _ in checked:
        path = tree / f"job{n}.yaml"
        (rjob,) = [r for r in yaml.safe_load(path.read_text())["spec"]["replicatedJobs"] if r["name"] == "worker"]
        was[n] = rjob["replicas"]
        path.write_text(set_replicas(path.read_text(), "worker", new))
    res = _cli("convert", "--check", tree)
    assert res.returncode == exitcodes.FINDINGS, res.stdout + res.stderr
    lines = {int(re.search(r"job(\d+)\.yaml:", line).group(1)): line for line in res.stdout.splitlines()}
    assert sorted(lines) == [n for n, *_ in checked], res.stdout
    for n, _case, new, literal in checked:
        line = lines[n]
        assert ": resized: " in line and f"worker {was[n]} -> {new}" in line, line
        assert literal in line and "again at the new size" in line, line
    # what the message asks for: the v1 jobs with the new replicas, converted again
    for n, case, new, _ in checked:
        (tree / f"job{n}.yaml").write_text(yaml.safe_dump(_edited(case.job, "Worker", new), sort_keys=False))
    again = _cli("convert", "--in-place", tree)
    assert again.returncode == 0, again.stderr
    res = _cli("convert", "--check", tree)
    assert res.returncode == 0 and "resized" not in res.stdout, res.stdout + res.stderr
    for n, case, new, _ in checked:
        edited = yaml.safe_dump(_edited(case.job, "Worker", new), sort_keys=False)
        (conv,) = [c for r in convert_text(edited, "job.yaml", case.options).results for c in r.conversions]
        assert yaml.safe_load((tree / f"job{n}.yaml").read_text()) == to_plain(conv.jobset), (
            f"{case.id}: the reconverted case does not run the JobSet the CLI writes")
    if missing:
        pytest.skip(f"checked all but {missing}: {upstream.corpus_absent()}")
