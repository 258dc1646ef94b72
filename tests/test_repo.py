"""Repo mode end to end on a mixed manifest tree: --in-place, --out-dir, --check, idempotence, safety."""
from __future__ import annotations

import io
import os
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.text import classify
from kf2jobset.repo.run import CHECK, IN_PLACE, OUT_DIR
from kf2jobset.k8s.validate import check_jobset
from kf2jobset.text.yamlio import split_documents

from . import upstream
from .conftest import FIXTURES
from .repo_harness import EXPERIMENT, LICENCE, PYTORCHJOB, SERVICE, do_run, jobsets, make_repo, snapshot


@pytest.fixture()
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


@pytest.fixture()
def converted(repo):
    before = snapshot(repo)
    code, out, err = do_run(repo, IN_PLACE)
    return repo, before, snapshot(repo), code, out, err


def test_in_place_converts_the_mixed_repo(converted):
    repo, before, after, code, out, err = converted
    rewritten = sorted(line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("Rewriting "))
    assert rewritten == ["apps/crlf.yaml", "apps/mnist.yaml", "katib/experiment.yaml", "kustomize/base/job.yaml",
                         "kustomize/overlay/kustomization.yaml", "kustomize/overlay/memory.yaml"]
    assert code == exitcodes.INPUT  # the broken file
    # untouched files: byte-identical
    for rel in before:
        if "./" + rel not in out and rel not in out:
            assert after[rel] == before[rel], rel
    # converted files: valid JobSets
    for rel in ("apps/crlf.yaml", "apps/mnist.yaml", "kustomize/base/job.yaml"):
        (js,) = jobsets(after[rel].decode().replace("\r\n", "\n"))
        assert check_jobset(js) == [], rel


def test_untouched_documents_of_a_converted_file_are_byte_identical(converted):
    repo, before, after, *_ = converted
    text = after["apps/mnist.yaml"].decode()
    assert text.startswith(LICENCE + "---\n")
    assert text.endswith("---\n" + SERVICE)
    docs = split_documents(text)
    assert len(docs) == 2 and "kind: JobSet" in docs[0].text
    assert "name: mnist   # the model" in text and "# parameter servers" in text
    assert "replicas: 2   # two workers" in text
    crlf = after["apps/crlf.yaml"]
    assert crlf.startswith(LICENCE.replace("\n", "\r\n").encode())
    assert b"\n" not in crlf.replace(b"\r\n", b"")


def test_broken_file_is_untouched_and_reported_with_its_position(converted):
    repo, before, after, code, out, err = converted
    assert after["apps/broken.yaml"] == before["apps/broken.yaml"]
    line = next(ln for ln in err.splitlines() if "broken.yaml" in ln)
    assert "apps/broken.yaml:" in line and "invalid YAML" in line
    assert line.split("broken.yaml:")[1].split(":")[0].isdigit(), "file:line:col"


def test_a_chart_template_is_converted_at_the_source_and_its_invalid_job_reported(converted):
    repo, before, after, code, out, err = converted
    assert after["chart/templates/job.yaml"] == before["chart/templates/job.yaml"]
    assert after["chart/templates/svc.yaml"] == before["chart/templates/svc.yaml"]
    assert "1 skipped (1 Helm template)" in err  # the Service's template: no job, not parsed
    assert "chart/templates/job.yaml:2: the job this template renders: missing required field 'spec'" in err


def test_summary_line(converted):
    *_, err = converted
    assert err.splitlines()[-1] == "kf2jobset: 13 files scanned, 6 converted, 1 skipped (1 Helm template), 2 failed"


def test_katib_experiment_trial_is_a_jobset(converted):
    repo, before, after, *_ = converted
    exp = YAML(typ="safe", pure=True).load(after["katib/experiment.yaml"])
    template = exp["spec"]["trialTemplate"]
    assert template["trialSpec"]["kind"] == "JobSet"
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "master"}
    assert "Completed" in template["successCondition"] and "Failed" in template["failureCondition"]
    assert template["trialParameters"] == [{"name": "lr", "reference": "lr"}]


