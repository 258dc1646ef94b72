"""Katib trial templates held as YAML text in ConfigMap values (`--katib`, kf2jobset/sources/katib_configmaps.py and
jobs_in_strings.py): the value's v1 job becomes a JobSet in place, and Experiments of the same run whose `trialTemplate.configMap` names it
get the fields Katib reads from the trial (primaryPodLabels, success/failure conditions), as the inline
`trialSpec` path writes them. Without --katib the ConfigMap is left and listed.

Fixture: fixtures/katib-configmap/trial-templates (golden: tests/test_golden.py); the trees below split it.
"""
from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES

SOURCE = FIXTURES / "katib-configmap" / "trial-templates" / "input.yaml"
COMPLETED = 'status.conditions.#(type=="Completed")#|#(status=="True")#'


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    """The ConfigMap and the Experiment in two files (repo mode gathers the templates of the whole run)."""
    configmap, experiment = SOURCE.read_text().split("\n---\n")
    (tmp_path / "katib").mkdir()
    (tmp_path / "katib" / "trial-templates.yaml").write_text(configmap + "\n")
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "mnist-lr.yaml").write_text(experiment)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*argv):
    return CliRunner().invoke(main, list(argv))


def test_configmap_value_and_experiment_convert_together(tree, crd_validator):
    cm_before = (tree / "katib" / "trial-templates.yaml").read_text()
    res = run("convert", ".", "--in-place", "--katib")
    assert res.exit_code == exitcodes.OK, res.output
    assert sorted(res.stdout.splitlines()) == ["Rewriting experiments/mnist-lr.yaml", "Rewriting katib/trial-templates.yaml"]
    assert "KT001" in res.stderr  # add JobSet to Katib's trialResources first

    cm_after = (tree / "katib" / "trial-templates.yaml").read_text()
    start = cm_before.index("  pytorchTemplate.yaml: |-\n")
    assert cm_after[:start] == cm_before[:start]  # the batch Job template and the comments: every byte
    assert cm_after[start:].startswith("  pytorchTemplate.yaml: |-\n    apiVersion: jobset.x-k8s.io/v1alpha2\n")
    data = yaml.safe_load(cm_after)["data"]
    assert data["jobTemplate.yaml"] == yaml.safe_load(cm_before)["data"]["jobTemplate.yaml"]
    jobset = yaml.safe_load(data["pytorchTemplate.yaml"])
    assert jobset["kind"] == "JobSet" and "name" not in jobset["metadata"]  # Katib names each trial
    assert not data["pytorchTemplate.yaml"].endswith("\n")  # `|-` kept
    # Katib's own placeholders are carried into every container
    for rjob in jobset["spec"]["replicatedJobs"]:
        command = rjob["template"]["spec"]["template"]["spec"]["containers"][0]["command"]
        assert "--lr=${trialParameters.learningRate}" in command
    jobset["metadata"]["name"] = "mnist-lr-abcdefgh"
    assert check_jobset(jobset) == []
    assert not list(crd_validator.iter_errors(jobset))

    template = yaml.safe_load((tree / "experiments" / "mnist-lr.yaml").read_text())["spec"]["trialTemplate"]
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "master"}
    assert template["successCondition"] == COMPLETED
    assert template["failureCondition"] == COMPLETED.replace("Completed", "Failed")
    assert template["configMap"] == {"configMapName": "trial-templates", "configMapNamespace": "tuning",
                                     "templatePath": "pytorchTemplate.yaml"}
    assert template["primaryContainerName"] == "pytorch"  # the container keeps its name

    # converting twice changes nothing
    snapshot = {p: p.read_bytes() for p in tree.rglob("*.yaml")}
    res = run("convert", ".", "--in-place", "--katib")
    assert (res.exit_code, res.stdout) == (exitcodes.OK, "")
    assert {p: p.read_bytes() for p in tree.rglob("*.yaml")} == snapshot
    assert run("convert", ".", "--check", "--katib").exit_code == exitcodes.OK


