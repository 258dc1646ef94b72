"""The report's invariant: every runtime difference between what the v1 operator ran and what the
JobSet runs is explained by a finding. Over every fixture (with its args) and every job in the
upstream corpus (tests/upstream.py), under several option sets, there is no `unexplained` finding
and the JSON validates against schemas/report.schema.json.

The second half proves the comparison is not vacuous: break the emitted JobSet in a way no note
explains, and the report must say so.
"""
from __future__ import annotations

import copy

import pytest

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.report import build_report
from kf2jobset.report.build import job_report
from kf2jobset.report.render_json import as_dict

from . import upstream
from .conftest import FIXTURES
from .report_helpers import validate_report
from .fixture_cases import CONVERTED_CASES as CASES
from .fixture_cases import fixture_args

CORPUS_OPTIONS = {
    "default": ConvertOptions(accept_mpi_ssh=True, katib=True, ssh_secret="mpi-ssh"),
    "jobset-v0.7+kueue": ConvertOptions(accept_mpi_ssh=True, katib=True, ssh_secret="mpi-ssh",
                                        jobset_version=(0, 7), scheduler="kueue", mpi_hostfile="generated"),
    "volcano+renamed-subdomain": ConvertOptions(accept_mpi_ssh=True, katib=True, ssh_secret="mpi-ssh",
                                                scheduler="volcano", subdomain="train", cluster_domain="corp.example"),
}


def _unexplained(report) -> list[str]:
    return [f"{j.kind} {j.name}: {f.code} {f.message} {[e.where for e in f.evidence][:4]}"
            for j in report.jobs for f in j.findings if f.category == "unexplained"]


def _embedded_texts(node) -> list[str]:
    """Katib keeps some trial templates as YAML strings (ConfigMap data, UI fixtures)."""
    if isinstance(node, dict):
        return [t for v in node.values() for t in _embedded_texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _embedded_texts(v)]
    if isinstance(node, str) and "kubeflow.org/" in node and "ReplicaSpecs" in node:
        return [node]
    return []


def _options_from_args(args: list[str]) -> ConvertOptions:
    from kf2jobset.cli.main import build_options

    kw = dict(jobset_version="v0.12", scheduler="none", name=None, subdomain=None, keep_kubeflow_labels=False,
              ssh_secret=None, accept_mpi_ssh=False, mpi_hostfile="auto", cluster_domain=None, katib=False,
              gang_scheduler_name="scheduler-plugins")
    for arg in args:
        key, _, value = arg.lstrip("-").partition("=")
        kw[key.replace("-", "_")] = value if value else True
    return build_options(kw)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_fixture_has_no_unexplained_difference(case):
    options = _options_from_args(fixture_args(case))
    result = convert_text((case / "input.yaml").read_text(), "input.yaml", options)
    report = build_report([result], options)
    assert report.jobs or not result.conversions
    assert not _unexplained(report)


@pytest.mark.parametrize("label", list(CORPUS_OPTIONS))
def test_corpus_has_no_unexplained_difference(label):
    options = CORPUS_OPTIONS[label]
    reports, jobs = [], 0
    for name, path in upstream.require_corpus():
        if not name.endswith(".yaml"):
            continue
        text = path.read_text()
        result = convert_text(text, name, options)
        results = [result]
        for doc in result.documents:
            for i, inner in enumerate(_embedded_texts(doc.data)):
                results.append(convert_text(inner, f"{name}#embedded-{i}", options))
        report = build_report([r for r in results if not r.errors], options)
        jobs += len(report.jobs)
        assert not _unexplained(report), f"{path}: {_unexplained(report)}"
        validate_report(as_dict(report))
        reports.append(report)
    assert jobs >= 40, f"only {jobs} jobs found in the corpus"


# ---------------------------------------------------------------- the comparison is not vacuous

PYTORCH = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text()


def _broken(mutate, text=PYTORCH, **options):
    """Report on a conversion whose JobSet was changed after the fact (no note knows about it)."""
    opts = ConvertOptions(**options)
    result = convert_text(text, "job.yaml", opts)
    conv = result.conversions[0]
    conv.jobset = copy.deepcopy(conv.jobset)
    mutate(conv.jobset)
    doc = result.documents[0]
    return job_report(conv, doc, (), opts)


def _rjob(jobset, name):
    return next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name)


def _pod(jobset, name):
    return _rjob(jobset, name)["template"]["spec"]["template"]["spec"]


def _codes(job) -> dict:
    return {f.code: f for f in job.findings if f.category == "unexplained"}


def test_clean_conversion_has_no_unexplained():
    assert not _codes(_broken(lambda js: None))


def test_dropped_env_var_is_unexplained():
    def drop(js):
        env = _pod(js, "worker")["containers"][0]["env"]
        env[:] = [e for e in env if e["name"] != "WORLD_SIZE"]

    found = _codes(_broken(drop))
    assert "RT901" in found
    assert {e.where.split()[0] for e in found["RT901"].evidence} == {"worker/0", "worker/1", "worker/2"}
    assert found["RT901"].evidence[0].change == "missing"


