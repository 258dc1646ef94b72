"""Helm charts converted at the source, held to the post-renderer with REAL Helm (v3.22.0 and v4.3.1).

Each case under fixtures/helm/source/ is a chart of kf2jobset's own (chart/), values sets that turn its
branches on and off (values/*.yaml; the chart's defaults are a set too) and the conversion flags of
each run (args*, one flag per line; none: the defaults). `kf2jobset convert CHART --in-place` rewrites
the chart; then, for every values set and both Helm majors, `helm template` of the converted chart must
equal `helm template` of the original piped through `kf2jobset convert -`, document for document.
The converted chart lints, a second run changes nothing, and every other file stays byte for byte.
Helm is not built by the tests: without KF2JOBSET_HELM3/4 (and no cached build) they skip, saying so.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES
from .ground_truth_tools import helm_binary, helm_env

SOURCE = FIXTURES / "helm" / "source"
CASES = sorted(p.parent.parent for p in SOURCE.glob("*/chart/Chart.yaml"))
RELEASE, NAMESPACE = "demo", "ml-team"


def _arg_sets(case: Path) -> list[tuple]:
    files = sorted(case.glob("args*"))
    if not files:
        return [()]
    return [tuple(a for a in f.read_text().split("\n") if a.strip() and not a.startswith("#")) for f in files]


def _values_sets(case: Path) -> list[Path | None]:
    return [None] + sorted((case / "values").glob("*.yaml"))


PARAMS = [(case, args) for case in CASES for args in _arg_sets(case)]


def _id(param) -> str:
    case, args = param
    return case.name + ("[" + " ".join(args) + "]" if args else "")


def _snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _convert_in_place(chart: Path, args: tuple):
    return CliRunner().invoke(main, ["convert", str(chart), "--in-place", *args], catch_exceptions=False)


@pytest.fixture
def env(tmp_path) -> dict:
    return helm_env(tmp_path)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """case, args -> (the original chart, the converted copy, the CLI's result); each converted once."""
    done: dict = {}

    def get(case: Path, args: tuple):
        if (case, args) not in done:
            copy = tmp_path_factory.mktemp(case.name) / "chart"
            shutil.copytree(case / "chart", copy)
            done[(case, args)] = (case / "chart", copy, _convert_in_place(copy, args))
        return done[(case, args)]

    return get


def _template(helm: str, chart: Path, values: Path | None, env: dict) -> str:
    cmd = [helm, "template", RELEASE, str(chart), "--namespace", NAMESPACE] + (["-f", str(values)] if values else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _documents(text: str) -> list:
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return sorted(docs, key=lambda d: (d.get("kind", ""), (d.get("metadata") or {}).get("name", "")))


@pytest.mark.parametrize("name", ["helm3", "helm4"])
@pytest.mark.parametrize("param", PARAMS, ids=_id)
def test_the_converted_chart_renders_what_the_post_renderer_writes(param, name, converted, env):
    helm = helm_binary(name)
    case, args = param
    original, chart, result = converted(case, args)
    assert result.exit_code == 0, result.output
    for values in _values_sets(case):
        rendered = _template(helm, original, values, env)
        post = CliRunner().invoke(main, ["convert", *args, "-"], input=rendered, catch_exceptions=False)
        assert post.exit_code == 0, post.output
        want = _documents(post.stdout)
        got = _documents(_template(helm, chart, values, env))
        shown = values.name if values else "the chart's defaults"
        assert [(d["kind"], d["metadata"]["name"]) for d in got] == [(d["kind"], d["metadata"]["name"]) for d in want], shown
        for g, w in zip(got, want, strict=False):
            assert g == w, f"{shown}: {g['kind']} {g['metadata']['name']} differs"
        assert not any(d.get("apiVersion", "").startswith("kubeflow.org/") for d in got)


@pytest.mark.parametrize("name", ["helm3", "helm4"])
@pytest.mark.parametrize("param", PARAMS, ids=_id)
def test_the_converted_chart_lints(param, name, converted, env):
    helm = helm_binary(name)
    _, chart, result = converted(*param)
    assert result.exit_code == 0, result.output
    proc = subprocess.run([helm, "lint", str(chart)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("param", PARAMS, ids=_id)
def test_a_second_run_changes_nothing_and_other_files_stay_byte_for_byte(param, converted):
    original, chart, result = converted(*param)
    assert result.exit_code == 0, result.output
    before, after = _snapshot(original), _snapshot(chart)
    rewritten = {p for p in before if before[p] != after.get(p)}
    assert rewritten and all(p.startswith("templates/") for p in rewritten)
    assert set(after) == set(before)  # no file added or lost
    again = _convert_in_place(chart, param[1])
    assert again.exit_code == 0 and "Rewriting" not in again.stdout, again.output
    assert _snapshot(chart) == after
    check = CliRunner().invoke(main, ["convert", str(chart), "--check", *param[1]], catch_exceptions=False)
    assert check.exit_code == 0, check.output


def test_check_lists_a_chart_template_that_still_renders_v1_jobs(tmp_path):
    chart = tmp_path / "chart"
    shutil.copytree(SOURCE / "scalar-values" / "chart", chart)
    result = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"{chart}/templates/pytorchjob.yaml:3: PyTorchJob: to convert: a Helm chart template" in result.stdout
    assert "1 to convert" in result.stderr


def test_a_template_whose_keys_come_from_a_range_is_refused_with_the_post_renderer_named(tmp_path):
    chart = tmp_path / "train-chart"
    shutil.copytree(FIXTURES / "helm" / "train-chart", chart)
    before = _snapshot(chart)
    result = CliRunner().invoke(main, ["convert", str(chart), "--in-place"], catch_exceptions=False)
    assert result.exit_code == 4
    assert "templates/pytorchjob.yaml:11: this Helm template cannot be converted at the source: {{ $role }}" in result.stderr
    assert "--post-renderer kf2jobset" in result.stderr
    assert _snapshot(chart) == before
    check = CliRunner().invoke(main, ["convert", str(chart), "--check"], catch_exceptions=False)
    assert check.exit_code == 4 and "PyTorchJob: refused: this Helm template cannot be converted" in check.stdout


def _chart(tmp_path: Path, template: str, values: str = "") -> Path:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: refused\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "job.yaml").write_text(template)
    return chart


def _job(kind: str, specs: str, replica: str, containers: str) -> str:
    """A one-replica-type job template; `replica` and `containers` as the template writes them."""
    return (f"apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata:\n  name: {{{{ .Release.Name }}}}\nspec:\n"
            f"  {specs}:\n    {replica}\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
            + containers)


TFJOB = _job("TFJob", "tfReplicaSpecs", "{{ .Values.chiefName }}:",
             "            - name: tensorflow\n              image: {{ .Values.image }}\n")
CONTAINERS_FROM_VALUES = _job("PyTorchJob", "pytorchReplicaSpecs", "Worker:",
                              "            {{- toYaml .Values.containers | nindent 12 }}\n")
RESTART_POLICY_FROM_VALUES = _job("PyTorchJob", "pytorchReplicaSpecs", "Worker:\n      restartPolicy: {{ .Values.policy }}",
                                  "            - name: pytorch\n              image: img\n")


@pytest.mark.parametrize("template, line, construct", [
    (TFJOB, 7, "{{ .Values.chiefName }} writes a key at spec.tfReplicaSpecs"),
    (CONTAINERS_FROM_VALUES, 12, "kf2jobset needs the value where the template writes it"),
    (RESTART_POLICY_FROM_VALUES, 8, "{{ .Values.policy }} writes one of Always, OnFailure, Never, ExitCode, which the "
                                    "conversion reads"),
    (_job("PyTorchJob", "pytorchReplicaSpecs", "Worker:", "            - name: pytorch\n              image: img\n")
     .replace("kind: PyTorchJob", 'kind: {{ .Values.kind | default "PyTorchJob" }}'), 2,
     "no job converts, yet the template names a Kubeflow job kind"),
], ids=["templated-replica-type", "containers-from-values", "restart-policy-from-values", "kind-from-values"])
def test_a_construct_that_cannot_be_placed_is_refused_with_its_line(tmp_path, template, line, construct):
    chart = _chart(tmp_path, template)
    before = _snapshot(chart)
    result = CliRunner().invoke(main, ["convert", str(chart), "--in-place"], catch_exceptions=False)
    assert result.exit_code == 4, result.output
    (message,) = [ln for ln in result.stderr.splitlines() if "cannot be converted at the source" in ln]
    assert construct in message and "--post-renderer kf2jobset" in message, message
    if construct.startswith("{{"):
        assert f"templates/job.yaml:{line}:" in message
    assert _snapshot(chart) == before


@pytest.mark.parametrize("name", ["helm3", "helm4"])
def test_a_release_name_too_long_for_the_jobset_fails_like_the_post_renderer(name, converted, env):
    """The JobSet name comes from the release: at JobSet's name-length limit both render, one character
    over it both fail (the converted template says why with `fail`)."""
    helm = helm_binary(name)
    case = SOURCE / "mpijob-nccl"
    original, chart, result = converted(case, ())
    assert result.exit_code == 0, result.output
    limit = 44  # launcher: <name>-launcher-0-0-xxxxx within 63 (the post-renderer's hint says so)
    for length, renders in ((limit - len("-nccl"), True), (limit - len("-nccl") + 1, False)):
        release = ("r" * length)[:length]
        plain = subprocess.run([helm, "template", release, str(original)], capture_output=True, text=True, env=env, timeout=120)
        post = CliRunner().invoke(main, ["convert", "-"], input=plain.stdout)
        ours = subprocess.run([helm, "template", release, str(chart)], capture_output=True, text=True, env=env, timeout=120)
        assert (post.exit_code == 0, ours.returncode == 0) == (renders, renders), (length, post.output, ours.stderr)
        if not renders:
            assert "is too long for its child Jobs and pods" in ours.stderr


def test_repo_mode_converts_charts_beside_plain_files_and_a_staged_template_alone(tmp_path, monkeypatch):
    """Charts in a tree are converted (or refused) like files, counted in the summary; pre-commit passes only
    the staged template, whose chart's helpers are read from beside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "job.yaml").write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    shutil.copytree(SOURCE / "helpers-and-toyaml" / "chart", tmp_path / "charts" / "trainer")
    shutil.copytree(FIXTURES / "helm" / "train-chart", tmp_path / "charts" / "train")
    staged = CliRunner().invoke(main, ["convert", "charts/trainer/templates/pytorchjob.yaml", "--check"])
    assert staged.exit_code == 1 and "charts/trainer/templates/pytorchjob.yaml:3: PyTorchJob: to convert" in staged.stdout
    result = CliRunner().invoke(main, ["convert", ".", "--in-place"])
    assert result.exit_code == 4, result.output
    assert sorted(result.stdout.splitlines()) == ["Rewriting apps/job.yaml", "Rewriting charts/trainer/templates/pytorchjob.yaml"]
    assert "charts/train/templates/pytorchjob.yaml:11: this Helm template cannot be converted at the source" in result.stderr
    # 9 files: a chart's .tpl and files/ are not walked; its Service and ServiceAccount templates hold no job
    assert result.stderr.splitlines()[-1] == "kf2jobset: 9 files scanned, 2 converted, 2 skipped (2 Helm templates), 1 failed"
    check = CliRunner().invoke(main, ["convert", ".", "--check"])
    assert check.stdout.splitlines() == [
        "charts/train/templates/pytorchjob.yaml:2: PyTorchJob: refused: this Helm template cannot be converted at the "
        "source: {{ $role }} writes a key at spec.pytorchReplicaSpecs (inside {{ range $role, $count := dict \"Master\" "
        ".Values.masterReplicas \"Worker\" .Values.workers }}, line 9: the range writes the entries), where the key "
        "decides what the entry is (a replica type, a field)"]


@pytest.mark.parametrize("name", ["helm3", "helm4"])
def test_a_helper_kf2jobset_extends_stays_an_include_and_an_edit_of_it_reaches_every_role(name, converted, env,
                                                                                             tmp_path):
    """tfjob-roles' container comes from `tfjob.container` in the chief, the workers and the evaluator; kf2jobset
    adds ports and env after the helper's keys, so each branch keeps the include and an edit of the helper (a new
    arg) shows in every role that includes it, for every values set, and in no other."""
    helm = helm_binary(name)
    case = SOURCE / "tfjob-roles"
    _, converted_chart, result = converted(case, ())
    assert result.exit_code == 0 and "HELM002" not in result.output, result.output
    chart = tmp_path / "chart"
    shutil.copytree(converted_chart, chart)
    template = (chart / "templates" / "tfjob.yaml").read_text()
    includes = [ln for ln in template.splitlines() if 'include "tfjob.container"' in ln]
    assert includes and all(ln.strip().startswith("{{- include") for ln in includes)
    assert "--model-dir" not in template  # the helper's text is nowhere inlined
    helpers = chart / "templates" / "_helpers.tpl"
    helpers.write_text(helpers.read_text().replace('args: ["--model-dir', 'args: ["--lr-schedule=cosine", "--model-dir'))
    for values in _values_sets(case):
        shown = values.name if values else "the chart's defaults"
        (jobset,) = [d for d in _documents(_template(helm, chart, values, env)) if d["kind"] == "JobSet"]
        roles = {rj["name"]: rj["template"]["spec"]["template"]["spec"]["containers"][0] for rj in jobset["spec"]["replicatedJobs"]}
        assert "worker" in roles, shown
        for role, container in roles.items():
            edited = "--lr-schedule=cosine" in container.get("args", [])
            assert edited == (role != "ps"), f"{shown}: {role}: {container.get('args')}"
            if role != "ps":
                assert any(e["name"] == "TF_CONFIG" for e in container["env"]), f"{shown}: {role}"


def test_a_helper_kf2jobset_writes_into_is_written_out_and_said(tmp_path):
    """helper-writes-env's container helper writes env, which kf2jobset extends: the helper's text is inlined
    in both roles and HELM002 names the helper, each include's line and why."""
    chart = tmp_path / "chart"
    shutil.copytree(SOURCE / "helper-writes-env" / "chart", chart)
    result = CliRunner().invoke(main, ["convert", str(chart), "--in-place"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    template = (chart / "templates" / "pytorchjob.yaml").read_text()
    assert "include" not in template and template.count("- name: LEARNING_RATE") == 2
    (said,) = [ln for ln in result.stderr.splitlines() if "HELM002" in ln]  # one line: the first include's text
    assert '{{ include "finetune.container" . }} at line 13 is written out' in said, said
    assert said.endswith(f"(and 1 more HELM002: {chart}/templates/pytorchjob.yaml:20)"), said
    assert "helper 'finetune.container'" in said and "_helpers.tpl no longer changes what this template" in said
    assert "writes lines into what it writes, after `value: {{ .Values.learningRate | quote }}`" in said
