"""`kf2jobset report` and `kf2jobset convert --report`: outputs, exit codes, stream discipline."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES, REPO
from .jobs import pytorchjob_yaml
from .report_helpers import validate_report

PT = str(FIXTURES / "pytorchjob" / "master-workers" / "input.yaml")  # approximated at worst
ELASTIC = str(FIXTURES / "pytorchjob" / "elastic-hpa" / "input.yaml")  # breaking
BAD = str(FIXTURES / "errors" / "wrong-type" / "input.yaml")


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)


@pytest.mark.parametrize("path, fail_on, code", [
    (PT, "breaking", 0), (PT, "approximated", 1), (PT, "any", 1), (PT, "never", 0),
    (ELASTIC, "breaking", 1), (ELASTIC, "never", 0),
])
def test_exit_code_follows_fail_on(path, fail_on, code):
    assert run("report", path, "--fail-on", fail_on).exit_code == code


def test_default_fail_on_is_breaking():
    assert run("report", PT).exit_code == 0
    assert run("report", ELASTIC).exit_code == 1


def test_input_errors_win_over_findings_and_are_reported():
    result = run("report", BAD, ELASTIC, "--format", "json")
    assert result.exit_code == 3
    data = json.loads(result.stdout)
    validate_report(data)
    assert data["summary"]["errors"] == 2 and data["summary"]["jobs"] == 1
    assert data["files"][0]["errors"][0]["line"] == 8


def test_unreadable_file_is_an_input_error(tmp_path):
    result = run("report", str(tmp_path / "missing.yaml"), "--format", "json")
    assert result.exit_code == 3
    assert "cannot read" in json.loads(result.stdout)["files"][0]["errors"][0]["message"]


def test_human_text_and_machine_files_in_one_run(tmp_path):
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    result = run("report", ELASTIC, "--format", "text", "--format", f"sarif:{sarif}", "--format", f"junit:{junit}")
    assert result.exit_code == 1
    assert "PT010" in result.stdout and result.stdout.rstrip().splitlines()[-2].startswith("1 job in 1 file")
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert junit.read_text().startswith("<?xml")


def test_output_names_the_file_of_the_bare_format(tmp_path):
    out = tmp_path / "report.md"
    result = run("report", PT, "--format", "markdown", "--output", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    assert out.read_text().startswith("## kf2jobset")


@pytest.mark.parametrize("args", [
    ["--format", "text", "--format", "json"],  # two formats want stdout
    ["--format", "yaml"],  # unknown format
    ["--format", "json:"],  # empty file name
    ["--format", "text", "--format", "json", "--output", "x"],  # --output is ambiguous
])
def test_bad_output_specs_are_usage_errors(args):
    result = run("report", PT, *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "kf2jobset:" in result.stderr


def test_colour_rules(monkeypatch):
    assert "\033[" not in run("report", PT).stdout  # not a terminal
    assert "\033[" in run("report", PT, "--color", "always").stdout
    assert "\033[" not in run("report", PT, "--color", "never").stdout

    from kf2jobset.report.outputs import use_color

    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", Tty())
    assert use_color("always", Tty())


def test_convert_report_goes_to_stderr_not_into_the_yaml():
    plain = run("convert", PT)
    with_report = run("convert", PT, "--report", "text")
    assert with_report.exit_code == 0
    assert with_report.stdout == plain.stdout
    assert "JS030" in with_report.stderr and "JS030" not in with_report.stdout


def test_convert_report_to_files(tmp_path):
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    result = run("convert", ELASTIC, "--report", f"markdown:{md}", "--report", f"json:{js}")
    assert result.exit_code == 0  # convert's own contract: the report does not change its exit code
    assert result.stdout.startswith("---") or result.stdout.startswith("apiVersion")
    validate_report(json.loads(js.read_text()))
    assert "PT010" in md.read_text()


def test_convert_report_refuses_stdout():
    result = run("convert", PT, "--report", "json:-")
    assert result.exit_code == 2 and result.stdout == ""


@pytest.mark.parametrize("flag", ["--check", "--in-place"])
def test_convert_report_is_refused_in_repo_mode(tmp_path, flag):
    job = tmp_path / "job.yaml"
    job.write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    before = job.read_bytes()
    result = run("convert", str(job), flag, "--report", "text")
    assert result.exit_code == 2 and "kf2jobset report" in result.stderr
    assert job.read_bytes() == before


def test_convert_report_not_written_when_conversion_fails(tmp_path):
    out = tmp_path / "r.json"
    result = run("convert", BAD, "--report", f"json:{out}")
    assert result.exit_code == 3 and not out.exists()


def test_version_does_not_import_report_machinery():
    code = ("import sys; from kf2jobset.cli.main import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('deepdiff', 'jsonschema', 'kf2jobset.report', 'kf2jobset.text.k8syaml') if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.splitlines()[0].startswith("kf2jobset, version ")
    assert out.stdout.splitlines()[-1] == "", f"imported: {out.stdout.splitlines()[-1]}"


def test_secret_values_are_never_printed(tmp_path):
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: hf-token}\n" \
             "data: {token: c3VwZXItc2VjcmV0LXZhbHVl}\nstringData: {plain: super-secret-value}\n"
    env = [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}},
           {"name": "AUTH", "value": "Bearer $(HF_TOKEN)"}]
    text = secret + "---\n" + pytorchjob_yaml("tok", workers=0, image="trainer:1", restart_policy=None, container={"env": env})
    path = tmp_path / "job.yaml"
    path.write_text(text)
    for fmt in ("text", "markdown", "json", "junit", "sarif", "github"):
        out = run("report", str(path), "--format", fmt, "--fail-on", "never")
        assert out.exit_code == 0
        assert "c3VwZXItc2VjcmV0LXZhbHVl" not in out.stdout and "super-secret-value" not in out.stdout


def _tree_with_noise(root):
    """A repo as people have them: a job, a Helm chart (one template mentions a job), a vendored CRD
    naming TFJob, YAML that is not a manifest and does not parse, and a directory excluded."""
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (root / "chart" / "templates" / "job.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {{ .Release.Name }}\n")
    (root / "chart" / "templates" / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.n }}\n")
    (root / "apps").mkdir()
    (root / "apps" / "job.yaml").write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    (root / "apps" / "not-yaml.yaml").write_text("a: [\n")
    (root / "crds").mkdir()
    (root / "crds" / "tfjob-crd.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: tfjobs.kubeflow.org\n"
        "spec:\n  group: kubeflow.org\n  names:\n    kind: TFJob\n    plural: tfjobs\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "job.yaml").write_text((FIXTURES / "tfjob" / "worker-only" / "input.yaml").read_text())
    return root


def test_report_dir_walks_like_convert_check(tmp_path, monkeypatch):
    root = _tree_with_noise(tmp_path)
    monkeypatch.chdir(root)
    res = CliRunner().invoke(main, ["report", ".", "--exclude", "vendor/", "--format", "json:r.json"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        "kf2jobset: 6 files scanned, 1 job in 1 file, 2 skipped (Helm templates)",
        "kf2jobset: hint: Helm templates are not reported; render the chart (helm template CHART | kf2jobset report -)",
    ]
    data = json.loads((root / "r.json").read_text())
    assert [f["path"] for f in data["files"]] == ["apps/job.yaml"]
    text = CliRunner().invoke(main, ["report", ".", "--exclude", "vendor/"])
    assert "no Kubeflow jobs" not in text.stdout and "error" not in text.stdout
    assert text.stderr.count("files scanned") == 1


def test_report_of_a_named_file_without_jobs_still_says_so(tmp_path):
    f = tmp_path / "cm.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    res = CliRunner().invoke(main, ["report", str(f)])
    assert res.exit_code == 0
    assert f"{f}: no Kubeflow jobs" in res.stdout
    assert "scanned" not in res.stderr


@pytest.mark.parametrize("version, ok", [
    ("v0.12", True), ("0.12.4", True), ("v0.6", True),
    ("v0.5", False),  # no job-global-index label: ranks cannot be carried
    ("v0.13", False), ("v1.0", False),  # newer than kf2jobset knows: neither used nor checked
    ("latest", False),
])
def test_jobset_version_range(version, ok):
    result = run("convert", PT, "--jobset-version", version)
    if ok:
        assert result.exit_code == 0, result.stderr
    else:
        assert result.exit_code == 2 and result.stdout == "" and "--jobset-version" in result.stderr, result.stderr