def test_kustomize_overlay_is_rewritten_for_the_jobset(converted):
    repo, before, after, *_ = converted
    k = after["kustomize/overlay/kustomization.yaml"].decode()
    assert k.startswith("# production overlay\n")
    assert "kind: JobSet" in k and "group: jobset.x-k8s.io" in k and "version: v1alpha2" in k
    assert "path: /spec/replicatedJobs/1/template/spec/template/spec/containers/0/image" in k
    assert "- target: {group: jobset.x-k8s.io, version: v1alpha2, kind: JobSet, name: train}\n    path: memory.yaml" in k
    ops = YAML(typ="safe", pure=True).load(after["kustomize/overlay/memory.yaml"])
    # the strategic merge patch replaced the whole containers list; so does the JSON6902 operation
    assert {"op": "test", "path": "/spec/replicatedJobs/1/name", "value": "worker"} in ops
    (replace,) = [op for op in ops if op["op"] == "replace"]
    assert replace["path"] == "/spec/replicatedJobs/1/template/spec/template/spec/containers"
    assert replace["value"][0]["resources"] == {"limits": {"memory": "8Gi"}} and replace["value"][0]["image"] == "img:1"


def test_second_run_changes_nothing(converted):
    repo, before, after, *_ = converted
    code, out, err = do_run(repo, IN_PLACE)
    assert snapshot(repo) == after
    assert "Rewriting" not in out
    assert "0 converted" in err


def test_check_writes_nothing_and_lists_what_is_left(repo):
    before = snapshot(repo)
    mtimes = {p: p.stat().st_mtime_ns for p in repo.rglob("*")}
    code, out, err = do_run(repo, CHECK)
    assert snapshot(repo) == before
    assert {p: p.stat().st_mtime_ns for p in repo.rglob("*")} == mtimes
    assert not [p for p in repo.rglob("*") if "kf2jobset.tmp" in p.name]
    assert code == exitcodes.INPUT  # the broken file outranks the findings
    listed = {line.split(":")[0] for line in out.splitlines()}
    assert {"apps/mnist.yaml", "apps/crlf.yaml", "kustomize/base/job.yaml", "katib/experiment.yaml",
            "kustomize/overlay/kustomization.yaml", "kustomize/overlay/memory.yaml", "chart/templates/job.yaml"} <= listed
    assert "apps/configmap.yaml" not in listed
    assert "apps/mnist.yaml:4: TFJob mnist (kubeflow.org/v1)" in out


def test_check_exit_codes(repo):
    (repo / "apps" / "broken.yaml").unlink()
    code, out, err = do_run(repo, CHECK, excludes=("chart/",))
    assert code == exitcodes.FINDINGS
    do_run(repo, IN_PLACE)
    code, out, err = do_run(repo, CHECK, excludes=("chart/",))
    assert (code, out) == (exitcodes.OK, "")


def test_out_dir_mirrors_converted_files_only(repo, tmp_path):
    before = snapshot(repo)
    out_dir = tmp_path / "out"
    code, out, err = do_run(repo, OUT_DIR, out_dir=str(out_dir), paths=["apps", "kustomize"])
    assert snapshot(repo) == before, "sources stay as they were"
    written = sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())
    # paths mirrored as they are below the working directory; unconverted files are not copied
    assert written == ["apps/crlf.yaml", "apps/mnist.yaml", "kustomize/base/job.yaml",
                       "kustomize/overlay/kustomization.yaml", "kustomize/overlay/memory.yaml"]
    assert jobsets((out_dir / "apps/mnist.yaml").read_text())
    # --check --out-dir: up to date now; stale after the source changes
    assert do_run(repo, CHECK, out_dir=str(out_dir), paths=["apps/mnist.yaml"])[0] == exitcodes.OK
    (repo / "apps" / "mnist.yaml").write_text((repo / "apps" / "mnist.yaml").read_text().replace("replicas: 2", "replicas: 3"))
    code, out, err = do_run(repo, CHECK, out_dir=str(out_dir), paths=["apps/mnist.yaml"])
    assert code == exitcodes.FINDINGS and "is out of date" in out


