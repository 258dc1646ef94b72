"""`--target trainjob`, built-in path: an XGBoostJob runs on Trainer's own `xgboost-distributed`
ClusterTrainingRuntime (what all built-in runtimes share: builtin.py).

Trainer's XGBoost plugin (v2.3.0, `pkg/runtime/framework/plugins/xgboost/xgboost.go`) writes
DMLC_TRACKER_URI (`<name>-node-0-0.<name>`), DMLC_TRACKER_PORT (29500), DMLC_TASK_ID (the completion
index) and DMLC_NUM_WORKER (numNodes x the GPUs per node, 1 without GPUs) on the node container, refuses
those names in trainer.env, and declares port 29500. Rank 0's code starts the tracker (Trainer starts
none), as under v1. v1's MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, WORKER_ADDRS and WORKER_PORT
(kf2jobset/frameworks/xgboost.py) ride in trainer.env: the master is node 0, worker i node i+1, RANK reads
the completion index.

Where the DMLC_* land is not fixed: Trainer v2.3 runs its PlainML plugin on this runtime too (PlainML skips
only torch, MPI and JAX policies), and PlainML writes the trainer env into the container as the XGBoost
plugin writes the DMLC_*; the two run in the order Go's map iteration gave the plugins when the controller
started (core/framework.go ranges over the plugin registry, a map). So the DMLC_* come before the trainer
env under one controller process and after it under another (both seen on the real v2.3.0 controller), and
no trainer env value may read them. `predict` writes them first; tests/e2e/test_trainjob_target.py accepts
either order and no other.

Sizes: WORLD_SIZE (the pod count) and WORKER_ADDRS (every worker) are written for numNodes and recorded on
the TrainJob (TJ017): `kf2jobset convert --check` fails on a TrainJob whose numNodes was edited without
them.
"""
from __future__ import annotations

from ..claims import present
from ..notes import Note
from ..k8s.quantity import parse_quantity
from . import builtin
from . import builtin_notes as shared
from .builtin import COMPLETION_INDEX, NODE, TRAINER_PORT
from .builtin_notes import NODE_ENV

RUNTIME_NAME = "xgboost-distributed"
DMLC_ENV = ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")


def gpus_per_node(resources: dict) -> int:
    """runtime.GetNumGPUPerNode: the first resource whose name contains "gpu" in requests, else in limits."""
    for part in ("requests", "limits"):
        for name, q in (resources.get(part) or {}).items():
            if "gpu" in str(name).lower():
                value = parse_quantity(q)
                if value:
                    return int(-(-value // 1))  # Quantity.Value rounds up
                break
    return 0


class XGBoostPlugin(builtin.Plugin):
    runtime = RUNTIME_NAME
    profile = "xgboost"
    replica_types = ("Master", "Worker")
    operator_port = "xgboostjob-port"
    reserved = written = DMLC_ENV
    family = "DMLC_*"
    rank_vars = (("MASTER_ADDR", "DMLC_TRACKER_URI"), ("RANK", "DMLC_TASK_ID"))
    order_fixed = False  # see the module docstring

    def plugin_env(self, name: str, trainer: dict, job) -> list[dict]:
        workers = trainer["numNodes"] * max(1, gpus_per_node(trainer.get("resourcesPerNode") or {}))
        return [{"name": "DMLC_TRACKER_URI", "value": f"{name}-{NODE}-0-0.{name}"},
                {"name": "DMLC_TRACKER_PORT", "value": str(TRAINER_PORT)},
                {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                {"name": "DMLC_NUM_WORKER", "value": str(workers)}]



PLUGIN = XGBoostPlugin()

misfits, build, limits = builtin.interface(PLUGIN)


def notes(conversion, trainjob: dict, predicted: dict, planned_env: list[dict]) -> list[Note]:
    out = shared.notes(PLUGIN, conversion, trainjob, predicted)
    trainer = trainjob["spec"]["trainer"]
    port = next((e.get("value") for e in planned_env if e.get("name") == "MASTER_PORT"), None)
    workers = next(e["value"] for e in PLUGIN.plugin_env("n", trainer, None) if e["name"] == "DMLC_NUM_WORKER")
    gpus = gpus_per_node(trainer.get("resourcesPerNode") or {})
    out.append(Note(
        "TJ015", "rewritten",
        f"Trainer's XGBoost plugin sets {', '.join(DMLC_ENV)} beside the trainer env (node 0, port {TRAINER_PORT}, "
        f"the completion index, {workers} workers" + (f": {gpus} GPUs on each of {trainer['numNodes']} nodes" if gpus else "")
        + f") and declares port {TRAINER_PORT}; v1's MASTER_ADDR, MASTER_PORT ({port}), WORLD_SIZE, RANK"
        + (", WORKER_ADDRS and WORKER_PORT" if trainer["numNodes"] > 1 else "") + " stay beside them and name the same "
        "pods (the master is node 0, worker i node i+1), so a script that starts v1's tracker on rank 0 at "
        "MASTER_PORT runs as before",
        target_path=NODE_ENV,
        explains=(*(("env", n) for n in DMLC_ENV), ("port", "*")),
        claims=tuple(present(f"{NODE_ENV}[{n}]") for n in DMLC_ENV)))
    return out
