"""Every refusal kf2jobset makes, held to what the real v1 world did with the same job.

Each refusing fixture (``fixtures/*/*/expected-error.txt``, the cases tests/test_refusal_inventory.py
requires for every rule id) is created in a namespace of its own on the real v1 world: the Training
Operator v1.9.4 with its validating webhooks (tests/e2e/stack.py); for MPIJob ``kubeflow.org/v2beta1``,
mpi-operator v0.8.2 on the second stack flavour; for MXJob, the Training Operator v1.8.1 (its last
release) on the ``training-operator-v1.8.1`` flavour. Its outcome there is one of

* ``admission``: the create call failed (the CRD schema, CEL, the API server's object-meta rules, or
  the operator's webhook);
* ``pods``: the job was accepted, but some pod the operator makes was never created, and the API
  says why (a Warning event: the operator's or the Job controller's failed create, or mpi-operator's
  failed launcher Job; or the job's Failed condition: the operator gave up on it first);
* ``ran``: every pod the operator makes exists (no kubelet runs: they stay Pending).

kf2jobset's verdict must agree with it:

* a message that says the refusal is *inherited* => the v1 world rejected the job (admission or pods);
* exit 3 (an invalid v1 job) => the v1 world rejected it;
* exit 4 (the JobSet would be rejected, or the job needs a decision kf2jobset cannot make) => the v1
  world ran it, and no message may say *inherited*.

Converting fixtures whose null keys the API server drops (report code JS072: ``cpu:`` with no value) are
sent too (NULL_CASES): kf2jobset converts them (exit 0), so the v1 world must run them, store
them without those keys (or with the CRD's default in place of the null) and make pods without them.

Cases that cannot be sent (invalid YAML, an API version the v1 world does not serve) are skipped with
the reason. Jobs without a name (templates) get one as their creator would give them; a case's
namespace is replaced by the test's own unless it is not a valid namespace name (then the request
goes to it, as ``kubectl apply`` would send it). All cases run in parallel (KF2JOBSET_REFUSALS_PARALLEL,
default 8) with a bounded wait for pods (POD_WAIT s); KF2JOBSET_REFUSALS_SUMMARY=FILE writes every
case's verdicts as JSON; KF2JOBSET_REFUSALS_ONLY=REGEX runs only the matching case ids.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from ..conftest import FIXTURES
from .lazy_stack import LazyStack

PARALLEL = int(os.environ.get("KF2JOBSET_REFUSALS_PARALLEL", "8"))
POD_WAIT = 45.0  # seconds for the operator's pods to appear (they appear within a few seconds when they can)
V1, V2BETA1 = "kubeflow.org/v1", "kubeflow.org/v2beta1"
PLURAL = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs", "XGBoostJob": "xgboostjobs",
          "PaddleJob": "paddlejobs", "JAXJob": "jaxjobs", "MXJob": "mxjobs"}
SPECS_FIELD = {"TFJob": "tfReplicaSpecs", "PyTorchJob": "pytorchReplicaSpecs", "MPIJob": "mpiReplicaSpecs",
               "XGBoostJob": "xgbReplicaSpecs", "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs",
               "MXJob": "mxReplicaSpecs"}


def world(job: dict) -> str:
    """The stack flavour whose operator served this job: mpi-operator for MPIJob v2beta1, the Training
    Operator v1.8.1 for MXJob (removed in v1.9.0), v1.9.4 for the rest."""
    if job.get("apiVersion") == V2BETA1:
        return "mpi-operator"
    return "training-operator-v1.8.1" if job.get("kind") == "MXJob" else "training-operator"


INHERITED = "inherited"
_NS = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RULE = re.compile(r" \[([A-Za-z][\w-]*)\](?= \(hint: |$)", re.M)


# ---------------------------------------------------------------------------------------------
# kf2jobset's side: the refusing fixtures, run through the CLI as tests/test_golden.py runs them


@dataclass
class Case:
    id: str
    path: Path
    job: dict | None = None
    skip: str = ""
    exit_code: int = 0  # kf2jobset's verdict, filled by run_kf2jobset
    messages: list[str] = field(default_factory=list)
    nulls: list = field(default_factory=list)  # converting case: the null keys the API server drops (NullField)

    def run_kf2jobset(self) -> None:
        args = [a for a in (self.path / "args").read_text().splitlines() if a.strip() and not a.startswith("#")] \
            if (self.path / "args").exists() else []
        result = CliRunner().invoke(main, ["convert", str(self.path / "input.yaml"), *args], catch_exceptions=False)
        self.exit_code = result.exit_code
        self.messages = [line for line in result.stderr.splitlines() if line.startswith("kf2jobset: ")]

    @property
    def rules(self) -> list[str]:
        return sorted({r for m in self.messages for r in _RULE.findall(m)})

    @property
    def says_inherited(self) -> bool:
        return any(INHERITED in m for m in self.messages)


def _case(path: Path) -> Case:
    case = Case(f"{path.parent.name}/{path.name}", path)
    try:
        docs = [d for d in yaml.safe_load_all((path / "input.yaml").read_text()) if d is not None]
    except yaml.YAMLError as e:
        case.skip = f"not YAML a v1 API server could be sent ({str(e).splitlines()[0]})"
        return case
    if len(docs) != 1 or not isinstance(docs[0], dict):
        case.skip = f"{len(docs)} documents: not one v1 job"
        return case
    job = docs[0]
    served = (job.get("apiVersion") == V1 and job.get("kind") in PLURAL) or \
             (job.get("apiVersion") == V2BETA1 and job.get("kind") == "MPIJob")
    if not served:
        case.skip = (f"{job.get('apiVersion')} {job.get('kind')}: none of the Training Operator v1.9.4, v1.8.1 "
                     "or mpi-operator v0.8.2 serves it, so there is no v1 world to send it to")
        return case
    case.job = job
    return case


def refusing_fixtures() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.glob("*/*/expected-error.txt"))


def pruned_null_fixtures() -> list[Path]:
    """Converting fixtures whose report says the API server dropped a null key (JS072)."""
    return sorted(p.parent for p in FIXTURES.glob("*/*/report.json")
                  if '"JS072"' in p.read_text() and (p.parent / "expected.yaml").exists())


def _null_case(path: Path) -> Case:
    from kf2jobset.k8s.crdnulls import pruned_nulls
    from kf2jobset.k8s.schemas import schema_name_for

    case = _case(path)
    if case.job is not None:
        case.nulls = pruned_nulls(case.job, schema_name_for(case.job["apiVersion"], case.job["kind"]))[0]
    return case


CASES = [_case(p) for p in refusing_fixtures()]
NULL_CASES = [_null_case(p) for p in pruned_null_fixtures()]
_ONLY = os.environ.get("KF2JOBSET_REFUSALS_ONLY")  # a regex over case ids, for local runs
if _ONLY:
    for _c in CASES + NULL_CASES:
        if not _c.skip and not re.search(_ONLY, _c.id):
            _c.skip = f"KF2JOBSET_REFUSALS_ONLY={_ONLY} leaves it out"


def test_every_refusing_fixture_is_a_case():
    assert len(CASES) >= 40, f"only {len(CASES)} refusing fixtures found under {FIXTURES}"
    for c in CASES:
        c.run_kf2jobset()
    assert all(c.exit_code in (3, 4) for c in CASES), [(c.id, c.exit_code) for c in CASES if c.exit_code not in (3, 4)]


def test_null_fixtures_convert():
    assert NULL_CASES, "no converting fixture shows JS072 (fixtures/pytorchjob/null-values does)"
    for c in NULL_CASES:
        c.run_kf2jobset()
        assert c.exit_code == 0 and c.nulls and not c.says_inherited, (c.id, c.exit_code, c.messages)


# ---------------------------------------------------------------------------------------------
# the v1 world's side


@dataclass
class Outcome:
    case: Case
    real: str = ""  # admission | pods | ran | unclear | failed
    detail: str = ""
    pods: str = ""  # "created/expected"
    seconds: float = 0.0
    evidence: list[str] = field(default_factory=list)
    stored: dict = field(default_factory=dict)  # the job as the API server stored it
    pod_specs: dict = field(default_factory=dict)  # pod name -> (replica-type label, spec as JSON)


def expected_pods(job: dict) -> int:
    """The pods the operator makes for this job: every replica spec's replicas (default 1); mpi-operator
    makes pods only for Launcher and Worker (Worker defaults to 0 there)."""
    specs = (job.get("spec") or {}).get(SPECS_FIELD[job["kind"]]) or {}
    total = 0
    for rtype, spec in specs.items():
        spec = spec or {}
        if job["apiVersion"] == V2BETA1:
            if rtype not in ("Launcher", "Worker"):
                continue
            default = 1 if rtype == "Launcher" else 0
        else:
            default = 1
        n = spec.get("replicas")
        n = default if n is None else n  # `replicas:` with no value: dropped by the API server
        total += n if isinstance(n, int) else 0
    return total


def _message(e) -> str:
    try:
        return json.loads(e.body).get("message", str(e))
    except Exception:  # noqa: BLE001
        return str(e)


def _failures(core, ns: str) -> list[str]:
    """Warning events of the namespace that say an object could not be created."""
    out = []
    for ev in core.list_namespaced_event(ns).items:
        text = f"{ev.reason}: {ev.message}"
        if ev.type == "Warning" and re.search(r"(?i)fail|invalid|error|forbidden", text):
            out.append(f"{ev.involved_object.kind}/{ev.involved_object.name} {text}"[:600])
    return out


def _failed(custom, job: dict, ns: str, name: str) -> list[str]:
    """The job's own Failed condition (the operator gave up on it, e.g. before creating any pod)."""
    got = custom.get_namespaced_custom_object("kubeflow.org", job["apiVersion"].split("/")[1], ns, PLURAL[job["kind"]], name)
    return [f"{job['kind']}/{name} condition Failed: {c.get('reason')}: {c.get('message')}"[:600]
            for c in (got.get("status") or {}).get("conditions") or []
            if c.get("type") == "Failed" and c.get("status") == "True"]