def test_out_dir_inside_the_tree_is_not_scanned(repo):
    do_run(repo, OUT_DIR, out_dir="converted", paths=["."])
    code, out, err = do_run(repo, OUT_DIR, out_dir="converted", paths=["."])
    assert "converted/" not in out and "Writing" not in out


def test_atomic_write_keeps_the_file_mode(repo):
    f = repo / "kustomize" / "base" / "job.yaml"
    os.chmod(f, 0o640)
    do_run(repo, IN_PLACE, paths=[str(f)])
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert "kind: JobSet" in f.read_text()
    assert not list(f.parent.glob("*.kf2jobset.tmp"))


def test_a_patch_file_alone_is_handled_through_its_kustomization(repo):
    """pre-commit passes changed files only: a patch file is still never converted as a job."""
    code, out, err = do_run(repo, IN_PLACE, paths=["kustomize/overlay/memory.yaml"])
    assert "Rewriting kustomize/overlay/memory.yaml" in out
    assert "Rewriting kustomize/overlay/kustomization.yaml" in out
    assert "network" not in (repo / "kustomize/overlay/memory.yaml").read_text()


def test_parallel_run_gives_the_same_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        for i in range(20):
            f = root / f"d{i % 3}" / f"job{i}.yaml"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(LICENCE + PYTORCHJOB.replace("name: train", f"name: train-{i}") + "---\n" + SERVICE)
    code_a, out_a, _ = do_run(a, IN_PLACE, jobs=1)
    code_b, out_b, _ = do_run(b, IN_PLACE, jobs=2)
    assert code_a == code_b == 0
    assert snapshot(a) == snapshot(b)
    assert out_a == out_b and out_a.count("Rewriting") == 20


def test_fail_on_change_and_usage_errors(repo):
    (repo / "apps" / "broken.yaml").unlink()
    assert do_run(repo, IN_PLACE, fail_on_change=True, excludes=("chart",))[0] == exitcodes.FINDINGS
    assert do_run(repo, IN_PLACE, fail_on_change=True, excludes=("chart",))[0] == exitcodes.OK
    runner = CliRunner()
    for args in (["--in-place", "--check"], ["--in-place", "--out-dir", "x"], ["--check", "--fail-on-change"],
                 ["--fail-on-change"], ["--in-place", "--name", "x"]):
        result = runner.invoke(main, ["convert", str(repo), *args])
        assert result.exit_code == exitcodes.USAGE, args
    assert runner.invoke(main, ["convert", "-", "--in-place"], input="a: 1\n").exit_code == exitcodes.USAGE


def test_cli_in_place_prints_rewriting(repo):
    result = CliRunner().invoke(main, ["convert", str(repo / "apps/configmap.yaml"), str(repo / "apps/mnist.yaml"), "--in-place"])
    assert result.exit_code == 0
    assert result.stdout == f"Rewriting {repo / 'apps/mnist.yaml'}\n"
    assert result.stderr.endswith("2 files scanned, 1 converted, 0 skipped, 0 failed\n")


def test_a_base_passed_alone_brings_its_overlays_and_the_other_way_round(repo):
    # pre-commit passes only the staged files; half a kustomize unit would build a broken JobSet
    base, overlay = repo / "kustomize/base/job.yaml", repo / "kustomize/overlay/kustomization.yaml"
    result = CliRunner().invoke(main, ["convert", str(base), "--in-place"])
    assert result.exit_code == 0, result.output
    assert f"Rewriting {base}" in result.stdout
    assert "overlay/kustomization.yaml" in result.stdout and "overlay/memory.yaml" in result.stdout
    assert "forms one kustomize unit with" in result.stderr
    assert "kind: JobSet" in overlay.read_text() and "kind: JobSet" in base.read_text()


def test_an_overlay_patch_passed_alone_brings_its_base(repo):
    result = CliRunner().invoke(main, ["convert", str(repo / "kustomize/overlay/memory.yaml"), "--check"])
    assert result.exit_code == exitcodes.FINDINGS, result.output
    assert "kustomize/base/job.yaml" in result.stdout


