"""PaddleJob: PADDLE_* env; the first pod reaches itself by IP. Facts: training-operator.md §7.

Why the IP matters: `python -m paddle.distributed.launch` serves its rendezvous store (and so takes
rank 0) only on the node whose PADDLE_MASTER host is the literal `127.0.0.1` or the node's own IP
(the address its hostname resolves to); a DNS name, even of its own pod, makes every node a client
of a store nobody serves. So the first pod must get `$(POD_IP_DUMMY)` and no other pod may: when
the first replica type has several pods, its pod 0 gets a replicatedJob of its own (plan.py).
"""
from __future__ import annotations

from .. import claims
from ..notes import Note
from .base import PODS, SOLO, EmitContext, Profile, SizeValue, Side, elastic_policy, env, field_env

POD_IP_VAR = "POD_IP_DUMMY"


def _first_type(job) -> str:
    return "Master" if job.has("Master") else "Worker"


class PaddleProfile(Profile):
    name = "paddle"
    # The layout depends on the first type's pods alone: the replicatedJob whose pod reads PADDLE_MASTER
    # from its own IP must run one pod; the other replicatedJobs may be resized freely.
    size_values = (SizeValue("PADDLE_NNODES", PODS), SizeValue("replicatedJob's layout", SOLO, keys=(POD_IP_VAR,)))

    def spec_fields(self, spec: dict, replicas: dict):
        elastic, problems, defaults = elastic_policy(spec, replicas)
        return {"elasticPolicy": elastic}, problems, defaults

    def solo_first(self, job) -> str | None:
        return _first_type(job)

    def size_literals(self, job) -> list[str]:
        first = _first_type(job)
        if job.replicas[first].replicas == 1:
            # pod 0 shares its type's template while it is alone; a second pod would get POD_IP_DUMMY too
            # no comma: the size-literals record is a comma-separated list
            return [f"the {first.lower()} replicatedJob's layout (one pod: it reads POD_IP_DUMMY as the rendezvous "
                    "host; a second pod there would read its own IP)"]
        return []

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        first = _first_type(job)
        port = job.port(first)
        out = [
            env("PYTHONUNBUFFERED", "1"),
            {"name": "PADDLE_JOB_ID", "value": side.job_name()},
            side.size_env("PADDLE_NNODES", job.total_replicas()),
        ]
        if side.is_operator:
            is_first_pod = rtype == first and side.index == 0  # type: ignore[attr-defined]
        else:
            # The plan gives the first pod a replicatedJob of its own (first_index 0, one replica).
            is_first_pod = rtype == first and side.first_index == 0  # type: ignore[attr-defined]
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
        segments = (ctx.segments or {}).get(first) or []
        if len(segments) > 1:
            (solo, _, _), (rest, _, count) = segments[0], segments[1]
            kind = first.lower()
            js = ctx.jobset_name or "<jobset>"
            ctx.note(Note(
                "PD002", "rewritten",
                f"{kind} 0 runs in a replicatedJob of its own, {solo!r} (pod {js}-{solo}-0-0), so that only its pod gets "
                f"POD_IP_DUMMY (status.podIP) and PADDLE_MASTER=$(POD_IP_DUMMY):<port> as under v1: Paddle's launcher "
                f"serves its rendezvous store, and takes rank 0, only where PADDLE_MASTER's host is the pod's own IP. "
                f"{kind.capitalize()}s 1-{count} are replicatedJob {rest!r} with job-index i-1 (pods {js}-{rest}-<i-1>-0); "
                f"job-global-index is still the v1 replica index",
                source_path=f"paddleReplicaSpecs.{first}", target_path=f"spec.replicatedJobs[{solo}]",
                action=f"select {kind} pods by the replicatedjob-name labels {solo!r} and {rest!r} (or by job-global-index); "
                       f"to resize, change the replicas of {rest!r} (total {kind}s = 1 + its replicas)"
                       + ("" if ctx.size_follows else " and PADDLE_NNODES"),
                replica_type=first, warn=True,
                claims=(claims.equals(f"spec.replicatedJobs[{solo}].replicas", 1),
                        claims.equals(f"spec.replicatedJobs[{rest}].replicas", count),
                        claims.present(claims.pod_path(solo) + f".spec.containers[*].env[{POD_IP_VAR}]"),
                        claims.absent(claims.pod_path(rest) + f".spec.containers[*].env[{POD_IP_VAR}]")),
            ))
        if job.framework.get("elasticPolicy") is not None:
            ctx.note(Note(
                "PD010", "breaking",
                "elasticPolicy: a JobSet runs a fixed number of workers; min/max replicas and any HPA are gone",
                source_path="spec.elasticPolicy", action="size the worker replicatedJob for the run",
                claims=(claims.absent("kind", target="HorizontalPodAutoscaler"),),
            ))

    def operator_success(self, job) -> tuple:
        return ("all", ("master",)) if job.has("Master") else ("all", ("worker",))


PROFILE = PaddleProfile()
