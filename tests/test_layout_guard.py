"""kf2jobset/layout_guard.py: a converted JobSet whose replicatedJobs were reshaped by hand under the values
that read them — a replicatedJob added beside the ranks (the size label counts its pods), one renamed (addresses
name pods that are gone), a Job running several pods (ranks read from job-global-index repeat) — is listed by
`convert --check` as `reshaped` and warned of by report and convert; edits the values follow pass."""
from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kf2jobset import exitcodes
from kf2jobset.layout_guard import LAYOUT_ANNOTATION, problems_of, reshaped_jobsets

from .conftest import FIXTURES
from .fixture_cases import CONVERTED_CASES
from .jobset_edits import convert_cli, converted_in_place

DDP = FIXTURES / "pytorchjob" / "master-workers" / "input.yaml"


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

    from kf2jobset.cli import main

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


def test_every_converted_fixture_is_whole():
    """No JobSet kf2jobset writes is reshaped (a rule that fires on fresh output is a false alarm)."""
    checked = 0
    for case in CONVERTED_CASES:
        expected = case / "expected.yaml"
        if expected.exists() and "kf2jobset.dev/source" in expected.read_text():
            assert reshaped_jobsets(expected.read_text()) == [], case
            checked += 1
    assert checked > 100


def test_the_record_is_written_where_values_read_the_size_label_only():
    """kf2jobset.dev/replicated-jobs on a JobSet whose values read global-replicas, naming every replicatedJob;
    none where nothing reads it."""
    for case in CONVERTED_CASES:
        expected = case / "expected.yaml"
        if not expected.exists():
            continue
        for d in yaml.safe_load_all(expected.read_text()):
            if not (isinstance(d, dict) and d.get("kind") == "JobSet"):
                continue
            record = ((d.get("metadata") or {}).get("annotations") or {}).get(LAYOUT_ANNOTATION)
            reads = "jobset.sigs.k8s.io/global-replicas" in yaml.safe_dump(d["spec"])
            if record is not None:
                assert reads and record == ",".join(r["name"] for r in d["spec"]["replicatedJobs"]), case


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(1, 4), st.booleans())
def test_only_the_edits_that_break_a_value_are_named(extra, pods, rename):
    """Random mixes of the edits on the converted DDP job: each problem is named iff its edit was made."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.pipeline import convert_text

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
    from kf2jobset.pipeline import convert_text

    text = (FIXTURES / "tfjob" / "chief-ps-workers" / "input.yaml").read_text()
    js = _jobset(convert_text(text, "job.yaml", ConvertOptions()).new_text)
    container = js["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).append({"name": "PEER", "value": value})
    found = " | ".join(problems_of(js))
    assert ("the v1 operator's per-pod names" in found) == flagged, found
    if flagged:
        name = value.split("//")[-1].split("=")[-1].split(".")[0].split(":")[0]
        assert problems_of(js, frozenset({name})) == []  # --v1-pod-services (JS066) serves it