@pytest.mark.parametrize("text, katib, expected", [
    ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n", False, classify.CANDIDATE),
    ('{"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}', False, classify.CANDIDATE),
    ("items:\n- {apiVersion: kubeflow.org/v2beta1, kind: MPIJob}\n", False, classify.CANDIDATE),
    ("kind: 'XGBoostJob'\napiVersion: \"kubeflow.org/v1\"\n", False, classify.CANDIDATE),
    ("apiVersion: batch/v1\nkind: PyTorchJob\n", False, classify.SKIP),  # not kubeflow.org
    ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  annotations:\n"
     "    kf2jobset.dev/source: kubeflow.org/v1/PyTorchJob x\n", False, classify.SKIP),
    ("apiVersion: kubeflow.org/v1beta1\nkind: Experiment\n", False, classify.SKIP),
    ("apiVersion: kubeflow.org/v1beta1\nkind: Experiment\n", True, classify.CANDIDATE),
    ("kind: PyTorchJobs\napiVersion: kubeflow.org/v1\n", False, classify.SKIP),
    ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: '{{ .Values.n }}'}\n", False, classify.HELM),
    ("- op: replace\n  path: /spec/tfReplicaSpecs/Worker/replicas\n", False, classify.PATCH_LIKE),
])
def test_prefilter(text, katib, expected):
    assert classify.classify("dir/m.yaml", text, katib) == expected


def test_kustomization_prefilter():
    assert classify.classify("k/kustomization.yaml", "resources: [a.yaml]\n") == classify.SKIP
    assert classify.classify("k/kustomization.yaml", "patches:\n- target: {kind: TFJob}\n") == classify.KUSTOMIZATION


def test_version_does_not_import_heavy_modules():
    code = ("import sys\nfrom kf2jobset.cli.main import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ruamel', 'jsonschema', 'yaml', 'kubernetes', 'deepdiff')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]"), out


def test_corpus_in_place_is_valid_and_idempotent(tmp_path):
    root = tmp_path / "corpus"
    upstream.copy_corpus(root)
    before = snapshot(root)
    code, out, err = do_run(root, IN_PLACE)
    after = snapshot(root)
    assert out.count("Rewriting") >= 20
    for rel, data in after.items():
        if data != before[rel]:
            for js in jobsets(data.decode("utf-8-sig")):
                assert check_jobset(js) == [], rel
    do_run(root, IN_PLACE)
    assert snapshot(root) == after


def test_progress_bar_only_when_asked_or_on_a_terminal():
    from kf2jobset.repo.run import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet = io.StringIO()
    p = Progress(3, quiet, None, started=0.0)  # not a terminal: never drawn
    for _ in range(3):
        p.step()
    p.done()
    assert quiet.getvalue() == ""
    tty = Tty()
    import time as _time

    p = Progress(2, tty, None, started=_time.monotonic())  # a terminal, but the run is short
    p.step()
    assert tty.getvalue() == ""
    p = Progress(2, tty, True, started=_time.monotonic())
    p.step()
    p.step()
    p.done()
    assert "\r[###############...............] 1/2 files" in tty.getvalue()
    assert "2/2 files" in tty.getvalue() and tty.getvalue().endswith("\r")


