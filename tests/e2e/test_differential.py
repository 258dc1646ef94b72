"""Differential tests: every fixture and corpus job runs in both worlds, and every difference the pods
really show must be one the kf2jobset report names.

For each case (fixtures/*/*/input.yaml with an expected.yaml, its ``args`` honoured; every job of
the upstream corpus of tests/upstream.py, found as tests/test_corpus.py finds them):

* namespace A gets the v1 job: the real Training Operator v1.9.4 (webhooks on) creates its pods
  (MPIJob kubeflow.org/v2beta1: the real mpi-operator v0.8.2, on a second stack, see below);
* namespace B gets ``kf2jobset convert`` of the same job (same options) and its companions: the real
  JobSet v0.12.0 + Job controllers create the pods;
* one node agent (tests/e2e/nodeagent.py) runs every container as ``sleep infinity`` (init
  containers ``true``; init-pytorch's nslookup loop with ``getent hosts``; kf2jobset's hostfile init
  container runs its own script) and records what each container was started with.

Pods are paired by role and rank (v1: ``training.kubeflow.org/replica-type`` + ``replica-index``;
mpi-operator: ``training.kubeflow.org/job-role`` launcher/worker + ``replica-index``, which it shifts by
one for workers under ``runLauncherAsWorker``; JobSet: ``replicatedjob-name`` + ``job-index`` through
``conv.plan.pod_roles``) and compared on what
they really got: env after the kubelet's resolution with every address replaced by the logical pod it
resolves to in that namespace's DNS table (pod IPs too), command + args, init containers, volume
mounts and the files of ConfigMap/Secret volumes (content after address resolution, mode), labels,
restartPolicy and hostname. Differences use the report's vocabulary
(:class:`kf2jobset.runtime.structure.Difference`); one is *explained* when a mapping note of the
conversion covers it (``report/explain.covers``, the report's own rule) or an RT010 finding names the
stale address in it. The report's pod-level claims are checked the other way round: a finding whose
evidence says a pod differs must show up as a real difference.

Label selectors (kf2jobset/core/selectorfix.py): a fixture's Services, PodDisruptionBudgets, NetworkPolicies
and PodMonitors convert with its job (as one file). Every selector of the real v1 pods (pod affinity and
anti-affinity terms, topologySpreadConstraints) and of those objects is handed to the real API server as
a ``label_selector`` in namespace A, its converted form (the JobSet twin pod's term; the object as the
converted file has it) in namespace B, and the two pod sets are compared through the pod keys above
(aspect ``selector``, subject the selector's place as the report names it): kept labels (JS052) and
rewritten selectors (JS053) must pick the twins of the v1 pods; a difference must be one a note names (JS054).

Manifests the v1 webhook rejects never ran: kf2jobset must say so (note JS080), and nothing is
compared.

MXJob belongs to the Training Operator v1.8.1 (removed in v1.9.0): those cases run on a third stack
(``GroundTruthStack(flavour="training-operator-v1.8.1")``: its own etcd + API server, v1.8.1's MXJob CRD,
the v1.8.1 operator with its MXJob webhook, the same JobSet + Job controllers) with its own node agent,
started like the mpi-operator one by the first MXJob case. v1.8.1 validates an MXJob in its controller,
not in its webhook (which only warns): a job it refuses is stored, gets a ``...FailedValidation``
Warning event and never has a pod. Every MXJob fixture kf2jobset refuses (``expected-error.txt``, no
``expected.yaml``) runs there too, and must be refused by v1.8.1 in one of those ways
(:func:`test_refused_mxjobs_were_refused_by_v1`).

MPIJob kubeflow.org/v2beta1 belongs to mpi-operator, whose CRD has the v1 MPIJob CRD's name
(``mpijobs.kubeflow.org``). Those cases run on a second stack (``GroundTruthStack(flavour=
"mpi-operator")``: its own etcd + API server, the mpi-operator CRD, mpi-operator v0.8.2, the same
JobSet + Job controllers) with its own node agent, started by the first v2beta1 case (those cases have their own
thread pool, so they run beside the v1 cases).
Namespace A there gets the MPIJob, namespace B its conversion, as above. mpi-operator generates the
SSH key Secret ``<job>-ssh`` itself; namespace B gets the Secret the conversion names as its action
says (a fresh key pair), so the key files differ by design (note MPI003).

All cases run in parallel inside one module fixture (the node agent and the stack are shared); the
per-case tests then read their result. :func:`test_mutations_are_caught` proves the comparison bites.
:func:`test_runtime_models_match_the_real_pods` holds runtime/operator_view.py and jobset_view.py to
the real pods with the same comparison.

Local knobs: ``KF2JOBSET_DIFF_ONLY=REGEX`` (case ids), ``KF2JOBSET_DIFF_PARALLEL=N`` (default 6),
``KF2JOBSET_DIFF_SUMMARY=FILE`` (every case's differences and what explained them, as JSON).
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .. import upstream
from ..conftest import FIXTURES
from .differential_cases import (KF, corpus_cases, fixture_cases, flavour_of, refusal_cases, resized_cases,
                                 trainjob_cases)
from .differential_runner import PARALLEL, V1_STUCK, LazyStackRunner, Runner, check_rejection_said, stand_in_programs
from .nodeagent import running_agent
from .stack import MXJOB_FLAVOUR

# the cases (tests/e2e/differential_cases.py), narrowed by the ONLY knob
ALL_CASES = fixture_cases() + refusal_cases() + corpus_cases() + trainjob_cases() + resized_cases()
if os.environ.get("KF2JOBSET_DIFF_ONLY"):  # a regex over case ids, for local runs
    ALL_CASES = [c for c in ALL_CASES if re.search(os.environ["KF2JOBSET_DIFF_ONLY"], c.id)]


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def runner(stack, netns_ok):
    # the other stacks, started by the first case of their flavour
    others = {"mpi-operator": LazyStackRunner("mpi-operator", subnet="10.247"),
              MXJOB_FLAVOUR: LazyStackRunner(MXJOB_FLAVOUR, subnet="10.248", listen_on_probes=False)}
    try:
        with running_agent(stack.kubeconfig, stand_in_programs(), namespaces=set(),
                           scheduler_names=("default-scheduler", "volcano", "yunikorn"), backoff=(0.5, 5.0)) as agent:
            yield Runner(stack, agent, others=others)
    finally:
        for other in others.values():
            other.close()


@pytest.fixture(scope="module")
def outcomes(runner) -> dict:
    t0 = time.monotonic()
    lock = threading.Lock()
    results: dict = {}

    def one(case):
        o = runner.run(case)
        with lock:
            results[case.id] = o
        return o

    # cases of the other stacks (MPIJob v2beta1: mpi-operator; MXJob: v1.8.1) run in their own pool, so
    # they neither wait for the main cases nor hold main workers while their stack starts
    v2 = [c for c in ALL_CASES if flavour_of(c.job) != runner.flavour]
    for flavour in sorted({flavour_of(c.job) for c in v2}):
        other = runner.others.get(flavour)
        if hasattr(other, "result"):
            # start that stack before the main cases load the machine (its API server has a start-up
            # deadline); if it does not start, every case of it fails with the reason
            try:
                other.result()
            except Exception:  # noqa: BLE001
                pass
    with ThreadPoolExecutor(PARALLEL) as pool, ThreadPoolExecutor(max(1, min(PARALLEL, len(v2)))) as pool2:
        futures = [pool2.submit(one, c) for c in v2] + [pool.submit(one, c) for c in ALL_CASES if c not in v2]
        for f in futures:
            f.result()
    wall = time.monotonic() - t0
    print(f"\n[differential] {len(ALL_CASES)} cases in {wall:.1f} s (parallel {PARALLEL})")
    print(summary_table(results.values()))
    path = os.environ.get("KF2JOBSET_DIFF_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({
            "seconds": wall,
            "cases": {k: {"status": o.status, "detail": o.detail[:400], "pods": o.jobs_pods,
                          "diffs": [[d.aspect, d.subject, d.change, d.where, why] for d, why in o.diffs],
                          "unexplained": [[d.aspect, d.subject, d.change, d.where, d.operator, d.jobset] for d in o.unexplained],
                          "unconfirmed": o.unconfirmed, "gaps": o.gaps, "seconds": round(o.seconds, 1), "conv": o.conv_message,
                          "selectors": o.selectors}
                      for k, o in sorted(results.items())}}, indent=1))
    return results


def summary_table(outs) -> str:
    rows: dict = {}
    for o in outs:
        kind = o.case.job.get("kind", "?") + ("" if o.case.job.get("apiVersion") == "kubeflow.org/v1" else " v2beta1")
        r = rows.setdefault(kind, {"compared": 0, "rejected": 0, "stuck": 0, "refused": 0, "skipped": 0, "failed": 0,
                                   "unexplained": 0, "aspects": set(), "pods": 0, "gaps": 0})
        r[o.status] += 1
        r["unexplained"] += len(o.unexplained)
        r["aspects"] |= o.aspects
        r["gaps"] += sum(len(v) for v in o.gaps.values())
        if o.status == "compared":
            r["pods"] += o.jobs_pods
    lines = ["| kind | jobs compared (pod pairs) | v1 webhook rejected | v1 stuck (a Service failed) | refused by both "
             "| not run | failed | unexplained | model gaps | differences seen (all explained) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for kind, r in sorted(rows.items()):
        lines.append(f"| {kind} | {r['compared']} ({r['pods']}) | {r['rejected']} | {r['stuck']} | {r['refused']} | {r['skipped']} "
                     f"| {r['failed']} | "
                     f"{r['unexplained']} | {r['gaps']} | {', '.join(sorted(r['aspects']))} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if not c.refused])
def test_every_real_difference_is_named_by_the_report(outcomes, case_id):
    o = outcomes[case_id]
    if o.status == "skipped":
        pytest.skip(o.detail)
    assert o.status != "failed", o.detail
    if o.status == "stuck":
        # the operator could not create a pod's Service, so the job never ran as a whole: kf2jobset must say so
        assert any(code in o.conv_message for code in V1_STUCK), (
            f"the v1 operator could not create a Service ({o.detail}) but kf2jobset does not say so")
        return
    if o.status == "rejected":
        check_rejection_said(o, "v1")
        return
    assert o.status != "refused", f"kf2jobset refused it ({o.conv_message}); so did v1: {o.detail}"
    lines = [f"{d.aspect} {d.subject} {d.change} at {d.where}: {d.operator!r} -> {d.jobset!r}" for d in o.unexplained]
    assert not lines, "differences the report does not name:\n" + "\n".join(lines)
    assert not o.unconfirmed, "report claims reality does not show:\n" + "\n".join(o.unconfirmed)


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if not c.refused])
def test_runtime_models_match_the_real_pods(outcomes, case_id):
    """runtime/operator_view.py against the real operator's pods, runtime/jobset_view.py against the
    real JobSet + Job controllers' pods: the same comparison, the model playing one side."""
    o = outcomes[case_id]
    if o.status != "compared":
        pytest.skip(f"not compared: {o.status}")
    for side in ("operator", "jobset"):
        assert not o.gaps.get(side), f"the {side} model differs from the real pods:\n" + "\n".join(o.gaps[side])


