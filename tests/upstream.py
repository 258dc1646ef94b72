"""Upstream files the tests read — example jobs, CRDs, Trainer's built-in runtimes — found in the Go
module cache, where tools/install-ground-truth.sh puts them (`go mod download` of the modules pinned in
tools/upstream-modules.txt, the versions it also builds the ground truth from). Nothing is downloaded
here: a module not in the cache is named, with the command that fetches it.

The corpus is the upstream example jobs a converter meets, named `<module name>/<path in the module>`
(e.g. `training-operator/examples/pytorch/simple.yaml` is that path in training-operator v1.9.4): every
job manifest of training-operator v1.9.4's and mpi-operator v0.8.2's examples, the examples those
projects dropped (training-operator v1.5.0, mpi-operator v0.3.0's kubeflow.org/v1 MPIJobs) and Katib
v0.19.0's Experiments and trial templates that embed a Kubeflow job.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "tools" / "upstream-modules.txt"
INSTALL = "bash tools/install-ground-truth.sh upstream"


class Module(NamedTuple):
    name: str  # the first column of tools/upstream-modules.txt, also the corpus prefix
    path: str  # Go module path
    version: str


class CorpusFile(NamedTuple):
    name: str  # <module name>/<path in the module>
    path: Path  # where it is in the module cache


# Per module, the files of the corpus: the job manifests only (the examples' PVCs, PVs and etcd are not jobs).
CORPUS = {
    "training-operator": [
        f"examples/{p}" for p in (
            "jax/cpu-demo/demo.yaml", "jax/jax-dist-spmd-mnist/jaxjob_dist_spmd_mnist_gloo.yaml",
            "mpi/tensorflow-mnist-elastic.yaml", "mpi/tensorflow-mnist.yaml",
            "paddlepaddle/simple-cpu.yaml", "paddlepaddle/simple-gpu.yaml",
            "pytorch/cpu-demo/demo.yaml", "pytorch/deepspeed-demo/pytorch_deepspeed_demo.yaml",
            "pytorch/elastic/echo/echo.yaml", "pytorch/elastic/imagenet/imagenet.yaml",
            "pytorch/mnist/v1/pytorch_job_mnist_gloo.yaml", "pytorch/mnist/v1/pytorch_job_mnist_mpi.yaml",
            "pytorch/mnist/v1/pytorch_job_mnist_nccl.yaml", "pytorch/simple.yaml",
            "pytorch/smoke-dist/pytorch_job_sendrecv.yaml",
            "tensorflow/dist-mnist/tf_job_mnist.yaml", "tensorflow/distribution_strategy/multi_worker_tfjob.yaml",
            "tensorflow/mnist_with_summaries/tf_job_mnist.yaml", "tensorflow/simple.yaml",
            "xgboost/lightgbm-dist/xgboostjob_v1_lightgbm_dist_training.yaml",
            "xgboost/smoke-dist/xgboostjob_v1_rabit_test.yaml",
            "xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1_iris_predict.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1_iris_predict_local.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1_iris_train.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1_iris_train_local.yaml",
            "xgboost/xgboostjob.yaml")],
    # examples removed from later releases: TFJobs of the estimator and Keras APIs, XGBoostJobs whose
    # container is named `xgboostjob` (the v1.9 webhook refuses them)
    "training-operator-v1.5.0": [
        f"examples/{p}" for p in (
            "tensorflow/distribution_strategy/estimator-API/distributed_tfjob.yaml",
            "tensorflow/distribution_strategy/keras-API/multi_worker_tfjob.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_predict.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_predict_local.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_train.yaml",
            "xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_train_local.yaml")],
    "mpi-operator": [
        f"examples/v2beta1/{p}" for p in (
            "horovod/tensorflow-mnist.yaml", "pi/pi-intel.yaml", "pi/pi-mpich.yaml", "pi/pi.yaml",
            "tensorflow-benchmarks/tensorflow-benchmarks.yaml")],
    # the kubeflow.org/v1 MPIJobs of the mpi-operator (later served by the training-operator)
    "mpi-operator-v0.3.0": [
        "examples/horovod/tensorflow-mnist-elastic.yaml", "examples/v1/tensorflow-benchmarks-imagenet.yaml",
        "examples/v1/tensorflow-benchmarks.yaml"],
    # Experiments whose trialSpec is a Kubeflow job; the controller's ConfigMap and the UI's fixture hold
    # a PyTorchJob as a string
    "katib": [
        "examples/v1beta1/kubeflow-training-operator/mpijob-horovod.yaml",
        "examples/v1beta1/kubeflow-training-operator/pytorchjob-mnist.yaml",
        "examples/v1beta1/kubeflow-training-operator/tfjob-mnist-with-summaries.yaml",
        "examples/v1beta1/kubeflow-training-operator/xgboostjob-lightgbm.yaml",
        "manifests/v1beta1/components/controller/trial-templates.yaml",
        "pkg/ui/v1beta1/frontend/cypress/fixtures/trial-template.json"],
}


@cache
def modules() -> dict[str, Module]:
    """tools/upstream-modules.txt: name -> module."""
    out = {}
    for line in PINS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, path, version = line.split()
            out[name] = Module(name, path, version)
    return out


@cache
def module_cache() -> Path:
    """`go env GOMODCACHE` (GOMODCACHE, else GOPATH's first entry /pkg/mod, else ~/go/pkg/mod without Go)."""
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    if shutil.which("go"):
        out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True,
                             env={**os.environ, "GOTOOLCHAIN": "local"})
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0] or str(Path.home() / "go")
    return Path(gopath) / "pkg" / "mod"


