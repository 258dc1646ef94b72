"""Golden fixtures: fixtures/<kind>/<case>/input.yaml -> expected.yaml (stdout) or expected-error.txt.

A case may hold `args` (extra CLI flags, one per line). The CLI runs for real (click's runner), so
these also pin exit codes and the no-output-on-error rule.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES, check_golden, held_jobsets, mapping_fixture_dirs
from .templates import case_values, fill, render

CASES = sorted(p.parent for p in FIXTURES.glob("*/*/input.yaml"))


def run_case(case):
    args = []
    if (case / "args").exists():
        args = [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")]
    result = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), *args], catch_exceptions=False)
    return result


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_golden_conversion(case):
    result = run_case(case)
    if (case / "expected-error.txt").exists() or result.exit_code != 0:
        assert result.exit_code != 0, "expected the conversion to fail"
        assert result.stdout == "", "nothing may be written on stdout when conversion fails"
        stderr = result.stderr.replace(str(case) + "/", "")
        check_golden(case / "expected-error.txt", f"exit {result.exit_code}\n{stderr}")
    else:
        check_golden(case / "expected.yaml", result.stdout)


def test_every_kind_has_fixtures():
    from kf2jobset.mappings import all_mappings
    from kf2jobset.text.yamlio import parse_documents, to_plain

    kinds = {c.parent.name for c in CASES}
    dirs = mapping_fixture_dirs()
    assert len(dirs) == len(all_mappings()) >= 8
    for kind in dirs:
        assert kind in kinds, f"no golden fixture for {kind} (mappings/{kind}.yaml)"
    # and each directory holds its mapping's kind and apiVersion
    for m in all_mappings():
        stem = m.file.removesuffix(".yaml")
        found = {(d.get("apiVersion"), d.get("kind")) for c in CASES if c.parent.name == stem
                 for d in map(to_plain, (x.data for x in parse_documents((c / "input.yaml").read_text()))) if isinstance(d, dict)}
        assert any((v, m.kind) in found for v in m.api_versions), f"fixtures/{stem} holds no {m.kind} {m.api_versions}"


@pytest.mark.parametrize("case", [c for c in CASES if (c / "expected.yaml").exists()], ids=lambda c: f"{c.parent.name}/{c.name}")
def test_golden_jobsets_pass_our_validator_and_the_real_crd(case, crd_validator):
    from kf2jobset.k8s.validate import check_jobset
    from kf2jobset.text.yamlio import parse_documents, to_plain

    text = (case / "expected.yaml").read_text()
    if (case / "env").exists():  # an envsubst template (fixtures/envsubst): validate it as it will be applied
        text = fill(text, case_values(case))
    if (case / "render").exists():  # a Go text/template or Jinja file (fixtures/templates): rendered
        text = render(text, case)
    jobsets = []
    for doc in parse_documents(text):
        data = to_plain(doc.data)
        if isinstance(data, dict) and data.get("kind") == "JobSet":
            jobsets.append(data)
        elif isinstance(data, dict) and data.get("kind") == "Experiment" and "trialSpec" in data["spec"]["trialTemplate"]:
            jobsets.append(data["spec"]["trialTemplate"]["trialSpec"])
        elif isinstance(data, dict):  # job text in a string (kf2jobset/sources/jobs_in_strings.py): Argo placeholders filled
            jobsets += held_jobsets(data)
    for js in jobsets:
        js["metadata"].setdefault("name", "trial-abcdefgh")
        assert check_jobset(js) == []
        errors = list(crd_validator.iter_errors(js))
        assert not errors, errors[0].message


