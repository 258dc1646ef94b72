"""Katib trial templates whose size is a trial parameter (`replicas: ${trialParameters.numWorkers}`).

Katib fills a ConfigMap-held template in as text and then reads the YAML, so the count is a number in every
trial: the template converts when every value that follows the count reads the JobSet's labels, and filling
the converted template in gives what converting the filled-in job gives. An inline trialSpec is written out as
JSON before Katib fills it in, so the count stays a string there and every trial was rejected: refused, said so.

Fixtures: fixtures/katib-configmap/sized-* and fixtures/katib/sized-inline-trial (goldens: tests/test_golden.py).
"""
from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES
from .fixture_cases import fixture_args

CONFIGMAPS = FIXTURES / "katib-configmap"
SIZE = "${trialParameters.numWorkers}"
CONVERTED = ["sized-pytorch", "sized-mpijob-v2beta1", "sized-mpijob-v1"]
REFUSED = {"sized-tfjob": "TF_CONFIG (cluster host lists)", "sized-xgboostjob": "WORLD_SIZE, WORKER_ADDRS"}


def convert(text: str, *args: str):
    return CliRunner().invoke(main, ["convert", "-", *args], input=text)


def template_jobset(stream: str) -> tuple[str, dict]:
    """(text, JobSet) of the JobSet template in the stream's first ConfigMap."""
    configmap = next(yaml.safe_load_all(stream))
    (text,) = [v for v in configmap["data"].values() if "kind: JobSet" in v]
    return text, yaml.safe_load(text.replace(SIZE, "2"))


@pytest.mark.parametrize("case", CONVERTED)
def test_the_count_is_carried_and_filling_it_in_equals_converting_the_filled_in_job(case):
    source = (CONFIGMAPS / case / "input.yaml").read_text()
    args = fixture_args(CONFIGMAPS / case)
    template = convert(source, *args)
    assert template.exit_code == exitcodes.OK, template.stderr
    text, _ = template_jobset(template.stdout)
    assert re.search(r"^ *replicas: " + re.escape(SIZE) + r"( |$)", text, re.M)  # plain: filled in, a number
    for count in (1, 3, 4):
        filled_first = convert(source.replace(SIZE, str(count)), *args)  # what Katib creates, converted
        assert filled_first.exit_code == exitcodes.OK, filled_first.stderr
        expected = yaml.safe_load(template_jobset(filled_first.stdout)[0])
        jobset = yaml.safe_load(text.replace(SIZE, str(count)))  # the converted template, as Katib fills it in
        assert jobset == expected
        workers = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "worker"]
        assert workers[0]["replicas"] == count
        jobset["metadata"]["name"] = "ddp-size-abcdefgh"
        assert check_jobset(jobset) == []