def test_wrong_rank_is_unexplained():
    def shift(js):
        for e in _pod(js, "worker")["containers"][0]["env"]:
            if e["name"] == "RANK":
                e.pop("valueFrom")
                e["value"] = "0"

    found = _codes(_broken(shift))
    assert found["RT901"].evidence[0].operator == "1" and found["RT901"].evidence[0].jobset == "0"


def test_changed_command_mount_and_port_are_unexplained():
    def edit(js):
        c = _pod(js, "master")["containers"][0]
        c["command"] = ["python", "other.py"]
        c.setdefault("volumeMounts", []).append({"name": "scratch", "mountPath": "/scratch"})
        c["ports"][0]["containerPort"] = 1234

    found = _codes(_broken(edit))
    assert {"RT904", "RT905", "RT906"} <= set(found)
    assert found["RT906"].evidence[0].subject == "/scratch"


def test_lifecycle_changes_are_unexplained():
    def edit(js):
        js["spec"]["successPolicy"] = {"operator": "Any"}
        _rjob(js, "worker").pop("dependsOn")
        _rjob(js, "master")["template"]["spec"]["backoffLimit"] = 0
        js["spec"]["suspend"] = True

    found = _broken(edit)
    subjects = {(e.aspect, e.subject) for f in found.findings if f.category == "unexplained" for e in f.evidence}
    assert ("lifecycle", "success") in subjects
    assert ("lifecycle", "suspend") in subjects
    assert ("start", "Worker") in subjects
    assert ("failure", "Master") in subjects


def test_missing_pod_is_unexplained():
    found = _codes(_broken(lambda js: _rjob(js, "worker").__setitem__("replicas", 2)))
    assert found["RT910"].evidence[0].where == "worker/2"


def test_user_written_old_address_is_rewritten_and_a_stale_one_is_breaking():
    text = PYTORCH.replace('["torchrun", "train.py"]', '["torchrun", "train.py", "--peer=resnet-ddp-master-0:23456"]', 1)
    assert text != PYTORCH
    report = build_report([convert_text(text, "job.yaml", ConvertOptions())], ConvertOptions())
    assert [f for f in report.findings if f.code == "JS065"]  # kf2jobset/core/addresses.py: the same pod, JobSet hostname
    assert not [f for f in report.findings if f.code == "RT010"]
    assert not _unexplained(report)

    def undo(js):  # the literal put back: nothing answers to it under the JobSet
        for rjob in js["spec"]["replicatedJobs"]:
            for c in rjob["template"]["spec"]["template"]["spec"]["containers"]:
                c["command"] = [w.replace("$(KF2JOBSET_JOBSET_NAME)-master-0-0.$(KF2JOBSET_JOBSET_NAME)", "resnet-ddp-master-0")
                                for w in c.get("command") or []]
    stale = [f for f in _broken(undo, text=text).findings if f.code == "RT010"]
    assert stale and stale[0].category == "breaking"
    assert "resnet-ddp-master-0" in stale[0].message


MXJOB_CASES = [c for c in CASES if c.parent.name == "mxjob"]


@pytest.mark.parametrize("label", list(CORPUS_OPTIONS))
def test_mxjob_fixtures_under_every_corpus_option_set(label):
    # No upstream corpus holds an MXJob (removed in v1.9.0): its fixtures stand in, under the same option sets.
    assert len(MXJOB_CASES) >= 4
    for case in MXJOB_CASES:
        result = convert_text((case / "input.yaml").read_text(), "input.yaml", CORPUS_OPTIONS[label])
        report = build_report([result], CORPUS_OPTIONS[label])
        assert report.jobs and not _unexplained(report), (case.name, _unexplained(report))
        validate_report(as_dict(report))


MXJOB = (FIXTURES / "mxjob" / "dist-sync" / "input.yaml").read_text()


def _set_env(js, rjob, name, value):
    for e in _pod(js, rjob)["containers"][0]["env"]:
        if e["name"] == name:
            e.pop("valueFrom", None)
            e["value"] = value


def test_wrong_mx_config_index_and_scheduler_address_are_unexplained():
    def edit(js):
        for e in _pod(js, "worker")["containers"][0]["env"]:
            if e["name"] == "MX_CONFIG":
                e["value"] = e["value"].replace('"index":$(KF2JOBSET_JOB_INDEX)', '"index":0')
        _set_env(js, "server", "DMLC_PS_ROOT_URI", "$(KF2JOBSET_JOBSET_NAME)-worker-0-0.$(KF2JOBSET_JOBSET_NAME)")
        _set_env(js, "worker", "DMLC_WORKER_ID", "0")

    found = _broken(edit, MXJOB)
    where = {(e.where.split()[0], e.subject) for f in found.findings if f.category == "unexplained" for e in f.evidence}
    assert {("worker/1", "MX_CONFIG"), ("worker/1", "DMLC_WORKER_ID"), ("server/0", "DMLC_PS_ROOT_URI")} <= where
    assert ("worker/0", "MX_CONFIG") not in where and ("worker/0", "DMLC_WORKER_ID") not in where  # right for worker 0


def test_mxjob_success_on_every_job_is_unexplained():
    found = _broken(lambda js: js["spec"]["successPolicy"].pop("targetReplicatedJobs"), MXJOB)
    subjects = {(e.aspect, e.subject) for f in found.findings if f.category == "unexplained" for e in f.evidence}
    assert ("lifecycle", "success") in subjects
