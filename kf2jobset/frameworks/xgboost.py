"""XGBoostJob: Rabit tracker env (MASTER_*, WORKER_ADDRS, RANK). Facts: training-operator.md §4."""
from __future__ import annotations

from .. import claims
from ..notes import Note
from .base import HOSTS, PODS, EmitContext, Profile, SizeValue, Side, env


class XGBoostProfile(Profile):
    name = "xgboost"
    size_values = (SizeValue("WORLD_SIZE", PODS), SizeValue("WORKER_ADDRS", HOSTS))

    def size_literals(self, job) -> list[str]:
        # WORKER_ADDRS lists every worker; WORLD_SIZE stays beside it so the two never disagree.
        return ["WORLD_SIZE"] + (["WORKER_ADDRS"] if job.total_replicas() > 1 else [])

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        world = job.total_replicas()
        masters = job.replicas["Master"].replicas
        out = [
            env("MASTER_PORT", job.port("Master")),
            {"name": "MASTER_ADDR", "value": side.host("Master", 0)},
            env("WORLD_SIZE", world),
            side.rank_env("RANK", 0 if rtype == "Master" else masters),
            env("PYTHONUNBUFFERED", "1"),
        ]
        if world > 1:
            # One name per worker, WORLD_SIZE - 1 of them (the operator assumes a single master).
            out.append(env("WORKER_PORT", job.port("Worker")))
            out.append({"name": "WORKER_ADDRS", "value": ",".join(side.host("Worker", i) for i in range(world - 1))})
        return out

    def notes(self, job, ctx: EmitContext) -> None:
        in_place = [t for t, s in job.replicas.items() if s.restart_policy == "OnFailure"]
        if in_place and job.run_policy.backoff_limit != 0:  # with backoffLimit 0 the JobSet fails too
            ctx.note(Note(
                "XGB001", "approximated",
                "v1 marked the whole XGBoostJob Failed when any pod reached phase Failed under OnFailure "
                "(e.g. after an eviction); the JobSet retries that pod within its Job's backoffLimit instead",
                source_path="xgbReplicaSpecs.*.restartPolicy", explains=(("lifecycle", "failure"),),
                claims=claims.retried_within_backoff(job, ctx.rjob_names, in_place),
            ))

    def operator_success(self, job) -> tuple:
        return ("all", ("master",))

    def operator_failure(self, job, rtype: str, policy: str) -> str:
        return "exit-code" if policy == "ExitCode" else "fail-job"


PROFILE = XGBoostProfile()