def _priority_classes(api, job: dict) -> None:
    """PriorityClasses the pods name, when the name is one a PriorityClass can have (the differential
    test makes them too): the job's own defects decide, not a missing cluster object."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    specs = (job.get("spec") or {}).get(SPECS_FIELD[job["kind"]]) or {}
    for spec in specs.values():
        name = (((spec or {}).get("template") or {}).get("spec") or {}).get("priorityClassName")
        if not name:
            continue
        try:
            client.SchedulingV1Api(api).create_priority_class({"metadata": {"name": name}, "value": 1000})
        except ApiException as e:
            if e.status not in (409, 422):  # 422: an invalid name, which no cluster can have
                raise


def observe(stack, case: Case) -> Outcome:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    out = Outcome(case)
    t0 = time.monotonic()
    job = json.loads(json.dumps(case.job))
    meta = job.setdefault("metadata", {})
    version = job["apiVersion"].split("/")[1]
    with stack.api_client() as api:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        ns = meta.get("namespace")
        if not (isinstance(ns, str) and ns and not _NS.match(ns)):
            ns = f"r{uuid.uuid4().hex[:8]}"
            core.create_namespace({"metadata": {"name": ns}})
            meta["namespace"] = ns
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = "step-" + uuid.uuid4().hex[:6]  # a template: named by whoever creates it
        _priority_classes(api, job)
        try:
            created = custom.create_namespaced_custom_object("kubeflow.org", version, ns, PLURAL[job["kind"]], job)
        except ApiException as e:
            if 400 <= e.status < 500:
                out.real, out.detail = "admission", f"HTTP {e.status}: {_message(e)}"[:1000]
                out.seconds = time.monotonic() - t0
                return out
            raise
        name = created["metadata"]["name"]
        out.stored = created
        want = expected_pods(job)
        deadline = time.monotonic() + POD_WAIT
        while True:
            pods = core.list_namespaced_pod(ns).items
            failures = _failures(core, ns) + _failed(custom, job, ns, name)
            out.pods = f"{len(pods)}/{want}"
            if len(pods) >= want and not failures:
                out.real, out.detail = "ran", f"{len(pods)} pods created"
                out.pod_specs = {p.metadata.name: ((p.metadata.labels or {}).get("training.kubeflow.org/replica-type"),
                                                   api.sanitize_for_serialization(p.spec)) for p in pods}
                break
            if failures:
                time.sleep(1.0)  # let the other pods (and events) of this round arrive
                pods = core.list_namespaced_pod(ns).items
                out.pods = f"{len(pods)}/{want}"
                out.evidence = _failures(core, ns) + _failed(custom, job, ns, name)
                out.real = "pods" if len(pods) < want else "ran"
                out.detail = out.evidence[0] if out.real == "pods" else f"{len(pods)} pods created despite: {out.evidence[0]}"
                break
            if time.monotonic() > deadline:
                out.real, out.detail = "unclear", (f"accepted; {len(pods)} of {want} pods after {POD_WAIT:.0f} s and no "
                                                   f"Warning event says why; operator log: {stack.log_tail(_operator(stack), 15)}")
                break
            time.sleep(0.5)
        try:
            custom.delete_namespaced_custom_object("kubeflow.org", version, ns, PLURAL[job["kind"]], name,
                                                   propagation_policy="Background")
        except ApiException:
            pass
    out.seconds = time.monotonic() - t0
    return out


def _operator(stack) -> str:
    return stack.flavour if stack.flavour in ("mpi-operator", "training-operator-v1.8.1") else "training-operator"




@pytest.fixture(scope="module")
def outcomes(stack) -> dict[str, Outcome]:
    others = {f: LazyStack(f) for f in ("mpi-operator", "training-operator-v1.8.1")}
    results: dict[str, Outcome] = {}
    lock = threading.Lock()

    def one(case: Case) -> None:
        t0 = time.monotonic()
        try:
            flavour = world(case.job)
            where = stack if flavour == "training-operator" else others[flavour].result()
            o = observe(where, case)
        except Exception as e:  # noqa: BLE001 - reported per case
            o = Outcome(case, "failed", f"{type(e).__name__}: {e}"[:1500], seconds=time.monotonic() - t0)
        with lock:
            results[case.id] = o

    runnable = [c for c in CASES + NULL_CASES if not c.skip]
    for c in runnable:
        c.run_kf2jobset()
    t0 = time.monotonic()
    try:
        for flavour, lazy in others.items():
            if any(world(c.job) == flavour for c in runnable):
                try:
                    lazy.result()  # before the v1 cases load the machine (its API server has a start-up deadline)
                except Exception:  # noqa: BLE001 - each case of that flavour reports it
                    pass
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(one, runnable))
    finally:
        for lazy in others.values():
            lazy.close()
    wall = time.monotonic() - t0
    print(f"\n[refusals] {len(runnable)} fixtures (refusing, and converting with pruned nulls) sent to the v1 world in {wall:.1f} s "
          f"(parallel {PARALLEL}); "
          f"{len(CASES) - len(runnable)} skipped")
    print(summary_table(results))
    path = os.environ.get("KF2JOBSET_REFUSALS_SUMMARY")
    if path:
        Path(path).write_text(json.dumps({
            "seconds": round(wall, 1),
            "cases": {k: {"exit": o.case.exit_code, "rules": o.case.rules, "inherited": o.case.says_inherited,
                          "real": o.real, "pods": o.pods, "detail": o.detail, "seconds": round(o.seconds, 1),
                          "agrees": agrees(o.case, o.real)[0]}
                      for k, o in sorted(results.items())},
            "skipped": {c.id: c.skip for c in CASES + NULL_CASES if c.skip},
        }, indent=1))
    return results


def agrees(case: Case, real: str) -> tuple[bool, str]:
    rejected = real in ("admission", "pods")
    if case.says_inherited and not rejected:
        return False, f"kf2jobset says the refusal is inherited, but the v1 world {real} it"
    if case.exit_code == 3 and not rejected:
        return False, f"exit 3 (an invalid v1 job), but the v1 world {real} it"
    if case.exit_code == 0 and real != "ran":
        return False, f"converted (exit 0), but the v1 world rejected it ({real})"
    if case.exit_code == 4 and real != "ran":
        return False, f"exit 4 (kf2jobset's own limit), but the v1 world rejected it ({real}): say so (inherited, exit 3)"
    return True, ""


def summary_table(results: dict[str, Outcome]) -> str:
    lines = ["| fixture | kf2jobset | rule | v1 world | pods | agrees |", "|---|---|---|---|---|---|"]
    for k, o in sorted(results.items()):
        ok, _ = agrees(o.case, o.real)
        said = f"exit {o.case.exit_code}" + (", inherited" if o.case.says_inherited else "")
        lines.append(f"| {k} | {said} | {', '.join(o.case.rules) or '-'} | {o.real} | {o.pods or '-'} | {'yes' if ok else 'NO'} |")
    counts = {r: sum(1 for o in results.values() if o.real == r) for r in ("admission", "pods", "ran", "unclear", "failed")}
    agreed = sum(1 for o in results.values() if agrees(o.case, o.real)[0])
    lines.append(f"\n{len(results)} sent: {counts}; kf2jobset agrees on {agreed}")
    return "\n".join(lines)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_refusal_agrees_with_the_v1_world(outcomes, case):
    if case.skip:
        pytest.skip(case.skip)
    o = outcomes[case.id]
    assert o.real not in ("failed", "unclear"), f"{case.id}: no verdict from the v1 world: {o.detail}"
    ok, why = agrees(case, o.real)
    assert ok, f"{case.id}: {why}.\nkf2jobset: {' / '.join(case.messages)}\nv1 world: {o.detail}"


def _at(node, path):
    for part in path:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return None
            node = node[part]
        else:
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
    return node


def _present(node, path) -> bool:
    parent = _at(node, path[:-1])
    return isinstance(parent, dict) and path[-1] in parent


@pytest.mark.parametrize("case", NULL_CASES, ids=lambda c: c.id)
def test_pruned_nulls_run_in_the_v1_world_without_the_keys(outcomes, case):
    """The job kf2jobset converted despite its null keys ran in the v1 world; the API server stored it
    without them (or, for a field with a CRD default, with the default: never a null) and the operator's
    pods lack them (a null CPU limit: pods without a CPU limit)."""
    if case.skip:
        pytest.skip(case.skip)
    o = outcomes[case.id]
    assert case.exit_code == 0, case.messages
    assert o.real == "ran", f"{case.id}: converted, but the v1 world: {o.real}: {o.detail}"
    field_ = SPECS_FIELD[case.job["kind"]]
    checked = 0
    for null in case.nulls:
        path = null.path
        assert _at(o.stored, path) is not None or not _present(o.stored, path), (path, "stored as null")
        # a key that held a value (a limit, a selector value); a null list or object may be filled in by
        # admission (the service account's volume), so only values are looked for in the pods
        if null.holds == "value" and path[:2] == ("spec", field_) and len(path) > 5 and path[3:5] == ("template", "spec"):
            rtype, rest = str(path[2]).lower(), path[5:]
            pods = [spec for label, spec in o.pod_specs.values() if label == rtype]
            assert pods, (path, "no pod of that replica type")
            for spec in pods:
                if _at(o.stored, path) is None:  # pruned: the operator's pods have no such key
                    assert not _present(spec, rest), (path, _at(spec, rest[:-1]))
                checked += 1
    print(f"\n[refusals] {case.id}: {len(case.nulls)} null keys; stored without them; "
          f"{checked} pod fields checked ({len(o.pod_specs)} pods)")
    assert checked
