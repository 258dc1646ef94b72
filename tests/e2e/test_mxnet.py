"""Real MXNet on both sides of every MXJob: the parameter-server job run in the v1 pods and in the JobSet pods.

MXJob is the Training Operator v1.8.1's (removed in v1.9.0), so this module starts its own stack of that
flavour (tests/e2e/stack.py, ``training-operator-v1.8.1``: v1.8.1 with its MXJob CRD and webhook, the JobSet
v0.12.0 + Job controllers) and its own node agent. For every MXJob fixture (fixtures/*/*/input.yaml with
an expected.yaml) and corpus job, the machinery of tests/e2e/test_frameworks.py runs:

* namespace A gets the MXJob (the real v1.8.1 operator makes the pods and their ``DMLC_*``/``MX_CONFIG``
  env), namespace B its kf2jobset conversion (the real JobSet + Job controllers make the pods);
* the ``mxnet`` container of every pod runs tests/e2e/programs/mx_prog.py in the MXNet 1.9.1 venv
  (tools/install-frameworks.sh) in the pod's network namespace with the env the kubelet resolved:
  the scheduler and the servers run ps-lite nodes, the workers a ``dist_sync`` kvstore (push, pull,
  a hostname gather through the servers); a lone Worker a ``local`` kvstore; MXTune pods a stand-in
  for TVM's tracker/server rendezvous at the addresses of ``MX_CONFIG``;
* both worlds' verdicts are compared pod by pod (kvstore ranks job-wide: ps-lite hands them out by
  address), and where every program worked in v1 every JobSet pod's must have too, each worker with
  the right sums. A different result must be named by the report (test_frameworks.EXPLAINED_BY:
  an MXTune job stays Created under v1.8.1, which sets neither Running nor Succeeded for it; MX002).

:func:`test_mutations_make_mxnet_fail` proves the program bites: a conversion whose scheduler address
names another pod, or whose worker count is wrong, must fail.

MXNet is retired upstream; when its wheel cannot be installed, tools/install-frameworks.sh writes the
reason to ``<cache>/frameworks/mxnet.unavailable`` and these tests skip with it. A venv that was never
installed fails them (run ``bash tools/install-frameworks.sh mxnet``).

Knobs: ``KF2JOBSET_MX_ONLY=REGEX`` (case ids), ``KF2JOBSET_MX_PARALLEL=N`` (default 2),
``KF2JOBSET_MX_SUMMARY=FILE`` (every case as JSON).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ..conftest import FIXTURES
from .conftest import running_stack
from .differential_cases import Case, corpus_cases, fixture_cases
from .frameworks_harness import (MUTATION_TIMEOUT, check_jobset_pods_ok, check_ran_alike, framework_runner, logical, result_table,
                                 run_cases, summary, venv_cache_root)
from .stack import MXJOB_FLAVOUR

PARALLEL = int(os.environ.get("KF2JOBSET_MX_PARALLEL", "2"))


def mx_cases() -> list[Case]:
    cases = [c for c in fixture_cases() + corpus_cases() if c.job.get("kind") == "MXJob"]
    if os.environ.get("KF2JOBSET_MX_ONLY"):
        cases = [c for c in cases if re.search(os.environ["KF2JOBSET_MX_ONLY"], c.id)]
    return cases


ALL = mx_cases()


def mxnet_python() -> tuple[Path, str]:
    """(the venv's python, why it is unusable or "")."""
    root = venv_cache_root() / "frameworks"
    py = root / "mxnet" / "bin" / "python"
    if os.access(py, os.X_OK):
        return py, ""
    reason = root / "mxnet.unavailable"
    if reason.exists():
        return py, "skip:" + reason.read_text().strip()
    return py, f"{py} missing: run `bash tools/install-frameworks.sh mxnet`"


@pytest.fixture(scope="module")
def mx_python() -> Path:
    py, why = mxnet_python()
    if why.startswith("skip:"):
        pytest.skip(f"MXNet could not be installed, so it cannot run in the pods: {why[5:]}")
    if why:
        pytest.fail(why + " (or set KF2JOBSET_SKIP_E2E=1 to skip the e2e tests)", pytrace=False)
    proc = subprocess.run([str(py), "-c", "import mxnet, numpy; print(mxnet.__version__, numpy.__version__)"],
                          capture_output=True, text=True, timeout=120, env={k: v for k, v in os.environ.items()
                                                                           if not k.startswith("DMLC_")})
    assert proc.returncode == 0, f"import mxnet failed in {py}:\n{proc.stderr[-2000:]}"
    return py


@pytest.fixture(scope="module")
def mx_runner(netns_ok, mx_python):
    with running_stack(MXJOB_FLAVOUR) as stack:  # its own etcd + API server; stopped and removed after
        with framework_runner(stack, {"mxnet": mx_python}, subnet="10.249") as runner:
            yield runner


@pytest.fixture(scope="module")
def mx_outcomes(mx_runner) -> dict:
    t0 = time.monotonic()
    results = run_cases(mx_runner, ALL, PARALLEL)
    print(f"\n[mxnet] {len(ALL)} MXJobs in {time.monotonic() - t0:.1f} s (parallel {PARALLEL}; load {os.getloadavg()[0]:.1f})")
    print(result_table(results.values()))
    path = os.environ.get("KF2JOBSET_MX_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"cases": {k: summary(o) for k, o in sorted(results.items())}}, indent=1))
    return results


def test_mxjob_cases_present():
    if os.environ.get("KF2JOBSET_MX_ONLY"):
        assert ALL, "KF2JOBSET_MX_ONLY matches no case"
        return
    dirs = sorted(p.parent.name for p in FIXTURES.glob("mxjob/*/expected.yaml"))
    assert dirs, f"no MXJob fixtures with an expected.yaml under {FIXTURES / 'mxjob'}"
    assert {f"mxjob/{d}" for d in dirs} <= {c.id.split("#")[0] for c in ALL}


def _workers(side) -> list[dict]:
    return [v for vs in side.verdicts.values() for v in vs if v.get("dmlc_role") == "worker"]


@pytest.mark.parametrize("case_id", [c.id for c in ALL])
def test_mxnet_kvstore_runs_alike(mx_outcomes, case_id):
    o = mx_outcomes[case_id]
    assert o.status != "failed", o.detail
    if o.status == "rejected":
        assert "JS080" in o.conv_message, (
            f"the v1.8.1 webhook rejects this job ({o.detail}) but kf2jobset converts it without saying so")
        return
    check_ran_alike(o)
    if all(v.get("ok") for vs in o.v1.verdicts.values() for v in vs):
        # every program worked in the v1 pods (kvstore, or the MXTune rendezvous): so in the JobSet pods,
        # with the sums every worker pulled
        check_jobset_pods_ok(o)
        workers = _workers(o.js)
        assert workers or any(v.get("dmlc_role") == "tuner" for vs in o.js.verdicts.values() for v in vs), (
            f"no worker ran a kvstore: {o.js.verdicts}")
        for w in workers:
            world = w["world"]
            assert w["sums"] == [world * (world + 1) / 2 * (k + 1) for k in range(len(w["sums"]))], w
        assert sorted(w["rank"] for w in workers) == list(range(len(workers))), workers


# ---- mutations: a wrong scheduler address or a wrong worker count must make MXNet fail


def _containers(jobset):
    for rj in jobset["spec"]["replicatedJobs"]:
        yield from rj["template"]["spec"]["template"]["spec"]["containers"]


def m_scheduler_addr_to_worker(jobset, companions):
    """DMLC_PS_ROOT_URI names worker 0's pod instead of the scheduler's."""
    names = {rj["name"] for rj in jobset["spec"]["replicatedJobs"]}
    worker = next(n for n in names if n.lower() == "worker")
    for c in _containers(jobset):
        for e in c.get("env") or []:
            if e["name"] == "DMLC_PS_ROOT_URI" and "value" in e:
                e["value"] = re.sub(r"-scheduler-0-0\b", f"-{worker}-0-0", e["value"], flags=re.I)


def m_one_worker_too_many(jobset, companions):
    """DMLC_NUM_WORKER one larger than the workers there are: the scheduler waits for a worker that never comes."""
    for c in _containers(jobset):
        for e in c.get("env") or []:
            if e["name"] == "DMLC_NUM_WORKER" and str(e.get("value", "")).isdigit():
                e["value"] = str(int(e["value"]) + 1)


MUTATIONS = [m_scheduler_addr_to_worker, m_one_worker_too_many]


def _mutation_case() -> Case | None:
    """The first MXJob fixture with a scheduler, a server and at least one worker that v1 ran to success."""
    for c in ALL:
        specs = (c.job.get("spec") or {}).get("mxReplicaSpecs") or {}
        if {k.lower() for k in specs} == {"scheduler", "server", "worker"}:
            return c
    return None


@pytest.fixture(scope="module")
def mutation_outcomes(mx_runner, mx_outcomes) -> dict:
    """Every mutation's JobSet side, all at once (each waits out its programs' timeouts)."""
    case = _mutation_case()
    if case is None:
        return {}
    t0 = time.monotonic()
    with ThreadPoolExecutor(len(MUTATIONS)) as pool:
        outs = list(pool.map(lambda m: mx_runner.run_case(case, mutate=m, only_jobset=True, timeout=MUTATION_TIMEOUT),
                             MUTATIONS))
    print(f"\n[mxnet] {len(MUTATIONS)} mutations in {time.monotonic() - t0:.1f} s")
    return {m.__name__: o for m, o in zip(MUTATIONS, outs, strict=False)}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda f: f.__name__)
def test_mutations_make_mxnet_fail(mx_outcomes, mutation_outcomes, mutation):
    case = _mutation_case()
    if case is None:
        pytest.fail("no MXJob fixture with exactly Scheduler, Server and Worker to mutate")
    base = mx_outcomes[case.id]
    assert base.status == "ran" and base.v1.result == "Succeeded" == base.js.result, (
        f"the unmutated {case.id} must succeed in both worlds first: {summary(base)}")
    o = mutation_outcomes[mutation.__name__]
    assert o.status == "ran", o.detail
    failed = [k for k, vs in o.js.verdicts.items() if not vs or any(not v.get("ok") for v in vs)]
    differ = [k for k in base.js.logical if logical(o.js, o.js.verdicts.get(k, [])) != base.js.logical[k]]
    print(f"{mutation.__name__}: JobSet {o.js.result}; pods failed {failed}; verdicts changed {differ}")
    assert failed or differ, f"{mutation.__name__} on {case.id}: no pod failed and no verdict changed ({o.js.result})"
