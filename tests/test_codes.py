"""Finding codes: one source (kf2jobset/report/codes.yaml) feeds `kf2jobset explain`, the
report's titles and docs/codes.md. Every code the package can emit has a long form; every example
that names a fixture is one whose report shows the code; docs/codes.md is what the source renders."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.report import codebook
from kf2jobset.report.codes import FIELDS, SOURCE, codes, families, title

REPO = Path(__file__).resolve().parent.parent
CODE_LITERAL = re.compile(r"""["']((?:%s)\d{3})["']""" % "|".join(sorted(families(), key=len, reverse=True)))
RETIRED = {"PD001"}  # kept so that the code never gets another meaning; its long form says "Retired"


def emitted_codes() -> set[str]:
    """Every code literal in the package: what a note, a finding or a table can carry."""
    found = set()
    for path in (REPO / "kf2jobset").rglob("*.py"):
        found |= set(CODE_LITERAL.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_code_the_package_emits_has_a_long_form():
    missing = sorted(emitted_codes() - set(codes()))
    assert not missing, f"add these to {SOURCE.name} (title, v1, now, example, action): {missing}"


def test_every_long_form_is_a_code_the_package_emits_or_retired():
    stale = sorted(set(codes()) - emitted_codes() - RETIRED)
    assert not stale, f"no code in kf2jobset/ emits {stale}: retire them (RETIRED here, 'Retired' in the text)"
    for code in RETIRED:
        assert codes()[code].now.startswith("Retired"), code


def test_each_entry_has_every_field_and_the_file_is_sorted_one_entry_per_code():
    import yaml

    raw = yaml.safe_load(SOURCE.read_text(encoding="utf-8"))
    keys = list(raw["codes"])
    assert keys == sorted(keys), "keep codes.yaml sorted by code (it merges line by line)"
    for code, entry in raw["codes"].items():
        assert set(entry) == set(FIELDS), (code, sorted(set(entry) ^ set(FIELDS)))
        for field in FIELDS:
            assert str(entry[field]).strip(), (code, field)
    assert {c.family for c in codes().values()} <= set(families())


def test_fixture_examples_show_their_code():
    """An example names a fixture directory: its golden report must carry the code (so it cannot rot)."""
    checked = 0
    for c in codes().values():
        if not c.fixture:
            continue
        report = REPO / c.fixture / "report.json"
        assert report.is_file(), f"{c.code}: example {c.fixture} has no report.json"
        found = {f["code"] for fr in json.loads(report.read_text())["files"] for job in fr["jobs"] for f in job["findings"]}
        assert c.code in found, f"{c.code}: {c.fixture}'s report does not show it"
        checked += 1
    assert checked >= 60


@pytest.mark.parametrize("code", sorted(c.code for c in codes().values() if c.example.startswith("kf2jobset ")))
def test_command_examples_show_their_code(code, monkeypatch):
    monkeypatch.chdir(REPO)
    args = shlex.split(codes()[code].example)[1:]
    result = CliRunner().invoke(main, args + ["--fail-on", "never"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(rf"\b{code}\b", result.output), result.output


def test_docs_codes_page_is_generated_from_the_source():
    page = REPO / "docs" / "codes.md"
    assert page.read_text(encoding="utf-8") == codebook.markdown(), (
        "docs/codes.md is stale: PYTHONPATH=$PWD python -m kf2jobset explain --markdown > docs/codes.md")


def test_explain_prints_every_long_form():
    runner = CliRunner()
    for c in codes().values():
        result = runner.invoke(main, ["explain", c.code.lower()], terminal_width=80)
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[0] == f"{c.code}: {c.title}"
        for heading in ("Under v1", f"Under the {c.target}", "Example", "What to do"):
            assert heading in lines, (c.code, heading)
        assert max(len(line) for line in lines if not line.startswith("  $ ")) <= 80 or len(lines[0]) > 80


def test_explain_example_is_the_fixture_report_with_its_flags():
    out = CliRunner().invoke(main, ["explain", "MPI001"]).output
    assert "  $ kf2jobset report --accept-mpi-ssh fixtures/mpijob-v1/accepted/input.yaml" in out


def test_explain_without_a_code_lists_every_code_by_family():
    out = CliRunner().invoke(main, ["explain"], terminal_width=80).output
    for fam, what in families().items():
        assert f"{fam}: {what}" in out
    for c in codes().values():
        assert re.search(rf"^  {c.code} +", out, re.M), c.code
    assert out.index("JS: ") < out.index("  JS051 ") < out.index("RT: ") < out.index("  RT901 ")


def test_unknown_code_exits_2_with_close_matches():
    result = CliRunner().invoke(main, ["explain", "JS05"])
    assert result.exit_code == 2
    assert "unknown finding code 'JS05'" in result.output and "JS050, JS051" in result.output
    result = CliRunner().invoke(main, ["explain", "MPI0009"])
    assert result.exit_code == 2 and "MPI009" in result.output
    result = CliRunner().invoke(main, ["explain", "nothing-like-it"])
    assert result.exit_code == 2 and "close matches" not in result.output


def test_titles_come_from_the_one_source():
    assert title("JS051") == codes()["JS051"].title
    assert title("ZZ999") == "kf2jobset finding ZZ999"
    sarif = CliRunner().invoke(main, ["report", "--format", "sarif", "--fail-on", "never",
                                      str(REPO / "fixtures/pytorchjob/elastic-hpa/input.yaml")]).output
    rules = {r["id"]: r for r in json.loads(sarif)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["PT010"]["shortDescription"]["text"] == codes()["PT010"].title
    assert rules["PT010"]["help"]["text"] == codebook.long_form("PT010")  # code scanning's rule help
    assert rules["PT010"]["help"]["markdown"] == codebook.markdown_entry("PT010")


def test_the_text_report_ends_by_naming_explain():
    out = CliRunner().invoke(main, ["report", "--fail-on", "never",
                                    str(REPO / "fixtures/pytorchjob/elastic-hpa/input.yaml")]).output
    assert out.splitlines()[-1] == "What a code means: kf2jobset explain CODE (e.g. kf2jobset explain PT010)"
