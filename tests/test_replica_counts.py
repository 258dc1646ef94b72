"""A replica count the operator refused is named as the user wrote it: an unset count says it is unset and what
the operator defaulted it to (mpi-operator v0.8 defaults a Worker's replicas to 0, which its validation then
refuses), a written one says the number written."""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main

MPIJOB = """apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: launcher, image: "img:1"}]
    Worker:{replicas}
      template:
        spec:
          containers: [{name: worker, image: "img:1"}]
"""


def _refusal(replicas: str) -> str:
    res = CliRunner().invoke(main, ["convert", "-", "--accept-mpi-ssh"], input=MPIJOB.replace("{replicas}", replicas))
    assert res.exit_code == exitcodes.INPUT, res.stdout + res.stderr
    return res.stderr


def test_an_unset_worker_count_is_said_unset_with_the_operators_default():
    said = _refusal("")
    assert "spec.mpiReplicaSpecs.Worker.replicas: Worker replicas must be at least 1: it is unset, and mpi-operator's " \
           "default is 0" in said, said


def test_a_written_count_is_said_as_written():
    said = _refusal("\n      replicas: 0")
    assert "Worker replicas must be at least 1, got 0" in said and "unset" not in said, said
