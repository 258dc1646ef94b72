"""Hypothesis strategies: valid Kubeflow v1 jobs of every kind, as a user could write them."""
from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import strategies as st

from .conftest import FIXTURES

NAME = st.from_regex(r"[a-z][a-z0-9]{0,7}(-[a-z0-9]{1,6})?", fullmatch=True)
NAMESPACE = st.one_of(st.none(), st.sampled_from(["default", "ml", "team-a"]))
# User env may repeat names the operator injects (older manifests did), and read them with $(NAME)
# before the operator's entry overrides them.
INJECTED_NAMES = ["MASTER_PORT", "MASTER_ADDR", "WORLD_SIZE", "RANK", "TF_CONFIG", "COORDINATOR_PORT",
                  "NUM_PROCESSES", "PADDLE_MASTER", "PET_NNODES", "OMPI_MCA_orte_default_hostfile",
                  "DMLC_PS_ROOT_URI", "DMLC_NUM_WORKER", "MX_CONFIG"]
USER_ENV = st.lists(
    st.builds(lambda n, v: {"name": n, "value": v},
              st.sampled_from(["EPOCHS", "LR", "DATA_DIR", "LOG_LEVEL"] + INJECTED_NAMES),
              st.sampled_from(["1", "0.01", "/data", "$(EPOCHS)", "debug", "$(MASTER_PORT)", "x-$(RANK)",
                               "$(WORLD_SIZE)", "$$(RANK)", "$(DMLC_PS_ROOT_URI):$(DMLC_PS_ROOT_PORT)"])),
    max_size=4, unique_by=lambda e: e["name"],
)
DEFAULTS = {
    "TFJob": ("tfReplicaSpecs", "tensorflow", "tfjob-port"),
    "PyTorchJob": ("pytorchReplicaSpecs", "pytorch", "pytorchjob-port"),
    "XGBoostJob": ("xgbReplicaSpecs", "xgboost", "xgboostjob-port"),
    "PaddleJob": ("paddleReplicaSpecs", "paddle", "master"),
    "JAXJob": ("jaxReplicaSpecs", "jax", "jaxjob-port"),
    "MXJob": ("mxReplicaSpecs", "mxnet", "mxjob-port"),
}
# MXJob: parameter-server training (a lone worker, or workers with or without scheduler and servers)
# or tuning; keys may be lower case (the controller camel-cased Scheduler/Server/Worker) and the tuning
# types may carry the tuner-server-key annotation that MX_CONFIG labels copy.
MX_TRAIN, MX_TUNE = ("Scheduler", "Server", "Worker"), ("TunerTracker", "TunerServer", "Tuner")


@st.composite
def template(draw, container: str, port_name: str | None, sidecar: bool = True):
    main = {"name": container, "image": "registry.example.com/train:1"}
    env = draw(USER_ENV)
    if env:
        main["env"] = env
    if port_name and draw(st.booleans()):
        main["ports"] = [{"name": port_name, "containerPort": draw(st.integers(1024, 65000))}]
    containers = [main]
    if sidecar and draw(st.booleans()):
        containers.append({"name": "sidecar", "image": "registry.example.com/sidecar:1"})
    return {"spec": {"containers": containers}}


def replica(draw, container, port_name, replicas, policies=("OnFailure", "Never", "Always", "ExitCode")):
    spec = {"replicas": replicas, "template": draw(template(container, port_name))}
    policy = draw(st.sampled_from((None,) + tuple(policies)))
    if policy:
        spec["restartPolicy"] = policy
    return spec


@st.composite
def v1_job(draw, kind: str):
    field, container, port = DEFAULTS[kind]
    meta = {"name": draw(NAME)}
    ns = draw(NAMESPACE)
    if ns:
        meta["namespace"] = ns
    specs: dict = {}
    extra: dict = {}
    if kind == "TFJob":
        _tf_specs(draw, container, port, specs, extra)
    elif kind in ("PyTorchJob", "XGBoostJob"):
        _master_worker_specs(draw, kind, container, port, specs, extra)
    elif kind == "PaddleJob":
        if draw(st.booleans()):
            specs["Master"] = replica(draw, container, port, 1)
        specs["Worker"] = replica(draw, container, port, draw(st.integers(1, 4)))
    elif kind == "JAXJob":
        specs["Worker"] = replica(draw, container, port, draw(st.integers(1, 6)))
    elif kind == "MXJob":
        _mx_specs(draw, container, port, specs, extra)
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": meta, "spec": {**extra, field: specs}}


# Each kind's replica specs (into `specs`) and spec fields (into `extra`), drawn in a fixed order.

