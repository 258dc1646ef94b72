"""kf2jobset/checks/layout_guard.py: a converted JobSet whose replicatedJobs were reshaped by hand under the values
that read them — a replicatedJob added beside the ranks (the size label counts its pods, or it claims their
indexes), one renamed (addresses name pods that are gone), replicatedJobs reordered under ranks read from
job-global-index (list order), a Job running several pods (the ranks or task indexes read from its index
repeat) — is listed by `convert --check` as `reshaped` and warned of by report and convert; edits the values
follow pass."""
from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kf2jobset import exitcodes
from kf2jobset.checks.layout_guard import LAYOUT_ANNOTATION, problems_of, reads_layout, reshaped_jobsets

from .conftest import FIXTURES
from .fixture_cases import CONVERTED_CASES
from .jobset_edits import convert_cli, converted_in_place
from .templates import render

DDP = FIXTURES / "pytorchjob" / "master-workers" / "input.yaml"
XGB = FIXTURES / "xgboostjob" / "master-workers" / "input.yaml"
TF = FIXTURES / "tfjob" / "chief-ps-workers" / "input.yaml"
JAX = FIXTURES / "jaxjob" / "workers" / "input.yaml"


def _jobset(text: str) -> dict:
    (js,) = [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") == "JobSet"]
    return js


def _rename(js: dict, old: str, new: str) -> dict:
    """A replicatedJob renamed as a user would: its name and every reference by name (dependsOn, successPolicy)."""
    for r in js["spec"]["replicatedJobs"]:
        if r["name"] == old:
            r["name"] = new
        for d in r.get("dependsOn") or []:
            if d["name"] == old:
                d["name"] = new
    targets = (js["spec"].get("successPolicy") or {}).get("targetReplicatedJobs") or []
    js["spec"]["successPolicy"]["targetReplicatedJobs"] = [new if t == old else t for t in targets] if targets else targets
    return js


def _added(js: dict) -> dict:
    js["spec"]["replicatedJobs"].append({"name": "tensorboard", "replicas": 1, "template": {"spec": {"template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "tb", "image": "tensorflow/tensorflow:2.15"}]}}}}})
    return js


def _multi_pod(js: dict) -> dict:
    job = js["spec"]["replicatedJobs"][-1]["template"]["spec"]
    job["completions"] = job["parallelism"] = 2
    return js


def _more_workers(js: dict) -> dict:
    js["spec"]["replicatedJobs"][-1]["replicas"] += 2
    return js


def _new_image(js: dict) -> dict:
    for r in js["spec"]["replicatedJobs"]:
        r["template"]["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/vision/resnet:2.4"
    return js


@pytest.mark.parametrize("edit, said", [(_added, "replicatedJob tensorboard added beside master, worker"),
                                        (lambda js: _rename(js, "master", "leader"), "replicatedJob master, which"),
                                        (_multi_pod, "worker runs 2 pods per Job")])
def test_a_layout_edit_is_listed_by_check_and_warned_by_report_and_convert(tmp_path, edit, said):
    work, text = converted_in_place(tmp_path, DDP.read_text())
    path = work / "job.yaml"
    path.write_text(yaml.safe_dump(edit(_jobset(text)), sort_keys=False))
    check = convert_cli("--check", path)
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    (line,) = check.stdout.splitlines()
    assert ": reshaped: " in line and said in line, line
    assert "1 left: 1 reshaped" in check.stderr
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    rep = CliRunner().invoke(main, ["report", str(path)])
    assert rep.exit_code == exitcodes.OK and said in rep.output and "1 reshaped" in rep.output, rep.output
    conv = convert_cli(path)
    assert conv.exit_code == exitcodes.OK and said in conv.stderr, conv.stderr


@pytest.mark.parametrize("edit", [_more_workers, _new_image, lambda js: js])
def test_edits_the_values_follow_pass(tmp_path, edit):
    work, text = converted_in_place(tmp_path, DDP.read_text())
    path = work / "job.yaml"
    path.write_text(yaml.safe_dump(edit(_jobset(text)), sort_keys=False))
    check = convert_cli("--check", path)
    assert check.exit_code == exitcodes.OK, check.stdout + check.stderr


def _reversed(js: dict) -> dict:
    js["spec"]["replicatedJobs"].reverse()
    return js


def _rjob(js: dict, name: str) -> dict:
    (r,) = [r for r in js["spec"]["replicatedJobs"] if r["name"] == name]
    return r


def _several_pods(name: str):
    def edit(js: dict) -> dict:
        job = _rjob(js, name)["template"]["spec"]
        job["completions"] = job["parallelism"] = 2
        return js
    return edit


def _copied(name: str, new: str):
    def edit(js: dict) -> dict:
        copy_ = copy.deepcopy(_rjob(js, name))
        copy_["name"] = new
        js["spec"]["replicatedJobs"].append(copy_)
        return js
    return edit


def _checked(tmp_path, source, flags, edit):
    """`convert --check` on the job converted in place with ``flags`` after ``edit`` of its JobSet."""
    work, text = converted_in_place(tmp_path, source.read_text(), *flags)
    path = work / "job.yaml"
    docs = [edit(d) if isinstance(d, dict) and d.get("kind") == "JobSet" else d for d in yaml.safe_load_all(text)]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return convert_cli("--check", path)


@pytest.mark.parametrize("source, flags, edit, said", [
    # job-global-index counts replicatedJobs in list order: rank 0 leaves the pod MASTER_ADDR names
    (XGB, (), _reversed, "replicatedJobs reordered (worker, master; the values were written for master, worker)"),
    (DDP, ("--scheduler", "volcano"), _reversed, "replicatedJobs reordered (worker, master; the values were written for"),
    (DDP, ("--scheduler", "scheduler-plugins"), _reversed, "ranks follow the list order"),
    # the task index and the process id read job-index: two pods of one Job claim one identity
    (TF, (), _several_pods("worker"), "replicatedJob worker runs 2 pods per Job: they share one job-index"),
    (JAX, (), _several_pods("worker"), "replicatedJob worker runs 2 pods per Job: they share one job-index"),
    # a copy of TF's workers: its pods claim worker indexes again, and no TF_CONFIG names them
    (TF, (), _copied("worker", "extra-workers"), "replicatedJob extra-workers added beside chief, ps, worker, evaluator: "
                                                 "its pods read job-index"),
])
def test_a_layout_edit_the_indexes_do_not_follow_is_listed(tmp_path, source, flags, edit, said):
    check = _checked(tmp_path, source, flags, edit)
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    (line,) = check.stdout.splitlines()
    assert ": reshaped: " in line and said in line, line


@pytest.mark.parametrize("source, edit", [
    (TF, _reversed),  # task indexes read job-index, within each replicatedJob: the list order is no one's rank
    (TF, lambda js: js["spec"]["replicatedJobs"].append(js["spec"]["replicatedJobs"].pop(0)) or js),
    (TF, _added),  # a TensorBoard reads no index and no count
    (XGB, lambda js: _added(js) and js),  # ranks keep their places behind a new last replicatedJob
])
def test_a_reorder_or_addition_nothing_reads_is_not_listed(tmp_path, source, edit):
    check = _checked(tmp_path, source, (), edit)
    assert ": reshaped: " not in check.stdout, check.stdout


def test_a_replicated_job_added_before_the_ranks_shifts_them():
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    js = _jobset(convert_text(XGB.read_text(), "job.yaml", ConvertOptions()).new_text)
    _added(js)["spec"]["replicatedJobs"].insert(0, js["spec"]["replicatedJobs"].pop())
    found = " | ".join(problems_of(js))
    assert "replicatedJob tensorboard added before master: ranks follow the list order" in found, found
    assert "added before worker" in found and "reordered" not in found, found


def test_a_jobset_converted_before_the_record_reads_the_order_of_its_size_record(tmp_path):
    """A JobSet converted before the layout record was written for XGBoost (no kf2jobset.dev/replicated-jobs, its
    kf2jobset.dev/sized-for in list order) is still checked."""
    def old_and_reversed(js: dict) -> dict:
        del js["metadata"]["annotations"][LAYOUT_ANNOTATION]
        return _reversed(js)
    check = _checked(tmp_path, XGB, (), old_and_reversed)
    assert check.exit_code == exitcodes.FINDINGS and "replicatedJobs reordered" in check.stdout, check.stdout


def test_every_converted_fixture_is_whole():
    """No JobSet kf2jobset writes is reshaped (a rule that fires on fresh output is a false alarm)."""
    checked = 0
    for case in CONVERTED_CASES:
        expected = case / "expected.yaml"
        if expected.exists() and "kf2jobset.dev/source" in expected.read_text():
            assert reshaped_jobsets(expected.read_text()) == [], case
            checked += 1
    assert checked > 100


def test_the_record_is_written_where_values_read_the_layout_only():
    """kf2jobset.dev/replicated-jobs, naming every replicatedJob in order, on each JobSet whose values read the size
    label or an index label or name a replicatedJob's pods, and on no other; never on a TrainJob or its runtime
    patch (Trainer builds the replicatedJobs: one node)."""
    recorded = 0
    for case in CONVERTED_CASES:
        expected = case / "expected.yaml"
        if not expected.exists():
            continue
        text = expected.read_text()
        if (case / "render").exists():  # a Go text/template or Jinja template: as its program renders it
            text = render(text, case)
        for d in yaml.safe_load_all(text):
            if not isinstance(d, dict):
                continue
            if d.get("kind") == "TrainJob":
                assert LAYOUT_ANNOTATION not in yaml.safe_dump(d), case
            if d.get("kind") != "JobSet" or "kf2jobset.dev/source" not in yaml.safe_dump(d.get("metadata")):
                continue
            record = ((d.get("metadata") or {}).get("annotations") or {}).get(LAYOUT_ANNOTATION)
            assert (record is not None) == reads_layout(d), case
            if record is not None:
                assert record == ",".join(r["name"] for r in d["spec"]["replicatedJobs"]), case
                recorded += 1
    assert recorded > 60


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(1, 4), st.booleans())
def test_only_the_edits_that_break_a_value_are_named(extra, pods, rename):
    """Random mixes of the edits on the converted DDP job: each problem is named iff its edit was made."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    base = _jobset(convert_text(DDP.read_text(), "job.yaml", ConvertOptions()).new_text)
    js = copy.deepcopy(base)
    for i in range(extra):
        _added(js)["spec"]["replicatedJobs"][-1]["name"] = f"extra{i}"
    js["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"] = pods
    if rename:
        _rename(js, "master", "leader")
    found = " | ".join(problems_of(js))
    assert ("added beside" in found) == (extra > 0 and not rename)
    assert ("renamed or replaced" in found) == rename
    assert ("runs" in found and "pods per Job" in found) == (pods > 1)
    assert ("which the JobSet no longer has" in found) == rename


def test_the_fixer_hook_fails_on_a_stale_object_it_cannot_fix(tmp_path):
    """`convert --in-place --fail-on-change` (the kf2jobset-convert hook) exits 1 on a reshaped JobSet, which it
    leaves as it is, and 0 on the same file whole."""
    work, text = converted_in_place(tmp_path, DDP.read_text())
    path = work / "job.yaml"
    assert convert_cli("--in-place", "--fail-on-change", path).exit_code == exitcodes.OK
    path.write_text(yaml.safe_dump(_added(_jobset(text)), sort_keys=False))
    before = path.read_bytes()
    hook = convert_cli("--in-place", "--fail-on-change", path)
    assert hook.exit_code == exitcodes.FINDINGS and ": reshaped: " in hook.stderr, hook.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("value, flagged", [
    ("wide-deep-ps-0.ads.svc:2222", True),  # v1's per-pod Service, as a runbook writes it
    ("--ps=wide-deep-ps-1:2222", True),
    ("grpc://wide-deep-worker-2", True),
    ("gs://models/wide-deep-ps-0/export", False),  # a path segment
    ("wide-deep-ps-7:2222", False),  # no such v1 pod (2 parameter servers): left alone, as the conversion leaves it
    ("other-wide-deep-ps-0:2222", False),  # a longer word
    ("$(KF2JOBSET_JOBSET_NAME)-ps-0-0.$(KF2JOBSET_JOBSET_NAME):2222", False),  # the JobSet's own pod
])
def test_a_v1_pod_name_added_by_hand_is_named_unless_a_service_serves_it(value, flagged):
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    text = (FIXTURES / "tfjob" / "chief-ps-workers" / "input.yaml").read_text()
    js = _jobset(convert_text(text, "job.yaml", ConvertOptions()).new_text)
    container = js["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).append({"name": "PEER", "value": value})
    found = " | ".join(problems_of(js))
    assert ("the v1 operator's per-pod names" in found) == flagged, found
    if flagged:
        name = value.split("//")[-1].split("=")[-1].split(".")[0].split(":")[0]
        assert problems_of(js, frozenset({name})) == []  # --v1-pod-services (JS066) serves it
