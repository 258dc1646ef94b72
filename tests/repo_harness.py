"""A mixed manifest tree for the repo-mode tests (a licence-headed TFJob, a Service, a PyTorchJob, a Katib
Experiment, a chart, a kustomize base and overlay, ...) and running repo mode on it in-process."""
from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path

from ruamel.yaml import YAML

from kf2jobset.options import ConvertOptions
from kf2jobset.repo.run import Settings, run

from .jobs import job_text, pytorchjob_text, pytorchjob_yaml, replica_text


LICENCE = "# Copyright 2025 The Example Authors.\n# SPDX-License-Identifier: Apache-2.0\n"


TFJOB = job_text("TFJob", "mnist   # the model",
                 "# parameter servers\n" + replica_text("PS", image='"tf:2.15"', name="tensorflow", dash=""),
                 replica_text("Worker", "2   # two workers", image='"tf:2.15"', name="tensorflow", dash=""),
                 metadata="namespace: ml")


SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: tensorboard
spec:
  ports: [{port: 80,   targetPort: 6006}]   \n\
"""


PYTORCHJOB = pytorchjob_yaml()  # Master 1, Worker 2


EXPERIMENT = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: tune
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parameters:
    - name: lr
      parameterType: double
      feasibleSpace: {min: "0.01", max: "0.1"}
  trialTemplate:
    primaryContainerName: pytorch
    primaryPodLabels:
      training.kubeflow.org/job-role: master
    trialParameters:
      - {name: lr, reference: lr}
    trialSpec:
""" + textwrap.indent(pytorchjob_text(None, replica_text("Master", container='args: ["--lr=${trialParameters.lr}"]')), " " * 6)


FILES = {
    # multi-document file with a licence header, a comment-carrying TFJob and a Service
    "apps/mnist.yaml": LICENCE + "---\n" + TFJOB + "---\n" + SERVICE,
    # CRLF file
    "apps/crlf.yaml": (LICENCE + PYTORCHJOB.replace("name: train", "name: crlf")).replace("\n", "\r\n"),
    # nothing to do
    "apps/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  k: 'v'   \n",
    # a YAML error in a file that holds a v1 job
    "apps/broken.yaml": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: x\n  labels: {a: [\n",
    # Helm chart
    "chart/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "chart/values.yaml": "image: img:1\n",
    "chart/templates/job.yaml": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {{ .Release.Name }}\n",
    "chart/templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n",
    # kustomize base and overlay
    "kustomize/base/job.yaml": PYTORCHJOB,
    "kustomize/base/kustomization.yaml": "resources:\n  - job.yaml\n",
    "kustomize/overlay/kustomization.yaml": """\
# production overlay
resources:
  - ../base
patches:
  - target:
      group: kubeflow.org
      version: v1
      kind: PyTorchJob
      name: train
    patch: |-
      - op: replace
        path: /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image
        value: img:2
  - path: memory.yaml
""",
    "kustomize/overlay/memory.yaml": """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          containers:   # kustomize replaces the whole list: write it all
            - name: pytorch
              image: img:1
              resources:
                limits: {memory: 8Gi}
""",
    # Katib
    "katib/experiment.yaml": EXPERIMENT,
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(text.encode())
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def do_run(root: Path, mode: str, **kw):
    options = kw.pop("options", ConvertOptions(katib=True))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        code = run(kw.pop("paths", ["."]), Settings(mode=mode, options=options, **kw), out, err)
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


def jobsets(text: str) -> list[dict]:
    return [d for d in YAML(typ="safe", pure=True).load_all(text) if isinstance(d, dict) and d.get("kind") == "JobSet"]
