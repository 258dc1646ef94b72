"""Adding a framework touches two files: its mapping (mappings/<kind>.yaml) and its profile
(kf2jobset/frameworks/<name>.py). Proven on a copy of the package: a toy kind that no Kubeflow
operator ever had (so it cannot lean on code written for a real one; MXJob, the first real kind
added this way, is in mappings/mxjob.yaml and frameworks/mxnet.py) is added with exactly those two
files, then converted and reported through the real CLI."""
from __future__ import annotations

import yaml

from .package_copy import copy_package, run_cli

TOY_MAPPING = """\
# A toy kind for the test: one coordinator, trainers that find it and know their rank.
kind: ToyJob
apiVersions: [kubeflow.org/v1]
replicaSpecsField: toyReplicaSpecs
profile: toy
operatorName: toyjob-controller
defaultContainer: toy
defaultPort: {name: toyjob-port, number: 7777}
defaultRestartPolicy: Never
replicaTypes:
  - {type: Coordinator, exactReplicas: 1, required: true}
  - {type: Trainer, minReplicas: 1}
envContainers: default
success:
  - {operator: All, targets: [Trainer], exact: true}
masterRole: [Coordinator]
"""

TOY_PROFILE = '''\
"""A toy framework: every pod learns the coordinator's address, the world size and its rank."""
from .base import Profile, Side, env


class ToyProfile(Profile):
    name = "toy"

    def env(self, job, rtype, side: Side):
        return [
            {"name": "TOY_COORDINATOR", "value": side.host("Coordinator", 0)},
            env("TOY_PORT", job.port("Coordinator")),
            env("TOY_WORLD", job.total_replicas()),
            side.rank_env("TOY_RANK", 0 if rtype == "Coordinator" else 1),
        ]

    def operator_success(self, job):
        return ("all", ("trainer",))


PROFILE = ToyProfile()
'''

JOB = """\
apiVersion: kubeflow.org/v1
kind: ToyJob
metadata:
  name: toy
spec:
  toyReplicaSpecs:
    Coordinator:
      replicas: 1
      template:
        spec:
          containers:
            - {name: toy, image: registry.example.com/toy:1}
    Trainer:
      replicas: 2
      template:
        spec:
          containers:
            - {name: toy, image: registry.example.com/toy:1}
"""