def test_check_counts_the_template_at_its_value_line(tree):
    res = run("convert", ".", "--check", "--katib")
    assert res.exit_code == exitcodes.FINDINGS
    line = (tree / "katib" / "trial-templates.yaml").read_text().splitlines().index("  pytorchTemplate.yaml: |-") + 1
    assert res.stdout.splitlines() == [
        "experiments/mnist-lr.yaml:1: Experiment mnist-lr (kubeflow.org/v1beta1): to convert: its trial template "
        "trial-templates/pytorchTemplate.yaml is (or becomes) a JobSet and its Katib fields follow: run kf2jobset "
        "convert --in-place --katib",
        f"katib/trial-templates.yaml:{line}: PyTorchJob (unnamed) (kubeflow.org/v1) in data[\"pytorchTemplate.yaml\"]: "
        "to convert: run kf2jobset convert --in-place --katib"]  # the hint repeats the run's options
    assert res.stderr.splitlines()[-1].endswith("2 to convert, 0 skipped, 0 failed; 2 left: 2 to convert")
    # without --katib: found, named, not converted
    res = run("convert", ".", "--check")
    assert res.exit_code == exitcodes.FINDINGS
    assert res.stdout.startswith(f"katib/trial-templates.yaml:{line}: PyTorchJob (kubeflow.org/v1): embedded: "
                                 "data[\"pytorchTemplate.yaml\"] holds a PyTorchJob")
    assert "pass --katib" in res.stdout
    res = run("convert", ".", "--in-place")
    assert (res.exit_code, res.stdout) == (exitcodes.OK, "")


def test_an_experiment_whose_template_is_not_in_the_run_is_left_alone(tree):
    before = (tree / "experiments" / "mnist-lr.yaml").read_text()
    res = run("convert", "experiments", "--in-place", "--katib")
    assert (res.exit_code, res.stdout) == (exitcodes.OK, "")
    assert (tree / "experiments" / "mnist-lr.yaml").read_text() == before
    # another ConfigMap name, or another key: not this template either
    path = tree / "katib" / "trial-templates.yaml"
    path.write_text(path.read_text().replace("pytorchTemplate.yaml: |-", "otherTemplate.yaml: |-"))
    res = run("convert", ".", "--in-place", "--katib")
    assert res.stdout == "Rewriting katib/trial-templates.yaml\n"
    assert (tree / "experiments" / "mnist-lr.yaml").read_text() == before


def test_an_invalid_template_names_the_outer_file_line_and_path(tree):
    path = tree / "katib" / "trial-templates.yaml"
    text = path.read_text().replace("replicas: 2", "replicas: two")
    path.write_text(text)
    res = run("convert", ".", "--in-place", "--katib")
    assert res.exit_code == exitcodes.INPUT
    line = text.splitlines().index("          replicas: two") + 1
    assert (f"katib/trial-templates.yaml:{line}:11: document 1: data[\"pytorchTemplate.yaml\"].spec.pytorchReplicaSpecs."
            "Worker.replicas: expected integer") in res.stderr.replace("'", "")
    assert path.read_text() == text  # untouched
    assert "Rewriting katib/trial-templates.yaml" not in res.stdout


def test_companions_cannot_join_a_trial_template(tmp_path):
    text = SOURCE.read_text().split("\n---\n")[0].replace("kind: PyTorchJob", "kind: PyTorchJob\n    metadata: {name: t}")
    text = text.replace("    spec:\n      pytorchReplicaSpecs",
                        "    spec:\n      runPolicy:\n        schedulingPolicy: {minAvailable: 3}\n      pytorchReplicaSpecs")
    f = tmp_path / "cm.yaml"
    f.write_text(text)
    res = run("convert", str(f), "--katib", "--scheduler", "volcano")
    assert res.exit_code == exitcodes.UNSUPPORTED, res.output
    assert "a Katib trial template holds one object, but this conversion also needs PodGroup [embedded-companions]" in res.stderr


