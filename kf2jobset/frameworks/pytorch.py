"""PyTorchJob: MASTER_*/PET_* env, ranks, init-pytorch. Facts: training-operator.md §3."""
from __future__ import annotations

from .. import claims
from ..notes import Note
from ..errors import Location, Problem
from ..model import DefaultApplied
from .base import PODS, WITHOUT_WEBHOOK, EmitContext, SizeValue, OperatorSide, Profile, Side, elastic_policy, env, literal_env

INIT_CONTAINER = "init-pytorch"


def _nproc_int(value: str | None) -> int:
    """The operator multiplies WORLD_SIZE by nprocPerNode only when it is an integer."""
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


class PyTorchProfile(Profile):
    name = "pytorch"
    trainer_framework = "torch"  # Trainer's torch-distributed, trainer.kubeflow.org/framework: torch
    # WORLD_SIZE is pods x nprocPerNode where that is an integer (PET_NPROC_PER_NODE carries it)
    size_values = (SizeValue("WORLD_SIZE", PODS, times="PET_NPROC_PER_NODE"), SizeValue("PET_NNODES", PODS))

    def spec_fields(self, spec: dict, replicas: dict):
        elastic, problems, defaults = elastic_policy(spec, replicas)
        nproc = spec.get("nprocPerNode")
        if elastic is not None and elastic.get("nProcPerNode") is not None and nproc is not None:
            problems.append(Problem("spec.nprocPerNode and the deprecated elasticPolicy.nProcPerNode cannot both be set",
                                    Location(path=("spec", "nprocPerNode")), rule="elastic"))
        if nproc is None and not (elastic and elastic.get("nProcPerNode") is not None):
            nproc = "auto"
            defaults.append(DefaultApplied(("spec", "nprocPerNode"), "auto", "operator default"))
        return {"elasticPolicy": elastic, "nprocPerNode": str(nproc) if nproc is not None else None}, problems, defaults

    def fields_from_pods(self, pods: dict, stream: list) -> tuple[dict, dict]:
        values: dict = {}
        for template in pods.values():
            values.update(literal_env(template))
        fields: dict = {}
        if "PET_RDZV_ENDPOINT" in values:  # elastic: PET_NNODES is the bound min:max
            lo, _, hi = str(values.get("PET_NNODES", "")).partition(":")
            if lo.isdigit() and hi.isdigit():
                fields["elasticPolicy"] = {"minReplicas": int(lo), "maxReplicas": int(hi)}
        if values.get("PET_NPROC_PER_NODE") is not None:
            fields["nprocPerNode"] = values["PET_NPROC_PER_NODE"]
        return fields, {}

    def webhook_rejections(self, job):
        spec = (job.source.get("spec") or {}) if isinstance(job.source, dict) else {}
        elastic = spec.get("elasticPolicy")
        out = []
        if elastic is not None and "Worker" not in {s.source_key for s in job.replicas.values()}:
            out.append(("spec.elasticPolicy", "elasticPolicy needs a Worker replica spec", WITHOUT_WEBHOOK))
        if isinstance(elastic, dict) and elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
            out.append(("spec.elasticPolicy.nProcPerNode", "must not be used with spec.nprocPerNode", WITHOUT_WEBHOOK))
        return out

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        fw = job.framework
        total = job.total_replicas()
        out = [env("PYTHONUNBUFFERED", "1")]
        if job.has("Master"):
            port = job.port("Master")
            master = side.host("Master", 0)
            rank_offset = 0 if rtype == "Master" else job.replicas["Master"].replicas
            out += [
                env("MASTER_PORT", port),
                env("PET_MASTER_PORT", port),
                {"name": "MASTER_ADDR", "value": master},
                {"name": "PET_MASTER_ADDR", "value": master},
                (side.size_env("WORLD_SIZE", total) if _nproc_int(fw.get("nprocPerNode")) == 1
                 else env("WORLD_SIZE", total * _nproc_int(fw.get("nprocPerNode")))),  # no arithmetic in env
                side.rank_env("RANK", rank_offset),
                side.rank_env("PET_NODE_RANK", rank_offset),
            ]
        if fw.get("nprocPerNode") is not None:
            out.append({"name": "PET_NPROC_PER_NODE", "value": side.lit(fw["nprocPerNode"])})
        elastic = fw.get("elasticPolicy")
        if elastic is None:
            out.append(side.size_env("PET_NNODES", total))
            return out
        host = side.lit(elastic["rdzvHost"]) if elastic.get("rdzvHost") else side.host("Worker", 0)
        port = elastic.get("rdzvPort") or job.port("Worker")
        out.append({"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"})
        out.append({"name": "PET_RDZV_BACKEND", "value": side.lit(elastic.get("rdzvBackend") or "c10d")})
        out.append(env("PET_NNODES", f"{elastic['minReplicas']}:{elastic['maxReplicas']}"))
        if elastic.get("maxRestarts") is not None:
            out.append(env("PET_MAX_RESTARTS", elastic["maxRestarts"]))
        if elastic.get("nProcPerNode") is not None:
            out.append(env("PET_NPROC_PER_NODE", elastic["nProcPerNode"]))
        if elastic.get("rdzvId"):
            out.append({"name": "PET_RDZV_ID", "value": side.lit(elastic["rdzvId"])})
        conf = elastic.get("rdzvConf") or []
        if conf:
            joined = ",".join(f"{c.get('key')}={c.get('value')}" for c in conf)
            out.append({"name": "PET_RDZV_CONF", "value": side.lit(joined)})
        if elastic.get("standalone"):
            out.append(env("PET_STANDALONE", ""))
        return out

    def size_literals(self, job) -> list[str]:
        nproc = _nproc_int(job.framework.get("nprocPerNode"))
        if job.has("Master") and nproc != 1:
            return [f"WORLD_SIZE (pods x nprocPerNode {nproc})"]
        return []

    def operator_pod(self, job, rtype: str, index: int, pod: dict, side: OperatorSide) -> None:
        if rtype != "Worker" or not job.has("Master"):
            return
        # The operator's built-in template (flags --pytorch-init-container-image / -max-tries).
        script = (
            f"err=1;for i in $(seq 100); do if nslookup {side.host('Master', 0)}; then err=0 && break; fi;"
            "echo waiting for master; sleep 2; done; exit $err"
        )
        pod["spec"].setdefault("initContainers", []).append(
            {
                "name": INIT_CONTAINER,
                "image": "alpine:3.10",
                "imagePullPolicy": "IfNotPresent",
                "resources": {"limits": {"cpu": "100m", "memory": "20Mi"}, "requests": {"cpu": "50m", "memory": "10Mi"}},
                "command": ["sh", "-c", script],
            }
        )

    def notes(self, job, ctx: EmitContext) -> None:
        if job.has("Master") and job.has("Worker") and not ctx.start_order:
            ctx.note(Note(
                "PT001", "approximated",
                "the operator's init-pytorch container (nslookup loop until the master resolves) is not carried and "
                "the workers start with the master (the gang scheduler needs every pod at once: JS092)",
                source_path="pytorchReplicaSpecs.Worker", explains=(("init", INIT_CONTAINER),), replica_type="Worker",
                claims=(claims.absent(claims.pod_path() + f".spec.initContainers[{INIT_CONTAINER}]"),
                        claims.absent(f"spec.replicatedJobs[{ctx.rjob_names['Worker']}].dependsOn"))))
        elif job.has("Master") and job.has("Worker"):
            ctx.note(Note(
                "PT001", "rewritten",
                "the operator's init-pytorch container (nslookup loop until the master resolves) is replaced "
                "by `dependsOn: master Ready` on the worker replicatedJob" if ctx.options.has("dependsOn") else
                "the operator's init-pytorch container is replaced by startupPolicy InOrder (master first)",
                source_path="pytorchReplicaSpecs.Worker", target_path="spec.replicatedJobs[worker].dependsOn",
                explains=(("init", INIT_CONTAINER),), replica_type="Worker",
                claims=(claims.absent(claims.pod_path() + f".spec.initContainers[{INIT_CONTAINER}]"),
                        claims.equals(f"spec.replicatedJobs[{ctx.rjob_names['Worker']}].dependsOn[{ctx.rjob_names['Master']}]"
                                      ".status", "Ready") if ctx.options.has("dependsOn") else
                        claims.equals("spec.startupPolicy.startupPolicyOrder", "InOrder")),
            ))
        elastic = job.framework.get("elasticPolicy")
        if elastic is not None:
            ctx.note(Note(
                "PT010", "breaking",
                f"elasticPolicy: the JobSet runs a fixed {job.replicas['Worker'].replicas} workers; the v1 scale "
                f"subresource and worker range {elastic['minReplicas']}..{elastic['maxReplicas']} are gone "
                "(torchrun still gets the PET_RDZV_* and PET_NNODES range, so rendezvous works at the fixed size)",
                source_path="spec.elasticPolicy", target_path="spec.replicatedJobs[worker].replicas",
                action="size the worker replicatedJob for the run, or move to Kubeflow Trainer v2 for elastic training",
                claims=(claims.equals(f"spec.replicatedJobs[{ctx.rjob_names['Worker']}].replicas",
                                      job.replicas["Worker"].replicas),
                        claims.absent("kind", target="HorizontalPodAutoscaler")),
            ))
            if elastic.get("metrics"):
                ctx.note(Note(
                    "PT011", "dropped",
                    "elasticPolicy.metrics: the operator created a HorizontalPodAutoscaler on the PyTorchJob; "
                    "a JobSet has no scale subresource, so no HPA is emitted",
                    source_path="spec.elasticPolicy.metrics", action="remove the autoscaling expectation",
                    claims=(claims.absent("kind", target="HorizontalPodAutoscaler"),),
                ))

    def operator_success(self, job) -> tuple:
        if job.has("Master"):
            return ("all", ("master",))
        return ("any", ("worker",)) if job.framework.get("elasticPolicy") is not None else ("all", ("worker",))

    def operator_start(self, job, rtype: str):
        # Workers wait in init-pytorch until the master's per-pod Service resolves; that Service does
        # not publish not-ready addresses, so in effect they wait for the master to be Ready.
        if rtype == "Worker" and job.has("Master"):
            return ("after", (("master", "Ready"),))
        return "at-once"


PROFILE = PyTorchProfile()