def test_a_new_kind_is_a_mapping_file_and_a_profile(tmp_path):
    root = copy_package(tmp_path)
    before = {p.relative_to(root) for p in root.rglob("*") if p.is_file()}
    (root / "mappings" / "toyjob.yaml").write_text(TOY_MAPPING)
    (root / "kf2jobset" / "frameworks" / "toy.py").write_text(TOY_PROFILE)
    added = {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts} - before
    assert {str(p) for p in added} == {"mappings/toyjob.yaml", "kf2jobset/frameworks/toy.py"}

    converted = run_cli(root, "convert", "-", stdin=JOB)
    assert converted.returncode == 0, converted.stderr
    js = next(d for d in yaml.safe_load_all(converted.stdout) if d and d.get("kind") == "JobSet")
    assert [rj["name"] for rj in js["spec"]["replicatedJobs"]] == ["coordinator", "trainer"]
    assert js["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["trainer"]}
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in
           js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["TOY_COORDINATOR"] == "$(KF2JOBSET_JOBSET_NAME)-coordinator-0-0.$(KF2JOBSET_JOBSET_NAME)"
    assert env["TOY_PORT"] == "7777" and env["TOY_WORLD"] == "3"
    assert env["TOY_RANK"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['jobset.sigs.k8s.io/job-global-index']"}}

    reported = run_cli(root, "report", "-", "--format", "json", stdin=JOB)
    assert reported.returncode == 0, reported.stderr + reported.stdout
    import json

    job = json.loads(reported.stdout)["files"][0]["jobs"][0]
    assert job["kind"] == "ToyJob"
    assert not [f for f in job["findings"] if f["category"] == "unexplained"], job["findings"]

    # and to a TrainJob: on a TrainingRuntime of its own (no shared runtime keeps a toy's contract; said so)
    trainjob = run_cli(root, "convert", "-", "--target", "trainjob", "--trainer-runtime", "per-job", stdin=JOB)
    assert trainjob.returncode == 0, trainjob.stderr
    runtime, train = [d for d in yaml.safe_load_all(trainjob.stdout) if d]
    assert runtime["kind"] == "TrainingRuntime" and runtime["metadata"]["name"].startswith("kf2jobset-toy-")
    assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == "toy"
    assert train["kind"] == "TrainJob" and train["spec"]["runtimeRef"]["name"] == runtime["metadata"]["name"]
    shared = run_cli(root, "convert", "-", "--target", "trainjob", stdin=JOB)
    assert shared.returncode == 4 and "fits no shared ClusterTrainingRuntime" in shared.stderr, shared.stderr

    # the pre-filter (repo mode, the hook) knows the new kind from its mapping file too
    (root / "jobs").mkdir()
    (root / "jobs" / "toy.yaml").write_text(JOB)
    checked = run_cli(root, "convert", "jobs", "--check")
    assert checked.returncode == 1 and "jobs/toy.yaml" in checked.stdout, checked.stdout + checked.stderr


# What the real kinds say in their mappings (the MPI launcher's own pod name, PyTorch's and XGBoost's
# webhook rules), said by the toy: nothing in the code may ask which kind it is.
TOY_OWN_RULES = """\
# the operator named the coordinator's one pod itself, and its webhook wanted that count written, as 1
namedPods: {Coordinator: "{job}-coordinator"}
validatingWebhook: {setToOne: [Coordinator]}
"""


def test_a_kinds_pod_names_and_webhook_rules_come_from_its_mapping(tmp_path):
    root = copy_package(tmp_path)
    (root / "mappings" / "toyjob.yaml").write_text(TOY_MAPPING + TOY_OWN_RULES)
    (root / "kf2jobset" / "frameworks" / "toy.py").write_text(TOY_PROFILE)
    job = yaml.safe_load(JOB)
    del job["spec"]["toyReplicaSpecs"]["Coordinator"]["replicas"]  # the webhook refused this; v1.5-v1.7 ran it
    trainer = job["spec"]["toyReplicaSpecs"]["Trainer"]["template"]["spec"]["containers"][0]
    trainer["env"] = [{"name": "PEER", "value": "toy-coordinator:7777"}, {"name": "NOT_A_POD", "value": "toy-coordinator-0"}]
    text = yaml.safe_dump(job)

    converted = run_cli(root, "convert", "-", stdin=text)
    assert converted.returncode == 0, converted.stderr
    js = next(d for d in yaml.safe_load_all(converted.stdout) if d and d.get("kind") == "JobSet")
    env = {e["name"]: e.get("value") for e in
           js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    # the coordinator's v1 name is the mapping's, so that address is rewritten (JS065) and the indexed form,
    # a pod this job never had, is left as written
    assert env["PEER"] == "$(KF2JOBSET_JOBSET_NAME)-coordinator-0-0.$(KF2JOBSET_JOBSET_NAME):7777"
    assert env["NOT_A_POD"] == "toy-coordinator-0"
    assert "JS080" in converted.stderr and "Coordinator replicas must be set, to 1" in converted.stderr, converted.stderr


def test_a_kind_whose_profile_is_missing_is_an_error_not_a_default(tmp_path):
    root = copy_package(tmp_path)
    (root / "mappings" / "toyjob.yaml").write_text(TOY_MAPPING)
    converted = run_cli(root, "convert", "-", stdin=JOB)
    assert converted.returncode == 4, converted.stderr
    assert "no framework profile 'toy'" in converted.stderr
    assert "Traceback" not in converted.stderr


def test_a_misspelt_mapping_key_of_the_new_entries_is_an_error_not_a_lost_fact():
    import pytest

    from kf2jobset.mappings import _from_data

    base = yaml.safe_load(TOY_MAPPING)
    toy = _from_data({**base, **yaml.safe_load(TOY_OWN_RULES)}, "toyjob.yaml")
    assert (toy.pod_name("j", "Coordinator", 0), toy.pod_name("j", "Trainer", 2)) == ("j-coordinator", "j-trainer-2")
    assert toy.webhook.set_to_one == ("Coordinator",) and toy.pod_addresses == "service"
    for bad, says in (({"podAddresses": "dns"}, "podAddresses 'dns' is not one of"),
                      ({"validatingWebhook": {"setToOn": ["Coordinator"]}}, "validatingWebhook has unknown keys setToOn"),
                      ({"upgradeFrom": [{"apiVersion": "kubeflow.org/v1alpha1", "reader": "replicaList", "operator": "x",
                                         "summary": "x", "replicaList": {"typeField": "t"}}]}, "replicaList needs portField"),
                      ({"upgradeFrom": [{"apiVersion": "kubeflow.org/v1alpha1", "reader": "runFieldsOnTop", "operator": "x",
                                         "summary": "x", "contrat": "x"}]}, "unknown keys contrat")):
        with pytest.raises(ValueError, match=says):
            _from_data({**base, **bad}, "toyjob.yaml")