@pytest.mark.parametrize("case_id", [c.id for c in ALL_CASES if c.refused])
def test_refused_mxjobs_were_refused_by_v1(outcomes, case_id):
    """kf2jobset refuses only where the real v1 world refused: the v1.8.1 API server, webhook or
    controller refused each MXJob refusal fixture (no pod), and kf2jobset converted none of them."""
    o = outcomes[case_id]
    assert o.status != "failed", o.detail
    assert o.status in ("refused", "rejected"), f"{case_id}: {o.status}: {o.detail}"


def test_mxjob_cases_present():
    """Every fixtures/mxjob case is collected (and so run on the v1.8.1 stack)."""
    if os.environ.get("KF2JOBSET_DIFF_ONLY"):
        pytest.skip("KF2JOBSET_DIFF_ONLY narrows the cases")
    dirs = sorted(p.parent.name for p in FIXTURES.glob("mxjob/*/input.yaml"))
    assert dirs, f"no fixtures under {FIXTURES / 'mxjob'}: MXJob would go untested against v1.8.1"
    ids = {c.id.split("#")[0] for c in ALL_CASES}
    assert {f"mxjob/{d}" for d in dirs} <= ids, sorted({f"mxjob/{d}" for d in dirs} - ids)
    assert all(flavour_of(c.job) == MXJOB_FLAVOUR for c in ALL_CASES if c.job.get("kind") == "MXJob")