def test_stream_mode_walks_like_repo_mode(repo):
    result = CliRunner().invoke(main, ["convert", str(repo), "--exclude", "broken.yaml", "--exclude", "kustomize/"])
    assert result.exit_code == 0, result.stderr
    assert "skipped 2 Helm templates" in result.stderr
    kinds = [d.get("kind") for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
    assert kinds.count("JobSet") == 2 and "Experiment" in kinds and "ConfigMap" in kinds


@pytest.mark.parametrize("args", [["--in-place"], ["--in-place", "--fail-on-change"]],
                         ids=["in-place", "hook kf2jobset-convert"])
def test_do_this_first_warnings_reach_repo_mode_and_the_hook(tmp_path, args):
    # MPI003 (create the SSH Secret) and MPI008 (Service name clash) are `warn` notes, not breaking:
    # every front end that converts prints them, like stream mode does (--check lists files only).
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    job = tmp_path / "mpi.yaml"
    job.write_text((FIXTURES / "mpijob-v2beta1" / "openmpi" / "input.yaml").read_text())
    sched = tmp_path / "queued.yaml"
    sched.write_text((FIXTURES / "scheduling" / "none" / "input.yaml").read_text())
    res = CliRunner().invoke(main, ["convert", str(job), str(sched), *args])
    assert res.exit_code in (0, 1), res.output
    for code in ("MPI003", "MPI008", "JS040"):
        assert f" {code} " in res.stderr, (code, res.stderr)
    assert "(action: create the Secret before the JobSet" in res.stderr


EMBEDDED = """\
apiVersion: workload.codeflare.dev/v1beta1
kind: AppWrapper
metadata:
  name: wrapped
spec:
  components:
  - template:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: inner}
      spec:
        pytorchReplicaSpecs:
          Worker:
            replicas: 2
            template:
              spec:
                containers: [{name: pytorch, image: img:1}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: trial-templates
  labels: {katib.kubeflow.org/component: trial-templates}
data:
  pytorch.yaml: |
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    spec:
      pytorchReplicaSpecs: {}
  notes.txt: just text
---
apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: finetune
parameters:
  - name: WORKERS
    value: "2"
objects:
  - apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: finetune-${WORKERS}
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: ${{WORKERS}}
          template:
            spec:
              containers: [{name: pytorch, image: img:1}]
"""


def test_jobs_inside_appwrappers_and_configmaps_are_named_not_passed_silently(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    f = tmp_path / "wrapped.yaml"
    f.write_text(EMBEDDED)
    stream = CliRunner().invoke(main, ["convert", str(f)])
    assert stream.exit_code == 0 and stream.stdout == EMBEDDED
    assert 'spec.components[0].template holds a PyTorchJob (kubeflow.org/v1) inside an AppWrapper' in stream.stderr
    assert 'data["pytorch.yaml"] holds a PyTorchJob (kubeflow.org/v1) inside a ConfigMap' in stream.stderr
    assert "objects[0] holds a PyTorchJob (kubeflow.org/v1) inside a Template" in stream.stderr  # OpenShift's
    assert "oc process -f FILE" in stream.stderr
    check = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert check.exit_code == exitcodes.FINDINGS
    assert check.stdout.count(": embedded: ") == 3
    in_place = CliRunner().invoke(main, ["convert", str(tmp_path), "--in-place"])
    assert in_place.exit_code == 0 and f.read_text() == EMBEDDED
    assert in_place.stderr.count("kf2jobset: warning:") == 3


_OLD = "kubeflow.org/v1alpha1, kubeflow.org/v1alpha2, kubeflow.org/v1beta1, kubeflow.org/v1beta2"


@pytest.mark.parametrize("api, kind, supported", [
    ("kubeflow.org/v1beta1", "MPIJob", "kubeflow.org/v1, kubeflow.org/v2beta1, kubeflow.org/v1alpha1, kubeflow.org/v1alpha2"),
    ("kubeflow.org/v2", "MPIJob", "kubeflow.org/v1, kubeflow.org/v2beta1, kubeflow.org/v1alpha1, kubeflow.org/v1alpha2"),
    ("xgboostjob.kubeflow.org/v1beta1", "XGBoostJob",
     "kubeflow.org/v1, xgboostjob.kubeflow.org/v1alpha1, xgboostjob.kubeflow.org/v1"),
    ("kubeflow.org/v1beta3", "PyTorchJob", "kubeflow.org/v1, " + _OLD),
    ("kubeflow.org/v2beta1", "TFJob", "kubeflow.org/v1, " + _OLD),
    ("kubeflow.org/v1beta1", "PaddleJob", "kubeflow.org/v1"),
])
def test_old_api_versions_are_refused_with_the_supported_ones_in_every_mode(tmp_path, api, kind, supported):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    f = tmp_path / "old.yaml"
    f.write_text(f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: old}}\nspec: {{}}\n")
    for args in ([], ["--check"], ["--in-place"]):
        res = CliRunner().invoke(main, ["convert", str(f), *args])
        assert res.exit_code == exitcodes.UNSUPPORTED, (args, res.output)
        assert f"{kind} {api} is not supported: kf2jobset converts {kind} {supported} only" in res.stderr


ARGO = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: train-
spec:
  entrypoint: train
  templates:
  - name: train
    resource:
      action: create
      successCondition: status.replicaStatuses.Worker.succeeded = {{inputs.parameters.workers}}
      manifest: |
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          generateName: {{workflow.name}}-
        spec:
          pytorchReplicaSpecs:
            Worker:
              replicas: {{inputs.parameters.workers}}
"""


def test_argo_templates_are_not_helm_and_their_jobs_are_named(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main
    from kf2jobset.text.classify import CANDIDATE, HELM, classify

    f = tmp_path / "wf.yaml"
    f.write_text(ARGO)
    assert classify(str(f), ARGO) == CANDIDATE
    assert classify(str(f), "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {{ .Release.Name }}\n") == HELM
    res = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert res.exit_code == exitcodes.FINDINGS
    # converted where it lives (kf2jobset/sources/jobs_in_strings.py, tests/test_argo.py); here the placeholders sit where the
    # values are needed, so it is listed as a template with the placeholders named
    assert f"{f}:16:11: PyTorchJob {{{{workflow.name}}}}- (kubeflow.org/v1): template: Argo placeholder " \
           "{{workflow.name}} where kf2jobset needs the value" in res.stdout
    assert "helm" not in res.output.lower()


def test_helm_hint_only_for_templates_that_hold_a_job(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "chart" / "templates" / "svc.yaml").write_text("kind: Service\nmetadata:\n  name: {{ .Values.n }}\n")
    res = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert res.exit_code == 0 and "hint" not in res.stderr, res.stderr


def test_vendored_crds_are_not_parsed_as_jobs(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    for crd in upstream.training_operator_crds():
        (tmp_path / crd.name).write_bytes(crd.read_bytes())
    res = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""
    from kf2jobset.files.pipeline import _may_convert
    from kf2jobset.options import ConvertOptions

    text = next(tmp_path.glob("*tfjobs*.yaml")).read_text()
    assert not _may_convert(text, ConvertOptions())  # libyaml said CRD: never parsed the slow way (7 files: ~1 s, was ~7 s)


def test_stream_mode_and_report_never_take_a_kustomize_patch_for_a_job(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "job.yaml").write_text(PYTORCHJOB)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [job.yaml]\n")
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov" / "smp.yaml").write_text("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\n"
                                            "spec:\n  pytorchReplicaSpecs:\n    Worker: {replicas: 4}\n")
    (tmp_path / "ov" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n- path: smp.yaml\n")
    stream = CliRunner().invoke(main, ["convert", str(tmp_path)])
    assert stream.exit_code == 0, stream.output
    assert "skipped 1 kustomize patch file" in stream.stderr
    assert stream.stdout.count("kind: JobSet") == 1
    report = CliRunner().invoke(main, ["report", str(tmp_path), "--format", "json"])
    assert report.exit_code == 0, report.output
    import json

    assert [f["path"].rsplit("/", 2)[-2:] for f in json.loads(report.stdout)["files"]] == [["base", "job.yaml"]]


def test_out_dir_that_is_the_tree_itself_is_refused(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    (tmp_path / "job.yaml").write_text(PYTORCHJOB)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = CliRunner().invoke(main, ["convert", "job.yaml", "--out-dir", "."])
    finally:
        os.chdir(cwd)
    assert res.exit_code == exitcodes.USAGE and "would be written over itself" in res.stderr
    assert (tmp_path / "job.yaml").read_text() == PYTORCHJOB


def test_stream_mode_names_katib_experiments_it_leaves_alone(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    f = tmp_path / "exp.yaml"
    f.write_text(EXPERIMENT)
    res = CliRunner().invoke(main, ["convert", str(f)])
    assert res.exit_code == 0 and res.stdout == EXPERIMENT
    assert "1 Katib Experiment(s) embed v1 jobs" in res.stderr and "--katib" in res.stderr
