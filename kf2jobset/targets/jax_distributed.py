"""`--target trainjob`, built-in path: a JAXJob runs on Trainer's own `jax-distributed` ClusterTrainingRuntime
(what all built-in runtimes share: builtin.py).

Trainer's JAX plugin (v2.3.0, `pkg/runtime/framework/plugins/jax/jax.go`) writes JAX_NUM_PROCESSES
(numNodes), JAX_PROCESS_ID (the completion index) and JAX_COORDINATOR_ADDRESS (`<name>-node-0-0.<name>:29500`)
on the node container, then the JobSet builder upserts the trainer env after them, and declares port 29500;
it reserves no name. v1's COORDINATOR_ADDRESS, COORDINATOR_PORT, NUM_PROCESSES and PROCESS_ID (what
kf2jobset/frameworks/jax.py writes) ride in trainer.env beside them: the address names node 0 (v1's worker
0), the port stays v1's, PROCESS_ID reads the completion index and NUM_PROCESSES reads $(JAX_NUM_PROCESSES),
so numNodes is the size.
"""
from __future__ import annotations

from ..claims import equals, present
from ..notes import Note
from . import builtin
from . import builtin_notes as shared
from .builtin import COMPLETION_INDEX, NODE, TRAINER_PORT
from .builtin_notes import NODE_ENV

RUNTIME_NAME = "jax-distributed"
JAX_ENV = ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS")


class JaxPlugin(builtin.Plugin):
    runtime = RUNTIME_NAME
    profile = "jax"
    replica_types = ("Worker",)
    operator_port = "jaxjob-port"
    written = JAX_ENV
    family = "JAX_*"
    rank_vars = (("COORDINATOR_ADDRESS", "JAX_COORDINATOR_ADDRESS"), ("PROCESS_ID", "JAX_PROCESS_ID"))

    def plugin_env(self, name: str, trainer: dict, job) -> list[dict]:
        return [{"name": "JAX_NUM_PROCESSES", "value": str(trainer["numNodes"])},
                {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                {"name": "JAX_COORDINATOR_ADDRESS", "value": f"{name}-{NODE}-0-0.{name}:{TRAINER_PORT}"}]

    def count_var(self, trainer: dict) -> str | None:
        return "JAX_NUM_PROCESSES"


PLUGIN = JaxPlugin()

misfits, build, limits = builtin.interface(PLUGIN)


def notes(conversion, trainjob: dict, predicted: dict, planned_env: list[dict]) -> list[Note]:
    out = shared.notes(PLUGIN, conversion, trainjob, predicted)
    port = next((e.get("value") for e in planned_env if e.get("name") == "COORDINATOR_PORT"), None)
    user = {e.get("name") for e in trainjob["spec"]["trainer"].get("env") or []} & set(JAX_ENV)
    added = [n for n in JAX_ENV if n not in user]
    out.append(Note(
        "TJ014", "rewritten",
        f"Trainer's JAX plugin sets {', '.join(added) or 'nothing you did not set'} before the trainer env (numNodes, "
        f"the completion index, node 0 at port {TRAINER_PORT}) and declares port {TRAINER_PORT}; v1's "
        f"COORDINATOR_ADDRESS, COORDINATOR_PORT ({port}), NUM_PROCESSES and PROCESS_ID stay beside them and name "
        "the same pod and counts, so jax.distributed.initialize() called with v1's values meets on node 0 at v1's "
        f"port, and with Trainer's at {TRAINER_PORT}",
        target_path=NODE_ENV,
        explains=(*(("env", n) for n in added), ("port", "*")),
        claims=(*(present(f"{NODE_ENV}[{n}]") for n in added),
                equals(f"spec.replicatedJobs[{NODE}].template.spec.template.spec.containers[{NODE}].ports[0].containerPort",
                       TRAINER_PORT))))
    return out