def _escaped(module_path: str) -> str:
    """The module cache's spelling of a path: an upper-case letter is `!` and the letter in lower case."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module_path)


def module_dir(name: str) -> Path:
    """Where module `name` (a first column of tools/upstream-modules.txt) is unpacked; it may be absent."""
    m = modules()[name]
    return module_cache() / f"{_escaped(m.path)}@{m.version}"


def cite(name: str, path: str = "") -> str:
    """`<module path>@<version>/<path>`: how a test message names an upstream file."""
    m = modules()[name]
    return f"{m.path}@{m.version}" + (f"/{path}" if path else "")


def absent(*names: str) -> str | None:
    """Why these modules cannot be read (not in the module cache), or None."""
    missing = [cite(n) for n in names if not module_dir(n).is_dir()]
    if not missing:
        return None
    return (f"upstream module(s) {', '.join(missing)} not in the Go module cache {module_cache()}: "
            f"run `{INSTALL}` (tools/upstream-modules.txt pins them)")


def need(*names: str) -> None:
    """Skip, saying why and how to fetch them, when a module is absent."""
    reason = absent(*names)
    if reason:
        import pytest

        pytest.skip(reason)


def file(name: str, path: str) -> Path:
    """A file of module `name`, skipping (with the command that fetches it) when the module is absent."""
    need(name)
    return module_dir(name) / path


def corpus() -> list[CorpusFile]:
    """The corpus files of the modules present, YAML then JSON, each in path order (collection time: no skip)."""
    out = [CorpusFile(f"{name}/{rel}", module_dir(name) / rel)
           for name, paths in CORPUS.items() if module_dir(name).is_dir() for rel in paths]
    return sorted(out, key=lambda f: (f.name.endswith(".json"), f.name.split("/")))


def corpus_absent() -> str | None:
    return absent(*CORPUS)


def require_corpus() -> list[CorpusFile]:
    """The whole corpus, or a skip that names the missing modules."""
    need(*CORPUS)
    return corpus()


def corpus_file(name: str) -> Path:
    """One corpus file by its name (`<module name>/<path>`)."""
    module, _, rel = name.partition("/")
    assert rel in CORPUS[module], f"{name} is not in tests/upstream.py's CORPUS"
    return file(module, rel)


# The files the tests use most, by what they are
def jobset_crd() -> Path:
    return file("jobset", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")


def training_operator_crds() -> list[Path]:
    """The v1.9.4 CRDs: TFJob, PyTorchJob, MPIJob v1, XGBoostJob, PaddleJob, JAXJob (not the kustomization)."""
    root = file("training-operator", "manifests/base/crds")
    return sorted(p for p in root.glob("kubeflow.org_*.yaml"))


def mpi_v2_crd() -> Path:
    return file("mpi-operator", "manifests/base/kubeflow.org_mpijobs.yaml")


def trainer_crds() -> list[Path]:
    """Trainer's CRDs: TrainJob, TrainingRuntime, ClusterTrainingRuntime (not the kustomization)."""
    root = file("trainer", "manifests/base/crds")
    return sorted(p for p in root.glob("trainer.kubeflow.org_*.yaml"))


def trainer_runtimes() -> list[Path]:
    """Trainer's built-in ClusterTrainingRuntimes, one file each (not the kustomization, not subfolders)."""
    root = file("trainer", "manifests/base/runtimes")
    return sorted(p for p in root.glob("*.yaml") if p.name != "kustomization.yaml")


def copy_corpus(root: Path) -> list[CorpusFile]:
    """The corpus written under `root` as `<name>` (writable copies: the module cache is read-only)."""
    files = require_corpus()
    for f in files:
        (root / f.name).parent.mkdir(parents=True, exist_ok=True)
        (root / f.name).write_bytes(f.path.read_bytes())
    return files


def mpi_v1_crd() -> Path:
    """MPIJob kubeflow.org/v1 as the training-operator v1.9.4 serves it (same CRD name as the v2beta1 one)."""
    return file("training-operator", "manifests/base/crds/kubeflow.org_mpijobs.yaml")
