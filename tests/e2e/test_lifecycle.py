"""Lifecycle tests: who decides success, what a failed pod does, retries, deadline, TTL, suspend,
cleanup and start order, run for real in both worlds and held to the report's lifecycle findings.

Each scenario is a v1 job (PyTorchJob, TFJob, XGBoostJob, MPIJob v1; written here, or a golden
fixture's input where the scenario pins a fix) plus a script of what each pod's process does:
``Scenario.program(role, index, attempt)`` returns a shell text such as ``sleep 1; exit 137``, or
None for ``sleep infinity``; ``attempt`` counts the earlier starts of that role/index (in-place
restarts and re-created pods alike); ``{gate:NAME}`` in the text waits until the test opens that
gate, so a process ends exactly when the scenario says. It runs

* as the v1 job in namespace A: the real Training Operator v1.9.4 (webhooks on);
* as ``kf2jobset convert`` of it in namespace B: the real JobSet v0.12.0 + Job controllers + GC;

with one node agent (tests/e2e/nodeagent.py) running every pod. ``Scenario.observe(side)`` is one
function, applied to both worlds at the same time, that reads only what a user sees: the v1 job's
conditions (Succeeded / Failed) or the JobSet's ``terminalState``/conditions, which pods exist in
which phase (or are deleted), whether the job object is being deleted or gone, and when each
container started. It waits for events (a pod started, exited, was replaced), then gives the
controllers a few seconds to react. It returns one short observation per lifecycle rule the
scenario exercises, named as kf2jobset/runtime/lifecycle.py names them: job rules (success,
cleanPodPolicy, activeDeadlineSeconds, ttl, suspend) and per-replica-type rules as
``rule:role`` (start:worker, restartPolicy:worker -- what a container exit does --, failure:worker
-- what a pod that ends Failed does --, backoffLimit:worker).

The check, both ways, per scenario: the rules whose observations differ between the worlds must be
exactly the rules the kf2jobset report names as lifecycle differences for that conversion
(evidence of aspect ``lifecycle`` with the rule as subject, or aspect start / restartPolicy /
failure / backoffLimit for that role), restricted to the rules the scenario exercises. A real
difference the report does not name fails; a lifecycle difference the report claims that does not
happen fails too. ``expect_v1`` states what the operator is documented to do
(the operator's code: github.com/kubeflow/training-operator@v1.9.4 pkg/controller.v1, the source of what
the project's notes on it say), so a
scenario that did not really exercise its rule cannot pass by accident. ``test_mutations_are_caught``
runs a scenario against a deliberately wrong JobSet and requires the check to fail.

A pod that ends Failed under restartPolicy OnFailure (what an eviction does) comes from the pod's
``activeDeadlineSeconds``, which the node agent enforces like the kubelet.

Run alone: ``python -m pytest tests/e2e/test_lifecycle.py`` (root: the node agent needs network
namespaces). ``KF2JOBSET_LIFECYCLE_ONLY=REGEX`` runs some scenarios, ``KF2JOBSET_LIFECYCLE_PARALLEL=N``
(default 7) sets how many run at once, ``KF2JOBSET_LIFECYCLE_SUMMARY=FILE`` writes every observation,
claim and trace as JSON.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .lifecycle_harness import PARALLEL, LifecycleRunner, Programs
from .lifecycle_scenarios_job import (BACKOFF, BACKOFF_EXITCODE, CLEAN_ALL, CLEAN_RUNNING, DEADLINE, MPI,
                                      MPI_POD_FAILED, PT_POD_FAILED, SUSPEND, TF_DYNAMIC, TTL, XGB_POD_FAILED)
from .lifecycle_scenarios_pods import (ALL_WORKERS, ALWAYS, ELASTIC, EXITCODE, EXITCODE_NO_RETRY, EXITCODE_TF,
                                       EXITCODE_XGB, JAX_ALL_WORKERS, MPI_EXITCODE_1, MPI_EXITCODE_137, NEVER,
                                       NEVER_XGB, ONFAILURE, ONFAILURE_XGB, PADDLE_ALL_WORKERS, PADDLE_MASTER,
                                       PT_MASTER, TF_CHIEF, TF_WORKER0, XGB_MASTER)
from .nodeagent import NodeAgent


SCENARIOS = [PT_MASTER, XGB_MASTER, PADDLE_MASTER, ALWAYS, TF_WORKER0, TF_CHIEF, ELASTIC, ALL_WORKERS, JAX_ALL_WORKERS,
             PADDLE_ALL_WORKERS, NEVER, NEVER_XGB, ONFAILURE, ONFAILURE_XGB, EXITCODE,
             EXITCODE_TF, EXITCODE_XGB, EXITCODE_NO_RETRY, MPI_EXITCODE_137, MPI_EXITCODE_1, TF_DYNAMIC, XGB_POD_FAILED,
             MPI_POD_FAILED, PT_POD_FAILED, BACKOFF, BACKOFF_EXITCODE, DEADLINE, MPI, SUSPEND, TTL, CLEAN_RUNNING, CLEAN_ALL]
if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
    SCENARIOS = [s for s in SCENARIOS if re.search(os.environ["KF2JOBSET_LIFECYCLE_ONLY"], s.id)]


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def lifecycle_runner(stack, netns_ok):
    programs = Programs()
    programs.api_factory = stack.api_client
    agent = NodeAgent(stack.kubeconfig, {"": programs}, namespaces=set(), backoff=(0.5, 2.0))
    agent.start()
    try:
        yield LifecycleRunner(stack, agent, programs)
    finally:
        programs.stopping.set()
        agent.stop()
        shutil.rmtree(agent.workdir, ignore_errors=True)
        shutil.rmtree(programs.gates, ignore_errors=True)


# ---- mutations: a JobSet that behaves differently from what the report says must be caught


def _no_success_policy(jobset):
    jobset["spec"].pop("successPolicy", None)  # every Job must now succeed


def _no_depends_on(jobset):
    for rj in jobset["spec"]["replicatedJobs"]:
        rj.pop("dependsOn", None)  # workers start with the master


MUTATIONS = [("pytorch-master-decides", _no_success_policy, "success"),
             ("pytorch-master-decides", _no_depends_on, "start:worker")]
if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
    MUTATIONS = [m for m in MUTATIONS if re.search(os.environ["KF2JOBSET_LIFECYCLE_ONLY"], m[0])]


@pytest.fixture(scope="module")
def results(lifecycle_runner) -> dict:
    """Every scenario, and every mutation (keyed "mutation:<scenario>:<function>"), run at once."""
    t0 = time.monotonic()
    by_id = {s.id: s for s in SCENARIOS}
    jobs = [(s.id, s, None) for s in SCENARIOS] + [
        (f"mutation:{sid}:{fn.__name__}", by_id[sid], fn) for sid, fn, _ in MUTATIONS if sid in by_id]
    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = list(pool.map(lambda j: (j[0], lifecycle_runner.run_scenario(j[1], j[2])), jobs))
    out = dict(runs)
    wall = time.monotonic() - t0
    print(f"\n[lifecycle] {len(SCENARIOS)} scenarios + {len(out) - len(SCENARIOS)} mutations in {wall:.1f} s "
          f"(parallel {PARALLEL}); slowest: "
          + ", ".join(f"{k} {r.seconds:.0f}s" for k, r in sorted(out.items(), key=lambda kv: -kv[1].seconds)[:3]))
    print(table(r for k, r in out.items() if not k.startswith("mutation:")))
    path = os.environ.get("KF2JOBSET_LIFECYCLE_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({"seconds": wall, "scenarios": {
            k: {"kind": r.scenario.job["kind"], "rules": list(r.scenario.rules), "v1": r.v1, "jobset": r.jobset,
                "claims": r.claims, "trace": r.trace, "seconds": round(r.seconds, 1), "error": r.error[-1500:]}
            for k, r in out.items()}}, indent=1))
    return out


def table(results) -> str:
    lines = ["| scenario | kind | rule | v1 (operator) | JobSet | report |", "|---|---|---|---|---|---|"]
    for r in results:
        for rule in r.scenario.rules:
            claim = "; ".join(r.claims.get(rule, [])) or "same"
            lines.append(f"| {r.scenario.id} | {r.scenario.job['kind']} | {rule} | {r.v1.get(rule, '?')} | "
                         f"{r.jobset.get(rule, '?')} | {claim} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("scenario_id", [s.id for s in SCENARIOS])
def test_lifecycle_differences_are_the_reports(results, scenario_id):
    r = results[scenario_id]
    assert not r.error, r.error
    trace = json.dumps(r.trace, indent=1)
    wrong = {k: (v, r.v1.get(k)) for k, v in r.scenario.expect_v1.items() if r.v1.get(k) != v}
    assert not wrong, (f"the operator did not do what its code says ({r.scenario.why}): "
                       f"rule: (expected, seen) {wrong}\ntrace: {trace}")
    unnamed = r.differ - r.claimed
    assert not unnamed, "real lifecycle differences the report does not name:\n" + "\n".join(
        f"  {rule}: v1 {r.v1.get(rule)!r} / JobSet {r.jobset.get(rule)!r}" for rule in sorted(unnamed)) + f"\ntrace: {trace}"
    unseen = r.claimed - r.differ
    assert not unseen, "lifecycle differences the report claims that did not happen:\n" + "\n".join(
        f"  {rule}: report {r.claims[rule]}; both worlds: {r.v1.get(rule)!r}" for rule in sorted(unseen)) + f"\ntrace: {trace}"


@pytest.mark.parametrize("scenario_id, mutate, rule", MUTATIONS, ids=[f"{m[0]}:{m[1].__name__}" for m in MUTATIONS])
def test_mutations_are_caught(results, scenario_id, mutate, rule):
    """The same scenario with a JobSet that does not do what the conversion says: the check must bite."""
    r = results[f"mutation:{scenario_id}:{mutate.__name__}"]
    assert not r.error, r.error
    assert rule in r.differ - r.claimed, (f"{mutate.__name__} was not caught: differences {sorted(r.differ)}, "
                                          f"claimed {sorted(r.claimed)}; v1 {r.v1}; JobSet {r.jobset}")


def test_scenarios_cover_the_issue():
    """Every kind whose rules differ and every lifecycle rule is exercised by some scenario."""
    kinds = {s.job["kind"] for s in SCENARIOS}
    rules = {r for s in SCENARIOS for r in s.rules}
    if os.environ.get("KF2JOBSET_LIFECYCLE_ONLY"):
        pytest.skip("KF2JOBSET_LIFECYCLE_ONLY selects a subset")
    assert kinds >= {"PyTorchJob", "TFJob", "XGBoostJob", "MPIJob", "PaddleJob", "JAXJob"}
    rules = {r.split(":")[0] for r in rules}
    assert rules >= {"success", "failure", "restartPolicy", "start", "suspend", "backoffLimit", "activeDeadlineSeconds",
                     "ttl", "cleanPodPolicy"}