def _tf_specs(draw, container, port, specs: dict, extra: dict) -> None:
    types = draw(st.sets(st.sampled_from(["Chief", "PS", "Worker", "Evaluator"]), min_size=1))
    for t in sorted(types):
        n = 1 if t in ("Chief", "Evaluator") else draw(st.integers(1, 4))
        specs[t] = replica(draw, container, port, n)
    if "Worker" in types and draw(st.booleans()):
        extra["successPolicy"] = "AllWorkers"
    if draw(st.integers(0, 4)) == 0:
        extra["enableDynamicWorker"] = True


def _master_worker_specs(draw, kind: str, container, port, specs: dict, extra: dict) -> None:
    has_master = kind == "XGBoostJob" or draw(st.booleans())
    if has_master:
        specs["Master"] = replica(draw, container, port, 1)
    if not has_master or draw(st.booleans()):
        specs["Worker"] = replica(draw, container, port, draw(st.integers(1, 5)))
    if kind == "PyTorchJob":
        if draw(st.booleans()):
            extra["nprocPerNode"] = draw(st.sampled_from(["auto", "gpu", "2", "8"]))
        if "Worker" in specs and draw(st.integers(0, 3)) == 0:
            extra["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": specs["Worker"]["replicas"] + 1,
                                      "rdzvBackend": "c10d", "maxRestarts": 3}


def _mx_specs(draw, container, port, specs: dict, extra: dict) -> None:
    tune = draw(st.integers(0, 3)) == 0
    extra["jobMode"] = "MXTune" if tune else "MXTrain"
    types = draw(st.sets(st.sampled_from(MX_TUNE if tune else MX_TRAIN), min_size=1))
    for t in sorted(types):
        n = 1 if t in ("Scheduler", "TunerTracker", "Tuner") else draw(st.integers(1, 4))
        spec = replica(draw, container, port, n)
        if t in MX_TUNE and draw(st.booleans()):
            spec["template"]["metadata"] = {"annotations": {"tuner-server-key": draw(st.sampled_from(["gpu", "a&b<c>", "$(X)"]))}}
        key = t.lower() if t in MX_TRAIN and draw(st.integers(0, 3)) == 0 else t
        specs[key] = spec


@st.composite
def mpi_job(draw):
    v1 = draw(st.booleans())
    meta = {"name": draw(NAME)}
    workers = draw(st.integers(1, 4))
    launcher = {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "launcher", "image": "registry.example.com/mpi:1", "command": ["mpirun", "app"]}]}}}
    worker = {"replicas": workers, "template": {"spec": {"containers": [{"name": "worker", "image": "registry.example.com/mpi:1"}]}}}
    spec = {"slotsPerWorker": draw(st.integers(1, 8)), "mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker}}
    if not v1:
        spec["mpiImplementation"] = draw(st.sampled_from(["OpenMPI", "Intel", "MPICH"]))
        spec["runLauncherAsWorker"] = draw(st.booleans())
    return {"apiVersion": "kubeflow.org/v1" if v1 else "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": meta, "spec": spec}


ANY_JOB = st.one_of(*(v1_job(k) for k in DEFAULTS), mpi_job())


def _comment_sources():
    """Jobs with comments: two of benchmarks/bench.py's and the first 25 fixtures converted without args."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.pop(0)
    texts = [bench.PYTORCH.format(i=7, ns=1, workers=3), bench.TFJOB.format(i=8, workers=2)]
    cases = sorted(p.parent for p in FIXTURES.glob("*/*/input.yaml"))
    texts += [(case / "input.yaml").read_text() for case in cases if not (case / "args").exists()][:25]
    return texts


COMMENT_SOURCES = _comment_sources()


@st.composite
def commented_source(draw):
    """A job text with comments added above, beside and after blank lines, and an indent to write it at."""
    text = draw(st.sampled_from(COMMENT_SOURCES))
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines):
        choice = draw(st.sampled_from(["none", "none", "eol", "above", "blank-above"]))
        indent = len(line) - len(line.lstrip(" "))
        if choice == "above" and line.strip():
            out.append(" " * draw(st.sampled_from([indent, indent + 2, 0])) + f"# above {n}")
        elif choice == "blank-above":
            out += ["", " " * indent + f"# after a blank {n}"]
        if choice == "eol" and line.strip() and "#" not in line and not line.rstrip().endswith(("|", ">", "|-")):
            line += " " * draw(st.integers(1, 30)) + f"# eol {n}"
        out.append(line)
    return "\n".join(out) + "\n", draw(st.sampled_from(["", "  ", "    "]))
