"""PaddleJob: PADDLE_* env; the first pod reaches itself by IP. Facts: training-operator.md §7."""
from __future__ import annotations

from ..notes import Note
from .base import EmitContext, Profile, Side, env, field_env

POD_IP_VAR = "POD_IP_DUMMY"


def _first_type(job) -> str:
    return "Master" if job.has("Master") else "Worker"


def _first_is_alone(job) -> bool:
    """The first pod sits alone in its replicatedJob, so its template can differ from the rest."""
    return job.replicas[_first_type(job)].replicas == 1


class PaddleProfile(Profile):
    name = "paddle"

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        first = _first_type(job)
        port = job.port(first)
        out = [
            env("PYTHONUNBUFFERED", "1"),
            {"name": "PADDLE_JOB_ID", "value": side.job_name()},
            env("PADDLE_NNODES", job.total_replicas()),
        ]
        if side.is_operator:
            is_first_pod = rtype == first and side.index == 0  # type: ignore[attr-defined]
        else:
            # A pod template is shared by every pod of its replicatedJob: the IP form is only
            # possible when the first pod is the only one; otherwise it uses its own DNS name.
            is_first_pod = rtype == first and _first_is_alone(job)
        if is_first_pod:
            out.append(field_env(POD_IP_VAR, "status.podIP"))
            out.append({"name": "PADDLE_MASTER", "value": f"$({POD_IP_VAR}):{port}"})
        else:
            out.append({"name": "PADDLE_MASTER", "value": f"{side.host(first, 0)}:{port}"})
        if job.has("Master"):
            out.append(env("PADDLE_SERVER_NUM" if rtype == "Master" else "PADDLE_TRAINER_NUM", "1"))
        return out

    def notes(self, job, ctx: EmitContext) -> None:
        first = _first_type(job)
        if not _first_is_alone(job):
            ctx.note(Note(
                "PD001", "rewritten",
                f"{first.lower()} 0 shares its pod template with the other {first.lower()}s, so its "
                f"PADDLE_MASTER names itself by DNS ({first.lower()} 0's hostname) instead of $(POD_IP_DUMMY); "
                "both reach the same pod",
                source_path=f"paddleReplicaSpecs.{first}", target_path=f"spec.replicatedJobs[{first.lower()}]",
                explains=(("env", POD_IP_VAR), ("env", "PADDLE_MASTER")), replica_type=first,
            ))
        if job.framework.get("elasticPolicy") is not None:
            ctx.note(Note(
                "PD010", "breaking",
                "elasticPolicy: a JobSet runs a fixed number of workers; min/max replicas and any HPA are gone",
                source_path="spec.elasticPolicy", action="size the worker replicatedJob for the run",
            ))


PROFILE = PaddleProfile()
