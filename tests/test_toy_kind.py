"""Adding a framework touches two files: its mapping (mappings/<kind>.yaml) and its profile
(kf2jobset/frameworks/<name>.py). Proven on a copy of the package: a toy MXJob-like kind is added
with exactly those two files, then converted and reported through the real CLI."""
from __future__ import annotations

import shutil
import subprocess
import sys

import yaml

from .conftest import REPO

TOY_MAPPING = """\
# A toy kind for the test: MXNet-style parameter-server training.
kind: ToyMXJob
apiVersions: [kubeflow.org/v1]
replicaSpecsField: mxReplicaSpecs
profile: toymx
operatorName: toymxjob-controller
defaultContainer: mxnet
defaultPort: {name: mxjob-port, number: 9091}
defaultRestartPolicy: Never
replicaTypes:
  - {type: Scheduler, exactReplicas: 1, required: true}
  - {type: Server, minReplicas: 1}
  - {type: Worker, minReplicas: 1}
envContainers: default
success:
  - {operator: All, targets: [Worker], exact: true}
masterRole: [Scheduler]
"""

TOY_PROFILE = '''\
"""A toy parameter-server framework: every pod learns the scheduler's address and the counts."""
from .base import Profile, Side, env


class ToyMXProfile(Profile):
    name = "toymx"

    def env(self, job, rtype, side: Side):
        return [
            {"name": "DMLC_PS_ROOT_URI", "value": side.host("Scheduler", 0)},
            env("DMLC_PS_ROOT_PORT", job.port("Scheduler")),
            env("DMLC_NUM_SERVER", job.replicas["Server"].replicas),
            env("DMLC_NUM_WORKER", job.replicas["Worker"].replicas),
            env("DMLC_ROLE", rtype.lower()),
        ]

    def operator_success(self, job):
        return ("all", ("worker",))


PROFILE = ToyMXProfile()
'''

JOB = """\
apiVersion: kubeflow.org/v1
kind: ToyMXJob
metadata:
  name: toy
spec:
  mxReplicaSpecs:
    Scheduler:
      replicas: 1
      template:
        spec:
          containers:
            - {name: mxnet, image: registry.example.com/mx:1}
    Server:
      replicas: 1
      template:
        spec:
          containers:
            - {name: mxnet, image: registry.example.com/mx:1}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: mxnet, image: registry.example.com/mx:1}
"""


def _copy(tmp_path):
    root = tmp_path / "checkout"
    for part in ("kf2jobset", "mappings", "schemas"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(root, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kf2jobset", *args], cwd=root, input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_a_new_kind_is_a_mapping_file_and_a_profile(tmp_path):
    root = _copy(tmp_path)
    before = {p.relative_to(root) for p in root.rglob("*") if p.is_file()}
    (root / "mappings" / "toymxjob.yaml").write_text(TOY_MAPPING)
    (root / "kf2jobset" / "frameworks" / "toymx.py").write_text(TOY_PROFILE)
    added = {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts} - before
    assert {str(p) for p in added} == {"mappings/toymxjob.yaml", "kf2jobset/frameworks/toymx.py"}

    converted = _run(root, "convert", "-", stdin=JOB)
    assert converted.returncode == 0, converted.stderr
    js = next(d for d in yaml.safe_load_all(converted.stdout) if d and d.get("kind") == "JobSet")
    assert [rj["name"] for rj in js["spec"]["replicatedJobs"]] == ["scheduler", "server", "worker"]
    assert js["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["worker"]}
    env = {e["name"]: e.get("value") for e in
           js["spec"]["replicatedJobs"][2]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["DMLC_PS_ROOT_URI"] == "$(KF2JOBSET_JOBSET_NAME)-scheduler-0-0.$(KF2JOBSET_JOBSET_NAME)"
    assert env["DMLC_NUM_WORKER"] == "2" and env["DMLC_ROLE"] == "worker"

    reported = _run(root, "report", "-", "--format", "json", stdin=JOB)
    assert reported.returncode == 0, reported.stderr + reported.stdout
    import json

    job = json.loads(reported.stdout)["files"][0]["jobs"][0]
    assert job["kind"] == "ToyMXJob"
    assert not [f for f in job["findings"] if f["category"] == "unexplained"], job["findings"]

    # the pre-filter (repo mode, the hook) knows the new kind from its mapping file too
    (root / "jobs").mkdir()
    (root / "jobs" / "toy.yaml").write_text(JOB)
    checked = _run(root, "convert", "jobs", "--check")
    assert checked.returncode == 1 and "jobs/toy.yaml" in checked.stdout, checked.stdout + checked.stderr


def test_a_kind_whose_profile_is_missing_is_an_error_not_a_default(tmp_path):
    root = _copy(tmp_path)
    (root / "mappings" / "toymxjob.yaml").write_text(TOY_MAPPING)
    converted = _run(root, "convert", "-", stdin=JOB)
    assert converted.returncode == 4, converted.stderr
    assert "no framework profile 'toymx'" in converted.stderr
    assert "Traceback" not in converted.stderr
