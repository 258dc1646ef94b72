"""TFJob: TF_CONFIG cluster spec. Facts: training-operator.md §2.2."""
from __future__ import annotations

import json

from .. import claims
from ..notes import Note
from .base import HOSTS, EmitContext, Profile, SizeValue, Side, literal_env

_INDEX_SLOT = "@@KF2JOBSET_TASK_INDEX@@"  # replaced after json.dumps so task.index stays a JSON number


def _compact(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


class TensorFlowProfile(Profile):
    name = "tensorflow"
    size_values = (SizeValue("TF_CONFIG", HOSTS),)

    def spec_fields(self, spec: dict, replicas: dict):
        return {"successPolicy": spec.get("successPolicy") or "",
                "enableDynamicWorker": bool(spec.get("enableDynamicWorker", False))}, [], []

    def fields_from_pods(self, pods: dict, stream: list) -> tuple[dict, dict]:
        # the sparse TF_CONFIG of enableDynamicWorker has no `environment` key
        configs = [literal_env(t).get("TF_CONFIG") for t in pods.values()]
        dynamic = any(c is not None and '"environment"' not in c for c in configs)
        return ({"enableDynamicWorker": True} if dynamic else {}), {}

    def size_literals(self, job) -> list[str]:
        # A lone replica gets no TF_CONFIG at all; a second one would need it.
        return ["TF_CONFIG (cluster host lists)" if job.total_replicas() > 1 else "TF_CONFIG (not set for one replica)"]

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        # A lone replica runs locally: the operator sets no TF_CONFIG at all.
        if job.total_replicas() == 1:
            return []
        task_type = rtype.lower()
        if job.framework.get("enableDynamicWorker"):
            value = self._sparse(job, rtype, side)
        else:
            cluster = {}
            for t in sorted(job.replicas, key=str.lower):
                port = job.port(t)
                cluster[t.lower()] = [f"{side.host(t, i, 'svc')}:{port}" for i in range(job.replicas[t].replicas)]
            value = _compact({"cluster": cluster, "task": {"type": task_type, "index": _INDEX_SLOT}, "environment": "cloud"})
        value = value.replace(f'"{_INDEX_SLOT}"', side.index_ref())
        return [{"name": "TF_CONFIG", "value": value}]

    def _sparse(self, job, rtype: str, side: Side) -> str:
        """enableDynamicWorker: each worker sees only itself; no `environment` key."""
        def hosts(t, indexes):
            return [f"{side.host(t, i, 'svc')}:{job.port(t)}" for i in indexes]

        if rtype == "Worker":
            idx = side.index_ref()
            worker = {idx: f"{side.host('Worker', idx, 'svc')}:{job.port('Worker')}"}
            ps = hosts("PS", range(job.replicas["PS"].replicas)) if job.has("PS") else None
        elif rtype == "PS":
            worker = {}
            ps = [f"{side.host('PS', side.index_ref(), 'svc')}:{job.port('PS')}"]
        else:
            worker, ps = {}, []
        return _compact({"cluster": {"worker": worker, "ps": ps}, "task": {"type": rtype.lower(), "index": _INDEX_SLOT}})

    def notes(self, job, ctx: EmitContext) -> None:
        if job.framework.get("enableDynamicWorker"):
            ctx.note(Note(
                "TF010", "approximated",
                "enableDynamicWorker: v1 ignored Worker failures; in the JobSet a failed worker Job fails the JobSet",
                source_path="spec.enableDynamicWorker", explains=(("lifecycle", "failure"),),
                action="add a failurePolicy with restarts if workers may come and go",
                claims=(claims.absent("spec.failurePolicy"),),
            ))
        if job.total_replicas() == 1:
            ctx.note(Note(
                "TF001", "unchanged",
                "a single-replica TFJob runs locally: no TF_CONFIG, as under the operator",
                source_path="spec.tfReplicaSpecs",
                claims=(claims.absent(claims.pod_path() + ".spec.containers[*].env[TF_CONFIG]"),),
            ))

    def success_note(self, job, case, targets) -> Note:
        if case == "TF_WORKER0_SUCCESS" and job.replicas["Worker"].replicas == 1:
            # worker 0 is every worker: "worker 0 exited 0" and "all workers succeeded" are one event
            return Note(
                "TF002", "rewritten",
                "with no Chief/Master, v1 called the TFJob Succeeded when worker 0 exited 0; with one worker the "
                "JobSet's rule (every worker succeeded) is the same event",
                source_path="spec.successPolicy", target_path="spec.successPolicy",
                explains=(("lifecycle", "success"),), claims=claims.success(targets),
            )
        if case == "TF_WORKER0_SUCCESS":
            return Note(
                "TF002", "approximated",
                "with no Chief/Master, v1 called the TFJob Succeeded as soon as worker 0 exited 0; a JobSet cannot "
                "target one Job of a replicatedJob, so it completes when every worker has succeeded "
                "(it never cuts worker 0 short)",
                source_path="spec.successPolicy", target_path="spec.successPolicy",
                action="make every worker exit when training ends (the JobSet waits for all of them); a worker "
                       "that runs until it is stopped keeps the JobSet running",
                explains=(("lifecycle", "success"),), claims=claims.success(targets),
            )
        return Note(
            "TF003", "breaking",
            "a TFJob with no Chief, Master or Worker never succeeded under v1; the JobSet completes when all its Jobs do",
            target_path="spec.successPolicy", explains=(("lifecycle", "success"),), claims=claims.success(targets),
        )

    def operator_success(self, job) -> tuple:
        chiefs = [t.lower() for t in ("Chief", "Master") if job.has(t)]
        if chiefs:
            return ("all", tuple(chiefs))
        if job.has("Worker"):
            if job.framework.get("successPolicy") == "AllWorkers":
                return ("all", ("worker",))
            return ("all", ("worker",), "or worker 0 exits 0")
        return ("never",)

    def operator_failure(self, job, rtype: str, policy: str) -> str:
        if policy == "Never" and rtype == "Worker" and job.framework.get("enableDynamicWorker"):
            return "ignored"
        return super().operator_failure(job, rtype, policy)


PROFILE = TensorFlowProfile()
