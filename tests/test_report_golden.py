"""Golden report files: fixtures/<kind>/<case>/report.md and report.json, next to expected.yaml.

The CLI runs for real (`kf2jobset report input.yaml <args> --format markdown --format json:FILE`)
from inside the case directory, so paths in the goldens are just `input.yaml`. Cases whose
conversion is expected to fail (expected-error.txt) have no report golden.
KF2JOBSET_UPDATE_GOLDEN=1 rewrites them; review the diff.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES, check_golden, mapping_fixture_dirs
from .fixture_cases import CONVERTED_CASES, fixture_args
from .report_helpers import stable_json, validate_report

CASES = CONVERTED_CASES


def run_report(case, tmp_path, monkeypatch):
    monkeypatch.chdir(case)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["report", "input.yaml", *fixture_args(case), "--format", "markdown",
                                       "--format", f"json:{out}"], catch_exceptions=False)
    return result, json.loads(out.read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_report_golden(case, tmp_path, monkeypatch):
    result, data = run_report(case, tmp_path, monkeypatch)
    failing = data["summary"]["failing"]
    assert result.exit_code == (1 if failing else 0), result.output
    validate_report(data)
    unexplained = [f for file in data["files"] for j in file["jobs"] for f in j["findings"] if f["category"] == "unexplained"]
    assert not unexplained, f"runtime differences no mapping note explains: {unexplained}"
    check_golden(case / "report.md", result.stdout)
    check_golden(case / "report.json", stable_json(data))


def _findings(case_name: str) -> list[dict]:
    case = FIXTURES / case_name
    data = json.loads((case / "report.json").read_text())
    return [f for file in data["files"] for j in file["jobs"] for f in j["findings"]]


# What the goldens must show a reader, checked against the committed report.json files.
@pytest.mark.parametrize("case_name, code, category, needle", [
    ("pytorchjob/master-workers", "RT001", "rewritten", "MASTER_ADDR"),
    ("pytorchjob/master-workers", "PT001", "rewritten", "init-pytorch"),
    ("tfjob/chief-ps-workers", "JS030", "approximated", "cleanPodPolicy None (the default)"),
    ("pytorchjob/elastic-hpa", "PT010", "breaking", "elasticPolicy"),
    ("pytorchjob/elastic-hpa", "PT011", "dropped", "HorizontalPodAutoscaler"),
    ("mpijob-v1/accepted", "MPI001", "breaking", "kubectl exec"),
    ("tfjob/exitcode", "JS021", "approximated", "podFailurePolicy"),
    ("xgboostjob/run-policy", "JS033", "approximated", "activeDeadlineSeconds"),
])
def test_goldens_show_the_expected_findings(case_name, code, category, needle):
    found = [f for f in _findings(case_name) if f["code"] == code]
    assert found, f"{case_name}: no {code} finding"
    assert found[0]["category"] == category
    assert needle in found[0]["message"]


def test_rewritten_address_says_why():
    f = next(f for f in _findings("pytorchjob/master-workers") if f["code"] == "RT001")
    assert f["message"].startswith("MASTER_ADDR, PET_MASTER_ADDR: `resnet-ddp-master-0` becomes `resnet-ddp-master-0-0.resnet-ddp`")
    assert "same logical pod master/0 under JobSet DNS" in f["message"]
    assert all(e["change"] == "equivalent" for e in f["evidence"])
    # every pod that got the variable: the master itself and the three workers
    assert {e["where"].split()[0] for e in f["evidence"]} == {"master/0", "worker/0", "worker/1", "worker/2"}


def test_init_container_evidence_is_attached():
    f = next(f for f in _findings("pytorchjob/master-workers") if f["code"] == "PT001")
    assert [e["aspect"] for e in f["evidence"]] == ["init"] * len(f["evidence"])
    assert all(e["change"] == "missing" and e["operator"] for e in f["evidence"])


def test_every_converted_fixture_has_report_goldens():
    kinds = {c.parent.name for c in CASES}
    for kind in mapping_fixture_dirs():
        assert kind in kinds, f"no report golden for {kind} (mappings/{kind}.yaml)"
    for case in CASES:
        assert (case / "report.md").exists() and (case / "report.json").exists(), case


def test_every_code_in_the_goldens_has_a_title():
    from kf2jobset.report.codes import codes as known

    codes = {f["code"] for case in CASES for job in json.loads((case / "report.json").read_text())["files"][0]["jobs"]
             for f in job["findings"]}
    assert {"MX001", "MX002", "JS004"} <= codes
    assert sorted(codes - set(known())) == []
