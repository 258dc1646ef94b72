"""Adding a gang scheduler touches two places: its module (kf2jobset/schedulers/<name>.py) and its line in the
registry (choices.SCHEDULER_FLAVOURS). Proven on a copy of the package: a toy scheduler that no operator ever
talked to (a PodGroup of its own API group, pods labelled into it, a schedulerName of its own) is added with
exactly that, then converted to both targets, reported, and checked after a resize and a rename, through the
real CLI."""
from __future__ import annotations

import json
import yaml

from .package_copy import copy_package, run_cli

TOY_SCHEDULER = '''\
"""A toy gang scheduler: a PodGroup of its own API group named after the job, every pod labelled into it."""
from __future__ import annotations

from .. import claims as claim
from ..claims import pod_path
from ..notes import Note
from .base import PodGroupKind, Scheduler


class ToyGang(Scheduler):
    name = "toy-gang"
    named_after_every_job = True
    podgroup = PodGroupKind("toy.example.com/v1alpha1", "labels", "toy.example.com/gang")

    def objects(self, job, p, options, jobset, notes):
        size = sum(r.replicas for r in p.rjobs)
        for rj in jobset["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]
            pod["spec"].setdefault("schedulerName", "toy-scheduler")
            pod.setdefault("metadata", {}).setdefault("labels", {})[self.podgroup.key] = p.name
        notes.append(Note("JS043", "rewritten", "the toy gang: a PodGroup named after the JobSet, pods labelled into it",
                          explains=(("lifecycle", "schedulingPolicy"), ("scheduling", "*")),
                          claims=(claim.equals("spec.minMember", size, target="PodGroup"),
                                  *(claim.equals(pod_path(rj.name) + ".spec.schedulerName", "toy-scheduler")
                                    for rj in p.rjobs))))
        return [{"apiVersion": self.podgroup.api_version, "kind": "PodGroup",
                 "metadata": {"name": p.name}, "spec": {"minMember": size}}]


SCHEDULER = ToyGang()
'''
REGISTRY_LINE = ('"yunikorn": "yunikorn"}', '"yunikorn": "yunikorn", "toy-gang": None}')

JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: toy
spec:
  runPolicy:
    schedulingPolicy: {queue: research}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - {name: pytorch, image: registry.example.com/train:1}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: pytorch, image: registry.example.com/train:1}
"""


def _with_toy_scheduler(tmp_path):
    root = copy_package(tmp_path)
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    (root / "kf2jobset" / "schedulers" / "toy_gang.py").write_text(TOY_SCHEDULER)
    choices = root / "kf2jobset" / "choices.py"
    assert choices.read_text().count(REGISTRY_LINE[0]) == 1
    choices.write_text(choices.read_text().replace(*REGISTRY_LINE))
    after = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    changed = sorted(str(p) for p in after if before.get(p) != after[p])
    assert changed == ["kf2jobset/choices.py", "kf2jobset/schedulers/toy_gang.py"]
    return root


def _edited(text: str, kind: str, edit) -> str:
    docs = list(yaml.safe_load_all(text))
    edit(next(d for d in docs if d and d.get("kind") == kind))
    return yaml.safe_dump_all(docs)


def _rename(obj):
    obj["metadata"]["name"] = "toy-copy"


def _resize(jobset):
    jobset["spec"]["replicatedJobs"][1]["replicas"] = 3


def _unexplained(root, *args) -> list:
    reported = run_cli(root, "report", "-", "--format", "json", *args, stdin=JOB)
    assert reported.returncode == 0, reported.stderr + reported.stdout
    job = json.loads(reported.stdout)["files"][0]["jobs"][0]
    return [f for f in job["findings"] if f["category"] == "unexplained"]


def test_a_new_scheduler_is_its_module_and_a_registry_line(tmp_path):
    root = _with_toy_scheduler(tmp_path)

    converted = run_cli(root, "convert", "-", "--scheduler", "toy-gang", stdin=JOB)
    assert converted.returncode == 0, converted.stderr
    docs = [d for d in yaml.safe_load_all(converted.stdout) if d]
    jobset = next(d for d in docs if d["kind"] == "JobSet")
    group = next(d for d in docs if d["kind"] == "PodGroup")
    assert group["apiVersion"] == "toy.example.com/v1alpha1" and group["spec"] == {"minMember": 3}
    for rj in jobset["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]
        assert pod["spec"]["schedulerName"] == "toy-scheduler"
        assert pod["metadata"]["labels"]["toy.example.com/gang"] == "toy"
    assert _unexplained(root, "--scheduler", "toy-gang") == []

    # --check: the unedited output passes; the gang's size and name follow the record like the real schedulers'
    assert run_cli(root, "convert", "--check", "-", stdin=converted.stdout).returncode == 0
    resized = run_cli(root, "convert", "--check", "-", stdin=_edited(converted.stdout, "JobSet", _resize))
    assert resized.returncode == 1 and "resized" in resized.stdout and "PodGroup toy minMember" in resized.stdout, resized.stdout
    renamed = run_cli(root, "convert", "--check", "-", stdin=_edited(converted.stdout, "JobSet", _rename))
    assert renamed.returncode == 1 and "renamed" in renamed.stdout and "toy.example.com/gang" in renamed.stdout, renamed.stdout


def test_the_new_scheduler_goes_through_the_trainjob_target(tmp_path):
    root = _with_toy_scheduler(tmp_path)
    args = ("--scheduler", "toy-gang", "--target", "trainjob")

    # no shared runtime sets a schedulerName no flavour is for: refused, naming the per-job route
    shared = run_cli(root, "convert", "-", *args, stdin=JOB)
    assert shared.returncode == 4 and "schedulerName" in shared.stderr and "--trainer-runtime per-job" in shared.stderr

    converted = run_cli(root, "convert", "-", *args, "--trainer-runtime", "per-job", stdin=JOB)
    assert converted.returncode == 0, converted.stderr
    docs = [d for d in yaml.safe_load_all(converted.stdout) if d]
    assert [d["kind"] for d in docs] == ["TrainingRuntime", "PodGroup", "TrainJob"]
    runtime = docs[0]["spec"]["template"]["spec"]["replicatedJobs"]
    assert {rj["template"]["spec"]["template"]["metadata"]["labels"]["toy.example.com/gang"] for rj in runtime} == {"toy"}
    assert _unexplained(root, *args, "--trainer-runtime", "per-job") == []

    assert run_cli(root, "convert", "--check", "-", stdin=converted.stdout).returncode == 0
    renamed = run_cli(root, "convert", "--check", "-", stdin=_edited(converted.stdout, "TrainJob", _rename))
    assert renamed.returncode == 1 and "renamed" in renamed.stdout and "toy.example.com/gang" in renamed.stdout, renamed.stdout
