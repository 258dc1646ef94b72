"""Katib TrainJob trials for every kind on a shared runtime: XGBoost on xgboost-distributed, MPIJob on
the bundle with its hostfile carried in the TrainJob (kf2jobset/sources/katib_files.py). The real Trainer runs them in
tests/e2e/test_trainjob_katib.py."""
from __future__ import annotations

import copy
import json

import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES

MPI_TRIALS = FIXTURES / "targets" / "trainjob" / "katib-mpi-trials" / "input.yaml"
TRIAL_NAME = "hvd-sweep-q8w2k4zt"


def convert(text: str, *args):
    return CliRunner().invoke(main, ["convert", "-", "--katib", "--target", "trainjob", *args], input=text, catch_exceptions=False)


def experiment_of(result) -> dict:
    assert result.exit_code == 0, result.output
    (experiment,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    return experiment


def test_an_mpi_trial_carries_its_hostfile_in_the_trainjob_with_the_trials_name():
    """Filled in with a trial's name, the files the launcher reads are exactly the ConfigMap kf2jobset writes for
    the same MPIJob named as the trial; no ConfigMap is written beside the Experiment."""
    source = yaml.safe_load(MPI_TRIALS.read_text())
    experiment = experiment_of(convert(MPI_TRIALS.read_text(), "--ssh-secret", "hvd-sweep-ssh"))
    template = experiment["spec"]["trialTemplate"]
    (param,) = [p for p in template["trialParameters"] if p["reference"] == "${trialSpec.Name}"]
    trainjob = template["trialSpec"]
    assert trainjob["spec"]["runtimeRef"]["name"] == "kf2jobset-mpi" and "name" not in trainjob["metadata"]
    text = json.dumps(trainjob)
    assert "xxxxxxxx" not in text  # (and experiment_of: the Experiment alone)
    trial = json.loads(text.replace("${trialParameters.%s}" % param["name"], TRIAL_NAME))
    (launcher,) = [r for p in trial["spec"]["runtimePatches"] for r in p["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
                   if r["name"] == "launcher"]
    pod = launcher["template"]["spec"]["template"]
    (volume,) = [v for v in pod["spec"]["volumes"] if "downwardAPI" in v]
    files = {i["path"]: pod["metadata"]["annotations"][i["fieldRef"]["fieldPath"][len("metadata.annotations['"):-2]]
             for i in volume["downwardAPI"]["items"]}

    job = copy.deepcopy(source["spec"]["trialTemplate"]["trialSpec"])
    job["metadata"] = {"name": TRIAL_NAME}
    named = CliRunner().invoke(main, ["convert", "-", "--target", "trainjob", "--ssh-secret", "hvd-sweep-ssh"],
                               input=yaml.safe_dump(job), catch_exceptions=False)
    assert named.exit_code == 0, named.output
    (cm,) = [d for d in yaml.safe_load_all(named.stdout) if d and d["kind"] == "ConfigMap"]
    assert files == cm["data"] and set(files) == {"hostfile", "discover_hosts.sh"}
    (mount,) = [m for c in pod["spec"]["containers"] for m in c["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["mountPath"] == "/etc/mpi"


def test_an_experiment_that_names_its_trials_already_keeps_its_own_parameter():
    text = MPI_TRIALS.read_text().replace("""      - name: learningRate
        reference: lr
""", """      - name: learningRate
        reference: lr
      - name: trialName
        reference: ${trialSpec.Name}
""")
    experiment = experiment_of(convert(text, "--ssh-secret", "hvd-sweep-ssh"))
    params = experiment["spec"]["trialTemplate"]["trialParameters"]
    assert [p["name"] for p in params] == ["learningRate", "trialName"]
    assert "${trialParameters.trialName}-worker-0-0" in json.dumps(experiment)


def test_an_mpi_trial_needs_one_ssh_secret_for_every_trial():
    result = convert(MPI_TRIALS.read_text())
    assert result.exit_code == 4 and "[ssh-secret-name]" in result.output and "--ssh-secret" in result.output


def test_an_mpi_trial_with_a_generated_hostfile_is_refused_as_fitting_no_shared_runtime():
    result = convert(MPI_TRIALS.read_text(), "--ssh-secret", "s", "--mpi-hostfile", "generated")
    assert result.exit_code == 4 and "[trainjob-no-shared-runtime]" in result.output


def test_an_xgboost_sweep_runs_its_trials_on_xgboost_distributed():
    experiment = experiment_of(convert((FIXTURES / "targets/trainjob/katib-xgboost-trials/input.yaml").read_text()))
    template = experiment["spec"]["trialTemplate"]
    trainer = template["trialSpec"]["spec"]["trainer"]
    assert template["trialSpec"]["spec"]["runtimeRef"]["name"] == "xgboost-distributed"
    assert "--max_depth=${trialParameters.maxDepth}" in trainer["args"] and trainer["numNodes"] == 3
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "node",
                                            "batch.kubernetes.io/job-completion-index": "0"}