def test_differently_shaped_templates_under_one_name_are_an_error(tree):
    (tree / "katib" / "other.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trial-templates\n  namespace: other\ndata:\n"
        "  pytorchTemplate.yaml: |\n    apiVersion: kubeflow.org/v1\n    kind: PyTorchJob\n    spec:\n"
        "      pytorchReplicaSpecs:\n        Worker:\n          replicas: 2\n          template:\n            spec:\n"
        "              containers:\n                - name: pytorch\n                  image: registry.example.com/t:1\n")
    exp = tree / "experiments" / "mnist-lr.yaml"
    before = exp.read_text().replace("      configMapNamespace: tuning\n", "").replace("  namespace: tuning\n", "")
    exp.write_text(before)
    res = run("convert", ".", "--in-place", "--katib")
    assert res.exit_code == exitcodes.INPUT
    line = before.splitlines().index("    configMap:") + 1
    assert (f"experiments/mnist-lr.yaml:{line}:5: document 1: spec.trialTemplate.configMap: trialTemplate.configMap names "
            "trial-templates/pytorchTemplate.yaml, and this run holds differently shaped templates under that name") in res.stderr
    assert exp.read_text() == before
    # the namespace decides
    exp.write_text(before.replace("      configMapName: trial-templates\n",
                                  "      configMapName: trial-templates\n      configMapNamespace: other\n"))
    res = run("convert", "experiments", "--in-place", "--katib")  # the template was converted by the run above
    assert (res.exit_code, res.stdout) == (exitcodes.OK, ""), res.output


def test_worker_processes_see_the_templates_of_the_whole_run(tree):
    """With --jobs 2 (16 files or more) files convert in forked workers; the templates gathered first reach them."""
    workflow = (FIXTURES / "argo" / "kfp-resourceop" / "input.yaml").read_text()
    for i in range(16):
        (tree / f"wf{i:02d}.yaml").write_text(workflow)
    res = run("convert", ".", "--in-place", "--katib", "--jobs", "2")
    assert res.exit_code == exitcodes.OK, res.output
    assert len(res.stdout.splitlines()) == 18
    template = yaml.safe_load((tree / "experiments" / "mnist-lr.yaml").read_text())["spec"]["trialTemplate"]
    assert template["successCondition"] == COMPLETED
    assert run("convert", ".", "--check", "--katib").exit_code == exitcodes.OK


def test_an_experiment_converted_after_its_template_still_follows_it(tree):
    """pre-commit passes the staged files only: the ConfigMap converted in one run, the Experiment in a later one."""
    res = run("convert", "katib", "--in-place", "--katib")
    assert res.stdout == "Rewriting katib/trial-templates.yaml\n"
    before = (tree / "experiments" / "mnist-lr.yaml").read_text()
    res = run("convert", ".", "--check", "--katib")
    assert res.exit_code == exitcodes.FINDINGS
    assert res.stdout == ("experiments/mnist-lr.yaml:1: Experiment mnist-lr (kubeflow.org/v1beta1): to convert: its trial "
                          "template trial-templates/pytorchTemplate.yaml is (or becomes) a JobSet and its Katib fields follow: "
                          "run kf2jobset convert --in-place --katib\n")
    res = run("convert", ".", "--in-place", "--katib")
    assert (res.exit_code, res.stdout) == (exitcodes.OK, "Rewriting experiments/mnist-lr.yaml\n"), res.output
    template = yaml.safe_load((tree / "experiments" / "mnist-lr.yaml").read_text())["spec"]["trialTemplate"]
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "master"}
    assert template["successCondition"] == COMPLETED
    assert before != (tree / "experiments" / "mnist-lr.yaml").read_text()
    assert run("convert", ".", "--check", "--katib").exit_code == exitcodes.OK
    # one file holding both, the ConfigMap already converted: the same
    both = tree / "both.yaml"
    both.write_text((tree / "katib" / "trial-templates.yaml").read_text() + "---\n" + before)
    res = run("convert", str(both), "--katib")
    assert res.exit_code == exitcodes.OK
    assert 'successCondition: status.conditions.#(type=="Completed")#|#(status=="True")#' in res.stdout
