"""Numbers in int-or-string fields: what the real v1 API and the real JobSet API do with
`cpu: 0.5`, and that kf2jobset does the same.

The Kubeflow CRDs (Training Operator v1.9.4, mpi-operator v0.8.2) and the JobSet CRD type every
resource quantity (`resources.limits/requests`, `emptyDir.sizeLimit`, `resourceFieldRef.divisor`,
`overhead`) and every probe port `x-kubernetes-int-or-string`. The manifests go through kubectl
as users apply them (YAML -> JSON the way kubectl does it), then the API server's dry run:

* a fractional number (`cpu: 0.5`) is refused by the v1 API server: the job never ran, so
  kf2jobset refuses it too, as inherited, and says how to write it;
* a whole number written as a float (`cpu: 1.0`, `memory: 1e3`) and a quoted quantity (`"0.5"`)
  are accepted by both APIs, and kf2jobset converts them into a JobSet the JobSet API accepts.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .. import upstream

pytestmark = pytest.mark.apiserver

KUBECTL = shutil.which("kubectl")

# (field, YAML text of the value as a user writes it, whether a real v1 API server took it)
CASES = [
    ("cpu", "0.5", False),
    ("cpu", "1.0", True),
    ("cpu", '"0.5"', True),
    ("cpu", "500m", True),
    ("memory", "1e3", True),
    ("memory", "1.5e3", True),  # 1500: whole, so kubectl sends the integer 1500
    ("memory", "0.25e3", True),
    ("hugepages-2Mi", "0.5", False),
    ("ephemeral-storage", "2.5", False),
    ("sizeLimit", "0.5", False),
    ("sizeLimit", '"1.5Gi"', True),
    ("divisor", "0.5", False),
    ("port", "8080.5", False),
    ("port", "8080", True),
]


def _pod_template(field: str, value: str, indent: str, name: str = "main") -> str:
    container = f"""{indent}containers:
{indent}- name: {name}
{indent}  image: registry.example.com/train:1
"""
    if field in ("cpu", "memory", "hugepages-2Mi", "ephemeral-storage"):
        container += f"{indent}  resources:\n{indent}    limits:\n{indent}      {field}: {value}\n"
    elif field == "divisor":
        container += (f"{indent}  env:\n{indent}  - name: CPUS\n{indent}    valueFrom:\n{indent}      resourceFieldRef:\n"
                      f"{indent}        resource: limits.cpu\n{indent}        divisor: {value}\n")
    elif field == "port":
        container += f"{indent}  readinessProbe:\n{indent}    tcpSocket:\n{indent}      port: {value}\n"
    if field == "sizeLimit":
        container += f"{indent}  volumeMounts:\n{indent}  - name: scratch\n{indent}    mountPath: /scratch\n"
        container += f"{indent}volumes:\n{indent}- name: scratch\n{indent}  emptyDir:\n{indent}    sizeLimit: {value}\n"
    return container


def _manifest(kind: str, field: str, value: str) -> str:
    if kind == "PyTorchJob":
        return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: quantities
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
{_pod_template(field, value, " " * 10, "pytorch")}"""  # the default name: no release ran a Master without it
    api = "kubeflow.org/v1" if kind == "MPIJob-v1" else "kubeflow.org/v2beta1"
    return f"""apiVersion: {api}
kind: MPIJob
metadata:
  name: quantities
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
{_pod_template(field, value, " " * 10)}    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: worker
            image: registry.example.com/train:1
"""


def _kubectl_dry_run(apiserver, text: str, namespace: str) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", apiserver.kubeconfig, "-n", namespace, "create", "--dry-run=server",
                           "--validate=strict", "-o", "name", "-f", "-"], input=text, capture_output=True, text=True,
                          timeout=60)


def _convert(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`kf2jobset convert` in process (the real CLI, without a Python start-up per case)."""
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    path = tmp_path / "job.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["convert", "--accept-mpi-ssh", str(path)], catch_exceptions=False)
    return subprocess.CompletedProcess([], result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def crds(apiserver):
    upstream.need("jobset", "training-operator", "mpi-operator")
    if KUBECTL is None:
        pytest.skip("kubectl not installed: these cases apply manifests the way users do")
    return apiserver.install_crds([str(upstream.jobset_crd()), *map(str, upstream.training_operator_crds())])


def _check(apiserver, kind, field, value, v1_accepts, namespace, tmp_path):
    text = _manifest(kind, field, value)
    v1 = _kubectl_dry_run(apiserver, text, namespace)
    assert (v1.returncode == 0) == v1_accepts, f"the v1 API server {'refused' if v1.returncode else 'took'} {field}: {value}:\n{v1.stderr}"
    if not v1_accepts:
        assert "integer" in v1.stderr and "string" in v1.stderr, v1.stderr  # refused for its type, not something else
    out = _convert(text, tmp_path)
    if v1_accepts:
        assert out.returncode == 0, out.stderr
        jobset = _kubectl_dry_run(apiserver, out.stdout, namespace)
        assert jobset.returncode == 0, f"the JobSet API refused the conversion of {field}: {value}:\n{jobset.stderr}\n{out.stdout}"
    else:
        assert out.returncode == 3, out.stderr  # an invalid v1 job, refused at the input
        assert "inherited" in out.stderr and "fractional" in out.stderr, out.stderr


@pytest.mark.parametrize("field,value,v1_accepts", CASES, ids=[f"{f}={v}" for f, v, _ in CASES])
def test_pytorchjob_numbers_in_int_or_string_fields(apiserver, crds, namespace, tmp_path, field, value, v1_accepts):
    _check(apiserver, "PyTorchJob", field, value, v1_accepts, namespace, tmp_path)


MPI_CPU = [("0.5", False), ("1.0", True), ('"0.5"', True)]


@pytest.mark.parametrize("value,v1_accepts", MPI_CPU)
def test_mpijob_v1_cpu(apiserver, crds, namespace, tmp_path, value, v1_accepts):
    _check(apiserver, "MPIJob-v1", "cpu", value, v1_accepts, namespace, tmp_path)


def test_mpijob_v2beta1_cpu(apiserver, crds, namespace, tmp_path):
    """mpi-operator's own CRD (it shares the name mpijobs.kubeflow.org: swapped in, then back)."""
    try:
        apiserver.remove_crd("mpijobs.kubeflow.org")
        apiserver.install_crds([str(upstream.mpi_v2_crd())])
        for value, v1_accepts in MPI_CPU:
            _check(apiserver, "MPIJob-v2beta1", "cpu", value, v1_accepts, namespace, tmp_path)
    finally:
        apiserver.remove_crd("mpijobs.kubeflow.org")
        apiserver.install_crds([str(upstream.mpi_v1_crd())])
