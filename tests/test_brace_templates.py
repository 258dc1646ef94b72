"""Go text/template and Jinja files outside Helm charts (kf2jobset/sources/brace_templates.py, brace_files.py): placeholders
that stand for scalars are carried, each as written, and the JobSet renders to what the rendered job converts to;
a placeholder where the value is needed, and template text that decides which lines the file has, are refused
naming the engine, the placeholder or construct, the field or line, and the route; in stream mode, repo mode
(--check, --in-place, directory walks of `*.yaml.j2`) and the report.

Fixtures: fixtures/templates/<case>/ and fixtures/katib-configmap/jinja-template/ (goldens: tests/test_golden.py,
tests/test_report_golden.py; a `render` file holds the values a rendering fills in).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.sources import brace_templates
from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES, REPO
from .templates import render

CASES = FIXTURES / "templates"


def run(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


def args(case: str) -> list[str]:
    f = CASES / case / "args"
    return f.read_text().split() if f.exists() else []


def test_engines_are_told_apart():
    assert brace_templates.engine_of("image: {{.Image}}\n", "job.yaml") == brace_templates.GO
    assert brace_templates.engine_of("image: {{ .Image }}\n", "job.yaml") == brace_templates.GO
    assert brace_templates.engine_of("name: {{ name }}\n", "job.yaml") == brace_templates.JINJA
    assert brace_templates.engine_of("name: x\n{% if a %}\n", "job.yaml") == brace_templates.JINJA
    assert brace_templates.engine_of("name: {{.Name}}\n", "job.yaml.j2") == brace_templates.JINJA
    assert brace_templates.engine_of("image: {{ .Values.image }}\n", "job.yaml") == brace_templates.HELM
    assert brace_templates.engine_of("# image: {{.Image}}\nname: x\n", "job.yaml") is None  # only in a comment
    argo = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec: {x: '{{workflow.name}}'}\n"
    assert brace_templates.engine_of(argo, "wf.yaml") is None  # Argo reads its own


@pytest.mark.parametrize("values", [{}, {"{{.WorkerReplicas}}": "5", "{{.GPUsPerWorker}}": "8"}])
def test_scalar_placeholders_are_carried_as_written_and_render_to_a_valid_jobset(values, tmp_path, crd_validator):
    case = CASES / "go-program"
    res = run("convert", case / "input.yaml")
    assert res.exit_code == exitcodes.OK, res.output
    out = res.stdout
    # each as written: a plain one stays plain (the program fills in text before YAML is read), a quoted one quoted
    for line in ('  name: "{{._NAME_}}"', "  namespace: {{.Namespace}}", "    benchmark.example.com/delay: {{.ttl}}",
                 "    replicas: {{.WorkerReplicas}}", "              image: {{.BertTrainingImage}}",
                 "                  nvidia.com/gpu: {{.GPUsPerWorker}}"):
        assert line in out.splitlines(), line
    assert "KF2JOBSET_TPL" not in res.output
    assert "TPL004" in res.stderr and "template for Go text/template" in res.stderr
    text = out
    for spelling, value in values.items():
        text = text.replace(spelling, value)
    (tmp_path / "render").write_text((case / "render").read_text())
    jobset = yaml.safe_load(render(text, tmp_path))
    assert check_jobset(jobset) == [] and not list(crd_validator.iter_errors(jobset))
    worker = jobset["spec"]["replicatedJobs"][1]
    assert worker["replicas"] == int(values.get("{{.WorkerReplicas}}", "3"))
    # what the rendered job converts to: the same JobSet
    rendered_job = (case / "input.yaml").read_text()
    for spelling, value in values.items():
        rendered_job = rendered_job.replace(spelling, value)
    direct = CliRunner().invoke(main, ["convert", "-"], input=render(rendered_job, tmp_path))
    assert direct.exit_code == exitcodes.OK, direct.output
    assert yaml.safe_load(direct.stdout) == jobset


@pytest.mark.parametrize("case, needle", [
    ("go-tfjob-worker-count", ":17:7: document 1: spec.tfReplicaSpecs.Worker.replicas: Go text/template placeholder "
                              "{{ .WorkerReplicas }} where kf2jobset needs the value: replica counts decide"),
    ("jinja-mpijob-slots", ":7:3: document 1: spec.slotsPerWorker: Jinja placeholder {{ slots_per_worker }} where kf2jobset "
                           "needs the value"),
    ("jinja-blocks", ":17:1: document 1: Jinja template text {% if data_pvc %} (line 17); {% endif %} (line 25) decides which "
                     "lines the file has"),
])
def test_what_needs_a_value_is_refused_naming_engine_placeholder_field_and_route(case, needle, tmp_path, monkeypatch):
    res = run("convert", CASES / case / "input.yaml", *args(case))
    assert res.exit_code == exitcodes.INPUT and res.stdout == ""
    assert needle in res.stderr and "[template]" in res.stderr
    assert "render the template first" in res.stderr and "invalid YAML" not in res.stderr
    # repo mode: skipped and listed as a template, never failed; nothing written
    shutil.copy(CASES / case / "input.yaml", tmp_path / "job.yaml")
    monkeypatch.chdir(tmp_path)
    res = run("convert", ".", "--check", *args(case))
    assert res.exit_code == exitcodes.FINDINGS, res.output
    assert res.stdout.startswith("./job.yaml:") and ": template: " in res.stdout and "KF2JOBSET" not in res.stdout
    assert res.stderr.splitlines()[-1].endswith("1 left: 1 template")
    before = (tmp_path / "job.yaml").read_text()
    res = run("convert", ".", "--in-place", *args(case))
    assert res.exit_code == exitcodes.OK and "1 skipped (1 unrendered template)" in res.stderr
    assert (tmp_path / "job.yaml").read_text() == before


def test_repo_mode_walks_jinja_files_converts_in_place_and_a_second_run_changes_nothing(tmp_path, monkeypatch):
    shutil.copy(CASES / "go-program" / "input.yaml", tmp_path / "bench.yaml")
    shutil.copy(FIXTURES / "katib-configmap" / "jinja-template" / "input.yaml", tmp_path / "trial-templates.yaml.j2")
    monkeypatch.chdir(tmp_path)
    res = run("convert", ".", "--check", "--katib")
    assert res.exit_code == exitcodes.FINDINGS
    assert "./bench.yaml:4: PyTorchJob {{._NAME_}} (kubeflow.org/v1): to convert: a template, its placeholders are kept" \
        in res.stdout
    assert "./trial-templates.yaml.j2:" in res.stdout
    assert run("convert", ".", "--in-place", "--katib").exit_code == exitcodes.OK
    after = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert "kind: JobSet" in after["bench.yaml"] and "namespace: {{ namespace }}" in after["trial-templates.yaml.j2"]
    res = run("convert", ".", "--in-place", "--katib")
    assert res.exit_code == exitcodes.OK and res.stdout == ""
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == after


def test_the_report_names_the_template(tmp_path):
    res = run("report", CASES / "go-program" / "input.yaml", "--format", "json", "--fail-on", "never")
    assert res.exit_code == exitcodes.OK, res.output
    codes = [f["code"] for f in json.loads(res.stdout)["files"][0]["jobs"][0]["findings"]]
    assert "TPL004" in codes and "TPL001" not in codes


def test_the_report_skips_a_template_that_needs_values_as_repo_mode_does(tmp_path, monkeypatch):
    shutil.copy(CASES / "jinja-blocks" / "input.yaml", tmp_path / "train.yaml.j2")
    shutil.copy(FIXTURES / "pytorchjob" / "master-workers" / "input.yaml", tmp_path / "ddp.yaml")
    monkeypatch.chdir(tmp_path)
    res = run("report", ".", "--fail-on", "never")
    assert res.exit_code == exitcodes.OK, res.output
    assert "kf2jobset: skipped (Jinja file): ./train.yaml.j2:17:1" in res.stderr
    assert "1 job in 1 file, 1 skipped (templates)" in res.stderr and "failed" not in res.stderr


def test_a_template_without_a_job_passes_untouched():
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ name }}\nspec:\n  template:\n    spec:\n"
            "      containers:\n{% for c in containers %}\n      - name: {{ c.name }}\n        image: {{ c.image }}\n"
            "{% endfor %}\n---\n") + (CASES / "go-program" / "input.yaml").read_text().replace("{{.", "{{ .")
    res = CliRunner().invoke(main, ["convert", "-"], input=text)
    assert res.exit_code == exitcodes.OK, res.output
    assert res.stdout.startswith(text.split("---\n")[0]) and "kind: JobSet" in res.stdout


def test_actions_inside_a_block_scalar_are_text_and_carried_byte_for_byte():
    script = "        - |\n          {% if debug %}set -x{% endif %}\n          python train.py --lr {{ lr }}\n"
    text = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {{ name }}\nspec:\n  pytorchReplicaSpecs:\n"
            "    Master:\n      replicas: 1\n      template:\n        spec:\n          containers:\n          - name: pytorch\n"
            "            image: {{ image }}\n            command:\n            - /bin/sh\n            - -c\n"
            + script.replace("        ", "            ", 1).replace("\n          ", "\n              "))
    res = CliRunner().invoke(main, ["convert", "-"], input=text)
    assert res.exit_code == exitcodes.OK, res.output
    assert "{% if debug %}set -x{% endif %}\n" in res.stdout and "python train.py --lr {{ lr }}" in res.stdout


def test_helm_files_outside_a_chart_stay_helm_templates(tmp_path, monkeypatch):
    text = (CASES / "go-program" / "input.yaml").read_text().replace("{{.BertTrainingImage}}", "{{ .Values.image }}")
    (tmp_path / "job.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    res = run("convert", ".", "--check")
    assert "Helm-skipped" in res.stdout


def test_a_file_without_templates_never_loads_the_template_modules():
    code = ("import sys\nfrom kf2jobset.options import ConvertOptions\nfrom kf2jobset.files.pipeline import convert_source\n"
            f"text = open({str(FIXTURES / 'pytorchjob' / 'master-workers' / 'input.yaml')!r}).read()\n"
            "assert convert_source(text, 'job.yaml', ConvertOptions()).conversions\n"
            "assert 'kf2jobset.sources.brace_templates' not in sys.modules and 'kf2jobset.sources.brace_files' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