def test_corpus_present():
    upstream.need(*upstream.CORPUS)  # else the corpus cases were not collected
    assert len(corpus_cases()) >= 45


# ---- mutations: a wrong conversion must be caught


def _master_addr_to_worker(jobset, companions):
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                if e["name"] == "MASTER_ADDR":
                    e["value"] = e["value"].replace("-master-0-0", "-worker-0-0")


def _swap_tf_hosts(jobset, companions):
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                if e["name"] == "TF_CONFIG":
                    v = e["value"]
                    a, b = "-worker-0-0.", "-worker-1-0."
                    e["value"] = v.replace(a, "\0").replace(b, a).replace("\0", b)


def _drop_read_label(jobset, companions):
    """The rank comes from the job-global-index label through the downward API; read a label that is not there."""
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env") or []:
                ref = ((e.get("valueFrom") or {}).get("fieldRef") or {})
                if "job-global-index" in ref.get("fieldPath", ""):
                    ref["fieldPath"] = "metadata.labels['kf2jobset.test/removed']"


def _hostfile_worker_twice(jobset, companions):
    """MPIJob v2beta1 (mpi-operator stack): the hostfile names worker 0 where worker 1 belongs."""
    for c in companions:
        if c["kind"] == "ConfigMap" and "hostfile" in (c.get("data") or {}):
            c["data"]["hostfile"] = c["data"]["hostfile"].replace("-worker-1-0.", "-worker-0-0.")