def test_what_follows_the_count_reads_the_jobset_labels():
    result = convert((CONFIGMAPS / "sized-pytorch" / "input.yaml").read_text(), "--katib")
    _, jobset = template_jobset(result.stdout)
    for rjob in jobset["spec"]["replicatedJobs"]:
        env = {e["name"]: e for e in rjob["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
        for name in ("WORLD_SIZE", "PET_NNODES"):
            assert env[name]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['jobset.sigs.k8s.io/global-replicas']"
        args = rjob["template"]["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "${trialParameters.learningRate}" in args  # the other parameters are carried as written
    assert "TPL001" not in result.stderr  # Katib fills its parameters in: no envsubst step to ask for


def test_the_experiment_reading_a_sized_template_follows_it():
    result = convert((CONFIGMAPS / "sized-pytorch" / "input.yaml").read_text(), "--katib")
    experiment = list(yaml.safe_load_all(result.stdout))[1]
    template = experiment["spec"]["trialTemplate"]
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "master"}
    assert template["successCondition"] == 'status.conditions.#(type=="Completed")#|#(status=="True")#'
    assert [p["name"] for p in template["trialParameters"]] == ["learningRate", "numWorkers"]


def test_repo_mode_lists_converts_then_finds_nothing_left(tmp_path, monkeypatch):
    configmap, experiment = (CONFIGMAPS / "sized-pytorch" / "input.yaml").read_text().split("\n---\n")
    (tmp_path / "templates.yaml").write_text(configmap + "\n")
    (tmp_path / "experiment.yaml").write_text(experiment)
    monkeypatch.chdir(tmp_path)
    check = CliRunner().invoke(main, ["convert", ".", "--check", "--katib"])
    assert check.exit_code == exitcodes.FINDINGS, check.output
    assert "templates.yaml:11: PyTorchJob (unnamed) (kubeflow.org/v1) in data[\"ddp.yaml\"]: to convert" in check.stdout
    assert "experiment.yaml:1: Experiment ddp-size (kubeflow.org/v1beta1): to convert" in check.stdout
    fixed = CliRunner().invoke(main, ["convert", ".", "--in-place", "--katib"])
    assert fixed.exit_code == exitcodes.OK, fixed.output
    assert f"replicas: {SIZE}   # tuned: 1 to 4 workers\n" in (tmp_path / "templates.yaml").read_text()
    again = CliRunner().invoke(main, ["convert", ".", "--check", "--katib"])
    assert again.exit_code == exitcodes.OK, again.output
    assert "0 left" in again.stderr


@pytest.mark.parametrize("case, literals", sorted(REFUSED.items()))
def test_a_count_kf2jobset_must_write_out_is_refused_naming_the_parameter(case, literals):
    source = (CONFIGMAPS / case / "input.yaml").read_text()
    result = convert(source, "--katib")
    assert result.exit_code == exitcodes.INPUT and result.stdout == ""
    assert f"Katib trial parameter {SIZE} where kf2jobset needs the value" in result.stderr
    assert f"{literals} must be written from the number" in result.stderr
    assert "inherited" not in result.stderr  # kf2jobset's limit, not the v1 world's: those trials ran
    assert "envsubst <" not in result.stderr and "Katib fills it in per trial" in result.stderr
    # the same template with a fixed count converts: only the parameter stands in the way
    assert convert(source.replace(SIZE, "3"), "--katib").exit_code == exitcodes.OK


def test_trainjob_target_refuses_a_sized_configmap_template_and_does_not_send_it_inline():
    result = convert((CONFIGMAPS / "sized-pytorch" / "input.yaml").read_text(), "--katib", "--target", "trainjob")
    assert result.exit_code == exitcodes.UNSUPPORTED and result.stdout == ""
    assert "[katib-configmap-trainjob]" in result.stderr
    assert f"{SIZE} sizes the job" in result.stderr and "move the template inline" not in result.stderr


@pytest.mark.parametrize("target", ["jobset", "trainjob"])
def test_an_inline_trial_spec_count_is_refused_as_katib_left_it(target):
    case = FIXTURES / "katib" / "sized-inline-trial"
    result = convert((case / "input.yaml").read_text(), *fixture_args(case), "--target", target)
    assert result.exit_code == exitcodes.INPUT and result.stdout == ""
    assert f"Katib trial parameter {SIZE} where the API server needs an integer" in result.stderr
    assert "inherited: the v1 API server rejected these trials too" in result.stderr
    assert "move the trial template into a ConfigMap" in result.stderr


def test_an_inline_trial_parameter_in_a_string_field_keeps_the_schema_words():
    """A restart policy from a parameter is a string either way: the schema's own refusal, no JSON story."""
    case = FIXTURES / "katib" / "sized-inline-trial"
    text = (case / "input.yaml").read_text().replace(SIZE, "2").replace(
        "restartPolicy: OnFailure", "restartPolicy: ${trialParameters.policy}", 1)
    result = convert(text, "--katib")
    assert result.exit_code == exitcodes.INPUT
    assert "restartPolicy: must be one of" in result.stderr and "JSON" not in result.stderr
