"""MXJob: MX_CONFIG and the DMLC_* parameter-server variables. Facts: reference/mxjob.md and the
training-operator v1.8.1 source (pkg/controller.v1/mxnet/mxnet.go SetPodEnv, mxjob_controller.go
UpdateJobStatus and isSingleWorker; MXJob was removed in v1.9.0).

The controller appended to every container of every pod, in this order:
- MX_CONFIG: Go's json.Marshal of {"cluster": {type: [{"url": <job>-<type>-<i>, "port": <type's
  mxjob-port>}...]}, "labels": {type: <the type's tuner-server-key template annotation or "">},
  "task": {"type": <type>, "index": <i>}} (types lower case; Go sorts map keys);
- DMLC_PS_ROOT_PORT / DMLC_PS_ROOT_URI: scheduler 0's port and address (0 and "" with no scheduler);
- DMLC_NUM_SERVER / DMLC_NUM_WORKER: the Server and Worker replica counts;
- DMLC_ROLE: the pod's type, lower case (scheduler, server, worker, tunertracker, ...);
- DMLC_USE_KUBERNETES=1; DMLC_WORKER_ID=<i> on Worker pods only (for BytePS).
"""
from __future__ import annotations

import json

from .. import claims
from ..notes import Note
from .base import HOSTS, ROLE, EmitContext, Profile, SizeValue, Side, env

TUNER_SERVER_KEY = "tuner-server-key"  # template annotation copied into MX_CONFIG labels
_INDEX_SLOT = "@@KF2JOBSET_TASK_INDEX@@"  # replaced after json.dumps so task.index stays a JSON number
# encoding/json escapes these even in valid UTF-8 (HTML safety); other non-ASCII text is written as is.
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _go_json(obj) -> str:
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=False)
    for char, escaped in _GO_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def _count(job, rtype: str) -> int:
    return job.replicas[rtype].replicas if job.has(rtype) else 0


def _lone_worker(job) -> bool:
    """isSingleWorker: one Worker pod, no Scheduler or Server pod (other types may exist)."""
    return _count(job, "Worker") == 1 and _count(job, "Scheduler") == 0 and _count(job, "Server") == 0


class MXNetProfile(Profile):
    name = "mxnet"
    size_values = (SizeValue("MX_CONFIG", HOSTS), SizeValue("DMLC_NUM_SERVER", ROLE, role="server"),
                   SizeValue("DMLC_NUM_WORKER", ROLE, role="worker"))

    template_annotations = (TUNER_SERVER_KEY,)

    def fields_from_pods(self, pods: dict, stream: list) -> tuple[dict, dict]:
        # MXTune's types are the tuner's (Tuner, TunerServer, TunerTracker); MXTrain's the parameter server's
        return {"jobMode": "MXTune" if any(t.startswith("Tuner") for t in pods) else "MXTrain"}, {}

    def size_literals(self, job) -> list[str]:
        return ["MX_CONFIG (cluster host lists)", "DMLC_NUM_SERVER", "DMLC_NUM_WORKER"]

    def env(self, job, rtype: str, side: Side) -> list[dict]:
        types = sorted(job.replicas, key=str.lower)  # Go marshals map keys sorted
        cluster = {
            t.lower(): [{"url": side.host(t, i), "port": job.port(t)} for i in range(job.replicas[t].replicas)]
            for t in types
        }
        labels = {t.lower(): side.lit(self._tuner_server_key(job, t)) for t in types}
        config = _go_json({"cluster": cluster, "labels": labels, "task": {"type": rtype.lower(), "index": _INDEX_SLOT}})
        config = config.replace(f'"{_INDEX_SLOT}"', side.index_ref())
        if _count(job, "Scheduler"):
            root_uri, root_port = side.host("Scheduler", 0), job.port("Scheduler")
        else:
            root_uri, root_port = "", 0  # getConfigAddr: no scheduler 0
        out = [
            {"name": "MX_CONFIG", "value": config},
            env("DMLC_PS_ROOT_PORT", root_port),
            {"name": "DMLC_PS_ROOT_URI", "value": root_uri},
            env("DMLC_NUM_SERVER", _count(job, "Server")),
            env("DMLC_NUM_WORKER", _count(job, "Worker")),
            env("DMLC_ROLE", rtype.lower()),
            env("DMLC_USE_KUBERNETES", 1),
        ]
        if rtype == "Worker":
            out.append(side.index_env("DMLC_WORKER_ID"))
        return out

    @staticmethod
    def _tuner_server_key(job, rtype: str) -> str:
        meta = job.replicas[rtype].template.get("metadata") or {}
        value = (meta.get("annotations") or {}).get(TUNER_SERVER_KEY)
        return "" if value is None else str(value)

    def notes(self, job, ctx: EmitContext) -> None:
        in_place = sorted(t for t, s in job.replicas.items() if s.restart_policy in ("OnFailure", "Always"))
        if in_place and job.run_policy.backoff_limit != 0:  # with backoffLimit 0 the JobSet fails too
            ctx.note(Note(
                "MX001", "approximated",
                f"{', '.join(in_place)}: v1.8.1 marked the whole MXJob Failed when any pod reached phase Failed under "
                f"OnFailure or Always (e.g. after an eviction); the JobSet retries that pod within its Job's backoffLimit "
                f"instead",
                source_path="mxReplicaSpecs.*.restartPolicy", explains=(("lifecycle", "failure"),),
                claims=claims.retried_within_backoff(job, ctx.rjob_names, in_place),
            ))

    def success_note(self, job, case, targets) -> Note:
        if case == "MX_LONE_WORKER_WITH_OTHERS":
            others = ", ".join(t for t in job.replicas if t != "Worker" and _count(job, t))
            return Note(
                "MX003", "approximated",
                f"with one Worker and no Scheduler or Server pod, v1.8.1 marked the MXJob Succeeded as soon as every pod "
                f"of any one replica type had succeeded (the Worker, or all of {others}); the JobSet completes when the "
                f"worker succeeds",
                source_path="spec.mxReplicaSpecs", target_path="spec.successPolicy",
                explains=(("lifecycle", "success"),), claims=claims.success(targets),
            )
        mode = (job.source.get("spec") or {}).get("jobMode") if isinstance(job.source, dict) else None
        return Note(
            "MX002", "approximated",
            f"v1.8.1 marked an MXJob Succeeded only when its Scheduler pods succeeded, or, without Scheduler and Server, "
            f"its single Worker; this {'MXTune ' if mode == 'MXTune' else ''}job has neither, so under v1 it never "
            f"succeeded (it stayed in its Created condition, never Running nor Succeeded, after its pods finished: "
            f"seen on the real v1.8.1). The JobSet completes when every Job has succeeded",
            source_path="spec.mxReplicaSpecs", target_path="spec.successPolicy",
            action="if one replica type alone decides the run (e.g. the Tuner), list it in successPolicy.targetReplicatedJobs",
            explains=(("lifecycle", "success"),), claims=claims.success(targets),
        )

    def operator_success(self, job) -> tuple:
        if job.has("Scheduler"):
            return ("all", ("scheduler",))
        if _lone_worker(job):
            others = [t.lower() for t in job.replicas if t != "Worker" and _count(job, t)]
            if not others:
                return ("all", ("worker",))
            return ("all", ("worker",), "or when every pod of any one other replica type has succeeded")
        return ("never",)

    def operator_failure(self, job, rtype: str, policy: str) -> str:
        # UpdateJobStatus: any Failed pod fails the job unless the type's policy is ExitCode.
        return "exit-code" if policy == "ExitCode" else "fail-job"


PROFILE = MXNetProfile()