def _drop_kept_labels(jobset, companions):
    """The operator's labels kf2jobset keeps for a selector (JS052) left off: the workers' anti-affinity picks nothing."""
    for rj in jobset["spec"]["replicatedJobs"]:
        labels = (rj["template"]["spec"]["template"].get("metadata") or {}).get("labels") or {}
        for k in [k for k in labels if k.startswith(KF)]:
            del labels[k]


MUTATIONS = [
    ("pytorchjob/master-workers", _master_addr_to_worker, ("env", "MASTER_ADDR")),
    ("tfjob/chief-ps-workers", _swap_tf_hosts, ("env", "TF_CONFIG")),
    ("pytorchjob/master-workers", _drop_read_label, ("env", "RANK")),
    ("mpijob-v2beta1/openmpi", _hostfile_worker_twice, ("hostfile", "names")),
    ("mpijob-v2beta1/anti-affinity", _drop_kept_labels,
     ("selector", "mpiReplicaSpecs.Worker.template.spec.affinity.podAntiAffinity"
                  ".requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector")),
]

# fixtures whose pods or file select the job's pods by label: every one of them has its selectors compared
SELECTOR_FIXTURES = ("mpijob-v2beta1/anti-affinity", "mpijob-v1/anti-affinity", "pytorchjob/topology-spread",
                     "tfjob/selecting-objects")


@pytest.mark.parametrize("case_id", [c for c in SELECTOR_FIXTURES if c in {x.id for x in ALL_CASES}])
def test_selectors_were_compared(outcomes, case_id):
    """Each label selector of the v1 pods and of the file's selecting objects was evaluated in both worlds
    (the differences, if any, are held to the report by test_every_real_difference_is_named_by_the_report)."""
    o = outcomes[case_id]
    assert o.status == "compared", (o.status, o.detail)
    assert o.selectors > 0, f"{case_id}: no selector compared"


def test_mutations_are_caught(runner):
    by_id = {c.id: c for c in fixture_cases()}  # not narrowed by KF2JOBSET_DIFF_ONLY
    cases = [(by_id[cid], fn, want) for cid, fn, want in MUTATIONS]
    with ThreadPoolExecutor(len(cases)) as pool:
        outs = list(pool.map(lambda c: runner.run(c[0], mutate=c[1]), cases))
    for (case, fn, want), o in zip(cases, outs, strict=False):
        assert o.status == "compared", (fn.__name__, o.detail)
        caught = [(d.aspect, d.subject) for d in o.unexplained]
        assert want in caught, f"{fn.__name__} on {case.id} was not caught: unexplained {caught}"
