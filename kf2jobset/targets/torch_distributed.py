"""`--target trainjob`, built-in path: a PyTorchJob whose pods share one template runs on Trainer's own
`torch-distributed` ClusterTrainingRuntime (what all built-in runtimes share: builtin.py).

Trainer's torch plugin (v2.3.0, `pkg/runtime/framework/plugins/torch`, held against the real controller in
tests/e2e/test_trainjob_target.py) writes, after the trainer env, PET_NNODES, PET_NPROC_PER_NODE,
PET_NODE_RANK (the completion index), PET_MASTER_ADDR (`<name>-node-0-0.<name>`) and PET_MASTER_PORT
(29500), declares port 29500, and refuses those names in trainer.env. No MASTER_ADDR, RANK or WORLD_SIZE:
they ride in trainer.env as v1 set them (MASTER_ADDR pointed at node 0, RANK read from the completion
index). WORLD_SIZE cannot read PET_NNODES (it comes after the trainer env), so it is written for numNodes
and recorded (TJ017).
"""
from __future__ import annotations

import math

from ..claims import absent, equals, present
from ..notes import Note
from ..k8s.quantity import parse_quantity
from . import builtin
from . import builtin_notes as shared
from .builtin import COMPLETION_INDEX, NODE, TRAINER_PORT
from .builtin_notes import NODE_ENV

RUNTIME_NAME = "torch-distributed"
# env the torch plugin writes on the node container and refuses in trainer.env (constants.go)
PET_ENV = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
TORCHTUNE = ["tune", "run"]  # the plugin rewrites this command


class TorchPlugin(builtin.Plugin):
    runtime = RUNTIME_NAME
    profile = "pytorch"
    replica_types = ("Master", "Worker")
    operator_port = "pytorchjob-port"
    env_first = False
    reserved = written = PET_ENV
    family = "PET_*"
    rank_vars = (("MASTER_ADDR", "PET_MASTER_ADDR"), ("RANK", "PET_NODE_RANK"))

    def plugin_env(self, name: str, trainer: dict, job) -> list[dict]:
        return [{"name": "PET_NNODES", "value": str(trainer["numNodes"])},
                {"name": "PET_NPROC_PER_NODE", "value": nproc_per_node(job, trainer.get("resourcesPerNode") or {})},
                {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
                {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)}]

    def extra_misfits(self, job, options) -> list[str]:
        why = []
        if job.framework.get("elasticPolicy"):
            why.append("elasticPolicy (Trainer has no elastic training)")
        for t in list(job.replicas)[:1]:
            for c in ((job.replicas[t].template.get("spec") or {}).get("containers") or [])[:1]:
                if c.get("command") == TORCHTUNE:
                    why.append("command `tune run` (Trainer's torch plugin rewrites it for torchtune)")
        nproc = str(job.framework.get("nprocPerNode", "auto"))
        if nproc != "auto" and not nproc.isdigit():
            why.append(f"nprocPerNode {nproc!r} (Trainer takes a number of processes, or derives one)")
        return why

    def trainer_fields(self, job) -> dict:
        nproc = str(job.framework.get("nprocPerNode", "auto"))
        return {"numProcPerNode": int(nproc)} if nproc.isdigit() else {}


PLUGIN = TorchPlugin()

misfits, build, limits = builtin.interface(PLUGIN)


def nproc_per_node(job, resources: dict) -> str:
    """PET_NPROC_PER_NODE as Trainer's torch plugin sets it: the number given, else "auto" with a GPU
    (any resource whose name contains "gpu", requests before limits), else the CPUs (requests before
    limits, rounded up as Go's Quantity.Value does), at least 1."""
    nproc = str(job.framework.get("nprocPerNode", "auto"))
    if nproc.isdigit():
        return nproc

    def first(kind_of):
        for part in ("requests", "limits"):
            for name, q in (resources.get(part) or {}).items():
                if kind_of(str(name)):
                    value = parse_quantity(q)
                    if value:
                        return math.ceil(value)
        return 0
    if first(lambda n: "gpu" in n.lower()):
        return "auto"
    return str(max(1, first(lambda n: n == "cpu")))


def notes(conversion, trainjob: dict, predicted: dict, planned_env: list[dict]) -> list[Note]:
    """What differs from the JobSet kf2jobset would write (the v1 contract: `planned_env` is its env)."""
    v1_nproc = next((e.get("value") for e in planned_env if e.get("name") == "PET_NPROC_PER_NODE"), None)
    pet_nproc = next(e["value"] for e in predicted["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                     ["containers"][0]["env"] if e["name"] == "PET_NPROC_PER_NODE")
    out = shared.notes(PLUGIN, conversion, trainjob, predicted)
    out += [
        Note("TJ006", "rewritten",
             f"PET_MASTER_PORT is {TRAINER_PORT} and the node container declares port {TRAINER_PORT} "
             "(Trainer's torch plugin; it refuses any other value); MASTER_PORT keeps v1's port, so a script "
             "reading either finds a free port on node 0, and torchrun uses PET_MASTER_PORT",
             target_path=f"{NODE_ENV}[PET_MASTER_PORT]",
             explains=(("env", "PET_MASTER_PORT"), ("port", "*")),
             claims=(equals(f"{NODE_ENV}[PET_MASTER_PORT].value", str(TRAINER_PORT)),)),
        Note("TJ008", "approximated",
             "every node starts at once: the operator's init-pytorch container (workers waited until the master "
             "resolved) has no place in a built-in runtime; torch's rendezvous waits for the master instead "
             "(torchrun and init_process_group retry the store until their timeout)",
             explains=(("init", "init-pytorch"), ("lifecycle", "start")),
             action="nothing for torchrun or env:// rendezvous; a script that connects once must retry",
             claims=(absent(f"spec.replicatedJobs[{NODE}].dependsOn"), absent("spec.startupPolicy"))),
    ]
    v1_names = {e.get("name") for e in planned_env}
    unset = [n for n in PET_ENV if n not in v1_names]
    if unset:
        out.append(Note(
            "TJ013", "rewritten",
            f"{', '.join(unset)}: set by Trainer's torch plugin on every node; v1 did not set them for this job "
            "(torchrun reads them; other scripts ignore them)",
            target_path=NODE_ENV, explains=tuple(("env", n) for n in unset),
            claims=tuple(present(f"{NODE_ENV}[{n}]") for n in unset)))
    if pet_nproc != v1_nproc:
        out.append(Note(
            "TJ007", "approximated",
            f"PET_NPROC_PER_NODE is {pet_nproc!r} (Trainer derives it from the node's CPU or GPU resources); "
            f"v1 set {v1_nproc!r}, with which torchrun started one process per visible device or CPU",
            target_path=f"{NODE_ENV}[PET_NPROC_PER_NODE]",
            explains=(("env", "PET_NPROC_PER_NODE"),),
            action="set nprocPerNode in the v1 job (a number) to choose the processes per node",
            claims=(equals(f"{NODE_ENV}[PET_NPROC_PER_NODE].value", pet_nproc),)))
    return out

