"""JAXJob: coordinator env for jax.distributed.initialize(). Facts: training-operator.md §8."""
from __future__ import annotations

from .base import PODS, Profile, SizeValue, Side, env


class JaxProfile(Profile):
    name = "jax"
    size_values = (SizeValue("NUM_PROCESSES", PODS),)

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        return [
            env("PYTHONUNBUFFERED", "1"),
            env("COORDINATOR_PORT", job.port("Worker")),
            {"name": "COORDINATOR_ADDRESS", "value": side.host("Worker", 0)},
            side.size_env("NUM_PROCESSES", job.total_replicas()),
            side.index_env("PROCESS_ID"),
        ]

    def operator_success(self, job) -> tuple:
        return ("all", ("worker",))


PROFILE = JaxProfile()
