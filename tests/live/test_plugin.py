"""`kubectl kf2jobset get | scan | apply` end to end against the real test API server.

Every plain Kubeflow job of the upstream corpus (tests/upstream.py; Katib Experiments are not plain
jobs) is created in the server, then read back, scanned, printed and applied through the plugin:
the real JobSet CRD (schema + CEL) must accept every converted job under server-side dry run with
strict field validation. MPIJob v1 needs --accept-mpi-ssh; the v2beta1 jobs run last, with the
mpi-operator CRD swapped in for the training-operator one (they share the name mpijobs.kubeflow.org).

Most calls go through click's runner in-process (fast); a few run the installed console script,
and kubectl itself when it is installed, to check exit codes and plugin discovery for real.
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from kf2jobset import exitcodes
from kf2jobset.core.convert import is_job

from .. import upstream
from ..fixture_cases import NEVER_RAN
from .conftest import mxjob_crd
from .plugin_harness import FIXTURES, GROUP, Result, kf

pytestmark = pytest.mark.apiserver


JS = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
RUN = uuid.uuid4().hex[:6]  # label value of everything this module creates
RUN_LABEL = "kf2jobset-test/run"
PLURALS = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs", "XGBoostJob": "xgboostjobs",
           "PaddleJob": "paddlejobs", "JAXJob": "jaxjobs", "MXJob": "mxjobs"}


def corpus_jobs() -> list[tuple[str, dict]]:
    """(corpus name, document) for every plain Kubeflow job of the upstream corpus."""
    out = []
    for name, path in upstream.require_corpus():
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if is_job(doc):  # Katib Experiments and the trial-template ConfigMap are not jobs
                out.append((name, doc))
    return out


# ---------------------------------------------------------------------------------------------
# running the plugin


def console_script() -> str:
    found = shutil.which("kubectl-kf2jobset") or str(Path(sys.executable).parent / "kubectl-kf2jobset")
    if not os.access(found, os.X_OK):
        pytest.skip("console script kubectl-kf2jobset not installed (pip install -e .)")
    return found


def kf_process(kubeconfig: str, *args: str) -> Result:
    proc = subprocess.run([console_script(), *args, "--kubeconfig", kubeconfig],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def table_rows(text: str) -> set[tuple[str, str, str]]:
    lines = text.splitlines()
    assert lines and lines[0].split() == ["NAMESPACE", "KIND", "NAME", "STATE", "REPLICAS", "WORST"], text
    return {tuple(line.split()[:3]) for line in lines[1:]}


def yaml_stream(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def admin(apiserver):
    from kubernetes import client

    with apiserver.api_client() as api_client:
        yield client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)


@pytest.fixture(scope="module")
def crds(apiserver, tmp_path_factory):
    upstream.need("jobset", "training-operator", "mpi-operator", *upstream.CORPUS)
    mx = mxjob_crd(tmp_path_factory.mktemp("mxjob-crd"))  # v1.9.x CRDs have no MXJob
    return apiserver.install_crds([str(upstream.jobset_crd()), *map(str, upstream.training_operator_crds()), str(mx)])


def _create_jobs(custom, core, jobs: list[tuple[str, dict]], prefix: str) -> dict[tuple[str, str, str], dict]:
    """Create jobs in namespaces prefix-0, prefix-1, ... (a job goes to the first one where its name is free)."""
    created: dict[tuple[str, str, str], dict] = {}
    namespaces: list[str] = []
    for _path, doc in jobs:
        body = copy.deepcopy(doc)
        meta = body.setdefault("metadata", {})
        meta.pop("namespace", None)
        meta.setdefault("labels", {})[RUN_LABEL] = RUN
        kind, name = body["kind"], meta["name"]
        slot = 0
        while slot < len(namespaces) and (namespaces[slot], kind, name) in created:
            slot += 1
        if slot == len(namespaces):
            ns = f"{prefix}-{RUN}-{slot}"
            core.create_namespace({"metadata": {"name": ns}})
            namespaces.append(ns)
        ns = namespaces[slot]
        version = body["apiVersion"].split("/")[1]
        out = custom.create_namespaced_custom_object(GROUP, version, ns, PLURALS[kind], body)
        created[(ns, kind, name)] = out
    return created


@pytest.fixture(scope="module")
def v1_jobs(crds, admin) -> dict[tuple[str, str, str], dict]:
    """Every v1 corpus job, created in the server: {(namespace, kind, name): the object as created}."""
    custom, core = admin
    # not the corpus jobs no v1 release ran (kf2jobset refuses them as inherited: tests/test_corpus.py NEVER_RAN)
    jobs = [(p, d) for p, d in corpus_jobs() if d["apiVersion"] == "kubeflow.org/v1" and p not in NEVER_RAN]
    assert len(jobs) >= 30, "the corpus shrank?"
    # no corpus holds an MXJob (removed in v1.9.0): its fixtures stand in
    # (kubeflow.org/v1 only: mxnet-operator's v1beta1 fixtures are not served by these CRDs)
    jobs += [(str(p.relative_to(FIXTURES)), d) for p in sorted(FIXTURES.glob("mxjob/*/input.yaml"))
             if (d := yaml.safe_load(p.read_text()))["apiVersion"] == "kubeflow.org/v1"]
    return _create_jobs(custom, core, jobs, "corpus")


# ---------------------------------------------------------------------------------------------
# scan


def test_scan_lists_exactly_the_created_jobs_with_pagination(apiserver, v1_jobs):
    # the real console script, -A, -l and a page size smaller than every kind's count
    res = kf_process(apiserver.kubeconfig, "scan", "-A", "-l", f"{RUN_LABEL}={RUN}", "--chunk-size", "2")
    assert res.code == 0, res
    assert table_rows(res.stdout) == set(v1_jobs)
    assert res.stderr == "", res  # nothing but the table, no notes: every CRD is installed


def test_scan_in_workers_and_in_process_agree(apiserver, v1_jobs):
    # the real console script: forked workers (-j 2) and no workers (-j 1), small pages
    args = ("scan", "-A", "-l", f"{RUN_LABEL}={RUN}", "--chunk-size", "3", "-o", "json")
    forked, here = kf_process(apiserver.kubeconfig, *args, "-j", "2"), kf_process(apiserver.kubeconfig, *args, "-j", "1")
    assert forked.code == 0 and here.code == 0, (forked, here)
    items = json.loads(here.stdout)["items"]
    assert {(i["namespace"], i["kind"], i["name"]) for i in items} == set(v1_jobs)
    assert forked.stdout == here.stdout


def test_scan_namespace_json_and_states(apiserver, v1_jobs):
    ns = sorted({ns for ns, _, _ in v1_jobs})[0]
    res = kf(apiserver.kubeconfig, "scan", "-n", ns, "-o", "json")
    assert res.code == 0, res
    items = json.loads(res.stdout)["items"]
    assert {(i["namespace"], i["kind"], i["name"]) for i in items} == {k for k in v1_jobs if k[0] == ns}
    for item in items:
        assert item["state"] == "-"  # nothing reconciles: no conditions
        assert item["error"] is None, item
        assert item["worst"]["category"] in ("rewritten", "approximated", "dropped", "breaking")
        if (item["kind"], item["apiVersion"]) == ("MPIJob", "kubeflow.org/v1"):
            assert item["worst"]["code"] == "MPI001"  # scan assesses MPIJob v1 as with --accept-mpi-ssh


def test_scan_selector_and_report(apiserver, v1_jobs, tmp_path):
    ns = sorted({ns for ns, _, _ in v1_jobs})[0]
    res = kf(apiserver.kubeconfig, "scan", "-n", ns, "-l", f"{RUN_LABEL}=nope")
    assert res.code == 0 and res.stdout == "", res
    assert "No Kubeflow Training Operator jobs found" in res.stderr
    # a report format to stdout replaces the table; one to a file comes with it
    res = kf(apiserver.kubeconfig, "scan", "-n", ns, "--report", "json")
    assert res.code == 0, res
    report = json.loads(res.stdout)
    names = {(j["kind"], j["name"]) for f in report["files"] for j in f["jobs"]}
    assert names == {(k, n) for s, k, n in v1_jobs if s == ns}
    sarif = tmp_path / "scan.sarif"
    res = kf(apiserver.kubeconfig, "scan", "-n", ns, "--report", f"sarif:{sarif}")
    assert res.code == 0, res
    assert table_rows(res.stdout) == {k for k in v1_jobs if k[0] == ns}
    assert json.loads(sarif.read_text())["version"] == "2.1.0"


# ---------------------------------------------------------------------------------------------
# get


def test_get_prints_valid_jobsets_for_every_job(apiserver, v1_jobs, crd_validator):
    res = kf(apiserver.kubeconfig, "get", "-A", "-l", f"{RUN_LABEL}={RUN}", "--accept-mpi-ssh", "--chunk-size", "5")
    assert res.code == 0, res
    docs = yaml_stream(res.stdout)
    jobsets = [d for d in docs if d["kind"] == "JobSet"]
    assert {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in jobsets} == {(ns, n) for ns, _, n in v1_jobs}
    assert len(jobsets) == len(v1_jobs)
    for js in jobsets:
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in crd_validator.iter_errors(js)]
        assert not errors, (js["metadata"], errors)
        meta = js["metadata"]
        assert not {"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "ownerReferences"} & set(meta)
        assert meta["labels"][RUN_LABEL] == RUN
        assert meta["annotations"]["kf2jobset.dev/source"].startswith("kubeflow.org/v1/")
    companions = [d for d in docs if d["kind"] != "JobSet"]
    assert companions and {d["kind"] for d in companions} == {"ConfigMap"}  # MPI hostfiles
    assert all(d["kind"] != "JobSet" or "status" not in d for d in docs)


def test_get_one_job_json_and_the_live_alias(apiserver, v1_jobs):
    ns, kind, name = next(k for k in sorted(v1_jobs) if k[1] == "TFJob")
    res = kf(apiserver.kubeconfig, "get", f"{kind.lower()}/{name}", "-n", ns, "-o", "json", via_main=True)
    assert res.code == 0, res
    obj = json.loads(res.stdout)
    assert obj["kind"] == "JobSet" and obj["metadata"]["name"] == name and obj["metadata"]["namespace"] == ns


def test_get_reports_jobs_it_cannot_convert_and_prints_the_rest(apiserver, v1_jobs):
    ns = next(ns for ns, k, _ in sorted(v1_jobs) if k == "MPIJob")
    res = kf(apiserver.kubeconfig, "get", "-n", ns)
    assert res.code == exitcodes.UNSUPPORTED, res  # MPIJob v1 without --accept-mpi-ssh
    assert "--accept-mpi-ssh" in res.stderr
    printed = {d["metadata"]["name"] for d in yaml_stream(res.stdout) if d["kind"] == "JobSet"}
    assert printed == {n for s, k, n in v1_jobs if s == ns and k != "MPIJob"}


# ---------------------------------------------------------------------------------------------
# apply


def test_apply_server_dry_run_accepts_every_converted_corpus_job(apiserver, v1_jobs, admin):
    custom, core = admin
    failures = []
    for ns, kind, name in sorted(v1_jobs):
        res = kf(apiserver.kubeconfig, "apply", kind.lower(), name, "-n", ns, "--accept-mpi-ssh")
        if res.code != 0 or f"jobset.jobset.x-k8s.io/{name} created (server dry run)" not in res.stdout:
            failures.append(f"{ns}/{kind}/{name}: {res!r}")
        elif kind == "MPIJob":
            assert f"configmap/{name}-mpi-hostfile created (server dry run)" in res.stdout, res
            assert f"Secret '{name}-ssh' not found in namespace {ns}" in res.stderr, res
    assert not failures, "\n\n".join(failures)
    # nothing persisted, and the v1 jobs are untouched
    for ns in {ns for ns, _, _ in v1_jobs}:
        assert custom.list_namespaced_custom_object(*JS[:2], ns, JS[2])["items"] == []
        assert core.list_namespaced_config_map(ns, label_selector="app.kubernetes.io/managed-by=kf2jobset").items == []
    for (ns, kind, name), created in v1_jobs.items():
        now = custom.get_namespaced_custom_object(GROUP, "v1", ns, PLURALS[kind], name)
        assert now["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"], (ns, kind, name)


def test_apply_client_dry_run_prints_what_get_prints(apiserver, v1_jobs):
    ns, kind, name = next(k for k in sorted(v1_jobs) if k[1] == "PyTorchJob")
    applied = kf(apiserver.kubeconfig, "apply", kind, name, "-n", ns, "--dry-run=client")
    got = kf(apiserver.kubeconfig, "get", kind, name, "-n", ns)
    assert applied.code == 0 and got.code == 0, (applied, got)
    assert applied.stdout == got.stdout


def test_apply_for_real_persists_jobset_and_configmap_then_suspends_source(apiserver, crds, admin, namespace):
    custom, core = admin
    path, doc = next((p, d) for p, d in corpus_jobs() if d["kind"] == "MPIJob" and d["apiVersion"] == "kubeflow.org/v1")
    body = copy.deepcopy(doc)
    body["metadata"].pop("namespace", None)
    name = body["metadata"]["name"]
    source = custom.create_namespaced_custom_object(GROUP, "v1", namespace, "mpijobs", body)

    res = kf(apiserver.kubeconfig, "apply", "mpijob", name, "-n", namespace, "--accept-mpi-ssh",
             "--dry-run=none", "--suspend-source")
    assert res.code == 0, res
    assert res.stdout.splitlines() == [
        f"jobset.jobset.x-k8s.io/{name} created",
        f"configmap/{name}-mpi-hostfile created",
        f"mpijob.kubeflow.org/{name} suspended",
    ]
    jobset = custom.get_namespaced_custom_object(*JS[:2], namespace, JS[2], name)
    assert jobset["metadata"]["annotations"]["kf2jobset.dev/source"] == f"kubeflow.org/v1/MPIJob {name}"
    cm = core.read_namespaced_config_map(f"{name}-mpi-hostfile", namespace)
    assert "hostfile" in cm.data
    assert [(o.kind, o.name, o.uid) for o in cm.metadata.owner_references] == [("JobSet", name, jobset["metadata"]["uid"])]
    after = custom.get_namespaced_custom_object(GROUP, "v1", namespace, "mpijobs", name)
    assert after["spec"]["runPolicy"]["suspend"] is True
    before_spec = copy.deepcopy(source["spec"])
    before_spec.setdefault("runPolicy", {})["suspend"] = True
    assert after["spec"] == before_spec  # only runPolicy.suspend changed
    # the JobSet exists now: a second apply is refused by the server (AlreadyExists), nothing changes
    again = kf(apiserver.kubeconfig, "apply", "mpijob", name, "-n", namespace, "--accept-mpi-ssh", "--dry-run=none")
    assert again.code == exitcodes.UNSUPPORTED, again
    assert "AlreadyExists" in again.stderr and again.stdout == ""
    # the v1 job is suspended: scan says so
    res = kf(apiserver.kubeconfig, "scan", "-n", namespace)
    assert res.code == 0, res
    assert res.stdout.splitlines()[1].split()[:4] == [namespace, "MPIJob", name, "Suspended"]


def test_server_fields_status_and_owners_are_stripped(apiserver, crds, admin, namespace):
    custom, _core = admin
    _path, doc = next((p, d) for p, d in corpus_jobs() if d["kind"] == "TFJob")
    body = copy.deepcopy(doc)
    body["metadata"] = {
        "name": "owned",
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(doc)},
        "ownerReferences": [{"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "name": "trial-1",
                             "uid": str(uuid.uuid4())}],
    }
    custom.create_namespaced_custom_object(GROUP, "v1", namespace, "tfjobs", body)
    now = "2024-05-01T10:00:00Z"
    custom.patch_namespaced_custom_object_status(GROUP, "v1", namespace, "tfjobs", "owned", {"status": {
        "conditions": [
            {"type": "Created", "status": "True", "lastTransitionTime": "2024-05-01T09:00:00Z", "reason": "x", "message": "x"},
            {"type": "Running", "status": "False", "lastTransitionTime": now, "reason": "x", "message": "x"},
            {"type": "Succeeded", "status": "True", "lastTransitionTime": now, "reason": "x", "message": "x"},
        ],
        "replicaStatuses": {},
    }})
    res = kf(apiserver.kubeconfig, "get", "tfjobs.kubeflow.org", "owned", "-n", namespace)
    assert res.code == 0, res
    (jobset,) = yaml_stream(res.stdout)
    assert set(jobset) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(jobset["metadata"]) == {"name", "namespace", "annotations"}
    # the server's annotations are gone; kf2jobset's own remain (a TFJob's TF_CONFIG names its replicatedJobs' pods
    # and is sized: the layout record, SZ002)
    assert list(jobset["metadata"]["annotations"]) == ["kf2jobset.dev/source", "kf2jobset.dev/replicated-jobs",
                                                       "kf2jobset.dev/sized-for", "kf2jobset.dev/size-literals"]
    assert "was owned by Trial/trial-1" in res.stderr
    scan = kf(apiserver.kubeconfig, "scan", "-n", namespace)
    assert scan.stdout.splitlines()[1].split()[3] == "Succeeded", scan
    applied = kf(apiserver.kubeconfig, "apply", "tfjob", "owned", "-n", namespace)
    assert applied.code == 0, applied
    assert "has Succeeded: the JobSet runs the training again" in applied.stderr


def test_companion_whose_crd_is_missing_is_not_found(apiserver, crds, admin, namespace):
    custom, _core = admin
    _path, doc = next((p, d) for p, d in corpus_jobs() if d["kind"] == "PyTorchJob")
    body = copy.deepcopy(doc)
    body["metadata"] = {"name": "gang"}
    body["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 2, "queue": "research"}}
    custom.create_namespaced_custom_object(GROUP, "v1", namespace, "pytorchjobs", body)
    # the JobSet passes; Volcano's PodGroup API is not installed in the test server
    res = kf(apiserver.kubeconfig, "-n", namespace, "apply", "pytorchjob", "gang", "--scheduler", "volcano")
    assert res.code == exitcodes.NOT_FOUND, res
    assert "podgroups.scheduling.volcano.sh/v1beta1 is not served by this cluster" in res.stderr, res
    assert res.stdout == ""


# ---------------------------------------------------------------------------------------------
# errors: one line on stderr, a distinct exit code


def test_unknown_name_is_not_found(apiserver, v1_jobs):
    ns = sorted({ns for ns, _, _ in v1_jobs})[0]
    res = kf_process(apiserver.kubeconfig, "get", "tfjob", "no-such-job", "-n", ns)
    assert res.code == exitcodes.NOT_FOUND, res
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f'kf2jobset: error: cannot get tfjobs.kubeflow.org \'no-such-job\' in namespace {ns}: '
        f'NotFound: tfjobs.kubeflow.org "no-such-job" not found'
    ]
    res = kf(apiserver.kubeconfig, "apply", "pytorchjob", "no-such-job", "-n", ns)
    assert res.code == exitcodes.NOT_FOUND, res


def test_restricted_user_gets_forbidden(apiserver, v1_jobs):
    kubeconfig = apiserver.kubeconfig_for_user("bob", ["kf2jobset-nobody"])
    ns = sorted({ns for ns, _, _ in v1_jobs})[0]
    res = kf_process(kubeconfig, "scan", "-n", ns)
    assert res.code == exitcodes.CLUSTER_AUTH, res
    assert res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert "Forbidden" in line and 'User "bob" cannot list resource' in line, line
    res = kf(kubeconfig, "apply", "tfjob", "whatever", "-n", ns)
    assert res.code == exitcodes.CLUSTER_AUTH, res


def test_bad_credentials_are_unauthorized(apiserver, tmp_path):
    data = yaml.safe_load(Path(apiserver.kubeconfig).read_text())
    data["users"][0]["user"] = {"token": "not-a-valid-token"}
    kubeconfig = tmp_path / "token.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(data))
    res = kf(str(kubeconfig), "scan", "-A")
    assert res.code == exitcodes.CLUSTER_AUTH, res
    assert "Unauthorized" in res.stderr and len(res.stderr.strip().splitlines()) == 1, res


def test_writes_use_strict_field_validation(apiserver, crds, namespace):
    from kf2jobset.live.apierrors import Invalid
    from kf2jobset.live.cluster import Cluster

    body = yaml.safe_load((Path(__file__).resolve().parents[1] / "jobsets" / "parallel.yaml").read_text())
    body["metadata"] = {"name": "strict"}
    body["spec"]["bogusField"] = True
    with Cluster.connect(apiserver.kubeconfig) as cluster:
        with pytest.raises(Invalid) as ei:
            cluster.create(body, namespace, dry_run=True)
    assert 'unknown field "spec.bogusField"' in ei.value.problems[0].message
    assert exitcodes.for_error(ei.value) == exitcodes.UNSUPPORTED


def test_unreachable_server_and_bad_kubeconfig(apiserver, tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(Path(apiserver.kubeconfig).read_text().replace(apiserver.server, f"https://127.0.0.1:{port}"))
    res = kf(str(dead), "scan")
    assert res.code == exitcodes.CLUSTER_UNREACHABLE, res
    assert "cannot reach" in res.stderr and "Connection refused" in res.stderr
    res = kf(str(tmp_path / "missing"), "scan")
    assert res.code == exitcodes.CLUSTER_UNREACHABLE, res
    res = kf(apiserver.kubeconfig, "scan", "--context", "no-such-context")
    assert res.code == exitcodes.CLUSTER_UNREACHABLE, res


def test_usage_errors(apiserver):
    assert kf(apiserver.kubeconfig, "get", "pods").code == exitcodes.USAGE
    assert kf(apiserver.kubeconfig, "get", "tfjob", "x", "-A").code == exitcodes.USAGE
    assert kf(apiserver.kubeconfig, "apply", "tfjob").code == exitcodes.USAGE
    assert kf(apiserver.kubeconfig, "scan", "--request-timeout", "soon").code == exitcodes.USAGE


# ---------------------------------------------------------------------------------------------
# kubeconfig handling


def _kubeconfig_with(apiserver, path: Path, context: str, namespace: str) -> str:
    data = yaml.safe_load(Path(apiserver.kubeconfig).read_text())
    data["contexts"][0]["name"] = context
    data["contexts"][0]["context"]["namespace"] = namespace
    data["current-context"] = context
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_default_namespace_follows_kubectl_and_kubeconfig_is_not_written(apiserver, v1_jobs, tmp_path):
    ns_a, ns_b = sorted({ns for ns, _, _ in v1_jobs})[:2]
    first = _kubeconfig_with(apiserver, tmp_path / "a", "ctx-a", ns_a)
    second = _kubeconfig_with(apiserver, tmp_path / "b", "ctx-b", ns_b)
    before = (Path(first).read_bytes(), Path(second).read_bytes())
    # KUBECONFIG=a:b -> kubectl uses a's current-context (the Python client alone would take b's)
    res = kf(None, "scan", env={"KUBECONFIG": os.pathsep.join([first, second])})
    assert res.code == 0, res
    assert table_rows(res.stdout) == {k for k in v1_jobs if k[0] == ns_a}
    res = kf(None, "scan", "--context", "ctx-b", env={"KUBECONFIG": os.pathsep.join([first, second])})
    assert table_rows(res.stdout) == {k for k in v1_jobs if k[0] == ns_b}
    res = kf(second, "scan", "-n", ns_a)  # -n wins over the context's namespace
    assert table_rows(res.stdout) == {k for k in v1_jobs if k[0] == ns_a}
    assert (Path(first).read_bytes(), Path(second).read_bytes()) == before


# a guard against a hung process, not a timing claim: a loaded CI machine once took over 60 s for `scan`
HANG_GUARD = 240


def test_kubectl_finds_and_runs_the_plugin(apiserver, v1_jobs):
    kubectl = shutil.which("kubectl")
    if not kubectl:
        pytest.skip("kubectl not installed")
    script = console_script()
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(script).parent), os.environ.get("PATH", "")]))
    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=HANG_GUARD)
    assert "kubectl-kf2jobset" in listed.stdout, listed
    ns = sorted({ns for ns, _, _ in v1_jobs})[0]
    proc = subprocess.run([kubectl, "kf2jobset", "scan", "-n", ns, "--kubeconfig", apiserver.kubeconfig],
                          capture_output=True, text=True, env=env, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    assert table_rows(proc.stdout) == {k for k in v1_jobs if k[0] == ns}
    proc = subprocess.run([kubectl, "kf2jobset", "get", "tfjob", "nope", "-n", ns, "--kubeconfig", apiserver.kubeconfig],
                          capture_output=True, text=True, env=env, timeout=HANG_GUARD)
    assert proc.returncode == exitcodes.NOT_FOUND, proc.stderr  # kubectl passes the plugin's exit code on
    help_text = subprocess.run([kubectl, "kf2jobset", "--help"], capture_output=True, text=True, env=env, timeout=HANG_GUARD)
    assert help_text.stdout.startswith("Usage: kubectl kf2jobset")


# ---------------------------------------------------------------------------------------------
# missing CRDs (these remove CRDs: keep them after the tests that use the corpus jobs)


def test_missing_crds_are_skipped_or_not_found(apiserver, v1_jobs, admin):
    custom, _core = admin
    jax = {k: v for k, v in v1_jobs.items() if k[1] == "JAXJob"}
    apiserver.remove_crd("jaxjobs.kubeflow.org")
    try:
        res = kf(apiserver.kubeconfig, "scan", "-A", "-l", f"{RUN_LABEL}={RUN}")
        assert res.code == 0, res
        assert res.stderr.strip() == "kf2jobset: note: skipped, CRD not installed: JAXJob (jaxjobs.kubeflow.org)"
        assert table_rows(res.stdout) == {k for k in v1_jobs if k[1] != "JAXJob"}
        res = kf(apiserver.kubeconfig, "get", "jaxjob", "-A")
        assert res.code == exitcodes.NOT_FOUND, res
        assert "the JAXJob CRD (jaxjobs.kubeflow.org) is not installed" in res.stderr
    finally:
        jax_crd = upstream.file("training-operator", "manifests/base/crds/kubeflow.org_jaxjobs.yaml")
        apiserver.install_crds([str(jax_crd)])
        for (ns, _kind, _name), obj in jax.items():  # deleting the CRD deleted its objects
            body = {k: v for k, v in obj.items() if k != "status"}
            body["metadata"] = {k: v for k, v in obj["metadata"].items() if k in ("name", "labels", "annotations")}
            custom.create_namespaced_custom_object(GROUP, "v1", ns, "jaxjobs", body)

    ns, kind, name = next(k for k in sorted(v1_jobs) if k[1] == "PyTorchJob")
    apiserver.remove_crd("jobsets.jobset.x-k8s.io")
    try:
        res = kf(apiserver.kubeconfig, "apply", kind, name, "-n", ns)
        assert res.code == exitcodes.NOT_FOUND, res
        assert "the JobSet CRD (jobsets.jobset.x-k8s.io, v1alpha2) is not installed" in res.stderr
    finally:
        apiserver.install_crds([str(upstream.jobset_crd())])


# ---------------------------------------------------------------------------------------------
# MPIJob v2beta1 (mpi-operator's CRD replaces training-operator's: run last)


def test_mpijob_v2beta1_served_version_detected_and_accepted(apiserver, crds, admin):
    custom, core = admin
    jobs = [(p, d) for p, d in corpus_jobs() if d["apiVersion"] == "kubeflow.org/v2beta1"]
    assert jobs
    apiserver.remove_crd("mpijobs.kubeflow.org")
    try:
        apiserver.install_crds([str(upstream.mpi_v2_crd())])
        created = _create_jobs(custom, core, jobs, "mpi2")
        res = kf(apiserver.kubeconfig, "scan", "mpijobs", "-A", "-l", f"{RUN_LABEL}={RUN}", "--chunk-size", "1")
        assert res.code == 0, res
        assert table_rows(res.stdout) == set(created)
        failures = []
        for ns, kind, name in sorted(created):
            res = kf(apiserver.kubeconfig, "apply", "mpijob", name, "-n", ns)
            if res.code != 0 or f"configmap/{name}-mpi-hostfile created (server dry run)" not in res.stdout:
                failures.append(f"{ns}/{kind}/{name}: {res!r}")
        assert not failures, "\n\n".join(failures)
        ns, _kind, name = sorted(created)[0]
        got = kf(apiserver.kubeconfig, "get", "mpijob", name, "-n", ns)
        assert got.code == 0, got
        js = next(d for d in yaml_stream(got.stdout) if d["kind"] == "JobSet")
        assert js["metadata"]["annotations"]["kf2jobset.dev/source"] == f"kubeflow.org/v2beta1/MPIJob {name}"
        # the "do this before you apply" warnings reach the plugin user too (one policy: Note.printed)
        assert " MPI003 " in got.stderr and " MPI008 " in got.stderr, got
        # mpi-operator generated <job>-ssh owned by the MPIJob: deleting the MPIJob would delete it
        uid = created[(ns, "MPIJob", name)]["metadata"]["uid"]
        core.create_namespaced_secret(ns, {
            "metadata": {"name": f"{name}-ssh", "ownerReferences": [
                {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": name, "uid": uid}]},
            "type": "kubernetes.io/ssh-auth", "stringData": {"ssh-privatekey": "k", "ssh-publickey": "k"},
        })
        res = kf(apiserver.kubeconfig, "apply", "mpijob", name, "-n", ns)
        assert res.code == 0, res
        assert f"Secret '{name}-ssh' is owned by MPIJob/{name}" in res.stderr
        assert "not found" not in res.stderr
    finally:
        apiserver.remove_crd("mpijobs.kubeflow.org")
        apiserver.install_crds([str(upstream.mpi_v1_crd())])
